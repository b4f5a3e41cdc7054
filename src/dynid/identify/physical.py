"""Physically consistent identification: standard parameters per link, each link a realizable body.

Least squares gives base parameters χ_b = K·π that fit the torques but may belong to no physical robot.
Here the unknowns are the 10·n standard parameters π (:mod:`dynid.model.inertial` order, each link about
its joint frame), the rotor inertias Ia (when the problem identifies them) and the friction parameters,
and the problem is

    minimize    ‖G·(y − W_b·K·π − W_f·f)‖²  +  Σ_i ‖J̄_i^(−1/2)·(J_i − J̄_i)·J̄_i^(−1/2)‖²_F / s²  (+ Ia term)
    subject to  J_i(π_i) ⪰ ε·J̄_i  (every link),   Ia ≥ 0,   Fc ≥ 0,   Fv ≥ 0

- **J_i** the 4×4 pseudo-inertia of link i, J = [[Σ, h], [hᵀ, m]] with Σ = ½·tr(I)·E₃ − I (I about the
  frame origin, h = m·c). J ⪰ 0 is exactly the condition that some non-negative mass density has
  these ten moments (Wensing, Kim and Slotine 2017, Theorem 1); it implies m ≥ 0, a PSD inertia about
  the centre of mass and the triangle inequalities. ε = 1e-4 of the prior keeps every link strictly
  positive, so that M(q) is positive definite (not merely semidefinite) everywhere.
- **G** the weights of the linear solution (1/σ̂_j per joint for WLS, the final robust weights for IRLS):
  the data term is the χ² of the weighted residuals, in the same units as the unconstrained fit's, so
  the **consistency cost** (how much worse the constrained fit is) is reported as
  100·(χ²_physical − χ²_unconstrained)/χ²_unconstrained [%] on the training equations.
- **Prior** (optional, on by default): the robot file's (URDF's or built-in table's) own pseudo-inertias
  J̄_i. The distance is the local metric of the log-det (Bregman) divergence between pseudo-inertias,
  i.e. its second-order expansion (Lee and Park 2019, "Geometric robot dynamic identification"): it is
  dimensionless and independent of the frame and units, so one weight serves every link. The prior is a
  Gaussian belief with relative standard deviation s (``prior_relative_std``: the robot file may be off
  by s of each link's "size"), the data term a χ² with unit variance per row, and the estimate the
  maximum a posteriori one. Rotor inertias get the same relative prior on the drive data's B. Friction
  has no prior.
- **Rule for s** (default; a given ``prior_relative_std`` overrides it): cross-validation on the training
  rows themselves, ties going to the data. The weighted rows are cut into ``CROSS_VALIDATION_BLOCKS`` (20)
  contiguous blocks (rows are sample-major, so a block is a stretch of the recording), block b into fold
  b mod ``CROSS_VALIDATION_FOLDS`` (10): every fold's complement spans the whole record, so a fold is
  predicted from the record's own coverage rather than extrapolated to a stretch of motion the rest never
  saw, and blocks rather than single rows because neighbouring rows share the filters' memory. For every s
  of ``PRIOR_STD_GRID`` (0.1 … 10) and every fold, the MAP estimate of the other folds (the Gaussian
  problem, a linear least squares: the constraints are left to the final solve, which keeps the choice at
  milliseconds per candidate instead of a conic solve each) predicts the held-out fold, scored by its
  weighted χ². Let s* have the least total. From s* toward larger s, the rule keeps the weakest prior
  before the first whose mean excess over s* per fold exceeds one standard error of the paired fold
  differences (their sample standard deviation / √10). This is the one-standard-error rule (Hastie,
  Tibshirani and Friedman 2009, sec. 7.10) turned toward the data. There the most regularized model the
  folds cannot tell from the best is kept; here the prior is a robot file known to be off, and among
  weights the recording cannot tell apart the one that lets the data correct it most is kept. (The
  folds are also fit on 9/10 of the rows, which leans toward a stronger prior than the whole record
  needs.) The grid, the totals, s*, the per-fold excesses and their standard errors are in the result.
  Nothing outside the training recordings is looked at.
  Measured by ``benchmarks/bench_physical.py`` (UR5e twin, robot file perturbed ±30 %, 10 s random
  records, held-out gain of the validation fit on WLS's worst joint). The former rule (the least total,
  5 contiguous folds, grid 0.1, 0.2, 0.5, 1, …) lost 0.006 points on seed 102: it chose s = 0.5, and any
  s ≥ 0.7 would have gained; the folds' totals for 0.5 and 1 differed by 0.2 %. Designed on seeds
  100–109, this rule gained on all ten (least +0.023, median +0.067; former: 9 of 10, median +0.073). On
  every other fold scheme tried (5–20 contiguous folds, 5 or 10 interleaved folds of 10–100 blocks) it
  also gained on all ten; the least total lost on some seeds in 10 of those 14 schemes. On the fresh
  seeds 110–149, run after the design was fixed, it gained on 38 of 40 (least −0.019, median +0.121
  points); the former rule gained on 35 (least −0.080), no prior on 38 (least −0.022). (Seeds 110–129
  first confirmed a variant that took the largest s within one standard error anywhere on the grid. It
  chose the same s on all of them, but on the Panda record it jumped past distinguishably worse weights
  to s = 10, whose folds scatter more; hence the walk.) On seed 144
  every s of the grid loses (−0.003 at s = 10) and only s ≥ 20 gains. The gains at stake are hundredths
  of a point, below what the record's own folds resolve. The pseudo-inertia margin ε does not matter
  here: ε = 1e-6, 1e-4 and 1e-2 gave the same gains to 0.002 points on seeds 100–109.

Solver. The problem is convex (a least squares with linear matrix inequalities). Two solvers are
implemented and measured by ``benchmarks/bench_physical.py``: ``clarabel`` (cvxpy with the Clarabel
interior-point solver; global optimum, certificates) and ``log_cholesky`` (scipy's bounded trust-region
least squares on the log-Cholesky parametrization J = U·Uᵀ, U upper triangular with exp(·) diagonal,
Rucker and Wensing 2022, which makes J ≻ 0 by construction but the problem non-convex). Both reduce the
tall weighted system to its R factor first (one QR), so their cost does not grow with the recording.
The default is ``clarabel``: measured on the benchmark's problems (60 s UR5e and 20 s Panda twin recordings
at 1 kHz; repeated solves in one process on a shared 2-core machine at load average 6.5–7, wall time and in
brackets the process's CPU time), Clarabel solved in 0.18–0.21 s (0.10 s) on the UR5e and 0.19–0.20 s
(0.13–0.14 s) on the Panda, the log-Cholesky descent reached the same objective in 1.2–1.5 s (0.7–0.9 s)
and 2.1–2.3 s (1.5 s), SCS took 2.4–2.8 s (1.4 s) and 8.6–10.4 s (6.5–7.0 s) and stopped 2.5 % and 1.8 %
above the optimum; a convex solver also cannot stop in a local minimum. A process's first Clarabel solve
also imports cvxpy and compiles the problem (UR5e: 4.0 s, 1.3 s of CPU, at that load). Clarabel is
handed only the excess over the unconstrained cost (see :class:`ConvexProgram`). When that was decided,
on the raw objective ‖A·x − b‖² it had stopped 44 % above the optimum; re-measured on the benchmark's two
problems (cvxpy 1.9.3, Clarabel 0.11.1), the raw objective reaches the same optimum
(to 1e-10 relative with the prior; without it the two forms differ by up to 0.5 %, either way), so the
excess form is kept as a safeguard rather than a measured necessity.
"""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass

