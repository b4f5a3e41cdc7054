"""The intake's core (issue 12): JointState bytes a batch at a time, stamp-gap counting, joining by stamp."""

import numpy as np
import pytest

from dynid.io.cdr import (
    JointStateEncoder,
    decode_joint_states,
    joint_state_cdr,
    normalize_joint_state_cdr,
    normalize_joint_states,
)
from dynid.io.gaps import StampGapCounter
from dynid.io.stream import StateJoiner

NAMES = ['j1', 'j2', 'j3']


def _messages(stamps, fields=('position', 'velocity', 'effort'), names=NAMES, seed=0):
    rng = np.random.default_rng(seed)
    values = {f: rng.normal(size=(len(stamps), len(names))) for f in fields}
    raws = [joint_state_cdr(s, names, *(values[f][k] if f in fields else [] for f in ('position', 'velocity',
                                                                                       'effort')))
            for k, s in enumerate(stamps)]
    return raws, values


def test_encoder_writes_what_rosbags_writes():
    stamps = np.array([1, 10**9 + 5, 1_700_000_000_123_456_789])
    encoder = JointStateEncoder(NAMES, ('position', 'effort'))
    values = {'position': np.arange(9.0).reshape(3, 3), 'effort': -np.arange(9.0).reshape(3, 3)}
    encoded = encoder.encode(stamps, **values)
    for k, stamp in enumerate(stamps):
        assert encoded[k] == joint_state_cdr(int(stamp), NAMES, values['position'][k], [], values['effort'][k])


def test_decode_maps_joints_by_name_and_marks_empty_fields():
    stamps = np.arange(5) * 1_000_000 + 10**9
    raws, values = _messages(stamps, fields=('position', 'effort'), names=['j3', 'j1', 'j2'])
    decoded_stamps, decoded, skipped = decode_joint_states(raws, NAMES)
    assert skipped == 0 and np.array_equal(decoded_stamps, stamps)
    np.testing.assert_array_equal(decoded['position'], values['position'][:, [1, 2, 0]])
    assert np.isnan(decoded['velocity']).all()
    # A batch that is not uniform (one message names its joints in another order) decodes one by one.
    mixed = raws[:2] + _messages(stamps[2:3], names=NAMES)[0]
    decoded_stamps, decoded, skipped = decode_joint_states(mixed, NAMES)
    assert skipped == 0 and decoded_stamps.size == 3
    np.testing.assert_array_equal(decoded['position'][:2], values['position'][:2, [1, 2, 0]])
    # Messages lacking a joint, or not a JointState, are skipped and counted.
    _, _, skipped = decode_joint_states(raws + [b'\x00\x01\x00\x00garbage'], NAMES + ['j4'])
    assert skipped == 6


def test_batch_normalization_equals_the_single_message_one():
    stamps = np.arange(4) * 2_000_000 + 5 * 10**9
    raws, _ = _messages(stamps)
    # rmw may leave garbage in the padding and append bytes: make a batch of such messages.
    dirty = []
    for raw in raws:
        data = bytearray(raw) + b'\xff\xff\xff\xff'
        data[18:20] = b'\xee\xee'  # inside the frame id padding (frame id '' → 1 byte + 3 padding)
        dirty.append(bytes(data))
    batch_stamps, messages, skipped = normalize_joint_states(dirty)
    assert skipped == 0 and np.array_equal(batch_stamps, stamps)
    for raw, message in zip(dirty, messages, strict=True):
        assert message == normalize_joint_state_cdr(raw)[1]
    assert messages == raws
    _, messages, skipped = normalize_joint_states(dirty[:2] + [b'short'])
    assert skipped == 1 and messages == raws[:2]
    # Decoding takes the bytes as rclpy delivers them too, uniform or one by one.
    for batch in (dirty, dirty[:2] + _messages(stamps[2:3], names=NAMES[::-1])[0]):
        clean = [normalize_joint_state_cdr(raw)[1] for raw in batch]
        decoded, expected = decode_joint_states(batch, NAMES), decode_joint_states(clean, NAMES)
        assert decoded[2] == 0 and np.array_equal(decoded[0], expected[0])
        for field in ('position', 'velocity', 'effort'):
            np.testing.assert_array_equal(decoded[1][field], expected[1][field])


def test_gap_counter_counts_lost_samples_in_any_batching():
    rng = np.random.default_rng(3)
    stamps = np.arange(5000, dtype=np.int64) * 1_000_000 + 10**9
    keep = rng.random(stamps.size) > 0.1
    keep[:150] = True
    counter = StampGapCounter()
    position = 0
    received = stamps[keep]
    while position < received.size:
        size = int(rng.integers(1, 40))
        counter.update(received[position:position + size][::-1])  # reversed: batches are sorted on the way in
        position += size
    last = np.flatnonzero(keep)[-1]
    assert counter.period_ns == 1_000_000
    assert counter.lost == int(np.count_nonzero(~keep[:last]))
    assert counter.received == received.size and counter.late == 0
    counter.update(received[10:20])  # repeated and old stamps are late, not new samples
    assert counter.late == 10 and counter.received == received.size


def test_gap_counter_with_a_known_period_counts_from_the_first_batch():
    counter = StampGapCounter(period_ns=2_000_000)
    assert counter.update(np.array([0, 2, 4, 10, 12]) * 1_000_000) == 2
    assert counter.gaps == 1 and counter.longest_gap_ns == 6_000_000


