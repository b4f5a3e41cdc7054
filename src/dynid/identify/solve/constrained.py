"""The physically consistent optimum: the weighted least squares of :mod:`dynid.identify.solve.physical` under the
constraint that every link is a realizable body (J_i ⪰ ε·J̄_i, Wensing, Kim and Slotine 2017, Theorem 1; rotor inertias
and Coulomb/viscous friction ≥ 0).

Solver. The constrained problem is convex (a least squares with linear matrix inequalities): ``clarabel``
(the Clarabel interior-point solver through its own interface: certificates and a status; a fraction of a
second even on the first solve, where going through cvxpy cost seconds of imports and compilation), ``scs``
(through cvxpy, less accurate) and ``log_cholesky`` (scipy's bounded trust-region least squares on the
log-Cholesky parametrization J = U·Uᵀ, Rucker and Wensing 2022: positive definite by construction but
non-convex). All reduce the tall weighted system to its R factor first, so their cost does not grow with
the recording. A solver that does not report an optimum is run once more with more iterations; if it
still does not, ``always`` refuses the identification and ``auto`` keeps the MAP estimate with a warning:
an inaccurate solution is never kept.
"""

from __future__ import annotations

import numpy as np

from dynid.identify.solve.prior import PhysicalProblem
from dynid.model.inertial import PSEUDO_INERTIA_MAP, parameters_of_pseudo_inertia, pseudo_inertia

#: Each link's pseudo-inertia stays above this fraction of its prior (strict positivity of M(q)).
STRICT_MARGIN = 1e-4


def violations(x: np.ndarray, problem: PhysicalProblem) -> tuple[list[int], bool]:
    """(links whose pseudo-inertia is below ε·J̄, whether a bounded parameter is negative) at x."""
    links = []
    for i, reference in enumerate(problem.references):
        root = np.linalg.inv(np.linalg.cholesky(reference))
        excess = root @ (pseudo_inertia(x[10 * i:10 * i + 10]) - STRICT_MARGIN * reference) @ root.T
        if np.linalg.eigvalsh(0.5 * (excess + excess.T))[0] < 0:
            links.append(i)
    return links, bool(problem.non_negative.size and np.any(x[problem.non_negative] < 0))


def project_links(x: np.ndarray, problem: PhysicalProblem) -> np.ndarray:
    """x with every pseudo-inertia raised to at least ε·J̄ and bounds enforced exactly (solver round-off)."""
    x = x.copy()
    for i, reference in enumerate(problem.references):
        j = pseudo_inertia(x[10 * i:10 * i + 10])
        floor = STRICT_MARGIN * reference
        root = np.linalg.cholesky(floor)
        inverse = np.linalg.inv(root)
        values, vectors = np.linalg.eigh(inverse @ (j - floor) @ inverse.T)
        if values.min() < 0:
            j = floor + root @ vectors @ np.diag(np.maximum(values, 0.0)) @ vectors.T @ root.T
            x[10 * i:10 * i + 10] = parameters_of_pseudo_inertia(j)
    x[problem.non_negative] = np.maximum(x[problem.non_negative], 0.0)
    return x


