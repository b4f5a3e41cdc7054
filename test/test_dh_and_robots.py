"""DH construction, the built-in UR5e, robot files and the robot registry."""

import numpy as np
import pinocchio as pin
import pytest
import yaml

from dynid.errors import InputError
from dynid.model import DHJoint, RobotModel, build_dh_model, load_robot

UR5E_STANDARD = [  # (a, alpha, d) of the public UR5e table
    (0.0, np.pi / 2, 0.1625), (-0.425, 0.0, 0.0), (-0.3922, 0.0, 0.0),
    (0.0, np.pi / 2, 0.1333), (0.0, -np.pi / 2, 0.0997), (0.0, 0.0, 0.0996)]
UR5E_MODIFIED = [  # Madsen 2020, ch.4, corrected: (alpha_{i-1}, a_{i-1}, d_i) per row
    (0.0, 0.0, 0.1625), (0.0, np.pi / 2, 0.0), (-0.425, 0.0, 0.0),
    (-0.3922, 0.0, 0.1333), (0.0, np.pi / 2, 0.0997), (0.0, -np.pi / 2, 0.0996)]


def _flange_positions(robot: RobotModel, q: np.ndarray) -> np.ndarray:
    model = robot.pinocchio_model
    data = model.createData()
    frame = model.getFrameId(robot.flange)
    out = []
    for qk in q:
        pin.framesForwardKinematics(model, data, qk)
        out.append(data.oMf[frame].translation.copy())
    return np.array(out)


def test_ur5e_zero_pose_flange_position(ur5e):
    # Standard-DH forward kinematics at q = 0: x = a2 + a3, y = −(d4 + d6), z = d1 − d5.
    np.testing.assert_allclose(_flange_positions(ur5e, np.zeros((1, 6)))[0],
                               [-0.8172, -0.2329, 0.0628], atol=1e-12)


def test_modified_dh_conversion_gives_the_same_arm(ur5e):
    rows = [DHJoint(f'j{i}', a=a, alpha=alpha, d=d) for i, (a, alpha, d) in enumerate(UR5E_MODIFIED)]
    modified = RobotModel(build_dh_model(rows, 'modified'))
    q = ur5e.random_states(20, seed=2)[0]
    np.testing.assert_allclose(_flange_positions(modified, q), _flange_positions(ur5e, q), atol=1e-12)


def test_ur5e_masses_and_centres_of_mass_come_from_the_table(ur5e):
    standard = ur5e.standard_parameters.reshape(6, 10)
    np.testing.assert_allclose(standard[:, 0], [3.761, 8.058, 2.846, 1.37, 1.3, 0.365])
    # CoM of link 2 in DH frame 2 is (0.2125, 0, 0.11336): in world coordinates at q = 0 it sits
    # at frame 2's origin (x = a2) plus the offset.
    model = ur5e.pinocchio_model
    data = model.createData()
    pin.forwardKinematics(model, data, np.zeros(6))
    pin.centerOfMass(model, data, np.zeros(6))
    com_world = data.oMi[2].act(model.inertias[2].lever)
    np.testing.assert_allclose(com_world, [-0.425 + 0.2125, 0.11336 * -1.0, 0.1625], atol=1e-12)
    assert np.all(np.linalg.eigvalsh(model.inertias[2].inertia) > 0)
    assert ur5e.drives is not None and ur5e.drives.joint_names == ur5e.joint_names


def test_registry_errors_name_the_problem(tmp_path):
    with pytest.raises(InputError, match="unknown robot 'kuka'"):
        load_robot('kuka')
    with pytest.raises(InputError, match='does not exist'):
        load_robot(str(tmp_path / 'missing.urdf'))
    broken = tmp_path / 'broken.urdf'
    broken.write_text('<robot name="x"><link name="a"/>')
    with pytest.raises(InputError, match='cannot read URDF'):
        load_robot(str(broken))
    with pytest.raises(InputError, match='panda_joint9'):
        load_robot('panda', joints=['panda_joint1', 'panda_joint9'])


