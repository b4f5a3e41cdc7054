"""Joint (transmission) stiffness: an odd polynomial of the deflection.

τ_j(φ) = Σ_{p=1..P} α_p·φ^(2p−1), φ = θ − q [rad] (rotor angle in link units minus link angle),
τ_j [N·m] (thesis ch.3 eqs. (7)–(8), ch.4 eqs. (P1-12)–(P1-17)); odd, so τ_j(0) = 0 and
τ_j(−φ) = −τ_j(φ). The stiffness is k(φ) = ∂τ_j/∂φ = Σ (2p−1)·α_p·φ^(2p−2), computed directly
(the printed φ⁻¹·Ψ form of eq. (10) is 0/0 at φ = 0). The thesis uses P = 2: τ = α1·φ + α3·φ³.
"""

from __future__ import annotations

from dataclasses import dataclass

import numba
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
        # Coefficient columns of τ_j and of k = ∂τ_j/∂φ, sliced and scaled once (the hot loops of the
        # simulator call torque and stiffness several times per step).
        object.__setattr__(self, '_torque_terms', [np.array(a[..., p]) for p in range(a.shape[-1])])
        object.__setattr__(self, '_stiffness_terms',
                           [np.array(self.powers[p] * a[..., p]) for p in range(a.shape[-1])])
        # (2p − 2)·α_p for p >= 2, as Horner terms in φ² after factoring out φ³ (newton_step).
        object.__setattr__(self, '_newton_terms',
                           [np.array((self.powers[p] - 1) * a[..., p]) for p in range(1, a.shape[-1])])

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
        return phi * self._horner(self._torque_terms, phi * phi)

    def stiffness(self, deflection: np.ndarray) -> np.ndarray:
        """Tangent stiffness k(φ) = Σ (2p−1)·α_p·φ^(2p−2) [N·m/rad]."""
        phi = np.asarray(deflection, dtype=float)
        total = self._horner(self._stiffness_terms, phi * phi)
        return total.copy() if total is self._stiffness_terms[0] else total

    def torque_and_stiffness(self, deflection: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(τ_j(φ), k(φ)) from one φ², the same values as :meth:`torque` and :meth:`stiffness`."""
        phi = np.asarray(deflection, dtype=float)
        square = phi * phi
        spring = self._horner(self._stiffness_terms, square)
        return (phi * self._horner(self._torque_terms, square),
                spring.copy() if spring is self._stiffness_terms[0] else spring)

    def newton_step(self, deflection: np.ndarray, torque: np.ndarray) -> np.ndarray:
        """φ − (τ_j(φ) − τ)/k(φ): one Newton step from φ toward τ_j(φ) = τ.

        Computed as (φ·k(φ) − τ_j(φ) + τ)/k(φ) = (Σ_p (2p−2)·α_p·φ^(2p−1) + τ)/k(φ), the same step in
        fewer operations (the linear term drops out).
        """
        phi = deflection
        square = phi * phi
        spring = self._horner(self._stiffness_terms, square)
        if len(self._newton_terms) == 0:
            return torque / spring
        return (phi * square * self._horner(self._newton_terms, square) + torque) / spring

    @staticmethod
    def _horner(terms: list[np.ndarray], square: np.ndarray) -> np.ndarray:
        """Σ_p terms[p]·(φ²)^p by Horner's scheme in φ² (one term: the term itself, not a copy)."""
        total = terms[-1]
        for term in terms[-2::-1]:
            total = total * square + term
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


@numba.njit(cache=True)
def torque_and_stiffness_scalar(alpha, j, phi):
    """(τ_j(φ), k(φ)) of joint j for per-joint coefficients ``alpha`` (n, P), compiled: the arithmetic of
    :meth:`OddPolynomialStiffness.torque_and_stiffness` for one value (Horner in φ²)."""
    square = phi * phi
    last = alpha.shape[1] - 1
    torque, spring = alpha[j, last], (2 * last + 1) * alpha[j, last]
    for p in range(last - 1, -1, -1):
        torque = torque * square + alpha[j, p]
        spring = spring * square + (2 * p + 1) * alpha[j, p]
    return phi * torque, spring


@numba.njit(cache=True)
def newton_step_scalar(alpha, j, phi, torque):
    """:meth:`OddPolynomialStiffness.newton_step` for joint j and one value, compiled (same arithmetic)."""
    square = phi * phi
    last = alpha.shape[1] - 1
    spring = (2 * last + 1) * alpha[j, last]
    for p in range(last - 1, -1, -1):
        spring = spring * square + (2 * p + 1) * alpha[j, p]
    if last == 0:
        return torque / spring
    newton = 2 * last * alpha[j, last]
    for p in range(last - 1, 0, -1):
        newton = newton * square + 2 * p * alpha[j, p]
    return (phi * square * newton + torque) / spring