def _decoded(stamps, n=3, value=0.0):
    stamps = np.asarray(stamps, dtype=np.int64)
    return stamps, {f: np.full((stamps.size, n), value) + stamps[:, None] * 1e-9 for f in ('position', 'velocity',
                                                                                           'effort')}


def test_joiner_joins_by_stamp_in_order_and_holds_temperatures():
    joiner = StateJoiner(3, required=('motor_states', 'joint_currents'))
    stamps = np.arange(100, dtype=np.int64) * 1_000_000
    # Topics arrive in different batches, out of order, currents one batch late.
    joiner.add('joint_states', *_decoded(stamps[:60][::-1]))
    joiner.add('motor_states', *_decoded(stamps[:70]))
    joiner.add('joint_temperatures', *_decoded(stamps[::10], value=30.0))
    first = joiner.take()
    assert first is None  # no currents yet
    joiner.add('joint_currents', *_decoded(stamps[:50]))
    first = joiner.take()
    assert np.array_equal(first.stamps_ns, stamps[:50])
    np.testing.assert_allclose(first.theta[:, 0], stamps[:50] * 1e-9)
    np.testing.assert_allclose(first.current[:, 1], stamps[:50] * 1e-9)
    np.testing.assert_allclose(first.temperature[:, 0], 30.0 + (stamps[:50] // 10_000_000) * 0.01)  # held
    joiner.add('joint_states', *_decoded(stamps[60:]))
    joiner.add('motor_states', *_decoded(stamps[70:]))
    joiner.add('joint_currents', *_decoded(np.delete(stamps[50:70], [5])))  # one current lost: stamp 55 ms
    second = joiner.take()
    # the currents have gone past 55 ms: that one was lost, the samples after it need not wait for it
    assert joiner.unmatched == 1 and np.array_equal(second.stamps_ns, np.delete(stamps[50:70], [5]))
    joiner.add('joint_currents', *_decoded(stamps[70:]))
    third = joiner.take()
    assert np.array_equal(third.stamps_ns, stamps[70:])
    joiner.add('joint_states', *_decoded(stamps[80:81]))  # older than what was handed out: late
    assert joiner.late == 1 and joiner.joined == 99


def test_joiner_waits_for_a_topic_that_lags_in_a_burst():
    # After a stall the publisher catches up faster than real time: joint_states brings 0.8 s of stamps before the
    # currents bring any of them. Nothing was lost, so every sample is joined once the currents come.
    joiner = StateJoiner(3, required=('joint_currents',))
    stamps = np.arange(800, dtype=np.int64) * 1_000_000
    joiner.add('joint_states', *_decoded(stamps))
    joiner.add('joint_currents', *_decoded(stamps[:10]))
    assert np.array_equal(joiner.take().stamps_ns, stamps[:10])
    assert joiner.take() is None
    joiner.add('joint_currents', *_decoded(stamps[10:]))
    assert np.array_equal(joiner.take().stamps_ns, stamps[10:])
    assert joiner.unmatched == 0 and joiner.joined == 800


def test_joiner_gives_up_on_a_silent_topic_after_the_horizon():
    joiner = StateJoiner(3, required=('joint_currents',), horizon_ns=100_000_000)
    stamps = np.arange(300, dtype=np.int64) * 1_000_000
    joiner.add('joint_currents', *_decoded(stamps[:100]))
    joiner.add('joint_states', *_decoded(stamps[:150]))
    assert len(joiner.take()) == 100 and joiner.unmatched == 0  # 100-149 may still come
    joiner.add('joint_states', *_decoded(stamps[150:]))  # the currents went silent at 99 ms
    assert joiner.take() is None
    assert joiner.unmatched == 199 - 100  # given up: 100-199 ms, more than the horizon behind the newest stamp


def test_joiner_refuses_unknown_topics():
    with pytest.raises(ValueError):
        StateJoiner(3, required=('joint_states',))


def test_split_effort_gives_the_contract_topics_byte_for_byte():
    # A UR driver's joint_states carry current in effort: split into joint_states without effort and
    # joint_currents with it, as rosbags would serialize them (any frame id, name lengths, joint count).
    from dynid.io.cdr import JOINT_STATE, split_effort, stamp_message, typestore

    types = typestore().types
    seven = [f'joint_{k}' for k in range(7)]
    for names, frame in ((['a'], ''), (['shoulder', 'j2', 'elbow_joint'], 'base_link'), (seven, 'b')):
        n = len(names)
        values = np.arange(3 * n, dtype=float).reshape(3, n) + 0.25

        def message(position, velocity, effort, names=names, frame=frame):
            header = types['std_msgs/msg/Header'](stamp=stamp_message(1_700_000_000_123_456_789), frame_id=frame)
            return bytes(typestore().serialize_cdr(types[JOINT_STATE](
                header=header, name=names, position=np.asarray(position, float), velocity=np.asarray(velocity, float),
                effort=np.asarray(effort, float)), JOINT_STATE))

        states, currents = split_effort([message(*values)])
        assert states == [message(values[0], values[1], [])]
        assert currents == [message([], [], values[2])]
        stamps, decoded, _ = decode_joint_states(currents, names)
        np.testing.assert_array_equal(decoded['effort'], values[2:3])
        assert np.all(np.isnan(decode_joint_states(states, names)[1]['effort']))
