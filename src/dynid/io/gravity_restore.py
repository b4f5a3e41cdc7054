"""A gravity-compensated joint torque made whole again, and the payload set on the robot checked against it.

UR's ``actual_current_as_torque`` (the UR driver's joint_states effort from its PR #1551 on, with
``use_currents_as_efforts:=false``) is the drive torque computed from the motor current *minus the
controller's own gravity model with the payload set on the robot*: "a torque of 0.0 corresponds to a joint
that is not moving and does not experience an external load … only true for a correctly set up payload"
(the driver's ``doc/hardware_interface.rst`` note of that PR; docs/backends/ur.md). So the field is

    e(t) = τ(t) − g_R(q(t); P_set)                                           (1)

τ the joint torque, g_R the robot's gravity torque with the payload P_set it was told it carries. dynid
reads it as the joint torque with the gravity added back, τ̂ = e + g_M(q; P_set) (:func:`restore_gravity`),
g_M the robot file's gravity (the built-in UR models are UR's published dynamics). A wrongly set payload
does not spoil that reading when P_set is known (the term removed is the term added back); it shows in the
field itself, which then holds g(q; P_true) − g(q; P_set) beside the motion's torque. :func:`payload_set_check`
fits that difference: the residual of τ̂ against the robot file's rigid-body torque with P_set,
r = τ̂ − τ_M(q, q̇, q̈; P_set), on the flange payload's regressor W_P (plus viscous and Coulomb friction
per joint, which the file's model leaves out), r ≈ W_P·Δφ + F_v·q̇ + F_c·sgn(q̇); Δφ's mass is how much more
(or less) the arm carried than was set.

The payload set on the robot comes from the recording (the RTDE publisher's ``payload``, ``payload_cog`` and
``payload_inertia`` topics, or dynid's record of it), else it is taken as none and the reading says so.
"""

from __future__ import annotations

import dataclasses

import numpy as np
from scipy.signal import savgol_filter

from dynid.io.dataset import Dataset
from dynid.model.inertial import Payload
from dynid.model.robot import RobotModel

#: A payload set on the robot is called wrong when the recording says the arm carried at least this much
#: more or less [kg] and this share of the larger of the two masses.
MISMATCH_KG = 0.25
MISMATCH_SHARE = 0.1


def payload_from_record(record: dict | None) -> Payload | None:
    """A :class:`Payload` from a record {'mass' [kg], 'com' [m], 'inertia' (3×3 or the six ixx, iyy, izz, ixy,
    ixz, iyz) [kg·m²]}, or None (no record, or no mass)."""
    if not record or float(record.get('mass', 0.0)) <= 0.0:
        return None
    inertia = np.asarray(record.get('inertia', np.zeros((3, 3))), dtype=float)
    if inertia.shape == (6,):
        xx, yy, zz, xy, xz, yz = inertia
        inertia = np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]])
    return Payload(float(record['mass']), np.asarray(record.get('com', np.zeros(3)), dtype=float), inertia)


def payload_record(payload: Payload | None) -> dict:
    """The record of :func:`payload_from_record` for ``payload`` (None: no payload, mass 0)."""
    if payload is None:
        return {'mass': 0.0, 'com': [0.0, 0.0, 0.0], 'inertia': np.zeros((3, 3)).tolist()}
    return {'mass': float(payload.mass), 'com': [float(c) for c in payload.com],
            'inertia': np.asarray(payload.inertia, dtype=float).tolist()}


def gravity_torque(robot: RobotModel, q: np.ndarray, payload: Payload | None) -> np.ndarray:
    """g_M(q; payload) [N·m], (N, n): the robot file's gravity torque with ``payload`` on the flange."""
    zeros = np.zeros_like(q)
    return robot.inverse_dynamics(q, zeros, zeros, payload)


def remove_gravity(tau: np.ndarray, q: np.ndarray, robot: RobotModel, payload_set: Payload | None) -> np.ndarray:
    """Eq. (1) with the robot file as the robot's model: what a UR publishes as ``actual_current_as_torque``."""
    return np.asarray(tau) - gravity_torque(robot, q, payload_set)


def restore_gravity(dataset: Dataset, robot: RobotModel, payload_set: Payload | None) -> Dataset:
    """``dataset`` (``tau`` the gravity-compensated torque e of eq. (1)) with τ̂ = e + g_M(q; P_set) in ``tau``;
    ``source`` says so (``joint_states_effort`` becomes ``torque``, ``effort_as_recorded`` keeps the
    meaning read, ``robot_payload`` the payload added back)."""
    if dataset.tau is None:
        return dataset
    tau = dataset.tau + gravity_torque(robot, dataset.q, payload_set)
    source = {**dataset.source, 'joint_states_effort': 'torque', 'effort_as_recorded': 'gravity_compensated_torque',
              'robot_payload': payload_record(payload_set)}
    return dataclasses.replace(dataset, tau=tau, source=source)


