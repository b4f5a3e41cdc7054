"""What the identifying recording alone says about physical consistency (``bench_public.py --motions-only
--evidence``): the floor of choosing the default for another motion from the recording it is identified on.

For each motion row, the default identification's own system (its equations, held parameters and prior weight,
captured from the ``dynid identify`` run the row makes: :func:`captured`) is cut into folds, and each fold's training
rows are solved twice, as the model choice solves them (:class:`dynid.identify.selection.folds.Folds`, rows weighted
1/σ̂_j): the MAP estimate with the robot file's prior, and its physically consistent optimum, both with the laws the
defaults chose. The folds:

- ``time``: the choice's own, contiguous blocks in time (4 folds of 8 blocks);
- ``region``, ``pose``, ``state``: the samples clustered (k-means, :data:`REGIONS` clusters, seeded) in the joints'
  (velocity, torque), position, or all three, each normalized; each cluster held out in turn, so the model is
  trained where the rest of the recording goes and scored where it does not (:data:`REGION_FEATURES`).

Each kind's figure: the consistent estimate's held-out ‖e‖² over the unconstrained one's, each joint's summed over
the folds and divided by its energy over every held-out row, summed over the joints (below 1: the folds favour
consistency; None where a fold's solve failed). Beside it the other motion's answer for the same two estimates: the
result's estimate and the one of the other consistency decision it keeps beside (``prior.consistency.other_estimate``),
consistent over unconstrained (``--physical`` over the defaults where the result keeps none). The folds "point the right
way" where both are on the same side of 1; rows within :data:`TIE` of 1 on the other motion decide nothing.
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


#: The samples' features each kind of region folds clusters: the joints' velocities, torques and positions.
REGION_FEATURES = {'region': ('velocity', 'torque'), 'pose': ('position',), 'state': ('position', 'velocity', 'torque')}


def region_labels(problem, rows: int, features: tuple[str, ...]) -> np.ndarray:
    """Each row's cluster (module docstring): the samples' ``features`` per joint, each normalized, k-means."""
    from scipy.cluster.vq import kmeans2

    out, sample_of_row, offset = [], [], 0
    for k, block in enumerate(problem.prepared.blocks):
        samples, _ = np.nonzero(problem.block_keep(k))
        sample_of_row.append(samples + offset)
        signals = {'velocity': block.velocity,
                   'torque': block.y if block.y is not None else np.zeros_like(block.velocity),
                   'position': problem.prepared.recordings[k].dataset.q[block.decimator.keep]}
        out.append(np.column_stack([signals[name] for name in features]))
        offset += len(block.velocity)
    values, sample_of_row = np.vstack(out), np.concatenate(sample_of_row)
    if len(sample_of_row) != rows:
        raise ValueError(f'{rows} rows against {len(sample_of_row)} kept samples × joints')
    spread = values.std(axis=0)
    z = (values - values.mean(axis=0)) / np.where(spread > 0, spread, 1.0)
    _, labels = kmeans2(z, REGIONS, seed=np.random.default_rng(0), minit='++')
    return labels[sample_of_row]


def evidence(problem, fitted) -> dict:
    """{'time': ratio, 'region': ratio} of one identification (module docstring); {'status': why} where it has
    nothing to compare (no system kept, no prior)."""
    import functools

    from dynid.identify.selection import folds as folds_module
    from dynid.identify.solve.rows import RowGroups

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
    for kind in ('time', *REGION_FEATURES):
        groups, patched = None, {}
        if kind != 'time':
            labels = region_labels(problem, len(y), REGION_FEATURES[kind])
            groups = RowGroups.of(w, y, joints, REGIONS, n, labels=labels)
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
        ratio = pooled(consistent) / pooled(unconstrained) if pooled(unconstrained) > 0 else float('nan')
        out[kind] = ratio if np.isfinite(ratio) else None  # a fold's solve failed on every joint
    return out


def verdicts(rows: dict) -> dict:
    """Per row with evidence: the other motion's ratio, the consistent estimate over the unconstrained one, each
    with the laws the defaults chose (the result's own and the one it keeps beside, where one of them is consistent;
    else ``--physical`` over the defaults), and whether each kind of folds points its way (None on a tie); the counts
    of rows where they point the wrong way."""
    table, wrong = {}, {kind: 0 for kind in ('time', *REGION_FEATURES)}
    for key, row in rows.items():
        found, beside = row.get('evidence') or {}, row.get('beside')
        if 'time' not in found or not row.get('pooled'):
            continue
        if beside is not None and beside.get('pooled'):
            other = (beside['pooled'] / row['pooled']) if beside['consistent'] else (row['pooled'] / beside['pooled'])
        elif row.get('physical_pooled') is not None:
            other = row['physical_pooled'] / row['pooled']
        else:
            continue
        entry = {'other_motion': other, **{kind: found.get(kind) for kind in wrong}}
        for kind in wrong:
            right = None if abs(other - 1.0) <= TIE or found.get(kind) is None else (found[kind] < 1.0) == (other < 1.0)
            entry[f'{kind}_right'] = right
            wrong[kind] += right is False
        table[key] = entry
    return {'rows': table, **{f'wrong_{kind}': count for kind, count in wrong.items()},
            'decided': sum(1 for entry in table.values() if entry['time_right'] is not None)}
