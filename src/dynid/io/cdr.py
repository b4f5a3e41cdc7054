"""sensor_msgs/JointState in serialized form (little-endian CDR), a whole batch at a time.

A driver topic sends messages that differ only in their stamp and values: same frame id, same joint
names, same array lengths. Every field then sits at the same byte offset in every message, and a
batch decodes (or encodes) as the columns of one byte matrix, with no Python work per message.
That is what lets a node take a 1 kHz topic and a bag reader take millions of messages.

- :func:`typestore`: rosbags' ROS 2 Kilted type store, built on first use (writing needs it; reading
  and decoding do not: the names and values are taken from the bytes).
- :func:`joint_state_cdr`: one message, serialized by rosbags (the canonical bytes).
- :class:`JointStateEncoder`: a batch of messages of fixed names and array lengths, from arrays.
- :func:`decode_joint_states`: a batch of messages into stamps and (N, n) arrays.
- :func:`normalize_joint_states`: a batch as rclpy delivers it (``raw=True``) into canonical bytes:
  rmw serializations may leave garbage in alignment padding and append bytes after the message,
  which rosbags refuses; the canonical form zeroes the padding and cuts the tail.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

JOINT_STATE = 'sensor_msgs/msg/JointState'
FIELDS = ('position', 'velocity', 'effort')


@functools.cache
def typestore():
    """rosbags' ROS 2 Kilted type store (``rosbags.typesys.Typestore``), built on the first call.

    Building it imports rosbags' chain of stores (Jazzy back to Dashing: 0.2 s, more on a loaded
    machine), which reading a bag with embedded definitions never needs.
    """
    from rosbags.typesys import Stores, get_typestore
    return get_typestore(Stores.ROS2_KILTED)


def stamp_ns(stamp) -> int:
    """A builtin_interfaces/Time (a header's stamp; rclpy's or rosbags') in integer nanoseconds."""
    return int(stamp.sec) * 1_000_000_000 + int(stamp.nanosec)


def stamp_message(nanoseconds: int):
    """builtin_interfaces/Time (rosbags) of a stamp [ns]."""
    return typestore().types['builtin_interfaces/msg/Time'](sec=int(nanoseconds // 1_000_000_000),
                                                             nanosec=int(nanoseconds % 1_000_000_000))


def joint_state_cdr(stamp_ns: int, names, position, velocity, effort) -> bytes:
    """One sensor_msgs/JointState serialized by rosbags."""
    types = typestore().types
    message = types[JOINT_STATE](header=types['std_msgs/msg/Header'](stamp=stamp_message(stamp_ns), frame_id=''),
                                 name=list(names), position=np.asarray(position, dtype=float),
                                 velocity=np.asarray(velocity, dtype=float), effort=np.asarray(effort, dtype=float))
    return bytes(typestore().serialize_cdr(message, JOINT_STATE))


@dataclass(frozen=True)
class Layout:
    """Byte layout of a JointState: ``end`` of the message, alignment ``padding`` ranges, end of the
    names (``names_end``) and (count offset, data offset, count) of position, velocity, effort."""

    end: int
    padding: tuple[tuple[int, int], ...]
    names_end: int
    arrays: tuple[tuple[int, int, int], ...]


def _aligned(offset: int, size: int) -> int:
    """Offset rounded up to a multiple of size, counted from the payload start (after the 4-byte header)."""
    return 4 + -(-(offset - 4) // size) * size


def layout(raw) -> Layout:
    """The :class:`Layout` of one little-endian CDR JointState; ValueError when the bytes are not one."""
    size = len(raw)
    if size < 16 or raw[1] != 1:
        raise ValueError('not a little-endian CDR message')

    def u32(offset: int) -> int:
        if offset + 4 > size:
            raise ValueError('message truncated')
        return int.from_bytes(raw[offset:offset + 4], 'little')

    padding = []

    def align(offset: int, width: int) -> int:
        aligned = _aligned(offset, width)
        if aligned > offset:
            padding.append((offset, aligned))
        return aligned

    offset = 16 + u32(12)  # stamp (8 bytes from 4), frame_id (its length includes the NUL)
    offset = align(offset, 4)
    count = u32(offset)
    offset += 4
    if count > size:
        raise ValueError('bad name count')
    for _ in range(count):
        offset = align(offset, 4)
        offset += 4 + u32(offset)
    names_end = offset
    arrays = []
    for _ in FIELDS:
        offset = align(offset, 4)
        length = u32(offset)
        start = offset
        offset += 4
        if length:
            offset = align(offset, 8)
        arrays.append((start, offset, length))
        offset += 8 * length
    if offset > size:
        raise ValueError('message truncated')
    return Layout(offset, tuple(padding), names_end, tuple(arrays))


_LAYOUTS: dict[int, list[tuple[Layout, bytes, bytes]]] = {}  # by message size: recent layouts
_NAMES: dict[bytes, list[str]] = {}


def cached_layout(raw) -> Layout:
    """:func:`layout`, remembered: a message whose header, frame id, names and array lengths equal
    those of a message seen before has its layout (those bytes alone decide it)."""
    for shape, names, counts in _LAYOUTS.get(len(raw), ()):
        if raw[12:shape.names_end] == names and b''.join(raw[a:a + 4] for a, _, _ in shape.arrays) == counts \
                and raw[:4] == b'\x00\x01\x00\x00':
            return shape
    shape = layout(raw)
    recent = _LAYOUTS.setdefault(len(raw), [])
    recent.insert(0, (shape, bytes(raw[12:shape.names_end]), b''.join(bytes(raw[a:a + 4]) for a, _, _ in shape.arrays)))
    del recent[8:]
    return shape


def stamp_of(raw) -> int:
    """header.stamp [ns] of a serialized message that starts with a std_msgs/Header."""
    return int.from_bytes(raw[4:8], 'little', signed=True) * 1_000_000_000 + int.from_bytes(raw[8:12], 'little')


def normalize_joint_state_cdr(raw) -> tuple[int, bytes]:
    """(stamp [ns], canonical bytes) of one JointState as rclpy delivers it (module docstring).

    Raises ValueError for bytes that are not a little-endian JointState.
    """
    shape = layout(raw)
    data = bytearray(raw[:shape.end])
    for a, b in shape.padding:
        data[a:b] = bytes(b - a)
    return stamp_of(data), bytes(data)


def _byte_matrix(raws: list[bytes] | np.ndarray) -> tuple[np.ndarray, Layout] | None:
    """The messages (a list of bytes, or a uint8 matrix with one a row) as rows of one uint8 matrix cut
    to the message end, if they share one layout."""
    if isinstance(raws, np.ndarray):
        if raws.shape[0] == 0:
            return None
        first, matrix = raws[0].tobytes(), raws
    elif not raws or len({len(r) for r in raws}) != 1:
        return None
    else:
        first, matrix = raws[0], None
    try:
        shape = cached_layout(first)
    except ValueError:
        return None
    if matrix is None:
        matrix = np.frombuffer(b''.join(raws), dtype=np.uint8).reshape(len(raws), -1)
    # Header, frame id, names and array lengths must equal the first message's.
    fixed = matrix[:, _fixed_columns(shape)]
    if np.any(fixed[1:] != fixed[0]):
        return None
    return matrix[:, :shape.end], shape


@functools.lru_cache(maxsize=64)
def _fixed_columns(shape: Layout) -> np.ndarray:
    """Byte columns that every message of one layout shares: header, frame id, names, array lengths."""
    ranges = [(0, 4), (12, shape.names_end), *((start, start + 4) for start, _, _ in shape.arrays)]
    return np.concatenate([np.arange(a, b) for a, b in ranges])


def _stamps(matrix: np.ndarray) -> np.ndarray:
    return (np.ascontiguousarray(matrix[:, 4:8]).view('<i4')[:, 0].astype(np.int64) * 1_000_000_000
            + np.ascontiguousarray(matrix[:, 8:12]).view('<u4')[:, 0])


def decode_uniform(raws: list[bytes] | np.ndarray):
    """(stamps (N,) [ns], [position, velocity, effort] each (N, count) or None) when every message
    shares one byte layout (module docstring), else None."""
    found = _byte_matrix(raws)
    if found is None:
        return None
    matrix, shape = found
    values = [np.ascontiguousarray(matrix[:, data:data + 8 * length]).view('<f8') if length else None
              for _, data, length in shape.arrays]
    return _stamps(matrix), values


def _strings(raw, shape: Layout) -> tuple[str, list[str]]:
    """(frame id, joint names) of a JointState of layout ``shape``; UnicodeDecodeError (a ValueError)
    for bytes that are not UTF-8. A CDR string is its length (counting the closing NUL), then its bytes."""

    def string(offset: int) -> tuple[str, int]:
        length = int.from_bytes(raw[offset:offset + 4], 'little')
        return bytes(raw[offset + 4:offset + 4 + max(length - 1, 0)]).decode(), offset + 4 + length

    frame_id, offset = string(12)
    offset = _aligned(offset, 4)
    count, offset = int.from_bytes(raw[offset:offset + 4], 'little'), offset + 4
    names = []
    for _ in range(count):
        name, offset = string(_aligned(offset, 4))
        names.append(name)
    return frame_id, names


def names_of(raw) -> list[str]:
    """The joint names of one serialized JointState (remembered by their bytes), read from the bytes."""
    shape = cached_layout(raw)
    key = bytes(raw[12:shape.names_end])
    if key not in _NAMES:
        if len(_NAMES) > 64:
            _NAMES.clear()
        _NAMES[key] = _strings(raw, shape)[1]
    return _NAMES[key]


def decode_joint_states(raws: list[bytes] | np.ndarray, joint_names) -> tuple[np.ndarray, dict[str, np.ndarray], int]:
    """Stamps (M,) [ns] and {field: (M, n)} in ``joint_names`` order of the messages that name them all.

    ``raws``: a list of messages, or a uint8 matrix with one message a row (messages of one length, as
    :func:`dynid.io.mcap_messages.topic_messages` gives them); canonical or as rclpy delivers them
    (padding garbage, trailing bytes: see :func:`normalize_joint_states`). A field a message leaves
    empty is NaN. Returns also the number of messages skipped (malformed, or lacking one of the
    joints). Uniform batches decode without per-message work.
    """
    names = list(joint_names)
    n = len(names)
    fast = decode_uniform(raws)
    if fast is not None:
        message_names = names_of(raws[0].tobytes() if isinstance(raws, np.ndarray) else raws[0])
        if all(name in message_names for name in names):
            index = [message_names.index(name) for name in names]
            stamps, values = fast
            return stamps, {field: np.full((stamps.size, n), np.nan) if v is None or v.shape[1] != len(message_names)
                            else v[:, index] for field, v in zip(FIELDS, values, strict=True)}, 0
    if isinstance(raws, np.ndarray):  # one message at a time below
        raws = [row.tobytes() for row in raws]
    stamps, rows, skipped = [], {field: [] for field in FIELDS}, 0
    for raw in raws:
        try:
            shape = layout(raw)
            message_names = _strings(raw, shape)[1]
        except ValueError:
            skipped += 1
            continue
        if not all(name in message_names for name in names):
            skipped += 1
            continue
        index = [message_names.index(name) for name in names]
        stamps.append(stamp_of(raw))
        for field, (_, data, length) in zip(FIELDS, shape.arrays, strict=True):
            values = np.frombuffer(raw, dtype='<f8', count=length, offset=data)
            rows[field].append(values[index] if length == len(message_names) else np.full(n, np.nan))
    arrays = {field: np.array(rows[field], dtype=float).reshape(len(stamps), n) for field in FIELDS}
    return np.array(stamps, dtype=np.int64), arrays, skipped


def normalize_joint_states(raws: list[bytes]) -> tuple[np.ndarray, list[bytes], int]:
    """Stamps (M,) [ns] and canonical bytes of a batch as rclpy delivers it; malformed ones are skipped.

    Returns (stamps, messages, skipped). Uniform batches are normalized as one byte matrix.
    """
    found = _byte_matrix(raws)
    if found is not None:
        matrix, shape = found
        matrix = matrix.copy()
        for a, b in shape.padding:
            matrix[:, a:b] = 0
        return _stamps(matrix), [row.tobytes() for row in matrix], 0
    stamps, messages, skipped = [], [], 0
    for raw in raws:
        try:
            stamp, data = normalize_joint_state_cdr(raw)
        except ValueError:
            skipped += 1
            continue
        stamps.append(stamp)
        messages.append(data)
    return np.array(stamps, dtype=np.int64), messages, skipped


class JointStateEncoder:
    """Serializes batches of JointState messages with fixed ``names`` and fields (a driver topic).

    Args:
        names: joint names of every message.
        fields: which of position, velocity, effort carry one value per joint (the others are empty).
    """

    def __init__(self, names, fields=FIELDS) -> None:
        self.names = list(names)
        self.fields = tuple(fields)
        unknown = set(self.fields) - set(FIELDS)
        if unknown:
            raise ValueError(f'unknown JointState fields {sorted(unknown)}')
        n = len(self.names)
        arrays = (np.zeros(n) if field in self.fields else [] for field in FIELDS)
        self.template = np.frombuffer(joint_state_cdr(0, self.names, *arrays), dtype=np.uint8)
        shape = layout(self.template.tobytes())
        self.offsets = {f: data for f, (_, data, _) in zip(FIELDS, shape.arrays, strict=True) if f in self.fields}

    def encode(self, stamps_ns: np.ndarray, **values: np.ndarray) -> list[bytes]:
        """One message per stamp; ``values`` gives a (K, n) array for each of the encoder's fields."""
        stamps = np.asarray(stamps_ns, dtype=np.int64).reshape(-1)
        k, n = stamps.size, len(self.names)
        matrix = np.tile(self.template, (k, 1))
        seconds, nanoseconds = np.divmod(stamps, 1_000_000_000)
        matrix[:, 4:8] = seconds.astype('<i4').view(np.uint8).reshape(k, 4)
        matrix[:, 8:12] = nanoseconds.astype('<u4').view(np.uint8).reshape(k, 4)
        for field, offset in self.offsets.items():
            array = np.ascontiguousarray(values[field], dtype='<f8').reshape(k, n)
            matrix[:, offset:offset + 8 * n] = array.view(np.uint8)
        return [row.tobytes() for row in matrix]


def split_effort(messages: list[bytes]) -> tuple[list[bytes], list[bytes]]:
    """Canonical JointStates whose ``effort`` is motor current, as the contract's two topics.

    A driver such as Universal Robots' reports motor current [A] in joint_states' effort; the contract
    (docs/contract.md) carries current on ``joint_currents`` and leaves joint_states' effort for joint
    torque. Returns (the messages with an empty effort array, messages with the same header and names,
    empty position and velocity and the effort values), byte for byte otherwise: no value is converted.
    ``messages`` must be canonical (:func:`normalize_joint_states`).
    """
    states, currents = [], []
    for raw in messages:
        shape = cached_layout(raw)
        (position_count, _, _), _, (effort_count, effort_data, length) = shape.arrays
        empty = (0).to_bytes(4, 'little')
        states.append(bytes(raw[:effort_count]) + empty)
        # position and velocity counts (both 0), then the effort count, then the values 8-byte aligned
        head = bytes(raw[:position_count]) + empty + empty + length.to_bytes(4, 'little')
        if length:
            head += bytes(_aligned(len(head), 8) - len(head))
        currents.append(head + bytes(raw[effort_data:effort_data + 8 * length]))
    return states, currents
