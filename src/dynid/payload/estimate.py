"""Payload identification: a flange payload's mass, centre of mass and inertia from one short motion.

The arm's identified model (a payload-free :class:`~dynid.identify.result.result.IdentificationResult`)
predicts the recording's torques; what it leaves unexplained is the payload's torque, linear in the
payload's ten standard parameters φ about the flange origin (Gautier and Briot 2014, eq. (5)):

    y − W·χ̂  =  W_P(q, q̇, q̈)·φ  +  o_j  +  ε          (rows of the joints that move, decimated)

y and W·χ̂ come through the result's own pipeline (:func:`dynid.identify.validation.validate.predict`: its
torque source, drive gains, friction and filters), W_P is the flange payload's regressor
(:meth:`dynid.model.RobotModel.payload_regressor`) filtered and decimated alike, and o_j an optional
torque offset per joint (``joint_offsets``: friction and sensor offsets drift with temperature). Where
the measured torque holds friction (currents), the payload also loads each gear: a column
sgn(ω)·((ŷ + τ_P)² − ŷ²) per joint carries the change of a Coulomb friction that grows with the
squared load torque (``load_friction``; thesis ch.4 eq. (P1-27)), τ_P the payload's torque of the
estimate before (two passes). Joints at rest are left out, and rows in the stiction zone as in
identification.
The solve is weighted LS with per-joint σ̂ from an ordinary LS pass, the offsets and load-friction
columns projected out (their σ do not enter the payload's).

Physical consistency: the payload's pseudo-inertia J(φ) must be positive definite (Wensing, Kim and
Slotine 2017); an estimate outside is replaced by the nearest consistent one in the weighted
least-squares sense, parameterized as J = U·Uᵀ with U upper triangular of positive diagonal (the
log-Cholesky parameters of Rucker and Wensing 2022). The inertia about the centre of mass is kept
only where the motion identifies it (its largest σ within ``inertia_relative_std_max`` of its size);
elsewhere mass and centre of mass are fitted with the payload's inertia modelled as a point mass's,
and the estimate says so. σ come from the WLS covariance, carried to mass, centre of mass and
inertia about it to first order.

The estimate is refused (InputError naming the reason) when the result is not payload-free (a
payload regrouped into the arm's base parameters), when the wrists barely move, when the mass or
centre of mass cannot be determined, and when the recording does not fit the result's arm (its
residual far above the result's own: another robot, other drives). Figures on the twin:
``benchmarks/bench_payload.py``.
"""

from __future__ import annotations

import dataclasses
import re
import time
from dataclasses import dataclass, field
from functools import partial

import numpy as np

from dynid.blas import one_blas_thread
from dynid.errors import InputError
from dynid.friction.laws import friction_law
from dynid.identify import IdentificationProblem, IdentificationResult, Prediction, equation_metrics, predict
from dynid.io.dataset import Dataset
from dynid.model.drives import JointDrives
from dynid.model.inertial import Payload, pseudo_inertia, split_parameters
from dynid.model.robot import RobotModel
from dynid.settings import check_settings, setting
from dynid.signal.preprocess import differentiate

INERTIA_CHOICES = ('auto', 'always', 'never')
WRIST_JOINTS = 3  # the last three joints: the wrist, whose motion turns the payload
_PAYLOAD_BLOCK = re.compile(r'_P\d+\b')


