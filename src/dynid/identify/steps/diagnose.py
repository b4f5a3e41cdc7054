"""The diagnose step of an identification: what the prepared equations can carry, before anything is chosen.

- Joints that never leave the stiction zone are refused by name (nothing to fit there).
- Parameters held at a value instead of identified (:mod:`dynid.identify.equations.held`): structural offsets, the
  parameters only left-out joints' equations hold, the offsets of joints that never reverse (and
  their viscous friction where their speed is steady).
- Where the model choice has something to choose (:mod:`dynid.identify.steps.choose`), each route's first estimate: WLS
  of the superset law (one pass of the load loop, τ_out from the robot file), and, where the data cannot carry every
  candidate column beside the others, the rotor inertias' excess left out, then the load and temperature terms. A
  joint too short for a noise estimate of its own is weighted there by the pooled noise where the robot file's prior
  completes its rows or the method given needs no per-joint noise (OLS), instead of refusing the log for a noise
  estimate the method given does not use.
- The weakly exciting log's gate: cond(W·D) of the data alone
  (:func:`dynid.identify.solve.solvers.excitation_condition`) above the refusal's limit
  (:data:`dynid.identify.result.quality.COND_SCALED_MAX`), where the method and physical consistency are left to dynid
  and the robot file's prior can complete what the data lack; the regularized route's first estimate then too (OLS with
  the prior and physical consistency, Coulomb + viscous friction: docs/methods/identification.md, "Weakly exciting
  logs").
- Where instruments are at hand (an IV method's simulated closed loop), whether IDIM-LS is biased on these rows: the
  Durbin–Wu–Hausman test (:func:`least_squares_bias`, :mod:`dynid.identify.solve.hausman`), whose finding offers
  a closed-loop-consistent method (as the front end spells it) only where LS is biased at the level.

This is the identification's own diagnosis of its equations; what the recordings' effort means (sign, scale, torque or
current) is :mod:`dynid.diagnosis`, which the workflow runs on the recordings as given.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from dynid.diagnosis import Finding
from dynid.errors import InputError
from dynid.identify.equations.held import left_out, one_way_friction, structural_offsets
from dynid.identify.equations.prepare import Equations, refuse_still_joints
from dynid.identify.equations.problem import Candidate, IdentificationProblem
from dynid.identify.equations.request import IdentifyOptions, Request
from dynid.identify.registry import REGULARIZED_METHOD, START_METHOD, identification_method
from dynid.identify.result.quality import COND_SCALED_MAX
from dynid.identify.solve.hausman import BIAS_LEVEL, HausmanTest, durbin_wu_hausman
from dynid.identify.solve.physical_rules import consistency_refused, prior_completes
from dynid.identify.solve.solvers import Estimate, check_identifiable, excitation_condition
from dynid.identify.steps.fit import load_loop, nominal_rigid


@dataclass(frozen=True)
class Route:
    """One route of the model choice as the data carry it: its superset candidate (``candidate``), the optional terms
    the choice may try (``terms``) and the first estimate (``first``: WLS, τ_out from the robot file; its system's
    rows reduced in ``first.extra['groups']``)."""

    candidate: Candidate
    terms: tuple[str, ...]
    first: Estimate


@dataclass(frozen=True)
class Findings:
    """What :func:`diagnose_equations` found: the candidate of the model as asked (``candidate``: the spec's law, the
    parameters held), the optional terms an open law may try (``terms``), and, where the choice is open, the ordinary
    route (``ordinary``), the gate's figure (``condition``: cond(W·D) of the data alone, where the regularized route
    may apply) and the regularized route (``regularized``: a :class:`Route`, the reason it could not be made, or None
    where the gate did not open)."""

    candidate: Candidate
    terms: tuple[str, ...]
    ordinary: Route | None = None
    condition: float | None = None
    regularized: Route | str | None = None

    @property
    def weak(self) -> bool:
        """The gate opened: a weakly exciting log, the regularized route tried first."""
        return self.regularized is not None


def diagnose_equations(equations: Equations, request: Request, progress: Callable[[str], None]) -> Findings:
    """What ``equations`` carry for ``request`` (module docstring)."""
    refuse_still_joints(equations)
    spec = equations.spec
    candidate = Candidate(spec.friction, request.options, spec.temperature, stribeck=equations.stribeck,
                          joint_side=equations.joint_side)
    problem = IdentificationProblem.of(equations, candidate)
    held = {**structural_offsets(problem), **left_out(problem, nominal_rigid(problem))}
    held.update(one_way_friction(IdentificationProblem.of(equations, candidate.holding(held))))
    if held and request.drive_gains_unknown:
        raise InputError(f'drive-gain identification does not take parameters held at a value '
                         f'({", ".join(held)}: left-out joints, a structural offset or a joint that never '
                         f'reverses); identify without them, or with another method')
    for name, entry in held.items():
        progress(f'{name} held at {entry["value"]:.6g}: {entry["reason"]}')
    candidate = candidate.holding(held)
    torque = equations.torque
    terms = request.terms_available + (('rotor',) if request.rotor and torque.identify_rotor_inertia
                                       and torque.compensate_rotor else ())
    if not (request.friction or request.method):
        return Findings(candidate, terms)
    ordinary = carried_route(equations, candidate, terms, request.friction, progress)
    problem = IdentificationProblem.of(equations, ordinary.candidate)
    if not regularized_open(problem, request):
        return Findings(candidate, terms, ordinary)
    free = [name for name in problem.parameter_names() if name not in problem.held]
    condition = excitation_condition(ordinary.first.extra['groups'].stacked()[:-1, :-1], free,
                                     sum(name in free for name in problem.rigid_names))
    if not condition > COND_SCALED_MAX:
        return Findings(candidate, terms, ordinary, condition)
    progress(f'weakly exciting log: cond(W) of the data alone with unit-norm columns {condition:.3g} > '
             f'{COND_SCALED_MAX:g}: OLS with the robot file\'s prior and physical consistency tried as the default')
    try:
        regularized = carried_route(equations, regularized_candidate(candidate, request, problem), tuple(
            t for t in request.terms_available if t != 'load'), True, progress)
    except InputError as error:
        regularized = f'the regularized identification failed: {error}'
    return Findings(candidate, terms, ordinary, condition, regularized)


def regularized_options(given: IdentifyOptions) -> IdentifyOptions:
    """The regularized default's solver: OLS (``REGULARIZED_METHOD``) with the robot file's prior and physical
    consistency ``always``."""
    physical = dataclasses.replace(given.physical, consistency='always')
    return dataclasses.replace(given, method=REGULARIZED_METHOD, physical=physical)


def regularized_candidate(candidate: Candidate, request: Request, problem: IdentificationProblem) -> Candidate:
    """The regularized route's superset: Coulomb + viscous friction (consistency takes no friction on τ_out), the
    rotor inertias' excess not a candidate, the parameters held that its columns still hold."""
    plain = dataclasses.replace(candidate, friction='viscous_coulomb', options=regularized_options(request.given),
                                rotor=candidate.rotor and not request.rotor)
    return plain.only_holding(IdentificationProblem.of(problem.prepared, plain).parameter_names())


