"""Batch inverse-dynamic identification (IDIM): pipeline, solvers, statistics, reports (planned)."""
