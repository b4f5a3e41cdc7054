"""read_bag's lean MCAP pass (dynid.io.mcap_messages) gives what rosbags' reader gives, or hands over to it."""

import struct

import numpy as np
import pytest
from rosbags.rosbag2 import StoragePlugin, Writer

import dynid.io.bag as bag
from dynid.io.bag import JOINT_STATE, read_bag, write_bag
from dynid.io.cdr import typestore
from dynid.io.dataset import Dataset
from dynid.io.mcap_messages import MAGIC, UnsupportedError, topic_messages

JOINTS = ('a', 'b', 'c')


def _dataset(samples, seed):
    random = np.random.default_rng(seed)
    signals = {name: random.normal(size=(samples, 3)) for name in ('q', 'dq', 'tau', 'theta', 'dtheta', 'current')}
    return Dataset(JOINTS, np.arange(samples) / 1000.0, temperature=25 + random.random((samples, 3)), **signals)


def _both_ways(monkeypatch, path, **options):
    """(read_bag through the MCAP pass, read_bag through rosbags, how often the MCAP pass finished)."""
    finished = []

    def counted(*args):
        decoded = topic_messages(*args)
        finished.append(True)
        return decoded

    monkeypatch.setattr(bag, 'topic_messages', counted)
    monkeypatch.setattr(bag, '_DECODE_BATCH', 700)  # several batches per topic
    lean = read_bag(path, **options)
    monkeypatch.setattr(bag, '_mcap_files', lambda reader: None)
    return lean, read_bag(path, **options), len(finished)


def _assert_equal(lean, reference):
    assert lean.joint_names == reference.joint_names
    assert lean.source == reference.source
    for name in ('t', 'q', 'dq', 'tau', 'theta', 'dtheta', 'current', 'temperature'):
        assert np.array_equal(getattr(lean, name), getattr(reference, name)), name


def test_same_arrays_as_rosbags_for_a_bag_and_for_segments(tmp_path, monkeypatch):
    write_bag(tmp_path / 'one', _dataset(3000, 0))  # > 1 MiB: several chunks
    lean, reference, finished = _both_ways(monkeypatch, tmp_path / 'one')
    assert finished == 1 and lean.t.size == 3000
    _assert_equal(lean, reference)
    monkeypatch.undo()
    segments = tmp_path / 'segments'
    segments.mkdir()
    for k in range(2):  # two segments of one recording: a folder of .mcap files without metadata
        write_bag(tmp_path / f'part{k}', _dataset(1500, k + 1), namespace='/arm', start_ns=k * 1_500_000_000)
        (tmp_path / f'part{k}' / f'part{k}.mcap').rename(segments / f'part_{k}.mcap')
    lean, reference, finished = _both_ways(monkeypatch, segments, namespace=None)
    assert finished == 1 and lean.t.size == 3000
    _assert_equal(lean, reference)


def test_messages_stored_out_of_time_order_are_read_by_rosbags(tmp_path, monkeypatch):
    names = list(JOINTS)
    with Writer(tmp_path / 'shuffled', version=9, storage_plugin=StoragePlugin.MCAP) as writer:
        connection = writer.add_connection('/joint_states', JOINT_STATE, typestore=typestore())
        for k in (3, 1, 2, 0, 4, 5):  # rosbags yields these in log-time order
            values = np.full(3, float(k))
            message = typestore().types[JOINT_STATE](
                header=typestore().types['std_msgs/msg/Header'](
                    stamp=typestore().types['builtin_interfaces/msg/Time'](sec=0, nanosec=k * 1000), frame_id=''),
                name=names, position=values, velocity=values, effort=values)
            writer.write(connection, k * 1000, typestore().serialize_cdr(message, JOINT_STATE))
    with pytest.raises(UnsupportedError, match='log-time order'):
        topic_messages([tmp_path / 'shuffled' / 'shuffled.mcap'], ['/joint_states'], 100, lambda topic, raws: raws)
    lean, reference, finished = _both_ways(monkeypatch, tmp_path / 'shuffled')
    assert finished == 0
    _assert_equal(lean, reference)
    assert np.array_equal(lean.q[:, 0], np.arange(6.0))


