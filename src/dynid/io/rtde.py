"""Recordings of UR's RTDE publisher (``ur_rtde_publisher``), joined by the RTDE ``timestamp`` into the contract.

UR's ``RTDE_ROS2_Publisher`` publishes each RTDE output field of its recipe on ``rtde/<field>``
(docs/backends/ur.md): the six-joint fields (``actual_q`` [rad], ``actual_qd`` [rad/s], ``actual_current`` [A],
``actual_current_as_torque`` [N·m, gravity-compensated], ``joint_temperatures`` [°C], ``target_moment``, …) as
``example_interfaces/msg/Float64MultiArray`` without a header, in UR's joint order (base, shoulder, elbow,
wrist 1–3); ``timestamp`` (seconds since the controller started) as ``builtin_interfaces/msg/Time``; the payload
set on the robot as ``payload`` (``example_interfaces/msg/Float64``, kg), ``payload_cog``
(``geometry_msgs/msg/PointStamped``, m, flange frame) and ``payload_inertia`` (``geometry_msgs/msg/InertiaStamped``,
kg·m² about the centre of gravity). All fields of one RTDE package are published in one loop, so in a bag a
package's arrays are logged right after its ``timestamp``.

The join (:func:`join_packages`): each ``timestamp`` message opens a package; every array message logged after
it and before the next one belongs to it (the first of each field; a field a package lacks is NaN there, and
such packages are dropped where ``q`` or ``q̇`` is missing). Time is the RTDE timestamp (the controller's clock,
2 ms at 500 Hz), never the log time. The dataset (:func:`read_rtde`) has q, q̇, the motor current, the joint
temperatures and, where recorded, ``actual_current_as_torque`` in ``tau`` read as ``gravity_compensated_torque``
(``source['joint_states_effort']``; the commands add the gravity back with ``source['robot_payload']``, the last
payload the bag holds). Beside a driver's joint_states (:func:`join_into`), the packages are placed on
joint_states' clock by the median offset between their log time and their RTDE timestamp, and their
temperatures, currents and payload held from the latest package at or before each joint_states stamp.

The controller's targets (``target_q``, ``target_qd``, ``target_qdd``, ``target_moment`` [N·m], ``target_current``
[A]) are read as the recording's reference (:class:`dynid.io.dataset.Reference`, where q and q̇ are in every package).

example_interfaces is not among rosbags' stores nor the Python wheels here; its two message types are
registered from their definitions (the same fields as std_msgs'), which is also how bags with embedded
definitions are read.
"""

from __future__ import annotations

import os
from functools import lru_cache

import numpy as np

from dynid.errors import InputError

PREFIX = 'rtde'
FLOAT64_MULTI_ARRAY = 'example_interfaces/msg/Float64MultiArray'
FLOAT64 = 'example_interfaces/msg/Float64'
TIME = 'builtin_interfaces/msg/Time'
POINT = 'geometry_msgs/msg/PointStamped'
INERTIA = 'geometry_msgs/msg/InertiaStamped'
#: RTDE field: the dataset field it fills (six values per package, UR joint order)
ARRAYS = {'actual_q': 'q', 'actual_qd': 'dq', 'actual_current': 'current', 'actual_current_as_torque': 'tau',
          'joint_temperatures': 'temperature'}
#: RTDE field: the controller's target it holds, under :data:`dynid.io.dataset.REFERENCE_KEYS` (q_r, q̇_r, q̈_r, the
#: target moment [N·m] as the commanded torque, the target current [A])
TARGETS = {'target_q': 'q_r', 'target_qd': 'dq_r', 'target_qdd': 'ddq_r', 'target_moment': 'tau_r',
           'target_current': 'current_r'}
#: the fields dynid asks the publisher for (``ur.launch.py rtde_publisher:=true``)
RECIPE = ('timestamp', *ARRAYS, *TARGETS, 'payload', 'payload_cog', 'payload_inertia')
_READ = {**ARRAYS, **TARGETS}
_DEFINITIONS = {FLOAT64_MULTI_ARRAY: 'std_msgs/MultiArrayLayout layout\nfloat64[] data\n',
                FLOAT64: 'float64 data\n'}


