"""I-IRLS (Li et al. 2024): IRLS on the comprehensive friction model (eq. (3)) with the load torque τ_out updated from
the estimate (load loop) and the viscous exponent α_j re-fitted per joint (friction loop) until they settle."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import numpy as np

from dynid.blas import one_blas_thread
from dynid.identify.choices import WEIGHT_FUNCTION
from dynid.identify.methods.irls import solve
from dynid.identify.registry import IdentificationMethod


def fit(problem, options, progress: Callable[[str], None], rigid_start=None):
    """IRLS with the load loop, alternating with the friction loop re-fitting the exponents α_j until they change by
    less than 0.01; then the standard-parameter step (the robot file's prior; physical consistency is not checked,
    for the reason ``consistency_note`` gives)."""
    from dynid.identify.steps.fit import fit_exponents, load_loop, standard_solved

    exponents = np.full(problem.robot.n, problem.spec.exponent)
    # One BLAS thread for the whole loop (tall products, the exponent search's projections and its filter): two
    # threads on a busy 2-core machine cost more CPU time than one.
    with one_blas_thread():
        estimate, w, y, joints = load_loop(problem, 'irls', options, exponents, progress)
        for outer in range(options.load_iterations):
            updated = fit_exponents(problem, estimate, exponents, options)
            change = np.abs(updated - exponents).max()
            exponents = updated
            estimate, w, y, joints = load_loop(problem, 'irls', options, exponents, progress)
            progress(f'I-IRLS friction loop {outer + 1}: exponents {np.round(exponents, 3).tolist()}')
            if change < 1e-2:
                break
    estimate = dataclasses.replace(estimate, method='iirls')
    return standard_solved(problem, options, estimate, w, y, joints, exponents, progress)


METHOD = IdentificationMethod(
    name='iirls', description='Li et al. 2024: IRLS on the comprehensive friction model with the load and friction '
                              'loops', solve=solve,
    covariance='C = σ̂_w²·(WᵀGW)⁻¹ of the last IRLS, at the exponents found', friction_default='comprehensive',
    friction_required=True, consistency_note='re-fits its friction exponents on τ_out',
    friction_reason='I-IRLS identifies the comprehensive friction model (Li et al. 2024, eq. (3))',
    options=('weight_constant', 'exponent_bounds'), fit=fit, method_options=(WEIGHT_FUNCTION,))
