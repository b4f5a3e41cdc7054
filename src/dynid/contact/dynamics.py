"""The identified model as the momentum observer reads it: generalized momentum, its bias terms, friction and the
measured torque, each batch over samples.

The observer (:mod:`dynid.contact.observer`) needs, per sample, the generalized momentum and what drives it
(De Luca and Mattone 2003, eq. (8); Haddadin et al. 2017, eq. (27))::

    p = M(q)·q̇ + B·θ̇                      (link momentum plus the rotors', link units)
    ṗ = τ_m − f + Cᵀ(q, q̇)·q̇ − g(q) + τ_ext

with τ_m the measured torque as the identification read it (K_τ·i of the currents, or the effort of a motor-torque
or joint-torque reading), f the identified friction and B the rotor inertia the identification put beside its
rigid-body model (none for a joint torque measured after the gear). With motor encoders θ̇ is the rotor's velocity,
else q̇ (rigid joints). Cᵀ·q̇ − g = Ṁ·q̇ − n(q, q̇), n = C·q̇ + g, so no Coriolis matrix is needed: n is one inverse
dynamics (RNEA) at zero acceleration, M(q)·v one RNEA without gravity at zero velocity and acceleration v, and Ṁ·q̇ the
derivative of M(q)·q̇ along the motion, (M(q + h·q̇) − M(q − h·q̇))·q̇ / (2h), exact to O(h²) (h = 1e-4 s: 1e-8 of
the term at 3 rad/s); p is the mean of the same two products. Three batch RNEAs per sample in all (pinocchio's
``rneaInParallel``), none of them with an acceleration that was differentiated.

The rigid-body model is the result's (:class:`dynid.identify.result.torque.RigidBodyTorque`, the declared payload on
the last link): RNEA runs on standard parameters χ with K·χ = χ̂_b (the physical section's where the result has one),
and where such χ has a link of mass <= 0 (pinocchio cannot hold it) on χ + χ₀ less χ₀, χ₀ one heavy body per link
(linearity; the module docstring of :mod:`dynid.identify.result.torque`). A physical section's links hold no rotor: B
is then every joint's identified rotor inertia, also where the base parameters regrouped it with a link's (Ia_1 with
Izz_1), and the check against the result's torque adds that B·q̈ back. With coupled joints (the drives' coupling C, θ
= C·q) the measured torque, the rotors and the friction are the motors': τ_m reaches the joints as Cᵀ·τ_m, the rotors'
momentum is Cᵀ·B·θ̇ and the friction Cᵀ·f(θ̇) on each motor's share C⁻ᵀ·τ of the load (Siciliano et al. 2009, §8.2).
Friction is the result's law per joint as the feedforward's static friction term evaluates it
(:class:`dynid.control.friction_static.StaticFrictionTerm`: Coulomb, viscous, offset, load and temperature terms, the
Stribeck excess, the ``joint_friction`` section where there is one), on the friction velocity the identification used
(θ̇ with motor encoders, else q̇). A law's load is the output torque the gear carries, as the identification fits
it (τ_out, its rigid-body torque): here τ_m less the law's friction without its load terms
(:meth:`ObserverModel.friction_at`; in contact it carries τ_ext as the gear does).
"""

from __future__ import annotations

import numpy as np
import pinocchio as pin

from dynid.control.friction_static import DEFAULT_TEMPERATURE_C, StaticFrictionTerm
from dynid.control.rigid_body import consistent_standard_parameters
from dynid.errors import InputError
from dynid.identify import (
    IdentificationResult,
    RigidBodyTorque,
    compensated_rotor,
    joint_side_torque,
    offset_bodies,
    result_drives,
    rotor_inertia,
)
from dynid.model.inertial import Payload, to_pinocchio_inertia
from dynid.model.robot import RobotModel

#: [s] the step along the motion of the central difference that gives Ṁ·q̇ (module docstring).
MOMENTUM_STEP_S = 1e-4
#: Random states on which the RNEA form is checked against the result's regressor torque (:meth:`ObserverModel.check`).
CHECK_SAMPLES = 8
#: The check's tolerance in units of round-off ε·S (:meth:`ObserverModel.check`): own results stayed at or below 2.2.
CHECK_ULPS = 64.0
#: What the observer needs of a result's model section to read its measured torque.
TORQUE_SOURCES = ('current', 'motor_torque', 'joint_torque')


