"""The joint controller's model of a closed-loop simulation: a per-joint PID on the link position with the
reference's commanded effort fed forward, and where the controller has one, its own model-based feedforward of the
reference,

    τ_cmd = τ_ff + W_r·χ_ff + K_p·(q_r − q) + K_d·(q̇_r − q̇) + K_i·∫(q_r − q) dt      [N·m, link side]

W_r = W(q_r, q̇_r, q̈_r) the base regressor of the rigid body with the rotor inertia, Coulomb and viscous columns
(:data:`MODEL_TERMS`) at the reference, χ_ff the controller's model, one for all joints: what industrial controllers
add (the nominal inverse dynamics of the reference). Gautier, Janot & Vandanjon 2013, §II-B: the simulation needs
the controller's law and gains. The gains are given in a YAML file (:func:`gains_from_file`) or identified by least
squares from the reference and the commanded torque where the recording logs both (:func:`gains_from_recording`);
χ_ff is identified so, beside the gains or with the file's gains held (:func:`with_model_feedforward`).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pinocchio as pin
import yaml

from dynid.checks import per_joint
from dynid.errors import InputError
from dynid.io.dataset import Dataset, Reference
from dynid.model.joint_terms import per_joint_columns
from dynid.model.robot import RobotModel

#: the gains a controller file gives, with their units
GAIN_UNITS = {'kp': 'N·m/rad', 'kd': 'N·m·s/rad', 'ki': 'N·m/(rad·s)'}
#: the controller models: a PID alone, a PID beside the model-based feedforward W_r·χ_ff, or chosen by the fit
#: a controller file's ``feedforward``: none, or the model-based feedforward (identified from the recording)
FILE_FEEDFORWARD = ('none', 'model')
#: the per-joint columns of the controller's model beside the rigid body's (module docstring)
MODEL_TERMS = ('rotor_inertia', 'coulomb', 'viscous')
#: 'auto' takes the model where the PID alone leaves at least this many times the model's residual (RMS); measured
#: at 1 kHz–100 Hz: 1.01–1.02 under a PD alone (the twin, MuJoCo), 4.2 (the twin) and 37 (MuJoCo) under their
#: model-based feedforward
MODEL_RESIDUAL_RATIO = 1.5
#: a file's gains held beside the model that leave this many times the residual of gains fitted there (RMS, on some
#: joint) are not the controller's; measured on the twin: its true gains 15–100 (its integrator's state is not the
#: recording's), without K_i 1.2–2.3
HELD_RESIDUAL_RATIO = 5.0
#: the largest standard deviation of a K_p fitted beside the model, relative to it
GAIN_RELATIVE_STD = 0.2
#: the PD the loop is simulated with where the gains beside the model are not determined (:func:`assumed_gains`):
#: the feedforward carries the motion, the feedback only holds the loop (on the twin, its own PD at 0.5–2× its
#: bandwidth moved the closed-loop methods' base-parameter error by less than 0.1 point)
ASSUMED_BANDWIDTH_HZ, ASSUMED_DAMPING = 10.0, 1.0


@dataclass(frozen=True)
class ControllerGains:
    """Per-joint PID gains (n,) each: ``kp`` [N·m/rad], ``kd`` [N·m·s/rad], ``ki`` [N·m/(rad·s)];
    ``feedforward``: the reference's commanded effort (its ``effort``) is added; ``model_torque``: W_r·χ_ff (N, n)
    [N·m] at the recording's samples, the controller's model-based feedforward, or None; ``source``: where they come
    from; ``note``: what the result should say of them ('' where nothing)."""

    kp: np.ndarray
    kd: np.ndarray
    ki: np.ndarray
    feedforward: bool = True
    source: str = ''
    model_torque: np.ndarray | None = None
    note: str = ''

    def torque(self, error: np.ndarray, error_rate: np.ndarray, integral: np.ndarray,
               feedforward: np.ndarray) -> np.ndarray:
        """τ_cmd (module docstring) [N·m] of the errors q_r − q, q̇_r − q̇ and ∫(q_r − q) (any leading shape) and the
        feedforward (:meth:`feedforward_torque` there)."""
        return self.kp * error + self.kd * error_rate + self.ki * integral + feedforward

    def feedforward_torque(self, reference: Reference) -> np.ndarray:
        """τ_ff + W_r·χ_ff (N, n) [N·m] at the reference's samples: what the controller adds to its PID."""
        total = np.zeros_like(reference.q)
        if self.feedforward and reference.effort is not None:
            total = total + reference.effort
        return total if self.model_torque is None else total + self.model_torque


