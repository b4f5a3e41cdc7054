"""TLS drive gains that say when they cannot be trusted, and gains held fixed (issue 13, item 2).

Twin recordings at 100 Hz: one without payload, one with a known 3 kg point mass on the flange axis,
which puts no torque on the last joint, so the payload cannot fix that joint's gain.
"""

import pytest
import yaml

from dynid.cli import main
from dynid.excite.trajectory import builtin_excitation_path

FLANGE_AXIS = '0,0,0.05'


@pytest.fixture(scope='module')
def flange_runs(tmp_path_factory):
    folder = tmp_path_factory.mktemp('tls_runs')
    common = ['simulate', '--trajectory', str(builtin_excitation_path('ur5e')), '--duration', '12', '--rate', '100',
              '--drive-gain-error', '0.1', '--quiet']
    assert main([*common, '--seed', '1', '-o', str(folder / 'empty')]) == 0
    # one seed: it draws the true drive gains, which both runs must share
    assert main([*common, '--seed', '1', '--payload', '3', '--payload-com', FLANGE_AXIS,
                 '-o', str(folder / 'flange')]) == 0
    truth = yaml.safe_load((folder / 'empty' / 'truth.yaml').read_text())['plant']['drives']
    return folder, {joint: drive['drive_gain'] for joint, drive in truth.items()}


def _tls(folder, *extra):
    return ['identify', str(folder / 'empty'), str(folder / 'flange'), '--payload-mass', '0,3', '--payload-com',
            FLANGE_AXIS, '--method', 'tls', '--quiet', '--force', *extra]


def test_simulate_places_the_payload_off_axis(flange_runs):
    folder, _ = flange_runs
    truth = yaml.safe_load((folder / 'flange' / 'truth.yaml').read_text())
    assert truth['plant']['payload']['com'] == [0.0, 0.0, 0.05]
    assert truth['plant']['payload']['mass'] == 3.0


def test_tls_with_a_flange_payload_warns_on_the_joint_it_does_not_load(flange_runs, tmp_path, capsys):
    folder, _ = flange_runs
    out = tmp_path / 'free.yaml'
    # a fully known payload (--payload-com) is a valid TLS scale: no "needs a known payload mass" refusal
    assert main([*_tls(folder), '-o', str(out), '--report', str(tmp_path / 'report')]) == 0
    printed = capsys.readouterr().out
    assert 'TLS kernel gap' in printed and 'payload torque RMS / noise RMS per joint' in printed
    warning = next(line for line in printed.splitlines() if 'puts too little torque' in line)
    assert 'wrist_3_joint' in warning and '--fix-drive-gain' in warning
    diagnostics = yaml.safe_load(out.read_text())['drive_gains']['diagnostics']
    assert diagnostics['unexcited_joints'] == ['wrist_3_joint']
    assert diagnostics['kernel_gap'] > 1.0 and len(diagnostics['smallest_singular_values']) == 3
    assert diagnostics['payload_content_ratio']['wrist_3_joint'] < 1e-6
    assert min(v for j, v in diagnostics['payload_content_ratio'].items() if j != 'wrist_3_joint') > 3.0
    assert 'TLS kernel gap' in (tmp_path / 'report' / 'index.html').read_text()


def test_fixing_the_unloaded_gain_recovers_the_others(flange_runs, tmp_path, capsys):
    folder, truth = flange_runs
    drives = {joint: {'gear_ratio': 101.0, 'drive_gain': gain, 'rotor_inertia': 0.6} for joint, gain in truth.items()}
    drives['elbow_joint']['drive_gain'] *= 2.0  # a nominal gain far from the truth must be flagged
    (tmp_path / 'drives.yaml').write_text(yaml.safe_dump(drives))
    out = tmp_path / 'fixed.yaml'
    assert main([*_tls(folder), '--fix-drive-gain', f'wrist_3_joint={truth["wrist_3_joint"]}',
                 '--drives', str(tmp_path / 'drives.yaml'), '-o', str(out)]) == 0
    printed = capsys.readouterr().out
    gains = yaml.safe_load(out.read_text())['drive_gains']
    assert gains['values']['wrist_3_joint'] == truth['wrist_3_joint'] and gains['std']['wrist_3_joint'] == 0.0
    assert gains['diagnostics']['fixed'] == {'wrist_3_joint': truth['wrist_3_joint']}
    assert gains['diagnostics']['unexcited_joints'] == []
    for joint, value in gains['values'].items():
        assert value == pytest.approx(truth[joint], rel=0.02), joint  # within 2 % of the twin's truth
    band = next(line for line in printed.splitlines() if 'outside ±25 %' in line)
    assert 'elbow_joint' in band and 'shoulder_lift_joint' not in band
    assert 'wrist_3_joint' in printed and '(fixed)' in printed


@pytest.mark.parametrize('extra, fragment', [
    (['--fix-drive-gain', 'wrist_3_joint'], 'JOINT=VALUE'),
    (['--fix-drive-gain', 'wrist_9_joint=9'], 'not a joint of the robot'),
    (['--fix-drive-gain', 'wrist_3_joint=0'], 'nonzero'),
    (['--method', 'wls', '--fix-drive-gain', 'wrist_3_joint=9'], 'tls, mls'),
    (['--weight-function', 'cauchy'], 'method tls has no option weight_function'),
    (['--fix-drive-gain', 'wrist_3_joint=9', '--method-option', 'fix_drive_gain=elbow_joint=9', '--method', 'irls'],
     'fix_drive_gain is an option of tls, mls'),
])
def test_bad_fixed_gains_are_refused_in_one_line(flange_runs, tmp_path, capsys, extra, fragment):
    folder, _ = flange_runs
    out = tmp_path / 'r.yaml'
    assert main([*_tls(folder), *extra, '-o', str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and fragment in err[0], err
    assert not out.exists()


def test_a_fixed_gain_fixes_the_scale_without_payload_runs(flange_runs, tmp_path, capsys):
    folder, truth = flange_runs
    out = tmp_path / 'r.yaml'
    assert main(['identify', str(folder / 'empty'), '--method', 'mls', '--quiet', '--fix-drive-gain',
                 f'shoulder_lift_joint={truth["shoulder_lift_joint"]}', '-o', str(out)]) == 0
    gains = yaml.safe_load(out.read_text())['drive_gains']['values']
    assert gains['elbow_joint'] == pytest.approx(truth['elbow_joint'], rel=0.05)


def test_an_unsupported_tls_result_is_refused_naming_the_unloaded_joint(flange_runs, tmp_path, capsys):
    folder, _ = flange_runs
    out = tmp_path / 'r.yaml'
    args = [a for a in _tls(folder) if a != '--force']
    assert main([*args, '-o', str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and 'cannot identify the model' in err[0], err
    assert 'does not load wrist_3_joint: hold its gain (--fix-drive-gain' in err[0]
    assert not out.exists()
