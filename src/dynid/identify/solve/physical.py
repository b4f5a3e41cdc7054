"""Identification in standard parameters: the robot file as a prior, each link a realizable body where it costs little.

The linear solution (:mod:`dynid.identify.solve.solvers`) gives base parameters χ_b that fit the torques but may
belong to no physical robot and, on a recording that excites little, extrapolate badly to other motions.
:func:`identify_physical` re-solves the same weighted equations for the standard parameters of every link
(:mod:`dynid.identify.solve.prior`: x = [π | Ia | friction], χ_b = K·[π; Ia]):

1. **Prior.** The robot file's link inertias pull the estimate toward them with a relative standard deviation
   s chosen by cross-validation over contiguous stretches of the recording (:mod:`dynid.identify.solve.prior`);
   the maximum a posteriori (MAP) estimate is a linear least squares. Links the robot file gives impossible
   inertias are named and left out of the prior.
2. **Consistency.** Every link's 4×4 pseudo-inertia J_i ⪰ ε·J̄_i, rotor inertias and Coulomb/viscous
   friction ≥ 0 (J ⪰ 0 is exactly the condition that some non-negative mass density has these ten moments:
   Wensing, Kim and Slotine 2017, Theorem 1; ε = :data:`STRICT_MARGIN` keeps M(q) positive definite, not
   merely semidefinite). ``consistency``: ``always`` (``dynid identify --physical``), ``never``, or ``auto``
   (the default identification): a MAP estimate that satisfies the constraints is kept as it is (it is the
   constrained optimum); otherwise the constrained problem is solved and kept when its weighted χ² on the
   training equations is at most ``consistency_cost_max_percent`` above the MAP's, else the MAP estimate is
   kept and the result says which links are not physical.

The **consistency cost** is 100·(χ²_constrained − χ²_unconstrained)/χ²_unconstrained [%] on the training
equations, the unconstrained solution being the MAP one (or the linear one without a prior).

Solver: :mod:`dynid.identify.solve.constrained`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from dynid.blas import one_blas_thread
from dynid.errors import InputError, checked_choice
from dynid.friction.laws import friction_law, physical_laws
from dynid.identify.choices import AUTO, SOLVERS
from dynid.identify.registry import START_METHOD, identification_method, identification_methods, spoken
from dynid.identify.result.quality import residual_autocorrelation, std_inflation
from dynid.identify.settings import PRIOR_OFF, IdentifierSettings
from dynid.identify.solve.constrained import STRICT_MARGIN, project_links, solve, violations
from dynid.identify.solve.flange_load import flange_load_freed, flange_load_warning
from dynid.identify.solve.prior import (
    CROSS_VALIDATION_BLOCKS,
    CROSS_VALIDATION_FOLDS,
    PRIOR_STD_GRID,
    PhysicalLayout,
    PriorRows,
    ReducedRows,
    cross_validated_prior_std,
    information_condition_numbers,
    non_negative_friction,
    posterior_covariance,
    robot_file_values,
    row_variance,
    time_folds,
)
from dynid.identify.solve.prior_source import PriorSource, RobotFilePrior
from dynid.identify.solve.rows import FreeColumns, RowGroups, per_joint_weights
from dynid.identify.solve.solvers import excitation_condition

CONSISTENCY = ('auto', 'always', 'never')
# The physical solve takes the friction laws marked ``physical`` (:class:`dynid.friction.law.FrictionLaw`): their
# columns are linear once τ_out (the load terms' torque, iterated as the load loop does:
# :mod:`dynid.identify.steps.fit`) and the viscous exponents are fixed; consistency is a constraint on the links, the
# friction keeps its law, bounded where the law requires (:func:`dynid.identify.solve.prior.non_negative_friction`).
# Hamon's quadrant model is not among them: its efficiency terms trade against the rigid-body scale.
#: Of the physical laws, those whose consistency the default (``auto``) checks; with friction on τ_out it is left
#: unchecked (said in the prior section) and ``always`` enforces it.
CHECKED_FRICTION = ('none', 'viscous_coulomb')


@dataclass(frozen=True)
class PhysicalSettings:
    """The robot file as a prior and physical consistency (module docstring).

    ``prior`` False: no pull toward the robot file (or ``prior_source``); ``prior_relative_std`` None: s by
    cross-validation;
    ``consistency`` one of :data:`CONSISTENCY`; ``consistency_cost_max_percent`` [%]: with ``auto``, the
    largest rise of the training χ² over the MAP estimate's that consistency may cost; ``solver`` one of
    :data:`SOLVERS`.
    """

    prior: bool = field(default=True, metadata={'description': "pull toward the robot file's link inertias"})
    prior_relative_std: float | None = field(
        default=None, metadata={'description': 'relative standard deviation s of the prior; None: by '
                                               'cross-validation over stretches of the recording'})
    consistency: str = field(default='auto', metadata={
        'choices': CONSISTENCY, 'description': 'physically consistent links: always, never, or auto (where it '
                                               'costs at most consistency_cost_max_percent)'})
    consistency_cost_max_percent: float = field(default=1.0, metadata={
        'description': 'auto: largest rise of the training chi2 that consistency may cost [%]', 'range': (0.0, 100.0)})
    solver: str = field(default=IdentifierSettings.physical_solver,
                        metadata={'choices': SOLVERS, 'description': 'constrained solver'})
    prior_source: PriorSource | None = field(default=None, metadata={
        'description': 'where the prior comes from (dynid.identify.solve.prior_source); None: the robot file'})

    @property
    def given_std(self) -> float | None:
        """s as given, else the source's calibrated s (a fleet's measured spread: 1), else None (cross-validated)."""
        if self.prior_relative_std is not None or self.prior_source is None:
            return self.prior_relative_std
        return self.prior_source.calibrated_std

    def source(self, robot) -> PriorSource:
        """The prior's source for ``robot``: the one given, else the robot file."""
        return self.prior_source if self.prior_source is not None else RobotFilePrior.of(robot)

    def validated(self) -> PhysicalSettings:
        checked_choice('physical solver', self.solver, SOLVERS)
        checked_choice('consistency', self.consistency, CONSISTENCY)
        if self.prior_relative_std is not None and not (np.isfinite(self.prior_relative_std)
                                                        and self.prior_relative_std > 0):
            raise InputError(f'prior_relative_std must be > 0, got {self.prior_relative_std!r}')
        if not 0.0 <= self.consistency_cost_max_percent <= 100.0:
            raise InputError(f'consistency_cost_max_percent must be within 0-100, got '
                             f'{self.consistency_cost_max_percent!r}')
        return self

    def not_applicable(self, spec, method: str) -> str | None:
        """Why this identification cannot be solved in standard parameters (None when it can). An explicit
        ``consistency='always'`` makes the reason an error (:meth:`check_model`); otherwise the
        identification stays linear and the result says why."""
        if not identification_method(method).physical:
            return physical_methods_only(method)
        if spec.friction != AUTO and not friction_law(spec.friction).physical:
            return f'physical identification supports the friction models {physical_laws()}, got {spec.friction!r}'
        return None

    def check_model(self, spec, method: str = START_METHOD) -> None:
        """Refuse, before any work, a model that ``consistency='always'`` cannot solve."""
        reason = self.not_applicable(spec, method)
        if reason and self.consistency == 'always':
            raise InputError(reason)


