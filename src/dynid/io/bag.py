"""rosbag2 (MCAP) recordings of the topic contract, written and read with the rosbags library.

Topics (DESIGN.md §5; in a bag they carry the recording's namespace, default ``/``):

=================================  =======================  =============================================
topic                              type                     content
=================================  =======================  =============================================
``joint_states``                   sensor_msgs/JointState   link q [rad], q̇ [rad/s], effort = joint torque [N·m]
``motor_states``                   sensor_msgs/JointState   rotor θ and θ̇ in link units [rad, rad/s]
``joint_currents``                 sensor_msgs/JointState   motor current [A] in ``effort``
``joint_temperatures``             sensor_msgs/JointState   temperature [°C] in ``effort``
``joint_trajectory_controller/     trajectory_msgs/         reference, in chunks (time_from_start
joint_trajectory``                 JointTrajectory          relative to each chunk's header stamp)
=================================  =======================  =============================================

Every message of one sample carries the same ``header.stamp``. Reading joins the streams by stamp
(never by arrival order) and maps joints by name (never by index); temperatures, which may come
slower, are held from their latest sample.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
from rosbags.highlevel import AnyReader
from rosbags.rosbag2 import StoragePlugin, Writer
from rosbags.typesys import Stores, get_typestore

from dynid.errors import InputError
from dynid.io.dataset import Dataset

TYPESTORE = get_typestore(Stores.ROS2_KILTED)
JOINT_STATE = 'sensor_msgs/msg/JointState'
JOINT_TRAJECTORY = 'trajectory_msgs/msg/JointTrajectory'
STATE_TOPICS = {'joint_states': ('q', 'dq', 'tau'), 'motor_states': ('theta', 'dtheta', None),
                'joint_currents': (None, None, 'current'), 'joint_temperatures': (None, None, 'temperature')}
REFERENCE_TOPIC = 'joint_trajectory_controller/joint_trajectory'

_types = TYPESTORE.types
_Header, _Time, _Duration = _types['std_msgs/msg/Header'], _types['builtin_interfaces/msg/Time'], \
    _types['builtin_interfaces/msg/Duration']
_JointState = _types[JOINT_STATE]
_JointTrajectory = _types[JOINT_TRAJECTORY]
_TrajectoryPoint = _types['trajectory_msgs/msg/JointTrajectoryPoint']


def joint_state_cdr(stamp_ns: int, names, position, velocity, effort) -> bytes:
    """A sensor_msgs/JointState serialized by rosbags (rclpy's CDR carries padding rosbags refuses)."""
    message = _JointState(header=_Header(stamp=_stamp(stamp_ns), frame_id=''), name=list(names),
                          position=np.asarray(position, dtype=float), velocity=np.asarray(velocity, dtype=float),
                          effort=np.asarray(effort, dtype=float))
    return bytes(TYPESTORE.serialize_cdr(message, JOINT_STATE))


def topic_name(namespace: str, topic: str) -> str:
    """Absolute topic name of a contract topic under a namespace ('' or '/' for the root)."""
    return '/' + '/'.join(part for part in (namespace.strip('/'), topic) if part)


def _stamp(nanoseconds: int):
    return _Time(sec=int(nanoseconds // 1_000_000_000), nanosec=int(nanoseconds % 1_000_000_000))


def write_bag(path: str | os.PathLike, dataset: Dataset, reference: dict | None = None,
              namespace: str = '', start_ns: int = 0, chunk_s: float = 1.0) -> Path:
    """Write a dataset (and optionally its reference) as a rosbag2 directory with MCAP storage.

    Args:
        path: bag directory to create; it must not exist (nothing is overwritten).
        dataset: the recording; stamps are ``start_ns`` + t [s].
        reference: optional {'t' (M,), 'q', 'dq', 'ddq', 'effort' (M, n)} written as JointTrajectory
            chunks of ``chunk_s`` seconds on the reference topic.
        namespace: namespace of the topics.

    Returns:
        The bag directory.
    """
    path = Path(path)
    if path.exists():
        raise InputError(f'{path} exists; refusing to overwrite a recording (choose a new path)')
    stamps = start_ns + np.round(dataset.t * 1e9).astype(np.int64)
    names = list(dataset.joint_names)
    empty = np.zeros(0)
    with Writer(path, version=9, storage_plugin=StoragePlugin.MCAP) as writer:
        connections = {}
        for topic, fields in STATE_TOPICS.items():
            signals = [getattr(dataset, f) for f in fields if f is not None]
            if all(s is not None for s in signals):
                connections[topic] = (writer.add_connection(topic_name(namespace, topic), JOINT_STATE,
                                                            typestore=TYPESTORE), fields)
        chunks = _reference_chunks(reference, names, start_ns, chunk_s) if reference is not None else []
        reference_connection = writer.add_connection(topic_name(namespace, REFERENCE_TOPIC), JOINT_TRAJECTORY,
                                                     typestore=TYPESTORE) if chunks else None
        next_chunk = 0
        for k, stamp in enumerate(stamps):
            while next_chunk < len(chunks) and chunks[next_chunk][0] <= stamp:
                chunk_stamp, message = chunks[next_chunk]
                writer.write(reference_connection, int(chunk_stamp), TYPESTORE.serialize_cdr(message, JOINT_TRAJECTORY))
                next_chunk += 1
            header = _Header(stamp=_stamp(stamp), frame_id='')
            for connection, fields in connections.values():
                arrays = [empty if f is None else getattr(dataset, f)[k] for f in fields]
                message = _JointState(header=header, name=names, position=arrays[0], velocity=arrays[1],
                                      effort=arrays[2])
                writer.write(connection, int(stamp), TYPESTORE.serialize_cdr(message, JOINT_STATE))
    return path


def _reference_chunks(reference: dict, names: list[str], start_ns: int, chunk_s: float) -> list:
    t = np.asarray(reference['t'], dtype=float)
    chunks = []
    edges = np.arange(t[0], t[-1] + chunk_s, chunk_s)
    for begin in edges:
        inside = np.flatnonzero((t >= begin) & (t < begin + chunk_s))
        if inside.size == 0:
            continue
        chunk_start = start_ns + int(round(t[inside[0]] * 1e9))
        points = []
        for i in inside:
            offset = int(round((t[i] - t[inside[0]]) * 1e9))
            points.append(_TrajectoryPoint(
                positions=reference['q'][i], velocities=reference['dq'][i], accelerations=reference['ddq'][i],
                effort=reference['effort'][i],
                time_from_start=_Duration(sec=offset // 1_000_000_000, nanosec=offset % 1_000_000_000)))
        chunks.append((chunk_start, _JointTrajectory(header=_Header(stamp=_stamp(chunk_start), frame_id=''),
                                                     joint_names=names, points=points)))
    return chunks


class _StateStream:
    """Collects one JointState topic: stamps and position/velocity/effort in the requested joint order."""

    def __init__(self) -> None:
        self.stamps: list[int] = []
        self.rows: dict[str, list] = {'position': [], 'velocity': [], 'effort': []}
        self._names: tuple | None = None
        self._index: list[int] | None = None

    def add(self, message, names: list[str], counters: dict) -> None:
        message_names = tuple(message.name)
        if message_names != self._names:  # joint order rarely changes: map it once
            self._names = message_names
            try:
                self._index = [message_names.index(name) for name in names]
            except ValueError:
                self._index = None
        if self._index is None:
            counters['mismatched_names'] = counters.get('mismatched_names', 0) + 1
            return
        self.stamps.append(message.header.stamp.sec * 1_000_000_000 + message.header.stamp.nanosec)
        for field, rows in self.rows.items():
            values = getattr(message, field)
            rows.append(values[self._index] if len(values) == len(message_names) else None)

    def arrays(self, n: int):
        def stack(rows):
            if all(r is None for r in rows):
                return np.full((len(rows), n), np.nan)
            return np.array([np.full(n, np.nan) if r is None else r for r in rows], dtype=float)

        return np.array(self.stamps, dtype=np.int64), {k: stack(v) for k, v in self.rows.items()}


def _cdr_align(offset: int, size: int) -> int:
    """Offset rounded up to a multiple of size, counted from the payload start (after the 4-byte header)."""
    return 4 + -(-(offset - 4) // size) * size


def _joint_state_layout(raw) -> tuple[int, list[tuple[int, int]], int, list[tuple[int, int, int]]]:
    """Byte layout of one little-endian CDR sensor_msgs/JointState.

    Returns (end of the message, alignment padding ranges, end of the names, [(length offset, data
    offset, count) of position, velocity, effort]). Raises ValueError when the bytes are not one.
    """
    size = len(raw)
    if size < 16 or raw[1] != 1:
        raise ValueError('not a little-endian CDR message')

    def u32(offset: int) -> int:
        if offset + 4 > size:
            raise ValueError('message truncated')
        return int.from_bytes(raw[offset:offset + 4], 'little')

    padding = []

    def align(offset: int, width: int) -> int:
        aligned = _cdr_align(offset, width)
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
    for _ in range(3):
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
    return offset, padding, names_end, arrays


def normalize_joint_state_cdr(raw) -> tuple[int, bytes]:
    """(stamp [ns], canonical bytes) of a JointState as rclpy delivers it serialized (``raw=True``).

    rmw serializations may leave garbage in alignment padding and append bytes after the message;
    rosbags refuses the latter. The canonical form zeroes the padding and cuts the tail, so recorded
    bags are byte-identical to what :func:`joint_state_cdr` writes. Raises ValueError for bytes that
    are not a little-endian JointState.
    """
    end, padding, _, _ = _joint_state_layout(raw)
    data = bytearray(raw[:end])
    for a, b in padding:
        data[a:b] = bytes(b - a)
    stamp = int.from_bytes(data[4:8], 'little', signed=True) * 1_000_000_000 + int.from_bytes(data[8:12], 'little')
    return stamp, bytes(data)


def _uniform_joint_states(raws: list[bytes]):
    """Vectorized decoding of JointState messages that share one byte layout, or None.

    Messages of one driver topic usually differ only in their stamp and values: same frame id, same
    names, same array lengths. Then every field sits at the same byte offset in every message, and the
    whole topic decodes as columns of one byte matrix. Anything else returns None (use rosbags).
    """
    if not raws or len({len(r) for r in raws}) != 1:
        return None
    try:
        end, _, names_end, layout = _joint_state_layout(raws[0])
    except ValueError:
        return None
    if end != len(raws[0]):
        return None
    matrix = np.frombuffer(b''.join(raws), dtype=np.uint8).reshape(len(raws), end)
    counts = [np.arange(start, start + 4) for start, _, _ in layout]
    constant = np.concatenate([np.arange(12, names_end), *counts])  # frame id, names and array lengths
    if np.any(matrix[:, constant] != matrix[0, constant]):
        return None
    stamps = (np.ascontiguousarray(matrix[:, 4:8]).view('<i4')[:, 0].astype(np.int64) * 1_000_000_000
              + np.ascontiguousarray(matrix[:, 8:12]).view('<u4')[:, 0])
    values = [np.ascontiguousarray(matrix[:, data:data + 8 * length]).view('<f8') if length else None
              for _, data, length in layout]
    return stamps, values


def _read_streams(reader: AnyReader, connections: dict, names: list[str] | None, counters: dict):
    """One pass over the bag(s); ``connections`` maps topic → its connections (one per bag segment).

    Returns {topic: (stamps, rows)} and the joint names used.
    """
    raw_messages = {topic: [] for topic in connections}
    by_id = {id(c): t for t, group in connections.items() for c in group}
    for connection, _, raw in reader.messages(connections=[c for group in connections.values() for c in group]):
        raw_messages[by_id[id(connection)]].append(bytes(raw))
    streams = {}
    for topic, raws in raw_messages.items():
        connection = connections[topic][0]
        if names is None and raws:
            names = list(reader.deserialize(raws[0], connection.msgtype).name)
        fast = _uniform_joint_states(raws)
        if fast is not None and names is not None:
            message_names = list(reader.deserialize(raws[0], connection.msgtype).name)
            if all(name in message_names for name in names):
                index = [message_names.index(name) for name in names]
                stamps, values = fast
                streams[topic] = (stamps, {field: np.full((len(raws), len(names)), np.nan) if v is None
                                           or v.shape[1] != len(message_names) else v[:, index]
                                           for field, v in zip(('position', 'velocity', 'effort'), values,
                                                               strict=True)})
                continue
        stream = _StateStream()
        for raw in raws:
            stream.add(reader.deserialize(raw, connection.msgtype), names or [], counters)
        streams[topic] = stream.arrays(len(names or []))
    return streams, names or []


def read_bag(path, joint_names=None, namespace: str = '') -> Dataset:
    """Read the contract topics of a rosbag2 (MCAP or sqlite3) into a :class:`Dataset`.

    ``path`` is a bag directory, or a list of them read as one bag (the segments of a recording, so
    that streams join across segment boundaries).

    Time is joint_states' stamp minus the first stamp [s]. Motor states and currents are joined by
    exact stamp (samples without a partner are dropped); temperatures are held from their latest
    stamp at or before each sample. Joints are taken by name (``joint_names``, default those of the
    first joint_states message); messages that lack one of them are skipped and counted in
    ``source['skipped']``.
    """
    paths = [Path(p) for p in path] if isinstance(path, (list, tuple)) else [Path(path)]
    if not paths:
        raise InputError('no bag given')
    for bag in paths:
        if not bag.exists():
            raise InputError(f'bag {bag} does not exist')
    path = paths[0] if len(paths) == 1 else paths[0].parent
    reader = AnyReader(paths, default_typestore=TYPESTORE)
    try:
        reader.open()
    except Exception as error:  # rosbags raises several unrelated types for broken bags
        raise InputError(f'cannot open bag {path}: {" ".join(str(error).split())}') from None
    counters: dict[str, int] = {}
    try:
        by_topic: dict[str, list] = {}
        for connection in reader.connections:
            by_topic.setdefault(connection.topic, []).append(connection)
        main = topic_name(namespace, 'joint_states')
        if main not in by_topic:
            raise InputError(f'bag {path} has no topic {main} (topics: {sorted(by_topic)})')
        wanted = {topic: topic_name(namespace, topic) for topic in STATE_TOPICS}
        connections = {topic: by_topic[name] for topic, name in wanted.items() if name in by_topic}
        names = None if joint_names is None else list(joint_names)
        streams, names = _read_streams(reader, connections, names, counters)
        stamps, main_rows = streams['joint_states']
        if stamps.size < 2:
            reason = (f'its joint_states messages do not name all of {names}'
                      if counters.get('mismatched_names') else 'fewer than 2 usable messages')
            raise InputError(f'bag {path}: {main}: {reason}')
        order = np.argsort(stamps, kind='stable')
        stamps = stamps[order]
        keep = np.concatenate([[True], np.diff(stamps) > 0])  # duplicate stamps: keep the first
        signals = {'q': main_rows['position'][order][keep], 'dq': main_rows['velocity'][order][keep],
                   'tau': main_rows['effort'][order][keep]}
        stamps = stamps[keep]
        valid = np.ones(stamps.size, dtype=bool)
        for topic in ('motor_states', 'joint_currents'):
            if topic not in streams:
                continue
            other_stamps, rows = streams[topic]
            matched = other_stamps.size > 0
            position = np.clip(np.searchsorted(other_stamps, stamps), 0, max(other_stamps.size - 1, 0))
            found = (other_stamps[position] == stamps) if matched else np.zeros(stamps.size, dtype=bool)
            valid &= found
            for field, target in zip(('position', 'velocity', 'effort'), STATE_TOPICS[topic], strict=True):
                if target is not None:
                    signals[target] = rows[field][position] if matched else None
        if 'joint_temperatures' in streams:
            temperature_stamps, rows = streams['joint_temperatures']
            latest = np.searchsorted(temperature_stamps, stamps, side='right') - 1
            valid &= latest >= 0
            signals['temperature'] = rows['effort'][np.clip(latest, 0, None)]
        topics = sorted(by_topic)
    except InputError:
        raise
    except Exception as error:  # a truncated or corrupt file fails while reading messages
        raise InputError(f'cannot read bag {path}: {" ".join(str(error).split())}') from None
    finally:
        reader.close()
    if not np.any(valid):
        raise InputError(f'bag {path}: no joint_states sample has matching motor_states/joint_currents stamps')
    for key in list(signals):
        value = signals[key]
        if value is not None and np.all(np.isnan(value)):
            signals[key] = None  # field not published (e.g. empty effort arrays)
        elif value is not None:
            signals[key] = value[valid]
    t = (stamps[valid] - stamps[valid][0]) / 1e9
    source = {'bag': str(path), 'topics': topics, 'start_ns': int(stamps[valid][0]),
              'skipped': counters, 'dropped_unmatched': int(np.count_nonzero(~valid))}
    return Dataset(tuple(names), t, source=source, **signals)
