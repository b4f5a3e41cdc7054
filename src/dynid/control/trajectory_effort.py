"""The effort field of a point trajectory for joint_trajectory_controller, with points where it needs them.

joint_trajectory_controller (``interpolation_method: splines``) moves along quintic segments where the
points give positions, velocities and accelerations, cubic ones with positions and velocities, and
straight lines with positions only (:class:`dynid.excite.trajectory.PointTrajectory` does the same),
and adds the points' ``effort`` **interpolated linearly** as feedforward. The feedforward of the
interpolated motion, τ_ff(q_d(t), q̇_d(t), q̈_d(t)), is not linear between points, so this module
evaluates it densely and keeps points where the straight line between them would be too far off.

**Rule (decision).**

1. Grid: t_k = t_0 + k/rate for k = 0, 1, ... up to the last point t_P (t_P itself the last grid time);
   ``rate`` is the controller's sample rate (the Feedforward's ``rate_hz``, so terms that difference over
   samples, flexible_joint, see the rate they assume).
2. Desired motion on the grid from the trajectory's own interpolation; what the message leaves out
   (accelerations, or velocities and accelerations) is the derivative of that interpolation. At t_P
   the arriving (left) values are used, so a chunk that ends moving keeps its velocity.
3. One :meth:`Feedforward.evaluate` over the whole grid (terms with memory start undeformed at t_0).
4. The effort of each given point is the grid effort interpolated linearly to its time (exact where
   a point falls on the grid, as the points of a planner sampling at the controller rate do).
5. Points are added (Douglas–Peucker): while, between two consecutive points, the straight line of
   their efforts misses the grid effort by more than ``tolerance`` on some joint at some grid sample,
   the grid sample that misses most becomes a point. So every grid sample ends within ``tolerance`` of
   the line the controller follows (a discontinuity of the grid effort, e.g. the acceleration jump at
   a knot of cubic segments, is kept to one grid step).
6. An added point carries the positions (and velocities, accelerations, where the message has them) of
   the interpolation at its time: a quintic, cubic or line split at one of its own points, with its
   own derivatives there, is the same polynomial, so the controller's motion does not change.

Nothing is computed before t_0 (the controller moves from its current state to the first point).

**Motor-side reference (option).** With ``correction`` the positions of every point (given and added)
get the flexible-joint reference correction φ_d (:meth:`Feedforward.reference_correction`, thesis ch.2
eq. (2.69)), and their velocities and accelerations, where the trajectory has them, φ̇_d and φ̈_d: all
computed on the grid of rule 1 and interpolated linearly to the points' times (exact on the grid). The
efforts stay those of the uncorrected motion q_d (the link follows q_d; only the rotor reference moves).
Right only for a controller that closes its loop on the motor position.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dynid.control.context import FeedforwardContext
from dynid.errors import InputError
from dynid.excite.trajectory import PointTrajectory

#: Grid samples one trajectory may have at most (about an hour at 500 Hz).
MAX_GRID = 2_000_000
#: Douglas–Peucker passes before every still-violating grid sample is taken as a point.
MAX_PASSES = 60


@dataclass(frozen=True)
class TrajectoryEffort:
    """A point trajectory with efforts (module docstring), columns in the trajectory's joint order.

    Attributes:
        time_s: (M,) point times [s]. positions, velocities, accelerations: (M, n) or None as given.
        effort: (M, n) feedforward at the points [N·m, or A with effort_is_current].
        given: (M,) True for the message's own points, False for added ones.
        max_error: largest miss of the linear effort against the grid effort [effort unit].
        grid_samples: grid size (samples evaluated).
        corrected: whether positions (velocities, accelerations) carry the motor-side correction.
    """

    time_s: np.ndarray
    positions: np.ndarray
    velocities: np.ndarray | None
    accelerations: np.ndarray | None
    effort: np.ndarray
    given: np.ndarray
    max_error: float
    grid_samples: int
    corrected: bool = False

    @property
    def added(self) -> int:
        return int(np.count_nonzero(~self.given))


def grid_times(trajectory: PointTrajectory, rate_hz: float) -> np.ndarray:
    """t_0 + k/rate up to the last point, which closes the grid (rule 1)."""
    t0, t_end = float(trajectory.time_s[0]), trajectory.duration_s
    steps = int(np.floor((t_end - t0) * rate_hz + 1e-9))
    if steps + 2 > MAX_GRID:
        raise InputError(f'trajectory of {t_end - t0:.1f} s at {rate_hz:g} Hz needs {steps + 2} samples '
                         f'(at most {MAX_GRID}): send it in pieces')
    times = t0 + np.arange(steps + 1) / rate_hz
    if t_end - times[-1] > 1e-9:
        times = np.append(times, t_end)
    else:
        times[-1] = t_end
    return times


def desired_motion(trajectory: PointTrajectory, times: np.ndarray):
    """(q, q̇, q̈) of the interpolation at ``times``; at the last point its arriving values (rule 2)."""
    query = times.copy()
    if trajectory.time_s.size > 1:
        query[query >= trajectory.duration_s] = np.nextafter(trajectory.duration_s, -np.inf)
    return trajectory.evaluate(query)


def grid_motion(trajectory: PointTrajectory, joint_names, rate_hz: float, max_samples: int | None = None):
    """(q, q̇, q̈) on the grid of rule 1, columns in ``joint_names`` order, evenly thinned to ``max_samples``."""
    times = grid_times(trajectory, rate_hz)
    if max_samples is not None and times.size > max_samples:
        times = times[np.linspace(0, times.size - 1, max_samples).astype(int)]
    order = [list(trajectory.joint_names).index(name) for name in joint_names]
    return tuple(x[:, order] for x in desired_motion(trajectory, times))


def fill_effort(feedforward, trajectory: PointTrajectory, rate_hz: float, tolerance: float,
                context: FeedforwardContext | None = None, correction: bool = False) -> TrajectoryEffort:
    """Efforts for every point of ``trajectory`` and the points added for them (module docstring).

    Args:
        feedforward: a :class:`~dynid.control.Feedforward`; its robot's joints must all be in the trajectory.
        trajectory: the reference, joints in any order (the result keeps that order).
        rate_hz: grid rate [Hz] > 0. tolerance: largest miss of the linear effort [effort unit] > 0.
        context: signals beside the motion, held over the trajectory (temperature, α̂, payload).
        correction: add the motor-side reference correction to the points (module docstring).
    """
    if not (np.isfinite(rate_hz) and rate_hz > 0 and np.isfinite(tolerance) and tolerance > 0):
        raise InputError(f'rate_hz and tolerance must be > 0, got {rate_hz!r}, {tolerance!r}')
    names = list(trajectory.joint_names)
    model = list(feedforward.robot.joint_names)
    if sorted(names) != sorted(model):
        raise InputError(f'trajectory joints {names} are not the robot\'s {model}')
    to_model = [names.index(name) for name in model]
    to_trajectory = np.argsort(to_model)

    times = grid_times(trajectory, rate_hz)
    q, dq, ddq = desired_motion(trajectory, times)
    effort = feedforward.evaluate(q[:, to_model], dq[:, to_model], ddq[:, to_model], context)[:, to_trajectory]

    # The points' efforts (rule 4), then the grid and the points as one time line.
    knots = trajectory.time_s
    knot_effort = np.column_stack([np.interp(knots, times, effort[:, j]) for j in range(effort.shape[1])])
    nearest = np.clip(np.searchsorted(times, knots), 0, times.size - 1)
    on_grid = np.abs(times[nearest] - knots) <= 1e-9
    grid_keep = np.ones(times.size, dtype=bool)
    grid_keep[nearest[on_grid]] = False  # a point on a grid time replaces that sample
    line_t = np.concatenate([knots, times[grid_keep]])
    line_e = np.vstack([knot_effort, effort[grid_keep]])
    order = np.argsort(line_t, kind='stable')
    line_t, line_e = line_t[order], line_e[order]
    is_knot = order < knots.size
    keep, max_error = _douglas_peucker(line_t, line_e, is_knot, tolerance)

    added_t = line_t[keep & ~is_knot]
    out_t = np.concatenate([knots, added_t])
    order = np.argsort(out_t, kind='stable')
    given = (order < knots.size)
    q_add, dq_add, ddq_add = trajectory.evaluate(added_t) if added_t.size else (None, None, None)

    def stacked(points, inserted):
        if points is None:
            return None
        return points if inserted is None else np.vstack([points, inserted])[order]

    motion = [stacked(trajectory.positions, q_add), stacked(trajectory.velocities, dq_add),
              stacked(trajectory.accelerations, ddq_add)]
    if correction:
        shifts = feedforward.reference_correction(q[:, to_model], dq[:, to_model], ddq[:, to_model], context)
        for k, shift in enumerate(shifts):
            if motion[k] is not None:
                grid = shift[:, to_trajectory]
                motion[k] = motion[k] + np.column_stack([np.interp(out_t[order], times, grid[:, j])
                                                         for j in range(grid.shape[1])])
    return TrajectoryEffort(
        time_s=out_t[order], positions=motion[0], velocities=motion[1], accelerations=motion[2],
        effort=np.vstack([knot_effort, line_e[keep & ~is_knot]])[order], given=given, max_error=max_error,
        grid_samples=int(times.size), corrected=bool(correction))


def _douglas_peucker(t: np.ndarray, effort: np.ndarray, fixed: np.ndarray, tolerance: float):
    """Samples to keep so that the linear interpolation between kept ones stays within ``tolerance``
    of every sample between them (rule 5), and the largest remaining miss. Vectorized over intervals:
    each pass adds the worst sample of every interval that still misses."""
    keep = fixed.copy()
    every = np.arange(t.size)
    for passes in range(MAX_PASSES + 1):
        kept = np.flatnonzero(keep)
        before = kept[np.clip(np.searchsorted(kept, every, side='right') - 1, 0, None)]
        after = kept[np.clip(np.searchsorted(kept, every, side='left'), 0, kept.size - 1)]
        span = t[after] - t[before]
        weight = np.divide(t - t[before], span, out=np.zeros_like(t), where=span > 0)[:, None]
        line = effort[before] + weight * (effort[after] - effort[before])
        miss = np.abs(line - effort).max(axis=1)
        miss[(every < kept[0]) | (every > kept[-1]) | keep] = 0.0  # outside the points: not the controller's
        bad = np.flatnonzero(miss > tolerance)
        if bad.size == 0:
            return keep, float(miss.max(initial=0.0))
        if passes == MAX_PASSES:  # pathological profile: take every sample still missing
            keep[bad] = True
            continue
        order = np.lexsort((-miss[bad], before[bad]))  # by interval, worst first
        first = np.ones(order.size, dtype=bool)
        first[1:] = before[bad][order][1:] != before[bad][order][:-1]
        keep[bad[order][first]] = True
    return keep, 0.0