def physical_methods_only(method: str) -> str:
    """'physical identification builds on OLS, WLS or IRLS, not 'tls'': the registered methods whose solution the
    physical solve re-solves (the others identify more than these equations say)."""
    physical = [other.name for other in identification_methods() if other.physical]
    return f'physical identification builds on {spoken(physical)}, not {method!r}'


# ------------------------------------------------------------------------------ the identification step
@dataclass
class PhysicalOutcome:
    """What :func:`identify_physical` gives the result: values and σ in parameter order (NaN σ where the
    constraints moved the estimate), the condition numbers of the problem solved in base parameters (raw,
    with unit-norm columns: :func:`~dynid.identify.solve.prior.information_condition_numbers`; None: the linear
    fit's), the result's ``prior`` section, its ``physical`` section (None unless
    the estimate is physically consistent) and warnings."""

    values: np.ndarray
    std: np.ndarray
    condition: tuple[float, float] | None
    prior: dict
    physical: dict | None
    warnings: list[str]


def identify_physical(problem, estimate, w: np.ndarray, y: np.ndarray, joints: np.ndarray,
                      settings: PhysicalSettings, progress=lambda text: None, groups=None,
                      exponents: np.ndarray | None = None) -> PhysicalOutcome:
    """The standard-parameter solution of an :class:`~dynid.identify.equations.problem.IdentificationProblem` already
    solved linearly (module docstring).

    Args:
        problem: the identification problem. estimate: its linear solution (weights, values, σ).
        w, y, joints: its equations and each row's joint. settings: options.
        groups: the rows of the free columns (the held ones on the measured side) reduced per block and joint
            (:class:`dynid.identify.solve.rows.RowGroups`), where the linear solve has them.
        exponents: the comprehensive law's viscous exponents α_j of ``w``'s columns (default the candidate's): its
            Coulomb bound is on the friction at the slowest speed kept
            (:class:`dynid.identify.solve.prior.PhysicalLayout`).
    """
    # One BLAS thread (as dynid.identify.solve.solvers): the tall QRs, and the small SVDs and least squares of the
    # prior's weight, which took 0.2 s instead of milliseconds with a thread per core on a 2-core machine.
    with one_blas_thread():
        return _identify_physical(problem, estimate, w, y, joints, settings, progress, groups, exponents)


