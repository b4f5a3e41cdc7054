"""A load on the flange that a fleet's robots do not carry: the test that leaves the last link's inertial parameters to
the data where they say so, set in a population's terms, and what it tells the user.

A fleet prior (:class:`dynid.identify.solve.prior_source.FleetPrior`) holds each robot near its siblings; the one
difference between robots of one model a user makes on purpose is what is mounted on the flange. The test and the
projection are :func:`flange_load_freed`'s, the warning :func:`flange_load_warning`'s (docs/fleet.md, "Where the data
contradict it").
"""

from __future__ import annotations

import numpy as np

from dynid.identify.solve.prior import PhysicalLayout, PriorRows, ReducedRows

#: The last link's parameters a load fixed to the flange changes: all ten (``INERTIAL_PARAMETER_NAMES``). The mass and
#: first moments alone leave the load's inertia about the link's frame (m·|c|² and more) held at the fleet's values
#: (benchmarks/README.md, the fleet prior).
FLANGE_LOAD_PARAMETERS = 10
#: The level of the test that frees the flange's load from a fleet's prior
#: (:func:`flange_load_freed`): 0.01 % of robots as their fleet told of a load they do not carry.
FLANGE_LOAD_ALPHA = 1e-4


def population(data: ReducedRows, inflation: float = 1.0) -> ReducedRows:
    """``data`` in units of their residual σ̂ times ``inflation`` c (the autocorrelated residual's:
    :func:`dynid.identify.result.quality.std_inflation`): rows of unit variance, against which a prior at s = 1
    holds its parameters to their spread itself, the terms in which a robot is judged against its fleet. (The
    identification keeps the rows as they are: against unweighted rows in N·m a prior row holds its parameter to
    σ̂·s·σ_b, :func:`dynid.identify.solve.prior.row_variance`.)"""
    scale = data.residual_std * inflation
    return data.scaled(1.0 / scale) if scale > 0 else data