class ObserverModel:
    """The identified model of ``robot`` as the momentum observer needs it (module docstring).

    Args:
        result: the identification (base parameters with drives, or a physically consistent result).
        robot: the robot it identifies (same joints); its drive data beside the result's drive gains.
        payload: the payload declared at the flange [kg, m, kg·m²], or None.
        band: width [rad/s] of the ramp that replaces sgn(ω) in the friction law.
        temperature_c: temperature [°C] of the temperature term where a recording has none.

    Raises InputError naming what the result lacks (its model section, a torque source the observer cannot read)
    or a robot it does not belong to.

    >>> model = ObserverModel(IdentificationResult.load('result.yaml'), load_robot('ur5e'))  # doctest: +SKIP
    >>> p, bias = model.momentum_terms(q, dq)                                                   # doctest: +SKIP
    """

    def __init__(self, result: IdentificationResult, robot: RobotModel, payload: Payload | None = None,
                 band: float = 5e-3, temperature_c: float = DEFAULT_TEMPERATURE_C) -> None:
        model = result.model
        missing = [key for key in ('friction', 'torque_source') if key not in model]
        if missing:
            raise InputError(f'the result\'s model has no {", ".join(missing)}: the observer reads the measured torque '
                             'and the friction law from it (a result of dynid identify)')
        self.torque_source = model['torque_source']
        if self.torque_source not in TORQUE_SOURCES:
            raise InputError(f'the result\'s torque_source is {self.torque_source!r}; the observer reads '
                             f'{", ".join(TORQUE_SOURCES)}')
        self.robot, self.n, self.payload = robot, robot.n, payload
        self.drives = result_drives(result, robot)
        #: the drives' coupling C (θ = C·q) of a result identified with coupled joints, or None (module docstring)
        self.coupling = None if self.drives is None or self.torque_source == 'joint_torque' else self.drives.coupling
        if self.torque_source == 'current' and self.drives is None:
            raise InputError('the result reads motor currents but gives no drive gains, nor does the robot')
        torque = RigidBodyTorque(result, robot, payload)
        #: rotor inertia B [kg·m², link side] in the momentum: none after the gear (a joint torque sensor)
        self.rotor_inertia = np.zeros(self.n) if self.torque_source == 'joint_torque' else \
            _rotor_inertia(result, robot)
        #: friction on the rotor's velocity where the identification took it there (motor encoders)
        self.friction_on_rotor = model.get('friction_velocity') == 'rotor'
        self.friction = None if model['friction'] == 'none' else StaticFrictionTerm(
            robot, result, band, temperature_c, load='measured')
        # the B·q̈ the result's rigid-body torque holds of its own (a rotor inertia regrouped with a link's, Ia_1 with
        # Izz_1) that the RNEA models leave to the rotors: the physical section keeps every rotor apart from its link
        held = np.zeros(self.n) if self.torque_source == 'joint_torque' else \
            rotor_inertia(robot, result, regrouped_as_zero=True)
        #: the check's relative error and its tolerance (:meth:`check`)
        self._models, self.inverse_dynamics_error, self.inverse_dynamics_tolerance = self._rnea_models(
            result, robot, torque, payload, self.rotor_inertia - held, self.coupling)

    @staticmethod
    def _rnea_models(result, robot: RobotModel, torque: RigidBodyTorque, payload, rotors_apart: np.ndarray,
                     coupling: np.ndarray | None) -> tuple[list, float, float]:
        """([(sign, model with gravity, model without, their pools)], the check's relative error, its tolerance): one
        model where the standard parameters hold bodies pinocchio can take and reproduce the result's torque (with
        ``rotors_apart``·q̈ [kg·m²], the rotors the models leave out and the result's torque holds), else the
        χ + χ₀ less χ₀ pair."""
        physical = result.standard_parameters()
        standard = physical if physical is not None else consistent_standard_parameters(robot, torque)
        loaded = standard
        if payload is not None:
            loaded = standard.copy()
            loaded[-10:] += robot.payload_link_parameters(payload)
        pairs = [(1.0, loaded)]
        if np.any(loaded[0::10] <= 0):
            offset = offset_bodies(loaded)
            pairs = [(1.0, loaded + offset), (-1.0, offset)]
        models = []
        for sign, parameters in pairs:
            model = pin.Model(robot.pinocchio_model)
            for j in range(robot.n):
                model.inertias[j + 1] = to_pinocchio_inertia(parameters[10 * j:10 * j + 10])
            free = pin.Model(model)
            free.gravity = pin.Motion.Zero()
            models.append((sign, pin.ModelPool(model, 1), pin.ModelPool(free, 1)))
        magnitude = sum(np.abs(parameters) for _, parameters in pairs)
        error, tolerance = ObserverModel.check(models, robot, torque, standard, magnitude, rotors_apart, coupling)
        if error > tolerance:
            raise InputError(f'the result\'s rigid-body model is not reproduced by inverse dynamics (relative error '
                             f'{error:.1e}, round-off allows {tolerance:.1e}): identified for another robot model?')
        return models, error, tolerance

    @staticmethod
    def check(models, robot: RobotModel, torque: RigidBodyTorque, standard: np.ndarray, magnitude: np.ndarray,
              rotors_apart: np.ndarray, coupling: np.ndarray | None) -> tuple[float, float]:
        """(relative error, tolerance) of the RNEA ``models`` of standard parameters χ = ``standard`` (10·n, no
        payload) against the result's torque W_b·χ̂_b on :data:`CHECK_SAMPLES` random states.

        Y·χ = W_b·K·χ holds only as well as the base decomposition found K (its rank tolerance: on a URDF whose
        angles are rounded, rpy 1.571 for π/2, Y·χ − W_b·K·χ reached 2e-10 of the torque), so that residual,
        computed on the same states, is taken off; what is left is W_b·(K·χ − χ̂_b), which a result of another
        robot model holds (its K·χ is not its χ̂_b), plus round-off. Relative to 1 N·m + the largest torque, the
        tolerance is :data:`CHECK_ULPS`·ε·S, S the largest |Y|·(|χ_models| + |π + π₀| + |π₀|) [N·m], the size of the
        terms both sides sum (``magnitude``: Σ|χ| of the models, [kg, kg·m, kg·m²]). Own results on ten robot files
        left ≤ 2.2·ε·S; a consistent result read on its URDF with a link 1 % longer 1.2e-3 (docs/methods/contact.md).
        """
        q, dq, ddq = robot.random_states(CHECK_SAMPLES, seed=11)
        expected = torque(q, dq, ddq)
        got = _rnea(models, robot, q, dq, ddq, gravity=True) + _rotor_torque(rotors_apart, ddq, coupling)
        regressor = robot.regressor(q, dq, ddq)[:, :torque.arm_columns]
        rows = np.flatnonzero(torque.base.indices < torque.arm_columns)
        regrouped = torque.base.regrouping[rows][:, :torque.arm_columns] @ standard
        own = (regressor @ standard - regressor[:, torque.base.indices[rows]] @ regrouped).reshape(expected.shape)
        shifted = torque.standard_parameters + torque.offset_parameters
        size = np.abs(regressor) @ (magnitude + np.abs(shifted) + np.abs(torque.offset_parameters))
        scale = 1.0 + np.abs(expected).max()
        return (float(np.abs(got - expected - own).max() / scale),
                float(CHECK_ULPS * np.finfo(float).eps * size.max() / scale))

    # ------------------------------------------------------------------------------ terms
    def momentum_terms(self, q: np.ndarray, dq: np.ndarray, rotor_velocity: np.ndarray | None = None
                       ) -> tuple[np.ndarray, np.ndarray]:
        """(p, Cᵀ·q̇ − g) [N·m·s, N·m], each (N, n), at states (N, n) [rad, rad/s]; ``rotor_velocity`` θ̇ (N, n)
        [rad/s, link units] for the rotors' momentum B·θ̇ (None: B·q̇)."""
        h = MOMENTUM_STEP_S
        zeros = np.zeros_like(q)
        ahead = _rnea(self._models, self.robot, q + h * dq, zeros, dq, gravity=False)
        behind = _rnea(self._models, self.robot, q - h * dq, zeros, dq, gravity=False)
        bias = (ahead - behind) / (2.0 * h) - _rnea(self._models, self.robot, q, dq, zeros, gravity=True)
        if rotor_velocity is None:
            rotors = _rotor_torque(self.rotor_inertia, dq, self.coupling)
        else:  # the motors' own velocities θ̇ (per motor with a coupling): Cᵀ·B·θ̇
            rotors = self.rotor_inertia * rotor_velocity
            rotors = rotors if self.coupling is None else rotors @ self.coupling
        momentum = 0.5 * (ahead + behind) + rotors
        return momentum, bias

    def gravity(self, q: np.ndarray) -> np.ndarray:
        """g(q) [N·m] (N, n) of the identified model."""
        zeros = np.zeros_like(q)
        return _rnea(self._models, self.robot, q, zeros, zeros, gravity=True)

    def measured_torque(self, current: np.ndarray | None, tau: np.ndarray | None, what: str = 'the recording'
                        ) -> np.ndarray:
        """τ_m [N·m] (N, n) as the result reads it: K_τ·i of the currents, or the effort (module docstring).
        InputError naming what ``what`` lacks."""
        if self.torque_source == 'current':
            if current is None:
                raise InputError(f'{what} holds no motor currents; the result reads the torque as K_τ·i of the '
                                 'currents (joint_currents, or joint_states effort with joint_states_effort current)')
            torque = self.drives.current_to_joint_torque(current)
        elif tau is None:
            raise InputError(f'{what} holds no {self.torque_source.replace("_", " ")} (joint_states effort), which '
                             'the result reads')
        else:
            torque = tau
        return torque if self.coupling is None else self.drives.motor_to_joint_torque_space(torque)

    def joint_velocity(self, rotor_velocity: np.ndarray) -> np.ndarray:
        """The joints' velocities [rad/s] of motor velocities θ̇ [rad/s, link units] (C⁻¹·θ̇ with a coupling)."""
        return rotor_velocity if self.coupling is None else self.drives.motors_to_joints(rotor_velocity)

    def friction_torque(self, velocity: np.ndarray, load: np.ndarray, temperature) -> np.ndarray:
        """f [N·m] (N, n) of the result's law at friction velocity ω [rad/s], load τ [N·m], T [°C] (None: the
        fallback)."""
        if self.friction is None:
            return np.zeros_like(velocity)
        limit = (-self.robot.effort_limits, self.robot.effort_limits)
        temperature = self.friction.temperature_c if temperature is None else temperature
        if self.coupling is None:
            load = np.minimum(np.maximum(load, limit[0]), limit[1])
            return self.friction.friction_torque(velocity, load, temperature)
        # coupled joints: each motor's friction on θ̇ = C·q̇ and its share C⁻ᵀ·τ of the load, reaching the joints as
        # Cᵀ·f, and a joint's own friction on q̇ (as the feedforward's static friction term)
        load = np.minimum(np.maximum(self.drives.joint_to_motor_torque_space(load), limit[0]), limit[1])
        motors = self.friction.friction_torque(self.drives.joints_to_motors(velocity), load, temperature)
        torque = self.drives.motor_to_joint_torque_space(motors)
        if self.friction.joint_side:
            torque = torque + joint_side_torque(self.friction.parameters, velocity, self.friction.direction(velocity))
        return torque

    def friction_at(self, velocity: np.ndarray, measured: np.ndarray, temperature) -> np.ndarray:
        """f [N·m] (N, n) of the result's law at friction velocity ω [rad/s] and measured torque τ_m [N·m], its load
        the gear's output τ_m − f (module docstring), taken as τ_m less f at zero load; T [°C]. The load terms' own
        share stays in that load: Fl·s·τ² evaluated at τ + Fl·s·τ², off by (2x + x²)·Fl·τ², x = Fl·|τ| (identify
        keeps x ≤ 1 at the recording's largest output torque; on the measured torque, as before, it was off by
        2·Fl·τ·f)."""
        if self.friction is None or not self.friction.needs_joint_torque:
            return self.friction_torque(velocity, measured, temperature)
        unloaded = self.friction_torque(velocity, np.zeros_like(measured), temperature)
        return self.friction_torque(velocity, measured - unloaded, temperature)

    @property
    def coulomb_level(self) -> np.ndarray:
        """F_C + the Stribeck excess per joint [N·m] (0 where the law has none): the friction that turns over at a
        reversal and that static friction may hold at rest."""
        if self.friction is None:
            return np.zeros(self.n)
        f = self.friction
        return np.abs(f.friction_torque(np.full(self.n, 10 * f.band), np.zeros(self.n), f.temperature_c)
                      - f.friction_torque(np.full(self.n, -10 * f.band), np.zeros(self.n), f.temperature_c)) / 2.0


