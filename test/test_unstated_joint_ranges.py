"""A vendor's URDF as it comes: revolute joints whose ``<limit>`` gives no lower and upper (both read 0 to 0, by
urdfdom and pinocchio alike) are taken as unbounded and said, where a check would otherwise drop every row; the
excitation, which needs a range, refuses by name; continuous joints and a gripper's branches load as the arm the
log names."""

import re

import numpy as np
import pytest

from cli_run import run_dynid
from dynid.errors import InputError
from dynid.model import load_robot
from dynid.model.robots import example_robot_path

PANDA = [f'panda_joint{i}' for i in range(1, 8)]
#: a pose and motion inside every Panda joint's range (joint 4 is negative throughout, joint 6 positive)
CENTER = np.array([0.0, 0.0, 0.0, -1.5, 0.0, 1.8, 0.0])


def _panda_urdf(tmp_path, edit=lambda text: text, name='panda.urdf'):
    """example-robot-data's Panda description (arm, hand, two prismatic fingers) after ``edit``, as a file."""
    path = tmp_path / name
    path.write_text(edit(example_robot_path('panda_description/urdf/panda.urdf').read_text()))
    return str(path)


def _without_ranges(text):
    return re.sub(r' lower="[^"]*" upper="[^"]*"', '', text)


def _log(path, seconds=4.0, rate=500.0):
    """A log of the Panda's seven joints (columns t, q_<name>, dq_<name>) moving about CENTER."""
    t = np.arange(0.0, seconds, 1.0 / rate)
    w = np.linspace(0.6, 1.2, 7)
    q = CENTER + 0.4 * np.sin(np.outer(t, w))
    dq = 0.4 * np.cos(np.outer(t, w)) * w
    header = ['t', *(f'q_{n}' for n in PANDA), *(f'dq_{n}' for n in PANDA)]
    np.savetxt(path, np.column_stack([t, q, dq]), delimiter=',', header=','.join(header), comments='', fmt='%.9f')
    return str(path)


COLUMNS = 'time=t,q=q_{name},dq=dq_{name}'


def test_a_revolute_joint_without_lower_and_upper_is_unbounded_and_said(tmp_path):
    robot = load_robot(_panda_urdf(tmp_path, _without_ranges))
    assert robot.joint_names == tuple(PANDA)  # the gripper's branch is left out: the arm is the chain
    assert robot.unstated_ranges == tuple(PANDA)
    assert np.all(robot.lower_limits == -np.inf) and np.all(robot.upper_limits == np.inf)
    assert np.all(np.isfinite(robot.velocity_limits)) and np.all(np.isfinite(robot.effort_limits))  # still read
    assert robot.range_note in robot.notes and 'read 0 to 0' in robot.range_note
    assert all(name in robot.range_note for name in PANDA)


def test_a_description_with_its_ranges_is_read_as_before(tmp_path, panda):
    robot = load_robot(_panda_urdf(tmp_path))
    assert robot.unstated_ranges == () and robot.range_note is None
    np.testing.assert_array_equal(robot.lower_limits, panda.lower_limits)
    np.testing.assert_array_equal(robot.upper_limits, panda.upper_limits)


def test_unbounded_ranges_give_the_base_parameters_of_the_bounded_arm(tmp_path, panda):
    """Read as 0 to 0, every joint would sit at 0 in the random states the base parameters are found on."""
    robot = load_robot(_panda_urdf(tmp_path, _without_ranges))
    assert robot.base.names == panda.base.names


def test_import_keeps_every_row_and_says_the_ranges_it_read(tmp_path):
    urdf = _panda_urdf(tmp_path, _without_ranges)
    done = run_dynid('import', _log(tmp_path / 'log.csv'), '--columns', COLUMNS, '--robot', urdf,
                     '-o', tmp_path / 'bag')
    assert done.returncode == 0, done.stderr
    assert 'outside the joint limits' not in done.stdout
    assert 'panda_joint1, panda_joint2' in done.stdout and 'read 0 to 0' in done.stdout
    assert 'read 0 to 0' in (tmp_path / 'bag' / 'import.yaml').read_text()  # the record says it too


def test_identify_says_the_ranges_it_read(tmp_path):
    urdf = _panda_urdf(tmp_path, _without_ranges)
    assert run_dynid('import', _log(tmp_path / 'log.csv'), '--columns', COLUMNS, '--robot', urdf,
                     '-o', tmp_path / 'bag').returncode == 0
    done = run_dynid('identify', tmp_path / 'bag', '--robot', urdf, '-o', tmp_path / 'result.yaml', '--quiet',
                     '--force')
    assert done.stderr.count('read 0 to 0') == 1


def test_the_excitation_refuses_by_name_with_the_range_read(tmp_path):
    urdf = _panda_urdf(tmp_path, _without_ranges)
    done = run_dynid('excite', '--robot', urdf, '-o', tmp_path / 'excitation.yaml')
    assert done.returncode == 2 and not (tmp_path / 'excitation.yaml').exists()
    assert 'panda_joint1' in done.stderr and 'read 0 to 0' in done.stderr and 'lower=' in done.stderr


