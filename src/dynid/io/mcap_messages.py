"""The serialized messages of chosen topics in MCAP files, in one lean pass.

rosbags reads MCAP through several generator layers (a heap merge over chunks, a BytesIO and a
named tuple per message), which costs ~6 µs per message: 1.5 s of CPU for a 60 s recording of four
1 kHz topics. A bag reader that decodes whole batches (:mod:`dynid.io.cdr`) needs only each
message's bytes and log time, so this module walks the records itself (MCAP format specification,
foxglove/mcap ``specification/README.md``: an opcode byte and a uint64 length before every record;
messages at top level or inside chunks, which may be lz4 or zstd compressed).

rosbags stays the reader that opens and checks a recording and the fallback for what this module
does not read (sqlite3 storage, an unknown chunk compression, messages stored out of time order):
:func:`topic_messages` raises :class:`UnsupportedError` for those.
"""

from __future__ import annotations

import struct
from binascii import crc32
from collections.abc import Iterable
from pathlib import Path

import numpy as np

MAGIC = b'\x89MCAP0\r\n'
_SCHEMA, _CHANNEL, _MESSAGE, _CHUNK, _DATA_END, _FOOTER = 0x03, 0x04, 0x05, 0x06, 0x0F, 0x02
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
        except ImportError:  # Python < 3.14: the backport rosbags depends on
            from backports import zstd
        return lambda data, size: zstd.decompress(data)
    raise UnsupportedError(f'chunk compression {compression!r}')


class _TopicBatches:
    """Per topic: the message bytes and log times found so far, handed on in batches."""

    def __init__(self, topics: Iterable[str]) -> None:
        self.raws: dict[str, list[bytes]] = {topic: [] for topic in topics}
        self.log_times: dict[str, list[int]] = {topic: [] for topic in self.raws}
        self.channels: dict[int, str] = {}  # channel id → wanted topic, of the file being read

    def add_channel(self, record: memoryview) -> None:
        channel, _, length = _CHANNEL_HEAD.unpack_from(record)
        topic = bytes(record[8:8 + length]).decode()
        if topic in self.raws:
            self.channels[channel] = topic

    def walk(self, data: bytes, begin: int, end: int) -> None:
        """Register the channel and message records in data[begin:end] (whole records)."""
        channels, raws, log_times = self.channels, self.raws, self.log_times
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
                    raws[topic].append(data[body + 22:position])
                    log_times[topic].append(log_time)
            elif opcode == _CHANNEL:
                self.add_channel(view[body:position])
        if position != end:
            raise ValueError('truncated record')


def _records(path: Path, batches: _TopicBatches, batch_size: int, flush) -> None:
    """Read the data section of one MCAP file, calling ``flush(topic)`` when a topic holds batch_size messages."""
    batches.channels = {}
    with path.open('rb') as stream:
        stream.seek(len(MAGIC))
        while True:
            head = stream.read(9)
            if len(head) < 9:
                raise ValueError('file ends before its data-end record')
            opcode, length = _RECORD.unpack(head)
            if opcode in (_DATA_END, _FOOTER):
                return
            if opcode not in (_CHUNK, _CHANNEL, _MESSAGE):
                stream.seek(length, 1)
                continue
            content = stream.read(length)
            if len(content) != length:
                raise ValueError('truncated record')
            if opcode == _CHUNK:
                _, _, size, crc, name_length = _CHUNK_HEAD.unpack_from(content)
                compression = content[32:32 + name_length].decode()
                start = 32 + name_length + 8
                if compression:
                    records, start = _decompressor(compression)(content[start:], size), 0
                else:
                    records = content
                if len(records) - start != size or (crc and crc32(memoryview(records)[start:]) != crc):
                    raise ValueError('chunk size or checksum mismatch')
                batches.walk(records, start, len(records))
            else:  # a channel or a message outside chunks: walk it as a record of its own
                batches.walk(head + content, 0, 9 + length)
            for topic, raws in batches.raws.items():
                if len(raws) >= batch_size:
                    flush(topic)


def topic_messages(files: list[Path], topics: Iterable[str], batch_size: int, decode) -> dict[str, list]:
    """Decode the messages of ``topics`` in MCAP ``files`` (the segments of one recording, in time order).

    ``decode(topic, raws)`` is called with lists of at most ~``batch_size`` serialized messages of one
    topic, in log-time order (the order rosbags gives them), and returns an object the caller collects.
    Returns {topic: [decode results]}.

    Raises :class:`UnsupportedError` for a file this module does not read (not MCAP, an unknown chunk
    compression) or a topic whose messages are not stored in log-time order (rosbags sorts them);
    decode may have been called by then, so the caller discards its results. ValueError for a
    truncated or corrupt file.
    """
    batches = _TopicBatches(topics)
    for path in files:
        with Path(path).open('rb') as stream:
            if stream.read(len(MAGIC)) != MAGIC:
                raise UnsupportedError(f'{path} is not an MCAP file')
    decoded: dict[str, list] = {topic: [] for topic in batches.raws}
    latest = dict.fromkeys(batches.raws, -1)

    def flush(topic: str) -> None:
        times = np.array(batches.log_times[topic], dtype=np.int64)
        if times.size and (times[0] < latest[topic] or np.any(np.diff(times) < 0)):
            raise UnsupportedError(f'{topic}: messages not stored in log-time order')
        if times.size:
            latest[topic] = int(times[-1])
        decoded[topic].append(decode(topic, batches.raws[topic]))
        batches.raws[topic], batches.log_times[topic] = [], []

    for path in files:
        _records(Path(path), batches, batch_size, flush)
    for topic, raws in batches.raws.items():
        if raws or not decoded[topic]:
            flush(topic)
    return decoded
