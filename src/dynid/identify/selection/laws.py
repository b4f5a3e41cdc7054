"""Each joint's friction law by the folds (:func:`friction_laws`, the model choice's first step,
:mod:`dynid.identify.steps.choose`): the laws of :data:`dynid.identify.selection.choice.FRICTION_TERMS` tried whole,
then the other optional terms one at a time on the law chosen, joint by joint in two passes with the others fixed,
each judged by the joint's own held-out score; the columns of each term per joint (:class:`TermColumns`).
"""

from __future__ import annotations

import numpy as np

from dynid.identify.selection.choice import (
    ALTERNATIVE_TERMS,
    CHOICE_MARGIN,
    FRICTION_TERMS,
    OPTIONAL_TERMS,
    law_text,
)
from dynid.identify.selection.folds import Folds, columns_of


class TermColumns:
    """The columns of each optional friction term per joint (``of[term][j]``) among the free columns ``free``."""

    def __init__(self, names: list[str], n: int, free: np.ndarray) -> None:
        self.n, self.free = n, free
        self.of = {term: {j: [c for s in symbols for c in columns_of(names, s, j)] for j in range(n)}
                   for term, symbols in OPTIONAL_TERMS.items()}
        self.viscous = {j: columns_of(names, 'Fv', j) for j in range(n)}  # replaced by the power column

    def mask(self, chosen: dict[int, tuple[str, ...]]) -> np.ndarray:
        """The free columns of the laws ``chosen`` (joint -> its optional terms)."""
        m = self.free.copy()
        for j in range(self.n):
            for term in OPTIONAL_TERMS:
                if term not in chosen[j]:
                    m[self.of[term][j]] = False
            if 'power' in chosen[j]:
                m[self.viscous[j]] = False
        return m


def friction_laws(problem, folds: Folds, columns: TermColumns, terms: dict[int, tuple[str, ...]],
                  terms_available: tuple[str, ...], load_excluded: dict[int, str], tried: dict
                  ) -> dict[int, tuple[str, ...]]:
    """Each joint's law (:func:`choose_laws`) from ``terms``, without the load term where it falls; where the folds
    keep it on a joint whose coefficient is beyond the load, chosen again without it on every such joint (the second
    path may reach the others). ``load_excluded``: :func:`dynid.identify.selection.candidates.load_not_tried`'s;
    ``tried`` gets the scores, ``load_not_tried`` and ``load_kept_on``."""
    joint_names = problem.robot.joint_names
    falling = {j: why for j, why in load_excluded.items() if why == 'falling'}
    chosen, tried['friction'] = choose_laws(problem, folds, columns, terms, terms_available, falling)
    kept = [joint_names[j] for j, why in sorted(load_excluded.items()) if why != 'falling' and 'load' in chosen[j]]
    excluded = load_excluded if kept else falling
    if kept:
        chosen, tried['friction'] = choose_laws(problem, folds, columns, terms, terms_available, excluded)
        tried['load_kept_on'] = kept
    if excluded and 'load' in terms_available:
        tried['load_not_tried'] = {joint_names[j]: why for j, why in sorted(excluded.items())}
    return chosen


def choose_laws(problem, folds: Folds, columns: TermColumns, terms: dict[int, tuple[str, ...]],
                terms_available: tuple[str, ...], load_excluded=(),
                ) -> tuple[dict[int, tuple[str, ...]], dict[str, dict[str, float]]]:
    """Each joint's law, joint by joint in two passes (the others fixed), by its own held-out score: the simplest law
    within :data:`CHOICE_MARGIN` of the least (without the load term on the joints of ``load_excluded``). Returns the
    laws and every score tried (joint -> law -> score)."""
    joint_names = problem.robot.joint_names
    options = [()]
    for term in (t for t in FRICTION_TERMS if t in terms_available):
        options += [o + (term,) for o in options]
    options.sort(key=len)
    toggles = [t for t in OPTIONAL_TERMS if t not in FRICTION_TERMS and t in terms_available]
    groups = [(t,) for t in toggles if not any(t in pair for pair in ALTERNATIVE_TERMS)]
    groups += [tuple(t for t in pair if t in toggles) for pair in ALTERNATIVE_TERMS if set(pair) & set(toggles)]
    per_joint: dict[str, dict[str, float]] = {name: {} for name in joint_names}
    terms = dict(terms)
    for _ in range(2):
        changed = False
        for j in range(problem.robot.n):
            if problem.excluded[j] or not any(columns.of[t][j] for t in terms_available):
                continue
            extra = tuple(t for t in terms[j] if t in toggles)  # the other terms as they stand
            tried_j: dict[frozenset, float] = {}

            def score(option: tuple[str, ...], j: int = j, tried_j: dict = tried_j) -> float:
                """Joint j's own held-out score with ``option`` (its law acts on its rows alone)."""
                key = frozenset(option)
                if key not in tried_j:
                    tried_j[key] = float(folds.scores(columns.mask({**terms, j: option}))[j])
                    per_joint[joint_names[j]][law_text(option)] = tried_j[key]
                return tried_j[key]

            allowed = [o for o in options if j not in load_excluded or 'load' not in o]
            scores = {option: score(option + extra) for option in allowed}
            finite = [value for value in scores.values() if np.isfinite(value)]
            if not finite:  # the folds cannot score this joint (too few rows): its default law stays
                continue
            least = min(finite)
            kept = next(o for o in allowed if scores[o] <= least * (1.0 + CHOICE_MARGIN)) + extra
            for group in groups:  # on the law chosen: without, or with the best of the group's terms
                present = [t for t in group if columns.of[t][j]]
                if not present:
                    continue
                plain = tuple(t for t in kept if t not in group)
                best = min(present, key=lambda t, plain=plain: score(plain + (t,)))
                kept = plain + (best,) if score(plain + (best,)) < score(plain) / (1.0 + CHOICE_MARGIN) else plain
            if set(kept) != set(terms[j]):
                changed = True
            terms[j] = kept
        if not changed:
            break
    return terms, per_joint
