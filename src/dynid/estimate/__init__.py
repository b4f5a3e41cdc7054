"""Recursive estimators: RLS with directional forgetting, joint stiffness, adaptive E-GMS (planned)."""

from dynid.estimate.rls import DirectionalForgettingRLS, ExponentialForgettingRLS
from dynid.estimate.stiffness import StiffnessEstimate, StiffnessEstimator, stiffness_curve_fit

__all__ = ['DirectionalForgettingRLS', 'ExponentialForgettingRLS', 'StiffnessEstimate', 'StiffnessEstimator',
           'stiffness_curve_fit']
