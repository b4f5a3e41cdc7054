"""Messages that point somewhere and say nothing false (issue 31, items 4 and 6): a raw bag's refusal names the
dynid import that works, a recording whose gaps were all bridged is no warning and its counts match the bag,
no 'rotor_compensation: True given' that the user never gave, and import says what happens to a position step."""

import shlex

import numpy as np
import pytest
import yaml

from dynid.cli import main
from dynid.excite.trajectory import builtin_excitation_path
from dynid.identify.equations.problem import problem_for
from dynid.identify.equations.request import ModelSpec, RecordingInput
from dynid.io.bag import read_bag
from dynid.io.importing import ImportReport
from dynid.signal.preprocess import FilterSettings


@pytest.fixture(scope='module')
def logged(tmp_path_factory):
    """A UR5e twin run of the built-in excitation logged at 250 Hz by RTDE (currents, no motor encoders) with
    stalls of six periods (longer than import's bridge of 3 samples, shorter than identification's 40 ms), the
    raw bag beside its log, the imported bag and its identification."""
    folder = tmp_path_factory.mktemp('messages')
    assert main(['simulate', '--rate', '1000', '--log-rate', '250', '--log-gap-rate', '0.5', '--log-gap-periods', '6',
                 '--duration', '14', '--quiet', '-o', str(folder / 'raw'),
                 '--trajectory', str(builtin_excitation_path('ur5e'))]) == 0
    assert main(['import', str(folder / 'raw' / 'log.csv'), '--preset', 'ur_rtde', '-o', str(folder / 'bag')]) == 0
    assert main(['identify', str(folder / 'bag'), '-o', str(folder / 'result.yaml'), '--quiet']) == 0
    return folder


def test_a_raw_bag_is_refused_with_an_import_that_works(logged, capsys):
    code = main(['validate', str(logged / 'raw'), '--params', str(logged / 'result.yaml')])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and 'not uniformly spaced' in err[0], err
    command = err[0][err[0].index('dynid import '):err[0].index(', then give the new bag')]
    words = shlex.split(command)
    assert words[:2] == ['dynid', 'import'] and '--robot' in words
    assert main(words[1:]) == 0  # as written
    new = words[words.index('-o') + 1]
    capsys.readouterr()
    assert main(['validate', new, '--params', str(logged / 'result.yaml')]) == 0


def test_bridged_gaps_are_no_warning_and_counts_match_the_bag(logged, capsys):
    samples = read_bag(logged / 'bag').n_samples
    assert main(['validate', str(logged / 'bag'), '--params', str(logged / 'result.yaml')]) == 0
    out = capsys.readouterr().out
    line = next(line for line in out.splitlines() if 'of the recording' in line)
    assert not line.startswith('warning') and 'used 100 % of the recording' in line, line
    assert f'{samples} of its {samples} samples and ' in line and 'filled in over its gaps' in line, line
    result = yaml.safe_load((logged / 'result.yaml').read_text())
    assert not any('of the recording' in w for w in result['warnings']), result['warnings']


def test_no_rotor_compensation_change_the_user_did_not_ask_for(logged, ur5e):
    """RTDE logs have no motor encoders: with the default, the rotor inertias are identified without a word; asked
    for (rotor_compensation=True), the change is still said."""
    result = yaml.safe_load((logged / 'result.yaml').read_text())
    assert result['model']['torque_source'] == 'current' and not result['model']['rotor_compensation']
    assert not any('rotor_compensation' in w for w in result['warnings']), result['warnings']
    dataset = read_bag(logged / 'bag')
    asked = problem_for(ur5e, [RecordingInput(dataset)], ModelSpec(rotor_compensation=True), FilterSettings())
    assert [c['setting'] for c in asked.changes] == ['rotor_compensation']
    default = problem_for(ur5e, [RecordingInput(dataset)], ModelSpec(), FilterSettings())
    assert default.changes == [] and default.identify_rotor_inertia


def test_import_says_what_happens_to_a_position_step():
    report = ImportReport(breaks=[1.25, 3.5, 7.0])
    line = next(line for line in report.lines() if 'position step' in line)
    assert line.startswith('3 position step(s) with no return (t = 1.250, 3.500, 7.000 s)')
    assert 'split at' not in line and 'interpolate over' in line
    assert np.isfinite(report.breaks).all()
