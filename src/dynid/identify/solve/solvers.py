"""Least-squares solvers of the IDIM with their statistics.

All solve W·χ = y (+ ρ) for stacked rows of several joints (``joints`` gives each row's joint):

- :func:`ols`: QR with column pivoting (Gautier & Briot eq. (7)); σ̂² = ‖y − Wχ̂‖²/(r − b) (9),
  C = σ̂²·(WᵀW)⁻¹ (10), relative standard deviation 100·σ/|χ| (11).
- :func:`wls`: rows of joint j weighted by 1/σ̂_j, σ̂_j from an ordinary LS of joint j's equations
  alone (Gautier–Poignet; thesis ch.5 §3.6 and erratum A-18), degrees-of-freedom corrected and floored at
  a fraction of the pooled estimate (:func:`joint_noise`): a joint fitted almost exactly by its own few
  rows would otherwise get an unbounded weight and swamp the others. A joint with no more rows than
  parameters acting on it has no estimate at all and is refused by name.
- :func:`irls`: iteratively reweighted LS with a robust weight function of the residual scaled per
  joint (Huber, Tukey bisquare or Cauchy; Li et al. §2.2 loops L1–L2).
- :func:`tls`: IDIM-TLS (Gautier & Briot eqs. (17)–(23)): the right singular vector of the smallest
  singular value, scaled so that its last component (the known-payload column) is 1; rows of joint
  j weighted by 1/σ̂_W^j from a first, unweighted solution.

Every estimate carries two condition numbers of the (weighted) W: the raw one, which depends on the
units and scales of the columns (a squared-load column in N²·m² dwarfs the others), and the one with
every column scaled to unit norm, cond(W·D) with D = diag(1/‖w_i‖) — the number that says whether
the data separate the parameters, whatever their units.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from dynid.blas import one_blas_thread
from dynid.errors import InputError, checked_choice
from dynid.identify import choices
from dynid.identify.solve.noise import NOISE_FLOOR_FRACTION, TooFewRowsError, joint_noise, short_joints_text
from dynid.identify.solve.rows import RowGroups, r_factor_of

WEIGHT_FUNCTIONS = dict(zip(choices.WEIGHT_FUNCTIONS, (1.345, 4.685, 2.385), strict=True))  # 95 % efficiency


@dataclass
class Estimate:
    """A solution and its statistics.

    values, std: (p,); covariance: (p, p); residual: (rows,) unweighted y − Wχ̂;
    joint_sigma: (n,) per-joint error standard deviation used as weight (or of the residual);
    row_weights: (rows,) the final weights; condition_number of the (weighted) W as it is and
    scaled_condition_number with its columns scaled to unit norm (module docstring).
    """

    names: list[str]
    values: np.ndarray
    covariance: np.ndarray
    residual: np.ndarray
    joint_sigma: np.ndarray
    row_weights: np.ndarray
    condition_number: float
    method: str = ''  # the identification method's name, given by the pipeline (dynid.identify.steps.fit.fit)
    iterations: int = 1
    extra: dict = field(default_factory=dict)
    scaled_condition_number: float = float('nan')

    @property
    def std(self) -> np.ndarray:
        return np.sqrt(np.maximum(np.diag(self.covariance), 0.0))

    @property
    def relative_std(self) -> np.ndarray:
        """100·σ/|χ| [%] (inf for a zero value)."""
        with np.errstate(divide='ignore', invalid='ignore'):
            return np.where(self.values != 0, 100.0 * self.std / np.abs(self.values), np.inf)


# Rows of the tall matrix per piece of the accumulated QR (accumulated_r_factor): a piece of W of 54 columns is ~3.5 MB.
_QR_ROWS = 8192


def accumulated_r_factor(rows: Callable[[int, int], np.ndarray], count: int, columns: int) -> np.ndarray:
    """R (upper triangular, ``columns`` square for a tall matrix) of the Householder QR of the ``count`` ×
    ``columns`` matrix A whose rows a..b−1 ``rows(a, b)`` gives, accumulated over pieces of :data:`_QR_ROWS`
    rows: R of [R so far; next piece] (sequential TSQR, Demmel, Grigori, Hoemmen & Langou 2012, SIAM J. Sci.
    Comput. 34(1)). It is A's R up to rounding and the signs of its rows (which change no solution,
    covariance or singular value), and only a piece of A is ever held: A·G or W·D whole would be a copy
    of W (~70 MB for 10 minutes at 1 kHz). Against one QR of all rows, the rounding moves WLS parameters
    of a 60 s twin recording by up to 2e-11 σ (1e-15 of the parameter vector's norm), I-IRLS ones (cond
    1.6e8 raw) by up to 4e-10 σ.
    """
    import scipy.linalg  # in the function (here and below): a fifth of a second that importing dynid skips
    r = np.zeros((0, columns))
    with one_blas_thread():
        for start in range(0, count, _QR_ROWS):
            stop = min(count, start + _QR_ROWS)
            stacked = np.empty((r.shape[0] + stop - start, columns), order='F')  # LAPACK's order: no copy
            stacked[:r.shape[0]] = r
            stacked[r.shape[0]:] = rows(start, stop)
            (_, _), r = scipy.linalg.qr(stacked, mode='raw', overwrite_a=True, check_finite=False)
    return r


def _pivoted(w: np.ndarray, tolerance: float, r_w: np.ndarray | None = None):
    """(column norms of W, R and pivots of column-pivoted QR of W with unit-norm columns, rank); R and pivots are
    None where W has a zero column. Taken from W's R factor (W = Q·R, Q orthonormal: R has W's column norms, and
    pivoted QR of R·D is that of W·D), so that no copy of W is made; Householder reflections keep a zero column
    exactly zero. ``r_w``: W's R factor where the caller has it (:class:`dynid.identify.solve.rows.RowGroups`)."""
    import scipy.linalg
    r_w = accumulated_r_factor(lambda a, b: w[a:b], w.shape[0], w.shape[1]) if r_w is None else r_w.copy()
    norms = np.linalg.norm(r_w, axis=0)
    if np.any(norms == 0):
        return norms, None, None, None
    with one_blas_thread():
        r, pivots = scipy.linalg.qr(r_w / norms, mode='r', pivoting=True, overwrite_a=True, check_finite=False)
    diagonal = np.abs(np.diag(r))
    return norms, r, pivots, int(np.count_nonzero(diagonal > tolerance * diagonal[0]))


