"""The simulated flexible-joint robot: rigid links, elastic joints, rotors, friction and heating.

Spong's flexible-joint model (thesis ch.2 eqs. (2.3)–(2.10) with A1–A3; ch.6 eqs. (1)–(2)):

    link:   M(q)·q̈ + C(q, q̇)·q̇ + g(q) = τ_j                  (pinocchio, payload at the flange)
    rotor:  B·θ̈ + f + τ_j = K_τ·i                              (θ: rotor angle in link units)
    joint:  τ_j = α1·φ + α3·φ³ + D·φ̇,  φ = θ − q
    f:      F(τ_j)·H_EGMS(θ) + Stribeck excess + viscous + temperature term   (JointFriction)
    heat:   C_th·Ṫ = R·i² + |f·θ̇| − (T − T_amb)/R_th;  sensor: τ_s·Ṫ_s = T − T_s

**Integration.** The joints are stiff (α1/B gives modes of 40–500 Hz) and the E-GMS friction is
stiffer still in pre-sliding, so a step of 1 ms would be unstable if explicit. Each step is
linearly implicit: the spring/damper torque and the friction's position and velocity slopes are
taken at t + β·h (β = ½, trapezoidal: no numerical damping of a linear spring), the rigid-body
terms M(q), C·q̇ + g at the half step (q + h/2·q̇, with q̇ advanced by the last acceleration), the
motor current and the friction value at the start of the step. This leaves one n×n linear solve
per step, stable for any stiffness and second order for the conservative part: a free swing of the
UR5e without friction or damping keeps its energy within 1e-4 (relative) over 3 s at h = 1 ms.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pinocchio as pin
from scipy.linalg import lapack

from dynid.friction.egms import EGMS
from dynid.friction.joint_friction import JointFriction
from dynid.friction.static import StribeckMap
from dynid.friction.stiffness import OddPolynomialStiffness
from dynid.friction.temperature import ReferenceTemperatureFriction
from dynid.model.inertial import to_pinocchio_inertia
from dynid.sim.parameters import PlantParameters

#: Width [rad/s] of the tanh replacing sgn(ω) in the Stribeck excess term (continuity for the solver).
STRIBECK_SMOOTHING = 1e-3
BACKLASH_TABLE_POINTS = 360


@dataclass
class PlantState:
    """Physical state, all (n,) arrays: link q [rad], q̇ [rad/s]; rotor θ [rad], θ̇ [rad/s] in link
    units; joint temperature T [°C] and the temperature sensor's lagged value [°C]."""

    q: np.ndarray
    dq: np.ndarray
    theta: np.ndarray
    dtheta: np.ndarray
    temperature: np.ndarray
    sensed_temperature: np.ndarray

    def copy(self) -> PlantState:
        return PlantState(*(np.array(a, copy=True) for a in (self.q, self.dq, self.theta, self.dtheta,
                                                              self.temperature, self.sensed_temperature)))


def build_friction(params: PlantParameters) -> JointFriction:
    """The true joint friction of the plant (E-GMS with a position-dependent backlash table), or, for
    ``friction_model='coulomb_viscous'``, Fc·tanh(ω/ε) + Fv1·ω only."""
    j = params.joints
    n = params.robot.n
    if j.friction_model == 'coulomb_viscous':
        return JointFriction(StribeckMap(Fc=j.coulomb, Fs=j.coulomb, Fv1=j.viscous1, Vs=j.stribeck_velocity,
                                         mu=j.stribeck_shape, smoothing=STRIBECK_SMOOTHING),
                             coulomb_smoothing=STRIBECK_SMOOTHING)
    angles = np.linspace(0.0, 2 * np.pi, BACKLASH_TABLE_POINTS, endpoint=False)
    table = j.backlash[:, None] * (1.0 + j.backlash_variation[:, None] * np.sin(angles)[None, :])
    stribeck = StribeckMap(Fc=j.coulomb, Fs=j.static, Fv1=j.viscous1, Fv2=j.viscous2, Fv3=j.viscous3,
                           Vs=j.stribeck_velocity, mu=j.stribeck_shape, smoothing=STRIBECK_SMOOTHING)
    temperature = ReferenceTemperatureFriction(Ft1=j.temperature_linear, Ft2=j.temperature_cubic)
    egms = EGMS(n, j.egms_elements, j.egms_r_delta, j.egms_r_k, backlash=table)
    return JointFriction(stribeck, load_coefficient=j.load_coefficient, load_law='squared',
                         temperature=temperature, egms=egms)