def _coulomb_floor(problem, exponents: np.ndarray | None) -> np.ndarray | None:
    """ω_s^α_j per joint for a law whose viscous part is the power term (the comprehensive law; ω_s the stiction
    velocity below which rows are dropped), else None (:class:`dynid.identify.solve.prior.PhysicalLayout`)."""
    speed = getattr(problem.settings, 'stiction_velocity', 0.0) or 0.0
    if not problem.law.power_viscous or speed <= 0 or problem.power_velocity is not None:
        return None  # the shifted power term is 0 up to v_s: fc is the friction there, bounded as it is
    if exponents is None:
        exponents = problem.candidate.exponents or np.full(problem.robot.n, problem.spec.exponent)
    return speed ** np.asarray(exponents, dtype=float)


def _data_condition(problem, names: list[str], held: np.ndarray, groups, w) -> float:
    """cond(W·D) of the data alone (:func:`dynid.identify.solve.solvers.excitation_condition`) on the free columns'
    rows: their R factors where reduced (``groups``), else ``w`` (the free columns)."""
    free = [name for name, h in zip(names, held, strict=True) if not h]
    rows = groups.stacked()[:-1, :-1] if groups is not None else w
    return excitation_condition(rows, free, int(np.count_nonzero(~held[:len(problem.rigid_names)])))


def _layout(problem, names: list[str], held: np.ndarray, exponents) -> PhysicalLayout:
    """How the unknowns map to the problem's free columns, and which are bounded (:class:`PhysicalLayout`)."""
    return PhysicalLayout.of(problem.base.regrouping, problem.robot.n, problem.identify_rotor_inertia, names,
                             len(problem.rigid_names), held, 9 * len(problem.payload_blocks),
                             rotor_excess=problem.compensate_rotor, coulomb_floor=_coulomb_floor(problem, exponents),
                             non_negative=non_negative_friction(problem.candidate.friction))


