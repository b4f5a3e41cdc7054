"""The seeds' dedicated experiments as trajectory generators (point trajectories, joints by name).

=====================  =====================================================================================
experiment             what and where from
=====================  =====================================================================================
``plateaus``           constant-velocity plateaus of one joint, both directions, for friction maps
                       (PA-10 report §5 / App. C; thesis ch.4 §4.1): trapezoidal ±v pairs that return home
``gravity_sweep``      slow motion at 0.05 rad/s through the gravity load (thesis ch.6 §5.1, eq. (19))
``reciprocating``      hysteresis sweep: constant |q̈| = 0.05 rad/s², 3° net per cycle (thesis ch.6 eq. (21))
``bang_coast_bang``    random trapezoidal moves, targets/velocities/accelerations at 30–100 % of the allowed
                       values, dwells 0–1 s (thesis ch.3 §VII-A, stiffness estimation)
``waypoints``          the six-waypoint cycle of thesis ch.6 Table 1: synchronized linear joint moves,
                       π rad/s and 2π/3 rad/s², at rest at each waypoint
``payload_schedule``   any trajectory repeated once per payload mass with pauses (Hamon: 0, 3.5, 7.5 kg)
=====================  =====================================================================================

Each generator returns a :class:`PointTrajectory` sampled at ``rate_hz`` with positions, velocities
and accelerations, starting and ending at rest, and refuses (InputError) motions that leave the
robot's position or velocity limits.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from dynid.errors import InputError
from dynid.excite.trajectory import PointTrajectory, Trajectory, reorder_trajectory_output
from dynid.model.robot import RobotModel

#: Thesis ch.6 Table 1, degrees (UR5e joint order).
THESIS_WAYPOINTS_DEG = [
    [-110, 0, 0, -90, 90, 0],
    [-70, -30, -90, -130, 50, 120],
    [-140, -10, -130, -40, 125, 10],
    [-45, -55, 100, -90, 45, 150],
    [-45, -90, 0, -90, 0, 0],
    [-220, -90, 0, -90, 0, 0],
]
EXPERIMENTS = ('plateaus', 'gravity_sweep', 'reciprocating', 'bang_coast_bang', 'waypoints', 'payload_schedule')


def trapezoid(distance: float, velocity: float, acceleration: float) -> tuple[float, float, float]:
    """(accelerating time, coasting time, peak velocity) of a rest-to-rest move of |distance|."""
    d = abs(distance)
    if velocity <= 0 or acceleration <= 0:
        raise InputError('velocity and acceleration of a move must be > 0')
    if d == 0:
        return 0.0, 0.0, 0.0
    if d >= velocity**2 / acceleration:
        return velocity / acceleration, (d - velocity**2 / acceleration) / velocity, velocity
    t_a = np.sqrt(d / acceleration)
    return t_a, 0.0, acceleration * t_a


def _fitted_trapezoid(distance: float, t_a: float, t_c: float, peak: float,
                      duration: float) -> tuple[float, float, float]:
    """The rest-to-rest trapezoid (t_a, t_c, peak) over ``distance`` > 0 refitted to last ``duration`` [s]
    (>= its own 2·t_a + t_c): (accelerating time, coasting time, peak velocity).

    A move must end on a point (a whole number of sample periods), so it lasts a little longer than the
    move at the allowed limits. A move that coasts keeps its peak velocity and accelerates a little less,
    v·(duration − v/a) = distance (constant-velocity plateaus stay at their speed); a move that does not
    (constant |q̈|, the hysteresis sweep) keeps its acceleration and peaks a little lower, with a short
    coast. (Placing the faster profile's samples on the slower time grid instead left q̇ and q̈
    inconsistent with q, which quintic interpolation between the points turned into a q̈ ringing at the
    point rate.)
    """
    if t_c > 0:
        acceleration = peak**2 / (peak * duration - distance)
    else:
        acceleration = peak / t_a
        peak = 0.5 * (acceleration * duration
                      - np.sqrt(max(acceleration**2 * duration**2 - 4.0 * acceleration * distance, 0.0)))
    t_a = peak / acceleration
    return t_a, max(duration - 2.0 * t_a, 0.0), peak


def _profile(t: np.ndarray, t_a: float, t_c: float, peak: float):
    """Normalized distance s(t), ṡ, s̈ of a trapezoid with total distance 1 (t from 0 to 2t_a + t_c)."""
    total = peak * (t_a + t_c)
    if total == 0:
        return np.zeros_like(t), np.zeros_like(t), np.zeros_like(t)
    a = peak / t_a if t_a > 0 else 0.0
    t = np.clip(t, 0.0, 2 * t_a + t_c)
    up, coast, down = t < t_a, (t >= t_a) & (t < t_a + t_c), t >= t_a + t_c
    s, v, acc = np.empty_like(t), np.empty_like(t), np.empty_like(t)
    s[up], v[up], acc[up] = 0.5 * a * t[up] ** 2, a * t[up], a
    tc = t[coast] - t_a
    s[coast], v[coast], acc[coast] = 0.5 * a * t_a**2 + peak * tc, peak, 0.0
    td = t[down] - t_a - t_c
    s[down] = 0.5 * a * t_a**2 + peak * t_c + peak * td - 0.5 * a * td**2
    v[down], acc[down] = peak - a * td, -a
    return s / total, v / total, acc / total


class _Builder:
    """Appends synchronized rest-to-rest moves and dwells, sampled at a fixed rate."""

    def __init__(self, robot: RobotModel, start: np.ndarray, rate_hz: float) -> None:
        if not np.isfinite(rate_hz) or not 1.0 <= rate_hz <= 2000.0:
            raise InputError(f'point rate must be within 1–2000 Hz, got {rate_hz!r}')
        start = np.asarray(start, dtype=float).reshape(-1)
        if start.shape != (robot.n,):
            raise InputError(f'start must have {robot.n} positions')
        self.robot, self.rate = robot, float(rate_hz)
        self.current = start.copy()
        self.pieces: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = [
            (start[None, :], np.zeros((1, robot.n)), np.zeros((1, robot.n)))]

    def move(self, target: np.ndarray, velocity, acceleration) -> None:
        """Synchronized trapezoidal move: all joints finish together, none above its limits."""
        target = np.asarray(target, dtype=float)
        delta = target - self.current
        velocity = np.broadcast_to(np.asarray(velocity, dtype=float), delta.shape)
        acceleration = np.broadcast_to(np.asarray(acceleration, dtype=float), delta.shape)
        durations = [2 * ta + tc for ta, tc, _ in (trapezoid(d, v, a) for d, v, a in
                                                    zip(delta, velocity, acceleration, strict=True))]
        lead = int(np.argmax(durations))
        if durations[lead] == 0:
            return
        t_a, t_c, peak = trapezoid(delta[lead], velocity[lead], acceleration[lead])
        count = max(1, int(np.ceil((2 * t_a + t_c) * self.rate)))
        t_a, t_c, peak = _fitted_trapezoid(abs(delta[lead]), t_a, t_c, peak, count / self.rate)
        s, ds, dds = _profile(np.arange(1, count + 1) / self.rate, t_a, t_c, peak)
        self.pieces.append((self.current + np.outer(s, delta), np.outer(ds, delta), np.outer(dds, delta)))
        self.current = target.copy()

    def dwell(self, seconds: float) -> None:
        count = int(round(seconds * self.rate))
        if count > 0:
            zero = np.zeros((count, self.robot.n))
            self.pieces.append((np.tile(self.current, (count, 1)), zero, zero.copy()))

    def trajectory(self) -> PointTrajectory:
        q = np.vstack([p[0] for p in self.pieces])
        dq = np.vstack([p[1] for p in self.pieces])
        ddq = np.vstack([p[2] for p in self.pieces])
        times = np.arange(q.shape[0]) / self.rate
        trajectory = PointTrajectory(self.robot.joint_names, times, q, dq, ddq)
        check_robot_limits(self.robot, trajectory)
        return trajectory


def check_robot_limits(robot: RobotModel, trajectory: Trajectory, samples: int = 4000) -> None:
    """Raise InputError naming the joints whose position or velocity limits the trajectory breaks."""
    times = np.linspace(0.0, trajectory.duration_s, samples)
    q, dq, _ = (reorder_trajectory_output(v, trajectory.joint_names, robot.joint_names)
                for v in trajectory.evaluate(times))
    robot.require_ranges('the experiment', [n for n, moved in zip(robot.joint_names, np.ptp(q, axis=0) > 0, strict=True)
                                            if moved])
    position = (q.min(axis=0) < robot.lower_limits - 1e-9) | (q.max(axis=0) > robot.upper_limits + 1e-9)
    velocity = np.abs(dq).max(axis=0) > robot.velocity_limits * (1 + 1e-6)
    for label, bad in (('position', position), ('velocity', velocity)):
        if np.any(bad):
            names = [n for n, b in zip(robot.joint_names, bad, strict=True) if b]
            raise InputError(f'the trajectory breaks the {label} limits of {names}')


def _joint_index(robot: RobotModel, joint: int | str) -> int:
    if isinstance(joint, str) and joint in robot.joint_names:
        return robot.joint_names.index(joint)
    try:
        index = int(joint)
    except (TypeError, ValueError):
        raise InputError(f'unknown joint {joint!r}; joints: {list(robot.joint_names)}') from None
    if not 0 <= index < robot.n:
        raise InputError(f'joint index {index} is outside 0..{robot.n - 1}')
    return index


def constant_velocity_plateaus(robot: RobotModel, joint, start, speeds=(0.05, 0.1, 0.2, 0.4, 0.8, 1.2),
                               hold_s: float = 2.0, acceleration: float = 1.0,
                               rate_hz: float = 100.0) -> PointTrajectory:
    """Plateaus at +v then −v for each speed [rad/s], each held ``hold_s`` [s], back at the start after each pair."""
    j = _joint_index(robot, joint)
    build = _Builder(robot, start, rate_hz)
    for speed in speeds:
        travel = speed * hold_s + speed**2 / acceleration
        velocity = np.full(robot.n, np.inf)
        velocity[j] = speed
        for direction in (1.0, -1.0):
            target = build.current.copy()
            target[j] += direction * travel
            build.move(target, np.where(np.isinf(velocity), 1.0, velocity), acceleration)
        build.dwell(0.2)
    return build.trajectory()


def gravity_sweep(robot: RobotModel, joint, start, speed: float = 0.05, amplitude: float = 0.75,
                  acceleration: float = 0.05, rate_hz: float = 50.0) -> PointTrajectory:
    """Slow motion of one joint from start to start ± amplitude [rad] and back, at ``speed`` [rad/s]."""
    j = _joint_index(robot, joint)
    build = _Builder(robot, start, rate_hz)
    home = build.current.copy()
    for offset in (amplitude, -amplitude, 0.0):
        target = home.copy()
        target[j] += offset
        build.move(target, speed, acceleration)
    return build.trajectory()


def reciprocating_sweep(robot: RobotModel, joint, start, acceleration: float = 0.05, net_deg: float = 3.0,
                        back_deg: float = 1.5, cycles: int = 10, rate_hz: float = 200.0) -> PointTrajectory:
    """Hysteresis sweep: per cycle forward net+back degrees then back ``back_deg``, at constant |q̈|.

    Every stroke is accelerate-decelerate (no coast), so the acceleration keeps its magnitude
    ``acceleration`` [rad/s²] through each velocity reversal (thesis ch.6 eq. (21): 3° net per cycle,
    240 reversals per revolution; the backward stroke length is not given — ``back_deg``).
    """
    if cycles < 1 or net_deg <= 0 or back_deg <= 0:
        raise InputError('cycles, net_deg and back_deg must be > 0')
    j = _joint_index(robot, joint)
    build = _Builder(robot, start, rate_hz)
    forward, backward = np.deg2rad(net_deg + back_deg), np.deg2rad(back_deg)
    for _ in range(int(cycles)):
        for step in (forward, -backward):
            target = build.current.copy()
            target[j] += step
            build.move(target, np.inf, acceleration)
    return build.trajectory()


def bang_coast_bang(robot: RobotModel, joints: Sequence, start, duration_s: float = 35.0, seed: int = 0,
                    position_range: float = 1.0, velocity: float | None = None, acceleration: float = 3.0,
                    rate_hz: float = 200.0) -> PointTrajectory:
    """Random trapezoidal moves of the given joints (thesis ch.3 §VII-A) for about ``duration_s``.

    Each move: target offset from the start, speed and acceleration each uniform in 30–100 % of
    their maximum (``position_range`` [rad], ``velocity`` [rad/s] (default the velocity limit),
    ``acceleration`` [rad/s²]), with a random sign; then a dwell uniform in 0–1 s.
    """
    indices = [_joint_index(robot, j) for j in joints]
    rng = np.random.default_rng(seed)
    build = _Builder(robot, start, rate_hz)
    home = build.current.copy()
    v_max = robot.velocity_limits if velocity is None else np.full(robot.n, float(velocity))
    elapsed = 0.0
    while elapsed < duration_s:
        target = home.copy()
        for j in indices:
            target[j] += rng.choice([-1.0, 1.0]) * rng.uniform(0.3, 1.0) * position_range
        speed = rng.uniform(0.3, 1.0) * np.where(np.isfinite(v_max), v_max, np.pi)
        before = sum(p[0].shape[0] for p in build.pieces)
        build.move(target, speed, rng.uniform(0.3, 1.0) * acceleration)
        build.dwell(rng.uniform(0.0, 1.0))
        elapsed += (sum(p[0].shape[0] for p in build.pieces) - before) / rate_hz
    build.move(home, 0.5 * np.where(np.isfinite(v_max), v_max, np.pi), acceleration)
    return build.trajectory()


def waypoint_cycle(robot: RobotModel, waypoints_deg=None, velocity: float = np.pi,
                   acceleration: float = 2 * np.pi / 3, cycles: int = 2, rate_hz: float = 100.0) -> PointTrajectory:
    """Synchronized linear joint moves wp1 → … → wp6 → wp1, at rest at each (thesis ch.6 Table 1)."""
    table = np.deg2rad(np.asarray(THESIS_WAYPOINTS_DEG if waypoints_deg is None else waypoints_deg, dtype=float))
    if table.ndim != 2 or table.shape[1] != robot.n:
        raise InputError(f'waypoints need {robot.n} joint values each (the default table is for 6-joint arms)')
    build = _Builder(robot, table[0], rate_hz)
    for _ in range(int(cycles)):
        for target in [*table[1:], table[0]]:
            build.move(target, velocity, acceleration)
    return build.trajectory()


def payload_schedule(robot: RobotModel, trajectory: Trajectory, masses=(0.0, 3.5, 7.5), pause_s: float = 5.0,
                     com=(0.0, 0.0, 0.05), rate_hz: float = 100.0) -> tuple[PointTrajectory, list[dict]]:
    """``trajectory`` once per payload mass [kg], with a pause at the start position to change payloads.

    Returns the trajectory and the schedule [{'start_s', 'mass_kg', 'com'}] (written to the file;
    ``dynid simulate`` changes the simulated payload at those times).
    """
    if not masses or any(m < 0 for m in masses):
        raise InputError('payload masses must be a non-empty list of values >= 0 kg')
    times = np.arange(0.0, trajectory.duration_s, 1.0 / rate_hz)
    times = np.append(times, trajectory.duration_s)
    q, dq, ddq = (reorder_trajectory_output(v, trajectory.joint_names, robot.joint_names)
                  for v in trajectory.evaluate(times))
    pause = max(1, int(round(pause_s * rate_hz)))
    pieces, schedule, offset = [], [], 0.0
    for mass in masses:
        still = np.zeros((pause, robot.n))
        pieces.append((np.tile(q[0], (pause, 1)), still, still.copy(), offset + np.arange(pause) / rate_hz))
        schedule.append({'start_s': float(offset), 'mass_kg': float(mass), 'com': [float(c) for c in com]})
        offset += pause / rate_hz
        pieces.append((q, dq, ddq, offset + times))
        offset += trajectory.duration_s + 1.0 / rate_hz
    q_all, dq_all, ddq_all, t_all = (np.concatenate([p[i] for p in pieces]) for i in range(4))
    result = PointTrajectory(robot.joint_names, t_all, q_all, dq_all, ddq_all)
    check_robot_limits(robot, result)
    return result, schedule