@dataclass(frozen=True)
class PayloadSettings:
    """How a payload is identified (module docstring): every front end translates these fields (``dynid payload``'s
    options by field name, identifier_node's parameters ``payload_<field>``)."""

    inertia: str = setting('auto', 'identify the inertia about the centre of mass: auto (where the motion identifies '
                                   'it), always, never (mass and centre of mass only)', choices=INERTIA_CHOICES,
                           parameter='payload_inertia')
    joint_offsets: bool = setting(True, 'estimate a torque offset per joint beside the payload (drift of friction '
                                        'and sensor offsets)', parameter='payload_joint_offsets')
    load_friction: bool = setting(True, 'where the measured torque holds friction (currents), estimate each joint\'s '
                                        'change of Coulomb friction with its squared load beside the payload, which '
                                        'loads the gears', parameter='payload_load_friction')
    inertia_relative_std_max: float = setting(0.07, 'the inertia counts as identified when its largest σ is at most '
                                                    'this share of its size', low=1e-6, high=1.0,
                                              parameter='payload_inertia_relative_std_max')
    mass_relative_std_max: float = setting(0.05, 'refuse when σ of the mass exceeds this share of the mass', low=1e-6,
                                           high=1.0, parameter='payload_mass_relative_std_max')
    com_std_max_m: float = setting(0.01, 'refuse when σ of the centre of mass (largest axis) exceeds this',
                                   unit='m', low=1e-6, high=1.0, parameter='payload_com_std_max_m')
    wrist_motion_min_rad: float = setting(0.3, 'refuse unless at least two wrist joints move over this range',
                                          unit='rad', low=0.0, high=10.0, parameter='payload_wrist_motion_min_rad')
    residual_ratio_max: float = setting(5.0, 'refuse when, with the payload, a joint\'s RMSE exceeds this multiple of '
                                             'the result\'s own (a recording of another robot, other drives or '
                                             'another torque signal)', low=1.0, high=100.0,
                                        parameter='payload_residual_ratio_max')

    def __post_init__(self) -> None:
        check_settings(self)


@dataclass
class PayloadEstimate:
    """An identified payload (module docstring). Flange frame axes; SI units.

    Attributes:
        mass, mass_std: [kg]. com, com_std: centre of mass (3,) [m]. inertia, inertia_std: (3, 3) inertia
        about the centre of mass [kg·m²] and its σ, None where not identified (``inertia_note`` says why).
        parameters: the ten standard parameters about the flange origin used for torques (a point mass's
        inertia where the inertia was not identified). constrained: the unconstrained estimate was not
        physically consistent and was projected. min_pseudo_eigenvalue: smallest eigenvalue of J [kg·m²].
        offsets: {joint: torque offset [N·m]} estimated beside the payload. load_friction: {joint: change of the
        Coulomb friction per squared load torque [1/(N·m)]} (currents only). validation: equation metrics of
        the result on the recording ``without_payload`` and ``with_payload``. joints: joints whose rows
        entered; rows: their number. robot, flange: the robot and its payload frame. solve_s: seconds.
    """

    mass: float
    mass_std: float
    com: np.ndarray
    com_std: np.ndarray
    inertia: np.ndarray | None
    inertia_std: np.ndarray | None
    inertia_note: str
    parameters: np.ndarray
    constrained: bool
    min_pseudo_eigenvalue: float
    offsets: dict[str, float]
    load_friction: dict[str, float]
    validation: dict
    joints: list[str]
    rows: int
    robot: str
    flange: str
    residual_ratios: dict[str, float] = field(default_factory=dict)
    solve_s: float = 0.0
    warnings: list[str] = field(default_factory=list)

    @property
    def inertia_identified(self) -> bool:
        return self.inertia is not None

    def payload(self) -> Payload:
        """The estimate as a :class:`~dynid.model.Payload` (a point mass where the inertia was not identified)."""
        return Payload(self.mass, self.com, self.inertia if self.inertia is not None else np.zeros((3, 3)))


def check_payload_free(result: IdentificationResult) -> None:
    """InputError when the result's arm parameters hold a payload: a base parameter regrouping payload
    parameters (identified from runs that all carried one payload with only its mass known)."""
    mixed = [name for name, expression in result.base_expressions.items()
             if not _PAYLOAD_BLOCK.search(name) and _PAYLOAD_BLOCK.search(expression)]
    if mixed:
        raise InputError(f'the result is not payload-free: its arm parameters {", ".join(mixed[:3])}'
                         f'{" …" if len(mixed) > 3 else ""} hold the payload of its identification runs; identify '
                         f'the arm from runs without a payload (or with a fully known one, {{payload_com}})',
                         fields=('payload_com',))


