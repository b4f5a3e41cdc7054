"""Checks of the arrays the estimators take (one-line InputError naming the argument)."""

from __future__ import annotations

import math

import numpy as np

from dynid.errors import InputError


def per_joint(value, n: int, name: str) -> np.ndarray:
    """A finite scalar or one value per joint, as (n,)."""
    try:
        array = np.asarray(value, dtype=float)
        out = np.broadcast_to(array, (n,)).copy() if array.ndim <= 1 else None
    except (TypeError, ValueError):
        out = None
    if out is None or not np.all(np.isfinite(out)):
        raise InputError(f'{name} must be a finite scalar or one value per joint ({n}), got {value!r}')
    return out


def batch(value, name: str, width: int, n: int | None = None) -> np.ndarray:
    """A batch (N, width) of samples (N given or not); a 1-D array is one column when width is 1."""
    x = np.asarray(value, dtype=float)
    if x.ndim == 1 and width == 1 and (n is None or x.shape[0] == n):
        x = x[:, None]
    if x.ndim != 2 or x.shape[1] != width or (n is not None and x.shape[0] != n):
        raise InputError(f'{name} must have shape ({"N" if n is None else n}, {width}), got {x.shape}')
    return x


def positive(value, name: str) -> float:
    """A finite number > 0 as a float."""
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise InputError(f'{name} must be a number > 0, got {value!r}') from None
    if not (math.isfinite(x) and x > 0):
        raise InputError(f'{name} must be finite and > 0, got {value!r}')
    return x
