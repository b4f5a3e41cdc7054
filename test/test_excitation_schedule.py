"""excitation_node's core without DDS: the trajectory chosen, the approach + periods timeline, the chunks due."""

import numpy as np
import pytest

from dynid.excite.schedule import ChunkSchedule, excitation_timeline, excitation_trajectory
from dynid.excite.trajectory import FourierTrajectory, approach_segment, builtin_excitation_path, load_trajectory

HOME = np.array([0.0, -1.5708, 1.5708, -1.5708, -1.5708, 0.0])


def test_timeline_approaches_from_the_current_position_then_runs_the_periods(ur5e):
    """Trajectory columns in reverse joint order: the timeline is in the robot's order, starts at rest at
    the current position, reaches the trajectory's start and runs ``repeat`` periods at the point rate."""
    names = tuple(ur5e.joint_names)[::-1]
    trajectory = FourierTrajectory(names, 0.5, HOME[::-1], np.zeros((6, 1)), np.full((6, 1), 0.05))
    current = HOME + 0.1
    times, q, dq, ddq = excitation_timeline(trajectory, ur5e.joint_names, current, 100.0, 3, 0.2)
    np.testing.assert_allclose(q[0], current)
    np.testing.assert_allclose(dq[0], 0.0, atol=1e-12)
    start = trajectory.evaluate(np.array([0.0]))[0][0][::-1]  # robot order
    reached = np.flatnonzero(np.all(np.abs(q - start) < 1e-9, axis=1))
    # the approach ends at rest on the start; the periods begin one point (0.01 s) later
    assert reached.size and times[-1] - times[reached[0]] == pytest.approx(0.01 + 3 * 2.0, abs=1e-9)
    np.testing.assert_allclose(np.diff(times), 0.01, atol=1e-9)
    np.testing.assert_allclose(q[-1], start, atol=1e-9)  # whole periods: back at the start


def test_chunks_are_due_lead_time_before_their_start_and_the_run_ends_after_the_last(ur5e):
    times = np.arange(0.0, 25.0 + 1e-9, 0.1)
    motion = np.zeros((times.size, ur5e.n))
    s = 10**9  # ns per s
    start = 1_800_000_000 * s + 123_456_789  # a wall-clock origin: a float of it resolves only ~0.24 µs
    schedule = ChunkSchedule(ur5e.joint_names, (times, motion, motion, motion), 10.0, start, 0.5)
    # each chunk after the first begins with the last point of the one before (chunk_timeline), exactly
    assert [begin - start for begin, _ in schedule.chunks] == [0, 9_900_000_000, 19_900_000_000]
    assert [begin - start for begin, _ in schedule.due(start - s)] == [0]  # the first at once
    assert schedule.due(start + 9_300_000_000) == [] and schedule.pending
    assert [begin - start for begin, _ in schedule.due(start + 9_500_000_000)] == [9_900_000_000]
    assert [begin - start for begin, _ in schedule.due(start + 30 * s)] == [19_900_000_000]
    assert not schedule.pending
    assert not schedule.done(start + 24_900_000_000) and schedule.done(start + 25_100_000_000)
    assert schedule.end_ns == start + 25 * s
    pieces = [piece for _, piece in schedule.chunks]
    assert pieces[1].time_s[0] == 0.0 and pieces[1].positions.shape[1] == ur5e.n


def test_the_builtin_trajectory_is_the_shipped_file(ur5e):
    chosen = excitation_trajectory(ur5e, 'builtin')
    shipped = load_trajectory(builtin_excitation_path('ur5e'))
    t = np.linspace(0.0, shipped.duration_s, 7)
    for a, b in zip(chosen.evaluate(t), shipped.evaluate(t), strict=True):
        np.testing.assert_array_equal(a, b)


def test_the_approach_keeps_the_point_rate_for_any_distance():
    """Its points are 1/rate apart whatever the distance (the duration rounded up to whole periods), peak ≤ v."""
    for distance in (0.1, 0.567, 1.2345):
        t, q, dq, _ = approach_segment(np.zeros(2), np.array([distance, -0.5 * distance]), 0.3, 50.0)
        np.testing.assert_allclose(np.diff(t), 0.02, atol=1e-12)
        np.testing.assert_allclose(q[-1], [distance, -0.5 * distance], atol=1e-12)
        assert np.abs(dq).max() <= 0.3 + 1e-12 and t[-1] >= 1.875 * distance / 0.3 - 1e-12
