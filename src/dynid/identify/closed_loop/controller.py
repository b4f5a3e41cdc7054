"""The joint controller's model of a closed-loop simulation: a per-joint PID on the link position with the
reference's commanded effort fed forward,

    τ_cmd = τ_ff + K_p·(q_r − q) + K_d·(q̇_r − q̇) + K_i·∫(q_r − q) dt      [N·m, link side]

(Gautier, Janot & Vandanjon 2013, §II-B: the simulation needs the controller's law and gains), with gains given
in a YAML file (:func:`gains_from_file`) or identified by least squares from the reference and the commanded torque
where the recording logs both (:func:`gains_from_recording`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import yaml

from dynid.checks import per_joint
from dynid.errors import InputError
from dynid.io.dataset import Dataset

#: the gains a controller file gives, with their units
GAIN_UNITS = {'kp': 'N·m/rad', 'kd': 'N·m·s/rad', 'ki': 'N·m/(rad·s)'}


@dataclass(frozen=True)
class ControllerGains:
    """Per-joint PID gains (n,) each: ``kp`` [N·m/rad], ``kd`` [N·m·s/rad], ``ki`` [N·m/(rad·s)];
    ``feedforward``: the reference's commanded effort (its ``effort``) is added; ``source``: where they come from."""

    kp: np.ndarray
    kd: np.ndarray
    ki: np.ndarray
    feedforward: bool = True
    source: str = ''

    def torque(self, error: np.ndarray, error_rate: np.ndarray, integral: np.ndarray,
               effort: np.ndarray | None) -> np.ndarray:
        """τ_cmd (module docstring) [N·m] of the errors q_r − q, q̇_r − q̇ and ∫(q_r − q) (any leading shape)."""
        torque = self.kp * error + self.kd * error_rate + self.ki * integral
        return torque + effort if self.feedforward and effort is not None else torque


def gains_from_file(path: str | Path, joint_names: tuple[str, ...] | list[str], feedforward: bool = True
                    ) -> ControllerGains:
    """The gains of a YAML file: keys ``kp``, ``kd`` and ``ki`` (``ki`` optional, 0), each one number for every
    joint, a list in the robot's joint order, or a mapping {joint name: value}.

    >>> # kp: {shoulder_pan_joint: 2000, ...}   kd: [80, 80, 60, 20, 20, 10]   ki: 0
    """
    path = Path(path)
    try:
        document = yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError) as error:
        raise InputError(f'controller gains file {path}: {error}', fields=('controller_gains',)) from None
    if not isinstance(document, dict) or 'kp' not in document or 'kd' not in document:
        raise InputError(f'controller gains file {path}: needs keys kp and kd (ki optional), each one value, a list '
                         f'in joint order or {{joint: value}}', fields=('controller_gains',))
    unknown = sorted(set(document) - set(GAIN_UNITS))
    if unknown:
        raise InputError(f'controller gains file {path}: unknown keys {", ".join(unknown)} (kp, kd, ki)',
                         fields=('controller_gains',))
    gains = {name: _per_joint(document.get(name, 0.0), joint_names, f'{path}: {name}') for name in GAIN_UNITS}
    return ControllerGains(**gains, feedforward=feedforward, source=str(path))


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


def gains_from_recording(dataset: Dataset, drive_gain: np.ndarray | None, feedforward: bool = True
                         ) -> ControllerGains:
    """The gains by least squares, per joint, of τ_cmd − τ_ff = K_p·e + K_d·ė + K_i·∫e + c on the recording
    (e = q_r − q, on the motor encoders θ where recorded: a drive's loop is collocated; c absorbs the integrator's
    start); InputError naming ``controller_gains`` where the recording lacks what it needs."""
    reference = dataset.reference
    commanded = commanded_torque(dataset, drive_gain)
    if reference is None or commanded is None:
        raise InputError('the controller gains cannot be identified from this recording (it needs the reference and '
                         'the commanded or measured motor current with the drive gains): give them in a file '
                         '({controller_gains}: a YAML file of kp, kd, ki per joint)', fields=('controller_gains',))
    torque, _ = commanded
    if feedforward and reference.effort is not None:
        torque = torque - reference.effort
    position = dataset.theta if dataset.theta is not None else dataset.q
    velocity = dataset.dtheta if dataset.dtheta is not None else dataset.dq
    error, rate = reference.q - position, reference.dq - velocity
    integral = np.concatenate([np.zeros((1, dataset.n_joints)),
                               np.cumsum(0.5 * (error[1:] + error[:-1]) * np.diff(dataset.t)[:, None], axis=0)])
    gains = np.zeros((3, dataset.n_joints))
    for j in range(dataset.n_joints):
        columns = np.column_stack([error[:, j], rate[:, j], integral[:, j], np.ones(len(error))])
        gains[:, j] = np.linalg.lstsq(columns, torque[:, j], rcond=None)[0][:3]
    return ControllerGains(*gains, feedforward=feedforward,
                           source=f'identified by least squares from the reference and {commanded[1]}')