import numpy as np
import scipy.linalg

from dynid.errors import InputError, checked_choice
from dynid.identify.solvers import one_blas_thread
from dynid.model.inertial import parameters_of_pseudo_inertia, pseudo_inertia

SOLVERS = ('clarabel', 'scs', 'log_cholesky')
#: Friction models whose parameters the physical solve can bound (the others iterate on τ_out).
PHYSICAL_FRICTION = ('none', 'viscous_coulomb')
#: Non-negative friction symbols.
NON_NEGATIVE_FRICTION = ('Fc', 'Fv')
#: Each link's pseudo-inertia stays above this fraction of its prior (strict positivity of M(q)).
STRICT_MARGIN = 1e-4
#: Relative prior standard deviations s tried by the cross-validation (module docstring, "Rule"):
#: 0.1 … 10 in steps of about √2 to 2, so that the rule's step toward the data is not a factor of two.
PRIOR_STD_GRID = (0.1, 0.15, 0.2, 0.3, 0.5, 0.7, 1.0, 1.5, 2.0, 3.0, 5.0, 7.0, 10.0)
#: Folds the cross-validation holds out in turn; each is CROSS_VALIDATION_BLOCKS / CROSS_VALIDATION_FOLDS
#: contiguous blocks of the training rows spread over the record (module docstring, "Rule").
CROSS_VALIDATION_FOLDS = 10
CROSS_VALIDATION_BLOCKS = 20


