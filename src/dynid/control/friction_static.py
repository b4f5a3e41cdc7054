"""friction_static: the identified linear friction model, smoothed through zero velocity.

The friction of the identification result (:mod:`dynid.identify.model`), evaluated on the desired
velocity ω = q̇_d [rad/s] (a rigid joint's rotor velocity in link units) and, for the load-dependent
models, the load torque τ = τ_J,d [N·m] (:class:`~dynid.control.context.FeedforwardContext`):

    viscous_coulomb   Fc·s + Fv·ω + tau0                                 (Madsen 2020 ch.5 eq. (P2-15))
    load_squared      + Fl·s·τ²          load_absolute   + Fl·s·|τ|       (thesis ch.4 eq. (P1-27))
    hamon             P⁺(am1 + bm·E)τ + P⁻(ag1 − bg·E)τ + P⁺(cm + dm·E)s + P⁻(cg + dg·E)s + Fv·ω + tau0
                      (Hamon et al. 2010 eq. (30); E = exp(−|ω|/ω_H), P± = (1 ± s·sgn τ)/2)
    comprehensive     s·fc + sgn(ω)·fv·|ω|^a + fo + fL·s·τ²               (Li et al. 2024 eq. (3))
    temperature       + sgn(ω)·√|ω|·(β1 + β2·T + β3·T⁻³), T [°C] clamped to [5, 80] (ch.4 eq. (P1-28))

**Smoothing (decision).** The identified maps jump by 2·Fc at ω = 0 (sgn(0) = 0). A feedforward on the
desired velocity crosses zero at every reversal and would step the command there, so every
discontinuous sgn(ω) (the Coulomb-type factors, written s above, and the power sign of Hamon's model) is
replaced by the ramp s = clip(ω/band, −1, 1): continuous, and equal to the identified model wherever
|ω| >= band. The default band is the identification's stiction velocity (rows slower than it were left
out of the fit, so the model says nothing there), 0.02 rad/s when the result does not record it. The
continuous factors (√|ω|, |ω|^a) keep sgn(ω).

The offset tau0 (fo) is part of the identified model the drive supplies, so it is included. The load
torque is clipped to the robot's effort limits before it enters τ² or |τ| (the quadratic is unbounded;
the BIBO argument of Madsen 2020 ch.6 §6.5 needs a bounded load). Without a temperature in the context
the fallback temperature (option ``temperature_c``, default 20 °C, the thesis' reference T0) is used.
"""

from __future__ import annotations

import numpy as np

from dynid.control.context import FeedforwardContext
from dynid.control.term import FeedforwardTerm, JointTorqueInput, finite, positive, term_options
from dynid.errors import InputError
from dynid.friction.temperature import TemperatureFriction
from dynid.identify.result import IdentificationResult
from dynid.model.robot import RobotModel

#: Smoothing band [rad/s] when the result records no stiction velocity.
DEFAULT_BAND = 0.02
#: Temperature [°C] used when the context gives none (the thesis' reference T0).
DEFAULT_TEMPERATURE_C = 20.0
LOAD_MODELS = ('load_squared', 'load_absolute', 'hamon', 'comprehensive')
STATIC_MODELS = ('viscous_coulomb',) + LOAD_MODELS


