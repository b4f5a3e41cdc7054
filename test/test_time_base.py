"""dynid import checks the time of a log against its motion: a time column that counts samples (0, 1, 2, …) or is
in another unit, or a wrong rate for a log without one, disagrees with the logged velocity by orders of magnitude
(Δq/Δt against q̇) and is refused with the rate the motion implies and a command that reads it right."""

import shlex

import numpy as np
import pytest

from cli_run import run_dynid
from dynid.errors import InputError
from dynid.io.bag import read_bag
from dynid.io.csv_log import parse_column_spec

COLUMNS = 'time=t,q=q{i},dq=dq{i}'


def _motion(rate, seconds=3.0, lag=0, noise=0.0, seed=0):
    """UR5e-like positions and velocities [rad, rad/s] at ``rate`` [Hz]; the velocity ``lag`` samples late and with
    white noise of ``noise`` rad/s, as a drive's filtered estimate."""
    t = np.arange(0.0, seconds, 1.0 / rate)
    w = np.linspace(0.8, 1.6, 6)
    q = 0.5 * np.sin(np.outer(t, w)) + np.array([0.0, -1.57, 1.57, -1.57, -1.57, 0.0])
    dq = 0.5 * np.cos(np.outer(np.maximum(t - lag / rate, 0.0), w)) * w
    dq += np.random.default_rng(seed).normal(0.0, noise, dq.shape)
    return t, q, dq


def _write(path, time, q, dq):
    header = ['t', *(f'q{j}' for j in range(6)), *(f'dq{j}' for j in range(6))]
    columns = [q, dq] if time is None else [time, q, dq]
    np.savetxt(path, np.column_stack(columns), delimiter=',', header=','.join(header[time is None:]), comments='',
               fmt='%.10g')
    return str(path)


def _command(stderr):
    """The command a refusal gives (after ': dynid import '), as argv for run_dynid."""
    return shlex.split(stderr[stderr.index(': dynid import ') + 2:])[1:]


@pytest.mark.parametrize('rate', [1000.0, 500.0, 125.0])
def test_a_time_column_counting_samples_is_refused_with_the_rate_and_a_command_that_works(tmp_path, rate, ur5e):
    t, q, dq = _motion(rate)
    log = _write(tmp_path / 'log.csv', np.arange(t.size), q, dq)
    done = run_dynid('import', log, '--columns', COLUMNS, '--robot', 'ur5e', '-o', tmp_path / 'bag')
    assert done.returncode == 2 and not (tmp_path / 'bag').exists()
    assert f'({rate:g} Hz) by its motion' in done.stderr
    command = _command(done.stderr)
    assert run_dynid(*command).returncode == 0  # the command as printed
    back = read_bag(tmp_path / 'bag', ur5e.joint_names)
    np.testing.assert_allclose(np.median(np.diff(back.t)), 1.0 / rate, rtol=1e-6)
    k = np.searchsorted(t, back.t[10])
    np.testing.assert_allclose(back.q[10], q[k], atol=1e-6)


def test_milliseconds_read_as_seconds_and_seconds_as_milliseconds_are_refused(tmp_path):
    t, q, dq = _motion(500.0)
    log = _write(tmp_path / 'log.csv', 1e3 * t, q, dq)  # a column in ms, mapped as seconds
    done = run_dynid('import', log, '--columns', COLUMNS, '--robot', 'ur5e', '-o', tmp_path / 'bag')
    assert done.returncode == 2 and 'time_unit=ms' in done.stderr
    assert run_dynid(*_command(done.stderr)).returncode == 0
    seconds = _write(tmp_path / 'seconds.csv', t, q, dq)
    done = run_dynid('import', seconds, '--columns', COLUMNS + ',time_unit=ms', '--robot', 'ur5e', '-o',
                     tmp_path / 'bag2')
    assert done.returncode == 2 and '0.002 s (500 Hz) by its motion' in done.stderr
    assert 'time_unit' not in _command(done.stderr)[2]  # seconds: the spec's default
    assert run_dynid(*_command(done.stderr)).returncode == 0


