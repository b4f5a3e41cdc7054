"""Fit measures used by every fit and validation in dynid."""

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
