"""read_bag joins the contract topics by stamp, and holds a recording's decoded signals once."""

import tracemalloc

import numpy as np
import pytest
from rosbags.rosbag2 import StoragePlugin, Writer

import dynid.io.bag as bag
from dynid.io.bag import JOINT_STATE, read_bag
from dynid.io.cdr import JointStateEncoder, typestore

NAMES = ['j1', 'j2', 'j3']
TOPICS = {'/joint_states': ('position', 'velocity', 'effort'), '/motor_states': ('position', 'velocity'),
          '/joint_currents': ('effort',), '/joint_temperatures': ('effort',)}


def _write(path, stamps_ms: dict, values: dict):
    """A bag with, per topic, messages of header stamps ``stamps_ms[topic]`` [ms] (logged in list order)
    and ``values[topic][field]`` (K, 3)."""
    with Writer(path, version=9, storage_plugin=StoragePlugin.MCAP) as writer:
        for topic, fields in TOPICS.items():
            connection = writer.add_connection(topic, JOINT_STATE, typestore=typestore())
            stamps = np.asarray(stamps_ms[topic], dtype=np.int64) * 1_000_000
            messages = JointStateEncoder(NAMES, fields).encode(stamps, **values[topic])
            for k, message in enumerate(messages):
                writer.write(connection, 1_000_000_000 + k, message)
    return path


def _values(count, offset):
    return np.arange(count * 3, dtype=float).reshape(count, 3) + offset


def test_topics_join_by_stamp_in_stamp_order(tmp_path):
    # joint_states: stamps out of order and one duplicated (the first of the two is kept); motor_states lack
    # the sample at 5 ms (dropped); temperatures come every 4 ms (held from the latest at or before).
    main = [0, 2, 1, 3, 3, 4, 5, 6, 7, 8]
    motor = [0, 1, 2, 3, 4, 6, 7, 8]
    every = list(range(9))
    slow = [0, 4, 8]
    stamps = {'/joint_states': main, '/motor_states': motor, '/joint_currents': every, '/joint_temperatures': slow}
    values = {'/joint_states': {f: _values(10, 100 * i) for i, f in enumerate(TOPICS['/joint_states'])},
              '/motor_states': {f: _values(8, 1000 + 100 * i) for i, f in enumerate(TOPICS['/motor_states'])},
              '/joint_currents': {'effort': _values(9, 2000)}, '/joint_temperatures': {'effort': _values(3, 3000)}}
    dataset = read_bag(_write(tmp_path / 'joined', stamps, values))
    kept_ms = np.array([0, 1, 2, 3, 4, 6, 7, 8])
    assert np.allclose(dataset.t, kept_ms / 1000.0)
    main_row = {0: 0, 1: 2, 2: 1, 3: 3, 4: 5, 6: 7, 7: 8, 8: 9}  # stamp → row of joint_states (first of the 3 ms)
    rows = [main_row[s] for s in kept_ms]
    assert np.array_equal(dataset.q, values['/joint_states']['position'][rows])
    assert np.array_equal(dataset.dq, values['/joint_states']['velocity'][rows])
    assert np.array_equal(dataset.tau, values['/joint_states']['effort'][rows])
    assert np.array_equal(dataset.theta, values['/motor_states']['position'][[motor.index(s) for s in kept_ms]])
    assert np.array_equal(dataset.dtheta, values['/motor_states']['velocity'][[motor.index(s) for s in kept_ms]])
    assert np.array_equal(dataset.current, values['/joint_currents']['effort'][kept_ms])
    assert np.array_equal(dataset.temperature, values['/joint_temperatures']['effort'][kept_ms // 4])
    assert dataset.source['dropped_unmatched'] == 1


def test_a_clean_recording_is_held_once(tmp_path, monkeypatch):
    # Topics in stamp order sharing one set of stamps (a driver's, the twin's): the decoded arrays become the
    # dataset's signals. Peak of traced memory while reading beside the dataset's size: 2.35 when every
    # topic was decoded into batches, concatenated and then copied into the dataset; 1.52 when held once
    # (the rest: raw messages of the batches and chunks being read).
    count = 50000
    random = np.random.default_rng(0)
    stamps = {topic: np.arange(count) for topic in TOPICS}
    values = {topic: {f: random.normal(size=(count, 3)) for f in fields} for topic, fields in TOPICS.items()}
    path = _write(tmp_path / 'clean', stamps, values)
    monkeypatch.setattr(bag, '_DECODE_BATCH', 1000)  # several batches per topic, few raw bytes held
    tracemalloc.start()
    try:
        dataset = read_bag(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    size = dataset.t.nbytes + sum(signal.nbytes for signal in dataset.signals().values())
    assert peak < 1.7 * size, f'reading peaked at {peak / size:.2f}× the dataset'
    assert np.array_equal(dataset.current, values['/joint_currents']['effort'])
    assert np.array_equal(dataset.theta, values['/motor_states']['position'])


@pytest.mark.parametrize('capacity', [0, 2, 7])
def test_topic_rows_grow_past_a_short_count(capacity):
    # The metadata's message count sizes the arrays; a count too low (or none) costs a copy, not rows.
    rows = bag._TopicRows(capacity)
    batches = [(np.arange(a, b), {'position': _values(b - a, a)}) for a, b in ((0, 3), (3, 3), (3, 8))]
    for stamps, fields in batches:
        rows.append(stamps, fields)
    stamps, fields = rows.arrays(['position'])
    assert np.array_equal(stamps, np.arange(8))
    assert np.array_equal(fields['position'], np.concatenate([f['position'] for _, f in batches]))
