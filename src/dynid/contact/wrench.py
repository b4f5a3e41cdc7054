"""The wrench at the flange from the external joint torque: weighted least squares over the Jacobian transpose.

A contact at the tool puts a wrench w = (f, m) [N, N·m] on the flange (in the flange frame, about its origin); the
joints feel τ_ext = J(q)ᵀ·w with J the flange's 6×n Jacobian in its own frame (pinocchio's LOCAL). With τ̂_ext and
its σ per joint, w is the weighted least-squares solution and its covariance (Haddadin et al. 2017, §4.3; the
weights 1/σ²)::

    ŵ = (J·Σ⁻¹·Jᵀ)⁻¹·J·Σ⁻¹·τ̂_ext,        cov(ŵ) = (J·Σ⁻¹·Jᵀ)⁻¹,        Σ = diag(σ²)

On six joints J is square: ŵ = J⁻ᵀ·τ̂_ext, the weights change only cov(ŵ), and each joint's error passes into ŵ
whole. It needs six joints or more (a wrench has six components), and is refused at a singular pose: where the smallest
singular value of J with its angular rows times :data:`LEVER_M` (a moment of f·L weighs as the force f) is
below :data:`SINGULAR_LIMIT` of its largest, the wrench in some direction reaches no joint and cannot be told.
"""

from __future__ import annotations

import numpy as np
import pinocchio as pin

from dynid.errors import InputError
from dynid.model.robot import RobotModel

#: [m] the lever that puts a moment's rows on a force's scale in the singularity test.
LEVER_M = 0.1
#: smallest / largest singular value of the scaled Jacobian below which the pose is singular for the wrench.
SINGULAR_LIMIT = 0.02


class FlangeWrench:
    """ŵ and its σ from τ̂_ext (module docstring). InputError when ``robot`` has fewer than six joints."""

    def __init__(self, robot: RobotModel) -> None:
        if robot.n < 6:
            raise InputError(f'the flange wrench needs six joints or more (a wrench has six components); '
                             f'{robot.name!r} has {robot.n}')
        self.robot = robot
        self.model = pin.Model(robot.pinocchio_model)
        self.data = self.model.createData()
        self.joint = self.model.njoints - 1
        self.placement = robot.flange_placement

    def jacobians(self, q: np.ndarray) -> np.ndarray:
        """(N, 6, n) flange Jacobians in the flange frame at positions (N, n) [rad]."""
        out = np.empty((len(q), 6, self.robot.n))
        model, data, joint, placement = self.model, self.data, self.joint, self.placement
        motion = placement.inverse().toActionMatrix()
        for k in range(len(q)):
            jacobian = pin.computeJointJacobian(model, data, self.robot.configuration_vector(q[k]), joint)
            out[k] = motion @ jacobian
        return out

    def estimate(self, q: np.ndarray, external: np.ndarray, sigma: np.ndarray
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(ŵ (N, 6) [N, N·m], its σ (N, 6), singular (N,) bool) at samples (N, n); NaN where singular."""
        jacobian = self.jacobians(q)
        scaled = jacobian.copy()
        scaled[:, 3:] *= LEVER_M
        values = np.linalg.svd(scaled, compute_uv=False)
        singular = values[:, -1] < SINGULAR_LIMIT * values[:, 0]
        weight = 1.0 / np.maximum(sigma, 1e-12) ** 2
        normal = np.einsum('kin,kn,kjn->kij', jacobian, weight, jacobian)
        right = np.einsum('kin,kn,kn->ki', jacobian, weight, external)
        wrench = np.full((len(q), 6), np.nan)
        std = np.full((len(q), 6), np.nan)
        ok = ~singular
        if ok.any():
            covariance = np.linalg.inv(normal[ok])
            wrench[ok] = np.einsum('kij,kj->ki', covariance, right[ok])
            std[ok] = np.sqrt(np.maximum(np.einsum('kii->ki', covariance), 0.0))
        return wrench, std, singular