def dependent_columns(w: np.ndarray, tolerance: float = 1e-8, r_w: np.ndarray | None = None) -> np.ndarray:
    """The indices of the columns of W the data leave dependent on the others (empty: full column rank), zero
    columns first: the columns past the rank in column-pivoted QR of W with unit-norm columns (:func:`_pivoted`)."""
    norms, _, pivots, rank = _pivoted(w, tolerance, r_w)
    return np.flatnonzero(norms == 0) if pivots is None else np.sort(pivots[rank:])


def check_identifiable(w: np.ndarray, names: Sequence[str], tolerance: float = 1e-8,
                       r_w: np.ndarray | None = None) -> None:
    """Raise InputError naming the parameters whose columns the data leave dependent (rank-deficient W): the
    rank is that of column-pivoted QR of W with unit-norm columns (:func:`_pivoted`)."""
    norms, r, pivots, rank = _pivoted(w, tolerance, r_w)
    if pivots is None:
        empty = [n for n, v in zip(names, norms, strict=True) if v == 0]
        raise InputError(f'the data do not excite {empty} at all (zero columns); use a richer trajectory')
    if rank < w.shape[1]:
        dependent = [names[i] for i in pivots[rank:]]
        groups = dependent_groups(r, pivots, rank, names)
        raise InputError(f'the trajectory cannot separate the parameters {dependent} (rank {rank} of '
                         f'{w.shape[1]}; dependent groups: {"; ".join(map(", ".join, groups))}); use a richer '
                         f'excitation (dynid excite optimizes one)')