def _identify_physical(problem, estimate, w, y, joints, settings: PhysicalSettings, progress,
                       groups=None, exponents=None) -> PhysicalOutcome:
    """The prior's weight, the MAP estimate, the consistency decision and the sections (:func:`identify_physical`)."""
    settings = settings.validated()
    robot, n = problem.robot, problem.robot.n
    start = time.perf_counter()
    names = problem.parameter_names()
    weights = estimate.row_weights if estimate.row_weights.size == len(y) else np.ones(len(y))
    # Parameters held at a value (dynid.identify.equations.held): their columns go to the measured side, as the linear
    # solvers do; they keep their values and σ 0 in the result.
    held = np.array([name in problem.held for name in names], dtype=bool)
    held_values = np.array([problem.held[name]['value'] for name in names if name in problem.held])
    if groups is None and per_joint_weights(weights, joints, robot.n) is not None:  # reduced here, once
        held_full = np.zeros(len(names))
        held_full[held] = held_values
        groups = RowGroups.of(w, y - w @ held_full, joints, n=robot.n, columns=~held)
    if held.any():  # a view of the free columns where the rows come reduced (no copy of W)
        y = y - w[:, held] @ held_values
        w = FreeColumns(w, ~held) if groups is not None else w[:, ~held]

    def full(free: np.ndarray, fill: np.ndarray | float) -> np.ndarray:
        """A vector over every parameter from one over the free ones (``fill`` at the held ones)."""
        values = np.empty(len(names))
        values[~held], values[held] = free, fill
        return values

    source = settings.source(robot)
    links = source.links
    layout = _layout(problem, names, held, exponents)
    prior = source.rows(problem, layout, [name for name, h in zip(names, held, strict=True) if not h])
    section, warnings = _prior_section(settings, robot, source)
    use_prior = section['used']
    std, data = _prior_weight(settings, section, layout, prior, (w, y, weights, joints), progress, groups,
                              source.rule)
    prior = _released(source, layout, data, prior, std, section, warnings,
                      (problem, w, y, joints, estimate.values[~held]))
    reduced = layout.problem(data, prior, std)
    x_map = reduced.map_estimate()
    if any(link.in_prior for link in links):  # a robot file without any physical link inertia: no model worth comparing
        file_values = full(layout.to_base @ robot_file_values(layout, data, links), held_values)
        section['robot_file_model'] = dict(zip(names, file_values.tolist(), strict=True))
    if use_prior:
        map_values = layout.to_base @ x_map
        covariance = posterior_covariance(reduced, x_map, layout.to_base)
        map_std = np.sqrt(np.maximum(np.diag(covariance), 0.0))
        condition = information_condition_numbers(covariance)
        free_cost = data.cost(estimate.values[~held])
        section.update(prior_cost_percent=100.0 * (data.cost(map_values) / free_cost - 1.0) if free_cost > 0 else 0.0,
                       data_condition_number_scaled=_data_condition(problem, names, held, groups, w),
                       posterior_std=full(map_std, 0.0).tolist())
        section['data_row_std'] = float(np.sqrt(row_variance(reduced, x_map)))  # the prior's rows weigh as such rows
        informed = _informed_by_data(source, problem, names, held, map_std, std * section['data_row_std'])
        if informed is not None:
            section['informed'] = informed
    else:
        map_values, map_std, condition = estimate.values[~held], estimate.std[~held], None
    enforced = _enforce_consistency(settings, reduced, x_map, use_prior, n, warnings, progress)
    constrained_values = layout.to_base @ enforced.x
    cost_percent = 100.0 * (data.cost(constrained_values) / data.cost(map_values) - 1.0) \
        if data.cost(map_values) > 0 else 0.0
    other = map_values  # the estimate of the other decision, where consistency moved it (validate scores it too)
    if enforced.decision == 'enforced' and settings.consistency == 'auto' and \
            cost_percent > settings.consistency_cost_max_percent:
        other, enforced.decision, enforced.x, constrained_values = constrained_values, 'declined', x_map, map_values
    section['consistency'] = _consistency_section(settings, enforced, cost_percent, [link.link for link in links],
                                                  dict(zip(names, full(other, held_values).tolist(), strict=True)))
    section['seconds'] = time.perf_counter() - start
    moved = enforced.decision == 'enforced'
    values, std = (full(constrained_values, held_values), np.full(len(names), np.nan)) if moved else \
        (full(map_values, held_values), full(map_std, 0.0))
    if moved:
        std[held] = 0.0
    physical = None
    if section['consistency']['physically_consistent']:
        physical = _physical_section(settings, enforced, reduced, layout, source, problem, estimate,
                                     data.cost(map_values), data.cost(constrained_values), cost_percent)
    return PhysicalOutcome(values, std, condition, section, physical, warnings)