def friction_parameters(result: IdentificationResult, robot: RobotModel) -> dict[str, np.ndarray]:
    """{symbol: (n,) values} of the result's friction model, 0 where a joint lacks the symbol."""
    table = result.friction()
    symbols = result.model.get('friction_symbols', [])
    return {symbol: np.array([table[joint].get(symbol, 0.0) for joint in robot.joint_names]) for symbol in symbols}


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
        if self.kind not in STATIC_MODELS:
            raise InputError(f'friction_static: the result\'s friction model is {self.kind!r}; the term evaluates '
                             f'{list(STATIC_MODELS)}')
        self._use_joint_torque(robot, result, load)
        self.needs_joint_torque = self.kind in LOAD_MODELS
        self.band = positive(band, 'friction_static: band [rad/s]')
        self.temperature_c = float(temperature_c)
        self.parameters = friction_parameters(result, robot)
        self.load_limit = (-robot.effort_limits, robot.effort_limits)
        p = self.parameters
        self.temperature_term = TemperatureFriction(p['beta1'], p['beta2'], p['beta3']) \
            if result.model.get('temperature') else None
        self.hamon_velocity = float(result.model.get('hamon_velocity', 0.03))
        exponents = result.exponents if result.exponents is not None else result.model.get('exponent', 1.0)
        self.exponents = np.broadcast_to(np.asarray(exponents, dtype=float), (robot.n,))

    @classmethod
    def from_result(cls, robot: RobotModel, result: IdentificationResult | None, options=None) -> StaticFrictionTerm:
        """Factory. Options: ``band`` [rad/s] (default: the identification's stiction velocity, else 0.02),
        ``temperature_c`` (fallback temperature [°C], default 20), ``load`` (``desired`` or ``measured``)."""
        o = term_options(cls.name, options, {'band': None, 'temperature_c': DEFAULT_TEMPERATURE_C, 'load': 'desired'})
        if result is None:
            raise InputError('friction_static needs an identification result (its friction model)')
        band = o['band']
        if band is None:
            band = (result.provenance.get('filters') or {}).get('stiction_velocity') or DEFAULT_BAND
        temperature = finite(o['temperature_c'], 'friction_static: temperature_c [°C]')
        return cls(robot, result, band, temperature, o['load'])

    def direction(self, velocity: np.ndarray) -> np.ndarray:
        """The smoothed sgn(ω): clip(ω/band, −1, 1)."""
        return np.minimum(np.maximum(velocity * (1.0 / self.band), -1.0), 1.0)

    def friction_torque(self, velocity, load_torque, temperature) -> np.ndarray:
        """f [N·m] at velocity ω [rad/s], load torque τ [N·m] (ignored by non-load models), T [°C]."""
        p, w, kind = self.parameters, velocity, self.kind
        s = self.direction(w)
        if kind == 'comprehensive':
            f = s * p['fc'] + np.sign(w) * p['fv'] * np.abs(w) ** self.exponents + p['fo']
        elif kind == 'hamon':
            tau = load_torque
            power = s * np.sign(tau)
            plus, minus = 0.5 * (1.0 + power), 0.5 * (1.0 - power)
            decay = np.exp(-np.abs(w) / self.hamon_velocity)
            f = (plus * (p['am1'] + p['bm'] * decay) * tau + minus * (p['ag1'] - p['bg'] * decay) * tau
                 + plus * (p['cm'] + p['dm'] * decay) * s + minus * (p['cg'] + p['dg'] * decay) * s
                 + p['Fv'] * w + p['tau0'])
        else:
            f = s * p['Fc'] + p['Fv'] * w + p['tau0']
        if kind in ('load_squared', 'comprehensive'):
            f = f + s * p['Fl' if kind == 'load_squared' else 'fL'] * load_torque * load_torque
        elif kind == 'load_absolute':
            f = f + s * p['Fl'] * np.abs(load_torque)
        if self.temperature_term is not None:
            f = f + self.temperature_term.evaluate(w, temperature)
        return f

    def _torque(self, q, dq, ddq, context, single: bool) -> np.ndarray:
        load = None
        if self.needs_joint_torque:
            load = bounded_load(self.joint_torque(q, dq, ddq, context, single), self.load_limit)
        return self.friction_torque(dq, load, temperature_or_fallback(context, self.temperature_c))

    def evaluate(self, q, dq, ddq, context: FeedforwardContext) -> np.ndarray:
        return self._torque(q, dq, ddq, context, False)

    def step(self, q, dq, ddq, context: FeedforwardContext) -> np.ndarray:
        return self._torque(q, dq, ddq, context, True)
