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
"""

from __future__ import annotations

import numpy as np
import pinocchio as pin

from dynid.sim.parameters import PlantParameters
from dynid.sim.plant import FlexibleJointPlant


class JointController:
    """Motor-side PID with feedforward and current saturation (module docstring)."""

    def __init__(self, params: PlantParameters, plant: FlexibleJointPlant) -> None:
        self.params = params
        self.plant = plant
        self.robot = params.robot
        self.limits = params.current_limits
        self.integral = np.zeros(self.robot.n)
        self.kp = self.kd = self.ki = np.zeros(self.robot.n)
        self._model = self.robot.pinocchio_model
        self._data = self._model.createData()

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
        self._deflection = self.plant.stiffness.deflection(self.internal_torque(q, zero, zero))
        held = self.plant.gravity_torque(q)
        self.integral = np.zeros(self.robot.n)
        if np.any(self.ki > 0):
            self.integral = np.where(self.ki > 0, (held - self.internal_torque(q, zero, zero)) / np.where(
                self.ki > 0, self.ki, 1.0), 0.0)

    def internal_torque(self, q_r: np.ndarray, dq_r: np.ndarray, ddq_r: np.ndarray) -> np.ndarray:
        """The controller's own model-based torque at the reference [N·m]."""
        mode = self.params.controller.internal_feedforward
        if mode == 'none':
            return np.zeros(self.robot.n)
        config = self.robot.configuration_vector(q_r)
        if mode == 'gravity':
            return pin.computeGeneralizedGravity(self._model, self._data, config)
        j = self.params.joints
        rigid = pin.rnea(self._model, self._data, config, dq_r, ddq_r)
        friction = j.coulomb * np.tanh(dq_r / 0.01) + j.viscous1 * dq_r
        return rigid + self.params.nominal_drives.rotor_inertia * ddq_r + friction

    def current(self, theta: np.ndarray, dtheta: np.ndarray, q_r: np.ndarray, dq_r: np.ndarray,
                ddq_r: np.ndarray, effort: np.ndarray, h: float) -> np.ndarray:
        """Motor current [A] for measured rotor position/velocity and the reference, over a step h [s]."""
        internal = self.internal_torque(q_r, dq_r, ddq_r)
        if self.params.controller.internal_feedforward != 'none':
            # One Newton step from the previous deflection tracks φ(τ) as the reference moves.
            stiffness = self.plant.stiffness
            self._deflection = self._deflection - (stiffness.torque(self._deflection) - internal) / \
                stiffness.stiffness(self._deflection)
            theta_r = q_r + self._deflection
        else:
            theta_r = q_r
        error = theta_r - theta
        torque = internal + self.kp * error + self.kd * (dq_r - dtheta) + self.ki * self.integral + effort
        raw = torque / self.params.nominal_drives.drive_gain
        current = np.clip(raw, -self.limits, self.limits)
        self.integral = self.integral + np.where(current == raw, error * h, 0.0)
        return current
