"""Recursive estimators: RLS with directional forgetting, joint stiffness, adaptive E-GMS friction."""

from dynid.estimate.friction import AdaptiveFrictionEstimate, AdaptiveFrictionEstimator
from dynid.estimate.rls import DirectionalForgettingRLS, ExponentialForgettingRLS
from dynid.estimate.stiffness import StiffnessEstimate, StiffnessEstimator, stiffness_curve_fit

__all__ = ['AdaptiveFrictionEstimate', 'AdaptiveFrictionEstimator', 'DirectionalForgettingRLS',
           'ExponentialForgettingRLS', 'StiffnessEstimate', 'StiffnessEstimator', 'stiffness_curve_fit']
