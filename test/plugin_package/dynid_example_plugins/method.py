"""Ridge least squares of the IDIM: χ̂ = (WᵀW + λI)⁻¹Wᵀy with λ = 10⁻⁹·tr(WᵀW)/p (Hoerl & Kennard 1970), every row
weighted alike; its covariance σ̂²·A⁻¹WᵀWA⁻¹, A = WᵀW + λI."""

import numpy as np

from dynid.identify import Estimate
from dynid.identify.registry import IdentificationMethod

#: λ relative to the mean diagonal of WᵀW
RIDGE = 1e-9


def solve(w, y, joints, names, *, options, joint_names, start=None, pooled_short=False, groups=None) -> Estimate:
    w = np.asarray(w, dtype=float)
    normal = w.T @ w
    inverse = np.linalg.inv(normal + RIDGE * np.trace(normal) / len(names) * np.eye(len(names)))
    values = inverse @ (w.T @ y)
    residual = y - w @ values
    variance = residual @ residual / max(1, len(y) - len(names))
    sigma = np.array([np.sqrt(np.mean(residual[joints == j] ** 2)) for j in range(len(joint_names))])
    return Estimate(list(names), values, variance * inverse @ normal @ inverse, residual, sigma, np.ones(len(y)),
                    float(np.linalg.cond(w)))


METHOD = IdentificationMethod(
    name='ridge', description='ridge least squares, every row weighted alike', solve=solve,
    covariance='C = σ̂²·A⁻¹WᵀWA⁻¹, A = WᵀW + λI', physical=True)
