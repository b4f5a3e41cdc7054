"""Segmented recording (identifier_node's recorder): nothing lost at segment boundaries or in a crash."""

import numpy as np
import pytest

from dynid.errors import InputError
from dynid.io.cdr import joint_state_cdr
from dynid.io.recorder import SegmentedRecorder, read_recording

NAMES = ('a', 'b')
TYPE = 'sensor_msgs/msg/JointState'


def _record(folder, samples=300, rate=100.0, segment_s=0.7, close=True, shuffle=False):
    """Writes joint_states/joint_currents/joint_temperatures like the node does (arrival order may vary)."""
    rng = np.random.default_rng(0)
    recorder = SegmentedRecorder(folder, segment_s)
    stamps = 1_000_000_000 + np.arange(samples) * int(1e9 / rate)
    q = rng.normal(size=(samples, 2))
    events = [(k, topic) for k in range(samples) for topic in ('joint_states', 'joint_currents', 'joint_temperatures')]
    if shuffle:  # currents may arrive a few messages after their joint state
        events = sorted(events, key=lambda e: e[0] + (3 if e[1] == 'joint_currents' else 0))
    for k, topic in events:
        if topic == 'joint_states':
            data = joint_state_cdr(stamps[k], NAMES, q[k], -q[k], [])
        elif topic == 'joint_currents':
            data = joint_state_cdr(stamps[k], NAMES, [], [], 2 * q[k])
        else:
            data = joint_state_cdr(stamps[k], NAMES, [], [], [30.0, 31.0])
        recorder.write(f'/{topic}', TYPE, int(stamps[k]), data)
    if close:
        recorder.close()
    return recorder, q


def test_segments_join_without_losing_samples(tmp_path):
    recorder, q = _record(tmp_path / 'rec', shuffle=True)
    segments = sorted((tmp_path / 'rec').glob('segment_*'))
    assert len(segments) == 5  # 3 s of data in 0.7 s segments
    dataset = read_recording(tmp_path / 'rec', NAMES)
    assert dataset.n_samples == 300  # samples whose current landed in the next segment are kept
    np.testing.assert_allclose(dataset.q, q)
    np.testing.assert_allclose(dataset.current, 2 * q)
    np.testing.assert_allclose(dataset.t, np.arange(300) / 100.0)
    assert dataset.source['segments'] == 5
    assert recorder.messages == 900


def test_a_crash_loses_only_the_open_segment(tmp_path):
    _record(tmp_path / 'rec', close=False)  # the process "dies": the last segment never gets its metadata
    dataset = read_recording(tmp_path / 'rec', NAMES)
    assert dataset.n_samples == 280  # four closed segments of 70 samples


def test_refuses_to_overwrite_and_empty_folders(tmp_path):
    (tmp_path / 'rec').mkdir()
    with pytest.raises(InputError, match='refusing'):
        SegmentedRecorder(tmp_path / 'rec')
    with pytest.raises(InputError, match='empty directory, not a recording'):
        read_recording(tmp_path / 'rec')
    with pytest.raises(InputError, match='segment duration'):
        SegmentedRecorder(tmp_path / 'other', 0.0)


def test_rclpy_serialized_messages_are_canonicalized_for_the_bag():
    from rclpy.serialization import serialize_message
    from sensor_msgs.msg import JointState

    from dynid.io.cdr import normalize_joint_state_cdr

    message = JointState(name=['shoulder', 'elbow', 'w'], position=[1.0, 2.0, 3.0], velocity=[0.5, 0.25, 0.0])
    message.header.stamp.sec, message.header.stamp.nanosec = 12, 345
    raw = serialize_message(message)  # rmw leaves padding garbage and a tail that rosbags refuses
    stamp, data = normalize_joint_state_cdr(raw)
    assert stamp == 12_000_000_345
    assert data == joint_state_cdr(stamp, message.name, message.position, message.velocity, [])
    for broken in (raw[:20], b'\x00\x00' + raw[2:], b'', raw[:4] + b'\xff' * 40):
        with pytest.raises(ValueError):
            normalize_joint_state_cdr(broken)