def _rewritten(source, target, compression='', compress=None, message_indexes=True, drop_first_entry=False):
    """``source`` with every chunk's records compressed and its message index records kept, dropped or
    missing their first entry (MCAP specification: Chunk, Message Index records)."""
    data, out, position = source.read_bytes(), bytearray(MAGIC), len(MAGIC)
    while position < len(data) - len(MAGIC):
        opcode, length = struct.unpack_from('<BQ', data, position)
        content = data[position + 9:position + 9 + length]
        position += 9 + length
        if opcode == 0x06 and compress is not None:
            name_length = struct.unpack_from('<I', content, 28)[0]
            records = compress(content[32 + name_length + 8:])
            content = (content[:28] + struct.pack('<I', len(compression)) + compression.encode()
                       + struct.pack('<Q', len(records)) + records)
        if opcode == 0x07 and not message_indexes:
            continue
        if opcode == 0x07 and drop_first_entry:
            channel, size = struct.unpack_from('<HI', content)
            content = struct.pack('<HI', channel, size - 16) + content[6 + 16:]
        out += struct.pack('<BQ', opcode, len(content)) + content
    target.write_bytes(bytes(out + MAGIC))


def test_compressed_chunks_and_message_indexes(tmp_path):
    from lz4.frame import compress as lz4_compress
    try:
        from compression import zstd
    except ImportError:
        try:
            from backports import zstd
        except ImportError:  # older rosbags bring zstandard instead
            import zstandard as zstd
    write_bag(tmp_path / 'plain', _dataset(2000, 3))
    plain = tmp_path / 'plain' / 'plain.mcap'
    topics = ['/joint_states', '/motor_states']

    def read(path, expected=None):  # each batch's bytes: a matrix of messages (one a row) or a list
        return topic_messages([path], topics, 500, lambda topic, raws: raws.tobytes() if isinstance(raws, np.ndarray)
                              else b''.join(raws), expected)

    expected = read(plain, {'/joint_states': 2000, '/motor_states': 2000})
    assert sum(len(b''.join(parts)) for parts in expected.values()) > 2000 * 2 * 100
    for compression, compress in (('zstd', zstd.compress), ('lz4', lz4_compress)):
        _rewritten(plain, tmp_path / f'{compression}.mcap', compression, compress)
        assert read(tmp_path / f'{compression}.mcap') == expected
    _rewritten(plain, tmp_path / 'walked.mcap', message_indexes=False)  # every record visited instead
    assert read(tmp_path / 'walked.mcap') == expected
    _rewritten(plain, tmp_path / 'partial.mcap', drop_first_entry=True)  # indexes that leave messages out
    with pytest.raises(UnsupportedError, match='message counts'):
        read(tmp_path / 'partial.mcap', {'/joint_states': 2000, '/motor_states': 2000})
    _rewritten(plain, tmp_path / 'brotli.mcap', 'brotli', lambda records: records)
    with pytest.raises(UnsupportedError, match='brotli'):
        read(tmp_path / 'brotli.mcap')


def test_messages_of_one_length_come_as_a_matrix_others_as_bytes(tmp_path, monkeypatch):
    write_bag(tmp_path / 'uniform', _dataset(2000, 4))
    kinds = topic_messages([tmp_path / 'uniform' / 'uniform.mcap'], ['/joint_states', '/motor_states'], 700,
                           lambda topic, raws: (type(raws), len(raws)))
    assert all(kind is np.ndarray for parts in kinds.values() for kind, _ in parts)
    assert [sum(count for _, count in parts) for parts in kinds.values()] == [2000, 2000]
    # Two layouts on one topic (frame ids of different lengths): lists of bytes, decoded message by message.
    names = list(JOINTS)
    types = typestore().types
    with Writer(tmp_path / 'mixed', version=9, storage_plugin=StoragePlugin.MCAP) as writer:
        connection = writer.add_connection('/joint_states', JOINT_STATE, typestore=typestore())
        for k in range(3000):
            values = np.full(3, float(k))
            header = types['std_msgs/msg/Header'](stamp=types['builtin_interfaces/msg/Time'](sec=0, nanosec=k * 1000),
                                                  frame_id='base_link' if k % 3 else 'a')
            message = types[JOINT_STATE](header=header, name=names, position=values, velocity=values, effort=values)
            writer.write(connection, k * 1000, typestore().serialize_cdr(message, JOINT_STATE))
    kinds = topic_messages([tmp_path / 'mixed' / 'mixed.mcap'], ['/joint_states'], 700,
                           lambda topic, raws: type(raws))
    assert set(kinds['/joint_states']) == {list}
    lean, reference, finished = _both_ways(monkeypatch, tmp_path / 'mixed')
    assert finished == 1
    _assert_equal(lean, reference)
    assert np.array_equal(lean.q[:, 0], np.arange(3000.0))
