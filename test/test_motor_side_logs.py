"""Motor-side logs as users have them (``dynid import``, ``dynid model --drives``): file sets read one way only
where the files and the column map tell them apart, motor torques through the drives, a log cut by time."""

import json
import re
import shlex

import numpy as np
import pytest
import yaml

from dynid.cli import main
from dynid.errors import InputError
from dynid.io.bag import read_bag
from dynid.io.csv_log import parse_column_spec
from dynid.io.importing import ImportSettings, import_logs
from dynid.io.log_checks import LogLimits
from dynid.io.motor_side import motor_side_signals
from dynid.model.drives import load_drives

RATE = 500.0
COUPLING = np.eye(6)
COUPLING[4, 4], COUPLING[5, 4] = -1.0, 1.0  # motor 5 turns against q5; motor 6 with q5 + q6
OFFSET = np.array([0.0, 50.0, -70.0, 0.0, 0.0, 0.0])  # [rad on the shafts]


def _motion(t):
    """Smooth joint positions [rad] and motor torques [N·m on the shafts] of six joints."""
    k = np.arange(1, 7)
    q = 0.4 * np.sin(2 * np.pi * 0.3 * k * t[:, None] / 3 + k)
    torque = 0.2 * np.cos(2 * np.pi * 0.5 * t[:, None] + k) + 0.05 * k
    return q, torque


@pytest.fixture(scope='module')
def drives_file(ur5e, tmp_path_factory):
    drives = ur5e.drives
    text = {name: {**entry} for name, entry in drives.to_dict().items()}
    for k, name in enumerate(ur5e.joint_names):
        if OFFSET[k]:
            text[name]['motor_offset'] = float(OFFSET[k])
    text['wrist_2_joint']['coupling'] = {'wrist_2_joint': -1.0}
    text['wrist_3_joint']['coupling'] = {'wrist_2_joint': 1.0, 'wrist_3_joint': 1.0}
    path = tmp_path_factory.mktemp('drives') / 'drives.yaml'
    path.write_text(yaml.safe_dump(text))
    return path


def _two_files(folder, ur5e, time=False, overlap=True, seconds=4.0):
    """Motor angles and motor torques in two CSV files with the same header (Joint_1 … Joint_6[, time])."""
    t = np.arange(0.0, seconds, 1.0 / RATE)
    q, torque = _motion(t)
    motor = (q @ COUPLING.T) * ur5e.drives.gear_ratio + OFFSET
    header = ([] if not time else ['time']) + [f'Joint_{n}' for n in range(1, 7)]
    stamps = t if overlap else t + seconds
    for name, values, start in (('pos.csv', motor, t), ('torque.csv', torque, stamps)):
        block = values if not time else np.column_stack([start, values])
        np.savetxt(folder / name, block, delimiter=',', header=','.join(header), comments='', fmt='%.12g')
    return folder / 'pos.csv', folder / 'torque.csv', t, q, torque


def _import(argv, capsys):
    code = main(['import', *map(str, argv)])
    captured = capsys.readouterr()
    return code, captured.out, captured.err.strip()


def test_two_files_with_one_header_and_a_column_named_for_two_signals_are_refused_with_the_command(
        ur5e, drives_file, tmp_path, capsys):
    pos, torque, _, _, _ = _two_files(tmp_path, ur5e)
    out = tmp_path / 'bag'
    code, _, err = _import([pos, torque, '--columns', 'motor_q=Joint_{n},motor_torque=Joint_{n}', '--robot', 'ur5e',
                            '--rate', RATE, '--drives', drives_file, '-o', out], capsys)
    assert code == 2 and '\n' not in err and err.startswith('dynid import: error:'), err
    assert 'motor_q and motor_torque both name the columns Joint_1' in err and 'pos.csv and torque.csv' in err
    assert not out.exists()
    # the command it gives works as it is
    command = shlex.split(err[err.index('dynid import '):])
    assert command[command.index('--columns') + 1] == 'motor_q=pos.csv:Joint_{n},motor_torque=torque.csv:Joint_{n}'
    assert main(command[1:]) == 0
    assert read_bag(out, ur5e.joint_names).n_samples == 2000


def test_one_file_with_a_column_named_for_two_signals_is_refused(ur5e, tmp_path, capsys):
    pos, _, _, _, _ = _two_files(tmp_path, ur5e)
    code, _, err = _import([pos, '--columns', 'q=Joint_{n},tau=Joint_{n}', '--robot', 'ur5e', '--rate', RATE,
                            '-o', tmp_path / 'bag'], capsys)
    assert code == 2 and '\n' not in err and 'q and tau both name the columns Joint_1' in err, err
    assert 'pos.csv' in err and not (tmp_path / 'bag').exists()
    # the time column too is one signal
    code, _, err = _import([pos, '--columns', 'time=Joint_1,q=Joint_{n}', '--robot', 'ur5e', '-o', tmp_path / 'bag'],
                           capsys)
    assert code == 2 and 'time and q both name the column Joint_1' in err, err


