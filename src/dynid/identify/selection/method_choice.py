"""The method chosen by blocked cross-validation where the caller left it open: the start method (WLS) against every
registered method that gives the choice its row weights (:mod:`dynid.identify.methods`: IRLS's robust weights), each
scored by the same MAP on each fold's training rows (:mod:`dynid.identify.selection.folds`)."""

from __future__ import annotations

import numpy as np

from dynid.identify.registry import START_METHOD, identification_methods
from dynid.identify.selection.choice import METHOD_MARGIN
from dynid.identify.selection.folds import Folds
from dynid.identify.solve.prior import CROSS_VALIDATION_BLOCKS, ReducedRows
from dynid.identify.solve.rows import RowGroups


def method_by_folds(folds: Folds, w: np.ndarray, y: np.ndarray, joints: np.ndarray, chosen: np.ndarray,
                   per_fold: np.ndarray, weight_function: str
                   ) -> tuple[str, np.ndarray, dict[str, float], list[ReducedRows] | None]:
    """The method with the laws ``chosen``: the start method (WLS, the folds' own weights) against each registered
    method with choice weights (IRLS: its robust row weights of one reweighting of all rows), the folds' training rows
    reduced with those weights; the least summed held-out score is kept where it is lower than the start method's by
    more than :data:`METHOD_MARGIN`. ``per_fold``: the start method's (folds, n) scores. Returns the method, its
    (folds, n) scores, every sum with the one chosen (``chosen``) and, where another method is kept, the folds'
    training rows with its weights."""
    tried = {START_METHOD: float(np.nansum(per_fold))}
    best, best_scores, best_trained = START_METHOD, per_fold, None
    for method in identification_methods():
        if method.choice_weights is None or method.name == START_METHOD:
            continue
        trained = _trained_rows(folds, w, y, joints, method.choice_weights(w, y, joints, chosen, weight_function))
        if not trained:  # its weighting fails on these rows: not a candidate here
            tried[method.name] = float('inf')
            continue
        scores = folds.fold_scores(chosen, trained)
        tried[method.name] = float(np.nansum(scores))
        if np.nansum(scores) < tried[START_METHOD] * (1.0 - METHOD_MARGIN) and \
                (best == START_METHOD or tried[method.name] < tried[best]):
            best, best_scores, best_trained = method.name, scores, trained
    return best, best_scores, {**tried, 'chosen': best}, best_trained


def _trained_rows(folds: Folds, w, y, joints, weights: np.ndarray | None) -> list[ReducedRows] | None:
    """Each fold's training rows with the row ``weights``, reduced as time_folds does (None without weights)."""
    if weights is None:
        return None
    groups = RowGroups.of(w, y, joints, CROSS_VALIDATION_BLOCKS, folds.n, row_weights=weights)
    reduced = [ReducedRows.of_factor(groups.stacked(blocks=members), groups.count(members))
               for members in folds.members]
    return [ReducedRows.stack([r for i, r in enumerate(reduced) if i != k]) for k in range(len(reduced))]
