"""IDIM-TLS: the drive gains and the parameters at once, scaled by a known payload mass (Gautier & Briot 2014,
eqs. (17)–(23)); needs recordings with and without the payload, or a gain held."""

from __future__ import annotations

from typing import TYPE_CHECKING

from dynid.identify.choices import FIX_DRIVE_GAIN
from dynid.identify.registry import IdentificationMethod

if TYPE_CHECKING:
    from dynid.identify.solve.solvers import Estimate

#: the friction laws the drive-gain methods take: linear in their parameters without τ_out
LINEAR_FRICTION = ('none', 'viscous_coulomb')
#: why the robot file's prior does not apply to the drive-gain methods
NO_PRIOR = 'the drive gains are identified with the parameters (tls, mls): the prior takes a known torque'


def solve(w_total, joints, names) -> Estimate:
    """[g; χ] of W_tot·[g; χ; 1] = 0 (:func:`dynid.identify.solve.solvers.tls`, rows weighted by 1/σ̂_W^j)."""
    from dynid.identify.solve.solvers import tls

    return tls(w_total, joints, names, weighted=True)


def fit_with_gains(problem, options, progress, rigid_start=None):
    """The drive-gain methods' fit (:func:`dynid.identify.steps.fit.fit_with_gains`), imported when it runs."""
    from dynid.identify.steps.fit import fit_with_gains as fit

    return fit(problem, options, progress, rigid_start)


METHOD = IdentificationMethod(
    name='tls', description='IDIM-TLS: drive gains and parameters at once, scaled by a known payload mass',
    solve=solve, covariance='C = σ̂_W²·(1 + ‖χ̂‖²)·(ŴᵀŴ)⁻¹ (eq. (23))', friction=LINEAR_FRICTION,
    friction_default='viscous_coulomb', prior_not_applicable=NO_PRIOR, drive_gains=True, fit=fit_with_gains,
    joint_noise=True, method_options=(FIX_DRIVE_GAIN,))
