"""Checks of recorded or live streams against what a robot's driver publishes.

- **An effort that carries nothing**: a joint that moves while its effort (joint torque, or motor current)
  keeps one value, exactly, is not being measured: the driver does not fill that field. Seen with
  gz_ros2_control before the fix of its issue #169 (PR #186, 2025), whose effort state stayed 0 (the line
  that wrote it was commented out), with hardware interfaces that export no effort state, and with mock
  hardware that mirrors an effort command nobody sends. :func:`effort_problem` says so in one sentence
  with the likely cause; :class:`EffortWatch` does it for a live stream, batch by batch.
- **Another controller's rate**: Universal Robots' CB3 controllers (UR3, UR5, UR10) publish at 125 Hz at most, the
  e-Series at 500 Hz; a recording at 500 Hz given a CB3 model (``--robot ur10`` on UR10e data) is worth a word:
  :func:`rate_note`. Not the other way round: an e-Series streams at 125 Hz as well where its client asks for it
  (RTDE's target frequency, Universal_Robots_Client_Library PR #85), so 125 Hz says nothing of the generation.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from dynid.model.robots import BUILTINS

#: A joint moves when its position spans more than this [rad or m] over the samples checked.
MOVING_SPAN = 0.01
#: The fewest samples an effort is judged on.
MIN_SAMPLES = 50
#: Relative spread of a sample rate around a controller's rate that counts as that rate.
RATE_TOLERANCE = 0.05

_CAUSES_ZERO = ('the driver does not fill effort (gz_ros2_control before the fix of its issue #169, PR #186, '
                'reports 0; a hardware interface without an effort state interface; mock hardware mirroring an '
                'effort command nobody sends)')
_CAUSES_HELD = ('the effort state is set once and never updated (an initial_value of the effort state '
                'interface, a driver that does not write it)')


def constant_while_moving(effort: np.ndarray, q: np.ndarray) -> np.ndarray:
    """(n,) bool: joints whose ``q`` spans more than :data:`MOVING_SPAN` while ``effort`` keeps exactly one value
    (NaN samples ignored); all False below :data:`MIN_SAMPLES` samples."""
    effort, q = np.atleast_2d(effort), np.atleast_2d(q)
    if effort.shape[0] < MIN_SAMPLES:
        return np.zeros(effort.shape[1], dtype=bool)
    with np.errstate(invalid='ignore'):
        span = np.nanmax(effort, axis=0) - np.nanmin(effort, axis=0)
    moving = np.nanmax(q, axis=0) - np.nanmin(q, axis=0) > MOVING_SPAN
    return moving & (span == 0.0)


def _sentence(joints: list[str], values: np.ndarray, n_joints: int, what: str) -> str:
    where = 'every joint' if len(joints) == n_joints else f'joints {joints}'
    if np.all(values == 0.0):
        return f'{what} is 0 on {where} while they move: {_CAUSES_ZERO}'
    shown = ', '.join(f'{v:.4g}' for v in values[:4]) + (', …' if len(values) > 4 else '')
    return f'{what} keeps one value on {where} while they move ({shown}): {_CAUSES_HELD}'


def effort_problem(effort: np.ndarray | None, q: np.ndarray, joint_names: Sequence[str],
                   what: str = 'joint_states effort') -> str | None:
    """One sentence naming the joints whose ``effort`` (N, n) is constant while ``q`` (N, n) moves, with the
    likely cause; None when there is none (or no effort)."""
    if effort is None:
        return None
    stuck = constant_while_moving(effort, q)
    if not stuck.any():
        return None
    values = np.asarray(effort, dtype=float)
    first = values[np.argmax(np.isfinite(values), axis=0), np.arange(values.shape[1])]
    return _sentence([name for name, s in zip(joint_names, stuck, strict=True) if s], first[stuck],
                     len(joint_names), what)


class EffortWatch:
    """:func:`effort_problem` on a live stream: the span of each joint's effort and position since the start.

    ``update(effort, q)`` takes a batch (M, n) (effort may hold NaN where a message had none); ``problem()``
    is the sentence or None. ``reset()`` starts again (e.g. when the driver restarts).
    """

    def __init__(self, joint_names: Sequence[str], what: str = 'joint_states effort') -> None:
        self.joint_names, self.what = tuple(joint_names), what
        self.reset()

    def reset(self) -> None:
        n = len(self.joint_names)
        self.samples = 0
        self.effort_low, self.effort_high = np.full(n, np.inf), np.full(n, -np.inf)
        self.q_low, self.q_high = np.full(n, np.inf), np.full(n, -np.inf)
        self.first = np.full(n, np.nan)

    def update(self, effort: np.ndarray | None, q: np.ndarray) -> None:
        if effort is None or len(effort) == 0:
            return
        effort, q = np.atleast_2d(effort), np.atleast_2d(q)
        finite = np.isfinite(effort)
        if not finite.any():
            return
        with np.errstate(invalid='ignore'):
            self.effort_low = np.fmin(self.effort_low, np.nanmin(np.where(finite, effort, np.nan), axis=0))
            self.effort_high = np.fmax(self.effort_high, np.nanmax(np.where(finite, effort, np.nan), axis=0))
        self.q_low, self.q_high = np.minimum(self.q_low, q.min(axis=0)), np.maximum(self.q_high, q.max(axis=0))
        unset = np.isnan(self.first) & finite.any(axis=0)
        self.first[unset] = effort[np.argmax(finite, axis=0), np.arange(effort.shape[1])][unset]
        self.samples += len(effort)

    def problem(self) -> str | None:
        if self.samples < MIN_SAMPLES:
            return None
        stuck = (self.q_high - self.q_low > MOVING_SPAN) & (self.effort_high == self.effort_low)
        if not stuck.any():
            return None
        return _sentence([n for n, s in zip(self.joint_names, stuck, strict=True) if s], self.first[stuck],
                         len(self.joint_names), self.what)


#: The rate of Universal Robots' e-Series controllers [Hz].
E_SERIES_RATE_HZ = 500.0
#: Universal Robots arms of one size in the CB3 series (125 Hz) and in the e-Series (500 Hz).
UR_SIBLINGS = {'ur3': 'ur3e', 'ur5': 'ur5e', 'ur10': 'ur10e'}


def rate_note(builtin: str | None, rate_hz: float) -> str | None:
    """A sentence when a recording at ``rate_hz`` [Hz] is at the e-Series' 500 Hz while the built-in ``builtin`` is
    a CB3 arm, whose controller publishes at 125 Hz at most; None otherwise (module docstring)."""
    robot = BUILTINS.get(builtin or '')
    if robot is None or robot.family != 'ur' or robot.rate_hz >= E_SERIES_RATE_HZ or not np.isfinite(rate_hz) \
            or abs(rate_hz / E_SERIES_RATE_HZ - 1.0) > RATE_TOLERANCE:
        return None
    sibling = UR_SIBLINGS.get(builtin)
    ask = f' (robot {sibling}?)' if sibling else ''
    return (f'the recording runs at {rate_hz:.4g} Hz, the rate of the e-Series controllers, but {builtin} is a '
            f'{robot.title} whose controller publishes at {robot.rate_hz:g} Hz: is this another arm{ask}')
    rates = {500.0: 'e-Series'}
    for rate, series in rates.items():
        if rate > robot.rate_hz and abs(rate_hz / rate - 1.0) <= RATE_TOLERANCE:
            sibling = UR_SIBLINGS.get(builtin) or {v: k for k, v in UR_SIBLINGS.items()}.get(builtin)
            ask = f' (robot {sibling}?)' if sibling else ''
            return (f'the recording runs at {rate_hz:.4g} Hz, the rate of the {series} controllers, but {builtin} is '
                    f'a {robot.title} whose controller publishes at {robot.rate_hz:g} Hz: is this another arm'
                    f'{ask}')
    return None
