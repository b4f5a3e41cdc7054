"""rosbag2 recordings (MCAP or sqlite3) of the topic contract, written and read with the rosbags library.

Topics (docs/contract.md; in a bag they carry the recording's namespace, default ``/``):

================================================  ===============  ==================================================
topic                                             type             content
================================================  ===============  ==================================================
``joint_states``                                  JointState       link q [rad], q̇ [rad/s], effort = joint torque
                                                                   [N·m] (or motor current [A], below)
``motor_states``                                  JointState       rotor θ and θ̇ in link units [rad, rad/s]
``joint_currents``                                JointState       motor current [A] in ``effort``
``joint_temperatures``                            JointState       temperature [°C] in ``effort``
``joint_trajectory_controller/joint_trajectory``  JointTrajectory  reference, in chunks (time_from_start relative
                                                                   to each chunk's header stamp), read back as
                                                                   the dataset's ``reference``
                                                                   (:mod:`dynid.io.trajectories`, which also
                                                                   reads a ``controller_state``)
================================================  ===============  ==================================================

(JointState: sensor_msgs/JointState; JointTrajectory: trajectory_msgs/JointTrajectory.)

Every message of one sample carries the same ``header.stamp``. Reading joins the streams by stamp
(never by arrival order) and maps joints by name (never by index); temperatures, which may come
slower, are held from their latest sample.

What is read as a recording (:func:`recording_files`): a rosbag2 directory (with ``metadata.yaml``),
a bare ``.mcap`` (or ``.db3``) file as Foxglove and other recorders write them, and a directory
holding such files without ``metadata.yaml`` (read as the segments of one recording, in name order).
Anything else (a CSV, an empty directory, a ROS 1 bag) is refused with a one-line reason.

What joint_states' effort holds is the reader's to be told (``joint_states_effort``, one of
:data:`dynid.io.EFFORT_MEANINGS`): joint torque [N·m] by default, as the contract says and the twin, Franka and
Gazebo publish; or motor current [A], as the Universal Robots driver publishes it (ur_robot_driver
reads RTDE's ``actual_current`` into the joint effort state). Read as current, the effort fills the
dataset's ``current``, as a ``joint_currents`` topic would, and the dataset has no joint torque; a
recording that also has ``joint_currents`` is refused rather than guessed at.
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
from rosbags.highlevel import AnyReader, AnyReaderError
from rosbags.rosbag2 import StoragePlugin, Writer
from rosbags.rosbag2.storage_mcap import McapReader

from dynid.errors import InputError, checked_choice
from dynid.files import written
from dynid.io import EFFORT_MEANINGS, STORAGES, TORQUE_MEANINGS, rtde
from dynid.io.cdr import (
    FIELDS,
    JOINT_STATE,
    JointStateEncoder,
    decode_joint_states,
    names_of,
    stamp_message,
    typestore,
)
from dynid.io.dataset import Dataset, Reference
from dynid.io.effort_record import EFFORT_RECORD_KEY, ROBOT_PAYLOAD_KEY, effort_record_value
from dynid.io.mcap_messages import UnsupportedError, topic_messages
from dynid.io.storage import recording_files
from dynid.io.trajectories import REFERENCE_TOPIC, recorded_reference, recorded_trajectory, reference_topic_kind
from dynid.model.naming import match_joint_names

JOINT_TRAJECTORY = 'trajectory_msgs/msg/JointTrajectory'
STATE_TOPICS = {'joint_states': ('q', 'dq', 'tau'), 'motor_states': ('theta', 'dtheta', None),
                'joint_currents': (None, None, 'current'), 'joint_temperatures': (None, None, 'temperature')}
#: rosbag2 storage formats written (both are read, as rosbags reads them).
WRITE_BLOCK = 1000  # samples serialized at once by write_bag


def topic_name(namespace: str, topic: str) -> str:
    """Absolute topic name of a contract topic under a namespace ('' or '/' for the root)."""
    return '/' + '/'.join(part for part in (namespace.strip('/'), topic) if part)


def write_bag(path: str | os.PathLike, dataset: Dataset, reference: dict | None = None,
              namespace: str = '', start_ns: int = 0, chunk_s: float = 1.0, storage: str = 'mcap') -> Path:
    """Write a dataset (and optionally its reference) as a rosbag2 directory with MCAP (default) or sqlite3 storage.

    Args:
        path: bag directory to create; it must not exist (nothing is overwritten).
        dataset: the recording; stamps are ``start_ns`` + t [s]. joint_states is always written (with
            empty ``effort`` arrays when the dataset has no joint torque, e.g. a current-only log); the
            other topics where the dataset has their signals.
        reference: optional {'t' (M,), 'q', 'dq', 'ddq', 'effort' (M, n)} written as JointTrajectory
            chunks of ``chunk_s`` seconds on the reference topic (one point a sample: :func:`read_bag` gives the
            values back at the samples); default: the dataset's own (:attr:`Dataset.reference`), where it has one.
            A commanded current has no place in a JointTrajectory and is not written.
        namespace: namespace of the topics.
        storage: one of :data:`STORAGES`: ``mcap`` (rosbag2's default since Iron) or ``sqlite3`` (``.db3``, the
            default of older ROS 2 releases); both hold the same messages and read back the same.

    Returns:
        The bag directory.
    """
    checked_choice('storage', storage, STORAGES)
    path = Path(path)
    if path.exists():
        raise InputError(f'{path} exists; refusing to overwrite a recording (choose a new path)')
    stamps = bag_stamps(dataset.t, start_ns, path)
    if reference is None and dataset.reference is not None:
        reference = {'t': dataset.t, **dataset.reference.signals()}
    with written(path) as target:  # whole or not at all: a failure leaves no partial bag
        _write_messages(target, dataset, stamps, reference, namespace, start_ns, chunk_s, storage)
    return path


def bag_stamps(t: np.ndarray, start_ns: int, path: str | os.PathLike) -> np.ndarray:
    """The (N,) int64 stamps [ns since 1970] ``start_ns`` + t [s] of a recording written to ``path``, checked:
    InputError when a time is not finite, a stamp lies before 1970 (below 0) or beyond 2262 (int64), or two
    samples would share a stamp (times that step back or lie less than 1 ns apart). rosbag2 stores stamps as
    unsigned nanoseconds: a negative one cannot be written."""
    t = np.asarray(t, dtype=float)
    if t.size and not np.all(np.isfinite(t)):
        raise InputError(f'{path}: cannot write a recording whose times are not all finite')
    first = int(start_ns) + (int(round(float(t[0]) * 1e9)) if t.size else 0)
    last = int(start_ns) + (int(round(float(t[-1]) * 1e9)) if t.size else 0)
    if first < 0:
        raise InputError(f'{path}: cannot write a stamp before 1970 (the first is {first / 1e9:.9g} s; rosbag2 '
                         f'stamps are nanoseconds from 0)')
    if last >= 2 ** 63:
        raise InputError(f'{path}: cannot write a stamp beyond 2262 (the last is {last / 1e9:.6g} s)')
    stamps = int(start_ns) + np.round(t * 1e9).astype(np.int64)
    if np.any(np.diff(stamps) <= 0):
        raise InputError(f'{path}: cannot write samples closer than 1 ns apart (rosbag2 stamps are whole '
                         f'nanoseconds): they would share a stamp')
    return stamps


def _write_messages(path: Path, dataset: Dataset, stamps: np.ndarray, reference: dict | None, namespace: str,
                    start_ns: int, chunk_s: float, storage: str) -> None:
    """The body of :func:`write_bag`: the bag directory ``path`` (a staging path) and its messages."""
    names = list(dataset.joint_names)
    store = typestore()
    plugin = StoragePlugin.MCAP if storage == 'mcap' else StoragePlugin.SQLITE3
    with Writer(path, version=9, storage_plugin=plugin) as writer:
        # What joint_states' effort holds, for readers that would otherwise guess (dynid.io.effort_record), and
        # the payload the robot had set where the effort depends on it (a gravity-compensated torque).
        writer.set_custom_data(EFFORT_RECORD_KEY, effort_record_value(dataset))
        if dataset.source.get('robot_payload') is not None:
            writer.set_custom_data(ROBOT_PAYLOAD_KEY, json.dumps(dataset.source['robot_payload']))
        connections = {}
        for topic, fields in STATE_TOPICS.items():
            if topic == 'joint_states' and dataset.tau is None:
                fields = ('q', 'dq', None)  # no torque measured (e.g. currents only): empty effort arrays
            signals = [getattr(dataset, f) for f in fields if f is not None]
            if all(s is not None for s in signals):
                connections[topic] = (writer.add_connection(topic_name(namespace, topic), JOINT_STATE,
                                                            typestore=store), fields)
        chunks = _reference_chunks(reference, names, start_ns, chunk_s) if reference is not None else []
        reference_connection = writer.add_connection(topic_name(namespace, REFERENCE_TOPIC), JOINT_TRAJECTORY,
                                                     typestore=store) if chunks else None
        # The JointStates of a block of samples serialized at once (JointStateEncoder: rosbags' bytes with
        # the stamp and values put in place), then written sample by sample in the order of the topics.
        encoders = {topic: JointStateEncoder(names, [f for f, s in zip(FIELDS, signals, strict=True) if s])
                    for topic, (_, signals) in connections.items()}
        next_chunk = 0
        for first in range(0, stamps.size, WRITE_BLOCK):
            block = stamps[first:first + WRITE_BLOCK]
            rows = slice(first, first + block.size)
            encoded = []
            for topic, (connection, signals) in connections.items():
                values = {field: getattr(dataset, signal)[rows] for field, signal in zip(FIELDS, signals, strict=True)
                          if signal}
                encoded.append((connection, encoders[topic].encode(block, **values)))
            for k, stamp in enumerate(block.tolist()):
                while next_chunk < len(chunks) and chunks[next_chunk][0] <= stamp:
                    chunk_stamp, message = chunks[next_chunk]
                    writer.write(reference_connection, int(chunk_stamp),
                                 store.serialize_cdr(message, JOINT_TRAJECTORY))
                    next_chunk += 1
                for connection, messages in encoded:
                    writer.write(connection, stamp, messages[k])


def _reference_chunks(reference: dict, names: list[str], start_ns: int, chunk_s: float) -> list:
    types = typestore().types
    point_type = types['trajectory_msgs/msg/JointTrajectoryPoint']
    duration_type = types['builtin_interfaces/msg/Duration']
    t = np.asarray(reference['t'], dtype=float)
    empty = np.zeros((t.size, 0))
    optional = {name: empty if reference.get(name) is None else reference[name] for name in ('ddq', 'effort')}
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
            points.append(point_type(
                positions=reference['q'][i], velocities=reference['dq'][i], accelerations=optional['ddq'][i],
                effort=optional['effort'][i],
                time_from_start=duration_type(sec=offset // 1_000_000_000, nanosec=offset % 1_000_000_000)))
        header = types['std_msgs/msg/Header'](stamp=stamp_message(chunk_start), frame_id='')
        chunks.append((chunk_start, types[JOINT_TRAJECTORY](header=header, joint_names=names, points=points)))
    return chunks


class _TopicRows:
    """The decoded stamps and fields of one topic, gathered batch by batch into arrays allocated once.

    The arrays are sized for the messages the recording's metadata counts (``capacity``) and grow only
    if it counted fewer. Batch arrays concatenated at the end would hold the topic twice at that moment
    (a 10-minute 1 kHz topic is ~29 MB a field) and leave the heap fragmented by the batch-sized pieces
    freed between larger blocks, which the allocator keeps: ~170 MB of resident memory after reading a
    10-minute bag of four topics.
    """

    def __init__(self, capacity: int) -> None:
        self.capacity, self.size = max(int(capacity), 1), 0
        self.stamps: np.ndarray | None = None
        self.fields: dict[str, np.ndarray] = {}

    def append(self, stamps: np.ndarray, fields: dict[str, np.ndarray]) -> None:
        end = self.size + stamps.size
        if self.stamps is None:
            self.capacity = max(self.capacity, end)
            self.stamps = np.empty(self.capacity, dtype=np.int64)
            self.fields = {name: np.empty((self.capacity,) + rows.shape[1:]) for name, rows in fields.items()}
        elif end > self.capacity:  # the metadata counted fewer messages
            self.capacity = max(end, 2 * self.capacity)
            self.stamps = np.resize(self.stamps, self.capacity)
            self.fields = {name: np.resize(rows, (self.capacity,) + rows.shape[1:])
                           for name, rows in self.fields.items()}
        self.stamps[self.size:end] = stamps
        for name, rows in fields.items():
            self.fields[name][self.size:end] = rows
        self.size = end

    def arrays(self, fields) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        """(stamps (M,), {field: (M, n)}) of the messages appended; ``fields`` name them when none was."""
        if self.stamps is None:
            return np.zeros(0, dtype=np.int64), {name: np.zeros((0, 0)) for name in fields}
        return self.stamps[:self.size], {name: rows[:self.size] for name, rows in self.fields.items()}


def _read_streams(reader: AnyReader, connections: dict, names: list[str] | None, counters: dict, resolve=None):
    """One pass over the bag(s); ``connections`` maps topic → its connections (one per bag segment).

    Returns {topic: (stamps, {field: rows})} and the joint names used: ``names``, else ``resolve(the first
    message's names)`` when given, else the first message's names. The messages are decoded in
    batches (raw bytes cost ~10× their decoded arrays in memory) into arrays allocated once per topic
    (:class:`_TopicRows`); MCAP files are walked by :mod:`dynid.io.mcap_messages`, anything else (or
    what it refuses) by rosbags, with equal results.
    """
    chosen = {'names': names}
    counted = dict(counters)
    kept = {topic: [field for field, target in zip(FIELDS, STATE_TOPICS[topic], strict=True) if target is not None]
            for topic in connections}
    expected = {topic: sum(c.msgcount for c in group) for topic, group in connections.items()}

    def start() -> dict[str, _TopicRows]:
        return {topic: _TopicRows(expected[topic]) for topic in connections}

    def decode(topic: str, raws) -> None:  # a list of messages, or a uint8 matrix with one a row
        if chosen['names'] is None and len(raws):
            chosen['names'] = names_of(raws[0].tobytes() if isinstance(raws, np.ndarray) else raws[0])
            if resolve is not None:
                chosen['names'] = resolve(chosen['names'])
        stamps, values, skipped = decode_joint_states(raws, chosen['names'] or [])
        if skipped:
            counters['mismatched_names'] = counters.get('mismatched_names', 0) + skipped
        # Only the fields the topic contributes are kept (a 10-minute recording's unused fields are ~29 MB each).
        rows[topic].append(stamps, {field: values[field] for field in kept[topic]})

    files = _mcap_files(reader)
    rows, done = start(), False
    if files is not None:
        topic_of = {c.topic: topic for topic, group in connections.items() for c in group}
        try:
            counts = {name: sum(c.msgcount for c in group if c.topic == name) for name, group in
                      ((name, connections[topic]) for name, topic in topic_of.items())}
            topic_messages(files, topic_of, _DECODE_BATCH, lambda name, raws: decode(topic_of[name], raws), counts)
            done = True
        except UnsupportedError:  # start again with rosbags
            chosen['names'], rows = names, start()
            counters.clear()
            counters.update(counted)
    if not done:
        _rosbags_messages(reader, connections, decode)
    streams = {topic: rows.pop(topic).arrays(kept[topic]) for topic in connections}
    return streams, chosen['names'] or []


def _rosbags_messages(reader: AnyReader, connections: dict, decode) -> None:
    """``decode(topic, raws)`` of batches of each topic's messages, in rosbags' time order."""
    raw_messages = {topic: [] for topic in connections}
    by_id = {id(c): t for t, group in connections.items() for c in group}
    for connection, _, raw in reader.messages(connections=[c for group in connections.values() for c in group]):
        topic = by_id[id(connection)]
        raw_messages[topic].append(bytes(raw))
        if len(raw_messages[topic]) >= _DECODE_BATCH:
            decode(topic, raw_messages[topic])
            raw_messages[topic] = []
    for topic, raws in raw_messages.items():
        if raws:
            decode(topic, raws)


def _mcap_files(reader: AnyReader) -> list[Path] | None:
    """The MCAP files rosbags opened for the recording (decompressed copies of a file-compressed bag), in
    its order; None where any storage is not MCAP."""
    files = []
    for bag in reader.readers:
        opened = getattr(bag, 'storage', None)  # a storage file, or a directory of them (rosbags 0.11)
        for storage in getattr(opened, 'storages', [opened]):
            if not isinstance(storage, McapReader):
                return None
            files.append(Path(storage.path))
    return files


_DECODE_BATCH = 20000
def _namespace(by_topic: dict, namespace: str | None, path) -> str:
    """The recording's namespace: ``namespace`` when given; else the root, or the one namespace whose
    joint_states the recording holds (a recording of nodes run under a namespace, e.g. ``dynid demo``)."""
    if namespace is None:
        found = sorted(topic[:-len('joint_states')] for topic in by_topic if topic.endswith('/joint_states'))
        if len(found) > 1:
            raise InputError(f'bag {path} holds joint_states of several namespaces ({", ".join(found)}): '
                             f'name the namespace')
        namespace = found[0] if found else ''
    if topic_name(namespace, 'joint_states') not in by_topic:
        raise InputError(f'bag {path} has no topic {topic_name(namespace, "joint_states")} '
                         f'(topics: {sorted(by_topic)})')
    return namespace


class _RtdeOnlyError(Exception):
    """Raised inside :func:`read_bag` for a recording of the RTDE publisher alone."""


def _with_rtde(reader, by_topic: dict, stamps: np.ndarray, signals: dict) -> tuple[dict, dict | None, dict | None]:
    """``signals`` with the RTDE publisher's temperatures and currents held onto joint_states' stamps where the
    contract's topics do not have them, the payload set on the robot, and the controller's targets held onto the
    stamps ({``q_r``, …}: :data:`dynid.io.rtde.TARGETS`; None where a stamp has none) (dynid.io.rtde)."""
    connections = [c for topic, group in by_topic.items() if topic.rsplit('/', 2)[-2:-1] == [rtde.PREFIX]
                   for c in group]
    timestamps, arrays, payload = rtde.read_messages(reader, connections)
    times, logs, values = rtde.join_packages(timestamps, {k: v for k, v in arrays.items() if v})
    held = rtde.join_into(stamps, times, logs, values)
    out = dict(signals)
    for field in ('temperature', 'current'):
        if out.get(field) is None and field in held and signals.get('q') is not None \
                and held[field].shape[1] == signals['q'].shape[1]:
            out[field] = held[field]
    targets = {key: held[key] for key in rtde.TARGETS.values() if key in held and np.all(np.isfinite(held[key]))}
    return out, rtde._payload(payload), targets or None


def _reference_messages(reader: AnyReader, by_topic: dict) -> list:
    """[(kind, topic, recorded [ns], message)] of the joint controller's topics the recording holds and can decode
    (:func:`dynid.io.trajectories.reference_topic_kind`: its trajectories, as
    :class:`dynid.io.trajectories.RecordedTrajectory`, and its controller_state where the recording carries the
    definition), in recorded order."""
    known = reader.typestore.fielddefs
    kinds = {c.topic: (kind, c.msgtype) for group in by_topic.values() for c in group
             if (kind := reference_topic_kind(c.topic, c.msgtype)) is not None and c.msgtype in known}
    out = []
    for topic, recorded, raw in _raw_messages(reader, [c for t in kinds for c in by_topic[t]]):
        kind, msgtype = kinds[topic]
        message = recorded_trajectory(raw, lambda r, m=msgtype: reader.deserialize(r, m)) if kind == 'trajectory' \
            else reader.deserialize(raw, msgtype)
        out.append((kind, topic, recorded, message))
    return out


def _raw_messages(reader: AnyReader, connections: list) -> list[tuple[str, int, bytes]]:
    """[(topic, recorded [ns], serialized message)] of ``connections`` in recorded order: MCAP files walked by
    :mod:`dynid.io.mcap_messages`, anything else (or what it refuses) by rosbags."""
    files = _mcap_files(reader) if connections else None
    if files is not None:
        found: list = []

        def keep(topic: str, raws, times) -> None:  # each topic's in log-time order
            found.extend((int(time), topic, bytes(raw)) for raw, time in zip(raws, times, strict=True))

        counts = {c.topic: sum(d.msgcount for d in connections if d.topic == c.topic) for c in connections}
        try:
            topic_messages(files, counts, _DECODE_BATCH, keep, counts, with_times=True)
            return [(topic, time, raw) for time, topic, raw in sorted(found, key=lambda m: m[0])]  # stable
        except UnsupportedError:
            pass
    return [(c.topic, int(recorded), bytes(raw)) for c, recorded, raw in
            (reader.messages(connections=connections) if connections else ())]


def _with_reference(dataset: Dataset, messages: list, targets: dict | None, valid: np.ndarray) -> Dataset:
    """``dataset`` with the controller's reference: from its topics (``messages``, :func:`_reference_messages`),
    else from the RTDE publisher's ``targets`` held at joint_states' stamps (the ``valid`` ones are the dataset's);
    as it is where it holds none. A reference that cannot be read (a trajectory of other joints) is left out and
    said in ``source['reference_unread']``: the recording stays."""
    reference = None
    if messages:
        try:
            reference = recorded_reference(dataset.t, dataset.q, dataset.source['start_ns'], messages,
                                           dataset.joint_names, dataset.source.get('recorded_joint_names'))
        except InputError as error:
            dataset.source['reference_unread'] = str(error)
    if reference is None and targets:
        reference = Reference.of_keys({key: value[valid] for key, value in targets.items()}, 'RTDE target_*')
    return dataset if reference is None else dataclasses.replace(dataset, reference=reference)


def _open_reader(files: list[Path], path: Path) -> AnyReader:
    """An open AnyReader of the recording. Bags that embed their message definitions (MCAP as rosbag2
    and :func:`write_bag` write it) open without dynid's type store; the others (e.g. sqlite3 bags of
    older rosbag2, where rosbags raises AnyReaderError) are opened again with it."""
    try:
        reader = AnyReader(files)
        reader.open()
        return reader
    except AnyReaderError:
        pass  # e.g. 'Bag contains no type definitions': try again with the Kilted definitions
    except Exception as error:  # rosbags raises several unrelated types for broken bags
        raise InputError(f'cannot open bag {path}: {" ".join(str(error).split())}') from None
    try:
        reader = AnyReader(files, default_typestore=typestore())
        reader.open()
        return reader
    except Exception as error:  # rosbags raises several unrelated types for broken bags
        raise InputError(f'cannot open bag {path}: {" ".join(str(error).split())}') from None


def _rows(values: np.ndarray, index: np.ndarray | None) -> np.ndarray:
    """``values[index]``; ``values`` itself (no copy) for ``index`` None, every row in place."""
    return values if index is None else values[index]


def _connections_by_topic(reader: AnyReader) -> dict[str, list]:
    """The recording's connections by topic name (a topic may have several: one per type or per segment)."""
    by_topic: dict[str, list] = {}
    for connection in reader.connections:
        by_topic.setdefault(connection.topic, []).append(connection)
    return by_topic


def _bag_files(path) -> tuple[list[Path], Path]:
    """The storage files of a recording or of a list of them read as one bag, and the path to name it by."""
    paths = [Path(p) for p in path] if isinstance(path, (list, tuple)) else [Path(path)]
    if not paths:
        raise InputError('no bag given')
    return [file for bag in paths for file in recording_files(bag)], paths[0] if len(paths) == 1 else paths[0].parent


def recorded_messages(path, wanted: Callable[[str], bool]) -> Iterator[tuple[str, int, object]]:
    """The messages of a recording (a bag, or a list of bags read as one) on each topic for which ``wanted(topic)``
    holds, in recorded order: (topic, recorded time [ns], the message deserialized). The bag is closed when the
    iteration ends or is left; InputError for a bag that does not open."""
    files, name = _bag_files(path)
    reader = _open_reader(files, name)
    try:
        connections = [c for topic, group in _connections_by_topic(reader).items() if wanted(topic) for c in group]
        for connection, recorded_ns, raw in reader.messages(connections=connections) if connections else ():
            yield connection.topic, int(recorded_ns), reader.deserialize(raw, connection.msgtype)
    finally:
        reader.close()


def _contract_connections(by_topic: dict, namespace: str, joint_states_effort: str, path) -> dict[str, list]:
    """The connections of each contract topic (:data:`STATE_TOPICS`) under ``namespace``; refuses a recording with
    joint_currents whose joint_states effort is to be read as current."""
    wanted = {topic: topic_name(namespace, topic) for topic in STATE_TOPICS}
    if joint_states_effort == 'current' and wanted['joint_currents'] in by_topic:
        currents = wanted['joint_currents']
        raise InputError(f'bag {path}: joint_states effort is to be read as motor current, but the bag also has '
                         f'{currents}; refusing to guess which holds the current (a dynid recording keeps it on '
                         f'{currents}: read joint_states effort as torque, the default)')
    return {topic: by_topic[name] for topic, name in wanted.items() if name in by_topic}


def _in_time_order(stamps: np.ndarray) -> tuple[np.ndarray, np.ndarray | None, int]:
    """joint_states' stamps [ns] in time order without repeats (the first of a repeated stamp kept), the rows picked
    (None: all, in place) and the count of repeats left out. Rows are copied only where they move: a recording in
    time order, without duplicate stamps, whose topics share joint_states' stamps (a driver's, the twin's) is used
    as decoded, never held twice."""
    if np.all(np.diff(stamps) > 0):
        return stamps, None, 0
    order = np.argsort(stamps, kind='stable')
    picked = order[np.concatenate([[True], np.diff(stamps[order]) > 0])]
    return stamps[picked], picked, int(stamps.size - picked.size)


def _join_streams(streams: dict, stamps: np.ndarray, signals: dict) -> np.ndarray:
    """Motor states and currents joined onto joint_states' ``stamps`` by exact stamp, temperatures held from their
    latest stamp at or before each sample, into ``signals``; returns which samples found their partners."""
    valid = np.ones(stamps.size, dtype=bool)
    for topic in ('motor_states', 'joint_currents'):
        if topic not in streams:
            continue
        other_stamps, rows = streams[topic]
        matched = other_stamps.size > 0
        position = None if np.array_equal(other_stamps, stamps) else \
            np.clip(np.searchsorted(other_stamps, stamps), 0, max(other_stamps.size - 1, 0))
        if position is not None:
            valid &= (other_stamps[position] == stamps) if matched else np.zeros(stamps.size, dtype=bool)
        for field, target in zip(('position', 'velocity', 'effort'), STATE_TOPICS[topic], strict=True):
            if target is not None:
                signals[target] = _rows(rows[field], position) if matched else None
    if 'joint_temperatures' in streams:
        temperature_stamps, rows = streams['joint_temperatures']
        latest = None if np.array_equal(temperature_stamps, stamps) else \
            np.searchsorted(temperature_stamps, stamps, side='right') - 1
        if latest is not None:
            valid &= latest >= 0
        signals['temperature'] = _rows(rows['effort'], None if latest is None else np.clip(latest, 0, None))
    return valid


def _keep_samples(signals: dict, valid: np.ndarray) -> None:
    """``signals`` cut to the ``valid`` samples in place; a field never published (all NaN, e.g. empty effort
    arrays) becomes None."""
    for key in list(signals):
        value = signals[key]
        if value is not None and np.all(np.isnan(value)):
            signals[key] = None
        elif value is not None and not valid.all():
            signals[key] = value[valid]


def read_bag(path, joint_names=None, namespace: str | None = '', joint_states_effort: str = 'torque',
             joint_map=None) -> Dataset:
    """Read the contract topics of a rosbag2 (MCAP or sqlite3) into a :class:`Dataset`.

    ``path`` is a recording (:func:`recording_files`), or a list of them read as one bag (the segments
    of a recording, so that streams join across segment boundaries).

    Time is joint_states' stamp minus the first stamp [s]; messages repeating an earlier stamp are left out
    (the first kept) and counted in ``source['duplicate_stamps']``. Motor states and currents are joined by
    exact stamp (samples without a partner are dropped); temperatures are held from their latest
    stamp at or before each sample. Joints are taken by name (``joint_names``, default those of the
    first joint_states message); messages that lack one of them are skipped and counted in
    ``source['skipped']``. The recording may name the ``joint_names`` as a vendor does (a ``tf_prefix``,
    ``fer_joint1`` for ``panda_joint1``) or as ``joint_map`` ({model joint: recorded name}) says
    (:func:`dynid.model.naming.match_joint_names`); the dataset has ``joint_names`` and
    ``source['recorded_joint_names']`` the names recorded.
    ``namespace`` is the recording's namespace; None: found from its topics (the root, or the one
    namespace holding joint_states).
    ``joint_states_effort`` says what joint_states' effort holds (:data:`dynid.io.EFFORT_MEANINGS`): ``'torque'``
    and ``'current_as_torque'`` fill ``tau`` [N·m]; ``'gravity_compensated_torque'`` fills ``tau`` with the
    effort as recorded (the robot's gravity not yet added back: :func:`dynid.io.gravity_restore.restore_gravity`
    does, with the robot model); ``'current'`` fills ``current`` [A] and leaves ``tau`` None, and refuses a
    recording that also has ``joint_currents``. ``source['joint_states_effort']`` keeps the meaning.
    """
    checked_choice('joint_states effort', joint_states_effort, EFFORT_MEANINGS)
    files, path = _bag_files(path)
    reader = _open_reader(files, path)
    counters: dict[str, int] = {}
    rtde_payload, rtde_reference, rtde_only = None, None, False
    try:
        by_topic = _connections_by_topic(reader)
        if not any(t.endswith('/joint_states') for t in by_topic) and rtde.is_rtde_bag(by_topic):
            raise _RtdeOnlyError  # the RTDE publisher alone: its own reader (dynid.io.rtde), below
        namespace = _namespace(by_topic, namespace, path)
        main = topic_name(namespace, 'joint_states')
        connections = _contract_connections(by_topic, namespace, joint_states_effort, path)
        model_names = None if joint_names is None else list(joint_names)
        resolve = None if model_names is None else \
            (lambda available: list(match_joint_names(model_names, available, joint_map, f'bag {path}: {main}')))
        streams, names = _read_streams(reader, connections, None, counters, resolve)
        stamps, main_rows = streams['joint_states']
        if stamps.size < 2:
            reason = (f'its joint_states messages do not name all of {names}'
                      if counters.get('mismatched_names') else 'fewer than 2 usable messages')
            raise InputError(f'bag {path}: {main}: {reason}')
        stamps, picked, duplicates = _in_time_order(stamps)
        effort = 'tau' if joint_states_effort in TORQUE_MEANINGS else 'current'
        signals = {target: _rows(main_rows[field], picked)
                   for field, target in (('position', 'q'), ('velocity', 'dq'), ('effort', effort))}
        valid = _join_streams(streams, stamps, signals)
        if rtde.is_rtde_bag(by_topic):  # the RTDE publisher beside the driver: its packages onto joint_states
            signals, rtde_payload, rtde_reference = _with_rtde(reader, by_topic, stamps, signals)
        controller, topics = _reference_messages(reader, by_topic), sorted(by_topic)
        streams.clear()  # ``signals`` hold what they use of the decoded topics: free the rest before the copies below
        main_rows = None
    except _RtdeOnlyError:
        rtde_only = True
    except InputError:
        raise
    except Exception as error:  # a truncated or corrupt file fails while reading messages
        raise InputError(f'cannot read bag {path}: {" ".join(str(error).split())}') from None
    finally:
        reader.close()
    if rtde_only:  # its effort is UR's own field, whatever joint_states' was said to hold
        if joint_names is None:
            raise InputError(f'bag {path}: an RTDE recording names no joints: give the robot')
        return rtde.read_rtde(path, joint_names)
    if not np.any(valid):
        raise InputError(f'bag {path}: no joint_states sample has matching motor_states/joint_currents stamps')
    _keep_samples(signals, valid)
    t = (stamps[valid] - stamps[valid][0]) / 1e9
    source = {'bag': str(path), 'topics': topics, 'start_ns': int(stamps[valid][0]),
              'skipped': counters, 'dropped_unmatched': int(np.count_nonzero(~valid)), 'duplicate_stamps': duplicates,
              'joint_states_effort': joint_states_effort}
    if model_names is not None and list(names) != model_names:
        source['recorded_joint_names'] = list(names)
    if rtde_payload is not None:
        source['robot_payload'] = rtde_payload
    return _with_reference(Dataset(tuple(model_names or names), t, source=source, **signals), controller,
                           rtde_reference, valid)
