"""Temperature-dependent viscous friction, f_T = sgn(ω)·√|ω|·g(T), T in °C.

Two forms of g(T):

- :class:`TemperatureFriction` (thesis ch.4 eq. (P1-28); Li et al. 2024 eq. (5)):
  g = beta1 + beta2·T + beta3·T⁻³.
- :class:`ReferenceTemperatureFriction` (thesis ch.6 eq. (11), T0 = 20 °C): the printed
  F_T2·(T − T0)⁻³ is singular at T0 and contradicts the stated "zero contribution at T0" (erratum
  an ambiguity of Madsen 2020, ch.6). We use the digest's option (a): g = Ft1·(T − T0) + Ft2·(T⁻³ − T0⁻³),
  zero at T0, keeping the T⁻³ basis.

Both divide by T³ with T in °C, so T is clamped to [t_min, t_max] (0 < t_min; defaults 5–80 °C)
before use: the polynomial extrapolates badly outside the identified range (thesis L1740).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dynid.errors import InputError
from dynid.friction.linear import LinearFrictionTerm, sgn


def _root_velocity(velocity: np.ndarray) -> np.ndarray:
    w = np.asarray(velocity, dtype=float)
    return sgn(w) * np.sqrt(np.abs(w))


class _TemperatureRange:
    """Clamp range [t_min, t_max] [°C] shared by the temperature terms."""

    t_min: float
    t_max: float

    def _check_range(self) -> None:
        if not 0.0 < self.t_min < self.t_max:
            raise InputError(f'need 0 < t_min < t_max [°C] (T⁻³ is singular at 0 °C), '
                             f'got {self.t_min}, {self.t_max}')

    def clamp(self, temperature: np.ndarray) -> np.ndarray:
        """Temperature [°C] limited to [t_min, t_max]."""
        return np.clip(np.asarray(temperature, dtype=float), self.t_min, self.t_max)


@dataclass(frozen=True)
class TemperatureFriction(_TemperatureRange, LinearFrictionTerm):
    """f_T = sgn(ω)·√|ω|·(beta1 + beta2·T + beta3·T⁻³), T [°C] clamped to [t_min, t_max].

    beta1 [N·m·(s/rad)^½], beta2 [N·m·(s/rad)^½/°C], beta3 [N·m·(s/rad)^½·°C³].
    """

    beta1: float | np.ndarray = 0.0
    beta2: float | np.ndarray = 0.0
    beta3: float | np.ndarray = 0.0
    t_min: float = 5.0
    t_max: float = 80.0
    symbols = ('beta1', 'beta2', 'beta3')

    def __post_init__(self) -> None:
        self._check_range()
        self._coerce_parameters()

    def features(self, velocity: np.ndarray, temperature: np.ndarray) -> list[np.ndarray]:
        root, t = _root_velocity(velocity), self.clamp(temperature)
        return [root, root * t, root * t**-3]


@dataclass(frozen=True)
class ReferenceTemperatureFriction(_TemperatureRange, LinearFrictionTerm):
    """f_T = sgn(ω)·√|ω|·(Ft1·(T − t0) + Ft2·(T⁻³ − t0⁻³)), zero at the reference t0 [°C].

    Ft1 [N·m·(s/rad)^½/°C], Ft2 [N·m·(s/rad)^½·°C³]; T clamped to [t_min, t_max].
    """

    Ft1: float | np.ndarray = 0.0
    Ft2: float | np.ndarray = 0.0
    t0: float = 20.0
    t_min: float = 5.0
    t_max: float = 80.0
    symbols = ('Ft1', 'Ft2')

    def __post_init__(self) -> None:
        self._check_range()
        if not self.t_min <= self.t0 <= self.t_max:
            raise InputError(f'reference temperature t0={self.t0} °C is outside [{self.t_min}, {self.t_max}]')
        self._coerce_parameters()

    def features(self, velocity: np.ndarray, temperature: np.ndarray) -> list[np.ndarray]:
        root, t = _root_velocity(velocity), self.clamp(temperature)
        return [root * (t - self.t0), root * (t**-3 - self.t0**-3)]

    def evaluate(self, velocity: np.ndarray, temperature: np.ndarray) -> np.ndarray:
        """f_T [N·m] (the same as Σ features·parameters, written out for speed)."""
        t = self.clamp(temperature)
        return _root_velocity(velocity) * (self.Ft1 * (t - self.t0) + self.Ft2 * (t**-3 - self.t0**-3))
