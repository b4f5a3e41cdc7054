"""A URDF robot from the command line: drive data from a file, TLS/MLS without prior gains, results that
find their robot from anywhere, and every unreadable recording refused in one line (issue 13, items 4,
5 and 11)."""

import hashlib
import shutil

import numpy as np
import pytest
import yaml

from dynid.cli import main
from dynid.excite.trajectory import builtin_excitation_path
from dynid.model.robots import example_robot_path

UR5_URDF = 'ur_description/urdf/ur5_robot.urdf'


def _one_line_error(capsys, code, *fragments):
    """Exit 2 and exactly one line on stderr (no traceback), naming the fragments."""
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and ': error: ' in err[0] and 'Traceback' not in err[0], err
    for fragment in fragments:
        assert fragment in err[0], err[0]
    return err[0]


@pytest.fixture(scope='module')
def urdf_arm(tmp_path_factory):
    """An arm dynid does not know (a UR5 URDF with a 4 cm longer upper arm) in a folder, 250 Hz twin recordings
    of it (training, with a 3 kg payload, check) and a drives file with the twin's true drive data."""
    folder = tmp_path_factory.mktemp('urdf_arm')
    text = example_robot_path(UR5_URDF).read_text()
    assert text.count('xyz="0.0 -0.1197 0.425"') == 1
    (folder / 'arm.urdf').write_text(text.replace('xyz="0.0 -0.1197 0.425"', 'xyz="0.0 -0.1197 0.465"'))
    excitation = str(builtin_excitation_path('ur5e'))
    for name, args in (('train', ['--trajectory', excitation, '--duration', '12']),
                       ('payload', ['--trajectory', excitation, '--duration', '12', '--payload', '3', '--seed', '2']),
                       ('check', ['--duration', '6', '--seed', '4'])):
        assert main(['simulate', '--robot', str(folder / 'arm.urdf'), '--rate', '250', '--quiet',
                     '-o', str(folder / name), *args]) == 0
    truth = yaml.safe_load((folder / 'train' / 'truth.yaml').read_text())
    (folder / 'drives.yaml').write_text(yaml.safe_dump(truth['plant']['drives']))
    return folder