def gains_from_file(path: str | Path, joint_names: tuple[str, ...] | list[str], feedforward: bool = True
                    ) -> ControllerGains:
    """The gains of a YAML file: keys ``kp``, ``kd`` and ``ki`` (``ki`` optional, 0), each one number for every
    joint, a list in the robot's joint order, or a mapping {joint name: value}; ``feedforward`` (optional, none)
    says whether the controller adds its model-based feedforward (``model``: :func:`file_feedforward`).

    >>> # kp: {shoulder_pan_joint: 2000, ...}   kd: [80, 80, 60, 20, 20, 10]   ki: 0   feedforward: model
    """
    path = Path(path)
    try:
        document = yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError) as error:
        raise InputError(f'controller gains file {path}: {error}', fields=('controller_gains',)) from None
    if not isinstance(document, dict) or 'kp' not in document or 'kd' not in document:
        raise InputError(f'controller gains file {path}: needs keys kp and kd (ki optional), each one value, a list '
                         f'in joint order or {{joint: value}}', fields=('controller_gains',))
    unknown = sorted(set(document) - set(GAIN_UNITS) - {'feedforward'})
    if unknown:
        raise InputError(f'controller gains file {path}: unknown keys {", ".join(unknown)} (kp, kd, ki, feedforward)',
                         fields=('controller_gains',))
    file_feedforward(path, document)
    gains = {name: _per_joint(document.get(name, 0.0), joint_names, f'{path}: {name}') for name in GAIN_UNITS}
    return ControllerGains(**gains, feedforward=feedforward, source=str(path))


def file_feedforward(path: str | Path, document: dict | None = None) -> str:
    """A controller file's ``feedforward`` (:data:`FILE_FEEDFORWARD`; none where absent); InputError naming
    ``controller_gains`` where it is another."""
    if document is None:
        document = yaml.safe_load(Path(path).read_text())
    value = str(document.get('feedforward', 'none')).lower()
    if value not in FILE_FEEDFORWARD:
        raise InputError(f'controller gains file {path}: feedforward must be none or model (the controller adds the '
                         f'nominal inverse dynamics of its reference), got {document["feedforward"]!r}',
                         fields=('controller_gains',))
    return value


def _per_joint(value, joint_names, name: str) -> np.ndarray:
    if isinstance(value, dict):
        missing = [joint for joint in joint_names if joint not in value]
        extra = sorted(set(value) - set(joint_names))
        if missing or extra:
            raise InputError(f'{name}: ' + '; '.join(
                part for part in (missing and f'no value for {", ".join(missing)}',
                                  extra and f'no joint named {", ".join(extra)}') if part),
                             fields=('controller_gains',))
        value = [value[joint] for joint in joint_names]
    try:
        return per_joint(value, len(joint_names), name)
    except InputError as error:
        raise InputError(str(error), fields=('controller_gains',)) from None


def commanded_torque(dataset: Dataset, drive_gain: np.ndarray | None) -> tuple[np.ndarray, str] | None:
    """(τ_cmd (N, n) [N·m], what it is) the controller commanded: the reference's commanded current, else the
    measured current, times the nominal drive gains; None where neither or no drive gains."""
    reference = dataset.reference
    if drive_gain is None:
        return None
    if reference is not None and reference.current is not None:
        return reference.current * drive_gain, 'the commanded current'
    if dataset.current is not None:
        return dataset.current * drive_gain, 'the measured current'
    return None


