"""Excitation design (issue 5): rest-to-rest Fourier series, limits, determinism, experiments, CLI."""


import numpy as np
import pytest
import yaml

from cli_run import run_dynid
from dynid.errors import InputError
from dynid.excite import experiments
from dynid.excite.fourier import FourierDesign, default_limits, random_design
from dynid.excite.optimize import check_excitation, describe_excitation, optimize_excitation
from dynid.excite.trajectory import load_trajectory
from dynid.model import load_robot
from dynid.sim.twin import home_configuration


@pytest.fixture(scope='module')
def setup():
    robot = load_robot('ur5e')
    home = home_configuration(robot)
    return robot, home, default_limits(robot, home)


def test_rest_to_rest_series_starts_and_ends_at_rest(setup):
    robot, home, limits = setup
    design = FourierDesign(robot.joint_names, 5, 8.0)
    x = np.random.default_rng(0).normal(size=design.size)
    trajectory = design.trajectory(x)
    for t in (0.0, 8.0):
        _, dq, ddq = trajectory.evaluate(np.array([t]))
        np.testing.assert_allclose(dq, 0.0, atol=1e-12)
        np.testing.assert_allclose(ddq, 0.0, atol=1e-12)
    np.testing.assert_allclose(design.variables(*design.coefficients(x)), x)
    grid = np.linspace(0, 8, 50)
    position, velocity, acceleration = design.kinematic_matrices(grid)
    q, dq, ddq = trajectory.evaluate(grid)
    np.testing.assert_allclose(position @ x, q.reshape(-1), atol=1e-12)
    np.testing.assert_allclose(acceleration @ x, ddq.reshape(-1), atol=1e-10)


def test_random_designs_respect_limits_over_the_whole_period(setup):
    robot, home, limits = setup
    design = FourierDesign(robot.joint_names, 5, 10.0)
    dense = np.linspace(0.0, 10.0, 4000, endpoint=False)
    for seed in range(3):
        x = random_design(design, home, limits, np.random.default_rng(seed), dense)
        feasible, peaks = check_excitation(robot, design.trajectory(x), limits, samples=20000)
        assert feasible, peaks
        assert max(p / v for p, v in zip(peaks['velocity'], limits.velocity, strict=True)) > 0.5  # not timid


def test_optimization_is_deterministic_feasible_and_better_than_its_start(setup):
    # Small problem (3 harmonics, 1 start, 25 iterations) to keep the test short; the benchmark runs
    # the full 5-harmonic design.
    robot, home, limits = setup
    design = FourierDesign(robot.joint_names, 3, 6.0)
    runs = [optimize_excitation(robot, design, home, limits, starts=1, seed=5, max_iterations=25) for _ in range(2)]
    np.testing.assert_array_equal(runs[0].trajectory.sine, runs[1].trajectory.sine)
    assert runs[0].feasible
    feasible, _ = check_excitation(robot, runs[0].trajectory, limits, samples=20000)
    assert feasible
    start = random_design(design, home, limits, np.random.default_rng(5), np.linspace(0, 6, 120, endpoint=False))
    start_cond = describe_excitation(robot, design.trajectory(start), limits).condition_number
    assert runs[0].condition_number < 0.7 * start_cond
    other = optimize_excitation(robot, design, home, limits, starts=1, seed=6, max_iterations=3)
    assert not np.array_equal(other.trajectory.sine, runs[0].trajectory.sine)  # another seed, another design