def carried_route(equations: Equations, candidate: Candidate, terms: tuple[str, ...], open_friction: bool,
                  progress: Callable[[str], None]) -> Route:
    """The route's first estimate (module docstring), with what the data cannot carry left out: first the rotor
    inertias' excess (where its columns can go), then the load-dependent and temperature terms of an open law."""
    options = candidate.options
    once = dataclasses.replace(options, load_iterations=1)
    try:
        return _route(equations, candidate, terms, once)
    except InputError:
        if 'rotor' not in terms or equations.base_without_rotor is None:
            error = None
        else:
            candidate, terms = _without_rotor(equations, candidate), tuple(t for t in terms if t != 'rotor')
            progress('the data cannot carry the rotor inertias\' excess beside the other columns: not tried')
            try:
                return _route(equations, candidate, terms, once)
            except InputError as again:
                error = again
        if not open_friction or candidate.friction == 'viscous_coulomb' and not terms[1:]:
            if error is not None:
                raise error from None
            raise
    temperature = candidate.temperature and 'temperature' not in terms
    plain = dataclasses.replace(candidate, friction='viscous_coulomb', temperature=temperature)
    candidate = plain.only_holding(IdentificationProblem.of(equations, plain).parameter_names())
    progress('the data cannot carry the load-dependent or temperature terms beside the others: not tried')
    return _route(equations, candidate, terms[:1], once)