@dataclass
class PhysicalSettings:
    """Options of the physical solve (module docstring). ``prior`` False: no pull toward the robot file;
    ``prior_relative_std`` None: s chosen by cross-validation on the training rows (the "Rule")."""

    prior: bool = True
    prior_relative_std: float | None = None
    solver: str = 'clarabel'

    def validated(self) -> PhysicalSettings:
        checked_choice('physical solver', self.solver, SOLVERS)
        if self.prior_relative_std is not None and not (np.isfinite(self.prior_relative_std)
                                                        and self.prior_relative_std > 0):
            raise InputError(f'prior_relative_std must be > 0, got {self.prior_relative_std!r}')
        return self

    def check_model(self, spec) -> None:
        """Refuse a :class:`~dynid.identify.model.ModelSpec` the physical solve cannot bound (before any work)."""
        if spec.friction not in PHYSICAL_FRICTION:
            raise InputError(f'physical identification supports the friction models {PHYSICAL_FRICTION}, '
                             f'got {spec.friction!r}')


# ------------------------------------------------------------------------------ pseudo-inertia
#: (16, 10): vec(J) = PSEUDO_MAP @ φ (J is linear in φ).
PSEUDO_MAP = np.column_stack([pseudo_inertia(e).reshape(-1) for e in np.eye(10)])


def _prior_pseudo(phi: np.ndarray) -> np.ndarray:
    """J̄ of a prior link made strictly positive definite (a point mass or a massless link is singular)."""
    j = pseudo_inertia(phi)
    scale = max(np.trace(j), 1e-6)
    return j + 1e-6 * scale * np.eye(4)


def _inverse_sqrt(j: np.ndarray) -> np.ndarray:
    values, vectors = np.linalg.eigh(j)
    return vectors @ np.diag(values ** -0.5) @ vectors.T


# ------------------------------------------------------------------------------ the problem
@dataclass
class ReducedRows:
    """Weighted rows G·W·v ≈ G·y kept as ‖G·(y − W·v)‖² = ‖projected − r·v‖² + constant (r: p×p)."""

    r: np.ndarray
    projected: np.ndarray
    constant: float

    @classmethod
    def of(cls, w: np.ndarray, y: np.ndarray, row_weights: np.ndarray) -> ReducedRows:
        """One QR of [G·W | G·y] (R only: the last column is Qᵀ·G·y, the corner the part nothing fits)."""
        count = w.shape[1]
        r = scipy.linalg.qr(np.column_stack([w * row_weights[:, None], y * row_weights]), mode='r',
                            check_finite=False)[0]
        full = np.zeros((count + 1, count + 1))
        full[:r.shape[0]] = r[:count + 1]
        return cls(full[:count, :count], full[:count, count], float(full[count, count] ** 2))

    @classmethod
    def stack(cls, parts: list[ReducedRows]) -> ReducedRows:
        """The rows of several parts together (their R factors stacked and reduced again)."""
        w = np.vstack([part.r for part in parts])
        y = np.concatenate([part.projected for part in parts])
        joined = cls.of(w, y, np.ones(len(y)))
        joined.constant += sum(part.constant for part in parts)
        return joined

    def cost(self, v: np.ndarray) -> float:
        """‖G·(y − W·v)‖² of these rows."""
        e = self.projected - self.r @ v
        return float(e @ e + self.constant)


@dataclass
class PhysicalProblem:
    """The reduced least squares ‖A·x − b‖² over x = [π (10n) | Ia (n or 0) | friction] (module docstring).

    ``a``, ``b``: data rows (R factor of the weighted base system times the regrouping) stacked over the
    prior rows; ``data_rows``: how many of them are data; ``residual_constant``: the part of the weighted
    sum of squares no parameter can fit (‖Gy‖² − ‖Qᵀ·G·y‖²).
    """

    a: np.ndarray
    b: np.ndarray
    data_rows: int
    residual_constant: float
    n_links: int
    n_rotor: int
    non_negative: np.ndarray  # indices of x bounded below by 0 (Ia, Fc, Fv)
    prior_pseudo: list[np.ndarray]  # J̄_i (the floor ε·J̄_i of the constraint)

    def objective(self, x: np.ndarray) -> float:
        """‖A·x − b‖²: the minimized cost (data and prior) up to the constant."""
        r = self.a @ x - self.b
        return float(r @ r)

    def data_cost(self, x: np.ndarray) -> float:
        """Weighted χ² of the training equations at x."""
        r = self.a[:self.data_rows] @ x - self.b[:self.data_rows]
        return float(r @ r + self.residual_constant)


