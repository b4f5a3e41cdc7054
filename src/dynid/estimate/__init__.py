"""Recursive estimators: RLS with directional forgetting, joint stiffness, adaptive E-GMS friction; their replay."""

from dynid.estimate.friction import AdaptiveFrictionEstimate, AdaptiveFrictionEstimator
from dynid.estimate.replay import EstimationHistory, EstimationSettings, Estimators, build_estimators, estimate
from dynid.estimate.rls import DirectionalForgettingRLS, ExponentialForgettingRLS
from dynid.estimate.stiffness import StiffnessEstimate, StiffnessEstimator, stiffness_curve_fit

__all__ = ['AdaptiveFrictionEstimate', 'AdaptiveFrictionEstimator', 'DirectionalForgettingRLS', 'EstimationHistory',
           'EstimationSettings', 'Estimators', 'ExponentialForgettingRLS', 'StiffnessEstimate', 'StiffnessEstimator',
           'build_estimators', 'estimate', 'stiffness_curve_fit']