# ------------------------------------------------------------------------------ solvers
def _excess_form(problem: PhysicalProblem) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(scale, M, c) with x = scale·z and ‖A·x − b‖² = floor·‖M·z − c‖² + ‖A·x̂ − b‖², x̂ the unconstrained
    optimum and floor its cost: the solver sees only the excess over the unconstrained cost in units of that
    cost (its tolerances are relative, and the raw cost is a tiny fraction of ‖b‖²), every unknown of order one."""
    import scipy.linalg  # in the function (here and below): a fifth of a second that importing dynid skips
    count = problem.a.shape[1]
    norms = np.linalg.norm(problem.a, axis=0)
    scale = 1.0 / np.where(norms > 0, norms, 1.0)
    unconstrained = problem.map_estimate()
    floor = max(problem.objective(unconstrained), 1e-12 * float(problem.b @ problem.b), 1e-300)
    r = np.zeros((count, count))
    factor = scipy.linalg.qr(problem.a * scale, mode='r', check_finite=False)[0][:count]
    r[:factor.shape[0]] = factor
    return scale, r / np.sqrt(floor), r @ (unconstrained / scale) / np.sqrt(floor)


#: Rows of the upper triangle of a symmetric 4×4 matrix, column by column (Clarabel's PSD triangle order), as
#: indices into its row-major vec, and their scale (√2 off the diagonal, so that inner products are kept).
_TRIANGLE = [(4 * r + c, 1.0 if r == c else np.sqrt(2.0)) for c in range(4) for r in range(c + 1)]


def _solve_clarabel(problem: PhysicalProblem, careful: bool) -> tuple[np.ndarray, str]:
    import clarabel
    import scipy.sparse as sparse

    scale, m, c = _excess_form(problem)
    count = m.shape[1]
    rows, targets, cones = [], [], []
    index, weight = (np.array(v) for v in zip(*_TRIANGLE, strict=True))
    for i, reference in enumerate(problem.references):
        size = np.trace(reference)
        block = np.zeros((len(index), count))  # s = b − A·z = svec(J_i(x) − ε·J̄_i) / size ⪰ 0
        block[:, 10 * i:10 * i + 10] = -(weight[:, None] * PSEUDO_INERTIA_MAP[index]) * scale[10 * i:10 * i + 10] / size
        rows.append(block)
        targets.append(-weight * (STRICT_MARGIN * reference).reshape(-1)[index] / size)
        cones.append(clarabel.PSDTriangleConeT(4))
    if problem.non_negative.size:
        block = np.zeros((problem.non_negative.size, count))
        block[np.arange(problem.non_negative.size), problem.non_negative] = -1.0
        rows.append(block)
        targets.append(np.zeros(problem.non_negative.size))
        cones.append(clarabel.NonnegativeConeT(problem.non_negative.size))
    settings = clarabel.DefaultSettings()
    settings.verbose = False
    if careful:  # the second attempt: more iterations and refinement
        settings.max_iter = 1000
        settings.iterative_refinement_max_iter = 50
        settings.equilibrate_max_iter = 50
    solver = clarabel.DefaultSolver(sparse.triu(sparse.csc_matrix(2.0 * m.T @ m), format='csc'), -2.0 * m.T @ c,
                                    sparse.csc_matrix(np.vstack(rows)), np.concatenate(targets), cones, settings)
    solution = solver.solve()
    status = {'Solved': 'optimal', 'AlmostSolved': 'optimal_inaccurate'}.get(str(solution.status),
                                                                               str(solution.status))
    z = np.asarray(solution.x, dtype=float)
    if status == 'optimal' and not np.all(np.isfinite(z)):
        status = 'non-finite solution'
    return scale * z, status


def _solve_scs(problem: PhysicalProblem, careful: bool) -> tuple[np.ndarray, str]:
    import cvxpy as cp  # only for SCS: seconds of import that the default solver skips

    scale, m, c = _excess_form(problem)
    z = cp.Variable(m.shape[1])
    x = cp.multiply(scale, z)
    constraints = []
    for i, reference in enumerate(problem.references):
        size = np.trace(reference)
        j = cp.reshape(PSEUDO_INERTIA_MAP @ x[10 * i:10 * i + 10], (4, 4), order='C') / size
        constraints.append((j + j.T) / 2 - STRICT_MARGIN * reference / size >> 0)
    if problem.non_negative.size:
        constraints.append(z[problem.non_negative] >= 0)
    program = cp.Problem(cp.Minimize(cp.sum_squares(m @ z - c)), constraints)
    try:
        program.solve(solver='SCS', **({'max_iters': 100000, 'eps': 1e-6} if careful else {}))
    except cp.error.SolverError as error:
        return np.full(m.shape[1], np.nan), f'failed ({error})'
    if z.value is None:
        return np.full(m.shape[1], np.nan), program.status
    return scale * np.asarray(z.value), program.status


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


def _solve_log_cholesky(problem: PhysicalProblem, careful: bool) -> tuple[np.ndarray, str]:
    links = problem.n_links
    floor = [STRICT_MARGIN * j for j in problem.references]
    upper = np.triu_indices(4)
    theta0 = []
    for reference, f in zip(problem.references, floor, strict=True):
        # J − floor = U·Uᵀ with U upper triangular: the flipped Cholesky factor.
        flip = np.eye(4)[::-1]
        lower = np.linalg.cholesky(flip @ (reference - f) @ flip)
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
                                            method='trf', x_scale='jac', max_nfev=10000 if careful else 2000)
    theta = solution.x
    x = np.concatenate([_cholesky_to_parameters(theta, links, floor), theta[10 * links:]])
    return x, 'optimal' if solution.success else f'not converged ({solution.message})'


_SOLVE = {'clarabel': _solve_clarabel, 'scs': _solve_scs, 'log_cholesky': _solve_log_cholesky}


def solve(problem: PhysicalProblem, solver: str = 'clarabel') -> tuple[np.ndarray, str, int]:
    """(x = [π | Ia | friction] minimizing the problem under the constraints (module docstring), the solver's
    status: 'optimal' or why not (cvxpy's words, e.g. 'optimal_inaccurate'), attempts made: a solver that
    does not report an optimum is run once more with more iterations)."""
    x, status = _SOLVE[solver](problem, False)
    if status == 'optimal':
        return x, status, 1
    x, status = _SOLVE[solver](problem, True)
    return x, status, 2


def consistent_optimum(problem: PhysicalProblem, solver: str = 'clarabel') -> tuple[np.ndarray | None, np.ndarray, str]:
    """The physically consistent optimum of ``problem``: (x, the MAP estimate, status). Where the MAP estimate is
    consistent it is x (status 'consistent'); else the constrained optimum (:func:`solve`, projected onto the
    constraints: :func:`project_links`; status 'optimal'), or None with the solver's status where it misses it."""
    x_map = problem.map_estimate()
    bad_links, bad_bounds = violations(x_map, problem)
    if not bad_links and not bad_bounds:
        return x_map, x_map, 'consistent'
    x, status, _ = solve(problem, solver)
    return (project_links(x, problem) if status == 'optimal' else None), x_map, status