def gains_from_recording(dataset: Dataset, drive_gain: np.ndarray | None, feedforward: bool = True,
                         model: str = 'pid', robot: RobotModel | None = None,
                         rotor_inertia: np.ndarray | None = None) -> ControllerGains:
    """The controller by least squares on the recording (e = q_r − q, on the motor encoders θ where recorded: a
    drive's loop is collocated; c per joint absorbs the integrator's start): ``model`` 'pid', per joint
    τ_cmd − τ_ff = K_p·e + K_d·ė + K_i·∫e + c; 'pid+model', the stacked joints with W_r·χ_ff beside (module
    docstring; needs ``robot``); 'auto', the model where the PID alone leaves :data:`MODEL_RESIDUAL_RATIO` times its
    residual. InputError naming ``controller_gains`` where the recording lacks what it needs. Where the gains beside
    the model are not determined (:func:`_undetermined`: the feedback is a small part of the command, and follows
    the reference as the feedforward does), the loop keeps the model's feedforward (fitted again without the PID's
    columns) and a stated PD (:func:`assumed_gains`, ``rotor_inertia`` [kg·m²] the drives'), and the controller's
    note says so."""
    torque, commanded = _target(dataset, drive_gain, feedforward)
    signals = _errors(dataset)
    gains, residual = _pid_fit(torque, signals)
    source = f'identified by least squares from the reference and {commanded}'
    if model == 'pid':
        return ControllerGains(*gains, feedforward=feedforward, source=source)
    w_r = model_regressor(robot, dataset)
    model_gains, std, model_torque, model_residual = _model_fit(torque, signals, w_r)
    if model == 'auto' and _rms(residual) < MODEL_RESIDUAL_RATIO * _rms(model_residual):
        return ControllerGains(*gains, feedforward=feedforward, source=source)
    source = f'{source}, with its model-based feedforward'
    why = _undetermined(model_gains, std, dataset.joint_names)
    if not why:
        return ControllerGains(*model_gains, feedforward=feedforward, model_torque=model_torque, source=source)
    note = (f'the controller\'s gains beside its model-based feedforward are not determined by the recording ({why}): '
            f'the loop was simulated with that feedforward and a PD of {ASSUMED_BANDWIDTH_HZ:g} Hz bandwidth on the '
            f'robot file\'s inertia; give the controller\'s gains in a file (method option controller_gains=FILE, '
            f'with feedforward: model) where they are known, or method option controller_model=pid where it has no '
            f'model-based feedforward')
    _, _, model_torque, _ = _model_fit(torque, (), w_r)
    pd = assumed_gains(robot, dataset.reference.q[0], rotor_inertia)
    return ControllerGains(*pd, feedforward=feedforward, model_torque=model_torque, note=note,
                           source=f'{source}; a PD of {ASSUMED_BANDWIDTH_HZ:g} Hz (its gains not determined)')


def with_model_feedforward(gains: ControllerGains, dataset: Dataset, drive_gain: np.ndarray | None,
                           robot: RobotModel) -> ControllerGains:
    """``gains`` (a file's) with the controller's model-based feedforward W_r·χ_ff identified by least squares of
    τ_cmd − τ_ff − K_p·e − K_d·ė − K_i·∫e = W_r·χ_ff + c on the recording (module docstring). Where that leaves
    :data:`HELD_RESIDUAL_RATIO` times the residual of gains fitted beside the model on some joint, the note says so
    (the file's gains or law are not the recording's controller's)."""
    torque, commanded = _target(dataset, drive_gain, gains.feedforward)
    signals = _errors(dataset)
    error, rate, integral = signals
    w_r = model_regressor(robot, dataset)
    held = torque - (gains.kp * error + gains.kd * rate + gains.ki * integral)
    _, _, model_torque, residual = _model_fit(held, (), w_r)
    ratio = _rms(residual, axis=0) / _rms(_model_fit(torque, signals, w_r)[3], axis=0)
    note = '' if np.all(ratio < HELD_RESIDUAL_RATIO) else (
        f'the controller gains of {gains.source} beside the model-based feedforward leave {ratio.max():.3g} times '
        f'the residual of gains fitted on the recording ({dataset.joint_names[int(np.argmax(ratio))]}): they or '
        f'the law are not the controller\'s (an integrator whose state the recording does not give: try the file '
        f'without ki); check the method option controller_gains=FILE')
    return dataclasses.replace(gains, model_torque=model_torque, note=note,
                               source=f'{gains.source}, its model-based feedforward identified from {commanded}')


def model_regressor(robot: RobotModel, dataset: Dataset) -> np.ndarray:
    """W_r (N·n, b): the base columns of the rigid body with :data:`MODEL_TERMS` at the reference (q̈_r
    differentiated from q̇_r where the recording has none)."""
    reference = dataset.reference
    ddq = reference.ddq if reference.ddq is not None else np.gradient(reference.dq, dataset.t, axis=0)
    base = robot.base_parameters(joint_terms=MODEL_TERMS)
    return base.columns(robot.full_regressor(reference.q, reference.dq, ddq, joint_terms=MODEL_TERMS))


def _target(dataset: Dataset, drive_gain: np.ndarray | None, feedforward: bool) -> tuple[np.ndarray, str]:
    """(τ_cmd − τ_ff (N, n) [N·m], what τ_cmd is) or InputError naming ``controller_gains``."""
    reference = dataset.reference
    commanded = commanded_torque(dataset, drive_gain)
    if reference is None or commanded is None:
        raise InputError('the controller gains cannot be identified from this recording (it needs the reference and '
                         'the commanded or measured motor current with the drive gains): give them in a file '
                         '({controller_gains}: a YAML file of kp, kd, ki per joint)', fields=('controller_gains',))
    torque, what = commanded
    if feedforward and reference.effort is not None:
        torque = torque - reference.effort
    return torque, what


