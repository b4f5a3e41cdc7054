"""Fit measures used by every fit and validation in dynid, and the metrics of identification results.

A model whose torque on some joint goes beyond :data:`FAILED_MODEL_FACTOR` times what the arm can produce there (the
joint's effort limit from the robot file; where the file gives none, the largest torque measured on any joint) fails
on the motion (:func:`failed_model`): its RMSE and fit are no figures of the arm, and the front ends name the failure
instead of printing them.
"""

from __future__ import annotations

import numpy as np


def nrmse_fit(measured: np.ndarray, predicted: np.ndarray, axis: int | None = None) -> np.ndarray:
    """Normalized-RMSE fit in percent: 100·(1 − ‖y − ŷ‖/‖y − ȳ‖) (thesis eq. (15), (P1-9)).

    100 % is a perfect fit, 0 % is as good as the mean of y, and it can be negative. Over all
    elements (``axis=None``) or per column (``axis=0``). A constant y gives −inf unless ŷ = y.
    """
    y = np.asarray(measured, dtype=float)
    error = np.linalg.norm(y - np.asarray(predicted, dtype=float), axis=axis)
    spread = np.linalg.norm(y - np.mean(y, axis=axis, keepdims=axis is not None), axis=axis)
    with np.errstate(divide='ignore', invalid='ignore'):
        ratio = np.where(spread > 0, error / np.where(spread > 0, spread, 1.0),
                         np.where(error > 0, np.inf, 0.0))
    return 100.0 * (1.0 - ratio)


def rms(values: np.ndarray, axis: int | None = None) -> np.ndarray:
    """Root mean square."""
    return np.sqrt(np.mean(np.square(values), axis=axis))


def _zero_spread(values: np.ndarray) -> bool:
    """True when ``values`` are constant up to rounding (an NRMSE fit would divide by ~0)."""
    spread = float(np.linalg.norm(values - np.mean(values)))
    return spread <= 1e-12 * max(float(np.linalg.norm(values)), 1e-300)


def joint_metrics(measured: np.ndarray, predicted: np.ndarray) -> tuple[dict, str | None]:
    """RMSE [N·m], NRMSE fit [%] and row count of one joint's equations, and a warning or None.

    Nothing is claimed for what cannot be scored: no rows give RMSE and fit None (n/a); a measured
    torque without variance (a constant, e.g. a joint held still without noise) gives fit None.
    """
    rows = int(len(measured))
    if rows == 0:
        return ({'rmse': None, 'nrmse_fit_percent': None, 'rows': 0},
                'no equations to score (every row was dropped, e.g. the joint stays below the stiction velocity); '
                'RMSE and NRMSE fit are n/a')
    rmse = float(rms(measured - predicted))
    if _zero_spread(measured):
        return ({'rmse': rmse, 'nrmse_fit_percent': None, 'rows': rows},
                f'the measured torque is constant over its {rows} rows; NRMSE fit is n/a')
    return {'rmse': rmse, 'nrmse_fit_percent': float(nrmse_fit(measured, predicted)), 'rows': rows}, None


#: a model predicting more than this many times a joint's effort limit (or, without one, the largest measured torque)
#: fails on the motion (module docstring); good models stay below 1.3 on the test fixtures and the twin's logs
FAILED_MODEL_FACTOR = 10.0


def failed_model(predicted: np.ndarray, joints: np.ndarray, joint_names, effort_limits, measured: np.ndarray
                 ) -> dict | None:
    """The joint where ``predicted`` goes furthest beyond :data:`FAILED_MODEL_FACTOR` times what the arm can produce
    (module docstring), as {'joint', 'peak' [N·m], 'bound' [N·m], 'bound_of'}; None where the model stays within it
    on every joint. ``effort_limits``: (n,) [N·m], inf or ≤ 0 where the robot file gives none; a non-finite
    prediction fails whatever the bound."""
    predicted, measured = np.asarray(predicted, dtype=float), np.asarray(measured, dtype=float)
    largest = float(np.max(np.abs(measured))) if measured.size else 0.0
    worst, worst_ratio = None, 1.0
    for j, name in enumerate(joint_names):
        rows = np.asarray(joints) == j
        if not rows.any():
            continue
        limit = float(effort_limits[j])
        bound, bound_of = (limit, 'effort limit') if np.isfinite(limit) and limit > 0 else \
            (largest, 'largest measured torque')
        peak = float(np.max(np.abs(predicted[rows])))
        ratio = peak / (FAILED_MODEL_FACTOR * bound) if bound > 0 and np.isfinite(peak) else np.inf
        if ratio > worst_ratio:
            worst, worst_ratio = {'joint': name, 'peak': peak, 'bound': bound, 'bound_of': bound_of}, ratio
    return worst


def failed_text(failed: dict) -> str:
    """:func:`failed_model`'s finding in words: 'fails on this motion: predicts up to … on J, its effort limit …'."""
    return (f'fails on this motion: predicts up to {failed["peak"]:.3g} N·m on {failed["joint"]}, '
            f'{"its" if failed["bound_of"] == "effort limit" else "the"} {failed["bound_of"]} '
            f'{failed["bound"]:.3g} N·m (more than {FAILED_MODEL_FACTOR:g} times): its RMSE and fit are not figures '
            f'of the arm')


def equation_metrics(measured: np.ndarray, predicted: np.ndarray, joints: np.ndarray, joint_names,
                     left_out=()) -> dict:
    """Per joint RMSE [N·m], NRMSE fit [%] and the rows scored; over all rows the relative residual
    ‖y − ŷ‖/‖y‖, the RMSE and the row count.

    What cannot be scored is None (YAML null, "n/a" for people), never NaN, and each such joint adds
    one line to ``warnings`` (present only when there is one); ``scored_joints`` counts the joints
    with a fit. A problem with no rows at all scores nothing. The joints named in ``left_out`` (their
    equations left out of the fit, ``exclude_joints``) are marked ``left_out`` (not scored; no warning: nothing
    is wrong with them).
    """
    measured, predicted = np.asarray(measured, dtype=float), np.asarray(predicted, dtype=float)
    per_joint, warnings = {}, []
    for j, name in enumerate(joint_names):
        rows = joints == j
        per_joint[name], warning = joint_metrics(measured[rows], predicted[rows])
        if name in left_out:
            per_joint[name]['left_out'] = True
            warning = None  # the user's choice, not a fault of the data: said on the joint's line, no warning
        if warning:
            warnings.append(f'{name}: {warning}')
    scale = float(np.linalg.norm(measured))
    metrics = {
        'relative_residual': float(np.linalg.norm(measured - predicted) / scale) if scale > 0 else None,
        'rmse': float(rms(measured - predicted)) if len(measured) else None,
        'rows': int(len(measured)),
        'scored_joints': sum(m['nrmse_fit_percent'] is not None for m in per_joint.values()),
        'joints': per_joint,
    }
    if warnings:
        metrics['warnings'] = warnings
    return metrics
