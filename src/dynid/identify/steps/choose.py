"""The choose step: the model chosen by blocked cross-validation where the caller did not choose (``friction='auto'``,
``method='auto'``). What the choice varies (the candidates): :mod:`dynid.identify.selection.choice`.

Each route (:class:`dynid.identify.steps.diagnose.Route`) gives the superset candidate, its first WLS estimate and its
system; the candidate columns (a viscous exponent, a Stribeck excess per joint:
:mod:`dynid.identify.selection.candidates`) are made at τ_out of that estimate, and the rows are cut into the prior's
folds (:mod:`dynid.identify.selection.folds`), reduced once, so that every candidate's fold solve is a least squares of
a few hundred rows. Joint by joint (two passes, :mod:`dynid.identify.selection.laws`), the joint's candidate laws are
tried with the others fixed and judged by the joint's own score (its columns act on its rows alone); the simplest law
within :data:`CHOICE_MARGIN` of the least score is kept (a richer law must earn its columns). The method
(:mod:`dynid.identify.selection.method_choice`): each registered method's row weights for the choice (IRLS's robust
ones, from one reweighting of all rows), then the same MAP on each fold's training rows; one is kept over WLS where the
sum of the joints' scores is lower by more than :data:`METHOD_MARGIN`. Physical consistency, where the ``auto`` rule
would decline it on all the rows (:func:`_consistency_gate`), by the folds too. The robot file's own model is scored on
the same folds; a joint it predicts as well or better is named, by the rule validate names it by
(:mod:`dynid.identify.result.lead`: a warning where it is clearly ahead, else a line with the lead).

**Weakly exciting logs** (the diagnose step's gate, :func:`dynid.identify.steps.diagnose.diagnose_equations`): the laws
are chosen as above on the regularized route (OLS with the prior and consistency ``always``); the model chosen is then
scored as it will be solved (equal row weights, each fold's estimate the consistent optimum of its training rows)
beside the robot file's own model, and :func:`_regularized_verdict` says whether that default is kept; where not, the
ordinary route follows, the record kept in the choice.

The winner is a frozen :class:`~dynid.identify.equations.problem.Candidate` (:func:`narrowed`): the route's superset
narrowed to the laws chosen, with the method and consistency chosen. Details and figures:
docs/methods/identification.md.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import numpy as np

from dynid.blas import one_blas_thread
from dynid.errors import InputError
from dynid.identify.choices import WEIGHT_FUNCTION
from dynid.identify.equations.joint_side import joint_side_choice
from dynid.identify.equations.prepare import Equations
from dynid.identify.equations.problem import Candidate, IdentificationProblem
from dynid.identify.equations.request import Request
from dynid.identify.registry import REGULARIZED_METHOD, START_METHOD
from dynid.identify.result.lead import judge
from dynid.identify.result.quality import COND_SCALED_MAX
from dynid.identify.result.stribeck import StribeckExcess
from dynid.identify.selection.candidates import load_not_tried, power_candidates, stribeck_candidates
from dynid.identify.selection.choice import (
    CANDIDATE_COLUMNS,
    CHOICE_MARGIN,
    INCONSISTENT_TERMS,
    METHOD_MARGIN,
    OPTIONAL_TERMS,
    ModelChoice,
    dropped_reason,
)
from dynid.identify.selection.folds import Folds, restricted, summed
from dynid.identify.selection.laws import TermColumns, friction_laws
from dynid.identify.selection.method_choice import method_by_folds
from dynid.identify.selection.whole_laws import Scoring, whole_law_choice
from dynid.identify.solve.constrained import consistent_optimum
from dynid.identify.solve.physical_rules import consistency_open
from dynid.identify.solve.prior import ReducedRows
from dynid.identify.steps.diagnose import Findings, Route


def choose(equations: Equations, findings: Findings, request: Request,
           progress: Callable[[str], None]) -> ModelChoice | None:
    """The model by cross-validation where the caller left the friction law or the method open (module docstring); None
    where nothing is open. On a weakly exciting log (``findings.weak``) the regularized route first, kept where its
    folds beat the robot file's own model; else the ordinary route, with the regularized route's record."""
    if findings.ordinary is None:
        return None
    declined = None
    if findings.weak:
        record = {'condition_scaled': findings.condition, 'threshold': COND_SCALED_MAX, 'kept': None,
                  'solver': request.given.physical.solver}
        if isinstance(findings.regularized, str):
            declined = {**record, 'kept': False, 'reason': findings.regularized}
        else:
            try:
                choice = route_choice(equations, findings.regularized, request, progress, regularized=record)
            except InputError as error:
                declined = {**record, 'kept': False, 'reason': f'the regularized identification failed: {error}'}
            else:
                if choice.tried['regularized']['kept']:
                    return choice
                declined = choice.tried['regularized']
        progress(f'weakly exciting log: the regularized default not kept ({declined["reason"]}): the ordinary '
                 f'defaults')
    return route_choice(equations, findings.ordinary, request, progress, declined=declined)


def route_choice(equations: Equations, route: Route, request: Request, progress: Callable[[str], None],
                 regularized: dict | None = None, declined: dict | None = None) -> ModelChoice:
    """The choice on one route (:class:`dynid.identify.steps.diagnose.Route`): its candidate columns made at τ_out of
    the first estimate, the folds' choice (:func:`cross_validate`), and the winner: the route's candidate narrowed to
    the laws chosen, with the method and consistency chosen. ``regularized``: the gate's record, where this is the
    regularized route (its method is given: OLS); ``declined``: that record where the ordinary route follows it."""
    candidate, terms, first = route.candidate, route.terms, route.first
    options = candidate.options
    problem = IdentificationProblem.of(equations, candidate)
    rigid = first.values[:len(problem.rigid_names)]
    # τ_out of the first estimate, not of the robot file; room for the candidates' columns (no copy of W to add them)
    spare = 2 * problem.robot.n if request.friction else 0
    system, y, joints, _, _ = problem.equations(rigid, spare=spare)
    w = system[:, :system.shape[1] - spare]
    physical = options.physical
    names = problem.parameter_names()
    load_excluded = load_not_tried(problem, names, first.values, w, joints)
    open_friction, open_method = request.friction, request.method and regularized is None
    # the regularized route's law stays Coulomb + viscous with an offset or a Stribeck excess (no viscous exponent)
    power = power_candidates(problem, w, y, joints, first.row_weights) if open_friction and regularized is None \
        else None
    stribeck = stribeck_candidates(problem, w, y, joints, first.row_weights) if open_friction else None
    made = [candidates[j][1] for candidates in (power, stribeck) if candidates for j in sorted(candidates)]
    if made:  # the candidates' columns beside the others, in the room left for them
        system[:, w.shape[1]:w.shape[1] + len(made)] = np.column_stack(made)
        w = system[:, :w.shape[1] + len(made)]
    with one_blas_thread():
        choice = cross_validate(problem, w, y, joints, first.row_weights, choose_friction=open_friction,
                                choose_method=open_method, terms_available=terms,
                                use_prior=physical is not None and physical.prior,
                                prior_std=None if physical is None else physical.given_std,
                                prior_source=None if physical is None else physical.prior_source,
                                weight_function=WEIGHT_FUNCTION.value_in(options.method_options),
                                load_excluded=load_excluded, power=power,
                                stribeck=stribeck, consistency=physical if consistency_open(
                                    problem, options, terms, open_friction) else None,
                                regularized=None if regularized is None else dict(regularized), method=options.method,
                                progress=progress)
    if declined is not None:
        choice = dataclasses.replace(choice, tried={**choice.tried, 'regularized': declined})
    winner, rigid = narrowed(problem, choice, terms, open_friction, rigid)
    if open_friction and regularized is None and request.laws:  # the laws registered beside dynid's, tried whole
        scoring = Scoring(rigid, first.joint_sigma, physical is not None and physical.prior,
                          None if physical is None else physical.given_std,
                          None if physical is None else physical.prior_source)
        whole = whole_law_choice(equations, winner, problem.candidate.held, request.laws, scoring,
                                 bool(choice.consistency))
        winner, tried = whole.winner, {**choice.tried, 'laws': whole.record}
        if whole.leads is None:
            choice = dataclasses.replace(choice, tried=tried)
        else:  # a registered law won: the per-joint laws' shapes went with them, the robot file judged against it
            names = problem.robot.joint_names
            tried['chosen_per_joint'] = dict(zip(names, whole.scores.tolist(), strict=True))
            tried['robot_file_per_joint'] = dict(zip(names, whole.robot_file_scores.tolist(), strict=True))
            ahead = {names[j]: lead for j, lead in enumerate(whole.leads) if lead.named}
            choice = dataclasses.replace(choice, tried=tried, exponents=None, stribeck=None, robot_file_ahead=ahead)
    if open_method:
        winner = dataclasses.replace(winner, options=dataclasses.replace(winner.options, method=choice.method))
    fallback = None
    if choice.consistency:  # chosen by the folds where the auto rule would have declined it
        fallback = winner
        winner = dataclasses.replace(winner, options=dataclasses.replace(winner.options, physical=dataclasses.replace(
            winner.options.physical, consistency=choice.consistency)))
    for line in choice.lines():
        progress(line)
    return dataclasses.replace(choice, winner=winner, rigid_start=rigid, fallback=fallback)


def narrowed(problem: IdentificationProblem, choice: ModelChoice, terms: tuple[str, ...], open_friction: bool,
             rigid: np.ndarray) -> tuple[Candidate, np.ndarray]:
    """The route's candidate narrowed to the laws ``choice`` chose: the columns a joint's law leaves out held at 0, the
    narrowest law family holding every joint's law (Li's comprehensive law where a joint keeps a viscous exponent: α = 1
    on the others, its load term held at 0 on the joints whose law has none), the rotor inertias' columns left out
    where no joint keeps their excess, the Stribeck excess's columns where a joint keeps it (held at 0 on the others);
    and ``rigid`` (the first estimate's base rigid parameters, τ_out's start) without the rotor inertias' where they
    went."""
    equations, candidate = problem.prepared, problem.candidate.holding(choice.dropped)
    if not open_friction:
        return candidate, rigid
    if 'joint_side' in choice.tried:  # the joints that keep their own friction (dynid.identify.equations.joint_side)
        candidate = dataclasses.replace(candidate, joint_side=tuple(
            j for j in candidate.joint_side
            if choice.tried['joint_side'].get(problem.robot.joint_names[j], {}).get('kept')))
    chosen = {term for law in choice.terms.values() for term in law}
    friction = 'load_squared' if 'load' in chosen else 'viscous_coulomb'
    temperature = candidate.temperature and ('temperature' in chosen or 'temperature' not in terms)
    candidate = _holding_own(equations, dataclasses.replace(candidate, friction=friction, temperature=temperature))
    if choice.exponents is not None:  # a viscous exponent chosen on some joint: Li's law holds every joint's
        candidate = dataclasses.replace(_comprehensive(candidate, equations),
                                        exponents=tuple(float(alpha) for alpha in choice.exponents))
        candidate = _holding_own(equations, candidate.holding({  # fL_j: the load term, only where the folds kept it
            f'fL_{j + 1}': {'value': 0.0, 'reason': dropped_reason(joint, choice.terms[joint])}
            for j, joint in enumerate(problem.robot.joint_names) if 'load' not in choice.terms[joint]}))
    if 'rotor' in terms and equations.base_without_rotor is not None and \
            not any('rotor' in law for law in choice.terms.values()):
        rigid = rigid[np.array([not name.startswith('Ia_') for name in equations.base.names])]
        candidate = _holding_own(equations, dataclasses.replace(candidate, rotor=False))
    if choice.stribeck is not None:  # its column Fs on every joint, held at 0 where the joint did not keep it
        candidate = dataclasses.replace(candidate, stribeck=choice.stribeck).holding({
            f'Fs_{j + 1}': {'value': 0.0, 'reason': dropped_reason(joint, choice.terms[joint])}
            for j, joint in enumerate(problem.robot.joint_names) if not choice.stribeck.joints[j]})
    return candidate, rigid


def _holding_own(equations: Equations, candidate: Candidate) -> Candidate:
    """``candidate`` holding only the parameters its columns have."""
    return candidate.only_holding(IdentificationProblem.of(equations, candidate).parameter_names())


#: Li et al. 2024's symbols of the Coulomb + viscous law's columns (the comprehensive law, eq. (3)).
_COMPREHENSIVE_SYMBOLS = dict(zip(('Fc', 'Fv', 'tau0', 'Fl'), ('fc', 'fv', 'fo', 'fL'), strict=True))


def _comprehensive(candidate: Candidate, equations: Equations) -> Candidate:
    """``candidate`` of Coulomb + viscous friction (with the offset and the load term, or not) as Li et al. 2024's
    comprehensive law (eq. (3)): the same columns under its symbols, fv_j = sgn(ω)·|ω|^α_j (α_j = 1: the viscous column
    as it was); the parameters held keep their values."""
    if candidate.friction not in ('viscous_coulomb', 'load_squared') or not equations.keep_full_velocity:
        raise InputError(f'no comprehensive law from friction {candidate.friction!r} (or without the full-rate '
                         f'velocity)')
    held = []
    for entry in candidate.held:
        symbol, _, joint = entry.name.rpartition('_')
        name = f'{_COMPREHENSIVE_SYMBOLS[symbol]}_{joint}' if symbol in _COMPREHENSIVE_SYMBOLS else entry.name
        held.append(dataclasses.replace(entry, name=name))
    return dataclasses.replace(candidate, friction='comprehensive', held=tuple(held))


def cross_validate(problem, w: np.ndarray, y: np.ndarray, joints: np.ndarray, weights: np.ndarray, *,
           choose_friction: bool, choose_method: bool, terms_available: tuple[str, ...], use_prior: bool,
           prior_std: float | None = None, weight_function: str = 'huber', load_excluded=None, power=None,
           stribeck=None, consistency=None, regularized: dict | None = None, method: str = START_METHOD,
           progress=lambda text: None, prior_source=None) -> ModelChoice:
    """The friction terms per joint and the method by blocked cross-validation (module docstring).

    Args:
        problem: the identification problem built with every candidate column (its ``held`` set).
        w, y, joints, weights: its equations (τ_out from a first estimate; the columns of ``power``'s and
            ``stribeck``'s candidates after the problem's) and the WLS row weights 1/σ̂_j.
        choose_friction, choose_method: what the caller left open. terms_available: of :data:`OPTIONAL_TERMS`.
        method: the method given where not open (labels the consistency candidates; their folds weight as WLS).
        use_prior, prior_std, prior_source: the prior (s None: by cross-validation; source None: the robot file).
        load_excluded: {joint index: why} of :func:`dynid.identify.selection.candidates.load_not_tried`
            (:func:`dynid.identify.selection.laws.friction_laws`).
        power: {joint: (α̂_j, its column on the rows)} the viscous exponents to try (module docstring), or None.
        stribeck: {joint: (Vs_j, its column on the rows, μ_j)} the Stribeck excesses to try, or None.
        consistency: the :class:`~dynid.identify.solve.physical.PhysicalSettings` where physical consistency is
            open (its ``auto`` rule: module docstring), or None.
        regularized: the record of the weakly exciting log's gate (``dynid.identify.steps.choose.choose``: its
            ``solver``) where the regularized default is tried: the model chosen is then scored as it will be
            solved (equal row weights, each fold's estimate the consistent optimum of its training rows) beside the
            robot file's own model, and the record gets both sums and ``kept`` (the regularized default predicts
            the held-out blocks better).
    """
    names = problem.parameter_names()
    n, joint_names = problem.robot.n, problem.robot.joint_names
    for term, candidates in (('power', power), ('stribeck', stribeck)):
        if candidates:  # the candidates' columns beside the others (``w`` holds them), as the optional term
            names = names + [f'{CANDIDATE_COLUMNS[term]}_{j + 1}' for j in sorted(candidates)]
            terms_available = terms_available + (term,)
    held = np.array([name in problem.held for name in names], dtype=bool)
    held_values = np.array([problem.held[name]['value'] for name in names if name in problem.held])
    if held.any():  # held columns on the measured side (their values), kept out of every candidate
        y = y - w[:, held] @ held_values
    folds = Folds(problem, w, y, joints, weights, held, use_prior, prior_std, names, source=prior_source)
    columns = TermColumns(names, n, ~held)
    terms = {j: tuple(t for t in ('offset',) if t in terms_available) for j in range(n)}
    tried: dict = {}
    if choose_friction:
        terms = friction_laws(problem, folds, columns, terms, terms_available, load_excluded or {}, tried)
        if stribeck:
            tried['stribeck_candidates'] = {joint_names[j]: [float(stribeck[j][0]), float(stribeck[j][2])]
                                            for j in sorted(stribeck)}
        columns = _joint_side_chosen(problem, folds, columns, terms, names, held, tried)
    chosen = columns.mask(terms)
    per_fold = folds.fold_scores(chosen)
    method, trained, consistent = START_METHOD if choose_method else method, None, None
    if choose_method:
        method, per_fold, tried['method'], trained = method_by_folds(folds, w, y, joints, chosen, per_fold,
                                                                    weight_function)
    if consistency is not None:
        method, terms, per_fold, consistent, tried['consistency'] = _choose_consistency(
            problem, folds, columns, (w, y, joints), terms, method, per_fold, trained, consistency, choose_method)
        chosen = columns.mask(terms)
    if regularized is not None:  # scored as it is solved: OLS, consistent (the prior's weight cross-validated again)
        folds = Folds(problem, w, y, joints, np.ones(len(y)), held, use_prior, None, names, folds.groups, folds.source)
        per_fold = folds.fold_scores(chosen, None, regularized['solver'])
    scores = summed(per_fold)
    theirs_per_fold = folds.robot_file_fold_scores(chosen) if folds.use_prior or any(
        link.in_prior for link in folds.links) else np.full(per_fold.shape, np.nan)
    theirs = summed(theirs_per_fold)
    leads = judge(per_fold, theirs_per_fold)
    tried['chosen_per_joint'] = dict(zip(joint_names, scores.tolist(), strict=True))
    tried['robot_file_per_joint'] = dict(zip(joint_names, theirs.tolist(), strict=True))
    tried['prior_relative_std'] = folds.std if folds.use_prior else None
    if regularized is not None:
        _regularized_verdict(regularized, folds, chosen, per_fold, theirs_per_fold)
        tried['regularized'] = regularized
    ahead = {joint_names[j]: leads[j] for j in range(n) if leads[j].named}
    dropped = _dropped_columns(joint_names, terms, terms_available, columns, held, names)
    exponents = np.array([power[j][0] if 'power' in terms[j] else 1.0 for j in range(n)]) \
        if any('power' in terms[j] for j in range(n)) else None
    kept = [j for j in range(n) if 'stribeck' in terms[j]]
    excess = StribeckExcess(np.array([stribeck[j][0] if j in kept else np.nan for j in range(n)]),
                            np.array([stribeck[j][2] if j in kept else np.nan for j in range(n)])) if kept else None
    return ModelChoice({joint_names[j]: terms[j] for j in range(n)}, method, dropped, tried, ahead, exponents,
                       excess, consistent)


def _joint_side_chosen(problem, folds: Folds, columns: TermColumns, terms: dict, names: list[str], held: np.ndarray,
                       tried: dict) -> TermColumns:
    """The joints' own friction kept or not by the folds, on the laws chosen
    (:func:`dynid.identify.equations.joint_side.joint_side_choice`, its table in ``tried['joint_side']``); the columns
    of those not kept no longer free."""
    if not problem.joint_side:
        return columns
    _, dropped, tried['joint_side'] = joint_side_choice(folds, columns.mask(terms), names, problem.joint_side,
                                                        problem.coupling, CHOICE_MARGIN)
    if not dropped:
        return columns
    free = ~held
    free[dropped] = False
    return TermColumns(names, problem.robot.n, free)


def _dropped_columns(joint_names, terms: dict, terms_available, columns: TermColumns, held: np.ndarray,
                     names: list[str]) -> dict:
    """{parameter: {'value': 0, 'reason'}} of the optional terms' columns a joint's law left out (held at 0 by the
    identification); the candidates' own columns (fp_j, Fs_j) are the choice's alone and not among them."""
    dropped = {}
    for j, name in enumerate(joint_names):
        for term in (t for t in OPTIONAL_TERMS if t not in CANDIDATE_COLUMNS):
            if term in terms_available and term not in terms[j]:
                for c in columns.of[term][j]:
                    if not held[c]:
                        dropped[names[c]] = {'value': 0.0, 'reason': dropped_reason(name, terms[j])}
    return dropped


def _regularized_verdict(record: dict, folds: Folds, chosen: np.ndarray, per_fold: np.ndarray,
                         theirs_per_fold: np.ndarray) -> None:
    """Whether the regularized default is kept (``record['kept']``, with the figures): the prior must complete what
    the data lack, cond(W·D) of the data and the prior together
    (:func:`dynid.identify.solve.prior.information_condition_numbers` of the MAP problem of all rows, the figure the
    refusal judges) at most ``COND_SCALED_MAX`` (columns the prior does not reach, a Coulomb term beside an offset on a
    joint whose velocity keeps one sign, stay undetermined), and its summed held-out score lower than the robot file's
    own model's on the same folds."""
    from dynid.identify.result.quality import COND_SCALED_MAX
    from dynid.identify.solve.prior import information_condition_numbers, posterior_covariance

    layout, prior = folds.layout(chosen)
    reduced = layout.problem(restricted(folds.data, chosen), prior, folds.std if folds.use_prior else None)
    x = reduced.map_estimate()
    condition = information_condition_numbers(posterior_covariance(reduced, x, layout.to_base))[1]
    score, robot_file = float(np.nansum(per_fold)), float(np.nansum(theirs_per_fold))
    record.update(condition_with_prior=condition if np.isfinite(condition) else None,
                  score=score if np.isfinite(score) else None, robot_file_score=robot_file)
    if not condition <= COND_SCALED_MAX:
        record.update(kept=False, reason=f'the prior does not complete what the data lack: cond(W) of the data and '
                                         f'the prior {condition:.3g} > {COND_SCALED_MAX:g}')
    elif not np.isfinite(score):
        record.update(kept=False, reason='the consistent solve missed its optimum on a fold')
    else:
        record['kept'] = bool(score < robot_file)
        if not record['kept']:
            record['reason'] = 'the robot file\'s own model predicts the held-out blocks better'