def _route(equations: Equations, candidate: Candidate, terms: tuple[str, ...], once: IdentifyOptions) -> Route:
    problem = IdentificationProblem.of(equations, candidate)
    exponents = np.full(equations.robot.n, equations.spec.exponent)
    given = identification_method(candidate.options.method)  # WLS where the method is open
    completes = prior_completes(problem, candidate.options)
    # a joint too short for a noise estimate of its own is weighted by the pooled noise where a prior completes its
    # rows, or where the method given weights no joint by its own noise (OLS): the start's weights only
    pooled = completes or not (given.joint_noise or given.drive_gains)
    first = load_loop(problem, START_METHOD, once, exponents, lambda text: None, pooled_short=pooled)[0]
    if not completes and first.extra.get('dependent'):  # what no prior completes: refused as without the pooling
        factor = first.extra['groups'].stacked()[:-1, :-1]  # the free columns' R factor, W's rank and groups
        check_identifiable(factor, [name for name in problem.parameter_names() if name not in problem.held],
                           r_w=factor)
    return Route(candidate, terms, first)


def _without_rotor(equations: Equations, candidate: Candidate) -> Candidate:
    """``candidate`` without the rotor inertias' columns (their parameters no longer held)."""
    plain = dataclasses.replace(candidate, rotor=False)
    return plain.only_holding(IdentificationProblem.of(equations, plain).parameter_names())


def regularized_open(problem: IdentificationProblem, request: Request) -> bool:
    """Whether the regularized default may replace the ordinary one (module docstring): the method left to dynid
    (``auto``; a given option is kept as given), physical consistency left to dynid or asked for (the regularized
    route is consistent: ``--physical`` takes it where the default would), the prior on and pulling (the robot file's
    holding links, or a result: :mod:`dynid.identify.solve.prior_source`), and nothing a consistent identification
    refuses (payload blocks, rigid-body parameters held, a friction law given that it cannot solve)."""
    physical = request.options.physical
    return bool(request.method and physical is not None and physical.prior and physical.consistency != 'never'
                and not consistency_refused(problem, request.friction)
                and physical.source(problem.robot).pulls())


def least_squares_bias(w, y, z, weights=None, joints=None, level: float = BIAS_LEVEL, way_out: str = '') -> Finding:
    """Whether IDIM-LS is biased on the rows ``w`` (r, p), ``y`` (r,), tested against the instruments ``z`` (r, p'),
    row for row (e.g. W of a simulated closed loop's noise-free states), each row weighted by ``weights`` (1/σ̂_j of
    its joint, as WLS weights; default 1), ``joints`` (r,) each row's joint (the rows' autocorrelation widens the
    variance; default: rows independent): :func:`dynid.identify.solve.hausman.durbin_wu_hausman` at ``level``, said
    by :func:`bias_finding` (``way_out``: its advice where LS is biased)."""
    return bias_finding(durbin_wu_hausman(w, y, z, weights, joints, level), way_out)


def bias_finding(test: HausmanTest, way_out: str = '') -> Finding:
    """The diagnosis's finding ('ls_bias') of a Durbin–Wu–Hausman test: its statistic, degrees of freedom and p-value,
    how far the IV estimate lies from LS in LS's own uncertainty, and ``way_out`` as its advice only where LS is biased
    (:attr:`HausmanTest.biased`): the front end's spelling of a method the closed loop does not bias
    (:attr:`dynid.identify.registry.IdentificationMethod.closed_loop_consistent`), '' for none."""
    figures = f'H = {test.statistic:.4g} on {test.dof} degrees of freedom, p = {test.p_value:.3g}'
    distance = f'the IV estimate at {test.distance:.4g} from LS in its own covariance'
    if test.biased:
        return Finding('ls_bias', [], f'IDIM-LS is biased on these rows by the Durbin-Wu-Hausman test against the '
                                     f'instruments ({figures} < {test.level:g}; {distance}, beyond its '
                                     f'{1 - test.level:.0%} bound {test.bound:.4g}): the closed-loop methods\' '
                                     f'estimates (instruments, output error) are not biased so', way_out)
    if test.rejects:
        return Finding('ls_bias', [], f'IDIM-LS differs from the instrumental-variable estimate by more than chance '
                                     f'({figures} < {test.level:g}) but by less than its own uncertainty ({distance}, '
                                     f'within its {1 - test.level:.0%} bound {test.bound:.4g}): no bias that matters, '
                                     f'least squares stands')
    return Finding('ls_bias', [], f'IDIM-LS shows no bias on these rows by the Durbin-Wu-Hausman test against the '
                                 f'instruments ({figures} >= {test.level:g}): least squares stands')
