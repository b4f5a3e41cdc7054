"""Blocked cross-validation of the model choice: folds of one weighted system, any column subset scored on them.

The rows (sample-major, so a run of rows is a stretch of time) are cut into the prior's folds (contiguous blocks,
:func:`dynid.identify.solve.prior.time_folds`) and each fold is reduced to its R factor once. A candidate model is a
subset S of the columns: since R comes from a QR of [G·W | G·y] over all columns, ‖G·(y − W_S·v)‖² = ‖Qᵀ·G·y − R_S·v‖² +
constant exactly, so every candidate's fold solve (the MAP estimate with the robot file's prior at the weight s
cross-validated for the superset) is a least squares of a few hundred rows, never a refit of the recording. The score
of joint j is Σ_folds ‖y_j − ŷ_j‖²/‖y_j‖² on the held-out fold. The robot file's own model (its links, friction
fitted on the training folds, as ``dynid validate`` predicts it) is scored on the same folds
(:meth:`Folds.robot_file_fold_scores`).
"""

from __future__ import annotations

import numpy as np

from dynid.identify.solve.constrained import consistent_optimum
from dynid.identify.solve.prior import (
    CROSS_VALIDATION_BLOCKS,
    PhysicalLayout,
    ReducedRows,
    cross_validated_prior_std,
    fold_members,
    non_negative_friction,
    robot_file_values,
    time_folds,
)
from dynid.identify.solve.prior_source import PriorSource, RobotFilePrior
from dynid.identify.solve.rows import RowGroups
from dynid.identify.solve.solvers import _robust_scale, robust_weights


def restricted(rows: ReducedRows, columns: np.ndarray) -> ReducedRows:
    """The same rows with only ``columns`` of W (exact: module docstring)."""
    return ReducedRows(rows.r[:, columns], rows.projected, rows.constant, rows.rows)


class Folds:
    """The folds of one weighted system and the prior, solving any column subset (module docstring)."""

    def __init__(self, problem, w, y, joints, weights, held, use_prior: bool, prior_std: float | None,
                 names: list[str] | None = None, groups: RowGroups | None = None,
                 source: PriorSource | None = None):
        n = problem.robot.n
        self.problem, self.n = problem, n
        self.names = names if names is not None else problem.parameter_names()  # of w's columns
        self.rigid_count = len(problem.rigid_names)
        self.fixed = held
        #: the rows reduced per block and joint (:class:`dynid.identify.solve.rows.RowGroups`): other weightings of the
        #: same rows take their folds from them
        self.groups = RowGroups.of(w, y, joints, CROSS_VALIDATION_BLOCKS, problem.robot.n) if groups is None else groups
        #: the blocks each fold holds out (:func:`dynid.identify.solve.prior.fold_members`): other weightings' folds
        self.members = fold_members()
        self.folds, self.data = time_folds(w, y, weights, joints, groups=self.groups)
        #: where the prior comes from (default the robot file); the robot file's own model is scored with its links
        self.source = RobotFilePrior.of(problem.robot) if source is None else source
        self.links = self.source.links
        self.use_prior = use_prior and self.source.pulls()
        self.std = prior_std
        if self.use_prior and self.std is None:
            layout, prior = self.layout(~held)
            self.std = cross_validated_prior_std(layout, [self.fold(f, ~held) for f in self.folds], prior)[0]

    def layout(self, free: np.ndarray):
        problem = self.problem
        layout = PhysicalLayout.of(problem.base.regrouping, self.n, problem.identify_rotor_inertia, self.names,
                                   self.rigid_count, ~free, 9 * len(problem.payload_blocks),
                                   rotor_excess=problem.compensate_rotor,
                                   non_negative=non_negative_friction(problem.candidate.friction))
        return layout, self.source.rows(problem, layout, [name for name, f in zip(self.names, free, strict=True)
                                                          if f])

    @staticmethod
    def fold(fold, free):
        from dynid.identify.solve.prior import Fold

        return Fold(restricted(fold.trained_on, free), restricted(fold.held_out, free),
                    [None if rows is None else restricted(rows, free) for rows in fold.joints], fold.energy)

    def scores(self, free: np.ndarray, trained: list[ReducedRows] | None = None) -> np.ndarray:
        """(n,) held-out Σ_folds ‖e_j‖²/‖y_j‖² of the model with columns ``free`` (NaN: a joint never scored)."""
        return summed(self.fold_scores(free, trained))

    def fold_scores(self, free: np.ndarray, trained: list[ReducedRows] | None = None,
                    consistent: str | None = None) -> np.ndarray:
        """(folds, n) each fold's held-out ‖e_j‖²/‖y_j‖² of the model with columns ``free`` (NaN: not scored);
        ``consistent``: the solver of physical consistency (each fold's estimate the constrained optimum of its
        training rows, :func:`dynid.identify.solve.physical.solve`; +inf on every joint where it misses its optimum)."""
        layout, prior = self.layout(free)
        out = np.full((len(self.folds), self.n), np.nan)
        for k, fold in enumerate(self.folds):
            rows = restricted(trained[k] if trained is not None else fold.trained_on, free)
            reduced = layout.problem(rows, prior, self.std if self.use_prior else None)
            x = consistent_optimum(reduced, consistent)[0] if consistent else reduced.map_estimate()
            if x is None:
                return np.full((len(self.folds), self.n), np.inf)
            v = layout.to_base @ x
            for j, held_out in enumerate(fold.joints):
                if held_out is not None:
                    out[k, j] = restricted(held_out, free).cost(v) / fold.energy[j]
        return out

    def robot_file_fold_scores(self, free: np.ndarray) -> np.ndarray:
        """(folds, n) the same scores of the robot file's own model (friction fitted on each fold's training rows)."""
        layout, _ = self.layout(free)
        out = np.full((len(self.folds), self.n), np.nan)
        for k, fold in enumerate(self.folds):
            v = layout.to_base @ robot_file_values(layout, restricted(fold.trained_on, free), self.links)
            for j, held_out in enumerate(fold.joints):
                if held_out is not None:
                    out[k, j] = restricted(held_out, free).cost(v) / fold.energy[j]
        return out


