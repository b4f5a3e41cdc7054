"""The twin as today's UR drivers: joint_states' effort as each UR mode publishes it, direct torque as UR applies it.

Effort (docs/backends/ur.md; :data:`dynid.io.EFFORT_MEANINGS`), from the twin's motor current i [A] and
its drive gains K_τ [N·m/A]:

- ``current``: i, RTDE ``actual_current`` (the UR driver before its PR #1551, or ``use_currents_as_efforts:=true``);
- ``current_as_torque``: K_τ·i [N·m], the drive torque computed from the current;
- ``gravity_compensated_torque``: K_τ·i − g_M(q; P_set) [N·m], UR's ``actual_current_as_torque`` (the driver's
  effort with ``use_currents_as_efforts:=false``), P_set the payload set on the robot, g_M the robot file's
  gravity standing in for the controller's (:mod:`dynid.io.gravity_restore`, eq. (1));
- ``torque``: the twin's joint torque (the contract; Franka, Gazebo).

Direct torque (``forward_effort_controller`` → URScript ``direct_torque()``, PolyScope ≥ 5.25.1 / 10.12.1): the
robot adds to the commanded torque τ_c its own gravity compensation g_M(q; P_set) and its friction
compensation scaled per joint by the FrictionModelController's factors s_v, s_c ∈ [0, 1] (0: none, 1: full):

    τ_drive = τ_c + g_M(q; P_set) + s_v·F_v·q̇ + s_c·F_c·sgn(q̇)                                       (2)

F_v, F_c the robot's own viscous and Coulomb coefficients (here the twin's nominal friction, UR's model of
itself). :func:`ur_direct_torque` is eq. (2).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from dynid.errors import InputError, checked_choice
from dynid.io import EFFORT_MEANINGS
from dynid.io.dataset import Dataset
from dynid.io.gravity_restore import payload_record, remove_gravity
from dynid.model.inertial import Payload
from dynid.model.robot import RobotModel
from dynid.sim.controller import INTEGRAL, KI


def driver_effort(robot: RobotModel, meaning: str, q: np.ndarray, tau: np.ndarray | None,
                  current: np.ndarray | None, payload_set: Payload | None = None) -> np.ndarray:
    """joint_states' effort (N, n) as a driver publishing ``meaning`` does, from the twin's link positions q
    [rad], joint torque τ [N·m] and motor current i [A] (module docstring)."""
    checked_choice('joint_states effort', meaning, EFFORT_MEANINGS)
    if meaning == 'torque':
        return np.asarray(tau)
    if current is None:
        raise InputError(f'joint_states effort {meaning} needs the motor current')
    if meaning == 'current':
        return np.asarray(current)
    if robot.drives is None:
        raise InputError(f'joint_states effort {meaning} needs the drive gains: robot {robot.name!r} has none')
    drive_torque = robot.drives.current_to_joint_torque(current)
    if meaning == 'current_as_torque':
        return drive_torque
    return remove_gravity(drive_torque, q, robot, payload_set)


def as_driver_recording(dataset: Dataset, robot: RobotModel, meaning: str,
                        payload_set: Payload | None = None) -> Dataset:
    """What ``ros2 bag record /joint_states`` keeps of a UR driver publishing ``meaning``: q, q̇ and the effort
    (``tau`` for the torque meanings, ``current`` for ``current``), no rotor encoders, currents or temperatures;
    ``source`` records the meaning and, for ``gravity_compensated_torque``, the payload set on the robot (as
    dynid records it beside a bag, :mod:`dynid.io.effort_record`)."""
    effort = driver_effort(robot, meaning, dataset.q, dataset.tau, dataset.current, payload_set)
    source = {'joint_states_effort': meaning, 'simulation': dataset.source.get('simulation')}
    if meaning == 'gravity_compensated_torque':
        source['robot_payload'] = payload_record(payload_set)
    current = effort if meaning == 'current' else None
    tau = None if meaning == 'current' else effort
    return dataclasses.replace(dataset, tau=tau, current=current, theta=None, dtheta=None, temperature=None,
                               source=source)


def check_friction_scales(viscous, coulomb, n: int) -> tuple[np.ndarray, np.ndarray]:
    """The FrictionModelController's scale factors as arrays of n, each finite and in [0, 1] (InputError naming
    the field otherwise)."""
    out = []
    for name, values in (('viscous_scale', viscous), ('coulomb_scale', coulomb)):
        a = np.broadcast_to(np.asarray(values, dtype=float), (n,)).copy()
        if not np.all(np.isfinite(a)) or np.any((a < 0) | (a > 1)):
            raise InputError(f'friction model {name} must be {n} numbers in [0, 1], got {np.asarray(values).tolist()}')
        out.append(a)
    return out[0], out[1]


@dataclasses.dataclass(frozen=True)
class URDirectTorque:
    """UR's application of a direct-torque command, eq. (2): gravity with ``payload_set`` and the robot's friction
    (``viscous``, ``coulomb`` [N·m·s/rad, N·m], per joint) scaled by ``viscous_scale``, ``coulomb_scale``."""

    robot: RobotModel
    viscous: np.ndarray
    coulomb: np.ndarray
    viscous_scale: np.ndarray
    coulomb_scale: np.ndarray
    payload_set: Payload | None = None
    #: |q̇| [rad/s] over which sgn(q̇) of the Coulomb compensation ramps (UR's own is not published).
    smoothing: float = 0.01

    def __call__(self, command: np.ndarray, q: np.ndarray, dq: np.ndarray) -> np.ndarray:
        """τ_drive [N·m], (N, n) or (n,), for the command τ_c at the link state (q, q̇)."""
        single = np.ndim(q) == 1
        q2, dq2, c2 = (np.atleast_2d(a) for a in (q, dq, command))
        zeros = np.zeros_like(q2)
        gravity = self.robot.inverse_dynamics(q2, zeros, zeros, self.payload_set)
        friction = (self.viscous_scale * self.viscous * dq2
                    + self.coulomb_scale * self.coulomb * np.tanh(dq2 / self.smoothing))
        out = c2 + gravity + friction
        return out[0] if single else out

    @classmethod
    def of_twin(cls, params, viscous_scale, coulomb_scale, payload_set: Payload | None = None) -> URDirectTorque:
        """UR's direct torque on a twin (``params``: its :class:`~dynid.sim.parameters.PlantParameters`): the twin's
        nominal viscous and Coulomb friction stand in for UR's own model (what its controller compensates)."""
        robot = params.robot
        viscous = np.asarray(params.joints.viscous1, dtype=float)
        coulomb = np.asarray(params.joints.coulomb, dtype=float)
        sv, sc = check_friction_scales(viscous_scale, coulomb_scale, robot.n)
        return cls(robot, viscous, coulomb, sv, sc, payload_set)