def flange_load_freed(layout: PhysicalLayout, data: ReducedRows, prior: PriorRows, prior_std: float,
                      inflation: float = 1.0) -> tuple[PriorRows, dict]:
    """The prior with the last link's inertial parameters left to the data where they say the robot carries a load
    on its flange that its fleet does not (a tool, a gripper), and the test's record.

    A fleet's robots differ most where a user mounts something, and a load fixed to the flange is a rigid body
    of its own: all ten parameters of the last link change (its inertia about the link's frame by m·|c|² and
    more). C(P) is the least cost of the data rows in a population's terms (:func:`population`) and the prior's
    rows P at s; the load's directions are the prior rows' columns of the last link's
    :data:`FLANGE_LOAD_PARAMETERS` parameters. Λ = C(prior) − C(prior without the load's directions) is the
    likelihood ratio of "the flange carries a load of its own" against "the robot is as its fleet", a χ² of q
    degrees of freedom (the rank of those columns in the data and in the prior, the lesser) were the data's σ
    the conflict's scale; R = C(prior without them) − C(no prior), the conflict in the prior's other r directions
    (r: the directions data and prior both determine, less q), measures that scale. The test is F = (Λ/q)/(R/r)
    against the 1 − :data:`FLANGE_LOAD_ALPHA` point of F(q, r): a load must stand out from the robot's conflicts
    with its fleet elsewhere (friction, a link), not only from the noise. Beyond it the prior's rows are projected
    off the load's directions (min over a load δ of ‖a·x − b − a_L·δ‖²): the prior then says nothing of what the
    flange carries and holds every other parameter as before. The record: F, Λ/q, R/r, (q, r), the bound,
    whether freed, and, where freed, the load the estimate puts on the last link beyond the fleet's
    (δ = a_L⁺·(a·x − b) at the MAP estimate of those terms: its mass [kg] and first moments [kg·m] about the
    last joint's frame, where the prior's rows determine them)."""
    import scipy.linalg
    import scipy.stats
    start = 10 * (layout.n_links - 1)
    load = prior.a[:, start:start + FLANGE_LOAD_PARAMETERS]
    basis, singular, vt = np.linalg.svd(load, full_matrices=False)
    kept = singular > singular[0] * 1e-9 if singular.size and singular[0] > 0 else np.zeros(len(singular), bool)
    basis = basis[:, kept]
    freed = PriorRows(prior.a - basis @ (basis.T @ prior.a), prior.b - basis @ (basis.T @ prior.b),
                      prior.references, prior.names)
    rows_in_sigma = population(data, inflation)

    def least_cost(rows: PriorRows) -> tuple[float, np.ndarray]:
        problem = layout.problem(rows_in_sigma, rows, prior_std)
        x = problem.map_estimate()
        return problem.objective(x), x

    held_cost, _ = least_cost(prior)
    free_cost, x = least_cost(freed)
    alone = layout.problem(rows_in_sigma, prior, None)
    alone_cost = alone.objective(alone.map_estimate())
    data_rows = alone.a
    degrees = min(basis.shape[1], _rank(data_rows[:, start:start + FLANGE_LOAD_PARAMETERS]))
    shared = _rank(data_rows) + _rank(prior.a) - _rank(np.vstack([data_rows, prior.a]))
    rest = shared - degrees
    statistic = max(held_cost - free_cost, 0.0) / max(degrees, 1)
    dispersion = max(free_cost - alone_cost, 0.0) / rest if rest > 0 else float('nan')
    ratio = statistic / dispersion if dispersion > 0 else float('inf')
    bound = float(scipy.stats.f.ppf(1.0 - FLANGE_LOAD_ALPHA, degrees, rest)) if degrees and rest > 0 \
        else float('inf')
    record = {'statistic': ratio, 'load_chi2_per_dof': statistic, 'rest_chi2_per_dof': dispersion,
              'degrees_of_freedom': [degrees, rest], 'bound': bound, 'alpha': FLANGE_LOAD_ALPHA,
              'freed': bool(ratio > bound)}
    if not record['freed']:
        return prior, record
    delta = scipy.linalg.lstsq(load, prior.a @ x - prior.b, check_finite=False)[0]
    reach = vt[kept].T @ vt[kept]  # a parameter the prior's rows determine: its unit vector in their row space
    determined = np.abs(np.diag(reach) - 1.0) < 1e-6
    if determined[:4].all():
        record.update(mass_kg=float(delta[0]), first_moments_kg_m=[float(v) for v in delta[1:4]])
    return freed, record


def flange_load_warning(record: dict, robot) -> str:
    """What a freed flange load (:func:`flange_load_freed`) says: the test,
    and the load the estimate puts on the last link beyond the fleet's, its centre of mass in the flange's frame."""
    load, rest = record['degrees_of_freedom']
    text = (f'the data contradict the fleet prior where a load on the flange shows (its chi-square per degree of '
            f'freedom {record["load_chi2_per_dof"]:.1f} against {record["rest_chi2_per_dof"]:.2f} in the prior\'s '
            f'other directions: F = {record["statistic"]:.1f} beyond {record["bound"]:.2f}, the '
            f'{100 * (1 - record["alpha"]):g} % point of F({load}, {rest})): the last link\'s inertial parameters '
            f'were left to the data')
    mass = record.get('mass_kg')
    if mass is None:
        return text
    text += f', which put {mass:+.2f} kg on it beyond the fleet\'s'
    if mass <= 0:
        return text + (': a lighter flange than its fleet\'s, or another difference from the fleet that shows as a '
                       'load would')
    flange = robot.flange_placement
    centre = flange.rotation.T @ (np.asarray(record['first_moments_kg_m']) / mass - flange.translation)
    return text + (f', its centre of mass at ({centre[0]:.3f}, {centre[1]:.3f}, {centre[2]:.3f}) m in the flange\'s '
                   'frame: a tool or gripper its fleet does not carry?')


def _rank(matrix: np.ndarray) -> int:
    """The numerical rank of ``matrix``, its columns scaled to unit norm (singular values above 1e-9 of the largest)."""
    norms = np.linalg.norm(matrix, axis=0)
    singular = np.linalg.svd(matrix / np.where(norms > 0, norms, 1.0), compute_uv=False)
    return int(np.count_nonzero(singular > singular[0] * 1e-9)) if singular.size and singular[0] > 0 else 0
