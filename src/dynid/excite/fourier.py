"""Rest-to-rest finite Fourier excitation: limits, random feasible designs and the identifiability criteria.

A series q_j(t) = q_j0 + Σ_k (a_jk·sin(kωt) + b_jk·cos(kωt)) (Li et al. eq. (20)) is periodic. We
also make it start and end **at rest**, so that periods can be repeated and the robot approached
safely: q̇(0) = Σ_k kω·a_jk = 0 and q̈(0) = −Σ_k (kω)²·b_jk = 0, enforced by solving for the first
harmonic: a_j1 = −Σ_{k≥2} k·a_jk and b_j1 = −Σ_{k≥2} k²·b_jk. The free variables of joint j are its
offset q_j0 and (a_jk, b_jk) for k ≥ 2; with H harmonics that is 2H − 1 per joint.

q, q̇ and q̈ are linear in these variables, so the kinematic limits are linear constraints
(:meth:`FourierDesign.kinematic_matrices`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dynid.errors import InputError
from dynid.excite.trajectory import FourierTrajectory
from dynid.model.robot import RobotModel


@dataclass(frozen=True)
class ExcitationLimits:
    """Bounds an excitation must respect, per joint (arrays of length n).

    position_low, position_high [rad]; velocity, acceleration [rad/s, rad/s²] (symmetric);
    torque: model torque bound [N·m] or None; floor: height z [m] in the base frame below which no
    link may go (:mod:`dynid.excite.clearance`) or None.
    """

    position_low: np.ndarray
    position_high: np.ndarray
    velocity: np.ndarray
    acceleration: np.ndarray
    torque: np.ndarray | None = None
    floor: float | None = None

    def to_dict(self) -> dict:
        return {'position_low': self.position_low.tolist(), 'position_high': self.position_high.tolist(),
                'velocity': self.velocity.tolist(), 'acceleration': self.acceleration.tolist(),
                'torque': None if self.torque is None else self.torque.tolist(), 'floor': self.floor}


def default_limits(robot: RobotModel, home: np.ndarray, position_range: float = 1.0,
                   velocity_fraction: float = 0.5, acceleration: float = 2.5,
                   torque_fraction: float | None = None, floor: float | None = None) -> ExcitationLimits:
    """Limits around ``home``: ±position_range [rad] inside 90 % of the joint range, a fraction of the
    velocity limits (π rad/s where none is given), an acceleration bound [rad/s²], optionally a
    fraction of the effort limits and a floor height [m].

    Raises InputError naming the joint when ``home`` lies outside the usable range (90 % of the joint's).
    """
    for name, value in (('position_range', position_range), ('velocity_fraction', velocity_fraction),
                        ('acceleration', acceleration)):
        if not np.isfinite(value) or value <= 0:
            raise InputError(f'{name} must be > 0, got {value!r}')
    robot.require_ranges('the excitation')
    center = 0.5 * (np.where(np.isfinite(robot.lower_limits), robot.lower_limits, -np.pi)
                    + np.where(np.isfinite(robot.upper_limits), robot.upper_limits, np.pi))
    half = 0.45 * (np.where(np.isfinite(robot.upper_limits), robot.upper_limits, center + np.pi)
                   - np.where(np.isfinite(robot.lower_limits), robot.lower_limits, center - np.pi))
    low = np.maximum(center - half, home - position_range)
    high = np.minimum(center + half, home + position_range)
    outside = np.flatnonzero((low >= home) | (high <= home))
    if outside.size:
        j = outside[0]
        raise InputError(f'the home position of {robot.joint_names[j]} ({home[j]:.4g}) lies outside its usable '
                         f'range [{center[j] - half[j]:.4g}, {center[j] + half[j]:.4g}] (90 % of its limits)')
    velocity = velocity_fraction * np.where(np.isfinite(robot.velocity_limits), robot.velocity_limits, np.pi)
    torque = None if torque_fraction is None else torque_fraction * robot.effort_limits
    return ExcitationLimits(low, high, velocity, np.full(robot.n, float(acceleration)), torque, floor)


class FourierDesign:
    """The rest-to-rest parameterization of a Fourier excitation (module docstring).

    Args:
        joint_names: n joints. harmonics: H >= 2. period_s: T = 1/f_f [s].
    """

    def __init__(self, joint_names, harmonics: int, period_s: float) -> None:
        if int(harmonics) != harmonics or harmonics < 2:
            raise InputError(f'a rest-to-rest series needs at least 2 harmonics, got {harmonics!r}')
        if not np.isfinite(period_s) or period_s <= 0:
            raise InputError(f'period must be > 0 s, got {period_s!r}')
        self.joint_names = tuple(joint_names)
        self.n = len(self.joint_names)
        self.harmonics = int(harmonics)
        self.period_s = float(period_s)
        self.omega = 2 * np.pi / self.period_s

    @property
    def size(self) -> int:
        """Number of free variables: n·(2H − 1)."""
        return self.n * (2 * self.harmonics - 1)

    def coefficients(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(offset (n,), sine (n, H), cosine (n, H)) from the free variables."""
        x = np.asarray(x, dtype=float).reshape(self.n, 2 * self.harmonics - 1)
        k = np.arange(2, self.harmonics + 1)
        offset, a_rest, b_rest = x[:, 0], x[:, 1:self.harmonics], x[:, self.harmonics:]
        sine = np.column_stack([-(a_rest @ k), a_rest])
        cosine = np.column_stack([-(b_rest @ k**2), b_rest])
        return offset, sine, cosine

    def variables(self, offset: np.ndarray, sine: np.ndarray, cosine: np.ndarray) -> np.ndarray:
        """Free variables of a rest-to-rest series (the first harmonic is implied)."""
        return np.column_stack([offset, sine[:, 1:], cosine[:, 1:]]).reshape(-1)

    def trajectory(self, x: np.ndarray, duration_s: float | None = None) -> FourierTrajectory:
        """The :class:`FourierTrajectory` of the free variables (default duration: one period)."""
        offset, sine, cosine = self.coefficients(x)
        return FourierTrajectory(self.joint_names, 1.0 / self.period_s, offset, sine, cosine,
                                 duration_s if duration_s is not None else self.period_s)

    def kinematic_matrices(self, times: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(P, V, A), each (G·n, size): q, q̇, q̈ at the times, flattened sample-major, equal P·x etc."""
        times = np.asarray(times, dtype=float)
        columns = [[], [], []]
        for i in range(self.size):
            unit = np.zeros(self.size)
            unit[i] = 1.0
            q, dq, ddq = self.trajectory(unit).evaluate(times)
            for column, value in zip(columns, (q, dq, ddq), strict=True):
                column.append(value.reshape(-1))
        return tuple(np.column_stack(c) for c in columns)


def fit_to_limits(design: FourierDesign, x: np.ndarray, limits: ExcitationLimits, times: np.ndarray,
                  grow: bool = False) -> np.ndarray:
    """Scale each joint's motion about its offset so that position, velocity and acceleration just fit.

    Without ``grow`` motions are only shrunk (factor <= 1); with it they are scaled to touch a limit.
    The offset is clipped into the position range first. Evaluated on ``times`` (use a dense grid).
    """
    x = np.array(x, dtype=float).reshape(design.n, 2 * design.harmonics - 1)
    x[:, 0] = np.clip(x[:, 0], limits.position_low, limits.position_high)
    offset = x[:, 0].copy()
    motion = x.copy()
    motion[:, 0] = 0.0
    q, dq, ddq = design.trajectory(motion.reshape(-1)).evaluate(times)
    tiny = 1e-12
    scale = np.min(np.vstack([
        (limits.position_high - offset) / np.maximum(q.max(axis=0), tiny),
        (offset - limits.position_low) / np.maximum(-q.min(axis=0), tiny),
        limits.velocity / np.maximum(np.abs(dq).max(axis=0), tiny),
        limits.acceleration / np.maximum(np.abs(ddq).max(axis=0), tiny),
    ]), axis=0)
    scale = 0.999 * (scale if grow else np.minimum(scale, 1.0))
    x[:, 1:] *= scale[:, None]
    return x.reshape(-1)


def random_design(design: FourierDesign, home: np.ndarray, limits: ExcitationLimits,
                  rng: np.random.Generator, times: np.ndarray) -> np.ndarray:
    """Random rest-to-rest variables around ``home``, scaled to just meet the kinematic limits.

    Amplitudes are Gaussian, falling with the harmonic (1/k); the whole motion (not the offset) is
    scaled per joint until position, velocity or acceleration touches its limit.
    """
    x = np.zeros((design.n, 2 * design.harmonics - 1))
    k = np.arange(2, design.harmonics + 1)
    x[:, 0] = home
    x[:, 1:design.harmonics] = rng.normal(size=(design.n, design.harmonics - 1)) / k
    x[:, design.harmonics:] = rng.normal(size=(design.n, design.harmonics - 1)) / k
    return fit_to_limits(design, x.reshape(-1), limits, times, grow=True)
