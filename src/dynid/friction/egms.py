"""Extended Generalized Maxwell-Slip (E-GMS) model: rate-independent, position-driven hysteresis.

Madsen 2020, ch.6 §5 (the E-GMS model). M massless elasto-slide operators share the input θ,
the rotor position in link units [rad]. Operator i has a normalized deformation limit Δ_i and a
stiffness k_i; a position-dependent backlash B(θ) > 0 [rad] scales the limits:

    δ_i(k+1) = sgn(θ(k+1) − θ(k) + δ_i(k)) · min(|θ(k+1) − θ(k) + δ_i(k)|, B(θ(k+1))·Δ_i)   (14)
    H(k)     = (1/B(θ(k))) · Σ_i k_i·δ_i(k)                                              (15)

with the element laws Δ_i = (i/M)^{r_Δ} (17) and k_i = (M+1−i)^{r_k} / (Δ_i·Σ_j j^{r_k}) (18), so that
Σ W_i = Σ k_i·Δ_i = 1 (16) and −1 ≤ H ≤ 1. In sliding every operator saturates and H = ±1 whatever
B(θ) is (Proposition 1). The Coulomb friction is F(τ_j)·H with F the load-dependent level of
:class:`dynid.friction.load.LoadDependentCoulomb`. "B⁻¹" of eq. (15) is the reciprocal (the digest's
reading, required for Proposition 1). The thesis defaults are M = 4, r_Δ = 4, r_k = 2, B = 0.001 rad.

The backlash is a constant per joint or a 2π-periodic look-up table (equispaced on [0, 2π), linear
interpolation with wrap-around), as the thesis stores it.

Batch runs (:meth:`EGMS.run`) use the block form of eq. (14): with z_i = θ − δ_i (the block position),
z_i(k) = clamp(z_i(k−1), θ(k) − r_i(k), θ(k) + r_i(k)), r_i = B·Δ_i, one compiled pass over the samples
(clamps are min and max: no rounding in z).
"""

from __future__ import annotations

import numba
import numpy as np

from dynid.errors import InputError

#: Relative margin below the limit under which an operator counts as sticking (:meth:`EGMS.step_with_slope`).
STICK_MARGIN = 1.0 - 1e-9


def element_laws(elements: int, r_delta: float, r_k: float) -> tuple[np.ndarray, np.ndarray]:
    """Normalized deformation limits Δ_i [-] and stiffnesses k_i [-] of eqs. (17)–(18).

    Returns arrays of length ``elements`` with Σ k_i·Δ_i = 1 and max Δ = 1.
    """
    if int(elements) != elements or elements < 1:
        raise InputError(f'the number of E-GMS elements must be a positive integer, got {elements!r}')
    if not (np.isfinite(r_delta) and np.isfinite(r_k)) or r_delta <= 0:
        raise InputError(f'element exponents must be finite with r_delta > 0, got {r_delta}, {r_k}')
    i = np.arange(1, int(elements) + 1, dtype=float)
    delta = (i / elements) ** r_delta
    weights = (elements + 1 - i) ** r_k / np.sum(i**r_k)
    return delta, weights / delta


def periodic_lookup(table: np.ndarray, angle: np.ndarray) -> np.ndarray:
    """Values of per-joint 2π-periodic tables at angles [rad], linear interpolation with wrap-around.

    Args:
        table: (n, G) values at θ = 2π·g/G, g = 0..G−1 (G = 1: constant).
        angle: (..., n) angles.
    """
    table = np.asarray(table, dtype=float)
    n, size = table.shape
    if size == 1:
        return np.broadcast_to(table[:, 0], np.shape(angle)).copy()
    x = np.mod(angle, 2.0 * np.pi) * (size / (2.0 * np.pi))
    lower = np.floor(x)
    fraction = x - lower
    i0 = lower.astype(int) % size
    joints = np.arange(n)
    return table[joints, i0] * (1.0 - fraction) + table[joints, (i0 + 1) % size] * fraction


