"""JointTrajectory messages as :class:`dynid.excite.trajectory.PointTrajectory`, and the joint controller's reference
a recording holds (:class:`dynid.io.dataset.Reference`), from two kinds of topic:

- the trajectories sent to the controller (``<controller>/joint_trajectory``: what dynid's excitation and feedforward
  send, what ``dynid simulate`` and ``dynid import`` record beside the state), followed with the controller's
  semantics (:class:`dynid.excite.reference.ReferenceGenerator`) as it received them: a sample takes the
  trajectories recorded before it, before the first one the measured position held at rest (the controller holds
  where the arm is), and at a trajectory's own points the point itself (its positions, velocities, accelerations
  and effort, where given);
- the controller's state (``<controller>/controller_state``, control_msgs/msg/JointTrajectoryControllerState, read
  where the recording carries its definition, as MCAP does): its ``reference`` (``desired`` before Iron) and, as
  the commanded torque, ``output.effort`` where the controller commands effort, else the reference's effort;
  linearly between its messages, before the first as above, after the last the last held. Where both are
  recorded the controller's state wins over the samples it spans.

:func:`trajectory_of_message` takes any object with a JointTrajectory's fields (rclpy's message, rosbags'), so the
nodes and the recordings read trajectories the same way.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from dynid.errors import InputError
from dynid.excite.reference import ReferenceGenerator
from dynid.excite.trajectory import PointTrajectory
from dynid.io.cdr import stamp_ns
from dynid.io.dataset import Reference
from dynid.io.trajectory_cdr import POINT_FIELDS, decode_joint_trajectory

REFERENCE_TOPIC = 'joint_trajectory_controller/joint_trajectory'
CONTROLLER_STATE = 'control_msgs/msg/JointTrajectoryControllerState'
STATE_TOPIC = 'controller_state'
#: Samples this close to a trajectory's point [s] take the point itself (stamps are whole nanoseconds).
KNOT_TOLERANCE_S = 1e-7


class RecordedTrajectory(NamedTuple):
    """A recorded JointTrajectory: header stamp [ns], joint names, its points' time_from_start (P,) [s] and values
    {field of :data:`dynid.io.trajectory_cdr.POINT_FIELDS`: (P, k), k = 0 where not given; a list of each point's
    array where their lengths differ}."""

    stamp_ns: int
    joint_names: list[str]
    time_s: np.ndarray
    values: dict


def trajectory_of_message(message, joint_names) -> tuple[PointTrajectory | None, np.ndarray | None]:
    """(trajectory, effort (P, n) or None) of a JointTrajectory naming exactly ``joint_names`` (any order).

    An empty message gives (None, None): joint_trajectory_controller's "stop and hold". Points need
    positions; velocities, accelerations and effort are optional but, where given, one per joint and
    finite. ``time_from_start`` must increase (checked by :class:`PointTrajectory`).
    """
    names = list(message.joint_names)
    if not message.points:
        return None, None
    times = [p.time_from_start.sec + p.time_from_start.nanosec * 1e-9 for p in message.points]
    values = {}
    for field in POINT_FIELDS:
        rows = [np.asarray(getattr(p, field), dtype=float) for p in message.points]
        if len({row.size for row in rows}) > 1:
            raise InputError(f'every point needs {len(names)} {field}')
        values[field] = np.array(rows).reshape(len(rows), -1)
    return trajectory_of_points(names, times, values, joint_names)


def trajectory_of_points(names, times, values: dict[str, np.ndarray], joint_names
                         ) -> tuple[PointTrajectory | None, np.ndarray | None]:
    """:func:`trajectory_of_message` of a message's joint ``names``, its points' ``times`` (P,) [s] and ``values``
    {field of :data:`dynid.io.trajectory_cdr.POINT_FIELDS`: (P, k), k = 0 where not given}."""
    names = list(names)
    if len(times) == 0:
        return None, None
    if sorted(names) != sorted(joint_names):
        raise InputError(f'joints {names} do not match {list(joint_names)}')

    def column(field: str, required: bool):
        given = values[field]
        if given.shape[1] == 0 and not required:
            return None
        if given.shape[1] != len(names):
            raise InputError(f'every point needs {len(names)} {field}')
        if not np.all(np.isfinite(given)):
            raise InputError(f'{field} hold NaN or infinite values')
        return given

    positions, velocities = column('positions', True), column('velocities', False)
    accelerations = column('accelerations', False) if velocities is not None else None
    return PointTrajectory(tuple(names), times, positions, velocities, accelerations), column('effort', False)


def recorded_trajectory(raw: bytes, deserialize) -> RecordedTrajectory:
    """A recorded JointTrajectory's serialized bytes as :class:`RecordedTrajectory`, decoded at once
    (:func:`dynid.io.trajectory_cdr.decode_joint_trajectory`), else by ``deserialize(raw)`` (rosbags') where they
    hold what that decoder does not read (points whose arrays change length, which it refuses below)."""
    try:
        return RecordedTrajectory(*decode_joint_trajectory(raw))
    except ValueError:
        message = deserialize(raw)
        times = np.array([p.time_from_start.sec + p.time_from_start.nanosec * 1e-9 for p in message.points])
        values = {field: [np.asarray(getattr(p, field), dtype=float) for p in message.points]
                  for field in POINT_FIELDS}
        return RecordedTrajectory(stamp_ns(message.header.stamp), list(message.joint_names), times, values)


def reference_topic_kind(topic: str, msgtype: str) -> str | None:
    """'trajectory' for the controller's trajectory topic, 'state' for its controller_state, else None."""
    name = topic.lstrip('/')
    if name.endswith(REFERENCE_TOPIC) and msgtype.endswith('JointTrajectory'):
        return 'trajectory'
    if name.endswith(STATE_TOPIC) and msgtype == CONTROLLER_STATE:
        return 'state'
    return None


def recorded_reference(t: np.ndarray, q: np.ndarray, start_ns: int, messages: list, joint_names,
                       recorded_names=None) -> Reference | None:
    """The controller's reference at a recording's samples (module docstring), or None where it holds none.

    Args:
        t: (N,) sample times [s] from ``start_ns`` [ns]; q: (N, n) measured positions [rad].
        messages: [(kind ('trajectory' or 'state', :func:`reference_topic_kind`), topic, recorded [ns], message: a
            :class:`RecordedTrajectory`, a JointTrajectoryControllerState)] in recorded order.
        joint_names: the n joints; recorded_names: as the recording names them, in that order (None: the same).

    InputError for a message that names other joints or holds bad values.
    """
    rename = dict(zip(list(recorded_names or joint_names), joint_names, strict=True))
    trajectories = [(topic, recorded, m) for kind, topic, recorded, m in messages if kind == 'trajectory']
    states = [(topic, recorded, m) for kind, topic, recorded, m in messages if kind == 'state']
    base = _followed(np.asarray(t, dtype=float), np.asarray(q, dtype=float), start_ns, trajectories, rename) \
        if trajectories else None
    return _with_states(t, q, start_ns, states, rename, base) if states else base


def _followed(t: np.ndarray, q: np.ndarray, start_ns: int, messages: list, rename: dict) -> Reference:
    """The reference rebuilt from the trajectories ``messages`` [(topic, recorded ns, message)] (module docstring)."""
    generator = ReferenceGenerator(tuple(rename.values()))
    values = (q.copy(), *(np.zeros_like(q) for _ in range(3)))  # before the first: held where the arm is
    done, newest, efforts, topics = 0, None, False, set()
    for topic, recorded_ns, message in messages:
        trajectory, effort = _renamed(message, rename, topic)
        start_s = ((message.stamp_ns or recorded_ns) - start_ns) / 1e9
        now = (recorded_ns - start_ns) / 1e9  # as the samples' times are computed: a sample recorded with it, after
        k = max(done, int(np.searchsorted(t, now - KNOT_TOLERANCE_S)))
        _sample(generator, t, values, done, k, newest, bool(topics))
        if not topics or trajectory is None:  # the first: from where the arm is; an empty one: stop and hold
            generator.hold(q[min(k, len(t) - 1)], now)
        if trajectory is not None:
            generator.follow(trajectory, start_s, now, effort)
        done, newest = k, None if trajectory is None else (trajectory, effort, max(start_s, now))
        efforts, topics = efforts or effort is not None, topics | {topic}
    _sample(generator, t, values, done, len(t), newest, True)
    position, velocity, acceleration, effort = values
    return Reference(position, velocity, acceleration, effort if efforts else None, source=', '.join(sorted(topics)))


def _renamed(recorded: RecordedTrajectory, rename: dict, topic: str
             ) -> tuple[PointTrajectory | None, np.ndarray | None]:
    """(trajectory, effort) of a recorded JointTrajectory, its joints named as the model names them."""
    names = recorded.joint_names
    if len(recorded.time_s) == 0:
        return None, None
    try:
        ragged = [field for field, value in recorded.values.items() if isinstance(value, list)
                  and len({row.size for row in value}) > 1]
        if ragged:
            raise InputError(f'every point needs {len(names)} {ragged[0]}')
        values = {field: np.array(value, dtype=float).reshape(len(recorded.time_s), -1)
                  for field, value in recorded.values.items()}
        trajectory, effort = trajectory_of_points(names, recorded.time_s, values, list(rename))
    except InputError as error:
        raise InputError(f'{topic}: {error}') from None
    if trajectory is None:
        return None, None
    return PointTrajectory(tuple(rename[j] for j in trajectory.joint_names), trajectory.time_s, trajectory.positions,
                           trajectory.velocities, trajectory.accelerations), effort


def _sample(generator: ReferenceGenerator, t: np.ndarray, values: tuple, first: int, stop: int, newest,
            started: bool) -> None:
    """``values`` (q_r, q̇_r, q̈_r, effort) of the samples first..stop−1 from ``generator`` where it has ``started``,
    and at the points of the ``newest`` trajectory (trajectory, effort, start [s]) the points themselves (module
    docstring)."""
    if stop <= first or not started:
        return
    for value, sampled in zip(values, generator.sample_many(t[first:stop]), strict=True):
        value[first:stop] = sampled
    if newest is None:
        return
    trajectory, effort, start_s = newest
    order = [trajectory.joint_names.index(name) for name in generator.joint_names]
    knots = start_s + trajectory.time_s
    at = np.clip(np.searchsorted(knots, t[first:stop] - KNOT_TOLERANCE_S), 0, knots.size - 1)
    on = np.abs(knots[at] - t[first:stop]) <= KNOT_TOLERANCE_S
    rows, points = first + np.flatnonzero(on), at[on]
    given = (trajectory.positions, trajectory.velocities, trajectory.accelerations, effort)
    for value, point_values in zip(values, given, strict=True):
        if point_values is not None:
            value[rows] = point_values[points][:, order]


def _with_states(t: np.ndarray, q: np.ndarray, start_ns: int, messages: list, rename: dict,
                 base: Reference | None) -> Reference | None:
    """The reference of the controller_state ``messages`` over the samples they span, ``base`` (or the measured
    position held at rest) before them, the last held after (module docstring); None where no message has a
    reference of every joint."""
    times, points, topics = [], [], set()
    for topic, recorded_ns, message in messages:
        point = _state_point(message, rename)
        if point is not None:
            times.append(((stamp_ns(message.header.stamp) or recorded_ns) - start_ns) / 1e9)
            points.append(point)
            topics.add(topic)
    if not points:
        return base
    order = np.argsort(times, kind='stable')
    times = np.asarray(times)[order]
    out = {}
    for name in ('q', 'dq', 'ddq', 'effort'):
        rows = [points[i].get(name) for i in order]
        if any(row is None for row in rows):
            if getattr(base, name, None) is not None:
                out[name] = getattr(base, name)
            continue
        rows = np.asarray(rows, dtype=float)
        value = np.column_stack([np.interp(t, times, column) for column in rows.T])
        before = t < times[0]
        fallback = getattr(base, name, None) if base is not None else (q if name == 'q' else np.zeros_like(q))
        if before.any():
            if fallback is None:
                continue
            value[before] = fallback[before]
        out[name] = value
    if 'q' not in out or 'dq' not in out:
        return base
    source = ', '.join(sorted(topics)) + ('' if base is None else f' (before it {base.source})')
    return Reference(out['q'], out['dq'], out.get('ddq'), out.get('effort'), source=source)


def _state_point(message, rename: dict) -> dict | None:
    """{'q', 'dq', 'ddq', 'effort': (n,) in the model's joint order} of a controller_state message (the fields it
    fills), or None where it does not name every joint or holds no reference position and velocity."""
    names = list(message.joint_names)
    if sorted(names) != sorted(rename):
        return None
    order = [names.index(name) for name in rename]
    reference = getattr(message, 'reference', None) or getattr(message, 'desired', None)
    output = getattr(message, 'output', None)
    if reference is None:
        return None

    def field(point, name):
        values = np.asarray(getattr(point, name, []), dtype=float) if point is not None else np.zeros(0)
        return values[order] if values.size == len(names) and np.all(np.isfinite(values)) else None

    point = {'q': field(reference, 'positions'), 'dq': field(reference, 'velocities'),
             'ddq': field(reference, 'accelerations'),
             'effort': field(output, 'effort') if field(output, 'effort') is not None else field(reference, 'effort')}
    return point if point['q'] is not None and point['dq'] is not None else None
