"""Modified LS: the drive gains and the parameters by an ordinary LS of [V, −W]·[g; χ] = W_kL·χ_kL (Gautier & Briot
2014, eq. (16); biased: for comparison with IDIM-TLS)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from dynid.identify.choices import FIX_DRIVE_GAIN
from dynid.identify.methods.tls import LINEAR_FRICTION, NO_PRIOR, fit_with_gains
from dynid.identify.registry import IdentificationMethod

if TYPE_CHECKING:
    from dynid.identify.solve.solvers import Estimate


def solve(w_total, joints, names) -> Estimate:
    """[g; χ] of W_tot's unknown columns against its last (known) one, by OLS."""
    from dynid.identify.solve.solvers import ols

    return ols(w_total[:, :-1], -w_total[:, -1], joints, names)


METHOD = IdentificationMethod(
    name='mls', description='modified LS (eq. (16)) of the drive gains and parameters (biased; for comparison)',
    solve=solve, covariance='C = σ̂²·(W_totᵀW_tot)⁻¹ of OLS', friction=LINEAR_FRICTION,
    friction_default='viscous_coulomb', prior_not_applicable=NO_PRIOR, drive_gains=True, fit=fit_with_gains,
    method_options=(FIX_DRIVE_GAIN,))
