"""The fit of the closed-loop methods (IDIM-IV, DIDIM): IDIM-WLS first, then the loop simulated with the latest
estimate and the parameters solved again on the simulated regressor W_s until they settle
(:func:`dynid.identify.closed_loop.instruments.iterate`); the standard-parameter step keeps the linear solution (the
robot file's prior does not weight these estimates: :data:`dynid.identify.closed_loop.NO_PRIOR`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import numpy as np

from dynid.blas import one_blas_thread
from dynid.identify.closed_loop.instruments import (
    ClosedLoopSettings,
    closed_loop_settings,
    instrumental_estimate,
    iterate,
    refuse_unsupported,
)
from dynid.identify.equations.problem import IdentificationProblem
from dynid.identify.equations.request import IdentifyOptions
from dynid.identify.registry import START_METHOD, identification_method
from dynid.identify.solve.solvers import Estimate, wls
from dynid.identify.steps.fit import Fit, load_loop, nominal_rigid, standard_solved, with_held


def settings_of(options: IdentifyOptions) -> ClosedLoopSettings:
    """The method's options as given (checked against its declaration), the defaults elsewhere."""
    return closed_loop_settings(identification_method(options.method).option_values(options.method_options))


def least_squares_start(problem: IdentificationProblem, options: IdentifyOptions, progress: Callable[[str], None]):
    """(IDIM-WLS's estimate, W, y, joints, held mask) on the problem's rows: where the closed-loop methods start."""
    exponents = np.full(problem.robot.n, problem.spec.exponent)
    start, w, y, joints = load_loop(problem, START_METHOD, dataclasses.replace(options, method=START_METHOD),
                                    exponents, progress)
    held = np.array([name in problem.held for name in problem.parameter_names()])
    return start, w, y, joints, held


def closed_loop_fit(problem: IdentificationProblem, options: IdentifyOptions, progress: Callable[[str], None],
                    solve: Callable, label: str) -> Fit:
    """The fit of a closed-loop method whose step is ``solve(W_free, W_s,free, y_free, weights, names, joints,
    options) -> Estimate`` (module docstring)."""
    refuse_unsupported(problem, options.method)
    _, estimate, w, y, joints = iterated(problem, options, settings_of(options), solve, label, progress)
    solved = standard_solved(problem, options, estimate, w, y, joints, np.full(problem.robot.n, problem.spec.exponent),
                             progress)
    notes = list(estimate.extra['controller_notes'])
    notes += [] if estimate.extra['converged'] else [
        f'{label} did not settle in {estimate.iterations} iterations (last relative change '
        f'{estimate.extra["changes"][-1]:.2g}): give more ({{method_option}} max_iterations=N)']
    if estimate.extra['started_from'] == 'the robot file':
        notes.append(f'{label} started from the robot file\'s rigid-body parameters: the loop simulated with the '
                     f'least-squares estimate diverges (that estimate is far from the robot)')
    return dataclasses.replace(solved, notes=(*solved.notes, *notes))


def iterated(problem: IdentificationProblem, options: IdentifyOptions, settings: ClosedLoopSettings, solve: Callable,
             label: str, progress: Callable[[str], None]):
    """(IDIM-WLS's estimate, the closed-loop method's, W, y, joints) on the same rows: the method's ``solve`` (as
    :func:`closed_loop_fit` takes it) iterated from WLS's estimate, the held parameters at their values."""
    with one_blas_thread():
        start, w, y, joints, held = least_squares_start(problem, options, progress)
        names = problem.parameter_names()
        free_names = [name for name, h in zip(names, held, strict=True) if not h]
        free_y = y - w[:, held] @ start.values[held]

        def step(z: np.ndarray, values: np.ndarray) -> Estimate:
            solved = solve(w[:, ~held], z[:, ~held], free_y, start.row_weights, free_names, joints, options)
            return with_held(solved, names, held, values[held])

        fallback = start.values.copy()
        fallback[:len(problem.rigid_names)] = nominal_rigid(problem)
        return start, iterate(problem, start, w, y, settings, step, progress, label, fallback), w, y, joints


def least_squares_and_instrumental(problem: IdentificationProblem, settings: ClosedLoopSettings | None = None,
                                   options: IdentifyOptions | None = None,
                                   progress: Callable[[str], None] = lambda _: None) -> tuple[Estimate, Estimate]:
    """(IDIM-WLS's estimate, IDIM-IV's) of ``problem`` on the same rows and weights, each with its values and
    covariance over ``problem.parameter_names()`` (held parameters at their values, σ 0): what the Durbin–Wu–Hausman
    test compares (Janot et al. 2016). ``settings``: the closed loop's (default :class:`ClosedLoopSettings`: gains
    identified from the recording); ``options``: the WLS start's (default :class:`IdentifyOptions`)."""
    return instrumented(problem, settings, options, progress)[:2]


def instrumented(problem: IdentificationProblem, settings: ClosedLoopSettings | None = None,
                 options: IdentifyOptions | None = None, progress: Callable[[str], None] = lambda _: None,
                 label: str = 'IDIM-IV') -> tuple[Estimate, Estimate, tuple[np.ndarray, ...]]:
    """(IDIM-WLS's estimate, IDIM-IV's, the rows of IV's last step over the free parameters: W, Z, y, WLS's row
    weights, each row's joint), as :func:`least_squares_and_instrumental` takes them; ``label`` names the iterations in
    ``progress``."""
    refuse_unsupported(problem, 'IDIM-IV')
    rows: list[np.ndarray] = []

    def step(w, z, y, weights, names, joints, options) -> Estimate:
        rows[:] = [w, z, y, weights, joints]
        return instrumental_step(w, z, y, weights, names, joints, options)

    start, iv, *_ = iterated(problem, options or IdentifyOptions(), settings or ClosedLoopSettings(), step, label,
                             progress)
    return start, iv, tuple(rows)


def instrumental_step(w, z, y, weights, names, joints, options) -> Estimate:
    """IDIM-IV's step: :func:`dynid.identify.closed_loop.instruments.instrumental_estimate` with WLS's weights."""
    return instrumental_estimate(w, z, y, weights, names)


def output_error_step(w, z, y, weights, names, joints, options) -> Estimate:
    """DIDIM's step: IDIM-WLS of y on the simulated regressor W_s (Gautier et al. 2013, eq. (20): the Gauss–Newton
    step of the torque's output error, whose sensitivity is W_s)."""
    return wls(z, y, joints, names, floor_fraction=options.noise_floor_fraction)