def test_files_with_one_header_and_no_time_column_cannot_be_told_apart(ur5e, drives_file, tmp_path, capsys):
    pos, torque, _, _, _ = _two_files(tmp_path, ur5e)
    code, _, err = _import([pos, torque, '--columns', 'motor_q=Joint_{n}', '--robot', 'ur5e', '--rate', RATE,
                            '--drives', drives_file, '-o', tmp_path / 'bag'], capsys)
    assert code == 2 and '\n' not in err and 'pos.csv, torque.csv have the same columns and no time column' in err
    assert '--columns time=COLUMN' in err and 'SIGNAL=FILE:COLUMN' in err and not (tmp_path / 'bag').exists()


def test_files_with_one_header_are_parts_only_where_their_times_continue(ur5e, tmp_path, capsys):
    t = np.arange(0.0, 4.0, 1.0 / RATE)
    q, _ = _motion(t)
    header = 'time,' + ','.join(f'p{n}' for n in range(1, 7))
    half = t.size // 2
    for name, rows in (('a.csv', slice(0, half)), ('b.csv', slice(half, None)), ('again.csv', slice(0, half))):
        np.savetxt(tmp_path / name, np.column_stack([t[rows], q[rows]]), delimiter=',', header=header, comments='',
                   fmt='%.12g')
    spec = parse_column_spec('time=time,q=p{n}')
    dataset, report, _ = import_logs([tmp_path / 'a.csv', tmp_path / 'b.csv'], spec, ur5e.joint_names,
                                     LogLimits.of_robot(ur5e))
    assert report.files[0]['layout'] == 'consecutive parts' and dataset.n_samples == t.size
    np.testing.assert_allclose(dataset.q, q, atol=1e-9)
    # the same columns, times that start again: two recordings, not one
    code, _, err = _import([tmp_path / 'a.csv', tmp_path / 'again.csv', '--columns', 'time=time,q=p{n}', '--robot',
                            'ur5e', '-o', tmp_path / 'bag'], capsys)
    assert code == 2 and '\n' not in err and not (tmp_path / 'bag').exists()
    assert "again.csv's time 'time' starts at 0 s, not after a.csv's last (1.998 s)" in err, err


def test_files_of_one_signal_each_are_joined_by_their_stamps(ur5e, drives_file, tmp_path):
    pos, torque, t, q, motor_torque = _two_files(tmp_path, ur5e, time=True)
    lines = torque.read_text().splitlines()
    torque.write_text('\n'.join(lines[:101] + lines[111:]) + '\n')  # 10 rows lost in one file
    spec = parse_column_spec('time=time,motor_q=pos:Joint_{n},motor_torque=torque.csv:Joint_{n}')
    dataset, report, _ = import_logs([pos, torque], spec, ur5e.joint_names, LogLimits.of_robot(ur5e),
                                     ImportSettings(drives=str(drives_file)))
    assert report.files[0]['layout'] == 'side by side'
    assert any('joined by their time stamps: 1990 stamps in every file; left out: pos.csv 10 row(s)' in note
               for note in report.notes), report.notes
    assert dataset.n_samples == t.size - 10  # a gap longer than the bridge stays a gap
    assert np.diff(dataset.t).max() == pytest.approx(11 / RATE)
    np.testing.assert_allclose(dataset.q, np.delete(q, np.s_[100:110], axis=0), atol=1e-9)
    # a column both files hold with other values is named with its file
    with pytest.raises(InputError, match=r'motor_torque=Joint_\{n\}: Joint_1, Joint_2, Joint_3, … \(6 in all\) are '
                                         r'columns of several of the files.*motor_torque=FILE:Joint_\{n\}'):
        import_logs([pos, torque], parse_column_spec('time=time,motor_q=pos:Joint_{n},motor_torque=Joint_{n}'),
                    ur5e.joint_names, LogLimits.of_robot(ur5e), ImportSettings(drives=str(drives_file)))