def _rotor_inertia(result: IdentificationResult, robot: RobotModel) -> np.ndarray:
    """B per joint [kg·m², link side] beside the RNEA models: where the result has a physical section its links hold
    no rotor, so each joint's identified rotor inertia (the physical section's, with the drive data's B where rotor
    compensation subtracted it first), else the drive data's; without one, the B the result's base parameters do not
    hold already (:func:`dynid.identify.result.torque.rotor_inertia`)."""
    identified = (result.physical_section or {}).get('rotor_inertia')
    if not identified:
        return rotor_inertia(robot, result, regrouped_as_zero=True)
    return np.array([float(identified[name]) for name in robot.joint_names]) + compensated_rotor(result, robot)


def _rotor_torque(inertia: np.ndarray, motion: np.ndarray, coupling: np.ndarray | None) -> np.ndarray:
    """B·v [N·m or N·m·s] (N, n) of joint accelerations or velocities v, Cᵀ·B·C·v with coupled joints (each motor's
    rotor turns with C·v)."""
    return inertia * motion if coupling is None else ((motion @ coupling.T) * inertia) @ coupling


def _rnea(models, robot: RobotModel, q: np.ndarray, dq: np.ndarray, ddq: np.ndarray, gravity: bool) -> np.ndarray:
    """Σ sign·RNEA(q, q̇, q̈) (N, n) over ``models`` (:meth:`ObserverModel._rnea_models`), batch in pinocchio."""
    config = np.asfortranarray(robot.configuration(q).T)
    velocity, acceleration = np.asfortranarray(dq.T), np.asfortranarray(ddq.T)
    total = None
    for sign, pool, free in models:
        tau = np.empty((robot.n, q.shape[0]), order='F')
        pin.rneaInParallel(1, pool if gravity else free, config, velocity, acceleration, tau)
        total = sign * tau if total is None else total + sign * tau
    return total.T
