"""Real-log recordings of the twin and ``dynid import`` (issue 13, items 5 and 7).

Every check runs on twin real logs with known glitches (truth.yaml lists them), seconds long.
"""

import dataclasses

import numpy as np
import pytest
import yaml

from dynid.cli import main
from dynid.io.bag import read_bag, write_bag
from dynid.io.csv_log import PRESETS, parse_column_spec
from dynid.io.dataset import Dataset
from dynid.io.importing import import_logs
from dynid.io.log_checks import LogLimits
from dynid.sim.real_log import RealLogSettings
from dynid.sim.recording import SimulationSettings, simulate_recording

TWIN_RATE = 500.0


def _real_log(robot, folder, csv_format='ur_rtde', seed=3):
    settings = SimulationSettings(duration_s=8.0, rate_hz=TWIN_RATE, seed=seed,
                                  real_log=RealLogSettings(rate_hz=100.0, gap_rate_hz=1.0, csv_format=csv_format))
    bag = simulate_recording(robot, folder, settings=settings, quiet=True)
    return bag, yaml.safe_load((bag / 'truth.yaml').read_text())['simulation']['real_log']


@pytest.fixture(scope='module')
def rtde(ur5e, tmp_path_factory):
    return _real_log(ur5e, tmp_path_factory.mktemp('rtde') / 'rec')


@pytest.fixture(scope='module')
def imported(rtde, tmp_path_factory):
    bag, _ = rtde
    output = tmp_path_factory.mktemp('imported') / 'bag'
    assert main(['import', str(bag / 'log.csv'), '--preset', 'ur_rtde', '-o', str(output)]) == 0
    return output


def test_real_log_has_jitter_gaps_rounding_glitches_and_rtde_columns(rtde, ur5e):
    bag, truth = rtde
    header = (bag / 'log.csv').read_text().splitlines()[0].split(' ')
    assert header[0] == 'timestamp' and 'actual_q_5' in header and 'actual_current_0' in header
    assert {'target_current_0', 'target_moment_0', 'joint_temperatures_5'} <= set(header)
    dataset = read_bag(bag, ur5e.joint_names)
    assert dataset.tau is None and dataset.current is not None  # current-only: joint_states kept, effort empty
    steps = np.diff(dataset.t)
    regular = steps[steps < 0.02]
    assert 0.007 <= regular.min() and regular.max() <= 0.013  # 10 ms ± 25 %, on the twin's 2 ms grid
    assert np.std(regular) > 1e-3  # jitter, not a uniform grid
    assert np.any((steps > 0.025) & (steps < 0.04))  # single gaps of about 3 periods
    jumps = {g['row'] for g in truth['glitch_rows'] if g['kind'] == 'position_jump'}
    clean = np.setdiff1d(np.arange(dataset.n_samples), sorted(jumps))
    q = dataset.q[clean]
    assert np.abs(q / 1e-4 - np.rint(q / 1e-4)).max() < 1e-6  # rounded to 1e-4 rad
    kinds = [g['kind'] for g in truth['glitch_rows']]
    assert kinds.count('position_jump') == kinds.count('absurd_current') == kinds.count('garbage_line') == 2
    assert truth['samples'] == dataset.n_samples


def test_import_drops_exactly_the_glitches_and_reports_them(rtde, imported):
    _, truth = rtde
    report = yaml.safe_load((imported / 'import.yaml').read_text())
    expected = {kind: sorted(g['line'] for g in truth['glitch_rows'] if g['kind'] == kind)
                for kind in ('position_jump', 'absurd_current', 'garbage_line')}
    assert sorted(n for n, _ in report['files'][0]['unparsable']) == expected['garbage_line']
    dropped = {reason: sorted(int(w.split(':')[1]) for w in entry['where'])
               for reason, entry in report['dropped'].items()}
    assert len(dropped) == 2  # nothing else was dropped
    jump = next(lines for reason, lines in dropped.items() if reason.startswith('position jump'))
    current = next(lines for reason, lines in dropped.items() if 'current' in reason)
    assert jump == expected['position_jump'] and current == expected['absurd_current']
    assert report['resampling']['bridged_gaps'] >= 4 and report['resampling']['segments'] == 1