def test_a_preset_log_is_refused_with_the_columns_that_read_it(tmp_path):
    """The franka preset reads time in ms; a log whose time column holds seconds gets the generic map, robot named."""
    t = np.arange(0.0, 3.0, 1e-3)
    w = np.linspace(0.6, 1.2, 7)
    q7 = np.array([0.0, 0.0, 0.0, -1.5, 0.0, 1.8, 0.0]) + 0.4 * np.sin(np.outer(t, w))  # inside the Panda's ranges
    dq7 = 0.4 * np.cos(np.outer(t, w)) * w
    header = ['time', *(f'state.q[{j}]' for j in range(7)), *(f'state.dq[{j}]' for j in range(7))]
    np.savetxt(tmp_path / 'franka.csv', np.column_stack([t, q7, dq7]), delimiter=',', header=','.join(header),
               comments='', fmt='%.10g')
    done = run_dynid('import', tmp_path / 'franka.csv', '--preset', 'franka', '-o', tmp_path / 'bag')
    assert done.returncode == 2, done.stdout
    command = _command(done.stderr)
    assert '--robot' in command and command[command.index('--robot') + 1] == 'panda'
    assert run_dynid(*command).returncode == 0


def test_a_wrong_rate_for_a_log_without_time_is_refused_with_the_rate_the_motion_implies(tmp_path):
    _, q, dq = _motion(1000.0)
    log = _write(tmp_path / 'log.csv', None, q, dq)
    done = run_dynid('import', log, '--columns', 'q=q{i},dq=dq{i}', '--rate', '1', '--robot', 'ur5e', '-o',
                     tmp_path / 'bag')
    assert done.returncode == 2 and 'give the rate of its rows, --rate 1000' in done.stderr
    done = run_dynid('import', log, '--columns', 'q=q{i},dq=dq{i}', '--rate', '1000', '--robot', 'ur5e', '-o',
                     tmp_path / 'bag')
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize('lag, noise', [(0, 0.0), (20, 0.0), (0, 0.3), (10, 0.5)])
def test_a_lagged_or_noisy_velocity_is_no_alarm(tmp_path, lag, noise):
    """20 ms late, or noise as large as the motion's velocity (r = S/(S+N) ≈ 0.45), moves r by far less than
    TIME_FACTOR."""
    from dynid.io.log_checks import velocity_time_ratio

    t, q, dq = _motion(1000.0, lag=lag, noise=noise)
    jitter = np.random.default_rng(1).uniform(0.0, 0.3e-3, t.size)  # a logger's stamps after the ticks
    ratio = velocity_time_ratio(t + jitter, q, dq)
    assert 1.0 / 3.0 < ratio < 1.5
    log = _write(tmp_path / 'log.csv', t + jitter, q, dq)
    assert run_dynid('import', log, '--columns', COLUMNS, '--robot', 'ur5e', '-o', tmp_path / 'bag').returncode == 0


def test_the_ratio_is_not_decided_without_motion_or_velocity():
    from dynid.io.log_checks import TIME_FACTOR, velocity_time_ratio

    t = np.arange(0.0, 2.0, 0.01)
    still = np.random.default_rng(2).normal(0.0, 1e-4, (t.size, 6))  # encoder noise of a resting arm
    assert np.isnan(velocity_time_ratio(t, still, still, moving_rad=0.05))
    assert np.isnan(velocity_time_ratio(t, still, None))
    assert TIME_FACTOR >= 10.0  # orders of magnitude, not percent


def test_a_time_unit_may_be_seconds_per_count():
    assert parse_column_spec('time=k,time_unit=0.002,q=q{i}').time_unit_s == 0.002
    assert 'time_unit=0.002' in parse_column_spec('time=k,time_unit=0.002,q=q{i}').spec()
    assert parse_column_spec('time=k,time_unit=us,q=q{i}').time_unit_s == 1e-6
    for bad in ('-1', '0', 'hours', 'nan'):
        with pytest.raises(InputError, match='time_unit must be one of s, ms, us, ns or seconds per count'):
            parse_column_spec(f'time=k,time_unit={bad},q=q{{i}}')


def test_nice_periods_are_the_usual_control_rates():
    from dynid.io.importing import nice_period

    assert nice_period(1.0013e-3) == 1e-3
    assert nice_period(8.04e-3) == 8e-3
    assert nice_period(2.02e-3) == 2e-3
    assert nice_period(1.27e-4) == 1.25e-4
    assert nice_period(1 / 3000) == pytest.approx(3.3e-4)  # no usual rate near: two digits
