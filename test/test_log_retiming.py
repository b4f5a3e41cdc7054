"""Logs a logger wrote on its own clock: repeated states, stamps around the control ticks, republished logs,
logs without a time column, one file per signal, .npz and headerless text, sqlite3 bags (``dynid import``)."""

import numpy as np
import pytest
import yaml

from dynid.cli import main
from dynid.io.bag import read_bag, write_bag
from dynid.io.csv_log import PRESETS, parse_column_spec
from dynid.io.dataset import Dataset
from dynid.io.importing import ImportSettings, import_bag, import_logs
from dynid.io.log_checks import REPEATED_STATE, LogLimits
from dynid.io.retiming import GRID_WINDOW, repeated_states, retime
from dynid.sim.real_log import RealLogSettings
from dynid.sim.recording import SimulationSettings, simulate_recording


def _logger_stamps(rng, n_ticks, period, lag=0.3, lost=0.05):
    """Ticks kept (a share lost) and their stamps, U(0, lag) periods after each tick."""
    ticks = np.flatnonzero(rng.random(n_ticks) >= lost)
    return ticks, ticks * period + rng.uniform(0.0, lag * period, ticks.size) + 12.345


@pytest.mark.parametrize('period', [1e-3, 2e-3, 1e-2])
def test_retime_recovers_the_ticks_of_logger_stamps(period):
    rng = np.random.default_rng(4)
    ticks, stamps = _logger_stamps(rng, 20000, period)
    timing = retime(stamps)
    assert timing.on_grid
    assert np.array_equal(np.rint((timing.times - timing.times[0]) / timing.period_s), ticks - ticks[0])
    assert abs(timing.period_s / period - 1.0) < 1e-5  # the fitted period, from noisy stamps
    assert 0.0 <= timing.shift_s.min() and timing.shift_s.max() <= 0.31 * period  # stamps lag their ticks
    assert timing.missing_ticks == ticks[-1] - ticks[0] + 1 - ticks.size


def test_stamps_wandering_over_the_period_are_kept():
    """A client polling at its own rate: each step 1 ± 25 % periods, so the phase wanders; no grid to re-time on."""
    rng = np.random.default_rng(5)
    stamps = np.cumsum(0.01 * (1.0 + rng.uniform(-0.25, 0.25, 3000)))
    timing = retime(stamps)
    assert not timing.on_grid and np.array_equal(timing.times, stamps)
    assert timing.window_s > GRID_WINDOW * timing.period_s and 'no control grid' in timing.reason


def test_repeated_states_compare_every_joint_signal():
    q = np.array([[0.0, 1.0], [0.0, 1.0], [0.1, 1.0], [0.1, 1.0], [0.1, 1.0]])
    dq = np.array([[1.0, 0.0], [1.0, 0.0], [1.0, 0.0], [1.0, 0.0], [2.0, 0.0]])
    tau = np.ones((5, 2))
    assert repeated_states({'q': q, 'dq': dq, 'tau': tau}).tolist() == [False, True, False, True, False]
    tau[1, 0] = 2.0  # the torque moved: a standstill with equal q and q̇, not a stale read
    assert repeated_states({'q': q, 'dq': dq, 'tau': tau}).tolist() == [False, False, False, True, False]


def _lab_csv(path, t, q, tau, time_column=True):
    names = (['t'] if time_column else []) + [f'q{j}' for j in range(q.shape[1])] + \
        [f'tau{j}' for j in range(q.shape[1])]
    table = np.column_stack(([t] if time_column else []) + [q, tau])
    np.savetxt(path, table, delimiter=',', header=','.join(names), comments='', fmt='%.9g')
    return path


def _motion(t, n=6):
    home = np.array([0.0, -1.5, 1.0, -1.0, 0.5, 0.0])[:n]
    return home + 0.3 * np.sin(np.outer(t, 0.5 + np.arange(n) / 5.0)), np.cos(np.outer(t, np.ones(n)))


