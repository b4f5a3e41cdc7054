"""friction_static: the identified linear friction model, smoothed through zero velocity.

The friction of the identification result (:mod:`dynid.identify.equations.problem`), evaluated on the desired
velocity ω = q̇_d [rad/s] (a rigid joint's rotor velocity in link units) and, for the load-dependent
laws, the load torque τ = τ_J,d [N·m] (:class:`~dynid.control.context.FeedforwardContext`): the result's law as
:mod:`dynid.friction.laws` writes it (the identification's own columns), with its direction s the ramp below, plus::

    temperature       + sgn(ω)·√|ω|·(β1 + β2·T + β3·T⁻³), T [°C] clamped to [5, 80] (ch.4 eq. (P1-28))
    Stribeck excess   + Fs·s·exp(−(|ω|/Vs)^μ) on the joints where the model choice kept it (the result's
                      ``stribeck`` section; Madsen 2020 ch.4 eq. (P1-25), ch.6 eq. (11))

**Smoothing (decision).** The identified maps jump by 2·Fc at ω = 0 (sgn(0) = 0). A feedforward on the
desired velocity crosses zero at every reversal and would step the command there, so every
discontinuous sgn(ω) (the Coulomb-type factors, written s above, and the power sign of Hamon's model) is
replaced by the ramp s = clip(ω/band, −1, 1): continuous, and equal to the identified model wherever
|ω| >= band. The default band is 5e-3 rad/s: real friction holds until the rotor reverses, so a wide
symmetric ramp removes friction early, and a narrow one is a step again (at 1 rad/s² the ramp takes
10 ms). The choice was measured in closed loop on the twin, on the thesis' B1 experiment in
``benchmarks/bench_feedforward.py``, which prints the default band beside the plain sgn (the figures:
benchmarks/README.md, "The figures behind the defaults"). The continuous factors (√|ω|, |ω|^a) keep sgn(ω).

**Joint friction (schema 2).** Where the result has a ``joint_friction`` section
(:func:`dynid.identify.friction_fit.identified.joint_friction_of`), the joints with an identified Fc0 take that model
instead, smoothed the same way:

    f = (Fc0 + Fc1·τ²)·s + s·(Fs − Fc0)·exp(−(|ω|/Vs)^mu) + Fv1·ω + Fv2·|ω|·ω + Fv3·ω³ + f_T(ω, T)
                                                                   (Madsen 2020 ch.6 eqs. (9), (11), (20))

with the reference-temperature term f_T of the section (zero at its t0) and the IDIM result's offset tau0
(fo), which belongs to the rigid-body fit it came with, not to the friction the section describes (the
section's plateau fit reports the offset it saw as the rigid-body model's error at those poses, and keeps
none); the other joints keep the model above.

**Coupled joints** (a result identified with the drives' coupling C, θ = C·q: :mod:`dynid.model.drives`): the
friction is each motor's, so it is evaluated on the motors' velocities θ̇ = C·q̇ in link units and, for the
load-dependent models, on each motor's share C⁻ᵀ·τ of the load torque, and reaches the joints as Cᵀ·f (virtual
work; Siciliano et al. 2009 §8.2). A joint's own friction, where the result holds it (a stage that turns with a joint
several motors make: :mod:`dynid.identify.equations.joint_side`), is the joint's: Fcq·s + Fvq·q̇ on its velocity q̇,
smoothed the same way, added to the joints' torques.

The offset tau0 (fo) is part of the identified model the drive supplies, so it is included. The load
torque is clipped to the robot's effort limits before it enters τ² or |τ| (the quadratic is unbounded;
the BIBO argument of Madsen 2020 ch.6 §6.5 needs a bounded load). Without a temperature in the context
the fallback temperature (option ``temperature_c``, default 20 °C, the thesis' reference T0) is used.
"""

from __future__ import annotations

import numpy as np

