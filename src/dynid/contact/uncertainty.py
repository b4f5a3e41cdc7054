"""What the σ of τ̂_ext starts from, read off the identification result (the detector's σ₀, F_s and σ_θ:
:mod:`dynid.contact.detection`).

- σ₀ per joint: the result's held-out RMSE where it has one (``metrics.validation``), else its training RMSE
  (``metrics.train``), else 1 % of the joint's effort limit (a result without metrics). Calibration on contact-free
  runs replaces it by the residual measured there (:mod:`dynid.contact.calibration`).
- F_s per joint: the Coulomb level with the Stribeck excess
  (:attr:`dynid.contact.dynamics.ObserverModel.coulomb_level`).
- σ_θ per joint and sample: the friction parameters' standard deviations on their features, σ_Fc·|s| + σ_Fv·|ω| +
  σ_τ0 (Fc, Fv, tau0; fc, fv, fo of the comprehensive law, whose fv multiplies its power term's |column|,
  :func:`dynid.friction.power_law.power_term`), summed as independent terms. The file keeps the
  parameters' standard deviations only (no correlations), and the rigid-body parameters' share is in σ₀ (their
  error is what the residual measures).
"""

from __future__ import annotations

import numpy as np

from dynid.friction.laws import friction_law, law_names
from dynid.friction.power_law import power_term
from dynid.identify import IdentificationResult
from dynid.model.robot import RobotModel


def result_sigma(result: IdentificationResult, robot: RobotModel) -> np.ndarray:
    """σ₀ per joint [N·m] (module docstring)."""
    fallback = 0.01 * np.where(np.isfinite(robot.effort_limits), robot.effort_limits, 100.0)
    for part in ('validation', 'train'):
        joints = ((result.metrics or {}).get(part) or {}).get('joints') or {}
        values = np.array([(joints.get(name) or {}).get('rmse') or np.nan for name in robot.joint_names], dtype=float)
        if np.isfinite(values).any():
            return np.where(np.isfinite(values) & (values > 0), values, fallback)
    return fallback


class FrictionParameterSigma:
    """σ_θ(ω) [N·m] (N, n) of a result's friction parameters (module docstring)."""

    def __init__(self, result: IdentificationResult, robot: RobotModel, band: float) -> None:
        kind = result.model.get('friction')
        roles = friction_law(kind).roles if kind in law_names() else {}
        terms = [roles.get(part, part) for part in ('Fc', 'Fv', 'tau0')]  # the law's Coulomb, viscous and offset
        std = dict(zip(result.parameter_names, np.nan_to_num(result.std, nan=0.0), strict=True))
        self.coulomb, self.viscous, self.offset = (
            np.array([std.get(f'{symbol}_{j + 1}', 0.0) for j in range(robot.n)]) for symbol in terms)
        self.band = band
        self.exponents, self.power_velocity = result.power_exponents(robot.joint_names), result.power_velocity

    def __call__(self, velocity: np.ndarray) -> np.ndarray:
        s = np.minimum(np.abs(velocity) / self.band, 1.0)
        viscous = np.abs(power_term(velocity, self.exponents, self.power_velocity))
        return self.coulomb * s + self.viscous * viscous + self.offset
