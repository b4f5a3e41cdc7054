"""OLS: ordinary least squares of the IDIM, every row weighted alike (Gautier & Briot 2014, eqs. (7)–(11))."""

from __future__ import annotations

from dynid.identify.registry import IdentificationMethod
from dynid.identify.solve.solvers import Estimate, ols


def solve(w, y, joints, names, *, options, joint_names, start=None, pooled_short=False, groups=None) -> Estimate:
    """χ̂ by QR of W (:func:`dynid.identify.solve.solvers.ols`); ``groups``: the rows reduced per block and joint."""
    return ols(w, y, joints, names, groups)


METHOD = IdentificationMethod(
    name='ols', description='ordinary least squares (QR), every row weighted alike', solve=solve,
    covariance='C = σ̂²·(WᵀW)⁻¹, σ̂² = ‖y − Wχ̂‖²/(r − b)', physical=True, reduced_rows=True, way_out=True)