def test_experiments_follow_the_seeds_settings(setup):
    robot, home, _ = setup
    plateaus = experiments.constant_velocity_plateaus(robot, 'shoulder_pan_joint', home)
    speeds = np.unique(np.round(np.abs(plateaus.velocities[:, 0]), 6))
    assert {0.05, 0.1, 0.2, 0.4, 0.8, 1.2} <= set(speeds)
    np.testing.assert_allclose(plateaus.positions[-1], home, atol=1e-9)  # back home
    sweep = experiments.reciprocating_sweep(robot, 0, home, cycles=4)
    assert np.abs(sweep.accelerations[:, 0]).max() == pytest.approx(0.05)
    assert np.rad2deg(sweep.positions[-1, 0] - home[0]) == pytest.approx(12.0)  # 3° net per cycle
    reversals = np.count_nonzero(np.diff(np.sign(sweep.velocities[1:-1, 0])) != 0)
    assert reversals >= 7
    gravity = experiments.gravity_sweep(robot, 1, home)
    assert np.abs(gravity.velocities[:, 1]).max() == pytest.approx(0.05)
    cycle = experiments.waypoint_cycle(robot, cycles=1)
    assert cycle.duration_s == pytest.approx(13.458, rel=0.03)  # thesis Table 1 cycle time
    assert np.abs(cycle.velocities).max() <= np.pi + 1e-9
    assert np.abs(cycle.accelerations).max() <= 2 * np.pi / 3 + 1e-9
    # Between its 100 Hz points too (a 1 kHz controller interpolates them): q̇, q̈ are the derivatives of q,
    # so the quintic interpolation keeps |q̈| within the limit except in the point period where q̈ steps
    # (0.2 % of the samples; it rang on 5–16 % of them, up to 6 rad/s², when the points' q̇ and q̈ belonged
    # to a slightly faster profile than their times).
    q, dq, ddq = cycle.evaluate(np.arange(int(cycle.duration_s * 1000)) / 1000)
    assert np.all(np.mean(np.abs(ddq) > 2 * np.pi / 3 * 1.01, axis=0) < 0.005)
    np.testing.assert_allclose(np.diff(q, axis=0) * 1000, 0.5 * (dq[1:] + dq[:-1]), rtol=0, atol=2e-3)
    random_moves = experiments.bang_coast_bang(robot, [0], home, duration_s=10.0, seed=2)
    again = experiments.bang_coast_bang(robot, [0], home, duration_s=10.0, seed=2)
    np.testing.assert_array_equal(random_moves.positions, again.positions)
    with pytest.raises(InputError, match='velocity limits'):
        experiments.constant_velocity_plateaus(robot, 0, home, speeds=(5.0,), hold_s=0.1, acceleration=50.0)
    with pytest.raises(InputError, match='position limits'):
        experiments.gravity_sweep(robot, 'elbow_joint', home, amplitude=2.0)


def _excite(*args):
    return run_dynid('excite', *args)


def test_cli_writes_trajectories_and_refuses_bad_ones(tmp_path):
    out = tmp_path / 'fourier.yaml'
    result = _excite('--harmonics', '4', '--period', '8', '--seed', '3', '-o', str(out), '--plot',
                     str(tmp_path / 'fourier.png'))
    assert result.returncode == 0, result.stderr
    assert 'cond(W_b)' in result.stdout and (tmp_path / 'fourier.png').stat().st_size > 10000
    trajectory = load_trajectory(out)
    assert trajectory.duration_s == pytest.approx(8.0)
    document = yaml.safe_load(out.read_text())
    assert document['experiment']['name'] == 'fourier' and document['experiment']['feasible']
    same = tmp_path / 'same.yaml'
    _excite('--harmonics', '4', '--period', '8', '--seed', '3', '-o', str(same))
    assert yaml.safe_load(same.read_text())['fourier'] == document['fourier']  # same seed, same trajectory
    refused = _excite('-o', str(out))
    assert refused.returncode == 2 and 'refusing to overwrite' in refused.stderr
    too_fast = _excite('--experiment', 'plateaus', '--joint', 'wrist_1_joint', '--velocity-fraction', '0.5',
                       '-o', str(tmp_path / 'p.yaml'))
    assert too_fast.returncode == 0, too_fast.stderr
    broken = _excite('--experiment', 'plateaus', '--joint', 'no_such_joint', '-o', str(tmp_path / 'q.yaml'))
    assert broken.returncode == 2 and 'no_such_joint' in broken.stderr
    assert not (tmp_path / 'q.yaml').exists()
