"""Glitch and range checks of logged joint data, before resampling (``dynid import``).

A row (one stamp, all joints) is dropped, with its reason, when

- its stamp is not after every earlier stamp (a repeated or backward stamp);
- a value is out of range: position outside the joint limits widened by ``POSITION_MARGIN_RAD``;
  |velocity| above ``VELOCITY_FACTOR`` times the velocity limit; |current| above the current bound;
  |joint torque| above ``TORQUE_FACTOR`` times the effort limit; temperature outside
  ``TEMPERATURE_RANGE_C``;
- its position is a spike: on some joint the step into the row and the step out of it both exceed
  what the joint can move in that time, ``JUMP_FACTOR``·v_max·Δt plus twice the position rounding
  seen in the data, and they have opposite signs (the sample leaves the path and comes back).

A single step beyond that bound with no return (an encoder reset, a lost stretch) is not bridged: the
recording is split there (:attr:`CheckedLog.breaks`). v_max is the joint's velocity limit where the
robot states one, else ``JUMP_FACTOR`` times the largest logged |velocity| of that joint. The current
bound is ``CURRENT_FACTOR``·effort limit/|drive gain| where the robot has both, or the one given.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

POSITION_MARGIN_RAD = 0.1
VELOCITY_FACTOR = 1.5
TORQUE_FACTOR = 3.0
CURRENT_FACTOR = 3.0
JUMP_FACTOR = 1.5
TEMPERATURE_RANGE_C = (-40.0, 150.0)


@dataclass(frozen=True)
class LogLimits:
    """Per-joint bounds (n,) of the checks (module docstring); inf or None where there is none."""

    lower: np.ndarray
    upper: np.ndarray
    velocity: np.ndarray
    current: np.ndarray | None = None
    torque: np.ndarray | None = None

    @classmethod
    def of_robot(cls, robot, current_limit_a: float | None = None) -> LogLimits:
        """The bounds from a :class:`~dynid.model.robot.RobotModel`'s limits and drives; ``current_limit_a``
        [A] replaces the derived current bound."""
        n = robot.n
        current = None
        if current_limit_a is not None:
            current = np.full(n, float(current_limit_a))
        elif robot.drives is not None and np.all(np.isfinite(robot.effort_limits)):
            current = CURRENT_FACTOR * robot.effort_limits / np.abs(robot.drives.drive_gain)
        torque = TORQUE_FACTOR * robot.effort_limits if np.all(np.isfinite(robot.effort_limits)) else None
        return cls(np.asarray(robot.lower_limits, float), np.asarray(robot.upper_limits, float),
                   np.asarray(robot.velocity_limits, float), current, torque)


@dataclass
class CheckedLog:
    """The outcome of :func:`check_log`: ``keep`` (N,) rows that passed; ``dropped`` reason → row indices;
    ``breaks`` row indices (into the kept rows' original numbering) before which the path jumps."""

    keep: np.ndarray
    dropped: dict[str, np.ndarray] = field(default_factory=dict)
    breaks: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=int))
    rounding_rad: float = 0.0
    notes: list[str] = field(default_factory=list)


def position_rounding(q: np.ndarray) -> float:
    """The position resolution seen in the data [rad]: the smallest typical nonzero step (0 if none)."""
    steps = np.abs(np.diff(q, axis=0)).ravel()
    steps = steps[steps > 1e-12]
    return float(np.percentile(steps, 1.0)) if steps.size else 0.0


def _drop(dropped: dict, keep: np.ndarray, reason: str, rows: np.ndarray) -> None:
    rows = np.flatnonzero(rows & keep)
    if rows.size:
        dropped[reason] = rows
        keep[rows] = False


def check_log(t: np.ndarray, signals: dict[str, np.ndarray], limits: LogLimits,
              joint_names) -> CheckedLog:
    """Check rows of a log (module docstring). ``t`` (N,) [s]; ``signals`` (N, n) arrays by name."""
    names = list(joint_names)
    n_rows = t.size
    keep = np.ones(n_rows, dtype=bool)
    dropped: dict[str, np.ndarray] = {}
    notes: list[str] = []
    earlier_max = np.maximum.accumulate(np.concatenate([[-np.inf], t[:-1]]))
    _drop(dropped, keep, 'stamp not after the previous one', t <= earlier_max)

    def joints(mask2d: np.ndarray) -> str:
        return ', '.join(names[j] for j in np.flatnonzero(mask2d[keep].any(axis=0)))

    q = signals['q']
    outside = (q < limits.lower - POSITION_MARGIN_RAD) | (q > limits.upper + POSITION_MARGIN_RAD)
    if outside[keep].any():
        _drop(dropped, keep, f'position outside the joint limits ({joints(outside)})', outside.any(axis=1))
    checks = [('dq', limits.velocity * VELOCITY_FACTOR, f'|velocity| above {VELOCITY_FACTOR:g}× the limit'),
              ('current', limits.current, 'absurd |current| (above the current bound)'),
              ('tau', limits.torque, f'|joint torque| above {TORQUE_FACTOR:g}× the effort limit')]
    for signal, bound, label in checks:
        values = signals.get(signal)
        if values is None:
            continue
        if bound is None:
            notes.append(f'no range check of {signal} (no bound: the robot has no drive data or effort limits'
                         + ('; give --current-limit)' if signal == 'current' else ')'))
            continue
        bad = np.abs(values) > bound
        if bad[keep].any():
            _drop(dropped, keep, f'{label} ({joints(bad)})', bad.any(axis=1))
    if signals.get('temperature') is not None:
        low, high = TEMPERATURE_RANGE_C
        temperature = signals['temperature']
        bad = (temperature < low) | (temperature > high)
        if bad[keep].any():
            _drop(dropped, keep, f'temperature outside {low:g}…{high:g} °C ({joints(bad)})', bad.any(axis=1))

    rounding = position_rounding(q[keep])
    velocity = limits.velocity.copy()
    if signals.get('dq') is not None and not np.all(np.isfinite(velocity)):
        logged = JUMP_FACTOR * np.abs(signals['dq'][keep]).max(axis=0)
        velocity = np.where(np.isfinite(velocity), velocity, logged)
    rows = np.flatnonzero(keep)
    breaks = np.zeros(0, dtype=int)
    if np.all(np.isfinite(velocity)) and rows.size >= 3:
        qk, tk = q[rows], t[rows]
        step = np.diff(qk, axis=0)
        bound = JUMP_FACTOR * velocity * np.diff(tk)[:, None] + 2.0 * rounding
        big = np.abs(step) > bound
        spike = big[:-1] & big[1:] & (np.sign(step[:-1]) != np.sign(step[1:]))
        spike_rows = np.zeros(n_rows, dtype=bool)
        spike_rows[rows[1:-1][spike.any(axis=1)]] = True
        if spike_rows.any():
            mask = np.zeros((n_rows, q.shape[1]), dtype=bool)
            mask[rows[1:-1]] = spike
            _drop(dropped, keep, f'position jump beyond {JUMP_FACTOR:g}·v_max·Δt and back ({joints(mask)})',
                  spike_rows)
            rows = np.flatnonzero(keep)
            qk, tk = q[rows], t[rows]
            step = np.diff(qk, axis=0)
            bound = JUMP_FACTOR * velocity * np.diff(tk)[:, None] + 2.0 * rounding
            big = np.abs(step) > bound
        breaks = rows[1:][big.any(axis=1)]
    else:
        notes.append('no position jump check (no velocity limit and no velocity column)')
    return CheckedLog(keep, dropped, breaks, rounding, notes)
