"""What the identifying recording alone says about physical consistency (``bench_public.py --motions-only
--evidence``): the floor of issue 85's "the default chosen for another motion".

For each motion row, the default identification's own system (its equations, row weights and prior, captured from
the ``dynid identify`` run the row makes: :func:`captured`) is cut into folds two ways, and each fold's training rows
are solved twice: the unconstrained MAP estimate (the robot file's prior at the weight the identification
cross-validated) and its physically consistent optimum (:class:`dynid.identify.selection.folds.Folds`, as the model
choice solves them):

- ``time``: the choice's own folds, contiguous blocks in time (4 folds of 8 blocks);
- ``region``: the samples clustered in (velocity, torque) per joint, each normalized (k-means, 8 clusters, seeded),
  each cluster held out in turn: the model trained where the rest of the recording goes, scored where it does not.

``ratio``: the consistent estimate's held-out ‖e‖² over the unconstrained one's, each joint's summed over the folds
and divided by its energy over every held-out row, summed over the joints (below 1: the folds favour consistency).
Beside it the row's outcome on the other motion, ``--physical``'s pooled error over the defaults'; the evidence
"points the right way" where both are on the same side of 1 (rows within 2 % on the other motion are ties).
"""

from __future__ import annotations

import contextlib

import numpy as np

#: Clusters of the region folds (one held out per fold).
REGIONS = 8
#: Within this of 1 on the other motion, a row is a tie: no side to point to.
TIE = 0.02


@contextlib.contextmanager
def captured(active: bool = True):
    """Within the block, the final (problem, fit) of each identification run in this process is appended to the
    list it yields (the pipeline's ``load_terms_held`` step wrapped); ``active`` False: nothing kept."""
    from dynid.identify.steps import run

    found, original = [], run.load_terms_held
    if not active:
        yield found
        return

    def wrapped(*args, **kwargs):
        problem, fitted = original(*args, **kwargs)
        found.append((problem, fitted))
        return problem, fitted

    run.load_terms_held = wrapped
    try:
        yield found
    finally:
        run.load_terms_held = original


def _groups_by_label(w: np.ndarray, y: np.ndarray, joints: np.ndarray, labels: np.ndarray, count: int, n: int):
    """:class:`dynid.identify.solve.rows.RowGroups` whose groups are the rows of each label (not contiguous)."""
    from dynid.identify.solve.rows import RowGroups, r_factor_of

    c = w.shape[1]
    r = np.zeros((count, n, c + 1, c + 1))
    rows, energy = np.zeros((count, n), dtype=int), np.zeros((count, n))
    for b in range(count):
        for j in range(n):
            mine = np.flatnonzero((labels == b) & (joints == j))
            if mine.size:
                stacked = np.empty((mine.size, c + 1), order='F')
                stacked[:, :c], stacked[:, c] = w[mine], y[mine]
                rows[b, j], energy[b, j] = mine.size, float(stacked[:, c] @ stacked[:, c])
                r[b, j] = r_factor_of(stacked)
    return RowGroups(r, rows, energy)


def region_labels(problem, rows: int) -> np.ndarray:
    """Each row's cluster (module docstring): the samples' (velocity, torque) per joint, k-means."""
    from scipy.cluster.vq import kmeans2

    features, sample_of_row, offset = [], [], 0
    for k, block in enumerate(problem.prepared.blocks):
        samples, _ = np.nonzero(problem.block_keep(k))
        sample_of_row.append(samples + offset)
        torque = block.y if block.y is not None else np.zeros_like(block.velocity)
        features.append(np.column_stack([block.velocity, torque]))
        offset += len(block.velocity)
    features, sample_of_row = np.vstack(features), np.concatenate(sample_of_row)
    if len(sample_of_row) != rows:
        raise ValueError(f'{rows} rows against {len(sample_of_row)} kept samples × joints')
    spread = features.std(axis=0)
    z = (features - features.mean(axis=0)) / np.where(spread > 0, spread, 1.0)
    _, labels = kmeans2(z, REGIONS, seed=np.random.default_rng(0), minit='++')
    return labels[sample_of_row]


def evidence(problem, fitted) -> dict:
    """{'time': ratio, 'region': ratio} of one identification (module docstring); {'status': why} where it has
    nothing to compare (no system kept, no prior)."""
    import functools

    from dynid.identify.selection import folds as folds_module

    if fitted.w is None or fitted.outcome is None or not (fitted.outcome.prior or {}).get('used'):
        return {'status': 'no system or no prior kept by the fit'}
    n, names = problem.robot.n, problem.parameter_names()
    w, y, joints = fitted.w, fitted.y, fitted.joints
    held = np.array([name in problem.held for name in names], dtype=bool)
    if held.any():
        y = y - w[:, held] @ np.array([problem.held[name]['value'] for name in names if name in problem.held])
    residual = fitted.measured - fitted.predicted
    sigma = np.array([np.std(residual[joints == j]) or 1.0 for j in range(n)])
    weights = 1.0 / sigma[joints]
    std = fitted.outcome.prior['relative_std']
    solver = problem.candidate.options.physical.solver if problem.candidate.options.physical else 'clarabel'
    out = {}
    for kind in ('time', 'region'):
        groups, patched = None, {}
        if kind == 'region':
            groups = _groups_by_label(w, y, joints, region_labels(problem, len(y)), REGIONS, n)
            patched = {'time_folds': functools.partial(folds_module.time_folds, count=REGIONS, blocks=REGIONS),
                       'fold_members': functools.partial(folds_module.fold_members, count=REGIONS, blocks=REGIONS)}
        originals = {name: getattr(folds_module, name) for name in patched}
        for name, value in patched.items():
            setattr(folds_module, name, value)
        try:
            folds = folds_module.Folds(problem, w, y, joints, weights, held, True, std, names, groups)
            free = ~held
            unconstrained, consistent = folds.fold_scores(free), folds.fold_scores(free, None, solver)
        finally:
            for name, value in originals.items():
                setattr(folds_module, name, value)
        energy = np.array([fold.energy for fold in folds.folds])
        scored = np.isfinite(unconstrained) & np.isfinite(consistent)
        total = np.where(scored, energy, 0.0).sum(axis=0)
        total[total == 0] = np.inf

        def pooled(scores, energy=energy, scored=scored, total=total):
            return float(np.sum(np.where(scored, scores * energy, 0.0).sum(axis=0) / total))
        out[kind] = pooled(consistent) / pooled(unconstrained)
    return out


def verdicts(rows: dict) -> dict:
    """Per row with evidence: the other motion's ratio (``--physical`` over the defaults) and whether each kind of
    folds points its way (None on a tie); the counts of rows where they point the wrong way."""
    table, wrong = {}, {'time': 0, 'region': 0}
    for key, row in rows.items():
        found = row.get('evidence') or {}
        if 'time' not in found or row.get('physical_pooled') is None or not row.get('pooled'):
            continue
        other = row['physical_pooled'] / row['pooled']
        entry = {'other_motion': other, **{kind: found[kind] for kind in wrong}}
        for kind in wrong:
            right = None if abs(other - 1.0) <= TIE else (found[kind] < 1.0) == (other < 1.0)
            entry[f'{kind}_right'] = right
            wrong[kind] += right is False
        table[key] = entry
    return {'rows': table, 'wrong_time': wrong['time'], 'wrong_region': wrong['region'],
            'decided': sum(1 for entry in table.values() if entry['time_right'] is not None)}