def _errors(dataset: Dataset) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(e, ė, ∫e) (N, n) of :func:`gains_from_recording` [rad, rad/s, rad·s] (the trapezoidal integral from 0)."""
    reference = dataset.reference
    position = dataset.theta if dataset.theta is not None else dataset.q
    velocity = dataset.dtheta if dataset.dtheta is not None else dataset.dq
    error, rate = reference.q - position, reference.dq - velocity
    integral = np.concatenate([np.zeros((1, dataset.n_joints)),
                               np.cumsum(0.5 * (error[1:] + error[:-1]) * np.diff(dataset.t)[:, None], axis=0)])
    return error, rate, integral


def _pid_fit(torque: np.ndarray, signals) -> tuple[np.ndarray, np.ndarray]:
    """((3, n) K_p, K_d, K_i, the residual (N, n)) of the per-joint PID fit."""
    error, rate, integral = signals
    gains, residual = np.zeros((3, torque.shape[1])), np.zeros_like(torque)
    for j in range(torque.shape[1]):
        columns = np.column_stack([error[:, j], rate[:, j], integral[:, j], np.ones(len(error))])
        solution = np.linalg.lstsq(columns, torque[:, j], rcond=None)[0]
        gains[:, j], residual[:, j] = solution[:3], torque[:, j] - columns @ solution
    return gains, residual


def _model_fit(torque: np.ndarray, signals, w_r: np.ndarray):
    """((3, n) gains or None, their standard deviations (3, n) or None, W_r·χ_ff (N, n), the residual (N, n)) of
    τ = W_r·χ_ff + [K_p·e + K_d·ė + K_i·∫e] + c on the stacked joints' rows (``signals`` the PID's (e, ė, ∫e), or
    () where the gains are held); σ from σ̂²·(AᵀA)⁺ of the scaled columns A."""
    samples, n = torque.shape
    columns = np.hstack([w_r, per_joint_columns([*signals, np.ones((samples, n))])])
    scale = np.linalg.norm(columns, axis=0)
    scale[scale == 0] = 1.0
    scaled = columns / scale
    solution = np.linalg.lstsq(scaled, torque.ravel(), rcond=None)[0]
    residual = torque - (scaled @ solution).reshape(samples, n)
    solution = solution / scale
    b = w_r.shape[1]
    if not signals:
        return None, None, (w_r @ solution[:b]).reshape(samples, n), residual
    variance = float(np.sum(residual ** 2)) / max(1, residual.size - columns.shape[1])
    std = np.sqrt(variance * np.diag(np.linalg.pinv(scaled.T @ scaled))) / scale
    gains, std = solution[b:b + 3 * n].reshape(3, n), std[b:b + 3 * n].reshape(3, n)
    return gains, std, (w_r @ solution[:b]).reshape(samples, n), residual


def _rms(residual: np.ndarray, axis=None):
    """The root mean square of ``residual`` (over ``axis``; all of it where None)."""
    return np.sqrt(np.mean(residual ** 2, axis=axis))



def _undetermined(gains: np.ndarray, std: np.ndarray, joint_names) -> str:
    """Why the gains fitted beside the model-based feedforward are not the controller's ('' where they may be): a
    gain below 0 by more than 3σ, or K_p's σ above :data:`GAIN_RELATIVE_STD` of it. A gain below 0 by less is set
    to 0 (in place: a K_i of 0 fitted in its noise)."""
    names = ('K_p', 'K_d', 'K_i')
    negative = [f'{names[row]} of {joint_names[j]}' for row, j in zip(*np.nonzero(gains < -3 * std), strict=True)]
    np.maximum(gains, 0.0, out=gains)
    if negative:
        return f'{", ".join(negative[:3])}{" …" if len(negative) > 3 else ""} came out negative'
    loose = [joint_names[j] for j in np.nonzero(~(std[0] <= GAIN_RELATIVE_STD * gains[0]))[0]]
    return f'K_p of {", ".join(loose)} is not determined (σ above {GAIN_RELATIVE_STD:.0%})' if loose else ''


def assumed_gains(robot: RobotModel, q: np.ndarray, rotor_inertia: np.ndarray | None) -> tuple[np.ndarray, ...]:
    """(K_p, K_d, K_i = 0) of a PD of bandwidth :data:`ASSUMED_BANDWIDTH_HZ` and damping :data:`ASSUMED_DAMPING` on
    the diagonal inertia M_jj(q) (+ the rotors' where known) of the robot file: K_p = M_jj·ω², K_d = 2ζ·M_jj·ω."""
    model = robot.pinocchio_model
    inertia = np.diag(pin.crba(model, model.createData(), robot.configuration_vector(q))).copy()
    if rotor_inertia is not None:
        inertia = inertia + rotor_inertia
    omega = 2 * np.pi * ASSUMED_BANDWIDTH_HZ
    return inertia * omega ** 2, 2 * ASSUMED_DAMPING * inertia * omega, np.zeros_like(inertia)
