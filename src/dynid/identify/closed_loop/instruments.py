"""The equations of the simulated closed loop (:mod:`.simulation`) on the recording's rows, and the estimates made
of them: IDIM-IV's (Janot, Vandanjon & Gautier 2014, eqs. (20)–(24)) and DIDIM's step (Gautier, Janot & Vandanjon
2013, eq. (20)).

The simulated states of every piece of the recordings go through the same filters, decimation and columns as the
measured ones (:func:`dynid.identify.equations.prepare.prepare`), and keep the measured rows' selection (stiction
rejection), so that row i of the simulated regressor W_s is row i of W: Z = W_s are IDIM-IV's instruments, and DIDIM
fits y on W_s.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from dynid.errors import InputError
from dynid.identify.closed_loop.controller import (
    ControllerGains,
    file_feedforward,
    gains_from_file,
    gains_from_recording,
    with_model_feedforward,
)
from dynid.identify.closed_loop.simulation import MAX_STEP_S, RigidPlant, simulate
from dynid.identify.equations.prepare import prepare
from dynid.identify.equations.problem import IdentificationProblem
from dynid.identify.equations.read import read
from dynid.identify.solve.solvers import Estimate, condition_numbers
from dynid.io.dataset import Dataset
from dynid.signal.preprocess import FilterSettings


@dataclass(frozen=True)
class ClosedLoopSettings:
    """What the closed-loop methods read of their options (:func:`closed_loop_settings`)."""

    controller_gains: str = ''
    controller_model: str = 'auto'
    feedforward: bool = True
    max_iterations: int = 10
    tolerance: float = 1e-3
    max_step_s: float = MAX_STEP_S


def closed_loop_settings(values: dict) -> ClosedLoopSettings:
    """The settings of a closed-loop method's resolved options (:meth:`IdentificationMethod.option_values`)."""
    return ClosedLoopSettings(**{f.name: values[f.name] for f in dataclasses.fields(ClosedLoopSettings)
                                 if f.name in values})


def refuse_unsupported(problem: IdentificationProblem, method: str) -> None:
    """InputError where a closed-loop method cannot simulate the recordings' loop: a recording without the
    controller's reference, a payload, coupled drives, or a friction law that is not a sum of features of the
    velocity."""
    missing = [r.name or f'recording {i + 1}' for i, r in enumerate(problem.recordings) if r.dataset.reference is None]
    if missing:
        raise InputError(
            f'{method.upper()} simulates the closed loop the recording was taken in and needs the controller\'s '
            f'reference (q_r, q̇_r) in the recording; {", ".join(dict.fromkeys(missing))} holds none: record the '
            f'controller\'s reference beside the joint states (the trajectory controller\'s state, the excitation '
            f'trajectory) or import a log with its reference columns (dynid import), or use a method that needs '
            f'none ({{method}} wls)', fields=('method',))
    law = problem.law
    if problem.payload_blocks or any(r.payload is not None for r in problem.recordings):
        raise InputError(f'{method.upper()} does not simulate a payload yet: identify it without one',
                         fields=('payload_mass',))
    if problem.coupling is not None:
        raise InputError(f'{method.upper()} does not simulate coupled drives yet', fields=('drives',))
    if law.load_symbols or law.shaped_symbols or problem.candidate.temperature or problem.stribeck is not None \
            or problem.joint_side:
        raise InputError(f'{method.upper()} simulates friction laws of the velocity alone, not '
                         f'{problem.candidate.friction!r}: give {{friction}} viscous_coulomb', fields=('friction',))