def _consistency_gate(folds: Folds, free: np.ndarray, settings) -> tuple[bool, dict]:
    """Whether the ``auto`` rule of :mod:`dynid.identify.solve.physical` would decline consistency on all the rows (the
    MAP estimate not consistent and the constrained one costing more than ``consistency_cost_max_percent`` of the
    training χ²): only then do the folds decide (a log that determines the links well needs no more). Returns the
    answer and what was found, for ``tried``."""
    layout, prior = folds.layout(free)
    reduced = layout.problem(restricted(folds.data, free), prior, folds.std if folds.use_prior else None)
    x, x_map, status = consistent_optimum(reduced, settings.solver)
    if status == 'consistent':
        return False, {'gate': 'the MAP estimate of all rows is physically consistent'}
    if x is None:
        return False, {'gate': f'the physical solve of all rows did not reach its optimum ({status})'}
    floor = reduced.data_cost(x_map)
    cost = 100.0 * (reduced.data_cost(x) / floor - 1.0) if floor > 0 else 0.0
    if cost <= settings.consistency_cost_max_percent:
        return False, {'gate': 'consistency costs at most the auto rule\'s limit', 'cost_percent': cost}
    return True, {'gate': 'consistency costs more than the auto rule\'s limit: the folds decide', 'cost_percent': cost}


