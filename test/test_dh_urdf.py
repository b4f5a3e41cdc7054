"""The URDF of a DH robot (dynid.model.dh_urdf, `dynid model --urdf`): the same arm as the DH model.

Checked with pinocchio directly on the written file (not through dynid's loader) and through
`dynid model --robot FILE.urdf`: inverse dynamics on random states (1e-9 relative), the flange pose,
the link frames against the DH frames, the limits; a modified-DH robot file and nominal friction.
"""

import json
import xml.etree.ElementTree as ElementTree

import numpy as np
import pinocchio as pin
import pytest
import yaml

from cli_run import run_dynid
from dynid.errors import InputError
from dynid.model import RobotModel, load_robot
from dynid.model.dh_urdf import robot_urdf

DH_BUILTINS = ('ur3e', 'ur5e', 'ur10e', 'ur16e')


def _run(*args, cwd=None):
    return run_dynid(*args, cwd=cwd)


def _frame_poses(model: pin.Model, names, q: np.ndarray) -> list[list[pin.SE3]]:
    data = model.createData()
    poses = []
    for qk in q:
        pin.framesForwardKinematics(model, data, qk)
        poses.append([pin.SE3(data.oMf[model.getFrameId(name)]) for name in names])
    return poses


@pytest.mark.parametrize('name', DH_BUILTINS)
def test_urdf_of_a_builtin_is_the_dh_model(name):
    dh = load_robot(name)
    model = pin.buildModelFromXML(robot_urdf(name))  # pinocchio alone, default gravity (0, 0, -9.81)
    assert list(model.names[1:]) == list(dh.joint_names)
    q, dq, ddq = dh.random_states(40, seed=5)
    reference = dh.inverse_dynamics(q, dq, ddq)
    data = model.createData()
    tau = np.array([pin.rnea(model, data, *state) for state in zip(q, dq, ddq, strict=True)])
    assert np.abs(tau - reference).max() <= 1e-9 * np.abs(reference).max()
    # link inertials as standard parameters about each joint frame: the DH model's own numbers
    urdf_standard = np.concatenate([model.inertias[j].toDynamicParameters() for j in range(1, model.njoints)])
    np.testing.assert_allclose(urdf_standard, dh.standard_parameters, rtol=0, atol=1e-12)
    # flange and every DH frame i (<joint>_link in the URDF, <joint>_link in the DH model) at the same pose
    names = [dh.flange, *(f'{joint}_link' for joint in dh.joint_names)]
    for ours, theirs in zip(_frame_poses(model, names, q[:10]), _frame_poses(dh.pinocchio_model, names, q[:10]),
                            strict=True):
        for a, b in zip(ours, theirs, strict=True):
            np.testing.assert_allclose(a.homogeneous, b.homogeneous, atol=1e-12)
    np.testing.assert_array_equal(model.lowerPositionLimit, dh.lower_limits)
    np.testing.assert_array_equal(model.upperPositionLimit, dh.upper_limits)
    np.testing.assert_array_equal(model.velocityLimit, dh.velocity_limits)
    np.testing.assert_array_equal(model.effortLimit, dh.effort_limits)


def test_urdf_has_base_link_flange_and_no_collision_geometry():
    root = ElementTree.fromstring(robot_urdf('ur5e'))
    links = [link.get('name') for link in root.findall('link')]
    assert links[0] == 'base_link' and links[-1] == 'tool0'
    assert root.find('.//collision') is None
    assert root.find('.//visual/geometry/cylinder') is not None
    assert root.find('joint/dynamics') is None  # the UR files give no nominal friction
    revolute = [joint.get('name') for joint in root.findall('joint') if joint.get('type') == 'revolute']
    assert revolute == list(load_robot('ur5e').joint_names)


MODIFIED_ARM = {  # the UR5e geometry in modified DH (Craig), rows (alpha_{i-1}, a_{i-1}, d_i), one without limits
    'dynid_robot': 1, 'name': 'craig_arm', 'convention': 'modified', 'flange': 'flange',
    'joints': [
        {'name': f'j{i + 1}', 'dh': {'a': a, 'alpha': alpha, 'd': d, 'theta_offset': offset},
         'limits': {'lower': -3.0, 'upper': 3.0, 'velocity': 2.0, 'effort': 100.0} if i != 3 else {},
         'link': {'mass': mass, 'com': [0.05, -0.02, 0.03], 'inertia': [[0.02, 0.001, 0.0], [0.001, 0.03, 0.002],
                                                                         [0.0, 0.002, 0.025]]},
         'friction': {'viscous': 0.5 + i, 'coulomb': 2.0}}
        for i, (alpha, a, d, offset, mass) in enumerate([
            (0.0, 0.0, 0.1625, 0.3, 3.7), (np.pi / 2, 0.0, 0.0, 0.0, 8.0), (0.0, -0.425, 0.0, -0.2, 2.8),
            (0.0, -0.3922, 0.1333, 0.0, 1.4), (np.pi / 2, 0.0, 0.0997, 0.0, 1.3),
            (-np.pi / 2, 0.0, 0.0996, 0.1, 0.4)])],
}


