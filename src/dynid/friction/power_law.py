"""The comprehensive friction law's viscous power term written with its own limit.

Li et al. 2024 eq. (3) holds the viscous term sgn(ω)·fv·|ω|^α. As α falls toward 0 its column tends to the Coulomb
column sgn(ω) and fc, fv run apart (their sum is what the data fix). Written as a Box-Cox transform about a velocity
v_s,

    sgn(ω)·fv·(max(|ω|, v_s)^α − v_s^α)/α,      = sgn(ω)·fv·ln(max(|ω|, v_s)/v_s) at α = 0,

the term has its limit at α = 0: a logarithmic rate law, as steady-state rate-and-state friction is (Dieterich 1979;
Ruina 1983). For α > 0 and |ω| ≥ v_s the column is (sgn(ω)·|ω|^α − v_s^α·sgn(ω))/α, a combination of Li's column and
the Coulomb column: the same span, the same fit, with fc the friction at v_s (fc_shifted = fc + fv·v_s^α and
fv_shifted = α·fv in Li's terms). Below v_s the speed is held at v_s: the law is fc·sgn(ω) there, bounded and
continuous at v_s, the Coulomb level the identification's rows (none slower than the stiction velocity) never see
below. v_s is the stiction velocity the identification drops rows below (``FilterSettings.stiction_velocity``), so that
the physical consistency's Coulomb bound (friction ≥ 0 at the slowest speed kept) is fc ≥ 0 itself.

:data:`POWER_FORMS`: ``shifted`` (this form) or ``plain`` (Li's eq. (3) as written: result files written before it).
"""

from __future__ import annotations

import numpy as np

POWER_FORMS = ('shifted', 'plain')
#: v_s where the stiction velocity is 0 (no rows dropped): the stiction velocity's default [rad/s].
POWER_VELOCITY_DEFAULT = 0.02


def power_velocity(form: str, stiction_velocity: float) -> float | None:
    """v_s [rad/s] of the ``shifted`` form (the stiction velocity, or :data:`POWER_VELOCITY_DEFAULT` where it is 0);
    None for the ``plain`` form."""
    if form == 'plain':
        return None
    return float(stiction_velocity) if stiction_velocity and stiction_velocity > 0 else POWER_VELOCITY_DEFAULT


def power_term(omega: np.ndarray, alpha: np.ndarray | float, velocity: float | None) -> np.ndarray:
    """The viscous power column at friction velocity ``omega`` [rad/s] (any shape; ``alpha`` broadcast against it,
    α ≥ 0): sgn(ω)·(max(|ω|, v_s)^α − v_s^α)/α (sgn(ω)·ln(max(|ω|, v_s)/v_s) at α = 0) with ``velocity`` v_s, or
    Li's sgn(ω)·|ω|^α where ``velocity`` is None (module docstring; ω itself where every α is 1)."""
    omega = np.asarray(omega, dtype=float)
    alpha = np.asarray(alpha, dtype=float)
    if velocity is None:
        if np.all(alpha == 1.0):  # the linear viscous column: no power taken
            return np.broadcast_to(omega, np.broadcast_shapes(omega.shape, alpha.shape)).copy()
        return np.sign(omega) * np.abs(omega) ** alpha
    log = np.log(np.maximum(np.abs(omega), velocity) / velocity)
    zero = alpha == 0
    shifted = velocity ** alpha * np.expm1(alpha * log) / np.where(zero, 1.0, alpha)  # v^α·((x/v)^α − 1)/α
    return np.sign(omega) * np.where(zero, log, shifted)
