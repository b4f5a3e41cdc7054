"""Validators that name the argument they check: each returns the value in the form asked for, or raises a
one-line :class:`~dynid.errors.InputError` naming ``name`` (a core argument, never a CLI flag; the front
ends translate). The check of a setting that takes one of a few names is :func:`dynid.errors.checked_choice`."""

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


def interval(value, name: str, unit: str = '') -> tuple[float, float] | None:
    """``value`` as (min, max) with finite min < max, or None for None (``unit`` is shown in the message)."""
    if value is None:
        return None
    try:
        low, high = (float(v) for v in value)
    except (TypeError, ValueError):
        raise InputError(f'{name} must be two numbers (min, max){unit}, got {value!r}') from None
    if not (math.isfinite(low) and math.isfinite(high) and low < high):
        raise InputError(f'{name} must be finite with min < max{unit}, got {value!r}')
    return low, high


def finite(value, name: str) -> float:
    """A finite number (not a bool) as a float."""
    if isinstance(value, bool):
        raise InputError(f'{name} must be a number, got {value!r}')
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise InputError(f'{name} must be a number, got {value!r}') from None
    if not math.isfinite(x):
        raise InputError(f'{name} must be finite, got {value!r}')
    return x