@dataclass
class PriorRows:
    """The prior's rows at s = 1 (module docstring): ‖a·x − b‖² / s² is the prior's cost."""

    a: np.ndarray
    b: np.ndarray
    pseudo: list[np.ndarray]  # J̄_i

    @classmethod
    def of(cls, n_links: int, unknowns: int, prior_standard: np.ndarray, prior_rotor: np.ndarray | None) -> PriorRows:
        pseudo = [_prior_pseudo(prior_standard[10 * i:10 * i + 10]) for i in range(n_links)]
        a_rows, b_rows = [], []
        for i, j_bar in enumerate(pseudo):
            root = _inverse_sqrt(j_bar)
            g = np.kron(root, root) @ PSEUDO_MAP  # vec(R·J·R) = (R⊗R)·vec(J)
            rows = np.zeros((16, unknowns))
            rows[:, 10 * i:10 * i + 10] = g
            a_rows.append(rows)
            b_rows.append(g @ prior_standard[10 * i:10 * i + 10])
        if prior_rotor is not None:
            scale = np.maximum(np.abs(prior_rotor), 1e-6)
            rows = np.zeros((n_links, unknowns))
            rows[np.arange(n_links), 10 * n_links + np.arange(n_links)] = 1.0 / scale
            a_rows.append(rows)
            b_rows.append(prior_rotor / scale)
        return cls(np.vstack(a_rows), np.concatenate(b_rows), pseudo)


@dataclass
class PhysicalLayout:
    """How x = [π | Ia | friction] maps to the identification's columns, and what is bounded."""

    to_base: np.ndarray  # (columns of W) × (unknowns): χ_b = K·[π; Ia], friction itself
    n_links: int
    n_rotor: int
    non_negative: np.ndarray

    @classmethod
    def of(cls, regrouping: np.ndarray, n_links: int, rotor_inertia: bool, parameter_names: list[str],
           rigid_count: int) -> PhysicalLayout:
        standard_count = regrouping.shape[1]
        names = parameter_names[rigid_count:]
        to_base = scipy.linalg.block_diag(regrouping, np.eye(len(names)))
        bounded = [standard_count + k for k, name in enumerate(names)
                   if name.rpartition('_')[0] in NON_NEGATIVE_FRICTION]
        if rotor_inertia:
            bounded = list(range(10 * n_links, standard_count)) + bounded
        return cls(to_base, n_links, standard_count - 10 * n_links, np.array(bounded, dtype=int))

    def problem(self, data: ReducedRows, prior: PriorRows, prior_std: float | None) -> PhysicalProblem:
        """The problem of these data rows with the prior at relative σ ``prior_std`` (None: no prior)."""
        a_rows, b_rows = [data.r @ self.to_base], [data.projected]
        if prior_std is not None:
            a_rows.append(prior.a / prior_std)
            b_rows.append(prior.b / prior_std)
        return PhysicalProblem(np.vstack(a_rows), np.concatenate(b_rows), data.r.shape[0], data.constant,
                               self.n_links, self.n_rotor, self.non_negative, prior.pseudo)


def build_problem(regrouping: np.ndarray, n_links: int, rotor_inertia: bool, w: np.ndarray, y: np.ndarray,
                  row_weights: np.ndarray, parameter_names: list[str], rigid_count: int,
                  prior_standard: np.ndarray, prior_rotor: np.ndarray | None,
                  settings: PhysicalSettings) -> PhysicalProblem:
    """Reduce the weighted system G·W·[χ_b; f] ≈ G·y and map χ_b = K·[π; Ia] (module docstring).

    Args:
        regrouping: K (rigid_count × (10n [+ n])). w, y: the identification's equations (base columns, then
        friction columns). row_weights: G. prior_standard: π̄ (10n). prior_rotor: Ia prior (n) or None.
        ``settings.prior_relative_std`` must be a number here (the cross-validated choice is made by
        :func:`identify_physical`).
    """
    layout = PhysicalLayout.of(regrouping, n_links, rotor_inertia, parameter_names, rigid_count)
    prior = PriorRows.of(n_links, layout.to_base.shape[1], prior_standard, prior_rotor if rotor_inertia else None)
    return layout.problem(ReducedRows.of(w, y, row_weights), prior,
                          settings.prior_relative_std if settings.prior else None)


