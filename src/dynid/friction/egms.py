"""Extended Generalized Maxwell-Slip (E-GMS) model: rate-independent, position-driven hysteresis.

Madsen 2020, ch.6 §5 (thesis_ch6-7.md §4). M massless elasto-slide operators share the input θ,
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

Batch runs do not loop over samples. With z_i = θ − δ_i (the block position), eq. (14) reads
z_i(k) = clamp(z_i(k−1), θ(k) − r_i(k), θ(k) + r_i(k)), r_i = B·Δ_i, and a composition of clamps
is again a clamp, so the whole sequence is a prefix scan of clamp compositions, done in
log2(N) vectorized steps (:func:`clamp_recursion`).
"""

from __future__ import annotations

import numpy as np

from dynid.errors import InputError


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


def clamp_recursion(start: np.ndarray, lower: np.ndarray, upper: np.ndarray) -> np.ndarray:
    """All z_k = clamp(z_{k−1}, lower_k, upper_k), k = 0..N−1, from z_{−1} = ``start``.

    ``lower`` and ``upper`` have shape (N, ...) with lower <= upper; ``start`` broadcasts against
    one sample. Clamp maps compose into clamp maps: applying [l1, h1] then [l2, h2] is
    [min(max(l1, l2), h2), max(min(h1, h2), l2)]; a Hillis–Steele scan builds every prefix
    composition with log2(N) vectorized steps, using only min and max (no rounding).
    """
    low, high = np.array(lower, dtype=float), np.array(upper, dtype=float)
    shift = 1
    while shift < low.shape[0]:
        earlier_low, earlier_high = low[:-shift], high[:-shift]
        later_low, later_high = low[shift:], high[shift:]
        composed_low = np.minimum(np.maximum(earlier_low, later_low), later_high)
        composed_high = np.maximum(np.minimum(earlier_high, later_high), later_low)
        low[shift:], high[shift:] = composed_low, composed_high
        shift *= 2
    return np.minimum(np.maximum(start, low), high)


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
        self._form: tuple | None = None               # arrays of step, made from the table and the laws

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

        Starting with all operators slipping is the thesis' "condition CO" (thesis_ch4-5.md §2.7).
        """
        self.state = np.zeros((self.n, self.elements))
        self.theta = None if theta is None else np.array(theta, dtype=float).reshape(self.n)
        if direction is not None:
            if self.theta is None:
                raise InputError('reset with a direction needs the position theta')
            sign = np.sign(np.broadcast_to(np.asarray(direction, dtype=float), (self.n,)))
            self.state = sign[:, None] * self.backlash(self.theta)[:, None] * self.delta

    def _one_sample_form(self) -> tuple:
        """Arrays for :meth:`step`, made once per backlash table and element laws.

        The table is flattened with two wrap-around columns (column G is column 0 again), with a copy
        shifted by one, so one index per joint reaches both neighbours without a modulo; operators are
        handled flat, joint j's M operators at j·M … j·M + M − 1, with a joint index that repeats each
        joint's value M times. Scalars are stored as (n,) arrays (numpy takes arrays faster).
        """
        form = self._form
        if form is not None and form[0] is self.backlash_table and form[1] is self.delta:
            return form
        table, n = self.backlash_table, self.n
        size = table.shape[1]
        if size == 1:
            lookup = None
        else:
            flat = np.concatenate([table, table[:, :2]], axis=1).ravel()
            lookup = (flat, np.append(flat[1:], 0.0), np.arange(n) * (size + 2), np.full(n, size / (2.0 * np.pi)),
                      np.full(n, 2.0 * np.pi), np.ones(n))
        self._form = form = (table, self.delta, lookup, np.repeat(np.arange(n), self.elements), self.delta.ravel(),
                             np.full(n * self.elements, 1.0 - 1e-9))
        return form

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
        _, _, lookup, joint_of, delta, margin = self._one_sample_form()
        if lookup is None:
            b = self.backlash_table[:, 0].copy()
        else:  # B(θ): the arithmetic of periodic_lookup (the same values)
            flat, flat_next, rows, scale, period, ones = lookup
            x = np.mod(theta, period) * scale
            lower = x.astype(int)  # floor (x >= 0); lower <= G: column G is column 0 again
            fraction = x - lower
            index = lower + rows
            b = flat[index] * (ones - fraction) + flat_next[index] * fraction
        limit = b[joint_of] * delta
        increment = np.zeros(self.n) if self.theta is None else theta - self.theta
        trial = increment[joint_of] + self.state.ravel()
        # δ and, for the slope, the sticking flags (as 0/1) side by side: one einsum sums both.
        parts = np.empty((2 if with_slope else 1, self.n, self.elements))
        flat = parts.reshape(parts.shape[0], -1)
        # sgn(t)·min(|t|, r) of eq. (14) is the clamp of t to [−r, r] (the same values, fewer operations).
        np.minimum(np.maximum(trial, -limit), limit, out=flat[0])
        self.state = parts[0]
        self.theta, self.last_backlash = theta, b
        if not with_slope:
            return np.einsum('jm,jm->j', self.k, self.state) / b
        np.less(np.abs(flat[0]), limit * margin, out=flat[1])
        sums = np.einsum('jm,ajm->aj', self.k, parts)
        return sums[0] / b, sums[1] / b

    #: Samples per block of a batch run (bounds the memory of the scan to a few tens of MB).
    RUN_BLOCK = 32768

    def run(self, theta: np.ndarray) -> np.ndarray:
        """H for a trajectory θ of shape (N, n), continuing from the current state; returns (N, n).

        Same result as calling :meth:`step` on each sample (to rounding), computed without a
        per-sample loop (module docstring).
        """
        theta = np.asarray(theta, dtype=float).reshape(-1, self.n)
        out = np.empty_like(theta)
        for start in range(0, theta.shape[0], self.RUN_BLOCK):
            block = theta[start:start + self.RUN_BLOCK]
            b = self.backlash(block)
            limit = b[:, :, None] * self.delta                      # (N, n, M) r_i(k)
            previous = block[0] if self.theta is None else self.theta
            # Positions relative to the previous sample keep the numbers small (δ = θ − z loses
            # digits when θ is large); a block sitting on its bound is sliding, δ = ±r exactly.
            relative = (block - previous)[:, :, None]
            lower, upper = relative - limit, relative + limit
            z = clamp_recursion(-self.state, lower, upper)
            deformation = np.where(z == lower, limit, np.where(z == upper, -limit, relative - z))
            out[start:start + block.shape[0]] = np.einsum('jm,kjm->kj', self.k, deformation) / b
            self.state, self.theta, self.last_backlash = deformation[-1], block[-1], b[-1]
        return out