def check_wrist_motion(robot: RobotModel, dataset: Dataset, minimum_rad: float) -> None:
    """InputError unless at least two of the wrist joints (the last three) move over ``minimum_rad``."""
    missing = [name for name in robot.joint_names if name not in dataset.joint_names]
    if missing:
        raise InputError(f'{dataset.source.get("bag", "the recording")}: joints {missing} of robot {robot.name!r} '
                         f'are not in the recording ({list(dataset.joint_names)})')
    wrists = robot.joint_names[-WRIST_JOINTS:]
    q = dataset.q[:, [dataset.joint_names.index(name) for name in wrists]]
    ranges = q.max(axis=0) - q.min(axis=0)
    if np.count_nonzero(ranges >= minimum_rad) < min(2, len(wrists)):
        moved = ', '.join(f'{name} {r:.3g} rad' for name, r in zip(wrists, ranges, strict=True))
        raise InputError(f'the wrists are not excited ({moved}; at least two need {minimum_rad:g} rad): record a '
                         f'payload motion (dynid excite designs one for the payload only)')


#: A joint whose position spans less than this [rad] during the recording is at rest: its equations are left out.
REST_RANGE_RAD = 0.02


def joints_at_rest(robot: RobotModel, dataset: Dataset) -> tuple[str, ...]:
    """The joints of ``robot`` whose position spans less than :data:`REST_RANGE_RAD` in ``dataset``."""
    q = dataset.q[:, [dataset.joint_names.index(name) for name in robot.joint_names]]
    return tuple(name for name, span in zip(robot.joint_names, np.ptp(q, axis=0), strict=True)
                 if span < REST_RANGE_RAD)


def _payload_columns(robot: RobotModel, signals, decimator, a: int, b: int) -> np.ndarray:
    """Payload columns (b − a, n, 10) of the decimator's filter-rate samples a..b−1."""
    return robot.payload_regressor(*signals.link_rows_at(decimator.samples(a, b))).reshape(b - a, robot.n, 10)


def _payload_rows(prediction: Prediction, robot: RobotModel) -> np.ndarray:
    """The payload columns W_P (rows, 10) of the prediction's equations, filtered and decimated alike."""
    problem, parts = prediction.problem, []
    for k, block in enumerate(problem.blocks):
        signals, _ = differentiate(problem.recordings[k].dataset, problem.settings, rotor=False, derivatives=False)
        parts.append(block.decimator.chunked(partial(_payload_columns, robot, signals, block.decimator))[
            problem.block_keep(k)])
    rows = np.concatenate(parts)
    if rows.shape[0] != prediction.measured.shape[0]:
        raise RuntimeError('payload columns and equations differ in length')
    return rows


def _offset_projection(joints: np.ndarray, offsets: bool):
    """A function removing each joint's weighted mean from rows (the offsets' least-squares part)."""
    if not offsets:
        return lambda a, weights: a
    labels = np.unique(joints, return_inverse=True)[1]

    def project(a: np.ndarray, weights: np.ndarray) -> np.ndarray:
        a2 = a.reshape(len(a), -1)
        w2 = weights**2
        means = np.stack([np.bincount(labels, weights=w2 * column) for column in a2.T], axis=1) \
            / np.bincount(labels, weights=w2)[:, None]
        return (a2 - means[labels]).reshape(a.shape)

    return project


@dataclass
class _Solution:
    """One weighted LS solve: φ (10,) or (m, h) (4,) and its covariance, the row weights, the offsets and the
    load-friction changes per joint index, ``reduce`` (rows → weighted rows with the offsets and load-friction
    columns projected out, Frisch–Waugh), what is left of the residual [N·m] and the note on the inertia."""

    phi: np.ndarray
    covariance: np.ndarray
    weights: np.ndarray
    offsets: dict[int, float]
    load_friction: dict[int, float]
    reduce: object
    remaining: np.ndarray
    note: str = ''


