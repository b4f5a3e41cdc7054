"""The reference of a joint controller fed trajectories, with joint_trajectory_controller semantics (the twin's
controller, and the reference a recording of the trajectories sent reconstructs).

- A new trajectory replaces the reference from its start time on; before that the reference
  continues as it was (a trajectory stamped in the future waits). Several may wait at once (chunks
  of one motion that arrived while the twin ran late): each runs from its start to the next one's.
- Joints are matched by name; a trajectory must name every joint of the robot (partial goals are
  refused, as with ``allow_partial_joints_goal: false``).
- Point trajectories whose first point lies after their start are interpolated from the current
  reference (position, velocity, acceleration, effort) at the start time.
- After the end, the last position is held at rest. The effort of points is interpolated linearly.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from dynid.errors import InputError
from dynid.excite.trajectory import FourierTrajectory, PointTrajectory, Trajectory


class _Hold:
    def __init__(self, q: np.ndarray) -> None:
        self.q = np.array(q, dtype=float)

    def sample(self, t: float):
        zero = np.zeros_like(self.q)
        return self.q.copy(), zero, zero.copy(), zero.copy()

    def sample_many(self, t: np.ndarray):
        q = np.tile(self.q, (t.size, 1))
        zero = np.zeros_like(q)
        return q, zero, zero.copy(), zero.copy()


class _Moving:
    """A trajectory started at ``start`` [s], columns reordered to the robot's joints."""

    def __init__(self, trajectory: Trajectory, order: list[int], start: float,
                 effort: np.ndarray | None) -> None:
        self.trajectory, self.start = trajectory, start
        self.order = None if order == list(range(len(order))) else order
        self.effort = effort
        self.n = len(order)
        self.end_q = self._evaluate(trajectory.duration_s)[0]

    def _evaluate(self, tau: float):
        q, dq, ddq = self.trajectory.evaluate(np.array([tau]))
        if self.order is None:
            return q[0], dq[0], ddq[0]
        return q[0, self.order], dq[0, self.order], ddq[0, self.order]

    def _effort(self, tau: float) -> np.ndarray:
        if self.effort is None:
            return np.zeros(self.n)
        times = self.trajectory.time_s
        effort = np.array([np.interp(tau, times, self.effort[:, j]) for j in range(self.effort.shape[1])])
        return effort if self.order is None else effort[self.order]

    def sample_many(self, t: np.ndarray):
        tau = np.clip(t - self.start, 0.0, self.trajectory.duration_s)
        q, dq, ddq = self.trajectory.evaluate(tau)
        if self.order is not None:
            q, dq, ddq = q[:, self.order], dq[:, self.order], ddq[:, self.order]
        ended = t - self.start >= self.trajectory.duration_s
        q[ended], dq[ended], ddq[ended] = self.end_q, 0.0, 0.0
        if self.effort is None:
            effort = np.zeros_like(q)
        else:
            effort = np.column_stack([np.interp(tau, self.trajectory.time_s, self.effort[:, j])
                                      for j in range(self.effort.shape[1])])
            effort = effort if self.order is None else effort[:, self.order]
            effort[ended] = 0.0
        return q, dq, ddq, effort

    def sample(self, t: float):
        tau = t - self.start
        if tau >= self.trajectory.duration_s:
            zero = np.zeros(self.n)
            return self.end_q.copy(), zero, zero.copy(), self._effort(self.trajectory.duration_s) * 0.0
        q, dq, ddq = self._evaluate(max(tau, 0.0))
        return q, dq, ddq, self._effort(max(tau, 0.0))


