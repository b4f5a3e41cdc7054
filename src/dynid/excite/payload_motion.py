"""A short motion of the wrist (and elbow) that identifies a flange payload's ten parameters.

The motion is a rest-to-rest Fourier series (:mod:`dynid.excite.fourier`) of the joints that turn the
payload — by default the wrist's three joints and the elbow before them, whose lever arm carries the
payload's mass — over one period of ``duration_s``; the other joints rest at home. Its coefficients
minimize the condition number of the payload's weighted, column-normalized regressor W_P (the payload
columns of the rows of the moving joints, each joint's rows weighted by 1/σ_j), the criterion of the
arm's excitation (Swevers et al. 1997) on the ten payload parameters (Gautier and Briot 2014, eq. (5)):
SLSQP with finite-difference gradients from random feasible starts, inside the kinematic limits and
above the floor, then fitted to the limits and the clearance checks on a dense grid
(:func:`~dynid.excite.optimize.fit_to_clearance`).

The expected σ of the parameters come from the information matrix W_Pᵀ·Σ⁻¹·W_P of the motion sampled
as identification samples it (the decimated rate, 2.5× the decimation cut-off), with σ_j the RMSE per
joint of the arm's identification result (or ``torque_noise_nm``): what the recording's noise leaves,
not the bias of the arm's model.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import scipy.optimize

from dynid.errors import InputError
from dynid.excite.clearance import Clearance
from dynid.excite.fourier import ExcitationLimits, FourierDesign, default_limits, fit_to_limits, random_design
from dynid.excite.gradients import trajectory_states
from dynid.excite.optimize import _kinematic_constraint, describe_excitation, fit_to_clearance
from dynid.excite.trajectory import FourierTrajectory
from dynid.model.robot import RobotModel
from dynid.settings import check_settings, setting

#: The payload's ten parameters as the expected σ lists them.
PAYLOAD_PARAMETERS = ('m', 'mx', 'my', 'mz', 'Ixx', 'Ixy', 'Iyy', 'Ixz', 'Iyz', 'Izz')


@dataclass(frozen=True)
class PayloadMotionSettings:
    """How the payload motion is designed (module docstring); ``dynid excite --payload-only`` translates it."""

    duration_s: float = setting(15.0, 'length of the motion, one period of the series', unit='s', low=2.0, high=15.0)
    harmonics: int = setting(5, 'harmonics per joint', low=2, high=10)
    joints: tuple[str, ...] = setting((), 'joints that move; empty: the wrist (last three joints) and the elbow '
                                          'before it', items=str)
    position_range: float = setting(2.0, '± motion about home (inside 90 % of the joint range)', unit='rad',
                                    low=0.05, high=6.0)
    velocity_fraction: float = setting(0.5, 'share of the velocity limits', low=0.01, high=1.0)
    acceleration: float = setting(5.0, 'acceleration bound', unit='rad/s²', low=0.1, high=50.0)
    floor: float | None = setting(0.0, 'height z in the base frame no link may go below (None: no floor); keep a '
                                       'margin for the payload, whose shape is unknown', unit='m')
    starts: int = setting(3, 'optimizer starts', low=1, high=50)
    iterations: int = setting(60, 'iterations per start', low=1, high=1000)
    seed: int = setting(0, 'seed of the random starts')
    samples: int = setting(90, 'samples of the period the criterion is evaluated on', low=20, high=1000)
    decimation_cutoff_hz: float = setting(20.0, 'decimation cut-off of the identification (rows at 2.5× it) for '
                                                'the expected σ', unit='Hz', low=0.1, high=1000.0)
    torque_noise_nm: float = setting(0.1, 'σ of a decimated torque row, per joint, where no identification result '
                                          'gives its RMSE', unit='N·m', low=1e-9, high=100.0)

    def __post_init__(self) -> None:
        check_settings(self)


@dataclass
class PayloadMotion:
    """A designed payload motion and what it promises.

    Attributes:
        trajectory: the rest-to-rest Fourier trajectory (all joints; the resting ones at home).
        joints: the joints that move. condition_number: cond of the weighted, column-normalized W_P on the
        dense grid. expected_std: σ of the ten payload parameters (:data:`PAYLOAD_PARAMETERS`; kg, kg·m,
        kg·m²) from the recording's noise. noise: σ_j used per moving joint [N·m] and where they come from.
        peaks, violations: of the dense check (:func:`~dynid.excite.optimize.excitation_violations`).
        wall_time_s: seconds spent.
    """

    trajectory: FourierTrajectory
    joints: tuple[str, ...]
    condition_number: float
    expected_std: np.ndarray
    noise: dict[str, float]
    noise_source: str
    peaks: dict
    violations: list[str]
    limits: ExcitationLimits
    wall_time_s: float = 0.0

    def com_std_m(self, mass_kg: float) -> float:
        """Expected σ [m] of the centre of mass of a payload of ``mass_kg`` (largest axis; σ of m·c over m)."""
        return float(self.expected_std[1:4].max() / mass_kg)

    def summary(self) -> dict:
        return {'joints': list(self.joints), 'condition_number': self.condition_number,
                'expected_std': dict(zip(PAYLOAD_PARAMETERS, self.expected_std.tolist(), strict=True)),
                'noise_nm': self.noise, 'noise_source': self.noise_source, 'wall_time_s': self.wall_time_s,
                'peaks': self.peaks, 'limits': self.limits.to_dict()}


def moving_joints(robot: RobotModel, joints: tuple[str, ...] = ()) -> tuple[str, ...]:
    """The joints a payload motion moves: ``joints`` (checked) or the wrist and the elbow (last four)."""
    if not joints:
        return robot.joint_names[-4:]
    unknown = [name for name in joints if name not in robot.joint_names]
    if unknown or len(set(joints)) != len(joints):
        raise InputError(f'joints must name distinct joints of {robot.name!r} ({", ".join(robot.joint_names)}), '
                         f'got {list(joints)}')
    return tuple(name for name in robot.joint_names if name in joints)


def payload_information(robot: RobotModel, trajectory: FourierTrajectory, times: np.ndarray, joints: np.ndarray,
                        noise: np.ndarray) -> np.ndarray:
    """Weighted payload rows (k·len(joints), 10) at ``times``: joint j's rows of W_P divided by noise[j]."""
    q, dq, ddq = trajectory_states(robot, trajectory, times)
    rows = robot.payload_regressor(q, dq, ddq).reshape(len(times), robot.n, 10)[:, joints, :]
    return (rows / noise[joints][None, :, None]).reshape(-1, 10)


