"""IDIM-IV (Janot, Vandanjon & Gautier 2014): instrumental variables for closed-loop data, the instruments the
regressor of the loop simulated with the previous estimate, from IDIM-WLS until the estimate settles
(:mod:`dynid.identify.closed_loop`); needs the controller's reference in the recordings."""

from __future__ import annotations

from collections.abc import Callable

from dynid.identify.closed_loop.fit import FRICTION, NO_PRIOR, closed_loop_fit, instrumental_step, options
from dynid.identify.registry import IdentificationMethod


def fit(problem, options, progress: Callable[[str], None], rigid_start=None):
    """χ_{k+1} = (ZᵀGW)⁻¹ZᵀGy, Z = W(q_s(χ_k), q̇_s, q̈_s) (Janot et al. 2014, eqs. (20)–(22))."""
    return closed_loop_fit(problem, options, progress, instrumental_step, 'IDIM-IV')


METHOD = IdentificationMethod(
    name='idim_iv', description='IDIM-IV: instruments from the closed loop simulated with the previous estimate '
                                '(needs the controller\'s reference)', solve=instrumental_step,
    covariance='C = σ̂²·(ZᵀGW)⁻¹·ZᵀGZ·(WᵀGZ)⁻¹, G = diag(1/σ̂_j²) of WLS', friction=FRICTION,
    friction_default='viscous_coulomb', prior_not_applicable=NO_PRIOR, fit=fit, joint_noise=True,
    method_options=options(10), closed_loop_consistent=True)
