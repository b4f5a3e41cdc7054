"""The serialized messages of chosen topics in MCAP files, in one lean pass.

rosbags reads MCAP through several generator layers (a heap merge over chunks, a BytesIO and a named
tuple per message), which costs microseconds of CPU per message: most of a second for a minute of four
1 kHz topics (benchmarks/README.md, "The figures behind the defaults"). A bag reader that decodes whole batches
(:mod:`dynid.io.cdr`) needs only each message's bytes and log time, so this module reads the records
itself (MCAP format specification, foxglove/mcap ``specification/README.md``: an opcode byte and a
uint64 length before every record; messages at top level or inside chunks, which may be lz4 or zstd
compressed). A chunk's messages are taken from the message index records that follow it (offsets of each
channel's messages, gathered with numpy), else by visiting its every record; the counts found are
checked against the recording's metadata.

rosbags stays the reader that opens and checks a recording and the fallback for what this module
does not read (sqlite3 storage, an unknown chunk compression, messages stored out of time order,
counts that differ): :func:`topic_messages` raises :class:`UnsupportedError` for those.
"""

from __future__ import annotations

import struct
from binascii import crc32
from collections.abc import Iterable
from pathlib import Path

import numpy as np

MAGIC = b'\x89MCAP0\r\n'
_CHANNEL, _MESSAGE, _CHUNK, _MESSAGE_INDEX, _DATA_END, _FOOTER = 0x04, 0x05, 0x06, 0x07, 0x0F, 0x02
_RECORD = struct.Struct('<BQ')         # opcode, content length
_CHANNEL_HEAD = struct.Struct('<HHI')  # id, schema id, topic length
_MESSAGE_HEAD = struct.Struct('<HIQQ')  # channel id, sequence, log time [ns], publish time [ns]
_CHUNK_HEAD = struct.Struct('<QQQII')  # start, end time, uncompressed size, crc, compression length


class UnsupportedError(Exception):
    """The file is not one this module reads (the caller uses rosbags instead)."""


def _decompressor(compression: str):
    if compression == '':
        return lambda data, size: data
    if compression == 'lz4':
        from lz4.frame import decompress  # rosbags' own dependency
        return lambda data, size: decompress(data)
    if compression == 'zstd':
        try:
            from compression import zstd
        except ImportError:  # Python < 3.14: the backport newer rosbags depend on, or the zstandard older ones do
            try:
                from backports import zstd
            except ImportError:
                import zstandard

                return lambda data, size: zstandard.ZstdDecompressor().decompress(data, max_output_size=size)
        return lambda data, size: zstd.decompress(data)
    raise UnsupportedError(f'chunk compression {compression!r}')


def _matrix(messages: list[bytes] | np.ndarray) -> list[bytes] | np.ndarray:
    """Messages of one length as a uint8 matrix with one a row; others as they are."""
    if isinstance(messages, np.ndarray) or not messages or len({len(m) for m in messages}) != 1:
        return messages
    return np.frombuffer(b''.join(messages), dtype=np.uint8).reshape(len(messages), -1)