def dependent_groups(r: np.ndarray, pivots: np.ndarray, rank: int, names: Sequence[str],
                     tolerance: float = 1e-6) -> list[list[str]]:
    """Every parameter of each dependent group of a rank-deficient, column-scaled W (from its pivoted R):
    column ``pivots[k]`` (k ≥ rank) equals a combination of the independent columns, R11⁻¹·R12[:, k];
    its group is it and the columns with a coefficient above ``tolerance`` of the largest."""
    import scipy.linalg
    r11, r12 = r[:rank, :rank], r[:rank, rank:]
    coefficients = scipy.linalg.solve_triangular(r11, r12, check_finite=False) if rank else np.zeros((0, 0))
    groups = []
    for k in range(r.shape[1] - rank):
        column = np.abs(coefficients[:, k]) if rank else np.zeros(0)
        members = [names[pivots[i]] for i in np.flatnonzero(column > tolerance * max(column.max(initial=0), 1e-300))]
        groups.append([names[pivots[rank + k]], *members])
    return groups


def condition_numbers(a: np.ndarray) -> tuple[float, float]:
    """(cond(A), cond(A·D)) with D scaling every column of A to unit norm; A may be W or its R factor
    (same singular values and column norms). Zero columns are left unscaled."""
    norms = np.linalg.norm(a, axis=0)
    raw = np.linalg.svd(a, compute_uv=False)
    scaled = np.linalg.svd(a / np.where(norms > 0, norms, 1.0), compute_uv=False)
    return float(raw[0] / raw[-1]), float(scaled[0] / scaled[-1])


def excitation_condition(w: np.ndarray, names: list[str], rigid_count: int, held=frozenset()) -> float:
    """cond(W·D) of the data alone (``w``: the rows, or their R factor: the same singular values and column norms),
    equal row weights, D scaling each column to unit norm (the figure
    :func:`dynid.identify.result.quality.identifiability_problems` refuses above ``COND_SCALED_MAX``), on the columns
    every law starts from: the rigid-body base parameters and each joint's Coulomb and viscous friction and offset (the
    other terms and held columns left out, so that the figure does not depend on what the model choice tries). From
    the Gram matrix (p×p, one pass over the rows): cond(W·D) = √cond(DᵀWᵀW·D). The one figure of the data alone a
    run prints: the weakly exciting log's gate (:mod:`dynid.identify.steps.diagnose`) and a result with the prior
    (``prior.data_condition_number_scaled``)."""
    keep = [i for i, name in enumerate(names) if name not in held and
            (i < rigid_count or name.split('_')[0] in ('Fc', 'Fv', 'tau0'))]
    a = w[:, keep]
    norms = np.linalg.norm(a, axis=0)
    a = a / np.where(norms > 0, norms, 1.0)
    eigenvalues = np.linalg.eigvalsh(a.T @ a)
    return float(np.sqrt(eigenvalues[-1] / eigenvalues[0])) if eigenvalues[0] > 0 else float('inf')


def _solve_normal_equations(w: np.ndarray, y: np.ndarray, weights: np.ndarray) -> np.ndarray | None:
    """Weighted LS by Cholesky of the column-equilibrated normal equations, or None if not positive definite.

    Squaring the condition number costs digits: the IRLS iterations use it (several times faster than
    QR on tall systems); the final solution with its statistics comes from QR.
    """
    import scipy.linalg
    a = w * weights[:, None]
    norms = np.linalg.norm(a, axis=0)
    if np.any(norms == 0):
        return None
    a /= norms
    with one_blas_thread():
        gram = a.T @ a
        try:
            factor = scipy.linalg.cho_factor(gram, check_finite=False)
        except np.linalg.LinAlgError:
            return None
        return scipy.linalg.cho_solve(factor, a.T @ (y * weights), check_finite=False) / norms


