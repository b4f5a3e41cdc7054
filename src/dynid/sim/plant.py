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
motor current and the friction value at the start of the step. This leaves one linear solve per
step (link and rotor velocity changes, symmetric positive definite), stable for any stiffness and
second order for the conservative part: a free swing of the UR5e without friction or damping keeps
its energy within 1e-4 (relative) over 3 s at h = 1 ms.

**Coupled joints** (a drives' coupling C, :mod:`dynid.model.drives`): the plant's coordinates are the motors'
(link units), p = C·q: the elastic element sits in each motor's gear (φ = θ − p), the rotor, its friction and
current are per motor, and the links enter as M_p = C⁻ᵀ·M(q)·C⁻¹ and c_p + g_p = C⁻ᵀ·(c·q̇ + g), q = C⁻¹·p (the
same Lagrangian in other coordinates). ``state.q``, ``state.dq`` and ``link_acceleration`` then hold p, ṗ, p̈;
:class:`dynid.sim.twin.DigitalTwin` converts at its edges.

**Speed.** pinocchio computes M and C·q̇ + g (CRBA and the non-linear effects, ~2 µs for 6 joints);
the rest of the step is compiled (:mod:`dynid.sim.integrator`, numba), since as numpy operations on
(n,) arrays it cost ~100 µs in call overhead. The values the next step needs of the new state
(joint torque, stiffness, friction slopes, the half step) are kept from the step that computed them.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import pinocchio as pin

from dynid.errors import InputError
from dynid.friction.egms import EGMS
from dynid.friction.joint_friction import JointFriction
from dynid.friction.static import StribeckMap
from dynid.friction.stiffness import OddPolynomialStiffness
from dynid.friction.temperature import ReferenceTemperatureFriction
from dynid.model.inertial import to_pinocchio_inertia
from dynid.sim import integrator
from dynid.sim.integrator import (
    BACKLASH,
    COMMAND,
    CURRENT,
    DQ,
    DQ_HALF,
    DTHETA,
    EGMS_INPUT,
    FRICTION,
    FRICTION_TEMPERATURE,
    JOINT_TORQUE,
    LINK_ACCELERATION,
    Q_HALF,
    ROTOR_ACCELERATION,
    SENSED_TEMPERATURE,
    TEMPERATURE,
    THETA,
    Q,
)
from dynid.sim.parameters import JointParameters, PlantParameters

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

    After each step, ``joint_torque``, ``friction_torque``, ``current``, ``rotor_acceleration`` and
    ``link_acceleration`` hold the values at the new state (true, noiseless). A step makes new state
    and output arrays and never writes into earlier ones, so a caller may keep references to them.
    The drive parameters are read when the plant is made; the payload (:meth:`set_payload`) and the
    joints' stiffness, friction and thermal parameters (:meth:`set_joint_parameters`) may change at
    run time.

    The step itself is compiled (:mod:`dynid.sim.integrator`) and works on a packed copy of the state
    (:meth:`load`, :meth:`store`), so that a caller that takes many steps (the twin) packs once.
    """

    BETA = integrator.BETA

    def __init__(self, params: PlantParameters) -> None:
        self.params = params
        self.n = params.robot.n
        coupling = params.drives.coupling
        #: C⁻¹ of a coupled plant (module docstring), or None
        self.inverse_coupling = None if coupling is None else np.linalg.inv(coupling)
        self._work = np.zeros((len(integrator.WORK_ROWS), self.n))
        self._stored: tuple | None = None  # the state arrays store() made (the work's start terms are theirs)
        self._set_joints()
        self._set_model(params.payload)
        self.state: PlantState | None = None
        self.current = np.zeros(self.n)
        self.joint_torque = np.zeros(self.n)
        self.friction_torque = np.zeros(self.n)
        self.rotor_acceleration = np.zeros(self.n)
        self.link_acceleration = np.zeros(self.n)
        self._friction_temperature = None  # T [°C] of the last friction evaluation (set_joint_parameters)

    # -------------------------------------------------------------------------------- set-up
    def _set_joints(self, egms: EGMS | None = None) -> None:
        """Stiffness, friction and the step's coefficient array from ``params.joints``; ``egms``: keep
        these E-GMS operators (their deformations) instead of new ones."""
        j = self.params.joints
        self.stiffness = OddPolynomialStiffness(np.column_stack([j.alpha1, j.alpha3]))
        self.friction = build_friction(self.params)
        if egms is not None:
            self.friction.egms = egms
        self._pack_coefficients()

    def _set_model(self, payload) -> None:
        model = pin.Model(self.params.robot.pinocchio_model)
        if payload is not None:
            last = model.njoints - 1
            model.inertias[last] = model.inertias[last] + self.params.robot.flange_placement.act(
                to_pinocchio_inertia(payload.parameters()))
        self._model, self._data = model, model.createData()
        self.pinocchio = (self._model, self._data)  # the true model (with payload) and its data

    def _pack_coefficients(self) -> None:
        """The arrays the compiled step reads (:data:`dynid.sim.integrator.COEFFICIENT_ROWS`): parameters
        per joint, stiffness coefficients (n, P), E-GMS element laws (2, n, M) and backlash table (n, G)
        (a stand-in of one element without E-GMS)."""
        p, j, f, n = self.params, self.params.joints, self.friction, self.n
        s, t, egms = f.stribeck, f.temperature, f.egms
        rows = dict.fromkeys(integrator.COEFFICIENT_ROWS, 0.0)
        rows.update(damping=j.damping, drive_gain=p.drives.drive_gain, rotor_inertia=p.drives.rotor_inertia,
                    winding_resistance=j.winding_resistance, thermal_capacity=j.thermal_capacity,
                    thermal_resistance=j.thermal_resistance, ambient=p.ambient_c, sensor_lag=j.sensor_lag,
                    coulomb=s.Fc, static_excess=s.Fs - s.Fc, stribeck_velocity=s.Vs, stribeck_shape=s.mu,
                    viscous1=s.Fv1, viscous2=s.Fv2, viscous3=s.Fv3, load_coefficient=f.load_coefficient,
                    excess_height=np.maximum(s.Fs - s.Fc, 0.0) / STRIBECK_SMOOTHING, smoothing=STRIBECK_SMOOTHING,
                    has_egms=float(egms is not None), squared_load=float(f.load_law == 'squared'))
        if t is not None:
            if not isinstance(t, ReferenceTemperatureFriction):
                raise InputError(f'the plant takes the reference temperature friction, got {type(t).__name__}')
            rows.update(temperature_linear=t.Ft1, temperature_cubic=t.Ft2, temperature_min=t.t_min,
                        temperature_max=t.t_max, has_temperature=1.0,
                        temperature_offset=-(np.asarray(t.Ft1) * t.t0 + np.asarray(t.Ft2) * t.t0**-3))
        self._coefficients = np.array([np.broadcast_to(np.asarray(v, dtype=float), (n,)) for v in rows.values()])
        self._alpha = np.ascontiguousarray(self.stiffness.alpha, dtype=float)
        if egms is None:
            self._egms_laws, self._backlash_table = np.zeros((2, n, 1)), np.ones((n, 1))
        else:
            self._egms_laws, self._backlash_table = np.array([egms.k, egms.delta]), egms.backlash_table
        self.needs_configuration = p.robot.pinocchio_model.nq != n  # continuous joints: cos/sin pairs

    def set_payload(self, payload) -> None:
        """Change the payload (at run time too: the state is kept)."""
        self.params = self.params.with_payload(payload)
        self._set_model(payload)

    #: Joint parameters that shape the E-GMS operators, whose deformations a change keeps.
    EGMS_FIELDS = ('friction_model', 'egms_elements', 'egms_r_delta', 'egms_r_k', 'backlash', 'backlash_variation')

    def set_joint_parameters(self, joints: JointParameters) -> None:
        """Change the joints' stiffness, friction and thermal parameters now (at run time too).

        The state (q, θ, their velocities, temperatures) and the E-GMS deformations are kept, so that a
        stiffness drop starts the physical transient (the deflection grows until the softer joint
        carries the torque again). The joint torque τ_j, the friction and its slopes at the current
        state are recomputed with the new parameters: ``joint_torque`` and ``friction_torque`` are
        the values just after the change, and the next step starts from them. The fields of
        :attr:`EGMS_FIELDS` cannot change (InputError).
        """
        joints = joints.validated(self.n)
        old = self.params.joints
        moved = [name for name in self.EGMS_FIELDS if not np.array_equal(getattr(joints, name), getattr(old, name))]
        if moved:
            raise InputError(f'the E-GMS structure of a running plant cannot change ({", ".join(moved)})')
        self.params = replace(self.params, joints=joints)
        self._set_joints(self.friction.egms)
        if self.state is None:
            return
        work, egms_state = self.load()
        # The E-GMS operators see the same input θ again: their deformations and output do not move.
        integrator.joint_terms(self._coefficients, self._alpha, egms_state, self._egms_laws, self._backlash_table,
                               work, True)
        self.store(work, egms_state)

    def gravity_torque(self, q: np.ndarray) -> np.ndarray:
        """g(q) [N·m] of the true model (with payload), in the plant's coordinates (p and C⁻ᵀ·g of a coupled
        plant: module docstring)."""
        inverse = self.inverse_coupling
        link = q if inverse is None else inverse @ q
        g = pin.computeGeneralizedGravity(self._model, self._data, self.params.robot.configuration_vector(link))
        return g if inverse is None else inverse.T @ g

    def reset(self, q: np.ndarray, temperature: np.ndarray | float | None = None) -> None:
        """At rest at position q [rad] (the plant's coordinates: p = C·q of a coupled plant), joints deflected to
        hold gravity, friction history cleared."""
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
        self._friction_temperature = self.state.temperature
        self.rotor_acceleration = np.zeros(self.n)
        self.link_acceleration = np.zeros(self.n)
        self._stored = None

    # ----------------------------------------------------------------------------- dynamics
    def load(self, h: float | None = None) -> tuple[np.ndarray, np.ndarray]:
        """The work array (:data:`dynid.sim.integrator.WORK_ROWS`) and the E-GMS deformations (n, M) from
        the attributes; the start terms of the step (τ_j, k(φ), φ̇, friction slopes) are computed anew
        where the state arrays are not the ones :meth:`store` made (set from outside, or after reset).
        Steps of :func:`dynid.sim.integrator.plant_step` of h [s] advance them; :meth:`store` hands them
        back."""
        st, work, egms = self.state, self._work, self.friction.egms
        work[Q], work[DQ], work[THETA], work[DTHETA] = st.q, st.dq, st.theta, st.dtheta
        work[TEMPERATURE], work[SENSED_TEMPERATURE] = st.temperature, st.sensed_temperature
        work[FRICTION], work[FRICTION_TEMPERATURE] = self.friction_torque, self._friction_temperature
        work[LINK_ACCELERATION], work[ROTOR_ACCELERATION] = self.link_acceleration, self.rotor_acceleration
        if egms is None:
            egms_state = np.zeros((self.n, 1))
        else:
            egms_state = np.array(egms.state, dtype=float)
            work[EGMS_INPUT] = st.theta if egms.theta is None else egms.theta
            work[BACKLASH] = egms.backlash(st.theta) if egms.last_backlash is None else egms.last_backlash
        stored = self._stored
        if stored is None or stored[0] is not st.q or stored[1] is not st.dq or stored[2] is not st.theta \
                or stored[3] is not st.dtheta:
            integrator.joint_terms(self._coefficients, self._alpha, egms_state, self._egms_laws,
                                   self._backlash_table, work, False)
        if h is not None:  # the rigid-body terms of the first step at q + h/2·q̇, q̇ + h/2·q̈ (plant_step)
            work[Q_HALF], work[DQ_HALF] = st.q + 0.5 * h * st.dq, st.dq + 0.5 * h * self.link_acceleration
        return work, egms_state

    def store(self, work: np.ndarray, egms_state: np.ndarray) -> None:
        """The attributes from a work array and E-GMS deformations (new arrays; :meth:`load`)."""
        rows = work.copy()
        self.state = PlantState(rows[Q], rows[DQ], rows[THETA], rows[DTHETA], rows[TEMPERATURE],
                                rows[SENSED_TEMPERATURE])
        self.joint_torque, self.friction_torque, self.current = rows[JOINT_TORQUE], rows[FRICTION], rows[CURRENT]
        self.link_acceleration, self.rotor_acceleration = rows[LINK_ACCELERATION], rows[ROTOR_ACCELERATION]
        self._friction_temperature = rows[FRICTION_TEMPERATURE]
        egms = self.friction.egms
        if egms is not None:
            egms.state, egms.theta, egms.last_backlash = egms_state.copy(), rows[EGMS_INPUT], rows[BACKLASH]
        self._stored = (self.state.q, self.state.dq, self.state.theta, self.state.dtheta)

    def rigid_body_terms(self, work: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """M and c·q̇ + g [N·m] of the true model at the work's half step (pinocchio; M's upper triangle), in the
        plant's coordinates (module docstring)."""
        q_half, dq_half, inverse = work[Q_HALF], work[DQ_HALF], self.inverse_coupling
        if inverse is not None:
            q_half, dq_half = inverse @ q_half, inverse @ dq_half
        if self.needs_configuration:
            q_half = self.params.robot.configuration_vector(q_half)
        mass, bias = pin.crba(self._model, self._data, q_half), pin.nonLinearEffects(self._model, self._data, q_half,
                                                                                     dq_half)
        if inverse is None:
            return mass, bias
        mass = np.triu(mass) + np.triu(mass, 1).T
        return inverse.T @ mass @ inverse, inverse.T @ bias

    def step_arrays(self, egms_state: np.ndarray) -> tuple:
        """The arguments of :func:`dynid.sim.integrator.plant_step` after M and c: coefficients, stiffness,
        E-GMS deformations (from :meth:`load`), element laws and backlash table."""
        return self._coefficients, self._alpha, egms_state, self._egms_laws, self._backlash_table

    def advance(self, current: np.ndarray, h: float) -> None:
        """One step of h [s] with the motor current i [A] held (zero-order hold)."""
        work, egms_state = self.load(h)
        work[COMMAND] = current
        integrator.plant_step(*self.rigid_body_terms(work), *self.step_arrays(egms_state), work, float(h))
        self.store(work, egms_state)

    def energy(self) -> float:
        """Mechanical energy [J]: link kinetic + potential (gravity), rotor kinetic, spring potential."""
        st, inverse = self.state, self.inverse_coupling
        q, dq = (st.q, st.dq) if inverse is None else (inverse @ st.q, inverse @ st.dq)
        config = self.params.robot.configuration_vector(q)
        kinetic = pin.computeKineticEnergy(self._model, self._data, config, dq)
        potential = pin.computePotentialEnergy(self._model, self._data, config)
        phi = st.theta - st.q
        spring = 0.5 * self.params.joints.alpha1 * phi**2 + 0.25 * self.params.joints.alpha3 * phi**4
        rotor = 0.5 * self.params.drives.rotor_inertia * st.dtheta**2
        return float(kinetic + potential + spring.sum() + rotor.sum())