def _wls(columns: np.ndarray, residual: np.ndarray, joints: np.ndarray, offsets: bool,
         nuisance: np.ndarray | None) -> _Solution:
    """Weighted LS of the payload ``columns`` with per-joint σ̂ from an ordinary LS pass, beside a torque offset
    per joint (``offsets``) and the ``nuisance`` columns (rows, k) of each joint's load-friction change."""
    project = _offset_projection(joints, offsets)
    labels, inverse = np.unique(joints, return_inverse=True)
    nuisance = np.zeros((len(residual), 0)) if nuisance is None else nuisance

    def reducer(weights: np.ndarray):
        q = np.linalg.qr(project(nuisance, weights) * weights[:, None])[0] if nuisance.shape[1] else nuisance

        def reduce(x: np.ndarray) -> np.ndarray:
            xw = project(x, weights) * (weights[:, None] if x.ndim == 2 else weights)
            return xw - q @ (q.T @ xw)
        return reduce

    ones = np.ones(len(residual))
    reduce = reducer(ones)
    a, r = reduce(columns), reduce(residual)
    error = r - a @ np.linalg.lstsq(a, r, rcond=None)[0]
    counts = np.bincount(inverse)
    free = columns.shape[1] + nuisance.shape[1] + (len(labels) if offsets else 0)
    sigma = np.sqrt(np.bincount(inverse, weights=error**2) / np.maximum(counts - free / len(labels), 1.0))
    sigma = np.maximum(sigma, 1e-9 * max(1.0, float(np.abs(residual).max())))
    weights = 1.0 / sigma[inverse]
    reduce = reducer(weights)
    a, r = reduce(columns), reduce(residual)
    solution = np.linalg.lstsq(a, r, rcond=None)[0]
    error = r - a @ solution
    covariance = float(error @ error) / max(1, len(r) - free) * np.linalg.pinv(a.T @ a)
    left = residual - columns @ solution  # offsets and load friction, then noise
    load = {}
    if nuisance.shape[1]:
        nw = project(nuisance, weights) * weights[:, None]
        coefficients = np.linalg.lstsq(nw, project(left, weights) * weights, rcond=None)[0]
        owners = [int(joints[np.flatnonzero(column)[0]]) for column in nuisance.T]
        load = dict(zip(owners, coefficients.tolist(), strict=True))
        left = left - nuisance @ coefficients
    offset_values = {int(j): float(np.average(left[joints == j], weights=weights[joints == j]**2))
                     for j in labels} if offsets else {}
    return _Solution(solution, covariance, weights, offset_values, load, reduce,
                     left - _offset_rows(offset_values, joints))


def _com_jacobian(phi: np.ndarray) -> np.ndarray:
    """∂c/∂(m, h) (3, 4) of c = h/m."""
    mass, h = phi[0], phi[1:4]
    return np.column_stack([-h / mass**2, np.eye(3) / mass])


def _inertia_about_com(phi: np.ndarray) -> np.ndarray:
    """The 6 independent entries (Ixx, Ixy, Iyy, Ixz, Iyz, Izz) about the CoM of 10 parameters about the origin."""
    mass, h, inertia = split_parameters(phi)
    about = inertia - (h @ h * np.eye(3) - np.outer(h, h)) / mass
    return np.array([about[0, 0], about[0, 1], about[1, 1], about[0, 2], about[1, 2], about[2, 2]])


def _tensor(six: np.ndarray) -> np.ndarray:
    xx, xy, yy, xz, yz, zz = six
    return np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]])


def _point_mass_inertia(mass: float, h: np.ndarray) -> np.ndarray:
    """Inertia entries about the origin of a point mass with first moment h: (hᵀh·E − h·hᵀ)/m."""
    inertia = (h @ h * np.eye(3) - np.outer(h, h)) / mass
    return np.array([inertia[0, 0], inertia[0, 1], inertia[1, 1], inertia[0, 2], inertia[1, 2], inertia[2, 2]])


#: Smallest eigenvalue a projected pseudo-inertia keeps, relative to its largest: strictly positive definite.
PSEUDO_INERTIA_MARGIN = 1e-6


def _log_cholesky(j: np.ndarray) -> np.ndarray:
    """Log-Cholesky parameters (10,) of a positive definite 4×4 J = U·Uᵀ, U upper triangular."""
    flip = np.eye(4)[::-1]
    u = flip @ np.linalg.cholesky(flip @ j @ flip) @ flip  # the Cholesky factor of J reversed in both orders
    return np.concatenate([np.log(np.diag(u)), u[np.triu_indices(4, 1)]])


def _from_log_cholesky(theta: np.ndarray, floor: float) -> np.ndarray:
    """The ten parameters of J = U·Uᵀ + floor·E (every eigenvalue of J at least ``floor``)."""
    from dynid.model.inertial import parameters_of_pseudo_inertia

    u = np.diag(np.exp(theta[:4]))
    u[np.triu_indices(4, 1)] = theta[4:]
    return parameters_of_pseudo_inertia(u @ u.T + floor * np.eye(4))


