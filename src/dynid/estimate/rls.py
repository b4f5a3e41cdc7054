"""Recursive least squares with directional or exponential forgetting, for J independent joints.

Both estimators fit y = ψᵀθ + noise per joint, one sample at a time (``update``) or a whole record
(``run``, the same arithmetic: identical results). State: ``theta`` (J, p) and the covariance ``P``
(J, p, p). For the joint stiffness τ_E(φ) = α1·φ + α3·φ³ (Madsen, Rosenlund, Brandt and Zhang 2019
(ICRA), eqs. (7)–(8)): ψ = [φ, φ³] [rad, rad³], y = τ_E [N·m], θ = [α1, α3] [N·m/rad, N·m/rad³].

:class:`DirectionalForgettingRLS` is the RLS-DF* of Madsen, Rosenlund, Brandt and Zhang 2019 (ICRA),
eq. (18): the directional forgetting of Bittanti, Bolzern and Campi 1990 plus a Levenberg–Marquardt
increment δI of the covariance,

    ε = y − ψᵀθ̂,  r = ψᵀPψ,  θ̂ ← θ̂ + Pψ·ε/(1 + r),
    β = μ − (1 − μ)/r if r > 0 else 1,  P ← P − PψψᵀP/(β⁻¹ + r) + δI.

β = 0 at r = (1 − μ)/μ, where the printed β⁻¹ does not exist; since 1 + βr = μ(1 + r),
1/(β⁻¹ + r) = β/(μ(1 + r)) = (r − c)/(r(1 + r)) with c = (1 − μ)/μ, which is what is computed.
In information form P⁻¹ ← P⁻¹ + βψψᵀ (before δI): a sample with β > 0 (r > c) adds information
along ψ, one with β < 0 forgets along ψ only (P grows along Pψ); unexcited directions keep theirs.
Memory along an excited direction ≈ 1/(1 − μ) samples (20 000 = 20 s at 1 kHz for μ = 0.99995).
μ = 1, δ = 0 is ordinary RLS.

:class:`ExponentialForgettingRLS` is ordinary RLS with a forgetting factor λ (Madsen 2020, thesis
eq. (2.62)): θ̂ ← θ̂ + Pψ·ε/(λ + r), P ← (P − PψψᵀP/(λ + r))/λ. It forgets in every direction, so
without excitation P grows as λ⁻ᵏ (wind-up): ×e³⁶⁰ after an hour at 1 kHz for λ = 0.9999. The first
excited sample after that cancels catastrophically in the downdate (P loses positive definiteness,
the estimates freeze off target); after about two hours P overflows to inf and every later sample
is skipped. It is here for comparison.

Covariance bound (the paper gives none). δI is added every sample, so P grows by δ per sample in a
direction that is never excited, without bound (+360 000 after an hour at 1 kHz, δ = 0.1). After
every update each diagonal entry above its bound m_i is brought back to m_i by scaling row and
column i by sqrt(m_i/P_ii): a congruence P ← S·P·S, so P stays symmetric positive definite, the
correlations P_ij/sqrt(P_ii·P_jj) are kept and |P_ij| ≤ sqrt(m_i·m_j). The directional-forgetting
default is m = p0: no parameter ever becomes less certain than before the first sample (with the
paper's p0 = (1e9, 1e18) and δ = 0.1 the bound is reached after 1e10 idle samples, 116 days at
1 kHz; a smaller ``max_covariance`` caps it sooner). The exponential-forgetting default is no bound
(the classic wind-up); ``max_covariance`` sets one. Ordinary RLS never raises a diagonal entry, so
the bound leaves it unchanged.

Non-finite samples. A joint whose regressor row or measurement is NaN or ±inf in a sample, or whose r
overflows, is not updated for that sample: its θ and P stay as they were, ``skipped`` counts it,
its ``error`` and ``r`` read NaN; the other joints are updated. With ``nonfinite='raise'`` such input
raises InputError instead, before any state changes. r ≤ 1e-300 (|ψ| numerically zero) counts as
ψ = 0: no gain, no forgetting, only δI (dividing by such an r would overflow).

Excitation flag. After each call ``excited`` is r > ``excitation_threshold`` for the last sample,
by default r > (1 − μ)/μ, i.e. β > 0: the sample added information along ψ. r is the variance of
the prediction ψᵀθ̂ in units of the measurement noise variance, so this is scale free. On the
paper's kind of excitation (random deflection levels up to 1.5 mrad, μ = 0.99995) about 85 % of
the samples are flagged, a joint at rest with encoder-noise deflection (1 µrad) none: its r starts
near 1e-9. Directional forgetting keeps forgetting along that noise direction, though: after 4–5
minutes at rest P11 has grown to (1 − μ)/(μ·E[φ²]) ≈ 5e7, r hovers around (1 − μ)/μ and α̂1
wanders by up to 20 % on 0.5 N·m torque noise. Gating such samples (a dead zone on |φ| that zeroes ψ, leaving only
δI) is the caller's choice; the paper leaves it open.

Speed. The recursion is sequential. For p = 2 ``update`` and ``run`` go through a loop compiled by
numba on the three distinct entries of each joint's P (well under a microsecond per 6-joint sample;
compiled once per machine and cached); for other p on (J, p, p) arrays, one vectorized numpy step per
sample.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from dynid.errors import InputError, checked_choice

_R_MIN = 1e-300  # r at or below this counts as ψ = 0 (module docstring)


#: μ and δ of RLS-DF* (Madsen et al. 2019, eq. (18)): the forgetting factor and the Levenberg–Marquardt
#: regularization, the defaults of every directional-forgetting estimator (the paper's values).
FORGETTING = 0.99995
REGULARIZATION = 0.1


class _RecursiveLeastSquares:
    """Shared state, checks and drivers; subclasses define the update (module docstring)."""

    def __init__(self, n_params, n_joints, forgetting, p0, theta0, max_covariance, excitation_threshold,
                 nonfinite) -> None:
        self.n_params = _positive_int(n_params, 'n_params')
        self.n_joints = _positive_int(n_joints, 'n_joints')
        try:
            forgetting = float(forgetting)
        except (TypeError, ValueError):
            raise InputError(f'forgetting must be a number in (0, 1], got {forgetting!r}') from None
        if not 0.0 < forgetting <= 1.0:
            raise InputError(f'forgetting must be in (0, 1], got {forgetting}')
        self.forgetting = forgetting
        self.p0 = self._per_joint(p0, 'p0')
        if not np.all(np.isfinite(self.p0) & (self.p0 > 0)):
            raise InputError(f'p0 (initial covariance diagonal) must be finite and > 0, got {_brief(p0)}')
        self.theta0 = self._per_joint(theta0, 'theta0')
        if not np.all(np.isfinite(self.theta0)):
            raise InputError(f'theta0 must be finite, got {_brief(theta0)}')
        self.max_covariance = self._per_joint(max_covariance, 'max_covariance')
        if np.any(np.isnan(self.max_covariance)) or np.any(self.max_covariance < self.p0):
            raise InputError(f'max_covariance must be >= p0 {_brief(p0)} (inf: no bound), got {_brief(max_covariance)}')
        if excitation_threshold is None:
            excitation_threshold = (1.0 - forgetting) / forgetting
        try:
            excitation_threshold = float(excitation_threshold)
        except (TypeError, ValueError):
            raise InputError(f'excitation_threshold must be a number >= 0, got {excitation_threshold!r}') from None
        if not 0.0 <= excitation_threshold < math.inf:
            raise InputError(f'excitation_threshold must be finite and >= 0, got {excitation_threshold}')
        self.excitation_threshold = excitation_threshold
        self.nonfinite = checked_choice('nonfinite', nonfinite, ('skip', 'raise'))
        self._fast = self.n_params == 2
        self.reset()

    def _per_joint(self, value, name: str) -> np.ndarray:
        J, p = self.n_joints, self.n_params
        array = _float_array(value, name)
        try:
            return np.broadcast_to(array, (J, p)).copy()
        except ValueError:
            raise InputError(f'{name} must be a scalar, ({p},) or ({J}, {p}); got shape {array.shape}') from None

    def reset(self) -> None:
        """θ̂ = theta0, P = diag(p0); ``error``, ``r`` NaN, ``excited`` False, ``skipped`` 0."""
        J, p = self.n_joints, self.n_params
        self.theta = self.theta0.copy()
        self.P = np.zeros((J, p, p))
        self.P[:, np.arange(p), np.arange(p)] = self.p0
        self.error = np.full(J, np.nan)
        self.r = np.full(J, np.nan)
        self.excited = np.zeros(J, dtype=bool)
        self.skipped = np.zeros(J, dtype=np.int64)

    def snapshot(self) -> tuple:
        """The state (θ̂, P, ε, r, excited, skipped), copied, for :meth:`restore`."""
        return tuple(x.copy() for x in (self.theta, self.P, self.error, self.r, self.excited, self.skipped))

    def restore(self, snapshot: tuple) -> None:
        """Back to a state taken by :meth:`snapshot`."""
        self.theta, self.P, self.error, self.r, self.excited, self.skipped = (x.copy() for x in snapshot)

    def restart_covariance(self, joints) -> None:
        """P = diag(p0) for the joints selected by ``joints`` (a (J,) boolean mask), keeping θ̂: the
        estimate becomes as uncertain as at the start and re-converges at the start's speed
        (covariance resetting on a detected change)."""
        rows = np.flatnonzero(np.asarray(joints, dtype=bool).reshape(self.n_joints))
        diagonal = np.arange(self.n_params)
        self.P[rows] = 0.0
        self.P[rows[:, None], diagonal, diagonal] = self.p0[rows]

    def update(self, regressor, measurement) -> np.ndarray:
        """Advance by one sample; returns a copy of θ̂ (J, p).

        Args:
            regressor: ψ (J, p); (p,) when J = 1.
            measurement: y (J,); a scalar when J = 1.
        """
        J, p = self.n_joints, self.n_params
        psi = _float_array(regressor, 'regressor')
        y = _float_array(measurement, 'measurement')
        if J == 1:
            psi = psi.reshape(1, p) if psi.shape == (p,) else psi
            y = y.reshape(1) if y.shape == () else y
        if psi.shape != (J, p) or y.shape != (J,):
            raise InputError(f'update needs regressor ({J}, {p}) and measurement ({J},); '
                             f'got {psi.shape} and {y.shape}')
        return self._advance(psi[None], y[None])[0]

    def run(self, regressors, measurements) -> np.ndarray:
        """Advance by N samples, the same as N calls of :meth:`update`; returns θ̂ after each (N, J, p).

        Args:
            regressors: ψ (N, J, p); (N, p) when J = 1.
            measurements: y (N, J); (N,) when J = 1.
        """
        J, p = self.n_joints, self.n_params
        psi = _float_array(regressors, 'regressors')
        y = _float_array(measurements, 'measurements')
        if J == 1:
            psi = psi.reshape(-1, 1, p) if psi.ndim == 2 and psi.shape[1] == p else psi
            y = y.reshape(-1, 1) if y.ndim == 1 else y
        if psi.ndim != 3 or psi.shape[1:] != (J, p) or y.shape != psi.shape[:2]:
            raise InputError(f'run needs regressors (N, {J}, {p}) and measurements (N, {J}); '
                             f'got {psi.shape} and {y.shape}')
        return self._advance(psi, y)

    def predict(self, regressor) -> np.ndarray:
        """ψᵀθ̂ (J,) for a regressor (J, p) ((p,) when J = 1): e.g. the predicted τ_E [N·m]."""
        psi = _float_array(regressor, 'regressor')
        if self.n_joints == 1 and psi.shape == (self.n_params,):
            psi = psi.reshape(1, -1)
        if psi.shape != self.theta.shape:
            raise InputError(f'predict needs a regressor {self.theta.shape}, got {psi.shape}')
        return np.einsum('jk,jk->j', psi, self.theta)

    # -- drivers ------------------------------------------------------------------------------------

    def _advance(self, psi: np.ndarray, y: np.ndarray) -> np.ndarray:
        if psi.shape[0] == 0:
            return np.empty(psi.shape)
        if self.nonfinite == 'raise':
            bad = ~(np.isfinite(y) & np.isfinite(psi).all(axis=-1))
            if bad.any():
                k, j = np.argwhere(bad)[0]
                raise InputError(f'non-finite regressor or measurement at sample {k}, joint {j} '
                                 "(nonfinite='skip' would skip it)")
        if self._fast:
            thetas = self._run_pairs(psi, y)
        else:
            thetas = np.empty(psi.shape)
            with np.errstate(invalid='ignore', over='ignore', divide='ignore'):
                for k in range(psi.shape[0]):
                    self._step(psi[k], y[k])
                    thetas[k] = self.theta
        self.excited = self.r > self.excitation_threshold
        return thetas

    def _run_pairs(self, psi: np.ndarray, y: np.ndarray) -> np.ndarray:
        """p = 2 in a compiled loop; returns θ̂ (N, J, 2) and stores the state."""
        core, parameters = self._pair_core()
        out = np.empty(psi.shape)
        last = np.empty((self.n_joints, 3))  # ε, r, skipped
        core(self.theta, self.P, self.max_covariance, np.ascontiguousarray(psi), np.ascontiguousarray(y), out, last,
             *parameters)
        self.error, self.r = last[:, 0].copy(), last[:, 1].copy()
        if last[:, 2].any():
            self.skipped += last[:, 2].astype(np.int64)
        return out

    def _finish_step(self, theta: np.ndarray, P: np.ndarray, error: np.ndarray, r: np.ndarray,
                     skip: np.ndarray) -> None:
        """Store a vectorized step (skipped joints unchanged): symmetric P, bounded diagonal."""
        p = self.n_params
        lower, diagonal = np.tril_indices(p, -1), np.diag_indices(p)
        P[:, lower[0], lower[1]] = P[:, lower[1], lower[0]]  # the upper triangle, as the scalar path
        entries = P[:, diagonal[0], diagonal[1]]
        over = entries > self.max_covariance
        if over.any():
            scale = np.sqrt(np.where(over, self.max_covariance / entries, 1.0))
            P *= scale[:, :, None] * scale[:, None, :]
            P[:, diagonal[0], diagonal[1]] = np.where(over, self.max_covariance, entries)
        if skip.any():
            theta[skip], P[skip] = self.theta[skip], self.P[skip]
            error, r = np.where(skip, np.nan, error), np.where(skip, np.nan, r)
        self.theta[:], self.P[:] = theta, P
        self.error, self.r = error, r
        self.skipped += skip


class DirectionalForgettingRLS(_RecursiveLeastSquares):
    """RLS-DF*: directional forgetting with regularization δI (Madsen, Rosenlund, Brandt and Zhang 2019
    (ICRA), eq. (18); Bittanti, Bolzern and Campi 1990); equations, bound, speed in the module docstring.

    Args:
        n_params: p, regressor length (2 for ψ = [φ, φ³]).
        n_joints: J, independent estimators updated together.
        forgetting: μ in (0, 1]; memory ≈ 1/(1 − μ) samples along excited directions. Smaller μ:
            more alert, more sensitive to disturbances.
        regularization: δ ≥ 0 added to P's diagonal every sample [units of P].
        p0: initial covariance diagonal, scalar, (p,) or (J, p); the paper's (1e9, 1e18) suit
            φ in rad and τ in N·m.
        theta0: initial estimate, scalar, (p,) or (J, p).
        max_covariance: bound on P's diagonal, scalar, (p,) or (J, p), ≥ p0; None: p0; inf: none.
        excitation_threshold: ``excited`` is r > this; None: (1 − μ)/μ, i.e. β > 0, the sample
            added information along ψ (module docstring).
        nonfinite: 'skip' (count in ``skipped``) or 'raise' (InputError) for NaN/inf samples.

    Attributes:
        theta: θ̂ (J, p). P: covariance (J, p, p). error: last prediction error ε = y − ψᵀθ̂ (J,)
        [units of y]. r: last ψᵀPψ (J,). excited: r > excitation_threshold (J,). skipped: samples
        skipped per joint (J,).
    """

    def __init__(self, n_params: int, n_joints: int = 1, forgetting: float = FORGETTING,
                 regularization: float = REGULARIZATION,
                 p0=(1e9, 1e18), theta0=0.0, max_covariance=None, excitation_threshold: float | None = None,
                 nonfinite: str = 'skip') -> None:
        try:
            regularization = float(regularization)
        except (TypeError, ValueError):
            raise InputError(f'regularization must be a number >= 0, got {regularization!r}') from None
        if not 0.0 <= regularization < math.inf:
            raise InputError(f'regularization must be finite and >= 0, got {regularization}')
        self.regularization = regularization
        super().__init__(n_params, n_joints, forgetting, p0, theta0, p0 if max_covariance is None else max_covariance,
                         excitation_threshold, nonfinite)

    def _pair_core(self):
        mu = self.forgetting
        return _directional_pairs, (self.regularization, (1.0 - mu) / mu)

    def _step(self, psi: np.ndarray, y: np.ndarray) -> None:
        mu, delta = self.forgetting, self.regularization
        v = np.matmul(self.P, psi[:, :, None])[:, :, 0]
        r = (psi * v).sum(axis=1)
        error = y - (psi * self.theta).sum(axis=1)
        folded = r + 0.0 * error  # NaN when ψ, y or r is not finite
        gain = (folded > _R_MIN) & (folded < math.inf)
        d = 1.0 + r
        v = np.where(gain[:, None], v, 0.0)
        theta = self.theta + v * np.where(gain, error / d, 0.0)[:, None]
        g = np.where(gain, (r - (1.0 - mu) / mu) / (r * d), 0.0)  # β/(μ(1 + r)), eq. (18) safe form
        w = g[:, None] * v
        P = self.P - w[:, :, None] * v[:, None, :]
        P[:, np.arange(self.n_params), np.arange(self.n_params)] += delta
        self._finish_step(theta, P, error, r, ~(gain | (folded <= _R_MIN)))


class ExponentialForgettingRLS(_RecursiveLeastSquares):
    """Ordinary RLS with exponential forgetting λ (Madsen 2020, thesis eq. (2.62)), for comparison.

    Args:
        n_params, n_joints, p0, theta0, nonfinite: as :class:`DirectionalForgettingRLS`.
        forgetting: λ in (0, 1]; memory ≈ 1/(1 − λ) samples in every direction.
        max_covariance: bound on P's diagonal (≥ p0); default inf: none, P winds up at rest.
        excitation_threshold: ``excited`` is r > this; None: (1 − λ)/λ, as the directional default
            (it flags about 85 % of the samples of the paper's excitation with λ = 0.9999, too).

    Attributes: as :class:`DirectionalForgettingRLS`.
    """

    def __init__(self, n_params: int, n_joints: int = 1, forgetting: float = 0.9999, p0=(1e9, 1e18), theta0=0.0,
                 max_covariance=math.inf, excitation_threshold: float | None = None, nonfinite: str = 'skip') -> None:
        super().__init__(n_params, n_joints, forgetting, p0, theta0, max_covariance, excitation_threshold,
                         nonfinite)

    def _pair_core(self):
        return _exponential_pairs, (self.forgetting,)

    def _step(self, psi: np.ndarray, y: np.ndarray) -> None:
        lam = self.forgetting
        v = np.matmul(self.P, psi[:, :, None])[:, :, 0]
        r = (psi * v).sum(axis=1)
        error = y - (psi * self.theta).sum(axis=1)
        folded = r + 0.0 * error  # NaN when ψ, y or r is not finite
        skip = ~((folded > -lam) & (folded < math.inf))
        d = lam + r
        theta = self.theta + v * (error / d)[:, None]
        w = v / d[:, None]
        self._finish_step(theta, (self.P - w[:, :, None] * v[:, None, :]) / lam, error, r, skip)


# -- compiled cores (p = 2) -------------------------------------------------------------------------


@numba.njit(cache=True)
def _directional_pairs(theta, P, bounds, psi, y, out, last, delta, forget):  # pragma: no cover - compiled
    """Eq. (18) per joint, P = [[a, b], [b, c]], forget = (1 − μ)/μ; θ̂ after each sample into ``out``
    (N, J, 2), the state updated in place, ``last`` (J, 3) = ε, r, samples skipped."""
    for j in range(theta.shape[0]):
        t1, t2 = theta[j, 0], theta[j, 1]
        a, b, c = P[j, 0, 0], P[j, 0, 1], P[j, 1, 1]
        m1, m2 = bounds[j, 0], bounds[j, 1]
        skipped = 0
        e = r = math.nan
        for k in range(psi.shape[0]):
            p1, p2, yk = psi[k, j, 0], psi[k, j, 1], y[k, j]
            v1 = a * p1 + b * p2
            v2 = b * p1 + c * p2
            r = p1 * v1 + p2 * v2
            e = yk - p1 * t1 - p2 * t2
            q = r + 0.0 * e  # NaN when ψ, y or r is not finite
            if _R_MIN < q < math.inf:
                d = 1.0 + r
                gain = e / d
                t1 += v1 * gain
                t2 += v2 * gain
                g = (r - forget) / (r * d)  # β/(μ(1 + r))
                w1 = g * v1
                w2 = g * v2
                a += delta - w1 * v1
                b -= w1 * v2
                c += delta - w2 * v2
            elif q <= _R_MIN:  # ψ = 0: β = 1, nothing to learn or forget, only δI
                a += delta
                c += delta
            else:  # NaN/inf sample or overflow
                skipped += 1
                e = r = math.nan
            a, b, c = _bounded(a, b, c, m1, m2)
            out[k, j, 0] = t1
            out[k, j, 1] = t2
        theta[j, 0], theta[j, 1] = t1, t2
        P[j, 0, 0], P[j, 0, 1], P[j, 1, 0], P[j, 1, 1] = a, b, b, c
        last[j, 0], last[j, 1], last[j, 2] = e, r, skipped


@numba.njit(cache=True)
def _exponential_pairs(theta, P, bounds, psi, y, out, last, lam):  # pragma: no cover - compiled
    """Eq. (2.62) per joint, as :func:`_directional_pairs`."""
    for j in range(theta.shape[0]):
        t1, t2 = theta[j, 0], theta[j, 1]
        a, b, c = P[j, 0, 0], P[j, 0, 1], P[j, 1, 1]
        m1, m2 = bounds[j, 0], bounds[j, 1]
        skipped = 0
        e = r = math.nan
        for k in range(psi.shape[0]):
            p1, p2, yk = psi[k, j, 0], psi[k, j, 1], y[k, j]
            v1 = a * p1 + b * p2
            v2 = b * p1 + c * p2
            r = p1 * v1 + p2 * v2
            e = yk - p1 * t1 - p2 * t2
            if -lam < r + 0.0 * e < math.inf:  # False when ψ, y or r is not finite
                d = lam + r
                gain = e / d
                t1 += v1 * gain
                t2 += v2 * gain
                w1 = v1 / d
                w2 = v2 / d
                a = (a - w1 * v1) / lam
                b = (b - w1 * v2) / lam
                c = (c - w2 * v2) / lam
            else:
                skipped += 1
                e = r = math.nan
            a, b, c = _bounded(a, b, c, m1, m2)
            out[k, j, 0] = t1
            out[k, j, 1] = t2
        theta[j, 0], theta[j, 1] = t1, t2
        P[j, 0, 0], P[j, 0, 1], P[j, 1, 0], P[j, 1, 1] = a, b, b, c
        last[j, 0], last[j, 1], last[j, 2] = e, r, skipped


@numba.njit(cache=True)
def _bounded(a, b, c, m1, m2):  # pragma: no cover - compiled
    """The diagonal bound of the module docstring: P ← S·P·S where a diagonal entry exceeds its bound."""
    if a > m1 or c > m2:
        s = 1.0
        if a > m1:
            s = math.sqrt(m1 / a)
            a = m1
        if c > m2:
            s *= math.sqrt(m2 / c)
            c = m2
        b *= s
    return a, b, c


def _positive_int(value, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 1:
        raise InputError(f'{name} must be a positive integer, got {value!r}')
    return int(value)


def _brief(value) -> str:
    """A value for a one-line message."""
    try:
        return np.array2string(np.asarray(value, dtype=float), threshold=8, separator=', ').replace('\n', '')
    except (TypeError, ValueError):
        return repr(value)


def _float_array(value, name: str) -> np.ndarray:
    try:
        return np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise InputError(f'{name} must be numeric, got {type(value).__name__}') from None