def _solve(w: np.ndarray, y: np.ndarray, weights: np.ndarray, condition: bool = True,
           covariance: bool = True) -> tuple[np.ndarray, np.ndarray | None, tuple[float, float]]:
    """Weighted LS by QR: (χ̂, (WᵀGW)⁻¹ with G = diag(weights²) or None, (raw, column-scaled) cond of the
    weighted W or NaNs).

    Identifiability is checked beforehand (:func:`check_identifiable`), so a plain Householder QR
    (no pivoting, several times faster than the pivoted one on tall systems) is safe here.
    """
    if not condition and not covariance:
        values = _solve_normal_equations(w, y, weights)
        if values is not None:
            return values, None, (float('nan'), float('nan'))
    # R of [W·G | y·G] holds R of W·G and Qᵀ·(y·G) in its last column: Q itself is never formed.
    factor = accumulated_r_factor(lambda a, b: np.column_stack([w[a:b] * weights[a:b, None], y[a:b] * weights[a:b]]),
                       w.shape[0], w.shape[1] + 1)
    return _solved(factor, condition, covariance)


def _solved(factor: np.ndarray, condition: bool = True,
            covariance: bool = True) -> tuple[np.ndarray, np.ndarray | None, tuple[float, float]]:
    """(χ̂, (WᵀGW)⁻¹ or None, (raw, column-scaled) cond of W·G or NaNs) from the R factor of [W·G | y·G]."""
    import scipy.linalg
    columns = factor.shape[1] - 1
    r, projected = factor[:columns, :columns], factor[:columns, -1]
    values = scipy.linalg.solve_triangular(r, projected, check_finite=False)
    inverse_normal = None
    if covariance:
        r_inverse = scipy.linalg.solve_triangular(r, np.eye(r.shape[0]), check_finite=False)
        inverse_normal = r_inverse @ r_inverse.T
    if not condition:
        return values, inverse_normal, (float('nan'), float('nan'))
    return values, inverse_normal, condition_numbers(r)  # R has the singular values and column norms of W·G


def ols(w: np.ndarray, y: np.ndarray, joints: np.ndarray, names: Sequence[str],
        groups: RowGroups | None = None) -> Estimate:
    """Ordinary least squares (module docstring); ``groups``: the system's rows reduced (default: reduced here)."""
    groups = RowGroups.of(w, y, joints) if groups is None else groups
    factor = groups.stacked()
    check_identifiable(w, names, r_w=factor[:-1, :-1])
    values, inverse_normal, condition = _solved(factor)
    residual = y - w @ values
    dof = max(1, len(y) - len(values))
    variance = residual @ residual / dof
    n = int(joints.max()) + 1
    sigma = _joint_rms(residual, joints, n)
    return Estimate(list(names), values, variance * inverse_normal, residual, sigma, np.ones(len(y)), condition[0],
                    extra={'groups': groups}, scaled_condition_number=condition[1])


def _without_joint_noise() -> list[str]:
    """['ols', 'iirls']: the registered methods that need no per-joint noise (nor the drive gains unknown)."""
    from dynid.identify.registry import identification_methods

    return [m.name for m in identification_methods() if not m.joint_noise and not m.drive_gains]


