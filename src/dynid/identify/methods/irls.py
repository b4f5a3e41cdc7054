"""IRLS: iteratively reweighted least squares with a robust weight function of each joint's scaled residual (Huber,
Tukey bisquare, Cauchy; Li et al. 2024 §2.2, loops L1–L2), from the WLS solution."""

from __future__ import annotations

from typing import TYPE_CHECKING

from dynid.identify.choices import WEIGHT_FUNCTION
from dynid.identify.registry import IdentificationMethod

if TYPE_CHECKING:
    from dynid.identify.solve.solvers import Estimate


def solve(w, y, joints, names, *, options, joint_names, start=None, pooled_short=False, groups=None) -> Estimate:
    """χ̂ by IRLS (:func:`dynid.identify.solve.solvers.irls`) with the weight function of ``options.method_options``,
    warm-started from ``start`` (default: WLS)."""
    from dynid.identify.solve.solvers import irls

    return irls(w, y, joints, names, WEIGHT_FUNCTION.value_in(options.method_options), options.weight_constant,
                start=start)


def choice_weights(w, y, joints, columns, weight_function: str):
    """IRLS's robust row weights of all rows on the ``columns`` chosen
    (:func:`dynid.identify.selection.folds.robust_row_weights`), or None where its normal equations fail."""
    from dynid.identify.selection.folds import robust_row_weights

    return robust_row_weights(w, y, joints, weight_function, columns=columns)


METHOD = IdentificationMethod(
    name='irls', description='robust reweighting (Huber, Tukey, Cauchy) from the WLS solution', solve=solve,
    covariance='C = σ̂_w²·(WᵀGW)⁻¹, G = diag(ψ(r/s_j)/s_j²) the final robust weights',
    options=('weight_constant',), physical=True, choice_weights=choice_weights, way_out=True, joint_noise=True,
    method_options=(WEIGHT_FUNCTION,))