def test_modified_dh_robot_file_with_friction(tmp_path):
    path = tmp_path / 'craig_arm.yaml'
    path.write_text(yaml.safe_dump(MODIFIED_ARM))
    dh = load_robot(str(path))
    text = robot_urdf(str(path))
    root = ElementTree.fromstring(text)
    frictions = {joint.get('name'): (float(joint.find('dynamics').get('damping')),
                                     float(joint.find('dynamics').get('friction')))
                 for joint in root.findall('joint') if joint.find('dynamics') is not None}
    assert frictions == {f'j{i + 1}': (0.5 + i, 2.0) for i in range(6)}
    assert root.find("joint[@name='j4']").get('type') == 'continuous'
    urdf = RobotModel.from_urdf(text)
    assert urdf.joint_types[3] == 'continuous' and urdf.flange == 'flange'
    assert np.isinf(urdf.velocity_limits[3]) and np.isinf(urdf.effort_limits[3])
    q, dq, ddq = dh.random_states(30, seed=3)
    reference = dh.inverse_dynamics(q, dq, ddq)
    assert np.abs(urdf.inverse_dynamics(q, dq, ddq) - reference).max() <= 1e-9 * np.abs(reference).max()
    names = ['flange', *(f'j{i + 1}_link' for i in range(6))]
    model = pin.buildModelFromXML(text)
    config = urdf.configuration(q[:5])
    for ours, theirs in zip(_frame_poses(model, names, config), _frame_poses(dh.pinocchio_model, names, q[:5]),
                            strict=True):
        for a, b in zip(ours, theirs, strict=True):
            np.testing.assert_allclose(a.homogeneous, b.homogeneous, atol=1e-12)


@pytest.mark.parametrize('spec, reason', [('panda', 'panda is already a URDF: copy '),
                                          ('arm.urdf', 'arm.urdf is already a URDF: copy the file'),
                                          ('kuka', "unknown robot 'kuka'")])
def test_a_urdf_robot_is_refused(spec, reason):
    with pytest.raises(InputError, match=reason):
        robot_urdf(spec)


def test_cli_writes_the_urdf_and_dynid_reads_it_back(tmp_path):
    result = _run('model', '--robot', 'ur10e', '--urdf', 'arm.urdf', cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert 'base parameters: 36' in result.stdout  # the model output is still there
    assert result.stdout.strip().splitlines()[-1].startswith('wrote arm.urdf: pinocchio on it reproduces')
    again = _run('model', '--robot', 'arm.urdf', '--json', cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    summary = json.loads(again.stdout)
    builtin = load_robot('ur10e').summary()
    assert summary['flange'] == 'tool0' and summary['base_parameters']['count'] == 36
    assert [j['name'] for j in summary['joints']] == [j['name'] for j in builtin['joints']]
    for ours, theirs in zip(summary['joints'], builtin['joints'], strict=True):
        assert {k: ours[k] for k in ('lower', 'upper', 'velocity', 'effort')} == \
            {k: theirs[k] for k in ('lower', 'upper', 'velocity', 'effort')}
    assert [p['name'] for p in summary['base_parameters']['parameters']] == \
        [p['name'] for p in builtin['base_parameters']['parameters']]


@pytest.mark.parametrize('robot, output, reason', [
    ('ur5', 'out.urdf', 'ur5 is already a URDF: copy '),
    ('ur5e', 'existing.urdf/out.urdf', 'existing.urdf is not a folder'),  # a missing folder is made
    ('ur5e', 'existing.urdf', 'existing.urdf exists; refusing to overwrite (use --force)'),
])
def test_cli_refuses_with_one_line(tmp_path, robot, output, reason):
    (tmp_path / 'existing.urdf').write_text('keep me')
    result = _run('model', '--robot', robot, '--urdf', output, cwd=tmp_path)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith('dynid model: error:') and reason in lines[0], result.stderr
    assert result.stdout == ''
    assert (tmp_path / 'existing.urdf').read_text() == 'keep me'
    assert sorted(p.name for p in tmp_path.iterdir()) == ['existing.urdf']