def _prior_section(settings: PhysicalSettings, robot, source: PriorSource) -> tuple[dict, list[str]]:
    """The result's prior section as far as its source decides it (used, the source, the links left out of the
    prior and why; where the source is not the robot file, its provenance), and a warning for each link left out."""
    left_out = source.left_out()
    use_prior = settings.prior and source.pulls()
    warnings = [f'{link.line()}: left out of the prior' for link in left_out
                if link.problem != 'no inertia (massless)'] if use_prior and left_out else []
    section = {'used': use_prior, 'source': source.label, 'relative_std': None,
               'links_left_out': [{'joint': link.joint, 'link': link.inertial, 'problem': link.problem}
                                  for link in left_out]}
    if source.kind != RobotFilePrior.kind:
        section['provenance'] = source.provenance()
    if settings.prior and not use_prior:
        section['reason'] = 'the robot file gives no link a physical inertia'
    elif not settings.prior:
        section['reason'] = f'{PRIOR_OFF} (the setting prior off)'
    return section, warnings


#: A parameter the prior pulls on its own (an earlier result's or a fleet's) is said decided by the data where its
#: posterior σ is below this fraction of the prior's σ̂·s·σ_b (the data cut its variance by three quarters or more), and
#: held at the prior's value where above :data:`HELD_FRACTION` of it (the data cut its variance by less than a fifth).
#: σ̂ is a data row's σ (:func:`dynid.identify.solve.prior.row_variance`): the prior's rows weigh as data rows, so
#: against unweighted rows in N·m (ordinary least squares) the prior holds its parameters to σ̂·s·σ_b, not s·σ_b.
DECIDED_FRACTION, HELD_FRACTION = 0.5, 0.9


def _informed_by_data(source, problem, names, held, map_std, std) -> dict | None:
    """Which of the parameters the prior pulls on one by one the data decided and which stayed at the prior's values
    (posterior σ against the prior's σ, ``std``·σ_b: :data:`DECIDED_FRACTION`, :data:`HELD_FRACTION`); None for a prior
    that pulls on links, not parameters (the robot file)."""
    spread = source.parameter_spread(problem)
    free = [name for name, h in zip(names, held, strict=True) if not h]
    ratios = {name: float(sigma) / (spread[name] * std) for name, sigma in zip(free, map_std, strict=True)
              if name in spread and spread[name] > 0}
    if not ratios:
        return None
    return {'rule': f'posterior sigma below {DECIDED_FRACTION:g} of the prior s*sigma_b: decided by the data; above '
                    f'{HELD_FRACTION:g}: held at the prior', 'decided_by_data': [n for n, r in ratios.items()
                                                                             if r < DECIDED_FRACTION],
            'held_at_prior': [n for n, r in ratios.items() if r > HELD_FRACTION], 'pulled': len(ratios)}