def hand_gravity_to_ur(twin, ur: URDirectTorque) -> None:
    """At the twin's start its controller's integrator is preloaded with the gravity torque (it holds the arm);
    under direct torque UR gives that: the preload is lowered by UR's torque at the start state."""
    state = twin.plant.state
    gains = twin.controller.gains
    ki = gains[KI]
    given = ur(np.zeros(ur.robot.n), np.asarray(state.q, dtype=float), np.asarray(state.dq, dtype=float))
    gains[INTEGRAL] -= np.where(ki > 0, given / np.where(ki > 0, ki, 1.0), 0.0)


class URDriverSide:
    """What sim_node publishes and applies as a UR does: the effort of ``meaning`` (module docstring) and, with
    ``direct_torque``, effort commands applied as eq. (2) with the friction scale factors (changeable, as the
    FrictionModelController's service changes them), evaluated at the state of each burst's start."""

    def __init__(self, params, meaning: str, payload_set: Payload | None, direct_torque: bool,
                 viscous_scale=0.0, coulomb_scale=0.0) -> None:
        checked_choice('joint_states_effort', meaning, EFFORT_MEANINGS)
        self.robot, self.meaning, self.payload_set = params.robot, meaning, payload_set
        self.ur = URDirectTorque.of_twin(params, viscous_scale, coulomb_scale, payload_set) if direct_torque else None
        self.command = np.zeros(params.robot.n)

    @property
    def effort_field(self) -> str:
        """The measurement published as joint_states' effort (``driver_effort``: computed by :meth:`measured`)."""
        return {'torque': 'joint_torque', 'current': 'current'}.get(self.meaning, 'driver_effort')

    def measured(self, measured: dict) -> dict:
        """The twin's measurements with ``driver_effort`` where the effort is a drive torque."""
        if self.effort_field != 'driver_effort':
            return measured
        return {**measured, 'driver_effort': driver_effort(self.robot, self.meaning, measured['q'], None,
                                                           measured['current'], self.payload_set)}

    def set_scales(self, viscous_scale=None, coulomb_scale=None) -> None:
        """New friction scale factors (InputError outside [0, 1]); no-op without direct torque."""
        if self.ur is not None:
            sv, sc = check_friction_scales(self.ur.viscous_scale if viscous_scale is None else viscous_scale,
                                           self.ur.coulomb_scale if coulomb_scale is None else coulomb_scale,
                                           self.robot.n)
            self.ur = dataclasses.replace(self.ur, viscous_scale=sv, coulomb_scale=sc)

    def effort(self, twin, command: np.ndarray | None = None) -> np.ndarray:
        """The effort the twin's joints get for the held ``command`` [N·m] (kept when given): the command itself,
        or UR's eq. (2) at the twin's present state."""
        if command is not None:
            self.command = np.asarray(command, dtype=float)
        if self.ur is None:
            return self.command
        state = twin.plant.state
        return self.ur(self.command, np.asarray(state.q, dtype=float), np.asarray(state.dq, dtype=float))


def run_direct_torque(twin, ur: URDirectTorque, commands: np.ndarray | None, samples: int) -> dict:
    """Advance ``twin`` (its joint controller without internal feedforward stands for the loop that closes around
    the torque) ``samples`` output samples with UR applying ``commands`` (N, n) [N·m] (None: 0) as eq. (2) at the
    measured state of each sample: {'t' (N,), 'q', 'dq' (N, n) measured}. A twin at its start has its
    controller's integrator preloaded with the gravity torque (it holds the arm); here UR gives that, so the
    preload is lowered by UR's torque at the start."""
    state = twin.plant.state
    q, dq = np.array(state.q, dtype=float), np.array(state.dq, dtype=float)
    if twin.samples == 0:
        hand_gravity_to_ur(twin, ur)
    t, qs, dqs = [], [], []
    for k in range(samples):
        command = np.zeros(ur.robot.n) if commands is None else commands[k]
        twin.set_effort_command(ur(command, q, dq))
        record = twin.advance(1)
        q, dq = record.measured['q'][0], record.measured['dq'][0]
        t.append(record.time[0])
        qs.append(q)
        dqs.append(dq)
    return {'t': np.array(t), 'q': np.array(qs), 'dq': np.array(dqs)}
