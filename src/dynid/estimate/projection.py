"""The region the adaptive friction's projection keeps α̂ in (Madsen 2020, ch.6 eq. (27)), from an identification.

The thesis fixes α1 ∈ [0.4, 1.5] and α2 ∈ [−0.05, 0.05] N·m·s/rad for its robot. On another robot, or after
more wear, the truth leaves that box (a Coulomb level risen by 60 %, a viscous excess of 0.5 N·m·s/rad) and the
projection holds α̂ on its edge. Here the box of each joint follows from what the identification found, with the
Coulomb level Fc [N·m] and viscous coefficient Fv [N·m·s/rad] the estimator starts from and their standard
deviations σ:

    w1 = c + k·σ(Fc)/Fc          α1 ∈ [max(0, 1 − w1), 1 + w1]
    w2 = c·|Fv| + k·σ(Fv)        α2 ∈ [−w2, w2]          [N·m·s/rad]

with c = ``friction_change`` (default 1: any Coulomb level from none to twice the identified one, a total
viscous coefficient from none to twice) and k = ``bound_sigmas`` (default 3: what the identification could not
tell apart is inside too). A σ the result does not give (a physically consistent result, a section without
standard deviations) counts as 0. The box is never narrower than the thesis' box. ``alpha1_bounds`` and
``alpha2_bounds`` replace the rule for every joint. Where the estimate sits on an edge,
:class:`~dynid.estimate.friction.AdaptiveFrictionEstimator` reports it as ``capped``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

#: The thesis' box (Madsen 2020, ch.6 eq. (27)): ((α1_min, α1_max), (α2_min, α2_max) [N·m·s/rad]).
THESIS_BOUNDS = ((0.4, 1.5), (-0.05, 0.05))


def projection_bounds(coulomb, viscous, coulomb_std=None, viscous_std=None, *, friction_change: float = 1.0,
                      bound_sigmas: float = 3.0, alpha1_bounds: Sequence[float] | None = None,
                      alpha2_bounds: Sequence[float] | None = None) -> np.ndarray:
    """The box (J, 2, 2) = per joint ((α1_min, α1_max), (α2_min, α2_max)) of the module docstring.

    Args:
        coulomb, viscous: identified Fc [N·m] (> 0) and Fv [N·m·s/rad] per joint, (J,).
        coulomb_std, viscous_std: their standard deviations (J,); None or NaN entries count as 0.
        friction_change: c [-], >= 0. bound_sigmas: k [-], >= 0.
        alpha1_bounds, alpha2_bounds: (min, max) for every joint instead of the rule.

    >>> projection_bounds([3.0], [4.0], [0.03], [0.1])[0].round(3).tolist()
    [[0.0, 2.03], [-4.3, 4.3]]
    """
    fc = np.asarray(coulomb, dtype=float).reshape(-1)
    fv = np.broadcast_to(np.asarray(viscous, dtype=float), fc.shape)
    fc_std = _std(coulomb_std, fc.shape)
    fv_std = _std(viscous_std, fc.shape)
    w1 = friction_change + bound_sigmas * np.where(fc > 0, fc_std / np.where(fc > 0, fc, 1.0), 0.0)
    w2 = friction_change * np.abs(fv) + bound_sigmas * fv_std
    (a1_min, a1_max), (a2_min, a2_max) = THESIS_BOUNDS
    box = np.empty((fc.size, 2, 2))
    box[:, 0, 0] = np.minimum(a1_min, np.maximum(0.0, 1.0 - w1))
    box[:, 0, 1] = np.maximum(a1_max, 1.0 + w1)
    box[:, 1, 0] = np.minimum(a2_min, -w2)
    box[:, 1, 1] = np.maximum(a2_max, w2)
    for p, given in enumerate((alpha1_bounds, alpha2_bounds)):
        if given is not None:
            box[:, p] = given
    return box


def _std(value, shape) -> np.ndarray:
    if value is None:
        return np.zeros(shape)
    std = np.broadcast_to(np.asarray(value, dtype=float), shape)
    return np.where(np.isfinite(std), np.abs(std), 0.0)
