"""IDIM-IV (Janot, Vandanjon & Gautier 2014): instruments for closed-loop data, the instruments the
regressor of the loop simulated with the previous estimate, from IDIM-WLS until the estimate settles
(:mod:`dynid.identify.closed_loop`); needs the controller's reference in the recordings.

The loop's simulation (pinocchio) is imported when the method runs, not with its declaration."""

from __future__ import annotations

from collections.abc import Callable

from dynid.identify.closed_loop import FRICTION, NO_PRIOR, options
from dynid.identify.registry import IdentificationMethod


def fit(problem, options, progress: Callable[[str], None], rigid_start=None):
    """χ_{k+1} = (ZᵀGW)⁻¹ZᵀGy, Z = W(q_s(χ_k), q̇_s, q̈_s) (Janot et al. 2014, eqs. (20)–(22))."""
    from dynid.identify.closed_loop.fit import closed_loop_fit

    return closed_loop_fit(problem, options, progress, solve, 'IDIM-IV')


def solve(w, z, y, weights, names, joints, options):
    """One instrumental step (:func:`dynid.identify.closed_loop.fit.instrumental_step`)."""
    from dynid.identify.closed_loop.fit import instrumental_step

    return instrumental_step(w, z, y, weights, names, joints, options)


METHOD = IdentificationMethod(
    name='idim_iv', description='IDIM-IV: instruments from the closed loop simulated with the previous estimate '
                                '(needs the controller\'s reference)', solve=solve,
    covariance='C = σ̂²·(ZᵀGW)⁻¹·ZᵀGZ·(WᵀGZ)⁻¹, G = diag(1/σ̂_j²) of WLS', friction=FRICTION,
    friction_default='viscous_coulomb', prior_not_applicable=NO_PRIOR, fit=fit, joint_noise=True,
    method_options=options(10), closed_loop_consistent=True)
