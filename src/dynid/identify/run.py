"""Identification: from recordings to an :class:`IdentificationResult`, with each method of the seeds.

=========  ==============================================================================================
method     what
=========  ==============================================================================================
``ols``    ordinary LS (QR)
``wls``    LS with per-joint weights 1/σ̂_j (thesis ch.5, Gautier & Briot; the default)
``irls``   robust reweighting (Huber, Tukey, Cauchy) from the WLS solution
``iirls``  Li et al. 2024: IRLS on the comprehensive friction model with the load torque τ_out updated
           from the estimate (load loop) and the viscous exponent α_j re-fitted per joint (friction loop)
``tls``    Gautier & Briot 2014 IDIM-TLS: drive gains and parameters at once, scaled by a known payload
           mass (needs recordings with and without the payload)
``mls``    the "modified LS" of Gautier & Briot eq. (16) for the same problem (biased; for comparison)
=========  ==============================================================================================

Models with load-dependent friction (``load_*``, ``hamon``, ``comprehensive``) iterate: τ_out starts
from the robot model's own parameters and is updated from each estimate until it settles.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from dynid.errors import InputError, checked_choice
from dynid.identify.choices import AUTO, METHODS
from dynid.identify.drive_gains import solve_drive_gains
from dynid.identify.held import left_out, structural_offsets
from dynid.identify.metrics import equation_metrics
from dynid.identify.model import (
    IdentificationProblem,
    ModelSpec,
    RecordingInput,
    _structural_base,
)
from dynid.identify.physical import (
    PHYSICAL_FRICTION,
    PHYSICAL_METHODS,
    PhysicalSettings,
    identify_physical,
    mass_matrix_check,
)
from dynid.identify.plausibility import gravity_scale_check
from dynid.identify.prior import robot_file_links
from dynid.identify.quality import (
    COND_SCALED_MAX,
    NEGLIGIBLE_TORQUE_FRACTION,
    POORLY_IDENTIFIED_PERCENT,
    misfit_warning,
    negligible_mask,
    residual_autocorrelation,
)
from dynid.identify.result import IdentificationResult
from dynid.identify.settings import IdentifierSettings
from dynid.identify.solvers import NOISE_FLOOR_FRACTION, Estimate, TooFewRowsError, irls, ols, one_blas_thread, wls
from dynid.identify.stribeck import STRIBECK_SHAPES, StribeckExcess, stribeck_decay
from dynid.model.drives import JointDrives
from dynid.model.robot import RobotModel
from dynid.signal.preprocess import FilterSettings

# Hamon 2010 eq. (30): the columns of am1_j and ag1_j are P⁺·τ_out,j and P⁻·τ_out,j (P⁺ + P⁻ = 1), and τ_out
# is the model's own torque W_rigid·χ₀: adding ε·χ₀ to the rigid-body parameters and −ε to every am1_j and
# ag1_j leaves every torque unchanged. Structural, so no trajectory helps; only a known payload's torque in
# τ_out (a run with a known mass) lies outside W_rigid's span and fixes the scale.
#: The temperature friction term is a candidate of the model choice only where every joint's temperature spans at
#: least this much [°C] over the recordings (its three columns are one below: β1 + β2·T + β3·T⁻³ at a constant T).
TEMPERATURE_SPAN_MIN_C = 5.0

HAMON_SCALE_DEPENDENCY = (
    "Hamon's efficiency terms (am1_j, ag1_j: torque proportional to the output torque τ_out) trade against the "
    "overall scale of the rigid-body parameters, because τ_out is the model's own torque: the dependency is "
    "structural and no excitation separates them. Only runs with a known payload mass do: record runs with "
    "different known payloads (e.g. dynid simulate --payload, or dynid excite --experiment payload_schedule) and "
    "give them with {payload_mass} (e.g. 0,3.5,7.5 kg)")


@dataclass
class IdentifyOptions:
    """Solver options. ``load_iterations`` bounds the load loop (and the outer I-IRLS loop);
    ``noise_floor_fraction``: WLS floors each joint's noise estimate at this fraction of the pooled one
    (:func:`dynid.identify.solvers.joint_noise`). ``physical``: the robot file as a prior and physical
    consistency (:mod:`dynid.identify.physical`; by default where the model allows it); None: the linear
    solution alone."""

    method: str = 'wls'
    weight_function: str = IdentifierSettings.weight_function
    weight_constant: float | None = None
    load_iterations: int = 10
    exponent_bounds: tuple[float, float] = (0.2, 2.0)
    physical: PhysicalSettings | None = field(default_factory=PhysicalSettings)
    fixed_drive_gains: dict[int, float] | None = None  # TLS/MLS: joint index -> gain held [N·m/A]
    noise_floor_fraction: float = NOISE_FLOOR_FRACTION

    def validated(self) -> IdentifyOptions:
        checked_choice('method', self.method, (AUTO, *METHODS))
        if self.load_iterations < 1:
            raise InputError('load_iterations must be >= 1')
        if not 0 < self.noise_floor_fraction <= 1:
            raise InputError(f'noise_floor_fraction must be within (0, 1], got {self.noise_floor_fraction!r}')
        if self.physical is not None:
            self.physical.validated()
            if self.physical.consistency == 'always' and self.method not in (AUTO, *PHYSICAL_METHODS):
                raise InputError(f'physical identification builds on OLS, WLS or IRLS, not {self.method!r}')
        if self.fixed_drive_gains and self.method not in ('tls', 'mls'):
            raise InputError(f'fixed drive gains are for the methods that identify gains (tls, mls), not '
                             f'{self.method!r}: give the gains in a drives file ({{drives}})', fields=('drives',))
        return self


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


def change_text(change: dict) -> str:
    """One line for people of a change the identification made to the caller's choices (``model.changes`` of
    a result): 'friction: viscous_coulomb given, comprehensive used (I-IRLS identifies ...)'."""
    return f'{change["setting"]}: {change["given"]} given, {change["used"]} used ({change["reason"]})'


def nominal_rigid(problem: IdentificationProblem) -> np.ndarray:
    """Base rigid parameters of the robot model itself (payload blocks zero, nominal rotor inertia)."""
    robot = problem.robot
    standard = [robot.standard_parameters, np.zeros(9 * len(problem.payload_blocks))]
    if problem.identify_rotor_inertia:  # the excess over the drive data's B where B·θ̈ was subtracted: 0
        standard.append(problem.drives.rotor_inertia if problem.drives is not None and not problem.compensate_rotor
                        else np.zeros(robot.n))
    return problem.base.from_standard(np.concatenate(standard))


def _with_held(estimate: Estimate, names: list[str], held: np.ndarray, held_values: np.ndarray) -> Estimate:
    """``estimate`` of the free parameters as one of all ``names``: the held ones at their values, σ 0."""
    if not held.any():
        return estimate
    values, covariance = np.zeros(len(names)), np.zeros((len(names), len(names)))
    values[~held], values[held] = estimate.values, held_values
    covariance[np.ix_(~held, ~held)] = estimate.covariance
    return dataclasses.replace(estimate, names=list(names), values=values, covariance=covariance)


def _solve_linear(method: str, w, y, joints, names, options: IdentifyOptions, joint_names,
                  start: Estimate | None = None, pooled_short: bool = False) -> Estimate:
    """One linear solve; ``pooled_short``: WLS weights a joint with too few rows for a noise estimate of its own by
    the pooled noise instead of refusing (where the robot file's prior completes what its rows lack)."""
    if method == 'ols':
        return ols(w, y, joints, names)
    if method == 'wls':
        return wls(w, y, joints, names, joint_names, options.noise_floor_fraction, refuse_short=not pooled_short,
                   dependent_unknown=pooled_short)
    return irls(w, y, joints, names, options.weight_function, options.weight_constant, start=start)


def _load_loop(problem: IdentificationProblem, method: str, options: IdentifyOptions, exponents: np.ndarray,
               progress: Callable[[str], None], rigid_start: np.ndarray | None = None, pooled_short: bool = False
               ) -> tuple[Estimate, np.ndarray, np.ndarray, np.ndarray]:
    """Solve, updating τ_out from the estimate for load-dependent friction (from ``rigid_start``, default the robot
    file's parameters); returns the last system too. ``pooled_short``: as for :func:`_solve_linear`."""
    names = problem.parameter_names()
    rigid_count = len(problem.rigid_names)
    rigid = nominal_rigid(problem) if rigid_start is None else rigid_start
    iterations = options.load_iterations if problem.spec.uses_load else 1
    held = np.array([name in problem.held for name in names])
    held_values = np.array([problem.held[name]['value'] for name in names if name in problem.held])
    free_names = [name for name, h in zip(names, held, strict=True) if not h]
    estimate = reduced = None
    for iteration in range(iterations):
        w, y, joints, _, _ = problem.equations(rigid, exponents)
        try:  # held parameters' columns go to the measured side (dynid.identify.held)
            reduced = _solve_linear(method, w[:, ~held] if held.any() else w, y - w[:, held] @ held_values
                                    if held.any() else y, joints, free_names, options, problem.robot.joint_names,
                                    start=reduced, pooled_short=pooled_short)  # warm start
        except InputError as error:  # too few rows, or columns the rows cannot separate: say what made the rows
            prior = '' if pooled_short or method != 'wls' or 'WLS cannot estimate' not in str(error) else (
                '; or with the robot file\'s prior (the default; {prior}), which weights them by the pooled noise and '
                'completes what their rows lack')
            kind = TooFewRowsError if isinstance(error, TooFewRowsError) else InputError  # the front end tries more
            raise kind(f'{error.template} ({rows_context(problem.settings, joints, problem.robot.n)}){prior}',
                       fields=(*error.fields, 'prior')) from None
        estimate = _with_held(reduced, names, held, held_values)
        change = np.linalg.norm(estimate.values[:rigid_count] - rigid) / max(np.linalg.norm(rigid), 1e-300)
        rigid = estimate.values[:rigid_count]
        if problem.spec.uses_load:
            progress(f'load loop {iteration + 1}: relative change of the rigid-body parameters {change:.2e}')
        if change < 1e-5:
            break
    return estimate, w, y, joints


def _fit_exponents(problem: IdentificationProblem, estimate: Estimate, exponents: np.ndarray,
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

        new[j] = scipy.optimize.minimize_scalar(residual_norm, bounds=(low, high), method='bounded',
                                                options={'xatol': 1e-3}).x
    return new


@dataclass
class _OpenChoices:
    """The caller's model and options with what the identification chooses itself settled for the search:
    ``friction``/``method`` are open (chosen by cross-validation), ``terms_available`` the candidate friction
    terms of an open law, ``changes`` what the method changed in the caller's choices (:func:`change_text`)."""

    spec: ModelSpec
    options: IdentifyOptions
    friction: bool
    method: bool
    terms_available: tuple[str, ...] = ()
    changes: list[dict] = field(default_factory=list)
    rotor: bool = False  # the rotor inertia's excess a candidate, where the problem subtracts B·θ̈ (_open_choices)


@dataclass
class _Solved:
    """What a method's solve gives the result: the estimate, its parameters (values, σ), the equations it was
    scored on (measured and predicted torque per row, ``joints`` the row's joint; ``w``/``y`` the system for the
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

    @property
    def warnings(self) -> list[str]:
        """The drive-gain solution's or the standard-parameter step's warnings."""
        source = self.gain_solution if self.gain_solution is not None else self.outcome
        return list(source.warnings) if source is not None else []


def identify(robot: RobotModel, recordings: list[RecordingInput], spec: ModelSpec | None = None,
             settings: FilterSettings | None = None, options: IdentifyOptions | None = None,
             drives: JointDrives | None = None, progress: Callable[[str], None] | None = None) -> IdentificationResult:
    """Identify ``robot`` from ``recordings`` (module docstring): settle what the caller left open, prepare the
    equations, choose the law and method by cross-validation where open, solve, and write the result. BLAS runs one
    thread throughout (:func:`dynid.identify.solvers.one_blas_thread`: the products between the solvers too)."""
    with one_blas_thread():
        return _identify(robot, recordings, spec, settings, options, drives, progress)


def _identify(robot: RobotModel, recordings: list[RecordingInput], spec: ModelSpec | None,
              settings: FilterSettings | None, options: IdentifyOptions | None, drives: JointDrives | None,
              progress: Callable[[str], None] | None, weak: dict | None = None) -> IdentificationResult | None:
    """``weak``: None on the first pass (the gate of weakly exciting logs may apply: :func:`_choose`,
    :func:`_identify_weak`); else the record of the gate that fired: with ``kept`` None, the regularized pass (None
    returned where it is not kept); otherwise the ordinary defaults after it was not (the record kept in the model
    choice)."""
    progress = progress or (lambda text: None)
    given = (options or IdentifyOptions()).validated()
    opened = _open_choices(recordings, (spec or ModelSpec()).validated(), given,
                           progress, drives is not None or robot.drives is not None)
    options = opened.options
    problem = _prepared_problem(robot, recordings, opened.spec, settings, drives, options, progress,
                                keep_full_velocity=opened.friction)
    if opened.rotor and problem.identify_rotor_inertia and problem.compensate_rotor:
        opened.terms_available += ('rotor',)
    choice, rigid_start = None, None
    if opened.friction or opened.method:
        regularizing = weak is not None and weak.get('kept') is None
        try:
            choice, rigid_start = _choose(problem, options, opened.friction, opened.method, opened.terms_available,
                                          progress, gate=weak is None and _regularized_open(problem, opened),
                                          regularized=weak if regularizing else None)
        except _WeaklyExcited as excited:
            return _identify_weak(robot, recordings, spec, settings, given, drives, progress, excited.condition)
        if regularizing and not weak['kept']:
            return None
        if weak is not None and not regularizing:  # declined by the folds: said beside the ordinary choice
            choice.tried['regularized'] = weak
        if opened.method:
            options = dataclasses.replace(options, method=choice.method)
        if choice.consistency:  # chosen by the folds where the auto rule would have declined it
            options = dataclasses.replace(options, physical=dataclasses.replace(options.physical,
                                                                                consistency=choice.consistency))
    progress(f'solving {options.method.upper()} for {len(problem.parameter_names())} parameters')
    if options.method in ('tls', 'mls'):
        solved = _solve_with_gains(problem, options)
    elif options.method == 'iirls':
        solved = _solve_iirls(problem, options, progress)
    else:
        try:
            solved = _solve_standard(problem, options, rigid_start, progress,
                                     None if choice is None else choice.exponents)
        except InputError:  # the folds' consistency refused on all the rows (its solver): the auto rule instead
            if choice is None or not choice.consistency:
                raise
            choice.consistency, options = None, dataclasses.replace(options, physical=opened.options.physical)
            problem.warnings.append('physical consistency, chosen by cross-validation, was not reached on all the '
                                    'rows (the solver missed its optimum): the auto rule decided instead')
            solved = _solve_standard(problem, options, rigid_start, progress, choice.exponents)
    if choice is not None and choice.consistency and solved.outcome is not None:
        solved.outcome.prior['consistency']['chosen_by'] = ('cross-validation (model.choice.tried.consistency): the '
                                                            'auto rule would have declined it')
    result = _result(problem, options, solved, choice, opened.changes + problem.changes)
    progress('done')
    _check_physics(result, problem, solved)
    return result


class _WeaklyExcited(Exception):  # noqa: N818 - a decision, not an error: :func:`_choose` found the gate open
    def __init__(self, condition: float) -> None:
        super().__init__(condition)
        self.condition = condition


def _regularized_open(problem: IdentificationProblem, opened: _OpenChoices) -> bool:
    """Whether the regularized default may replace the ordinary one (:func:`_identify_weak`): the method and physical
    consistency left to dynid (``auto``; a given option is kept as given), the robot file's prior on and holding
    links, and nothing a consistent identification refuses (payload blocks, rigid-body parameters held, a friction
    law given that it cannot solve)."""
    physical = opened.options.physical
    return bool(opened.method and physical is not None and physical.prior and physical.consistency == 'auto'
                and not _consistency_refused(problem, opened.friction)
                and any(link.in_prior for link in robot_file_links(problem.robot)))


def _identify_weak(robot: RobotModel, recordings: list[RecordingInput], spec: ModelSpec | None,
                   settings: FilterSettings | None, given: IdentifyOptions, drives: JointDrives | None,
                   progress: Callable[[str], None], condition: float) -> IdentificationResult:
    """The regularized default of a weakly exciting log (docs/methods/identification.md, "Weakly exciting logs"):
    OLS with the robot file's prior and physical consistency (Coulomb + viscous friction, the offsets by the model
    choice), kept where its folds predict the held-out blocks better than the robot file's own model
    (:func:`dynid.identify.choice.choose`, ``regularized``); else the ordinary defaults, the decision recorded in
    ``model.choice.tried.regularized``."""
    weak = {'condition_scaled': condition, 'threshold': COND_SCALED_MAX, 'kept': None,
            'solver': given.physical.solver}
    progress(f'weakly exciting log: cond(W) of the data alone with unit-norm columns {condition:.3g} > '
             f'{COND_SCALED_MAX:g}: OLS with the robot file\'s prior and physical consistency tried as the default')
    regularized = dataclasses.replace(given, method='ols',
                                      physical=dataclasses.replace(given.physical, consistency='always'))
    try:
        result = _identify(robot, recordings, spec, settings, regularized, drives, progress, weak)
    except InputError as error:  # the consistent solve refused on all the rows: the ordinary defaults
        weak.update(kept=False, reason=f'the regularized identification failed: {error}')
        result = None
    if result is not None:
        return result
    progress(f'weakly exciting log: the regularized default not kept ({weak["reason"]}): the ordinary defaults')
    return _identify(robot, recordings, spec, settings, given, drives, progress, weak)


def _open_choices(recordings: list[RecordingInput], spec: ModelSpec, options: IdentifyOptions,
                  progress: Callable[[str], None], drives_known: bool = True) -> _OpenChoices:
    """The model to search where the friction law is open (``auto``: the superset law, chosen per joint by
    :mod:`dynid.identify.choice`; a method with its own law takes that law), WLS to start where the method is open,
    and the comprehensive law I-IRLS identifies (a change said in ``changes``)."""
    opened = _OpenChoices(spec, options, spec.friction == AUTO, options.method == AUTO)
    if opened.friction:
        if options.method in ('iirls', 'tls', 'mls'):
            friction, opened.friction = 'comprehensive' if options.method == 'iirls' else 'viscous_coulomb', False
        else:  # physical consistency 'always' takes no friction on τ_out: the load term is then no candidate
            always = options.physical is not None and options.physical.consistency == 'always'
            friction = 'viscous_coulomb' if always else 'load_squared'
            measured = all(r.dataset.temperature is not None and np.all(r.dataset.temperature > 0)
                           for r in recordings) and np.all(np.ptp(np.concatenate(
                               [r.dataset.temperature for r in recordings]), axis=0) >= TEMPERATURE_SPAN_MIN_C)
            opened.terms_available = ('offset',) + (() if always else ('load',)) + \
                (('temperature',) if measured and not spec.temperature else ())
        # the rotor inertia's excess over the drive data's B, where B·θ̈ will be subtracted (currents, motor
        # encoders, drive data): a candidate per joint (dynid.identify.choice), once the problem says it applies
        # (not beside joints left out, whose columns are empty, nor with consistency 'always', which holds nothing)
        consistent = options.physical is not None and options.physical.consistency == 'always'
        opened.rotor = opened.friction and not spec.rotor_inertia and spec.rotor_compensation is not False and \
            spec.torque_source in ('auto', 'current') and drives_known and not spec.exclude_joints and \
            not consistent and all(r.dataset.theta is not None and r.dataset.current is not None for r in recordings)
        opened.spec = ModelSpec(**{**spec.to_dict(), 'friction': friction,
                                   'rotor_inertia': spec.rotor_inertia or opened.rotor,
                                   'temperature': spec.temperature or 'temperature' in opened.terms_available})
    if opened.method:
        opened.options = dataclasses.replace(options, method='wls')
    if opened.options.method == 'iirls' and opened.spec.friction != 'comprehensive':
        opened.changes.append({'setting': 'friction', 'given': opened.spec.friction, 'used': 'comprehensive',
                               'reason': 'I-IRLS identifies the comprehensive friction model (Li et al. 2024, '
                                         'eq. (3))'})
        opened.spec = ModelSpec(**{**opened.spec.to_dict(), 'friction': 'comprehensive'})
    for change in opened.changes:
        progress(change_text(change))
    return opened


def _prepared_problem(robot: RobotModel, recordings: list[RecordingInput], spec: ModelSpec,
                      settings: FilterSettings | None, drives: JointDrives | None, options: IdentifyOptions,
                      progress: Callable[[str], None], keep_full_velocity: bool = False) -> IdentificationProblem:
    """The recordings filtered, differentiated and decimated into the problem's equations, with the parameters held at
    a value (structural offsets, left-out joints); refuses what the method cannot identify."""
    if options.physical is not None:
        options.physical.check_model(spec, options.method)
    gains_unknown = options.method in ('tls', 'mls')
    if spec.friction == 'hamon' and not any(r.payload is not None or r.payload_mass is not None for r in recordings):
        raise InputError(HAMON_SCALE_DEPENDENCY, fields=('payload_mass',))
    progress(f'preparing {len(recordings)} recording(s): filtering, differentiating, regressor, decimation')
    with one_blas_thread():
        stribeck = None if spec.stribeck_velocity is None else StribeckExcess(
            np.full(robot.n, spec.stribeck_velocity), 2.0 if spec.stribeck_shape is None else spec.stribeck_shape)
        problem = IdentificationProblem(robot, recordings, spec, settings, drives, drive_gains_unknown=gains_unknown,
                                        keep_full_velocity=keep_full_velocity, stribeck=stribeck)
        problem.refuse_still_joints()
        problem.held = {**structural_offsets(problem), **left_out(problem, nominal_rigid(problem))}
    if problem.held and gains_unknown:
        raise InputError(f'drive-gain identification does not take parameters held at a value '
                         f'({", ".join(problem.held)}: left-out joints or a structural offset); identify without them, '
                         f'or with another method')
    for name, entry in problem.held.items():
        progress(f'{name} held at {entry["value"]:.6g}: {entry["reason"]}')
    return problem


def _nominal_gains(problem: IdentificationProblem) -> np.ndarray | None:
    return None if problem.drives is None else problem.drives.drive_gain.copy()


def _solve_with_gains(problem: IdentificationProblem, options: IdentifyOptions) -> _Solved:
    """TLS or MLS: the drive gains and the parameters at once (:func:`dynid.identify.drive_gains.solve_drive_gains`)."""
    nominal = None if problem.drives is None else problem.drives.drive_gain
    solution = solve_drive_gains(problem, options.method, nominal_rigid(problem), options.fixed_drive_gains, nominal)
    return _Solved(solution.estimate, problem.parameter_names(), solution.values, solution.std, solution.joints,
                   solution.measured, solution.prediction_w @ solution.values,
                   np.full(problem.robot.n, problem.spec.exponent), solution.gains, solution.gains_std,
                   gain_solution=solution)


def _solve_iirls(problem: IdentificationProblem, options: IdentifyOptions, progress: Callable[[str], None]) -> _Solved:
    """Li et al. 2024's I-IRLS: IRLS with the load loop, alternating with the friction loop re-fitting the exponents
    until they settle; then the standard-parameter step."""
    exponents = np.full(problem.robot.n, problem.spec.exponent)
    # One BLAS thread for the whole loop (tall products, the exponent search's projections and its filter): two
    # threads on a busy 2-core machine cost more CPU time than one.
    with one_blas_thread():
        estimate, w, y, joints = _load_loop(problem, 'irls', options, exponents, progress)
        for outer in range(options.load_iterations):
            updated = _fit_exponents(problem, estimate, exponents, options)
            change = np.abs(updated - exponents).max()
            exponents = updated
            estimate, w, y, joints = _load_loop(problem, 'irls', options, exponents, progress)
            progress(f'I-IRLS friction loop {outer + 1}: exponents {np.round(exponents, 3).tolist()}')
            if change < 1e-2:
                break
    estimate.method = 'iirls'
    return _standard_solved(problem, options, estimate, w, y, joints, exponents, progress)


def _solve_standard(problem: IdentificationProblem, options: IdentifyOptions, rigid_start: np.ndarray | None,
                    progress: Callable[[str], None], exponents: np.ndarray | None = None) -> _Solved:
    """OLS, WLS or IRLS with the load loop, then the standard-parameter step. With the robot file's prior, a joint too
    short for WLS's own noise estimate is weighted by the pooled one: the prior completes what its rows lack (said in
    the warnings); without it, WLS refuses by name. ``exponents``: the comprehensive law's α_j where the model choice
    chose them (default the spec's exponent on every joint)."""
    chosen = None if exponents is None else np.asarray(exponents) != 1.0
    exponents = np.full(problem.robot.n, problem.spec.exponent) if exponents is None else np.asarray(exponents)
    pooled = _prior_completes(problem, options)
    estimate, w, y, joints = _load_loop(problem, options.method, options, exponents, progress, rigid_start,
                                        pooled_short=pooled)
    if chosen is not None and chosen.any():  # Li's friction loop on the exponents the choice kept (as I-IRLS)
        for outer in range(options.load_iterations):
            updated = np.where(chosen, _fit_exponents(problem, estimate, exponents, options,
                                                      bounds=(EXPONENT_GRID[0], 1.0)), 1.0)
            change = np.abs(updated - exponents).max()
            exponents = updated
            estimate, w, y, joints = _load_loop(problem, options.method, options, exponents, progress,
                                                estimate.values[:len(problem.rigid_names)], pooled_short=pooled)
            progress(f'friction loop {outer + 1}: exponents {np.round(exponents, 3).tolist()}')
            if change < 1e-2:
                break
    return _standard_solved(problem, options, estimate, w, y, joints, exponents, progress)


def _standard_solved(problem: IdentificationProblem, options: IdentifyOptions, estimate: Estimate, w, y, joints,
                     exponents: np.ndarray, progress: Callable[[str], None]) -> _Solved:
    outcome, values, std, w, y = _standard_step(problem, options, estimate, w, y, joints, exponents, progress)
    return _Solved(estimate, problem.parameter_names(), values, std, joints, y, w @ values, exponents,
                   _nominal_gains(problem), w=w, y=y, outcome=outcome)


def _result(problem: IdentificationProblem, options: IdentifyOptions, solved: _Solved, choice,
            changes: list[dict]) -> IdentificationResult:
    """The result of a solve: its metrics, warnings, model description, provenance and prior section."""
    robot, spec, outcome = problem.robot, problem.spec, solved.outcome
    gains_unknown = solved.gain_solution is not None
    metrics = {'train': equation_metrics(solved.measured, solved.predicted, solved.joints, robot.joint_names,
                                         spec.exclude_joints)}
    autocorrelation = residual_autocorrelation(solved.measured - solved.predicted, solved.joints, robot.n)
    metrics['train']['residual_lag1_autocorrelation'] = dict(zip(robot.joint_names, autocorrelation.tolist(),
                                                                 strict=True))
    # each parameter's column RMS and the measured torque's: what its σ means in torque
    sizes = None if solved.w is None else (np.sqrt(np.mean(solved.w**2, axis=0)), float(np.sqrt(np.mean(solved.y**2))))
    warnings = [change_text(change) for change in changes] + list(problem.warnings) + solved.warnings + \
        _result_warnings(problem, solved, autocorrelation, sizes)
    model = {**spec.to_dict(), **problem.describe(), 'friction_symbols': list(problem.friction_names),
             'payload_blocks': len(problem.payload_blocks), 'changes': changes, 'held': problem.held}
    if sizes is not None and not gains_unknown:
        model['column_rms'], model['torque_rms'] = sizes[0].tolist(), sizes[1]
    noise = solved.estimate.extra.get('noise')
    if noise is not None:
        model['weights'] = noise.to_dict(robot.joint_names)
    if choice is not None:
        model['choice'] = {**choice.to_dict(), 'lines': choice.lines()}
        warnings += [f'the robot file\'s own model (its links, the friction fitted) predicts held-out stretches of '
                     f'{joint} better than the model identified (cross-validation score {theirs:.3g} against '
                     f'{mine:.3g}; dynid validate predicts both)'
                     for joint, (theirs, mine) in choice.robot_file_ahead.items()]
    provenance = {'inputs': model.pop('recordings'), 'filters': model.pop('filters'),
                  'options': {'weight_function': options.weight_function,
                              'weight_constant': options.weight_constant,
                              'load_iterations': options.load_iterations}}
    if problem.drives is not None:  # the nominal drives the model was built with (validation needs them)
        provenance['drives'] = {'joints': problem.drives.to_dict()}
    estimate = solved.estimate
    condition = (estimate.condition_number, estimate.scaled_condition_number) \
        if outcome is None or outcome.condition is None else outcome.condition
    prior_section = outcome.prior if outcome is not None else \
        {'used': False, 'reason': _physical_not_applicable(problem, options)}
    base = problem.base
    return IdentificationResult(
        robot=robot.name, joint_names=robot.joint_names, method=estimate.method, model=model,
        parameter_names=list(solved.names), values=np.asarray(solved.values), std=np.asarray(solved.std),
        base_expressions=dict(zip(base.names, base.expressions, strict=True)),
        drive_gains=solved.gains, drive_gains_std=solved.gains_std, drive_gains_identified=gains_unknown,
        exponents=solved.exponents if spec.friction == 'comprehensive' else None, stribeck=problem.stribeck,
        condition_number=condition[0], condition_number_scaled=condition[1],
        metrics=metrics, warnings=warnings, provenance=provenance,
        drive_gain_diagnostics=solved.gain_solution.diagnostics if gains_unknown else None,
        prior_section=prior_section)


def _result_warnings(problem: IdentificationProblem, solved: _Solved, autocorrelation: np.ndarray,
                     sizes: tuple[np.ndarray, float] | None) -> list[str]:
    """The parameters held at a value (by reason), the noise estimates floored, the parameters poorly identified and a
    misfit the residual's autocorrelation shows. ``sizes``: the columns' RMS and the torque's (:func:`_result`), or
    None."""
    reasons: dict[str, list[str]] = {}
    for name, entry in problem.held.items():
        if not entry['reason'].startswith('model choice'):  # the choice's own lines say what it left out
            reasons.setdefault(entry['reason'], []).append(f'{name} = {entry["value"]:.4g}')
    warnings = [f'held, not identified: {", ".join(held)} ({reason})' for reason, held in reasons.items()]
    noise = solved.estimate.extra.get('noise')
    floored = None if noise is None else noise.floored_text(problem.robot.joint_names)
    if floored:
        warnings.append(floored)
    relative = 100.0 * solved.std / np.where(solved.values != 0, np.abs(solved.values), np.inf)
    # A parameter the data put at ~0 with a σ that moves the torque by less than 1 % of its RMS is determined: its
    # relative σ is large only because its value is small, and there is nothing to excite better.
    negligible = negligible_mask(solved.std, *(sizes or (None, None)))  # all False where the sizes do not match
    poor = [n for n, r, tiny in zip(solved.names, relative, negligible, strict=True)
            if r > POORLY_IDENTIFIED_PERCENT and not tiny]
    if poor:
        warnings.append(f'{len(poor)} parameters are poorly excited (a relative standard deviation above '
                        f'{POORLY_IDENTIFIED_PERCENT:g} % and a σ that moves the torque by at least '
                        f'{100 * NEGLIGIBLE_TORQUE_FRACTION:g} % of its RMS): {", ".join(poor)}')
    misfit = misfit_warning(autocorrelation, problem.robot.joint_names)
    if misfit:
        warnings.append(misfit)
    return warnings


def _check_physics(result: IdentificationResult, problem: IdentificationProblem, solved: _Solved) -> None:
    """The identified mass matrix checked over random states (with a physical step) and the identified gravity torque
    against the robot file's at (up to ~2000 of) the recorded poses."""
    robot = problem.robot
    if solved.outcome is not None and solved.outcome.physical is not None:
        result.physical_section = solved.outcome.physical
        solved.outcome.physical['mass_matrix'] = mass_matrix_check(result, robot, states=1000)
    poses = np.concatenate([r.dataset.q[::max(1, r.dataset.n_samples * len(problem.recordings) // 2000)]
                            for r in problem.recordings])
    result.model['gravity_scale'], off_scale = gravity_scale_check(result, robot, poses, base=problem.base)
    if off_scale:
        result.warnings.append(off_scale)


def _choose(problem: IdentificationProblem, options: IdentifyOptions, open_friction: bool, open_method: bool,
            terms_available: tuple[str, ...], progress: Callable[[str], None], gate: bool = False,
            regularized: dict | None = None):
    """The friction terms per joint and the method by blocked cross-validation (:mod:`dynid.identify.choice`) on
    the superset problem; the problem is narrowed to the law chosen (the columns left out held at 0). Returns the
    choice and the rigid-body estimate τ_out was built from (the load loop's start). ``gate``: raise
    :class:`_WeaklyExcited` where the data alone are weakly exciting (:func:`dynid.identify.choice.excitation_condition`
    above ``COND_SCALED_MAX``); ``regularized``: the gate's record, for the folds' verdict (``choose``)."""
    from dynid.identify.choice import choose, dropped_reason, excitation_condition

    once = dataclasses.replace(options, load_iterations=1)
    exponents = np.full(problem.robot.n, problem.spec.exponent)
    try:
        first, w, y, joints = _load_loop(problem, 'wls', once, exponents, lambda text: None,
                                         pooled_short=_prior_completes(problem, options))
    except InputError:  # the data cannot carry every candidate column: the rotor's excess left out, then the law's
        if 'rotor' in terms_available:
            _without_rotor_columns(problem, np.zeros(len(problem.rigid_names)))
        if 'rotor' in terms_available and not problem.identify_rotor_inertia:
            terms_available = tuple(t for t in terms_available if t != 'rotor')
            progress('the data cannot carry the rotor inertias\' excess beside the other columns: not tried')
            return _choose(problem, options, open_friction, open_method, terms_available, progress)
        if not open_friction or problem.spec.friction == 'viscous_coulomb' and not terms_available[1:]:
            raise
        temperature = problem.spec.temperature and 'temperature' not in terms_available
        problem.spec = dataclasses.replace(problem.spec, friction='viscous_coulomb', temperature=temperature)
        names = set(problem.parameter_names())
        problem.held = {name: entry for name, entry in problem.held.items() if name in names}
        terms_available = terms_available[:1]
        progress('the data cannot carry the load-dependent or temperature terms beside the others: not tried')
        first, w, y, joints = _load_loop(problem, 'wls', once, exponents, lambda text: None,
                                         pooled_short=_prior_completes(problem, options))
    if gate:  # one p×p Gram matrix of the rows already built
        condition = excitation_condition(w, problem.parameter_names(), len(problem.rigid_names),
                                         frozenset(problem.held))
        if condition > COND_SCALED_MAX:
            raise _WeaklyExcited(condition)
    rigid = first.values[:len(problem.rigid_names)]
    if problem.spec.uses_load:  # τ_out of the first estimate, not of the robot file
        w, y, joints, _, _ = problem.equations(rigid)
    physical = options.physical
    names = problem.parameter_names()
    falling = frozenset(j for j in range(problem.robot.n) if f'Fl_{j + 1}' in names
                        and f'Fl_{j + 1}' not in problem.held and first.values[names.index(f'Fl_{j + 1}')] < 0)
    always = physical is not None and physical.consistency == 'always'  # takes no comprehensive law
    power = _power_candidates(problem, w, y, joints, first.row_weights) if open_friction and not always else None
    stribeck = _stribeck_candidates(problem, w, y, joints, first.row_weights) if open_friction else None
    with one_blas_thread():
        choice = choose(problem, w, y, joints, first.row_weights, choose_friction=open_friction,
                        choose_method=open_method, terms_available=terms_available,
                        use_prior=physical is not None and physical.prior,
                        prior_std=None if physical is None else physical.prior_relative_std,
                        weight_function=options.weight_function, falling_load=falling, power=power,
                        stribeck=stribeck, consistency=physical if _consistency_open(problem, options,
                                                                                     terms_available, open_friction)
                        else None, regularized=regularized, method=options.method, progress=progress)
    problem.held.update(choice.dropped)
    if open_friction:  # the narrowest model family holding every joint's law
        chosen = {term for terms in choice.terms.values() for term in terms}
        friction = 'load_squared' if 'load' in chosen else 'viscous_coulomb'
        temperature = problem.spec.temperature and ('temperature' in chosen or 'temperature' not in terms_available)
        problem.spec = dataclasses.replace(problem.spec, friction=friction, temperature=temperature)
        names = set(problem.parameter_names())
        problem.held = {name: entry for name, entry in problem.held.items() if name in names}
        if choice.exponents is not None:  # a viscous exponent chosen on some joint: Li's law holds every joint's
            problem.to_comprehensive()
        if 'rotor' in terms_available and not any('rotor' in terms for terms in choice.terms.values()):
            rigid = _without_rotor_columns(problem, rigid)
        if choice.stribeck is not None:  # its column Fs on every joint, held at 0 where the joint did not keep it
            problem.add_stribeck(choice.stribeck)
            problem.held.update({f'Fs_{j + 1}': {'value': 0.0, 'reason': dropped_reason(joint, choice.terms[joint])}
                                 for j, joint in enumerate(problem.robot.joint_names)
                                 if not choice.stribeck.joints[j]})
    for line in choice.lines():
        progress(line)
    return choice, rigid


#: The viscous exponents the model choice tries (sub-linear only: a term that grows faster than ω, fitted on one
#: motion, grows faster still beyond its velocities; on the twin with linear viscous friction, α̂ ≈ 1.2–1.9 gained on
#: the folds and lost on another motion), and how far below 1 the best must lie to be a candidate (the twin's
#: Stribeck and load terms give α̂ ≈ 0.95 and a fold gain of a few percent: nearly the linear term, at the cost of
#: the friction loop).
EXPONENT_GRID = np.linspace(0.2, 1.0, 17)
EXPONENT_CANDIDATE_MIN = 0.1


def _open_joints(problem: IdentificationProblem, joints: np.ndarray, symbol: str):
    """(j, rows) of each joint a friction candidate may be tried on: it has rows, its equations are not left out and
    its column ``symbol``_j (the one the candidate replaces or stands beside) is not held."""
    for j in range(problem.robot.n):
        rows = joints == j
        if rows.any() and not problem.excluded[j] and f'{symbol}_{j + 1}' not in problem.held:
            yield j, rows


class _JointRemainder:
    """One joint's weighted rows with its other columns projected out (all of them but ``drop``, an index, where
    given): what a candidate column explains of the rest (:func:`_power_candidates`, :func:`_stribeck_candidates`).
    ``w, y``: the system, ``rows``: the joint's (bool), ``weights``: the rows' weights."""

    def __init__(self, w: np.ndarray, y: np.ndarray, rows: np.ndarray, weights: np.ndarray,
                 drop: int | None = None) -> None:
        import scipy.linalg

        wj, yj = w[rows] * weights[rows, None], y[rows] * weights[rows]
        used = np.linalg.norm(wj, axis=0) > 0
        if drop is not None:
            used[drop] = False
        self.weights = weights[rows]
        self.basis = scipy.linalg.orth(wj[:, used])
        self.remainder = yj - self.basis @ (self.basis.T @ yj)

    def fitted(self, features: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(explained ‖·‖², least-squares coefficient) of each column of ``features`` (rows, k) on the remainder."""
        features = features * self.weights[:, None]
        features -= self.basis @ (self.basis.T @ features)
        size = np.einsum('ij,ij->j', features, features)
        along = features.T @ self.remainder
        return (np.where(size > 1e-24, along**2 / np.maximum(size, 1e-300), 0.0),
                np.where(size > 1e-24, along / np.maximum(size, 1e-300), 0.0))


def _power_candidates(problem: IdentificationProblem, w: np.ndarray, y: np.ndarray, joints: np.ndarray,
                      weights: np.ndarray):
    """The viscous exponent candidates of the model choice (:mod:`dynid.identify.choice`): per joint the α̂_j of
    :data:`EXPONENT_GRID` whose column sgn(ω)·|ω|^α in place of the viscous column Fv_j leaves the least weighted
    residual on the joint's rows, the others' columns projected out (Li's friction loop, :func:`_fit_exponents`, on a
    grid: no search; first on the decimated velocity, then, where that finds a sub-linear law, on the exact columns),
    and the column at α̂_j:
    ``{joint: (α̂_j, column (M,))}`` for the joints with α̂_j ≤ 1 − :data:`EXPONENT_CANDIDATE_MIN`; None where there
    is none or the law has no Fv. ``w, y, joints, weights``: the first estimate's system and row weights."""
    if 'Fv' not in problem.friction_names or not problem.keep_full_velocity:
        return None
    names = problem.parameter_names()
    weights = weights if weights.size == len(joints) else np.ones(len(joints))
    out = {}
    for j, rows in _open_joints(problem, joints, 'Fv'):
        remainder = _JointRemainder(w, y, rows, weights, names.index(f'Fv_{j + 1}'))
        velocity = problem.velocity_rows(j)

        def best(features: np.ndarray, remainder=remainder) -> float:
            """The exponent of the grid whose column (``features[:, k]``) explains most of the remainder."""
            return float(EXPONENT_GRID[int(np.argmax(remainder.fitted(features)[0]))])

        # on the decimated velocity first (cheap); where that finds a sub-linear law, on the exact columns
        if best(np.sign(velocity)[:, None] * np.abs(velocity)[:, None] ** EXPONENT_GRID[None, :]) > \
                1.0 - EXPONENT_CANDIDATE_MIN:
            continue
        exact = np.column_stack([problem.power_feature(j, float(alpha)) for alpha in EXPONENT_GRID])
        alpha = best(exact)
        if alpha <= 1.0 - EXPONENT_CANDIDATE_MIN:
            column = np.zeros(len(joints))
            column[rows] = exact[:, int(np.flatnonzero(EXPONENT_GRID == alpha)[0])]
            out[j] = (alpha, column)
    return out or None


#: The Stribeck velocities Vs [rad/s] the model choice tries (:func:`_stribeck_candidates`), a candidate where at
#: least :data:`STRIBECK_ROWS_MIN` of the joint's rows lie below Vs (the hump is seen) and at least half above it (the
#: sliding level is seen apart from it: a Vs beyond the recording's speeds is the Coulomb column again). From the
#: stiction velocity's default (FilterSettings) to about 0.3 rad/s: the Stribeck effect is the low-speed end of the
#: friction curve (Li et al. 2024 put its mixed-lubrication boundary at 0.1 rad/s); a wider bump is a bend of the
#: viscous curve, the viscous exponent's job (on the unisa-acg UR10's wrist_1 a Gaussian of Vs 0.72 rad/s won its folds
#: over the exponent and lost held out).
STRIBECK_VELOCITY_GRID = np.geomspace(0.02, 1.0, 13)[:9]
STRIBECK_ROWS_MIN = 0.05


def _stribeck_candidates(problem: IdentificationProblem, w: np.ndarray, y: np.ndarray, joints: np.ndarray,
                         weights: np.ndarray):
    """The Stribeck excess candidates of the model choice (:mod:`dynid.identify.choice`): per joint the Vs_j of
    :data:`STRIBECK_VELOCITY_GRID` (within the joint's rows, as the grid's comment says) and the shape μ_j of
    :data:`dynid.identify.stribeck.STRIBECK_SHAPES` whose column sgn(ω)·exp(−(|ω|/Vs)^μ) beside the joint's other
    columns explains most of its weighted residual with a positive coefficient (static friction above the Coulomb
    level), the others' columns projected out as :func:`_power_candidates` does: on the decimated velocity for
    the grid, then on the exact column (the full-rate feature decimated) at the Vs picked, which must keep the
    positive excess. No threshold on what it explains in the fit: the residual here is the superset law's (its
    load term takes part of what a Stribeck column explains beside Coulomb + viscous alone), so the folds decide.
    ``{joint: (Vs_j, column (M,), μ_j)}``, or None where there is none, the law has no Coulomb column or the model
    holds a Stribeck excess already (``ModelSpec.stribeck_velocity``)."""
    if 'Fc' not in problem.friction_names or not problem.keep_full_velocity or problem.stribeck is not None:
        return None
    weights = weights if weights.size == len(joints) else np.ones(len(joints))
    out = {}
    for j, rows in _open_joints(problem, joints, 'Fc'):
        velocity = problem.velocity_rows(j)
        low, middle = np.quantile(np.abs(velocity), (STRIBECK_ROWS_MIN, 0.5))
        grid = STRIBECK_VELOCITY_GRID[(STRIBECK_VELOCITY_GRID >= low) & (STRIBECK_VELOCITY_GRID <= middle)]
        if not grid.size:
            continue
        fitted = _JointRemainder(w, y, rows, weights).fitted
        velocities = np.tile(grid, len(STRIBECK_SHAPES))
        shapes = np.repeat(STRIBECK_SHAPES, grid.size)
        explained, coefficient = fitted(np.sign(velocity)[:, None] * stribeck_decay(
            velocity[:, None], velocities[None, :], shapes[None, :]))
        explained = np.where(coefficient > 0, explained, -1.0)
        if explained.max() <= 0:
            continue
        best = int(np.argmax(explained))
        vs, shape = float(velocities[best]), float(shapes[best])
        exact = problem.stribeck_feature(j, vs, shape)
        if fitted(exact[:, None])[1][0] > 0:
            column = np.zeros(len(joints))
            column[rows] = exact
            out[j] = (vs, column, shape)
    return out or None


def _without_rotor_columns(problem: IdentificationProblem, rigid: np.ndarray) -> np.ndarray:
    """The problem as built without the rotor inertias' excess (no joint kept it: the result is the one an
    identification without the candidate gives): its base parameters found again without them, their columns
    dropped from every recording's rigid columns and from ``rigid`` (the first estimate's base parameters,
    returned). The other base columns are the same standard columns, chosen first in the same order; where they
    are not, the problem stays as it is (the excess held at 0)."""
    keep = np.array([not name.startswith('Ia_') for name in problem.rigid_names])
    groups = [[problem.payload_blocks.index(i)] if i in problem.payload_blocks else [] for i in
              range(len(problem.gaps))]
    base = _structural_base(problem.robot, groups, len(problem.payload_blocks), False)
    if list(base.indices) != list(problem.base.indices[keep]):
        return rigid
    problem.base, problem.identify_rotor_inertia = base, False
    problem.spec = dataclasses.replace(problem.spec, rotor_inertia=False)
    for block in problem.blocks:
        block.rigid = block.rigid[:, :, keep]
    problem.held = {name: entry for name, entry in problem.held.items() if not name.startswith('Ia_')}
    return rigid[keep]


def _consistency_open(problem: IdentificationProblem, options: IdentifyOptions, terms_available: tuple[str, ...],
                      open_friction: bool) -> bool:
    """Whether the model choice may choose physical consistency (:mod:`dynid.identify.choice`): the default ``auto``
    rule, and nothing a consistent identification refuses (payload blocks, rigid-body parameters held, the rotor
    inertia's excess as a candidate, a friction law given that it cannot solve)."""
    physical = options.physical
    return bool(physical is not None and physical.consistency == 'auto'
                and not _consistency_refused(problem, open_friction) and 'rotor' not in terms_available
                and not _physical_not_applicable(problem, options))


def _consistency_refused(problem: IdentificationProblem, open_friction: bool) -> bool:
    """Whether a consistent identification of ``problem`` would be refused: payload blocks, rigid-body parameters
    held (left-out joints), or a friction law given that depends on τ_out (an open law is chosen among those it
    takes). The model choice tries consistency, or the regularized default, only where it would not be."""
    return bool(problem.payload_blocks or _rigid_held(problem)
                or not (open_friction or problem.spec.friction in PHYSICAL_FRICTION))


def _prior_completes(problem: IdentificationProblem, options: IdentifyOptions) -> bool:
    """Whether the robot file's prior will complete what a joint's rows lack (WLS then weights a joint too short for
    a noise estimate of its own by the pooled one instead of refusing it)."""
    return bool(options.physical is not None and options.physical.prior and
                not _physical_not_applicable(problem, options))


def _standard_step(problem: IdentificationProblem, options: IdentifyOptions, estimate: Estimate, w, y, joints,
                   exponents: np.ndarray, progress: Callable[[str], None]):
    """The robot file as a prior and physical consistency on the linear solution of any method but the drive-gain
    ones (:mod:`dynid.identify.physical`), weighted as the method weighted its rows (1/σ̂_j for WLS, the robust
    weights for IRLS and I-IRLS); (outcome or None, values, σ, W, y).

    Without a prior (--no-prior) the linear solution stays; the step still fits the robot file's own model, which
    validation predicts beside the identified one. Consistency is not checked where the model cannot take it
    without asking (:func:`_consistency_not_checked`: friction on the output torque, I-IRLS, payload blocks) and
    the prior section says so. Friction on the output torque τ_out: τ_out is the model's own torque, so the
    equations are rebuilt once from the estimate with the prior and solved again at the same weight.
    """
    reason = _physical_not_applicable(problem, options)
    if reason:
        return None, estimate.values, estimate.std, w, y
    settings = options.physical or PhysicalSettings(prior=False, consistency='never')
    skipped = _consistency_not_checked(problem, options) if settings.consistency == 'auto' else None
    if skipped:
        settings = dataclasses.replace(settings, consistency='never')
    outcome = identify_physical(problem, estimate, w, y, joints, settings, progress)
    if problem.spec.uses_load and outcome.prior.get('used'):
        w, y, _, _, _ = problem.equations(outcome.values[:len(problem.rigid_names)], exponents)
        fixed = dataclasses.replace(settings, prior_relative_std=outcome.prior['relative_std'])
        again = identify_physical(problem, estimate, w, y, joints, fixed, progress)
        again.prior.update(relative_std=outcome.prior['relative_std'],
                           cross_validation=outcome.prior.get('cross_validation'), rule=outcome.prior.get('rule'))
        outcome = again
    if skipped:
        outcome.prior['consistency']['decision'] = 'not checked'
        outcome.prior['consistency']['note'] = f'physical consistency not checked: {skipped}'
    return outcome, outcome.values, outcome.std, w, y


def _consistency_not_checked(problem: IdentificationProblem, options: IdentifyOptions) -> str | None:
    """Why the default (``auto``) consistency check is left out here though the prior is kept (None: it is
    not): what it costs is that the links may not be physical bodies (asking for physical consistency refuses
    these cases)."""
    if options.method not in PHYSICAL_METHODS:
        return (f'{options.method.upper()} re-fits its friction exponents on τ_out (physical consistency, when '
                'asked for, takes the methods ols, wls and irls)')
    if problem.spec.friction not in PHYSICAL_FRICTION:
        return (f'friction {problem.spec.friction!r} depends on the output torque (physical consistency, when '
                f'asked for, takes the friction laws {", ".join(PHYSICAL_FRICTION)})')
    if problem.payload_blocks:
        return 'a payload known by its mass only has no prior inertia to bound (give its centre of mass for it)'
    if _rigid_held(problem):
        return f'rigid-body parameters are held at the robot file\'s values ({", ".join(_rigid_held(problem))})'
    return None


def _rigid_held(problem: IdentificationProblem) -> list[str]:
    """The rigid-body parameters held at a value (left-out joints): a consistent set of links could not keep them."""
    return [name for name in problem.held if name in problem.rigid_names]


def _physical_not_applicable(problem: IdentificationProblem, options: IdentifyOptions) -> str | None:
    """Why the standard-parameter step does not apply to this identification (None when it does); an error
    where consistency was asked for explicitly (``always``). The prior applies to every method but the
    drive-gain ones (TLS, MLS: their torque is unknown until the gains are), whatever is held."""
    settings = options.physical or PhysicalSettings(prior=False, consistency='never')
    reason = settings.not_applicable(problem.spec, options.method) if settings.consistency == 'always' else None
    if reason is None and options.method in ('tls', 'mls'):
        reason = 'the drive gains are identified with the parameters (tls, mls): the prior takes a known torque'
    if reason is None and settings.consistency == 'always' and problem.payload_blocks:
        reason = ('physical identification does not take recordings with only a known payload mass; give the '
                  'payload fully ({payload_com}) or leave it out')
    if reason is None and settings.consistency == 'always' and _rigid_held(problem):
        reason = (f'physical identification does not take rigid-body parameters held at a value '
                  f'({", ".join(_rigid_held(problem))}: left-out joints); identify without {{physical}}')
    if reason and settings.consistency == 'always':
        raise InputError(reason, fields=('payload_com', 'physical'))
    return reason
