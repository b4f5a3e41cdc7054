"""Filters and differentiation: offline zero-phase and online causal with aligned delays (planned)."""