class FlexibleJointPlant:
    """The plant of :class:`PlantParameters`, advanced by :meth:`advance` (module docstring).

    After each step, ``joint_torque``, ``friction``, ``current`` and ``rotor_acceleration`` hold
    the values at the new state (true, noiseless).
    """

    BETA = 0.5

    def __init__(self, params: PlantParameters) -> None:
        self.params = params
        self.n = params.robot.n
        self.stiffness = OddPolynomialStiffness(np.column_stack([params.joints.alpha1, params.joints.alpha3]))
        self.friction = build_friction(params)
        stribeck = self.friction.stribeck
        self._excess_height = np.maximum(stribeck.Fs - stribeck.Fc, 0.0) / STRIBECK_SMOOTHING
        self._set_model(params.payload)
        self.state: PlantState | None = None
        self.current = np.zeros(self.n)
        self.joint_torque = np.zeros(self.n)
        self.friction_torque = np.zeros(self.n)
        self.rotor_acceleration = np.zeros(self.n)
        self.link_acceleration = np.zeros(self.n)

    # -------------------------------------------------------------------------------- set-up
    def _set_model(self, payload) -> None:
        model = pin.Model(self.params.robot.pinocchio_model)
        if payload is not None:
            last = model.njoints - 1
            model.inertias[last] = model.inertias[last] + self.params.robot.flange_placement.act(
                to_pinocchio_inertia(payload.parameters()))
        self._model, self._data = model, model.createData()
        self._lower = np.tril_indices(self.n, -1)
        self._diagonal = np.diag_indices(self.n)

    def set_payload(self, payload) -> None:
        """Change the payload (at run time too: the state is kept)."""
        self.params = self.params.with_payload(payload)
        self._set_model(payload)

    def gravity_torque(self, q: np.ndarray) -> np.ndarray:
        """g(q) [N·m] of the true model (with payload)."""
        return pin.computeGeneralizedGravity(self._model, self._data, self.params.robot.configuration_vector(q))

    def reset(self, q: np.ndarray, temperature: np.ndarray | float | None = None) -> None:
        """At rest at link position q [rad], joints deflected to hold gravity, friction history cleared."""
        q = np.asarray(q, dtype=float).reshape(self.n)
        phi = self.stiffness.deflection(self.gravity_torque(q))
        t0 = np.broadcast_to(self.params.initial_temperature_c if temperature is None else temperature,
                             (self.n,)).astype(float)
        self.state = PlantState(q.copy(), np.zeros(self.n), q + phi, np.zeros(self.n), t0.copy(), t0.copy())
        self.friction.reset(self.state.theta)
        self.current = np.zeros(self.n)
        self.joint_torque = self.stiffness.torque(phi)
        self.friction_torque = self.friction.step(self.state.theta, self.state.dtheta, self.joint_torque,
                                                  self.state.temperature)
        self.rotor_acceleration = np.zeros(self.n)
        self.link_acceleration = np.zeros(self.n)

    # ----------------------------------------------------------------------------- dynamics
    def _friction_slopes(self, joint_torque: np.ndarray, velocity: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(∂f/∂θ, ∂f/∂θ̇) at the current state: E-GMS pre-sliding stiffness and velocity slope."""
        egms = self.friction.egms
        s = self.friction.stribeck
        w = np.abs(velocity)
        sech2 = 1.0 - np.tanh(velocity / STRIBECK_SMOOTHING) ** 2
        k_velocity = s.Fv1 + w * (2 * s.Fv2 + 3 * s.Fv3 * w) + self._excess_height * s.stribeck_decay(velocity) * sech2
        if egms is None:  # smoothed static Coulomb: its slope is a velocity slope
            return np.zeros_like(velocity), k_velocity + self.friction.coulomb_level(joint_torque) * sech2 / \
                STRIBECK_SMOOTHING
        b = egms.last_backlash
        sticking = np.abs(egms.state) < b[:, None] * egms.delta * (1.0 - 1e-9)
        k_position = self.friction.coulomb_level(joint_torque) * np.einsum('jm,jm->j', egms.k, sticking) / b
        return k_position, np.maximum(k_velocity, 0.0)

    def advance(self, current: np.ndarray, h: float) -> None:
        """One step of h [s] with the motor current i [A] held (zero-order hold)."""
        st, p = self.state, self.params
        beta = self.BETA
        # Rigid-body terms at the half step q + h/2·q̇ (position Verlet): second order in h for the
        # conservative gravity forces, which keeps the energy of a free swing from drifting.
        q_config = p.robot.configuration_vector(st.q + 0.5 * h * st.dq)
        mass = pin.crba(self._model, self._data, q_config).copy()
        mass[self._lower] = mass.T[self._lower]  # CRBA fills the upper triangle only
        bias = pin.nonLinearEffects(self._model, self._data, q_config,
                                    st.dq + 0.5 * h * self.link_acceleration)  # q̇ at the half step
        phi = st.theta - st.q
        tau_j = self.stiffness.torque(phi) + p.joints.damping * (st.dtheta - st.dq)
        spring = self.stiffness.stiffness(phi)
        k_friction, c_friction = self._friction_slopes(tau_j, st.dtheta)
        motor = p.drives.drive_gain * current
        rotor_inertia = p.drives.rotor_inertia

        # Linearized torques at t + β·h: τ_β = τ0 + G·(Δw − Δv); f_β = f + βK_f·h·w + G_f·Δw.
        g = beta * (h * beta * spring + p.joints.damping)
        tau0 = tau_j + beta * h * spring * (st.dtheta - st.dq)
        g_f = beta**2 * h * k_friction + beta * c_friction
        rotor_rhs = motor - self.friction_torque - beta * h * k_friction * st.dtheta - tau0
        rotor_diag = rotor_inertia + h * g + h * g_f
        system = mass
        system[self._diagonal] += h * g - (h * g) ** 2 / rotor_diag
        rhs = h * (tau0 - bias) + h * g * h * rotor_rhs / rotor_diag
        _, dv, info = lapack.dposv(system, rhs)  # the system is symmetric positive definite
        if info != 0:
            dv = np.linalg.solve(system, rhs)
        dw = (h * rotor_rhs + h * g * dv) / rotor_diag

        st.q = st.q + h * (st.dq + beta * dv)
        st.theta = st.theta + h * (st.dtheta + beta * dw)
        st.dq = st.dq + dv
        st.dtheta = st.dtheta + dw
        self.link_acceleration, self.rotor_acceleration = dv / h, dw / h

        phi = st.theta - st.q
        self.joint_torque = self.stiffness.torque(phi) + p.joints.damping * (st.dtheta - st.dq)
        self.friction_torque = self.friction.step(st.theta, st.dtheta, self.joint_torque, st.temperature)
        self.current = np.asarray(current, dtype=float).copy()

        j = p.joints
        heat = j.winding_resistance * self.current**2 + np.abs(self.friction_torque * st.dtheta)
        st.sensed_temperature = st.sensed_temperature + h / j.sensor_lag * (st.temperature - st.sensed_temperature)
        st.temperature = st.temperature + h / j.thermal_capacity * (
            heat - (st.temperature - p.ambient_c) / j.thermal_resistance)

    def energy(self) -> float:
        """Mechanical energy [J]: link kinetic + potential (gravity), rotor kinetic, spring potential."""
        st = self.state
        config = self.params.robot.configuration_vector(st.q)
        kinetic = pin.computeKineticEnergy(self._model, self._data, config, st.dq)
        potential = pin.computePotentialEnergy(self._model, self._data, config)
        phi = st.theta - st.q
        spring = 0.5 * self.params.joints.alpha1 * phi**2 + 0.25 * self.params.joints.alpha3 * phi**4
        rotor = 0.5 * self.params.drives.rotor_inertia * st.dtheta**2
        return float(kinetic + potential + spring.sum() + rotor.sum())
