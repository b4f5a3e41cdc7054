"""The Stribeck excess of the identification's friction model: the excess term of the Stribeck map alone,
Fs_j·sgn(ω)·exp(−(|ω|/Vs_j)^μ_j) per joint (Madsen 2020, thesis ch.4 eq. (P1-25) and ch.6 eq. (11); the whole map is
:class:`dynid.friction.static.StribeckMap`), as the model choice adds it beside Coulomb + viscous friction
(:mod:`dynid.identify.selection.choice`) and every reader of a result evaluates it (prediction, feedforward,
estimation). Velocities ω and Vs [rad/s] on the side of the identification's friction velocity (link units),
Fs [N·m]."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dynid.errors import InputError

#: The Stribeck shapes μ the model choice tries for :class:`StribeckExcess`: the exponential decay exp(−|ω|/V_S) of
#: Gautier and Briot's dry friction (A.3.3 eq. (22), Tustin's law) and the Gaussian exp(−(ω/V_S)²) of
#: Armstrong-Hélouvry's Stribeck curve (the LuGre model's g(v) takes the same); the twin's own μ is 1.2.
STRIBECK_SHAPES = (1.0, 2.0)


@dataclass(frozen=True)
class StribeckExcess:
    """The excess of static friction over the Coulomb level, Fs_j·sgn(ω)·exp(−(|ω|/Vs_j)^μ_j) per joint: the term
    (F_S − F_C)·exp(−(|ω|/V_S)^μ) of the Stribeck map (Madsen 2020, thesis ch.4 eq. (P1-25) and ch.6 eq. (11), whose
    F_V holds it beside the viscous terms), linear in the excess Fs_j [N·m] once the Stribeck velocity Vs_j [rad/s]
    and the shape μ_j are fixed. ``velocities`` (n,): NaN on a joint without the term (its feature is 0);
    ``shapes``: μ_j (n,), or one for every joint."""

    velocities: np.ndarray
    shapes: np.ndarray | float = 2.0

    def __post_init__(self) -> None:
        v = np.asarray(self.velocities, dtype=float).reshape(-1)
        mu = np.broadcast_to(np.asarray(self.shapes, dtype=float), v.shape).copy()
        present = np.isfinite(v)
        if np.any(v[present] <= 0) or np.any(np.isinf(v)) or not np.all(np.isfinite(mu[present]) & (mu[present] > 0)):
            raise InputError(f'Stribeck velocities must be > 0 rad/s (NaN: no term) and the shapes > 0, got '
                             f'{v.tolist()}, {mu.tolist()}')
        mu[~present] = np.nan
        object.__setattr__(self, 'velocities', v)
        object.__setattr__(self, 'shapes', mu)

    @property
    def joints(self) -> np.ndarray:
        """(n,) whether each joint has the term."""
        return np.isfinite(self.velocities)

    def decay(self, velocity) -> np.ndarray:
        """exp(−(|ω|/Vs_j)^μ_j) for ω (…, n) [rad/s]; 0 on the joints without the term."""
        return stribeck_decay(velocity, self.velocities, np.where(self.joints, self.shapes, 1.0))

    def feature(self, velocity, direction=None) -> np.ndarray:
        """The column of Fs_j: sgn(ω)·exp(−(|ω|/Vs_j)^μ_j) (…, n); ``direction`` in place of sgn(ω) (a smoothed
        sign, the E-GMS's output)."""
        w = np.asarray(velocity, dtype=float)
        return (np.sign(w) if direction is None else direction) * self.decay(w)

    def torque(self, velocity, excess, direction=None) -> np.ndarray:
        """Fs_j·sgn(ω)·exp(−(|ω|/Vs_j)^μ_j) [N·m] for the excesses Fs (n,) [N·m]."""
        return np.asarray(excess, dtype=float) * self.feature(velocity, direction)


def stribeck_decay(velocity, stribeck_velocity, shape) -> np.ndarray:
    """exp(−(|ω|/Vs)^μ) [-] with ω (…, n) or (N,), Vs and μ broadcast over it; 0 where Vs is NaN (no term)."""
    w = np.asarray(velocity, dtype=float)
    vs = np.asarray(stribeck_velocity, dtype=float)
    present = np.isfinite(vs)
    with np.errstate(invalid='ignore', divide='ignore', over='ignore'):
        out = np.exp(-((np.abs(w) / np.where(present, vs, 1.0)) ** shape))
    return np.where(present, out, 0.0)
