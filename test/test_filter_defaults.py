"""Filter defaults derived from the sample rate, a Nyquist check with a margin, and the settings used
printed and saved (issue 13, item 3)."""

import re

import numpy as np
import pytest
import yaml

from dynid.cli import main
from dynid.errors import InputError
from dynid.excite.trajectory import builtin_excitation_path
from dynid.identify.result.result import IdentificationResult
from dynid.identify.validation.validate import predict
from dynid.io.bag import read_bag
from dynid.model import load_robot
from dynid.signal.preprocess import FilterSettings


def test_defaults_are_the_thesis_values_from_500_hz_and_follow_the_rate_below():
    at_1k = FilterSettings().validated(1000.0)
    assert (at_1k.position_cutoff_hz, at_1k.decimation_cutoff_hz, at_1k.decimation, at_1k.trim_s) == (50, 20, 20, 0.15)
    at_500 = FilterSettings().validated(500.0)
    assert (at_500.position_cutoff_hz, at_500.decimation_cutoff_hz, at_500.decimation) == (50, 20, 10)
    at_100 = FilterSettings().validated(100.00000001)  # a rate read off stamps is never exact
    assert (at_100.position_cutoff_hz, at_100.decimation_cutoff_hz, at_100.decimation) == (10, 4, 10)
    assert at_100.trim_s == pytest.approx(0.75)
    assert set(at_100.derived) == {'position_cutoff_hz', 'decimation_cutoff_hz', 'decimation', 'trim_s', 'bridge_s',
                                   'short_trim_s'}
    # Gaps up to the spacing of the kept samples are bridged; a short piece is trimmed 1.5 periods of the cut-off.
    assert (at_1k.bridge_s, at_1k.short_trim_s) == (pytest.approx(0.02), pytest.approx(0.075))
    assert (at_100.bridge_s, at_100.short_trim_s) == (pytest.approx(0.1), pytest.approx(0.375))
    slow_motion = FilterSettings(motion_bandwidth_hz=2.0).validated(1000.0)  # 5·f_dyn and 2·f_dyn
    assert (slow_motion.position_cutoff_hz, slow_motion.decimation_cutoff_hz) == (10, 4)
    for rate in (100.0, 125.0, 250.0, 1000.0, 4000.0):
        settings = FilterSettings().validated(rate)
        # at most 0.2 and 0.08 of Nyquist
        assert settings.position_cutoff_hz <= rate / 10 and settings.decimation_cutoff_hz <= rate / 25


def test_below_100_hz_the_cutoffs_stay_at_the_motion_and_leave_rows():
    # The decimation cut-off stays at 4 Hz where f_s/8 allows it (f_s/25 would be 1.2 Hz at 30 Hz: a 2.5 s trim at
    # each end and one row in 10), and the position cut-off does not fall below it.
    expected = {94.0: (9.4, 4.0, 9), 50.0: (5.0, 4.0, 5), 30.0: (3.75, 3.75, 3), 20.0: (2.5, 2.5, 3)}
    for rate, (position, decimation_cutoff, decimation) in expected.items():
        settings = FilterSettings().validated(rate)
        assert (settings.position_cutoff_hz, settings.decimation_cutoff_hz, settings.decimation) == \
            (pytest.approx(position), pytest.approx(decimation_cutoff), decimation), rate
        assert settings.trim_s == pytest.approx(3.0 / decimation_cutoff)
        assert settings.decimation_cutoff_hz <= rate / 8
        assert settings.position_cutoff_hz >= settings.decimation_cutoff_hz
    # 20 s at 30 Hz keep ~180 decimated samples per joint (45 with f_s/25), more than a 7-joint arm's parameters
    settings = FilterSettings().validated(30.0)
    assert (600 - 2 * round(settings.trim_s * 30)) // settings.decimation > 170


def test_cutoffs_near_nyquist_are_refused_with_the_limit():
    rate = 100.00000001  # the 50 Hz cut-off once passed '< Nyquist' by rounding and became an identity filter
    with pytest.raises(InputError, match=r'position cut-off 50 Hz .*\(0, 45\) Hz.*0\.45·fs.*default 10 Hz'):
        FilterSettings(position_cutoff_hz=50.0).validated(rate)
    with pytest.raises(InputError, match=r'decimation cut-off 45 Hz'):
        FilterSettings(decimation_cutoff_hz=45.0).validated(rate)
    assert FilterSettings(position_cutoff_hz=44.9, decimation_cutoff_hz=44.9).validated(rate).position_cutoff_hz == 44.9
    with pytest.raises(InputError, match='motion bandwidth'):
        FilterSettings(motion_bandwidth_hz=0.0).validated(rate)


