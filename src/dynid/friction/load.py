"""Friction that depends on the load (joint) torque.

- :class:`LoadDependentCoulomb`: a Coulomb level that grows with the load torque τ [N·m],
  F(τ) = Fc0 + Fc1·τ² (``squared``: thesis ch.4 eq. (P1-27), ch.6 eq. (20); Li et al. eq. (6)) or
  F(τ) = Fc0 + Fc1·|τ| (``absolute``: Bittencourt, Gao, Hamon), applied as F(τ)·sgn(ω). The static
  form jumps by 2·F(τ) at every velocity reversal under load; the E-GMS model instead multiplies
  F(τ) by its continuous hysteresis output (:mod:`dynid.friction.egms`).
- :class:`HamonQuadrantFriction`: Hamon, Gautier & Garrec 2010, eqs. (25)–(30): drive torque as a
  function of the output torque τ_out and velocity, with motor (P_out = τ_out·q̇ > 0) and generator
  (P_out < 0) parameter sets and a Stribeck-like decay exp(−|q̇|/q̇_S).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dynid.errors import InputError, checked_choice
from dynid.friction.linear import LinearFrictionTerm, sgn

LOAD_LAWS = ('squared', 'absolute')


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
        """τ² or |τ| [N·m², N·m] for the chosen law."""
        tau = np.asarray(load_torque, dtype=float)
        return tau**2 if self.law == 'squared' else np.abs(tau)

    def level(self, load_torque: np.ndarray) -> np.ndarray:
        """Coulomb level F(τ) [N·m] (even in τ and positive for positive coefficients)."""
        return self.Fc0 + self.Fc1 * self.load_shape(load_torque)

    def features(self, velocity: np.ndarray, load_torque: np.ndarray) -> list[np.ndarray]:
        s = sgn(np.asarray(velocity, dtype=float))
        return [s, s * self.load_shape(load_torque)]


@dataclass(frozen=True)
class HamonQuadrantFriction(LinearFrictionTerm):
    """Hamon's load- and velocity-dependent dry friction, motor/generator quadrants (eq. (30)).

    Drive torque τ = P⁺(a_m + b_m·E)·τ_out + P⁻(a_g − b_g·E)·τ_out + P⁺(c_m + d_m·E)·sgn(q̇)
    + P⁻(c_g + d_g·E)·sgn(q̇) + Fv·q̇ + tau0, with P⁺ = (1 + sgn P)/2, P⁻ = (1 − sgn P)/2,
    P = τ_out·q̇ the output power and E = exp(−|q̇|/qd_s).

    a_m, a_g [-] (1 ± the load coefficient); b_m, b_g [-]; c_m, c_g, d_m, d_g, tau0 [N·m];
    Fv [N·m·s/rad]; qd_s [rad/s] is fixed a priori (paper: 0.03 rad/s). With a = 1 and b = d = 0
    the model is the usual Coulomb (c) + viscous + offset model. :meth:`friction` returns τ − τ_out.

    The power sign is sgn(τ_out·q̇) by default. In identification τ_out is not measured: pass
    ``power_sign=sgn(τ·q̇)`` from the measured drive torque on samples outside the stiction band
    (paper eq. (26)).
    """

    a_m: float | np.ndarray = 1.0
    b_m: float | np.ndarray = 0.0
    a_g: float | np.ndarray = 1.0
    b_g: float | np.ndarray = 0.0
    c_m: float | np.ndarray = 0.0
    d_m: float | np.ndarray = 0.0
    c_g: float | np.ndarray = 0.0
    d_g: float | np.ndarray = 0.0
    Fv: float | np.ndarray = 0.0
    tau0: float | np.ndarray = 0.0
    qd_s: float | np.ndarray = 0.03
    symbols = ('a_m', 'b_m', 'a_g', 'b_g', 'c_m', 'd_m', 'c_g', 'd_g', 'Fv', 'tau0')

    def __post_init__(self) -> None:
        self._coerce_parameters('qd_s')
        if np.any(self.qd_s <= 0):
            raise InputError(f'qd_s must be > 0 rad/s, got {self.qd_s}')

    def features(self, velocity: np.ndarray, output_torque: np.ndarray,
                 power_sign: np.ndarray | None = None) -> list[np.ndarray]:
        w = np.asarray(velocity, dtype=float)
        tau_out = np.asarray(output_torque, dtype=float)
        p = sgn(tau_out * w) if power_sign is None else np.asarray(power_sign, dtype=float)
        p_plus, p_minus = (1.0 + p) / 2.0, (1.0 - p) / 2.0
        e = np.exp(-np.abs(w) / self.qd_s)
        s = sgn(w)
        return [p_plus * tau_out, p_plus * e * tau_out, p_minus * tau_out, -p_minus * e * tau_out,
                p_plus * s, p_plus * e * s, p_minus * s, p_minus * e * s, w, np.ones_like(w)]

    def drive_torque(self, velocity: np.ndarray, output_torque: np.ndarray,
                     power_sign: np.ndarray | None = None) -> np.ndarray:
        """Drive (motor-side, in link units) torque τ [N·m] that produces τ_out at velocity q̇."""
        return self.evaluate(velocity, output_torque, power_sign)

    def friction(self, velocity: np.ndarray, output_torque: np.ndarray,
                 power_sign: np.ndarray | None = None) -> np.ndarray:
        """Friction torque τ − τ_out [N·m]."""
        return self.drive_torque(velocity, output_torque, power_sign) - np.asarray(output_torque)
