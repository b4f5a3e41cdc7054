"""Streams that carry nothing, and another controller's rate: an effort constant or all zero while the joints move
(old gz_ros2_control, a driver that does not fill effort) is found with its likely cause, in a recording by
``dynid identify`` and live by the estimator's core; a UR recording at the other controller generation's rate
is pointed out."""

import numpy as np
import pytest

from dynid.cli import main
from dynid.estimate.online import OnlineEstimation
from dynid.io.bag import write_bag
from dynid.io.dataset import Dataset
from dynid.io.stream import StateBatch
from dynid.io.stream_checks import EffortWatch, effort_problem, rate_note

NAMES = ('j1', 'j2', 'j3')


def motion(samples: int = 400, rate_hz: float = 500.0, joints: int = 3):
    """(t [s], q [rad], q̇ [rad/s], q̈ [rad/s²]) of slow sines, one phase per joint."""
    t = np.arange(samples) / rate_hz
    phase = np.linspace(0.0, 1.0, joints)
    angle = 2 * np.pi * 0.5 * t[:, None] + phase
    return t, 0.3 * np.sin(angle), 0.3 * np.pi * np.cos(angle), -0.3 * np.pi ** 2 * np.sin(angle)


def test_a_zero_effort_names_the_drivers_that_leave_it_empty():
    _, q, _, _ = motion()
    problem = effort_problem(np.zeros_like(q), q, NAMES)
    assert problem.startswith('joint_states effort is 0 on every joint while they move')
    assert 'gz_ros2_control' in problem and 'issue #169' in problem


def test_a_held_value_on_some_joints_is_named_per_joint():
    _, q, _, _ = motion()
    effort = np.sin(q) * 10.0
    effort[:, 1] = 2.5
    problem = effort_problem(effort, q, NAMES)
    assert "joints ['j2']" in problem and '(2.5)' in problem and 'initial_value' in problem


def test_no_problem_without_motion_or_with_few_samples_or_a_real_effort():
    _, q, _, _ = motion()
    assert effort_problem(np.zeros_like(q), np.zeros_like(q), NAMES) is None  # at rest a constant effort is fine
    assert effort_problem(np.zeros((20, 3)), q[:20], NAMES) is None  # too few samples to judge
    assert effort_problem(np.cos(q), q, NAMES) is None
    assert effort_problem(None, q, NAMES) is None


def test_the_live_watch_tells_what_the_whole_recording_tells():
    _, q, _, _ = motion()
    effort = np.cos(q)
    effort[:, 0] = 0.0
    effort[::7, 2] = np.nan  # messages without that joint's effort are skipped
    watch = EffortWatch(NAMES)
    for a in range(0, len(q), 30):
        watch.update(effort[a:a + 30], q[a:a + 30])
    assert watch.problem() == effort_problem(effort, q, NAMES)
    assert "joints ['j1']" in watch.problem()
    watch.reset()
    assert watch.problem() is None


def test_the_estimators_core_reports_a_constant_current(ur5e):
    estimation = OnlineEstimation(ur5e, rate_hz=500.0)
    t, q, _, _ = motion(joints=6)
    stamps = (t * 1e9).astype(np.int64)
    current = np.full_like(q, 0.7)
    for a in range(0, len(t), 50):
        rows = slice(a, a + 50)
        estimation.update(StateBatch(stamps[rows], q[rows], np.zeros_like(q[rows]), np.zeros_like(q[rows]),
                                     theta=q[rows], current=current[rows]))
    assert estimation.input_problem().startswith('the motor current keeps one value on every joint')
    estimation.reset()
    assert estimation.input_problem() is None


def test_dynid_identify_refuses_a_recording_whose_effort_is_never_filled(tmp_path, capsys, ur5e):
    t, q, dq, _ = motion(2000, 250.0, joints=6)
    bag = write_bag(tmp_path / 'gazebo', Dataset(ur5e.joint_names, t, q, dq, tau=np.zeros_like(q)))
    code = main(['identify', str(bag), '--robot', 'ur5e', '--joint-states-effort', 'torque', '-o',
                 str(tmp_path / 'r.yaml'), '--quiet'])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1, err
    assert 'joint_states effort is 0 on every joint while they move' in err[0] and 'gz_ros2_control' in err[0]
    assert not (tmp_path / 'r.yaml').exists()


@pytest.mark.parametrize('robot, rate, expected', [
    ('ur10', 500.0, '(robot ur10e?)'), ('ur5', 490.0, '(robot ur5e?)'),
    ('ur10e', 125.0, None),  # an e-Series streams at 125 Hz where its client asks (RTDE's target frequency)
    ('ur20', 126.0, None), ('ur10e', 500.0, None), ('ur10', 125.0, None), ('panda', 500.0, None), (None, 500.0, None)])
def test_a_ur_recording_at_the_other_generations_rate_is_pointed_out(robot, rate, expected):
    note = rate_note(robot, rate)
    assert (note is None) if expected is None else (expected in note)
