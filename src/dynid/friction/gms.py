"""Generalized Maxwell-Slip (GMS) friction with attraction (Lampaert / Al-Bender; thesis ch.3).

M elements share the velocity ω [rad/s]; element j holds a force F_j [N·m] (thesis ch.3 eqs. (11)–(14)):

- sticking:  dF_j/dt = k_j·ω, until |F_j| ≥ ν_j·|s(ω)|;
- slipping:  dF_j/dt = sgn(ω)·C·(ν_j − F_j/s(ω)), until the velocity reverses;
- output f = Σ_j F_j,

with s(ω) a static map (:class:`dynid.friction.static.StribeckMap`), ν_j fractions (Σ ν_j = 1),
k_j [N·m/rad] and the attraction C [N·m/s].

Errata handled (Madsen 2020, ch.2–3): the slip law is printed with "+ F_j/s" which is
unstable; the minus sign is used. s(0) = 0 would divide by zero, so slip dynamics are held while
|s(ω)| ≤ ``eps``. The slip law is linear in F_j for a constant ω, so each step uses its exact
solution F_j ← ν_j·s + (F_j − ν_j·s)·exp(−C·dt/|s|), stable for any dt. At the stick→slip
switch F_j is set to ν_j·s(ω) (the seed leaves this open). At constant ω ≠ 0 the output converges
to s(ω), the property the static friction identification relies on.
"""

from __future__ import annotations

import numpy as np

from dynid.errors import InputError
from dynid.friction.static import StribeckMap


class GMS:
    """GMS friction for n joints with M elements each (module docstring).

    Args:
        static_map: s(ω), parameters scalar or per joint.
        stiffness: k_j [N·m/rad], shape (M,) or (n, M).
        fractions: ν_j [-], shape (M,) or (n, M), each row summing to 1.
        attraction: C [N·m/s] > 0, scalar or per joint.
        n_joints: n.
        eps: |s| below which slip dynamics are held [N·m].
    """

    def __init__(self, static_map: StribeckMap, stiffness, fractions, attraction=1.0,
                 n_joints: int = 1, eps: float = 1e-9) -> None:
        self.n = int(n_joints)
        self.static_map = static_map
        k = np.atleast_2d(np.asarray(stiffness, dtype=float))
        nu = np.atleast_2d(np.asarray(fractions, dtype=float))
        try:
            self.k = np.broadcast_to(k, (self.n, k.shape[-1])).copy()
            self.nu = np.broadcast_to(nu, self.k.shape).copy()
        except ValueError:
            raise InputError(f'stiffness {k.shape} and fractions {nu.shape} must be (M,) or '
                             f'({self.n}, M) alike') from None
        if np.any(self.k <= 0) or np.any(self.nu < 0) or not np.allclose(self.nu.sum(axis=1), 1.0):
            raise InputError('GMS needs k > 0, fractions >= 0 and each joint\'s fractions summing to 1')
        self.attraction = np.broadcast_to(np.asarray(attraction, dtype=float), (self.n,)).copy()
        if np.any(self.attraction <= 0):
            raise InputError(f'attraction C must be > 0, got {attraction}')
        self.eps = float(eps)
        self.reset()

    def reset(self) -> None:
        """All elements relaxed (F = 0) and sticking."""
        self.forces = np.zeros_like(self.k)
        self.slipping = np.zeros(self.k.shape, dtype=bool)
        self.velocity = np.zeros(self.n)

    def step(self, velocity: np.ndarray, dt: float) -> np.ndarray:
        """Advance by dt [s] at velocity ω (n,) [rad/s]; returns the friction torque (n,) [N·m]."""
        w = np.asarray(velocity, dtype=float).reshape(self.n)
        s = np.broadcast_to(self.static_map.evaluate(w), (self.n,))
        reversal = (np.sign(w) != np.sign(self.velocity)) & (self.velocity != 0.0)
        self.slipping[reversal] = False
        target = self.nu * s[:, None]
        valid = (np.abs(s) > self.eps)[:, None]

        sticking = ~self.slipping
        self.forces = np.where(sticking, self.forces + self.k * (w * dt)[:, None], self.forces)
        starts = sticking & valid & (np.abs(self.forces) >= np.abs(target))
        self.forces = np.where(starts, target, self.forces)

        decay = np.exp(-self.attraction[:, None] * dt / np.where(valid, np.abs(s)[:, None], 1.0))
        relax = self.slipping & valid
        self.forces = np.where(relax, target + (self.forces - target) * decay, self.forces)
        self.slipping |= starts
        self.velocity = w
        return self.forces.sum(axis=1)

    def run(self, velocity: np.ndarray, dt: float) -> np.ndarray:
        """Friction for a velocity history (N, n) sampled every dt [s]; returns (N, n)."""
        velocity = np.asarray(velocity, dtype=float).reshape(-1, self.n)
        out = np.empty_like(velocity)
        for k in range(velocity.shape[0]):
            out[k] = self.step(velocity[k], dt)
        return out