# ------------------------------------------------------------------------------------- --drives
def test_a_urdf_robot_identifies_from_currents_with_a_drives_file(urdf_arm, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(urdf_arm)  # relative paths, as typed
    out = tmp_path / 'r.yaml'
    _one_line_error(capsys, main(['identify', 'train', '--robot', 'arm.urdf', '--torque', 'current', '-o', str(out),
                                  '--quiet']), 'has no drive data', '--drives')
    # auto picks what works: without drive gains, the joint torque the recording also holds
    # (--force: this twin's joint torques leave over half the parameters above 50 % σ, refused otherwise)
    assert main(['identify', 'train', '--robot', 'arm.urdf', '-o', str(out), '--quiet', '--force']) == 0
    assert yaml.safe_load(out.read_text())['model']['torque_source'] == 'joint_torque'
    out.unlink()
    assert main(['identify', 'train', '--robot', 'arm.urdf', '--drives', 'drives.yaml', '--validate', 'check',
                 '-o', str(out), '--quiet']) == 0
    printed = capsys.readouterr().out
    document = yaml.safe_load(out.read_text())
    assert document['model']['torque_source'] == 'current' and document['model']['rotor_compensation']
    fits = [m['nrmse_fit_percent'] for m in document['metrics']['validation']['joints'].values()]
    assert min(fits) > 90.0
    drives = document['provenance']['drives']
    assert drives['file'] == str(urdf_arm / 'drives.yaml')
    assert drives['sha256'] == hashlib.sha256((urdf_arm / 'drives.yaml').read_bytes()).hexdigest()
    assert drives['joints']['wrist_1_joint']['drive_gain'] == pytest.approx(7 / 3)
    # validate needs no --drives: the result holds the drive data it was identified with
    monkeypatch.chdir(tmp_path)
    assert main(['validate', str(urdf_arm / 'check'), '--params', str(out)]) == 0
    again = capsys.readouterr().out
    validation = printed[printed.index('validation:'):].splitlines()[1:7]
    assert validation == again.splitlines()[1:7]


def test_drives_files_are_checked_by_joint_name(urdf_arm, tmp_path, capsys):
    drives = yaml.safe_load((urdf_arm / 'drives.yaml').read_text())
    typo = dict(drives, elbow_jiont=drives.pop('elbow_joint'))
    (tmp_path / 'typo.yaml').write_text(yaml.safe_dump(typo))
    args = ['identify', str(urdf_arm / 'train'), '--robot', str(urdf_arm / 'arm.urdf'), '-o', str(tmp_path / 'r.yaml')]
    _one_line_error(capsys, main([*args, '--drives', str(tmp_path / 'typo.yaml')]), 'typo.yaml: elbow_jiont is not '
                    'a joint of the robot (its joints: shoulder_pan_joint')
    partial = yaml.safe_load((urdf_arm / 'drives.yaml').read_text())
    del partial['wrist_3_joint']['rotor_inertia']
    (tmp_path / 'partial.yaml').write_text(yaml.safe_dump({'drives': partial}))
    _one_line_error(capsys, main([*args, '--drives', str(tmp_path / 'partial.yaml')]), 'partial.yaml', 'rotor_inertia')
    _one_line_error(capsys, main([*args, '--drives', str(tmp_path / 'missing.yaml')]), 'cannot read drives file')
    assert not (tmp_path / 'r.yaml').exists()


@pytest.mark.parametrize('method', ['tls', 'mls'])
def test_tls_and_mls_need_no_prior_gains(urdf_arm, tmp_path, capsys, method):
    # --force: the flange-axis payload leaves wrist_3's gain (and with TLS most σ) undetermined, which is
    # refused otherwise (test_tls_diagnostics); the gains it does determine are what this test checks
    bags = [str(urdf_arm / 'train'), str(urdf_arm / 'payload'), '--payload-mass', '0,3', '--method', method,
            '--robot', str(urdf_arm / 'arm.urdf'), '--quiet', '--force']
    assert main(['identify', *bags, '-o', str(tmp_path / 'none.yaml')]) == 0
    wrong = yaml.safe_load((urdf_arm / 'drives.yaml').read_text())
    for joint in wrong.values():
        joint['drive_gain'] *= 3.0  # far off: the identified gains must not depend on them
    (tmp_path / 'wrong.yaml').write_text(yaml.safe_dump(wrong))
    assert main(['identify', *bags, '--drives', str(tmp_path / 'wrong.yaml'),
                 '-o', str(tmp_path / 'wrong_r.yaml')]) == 0
    without, with_wrong = (yaml.safe_load((tmp_path / f'{name}.yaml').read_text())['drive_gains']
                           for name in ('none', 'wrong_r'))
    assert without['identified'] and with_wrong['identified']
    np.testing.assert_allclose(list(without['values'].values()), list(with_wrong['values'].values()), rtol=1e-9)
    # the joint the payload loads most comes out within 3 % of the truth (12.5 N·m/A) with either method
    assert without['values']['shoulder_lift_joint'] == pytest.approx(12.5, rel=0.03)


# ---------------------------------------------------------------------------- robot from anywhere
def test_a_result_finds_its_robot_file_from_anywhere_and_notices_changes(urdf_arm, tmp_path, capsys, monkeypatch):
    work = tmp_path / 'work'
    work.mkdir()
    shutil.copy(urdf_arm / 'arm.urdf', work / 'my_arm.urdf')
    monkeypatch.chdir(work)
    assert main(['identify', str(urdf_arm / 'train'), '--robot', 'my_arm.urdf', '--drives',
                 str(urdf_arm / 'drives.yaml'), '-o', 'r.yaml', '--quiet']) == 0
    provenance = yaml.safe_load((work / 'r.yaml').read_text())['provenance']
    urdf = work / 'my_arm.urdf'
    assert provenance['robot_spec'] == str(urdf)
    assert provenance['robot_source'] == {'kind': 'file', 'path': str(urdf),
                                          'sha256': hashlib.sha256(urdf.read_bytes()).hexdigest()}
    monkeypatch.chdir(tmp_path)  # elsewhere: the typed relative path would not resolve here
    params = ['--params', str(work / 'r.yaml')]
    assert main(['validate', str(urdf_arm / 'check'), *params]) == 0
    capsys.readouterr()
    urdf.write_text(urdf.read_text() + '\n<!-- edited -->\n')
    _one_line_error(capsys, main(['validate', str(urdf_arm / 'check'), *params]), str(urdf),
                    'changed since the identification', '--robot')
    assert main(['validate', str(urdf_arm / 'check'), *params, '--robot', str(urdf)]) == 0
    assert f'warning: robot file {urdf} differs from the one the result was identified with' in capsys.readouterr().out
    urdf.rename(work / 'moved.urdf')
    _one_line_error(capsys, main(['validate', str(urdf_arm / 'check'), *params]), str(urdf), 'no longer exists')


def test_built_in_robots_are_stored_by_name(urdf_arm, tmp_path):
    from dynid.identify.result.robot_source import record_robot, robot_spec_of

    provenance = {}
    record_robot(provenance, 'ur5e')
    assert provenance == {'robot_source': {'kind': 'built-in', 'spec': 'ur5e'}, 'robot_spec': 'ur5e'}
    assert robot_spec_of(provenance, 'ur5e') == 'ur5e'
    assert robot_spec_of({'robot_spec': 'old/relative.urdf'}, 'x') == 'old/relative.urdf'  # older results
    text = (urdf_arm / 'arm.urdf').read_text()
    record_robot(provenance, text)
    assert provenance['robot_spec'] == 'robot_description' and robot_spec_of(provenance, 'ur5') == text


# --------------------------------------------------------------------------------- unreadable inputs
def test_every_unreadable_recording_exits_2_with_one_line(urdf_arm, tmp_path, capsys):
    def identify(bag):
        return main(['identify', str(bag), '--robot', str(urdf_arm / 'arm.urdf'), '--drives',
                     str(urdf_arm / 'drives.yaml'), '-o', str(tmp_path / 'r.yaml'), '--quiet'])

    (tmp_path / 'log.csv').write_text('timestamp,actual_q_0\n0.0,0.1\n')
    _one_line_error(capsys, identify(tmp_path / 'log.csv'), 'log.csv is a .csv file, not a recording')
    (tmp_path / 'empty').mkdir()
    _one_line_error(capsys, identify(tmp_path / 'empty'), 'empty is an empty directory')
    (tmp_path / 'notes').mkdir()
    (tmp_path / 'notes' / 'readme.txt').write_text('nothing here')
    _one_line_error(capsys, identify(tmp_path / 'notes'), 'not a rosbag2 directory', 'no metadata.yaml')
    (tmp_path / 'old.bag').write_bytes(b'#ROSBAG V2.0\n')
    _one_line_error(capsys, identify(tmp_path / 'old.bag'), 'ROS 1 bag')
    (tmp_path / 'broken.mcap').write_bytes(b'not an mcap file')
    _one_line_error(capsys, identify(tmp_path / 'broken.mcap'), 'cannot open bag', 'broken.mcap')
    assert not (tmp_path / 'r.yaml').exists()


def test_bare_mcap_files_and_folders_without_metadata_are_read(urdf_arm, tmp_path, capsys):
    mcap = next((urdf_arm / 'check').glob('*.mcap'))
    shutil.copy(mcap, tmp_path / 'foxglove.mcap')  # as a recorder writes it: one file, no metadata.yaml
    (tmp_path / 'no_metadata').mkdir()
    shutil.copy(mcap, tmp_path / 'no_metadata' / mcap.name)
    out = tmp_path / 'r.yaml'
    assert main(['identify', str(urdf_arm / 'train'), '--robot', str(urdf_arm / 'arm.urdf'), '--drives',
                 str(urdf_arm / 'drives.yaml'), '-o', str(out), '--quiet']) == 0
    capsys.readouterr()
    printed = {}
    for bag in (urdf_arm / 'check', tmp_path / 'foxglove.mcap', tmp_path / 'no_metadata'):
        assert main(['validate', str(bag), '--params', str(out)]) == 0
        printed[bag] = capsys.readouterr().out.replace(str(bag), 'BAG')  # the same lines but for the bag's name
    first, *others = printed.values()
    assert 'NRMSE fit' in first and all(text == first for text in others)