def test_imported_bag_is_uniform_and_follows_the_clean_log(rtde, imported, ur5e):
    bag, truth = rtde
    raw = read_bag(bag, ur5e.joint_names)
    spoiled = sorted(g['row'] for g in truth['glitch_rows'] if g['row'] is not None)
    clean = np.setdiff1d(np.arange(raw.n_samples), spoiled)
    dataset = read_bag(imported, ur5e.joint_names)
    steps = np.diff(dataset.t)
    assert np.ptp(steps) < 2e-9 and abs(1.0 / steps.mean() - 100.0) < 1.0  # one uniform grid near 100 Hz
    assert dataset.tau is None and dataset.current is not None and dataset.temperature is not None
    assert np.abs(dataset.current).max() < 50.0  # the 250 A samples are gone
    start = (dataset.source['start_ns'] - raw.source['start_ns']) / 1e9
    t = dataset.t + start
    for j in range(ur5e.n):
        reference = np.interp(t, raw.t[clean], raw.q[clean, j])
        # interpolation between rounded samples: within rounding plus q̈·Δt²/8 over a 30 ms gap
        assert np.abs(dataset.q[:, j] - reference).max() < 1e-3


def test_franka_log_imports_joint_torque(ur5e, tmp_path):
    bag, truth = _real_log(ur5e, tmp_path / 'rec', csv_format='franka', seed=5)
    header = (bag / 'log.csv').read_text().splitlines()[0].split(',')
    assert header[:3] == ['time', 'success_rate', 'state.q[0]'] and 'state.tau_J[5]' in header
    dataset, report, _ = import_logs([bag / 'log.csv'], PRESETS['franka'], ur5e.joint_names, LogLimits.of_robot(ur5e))
    assert dataset.tau is not None and dataset.current is None
    assert np.abs(dataset.tau).max() < 1000.0  # the 5000 N·m samples are gone
    absurd = next(entry for reason, entry in report.dropped.items() if 'torque' in reason)
    assert absurd['rows'] == 2
    assert len(report.files[0]['unparsable']) == 2


def test_long_gaps_stay_gaps_and_breaks_split(ur5e, tmp_path):
    t = np.arange(0.0, 3.0, 0.01)
    t = np.delete(t, np.arange(100, 120))  # 0.2 s lost: more than --bridge 3 samples
    q = 0.3 * np.sin(np.outer(t, np.arange(1, 7))) - np.array([0, 1.5, 0, 1.5, 0, 0])
    q[200:, 0] += 0.4  # a step that does not come back
    names = ' '.join(['timestamp'] + [f'actual_q_{j}' for j in range(6)])
    rows = '\n'.join(' '.join(f'{v:.6f}' for v in [ti, *qi]) for ti, qi in zip(t, q, strict=True))
    (tmp_path / 'log.csv').write_text(names + '\n' + rows + '\n')
    dataset, report, _ = import_logs([tmp_path / 'log.csv'], PRESETS['ur_rtde'], ur5e.joint_names,
                                     LogLimits.of_robot(ur5e))
    gaps = dataset.gaps(period_s=0.01)
    assert len(gaps.gaps) == 2 and report.resampling['segments'] == 3 and len(report.breaks) == 1
    assert gaps.gaps[0].lost >= 20
    assert report.resampling['interpolation']['dq'] == 'derivative of the position spline'
    inside = dataset.t < 0.95
    assert np.allclose(dataset.dq[inside, 1], 0.6 * np.cos(2 * dataset.t[inside]), atol=2e-3)