def _consistent(phi: np.ndarray, a: np.ndarray, r: np.ndarray) -> np.ndarray:
    """The physically consistent φ nearest to the weighted LS solution (module docstring): least squares over
    the log-Cholesky parameters of J − floor·E, from the eigenvalue-clipped J of ``phi``."""
    import scipy.optimize

    values, vectors = np.linalg.eigh(pseudo_inertia(phi))
    floor = PSEUDO_INERTIA_MARGIN * max(float(np.abs(values).max()), 1e-12)
    start = _log_cholesky((vectors * np.maximum(values - floor, floor)) @ vectors.T)
    solved = scipy.optimize.least_squares(lambda theta: a @ _from_log_cholesky(theta, floor) - r, start,
                                          method='lm', xtol=1e-12, ftol=1e-12)
    return _from_log_cholesky(solved.x, floor)


def identify_payload(result: IdentificationResult, robot: RobotModel, dataset: Dataset,
                     settings: PayloadSettings | None = None, drives: JointDrives | None = None,
                     name: str | None = None) -> PayloadEstimate:
    """The payload at ``robot``'s flange during ``dataset``, given the arm's identification ``result``.

    Args:
        result: payload-free identification of the arm (its torque source, drive gains, friction, filters).
        robot: the robot model of ``result``; its flange frame is the payload frame.
        dataset: the payload motion (joint positions; current or torque as the result's torque source needs).
        settings: :class:`PayloadSettings` (default values when None).
        drives: drive data for results that recorded none (:func:`dynid.identify.validation.validate.result_drives`).
        name: the recording's name in messages.

    Returns: :class:`PayloadEstimate`. Raises InputError for the refusals of the module docstring.

    >>> estimate = identify_payload(result, robot, dataset)            # doctest: +SKIP
    >>> estimate.mass, estimate.com                                    # doctest: +SKIP
    """
    settings = settings or PayloadSettings()
    started = time.perf_counter()
    with one_blas_thread():  # small tall solves: more BLAS threads than free cores only slow them down
        estimate = _identify(result, robot, dataset, settings, drives, name)
    estimate.solve_s = time.perf_counter() - started
    return estimate