def controller_of(problem: IdentificationProblem, settings: ClosedLoopSettings, k: int) -> ControllerGains:
    """The controller of piece ``k``: the file's gains, or identified from the piece, with the model-based
    feedforward where ``settings.controller_model`` (or, on auto, the file) asks
    (:mod:`dynid.identify.closed_loop.controller`)."""
    drives = problem.drives
    drive_gain, dataset = None if drives is None else drives.drive_gain, problem.recordings[k].dataset
    if not settings.controller_gains:
        return gains_from_recording(dataset, drive_gain, settings.feedforward, settings.controller_model,
                                    problem.robot, None if drives is None else drives.rotor_inertia)
    gains = gains_from_file(settings.controller_gains, problem.robot.joint_names, settings.feedforward)
    model = settings.controller_model
    if model == 'auto':
        model = 'pid+model' if file_feedforward(settings.controller_gains) == 'model' else 'pid'
    return with_model_feedforward(gains, dataset, drive_gain, problem.robot) if model == 'pid+model' else gains


def plant_of(problem: IdentificationProblem, values: np.ndarray) -> RigidPlant:
    """The model of ``problem``'s parameters ``values`` as a plant: standard parameters whose base parameters are the
    identified ones (the robot file's, moved on the base columns by the difference: any such set gives the same
    torques), the rotor inertias identified (plus the drive data's where B·θ̈ was subtracted) and the friction law."""
    robot, base = problem.robot, problem.base
    n, rigid = robot.n, len(problem.rigid_names)
    extended = [robot.standard_parameters]
    if problem.identify_rotor_inertia:
        extended.append(np.zeros(n))
    extended = np.concatenate(extended)
    extended[base.indices] += values[:rigid] - base.from_standard(extended)
    rotor = extended[10 * n:] if problem.identify_rotor_inertia else np.zeros(n)
    if problem.compensate_rotor:
        rotor = rotor + problem.drives.rotor_inertia
    names = problem.parameter_names()
    law, symbols = problem.law, problem.friction_names
    parameters = {s: np.array([values[names.index(f'{s}_{j + 1}')] for j in range(n)]) for s in symbols}

    def friction(velocity: np.ndarray) -> np.ndarray:
        return law.torque(parameters, velocity, np.sign(velocity), None)

    return RigidPlant(robot, extended[:10 * n], rotor, friction)


def simulated_problem(problem: IdentificationProblem, values: np.ndarray, controllers: Sequence[ControllerGains],
                      max_step_s: float = MAX_STEP_S) -> IdentificationProblem:
    """``problem`` with every piece's states replaced by the closed loop of ``values`` simulated on its reference
    (module docstring); its rows are ``problem``'s."""
    plant = plant_of(problem, values)
    inputs = [dataclasses.replace(r, dataset=_simulated(r.dataset, simulate(plant, gains, r.dataset.t,
                                                                           r.dataset.reference, max_step_s),
                                                        problem))
              for r, gains in zip(problem.recordings, controllers, strict=True)]
    prepared = problem.prepared
    # the settings as given, what was derived from the rate derived again: recordings of several rates are brought to
    # the lowest as the measured ones were, not filtered at the rate the measured ones were resolved for
    settings = FilterSettings.from_dict(prepared.settings.to_dict())
    equations = prepare(problem.robot, read(problem.robot, inputs, settings), prepared.spec, settings,
                        prepared.drives, keep_full_velocity=prepared.keep_full_velocity, stribeck=prepared.stribeck)
    if len(equations.blocks) != len(prepared.blocks):
        raise InputError('the simulated recordings do not make the measured ones\' equations')
    blocks = tuple(dataclasses.replace(s, keep=m.keep, y=m.y) for s, m in zip(equations.blocks, prepared.blocks,
                                                                              strict=True))
    return IdentificationProblem.of(dataclasses.replace(prepared, blocks=blocks), problem.candidate)


def _simulated(dataset: Dataset, run, problem: IdentificationProblem) -> Dataset:
    """The recording with the simulated states: positions and velocities, the rotor's where it has them (rigid:
    θ = q), its torque or current the simulated one."""
    drives = problem.drives
    current = None
    if dataset.current is not None:
        current = run.torque / drives.drive_gain if drives is not None else dataset.current
    return Dataset(dataset.joint_names, dataset.t, run.q, run.dq,
                   tau=None if dataset.tau is None else run.torque, current=current,
                   theta=None if dataset.theta is None else run.q, dtheta=None if dataset.dtheta is None else run.dq,
                   temperature=dataset.temperature, payload=dataset.payload, source=dict(dataset.source))