class _TopicBatches:
    """Per topic: the messages and log times found so far, handed on in batches.

    ``parts[topic]`` is a list of (messages, log times): a uint8 matrix of equal-length messages (one a
    row) and an int64 array where a chunk's message index gave them, lists of bytes and ints where its
    records were walked.
    """

    def __init__(self, topics: Iterable[str]) -> None:
        self.parts: dict[str, list[tuple]] = {topic: [] for topic in topics}
        self.channels: dict[int, str] = {}  # channel id → wanted topic, of the file being read
        self.known: set[int] = set()  # every channel id of the file being read
        self.count = dict.fromkeys(self.parts, 0)

    def held(self, topic: str) -> int:
        return sum(len(times) for _, times in self.parts[topic])

    def take(self, topic: str) -> tuple[list[bytes] | np.ndarray, np.ndarray]:
        """(messages, log times [ns]) held for ``topic``, which then holds none: one matrix where every
        part is a matrix of one message length, else a list of bytes."""
        parts, self.parts[topic] = self.parts[topic], []
        times = np.concatenate([np.asarray(t, dtype=np.int64) for _, t in parts]) if parts else np.zeros(0, np.int64)
        pieces = [_matrix(messages) for messages, _ in parts]
        if pieces and all(isinstance(m, np.ndarray) for m in pieces) and len({m.shape[1] for m in pieces}) == 1:
            return (pieces[0] if len(pieces) == 1 else np.concatenate(pieces)), times
        messages = []
        for piece in pieces:
            messages.extend(piece if isinstance(piece, list) else (row.tobytes() for row in piece))
        return messages, times

    def add_channel(self, record: memoryview) -> None:
        channel, _, length = _CHANNEL_HEAD.unpack_from(record)
        topic = bytes(record[8:8 + length]).decode()
        self.known.add(channel)
        if topic in self.parts:
            self.channels[channel] = topic

    def indexed(self, data: bytes, begin: int, indexes: dict[int, np.ndarray]) -> bool:
        """Register the messages of wanted channels in a chunk's records data[begin:] from its message
        indexes ({channel: (k, 2) log time [ns], offset}), without visiting the other records. False
        (nothing registered) where the indexes name a channel not seen yet (its record is inside the
        chunk) or do not point at that channel's message records. Messages of one length (a driver's
        topic) are copied out as the rows of one matrix, with no Python work per message."""
        if not indexes or not set(indexes) <= self.known:
            return False
        array = np.frombuffer(data, dtype=np.uint8)
        found = []
        for channel, entries in indexes.items():
            topic = self.channels.get(channel)
            if topic is None:
                continue
            entries = entries[np.argsort(entries[:, 1], kind='stable')]  # file order, as a walk finds them
            at = begin + entries[:, 1].astype(np.int64)
            if at.size and (at.max() + 31 > array.size or np.any(array[at] != _MESSAGE)):
                return False
            head = array[at[:, None] + np.arange(1, 19)]  # length (8), channel (2), sequence (4), log time
            lengths = np.ascontiguousarray(head[:, :8]).view('<u8')[:, 0].astype(np.int64)
            if np.any(np.ascontiguousarray(head[:, 8:10]).view('<u2')[:, 0] != channel) or \
                    np.any(at + 9 + lengths > array.size) or np.any(lengths < 22):
                return False
            found.append((topic, entries[:, 0], at + 31, at + 9 + lengths))
        for topic, log_times, starts, ends in found:
            sizes = ends - starts
            if sizes.size and np.all(sizes == sizes[0]) and sizes[0] > 0:
                messages = np.lib.stride_tricks.sliding_window_view(array, int(sizes[0]))[starts]
            else:
                messages = [data[a:b] for a, b in zip(starts.tolist(), ends.tolist(), strict=True)]
            self.parts[topic].append((messages, log_times.astype(np.int64)))
        return True

    def walk(self, data: bytes, begin: int, end: int) -> None:
        """Register the channel and message records in data[begin:end] (whole records)."""
        channels, current = self.channels, {}
        view = memoryview(data)
        position = begin
        unpack_record, unpack_message = _RECORD.unpack_from, _MESSAGE_HEAD.unpack_from
        while position < end:
            opcode, length = unpack_record(data, position)
            body = position + 9
            position = body + length
            if opcode == _MESSAGE:
                channel, _, log_time, _ = unpack_message(data, body)
                topic = channels.get(channel)
                if topic is not None:
                    if topic not in current:
                        current[topic] = ([], [])
                        self.parts[topic].append(current[topic])
                    current[topic][0].append(data[body + 22:position])
                    current[topic][1].append(log_time)
            elif opcode == _CHANNEL:
                self.add_channel(view[body:position])
        if position != end:
            raise ValueError('truncated record')


def _chunk_records(content: bytes) -> tuple[bytes, int]:
    """(buffer, start) of a Chunk record's records, decompressed and checked."""
    _, _, size, crc, name_length = _CHUNK_HEAD.unpack_from(content)
    compression = content[32:32 + name_length].decode()
    start = 32 + name_length + 8
    if compression:
        records, start = _decompressor(compression)(content[start:], size), 0
    else:
        records = content
    if len(records) - start != size or (crc and crc32(memoryview(records)[start:]) != crc):
        raise ValueError('chunk size or checksum mismatch')
    return records, start


