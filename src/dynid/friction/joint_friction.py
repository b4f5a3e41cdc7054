"""Complete joint friction of the thesis, ch.6 eqs. (3), (5), (11), (20): E-GMS Coulomb + the rest.

    f = F(τ_j)·H(θ) + F_V(ω, T)
    F(τ_j)  = Fc0 + Fc1·τ_j²  (or |τ_j|)                                    load-dependent level (20)
    H(θ)    = E-GMS hysteresis output in [−1, 1] (or sgn(ω) for the static variant)
    F_V     = sgn(ω)·(Fs − Fc0)·exp(−(|ω|/Vs)^μ) + Fv1·ω + Fv2·|ω|·ω + Fv3·ω³ + f_T(ω, T)     (11)

ω and θ are the rotor velocity and position in link units, τ_j the joint torque [N·m], T [°C].
In sliding H = sgn(ω) and f equals the static map s(ω) of :class:`StribeckMap` plus the load and
temperature terms (eq. (9)). The no-load Coulomb level Fc0 is the Stribeck map's ``Fc``.

The thesis leaves the Stribeck excess discontinuous at ω = 0 (Madsen 2020, ch.6); a
``smoothing`` on the Stribeck map replaces its sgn by tanh for simulation. The E-GMS input is θ; the
thesis also subtracts a kinematic-error table from it (Madsen 2020, ch.4), which is not modelled.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from dynid.errors import InputError, checked_choice
from dynid.friction.egms import EGMS
from dynid.friction.law import LOAD_LAWS, load_shape
from dynid.friction.linear import LinearFrictionTerm
from dynid.friction.static import StribeckMap


@dataclass
class JointFriction:
    """f = F(τ_j)·H + F_V(ω, T) for n joints (module docstring).

    Args:
        stribeck: no-load static map (its Fc is the no-load Coulomb level Fc0).
        load_coefficient: Fc1, scalar or per joint, of ``load_law``.
        load_law: ``'squared'`` (F = Fc0 + Fc1·τ²) or ``'absolute'`` (Fc0 + Fc1·|τ|).
        temperature: a temperature term (:mod:`dynid.friction.temperature`) or None.
        egms: E-GMS operators, or None for the static (discontinuous) Coulomb sgn(ω).
        coulomb_smoothing: [rad/s] > 0 replaces that sgn(ω) by tanh(ω/coulomb_smoothing) (simulation).
    """

    stribeck: StribeckMap
    load_coefficient: float | np.ndarray = 0.0
    load_law: str = 'squared'
    temperature: LinearFrictionTerm | None = None
    egms: EGMS | None = field(default=None)
    coulomb_smoothing: float = 0.0

    def __post_init__(self) -> None:
        checked_choice('load_law', self.load_law, LOAD_LAWS)
        self.load_coefficient = np.asarray(self.load_coefficient, dtype=float)

    def coulomb_level(self, joint_torque: np.ndarray) -> np.ndarray:
        """F(τ_j) [N·m]."""
        return self.stribeck.Fc + self.load_coefficient * load_shape(joint_torque, self.load_law)

    def remainder(self, velocity: np.ndarray, temperature: np.ndarray | None = None) -> np.ndarray:
        """F_V(ω, T): Stribeck excess, viscous and temperature terms [N·m]."""
        w = np.asarray(velocity, dtype=float)
        value = self.stribeck.excess(w) + self.stribeck.viscous(w)
        if self.temperature is not None:
            if temperature is None:
                raise InputError('this friction model has a temperature term: pass the temperature')
            value = value + self.temperature.evaluate(w, temperature)
        return value

    def reset(self, theta: np.ndarray | None = None, direction: np.ndarray | None = None) -> None:
        """Reset the E-GMS history (see :meth:`EGMS.reset`)."""
        if self.egms is not None:
            self.egms.reset(theta, direction)

    def static_direction(self, velocity: np.ndarray) -> np.ndarray:
        """sgn(ω), or tanh(ω/coulomb_smoothing): the Coulomb direction without E-GMS."""
        velocity = np.asarray(velocity, dtype=float)
        return np.tanh(velocity / self.coulomb_smoothing) if self.coulomb_smoothing > 0 else np.sign(velocity)

    def step(self, theta: np.ndarray, velocity: np.ndarray, joint_torque: np.ndarray,
             temperature: np.ndarray | None = None) -> np.ndarray:
        """Friction torque (n,) [N·m] at one sample; advances the E-GMS state."""
        h = self.static_direction(velocity) if self.egms is None else self.egms.step(theta)
        return self.coulomb_level(joint_torque) * h + self.remainder(velocity, temperature)

    def run(self, theta: np.ndarray, velocity: np.ndarray, joint_torque: np.ndarray,
            temperature: np.ndarray | None = None) -> np.ndarray:
        """Friction torque (N, n) over a trajectory; θ, ω, τ_j (and T) of shape (N, n)."""
        velocity = np.asarray(velocity, dtype=float)
        h = self.static_direction(velocity) if self.egms is None else self.egms.run(theta)
        return self.coulomb_level(joint_torque) * h + self.remainder(velocity, temperature)
