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

**Speed.** A step works on (n,) arrays, where numpy's cost is the number of operations, not their
size: parameters are held as arrays, terms shared by the friction and its slopes are computed once,
the values the next step needs of the new state (joint torque, stiffness, friction slopes) are
kept from the step that computed them, and LAPACK solves the 2n×2n system of link and rotor
together rather than eliminating the rotor equation operation by operation.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import pinocchio as pin
from scipy.linalg import lapack

from dynid.errors import InputError
from dynid.friction.egms import EGMS
from dynid.friction.joint_friction import JointFriction
from dynid.friction.static import StribeckMap
from dynid.friction.stiffness import OddPolynomialStiffness
from dynid.friction.temperature import ReferenceTemperatureFriction
from dynid.model.inertial import to_pinocchio_inertia
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
    """

    BETA = 0.5

    def __init__(self, params: PlantParameters) -> None:
        self.params = params
        self.n = params.robot.n
        self._set_joints()
        self._set_model(params.payload)
        self.state: PlantState | None = None
        self.current = np.zeros(self.n)
        self.joint_torque = np.zeros(self.n)
        self.friction_torque = np.zeros(self.n)
        self.rotor_acceleration = np.zeros(self.n)
        self.link_acceleration = np.zeros(self.n)
        self._start: tuple | None = None  # see _start_terms
        self._friction_temperature = None  # T [°C] of the last friction evaluation (set_joint_parameters)

    # -------------------------------------------------------------------------------- set-up
    def _set_joints(self, egms: EGMS | None = None) -> None:
        """Stiffness, friction and the step's parameter arrays from ``params.joints``; ``egms``: keep
        these E-GMS operators (their deformations) instead of new ones."""
        j = self.params.joints
        self.stiffness = OddPolynomialStiffness(np.column_stack([j.alpha1, j.alpha3]))
        self.friction = build_friction(self.params)
        if egms is not None:
            self.friction.egms = egms
        stribeck = self.friction.stribeck
        self._excess_height = np.maximum(stribeck.Fs - stribeck.Fc, 0.0) / STRIBECK_SMOOTHING
        self._prepare_step()

    def _set_model(self, payload) -> None:
        model = pin.Model(self.params.robot.pinocchio_model)
        if payload is not None:
            last = model.njoints - 1
            model.inertias[last] = model.inertias[last] + self.params.robot.flange_placement.act(
                to_pinocchio_inertia(payload.parameters()))
        self._model, self._data = model, model.createData()

    def _prepare_step(self) -> None:
        """Parameters of the step as (n,) arrays, read once (numpy combines two arrays faster than an
        array and a Python scalar), and the buffers of its linear system."""
        p, j, f, n = self.params, self.params.joints, self.friction, self.n

        def full(value) -> np.ndarray:
            return np.array(np.broadcast_to(np.asarray(value, dtype=float), (n,)))

        self._configuration = p.robot.pinocchio_model.nq != n  # continuous joints: cos/sin pairs
        # The step's linear system in (Δv, Δw), 2n × 2n; only its upper triangle is set (and read):
        # the link block, the diagonal of the rotor block and of the coupling block, zeros elsewhere.
        self._system = np.zeros((2 * n, 2 * n))
        diagonal = self._system.ravel()[::2 * n + 1]
        self._link_diagonal, self._rotor_diagonal = diagonal[:n], diagonal[n:]
        self._coupling_diagonal = self._system.ravel()[n:2 * n * n:2 * n + 1]
        self._rhs = np.empty(2 * n)
        self._link_rhs, self._rotor_rhs = self._rhs[:n], self._rhs[n:]
        self._damping, self._drive_gain = full(j.damping), full(p.drives.drive_gain)
        self._rotor_inertia, self._winding_resistance = full(p.drives.rotor_inertia), full(j.winding_resistance)
        self._thermal_resistance, self._ambient_c = full(j.thermal_resistance), full(p.ambient_c)
        self._zeros, self._ones = np.zeros(n), np.ones(n)
        self._per_step: tuple | None = None  # see _step_constants
        s = f.stribeck
        self._smoothing = full(STRIBECK_SMOOTHING)
        self._fc, self._fs_minus_fc = full(s.Fc), full(s.Fs - s.Fc)
        self._vs, self._mu = full(s.Vs), full(s.mu)
        self._fv1, self._fv2, self._fv3 = full(s.Fv1), full(s.Fv2), full(s.Fv3)
        self._two_fv2, self._three_fv3 = full(2 * s.Fv2), full(3 * s.Fv3)
        self._load_coefficient = full(f.load_coefficient)
        self._squared_load = f.load_law == 'squared'
        self._excess_height = full(self._excess_height)
        t = f.temperature
        self._temperature_form = None
        if isinstance(t, ReferenceTemperatureFriction):
            offset = -(full(t.Ft1) * t.t0 + full(t.Ft2) * t.t0**-3)  # −Ft1·T0 − Ft2·T0⁻³
            self._temperature_form = (full(t.Ft1), full(t.Ft2), offset, full(t.t_min), full(t.t_max), full(-3.0))

    def _step_constants(self, h: float) -> tuple:
        """Arrays of the step h [s]: h, h/2, β·h, h·β·D (n,); h, β (2n,); h/τ_s and the heat equation's
        explicit step T ← a·T + h/C_th·heat + b as (a, h/C_th, b) (n,)."""
        if self._per_step is None or self._per_step[0] != h:
            j, n, beta = self.params.joints, self.n, self.BETA
            heating = h / j.thermal_capacity
            loss = heating / self._thermal_resistance
            thermal = (1.0 - loss, heating, loss * self._ambient_c)
            self._per_step = (h, np.full(n, h), np.full(n, 0.5 * h), np.full(n, beta * h),
                              h * beta * self._damping, np.full(2 * n, h), np.full(2 * n, beta),
                              h / j.sensor_lag, thermal)
        return self._per_step

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
        st = self.state
        spring_torque, spring = self.stiffness.torque_and_stiffness(st.theta - st.q)
        deflection_rate = st.dtheta - st.dq
        tau_j = spring_torque + self._damping * deflection_rate
        # The E-GMS operators see the same input θ again: their deformations and output do not move.
        friction, k_friction, c_friction = self._friction_step(st.theta, st.dtheta, tau_j,
                                                               self._friction_temperature)
        self.joint_torque, self.friction_torque = tau_j, friction
        self._start = (st.q, st.dq, st.theta, st.dtheta, np.concatenate([st.q, st.theta]),
                       np.concatenate([st.dq, st.dtheta]), tau_j, spring, deflection_rate, k_friction, c_friction)

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
        self._friction_temperature = self.state.temperature
        self.rotor_acceleration = np.zeros(self.n)
        self.link_acceleration = np.zeros(self.n)
        self._start = None

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

    def _friction_step(self, theta: np.ndarray, velocity: np.ndarray, joint_torque: np.ndarray,
                       temperature: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``friction.step`` followed by :meth:`_friction_slopes`, sharing their terms.

        Returns (f, ∂f/∂θ, ∂f/∂θ̇) at the new state: the values of the two methods to rounding (the
        polynomials are rearranged to take fewer operations; tanh(ω/ε), |ω|, the Stribeck decay and
        F(τ_j) are computed once). Written for the friction of :func:`build_friction` (both
        smoothings are STRIBECK_SMOOTHING).
        """
        friction, egms = self.friction, self.friction.egms
        w = np.abs(velocity)
        direction = np.tanh(velocity / self._smoothing)
        decay = np.exp(-((w / self._vs) ** self._mu))
        if self._squared_load:
            level = self._fc + self._load_coefficient * joint_torque**2
        else:
            level = friction.coulomb_level(joint_torque)
        remainder = direction * self._fs_minus_fc * decay + velocity * (self._fv1 + w * (self._fv2 + w * self._fv3))
        if self._temperature_form is not None:  # sgn(ω)·√|ω|·(Ft1·(T − T0) + Ft2·(T⁻³ − T0⁻³)), T clamped
            ft1, ft2, offset, t_min, t_max, minus_three = self._temperature_form
            t = np.minimum(np.maximum(temperature, t_min), t_max)
            remainder = remainder + np.copysign(np.sqrt(w), velocity) * (ft1 * t + ft2 * t**minus_three + offset)
        elif friction.temperature is not None:
            remainder = remainder + friction.temperature.evaluate(velocity, temperature)
        sech2 = self._ones - direction**2
        k_velocity = self._fv1 + w * (self._two_fv2 + self._three_fv3 * w) + self._excess_height * decay * sech2
        if egms is None:  # smoothed static Coulomb: its slope is a velocity slope
            return level * direction + remainder, self._zeros, k_velocity + level * sech2 / self._smoothing
        hysteresis, slope = egms.step_with_slope(theta)
        return level * hysteresis + remainder, level * slope, np.maximum(k_velocity, self._zeros)

    def _start_terms(self) -> tuple:
        """What a step needs of the state it starts from.

        (q, q̇, θ, θ̇ as held by ``state``; positions [q, θ] and velocities [q̇, θ̇] (2n,); τ_j, k(φ),
        φ̇, ∂f/∂θ, ∂f/∂θ̇). :meth:`advance` leaves them for the next step from values it has already
        computed; they are computed here after :meth:`reset` or when arrays of ``state`` were replaced
        from outside.
        """
        start, st = self._start, self.state
        if start is not None and start[0] is st.q and start[1] is st.dq and start[2] is st.theta \
                and start[3] is st.dtheta:
            return start
        spring_torque, spring = self.stiffness.torque_and_stiffness(st.theta - st.q)
        deflection_rate = st.dtheta - st.dq
        tau_j = spring_torque + self._damping * deflection_rate
        k_friction, c_friction = self._friction_slopes(tau_j, st.dtheta)
        self._start = (st.q, st.dq, st.theta, st.dtheta, np.concatenate([st.q, st.theta]),
                       np.concatenate([st.dq, st.dtheta]), tau_j, spring, deflection_rate, k_friction, c_friction)
        return self._start

    def advance(self, current: np.ndarray, h: float) -> None:
        """One step of h [s] with the motor current i [A] held (zero-order hold)."""
        st = self.state
        _, dq, _, dtheta, position, velocity, tau_j, spring, deflection_rate, k_friction, c_friction = \
            self._start_terms()
        _, h_n, half_h, beta_h, h_beta_damping, h_2n, beta_2n, h_lag, thermal = self._step_constants(h)
        # Rigid-body terms at the half step q + h/2·q̇ (position Verlet): second order in h for the
        # conservative gravity forces, which keeps the energy of a free swing from drifting.
        q_config = st.q + half_h * dq
        if self._configuration:
            q_config = self.params.robot.configuration_vector(q_config)
        mass = pin.crba(self._model, self._data, q_config)  # a new array (upper triangle set at least)
        bias = pin.nonLinearEffects(self._model, self._data, q_config,
                                    dq + half_h * self.link_acceleration)  # q̇ at the half step
        if type(current) is not np.ndarray or current.dtype != np.float64:
            current = np.array(current, dtype=float)  # the plant keeps it (as ``current``) and never changes it

        # Linearized torques at t + β·h: τ_β = τ0 + G·(Δw − Δv) with G = β·(hβ·k + D), and
        # f_β = f + βh·K_f·(θ̇ + Δw) + β·C_f·Δw. The link and rotor equations over the step,
        #   (M + h·G)·Δv − h·G·Δw = h·(τ0 − c)
        #   −h·G·Δv + d·Δw = h·r,   d = B + h·G + h·G_f,  G_f = β²h·K_f + β·C_f,
        # with r = K_τ·i − f − βh·K_f·θ̇ − τ0, are one symmetric positive definite system. LAPACK
        # eliminates Δw inside the solve, which costs less than doing so here with numpy operations.
        n = self.n
        spring_h = beta_h * spring                                   # βh·k
        tau0 = tau_j + spring_h * deflection_rate
        hg = beta_h * spring_h + h_beta_damping                      # h·G = hβ·(βh·k) + hβ·D
        friction_h = beta_h * k_friction                             # βh·K_f
        system = self._system
        system[:n, :n] = mass
        self._link_diagonal += hg
        self._rotor_diagonal[:] = self._rotor_inertia + hg + beta_h * (friction_h + c_friction)
        np.negative(hg, out=self._coupling_diagonal)
        np.multiply(h_n, tau0 - bias, out=self._link_rhs)
        np.multiply(h_n, self._drive_gain * current - self.friction_torque - friction_h * dtheta - tau0,
                    out=self._rotor_rhs)
        _, change, info = lapack.dposv(system, self._rhs)  # [Δv, Δw]; reads the upper triangle
        if info != 0:
            change = np.linalg.solve(np.triu(system) + np.triu(system, 1).T, self._rhs)

        position = position + h_2n * (velocity + beta_2n * change)
        velocity = velocity + change
        acceleration = change / h_2n
        q, theta, dq, dtheta = position[:n], position[n:], velocity[:n], velocity[n:]
        self.link_acceleration, self.rotor_acceleration = acceleration[:n], acceleration[n:]

        spring_torque, spring = self.stiffness.torque_and_stiffness(theta - q)
        deflection_rate = dtheta - dq
        tau_j = spring_torque + self._damping * deflection_rate
        temperature = st.temperature
        friction, k_friction, c_friction = self._friction_step(theta, dtheta, tau_j, temperature)
        self.joint_torque, self.friction_torque, self.current = tau_j, friction, current
        self._friction_temperature = temperature

        # C_th·Ṫ = R·i² + |f·θ̇| − (T − T_amb)/R_th, explicit: T + h/C_th·(…) = a·T + h/C_th·(R·i² + |f·θ̇|) + b.
        cooling, heating, ambient = thermal
        heat = self._winding_resistance * current**2 + np.abs(friction * dtheta)
        st.sensed_temperature = st.sensed_temperature + h_lag * (temperature - st.sensed_temperature)
        st.temperature = cooling * temperature + heating * heat + ambient
        st.q, st.dq, st.theta, st.dtheta = q, dq, theta, dtheta
        self._start = (q, dq, theta, dtheta, position, velocity, tau_j, spring, deflection_rate, k_friction,
                       c_friction)

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
