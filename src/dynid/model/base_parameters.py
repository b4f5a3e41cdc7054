"""Base parameters: the identifiable linear combinations of standard parameters.

Numerical method (Gautier 1990, as used by the IDIM literature): stack the regressor W over random
states, find its rank r by QR with column pivoting, then choose r independent columns
(**base columns**) and express every other column as a combination of them, W_d = W_b·β. Then

    W·χ = W_b·(χ_b + β·χ_d) = W_b·χ_base,   χ_base = K·χ,   K[:, b] = I, K[:, d] = β.

Which r columns are kept decides how the base parameters read. Columns are taken greedily in
their given order (a column is kept when it is not in the span of the columns kept before it),
which for the link-by-link standard order reproduces the regrouping of Gautier & Khalil: later
links' parameters fold into earlier ones (e.g. ``Izz_1 + Iyy_2 + ...``), as in thesis ch.5 Table 3.

**Tolerance.** Columns are scaled to unit norm first. A column counts as independent when its
distance from the span of the others exceeds ``tolerance`` (default 1e-8, relative to the largest
diagonal of R for the rank). With ~100 random samples the independent columns of the test robots
sit above 1e-4 and the dependent ones below 1e-12, so the result does not hinge on the value.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

#: Default relative tolerance of the rank decisions (see the module docstring).
DEFAULT_TOLERANCE = 1e-8
#: Regrouping coefficients below this (in unit-norm column scaling) are set to exactly zero.
COEFFICIENT_CUTOFF = 1e-9


@dataclass(frozen=True)
class BaseParameters:
    """Base parameter set of a regressor.

    Attributes:
        standard_names: names of the p standard parameters (regressor columns).
        indices: the r standard columns kept as base columns, increasing.
        regrouping: K (r×p), base parameters = K @ standard parameters.
        tolerance: relative rank tolerance used.
    """

    standard_names: tuple[str, ...]
    indices: np.ndarray
    regrouping: np.ndarray
    tolerance: float

    @property
    def rank(self) -> int:
        """Number of base parameters."""
        return len(self.indices)

    @property
    def names(self) -> tuple[str, ...]:
        """Short name of each base parameter: its base column's name, + ``R`` if others fold into it."""
        return tuple(
            self.standard_names[j] + ('R' if np.count_nonzero(row) > 1 else '')
            for j, row in zip(self.indices, self.regrouping, strict=True)
        )

    @property
    def expressions(self) -> tuple[str, ...]:
        """Each base parameter written as its linear combination of standard parameters."""
        return tuple(_format_combination(row, self.standard_names) for row in self.regrouping)

    @property
    def unidentifiable(self) -> tuple[str, ...]:
        """Standard parameters that do not enter any base parameter (no effect on the torques)."""
        absent = ~np.any(self.regrouping != 0.0, axis=0)
        return tuple(name for name, a in zip(self.standard_names, absent, strict=True) if a)

    def columns(self, regressor: np.ndarray) -> np.ndarray:
        """Base regressor W_b: the base columns of a regressor with the standard column layout."""
        return regressor[:, self.indices]

    def from_standard(self, standard: np.ndarray) -> np.ndarray:
        """Base parameter values from standard parameter values (last axis of length p)."""
        return np.asarray(standard) @ self.regrouping.T

    def to_dict(self) -> dict:
        """Plain-data description (names, expressions, column indices) for YAML or JSON."""
        return {
            'count': self.rank,
            'tolerance': self.tolerance,
            'parameters': [
                {'name': n, 'expression': e, 'column': int(j)}
                for n, e, j in zip(self.names, self.expressions, self.indices, strict=True)
            ],
            'unidentifiable': list(self.unidentifiable),
        }


def _format_combination(row: np.ndarray, names: Sequence[str]) -> str:
    terms = []
    for coefficient, name in zip(row, names, strict=True):
        if coefficient == 0.0:
            continue
        magnitude = abs(coefficient)
        text = name if np.isclose(magnitude, 1.0, rtol=1e-9, atol=0.0) else f'{magnitude:.6g}*{name}'
        sign = '-' if coefficient < 0 else '+'
        terms.append((sign, text))
    if not terms:
        return '0'
    first_sign, first = terms[0]
    return ('-' if first_sign == '-' else '') + first + ''.join(f' {s} {t}' for s, t in terms[1:])


def compute_base_parameters(
    regressor: np.ndarray,
    names: Sequence[str],
    tolerance: float = DEFAULT_TOLERANCE,
) -> BaseParameters:
    """Base parameters of a stacked regressor W (rows: samples × joints; columns: parameters).

    Args:
        regressor: W evaluated on enough random, exciting states that its rank is generic.
        names: one name per column of W.
        tolerance: relative rank tolerance (module docstring).

    Returns:
        The base parameter set, with base columns chosen greedily in column order.
    """
    w = np.asarray(regressor, dtype=float)
    if w.ndim != 2 or w.shape[1] != len(names):
        raise ValueError(f'regressor of shape {w.shape} does not match {len(names)} parameter names')
    if not np.all(np.isfinite(w)):
        raise ValueError('regressor holds NaN or infinite values')
    p = w.shape[1]
    norms = np.linalg.norm(w, axis=0)
    nonzero = np.flatnonzero(norms > tolerance * max(norms.max(), np.finfo(float).tiny))
    wn = w[:, nonzero] / norms[nonzero]

    import scipy.linalg  # here: a fifth of a second of import that loading a robot (its base found later) skips

    # Rank from QR with column pivoting (robust), then the greedy choice in column order.
    _, r_pivoted, pivots = scipy.linalg.qr(wn, mode='economic', pivoting=True)
    diagonal = np.abs(np.diag(r_pivoted))
    rank = int(np.count_nonzero(diagonal > tolerance * diagonal[0])) if diagonal.size else 0
    r_ordered = scipy.linalg.qr(wn, mode='r')[0]
    keep = np.abs(np.diag(r_ordered)) > tolerance
    if np.count_nonzero(keep) != rank:
        # Greedy order gave a different count (ill-conditioned ordering): use the pivoted choice.
        keep = np.zeros(len(nonzero), dtype=bool)
        keep[pivots[:rank]] = True

    base_local, dependent_local = np.flatnonzero(keep), np.flatnonzero(~keep)
    beta_scaled = np.linalg.lstsq(wn[:, base_local], wn[:, dependent_local], rcond=None)[0]
    residual = wn[:, dependent_local] - wn[:, base_local] @ beta_scaled
    if residual.size and np.abs(residual).max() > 1e3 * tolerance:
        raise ArithmeticError('dependent regressor columns are not reproduced by the base columns')
    beta_scaled[np.abs(beta_scaled) < COEFFICIENT_CUTOFF] = 0.0

    base, dependent = nonzero[base_local], nonzero[dependent_local]
    regrouping = np.zeros((rank, p))
    regrouping[np.arange(rank), base] = 1.0
    # Undo the column scaling: W_d = W_b·β with β = diag(1/|W_b|)·β̃·diag(|W_d|).
    regrouping[:, dependent] = beta_scaled * norms[dependent][None, :] / norms[base][:, None]
    return BaseParameters(tuple(names), base, regrouping, tolerance)