def test_republished_log_is_brought_back_to_its_rate(ur5e, tmp_path):
    """A 100 Hz state republished at 400 Hz, three of four rows repeated: imported at 100 Hz; import.yaml says so."""
    true_t = np.arange(0.0, 6.0, 0.01)
    q, tau = _motion(true_t)
    rows = np.repeat(np.arange(true_t.size), 4)
    t = np.arange(rows.size) * 0.0025 + 1e-4 * np.random.default_rng(1).random(rows.size)
    csv = _lab_csv(tmp_path / 'republished.csv', t, q[rows], tau[rows])
    spec = 'time=t,q=q{i},tau=tau{i}'
    for extra, name in (([], 'from_stamps'), (['--rate', '400'], 'told_400')):
        output = tmp_path / name
        assert main(['import', str(csv), '--columns', spec, '--robot', 'ur5e', '-o', str(output), *extra]) == 0
        report = yaml.safe_load((output / 'import.yaml').read_text())
        republished = report['timing']['republished']
        assert republished is not None and abs(republished['state_rate_hz'] - 100.0) < 0.01
        assert abs(republished['rows_rate_hz'] - 400.0) < 1.0 and abs(republished['factor'] - 4.0) < 0.01
        assert report['dropped'][REPEATED_STATE]['rows'] == 3 * true_t.size
        dataset = read_bag(output, ur5e.joint_names)
        assert abs(dataset.rate_hz - 100.0) < 0.01 and dataset.n_samples == true_t.size
        assert np.allclose(dataset.q, q, atol=1e-8)


def test_log_without_time_column_takes_the_given_rate(ur5e, tmp_path, capsys):
    t = np.arange(0.0, 4.0, 0.002)
    q, tau = _motion(t)
    q[100] = q[99]  # a repeated state...
    tau[100] = tau[99]
    csv = _lab_csv(tmp_path / 'fri.csv', t, q, tau, time_column=False)
    spec = 'q=q{i},tau=tau{i}'
    assert main(['import', str(csv), '--columns', spec, '--robot', 'ur5e', '-o', str(tmp_path / 'x')]) == 2
    err = capsys.readouterr().err.strip()
    assert 'no time column' in err and '--rate' in err and '\n' not in err
    assert not (tmp_path / 'x').exists()
    dataset, report, _ = import_logs([csv], parse_column_spec(spec), ur5e.joint_names, LogLimits.of_robot(ur5e),
                                     ImportSettings(rate_hz=500.0))
    assert dataset.n_samples == t.size and np.allclose(dataset.t, t, atol=1e-12)
    assert report.dropped[REPEATED_STATE]['rows'] == 1 and report.timing['missing_ticks'] == 1
    assert report.resampling['bridged_gaps'] == 1 and report.resampling['segments'] == 1  # ...is bridged
    truth, _ = _motion(t)
    assert np.abs(dataset.q[100] - truth[100]).max() < 1e-8  # spline through the neighbours


def test_one_file_per_signal_npz_and_headerless_text_read_as_one_log(ur5e, tmp_path):
    t = np.arange(0.0, 2.0, 0.004)
    q, tau = _motion(t)
    limits = LogLimits.of_robot(ur5e)
    single, _, _ = import_logs([_lab_csv(tmp_path / 'one.csv', t, q, tau)],
                               parse_column_spec('time=t,q=q{i},tau=tau{i}'), ur5e.joint_names, limits)
    np.savetxt(tmp_path / 'positions.txt', q, fmt='%.9g')
    np.savetxt(tmp_path / 'torques.txt', tau, fmt='%.9g')
    np.savetxt(tmp_path / 'time.csv', t[:, None], fmt='%.9g', header='t', comments='')
    np.savez(tmp_path / 'log.npz', t=t, q=q, tau=tau)
    split, report, _ = import_logs([tmp_path / 'time.csv', tmp_path / 'positions.txt', tmp_path / 'torques.txt'],
                                   parse_column_spec('time=t,q=positions_{i},tau=torques_{i}'), ur5e.joint_names,
                                   limits)
    assert report.files[0]['layout'] == 'side by side'
    npz, _, _ = import_logs([tmp_path / 'log.npz'], parse_column_spec('time=t,q=q_{i},tau=tau_{i}'), ur5e.joint_names,
                            limits)
    for other in (split, npz):
        assert np.allclose(other.q, single.q, atol=1e-12) and np.allclose(other.tau, single.tau, atol=1e-12)


@pytest.mark.parametrize('case, words', [('unequal', 'unequal length'), ('repeated', 'repeat the first state'),
                                         ('npz_unequal', 'unequal length')])
def test_bad_logs_exit_2_with_a_reason(tmp_path, capsys, case, words):
    t = np.arange(0.0, 1.0, 0.01)
    q, tau = _motion(t)
    if case == 'unequal':
        np.savetxt(tmp_path / 'positions.txt', q, fmt='%.9g')
        np.savetxt(tmp_path / 'torques.txt', tau[:-3], fmt='%.9g')
        files, spec = ['positions.txt', 'torques.txt'], 'q=positions_{i},tau=torques_{i}'
    elif case == 'repeated':
        _lab_csv(tmp_path / 'still.csv', t, np.tile(q[:1], (t.size, 1)), np.tile(tau[:1], (t.size, 1)))
        files, spec = ['still.csv'], 'time=t,q=q{i},tau=tau{i}'
    else:
        np.savez(tmp_path / 'log.npz', q=q, tau=tau[:-1])
        files, spec = ['log.npz'], 'q=q_{i},tau=tau_{i}'
    output = tmp_path / 'out'
    argv = ['import', *[str(tmp_path / f) for f in files], '--columns', spec, '--robot', 'ur5e', '--rate', '100',
            '-o', str(output)]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith('dynid import: error:') and words in err and '\n' not in err, err
    assert not output.exists()