# ------------------------------------------------------------------------------ the prior's weight
def held_out_scores(layout: PhysicalLayout, folds: list[ReducedRows], prior: PriorRows,
                    grid=PRIOR_STD_GRID) -> np.ndarray:
    """(len(grid), len(folds)): weighted χ² of fold k predicted by the MAP estimate of the other folds at s.

    The MAP estimate is the Gaussian problem's (a linear least squares, without the constraints: module
    docstring, "Rule").
    """
    trained = [ReducedRows.stack([f for j, f in enumerate(folds) if j != k]) for k in range(len(folds))]
    scores = np.zeros((len(grid), len(folds)))
    for k, held_out in enumerate(folds):
        for a, s in enumerate(grid):
            problem = layout.problem(trained[k], prior, s)
            x = np.linalg.lstsq(problem.a, problem.b, rcond=None)[0]
            scores[a, k] = held_out.cost(layout.to_base @ x)
    return scores


def weakest_indistinguishable(scores: np.ndarray) -> tuple[int, int, np.ndarray, np.ndarray]:
    """The rule's choice from fold scores (rows: grid in increasing s; columns: folds).

    Returns (index chosen, index of the least total, per grid value the mean excess of its fold scores over
    the least total's fold scores, and that mean's standard error). Chosen: from the least total toward
    larger s, the last index before the first whose mean excess exceeds one standard error (sample standard
    deviation of the K paired differences / √K). The walk stops there: a weaker prior beyond a distinguishably
    worse one is not taken because its folds scatter more.
    """
    scores = np.asarray(scores, dtype=float)
    best = int(np.argmin(scores.sum(axis=1)))
    excess = scores - scores[best]
    mean = excess.mean(axis=1)
    error = excess.std(axis=1, ddof=1) / np.sqrt(scores.shape[1])
    chosen = best
    while chosen + 1 < len(scores) and mean[chosen + 1] <= error[chosen + 1]:
        chosen += 1
    return chosen, best, mean, error


def cross_validated_prior_std(layout: PhysicalLayout, folds: list[ReducedRows], prior: PriorRows,
                              grid=PRIOR_STD_GRID) -> tuple[float, dict]:
    """s of ``grid`` by the module docstring's "Rule"; (s, the numbers behind it for the result)."""
    scores = held_out_scores(layout, folds, prior, grid)
    chosen, best, mean, error = weakest_indistinguishable(scores)
    return float(grid[chosen]), {'held_out_weighted_chi2': scores.sum(axis=1).tolist(),
                                 'least_chi2_relative_std': float(grid[best]),
                                 'excess_over_least_per_fold': mean.tolist(),
                                 'excess_standard_error': error.tolist()}


def row_folds(w: np.ndarray, y: np.ndarray, row_weights: np.ndarray, count: int = CROSS_VALIDATION_FOLDS,
              blocks: int = CROSS_VALIDATION_BLOCKS) -> list[ReducedRows]:
    """The weighted rows cut into ``blocks`` contiguous blocks (rows are sample-major: stretches of the time
    line), block b in fold b mod ``count``: every fold's complement spans the whole record."""
    parts = np.array_split(np.arange(len(y)), blocks)
    return [ReducedRows.of(w[rows], y[rows], row_weights[rows])
            for rows in (np.concatenate(parts[k::count]) for k in range(count))]


