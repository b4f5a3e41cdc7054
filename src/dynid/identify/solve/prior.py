"""The robot file as a prior: its link inertias pull the identification toward them, with a weight from the data.

The unknowns are the 10·n standard parameters π (:mod:`dynid.model.inertial` order, each link about its joint
frame), the rotor inertias Ia where the problem identifies them and the friction parameters, x = [π | Ia | f];
the base parameters are χ_b = K·[π; Ia]. The maximum a posteriori (MAP) estimate minimizes

    ‖G·(y − W_b·K·[π; Ia] − W_f·f)‖²  +  Σ_i ‖J̄_i^(−1/2)·(J_i − J̄_i)·J̄_i^(−1/2)‖²_F / s²  (+ Ia term)

- **G** the weights of the linear solution (1/σ̂_j per joint for WLS), so that the data term is a χ² with
  unit variance per row; **J_i** the 4×4 pseudo-inertia of link i and **J̄_i** the robot file's. The distance
  is the second-order expansion of the log-det divergence between pseudo-inertias (Lee and Park 2019,
  "Geometric robot dynamic identification"): dimensionless and frame-independent, so one relative standard
  deviation s serves every link. Rotor inertias get the same relative prior on the drive data's. Friction has
  none.
- **Impossible links** (:func:`dynid.identify.solve.file_links.robot_file_links`) are left out of the prior.
- **The weight s** (:func:`cross_validated_prior_std`): cross-validation over contiguous stretches of the
  recording. The rows (sample-major, so a run of rows is a stretch of time) are cut into
  :data:`CROSS_VALIDATION_BLOCKS` blocks, block b in fold b mod :data:`CROSS_VALIDATION_FOLDS` (blocks, not
  rows: neighbouring rows share the filters' memory and would leak between folds; interleaved, not contiguous:
  folds of contiguous quarters left joints of the public logs worse held out, benchmarks/README.md, "The figures
  behind the defaults").
  Every fold of the identification holds out the blocks of :func:`fold_members`. For every s of
  :data:`PRIOR_STD_GRID` each fold is predicted by the MAP estimate of the others and scored twice: by its
  weighted χ² (the likelihood the estimator maximizes, which the joints with large torques dominate) and by
  Σ_j ‖y_j − ŷ_j‖²/‖y_j‖² (every joint counts as its fit does for the user). s has the least sum over the
  folds of the two, each divided by its own least total. Either alone was worse on the twin
  (``benchmarks/bench_generalize.py``, poorly exciting runs of 8–10 s, robot files 20–40 % and far off,
  held out on other trajectories): the χ² alone chose priors too weak for other motions and left joints
  worse than the robot file's own model, the per-joint score alone chose priors too strong for a
  well-exciting run (its own motion predicted worse than without a prior).
- **The robot file's own model** (:func:`robot_file_values`): the links as the file has them, the rotor
  inertias and the friction fitted to the same rows: the strongest prior, which ``dynid validate`` predicts
  beside the identified model.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dynid.friction.laws import friction_law
from dynid.identify.solve.file_links import RobotFileLink
from dynid.identify.solve.rows import RowGroups, per_joint_weights
from dynid.model.inertial import PSEUDO_INERTIA_MAP

#: Relative prior standard deviations s tried by the cross-validation: 0.05 … 100 in steps of about √2 to 2.5.
PRIOR_STD_GRID = (0.05, 0.07, 0.1, 0.15, 0.2, 0.3, 0.5, 0.7, 1.0, 1.5, 2.0, 3.0, 5.0, 7.0, 10.0, 20.0, 50.0, 100.0)
#: Folds the cross-validation holds out in turn, each CROSS_VALIDATION_BLOCKS / CROSS_VALIDATION_FOLDS
#: contiguous blocks of the rows, spread over the record (module docstring).
CROSS_VALIDATION_FOLDS = 4
CROSS_VALIDATION_BLOCKS = 8
#: Rows of one fold below which a joint is not scored (too few to say anything).
_MIN_FOLD_ROWS = 10


def _inverse_sqrt(j: np.ndarray) -> np.ndarray:
    values, vectors = np.linalg.eigh(j)
    return vectors @ np.diag(values ** -0.5) @ vectors.T


# ------------------------------------------------------------------------------ rows
@dataclass
class ReducedRows:
    """Weighted rows G·W·v ≈ G·y kept as ‖G·(y − W·v)‖² = ‖projected − r·v‖² + constant (r: p×p); ``rows``:
    how many equations they hold."""

    r: np.ndarray
    projected: np.ndarray
    constant: float
    rows: int

    @classmethod
    def of(cls, w: np.ndarray, y: np.ndarray, row_weights: np.ndarray) -> ReducedRows:
        """One QR of [G·W | G·y] (R only: the last column is Qᵀ·G·y, the corner the part nothing fits)."""
        import scipy.linalg  # in the function (here and below): a fifth of a second that importing dynid skips
        count = w.shape[1]
        r = scipy.linalg.qr(np.column_stack([w * row_weights[:, None], y * row_weights]), mode='r',
                            check_finite=False)[0]
        full = np.zeros((count + 1, count + 1))
        full[:r.shape[0]] = r[:count + 1]
        return cls(full[:count, :count], full[:count, count], float(full[count, count] ** 2), len(y))

    @classmethod
    def of_factor(cls, factor: np.ndarray, rows: int) -> ReducedRows:
        """The rows whose [G·W | G·y] has the R factor ``factor`` ((p + 1) square:
        :class:`dynid.identify.solve.rows.RowGroups`)."""
        count = factor.shape[1] - 1
        return cls(factor[:count, :count], factor[:count, count], float(factor[count, count] ** 2), rows)

    @classmethod
    def stack(cls, parts: list[ReducedRows]) -> ReducedRows:
        """The rows of several parts together (their R factors stacked and reduced again)."""
        w = np.vstack([part.r for part in parts])
        y = np.concatenate([part.projected for part in parts])
        joined = cls.of(w, y, np.ones(len(y)))
        joined.constant += sum(part.constant for part in parts)
        joined.rows = sum(part.rows for part in parts)
        return joined

    def cost(self, v: np.ndarray) -> float:
        """‖G·(y − W·v)‖² of these rows."""
        e = self.projected - self.r @ v
        return float(e @ e + self.constant)

    @property
    def residual_std(self) -> float:
        """σ̂: the root of their least-squares residual ‖G·(y − W·v̂)‖² (the corner of R) per degree of freedom (rows
        less unknowns); one row's σ: N·m for unweighted rows, about 1 for WLS's."""
        return float(np.sqrt(self.constant / max(1, self.rows - self.r.shape[1])))

    def scaled(self, factor: float) -> ReducedRows:
        """These rows times ``factor`` (their cost times its square)."""
        return ReducedRows(self.r * factor, self.projected * factor, self.constant * factor ** 2, self.rows)


#: The conflict between a prior row and the data (:meth:`PhysicalLayout.released`) beyond which the data release it:
#: 3, a normal deviate's two-sided 0.27 % (about one row in ten robots of 36 base parameters when prior and data
#: agree).
PRIOR_RELEASE_Z = 3.0
PRIOR_RELEASE_ITERATIONS = 30


@dataclass
class PriorRows:
    """The prior's rows at s = 1 (module docstring): ‖a·x − b‖² / s² is the prior's cost. Links left out
    (impossible in the robot file) have no rows."""

    a: np.ndarray
    b: np.ndarray
    references: list[np.ndarray]  # per link the positive definite pseudo-inertia that scales it
    names: tuple[str, ...] = ()  # what each row holds, where the source pulls on parameters one by one

    def weighted(self, weights: np.ndarray) -> PriorRows:
        """These rows, row i's cost times ``weights[i]`` (its row scaled by √w_i)."""
        root = np.sqrt(weights)
        return PriorRows(self.a * root[:, None], self.b * root, self.references, self.names)

    @classmethod
    def of(cls, links: list[RobotFileLink], unknowns: int, prior_rotor: np.ndarray | None,
           rotor_start: int | None = None, rotor_scale: np.ndarray | None = None) -> PriorRows:
        """``rotor_start``: the index of Ia_1 among the unknowns (default 10·n: no payload parameters between).
        ``prior_rotor``: the rotor inertias' prior values, with the spread ``rotor_scale`` (default their own size;
        the drive data's B for the excess over B, whose prior value is 0: :func:`rotor_prior`). A joint whose
        spread is 0 (no drive data, or a drives file's rotor_inertia 0: not known) has no prior row: its rotor
        inertia is the data's alone (a spread of 0 would pin it at 0, the prior's weight unbounded)."""
        n = len(links)
        rotor_start = 10 * n if rotor_start is None else rotor_start
        a_rows, b_rows = [np.zeros((0, unknowns))], [np.zeros(0)]
        for i, link in enumerate(links):
            if not link.in_prior:
                continue
            root = _inverse_sqrt(link.reference)
            g = np.kron(root, root) @ PSEUDO_INERTIA_MAP  # vec(R·J·R) = (R⊗R)·vec(J)
            rows = np.zeros((16, unknowns))
            rows[:, 10 * i:10 * i + 10] = g
            a_rows.append(rows)
            b_rows.append(g @ link.parameters)
        if prior_rotor is not None:
            rows, b = rotor_rows(unknowns, prior_rotor, rotor_start, rotor_scale)
            a_rows.append(rows)
            b_rows.append(b)
        return cls(np.vstack(a_rows), np.concatenate(b_rows), [link.reference for link in links])