def test_recorded_settings_rederive_only_what_was_derived():
    derived = FilterSettings(position_cutoff_hz=30.0).validated(1000.0)
    again = FilterSettings.from_dict(derived.to_dict()).validated(100.0)
    assert again.position_cutoff_hz == 30.0  # given: kept
    assert (again.decimation_cutoff_hz, again.decimation) == (4, 10)  # derived: from the new rate
    legacy = {'position_cutoff_hz': 50.0, 'decimation_cutoff_hz': 20.0, 'order': 4, 'decimation': 20,
              'trim_s': 0.15, 'stiction_velocity': 0.02}  # results written before the rule
    assert FilterSettings.from_dict(legacy).validated(500.0).decimation == 20


@pytest.fixture(scope='module')
def slow_bags(tmp_path_factory):
    """Twin recordings at 100 Hz (training 20 s of the optimized excitation, check 8 s) and 250 Hz (check)."""
    folder = tmp_path_factory.mktemp('slow')
    excitation = str(builtin_excitation_path('ur5e'))
    for name, args in (('train', ['--rate', '100', '--trajectory', excitation, '--duration', '20']),
                       ('check', ['--rate', '100', '--duration', '8', '--seed', '4']),
                       ('check_250', ['--rate', '250', '--duration', '8', '--seed', '5'])):
        assert main(['simulate', '--quiet', '-o', str(folder / name), *args]) == 0
    return folder


def _fits(text):
    return np.array([float(x) for x in re.findall(r'NRMSE fit\s+([-\d.]+) %', text)])


def test_identify_at_100_hz_uses_prints_and_saves_the_derived_filters(slow_bags, tmp_path, capsys):
    out = tmp_path / 'default.yaml'
    assert main(['identify', str(slow_bags / 'train'), '--validate', str(slow_bags / 'check'), '-o', str(out),
                 '--quiet']) == 0
    printed = capsys.readouterr().out
    assert re.search(r'filters at 100 Hz: position low-pass 10 Hz, torque and column low-pass 4 Hz .*decimation 10, '
                     r'trim 0\.75 s.*derived from the rate and a motion bandwidth of 10 Hz', printed)
    filters = yaml.safe_load(out.read_text())['provenance']['filters']
    assert filters['position_cutoff_hz'] == 10 and filters['decimation_cutoff_hz'] == 4
    assert filters['rate_hz'] == pytest.approx(100.0) and 'position_cutoff_hz' in filters['derived']
    default_fits = _fits(printed.split('validation:')[1])

    near_nyquist = tmp_path / 'near.yaml'  # close to what the old defaults did at this rate
    assert main(['identify', str(slow_bags / 'train'), '--validate', str(slow_bags / 'check'), '-o', str(near_nyquist),
                 '--quiet', '--position-cutoff', '40', '--decimation-cutoff', '16']) == 0
    near_fits = _fits(capsys.readouterr().out.split('validation:')[1])
    assert len(default_fits) == len(near_fits) == 6
    assert default_fits.mean() > near_fits.mean() + 0.5 and default_fits.min() > near_fits.min()


def test_a_cutoff_at_nyquist_exits_2_with_one_line(slow_bags, tmp_path, capsys):
    code = main(['identify', str(slow_bags / 'train'), '-o', str(tmp_path / 'r.yaml'), '--quiet',
                 '--position-cutoff', '50'])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and 'position cut-off 50 Hz' in err[0] and '0.45·fs' in err[0]
    assert not (tmp_path / 'r.yaml').exists()


def test_validation_at_another_rate_rederives_the_derived_filters(slow_bags, tmp_path):
    assert main(['identify', str(slow_bags / 'train'), '-o', str(tmp_path / 'r.yaml'), '--quiet']) == 0
    result = IdentificationResult.load(tmp_path / 'r.yaml')
    robot = load_robot('ur5e')
    prediction = predict(result, robot, read_bag(slow_bags / 'check_250'))
    settings = prediction.problem.settings
    assert (settings.position_cutoff_hz, settings.decimation_cutoff_hz) == (25, 10)  # 250 Hz, not 10 and 4
    fits = prediction.metrics(robot.joint_names)['joints']
    assert min(m['nrmse_fit_percent'] for m in fits.values()) > 85.0
