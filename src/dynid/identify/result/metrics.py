"""Fit measures used by every fit and validation in dynid, and the metrics of identification results."""

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


def format_number(value: float | None, spec: str) -> str:
    """``value`` formatted with ``spec``, or 'n/a' for None (what could not be scored)."""
    return 'n/a' if value is None else format(value, spec)
