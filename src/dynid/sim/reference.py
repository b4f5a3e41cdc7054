"""The reference of the twin's joint controller, with joint_trajectory_controller semantics.

- A new trajectory replaces the active one from its start time; before that the previous
  reference continues (a trajectory stamped in the future waits).
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
    """Reference (q_r, q̇_r, q̈_r, effort) of the joints ``joint_names`` over absolute time (module docstring)."""

    def __init__(self, joint_names: Sequence[str]) -> None:
        self.joint_names = tuple(joint_names)
        self._previous = None
        self._active = _Hold(np.zeros(len(self.joint_names)))
        self._start = 0.0
        self._cache = None  # (t, active piece, value): the output sample is the next step's first

    def hold(self, q: np.ndarray, t: float) -> None:
        """Hold position q from time t on (this also cancels a trajectory)."""
        self._previous, self._active, self._start = None, _Hold(q), t

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
        self._previous = self._active if start > now else None
        self._active, self._start = _Moving(trajectory, order, start, effort), start

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
        values = self._active.sample_many(times)
        if self._previous is not None:
            early = times < self._start
            if np.any(early):
                for value, before in zip(values, self._previous.sample_many(times[early]), strict=True):
                    value[early] = before
        return values

    def sample(self, t: float):
        """(q_r, q̇_r, q̈_r, effort) at absolute time t [s], in robot joint order."""
        if self._cache is not None and self._cache[0] == t and self._cache[1] is self._active:
            return self._cache[2]
        value = self._previous.sample(t) if self._previous is not None and t < self._start else \
            self._active.sample(t)
        self._cache = (t, self._active, value)
        return value
