"""`dynid simulate`: the recording it writes, refusals that leave existing files alone, and its progress on a terminal
and into a pipe."""

import os
import pty
import subprocess
import sys
from pathlib import Path

import numpy as np
import yaml
from rosbags.highlevel import AnyReader

from cli_run import run_dynid
from dynid.excite.trajectory import FourierTrajectory, save_trajectory
from dynid.io.bag import read_bag
from dynid.io.cdr import typestore
from dynid.model import load_robot

STATE_TOPICS = ['/joint_states', '/motor_states', '/joint_currents', '/joint_temperatures']


def _simulate(*args):
    return run_dynid('simulate', '--quiet', *args)


def test_simulate_writes_four_topics_at_the_rate_with_equal_stamps(tmp_path):
    out = tmp_path / 'rec'
    result = _simulate('--duration', '2', '--rate', '500', '--seed', '3', '--payload', '2.0', '-o', str(out))
    assert result.returncode == 0, result.stderr
    stamps = {}
    with AnyReader([out], default_typestore=typestore()) as reader:
        topics = {c.topic: c for c in reader.connections}
        assert set(STATE_TOPICS) | {'/joint_trajectory_controller/joint_trajectory'} <= set(topics)
        for topic in STATE_TOPICS:
            values = []
            for connection, timestamp, raw in reader.messages(connections=[topics[topic]]):
                message = reader.deserialize(raw, connection.msgtype)
                assert list(message.name)[0] == 'shoulder_pan_joint'
                values.append(message.header.stamp.sec * 10**9 + message.header.stamp.nanosec)
                assert timestamp == values[-1]
            stamps[topic] = np.array(values)
    for topic in STATE_TOPICS:
        assert stamps[topic].size == 1000
        np.testing.assert_array_equal(stamps[topic], stamps['/joint_states'])
    np.testing.assert_array_equal(np.diff(stamps['/joint_states']), 2_000_000)  # 500 Hz
    truth = yaml.safe_load((out / 'truth.yaml').read_text())
    assert truth['dynid_truth'] == 1 and truth['plant']['payload']['mass'] == 2.0
    assert len(truth['inertial']['base_values']) == 36
    dataset = read_bag(out)
    assert dataset.n_samples == 1000 and dataset.current is not None and dataset.temperature is not None


def test_simulate_follows_a_trajectory_file(tmp_path):
    robot = load_robot('ur5e')
    home = np.array([0.0, -1.5708, 1.5708, -1.5708, -1.5708, 0.0])
    trajectory = FourierTrajectory(robot.joint_names, 0.25, home, np.zeros((6, 2)),
                                   np.tile([[0.2, 0.05]], (6, 1)))
    path = tmp_path / 'traj.yaml'
    save_trajectory(trajectory, path)
    out = tmp_path / 'rec'
    result = _simulate('--trajectory', str(path), '--rate', '250', '-o', str(out))
    assert result.returncode == 0, result.stderr
    dataset = read_bag(out)
    assert dataset.n_samples == 1000  # one 4 s period at 250 Hz
    reference = trajectory.evaluate(dataset.t + 1 / 250)[0]
    assert np.abs(dataset.q - reference).max() < 5e-3


def test_simulate_refuses_bad_input_and_keeps_existing_files(tmp_path):
    existing = tmp_path / 'existing'
    existing.mkdir()
    (existing / 'keep.txt').write_text('precious')
    result = _simulate('--duration', '1', '-o', str(existing))
    assert result.returncode == 2 and 'refusing to overwrite' in result.stderr
    assert (existing / 'keep.txt').read_text() == 'precious'

    robot = load_robot('ur5e')
    wild = FourierTrajectory(robot.joint_names, 0.5, np.zeros(6), np.zeros((6, 1)), np.full((6, 1), 4.0))
    path = tmp_path / 'wild.yaml'
    save_trajectory(wild, path)
    result = _simulate('--trajectory', str(path), '-o', str(tmp_path / 'a'))
    assert result.returncode == 2 and 'position limits' in result.stderr
    assert not (tmp_path / 'a').exists()

    other = FourierTrajectory(('j1', 'j2'), 0.5, np.zeros(2), np.zeros((2, 1)), np.zeros((2, 1)))
    save_trajectory(other, path)
    result = _simulate('--trajectory', str(path), '-o', str(tmp_path / 'b'))
    assert result.returncode == 2 and 'j1' in result.stderr

    path.write_text('{not yaml')
    result = _simulate('--trajectory', str(path), '-o', str(tmp_path / 'c'))
    assert result.returncode == 2 and len(result.stderr.strip().splitlines()) == 1
    for args in (['--rate', '-5'], ['--payload', '-1'], ['--duration', '0']):
        result = _simulate(*args, '-o', str(tmp_path / 'd'))
        assert result.returncode == 2, args
    assert not Path(tmp_path / 'd').exists()


def _simulate_process(folder: Path, stderr) -> subprocess.Popen:
    """``python -m dynid.cli simulate`` of 3 s of the UR5e at 100 Hz into ``folder``, its standard error ``stderr``."""
    return subprocess.Popen([sys.executable, '-m', 'dynid.cli', 'simulate', '--duration', '3', '--rate', '100', '-o',
                             str(folder / 'rec')], stdout=subprocess.DEVNULL, stderr=stderr, cwd=folder)


def test_simulate_writes_whole_progress_lines_into_a_pipe(tmp_path):
    """Its standard error a pipe (a log, ``2>&1 | tee``): one line at each tenth, no carriage-return frames."""
    process = _simulate_process(tmp_path, subprocess.PIPE)
    err = process.communicate(timeout=300)[1].decode()
    assert process.returncode == 0, err
    assert '\r' not in err
    shown = [int(line.rsplit(':', 1)[1].removesuffix('%')) for line in err.splitlines()
             if line.startswith('simulating 3.0 s of ur5e at 100 Hz:')]
    assert shown == sorted(set(shown)) and shown[-1] == 100 and len(shown) <= 11, err
    assert all(value % 10 == 0 for value in shown), err


def test_simulate_rewrites_its_progress_line_on_a_terminal(tmp_path):
    """The same on a terminal (a pseudo-terminal here): one line rewritten in place."""
    leader, follower = pty.openpty()
    try:
        process = _simulate_process(tmp_path, follower)
        os.close(follower)
        err = b''
        while True:
            try:
                chunk = os.read(leader, 4096)
            except OSError:  # the terminal closed: the process ended
                break
            if not chunk:
                break
            err += chunk
        assert process.wait(timeout=300) == 0, err
    finally:
        os.close(leader)
    assert err.count(b'\rsimulating 3.0 s of ur5e at 100 Hz:') >= 2 and b'100 %' in err, err