# ------------------------------------------------------------------------------ solvers
class ConvexProgram:
    """min ‖A·x − b‖² s.t. J_i(π_i) ⪰ ε·J̄_i, x[bounded] ≥ 0, compiled once by cvxpy, re-solved for any A, b.

    The data enter as parameters of ‖P·z − c‖² with x = scale·z: P = R/√floor and c = R·x̂/(scale·√floor),
    R the triangular factor of A·diag(scale) and x̂ an unconstrained optimum, since
    ‖A·x − b‖² = ‖R·(z − x̂/scale)‖² + ‖A·x̂ − b‖². The solver so sees only the excess over the unconstrained
    cost in units of that cost (its tolerances are relative, and the raw cost is ~3e-8 of ‖b‖² with the prior,
    1e-9 or less without: module docstring, "Solver"). ``scale`` (every unknown of order one)
    comes from the first problem and stays: the constraints do not change between solves.
    """

    def __init__(self, problem: PhysicalProblem, solver: str = 'clarabel') -> None:
        import cvxpy as cp

        count = problem.a.shape[1]
        norms = np.linalg.norm(problem.a, axis=0)
        self.scale = 1.0 / np.where(norms > 0, norms, 1.0)
        self.solver = solver
        self.matrix = cp.Parameter((count, count))
        self.target = cp.Parameter(count)
        self.z = cp.Variable(count)
        x = cp.multiply(self.scale, self.z)
        constraints = []
        for i, j_bar in enumerate(problem.prior_pseudo):
            size = np.trace(j_bar)
            j = cp.reshape(PSEUDO_MAP @ x[10 * i:10 * i + 10], (4, 4), order='C') / size
            constraints.append((j + j.T) / 2 - STRICT_MARGIN * j_bar / size >> 0)
        if problem.non_negative.size:
            constraints.append(self.z[problem.non_negative] >= 0)
        self.program = cp.Problem(cp.Minimize(cp.sum_squares(self.matrix @ self.z - self.target)), constraints)

    def solve(self, problem: PhysicalProblem) -> np.ndarray:
        """x of ``problem`` (same unknowns and constraints as the compiled one)."""
        import cvxpy as cp

        count = problem.a.shape[1]
        unconstrained = np.linalg.lstsq(problem.a, problem.b, rcond=None)[0]
        floor = max(problem.objective(unconstrained), 1e-12 * float(problem.b @ problem.b), 1e-300)
        r = np.zeros((count, count))
        factor = scipy.linalg.qr(problem.a * self.scale, mode='r', check_finite=False)[0][:count]
        r[:factor.shape[0]] = factor
        self.matrix.value = r / np.sqrt(floor)
        self.target.value = r @ (unconstrained / self.scale) / np.sqrt(floor)
        try:
            with warnings.catch_warnings():  # an inaccurate solution is reported with the result instead
                warnings.filterwarnings('ignore', message='Solution may be inaccurate', category=UserWarning)
                self.program.solve(solver=self.solver.upper())
        except cp.error.SolverError as error:
            raise InputError(f'the physical solve failed ({self.solver}): {error}') from None
        if self.program.status not in ('optimal', 'optimal_inaccurate') or self.z.value is None:
            raise InputError(f'the physical solve did not converge ({self.solver}: {self.program.status})')
        self.status = self.program.status
        return self.scale * np.asarray(self.z.value)


def _cholesky_to_parameters(theta: np.ndarray, links: int, floor: list[np.ndarray]) -> np.ndarray:
    phis = []
    upper = np.triu_indices(4)
    for i in range(links):
        t = theta[10 * i:10 * i + 10]
        u = np.zeros((4, 4))
        u[upper] = t
        u[np.diag_indices(4)] = np.exp(t[[0, 4, 7, 9]])
        phis.append(parameters_of_pseudo_inertia(u @ u.T + floor[i]))
    return np.concatenate(phis)


def _solve_log_cholesky(problem: PhysicalProblem) -> np.ndarray:
    links = problem.n_links
    floor = [STRICT_MARGIN * j for j in problem.prior_pseudo]
    upper = np.triu_indices(4)
    theta0 = []
    for j_bar, f in zip(problem.prior_pseudo, floor, strict=True):
        # J − floor = U·Uᵀ with U upper triangular: the flipped Cholesky factor.
        flip = np.eye(4)[::-1]
        lower = np.linalg.cholesky(flip @ (j_bar - f) @ flip)
        u = flip @ lower @ flip
        t = u[upper].copy()
        t[[0, 4, 7, 9]] = np.log(np.diag(u))
        theta0.append(t)
    rest = problem.a.shape[1] - 10 * links
    start = np.concatenate(theta0 + [np.zeros(rest)])
    low = np.full(start.size, -np.inf)
    low[problem.non_negative] = 0.0  # only Ia and friction are bounded (indices past the links)
    start[problem.non_negative] = 0.0

    def residual(theta):
        x = np.concatenate([_cholesky_to_parameters(theta, links, floor), theta[10 * links:]])
        return problem.a @ x - problem.b

    import scipy.optimize  # here: a fifth of a second that identifications without this solver skip

    solution = scipy.optimize.least_squares(residual, start, bounds=(low, np.full(start.size, np.inf)),
                                            method='trf', x_scale='jac', max_nfev=2000)
    theta = solution.x
    return np.concatenate([_cholesky_to_parameters(theta, links, floor), theta[10 * links:]])


