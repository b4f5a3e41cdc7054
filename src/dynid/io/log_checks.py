"""Glitch and range checks of logged joint data, before resampling (``dynid import``).

:func:`check_rows` drops a row (one stamp, all joints), with its reason, when

- its stamp is not after every earlier stamp (a repeated or backward stamp);
- it repeats the state of the row before it (:func:`dynid.io.retiming.repeated_states`: the logger read
  one controller sample twice);
- a value is out of range: position outside the joint limits widened by ``POSITION_MARGIN_RAD``;
  |velocity| above ``VELOCITY_FACTOR`` times the velocity limit; |current| above the current bound;
  |joint torque| above ``TORQUE_FACTOR`` times the effort limit; temperature outside
  ``TEMPERATURE_RANGE_C``;
- its position is a spike: on some joint the step into the row and the step out of it both exceed
  what the joint can move in that time, ``JUMP_FACTOR``·v_max·Δt plus twice the position rounding
  seen in the data, and they have opposite signs (the sample leaves the path and comes back).

Before the rows are placed in time, :func:`velocity_time_ratio` compares the stamps with the motion: the ratio r of
the positions' velocity over the stamps, Δq/Δt, to the logged velocity q̇ (least squares over all joints) is 1 where
the stamps are in seconds, over the joints whose positions span more than ``TIME_MOVING_RAD`` (below it, encoder
noise decides r). A time column that counts samples at 1 kHz, or holds milliseconds read as seconds, gives
r ≈ 10⁻³; r outside [1/``TIME_FACTOR``, ``TIME_FACTOR``] refuses the log with the period the motion implies,
r times the stamps' (a velocity that is filtered, lagged or noisy moves r by far less than that factor).

A single step beyond that bound with no return (an encoder reset, a lost stretch) is not bridged: the
recording is split there (:attr:`CheckedLog.breaks`). v_max is the joint's velocity limit where the
robot states one, else ``JUMP_FACTOR`` times the largest logged |velocity| of that joint. The current
bound is ``CURRENT_FACTOR``·effort limit/|drive gain| where the robot has both, or the one given.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from dynid.io.retiming import repeated_states

POSITION_MARGIN_RAD = 0.1
VELOCITY_FACTOR = 1.5
TORQUE_FACTOR = 3.0
CURRENT_FACTOR = 3.0
JUMP_FACTOR = 1.5
TIME_FACTOR = 10.0
TIME_MOVING_RAD = 0.05
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
    """The outcome of :func:`check_rows` or :func:`check_jumps`: ``keep`` (N,) rows that passed; ``dropped``
    reason → row indices; ``breaks`` row indices (of the rows given) before which the path jumps."""

    keep: np.ndarray
    dropped: dict[str, np.ndarray] = field(default_factory=dict)
    breaks: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=int))
    rounding_rad: float = 0.0
    notes: list[str] = field(default_factory=list)


#: The reason of a dropped repeated state, as import.yaml lists it.
REPEATED_STATE = 'repeated state (every joint signal equal to the row before: the logger read one sample twice)'


def position_rounding(q: np.ndarray) -> float:
    """The position resolution seen in the data [rad]: the smallest typical nonzero step (0 if none)."""
    steps = np.abs(np.diff(q, axis=0)).ravel()
    steps = steps[steps > 1e-12]
    return float(np.percentile(steps, 1.0)) if steps.size else 0.0


def velocity_time_ratio(t: np.ndarray, q: np.ndarray, dq: np.ndarray | None, moving_rad: float = 0.0) -> float:
    """The ratio r = Σ(Δq/Δt · q̇)/Σ q̇² of the positions' velocity over the stamps ``t`` (N,) [s] (central differences)
    to the logged velocity ``dq`` (N, n), over the joints whose positions ``q`` (N, n) span more than ``moving_rad``
    (module docstring); NaN where it cannot be told (no velocity, fewer than 3 rows, stamps not increasing, no
    motion)."""
    if dq is None or np.shape(t)[0] < 3:
        return float('nan')
    t = np.asarray(t, float)
    if not np.all(np.diff(t) > 0):
        return float('nan')
    moving = np.ptp(q, axis=0) > moving_rad
    with np.errstate(over='ignore', invalid='ignore'):
        slope = np.gradient(q[:, moving], t, axis=0)
        energy = float(np.sum(dq[:, moving] * dq[:, moving]))
        if not energy > 0:
            return float('nan')
        return float(np.sum(slope * dq[:, moving]) / energy)


def _drop(dropped: dict, keep: np.ndarray, reason: str, rows: np.ndarray) -> None:
    rows = np.flatnonzero(rows & keep)
    if rows.size:
        dropped[reason] = rows
        keep[rows] = False


def _joints(names, mask2d: np.ndarray, keep: np.ndarray) -> str:
    return ', '.join(names[j] for j in np.flatnonzero(mask2d[keep].any(axis=0)))


def check_rows(t: np.ndarray, signals: dict[str, np.ndarray], limits: LogLimits, joint_names) -> CheckedLog:
    """Stamps, repeated states and ranges of a log's rows (module docstring). ``t`` (N,) [s]; ``signals``
    (N, n) arrays by name."""
    names = list(joint_names)
    keep = np.ones(t.size, dtype=bool)
    dropped: dict[str, np.ndarray] = {}
    notes: list[str] = []
    earlier_max = np.maximum.accumulate(np.concatenate([[-np.inf], t[:-1]]))
    _drop(dropped, keep, 'stamp not after the previous one', t <= earlier_max)
    rows = np.flatnonzero(keep)
    repeated = np.zeros(t.size, dtype=bool)
    repeated[rows] = repeated_states({name: values[rows] for name, values in signals.items()})
    _drop(dropped, keep, REPEATED_STATE, repeated)

    q = signals['q']
    outside = (q < limits.lower - POSITION_MARGIN_RAD) | (q > limits.upper + POSITION_MARGIN_RAD)
    if outside[keep].any():
        _drop(dropped, keep, f'position outside the joint limits ({_joints(names, outside, keep)})',
              outside.any(axis=1))
    checks = [('dq', limits.velocity * VELOCITY_FACTOR, f'|velocity| above {VELOCITY_FACTOR:g}× the limit'),
              ('current', limits.current, 'absurd |current| (above the current bound)'),
              ('tau', limits.torque, f'|joint torque| above {TORQUE_FACTOR:g}× the effort limit')]
    for signal, bound, label in checks:
        values = signals.get(signal)
        if values is None:
            continue
        if bound is None:
            notes.append(f'no range check of {signal} (no bound: the robot has no drive data or effort limits'
                         + ('; give a current limit)' if signal == 'current' else ')'))
            continue
        bad = np.abs(values) > bound
        if bad[keep].any():
            _drop(dropped, keep, f'{label} ({_joints(names, bad, keep)})', bad.any(axis=1))
    if signals.get('temperature') is not None:
        low, high = TEMPERATURE_RANGE_C
        temperature = signals['temperature']
        bad = (temperature < low) | (temperature > high)
        if bad[keep].any():
            _drop(dropped, keep, f'temperature outside {low:g}…{high:g} °C ({_joints(names, bad, keep)})',
                  bad.any(axis=1))
    return CheckedLog(keep, dropped, notes=notes)


def check_jumps(t: np.ndarray, q: np.ndarray, dq: np.ndarray | None, limits: LogLimits, joint_names) -> CheckedLog:
    """Position spikes (dropped) and steps with no return (``breaks``) of rows at times ``t`` (N,) [s],
    positions ``q`` and velocities ``dq`` (N, n) or None (module docstring)."""
    names = list(joint_names)
    n_rows = t.size
    keep = np.ones(n_rows, dtype=bool)
    dropped: dict[str, np.ndarray] = {}
    notes: list[str] = []
    rounding = position_rounding(q)
    velocity = limits.velocity.copy()
    if dq is not None and not np.all(np.isfinite(velocity)):
        logged = JUMP_FACTOR * np.abs(dq).max(axis=0)
        velocity = np.where(np.isfinite(velocity), velocity, logged)
    breaks = np.zeros(0, dtype=int)
    if not (np.all(np.isfinite(velocity)) and n_rows >= 3):
        notes.append('no position jump check (no velocity limit and no velocity column)')
        return CheckedLog(keep, dropped, breaks, rounding, notes)
    step = np.diff(q, axis=0)
    bound = JUMP_FACTOR * velocity * np.diff(t)[:, None] + 2.0 * rounding
    big = np.abs(step) > bound
    spike = big[:-1] & big[1:] & (np.sign(step[:-1]) != np.sign(step[1:]))
    spike_rows = np.zeros(n_rows, dtype=bool)
    spike_rows[1:-1] = spike.any(axis=1)
    if spike_rows.any():
        mask = np.zeros((n_rows, q.shape[1]), dtype=bool)
        mask[1:-1] = spike
        _drop(dropped, keep, f'position jump beyond {JUMP_FACTOR:g}·v_max·Δt and back ({_joints(names, mask, keep)})',
              spike_rows)
    rows = np.flatnonzero(keep)
    step = np.diff(q[rows], axis=0)
    bound = JUMP_FACTOR * velocity * np.diff(t[rows])[:, None] + 2.0 * rounding
    breaks = rows[1:][(np.abs(step) > bound).any(axis=1)]
    return CheckedLog(keep, dropped, breaks, rounding, notes)
