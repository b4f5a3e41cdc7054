"""Common shape of friction terms that are linear in (some of) their parameters.

A term computes one **feature** array per parameter symbol from its signals (velocity, load torque,
temperature, ...); its value is Σ_t feature_t · parameter_t. Features have the shape of the signals,
(..., n) with joints last, and parameters broadcast over joints (a scalar, or one value per joint).
The same features, laid out per joint (:func:`dynid.model.joint_terms.per_joint_columns`), are the
regressor columns that identification stacks beside the rigid-body regressor.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from dynid.errors import InputError
from dynid.model.joint_terms import per_joint_columns, per_joint_names


def sgn(x: np.ndarray) -> np.ndarray:
    """Sign with sgn(0) = 0 (the seeds' convention)."""
    return np.sign(x)


def as_parameter(value, name: str) -> np.ndarray:
    """A parameter as a float array (scalar or per joint), refusing NaN and infinities."""
    try:
        a = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise InputError(f'{name} must be a number or one number per joint, got {value!r}') from None
    if a.ndim > 1 or not np.all(np.isfinite(a)):
        raise InputError(f'{name} must be finite, scalar or one value per joint, got {value!r}')
    return a


class LinearFrictionTerm:
    """Base of terms whose value is Σ_t features_t · parameters_t (subclasses set ``symbols``)."""

    #: Parameter symbols, in the order of :meth:`features`.
    symbols: tuple[str, ...] = ()

    def _coerce_parameters(self, *extra: str) -> None:
        """Turn the symbol fields (and ``extra`` ones) into checked float arrays (frozen dataclasses)."""
        for name in (*self.symbols, *extra):
            object.__setattr__(self, name, as_parameter(getattr(self, name), name))

    def parameters(self) -> list[np.ndarray]:
        """Parameter values in symbol order (scalars or per-joint arrays)."""
        return [getattr(self, symbol) for symbol in self.symbols]

    def features(self, *signals: np.ndarray) -> list[np.ndarray]:  # pragma: no cover - abstract
        raise NotImplementedError

    def evaluate(self, *signals: np.ndarray) -> np.ndarray:
        """Friction torque [N·m] for the signals, shape of the signals."""
        features = self.features(*signals)
        return sum(f * p for f, p in zip(features, self.parameters(), strict=True))

    def regressor(self, *signals: np.ndarray) -> np.ndarray:
        """Per-joint regressor columns (N·n, k·n) for (N, n) signals, named by :meth:`parameter_names`."""
        return per_joint_columns([np.atleast_2d(f) for f in self.features(*signals)])

    @classmethod
    def parameter_names(cls, n_joints: int) -> list[str]:
        """Column names of :meth:`regressor`: ``<symbol>_<joint>``, joints from 1."""
        return per_joint_names(cls.symbols, n_joints)

    @classmethod
    def from_vector(cls, values: Sequence[float], **fixed) -> LinearFrictionTerm:
        """The term with its linear parameters taken from ``values`` (symbol order), others ``fixed``."""
        if len(values) != len(cls.symbols):
            raise InputError(f'{cls.__name__} needs {len(cls.symbols)} values {cls.symbols}, '
                             f'got {len(values)}')
        return cls(**dict(zip(cls.symbols, values, strict=True)), **fixed)