def solve(problem: PhysicalProblem, solver: str = 'clarabel') -> tuple[np.ndarray, str]:
    """(x = [π | Ia | friction] minimizing the problem (module docstring), the solver's status: 'optimal' or
    'optimal_inaccurate' (cvxpy's words; the log-Cholesky form reports scipy's success as 'optimal')."""
    if solver == 'log_cholesky':
        return _solve_log_cholesky(problem), 'optimal'
    program = ConvexProgram(problem, solver)
    return program.solve(problem), program.status


def project_links(x: np.ndarray, problem: PhysicalProblem) -> np.ndarray:
    """x with every pseudo-inertia raised to at least ε·J̄ and bounds enforced exactly (solver round-off)."""
    x = x.copy()
    for i, j_bar in enumerate(problem.prior_pseudo):
        j = pseudo_inertia(x[10 * i:10 * i + 10])
        floor = STRICT_MARGIN * j_bar
        root = np.linalg.cholesky(floor)
        inverse = np.linalg.inv(root)
        values, vectors = np.linalg.eigh(inverse @ (j - floor) @ inverse.T)
        if values.min() < 0:
            j = floor + root @ vectors @ np.diag(np.maximum(values, 0.0)) @ vectors.T @ root.T
            x[10 * i:10 * i + 10] = parameters_of_pseudo_inertia(j)
    x[problem.non_negative] = np.maximum(x[problem.non_negative], 0.0)
    return x


# ------------------------------------------------------------------------------ links, checks
def link_names(robot) -> list[str]:
    """The body (URDF link) each joint moves: the first body frame attached to the joint."""
    import pinocchio as pin

    model = robot.pinocchio_model
    names = []
    for j in range(1, model.njoints):
        frames = [f.name for f in model.frames if f.parentJoint == j and f.type == pin.FrameType.BODY]
        names.append(frames[0] if frames else model.names[j])
    return names


def mass_matrices(result, robot, q: np.ndarray) -> np.ndarray:
    """M(q) (N, n, n) [kg·m²] of a result's base parameters, rotor inertias on the diagonal where identified.

    M(q)·e_k = τ(q, 0, e_k) − τ(q, 0, 0): exact for any base parameter set, consistent or not. A physical
    result's standard parameters give the same torques (K·π is its base parameters), so its M(q) comes from
    them directly, without rebuilding the base model.
    """
    standard = result.standard_parameters()
    if standard is not None:
        model = robot.with_parameters(standard)
        torque = model.inverse_dynamics
        rotor = result.physical_section.get('rotor_inertia') or {}
        added = np.array([rotor.get(joint, 0.0) for joint in robot.joint_names])
    else:
        from dynid.identify.torque import RigidBodyTorque

        torque = RigidBodyTorque(result, robot)
        added = np.array([result.value(f'Ia_{j + 1}') if f'Ia_{j + 1}' in torque.left_out else 0.0
                          for j in range(robot.n)])
    count, n = q.shape
    zeros = np.zeros_like(q)
    gravity = torque(q, zeros, zeros)
    columns = []
    for k in range(n):
        unit = zeros.copy()
        unit[:, k] = 1.0
        columns.append(torque(q, zeros, unit) - gravity)
    matrices = np.stack(columns, axis=2) + np.diag(added)
    return 0.5 * (matrices + matrices.transpose(0, 2, 1))


def mass_matrix_check(result, robot, states: int = 10000, seed: int = 5) -> dict:
    """Share [%] of ``states`` random configurations where M(q) is positive definite, and the least eigenvalue."""
    q = robot.random_states(states, seed=seed)[0]
    smallest = np.linalg.eigvalsh(mass_matrices(result, robot, q))[:, 0]
    return {'states': int(states), 'positive_definite_percent': 100.0 * float(np.mean(smallest > 0)),
            'min_eigenvalue': float(smallest.min())}


def _data_and_prior_std(layout, prior, w, y, weights, std, use_prior, progress):
    """The reduced data rows and s: s given, or cross-validated on folds whose factors also give the rows."""
    if not use_prior or std is not None:
        return ReducedRows.of(w, y, weights), std, None
    start = time.perf_counter()
    folds = row_folds(w, y, weights)
    data = ReducedRows.stack(folds)  # the R of all rows, from the folds' small factors (one QR, not two)
    std, numbers = cross_validated_prior_std(layout, folds, prior)
    progress(f'prior weight: s = {std:g} by {CROSS_VALIDATION_FOLDS}-fold cross-validation '
             f'(least held-out chi2 at s = {numbers["least_chi2_relative_std"]:g})')
    return data, std, {'folds': CROSS_VALIDATION_FOLDS, 'blocks': CROSS_VALIDATION_BLOCKS, 'grid': list(PRIOR_STD_GRID),
                       **numbers, 'seconds': time.perf_counter() - start}