def _identify(result: IdentificationResult, robot: RobotModel, dataset: Dataset, settings: PayloadSettings,
              drives: JointDrives | None, name: str | None) -> PayloadEstimate:
    check_payload_free(result)
    check_wrist_motion(robot, dataset, settings.wrist_motion_min_rad)
    prediction = predict(result, robot, dataset, name=name, drives=drives,
                         exclude_joints=joints_at_rest(robot, dataset))
    columns = _payload_rows(prediction, robot)
    joints = prediction.joints
    used = np.flatnonzero(np.bincount(joints, minlength=robot.n) >= 20)
    rows = np.isin(joints, used)
    if not rows.any():
        raise InputError('no joint moved long enough for its rows to count (friction velocity above the result\'s '
                         'stiction_velocity)')
    columns, joints = columns[rows], joints[rows]
    measured, predicted = prediction.measured[rows], prediction.predicted[rows]
    residual = measured - predicted
    load_model = bool(friction_law(prediction.problem.spec.friction).load_symbols)

    with_friction = prediction.problem.torque_source != 'joint_torque'
    velocity = np.concatenate([b.velocity[prediction.problem.block_keep(k)]
                               for k, b in enumerate(prediction.problem.blocks)])[rows]
    solution = _solve(columns, residual, joints, settings, None)
    nuisance = None
    for _ in range(2 if settings.load_friction and with_friction else 0):  # the load from the last estimate
        nuisance = _load_friction_columns(joints, velocity, predicted, columns @ _full(solution.phi))
        solution = _solve(columns, residual, joints, settings, nuisance)
    if load_model:  # the payload's torque loads the friction too: predict again with it in τ_out (3 passes)
        for _ in range(3):
            predicted = _predicted_with_load(prediction, robot, result, solution.phi, rows)
            residual = measured - predicted
            solution = _solve(columns, residual, joints, settings, nuisance)
    ratios = _check_fit(result, solution.remaining, joints, robot, settings)
    phi, covariance = solution.phi, solution.covariance
    mass = float(phi[0])
    mass_std = float(np.sqrt(covariance[0, 0]))
    if not mass > 3.0 * mass_std:
        raise InputError(f'the motion does not determine a payload: mass {mass:.4g} ± {mass_std:.2g} kg (no payload '
                         f'attached, or too little motion)')
    jac = _com_jacobian(phi)
    com_std = np.sqrt(np.diag(jac @ covariance[:4, :4] @ jac.T))
    if mass_std > settings.mass_relative_std_max * mass:
        raise InputError(f'the motion does not determine the mass: {mass:.4g} ± {mass_std:.2g} kg (σ above '
                         f'{100 * settings.mass_relative_std_max:g} %); excite the wrists and the elbow more')
    if com_std.max() > settings.com_std_max_m:
        raise InputError(f'the motion does not determine the centre of mass: σ {np.round(1e3 * com_std, 2).tolist()} '
                         f'mm (above {1e3 * settings.com_std_max_m:g} mm); excite the wrists more')

    inertia = inertia_std = None
    constrained = False
    if covariance.shape[0] == 10:
        a, r = solution.reduce(columns), solution.reduce(residual)
        smallest = float(np.linalg.eigvalsh(pseudo_inertia(phi))[0])
        if smallest <= 0:
            phi, constrained = _consistent(phi, a, r), True
        six = _inertia_about_com(phi)
        step = 1e-7 * max(1.0, float(np.abs(phi).max()))
        jac6 = np.column_stack([(_inertia_about_com(phi + step * e) - six) / step for e in np.eye(10)])
        inertia = _tensor(six)
        inertia_std = _tensor(np.sqrt(np.clip(np.diag(jac6 @ covariance @ jac6.T), 0.0, None)))
    else:
        phi = np.concatenate([phi[:4], _point_mass_inertia(float(phi[0]), phi[1:4])])
    validation = {'without_payload': equation_metrics(measured, predicted, joints, robot.joint_names),
                  'with_payload': equation_metrics(measured, predicted + columns @ phi, joints, robot.joint_names)}
    names = robot.joint_names
    estimate = PayloadEstimate(
        mass=float(phi[0]), mass_std=mass_std, com=phi[1:4] / phi[0], com_std=com_std, inertia=inertia,
        inertia_std=inertia_std, inertia_note=solution.note, parameters=phi, constrained=constrained,
        min_pseudo_eigenvalue=float(np.linalg.eigvalsh(pseudo_inertia(phi))[0]),
        offsets={names[j]: value for j, value in solution.offsets.items()},
        load_friction={names[j]: value for j, value in solution.load_friction.items()}, validation=validation,
        joints=[names[j] for j in used], rows=int(len(joints)), robot=robot.name, flange=robot.flange,
        residual_ratios=ratios)
    return estimate


def _offset_rows(offsets: dict[int, float], joints: np.ndarray) -> np.ndarray:
    values = np.zeros(len(joints))
    for j, value in offsets.items():
        values[joints == j] = value
    return values


def _full(phi: np.ndarray) -> np.ndarray:
    """Ten parameters from (m, h) with a point mass's inertia, or the ten themselves."""
    return phi if len(phi) == 10 else np.concatenate([phi[:4], _point_mass_inertia(float(phi[0]), phi[1:4])])


def _load_friction_columns(joints: np.ndarray, velocity: np.ndarray, predicted: np.ndarray,
                           payload_torque: np.ndarray) -> np.ndarray:
    """(rows, joints used) columns sgn(ω)·((ŷ + τ_P)² − ŷ²), one per joint: the change of a Coulomb friction
    growing with the squared load torque (thesis ch.4 eq. (P1-27); Hamon et al. 2010) from the arm alone (ŷ,
    the result's prediction) to the arm with the payload (τ_P, its torque by the last estimate). Model torques,
    not the measured one: a noisy regressor would bias the payload."""
    change = np.sign(velocity) * ((predicted + payload_torque)**2 - predicted**2)
    return np.column_stack([np.where(joints == j, change, 0.0) for j in np.unique(joints)])


