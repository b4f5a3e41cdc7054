"""Recursive estimators: RLS with directional forgetting, joint stiffness, adaptive E-GMS (planned)."""