@pytest.fixture(scope='module')
def logger_log(panda, tmp_path_factory):
    """3 s of the Panda twin logged at 1 kHz by a logger on its own clock: 5 % repeated states, stamps 0–0.3 ms
    after their ticks, stalls of up to 8 ticks; the bag beside it in sqlite3."""
    real_log = RealLogSettings(rate_hz=1000.0, jitter=0.3, gap_rate_hz=2.0, gap_periods=8, position_rounding_rad=1e-6,
                               glitches=1, csv_format='franka', stamps='logger', repeats=0.05)
    settings = SimulationSettings(duration_s=3.0, rate_hz=1000.0, seed=2, real_log=real_log, storage='sqlite3')
    bag = simulate_recording(panda, tmp_path_factory.mktemp('logger') / 'rec', settings=settings, quiet=True)
    return bag, yaml.safe_load((bag / 'truth.yaml').read_text())['simulation']['real_log']


def test_logger_log_has_repeats_jitter_and_a_db3_bag(logger_log, panda):
    bag, truth = logger_log
    assert list(bag.glob('*.db3'))
    raw = read_bag(bag, panda.joint_names)
    steps = np.diff(raw.t)
    assert 0.0007 <= steps.min() < 0.00075 and 0.007 < steps.max() < 0.0084  # 0.7 … 8.3 ms
    repeated = np.array(truth['repeated_rows'])
    assert 0.03 < repeated.size / raw.n_samples < 0.07
    assert np.array_equal(raw.q[repeated], raw.q[repeated - 1]) and np.array_equal(raw.tau[repeated],
                                                                                   raw.tau[repeated - 1])


def test_import_drops_the_repeats_and_retimes_onto_the_ticks(logger_log, panda):
    bag, truth = logger_log
    limits = LogLimits.of_robot(panda)
    dataset, report, start_ns = import_logs([bag / 'log.csv'], PRESETS['franka'], panda.joint_names, limits,
                                            ImportSettings(bridge=8))
    dropped = report.dropped[REPEATED_STATE]
    assert dropped['rows'] == len(truth['repeated_rows'])
    assert len(report.dropped) == 3  # repeats, the absurd torque and the position jump: nothing else
    assert not report.breaks and report.resampling['segments'] == 1  # no split at a catch-up step or a stall
    assert report.timing['method'] == 'control grid' and abs(report.timing['rate_hz'] - 1000.0) < 0.01
    assert report.timing['rows_retimed'] > 0.9 * report.timing['rows']
    # The grid keeps one phase to the twin's ticks (a constant latency, unknowable) over the whole log.
    raw = read_bag(bag, panda.joint_names)
    since = dataset.t + (start_ns - raw.source['start_ns']) / 1e9 + 0.3e-3  # first stamp ≤ 0.3 ms after its tick
    phase = since - np.rint(since / 1e-3) * 1e-3
    assert np.ptp(phase) < 2e-6
    # The same log read from its sqlite3 bag gives the same recording.
    from_bag, bag_report, _ = import_bag(bag, panda.joint_names, limits, ImportSettings(bridge=8))
    assert [int(w.split(':')[1]) for w in bag_report.dropped[REPEATED_STATE]['where']] == truth['repeated_rows']
    assert from_bag.n_samples == dataset.n_samples and np.allclose(from_bag.q, dataset.q, atol=1e-6)


def test_sqlite3_and_mcap_bags_read_back_the_same(tmp_path):
    t = np.arange(200) * 1e-3
    q, tau = _motion(t, n=2)
    dataset = Dataset(('a', 'b'), t, q, np.gradient(q, t, axis=0), tau=tau, current=0.1 * tau)
    mcap = read_bag(write_bag(tmp_path / 'mcap', dataset, start_ns=5), ('a', 'b'))
    db3 = read_bag(write_bag(tmp_path / 'db3', dataset, start_ns=5, storage='sqlite3'), ('a', 'b'))
    assert list((tmp_path / 'db3').glob('*.db3')) and list((tmp_path / 'mcap').glob('*.mcap'))
    for name in ('t', 'q', 'dq', 'tau', 'current'):
        assert np.array_equal(getattr(mcap, name), getattr(db3, name))
    assert mcap.source['start_ns'] == db3.source['start_ns'] == 5
