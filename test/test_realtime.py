"""The twin's time base in real time (issue 12): a process that falls behind runs late, never skips.

sim_node's loop is replayed here on a fake clock, without ROS: timer turns every 5 ms, trajectory
chunks stamped in wall time arriving ``lead`` seconds early (as excitation_node sends them), and
stalls of the whole process (a loaded machine) at and around chunk hand-overs. The twin must
produce every sample with its own stamp, follow a reference without jumps, and keep the joint
torque inside the effort limits. (Skipping ahead, as an earlier twin did, moved the stamp↔twin-time
mapping and made the reference jump at every chunk hand-over after a skip: 301 N·m on a 150 N·m joint.)
"""

import numpy as np
import pytest

from dynid.excite.trajectory import FourierTrajectory, chunk_timeline
from dynid.model import load_robot
from dynid.sim.parameters import PlantParameters, SensorParameters
from dynid.sim.realtime import RealTimeSchedule
from dynid.sim.twin import DigitalTwin, home_configuration

RATE = 500.0
TURN_NS = 5_000_000
START_NS = 1_700_000_000_000_000_000


def _chunks(robot, chunk_s: float = 1.0, duration_s: float = 4.0):
    cosine = np.tile([0.3, 0.1], (robot.n, 1))  # [rad] at 0.5 and 1 Hz: starts at home, at rest
    fourier = FourierTrajectory(robot.joint_names, 0.5, home_configuration(robot) - cosine.sum(axis=1),
                                np.zeros_like(cosine), cosine)
    times = np.arange(0.0, duration_s + 1e-9, 0.01)
    q, dq, ddq = fourier.evaluate(times)
    return chunk_timeline(robot.joint_names, times, q, dq, ddq, chunk_s)


def _run(stalls_s, max_batch: int = 50, lead_s: float = 0.5):
    """Replay sim_node's loop; returns (stamps, reference q, joint torque) of every produced sample."""
    robot = load_robot('ur5e')
    params = PlantParameters.defaults(robot)
    params.sensors = SensorParameters.noiseless()
    twin = DigitalTwin(params, rate_hz=RATE)
    schedule = RealTimeSchedule(RATE, START_NS, max_batch)
    begin_ns = START_NS + 200_000_000  # the excitation starts 0.2 s after the twin
    pending = [(begin_ns + int(first * 1e9), chunk) for first, chunk in _chunks(robot)]
    stamps, reference, torque = [], [], []
    now = START_NS
    end = begin_ns + 5 * 10**9
    while now < end:
        now += TURN_NS
        if any(a <= (now - START_NS) / 1e9 < b for a, b in stalls_s):
            continue  # the process does not run: no callback at all
        while pending and pending[0][0] - int(lead_s * 1e9) <= now:  # trajectory callbacks first
            stamp, chunk = pending.pop(0)
            twin.follow(chunk, start_time=schedule.twin_time(stamp))
        count = schedule.due(now, twin.samples)
        if count:
            first = twin.samples + 1
            record = twin.advance(count)
            stamps.append(schedule.stamps(first, count))
            reference.append(record.reference['q'])
            torque.append(record.truth['joint_torque'])
    return robot, np.concatenate(stamps), np.vstack(reference), np.vstack(torque)


@pytest.mark.parametrize('stalls_s', [
    [],
    [(1.15, 1.45)],                    # 300 ms, across the hand-over at 1.2 s
    [(0.65, 0.72), (2.1, 2.9), (3.18, 3.25)],  # one before a chunk arrives, one long, one at a hand-over
])
def test_a_stalled_twin_runs_late_and_follows_without_jumps(stalls_s):
    robot, stamps, q_r, torque = _run(stalls_s)
    # Every sample was produced, with the stamp of its own twin time.
    steps = np.diff(stamps)
    assert np.all(np.abs(steps - 1e9 / RATE) <= 1), 'samples were skipped or stamped off their twin time'
    # The reference is continuous: no step larger than the trajectory's own speed allows.
    dq_max = 0.3 * 2 * np.pi * 0.5 + 0.1 * 2 * np.pi * 1.0  # rad/s of the test trajectory (harmonics 0.5, 1 Hz)
    assert np.abs(np.diff(q_r, axis=0)).max() <= 1.2 * dq_max / RATE
    # The joint torque stays within the effort limits.
    assert np.all(np.abs(torque) <= robot.effort_limits), np.abs(torque).max(axis=0)


def test_schedule_hands_out_at_most_a_batch_and_reports_the_lag():
    schedule = RealTimeSchedule(1000.0, 0, max_batch=100)
    assert schedule.due(10_500_000, 0) == 10
    assert schedule.due(500_000_000, 10) == 100
    assert schedule.behind_s(500_000_000, 110) == pytest.approx(0.39)
    assert schedule.twin_time(schedule.stamps(250, 1)[0]) == pytest.approx(0.25)
    schedule.restart(10**9)
    assert schedule.due(10**9 - 1, 0) == 0


def test_a_trajectory_arriving_after_its_start_is_counted_and_reported_once():
    schedule = RealTimeSchedule(1000.0, 0, max_batch=100)
    assert schedule.arrived(2.0, 1.5) == 0.0  # 0.5 s early: in time
    level, _, values = schedule.health(10**9, 1000, {}, 0.1)
    assert level == 'ok' and values['late_trajectories'] == 0
    assert schedule.arrived(2.0, 2.25) == pytest.approx(0.25)
    schedule.arrived(3.0, 3.125)
    level, message, values = schedule.health(10**9, 1000, {}, 0.1)
    assert level == 'warn' and message.startswith('2 trajectories arrived after their start (up to 0.250 s late)')
    assert values['late_trajectories'] == 2 and values['late_max_s'] == '0.2500'
    assert schedule.health(10**9, 1000, {}, 0.1)[0] == 'ok'  # said once; the counts stay in the values


def test_compiling_the_kernels_leaves_the_twin_as_it_was():
    robot = load_robot('ur5e')
    params = PlantParameters.defaults(robot)
    prepared, plain = (DigitalTwin(params, rate_hz=RATE, seed=3) for _ in range(2))
    prepared.compile_kernels()
    assert prepared.samples == 0 and prepared.time == 0.0
    first, second = prepared.advance(20), plain.advance(20)
    for name, values in first.measured.items():  # the same samples, noise included: its own generator kept
        np.testing.assert_array_equal(values, second.measured[name], err_msg=name)
