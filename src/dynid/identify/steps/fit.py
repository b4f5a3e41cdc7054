"""The fit step of an identification: one candidate solved (:class:`Fit`), by the candidate's method.

The methods are registered (:mod:`dynid.identify.methods`: one module each, its solve and what applies to it). A method
of the standard kind solves the rows W·χ = y in the load loop: models with load-dependent friction (``load_*``,
``hamon``, ``comprehensive``) iterate, τ_out starting from the robot model's own parameters (or the model choice's
first estimate) and updated from each estimate until it settles. Then the standard-parameter step
(:mod:`dynid.identify.solve.physical`): the robot file as a prior, physical consistency, where they apply to the
method (their rule book, which the diagnosis, the model choice and the result read too:
:mod:`dynid.identify.solve.physical_rules`). A method whose solve needs more (I-IRLS's friction loop, the drive-gain
methods) gives its own fit, over the loops of this module. Fitting changes neither the problem nor the candidate it is
given.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from dynid.errors import InputError
from dynid.identify.choices import FIX_DRIVE_GAIN
from dynid.identify.equations.problem import IdentificationProblem
from dynid.identify.equations.request import IdentifyOptions
from dynid.identify.registry import identification_method
from dynid.identify.selection.candidates import EXPONENT_GRID
from dynid.identify.solve.drive_gains import parse_fixed_gains, solve_drive_gains
from dynid.identify.solve.noise import TooFewRowsError
from dynid.identify.solve.physical import PhysicalSettings, identify_physical
from dynid.identify.solve.physical_rules import (
    consistency_not_checked,
    consistent_beside,
    output_torque_free,
    physical_not_applicable,
    prior_completes,
)
from dynid.identify.solve.rows import FreeColumns, RowGroups
from dynid.identify.solve.solvers import Estimate
from dynid.signal.preprocess import FilterSettings


def fit(problem: IdentificationProblem, progress: Callable[[str], None], rigid_start: np.ndarray | None = None) -> Fit:
    """``problem``'s candidate solved by its method (module docstring); ``rigid_start``: the base rigid parameters
    τ_out starts from in the load loop (default the robot file's)."""
    options = problem.candidate.options
    progress(f'solving {options.method.upper()} for {len(problem.parameter_names())} parameters')
    method = identification_method(options.method)
    if method.fit is not None:
        solved = method.fit(problem, options, progress, rigid_start)
    else:
        exponents = problem.candidate.exponents
        solved = _solve_standard(problem, options, rigid_start, progress,
                                 None if exponents is None else np.array(exponents))
    # named by the method asked for (the solvers name none: a registered variant's solve may be another's)
    return dataclasses.replace(solved, estimate=dataclasses.replace(solved.estimate, method=method.name))


def rows_context(settings: FilterSettings | None, joints: np.ndarray, n: int) -> str:
    """Where the equations came from, naming the rate and the filter settings that decide how many there are:
    'at 30 Hz the filters keep 17–18 samples per joint (one in 3 below 3.75 Hz, 0.8 s trimmed at each end;
    derived from the rate)'."""
    if settings is None or settings.rate_hz is None:
        return 'no filter settings'
    counts = np.bincount(joints, minlength=n)
    kept = f'{counts.min()}' if counts.min() == counts.max() else f'{counts.min()}–{counts.max()}'
    derived = [name for name in ('decimation_cutoff_hz', 'decimation', 'trim_s') if name in settings.derived]
    return (f'at {settings.rate_hz:.4g} Hz the filters keep {kept} samples per joint (one in {settings.decimation} '
            f'below {settings.decimation_cutoff_hz:.3g} Hz, {settings.trim_s:.3g} s trimmed at each end'
            + (f'; {", ".join(derived)} derived from the rate' if derived else '') + ')')


def nominal_rigid(problem: IdentificationProblem) -> np.ndarray:
    """Base rigid parameters of the robot model itself (payload blocks zero, nominal rotor inertia)."""
    robot = problem.robot
    standard = [robot.standard_parameters, np.zeros(9 * len(problem.payload_blocks))]
    if problem.identify_rotor_inertia:  # the excess over the drive data's B where B·θ̈ was subtracted: 0
        standard.append(problem.drives.rotor_inertia if problem.drives is not None and not problem.compensate_rotor
                        else np.zeros(robot.n))
    return problem.base.from_standard(np.concatenate(standard))


def with_held(estimate: Estimate, names: list[str], held: np.ndarray, held_values: np.ndarray) -> Estimate:
    """``estimate`` of the free parameters as one of all ``names``: the held ones at their values, σ 0."""
    if not held.any():
        return estimate
    values, covariance = np.zeros(len(names)), np.zeros((len(names), len(names)))
    values[~held], values[held] = estimate.values, held_values
    covariance[np.ix_(~held, ~held)] = estimate.covariance
    return dataclasses.replace(estimate, names=list(names), values=values, covariance=covariance)


def _free_system(w: np.ndarray, y: np.ndarray, joints: np.ndarray, held: np.ndarray, held_full: np.ndarray,
                 reduced_rows: bool, n: int):
    """(W's free columns, y with the held ones on the measured side, the rows reduced or None): for a method that
    solves from reduced rows (OLS, WLS) the rows reduced per block and joint
    (:class:`dynid.identify.solve.rows.RowGroups`) and W's free columns as a view; for the others (the robust methods
    reweight row by row), W's free columns as an array."""
    if not held.any():
        return w, y, RowGroups.of(w, y, joints, n=n) if reduced_rows else None
    free_y = y - w @ held_full
    if not reduced_rows:
        return w[:, ~held], free_y, None
    return FreeColumns(w, ~held), free_y, RowGroups.of(w, free_y, joints, n=n, columns=~held)


def load_loop(problem: IdentificationProblem, method: str, options: IdentifyOptions, exponents: np.ndarray,
               progress: Callable[[str], None], rigid_start: np.ndarray | None = None, pooled_short: bool = False
               ) -> tuple[Estimate, np.ndarray, np.ndarray, np.ndarray]:
    """Solve, updating τ_out from the estimate for load-dependent friction (from ``rigid_start``, default the robot
    file's parameters); returns the last system too. ``method``: its name (:mod:`dynid.identify.methods`);
    ``pooled_short``: WLS weights a joint with too few rows for a noise estimate of its own by the pooled noise instead
    of refusing (where the robot file's prior completes what its rows lack)."""
    solver = identification_method(method)
    names = problem.parameter_names()
    rigid_count = len(problem.rigid_names)
    rigid = nominal_rigid(problem) if rigid_start is None else rigid_start
    loads = output_torque_free(problem)  # a law with its every load term held needs one pass
    iterations = options.load_iterations if loads else 1
    held = np.array([name in problem.held for name in names])
    held_values = np.array([problem.held[name]['value'] for name in names if name in problem.held])
    free_names = [name for name, h in zip(names, held, strict=True) if not h]
    held_full = np.zeros(len(names))
    held_full[held] = held_values
    estimate = reduced = None
    for iteration in range(iterations):
        if iteration == 0:
            w, y, joints, _, _ = problem.equations(rigid, exponents)
        else:  # only τ_out's columns change: updated in this loop's own W
            _update_output_columns(problem, w, rigid, exponents)
        try:  # held parameters' columns go to the measured side (dynid.identify.equations.held)
            free_w, free_y, groups = _free_system(w, y, joints, held, held_full, solver.reduced_rows, problem.robot.n)
            reduced = solver.solve(free_w, free_y, joints, free_names, options=options,
                                   joint_names=problem.robot.joint_names, start=reduced, pooled_short=pooled_short,
                                   groups=groups)  # warm start
        except InputError as error:  # too few rows, or columns the rows cannot separate: say what made the rows
            prior = '' if pooled_short or 'WLS cannot estimate' not in str(error) else (
                '; or with the robot file\'s prior (the default; {prior}), which weights them by the pooled noise and '
                'completes what their rows lack')
            context = f' ({rows_context(problem.settings, joints, problem.robot.n)})'
            if isinstance(error, TooFewRowsError):  # the front end tries more rows and the methods it names
                raise TooFewRowsError(f'{error.template}{context}{prior}', fields=(*error.fields, 'prior'),
                                      methods=error.methods,
                                      finding=error.finding and error.finding + context) from None
            raise InputError(f'{error.template}{context}{prior}', fields=(*error.fields, 'prior')) from None
        estimate = with_held(reduced, names, held, held_values)
        change = np.linalg.norm(estimate.values[:rigid_count] - rigid) / max(np.linalg.norm(rigid), 1e-300)
        rigid = estimate.values[:rigid_count]
        if loads:
            progress(f'load loop {iteration + 1}: relative change of the rigid-body parameters {change:.2e}')
        if change < 1e-5:
            break
    return estimate, w, y, joints


def _update_output_columns(problem: IdentificationProblem, w: np.ndarray, rigid: np.ndarray, exponents: np.ndarray
                           ) -> None:
    """τ_out's columns of ``w`` rebuilt in place from the base rigid parameters ``rigid`` (no copy of them held past
    the update, through the solve that follows)."""
    index, columns = problem.output_columns(rigid, exponents)
    w[:, index] = columns


def fit_exponents(problem: IdentificationProblem, estimate: Estimate, exponents: np.ndarray,
                   options: IdentifyOptions, bounds: tuple[float, float] | None = None) -> np.ndarray:
    """Li's friction loop: per joint, the exponent α_j minimizing its weighted residual (others re-fitted), the
    search within ``bounds`` (default ``options.exponent_bounds``).

    Only the column of fv_j changes with α_j: the system is built once and joint j's other columns are
    projected out once (an orthonormal basis of their span), so each α costs one column's projection
    and gives the least-squares residual of the whole joint-j system.
    """
    import scipy.linalg
    import scipy.optimize  # here: a fifth of a second of import that the other methods skip

    names = problem.parameter_names()
    w, y, joints, _, _ = problem.equations(estimate.values[:len(problem.rigid_names)], exponents)
    weights = estimate.row_weights if estimate.row_weights.size == len(joints) else np.ones(len(joints))
    low, high = bounds or options.exponent_bounds
    new = exponents.copy()
    for j in range(problem.robot.n):
        rows = joints == j
        if not rows.any() or f'fv_{j + 1}' in problem.held:  # a left-out joint keeps its exponent
            continue
        column = names.index(f'fv_{j + 1}')
        wj = w[rows] * weights[rows, None]
        yj = y[rows] * weights[rows]
        used = np.linalg.norm(wj, axis=0) > 0
        used[column] = False
        # Project out the fixed columns once; each α then costs one column's projection.
        basis = scipy.linalg.orth(wj[:, used])
        remainder = yj - basis @ (basis.T @ yj)

        def residual_norm(alpha: float, basis=basis, remainder=remainder, rows=rows, j=j) -> float:
            feature = problem.power_feature(j, alpha) * weights[rows]
            scale = feature @ feature
            feature -= basis @ (basis.T @ feature)
            size = feature @ feature
            if size <= 1e-24 * scale:  # the feature lies in the fixed columns' span: it explains nothing more
                return float(np.linalg.norm(remainder))
            return float(np.linalg.norm(remainder - feature * ((feature @ remainder) / size)))

        found = scipy.optimize.minimize_scalar(residual_norm, bounds=(low, high), method='bounded',
                                               options={'xatol': 1e-3})
        # the bounded search never evaluates its bounds: the lower one (the grid's least exponent, where the data
        # may well want it) taken where it is no worse
        new[j] = low if residual_norm(low) <= found.fun else found.x
    return new


@dataclass(frozen=True)
class Fit:
    """What a candidate's solve gives the result (:func:`fit`): the estimate, its parameters (values, σ), the equations
    it was scored on (measured and predicted torque per row, ``joints`` the row's joint; ``w``/``y`` the system for the
    column RMS, None for the drive-gain methods), the drive gains, the exponents, and the standard-parameter step's
    outcome (None where it did not run) or the drive-gain solution (None for the other methods)."""

    estimate: Estimate
    names: list[str]
    values: np.ndarray
    std: np.ndarray
    joints: np.ndarray
    measured: np.ndarray
    predicted: np.ndarray
    exponents: np.ndarray
    gains: np.ndarray | None
    gains_std: np.ndarray | None = None
    w: np.ndarray | None = None
    y: np.ndarray | None = None
    outcome: object | None = None
    gain_solution: object | None = None

    notes: tuple[str, ...] = ()  # what the fit step said of itself (a fallback taken)

    @property
    def warnings(self) -> list[str]:
        """The fit step's notes, then the drive-gain solution's or the standard-parameter step's warnings."""
        source = self.gain_solution if self.gain_solution is not None else self.outcome
        return list(self.notes) + (list(source.warnings) if source is not None else [])


def _nominal_gains(problem: IdentificationProblem) -> np.ndarray | None:
    return None if problem.drives is None else problem.drives.drive_gain.copy()


def fit_with_gains(problem: IdentificationProblem, options: IdentifyOptions, progress: Callable[[str], None],
                   rigid_start: np.ndarray | None = None) -> Fit:
    """The fit of a drive-gain method (TLS, MLS): the drive gains and the parameters at once, solved by the method's
    own solve (:func:`dynid.identify.solve.drive_gains.solve_drive_gains`), the gains of its option ``fix_drive_gain``
    held; τ_out is not needed (linear laws only)."""
    nominal = None if problem.drives is None else problem.drives.drive_gain
    solve = identification_method(options.method).solve
    fixed = parse_fixed_gains(FIX_DRIVE_GAIN.value_in(options.method_options), problem.robot.joint_names)
    solution = solve_drive_gains(problem, solve, nominal_rigid(problem), fixed, nominal, options.method)
    return Fit(solution.estimate, problem.parameter_names(), solution.values, solution.std, solution.joints,
               solution.measured, solution.prediction_w @ solution.values,
               np.full(problem.robot.n, problem.spec.exponent), solution.gains, solution.gains_std,
               gain_solution=solution)


def _solve_standard(problem: IdentificationProblem, options: IdentifyOptions, rigid_start: np.ndarray | None,
                    progress: Callable[[str], None], exponents: np.ndarray | None = None) -> Fit:
    """OLS, WLS or IRLS with the load loop, then the standard-parameter step. With the robot file's prior, a joint too
    short for WLS's own noise estimate is weighted by the pooled one: the prior completes what its rows lack (said in
    the warnings); without it, WLS refuses by name. ``exponents``: the comprehensive law's α_j where the model choice
    chose them (default the spec's exponent on every joint)."""
    chosen = None if exponents is None else np.asarray(exponents) != 1.0
    exponents = np.full(problem.robot.n, problem.spec.exponent) if exponents is None else np.asarray(exponents)
    pooled = prior_completes(problem, options)
    estimate, w, y, joints = load_loop(problem, options.method, options, exponents, progress, rigid_start,
                                        pooled_short=pooled)
    if chosen is not None and chosen.any():  # Li's friction loop on the exponents the choice kept (as I-IRLS)
        for outer in range(options.load_iterations):
            updated = np.where(chosen, fit_exponents(problem, estimate, exponents, options,
                                                      bounds=(EXPONENT_GRID[0], 1.0)), 1.0)
            change = np.abs(updated - exponents).max()
            exponents = updated
            estimate, w, y, joints = load_loop(problem, options.method, options, exponents, progress,
                                                estimate.values[:len(problem.rigid_names)], pooled_short=pooled)
            progress(f'friction loop {outer + 1}: exponents {np.round(exponents, 3).tolist()}')
            if change < 1e-2:
                break
    return standard_solved(problem, options, estimate, w, y, joints, exponents, progress)


def standard_solved(problem: IdentificationProblem, options: IdentifyOptions, estimate: Estimate, w, y, joints,
                    exponents: np.ndarray, progress: Callable[[str], None]) -> Fit:
    """The :class:`Fit` of a linear ``estimate`` of the system (W, y, joints) after the standard-parameter step."""
    outcome, values, std, w, y = _standard_step(problem, options, estimate, w, y, joints, exponents, progress)
    return Fit(estimate, problem.parameter_names(), values, std, joints, y, w @ values, exponents,
                   _nominal_gains(problem), w=w, y=y, outcome=outcome)


def _standard_step(problem: IdentificationProblem, options: IdentifyOptions, estimate: Estimate, w, y, joints,
                   exponents: np.ndarray, progress: Callable[[str], None]):
    """The robot file as a prior and physical consistency on the linear solution of any method but the drive-gain
    ones (:mod:`dynid.identify.solve.physical`), weighted as the method weighted its rows (1/σ̂_j for WLS, the robust
    weights for IRLS and I-IRLS); (outcome or None, values, σ, W, y).

    Without a prior (--no-prior) the linear solution stays; the step still fits the robot file's own model, which
    validation predicts beside the identified one. Consistency is not checked where the model cannot take it
    without asking (:func:`dynid.identify.solve.physical_rules.consistency_not_checked`: friction on the output
    torque, I-IRLS, payload blocks) and the prior section says so. Friction on the output torque τ_out: τ_out is the
    model's own torque, so the equations are rebuilt from the estimate and solved again at the same weight: once with
    the prior alone, until the rigid-body parameters settle (as the load loop does, at most ``load_iterations``
    times) where consistency is asked for (``always``), so that the consistent links are those of the τ_out they
    make.
    """
    reason = physical_not_applicable(problem, options)
    if reason:
        return None, estimate.values, estimate.std, w, y
    settings = options.physical or PhysicalSettings(prior=False, consistency='never')
    skipped = consistency_not_checked(problem, options) if settings.consistency == 'auto' else None
    if skipped:
        settings = dataclasses.replace(settings, consistency='never')
    first = outcome = identify_physical(problem, estimate, w, y, joints, settings, progress,
                                        estimate.extra.get('groups'), exponents)
    always = settings.consistency == 'always'
    passes = 0
    if output_torque_free(problem) and (outcome.prior.get('used') or always):
        passes = options.load_iterations if always else 1
    fixed = dataclasses.replace(settings, prior_relative_std=outcome.prior['relative_std'])
    beside = None  # asked-for consistency's estimate, for validate to score on other motions (result.other_estimate)
    if skipped and outcome.prior.get('used') and consistent_beside(problem, options):
        # before the loop below, on the same W: the loop's first pass rebuilds every τ_out column (passes >= 1
        # here), so neither needs a second W
        beside = _consistent_beside_estimate(problem, estimate, w, y, joints, fixed, exponents,
                                             options.load_iterations)
    outcome = _output_torque_loop(problem, estimate, outcome, w, y, joints, fixed, exponents, passes, progress)
    if outcome is not first:
        outcome.prior.update(relative_std=first.prior['relative_std'], weight=first.prior.get('weight'),
                             cross_validation=first.prior.get('cross_validation'), rule=first.prior.get('rule'))
    if skipped:
        outcome.prior['consistency']['decision'] = 'not checked'
        outcome.prior['consistency']['note'] = f'physical consistency not checked: {skipped}'
    if isinstance(beside, str):
        outcome.prior['consistency']['note'] += f'; its physically consistent estimate not computed: {beside}'
    elif beside is not None:
        outcome.prior['consistency']['other_estimate'] = beside
    return outcome, outcome.values, outcome.std, w, y


def _consistent_beside_estimate(problem: IdentificationProblem, estimate: Estimate, w, y, joints,
                                settings: PhysicalSettings, exponents, iterations: int) -> dict | str:
    """The estimate asking for physical consistency gives (τ_out iterated, in ``w``'s τ_out columns), as the
    consistency section's ``other_estimate``; where its solver misses the optimum, the reason (none is kept)."""
    always = dataclasses.replace(settings, consistency='always')
    try:
        consistent = identify_physical(problem, estimate, w, y, joints, always, lambda _: None,
                                       estimate.extra.get('groups'), exponents)
        consistent = _output_torque_loop(problem, estimate, consistent, w, y, joints, always, exponents, iterations,
                                         lambda _: None)
    except InputError as error:
        return str(error).split(';')[0]
    return {'physically_consistent': True,
            'values': dict(zip(problem.parameter_names(), consistent.values.tolist(), strict=True))}


def _output_torque_loop(problem: IdentificationProblem, estimate: Estimate, outcome, w, y, joints,
                        settings: PhysicalSettings, exponents, passes: int, progress: Callable[[str], None]):
    """``outcome`` solved again at most ``passes`` times with τ_out's columns of ``w`` rebuilt from its rigid-body
    parameters (:func:`_standard_step`), until they change by less than 1e-4 (relative); said where consistency is
    asked for."""
    count = len(problem.rigid_names)
    for step in range(passes):  # τ_out's columns updated in the load loop's W
        rigid = outcome.values[:count]
        _update_output_columns(problem, w, rigid, exponents)
        outcome = identify_physical(problem, estimate, w, y, joints, settings, progress, exponents=exponents)
        change = np.linalg.norm(outcome.values[:count] - rigid) / max(np.linalg.norm(rigid), 1e-300)
        if settings.consistency == 'always':
            progress(f'consistent load loop {step + 1}: relative change of the rigid-body parameters {change:.2e}')
        if change < 1e-4:
            break
    return outcome
