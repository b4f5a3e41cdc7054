"""Friction that depends on the load (joint) torque.

- :class:`LoadDependentCoulomb`: a Coulomb level that grows with the load torque τ [N·m],
  F(τ) = Fc0 + Fc1·τ² (``squared``: thesis ch.4 eq. (P1-27), ch.6 eq. (20); Li et al. eq. (6)) or
  F(τ) = Fc0 + Fc1·|τ| (``absolute``: Bittencourt, Gao, Hamon), applied as F(τ)·sgn(ω). The static
  form jumps by 2·F(τ) at every velocity reversal under load; the E-GMS model instead multiplies
  F(τ) by its continuous hysteresis output (:mod:`dynid.friction.egms`).

Hamon, Gautier & Garrec 2010's motor/generator quadrants of the output torque (eq. (30)) are the identified model's
law ``hamon`` (:mod:`dynid.friction.laws`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dynid.errors import checked_choice
from dynid.friction.law import LOAD_LAWS, load_shape
from dynid.friction.linear import LinearFrictionTerm, sgn


@dataclass(frozen=True)
class LoadDependentCoulomb(LinearFrictionTerm):
    """Coulomb friction whose level depends on the load torque.

    f = F(τ)·sgn(ω), F(τ) = Fc0 + Fc1·τ² (``law='squared'``) or Fc0 + Fc1·|τ| (``law='absolute'``).
    Fc0 [N·m]: no-load Coulomb level; Fc1 [1/(N·m)] (squared) or [-] (absolute).
    """

    Fc0: float | np.ndarray = 0.0
    Fc1: float | np.ndarray = 0.0
    law: str = 'squared'
    symbols = ('Fc0', 'Fc1')

    def __post_init__(self) -> None:
        checked_choice('load law', self.law, LOAD_LAWS)
        self._coerce_parameters()

    def load_shape(self, load_torque: np.ndarray) -> np.ndarray:
        """τ² or |τ| [N·m², N·m] for the chosen law (:func:`load_shape`)."""
        return load_shape(load_torque, self.law)

    def level(self, load_torque: np.ndarray) -> np.ndarray:
        """Coulomb level F(τ) [N·m] (even in τ and positive for positive coefficients)."""
        return self.Fc0 + self.Fc1 * self.load_shape(load_torque)

    def features(self, velocity: np.ndarray, load_torque: np.ndarray) -> list[np.ndarray]:
        s = sgn(np.asarray(velocity, dtype=float))
        return [s, s * self.load_shape(load_torque)]
