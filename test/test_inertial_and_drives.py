"""Inertial parameter conventions, payloads and the drive model."""

import numpy as np
import pinocchio as pin
import pytest

from dynid.errors import InputError
from dynid.model import JointDrives, Payload
from dynid.model.inertial import (
    cylinder_inertia,
    parameter_transform_matrix,
    parameters_from_com,
    transform_parameters,
)


def test_parameters_match_pinocchio_convention():
    inertia = np.array([[0.02, 0.001, 0.0], [0.001, 0.03, -0.002], [0.0, -0.002, 0.01]])
    phi = parameters_from_com(2.0, [0.1, -0.05, 0.2], inertia)
    expected = pin.Inertia(2.0, np.array([0.1, -0.05, 0.2]), inertia).toDynamicParameters()
    np.testing.assert_allclose(phi, expected, rtol=1e-14, atol=1e-15)


def test_frame_change_matches_pinocchio_and_is_linear():
    rng = np.random.default_rng(3)
    placement = pin.SE3.Random()
    body = pin.Inertia.Random()
    phi = transform_parameters(body.toDynamicParameters(), placement.rotation, placement.translation)
    np.testing.assert_allclose(phi, placement.act(body).toDynamicParameters(), atol=1e-12)
    a = parameter_transform_matrix(placement.rotation, placement.translation)
    x = rng.normal(size=10)
    np.testing.assert_allclose(a @ x, transform_parameters(x, placement.rotation, placement.translation),
                               atol=1e-12)


def test_cylinder_inertia():
    i = cylinder_inertia(3.0, 0.1, 0.4, axis='x')
    across = 3.0 * (3 * 0.1**2 + 0.4**2) / 12
    np.testing.assert_allclose(np.diag(i), [3.0 * 0.1**2 / 2, across, across])
    with pytest.raises(InputError, match='axis'):
        cylinder_inertia(1.0, 0.1, 0.1, axis='w')


def test_payload_round_trip_and_validation():
    payload = Payload(1.5, com=[0.0, 0.02, 0.1], inertia=np.diag([0.002, 0.003, 0.001]))
    back = Payload.from_parameters(payload.parameters())
    assert back.mass == pytest.approx(1.5)
    np.testing.assert_allclose(back.com, payload.com, atol=1e-15)
    np.testing.assert_allclose(back.inertia, payload.inertia, atol=1e-15)
    assert Payload.from_parameters(np.zeros(10)).mass == 0.0
    for bad in (dict(mass=-1.0), dict(mass=float('nan')), dict(mass=1.0, com=[0, 0]),
                dict(mass=1.0, inertia=np.diag([1.0, -1.0, 1.0])),
                dict(mass=1.0, inertia=[[1, 0.5, 0], [0, 1, 0], [0, 0, 1]])):
        with pytest.raises(InputError, match='payload'):
            Payload(**bad)


def test_drive_conversions_follow_the_thesis_conventions():
    drives = JointDrives.from_motor(['a', 'b'], gear_ratio=[101.0, 50.0], torque_constant=[0.1, 0.2],
                                    rotor_inertia_motor=[5e-5, 1e-5])
    np.testing.assert_allclose(drives.drive_gain, [10.1, 10.0])        # K_τ = r·k_t
    np.testing.assert_allclose(drives.rotor_inertia, [0.51005, 0.025])  # B = r²·J
    np.testing.assert_allclose(drives.torque_constant, [0.1, 0.2])
    current = np.array([[1.0, -2.0], [0.5, 0.0]])
    torque = drives.current_to_joint_torque(current)
    np.testing.assert_allclose(torque, [[10.1, -20.0], [5.05, 0.0]])
    np.testing.assert_allclose(drives.joint_torque_to_current(torque), current)
    np.testing.assert_allclose(
        drives.motor_torque_to_joint_torque(drives.current_to_motor_torque(current)), torque)
    np.testing.assert_allclose(drives.joint_torque_to_motor_torque(torque), current * [0.1, 0.2])
    np.testing.assert_allclose(drives.motor_angle_to_link_units([101.0, 100.0]), [1.0, 2.0])
    np.testing.assert_allclose(drives.link_units_to_motor_angle([1.0, 2.0]), [101.0, 100.0])
    np.testing.assert_allclose(drives.rotor_inertia_torque([2.0, 4.0]), [1.0201, 0.1])


def test_drives_by_name_and_validation():
    drives = JointDrives(('a', 'b'), gear_ratio=101, drive_gain=[10.0, 12.0], rotor_inertia=0.5)
    swapped = drives.reordered(['b', 'a'])
    np.testing.assert_allclose(swapped.drive_gain, [12.0, 10.0])
    assert drives.with_drive_gain([9.0, 11.0]).drive_gain.tolist() == [9.0, 11.0]
    with pytest.raises(InputError, match='missing for joints'):
        drives.reordered(['a', 'c'])
    with pytest.raises(InputError, match='gear_ratio must be > 0'):
        JointDrives(('a',), gear_ratio=0.0, drive_gain=1.0, rotor_inertia=0.0)
    with pytest.raises(InputError, match='drive_gain must be nonzero'):
        JointDrives(('a',), gear_ratio=1.0, drive_gain=0.0, rotor_inertia=0.0)
    with pytest.raises(InputError, match='one finite value per joint'):
        JointDrives(('a', 'b'), gear_ratio=[1.0, np.nan], drive_gain=1.0, rotor_inertia=0.0)
    with pytest.raises(InputError, match='numeric'):
        JointDrives.from_dict({'a': {'gear_ratio': 1}}, ['a'])


