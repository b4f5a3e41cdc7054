"""Metrics that never claim a fit for zero rows, numbers-or-null result files, and the column-scaled
condition number (issue 13, items 1 and 7)."""

import re

import numpy as np
import pytest
import yaml

from dynid.cli import main
from dynid.excite.trajectory import FourierTrajectory, builtin_excitation_path, save_trajectory
from dynid.identify.result.metrics import equation_metrics
from dynid.identify.result.result import IdentificationResult
from dynid.identify.solve.solvers import condition_numbers, ols, wls
from dynid.model import load_robot

HOME = np.array([0.0, -1.5708, 1.5708, -1.5708, -1.5708, 0.0])
NOT_A_NUMBER = re.compile(r"'?\b(nan|inf)\b'?|\.nan|\.inf", re.IGNORECASE)


def _one_line_error(capsys, code, *fragments):
    """Exit 2 and exactly one line on stderr, naming the fragments."""
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and ': error: ' in err[0], err
    for fragment in fragments:
        assert fragment in err[0], err[0]


@pytest.fixture(scope='module')
def recordings(tmp_path_factory):
    """250 Hz twin recordings: training, at rest, and one with wrist 3 held still; a WLS result."""
    folder = tmp_path_factory.mktemp('honesty')
    robot = load_robot('ur5e')
    moving = np.tile([[0.2, 0.05]], (6, 1))
    still_wrist = moving.copy()
    still_wrist[5] = 0.0
    for name, cosine in (('rest', np.zeros((6, 2))), ('still_wrist', still_wrist)):
        save_trajectory(FourierTrajectory(robot.joint_names, 0.25, HOME, np.zeros((6, 2)), cosine),
                        folder / f'{name}.yaml')
    runs = {'train': ['--trajectory', str(builtin_excitation_path('ur5e')), '--duration', '12'],
            'rest': ['--trajectory', str(folder / 'rest.yaml')],
            'still_wrist': ['--trajectory', str(folder / 'still_wrist.yaml'), '--seed', '3']}
    for name, args in runs.items():
        assert main(['simulate', '--rate', '250', '--quiet', '-o', str(folder / name), *args]) == 0
    assert main(['identify', str(folder / 'train'), '-o', str(folder / 'result.yaml'), '--quiet']) == 0
    return folder


# --------------------------------------------------------------------------------------- metrics
def test_joints_without_rows_or_variance_report_na_not_a_fit():
    rng = np.random.default_rng(0)
    joints = np.repeat([0, 2], 50)  # joint 1 has no rows at all
    measured = np.concatenate([rng.normal(size=50), np.full(50, 3.0)])  # joint 2: constant torque
    predicted = measured + 0.1
    metrics = equation_metrics(measured, predicted, joints, ['a', 'b', 'c'])
    a, b, c = (metrics['joints'][name] for name in 'abc')
    assert a['rows'] == 50 and 80 < a['nrmse_fit_percent'] < 100 and a['rmse'] == pytest.approx(0.1)
    assert b == {'rmse': None, 'nrmse_fit_percent': None, 'rows': 0}
    assert c['rows'] == 50 and c['nrmse_fit_percent'] is None and c['rmse'] == pytest.approx(0.1)
    assert metrics['scored_joints'] == 1 and len(metrics['warnings']) == 2
    assert metrics['warnings'][0].startswith('b: no equations') and metrics['warnings'][1].startswith('c: the measured')
    empty = equation_metrics(np.zeros(0), np.zeros(0), np.zeros(0, dtype=int), ['a'])
    assert empty['relative_residual'] is None and empty['rmse'] is None and empty['scored_joints'] == 0


def test_validate_exits_2_on_a_recording_at_rest(recordings, capsys):
    code = main(['validate', str(recordings / 'rest'), '--params', str(recordings / 'result.yaml')])
    out = capsys.readouterr()
    assert code == 2 and 'nothing could be scored' in out.err and len(out.err.strip().splitlines()) == 1
    assert '0 of 6 joints scored' in out.out and 'NRMSE fit     n/a %' in out.out
    assert 'nan' not in out.out.lower() and '100.00' not in out.out


def test_a_still_joint_is_na_with_a_warning_and_the_others_scored(recordings, capsys):
    bag = str(recordings / 'still_wrist')
    assert main(['validate', bag, '--params', str(recordings / 'result.yaml')]) == 0
    out = capsys.readouterr().out
    wrist = next(line for line in out.splitlines() if line.strip().startswith('wrist_3_joint'))
    assert 'n/a' in wrist and '(0 rows)' in wrist
    assert f'warning: {bag}: wrist_3_joint: no equations to score' in out
    assert '5 of 6 joints scored' in out
    fits = [float(m) for m in re.findall(r'NRMSE fit\s+([-\d.]+) %', out)]
    assert len(fits) == 5 and min(fits) > 80.0
    # identification has nothing to fit there: refused, naming the joint and the ways out
    code = main(['identify', bag, '-o', str(recordings / 'still.yaml'), '--quiet', '--force'])
    _one_line_error(capsys, code, 'wrist_3_joint never leave the stiction zone',
                    'leave their equations out (--exclude-joint wrist_3_joint)')
    # the way out, as written, identifies
    assert main(['identify', bag, '-o', str(recordings / 'still.yaml'), '--quiet', '--exclude-joint',
                 'wrist_3_joint']) == 0