from dynid.checks import positive
from dynid.control.context import FeedforwardContext
from dynid.control.joint_torque import JointTorqueInput
from dynid.control.plugins import TermPlugin
from dynid.control.term import FeedforwardTerm, finite, term_options
from dynid.errors import InputError
from dynid.friction.law import LawContext
from dynid.friction.laws import friction_law, law_names
from dynid.friction.temperature import TemperatureFriction
from dynid.identify import IdentificationResult, joint_friction_of, joint_side_torque, result_drives
from dynid.model.robot import RobotModel

#: Default smoothing band [rad/s] (module docstring).
DEFAULT_BAND = 5e-3
#: Temperature [°C] used when the context gives none (the thesis' reference T0).
DEFAULT_TEMPERATURE_C = 20.0


def friction_parameters(result: IdentificationResult, robot: RobotModel) -> dict[str, np.ndarray]:
    """{symbol: (n,) values} of the result's friction model, 0 where a joint lacks the symbol."""
    table = result.friction()
    symbols = result.model.get('friction_symbols', [])
    return {symbol: np.array([table[joint].get(symbol, 0.0) for joint in robot.joint_names]) for symbol in symbols}


def idim_offset(result: IdentificationResult, p: dict[str, np.ndarray], n: int) -> np.ndarray:
    """The IDIM result's torque offset tau0 (fo of the comprehensive model) [N·m] per joint, 0 where none."""
    offset = friction_law(result.model.get('friction', 'none')).offset
    return p.get(offset, np.zeros(n)) if offset else np.zeros(n)


def default_band(result: IdentificationResult | None) -> float:
    """The default smoothing band [rad/s] (module docstring); the same for every result."""
    return DEFAULT_BAND


def bounded_load(torque: np.ndarray, limit: np.ndarray) -> np.ndarray:
    """The load torque clipped to [−L, L] [N·m] (keeps F(τ) bounded); ``limit`` = (−L, L)."""
    return np.minimum(np.maximum(torque, limit[0]), limit[1])


def temperature_or_fallback(context: FeedforwardContext, fallback: float):
    return fallback if context.temperature is None else context.temperature


