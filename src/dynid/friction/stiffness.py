"""Joint (transmission) stiffness: an odd polynomial of the deflection.

τ_j(φ) = Σ_{p=1..P} α_p·φ^(2p−1), φ = θ − q [rad] (rotor angle in link units minus link angle),
τ_j [N·m] (thesis ch.3 eqs. (7)–(8), ch.4 eqs. (P1-12)–(P1-17)); odd, so τ_j(0) = 0 and
τ_j(−φ) = −τ_j(φ). The stiffness is k(φ) = ∂τ_j/∂φ = Σ (2p−1)·α_p·φ^(2p−2), computed directly
(the printed φ⁻¹·Ψ form of eq. (10) is 0/0 at φ = 0). The thesis uses P = 2: τ = α1·φ + α3·φ³.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dynid.errors import InputError
from dynid.model.joint_terms import per_joint_columns, per_joint_names


@dataclass(frozen=True)
class OddPolynomialStiffness:
    """τ_j(φ) = Σ_p alpha[..., p]·φ^(2p−1).

    Attributes:
        alpha: coefficients, shape (P,) for one joint or (n, P) per joint; alpha[..., 0] is the
            linear stiffness α1 [N·m/rad], alpha[..., 1] the cubic α3 [N·m/rad³], ...
    """

    alpha: np.ndarray

    def __post_init__(self) -> None:
        a = np.asarray(self.alpha, dtype=float)
        if a.ndim not in (1, 2) or a.shape[-1] == 0 or not np.all(np.isfinite(a)):
            raise InputError(f'stiffness coefficients must be finite, shape (P,) or (n, P); '
                             f'got {np.shape(self.alpha)}')
        object.__setattr__(self, 'alpha', a)
        object.__setattr__(self, 'powers', 2 * np.arange(a.shape[-1]) + 1)  # exponents 1, 3, ..., 2P−1

    @property
    def order(self) -> int:
        """P, the number of odd powers."""
        return self.alpha.shape[-1]

    def features(self, deflection: np.ndarray) -> list[np.ndarray]:
        """φ, φ³, ..., one array per coefficient, each of the shape of φ."""
        phi = np.asarray(deflection, dtype=float)
        return [phi**p for p in self.powers]

    def torque(self, deflection: np.ndarray) -> np.ndarray:
        """Joint torque τ_j(φ) [N·m]; φ of shape (..., n) for per-joint coefficients."""
        phi = np.asarray(deflection, dtype=float)
        square, total = phi * phi, self.alpha[..., -1]
        for p in range(self.order - 2, -1, -1):  # Horner in φ²
            total = total * square + self.alpha[..., p]
        return phi * total

    def stiffness(self, deflection: np.ndarray) -> np.ndarray:
        """Tangent stiffness k(φ) = Σ (2p−1)·α_p·φ^(2p−2) [N·m/rad]."""
        phi = np.asarray(deflection, dtype=float)
        square, total = phi * phi, self.powers[-1] * self.alpha[..., -1]
        for p in range(self.order - 2, -1, -1):
            total = total * square + self.powers[p] * self.alpha[..., p]
        return total

    def deflection(self, torque: np.ndarray, iterations: int = 30) -> np.ndarray:
        """φ with τ_j(φ) = torque, by Newton's method from the linear guess (needs α1 > 0, α_p ≥ 0)."""
        if np.any(self.alpha[..., 0] <= 0) or np.any(self.alpha[..., 1:] < 0):
            raise InputError('inverting the stiffness needs alpha1 > 0 and higher coefficients >= 0')
        tau = np.asarray(torque, dtype=float)
        phi = tau / self.alpha[..., 0]
        for _ in range(iterations):  # the torque is convex on φ > 0: Newton converges monotonically
            step = (self.torque(phi) - tau) / self.stiffness(phi)
            phi = phi - step
            if np.all(np.abs(step) <= 1e-15 * (1.0 + np.abs(phi))):
                break
        return phi

    def regressor(self, deflection: np.ndarray) -> np.ndarray:
        """Per-joint regressor columns (N·n, P·n) for (N, n) deflections."""
        return per_joint_columns([np.atleast_2d(f) for f in self.features(deflection)])

    def parameter_names(self, n_joints: int) -> list[str]:
        """``alpha1_j, alpha3_j, ...`` grouped by power then joint."""
        return per_joint_names([f'alpha{p}' for p in self.powers], n_joints)
