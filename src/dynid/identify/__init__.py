"""Batch inverse-dynamic identification (IDIM): pipeline, solvers, statistics, reports.

Available now: :mod:`dynid.identify.metrics` (fit measures shared by all fits). The pipeline and
solvers arrive with the identification issue.
"""