class StaticFrictionTerm(JointTorqueInput, FeedforwardTerm):
    """The identified friction, smoothed through ω = 0 (module docstring).

    Args:
        robot, result: the robot and its identification (friction model in ``result.model['friction']``).
        band: half-width of the smoothing ramp [rad/s] > 0.
        temperature_c: fallback temperature [°C]. load: ``'desired'`` (τ_J,d) or ``'measured'`` (τ_j).
    """

    name = 'friction_static'
    friction = True

    def __init__(self, robot: RobotModel, result: IdentificationResult, band: float,
                 temperature_c: float = DEFAULT_TEMPERATURE_C, load: str = 'desired') -> None:
        self.kind = result.model.get('friction')
        self.law = friction_law(self.kind) if self.kind in law_names() else None
        if self.law is None or not self.law.symbols:
            raise InputError(f'friction_static: the result\'s friction model is {self.kind!r}; the term evaluates '
                             f'{[name for name in law_names() if friction_law(name).symbols]}')
        self._use_joint_torque(robot, result, load)
        identified = joint_friction_of(result, robot)
        self.joint_friction, self.mask = identified if identified is not None and identified[1].any() else (None, None)
        self.needs_joint_torque = bool(self.law.load_symbols) or (
            self.joint_friction is not None and bool(np.any(self.joint_friction.load_coefficient * self.mask)))
        self.band = positive(band, 'friction_static: band [rad/s]')
        self.temperature_c = float(temperature_c)
        self.parameters = friction_parameters(result, robot)
        self.load_limit = (-robot.effort_limits, robot.effort_limits)
        p = self.parameters
        self.offset = idim_offset(result, p, robot.n)
        self.temperature_term = TemperatureFriction(p['beta1'], p['beta2'], p['beta3']) \
            if result.model.get('temperature') else None
        self.hamon_velocity = float(result.model.get('hamon_velocity', 0.03))
        self.stribeck = result.stribeck  # the Stribeck excess (its coefficients Fs: p['Fs']), or None
        self.exponents = result.power_exponents(robot.joint_names)  # α of the viscous power term (1: viscous)
        self.power_velocity = result.power_velocity  # v_s of the viscous power term (None: Li's form as written)
        drives = result_drives(result, robot)
        self.drives = drives if drives is not None and drives.coupling is not None else None
        self.joint_side = bool(result.joint_side_joints)  # a joint's own friction: Fcq, Fvq (module docstring)

    @classmethod
    def from_result(cls, robot: RobotModel, result: IdentificationResult | None, options=None) -> StaticFrictionTerm:
        """Factory. Options: ``band`` [rad/s] (default 5e-3, module docstring),
        ``temperature_c`` (fallback temperature [°C], default 20), ``load`` (``desired`` or ``measured``)."""
        o = term_options(cls.name, options, {'band': None, 'temperature_c': DEFAULT_TEMPERATURE_C, 'load': 'desired'})
        if result is None:
            raise InputError('friction_static needs an identification result (its friction model)')
        band = default_band(result) if o['band'] is None else o['band']
        temperature = finite(o['temperature_c'], 'friction_static: temperature_c [°C]')
        return cls(robot, result, band, temperature, o['load'])

    def direction(self, velocity: np.ndarray) -> np.ndarray:
        """The smoothed sgn(ω): clip(ω/band, −1, 1)."""
        return np.minimum(np.maximum(velocity * (1.0 / self.band), -1.0), 1.0)

    def friction_torque(self, velocity, load_torque, temperature) -> np.ndarray:
        """f [N·m] at velocity ω [rad/s], load torque τ [N·m] (ignored by non-load models), T [°C]."""
        p, w = self.parameters, velocity
        s = self.direction(w)
        context = LawContext(self.hamon_velocity, self.exponents, self.power_velocity)
        f = self.law.torque(p, w, s, load_torque if self.law.load_symbols else None, context)
        if self.temperature_term is not None:
            f = f + self.temperature_term.evaluate(w, temperature)
        if self.stribeck is not None:
            f = f + self.stribeck.torque(w, p['Fs'], s)
        if self.joint_friction is not None:
            f = np.where(self.mask, self._joint_friction(w, s, load_torque, temperature), f)
        return f

    def _joint_friction(self, w, s, load_torque, temperature) -> np.ndarray:
        """The section's model on ω with the ramp s for sgn(ω) (module docstring) [N·m]."""
        model, stribeck = self.joint_friction, self.joint_friction.stribeck
        level = model.coulomb_level(0.0 if load_torque is None else load_torque)
        f = s * (level + (stribeck.Fs - stribeck.Fc) * stribeck.stribeck_decay(w)) + stribeck.viscous(w) + self.offset
        if model.temperature is not None:
            f = f + model.temperature.evaluate(w, temperature)
        return f

    def _torque(self, q, dq, ddq, context, single: bool) -> np.ndarray:
        load = None
        if self.needs_joint_torque:
            load = self.joint_torque(q, dq, ddq, context, single)
        temperature = temperature_or_fallback(context, self.temperature_c)
        if self.drives is None:
            return self.friction_torque(dq, None if load is None else bounded_load(load, self.load_limit), temperature)
        # coupled joints: each motor's friction on its θ̇ = C·q̇ and its share C⁻ᵀ·τ of the load, reaching the
        # joints as Cᵀ·f, and the joints' own friction on q̇ (module docstring)
        if load is not None:
            load = bounded_load(self.drives.joint_to_motor_torque_space(load), self.load_limit)
        motors = self.friction_torque(self.drives.joints_to_motors(dq), load, temperature)
        torque = self.drives.motor_to_joint_torque_space(motors)
        return torque + joint_side_torque(self.parameters, dq, self.direction(dq)) if self.joint_side else torque

    def evaluate(self, q, dq, ddq, context: FeedforwardContext) -> np.ndarray:
        return self._torque(q, dq, ddq, context, False)

    def step(self, q, dq, ddq, context: FeedforwardContext) -> np.ndarray:
        return self._torque(q, dq, ddq, context, True)


FRICTION_STATIC = TermPlugin('friction_static', 'the identified friction law, smoothed through zero velocity',
                             StaticFrictionTerm.from_result)