def _acceleration(dataset: Dataset) -> np.ndarray:
    """q̈ [rad/s²] from q̇ by a Savitzky-Golay derivative over ~0.05 s."""
    dt = float(np.median(np.diff(dataset.t)))
    window = max(5, int(round(0.05 / dt)) | 1)
    if dataset.dq.shape[0] <= window:
        return np.gradient(dataset.dq, dataset.t, axis=0)
    return savgol_filter(dataset.dq, window, 2, deriv=1, delta=dt, axis=0)


def payload_set_check(dataset: Dataset, robot: RobotModel, payload_set: Payload | None) -> dict:
    """How much more mass [kg] the arm carried than ``payload_set`` by the restored torque of ``dataset``
    (module docstring), and a warning where the difference is at least :data:`MISMATCH_KG` and
    :data:`MISMATCH_SHARE` of the larger mass: {'set_kg', 'carried_kg', 'difference_kg', 'warning' (str|None)}."""
    q, dq = dataset.q, dataset.dq
    ddq = _acceleration(dataset)
    residual = (dataset.tau - robot.inverse_dynamics(q, dq, ddq, payload_set)).reshape(-1)
    n, samples = robot.n, q.shape[0]
    friction = np.zeros((samples, n, 2 * n))
    for j in range(n):
        friction[:, j, 2 * j] = dq[:, j]
        friction[:, j, 2 * j + 1] = np.sign(dq[:, j])
    columns = np.hstack([robot.payload_regressor(q, dq, ddq), friction.reshape(samples * n, 2 * n)])
    solution, *_ = np.linalg.lstsq(columns, residual, rcond=None)
    set_kg = 0.0 if payload_set is None else float(payload_set.mass)
    difference = float(solution[0])
    carried = set_kg + difference
    wrong = abs(difference) >= MISMATCH_KG and abs(difference) >= MISMATCH_SHARE * max(set_kg, carried)
    warning = (f'the payload set on the robot ({set_kg:.3g} kg) is not the one it carried: its gravity-compensated '
               f'effort says about {carried:.3g} kg (set the payload on the robot, e.g. from dynid payload, before '
               'relying on its torques or collision detection)') if wrong else None
    return {'set_kg': set_kg, 'carried_kg': carried, 'difference_kg': difference, 'warning': warning}


def drive_torque_as_current(dataset: Dataset, robot: RobotModel) -> Dataset:
    """A drive torque K_τ·i [N·m] in ``tau`` (``current_as_torque``, or a gravity-compensated torque with its gravity
    added back) read as what it is: the motor current i = τ / K_τ through the robot's drive gains, so that
    identification takes it as it takes a current (drive gains, rotor inertia: it is not a joint torque sensor's
    reading). ``source['joint_states_effort']`` becomes ``current`` (``effort_as_recorded`` keeps the meaning);
    unchanged where the robot has no drive data."""
    if dataset.tau is None or robot.drives is None or dataset.current is not None:
        return dataset
    source = {**dataset.source, 'joint_states_effort': 'current',
              'effort_as_recorded': dataset.source.get('effort_as_recorded', dataset.source.get('joint_states_effort'))}
    return dataclasses.replace(dataset, tau=None, current=robot.drives.joint_torque_to_current(dataset.tau),
                               source=source)


def drive_torque_reader(robot: RobotModel | None, meaning: str, payload_set: Payload | None = None):
    """A function (q (N, n) [rad], effort (N, n) [N·m]) → motor current (N, n) [A] for a drive-torque ``meaning``
    (``current_as_torque``: i = e / K_τ; ``gravity_compensated_torque``: i = (e + g_M(q; P_set)) / K_τ); InputError
    where ``robot`` has no drive data."""
    from dynid.errors import InputError

    if robot is None or robot.drives is None:
        raise InputError(f'joint_states_effort {meaning} is read through the drive gains: the robot has none')
    drives = robot.drives
    if meaning == 'current_as_torque':
        return lambda q, effort: drives.joint_torque_to_current(effort)
    if meaning == 'gravity_compensated_torque':
        return lambda q, effort: drives.joint_torque_to_current(effort + gravity_torque(robot, q, payload_set))
    raise InputError(f'joint_states_effort {meaning!r} is not a drive torque')