# ------------------------------------------------------------------------------ the identification step
def identify_physical(problem, estimate, w: np.ndarray, y: np.ndarray, settings: PhysicalSettings,
                      progress=lambda text: None) -> tuple[np.ndarray, dict]:
    """The physical solution of an :class:`~dynid.identify.model.IdentificationProblem` already solved linearly.

    Args:
        problem: the identification problem. estimate: its unconstrained solution (weights, χ²).
        w, y: its equations. settings: options.

    Returns:
        (values in ``problem.parameter_names()`` order: the base parameters K·[π; Ia] and the friction,
        the ``physical`` section of the result as plain numbers).
    """
    settings = settings.validated()
    settings.check_model(problem.spec)
    if problem.payload_blocks:
        raise InputError('physical identification does not take recordings with only a known payload mass; '
                         'give the payload fully (--payload-com) or leave it out')
    robot, n = problem.robot, problem.robot.n
    names = problem.parameter_names()
    rigid_count = len(problem.rigid_names)
    rotor = problem.identify_rotor_inertia
    prior_rotor = None
    if rotor:
        prior_rotor = problem.drives.rotor_inertia if problem.drives is not None else np.zeros(n)
    weights = estimate.row_weights if estimate.row_weights.size == len(y) else np.ones(len(y))
    layout = PhysicalLayout.of(problem.base.regrouping, n, rotor, names, rigid_count)
    prior = PriorRows.of(n, layout.to_base.shape[1], robot.standard_parameters, prior_rotor)
    std = settings.prior_relative_std if settings.prior else None
    cross_validation = None
    with one_blas_thread():  # tall QRs: as in dynid.identify.solvers
        data, std, cross_validation = _data_and_prior_std(layout, prior, w, y, weights, std, settings.prior,
                                                          progress)
    reduced = layout.problem(data, prior, std)
    progress(f'physical solve ({settings.solver}): {reduced.a.shape[1]} unknowns, {n} pseudo-inertia constraints')
    start = time.perf_counter()
    x, status = solve(reduced, settings.solver)
    x = project_links(x, reduced)
    seconds = time.perf_counter() - start
    standard_count = 10 * n + reduced.n_rotor
    values = np.concatenate([problem.base.from_standard(x[:standard_count]), x[standard_count:]])
    residual = y - w @ values
    physical_cost = float(np.sum((residual * weights) ** 2))
    free_cost = float(np.sum((estimate.residual * weights) ** 2))
    links = link_names(robot)
    section = {
        'solver': settings.solver, 'solver_status': status, 'solve_s': seconds, 'objective': reduced.objective(x),
        'constraint': f'pseudo-inertia J_i >= {STRICT_MARGIN:g}*J_prior_i (Wensing, Kim and Slotine 2017); '
                      f'Ia, Fc, Fv >= 0',
        'prior': {'used': settings.prior, 'source': robot.source or robot.name, 'relative_std': std,
                  'rule': 'MAP: weighted residual chi2 + sum_i |J_prior^-1/2 (J_i - J_prior) J_prior^-1/2|_F^2 / s^2; '
                          + ('s given' if cross_validation is None else
                             'from the least held-out weighted chi2 toward larger s, the last s of the grid before '
                             'the first whose mean excess per fold exceeds one standard error of the paired fold '
                             'differences (ties go to the data)'),
                  'cross_validation': cross_validation},
        'consistency': {'weighted_chi2_unconstrained': free_cost, 'weighted_chi2_physical': physical_cost,
                        'cost_percent': 100.0 * (physical_cost / free_cost - 1.0) if free_cost > 0 else 0.0},
        'links': [{'joint': joint, 'link': link, 'parameters': x[10 * i:10 * i + 10].tolist(),
                   'prior': robot.standard_parameters[10 * i:10 * i + 10].tolist()}
                  for i, (joint, link) in enumerate(zip(robot.joint_names, links, strict=True))],
        'rotor_inertia': None if not rotor else dict(zip(robot.joint_names, x[10 * n:standard_count].tolist(),
                                                         strict=True)),
    }
    return values, section