def test_an_experiment_refuses_for_the_joint_it_moves(tmp_path):
    robot = load_robot(_panda_urdf(tmp_path, _without_ranges))
    from dynid.excite.experiments import gravity_sweep
    from dynid.excite.home import home_configuration

    with pytest.raises(InputError, match=r'panda_joint2 none \(lower and upper read 0 to 0'):
        gravity_sweep(robot, 'panda_joint2', home_configuration(robot))


def test_a_continuous_joint_has_the_dynamics_of_the_revolute_one(tmp_path):
    """pinocchio gives a continuous joint two coordinates (cos, sin): the model takes angles all the same."""
    continuous = load_robot(_panda_urdf(tmp_path, lambda text: text.replace(
        '<joint name="panda_joint7" type="revolute">', '<joint name="panda_joint7" type="continuous">')))
    revolute = load_robot(_panda_urdf(tmp_path, name='revolute.urdf'))
    assert continuous.joint_types[-1] == 'continuous' and continuous.unstated_ranges == ()
    assert continuous.lower_limits[-1] == -np.inf and continuous.upper_limits[-1] == np.inf
    rng = np.random.default_rng(7)
    q = CENTER + rng.uniform(-0.5, 0.5, (20, 7))
    q[:, 6] = rng.uniform(-6.0, 6.0, 20)  # beyond ±π: the angle is not wrapped away
    dq, ddq = rng.normal(size=(20, 7)), rng.normal(size=(20, 7))
    np.testing.assert_allclose(continuous.inverse_dynamics(q, dq, ddq), revolute.inverse_dynamics(q, dq, ddq),
                               atol=1e-9)
    np.testing.assert_allclose(continuous.regressor(q, dq, ddq), revolute.regressor(q, dq, ddq), atol=1e-9)


def test_a_log_of_a_continuous_joint_beyond_half_a_turn_imports(tmp_path):
    urdf = _panda_urdf(tmp_path, lambda text: text.replace(
        '<joint name="panda_joint7" type="revolute">', '<joint name="panda_joint7" type="continuous">'))
    log = tmp_path / 'log.csv'
    _log(log)
    table = np.loadtxt(log, delimiter=',', skiprows=1)
    table[:, 7] += 4.0  # joint 7 at 3.6 … 4.4 rad: outside the revolute's ±2.9, inside a continuous joint's
    np.savetxt(log, table, delimiter=',', header=log.read_text().splitlines()[0], comments='', fmt='%.9f')
    done = run_dynid('import', log, '--columns', COLUMNS, '--robot', urdf, '-o', tmp_path / 'bag')
    assert done.returncode == 0 and 'dropped' not in done.stdout, done.stdout + done.stderr


def test_a_gripper_description_is_read_as_the_arm_the_log_names(tmp_path):
    urdf = _panda_urdf(tmp_path)  # the hand and two prismatic fingers branch off the arm
    robot = load_robot(urdf)
    assert robot.joint_names == tuple(PANDA) and robot.flange == 'panda_link8'
    assert any('branches' in note for note in robot.notes)
    done = run_dynid('import', _log(tmp_path / 'log.csv'), '--columns', COLUMNS, '--robot', urdf,
                     '-o', tmp_path / 'bag')
    assert done.returncode == 0 and 'dropped' not in done.stdout, done.stdout + done.stderr


def _link(name, mass):
    return (f'<link name="{name}"><inertial><origin xyz="0 0 0.05"/><mass value="{mass}"/>'
            '<inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial></link>')


def _joint(name, parent, child, z):
    return (f'<joint name="{name}" type="revolute"><parent link="{parent}"/><child link="{child}"/>'
            f'<origin xyz="0 0 {z}"/><axis xyz="0 1 0"/>'
            '<limit lower="-2" upper="2" effort="10" velocity="3"/></joint>')


def test_a_description_naming_a_joint_and_its_link_alike_loads(tmp_path):
    """A description may name its last joint and the link it turns on alike (so100.urdf's ``gripper``: the jaw's
    joint and the wrist link): pinocchio's getFrameId refused to choose between the two frames (a ValueError
    traceback from dynid model, simulate, identify). The flange, by default the last joint's frame, is the joint's."""
    import pinocchio as pin

    path = tmp_path / 'alike.urdf'
    path.write_text('<robot name="alike">' + _link('base', 1.0) + _link('upper', 1.0) + _link('gripper', 0.5)
                    + _link('jaw', 0.1) + _joint('shoulder', 'base', 'upper', 0.1)
                    + _joint('elbow', 'upper', 'gripper', 0.3) + _joint('gripper', 'gripper', 'jaw', 0.2)
                    + '</robot>')
    robot = load_robot(str(path))
    model = robot.pinocchio_model
    assert robot.flange == 'gripper'
    named = [i for i, frame in enumerate(model.frames) if frame.name == robot.flange]
    assert len(named) >= 2  # the case: one name, two frames
    [joint] = [i for i in named if model.frames[i].type == pin.FrameType.JOINT]
    assert model.frames[joint].parentJoint == model.njoints - 1
    assert robot.flange_placement.isApprox(model.frames[joint].placement)
