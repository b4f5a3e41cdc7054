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

The controller's model (friction, stiffness φ(τ)) is the plant's as it was made: like a real robot
controller, it is not told of later changes of the true joints (:mod:`dynid.sim.changes`) or payload.
"""

from __future__ import annotations

import numpy as np
import pinocchio as pin

from dynid.sim.parameters import PlantParameters
from dynid.sim.plant import FlexibleJointPlant


class JointController:
    """Motor-side PID with feedforward and current saturation (module docstring).

    The law is split where the simulator can batch it: :meth:`internal_torques` and
    :meth:`setpoints` depend on the reference only (computed for many steps at once), and
    :meth:`feedback` closes the loop at each step; :meth:`current` does all three for one step.
    """

    def __init__(self, params: PlantParameters, plant: FlexibleJointPlant) -> None:
        self.params = params
        self.plant = plant
        self.stiffness = plant.stiffness  # the stiffness model of the controller: the plant's when made
        self.robot = params.robot
        self.limits = params.current_limits
        self.integral = np.zeros(self.robot.n)
        self.kp = self.kd = self.ki = np.zeros(self.robot.n)
        self._model = self.robot.pinocchio_model
        self._data = self._model.createData()
        self._configuration = self._model.nq != self.robot.n  # continuous joints: cos/sin pairs
        self._drive_gain = np.array(params.nominal_drives.drive_gain, dtype=float)
        self._negative_limits = -self.limits
        self._step = (None, None)  # (h, h as an (n,) array: numpy takes arrays faster than scalars)

    def reset(self, q: np.ndarray) -> None:
        """Gains from the inertia at q; integrator preloaded with the torque the model does not give."""
        c = self.params.controller
        config = self.robot.configuration_vector(q)
        inertia = np.diag(pin.crba(self._model, self._data, config))
        inertia = inertia + self.params.nominal_drives.rotor_inertia
        omega = 2 * np.pi * c.bandwidth_hz
        self.kp = inertia * omega**2
        self.kd = 2 * c.damping_ratio * inertia * omega
        self.ki = self.kp * omega * c.integral_fraction
        zero = np.zeros(self.robot.n)
        self._deflection = self.stiffness.deflection(self.internal_torque(q, zero, zero))
        held = self.plant.gravity_torque(q)
        self.integral = np.zeros(self.robot.n)
        if np.any(self.ki > 0):
            self.integral = np.where(self.ki > 0, (held - self.internal_torque(q, zero, zero)) / np.where(
                self.ki > 0, self.ki, 1.0), 0.0)

    def internal_torque(self, q_r: np.ndarray, dq_r: np.ndarray, ddq_r: np.ndarray) -> np.ndarray:
        """The controller's own model-based torque at the reference [N·m]."""
        return self.internal_torques(np.reshape(q_r, (1, -1)), np.reshape(dq_r, (1, -1)),
                                     np.reshape(ddq_r, (1, -1)))[0]

    def internal_torques(self, q_r: np.ndarray, dq_r: np.ndarray, ddq_r: np.ndarray) -> np.ndarray:
        """:meth:`internal_torque` for (N, n) references at once (N, n) [N·m]; rows are independent."""
        mode = self.params.controller.internal_feedforward
        if mode == 'none':
            return np.zeros(np.shape(q_r))
        q_r, dq_r, ddq_r = (np.asarray(a, dtype=float) for a in (q_r, dq_r, ddq_r))
        if mode == 'gravity':
            config = self.robot.configuration(q_r) if self._configuration else q_r
            return np.array([pin.computeGeneralizedGravity(self._model, self._data, c) for c in config])
        j = self.params.joints
        rigid = self.robot.inverse_dynamics(q_r, dq_r, ddq_r)  # the nominal model, without payload
        friction = j.coulomb * np.tanh(dq_r / 0.01) + j.viscous1 * dq_r
        return rigid + self.params.nominal_drives.rotor_inertia * ddq_r + friction

    def setpoints(self, q_r: np.ndarray, internal: np.ndarray) -> np.ndarray:
        """Rotor set-points θ_r = q_r + φ(τ_internal) (N, n) for consecutive steps; advances φ.

        One Newton step per control step from the previous deflection tracks φ(τ) as the reference
        moves (a sequence: row k starts from row k − 1).
        """
        if self.params.controller.internal_feedforward == 'none':
            return np.array(q_r, dtype=float)
        newton_step = self.stiffness.newton_step
        deflection = self._deflection
        rows = []
        for tau in internal:
            deflection = newton_step(deflection, tau)
            rows.append(deflection)
        self._deflection = deflection
        return q_r + np.array(rows).reshape(np.shape(q_r))

    def feedback(self, theta: np.ndarray, dtheta: np.ndarray, theta_r: np.ndarray, dq_r: np.ndarray,
                 internal: np.ndarray, effort: np.ndarray | None, h: float) -> np.ndarray:
        """Motor current [A] of one step h [s] from the measured rotor state and the step's set-points.

        ``effort`` None is a zero effort (the same current, one addition fewer).
        """
        if self._step[0] != h:
            self._step = (h, np.full(self.robot.n, h))
        error = theta_r - theta
        torque = internal + self.kp * error + self.kd * (dq_r - dtheta) + self.ki * self.integral
        if effort is not None:
            torque = torque + effort
        raw = torque / self._drive_gain
        current = np.minimum(np.maximum(raw, self._negative_limits), self.limits)  # np.clip, in fewer calls
        self.integral = self.integral + error * self._step[1] * (current == raw)  # held while saturated
        return current

    def current(self, theta: np.ndarray, dtheta: np.ndarray, q_r: np.ndarray, dq_r: np.ndarray,
                ddq_r: np.ndarray, effort: np.ndarray, h: float) -> np.ndarray:
        """Motor current [A] for measured rotor position/velocity and the reference, over a step h [s]."""
        internal = self.internal_torque(q_r, dq_r, ddq_r)
        theta_r = self.setpoints(np.reshape(q_r, (1, -1)), internal[None, :])[0]
        return self.feedback(theta, dtheta, theta_r, dq_r, internal, effort, h)