def test_robot_file_round_trip_and_validation(tmp_path):
    data = {
        'dynid_robot': 1, 'name': 'two_link', 'convention': 'standard', 'flange': 'tip',
        'joints': [
            {'name': 'j1', 'dh': {'a': 0.5, 'd': 0.0, 'alpha_deg': 0.0},
             'limits': {'lower_deg': -90, 'upper_deg': 90, 'velocity': 2.0, 'effort': 50},
             'link': {'mass': 2.0, 'com': [-0.25, 0, 0], 'inertia': {'cylinder': {
                 'radius': 0.03, 'length': 0.5, 'axis': 'x'}}}},
            {'name': 'j2', 'dh': {'a': 0.4, 'd': 0.0, 'alpha': 0.0},
             'link': {'mass': 1.0, 'com': [-0.2, 0, 0],
                      'inertia': [[1e-3, 0, 0], [0, 2e-2, 0], [0, 0, 2e-2]]}},
        ],
    }
    path = tmp_path / 'two_link.yaml'
    path.write_text(yaml.safe_dump(data))
    robot = load_robot(str(path))
    assert robot.joint_names == ('j1', 'j2') and robot.flange == 'tip'
    np.testing.assert_allclose(robot.lower_limits, [-np.pi / 2, -np.inf])
    np.testing.assert_allclose(_flange_positions(robot, np.zeros((1, 2)))[0], [0.9, 0, 0], atol=1e-12)
    data['joints'][1]['link']['mass'] = 'heavy'
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(InputError, match=r"joints\[1\]\.link\.mass must be a number in \[0, 100000\] kg, got 'heavy'"):
        load_robot(str(path))
    data['joints'][1]['link']['mass'] = 1.0
    data['gravity'] = [0, 0, 'down']
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(InputError, match=r"gravity\[2\] must be a finite number \[m/s²\], got 'down'"):
        load_robot(str(path))
    path.write_text('dynid_robot: 1\njoints: []\n')
    with pytest.raises(InputError, match='non-empty list'):
        load_robot(str(path))
    path.write_text('just: [unclosed\n')
    with pytest.raises(InputError, match='not valid YAML'):
        load_robot(str(path))


def test_urdf_string_and_joint_selection(panda):
    assert panda.joint_names == tuple(f'panda_joint{i}' for i in range(1, 8))
    assert panda.flange == 'panda_link8'
    with open(panda.source) as f:
        xml = f.read()
    with pytest.raises(InputError, match='not a serial chain'):
        RobotModel.from_urdf(xml)  # the two fingers branch off the hand
    arm_and_finger = RobotModel.from_urdf(xml, joints=[*panda.joint_names, 'panda_finger_joint1'])
    assert arm_and_finger.n == 8 and arm_and_finger.joint_types[-1] == 'prismatic'
    assert arm_and_finger.source == 'robot_description'


def test_branching_urdf_is_refused():
    urdf = """<robot name="tree"><link name="base"/><link name="l"/><link name="r"/>
      <joint name="a" type="revolute"><parent link="base"/><child link="l"/><axis xyz="0 0 1"/>
        <limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
      <joint name="b" type="revolute"><parent link="base"/><child link="r"/><axis xyz="0 0 1"/>
        <limit lower="-1" upper="1" effort="1" velocity="1"/></joint></robot>"""
    with pytest.raises(InputError, match='not a serial chain'):
        RobotModel.from_urdf(urdf)
    assert RobotModel.from_urdf(urdf, joints=['b']).joint_names == ('b',)


def test_a_part_of_a_builtin_dh_model_is_refused_not_ignored():
    with pytest.raises(InputError, match='give its URDF') as refused:
        load_robot('ur5e', joints=['shoulder_pan_joint', 'shoulder_lift_joint'])
    assert refused.value.fields == ('joints',)
    every = load_robot('ur5e')
    assert load_robot('ur5e', joints=list(reversed(every.joint_names))).joint_names == every.joint_names