@lru_cache(maxsize=1)
def rtde_typestore():
    """rosbags' Kilted store with example_interfaces' Float64MultiArray and Float64 registered."""
    from rosbags.typesys import Stores, get_types_from_msg, get_typestore

    store = get_typestore(Stores.ROS2_KILTED)
    types = {}
    for name, text in _DEFINITIONS.items():
        types.update(get_types_from_msg(text, name))
    store.register(types)
    return store


def topic(field: str, namespace: str = '') -> str:
    """The absolute topic of an RTDE field (``/rtde/<field>`` under ``namespace``)."""
    return '/' + '/'.join(part for part in (namespace.strip('/'), PREFIX, field) if part)


def is_rtde_bag(topics) -> bool:
    """Whether a bag's topics hold the RTDE publisher's timestamp and joint positions."""
    names = {t.rsplit('/', 2)[-2] + '/' + t.rsplit('/', 1)[-1] for t in topics if t.count('/') >= 2}
    return f'{PREFIX}/timestamp' in names and f'{PREFIX}/actual_q' in names


def join_packages(timestamps: list[tuple[int, float]], arrays: dict[str, list[tuple[int, np.ndarray]]],
                  required=('q', 'dq')) -> tuple[np.ndarray, np.ndarray, dict[str, np.ndarray]]:
    """(RTDE time [s] (N,), log time of each package's timestamp [ns] (N,), {field: (N, 6)}) of the packages
    (module docstring): ``timestamps`` [(log ns, RTDE s)], ``arrays`` {dataset field: [(log ns, values)]}."""
    if len(timestamps) < 2:
        raise InputError('the RTDE recording has fewer than 2 timestamp messages')
    order = np.argsort([log for log, _ in timestamps], kind='stable')
    logs = np.array([timestamps[i][0] for i in order], dtype=np.int64)
    times = np.array([timestamps[i][1] for i in order], dtype=float)
    n = logs.size
    values: dict[str, np.ndarray] = {}
    for field, messages in arrays.items():
        out = np.full((n, 6), np.nan)
        if messages:
            log = np.array([m[0] for m in messages], dtype=np.int64)
            package = np.searchsorted(logs, log, side='right') - 1  # the last timestamp logged at or before
            for k in np.argsort(log, kind='stable')[::-1]:  # the first of a package wins: written last
                data = np.asarray(messages[k][1], dtype=float)
                if package[k] >= 0 and data.size == 6:
                    out[package[k]] = data
        values[field] = out
    keep = np.ones(n, dtype=bool)
    for field in required:
        keep &= np.all(np.isfinite(values.get(field, np.full((n, 6), np.nan))), axis=1)
    keep &= np.concatenate([[True], np.diff(times) > 0])  # a repeated controller time: the first kept
    return times[keep], logs[keep], {field: array[keep] for field, array in values.items()}


def _payload(messages: dict[str, list]) -> dict | None:
    """The last payload the recording holds: {'mass', 'com', 'inertia' (six)} or None without a mass."""
    if not messages.get('payload'):
        return None
    mass = float(messages['payload'][-1][1])
    com = messages['payload_cog'][-1][1] if messages.get('payload_cog') else [0.0, 0.0, 0.0]
    inertia = messages['payload_inertia'][-1][1] if messages.get('payload_inertia') else [0.0] * 6
    return {'mass': mass, 'com': [float(c) for c in com], 'inertia': [float(i) for i in inertia]}