def _released(source: PriorSource, layout, data, prior, std: float | None, section: dict, warnings: list[str],
              fit) -> PriorRows:
    """The prior's rows as the data leave them where the source lets them: the last link's parameters left to the
    data where they say the flange carries a load of its own (:func:`dynid.identify.solve.flange_load.
    flange_load_freed`, ``section['flange_load']``, a warning where freed), then the rows they contradict released
    (:meth:`dynid.identify.solve.prior.PhysicalLayout.released`, ``section['released']``: {row: its weight < 1}).
    ``fit``: (problem, W, y, joints, the linear solution's values), whose residual's c the load's test takes."""
    if std is None or not source.releases:
        return prior
    problem, w, y, joints, values = fit
    inflation = std_inflation(residual_autocorrelation(y - w @ values, joints, problem.robot.n))
    prior, section['flange_load'] = flange_load_freed(layout, data, prior, std, inflation)
    if section['flange_load']['freed']:
        warnings.append(flange_load_warning(section['flange_load'], problem.robot))
    prior, weights = layout.released(data, prior, std)
    section['released'] = {name: float(weight) for name, weight in zip(prior.names, weights, strict=True)
                           if weight < 1.0}
    return prior


def _prior_weight(settings: PhysicalSettings, section: dict, layout, prior, system, progress, groups=None,
                  rule: str | None = None):
    """The prior's relative standard deviation s (given, or by cross-validation over stretches of the recording) and
    the rows reduced for the MAP solve; the prior section records both. ``system``: (W, y, row weights, joints)."""
    w, y, weights, joints = system
    cross_validation = None
    std = settings.given_std if section['used'] else None
    if section['used'] and std is None:
        folds, data = time_folds(w, y, weights, joints, groups=groups)
        std, numbers = cross_validated_prior_std(layout, folds, prior)
        cross_validation = {'folds': CROSS_VALIDATION_FOLDS, 'blocks': CROSS_VALIDATION_BLOCKS,
                            'grid': list(PRIOR_STD_GRID), **numbers}
        progress(f'prior weight: s = {std:g} by {CROSS_VALIDATION_FOLDS}-fold cross-validation over '
                 f'{CROSS_VALIDATION_BLOCKS} stretches of the recording')
    else:
        if section['used'] and settings.prior_relative_std is None:
            progress(f'prior weight: s = {std:g}, the {settings.prior_source.kind}\'s spread as measured')
        per_joint = None if groups is None else per_joint_weights(weights, joints, groups.joints)
        data = ReducedRows.of(w, y, weights) if per_joint is None else \
            ReducedRows.of_factor(groups.stacked(per_joint), len(y))
    weight = None if not section['used'] else 'cross-validated' if cross_validation is not None else \
        'given' if settings.prior_relative_std is not None else 'measured spread'
    section.update(relative_std=std, rule=rule if section['used'] else None, cross_validation=cross_validation,
                   weight=weight)
    return std, data


@dataclass
class _Enforced:
    """The consistency step's decision and the solution it leaves (``x``: link parameters, rotor inertias, friction),
    with the solver's status, attempts and time [s]; ``bad_links``/``bad_bounds``: what the MAP estimate violates."""

    decision: str
    x: np.ndarray
    bad_links: list[int]
    bad_bounds: bool
    status: str = 'optimal'
    attempts: int = 0
    seconds: float = 0.0


def _enforce_consistency(settings: PhysicalSettings, reduced, x_map: np.ndarray, use_prior: bool, n: int,
                         warnings: list[str], progress) -> _Enforced:
    """The constrained solve where the MAP estimate is not physically consistent (or consistency is asked for
    without a prior), as ``settings.consistency`` says; a solver that misses its optimum is said (refused where
    consistency was asked for)."""
    bad_links, bad_bounds = violations(x_map, reduced)
    enforced = _Enforced('free', x_map, bad_links, bad_bounds)
    if settings.consistency == 'never':
        enforced.decision = 'not asked for'
    elif bad_links or bad_bounds or (settings.consistency == 'always' and not use_prior):
        progress(f'physical solve ({settings.solver}): {reduced.a.shape[1]} unknowns, '
                 f'{n} pseudo-inertia constraints')
        solve_start = time.perf_counter()
        x, enforced.status, enforced.attempts = solve(reduced, settings.solver)
        enforced.seconds = time.perf_counter() - solve_start
        if enforced.status != 'optimal':
            message = (f'the physical solve did not reach its optimum ({settings.solver}: {enforced.status}, also '
                       f'when run again with more iterations)')
            if settings.consistency == 'always':
                raise InputError(f'{message}; try another {{physical_solver}}, or leave out {{physical}}',
                                 fields=('physical_solver', 'physical'))
            warnings.append(f'{message}: physical consistency not enforced')
            enforced.decision = 'solver failed'
        else:
            enforced.x, enforced.decision = project_links(x, reduced), 'enforced'
    return enforced