def _solve(columns, residual, joints, settings: PayloadSettings, nuisance: np.ndarray | None) -> _Solution:
    """The ten parameters where the inertia is identified (``settings.inertia``), else mass and first moments
    with a point mass's inertia; the note says which and why."""
    full = _wls(columns, residual, joints, settings.joint_offsets, nuisance)
    if settings.inertia == 'always':
        full.note = 'identified (inertia: always)'
        return full
    phi, note = full.phi, 'not identified (inertia: never); mass and centre of mass fitted with a point mass\'s inertia'
    if settings.inertia == 'auto':
        if phi[0] > 0:
            six = _inertia_about_com(phi)
            step = 1e-7 * max(1.0, float(np.abs(phi).max()))
            jac6 = np.column_stack([(_inertia_about_com(phi + step * e) - six) / step for e in np.eye(10)])
            largest_std = float(np.sqrt(np.abs(np.linalg.eigvalsh(jac6 @ full.covariance @ jac6.T)).max()))
            size = float(np.linalg.norm(_tensor(six), 2))
            if largest_std <= settings.inertia_relative_std_max * size:
                full.note = 'identified'
                return full
            note = (f'not identifiable from this motion: its largest σ {largest_std:.2g} kg·m² is '
                    f'{100 * largest_std / max(size, 1e-300):.0f} % of its size {size:.2g} kg·m² (at most '
                    f'{100 * settings.inertia_relative_std_max:g} %); mass and centre of mass fitted with a point '
                    f'mass\'s inertia')
        else:
            note = 'not identifiable from this motion'
    # Mass and first moments with the inertia of a point mass (2 passes: its inertia depends on them).
    solution = full
    for _ in range(2):
        mh = solution.phi[:4]
        inertia = _point_mass_inertia(float(mh[0]), mh[1:4]) if mh[0] > 0 else np.zeros(6)
        solution = _wls(columns[:, :4], residual - columns[:, 4:] @ inertia, joints, settings.joint_offsets,
                        nuisance)
    solution.note = note
    return solution


def _predicted_with_load(prediction: Prediction, robot: RobotModel, result: IdentificationResult, phi: np.ndarray,
                         rows: np.ndarray) -> np.ndarray:
    """The result's prediction with the payload's torque in the load of its load-dependent friction."""
    problem = prediction.problem
    columns = _payload_rows(prediction, robot) @ _full(phi)  # rows of every joint
    start, blocks = 0, []
    for k, block in enumerate(problem.blocks):
        keep = problem.block_keep(k)
        torque = np.zeros(keep.shape)
        count = int(keep.sum())
        torque[keep] = columns[start:start + count]
        start += count
        blocks.append(dataclasses.replace(block, known_output=torque))
    # the same equations with the payload's torque as the known output torque (τ_out of the load-dependent friction)
    problem = IdentificationProblem.of(dataclasses.replace(problem.prepared, blocks=tuple(blocks)), problem.candidate)
    names = problem.parameter_names()
    values = np.array([result.value(n) for n in names])
    w = problem.equations(values[:len(problem.rigid_names)], result.exponents)[0]
    return (w @ values)[rows]


def _check_fit(result: IdentificationResult, remaining: np.ndarray, joints: np.ndarray, robot: RobotModel,
               settings: PayloadSettings) -> dict[str, float]:
    """{joint: RMSE of what the payload leaves / the result's own RMSE}; InputError where one exceeds
    ``residual_ratio_max``."""
    train = ((result.metrics or {}).get('train') or {}).get('joints') or {}
    ratios = {}
    for j in np.unique(joints):
        own = (train.get(robot.joint_names[j]) or {}).get('rmse')
        if own:
            ratios[robot.joint_names[j]] = float(np.sqrt(np.mean(remaining[joints == j] ** 2)) / own)
    high = {name: ratio for name, ratio in ratios.items() if ratio > settings.residual_ratio_max}
    if high:
        shown = ', '.join(f'{name} {ratio:.1f}×' for name, ratio in high.items())
        raise InputError(f'the recording does not fit the result\'s arm: with the payload the residual of {shown} the '
                         f'result\'s own RMSE (above {settings.residual_ratio_max:g}×): a recording of another robot, '
                         f'other drives or another torque signal?')
    return ratios