def rotor_rows(unknowns: int, prior_rotor: np.ndarray, rotor_start: int,
               rotor_scale: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(a, b) the rotor inertias' prior rows at s = 1 (:meth:`PriorRows.of`): one per joint whose spread is not 0."""
    spread = np.abs(prior_rotor if rotor_scale is None else rotor_scale)
    known = np.flatnonzero(spread > 0)
    rows = np.zeros((known.size, unknowns))
    rows[np.arange(known.size), rotor_start + known] = 1.0 / spread[known]
    return rows, np.asarray(prior_rotor)[known] / spread[known]


def rotor_prior(problem) -> tuple[np.ndarray | None, np.ndarray | None]:
    """(prior values, spread) of a problem's rotor inertia columns, or (None, None) where it identifies none: the
    drive data's B (0 without drive data); where B·θ̈ was subtracted before (rotor compensation), the columns are
    the excess over B, whose prior value is 0 with the spread B."""
    if not problem.identify_rotor_inertia:
        return None, None
    nominal = problem.drives.rotor_inertia if problem.drives is not None else np.zeros(problem.robot.n)
    if problem.compensate_rotor:
        return np.zeros(problem.robot.n), nominal
    return nominal, None


@dataclass
class PhysicalProblem:
    """The reduced least squares ‖A·x − b‖² over x = [π (10n) | Ia (n or 0) | friction] (module docstring).

    ``a``, ``b``: data rows (R factor of the weighted base system times the regrouping) stacked over the
    prior rows; ``data_rows``: how many of them are data; ``residual_constant``: the part of the weighted
    sum of squares no parameter can fit (‖Gy‖² − ‖Qᵀ·G·y‖²); ``equations``: how many equations the data
    rows hold; ``references``: the pseudo-inertias J̄_i (the floor ε·J̄_i of the consistency constraint).
    """

    a: np.ndarray
    b: np.ndarray
    data_rows: int
    residual_constant: float
    equations: int
    n_links: int
    n_rotor: int
    non_negative: np.ndarray  # indices of x bounded below by 0 (Ia, Fc, Fv)
    references: list[np.ndarray]

    def objective(self, x: np.ndarray) -> float:
        """‖A·x − b‖²: the minimized cost (data and prior) up to the constant."""
        r = self.a @ x - self.b
        return float(r @ r)

    def data_cost(self, x: np.ndarray) -> float:
        """Weighted χ² of the training equations at x."""
        r = self.a[:self.data_rows] @ x - self.b[:self.data_rows]
        return float(r @ r + self.residual_constant)

    def map_estimate(self) -> np.ndarray:
        """The unconstrained minimizer (the MAP estimate of the Gaussian problem; minimum norm where nothing
        determines a direction; LAPACK's complete orthogonal factorization, several times quicker than the SVD on
        these small systems, which the model choice solves hundreds of)."""
        import scipy.linalg
        return scipy.linalg.lstsq(self.a, self.b, lapack_driver='gelsy', check_finite=False)[0]


#: Friction symbols bounded below by zero in a physically consistent solution: the Coulomb and viscous coefficients of
#: every law (Li et al. 2024's fc, fv of eq. (3) with its exponent fixed), the load terms' (friction growing with the
#: output torque, as the model choice tries it) and a coupled joint's own (:mod:`dynid.identify.equations.joint_side`),
#: so that the friction dissipates. Where the viscous term is a power |ω|^α (``coulomb_floor`` of
#: :meth:`PhysicalLayout.of`) in Li's form as written, the Coulomb bound is on the friction at the slowest speed the
#: equations keep, fc + fv·ω_s^α ≥ 0: with α of 0.2 the two columns are nearly one and split the low-speed level
#: between them (the power term written from v_s, :mod:`dynid.friction.power_law`, is 0 there: fc ≥ 0 is that bound).
#: The offset, the temperature terms and the Stribeck excess (whose sum with Fc is the static level) are not bounded.
#: The law's own bounded symbols are its ``non_negative`` (:class:`dynid.friction.law.FrictionLaw`); a joint's own
#: friction (Fcq, Fvq) is bounded with every law.
JOINT_SIDE_NON_NEGATIVE = ('Fcq', 'Fvq')


def non_negative_friction(law: str) -> tuple[str, ...]:
    """The friction symbols physical consistency keeps ≥ 0 with the law ``law`` (the comment above)."""
    return friction_law(law).non_negative + JOINT_SIDE_NON_NEGATIVE


@dataclass
class PhysicalLayout:
    """How x = [π | payload | Ia | friction] maps to the identification's free columns, and what is bounded.

    ``payload``: the 9 unknown parameters of each payload block (recordings with only a known mass: no prior,
    no constraint); parameters held at a value (:mod:`dynid.identify.equations.held`) have no column: their rows of the
    map are dropped (a held rigid-body combination is then set by the prior alone, and reported at its held
    value), a held friction parameter has no unknown either."""

    to_base: np.ndarray  # (free columns of W) × (unknowns): χ_b = K·[π; payload; Ia], friction itself
    n_links: int
    n_rotor: int
    non_negative: np.ndarray
    n_payload: int = 0

    @property
    def rotor_start(self) -> int:
        return 10 * self.n_links + self.n_payload

    @property
    def standard_count(self) -> int:
        return self.rotor_start + self.n_rotor

    @classmethod
    def of(cls, regrouping: np.ndarray, n_links: int, rotor_inertia: bool, parameter_names: list[str],
           rigid_count: int, held: np.ndarray | None = None, payload_count: int = 0,
           rotor_excess: bool = False, coulomb_floor: np.ndarray | None = None,
           non_negative: tuple[str, ...] = JOINT_SIDE_NON_NEGATIVE) -> PhysicalLayout:
        """``rotor_excess``: the rotor columns are the excess over the drive data's B (rotor compensation): not
        bounded at 0. ``coulomb_floor``: per joint ω_s^α_j of a law whose viscous term is a power (Li's comprehensive
        law): the unknown bounded in place of fc_j is fc_j + ω_s^α_j·fv_j, the friction at the slowest speed ω_s the
        equations keep. ``non_negative``: the friction symbols bounded at 0 (:func:`non_negative_friction`)."""
        import scipy.linalg
        standard_count = regrouping.shape[1]
        names = parameter_names[rigid_count:]
        to_base = scipy.linalg.block_diag(regrouping, np.eye(len(names)))
        if held is not None and held.any():
            free_friction = ~held[rigid_count:]
            to_base = to_base[~held][:, np.concatenate([np.ones(standard_count, dtype=bool), free_friction])]
            names = [name for name, free in zip(names, free_friction, strict=True) if free]
        bounded = [standard_count + k for k, name in enumerate(names)
                   if name.rpartition('_')[0] in non_negative]
        if coulomb_floor is not None:  # fc_j = z_j − ω_s^α_j·fv_j with z_j ≥ 0 (values = to_base @ unknowns)
            first = to_base.shape[0] - len(names)
            for k, name in enumerate(names):
                symbol, _, joint = name.rpartition('_')
                if symbol == 'fc' and f'fv_{joint}' in names:
                    to_base[first + k, standard_count + names.index(f'fv_{joint}')] = -coulomb_floor[int(joint) - 1]
        rotor_start = 10 * n_links + payload_count
        if rotor_inertia and not rotor_excess:
            bounded = list(range(rotor_start, standard_count)) + bounded
        return cls(to_base, n_links, standard_count - rotor_start, np.array(bounded, dtype=int), payload_count)

    def released(self, data: ReducedRows, prior: PriorRows, prior_std: float) -> tuple[PriorRows, np.ndarray]:
        """The prior with the rows the data contradict released: each prior row's conflict with the data,
        t_i = r_i/√(1 − h_ii) (r_i = √w_i·(a_i·x − b_i)/s at the MAP estimate x, h_ii the row's leverage in the
        stacked data and prior rows: for one parameter, (d − μ)/√(σ_d² + σ_p²), the data's estimate d against the
        prior N(μ, σ_p²), however tight either is), and Huber 1964's weight w_i = min(1, z/|t_i|) at z =
        :data:`PRIOR_RELEASE_Z`, iterated to a fixed point: a parameter the data determine and contradict follows
        them more, one they leave open stays at the prior. The conflicts are counted in the rows as posed: against
        unweighted rows in N·m, |t| = z is z/σ̂ of the row's own σ (a conflict judged in a population's terms,
        :func:`dynid.identify.solve.flange_load.population`, was measured and not kept: benchmarks/README.md, the fleet
        prior). Returns the rows and each row's weight (1: held as given)."""
        weights = np.ones(len(prior.b))
        for _ in range(PRIOR_RELEASE_ITERATIONS):
            problem = self.problem(data, prior.weighted(weights), prior_std)
            x = problem.map_estimate()
            u, singular, _ = np.linalg.svd(problem.a, full_matrices=False)
            kept = singular > singular[0] * max(problem.a.shape) * np.finfo(float).eps
            leverage = np.sum(u[problem.data_rows:, kept] ** 2, axis=1)
            residual = np.sqrt(weights) * (prior.a @ x - prior.b) / prior_std
            free = np.maximum(1.0 - leverage, 0.0)
            conflict = np.where(free > 1e-12, np.abs(residual) / np.sqrt(np.where(free > 1e-12, free, 1.0)), 0.0)
            new = np.minimum(1.0, PRIOR_RELEASE_Z / np.maximum(conflict, 1e-300))
            done = np.max(np.abs(new - weights)) <= 1e-4
            weights = new
            if done:
                break
        return prior.weighted(weights), weights

    def problem(self, data: ReducedRows, prior: PriorRows, prior_std: float | None) -> PhysicalProblem:
        """The problem of these data rows with the prior at relative σ ``prior_std`` (None: no prior)."""
        a_rows, b_rows = [data.r @ self.to_base], [data.projected]
        if prior_std is not None:
            a_rows.append(prior.a / prior_std)
            b_rows.append(prior.b / prior_std)
        return PhysicalProblem(np.vstack(a_rows), np.concatenate(b_rows), data.r.shape[0], data.constant, data.rows,
                               self.n_links, self.n_rotor, self.non_negative, prior.references)


# ------------------------------------------------------------------------------ the weight
@dataclass
class Fold:
    """One fold of the cross-validation: the weighted rows of the other folds (``trained_on``), this fold's
    weighted rows (``held_out``), and its unweighted rows per joint with their measured energy ‖y_j‖² (None:
    too few rows to score)."""

    trained_on: ReducedRows
    held_out: ReducedRows
    joints: list[ReducedRows | None]
    energy: np.ndarray

    def scores(self, values: np.ndarray) -> tuple[float, float]:
        """(weighted χ² of the fold, Σ_j ‖y_j − W_j·v‖² / ‖y_j‖² over the joints scored) at ``values``."""
        return self.held_out.cost(values), sum(rows.cost(values) / energy for rows, energy
                                               in zip(self.joints, self.energy, strict=True) if rows is not None)


def fold_members(count: int = CROSS_VALIDATION_FOLDS, blocks: int = CROSS_VALIDATION_BLOCKS) -> list[list[int]]:
    """The blocks each fold holds out: block b in fold b mod ``count`` (module docstring)."""
    return [list(range(k, blocks, count)) for k in range(count)]


def time_folds(w: np.ndarray, y: np.ndarray, row_weights: np.ndarray, joints: np.ndarray,
               count: int = CROSS_VALIDATION_FOLDS, blocks: int = CROSS_VALIDATION_BLOCKS,
               groups: RowGroups | None = None) -> tuple[list[Fold], ReducedRows]:
    """The rows cut into ``blocks`` contiguous blocks, the folds those of :func:`fold_members` (module docstring);
    also the reduced rows of all of them. From the rows reduced per block and joint once (``groups``, default reduced
    here: :class:`dynid.identify.solve.rows.RowGroups`): with one weight per joint (WLS, OLS) no fold factors the rows
    again; with IRLS's row weights the folds' weighted rows are reduced from the rows."""
    groups = RowGroups.of(w, y, joints, blocks) if groups is None else groups
    n = groups.joints
    of_fold = fold_members(count, blocks)
    weights = per_joint_weights(row_weights, joints, n)
    if weights is not None:
        weighted = [ReducedRows.of_factor(groups.stacked(weights, blocks=members), groups.count(members))
                    for members in of_fold]
    else:
        parts = np.array_split(np.arange(len(y)), blocks)
        weighted = [ReducedRows.of(w[rows], y[rows], row_weights[rows])
                    for rows in (np.concatenate([parts[b] for b in members]) for members in of_fold)]
    folds = []
    for k, members in enumerate(of_fold):
        per_joint, energy = [], np.ones(n)
        for j in range(n):
            rows, energy_j = groups.count(members, [j]), float(groups.energy[members, j].sum())
            usable = rows >= _MIN_FOLD_ROWS and energy_j > 0
            per_joint.append(ReducedRows.of_factor(groups.stacked(blocks=members, joints=[j]), rows) if usable
                             else None)
            energy[j] = energy_j if usable else 1.0
        trained_on = ReducedRows.stack([f for i, f in enumerate(weighted) if i != k])
        folds.append(Fold(trained_on, weighted[k], per_joint, energy))
    return folds, ReducedRows.stack(weighted)


def held_out_scores(layout: PhysicalLayout, folds: list[Fold], prior: PriorRows,
                    grid=PRIOR_STD_GRID) -> np.ndarray:
    """(len(grid), len(folds), 2): the two scores (:meth:`Fold.scores`) of fold k predicted by the MAP
    estimate of the other folds at s."""
    scores = np.zeros((len(grid), len(folds), 2))
    for k, fold in enumerate(folds):
        for a, s in enumerate(grid):
            scores[a, k] = fold.scores(layout.to_base @ layout.problem(fold.trained_on, prior, s).map_estimate())
    return scores


def combined_scores(scores: np.ndarray) -> np.ndarray:
    """(grid, folds): each of the two scores divided by its least total over the grid, summed (module
    docstring): the weighted χ² speaks for the fit as a whole, the relative one for every joint. A score whose
    least total is 0 or not finite (held-out rows predicted exactly at some s, or none with torque to compare
    with) tells the grid's points apart no more: it is left out instead of dividing by it."""
    least = scores.sum(axis=1).min(axis=0)
    combined = np.zeros(scores.shape[:2])
    for m in np.flatnonzero(np.isfinite(least) & (least > 0)):
        combined += scores[:, :, m] / least[m]
    return combined


def cross_validated_prior_std(layout: PhysicalLayout, folds: list[Fold], prior: PriorRows,
                              grid=PRIOR_STD_GRID) -> tuple[float, dict]:
    """s of ``grid`` with the least combined held-out score (module docstring); (s, the numbers behind it)."""
    scores = held_out_scores(layout, folds, prior, grid)
    combined = combined_scores(scores).sum(axis=1)
    chosen = int(np.argmin(combined))
    return float(grid[chosen]), {'held_out_score': combined.tolist(),
                                 'held_out_weighted_chi2': scores[:, :, 0].sum(axis=1).tolist(),
                                 'held_out_relative_per_joint': scores[:, :, 1].sum(axis=1).tolist(),
                                 'least_chi2_relative_std': float(grid[int(np.argmin(scores[:, :, 0].sum(axis=1)))]),
                                 'least_relative_relative_std': float(
                                     grid[int(np.argmin(scores[:, :, 1].sum(axis=1)))])}


# ------------------------------------------------------------------------------ estimates
def row_variance(problem: PhysicalProblem, x: np.ndarray) -> float:
    """σ̂² of one row of the problem's data at x, the weighted χ² per degree of freedom (≈ 1 with WLS weights, N·m²
    for unweighted rows). The prior's rows weigh as rows of this variance: a prior row at relative σ s holds its
    parameter to σ̂·s·σ_b, the prior's σ in the posterior's terms (:func:`posterior_covariance`)."""
    return problem.data_cost(x) / max(1, problem.equations - problem.a.shape[1])


def posterior_covariance(problem: PhysicalProblem, x: np.ndarray, to_base: np.ndarray) -> np.ndarray:
    """T·σ̂²·(AᵀA)⁻¹·Tᵀ: the covariance of the base parameters (and friction) of the Gaussian problem at its
    minimizer x, σ̂² the weighted χ² per degree of freedom (≈ 1 with WLS weights). A direction neither the data
    nor the prior determine (a link left out of the prior, moving a combination the recording does not excite)
    gives the parameters it reaches an infinite variance (inf on the diagonal), never the pseudo-inverse's 0."""
    _, singular, vt = np.linalg.svd(problem.a, full_matrices=True)
    rank = int(np.count_nonzero(singular > 1e-12 * singular[0]))
    kept = vt[:rank].T / singular[:rank]
    covariance = row_variance(problem, x) * (to_base @ kept) @ (to_base @ kept).T
    reach = np.abs(to_base @ vt[rank:].T)
    if reach.size:
        scale = np.abs(to_base).max(axis=1, keepdims=True)
        undetermined = np.any(reach > 1e-9 * np.maximum(scale, 1e-300), axis=1)
        covariance[undetermined, undetermined] = np.inf
    return covariance


def information_condition_numbers(covariance: np.ndarray) -> tuple[float, float]:
    """(cond, cond with unit-norm columns) of the information a covariance holds: for a least-squares
    covariance σ²·(WᵀW)⁻¹ exactly cond(W) and cond(W·D) (D scaling W's columns to unit norm), so that the
    base parameters with a prior are judged on the scale of the data's own condition number; inf where a
    direction is undetermined (an infinite variance)."""
    if not np.all(np.isfinite(np.diag(covariance))):
        return float('inf'), float('inf')

    def ratio(matrix):
        values = np.linalg.eigvalsh(0.5 * (matrix + matrix.T))
        return float(np.sqrt(values[-1] / values[0])) if values[0] > 0 else float('inf')

    # Through the correlation matrix, not pinv(covariance): parameters of very different units (a squared-load
    # friction coefficient beside link masses) put the covariance's eigenvalues further apart than pinv's cut-off.
    deviation = np.sqrt(np.maximum(np.diag(covariance), 1e-300))
    values, vectors = np.linalg.eigh(covariance / np.outer(deviation, deviation))
    if values[0] <= 0:
        return ratio(covariance), float('inf')
    inverse = (vectors / values) @ vectors.T  # D·I·D with D = diag(σ): the information up to the scales
    scale = 1.0 / np.sqrt(np.diag(inverse))
    return ratio(covariance), ratio(scale[:, None] * inverse * scale[None, :])


def robot_file_values(layout: PhysicalLayout, data: ReducedRows, links: list[RobotFileLink]) -> np.ndarray:
    """x of the robot file's own model: every link as the file has it (impossible ones too: that is the file's
    prediction), the rotor inertias and the friction least-squares fitted to ``data``."""
    standard = np.concatenate([link.parameters for link in links])
    a = data.r @ layout.to_base
    count = standard.size
    rest = np.linalg.lstsq(a[:, count:], data.projected - a[:, :count] @ standard, rcond=None)[0] \
        if a.shape[1] > count else np.zeros(0)
    return np.concatenate([standard, rest])