def read_messages(reader, connections) -> tuple[list, dict, dict]:
    """(timestamps [(log, s)], arrays {dataset field: [(log, values)]}, payload {'payload'|'payload_cog'|
    'payload_inertia': [(log, value)]}) of the RTDE connections of an open rosbags reader."""
    store = rtde_typestore()
    wanted = {}
    for connection in connections:
        field = connection.topic.rsplit('/', 1)[-1]
        if connection.topic.rsplit('/', 2)[-2] == PREFIX and (field in _READ or field in RECIPE):
            wanted[connection.id] = (field, connection.msgtype)
    timestamps, arrays, payload = [], {target: [] for target in _READ.values()}, {}
    chosen = [c for c in connections if c.id in wanted]
    for connection, log, raw in reader.messages(connections=chosen):
        field, msgtype = wanted[connection.id]
        message = store.deserialize_cdr(raw, msgtype)
        if field == 'timestamp':
            timestamps.append((log, message.sec + message.nanosec * 1e-9))
        elif field in _READ:
            arrays[_READ[field]].append((log, np.asarray(message.data, dtype=float)))
        elif field == 'payload':
            payload.setdefault(field, []).append((log, float(message.data)))
        elif field == 'payload_cog':
            payload.setdefault(field, []).append((log, [message.point.x, message.point.y, message.point.z]))
        elif field == 'payload_inertia':
            i = message.inertia
            payload.setdefault(field, []).append((log, [i.ixx, i.iyy, i.izz, i.ixy, i.ixz, i.iyz]))
    return timestamps, arrays, payload


def read_rtde(path: str | os.PathLike, joint_names) -> object:
    """A :class:`dynid.io.dataset.Dataset` of an RTDE publisher recording (module docstring); ``joint_names``:
    the model's six joints, in UR's order (the order of RTDE's arrays)."""
    from rosbags.highlevel import AnyReader

    from dynid.io.dataset import Dataset, Reference
    from dynid.io.storage import recording_files

    names = list(joint_names)
    if len(names) != 6:
        raise InputError(f'RTDE recording {path}: RTDE carries six joints, the robot has {len(names)}')
    files = recording_files(path)
    try:
        with AnyReader(files, default_typestore=rtde_typestore()) as reader:
            timestamps, arrays, payload = read_messages(reader, reader.connections)
    except InputError:
        raise
    except Exception as error:  # rosbags raises several unrelated types for broken bags
        raise InputError(f'cannot read RTDE recording {path}: {" ".join(str(error).split())}') from None
    times, logs, values = join_packages(timestamps, {k: v for k, v in arrays.items() if v})
    if times.size < 2:
        raise InputError(f'RTDE recording {path}: fewer than 2 packages with actual_q and actual_qd')
    signals = {field: (array if np.all(np.isfinite(array)) else None) for field, array in values.items()}
    source = {'bag': str(path), 'rtde': True, 'start_ns': int(logs[0]), 'rtde_start_s': float(times[0]),
              'joint_states_effort': 'gravity_compensated_torque' if signals.get('tau') is not None else 'none',
              'robot_payload': _payload(payload), 'packages': int(times.size),
              'dropped_packages': int(len(timestamps) - times.size)}
    return Dataset(tuple(names), times - times[0], signals['q'], signals['dq'], tau=signals.get('tau'),
                   current=signals.get('current'), temperature=signals.get('temperature'), source=source,
                   reference=Reference.of_keys(signals, 'RTDE target_*'))


def join_into(stamps_ns: np.ndarray, times: np.ndarray, logs: np.ndarray, values: dict[str, np.ndarray]
              ) -> dict[str, np.ndarray]:
    """RTDE packages held onto joint_states' stamps [ns] (module docstring): {field: (M, 6)}, NaN before the
    first package."""
    offset = float(np.median(logs.astype(float) * 1e-9 - times))
    placed = np.round((times + offset) * 1e9).astype(np.int64)
    latest = np.searchsorted(placed, stamps_ns, side='right') - 1
    out = {}
    for field, array in values.items():
        held = array[np.clip(latest, 0, None)].copy()
        held[latest < 0] = np.nan
        out[field] = held
    return out


