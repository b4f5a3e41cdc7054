"""DIDIM (Gautier, Janot & Vandanjon 2013): the closed-loop output error of the torque minimized by Gauss–Newton, each
step IDIM-WLS on the regressor of the loop simulated with the previous estimate, from IDIM-WLS
(:mod:`dynid.identify.closed_loop`); needs the controller's reference in the recordings.

The loop's simulation (pinocchio) is imported when the method runs, not with its declaration."""

from __future__ import annotations

from collections.abc import Callable

from dynid.identify.closed_loop import FRICTION, NO_PRIOR, options
from dynid.identify.registry import IdentificationMethod


def fit(problem, options, progress: Callable[[str], None], rigid_start=None):
    """χ_{k+1} = WLS(W(q_s(χ_k), q̇_s, q̈_s), y) (Gautier et al. 2013, eq. (20))."""
    from dynid.identify.closed_loop.fit import closed_loop_fit

    return closed_loop_fit(problem, options, progress, solve, 'DIDIM')


def solve(w, z, y, weights, names, joints, options):
    """One output-error step (:func:`dynid.identify.closed_loop.fit.output_error_step`)."""
    from dynid.identify.closed_loop.fit import output_error_step

    return output_error_step(w, z, y, weights, names, joints, options)


METHOD = IdentificationMethod(
    name='didim', description='DIDIM: closed-loop output error of the torque by Gauss–Newton on the simulated '
                              'regressor (needs the controller\'s reference)', solve=solve,
    covariance='C = σ̂_w²·(W_sᵀGW_s)⁻¹ of the last WLS on the simulated regressor W_s', friction=FRICTION,
    friction_default='viscous_coulomb', prior_not_applicable=NO_PRIOR, fit=fit, joint_noise=True,
    method_options=options(20), closed_loop_consistent=True)
