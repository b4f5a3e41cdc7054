"""WLS: least squares with each joint's rows weighted by 1/σ̂_j (Gautier–Poignet; thesis ch.5 §3.6, erratum A-18).

The default method, and the one the identification starts from where the method is left to it.
"""

from __future__ import annotations

from dynid.identify.registry import IdentificationMethod
from dynid.identify.solve.solvers import Estimate, wls


def solve(w, y, joints, names, *, options, joint_names, start=None, pooled_short=False, groups=None) -> Estimate:
    """χ̂ of the rows weighted by 1/σ̂_j (:func:`dynid.identify.solve.solvers.wls`). ``pooled_short``: a joint too
    short for a noise estimate of its own is weighted by the pooled one and dependent columns are left to a prior,
    instead of refusing them."""
    return wls(w, y, joints, names, joint_names, options.noise_floor_fraction, refuse_short=not pooled_short,
               dependent_unknown=pooled_short, groups=groups)


METHOD = IdentificationMethod(
    name='wls', description='least squares with per-joint weights 1/σ̂_j (the default)', solve=solve,
    covariance='C = σ̂_w²·(WᵀGW)⁻¹, G = diag(1/σ̂_j²) per row', options=('noise_floor_fraction',), physical=True,
    reduced_rows=True, way_out=True, joint_noise=True)