def test_a_negative_gear_ratio_is_refused_with_the_way_that_works(tmp_path, capsys):
    # A manufacturer's table gives a motor that turns against its joint as a negative ratio (the Stäubli TX40's −48):
    # the refusal names the joint's field and the drives file's spelling of it, which then loads as that motor.
    from dynid.cli import main
    from dynid.model.drives import load_drives

    names = ['a', 'b']
    path = tmp_path / 'drives.yaml'
    path.write_text('a: {gear_ratio: -48, drive_gain: 2.0, rotor_inertia: 0.1}\n'
                    'b: {gear_ratio: 50, drive_gain: 4.0, rotor_inertia: 0.1}\n')
    with pytest.raises(InputError) as refused:
        load_drives(path, names)
    text = str(refused.value)
    assert '\n' not in text and 'a.gear_ratio must be > 0, got -48' in text
    assert 'gear_ratio: 48 with coupling: {a: -1}' in text
    with pytest.raises(InputError, match='a.gear_ratio must be > 0, got -48'):
        JointDrives(('a', 'b'), gear_ratio=[-48.0, 50.0], drive_gain=1.0, rotor_inertia=0.0)
    path.write_text('a: {gear_ratio: 48, drive_gain: 2.0, rotor_inertia: 0.1, coupling: {a: -1}}\n'
                    'b: {gear_ratio: 50, drive_gain: 4.0, rotor_inertia: 0.1}\n')
    drives = load_drives(path, names)
    np.testing.assert_array_equal(drives.coupling, [[-1.0, 0.0], [0.0, 1.0]])
    np.testing.assert_allclose(drives.gear_ratio, [48.0, 50.0])
    # the command line: exit 2 with the one line
    ur5e = tmp_path / 'ur5e.yaml'
    ur5e.write_text(''.join(f'{joint}: {{gear_ratio: {-48 if k == 4 else 101}, drive_gain: 10, rotor_inertia: 0.1}}\n'
                            for k, joint in enumerate(('shoulder_pan_joint', 'shoulder_lift_joint', 'elbow_joint',
                                                       'wrist_1_joint', 'wrist_2_joint', 'wrist_3_joint'))))
    capsys.readouterr()
    assert main(['model', '--robot', 'ur5e', '--drives', str(ur5e)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and 'wrist_2_joint.gear_ratio must be > 0, got -48' in err[0], err
    assert 'coupling: {wrist_2_joint: -1}' in err[0]
    # a robot file's drive is checked by the same field (its joint's name is its entry's, not the field's path)
    from dynid.model.robot_file import JOINT_FIELDS
    from dynid.schema import check
    with pytest.raises(InputError, match=r'robot.yaml: drive.gear_ratio must be > 0, got -48: .* gear_ratio: 48 with'):
        check({'name': 'j1', 'dh': {'a': 0.0, 'd': 0.0},
               'drive': {'gear_ratio': -48, 'drive_gain': 1.0, 'rotor_inertia': 0.0}}, JOINT_FIELDS, 'robot.yaml')


def test_coupled_drives_map_joints_to_motors_and_back(tmp_path):
    # A wrist whose last motor turns with q1 + q2 and whose first motor turns against its joint.
    data = {'a': {'gear_ratio': 100, 'drive_gain': 5.0, 'rotor_inertia': 0.2, 'coupling': {'a': -1}},
            'b': {'gear_ratio': 50, 'drive_gain': 4.0, 'rotor_inertia': 0.1, 'coupling': {'a': 1, 'b': 1},
                  'motor_offset': 0.3}}
    drives = JointDrives.from_dict(data, ['a', 'b'])
    np.testing.assert_array_equal(drives.coupling, [[-1.0, 0.0], [1.0, 1.0]])
    q = np.array([[0.2, -0.5], [1.0, 0.4]])
    theta = drives.joints_to_motors(q)
    np.testing.assert_allclose(theta, [[-0.2, -0.3], [-1.0, 1.4]])
    np.testing.assert_allclose(drives.motors_to_joints(theta), q)
    np.testing.assert_allclose(drives.motor_positions_to_link_units(theta * drives.gear_ratio + [0.0, 0.3]), theta)
    # virtual work: the motors' power θ̇ᵀ·τ_m equals the joints' q̇ᵀ·τ
    motor_torque = np.array([3.0, -2.0])
    np.testing.assert_allclose(theta[0] @ motor_torque, q[0] @ drives.motor_to_joint_torque_space(motor_torque),
                               atol=1e-12)
    np.testing.assert_allclose(drives.joint_to_motor_torque_space(drives.motor_to_joint_torque_space(motor_torque)),
                               motor_torque)
    assert drives.reordered(['b', 'a']).coupling.tolist() == [[1.0, 1.0], [0.0, -1.0]]
    assert JointDrives.from_dict(drives.to_dict(), ['a', 'b']).to_dict() == drives.to_dict()
    assert drives.with_drive_gain([1.0, 2.0]).coupling is not None
    with pytest.raises(InputError, match='singular'):
        JointDrives(('a', 'b'), 1.0, 1.0, 0.0, coupling=[[1.0, 1.0], [1.0, 1.0]])
    with pytest.raises(InputError, match="'c' is not a joint"):
        JointDrives.from_dict({**data, 'b': {**data['b'], 'coupling': {'c': 1}}}, ['a', 'b'])
    assert JointDrives(('a',), 1.0, 1.0, 0.0, coupling=[[1.0]]).coupling is None  # the identity is no coupling
