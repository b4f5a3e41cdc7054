"""Joint controller of the twin: what a robot's joint_trajectory_controller with [position, effort]
command interfaces drives on real hardware.

Per joint, on the motor side (collocated, so it stays stable with elastic joints):

    τ = τ_internal(q_r, q̇_r, q̈_r) + K_p·(θ_r − θ) + K_d·(q̇_r − θ̇) + K_i·∫(θ_r − θ) + τ_effort
    θ_r = q_r + φ(τ_rigid)          (the deflection the rigid-body torque will cause)
    i = sat(τ / K_τ,nominal, ±i_max)

τ_internal is the controller's own model-based term ('full': nominal rigid-body inverse dynamics of
the reference without payload, rotor inertia and Coulomb/viscous friction; 'gravity'; 'none'), as
robot controllers have; τ_effort is the external effort input (the trajectory's effort field or a
forward effort controller) [N·m]. Gains come from the joint's inertia at the start configuration
and the bandwidth. The integrator stops while the current saturates (anti-windup).

With coupled joints (:mod:`dynid.model.drives`) the law runs per motor, in the plant's coordinates p = C·q
(:mod:`dynid.sim.plant`): the reference becomes p_r = C·q_r, the model-based torque C⁻ᵀ·τ_rigid + B·p̈_r +
friction(ṗ_r), the effort input C⁻ᵀ·τ_effort (:meth:`JointController.motor_reference`).

The controller's model (friction, stiffness φ(τ)) is the plant's as it was made: like a real robot
controller, it is not told of later changes of the true joints (:mod:`dynid.sim.changes`) or payload.
"""

from __future__ import annotations

import numba
import numpy as np
import pinocchio as pin

from dynid.friction.stiffness import newton_step_scalar
from dynid.sim.parameters import PlantParameters
from dynid.sim.plant import FlexibleJointPlant

#: Rows of the controller's array :attr:`JointController.gains` (per joint).
GAIN_ROWS = ('kp', 'kd', 'ki', 'integral', 'drive_gain', 'current_limit', 'encoder_resolution')
KP, KD, KI, INTEGRAL, DRIVE_GAIN, CURRENT_LIMIT, ENCODER_RESOLUTION = range(len(GAIN_ROWS))