def test_motor_torques_become_the_drives_currents_through_the_coupling(ur5e, drives_file, tmp_path, capsys):
    pos, torque, t, q, motor_torque = _two_files(tmp_path, ur5e)
    spec = parse_column_spec('motor_q=pos.csv:Joint_{n},motor_torque=torque.csv:Joint_{n}')
    drives = load_drives(drives_file, ur5e.joint_names)
    dataset, report, _ = import_logs([pos, torque], spec, ur5e.joint_names, LogLimits.of_robot(ur5e),
                                     ImportSettings(rate_hz=RATE, drives=str(drives_file)))
    assert dataset.tau is None  # a drive's torque is not a torque sensor's: kept as the motors' currents
    link_units = drives.gear_ratio * motor_torque
    np.testing.assert_allclose(dataset.current, link_units / drives.drive_gain, rtol=1e-9)
    np.testing.assert_allclose(dataset.q, q, atol=1e-9)
    np.testing.assert_allclose(dataset.theta, q @ COUPLING.T, atol=1e-9)
    # the joints' torques are Cᵀ·(r·τ_m): the wrist's fifth joint feels both motors
    joint_torque = (dataset.current * drives.drive_gain) @ COUPLING
    np.testing.assert_allclose(joint_torque[:, 4], -link_units[:, 4] + link_units[:, 5], atol=1e-8)
    assert any('motor torques' in note and 'Cᵀ·(r·τ_m)' in note for note in report.notes)
    # refused beside another measure of the drives' torque, and without drive data
    (tmp_path / 'cur.csv').write_text(torque.read_text())
    code, _, err = _import([pos, torque, tmp_path / 'cur.csv', '--columns', 'motor_q=pos.csv:Joint_{n},motor_torque='
                            'torque.csv:Joint_{n},current=cur.csv:Joint_{n}', '--robot', 'ur5e', '--rate', RATE,
                            '--drives', drives_file, '-o', tmp_path / 'bag'], capsys)
    assert code == 2 and 'motor_torque and current are two measures' in err and '\n' not in err, err
    assert not (tmp_path / 'bag').exists()
    with pytest.raises(InputError, match=r'log.csv: motor-side columns \(motor_torque\) need the drives'):
        motor_side_signals({'q': q, 'motor_torque': motor_torque}, None, 'log.csv')


def test_start_and_end_cut_the_log(ur5e, tmp_path, capsys):
    t = np.arange(0.0, 4.0, 1.0 / RATE)
    q, _ = _motion(t)
    path = tmp_path / 'log.csv'
    np.savetxt(path, np.column_stack([t + 100.0, q]), delimiter=',', header='t,' + ','.join(f'p{n}' for n in
                                                                                              range(6)),
               comments='', fmt='%.12g')
    out = tmp_path / 'cut'
    code, printed, _ = _import([path, '--columns', 'time=t,q=p{i}', '--robot', 'ur5e', '--start', '0.5', '--end', '3',
                                '-o', out], capsys)
    assert code == 0
    assert 'cut to 0.5–3 s of the log (from its first row): 250 row(s) before and 499 after left out' in printed
    dataset = read_bag(out, ur5e.joint_names)
    assert dataset.n_samples == 1251
    np.testing.assert_allclose(dataset.q[0], q[250], atol=1e-9)
    assert yaml.safe_load((out / 'import.yaml').read_text())['cut']['rows_before'] == 250
    for cut, words in ((['--start', '2', '--end', '1'], '--end must be after --start (2 s), got 1 s'),
                       (['--start', '-1'], '--start must be >= 0 s'),
                       (['--start', '10'], '--start and --end leave fewer than 2 rows (the log spans 0–3.998 s')):
        code, _, err = _import([path, '--columns', 'time=t,q=p{i}', '--robot', 'ur5e', *cut, '-o', tmp_path / 'x'],
                               capsys)
        assert code == 2 and words in err and '\n' not in err and not (tmp_path / 'x').exists(), err


def test_model_shows_what_a_drives_file_means(drives_file, tmp_path, capsys):
    assert main(['model', '--robot', 'ur5e', '--drives', str(drives_file)]) == 0
    out = capsys.readouterr().out
    assert re.search(r'wrist_3_joint\s+0\s+0\s+0\s+0\s+1\s+1', out), out  # the coupling matrix's row
    assert 'θ_m[shoulder_lift_joint] = 101·q[shoulder_lift_joint] + 50 rad' in out
    assert 'q[wrist_3_joint] = θ[wrist_2_joint] + θ[wrist_3_joint]' in out  # q6 = θ6 − θ5 with θ5 = −q5
    assert 'τ[wrist_2_joint] = −101·τ_m[wrist_2_joint] + 101·τ_m[wrist_3_joint]' in out
    assert main(['model', '--robot', 'ur5e', '--drives', str(drives_file), '--json']) == 0
    summary = json.loads(capsys.readouterr().out)
    np.testing.assert_array_equal(summary['transmission']['coupling'], COUPLING)
    assert summary['transmission']['motors'][5]['turns'] == {'wrist_2_joint': 1.0, 'wrist_3_joint': 1.0}
    bad = tmp_path / 'bad.yaml'
    bad.write_text('shoulder_pan_joint: {gear_ratio: 101}\n')
    assert main(['model', '--robot', 'ur5e', '--drives', str(bad)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith('dynid model: error: drives file') and str(bad) in err and '\n' not in err