def wls(w: np.ndarray, y: np.ndarray, joints: np.ndarray, names: Sequence[str],
        joint_names: Sequence[str] | None = None, floor_fraction: float = NOISE_FLOOR_FRACTION,
        refuse_short: bool = True, dependent_unknown: bool = False, groups: RowGroups | None = None) -> Estimate:
    """Weighted least squares with per-joint weights 1/σ_j (module docstring; σ_j from :func:`joint_noise`), from the
    system's rows reduced per joint once (``groups``, default reduced here:
    :class:`dynid.identify.solve.rows.RowGroups`).

    A joint with no more rows than parameters acting on it has no noise estimate: refused by name
    (``joint_names``) with the counts, unless ``refuse_short`` is False (IRLS's start: its σ_j is the floor).
    Columns the data leave dependent are refused by name (:func:`check_identifiable`), unless
    ``dependent_unknown``: they are then held at 0 with an infinite variance (the data say nothing of them
    beyond the independent columns), for a prior to complete (:mod:`dynid.identify.solve.physical`), and
    ``extra['dependent']`` names them. ``extra['noise']`` keeps the :class:`JointNoise`.
    """
    n = None if joint_names is None else len(joint_names)
    groups = RowGroups.of(w, y, joints, n=n) if groups is None else groups
    r_w = groups.stacked()[:-1, :-1]
    if dependent_unknown:
        dependent = dependent_columns(w, r_w=r_w)
    else:
        check_identifiable(w, names, r_w=r_w)
        dependent = np.zeros(0, dtype=int)
    noise = joint_noise(w, y, joints, floor_fraction, n, groups=groups)
    if refuse_short and noise.without_freedom.any():
        from dynid.identify.registry import spoken

        methods = _without_joint_noise()
        finding = (f'WLS cannot estimate the noise of {short_joints_text(noise, joint_names)} from its own equations '
                   f'(a joint needs more rows than parameters acting on it)')
        raise TooFewRowsError(f'{finding}: give a longer recording, a smaller decimation, or a method that needs no '
                              f'per-joint noise ({spoken(methods, upper=False)})', methods=methods, finding=finding)
    sigma = noise.sigma
    weights = 1.0 / sigma[joints]
    kept = np.setdiff1d(np.arange(w.shape[1]), dependent)
    factor = groups.stacked(1.0 / sigma)
    if dependent.size:  # the R factor of the kept columns and y
        factor = r_factor_of(factor[:, [*kept, w.shape[1]]])
    values, inverse_normal, condition = _solved(factor)
    if dependent.size:
        values, inverse_normal = _with_unknown(values, inverse_normal, kept, w.shape[1])
        condition = (float('inf'), float('inf'))
    residual = y - w @ values
    weighted = residual * weights
    variance = weighted @ weighted / max(1, len(y) - kept.size)  # ≈ 1 by construction
    extra = {'noise': noise, 'groups': groups}
    if dependent.size:
        extra['dependent'] = [names[i] for i in dependent]
    return Estimate(list(names), values, variance * inverse_normal, residual, sigma, weights, condition[0],
                    extra=extra, scaled_condition_number=condition[1])


def _with_unknown(values: np.ndarray, inverse_normal: np.ndarray, kept: np.ndarray,
                  columns: int) -> tuple[np.ndarray, np.ndarray]:
    """The kept columns' solution and (WᵀGW)⁻¹ widened to every column: the others 0 with infinite variance."""
    full_values = np.zeros(columns)
    full_values[kept] = values
    full_inverse = np.zeros((columns, columns))
    full_inverse[np.ix_(kept, kept)] = inverse_normal
    unknown = np.setdiff1d(np.arange(columns), kept)
    full_inverse[unknown, unknown] = np.inf
    return full_values, full_inverse


def _joint_rms(residual: np.ndarray, joints: np.ndarray, n: int) -> np.ndarray:
    """(n,) RMS of each joint's residual rows; NaN for a joint without rows (its equations left out)."""
    return np.array([np.sqrt(np.mean(residual[joints == j] ** 2)) if np.any(joints == j) else np.nan
                     for j in range(n)])


def _robust_scale(residual: np.ndarray) -> float:
    if residual.size == 0:  # a joint without rows: no scale is used
        return 1.0
    deviation = np.median(np.abs(residual - np.median(residual)))
    return 1.4826 * deviation if deviation > 0 else float(np.std(residual)) or 1.0


def robust_weights(standardized: np.ndarray, function: str = 'huber', constant: float | None = None) -> np.ndarray:
    """Weights of standardized residuals r for the named weight function."""
    checked_choice('weight function', function, sorted(WEIGHT_FUNCTIONS))
    c = WEIGHT_FUNCTIONS[function] if constant is None else float(constant)
    if c <= 0:
        raise InputError(f'the weight-function constant must be > 0, got {c}')
    r = np.abs(standardized)
    if function == 'huber':
        return np.minimum(1.0, c / np.maximum(r, 1e-300))
    if function == 'tukey':
        return np.where(r < c, (1 - (r / c) ** 2) ** 2, 0.0)
    return 1.0 / (1.0 + (r / c) ** 2)