def test_result_files_hold_numbers_or_null(recordings, tmp_path, capsys):
    out = tmp_path / 'result.yaml'
    code = main(['identify', str(recordings / 'train'), '--validate', str(recordings / 'rest'), '-o', str(out),
                 '--report', str(tmp_path / 'report'), '--quiet'])
    assert code == 0  # identification worked; its validation could not be scored and says so
    assert 'warning: validation: shoulder_pan_joint: no equations to score' in capsys.readouterr().out
    text = out.read_text()
    assert not NOT_A_NUMBER.search(text), NOT_A_NUMBER.search(text)
    document = yaml.safe_load(text)
    validation = document['metrics']['validation']
    assert validation['rows'] == 0 and validation['scored_joints'] == 0 and validation['relative_residual'] is None
    assert all(m == {'rmse': None, 'nrmse_fit_percent': None, 'rows': 0} for m in validation['joints'].values())
    assert all(m['rows'] > 100 for m in document['metrics']['train']['joints'].values())
    page = (tmp_path / 'report' / 'index.html').read_text()
    assert page.count('<td>n/a</td>') == 12 and 'nan' not in page.lower()


def test_non_finite_numbers_are_saved_as_null_and_load_as_nan(tmp_path):
    result = IdentificationResult('arm', ('j1',), 'wls', {'friction': 'none'}, ['m_1'], np.array([0.0]),
                                  np.array([np.nan]), {'m_1': 'm_1'})
    text = result.save(tmp_path / 'r.yaml').read_text()
    assert not NOT_A_NUMBER.search(text)
    document = yaml.safe_load(text)
    assert document['condition_number'] is None and document['base_parameters'][0]['std'] is None
    assert document['base_parameters'][0]['relative_std_percent'] is None
    loaded = IdentificationResult.load(tmp_path / 'r.yaml')
    assert np.isnan(loaded.std[0]) and np.isnan(loaded.condition_number)
    older = text.replace('std: null', "std: 'nan'")  # files written before null replaced 'nan'
    (tmp_path / 'old.yaml').write_text(older)
    assert np.isnan(IdentificationResult.load(tmp_path / 'old.yaml').std[0])


# ------------------------------------------------------------------------------- condition number
def test_scaled_condition_number_ignores_column_units():
    rng = np.random.default_rng(1)
    w = rng.normal(size=(600, 5))
    y = w @ rng.normal(size=5) + 0.01 * rng.normal(size=600)
    joints = np.arange(600) % 3
    rescaled = w * np.array([1.0, 1e4, 1.0, 1e-3, 1.0])  # the same data in other units
    raw, scaled = condition_numbers(w)
    raw_units, scaled_units = condition_numbers(rescaled)
    assert raw_units > 1e5 * raw
    assert scaled_units == pytest.approx(scaled, rel=1e-9)
    for solve in (ols, wls):
        plain, other = solve(w, y, joints, list('abcde')), solve(rescaled, y, joints, list('abcde'))
        assert other.scaled_condition_number == pytest.approx(plain.scaled_condition_number, rel=1e-6)
        assert other.condition_number > 1e5 * plain.condition_number


def test_both_condition_numbers_are_printed_saved_and_reported(recordings, tmp_path, capsys):
    out = tmp_path / 'r.yaml'
    assert main(['identify', str(recordings / 'train'), '-o', str(out), '--friction', 'load_squared', '--no-prior',
                 '--report', str(tmp_path / 'report'), '--quiet']) == 0
    line = next(line for line in capsys.readouterr().out.splitlines() if 'cond(W)' in line)
    document = yaml.safe_load(out.read_text())
    raw, scaled = document['condition_number'], document['condition_number_scaled']
    assert 1 < scaled < raw  # the squared-load columns (N²·m²) inflate the raw number
    assert f'cond(W) = {scaled:.4g} with unit-norm columns (raw: {raw:.4g})' in line
    assert f'{scaled:.4g} with unit-norm columns (raw: {raw:.4g})' in (tmp_path / 'report' / 'index.html').read_text()


def test_a_condition_number_above_the_threshold_says_so_where_it_is_printed():
    """The data alone's cond(W·D) above COND_SCALED_MAX is said to be a weakly exciting log in the summary, also
    where the run's gate did not speak (a payload block, a method given); below it nothing is added, and one
    figure is printed for each quantity."""
    import dataclasses

    from builders import identified
    from dynid.identify.result.quality import COND_SCALED_MAX

    base = identified(load_robot('ur5e'))
    with_prior = dataclasses.replace(base, condition_number=5.6e4, condition_number_scaled=112.0,
                                     prior_section={'used': True, 'data_condition_number_scaled': 1063.0})
    text = with_prior.condition_text()
    assert text.endswith(f'the data alone: cond(W) = 1063 (above {COND_SCALED_MAX:g}: a weakly exciting log)')
    assert text.count('1063') == 1 and text.count('cond = 112 ') == 1
    calm = dataclasses.replace(with_prior, prior_section={'used': True, 'data_condition_number_scaled': 999.0})
    assert 'above' not in calm.condition_text()
    plain = dataclasses.replace(base, condition_number=3.7e4, condition_number_scaled=2360.0, prior_section={})
    assert plain.condition_text() == ('cond(W) = 2360 with unit-norm columns (raw: 3.7e+04) (above 1000: a weakly '
                                      'exciting log)')
