"""Trajectory types and the dynid trajectory file."""

import numpy as np
import pytest

from dynid.errors import InputError
from dynid.excite.trajectory import FourierTrajectory, PointTrajectory, load_trajectory, save_trajectory

NAMES = ('a', 'b')


def _fourier():
    return FourierTrajectory(NAMES, 0.2, [0.1, -0.3], [[0.2, 0.05, 0.01], [0.1, 0.0, 0.02]],
                             [[0.0, 0.03, 0.0], [0.05, 0.01, 0.0]])


def test_fourier_derivatives_match_finite_differences():
    f = _fourier()
    t = np.linspace(0.0, 5.0, 50001)
    q, dq, ddq = f.evaluate(t)
    assert np.abs(np.gradient(q, t, axis=0) - dq)[2:-2].max() < 1e-6
    assert np.abs(np.gradient(dq, t, axis=0) - ddq)[2:-2].max() < 1e-5
    np.testing.assert_allclose(f.derivative(t, 3)[2:-2], np.gradient(ddq, t, axis=0)[2:-2], atol=1e-4)
    assert f.duration_s == pytest.approx(5.0) and f.harmonics == 3


@pytest.mark.parametrize('order', ['linear', 'cubic', 'quintic'])
def test_point_interpolation_passes_through_points_and_is_smooth(order):
    f = _fourier()
    times = np.linspace(0.0, 5.0, 21)
    q, dq, ddq = f.evaluate(times)
    args = {'linear': (q, None, None), 'cubic': (q, dq, None), 'quintic': (q, dq, ddq)}[order]
    points = PointTrajectory(NAMES, times, *args)
    q_at, dq_at, ddq_at = points.evaluate(times[:-1] + 1e-12)
    np.testing.assert_allclose(q_at, q[:-1], atol=1e-9)
    if order != 'linear':
        np.testing.assert_allclose(dq_at, dq[:-1], atol=1e-9)
    if order == 'quintic':
        np.testing.assert_allclose(ddq_at, ddq[:-1], atol=1e-7)
    dense = np.linspace(0.0, 4.999, 5000)
    error = np.abs(points.evaluate(dense)[0] - f.evaluate(dense)[0]).max()
    assert error < {'linear': 1e-2, 'cubic': 1e-4, 'quintic': 1e-5}[order]  # rad, 0.25 s spacing
    after = points.evaluate(np.array([6.0]))
    np.testing.assert_allclose(after[0][0], q[-1])
    np.testing.assert_allclose(after[1][0], 0.0)
    some = np.array([-1.0, 0.0, 0.3, 2.71, 4.999, 5.0])  # one at a time (the simulator's path) = batched
    for k, value in enumerate(points.evaluate(some)):
        single = np.vstack([points.evaluate(np.array([x]))[k] for x in some])
        np.testing.assert_allclose(single, value, atol=1e-12)


def test_trajectory_file_round_trip_and_errors(tmp_path):
    path = tmp_path / 'traj.yaml'
    save_trajectory(_fourier(), path)
    loaded = load_trajectory(path)
    t = np.linspace(0, 5, 11)
    np.testing.assert_allclose(loaded.evaluate(t)[0], _fourier().evaluate(t)[0])
    points = PointTrajectory(NAMES, [0.0, 1.0], [[0, 0], [1, 1]], [[0, 0], [0, 0]])
    save_trajectory(points, path)
    assert isinstance(load_trajectory(path), PointTrajectory)
    path.write_text('dynid_trajectory: 1\njoint_names: [a, b]\npoints: {time_s: [0, 0], positions: [[0, 0], [1, 1]]}\n')
    with pytest.raises(InputError, match='strictly increasing'):
        load_trajectory(path)
    path.write_text('dynid_trajectory: 2\n')
    with pytest.raises(InputError, match='not a dynid trajectory file'):
        load_trajectory(path)
    with pytest.raises(InputError, match='cannot read'):
        load_trajectory(tmp_path / 'missing.yaml')
    with pytest.raises(InputError, match='NaN'):
        FourierTrajectory(NAMES, 0.1, [0, np.nan], [[0.1], [0.1]], [[0.0], [0.0]])