def instrumental_estimate(w: np.ndarray, z: np.ndarray, y: np.ndarray, weights: np.ndarray,
                          names: list[str]) -> Estimate:
    """χ̂_IV = (ZᵀGW)⁻¹·ZᵀGy, the rows weighted by ``weights`` (1/σ̂_j per row, as WLS), with its covariance
    σ̂²·(ZᵀGW)⁻¹·ZᵀGZ·(WᵀGZ)⁻¹, σ̂² = ‖G^½(y − Wχ̂)‖²/(r − b) (Janot et al. 2014, eqs. (22)–(24))."""
    zw, ww, yw = z * weights[:, None], w * weights[:, None], y * weights
    cross = zw.T @ ww
    try:
        inverse = np.linalg.inv(cross)
    except np.linalg.LinAlgError:
        raise InputError('the instruments do not determine the parameters (ZᵀW singular): the simulated loop '
                         'does not excite every base parameter') from None
    values = inverse @ (zw.T @ yw)
    residual = y - w @ values
    variance = float((residual * weights) @ (residual * weights)) / max(1, len(y) - len(values))
    covariance = variance * inverse @ (zw.T @ zw) @ inverse.T
    condition = condition_numbers(zw)
    return Estimate(list(names), values, covariance, residual, np.zeros(0), weights, condition[0],
                    scaled_condition_number=condition[1])


def iterate(problem: IdentificationProblem, start: Estimate, w: np.ndarray, y: np.ndarray, settings: ClosedLoopSettings,
            step: Callable[[np.ndarray, np.ndarray], Estimate], progress: Callable[[str], None], label: str,
            fallback: np.ndarray | None = None) -> Estimate:
    """χ_{k+1} = ``step``(W_s(χ_k), χ_k) from ``start`` until ‖χ_{k+1} − χ_k‖/‖χ_k‖ < ``settings.tolerance`` or
    ``settings.max_iterations``; the last estimate, with ``iterations`` and ``extra['changes']`` (each iteration's
    relative change), ``extra['converged']``, ``extra['controller']`` (where the gains came from),
    ``extra['controller_notes']`` (what the controllers' fits say of them) and
    ``extra['started_from']``: 'the least-squares estimate', or where the loop simulated with it diverges, the
    ``fallback`` values (the robot file's rigid body: 'the robot file')."""
    controllers = [controller_of(problem, settings, k) for k in range(len(problem.recordings))]
    values, changes, started = start.values, [], 'the least-squares estimate'
    estimate = start
    for k in range(settings.max_iterations):
        try:
            simulated = simulated_problem(problem, values, controllers, settings.max_step_s)
        except InputError:
            if k > 0 or fallback is None:
                raise
            values, started = fallback, 'the robot file'
            progress(f'{label}: the loop simulated with the least-squares estimate diverges; starting from the '
                     f'robot file\'s rigid-body parameters')
            simulated = simulated_problem(problem, values, controllers, settings.max_step_s)
        z = simulated.equations(values[:len(problem.rigid_names)])[0]
        estimate = step(z, values)
        changes.append(float(np.linalg.norm(estimate.values - values) / max(np.linalg.norm(values), 1e-300)))
        values = estimate.values
        progress(f'{label} iteration {k + 1}: relative change of the parameters {changes[-1]:.2e}')
        if changes[-1] < settings.tolerance:
            break
    extra = {**estimate.extra, 'changes': changes, 'converged': bool(changes and changes[-1] < settings.tolerance),
             'controller': controllers[0].source, 'started_from': started,
             'controller_notes': list(dict.fromkeys(c.note for c in controllers if c.note))}
    return dataclasses.replace(estimate, iterations=len(changes), extra=extra)