class JointController:
    """Motor-side PID with feedforward and current saturation (module docstring).

    The law is split where the simulator can batch it: :meth:`internal_torques` and
    :meth:`setpoints` depend on the reference only (computed for many steps at once), and
    :meth:`feedback` (:func:`feedback_law`) closes the loop at each step; :meth:`current` does all
    three for one step. The feedback reads the rotor position through the motor encoder, rounded to
    ``encoder_resolution`` [rad] (0: exact).

    Attributes:
        gains: (len(GAIN_ROWS), n) the gains, the integrator state, the nominal drive gains, the current
            limits and the encoder resolution, one row each (:data:`GAIN_ROWS`); :func:`feedback_law`
            advances its integrator row in place.
    """

    def __init__(self, params: PlantParameters, plant: FlexibleJointPlant,
                 encoder_resolution: float | np.ndarray = 0.0) -> None:
        self.params = params
        self.plant = plant
        self.stiffness = plant.stiffness  # the stiffness model of the controller: the plant's when made
        self.robot = params.robot
        self.limits = params.current_limits
        self.gains = np.zeros((len(GAIN_ROWS), self.robot.n))
        self.gains[DRIVE_GAIN] = params.nominal_drives.drive_gain
        self.gains[CURRENT_LIMIT] = self.limits
        self.gains[ENCODER_RESOLUTION] = encoder_resolution
        self._model = self.robot.pinocchio_model
        self._data = self._model.createData()
        self._configuration = self._model.nq != self.robot.n  # continuous joints: cos/sin pairs
        self._alpha = np.ascontiguousarray(self.stiffness.alpha, dtype=float)

    def reset(self, q: np.ndarray) -> None:
        """Gains from the inertia at q; integrator preloaded with the torque the model does not give."""
        c = self.params.controller
        config = self.robot.configuration_vector(q)
        inertia = np.diag(pin.crba(self._model, self._data, config))
        inertia = inertia + self.params.nominal_drives.rotor_inertia
        omega = 2 * np.pi * c.bandwidth_hz
        kp = inertia * omega**2
        ki = kp * omega * c.integral_fraction
        self.gains[KP], self.gains[KD], self.gains[KI] = kp, 2 * c.damping_ratio * inertia * omega, ki
        zero = np.zeros(self.robot.n)
        self._deflection = self.stiffness.deflection(self.internal_torque(q, zero, zero))
        held = self.plant.gravity_torque(self.params.drives.joints_to_motors(q))
        self.gains[INTEGRAL] = np.where(ki > 0, (held - self.internal_torque(q, zero, zero)) / np.where(
            ki > 0, ki, 1.0), 0.0)

    @property
    def integral(self) -> np.ndarray:
        """∫(θ_r − θ) [rad·s] per joint (a copy)."""
        return self.gains[INTEGRAL].copy()

    def internal_torque(self, q_r: np.ndarray, dq_r: np.ndarray, ddq_r: np.ndarray) -> np.ndarray:
        """The controller's own model-based torque at the reference [N·m]."""
        return self.internal_torques(np.reshape(q_r, (1, -1)), np.reshape(dq_r, (1, -1)),
                                     np.reshape(ddq_r, (1, -1)))[0]

    def internal_torques(self, q_r: np.ndarray, dq_r: np.ndarray, ddq_r: np.ndarray) -> np.ndarray:
        """:meth:`internal_torque` for (N, n) references at once (N, n) [N·m]; rows are independent. The
        reference is the joints' (q_r); the torque the motors' (module docstring: C⁻ᵀ·τ of coupled joints)."""
        mode = self.params.controller.internal_feedforward
        if mode == 'none':
            return np.zeros(np.shape(q_r))
        q_r, dq_r, ddq_r = (np.asarray(a, dtype=float) for a in (q_r, dq_r, ddq_r))
        drives = self.params.drives
        if mode == 'gravity':
            config = self.robot.configuration(q_r) if self._configuration else q_r
            gravity = np.array([pin.computeGeneralizedGravity(self._model, self._data, c) for c in config])
            return drives.joint_to_motor_torque_space(gravity)
        j = self.params.joints
        rigid = self.robot.inverse_dynamics(q_r, dq_r, ddq_r)  # the nominal model, without payload
        dp_r, ddp_r = drives.joints_to_motors(dq_r), drives.joints_to_motors(ddq_r)
        friction = j.coulomb * np.tanh(dp_r / 0.01) + j.viscous1 * dp_r
        return drives.joint_to_motor_torque_space(rigid) + self.params.nominal_drives.rotor_inertia * ddp_r + friction

    def motor_reference(self, q_r: np.ndarray, dq_r: np.ndarray, effort: np.ndarray):
        """(p_r, ṗ_r, effort) of the motors from the joints' reference and effort input (the same arrays without a
        coupling; module docstring)."""
        drives = self.params.drives
        if drives.coupling is None:
            return q_r, dq_r, effort
        return drives.joints_to_motors(q_r), drives.joints_to_motors(dq_r), drives.joint_to_motor_torque_space(effort)

    def setpoints(self, q_r: np.ndarray, internal: np.ndarray) -> np.ndarray:
        """Rotor set-points θ_r = q_r + φ(τ_internal) (N, n) for consecutive steps; advances φ.

        One Newton step per control step from the previous deflection tracks φ(τ) as the reference
        moves (a sequence: row k starts from row k − 1).
        """
        if self.params.controller.internal_feedforward == 'none':
            return np.array(q_r, dtype=float)
        theta_r = _newton_setpoints(np.ascontiguousarray(q_r, dtype=float).reshape(-1, self.robot.n),
                                    np.ascontiguousarray(internal, dtype=float).reshape(-1, self.robot.n),
                                    self._deflection, self._alpha)
        return theta_r.reshape(np.shape(q_r))

    def feedback(self, theta: np.ndarray, dtheta: np.ndarray, theta_r: np.ndarray, dq_r: np.ndarray,
                 internal: np.ndarray, effort: np.ndarray | None, h: float) -> np.ndarray:
        """Motor current [A] of one step h [s] from the rotor state (θ as the encoder reads it) and the
        step's set-points; advances the integrator. ``effort`` None is a zero effort."""
        n = self.robot.n
        current = np.empty(n)
        effort = np.zeros(n) if effort is None else effort
        arrays = (theta, dtheta, theta_r, dq_r, internal, effort)
        feedback_law(self.gains, *(np.asarray(a, dtype=float).reshape(n) for a in arrays), float(h), current)
        return current

    def current(self, theta: np.ndarray, dtheta: np.ndarray, q_r: np.ndarray, dq_r: np.ndarray,
                ddq_r: np.ndarray, effort: np.ndarray, h: float) -> np.ndarray:
        """Motor current [A] for the rotor position/velocity (:meth:`feedback`) and the reference, over a
        step h [s]."""
        internal = self.internal_torque(q_r, dq_r, ddq_r)
        p_r, dp_r, effort = self.motor_reference(q_r, dq_r, effort)
        theta_r = self.setpoints(np.reshape(p_r, (1, -1)), internal[None, :])[0]
        return self.feedback(theta, dtheta, theta_r, dp_r, internal, effort, h)


@numba.njit(cache=True)
def feedback_law(gains, theta, dtheta, theta_r, dq_r, internal, effort, h, current):
    """The feedback of one step h [s] (module docstring), compiled: motor current [A] into ``current``
    (n,) from the rotor position θ as the encoder reads it (rounded to gains[ENCODER_RESOLUTION] where
    > 0) and velocity θ̇; the integrator gains[INTEGRAL] advances unless the current saturates."""
    for j in range(current.size):
        resolution = gains[ENCODER_RESOLUTION, j]
        measured = np.rint(theta[j] / resolution) * resolution if resolution > 0 else theta[j]
        error = theta_r[j] - measured
        torque = internal[j] + gains[KP, j] * error + gains[KD, j] * (dq_r[j] - dtheta[j]) \
            + gains[KI, j] * gains[INTEGRAL, j]
        raw = (torque + effort[j]) / gains[DRIVE_GAIN, j]
        limit = gains[CURRENT_LIMIT, j]
        current[j] = min(max(raw, -limit), limit)
        if current[j] == raw:  # held while saturated (anti-windup)
            gains[INTEGRAL, j] += error * h


@numba.njit(cache=True)
def _newton_setpoints(q_r, internal, deflection, alpha):
    """θ_r = q_r + φ for consecutive steps (N, n), φ one Newton step per row toward τ_j(φ) = τ_internal
    from the previous row's (``deflection`` (n,) before the first, updated in place)."""
    out = np.empty_like(q_r)
    for row in range(q_r.shape[0]):
        for j in range(q_r.shape[1]):
            deflection[j] = newton_step_scalar(alpha, j, deflection[j], internal[row, j])
            out[row, j] = q_r[row, j] + deflection[j]
    return out