class EGMS:
    """E-GMS hysteresis operators for n joints (module docstring), stepping all joints at once.

    Args:
        n_joints: number of joints n.
        elements: M, operators per joint.
        r_delta, r_k: element-law exponents (scalars, or one per joint).
        backlash: B [rad] > 0: a scalar, one value per joint (shape (n,)), or per-joint periodic
            tables of shape (n, G), G >= 2, sampled at θ = 2π·g/G.

    Attributes:
        delta: (n, M) normalized limits Δ_i. k: (n, M) stiffnesses k_i.
        state: (n, M) operator deformations δ_i [rad]. theta: (n,) last input [rad], or None before
            the first sample.
    """

    def __init__(self, n_joints: int = 1, elements: int = 4, r_delta=4.0, r_k=2.0,
                 backlash=0.001) -> None:
        if int(n_joints) != n_joints or n_joints < 1:
            raise InputError(f'n_joints must be a positive integer, got {n_joints!r}')
        self.n = int(n_joints)
        self.elements = int(elements)
        r_delta = np.broadcast_to(np.asarray(r_delta, dtype=float), (self.n,))
        r_k = np.broadcast_to(np.asarray(r_k, dtype=float), (self.n,))
        laws = [element_laws(self.elements, rd, rk) for rd, rk in zip(r_delta, r_k, strict=True)]
        self.r_delta, self.r_k = r_delta.copy(), r_k.copy()
        self.delta = np.array([d for d, _ in laws])
        self.k = np.array([k for _, k in laws])
        self.backlash_table = self._backlash_table(backlash)
        self.state = np.zeros((self.n, self.elements))
        self.theta: np.ndarray | None = None
        self.last_backlash: np.ndarray | None = None  # B(θ) at the last input, set by step and run

    def _backlash_table(self, backlash) -> np.ndarray:
        b = np.asarray(backlash, dtype=float)
        if b.ndim == 0:
            b = np.full((self.n, 1), float(b))
        elif b.ndim == 1 and b.shape == (self.n,):
            b = b[:, None]
        elif not (b.ndim == 2 and b.shape[0] == self.n and b.shape[1] >= 2):
            raise InputError(f'backlash must be a scalar, ({self.n},) or ({self.n}, G) with G >= 2; '
                             f'got shape {b.shape}')
        if not np.all(np.isfinite(b)) or np.any(b <= 0):
            raise InputError('backlash must be finite and > 0 rad everywhere')
        return b.copy()

    def backlash(self, theta: np.ndarray) -> np.ndarray:
        """B(θ) [rad] for angles of shape (..., n)."""
        return periodic_lookup(self.backlash_table, theta)

    def reset(self, theta: np.ndarray | None = None, direction: np.ndarray | None = None) -> None:
        """Forget the history: δ = 0, or every operator slipping in ``direction`` (sign per joint).

        Starting with all operators slipping is the thesis' "condition CO" (Madsen 2020, ch.5 §2.7).
        """
        self.state = np.zeros((self.n, self.elements))
        self.theta = None if theta is None else np.array(theta, dtype=float).reshape(self.n)
        if direction is not None:
            if self.theta is None:
                raise InputError('reset with a direction needs the position theta')
            sign = np.sign(np.broadcast_to(np.asarray(direction, dtype=float), (self.n,)))
            self.state = sign[:, None] * self.backlash(self.theta)[:, None] * self.delta

    def step(self, theta: np.ndarray) -> np.ndarray:
        """Advance to input θ(k+1) (n,) [rad]; returns H (n,) in [−1, 1]. Eqs. (14)–(15)."""
        return self._advance(theta, False)

    def step_with_slope(self, theta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`step`, also returning the pre-sliding slope Σ k_i/B(θ) over the operators that stick.

        An operator sticks while |δ_i| < B·Δ_i (with a relative margin of 1e-9); the slope is ∂H/∂θ
        for the input's next small move, without the slope of the backlash map B(θ) itself [1/rad].
        """
        return self._advance(theta, True)

    def _advance(self, theta: np.ndarray, with_slope: bool):
        if type(theta) is not np.ndarray or theta.dtype != np.float64 or theta.shape != (self.n,):
            theta = np.asarray(theta, dtype=float).reshape(self.n)
        previous = theta if self.theta is None else self.theta
        hysteresis, slope, b, self.state = _advance_kernel(theta, previous, self.state, self.k, self.delta,
                                                           self.backlash_table, with_slope)
        self.theta, self.last_backlash = theta, b
        return (hysteresis, slope) if with_slope else hysteresis

    #: Samples per block of a batch run: positions are taken relative to the input just before each block
    #: (:meth:`run`).
    RUN_BLOCK = 32768

    def run(self, theta: np.ndarray) -> np.ndarray:
        """H for a trajectory θ of shape (N, n), continuing from the current state; returns (N, n).

        Same result as calling :meth:`step` on each sample (to rounding, ~1e-11), computed in the block form
        of eq. (14) (module docstring) in one compiled pass. Positions relative to the input just before each
        block of RUN_BLOCK samples keep the numbers small (δ = θ − z loses digits when θ is large); a block
        sitting on its bound is sliding, δ = ±r exactly.
        """
        theta = np.ascontiguousarray(theta, dtype=float).reshape(-1, self.n)
        if theta.shape[0] == 0:
            return np.empty_like(theta)
        previous = theta[0] if self.theta is None else self.theta
        out, self.state, self.last_backlash = _run_kernel(theta, previous, self.state, self.k, self.delta,
                                                          self.backlash_table, int(self.RUN_BLOCK))
        self.theta = theta[-1].copy()
        return out


@numba.njit(cache=True)
def _backlash_at(table, j, angle):
    """B of joint ``j`` at ``angle`` [rad]: :func:`periodic_lookup`'s arithmetic for one value (the same value)."""
    size = table.shape[1]
    if size == 1:
        return table[j, 0]
    x = np.mod(angle, 2.0 * np.pi) * (size / (2.0 * np.pi))
    lower = np.floor(x)
    fraction = x - lower
    i0 = int(lower) % size
    return table[j, i0] * (1.0 - fraction) + table[j, (i0 + 1) % size] * fraction


@numba.njit(cache=True)
def _run_kernel(theta, previous, state, k, delta, table, block):
    """:meth:`EGMS.run` for every joint: (H (N, n), δ (n, M) after the last sample, B(θ) (n,) at it).

    Per block of ``block`` samples, relative to the input r just before it (``previous`` for the first):
    x = θ − r, z_i = clamp(z_i, x − B·Δ_i, x + B·Δ_i) from z_i = −δ_i, then δ_i = B·Δ_i where z_i is on its
    lower bound, −B·Δ_i on its upper, else x − z_i. B(θ) is :func:`periodic_lookup`'s arithmetic. np.minimum
    and np.maximum, as numpy's: a NaN input stays NaN from there on.
    """
    samples, n = theta.shape
    m = state.shape[1]
    out = np.empty((samples, n))
    deformation = state.copy()
    backlash = np.empty(n)
    z = np.empty(m)
    for j in range(n):
        b = 0.0
        for s in range(samples):
            if s % block == 0:
                reference = previous[j] if s == 0 else theta[s - 1, j]
                for i in range(m):
                    z[i] = -deformation[j, i]
            b = _backlash_at(table, j, theta[s, j])
            relative = theta[s, j] - reference
            total = 0.0
            for i in range(m):
                limit = b * delta[j, i]
                low, high = relative - limit, relative + limit
                value = np.minimum(np.maximum(z[i], low), high)
                z[i] = value
                if value == low:
                    d = limit
                elif value == high:
                    d = -limit
                else:
                    d = relative - value
                deformation[j, i] = d
                total += k[j, i] * d
            out[s, j] = total / b
        backlash[j] = b
    return out, deformation, backlash


@numba.njit(cache=True)
def advance_joint(j, theta, previous, state, k, delta, table, with_slope):
    """Eqs. (14)–(15) for joint ``j``, one sample from input ``previous`` to ``theta`` [rad]: the deformations
    state[j] (M,) in place; returns (H, pre-sliding slope Σ k_i/B over the sticking operators or 0, B(θ)).

    B(θ) is :func:`periodic_lookup`'s arithmetic (the same values); sgn(t)·min(|t|, r) of eq. (14) is the
    clamp of t to [−r, r] (the same values, fewer operations).
    """
    b = _backlash_at(table, j, theta)
    increment = theta - previous
    total, sticking = 0.0, 0.0
    for i in range(state.shape[1]):
        limit = b * delta[j, i]
        value = increment + state[j, i]  # comparisons, not min/max: NaN stays NaN, as in numpy
        if value < -limit:
            value = -limit
        elif value > limit:
            value = limit
        state[j, i] = value
        total += k[j, i] * value
        if with_slope and abs(value) < limit * STICK_MARGIN:
            sticking += k[j, i]
    return total / b, (sticking / b if with_slope else 0.0), b


@numba.njit(cache=True)
def _advance_kernel(theta, previous, state, k, delta, table, with_slope):
    """One sample of eqs. (14)–(15) for every joint (:func:`advance_joint`): (H (n,), slope (n,), B(θ) (n,),
    new δ (n, M)). ``previous`` = ``theta`` on the first sample.
    """
    n = state.shape[0]
    hysteresis, slope, backlash = np.empty(n), np.zeros(n), np.empty(n)
    deformation = state.copy()
    for j in range(n):
        hysteresis[j], slope[j], backlash[j] = advance_joint(j, theta[j], previous[j], deformation, k, delta,
                                                             table, with_slope)
    return hysteresis, slope, backlash, deformation