def summed(per_fold: np.ndarray) -> np.ndarray:
    """(n,) Σ over the folds that scored each joint (NaN: none did)."""
    counted = np.isfinite(per_fold).any(axis=0)
    return np.where(counted, np.nansum(per_fold, axis=0), np.nan)


def robust_row_weights(w: np.ndarray, y: np.ndarray, joints: np.ndarray, function: str,
                       iterations: int = 8, tolerance: float = 1e-4, columns: np.ndarray | None = None
                       ) -> np.ndarray | None:
    """IRLS's row weights √ψ(r/s_j)/s_j (:func:`dynid.identify.solve.solvers.irls`) of all rows, from the ordinary LS,
    without its statistics (the folds only need the weights); None where the normal equations fail. The folds'
    IRLS estimates are then the weighted MAP of their training rows (the weights' residuals saw every row: a
    small leak, for one IRLS instead of one per fold). ``columns``: W's columns taken (a mask; default all), read a
    few thousand rows at a time (no copy of W)."""
    n = int(joints.max()) + 1
    taken = np.arange(w.shape[1]) if columns is None else np.flatnonzero(columns)
    weights = np.ones(len(y))
    values = full = None
    for _ in range(iterations):
        new = normal_equations_solution(w, y, weights, taken)
        if new is None:
            return None
        converged = values is not None and np.linalg.norm(new - values) <= tolerance * np.linalg.norm(new)
        values = new
        full = np.zeros(w.shape[1])
        full[taken] = values
        residual = y - w @ full
        scale = np.array([_robust_scale(residual[joints == j]) for j in range(n)])
        weights = np.sqrt(robust_weights(residual / scale[joints], function)) / scale[joints]
        if converged:
            break
    return weights


#: Rows of W read at a time by :func:`normal_equations_solution`.
_NORMAL_ROWS = 8192


def normal_equations_solution(w: np.ndarray, y: np.ndarray, weights: np.ndarray, taken: np.ndarray
                              ) -> np.ndarray | None:
    """The weighted least squares of W's columns ``taken`` by Cholesky of the column-equilibrated normal equations
    (as :func:`dynid.identify.solve.solvers._solve_normal_equations`), the Gram matrix summed over pieces of rows: no
    copy of W; None where it is not positive definite."""
    import scipy.linalg

    gram, rhs = np.zeros((len(taken), len(taken))), np.zeros(len(taken))
    for start in range(0, len(y), _NORMAL_ROWS):
        rows = slice(start, start + _NORMAL_ROWS)
        a = w[rows][:, taken] * weights[rows, None]
        gram += a.T @ a
        rhs += a.T @ (y[rows] * weights[rows])
    norms = np.sqrt(np.diag(gram))
    if np.any(norms == 0):
        return None
    try:
        factor = scipy.linalg.cho_factor(gram / np.outer(norms, norms), check_finite=False)
    except np.linalg.LinAlgError:
        return None
    return scipy.linalg.cho_solve(factor, rhs / norms, check_finite=False) / norms


def columns_of(names: list[str], symbol: str, joint: int) -> list[int]:
    name = f'{symbol}_{joint + 1}'
    return [names.index(name)] if name in names else []
