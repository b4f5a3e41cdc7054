"""Recursive estimators: RLS with directional forgetting, joint stiffness, adaptive E-GMS (planned)."""

from dynid.estimate.rls import DirectionalForgettingRLS, ExponentialForgettingRLS

__all__ = ['DirectionalForgettingRLS', 'ExponentialForgettingRLS']