def write_rtde(path: str | os.PathLike, dataset, robot_payload: dict | None = None, rtde_start_s: float = 1000.0,
               delay_ns: int = 200_000, fields=('actual_q', 'actual_qd', 'actual_current', 'actual_current_as_torque',
                                               'joint_temperatures', *TARGETS), tau=None, start_ns: int = 0):
    """Write ``dataset`` as the RTDE publisher's topics would be recorded: per sample a ``timestamp``
    (``rtde_start_s`` + t) logged ``delay_ns`` after the sample, then each of ``fields`` (``tau``: the values of
    ``actual_current_as_torque``, default ``dataset.tau``; the ``target_*`` fields: the dataset's reference),
    then the payload topics where ``robot_payload`` is given. For tests and benchmarks of the reader (the twin as
    the publisher)."""
    from pathlib import Path

    from rosbags.rosbag2 import Writer

    path = Path(path)
    if path.exists():
        raise InputError(f'{path} exists; refusing to overwrite a recording (choose a new path)')
    store = rtde_typestore()
    types = store.types
    source = {'actual_q': dataset.q, 'actual_qd': dataset.dq, 'actual_current': dataset.current,
              'actual_current_as_torque': dataset.tau if tau is None else tau,
              'joint_temperatures': dataset.temperature}
    keyed = {} if dataset.reference is None else dataset.reference.keyed()
    source.update({field: keyed.get(key) for field, key in TARGETS.items()})
    layout = types['std_msgs/msg/MultiArrayLayout'](dim=[], data_offset=0)
    with Writer(path, version=9) as writer:
        clock = writer.add_connection(topic('timestamp'), TIME, typestore=store)
        arrays = {f: writer.add_connection(topic(f), FLOAT64_MULTI_ARRAY, typestore=store)
                  for f in fields if source[f] is not None}
        extra = {}
        if robot_payload is not None:
            extra = {f: writer.add_connection(topic(f), t, typestore=store)
                     for f, t in (('payload', FLOAT64), ('payload_cog', POINT), ('payload_inertia', INERTIA))}
        header = types['std_msgs/msg/Header']
        for k, t in enumerate(dataset.t):
            log = start_ns + int(round(t * 1e9)) + delay_ns
            controller = rtde_start_s + float(t)
            sec = int(controller)
            nanosec = min(int(round((controller - sec) * 1e9)), 999_999_999)
            writer.write(clock, log, store.serialize_cdr(types[TIME](sec=sec, nanosec=nanosec), TIME))
            for i, (field, connection) in enumerate(arrays.items()):
                message = types[FLOAT64_MULTI_ARRAY](layout=layout, data=np.asarray(source[field][k], dtype=float))
                writer.write(connection, log + 1000 * (i + 1), store.serialize_cdr(message, FLOAT64_MULTI_ARRAY))
            if extra and k % 50 == 0:
                stamp = types[TIME](sec=0, nanosec=0)
                mass = types[FLOAT64](data=float(robot_payload['mass']))
                com = types['geometry_msgs/msg/Point'](*[float(c) for c in robot_payload['com']])
                six = np.asarray(robot_payload.get('inertia', np.zeros((3, 3))), dtype=float)
                if six.shape == (3, 3):
                    six = np.array([six[0, 0], six[1, 1], six[2, 2], six[0, 1], six[0, 2], six[1, 2]])
                inertia = types['geometry_msgs/msg/Inertia'](m=float(robot_payload['mass']), com=com,
                                                             ixx=six[0], ixy=six[3], ixz=six[4], iyy=six[1],
                                                             iyz=six[5], izz=six[2])
                h = header(stamp=stamp, frame_id='')
                messages = (('payload', mass, FLOAT64), ('payload_cog', types[POINT](header=h, point=com), POINT),
                            ('payload_inertia', types[INERTIA](header=h, inertia=inertia), INERTIA))
                for field, message, msgtype in messages:
                    writer.write(extra[field], log + 50_000, store.serialize_cdr(message, msgtype))
    return path