def _records(path: Path, batches: _TopicBatches, batch_size: int, flush) -> None:
    """Read the data section of one MCAP file, calling ``flush(topic)`` when a topic holds batch_size messages.

    A chunk's messages are found from the message index records that follow it where they allow
    (:meth:`_TopicBatches.indexed`), else by walking its records.
    """
    batches.channels, batches.known = {}, set()
    pending, indexes = None, {}

    def finish_chunk() -> None:
        records, start = pending
        if not batches.indexed(records, start, indexes):
            batches.walk(records, start, len(records))
        for topic in batches.parts:
            if batches.held(topic) >= batch_size:
                flush(topic)

    with path.open('rb') as stream:
        stream.seek(len(MAGIC))
        while True:
            head = stream.read(9)
            if len(head) < 9:
                raise ValueError('file ends before its data-end record')
            opcode, length = _RECORD.unpack(head)
            if opcode == _MESSAGE_INDEX and pending is not None:
                content = stream.read(length)
                if len(content) < 6:
                    raise ValueError('truncated record')
                channel, size = struct.unpack_from('<HI', content)
                indexes[channel] = np.frombuffer(content, dtype='<u8', count=2 * (size // 16), offset=6).reshape(-1, 2)
                continue
            if pending is not None:
                finish_chunk()
                pending, indexes = None, {}
            if opcode in (_DATA_END, _FOOTER):
                return
            if opcode not in (_CHUNK, _CHANNEL, _MESSAGE):
                stream.seek(length, 1)
                continue
            content = stream.read(length)
            if len(content) != length:
                raise ValueError('truncated record')
            if opcode == _CHUNK:
                pending = _chunk_records(content)
                continue
            batches.walk(head + content, 0, 9 + length)  # a channel or a message outside chunks


def topic_messages(files: list[Path], topics: Iterable[str], batch_size: int, decode,
                   expected: dict[str, int] | None = None, with_times: bool = False) -> dict[str, list]:
    """Decode the messages of ``topics`` in MCAP ``files`` (the segments of one recording, in time order).

    ``decode(topic, messages)`` is called with ~``batch_size`` (a chunk's worth more at most) serialized
    messages of one topic, in log-time order (the order rosbags gives them), and returns an object the
    caller collects: a uint8 matrix with one message a row where they have one length and the chunks'
    message indexes located them, else a list of bytes. Returns {topic: [decode results]}.

    ``expected``: {topic: message count} as the recording's metadata states it (rosbags' connections).
    ``with_times``: ``decode(topic, messages, log_times)``, the messages' log times [ns] (an int64 array) beside them.

    Raises :class:`UnsupportedError` for a file this module does not read (not MCAP, an unknown chunk
    compression), a topic whose messages are not stored in log-time order (rosbags sorts them) or
    whose count differs from ``expected`` (message indexes that leave messages out);
    decode may have been called by then, so the caller discards its results. ValueError for a
    truncated or corrupt file.
    """
    batches = _TopicBatches(topics)
    for path in files:
        with Path(path).open('rb') as stream:
            if stream.read(len(MAGIC)) != MAGIC:
                raise UnsupportedError(f'{path} is not an MCAP file')
    decoded: dict[str, list] = {topic: [] for topic in batches.parts}
    latest = dict.fromkeys(batches.parts, -1)

    def flush(topic: str) -> None:
        messages, times = batches.take(topic)
        if times.size and (times[0] < latest[topic] or np.any(np.diff(times) < 0)):
            raise UnsupportedError(f'{topic}: messages not stored in log-time order')
        if times.size:
            latest[topic] = int(times[-1])
        batches.count[topic] += len(times)
        decoded[topic].append(decode(topic, messages, times) if with_times else decode(topic, messages))

    for path in files:
        _records(Path(path), batches, batch_size, flush)
    for topic in batches.parts:
        if batches.held(topic) or not decoded[topic]:
            flush(topic)
    if expected is not None and any(batches.count[topic] != count for topic, count in expected.items()):
        raise UnsupportedError(f'message counts {batches.count} differ from the metadata\'s {expected}')
    return decoded