def _d_criterion(w: np.ndarray) -> float:
    """−log det(WᵀW/k): D-optimality of weighted rows W (k, 10); +inf where W is rank deficient."""
    sign, logdet = np.linalg.slogdet(w.T @ w / len(w))
    return float(-logdet) if sign > 0 else np.inf


def _condition(w: np.ndarray) -> float:
    norms = np.linalg.norm(w, axis=0)
    if not np.all(norms > 0):
        return np.inf
    return float(np.linalg.cond(w / norms))


def design_payload_motion(robot: RobotModel, home: np.ndarray, settings: PayloadMotionSettings | None = None,
                          noise: dict[str, float] | None = None, noise_source: str = '',
                          progress: Callable[[str], None] | None = None) -> PayloadMotion:
    """The payload motion about ``home`` [rad] (module docstring).

    ``noise``: σ per joint name [N·m] of a decimated torque row (an identification result's RMSE per joint);
    joints it lacks take ``settings.torque_noise_nm``. Raises InputError when no start ends inside the limits.
    """
    settings = settings or PayloadMotionSettings()
    clock = time.perf_counter()
    names = moving_joints(robot, settings.joints)
    moving = np.array([robot.joint_names.index(name) for name in names])
    sigma = np.array([(noise or {}).get(name, settings.torque_noise_nm) for name in robot.joint_names], dtype=float)
    if not np.all(sigma[moving] > 0):
        raise InputError(f'the torque noise of the moving joints must be > 0 N·m, got {sigma[moving].tolist()}')
    home = np.asarray(home, dtype=float)
    limits = default_limits(robot, home, settings.position_range, settings.velocity_fraction, settings.acceleration,
                            None, settings.floor)
    design = FourierDesign(robot.joint_names, settings.harmonics, settings.duration_s)
    per_joint = 2 * settings.harmonics - 1
    free = (moving[:, None] * per_joint + np.arange(per_joint)[None, :]).reshape(-1)
    clearance = Clearance.of(robot)
    clearance.prepare(home)
    objective_times = np.linspace(0.0, settings.duration_s, settings.samples, endpoint=False)
    grid = np.linspace(0.0, settings.duration_s, 40, endpoint=False)
    dense = np.linspace(0.0, settings.duration_s, 2400, endpoint=False)
    base = np.zeros(design.size)
    base[np.arange(robot.n) * per_joint] = home

    def full(x_free: np.ndarray) -> np.ndarray:
        x = base.copy()
        x[free] = x_free
        return x

    def objective(x_free: np.ndarray) -> float:
        w = payload_information(robot, design.trajectory(full(x_free)), objective_times, moving, sigma)
        return _d_criterion(w)

    kinematic = _kinematic_constraint(design, limits, grid, (2, 1, 1))
    # The floor is left to fit_to_clearance after each start (shrinking the motion where it dips): inside
    # SLSQP its finite-difference Jacobian cost as much as the criterion's.
    constraints = [{'type': 'ineq', 'fun': lambda x: kinematic['fun'](full(x)),
                    'jac': lambda x: kinematic['jac'](full(x))[:, free]}]
    rng = np.random.default_rng(settings.seed)
    best, best_value = None, np.inf
    for start in range(settings.starts):
        x0 = random_design(design, home, limits, rng, dense)
        x0 = x0.reshape(robot.n, per_joint)
        x0[:, 0] = home
        x0[[j for j in range(robot.n) if j not in moving], 1:] = 0.0
        solved = scipy.optimize.minimize(objective, x0.reshape(-1)[free], method='SLSQP', constraints=constraints,
                                         options={'maxiter': settings.iterations, 'ftol': 1e-4})
        x = fit_to_limits(design, full(solved.x), limits, dense)
        try:
            x = fit_to_clearance(robot, design, x, limits, clearance)
        except InputError as error:
            if progress is not None:
                progress(f'start {start + 1}/{settings.starts}: discarded ({error})')
            continue
        value = objective(x[free])
        if progress is not None:
            progress(f'start {start + 1}/{settings.starts} after {solved.nit} iterations: −log det {value:.4g}')
        if value < best_value:
            best, best_value = x, value
    if best is None:
        raise InputError('no start of the payload motion ends inside the limits and the clearance; choose another '
                         '{home}, a lower {floor} or a smaller {position_range}',
                         fields=('home', 'floor', 'position_range'))
    trajectory = design.trajectory(best)
    check = describe_excitation(robot, trajectory, limits, clearance=clearance)
    if not check.feasible:
        raise InputError(f'the payload motion breaks its limits: {"; ".join(check.violations)}')
    condition, expected = _expected_precision(robot, trajectory, moving, sigma, settings, dense[::4])
    return PayloadMotion(trajectory, names, condition, expected,
                         {name: float(sigma[robot.joint_names.index(name)]) for name in names},
                         noise_source or ('given per joint' if noise else
                                          f'{settings.torque_noise_nm:g} N·m per decimated row (torque_noise_nm)'),
                         check.peaks, check.violations, limits, time.perf_counter() - clock)


def _expected_precision(robot: RobotModel, trajectory, moving: np.ndarray, sigma: np.ndarray,
                        settings: PayloadMotionSettings, times: np.ndarray) -> tuple[float, np.ndarray]:
    """The condition number of the motion's weighted payload rows at ``times`` and the payload parameters' expected
    σ from the rows an identification keeps (decimated: 2.5 × ``settings.decimation_cutoff_hz``)."""
    rows = np.arange(0.0, settings.duration_s, 1.0 / (2.5 * settings.decimation_cutoff_hz))
    w = payload_information(robot, trajectory, rows, moving, sigma)
    expected = np.sqrt(np.diag(np.linalg.pinv(w.T @ w)))
    return _condition(payload_information(robot, trajectory, times, moving, sigma)), expected


def result_noise(result) -> dict[str, float]:
    """σ per joint [N·m] of a decimated row: the training RMSE per joint of an identification result."""
    joints = ((result.metrics or {}).get('train') or {}).get('joints') or {}
    return {name: float(entry['rmse']) for name, entry in joints.items()
            if isinstance(entry, dict) and entry.get('rmse')}