def test_write_bag_keeps_joint_states_of_current_only_recordings(tmp_path):
    t = np.arange(50) * 0.01
    q = np.column_stack([np.sin(t), np.cos(t)])
    dataset = Dataset(('a', 'b'), t, q, np.gradient(q, 0.01, axis=0), current=0.1 * q)
    back = read_bag(write_bag(tmp_path / 'bag', dataset), ('a', 'b'))
    assert back.tau is None and np.allclose(back.q, q) and np.allclose(back.current, 0.1 * q)


def test_column_spec_reads_any_csv(ur5e, tmp_path):
    spec = parse_column_spec('time=stamp,time_unit=ms,q=pos{n},dq=vel_{name},current=cur{i}')
    t = np.arange(0, 2000, 8.0)
    q = 0.2 * np.sin(np.outer(t / 1e3, np.ones(6)))
    header = (['stamp'] + [f'pos{j + 1}' for j in range(6)] + [f'vel_{n}' for n in ur5e.joint_names]
              + [f'cur{j}' for j in range(6)])
    table = np.column_stack([t, q, 0.2 * np.cos(np.outer(t / 1e3, np.ones(6))), np.ones((t.size, 6))])
    np.savetxt(tmp_path / 'lab.csv', table, delimiter=',', header=','.join(header), comments='')
    dataset, report, _ = import_logs([tmp_path / 'lab.csv'], spec, ur5e.joint_names, LogLimits.of_robot(ur5e))
    assert abs(report.resampling['rate_hz'] - 125.0) < 1e-6 and not report.dropped
    assert np.allclose(dataset.q[:, 0], 0.2 * np.sin(dataset.t), atol=1e-6)


@pytest.mark.parametrize('spec, words', [('time=t,dq=v{i}', 'q=PATTERN'), ('time_unit=ms,q=p{i}', 'time_unit'),
                                         ('time=t,q=p', '{i}'),
                                         ('time=t,q=p{i},speed=v{i}', 'unknown key'),
                                         ('time=t,time_unit=h,q=p{i}', 'time_unit')])
def test_bad_column_specs_are_refused(spec, words):
    with pytest.raises(Exception, match=words.replace('{', r'\{').replace('}', r'\}')):
        parse_column_spec(spec)


def test_bad_inputs_exit_2_with_one_line(tmp_path, capsys, rtde):
    bag, _ = rtde
    (tmp_path / 'empty.csv').write_text('')
    (tmp_path / 'binary.csv').write_bytes(b'\xff\xfe\x00\x81' * 20)
    (tmp_path / 'other.csv').write_text('a,b\n1,2\n')
    cases = [['missing.csv', '--preset', 'ur_rtde'], ['empty.csv', '--preset', 'ur_rtde'],
             ['binary.csv', '--preset', 'ur_rtde'], ['other.csv', '--preset', 'ur_rtde'],
             ['other.csv', '--columns', 'time=a,q=b{i}'],
             [str(bag / 'log.csv'), '--preset', 'ur_rtde', '--bridge', '-1']]
    for case in cases:
        output = tmp_path / 'out'
        assert main(['import', str(tmp_path / case[0]) if not case[0].startswith('/') else case[0], *case[1:],
                     '-o', str(output)]) == 2
        err = capsys.readouterr().err.strip()
        assert err.startswith('dynid import: error:') and '\n' not in err, err
        assert not output.exists()  # nothing half-written


def test_real_log_settings_are_checked(ur5e, tmp_path):
    settings = SimulationSettings(duration_s=1.0, rate_hz=200.0, real_log=RealLogSettings(rate_hz=100.0))
    with pytest.raises(Exception, match='quarter of rate'):
        simulate_recording(ur5e, tmp_path / 'x', settings=settings, quiet=True)
    bad = dataclasses.replace(settings, rate_hz=1000.0, real_log=RealLogSettings(jitter=0.7))
    with pytest.raises(Exception, match='jitter'):
        simulate_recording(ur5e, tmp_path / 'y', settings=bad, quiet=True)
    assert not (tmp_path / 'x').exists() and not (tmp_path / 'y').exists()