def _choose_consistency(problem, folds: Folds, columns: TermColumns, system, terms: dict[int, tuple[str, ...]],
                        method: str, per_fold: np.ndarray, trained: list[ReducedRows] | None, settings,
                        choose_method: bool):
    """Physical consistency (and, where the method is open, OLS's equal row weights) by the folds, where the
    ``auto`` rule would decline it (:func:`_consistency_gate`). Candidates: the method chosen with each fold's
    estimate the consistent optimum of its training rows (the laws without :data:`INCONSISTENT_TERMS`); OLS as it is
    and consistent (the prior's weight cross-validated again for its rows: the weighting sets the data's scale
    against the prior's). The least summed held-out score is kept where it is lower than the model chosen so far by
    more than :data:`METHOD_MARGIN`. Returns the method, the laws, the (folds, n) scores, 'always' or None, and what
    was tried."""
    w, y, joints = system
    plain_terms = {j: tuple(t for t in law if t not in INCONSISTENT_TERMS) for j, law in terms.items()}
    plain = columns.mask(plain_terms)
    open_, tried = _consistency_gate(folds, plain, settings)
    if not open_:
        return method, terms, per_fold, None, tried
    candidates = {(method, None): (terms, per_fold),
                  (method, 'always'): (plain_terms, folds.fold_scores(plain, trained, settings.solver))}
    if choose_method:
        equal = Folds(problem, w, y, joints, np.ones(len(y)), folds.fixed, folds.use_prior, None, folds.names,
                      folds.groups, folds.source)
        candidates[(REGULARIZED_METHOD, None)] = (terms, equal.fold_scores(columns.mask(terms)))
        candidates[(REGULARIZED_METHOD, 'always')] = (plain_terms, equal.fold_scores(plain, None, settings.solver))
        tried['ols_prior_relative_std'] = equal.std if equal.use_prior else None
    sums = {key: float(np.nansum(scores)) for key, (_, scores) in candidates.items()}
    tried['scores'] = {method_ + ('+physical' if consistent else ''): value if np.isfinite(value) else None
                       for (method_, consistent), value in sums.items()}
    names = problem.robot.joint_names
    tried['per_joint'] = {method_ + ('+physical' if consistent else ''): {
        joint: float(value) if np.isfinite(value) else None for joint, value in zip(names, summed(scores),
                                                                                    strict=True)}
        for (method_, consistent), (_, scores) in candidates.items()}
    best = min(sums, key=sums.get)
    if sums[best] >= sums[(method, None)] * (1.0 - METHOD_MARGIN):
        best = (method, None)
    tried['chosen'] = best[0] + ('+physical' if best[1] else '')
    return best[0], candidates[best][0], candidates[best][1], best[1], tried


