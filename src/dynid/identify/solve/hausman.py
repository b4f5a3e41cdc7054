"""Whether IDIM-LS is biased on a recording: the Durbin–Wu–Hausman test of LS against an instrumental-variable
estimate (:func:`durbin_wu_hausman`).

The IDIM's rows W (r, p) are built from measured, filtered and differentiated positions; in closed loop their noise
reaches the torque y through the controller, so W and the equation error are correlated and LS is biased where the
band-pass filtering cannot be tuned well (low rates, noisy or quantized encoders). Instruments Z (r, p), e.g. the
same regressor built from a simulated closed loop's noise-free states (Janot, Vandanjon and Gautier 2014, "An
instrumental variable approach for rigid industrial robots identification", Control Eng. Practice 25), give the IV
estimate θ_IV = (Ŵ'W)⁻¹Ŵ'y, Ŵ = P_Z·W, which stays consistent where LS is not. Under the null (W exogenous) both are
consistent and LS is efficient, so their difference measures the bias (Hausman 1978, eq. 2.8):

    H = (θ_IV − θ_LS)' [V_IV − V_LS]⁺ (θ_IV − θ_LS) ~ χ²_q,   V_IV = σ̂²(Ŵ'Ŵ)⁻¹, V_LS = σ̂²(W'W)⁻¹,

σ̂² = ‖y − W·θ_LS‖²/r, LS's residual variance with divisor r (Durbin 1954's form). Instruments that reproduce some
of W's columns exactly (exogenous columns instrumenting themselves) make V_IV − V_LS singular: its Moore–Penrose
inverse is taken and q is its rank (Hausman 1978, §2; Wu 1973's T₂ has the same q).

The same hypothesis in Wu's (1973) augmented-regression form, which Janot, Vandanjon and Gautier (2016, "A revised
Durbin-Wu-Hausman test for industrial robot identification", Control Eng. Practice 48) compute from the QR
factorization of the augmented observation matrix [W, W − Ŵ] with an F-test: the columns of W − Ŵ independent of W
(pivoted QR, the q columns left) are added to LS, and

    F = (δ/q) / ((‖e_LS‖² − δ)/(r − p − q)) ~ F(q, r − p − q),   δ = ‖e_LS‖² − ‖e_aug‖²;

H = δ/σ̂² exactly (the two forms agree to rounding). Rows are weighted as WLS weights them (``weights``: 1/σ̂_j of
each row's joint), which turns the test into its generalized-least-squares form.

Two departures where each row's joint is given (``joints``; without it the test is the textbook one, equal to
linearmodels' ``durbin()`` and ``wu_hausman()``): (1) the IDIM's decimated rows are not independent (a residual
lag-1 autocorrelation ρ of ~0.3 on the twin at 1 kHz), and σ̂² is widened by (1 + ρ)/(1 − ρ) as a result's σ are
(:func:`dynid.identify.result.quality.std_inflation`); (2) with instruments close to W, V_IV − V_LS is small and the
test finds biases far inside LS's own uncertainty: LS is called biased (:attr:`HausmanTest.biased`) where the test
rejects at the level **and** the bias it measures takes LS outside its own 1 − level interval around the IV estimate,
D = (θ_IV − θ_LS)' V_LS⁻¹ (θ_IV − θ_LS) > χ²_q(1 − level).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dynid.diagnosis.effort import chi2_quantile, chi2_survival
from dynid.errors import InputError
from dynid.identify.result.quality import residual_autocorrelation, std_inflation

#: The level below whose p-value LS is called biased (the identify diagnosis's default).
BIAS_LEVEL = 0.01
#: Relative tolerance of the ranks: of V_IV − V_LS's eigenvalues against its largest, and of the pivoted QR's
#: diagonal against its first (rounding on well-scaled columns stays below 1e-12).
RANK_TOLERANCE = 1e-9


@dataclass(frozen=True)
class HausmanTest:
    """The Durbin–Wu–Hausman test of one system (module docstring).

    statistic, dof, p_value: H, q and P(χ²_q > H) (Hausman's form); f_statistic, f_dof, f_p_value: F, (q, r − p − q)
    and P(F > f_statistic) (Wu's augmented regression, the revised test's form); distance: D, the IV estimate's
    distance from LS in LS's own covariance, and bound: χ²_q(1 − level); inflation: the variance's widening for
    correlated rows (1 without ``joints``); level: the test's level; ls, iv: the two estimates compared (p,), in W's
    units; rows: r."""

    statistic: float
    dof: int
    p_value: float
    f_statistic: float
    f_dof: tuple[int, int]
    f_p_value: float
    distance: float
    bound: float
    inflation: float
    level: float
    ls: np.ndarray
    iv: np.ndarray
    rows: int

    @property
    def rejects(self) -> bool:
        """The test rejects exogeneity at :attr:`level`: LS and IV differ by more than chance explains."""
        return self.p_value < self.level

    @property
    def biased(self) -> bool:
        """LS is biased where it matters: the test rejects and LS lies outside its own interval around IV."""
        return self.rejects and self.distance > self.bound


def durbin_wu_hausman(w, y, z, weights=None, joints=None, level: float = BIAS_LEVEL) -> HausmanTest:
    """The Durbin–Wu–Hausman test of LS on ``w``·θ ≈ ``y`` against the instruments ``z`` (module docstring).

    Args:
        w: (r, p) the IDIM's rows, as LS takes them.
        y: (r,) the torques [N·m, or the effort's unit].
        z: (r, p') the instruments, p' ≥ p, row for row with ``w`` (e.g. W of a simulated closed loop's states).
        weights: (r,) each row's weight (1/σ̂_j of its joint, as WLS weights; default 1).
        joints: (r,) each row's joint (0 to n − 1; each joint's rows in time order): the variance is widened for
            the residual's autocorrelation (default: the rows taken as independent).
        level: the test's level, in (0, 1).

    Returns:
        :class:`HausmanTest`.

    >>> rng = np.random.default_rng(0)
    >>> z = rng.normal(size=(500, 2)); w = z + 0.1 * rng.normal(size=(500, 2))
    >>> durbin_wu_hausman(w, w @ [1.0, 2.0] + rng.normal(size=500), z).biased
    False
    """
    w, y, z = _system(w, y, z, weights)
    if not 0.0 < level < 1.0:
        raise InputError(f'level must be in (0, 1), got {level!r}')
    rows, p = w.shape
    basis = _instrument_basis(z)
    fitted = basis @ (basis.T @ w)  # Ŵ = P_Z·W
    ls, e_ls = _least_squares(w, y)
    if np.linalg.matrix_rank(fitted) < np.linalg.matrix_rank(w):
        raise InputError('the instruments z do not identify what w does: P_Z·w has a lower rank than w (instruments '
                         'of a simulation that leaves joints still, or columns of zeros)')
    iv = np.linalg.lstsq(fitted, y, rcond=None)[0]
    inflation = _inflation(e_ls, joints, rows)
    variance = inflation * float(e_ls @ e_ls) / rows
    statistic, dof = _quadratic(variance * (np.linalg.pinv(fitted.T @ fitted) - np.linalg.pinv(w.T @ w)), iv - ls)
    delta, added = _augmented_reduction(w, w - fitted, y, e_ls)
    rest = rows - p - added
    f_statistic = (delta / added) / (inflation * (float(e_ls @ e_ls) - delta) / rest) if added and rest > 0 else 0.0
    distance = float((iv - ls) @ (w.T @ w) @ (iv - ls)) / variance
    return HausmanTest(statistic, dof, chi2_survival(dof, statistic) if dof else 1.0, f_statistic, (added, rest),
                       _f_survival(added, rest, f_statistic), distance, chi2_quantile(max(dof, 1), level),
                       inflation, level, ls, iv, rows)


def _quadratic(difference: np.ndarray, d: np.ndarray) -> tuple[float, int]:
    """d'·A⁺·d and the rank of the symmetric positive semi-definite A (eigenvalues above the tolerance)."""
    values, vectors = np.linalg.eigh(0.5 * (difference + difference.T))
    kept = values > RANK_TOLERANCE * max(values.max(), 0.0)
    projected = vectors[:, kept].T @ d
    return (float(projected @ (projected / values[kept])) if kept.any() else 0.0), int(kept.sum())


def _inflation(residual: np.ndarray, joints, rows: int) -> float:
    """(1 + ρ)/(1 − ρ) of the residual's lag-1 autocorrelation ρ per joint (the median, as a result's σ are
    widened); 1 without ``joints``."""
    if joints is None:
        return 1.0
    joints = np.asarray(joints)
    if joints.shape != (rows,) or not np.issubdtype(joints.dtype, np.integer) or joints.min() < 0:
        raise InputError(f'joints must be ({rows},) joint indices >= 0, got shape {joints.shape}')
    return std_inflation(residual_autocorrelation(residual, joints, int(joints.max()) + 1)) ** 2


def _system(w, y, z, weights) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """w, y, z as float arrays of matching rows, finite, each row scaled by its weight."""
    w, y, z = (np.asarray(a, dtype=float) for a in (w, y, z))
    if w.ndim != 2 or y.shape != (w.shape[0],) or z.ndim != 2 or z.shape[0] != w.shape[0]:
        raise InputError(f'w (r, p), y (r,) and z (r, p\') must have the same rows r, got {w.shape}, {y.shape} and '
                         f'{z.shape}')
    if z.shape[1] < w.shape[1]:
        raise InputError(f'z must have at least as many columns (instruments) as w has ({w.shape[1]}), got '
                         f'{z.shape[1]}')
    if w.shape[0] <= 2 * w.shape[1]:
        raise InputError(f'w must have more than twice as many rows as columns for the test, got {w.shape}')
    for name, a in (('w', w), ('y', y), ('z', z)):
        if not np.all(np.isfinite(a)):
            raise InputError(f'{name} must be finite')
    if weights is not None:
        g = np.asarray(weights, dtype=float)
        if g.shape != y.shape or not np.all(np.isfinite(g)) or np.any(g <= 0):
            raise InputError(f'weights must be ({len(y)},) finite and > 0, got shape {g.shape}')
        w, y, z = w * g[:, None], y * g, z * g[:, None]
    return w, y, z


def _instrument_basis(z: np.ndarray) -> np.ndarray:
    """An orthonormal basis of Z's column space (P_Z = Q·Q'), from the SVD: instruments that repeat each other are
    taken once."""
    u, s, _ = np.linalg.svd(z, full_matrices=False)
    return u[:, s > RANK_TOLERANCE * s[0]] if s.size and s[0] > 0 else u[:, :0]


def _least_squares(a: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    solution = np.linalg.lstsq(a, y, rcond=None)[0]
    return solution, y - a @ solution


def _augmented_reduction(w: np.ndarray, residual_columns: np.ndarray, y: np.ndarray, e_ls: np.ndarray
                         ) -> tuple[float, int]:
    """δ = ‖e_LS‖² − ‖e_aug‖² of LS on [W, V] (V = W − Ŵ) and q, the columns of V that the pivoted QR of the
    augmented matrix keeps beside W's (the revised test's QR)."""
    import scipy.linalg

    augmented = np.hstack([w, residual_columns])
    r, pivots = scipy.linalg.qr(augmented, mode='r', pivoting=True, check_finite=False)
    diagonal = np.abs(np.diag(r))
    rank = int(np.count_nonzero(diagonal > RANK_TOLERANCE * diagonal[0])) if diagonal.size else 0
    _, e_aug = _least_squares(augmented[:, np.sort(pivots[:rank])], y)
    return max(float(e_ls @ e_ls - e_aug @ e_aug), 0.0), rank - int(np.linalg.matrix_rank(w))


def _f_survival(dfn: int, dfd: int, x: float) -> float:
    """P(F(dfn, dfd) > x); 1 where the test has no degrees of freedom."""
    if dfn <= 0 or dfd <= 0:
        return 1.0
    import scipy.special

    return float(scipy.special.fdtrc(dfn, dfd, x))
