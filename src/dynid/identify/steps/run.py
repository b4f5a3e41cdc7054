"""Identification: from recordings to an :class:`~dynid.identify.result.result.IdentificationResult`, as a pipeline of
steps that each take values and return a new one, changing nothing they are given.

==========  ===============================================  ==========================================================
step        module                                           what
==========  ===============================================  ==========================================================
settle      :mod:`dynid.identify.equations.request`          what the caller left open: the superset law, the method
                                                             to start from, the candidates' terms
read        :mod:`dynid.identify.equations.read`             the recordings in joint order, bridged and split at gaps
prepare     :mod:`dynid.identify.equations.prepare`          filtered, differentiated, regressor, decimated: the
                                                             equations, built once for every candidate, fold and fit
diagnose    :mod:`dynid.identify.steps.diagnose`             what the equations carry: joints held still, parameters
                                                             held, each route's first estimate, the weakly exciting
                                                             log's gate
choose      :mod:`dynid.identify.steps.choose`               the model by blocked cross-validation (a frozen candidate)
fit         :mod:`dynid.identify.steps.fit`                  the candidate solved by its method, the prior, consistency
check       :mod:`dynid.identify.steps.check`                the mass matrix and the gravity scale of the model
                                                             identified
result      :mod:`dynid.identify.steps.assemble`             the result file's sections
==========  ===============================================  ==========================================================

A law given (not chosen) keeps its load-dependent term only on the joints whose fit makes it friction
(:func:`load_terms_held`), as the choice keeps it.

Methods (:mod:`dynid.identify.steps.fit`): ``ols``, ``wls`` (the default), ``irls``, ``iirls`` (Li et al. 2024),
``tls`` and ``mls`` (Gautier and Briot 2014: drive gains with the parameters); ``auto`` where the choice decides.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from dynid.blas import one_blas_thread
from dynid.errors import InputError
from dynid.identify.equations.prepare import Equations, prepare
from dynid.identify.equations.problem import IdentificationProblem
from dynid.identify.equations.read import read
from dynid.identify.equations.request import IdentifyOptions, ModelSpec, RecordingInput, Request, change_text, settle
from dynid.identify.result.result import IdentificationResult
from dynid.identify.selection.candidates import load_not_tried
from dynid.identify.selection.choice import ModelChoice
from dynid.identify.steps.assemble import assemble
from dynid.identify.steps.check import check
from dynid.identify.steps.choose import choose, route_choice
from dynid.identify.steps.diagnose import Findings, diagnose_equations
from dynid.identify.steps.fit import Fit, fit
from dynid.model.drives import JointDrives
from dynid.model.robot import RobotModel
from dynid.signal.preprocess import FilterSettings

__all__ = ['IdentifyOptions', 'ModelSpec', 'RecordingInput', 'identify']


def identify(robot: RobotModel, recordings: list[RecordingInput], spec: ModelSpec | None = None,
             settings: FilterSettings | None = None, options: IdentifyOptions | None = None,
             drives: JointDrives | None = None, progress: Callable[[str], None] | None = None) -> IdentificationResult:
    """Identify ``robot`` from ``recordings`` (module docstring). BLAS runs one thread throughout
    (:func:`dynid.blas.one_blas_thread`: the products between the solvers too).

    >>> result = identify(load_robot('ur5e'), [RecordingInput(dataset)], ModelSpec(friction='auto'))  # doctest: +SKIP
    """
    progress = progress or (lambda text: None)
    with one_blas_thread():
        request = settle(recordings, spec or ModelSpec(), options or IdentifyOptions(),
                         drives is not None or robot.drives is not None)
        for change in request.changes:
            progress(change_text(change))
        progress(f'preparing {len(recordings)} recording(s): filtering, differentiating, regressor, decimation')
        reading = read(robot, recordings, settings or FilterSettings())
        equations = _freed(prepare(robot, reading, request.spec, settings, drives, request.drive_gains_unknown,
                                   keep_full_velocity=request.friction, laws=request.laws))
        findings = _freed(diagnose_equations(equations, request, progress))
        choice = _freed(choose(equations, findings, request, progress))
        problem, fitted, choice = _freed(fit_chosen(equations, findings, request, choice, progress))
        problem, fitted = load_terms_held(equations, request, problem, fitted, choice, progress)
        result = assemble(problem, fitted, choice, [*request.changes, *equations.torque.changes], findings.condition)
        progress('done')
        return check(result, problem, fitted)


def fit_chosen(equations: Equations, findings: Findings, request: Request, choice: ModelChoice | None,
               progress: Callable[[str], None]) -> tuple[IdentificationProblem, Fit, ModelChoice | None]:
    """The chosen candidate fitted (the model as asked where nothing was chosen), with the choice as it stands after
    the fit: where the regularized route won its folds and its consistent solve refuses on all the rows, the ordinary
    route instead (the record says why); where the folds chose physical consistency and its solver misses the optimum
    on all the rows, the auto rule instead (said in the result's warnings)."""
    if choice is None:
        problem = IdentificationProblem.of(equations, findings.candidate)
        return problem, fit(problem, progress), None
    record = choice.tried.get('regularized') or {}
    if record.get('kept'):
        try:
            return _fitted(equations, choice, progress)
        except InputError as error:
            declined = {**record, 'kept': False, 'reason': f'the regularized identification failed: {error}'}
            progress(f'weakly exciting log: the regularized default not kept ({declined["reason"]}): the ordinary '
                     f'defaults')
            choice = route_choice(equations, findings.ordinary, request, progress, declined=declined)
    return _fitted(equations, choice, progress)


def load_terms_held(equations: Equations, request: Request, problem: IdentificationProblem, fitted: Fit,
                    choice: ModelChoice | None, progress: Callable[[str], None]) -> tuple[IdentificationProblem, Fit]:
    """Where the law was given (not chosen) with a load-dependent term, the joints whose fitted term is no friction
    they have (:func:`dynid.identify.selection.candidates.load_not_tried` at τ_out of the fit: falling with the load,
    or adding more friction at the recording's largest output torque than that torque) hold it at 0, and the law is
    fitted again, until no joint's term is such (at most once per joint). ``model.held`` keeps the reason, which the
    result's warnings give. The model choice never keeps such a term
    (:mod:`dynid.identify.selection.laws`)."""
    if request.friction or fitted.w is None or 'Fl' not in (problem.law.roles or {}):
        return problem, fitted
    symbol, unit = problem.law.roles['Fl'], ' /(N·m)' if problem.law.load_shape == 'squared' else ''
    reasons = {why: f'the law given; its fit on the recording {text}' for why, text in (
        ('falling', 'had friction falling with the load (the load laws model friction that grows with it)'),
        ('beyond the load', 'adds more friction at the recording\'s largest output torque than that torque: the '
                            'recording does not load the joint enough to tell the term'))}
    for _ in range(problem.robot.n):
        names = problem.parameter_names()
        found = load_not_tried(problem, names, fitted.values, fitted.w, fitted.joints)  # τ_out of the fit's last pass
        if not found:
            break
        held = {f'{symbol}_{j + 1}': {'value': 0.0, 'reason': reasons[why]} for j, why in sorted(found.items())}
        values = ', '.join(f'{problem.robot.joint_names[j]} ({symbol}_{j + 1} '
                           f'{fitted.values[names.index(f"{symbol}_{j + 1}")]:.4g}{unit})' for j in sorted(found))
        problem = IdentificationProblem.of(equations, problem.candidate.holding(held))
        progress(f'load-dependent friction held at 0 on {values}: fitting again')
        fitted = fit(problem, progress, None if choice is None else choice.rigid_start)
    return problem, fitted


def _fitted(equations: Equations, choice: ModelChoice,
            progress: Callable[[str], None]) -> tuple[IdentificationProblem, Fit, ModelChoice]:
    problem = IdentificationProblem.of(equations, choice.winner)
    try:
        return problem, fit(problem, progress, choice.rigid_start), choice
    except InputError:  # the folds' consistency refused on all the rows (its solver): the auto rule instead
        if choice.fallback is None:
            raise
    problem = IdentificationProblem.of(equations, choice.fallback)
    fitted = fit(problem, progress, choice.rigid_start)
    note = ('physical consistency, chosen by cross-validation, was not reached on all the rows (the solver missed its '
            'optimum): the auto rule decided instead')
    return problem, dataclasses.replace(fitted, notes=(note,)), dataclasses.replace(choice, consistency=None)


def _freed(value):
    """``value``, the memory the step before freed handed back to the system (glibc keeps freed heap pages for
    reuse, and the next step's arrays would otherwise add to them: a 10-minute 1 kHz log's peak varied by ~80 MB)."""
    if _MALLOC_TRIM is not None:
        _MALLOC_TRIM(0)
    return value


def _malloc_trim():
    """glibc's ``malloc_trim``, or None where the C library has none."""
    import ctypes

    try:
        return ctypes.CDLL(None).malloc_trim
    except (AttributeError, OSError):
        return None


_MALLOC_TRIM = _malloc_trim()