def irls(w: np.ndarray, y: np.ndarray, joints: np.ndarray, names: Sequence[str], function: str = 'huber',
         constant: float | None = None, max_iterations: int = 30, tolerance: float = 1e-5,
         start: Estimate | None = None) -> Estimate:
    """Iteratively reweighted least squares (module docstring); starts from WLS unless ``start`` (joints
    without a noise estimate of their own start from the floor: the robust scale replaces it at once)."""
    estimate = start if start is not None else wls(w, y, joints, names, refuse_short=False)
    n = int(joints.max()) + 1
    values = estimate.values
    weights = estimate.row_weights
    iterations = 0
    for iteration in range(1, max_iterations + 1):
        iterations = iteration
        residual = y - w @ values
        scale = np.array([_robust_scale(residual[joints == j]) for j in range(n)])
        # Row multipliers √w(r/s)/s: the normal equations carry w/s² (weighted LS on standardized rows).
        weights = np.sqrt(robust_weights(residual / scale[joints], function, constant)) / scale[joints]
        if np.count_nonzero(weights) <= len(values):
            raise InputError('robust weighting rejected too many samples; use Huber or a larger constant')
        new_values, _, _ = _solve(w, y, weights, condition=False, covariance=False)
        change = np.linalg.norm(new_values - values) / max(np.linalg.norm(values), 1e-300)
        values = new_values
        if change < tolerance:
            break
    residual = y - w @ values
    weighted = residual * weights
    effective = np.count_nonzero(weights) - len(values)
    variance = weighted @ weighted / max(1, effective)
    _, inverse_normal, condition = _solve(w, y, weights)
    sigma = _joint_rms(residual, joints, n)
    return Estimate(list(names), values, variance * inverse_normal, residual, sigma, weights, condition[0],
                    iterations=iterations,
                    extra={'weight_function': function,
                           'constant': WEIGHT_FUNCTIONS[function] if constant is None else constant},
                    scaled_condition_number=condition[1])


def tls(w_total: np.ndarray, joints: np.ndarray, names: Sequence[str], weighted: bool = True) -> Estimate:
    """IDIM-TLS of W_tot·χ_tot = ρ with χ_tot = [..., 1] (module docstring).

    ``names`` label the first c − 1 columns; the last column carries the known scale (the known
    payload-mass torque, with a minus sign as in eq. (17)).
    """
    check_identifiable(w_total, list(names) + ['known payload'])
    r, c = w_total.shape
    n = int(joints.max()) + 1
    weights = np.ones(r)

    def solve(weights):
        u, s, vt = np.linalg.svd(w_total * weights[:, None], full_matrices=False)
        kernel = vt[-1]
        if abs(kernel[-1]) < 1e-12 * np.abs(kernel).max():
            raise InputError('the known payload does not fix the scale (the payload recordings add nothing); '
                             'record with and without the payload')
        return u, s, vt, kernel / kernel[-1]

    u, s, vt, solution = solve(weights)
    if weighted:
        residual = w_total @ solution
        sigma = _joint_rms(residual, joints, n)
        weights = 1.0 / np.maximum(sigma[joints], 1e-300)
        u, s, vt, solution = solve(weights)
    sigma_w = s[-1] / np.sqrt(max(1, r - c))
    w_hat = w_total * weights[:, None] - s[-1] * np.outer(u[:, -1], vt[-1])
    head = solution[:-1]
    covariance = sigma_w**2 * (1 + head @ head) * np.linalg.inv(w_hat[:, :-1].T @ w_hat[:, :-1])
    residual = w_total @ solution
    joint_sigma = _joint_rms(residual, joints, n)
    # The unknowns' columns (the known-payload column fixes the scale): their column-scaled cond.
    scaled = condition_numbers(w_total[:, :-1] * weights[:, None])[1]
    return Estimate(list(names), head, covariance, residual, joint_sigma, weights, float(s[0] / s[-1]),
                    extra={'singular_values_tail': s[-3:].tolist(), 'kernel_gap': float(s[-2] / s[-1])},
                    scaled_condition_number=scaled)