class ReferenceGenerator:
    """Reference (q_r, q̇_r, q̈_r, effort) of the joints ``joint_names`` over absolute time (module docstring).

    ``schedule`` holds (start [s], piece) in rising start order; piece i runs from its start to the
    start of piece i + 1. ``revision`` counts changes, so that users may keep sampled values.
    """

    def __init__(self, joint_names: Sequence[str]) -> None:
        self.joint_names = tuple(joint_names)
        self.schedule: list[tuple[float, _Hold | _Moving]] = [(0.0, _Hold(np.zeros(len(self.joint_names))))]
        self._cache = None  # (t, revision, value): the output sample is the next step's first
        self.revision = 0

    def _replace_from(self, start: float, piece, now: float) -> None:
        """Put ``piece`` in from ``start`` on, dropping what would have started later and what has ended."""
        kept = [entry for entry in self.schedule if entry[0] < start]
        self.schedule = [entry for k, entry in enumerate(kept) if k + 1 == len(kept) or kept[k + 1][0] > now]
        self.schedule.append((start, piece))
        self.revision += 1

    def hold(self, q: np.ndarray, t: float) -> None:
        """Hold position q from time t on (this also cancels a trajectory)."""
        self._replace_from(t, _Hold(q), t)

    def _order(self, names: Sequence[str]) -> list[int]:
        names = list(names)
        if sorted(names) != sorted(self.joint_names):
            missing = sorted(set(self.joint_names) - set(names))
            unknown = sorted(set(names) - set(self.joint_names))
            raise InputError(f'trajectory joints do not match the robot: missing {missing}, unknown {unknown}')
        return [names.index(name) for name in self.joint_names]

    def follow(self, trajectory: Trajectory, start_time: float, now: float,
               effort: np.ndarray | None = None) -> None:
        """Follow ``trajectory`` from ``start_time``; ``effort`` (P, n) per point, for point trajectories."""
        order = self._order(trajectory.joint_names)
        if effort is not None:
            if not isinstance(trajectory, PointTrajectory):
                raise InputError('an effort profile needs a point trajectory')
            effort = np.asarray(effort, dtype=float)
            if effort.shape != trajectory.positions.shape or not np.all(np.isfinite(effort)):
                raise InputError('effort must be finite, one value per joint and point')
        start = max(start_time, now)
        if isinstance(trajectory, PointTrajectory) and trajectory.time_s[0] > 0:
            trajectory, effort = self._from_current(trajectory, effort, order, start)
        if not isinstance(trajectory, (PointTrajectory, FourierTrajectory)):
            raise InputError(f'unsupported trajectory type {type(trajectory).__name__}')
        self._replace_from(start, _Moving(trajectory, order, start, effort), now)

    def _from_current(self, trajectory: PointTrajectory, effort, order, start):
        q, dq, ddq, current_effort = self.sample(start)
        inverse = np.argsort(order)  # robot order -> trajectory order
        times = np.concatenate([[0.0], trajectory.time_s])
        positions = np.vstack([q[inverse], trajectory.positions])
        velocities = None if trajectory.velocities is None else np.vstack([dq[inverse], trajectory.velocities])
        accelerations = None if trajectory.accelerations is None else np.vstack(
            [ddq[inverse], trajectory.accelerations])
        if effort is not None:
            effort = np.vstack([current_effort[inverse], effort])
        return PointTrajectory(trajectory.joint_names, times, positions, velocities, accelerations), effort

    def sample_many(self, times: np.ndarray):
        """(q_r, q̇_r, q̈_r, effort), each (N, n), at absolute times (N,) [s], computed at once."""
        times = np.asarray(times, dtype=float)
        if times.size == 0:
            return self.schedule[-1][1].sample_many(times)
        starts = np.array([start for start, _ in self.schedule])
        piece = np.clip(np.searchsorted(starts, times, side='right') - 1, 0, None)
        if piece[0] == piece[-1]:  # one piece (times rise): the usual case
            return self.schedule[piece[0]][1].sample_many(times)
        values = None
        for k in np.unique(piece):
            inside = piece == k
            part = self.schedule[k][1].sample_many(times[inside])
            if values is None:
                values = tuple(np.empty((times.size, v.shape[1])) for v in part)
            for value, sampled in zip(values, part, strict=True):
                value[inside] = sampled
        return values

    def sample(self, t: float):
        """(q_r, q̇_r, q̈_r, effort) at absolute time t [s], in robot joint order."""
        if self._cache is not None and self._cache[0] == t and self._cache[1] == self.revision:
            return self._cache[2]
        piece = self.schedule[0][1]
        for start, candidate in self.schedule:
            if start > t:
                break
            piece = candidate
        value = piece.sample(t)
        self._cache = (t, self.revision, value)
        return value
