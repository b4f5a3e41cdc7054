"""JointTrajectory messages as :class:`dynid.excite.trajectory.PointTrajectory`, and those a recording holds on the
controller's topic (``joint_trajectory_controller/joint_trajectory``: what dynid's excitation and feedforward send,
and what ``dynid simulate`` records beside the state).

:func:`trajectory_of_message` takes any object with a JointTrajectory's fields (rclpy's message, rosbags'), so the
nodes and the recordings read trajectories the same way.
"""

from __future__ import annotations

import numpy as np

from dynid.errors import InputError
from dynid.excite.trajectory import PointTrajectory
from dynid.io.bag import REFERENCE_TOPIC, recorded_messages
from dynid.io.cdr import stamp_ns
from dynid.io.recorder import recording_parts


def trajectory_of_message(message, joint_names) -> tuple[PointTrajectory | None, np.ndarray | None]:
    """(trajectory, effort (P, n) or None) of a JointTrajectory naming exactly ``joint_names`` (any order).

    An empty message gives (None, None): joint_trajectory_controller's "stop and hold". Points need
    positions; velocities, accelerations and effort are optional but, where given, one per joint and
    finite. ``time_from_start`` must increase (checked by :class:`PointTrajectory`).
    """
    names = list(message.joint_names)
    if not message.points:
        return None, None
    if sorted(names) != sorted(joint_names):
        raise InputError(f'joints {names} do not match {list(joint_names)}')
    n = len(names)
    times = [p.time_from_start.sec + p.time_from_start.nanosec * 1e-9 for p in message.points]

    def column(field: str, required: bool):
        rows = [list(getattr(p, field)) for p in message.points]
        if all(len(r) == 0 for r in rows) and not required:
            return None
        if any(len(r) != n for r in rows):
            raise InputError(f'every point needs {n} {field}')
        values = np.array(rows, dtype=float)
        if not np.all(np.isfinite(values)):
            raise InputError(f'{field} hold NaN or infinite values')
        return values

    positions = column('positions', True)
    velocities = column('velocities', False)
    accelerations = column('accelerations', False) if velocities is not None else None
    effort = column('effort', False)
    return PointTrajectory(tuple(names), times, positions, velocities, accelerations), effort


def read_trajectories(path, joint_names, recorded_names=None) -> list[tuple[int, int, PointTrajectory | None]]:
    """The trajectories of a recording (a bag, or a segmented recording's folder) on any topic ending in the
    controller's ``joint_trajectory_controller/joint_trajectory``, in the order they were recorded: (start [ns, the
    header stamp, or the recording time where the stamp is zero], recorded [ns], trajectory named by
    ``joint_names``; None for an empty one: stop and hold). ``recorded_names``: the joints as the recording names
    them, in ``joint_names``' order (None: the same). An empty list where the recording holds none; InputError for
    a message that names other joints or holds bad values."""
    parts = recording_parts(path)
    recorded = list(recorded_names or joint_names)
    rename = dict(zip(recorded, joint_names, strict=True))
    out = []
    for topic, recorded_ns, message in recorded_messages(parts, lambda t: t.lstrip('/').endswith(REFERENCE_TOPIC)):
        try:
            trajectory, _ = trajectory_of_message(message, recorded)
        except InputError as error:
            raise InputError(f'bag {path}: {topic}: {error}') from None
        if trajectory is not None:
            trajectory = PointTrajectory(tuple(rename[j] for j in trajectory.joint_names), trajectory.time_s,
                                         trajectory.positions, trajectory.velocities, trajectory.accelerations)
        out.append((stamp_ns(message.header.stamp) or recorded_ns, recorded_ns, trajectory))
    return out