def _consistency_section(settings: PhysicalSettings, enforced: _Enforced, cost_percent: float,
                         link_label: list[str], other: dict[str, float]) -> dict:
    """The prior section's consistency entry: the mode, the decision, what it cost and what is not physical; where
    consistency moved the estimate (enforced or declined), ``other``, the other decision's ({parameter: value})."""
    consistent = enforced.decision in ('free', 'enforced')
    section = {
        'mode': settings.consistency, 'decision': enforced.decision, 'physically_consistent': consistent,
        'cost_percent': cost_percent if enforced.decision in ('enforced', 'declined') else 0.0,
        'limit_percent': settings.consistency_cost_max_percent if settings.consistency == 'auto' else None,
        'links_not_physical': [] if consistent else [link_label[i] for i in enforced.bad_links],
        'friction_or_rotor_negative': enforced.bad_bounds and not consistent}
    if enforced.decision in ('enforced', 'declined'):
        section['other_estimate'] = {'physically_consistent': enforced.decision == 'declined', 'values': other}
    if enforced.decision == 'declined':
        section['note'] = (f'not physically consistent ({", ".join(link_label[i] for i in enforced.bad_links)}'
                           f'{"; friction or rotor inertia < 0" if enforced.bad_bounds else ""}): consistency '
                           f'would cost {cost_percent:.3g} % of the training chi2 (limit '
                           f'{settings.consistency_cost_max_percent:g} %); asking for physical consistency enforces it')
    return section


def _physical_section(settings: PhysicalSettings, enforced: _Enforced, reduced, layout, source, problem, estimate,
                      chi2_unconstrained: float, chi2_physical: float, cost_percent: float) -> dict:
    """The result's physical section of a physically consistent estimate: the solve, the constraint, each link's
    standard parameters beside its prior, the rotor inertias and the unconstrained estimate."""
    moved = enforced.decision == 'enforced'
    x = enforced.x
    return {
        'solver': settings.solver if moved else 'none needed (the unconstrained estimate is consistent)',
        'solver_status': enforced.status, 'solver_attempts': enforced.attempts, 'solve_s': enforced.seconds,
        'objective': reduced.objective(x),
        'constraint': f'pseudo-inertia J_i >= {STRICT_MARGIN:g}*J_prior_i (Wensing, Kim and Slotine 2017); '
                      f'Ia and the Coulomb, viscous and load friction coefficients >= 0 (with a power law |w|^a: '
                      f'fc + fv*w_s^a >= 0 at the stiction velocity w_s)',
        'consistency': {'weighted_chi2_unconstrained': chi2_unconstrained,
                        'weighted_chi2_physical': chi2_physical, 'cost_percent': cost_percent},
        'links': [{'joint': link.joint, 'link': link.link, 'parameters': x[10 * i:10 * i + 10].tolist(),
                   'prior': prior} for i, (link, prior) in enumerate(zip(source.links, source.link_values(),
                                                                          strict=True))],
        'rotor_inertia': None if not problem.identify_rotor_inertia else dict(zip(
            problem.robot.joint_names, x[layout.rotor_start:layout.standard_count].tolist(), strict=True)),
        'unconstrained': {'values': estimate.values, 'std': estimate.std}}
