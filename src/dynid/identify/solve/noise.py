"""The per-joint noise of the IDIM's equations, which WLS weights by (Gautier–Poignet; thesis ch.5 §3.6 and erratum
A-18): each joint's own ordinary least squares gives its error standard deviation σ̂_j, degrees-of-freedom corrected
and floored at a fraction of the pooled estimate (:func:`joint_noise`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from dynid.blas import one_blas_thread
from dynid.errors import InputError
from dynid.identify.solve.rows import RowGroups


class TooFewRowsError(InputError):
    """The rows are too few for the estimate asked for (each joint's own fit leaves no residual): more rows (a
    longer recording, a higher decimation cut-off) are the way out, which the identification's front end tries,
    and ``methods`` that need fewer (tried too). ``finding``: the message without the advice it gives where
    nothing is tried, for the front end to follow with what it measured (None: the message is all finding)."""

    def __init__(self, message: str = '', *, fields=(), methods=(), finding: str | None = None):
        self.methods: tuple[str, ...] = tuple(methods)
        self.finding = finding
        super().__init__(message, fields=fields)


def _joint_fits(w: np.ndarray, y: np.ndarray, joints: np.ndarray, n: int | None = None,
                groups: RowGroups | None = None) -> tuple[np.ndarray, ...]:
    """Per joint j of ``n`` (default: up to the largest in ``joints``), an ordinary LS of its equations alone:
    (residual sums of squares, rows, rank of W_j, W_j's non-zero columns: the parameters acting on joint j);
    zeros for a joint without rows."""
    n = int(joints.max()) + 1 if n is None else n
    if groups is not None:
        return _joint_fits_reduced(groups)
    squares = np.zeros(n)
    rows, ranks, columns = (np.zeros(n, dtype=int) for _ in range(3))
    for j in range(n):
        mask = joints == j
        if not mask.any():
            continue
        wj, yj = w[mask], y[mask]
        used = np.linalg.norm(wj, axis=0) > 0
        with one_blas_thread():
            solution, _, rank, _ = np.linalg.lstsq(wj[:, used], yj, rcond=None)
        residual = yj - wj[:, used] @ solution
        squares[j], rows[j], ranks[j], columns[j] = residual @ residual, int(mask.sum()), int(rank), int(used.sum())
    return squares, rows, ranks, columns


def _joint_fits_reduced(groups: RowGroups) -> tuple[np.ndarray, ...]:
    """:func:`_joint_fits` from each joint's rows reduced (:class:`dynid.identify.solve.rows.RowGroups`): its R factor
    has the singular values and column norms of its rows, and ‖W_j·v − y_j‖² = ‖R_j·[v; −1]‖², so its own least squares,
    rank (at the tolerance numpy takes for the rows themselves) and residual are the rows'."""
    n = groups.joints
    squares = np.zeros(n)
    rows, ranks, columns = (np.zeros(n, dtype=int) for _ in range(3))
    for j in range(n):
        count = groups.count(joints=[j])
        if not count:
            continue
        r = groups.stacked(joints=[j])
        a, b = r[:, :-1], r[:, -1]
        used = np.linalg.norm(a, axis=0) > 0
        tolerance = np.finfo(float).eps * max(count, int(used.sum()))
        solution, _, rank, _ = np.linalg.lstsq(a[:, used], b, rcond=tolerance)
        residual = b - a[:, used] @ solution
        squares[j], rows[j], ranks[j], columns[j] = residual @ residual, count, int(rank), int(used.sum())
    return squares, rows, ranks, columns


def per_joint_sigma(w: np.ndarray, y: np.ndarray, joints: np.ndarray) -> np.ndarray:
    """σ̂_j from an ordinary LS of joint j's equations alone: ‖y_j − W_jχ̂_j‖²/(r_j − rank W_j)."""
    squares, rows, ranks, _ = _joint_fits(w, y, joints)
    sigma = np.sqrt(squares / np.maximum(1, rows - ranks))
    if np.any(sigma <= 0):
        raise TooFewRowsError('a joint\'s equations are fitted exactly: the data carry no noise information for WLS')
    return sigma


#: No joint's WLS noise estimate is taken below this fraction of the pooled estimate (:func:`joint_noise`).
NOISE_FLOOR_FRACTION = 0.05


@dataclass
class JointNoise:
    """The per-joint error standard deviations WLS weights by (:func:`joint_noise`).

    sigma: (n,) the σ_j used [units of y]; estimated: (n,) each joint's own estimate ‖r_j‖²/(r_j − rank W_j)
    (NaN without degrees of freedom); rows, ranks, parameters: (n,) its equations, the rank of its columns and
    how many columns act on it (non-zero); pooled: Σ‖r_j‖²/Σ(r_j − rank W_j); floor: (n,) the σ_j below which
    each joint's estimate is floored.
    """

    sigma: np.ndarray
    estimated: np.ndarray
    rows: np.ndarray
    ranks: np.ndarray
    parameters: np.ndarray
    pooled: float
    floor: np.ndarray

    @property
    def floored(self) -> np.ndarray:
        """(n,) bool: joints with rows whose σ_j is the floor, not their own estimate (too small, or none)."""
        return ~(self.estimated >= self.floor) & (self.rows > 0)

    @property
    def without_freedom(self) -> np.ndarray:
        """(n,) bool: joints with rows, but no more than parameters acting on them (no noise estimate at all)."""
        return (self.rows > 0) & (self.rows <= self.ranks)

    def to_dict(self, joint_names: Sequence[str]) -> dict:
        """Plain data for a result: per joint σ used, own estimate, rows, rank; the pooled σ and the floor."""
        return {'pooled_sigma': self.pooled,
                'floored': [name for name, f in zip(joint_names, self.floored, strict=True) if f],
                'joints': {name: {'sigma': float(s), 'estimated': float(e), 'floor': float(f), 'rows': int(r),
                                  'rank': int(k), 'parameters': int(c)}
                           for name, s, e, f, r, k, c in zip(joint_names, self.sigma, self.estimated, self.floor,
                                                             self.rows, self.ranks, self.parameters, strict=True)}}

    def floored_text(self, joint_names: Sequence[str]) -> str | None:
        """One sentence naming the floored joints, or None."""
        if not self.floored.any():
            return None
        parts = []
        for j in np.flatnonzero(self.floored):
            own = ('no estimate of its own' if not np.isfinite(self.estimated[j]) else
                   f'its own estimate {self.estimated[j]:.3g}')
            parts.append(f'{joint_names[j]} at {self.floor[j]:.3g} ({own}; {self.rows[j]} rows for '
                         f'{self.parameters[j]} parameters)')
        return (f'WLS noise estimates floored (pooled σ {self.pooled:.3g}): ' + ', '.join(parts) + '; a joint '
                'fitted almost exactly by its own few rows would otherwise outweigh the others')


def joint_noise(w: np.ndarray, y: np.ndarray, joints: np.ndarray,
                floor_fraction: float = NOISE_FLOOR_FRACTION, n: int | None = None,
                groups: RowGroups | None = None) -> JointNoise:
    """Per-joint σ_j for WLS (Gautier–Poignet; thesis ch.5 §3.6): each joint's own estimate
    σ̂_j² = ‖r_j‖²/ν_j with ν_j = r_j − rank W_j degrees of freedom, floored at σ_p·max(``floor_fraction``,
    1/√(ν_j + 1)) with σ_p the pooled estimate (Σ‖r_j‖²/Σν_j).

    σ̂_j/σ_j is distributed as √(χ²_ν/ν): from few degrees of freedom it can come out near 0 by chance (or
    because the joint's own columns fit its rows exactly), and its weight 1/σ̂_j would swamp the other joints.
    Down to 1/√(ν_j + 1) of the pooled σ an estimate is trusted (a joint as noisy as the pool falls below that
    with probability 0.06 at ν = 4 and 1e-4 at ν = 10), and no joint weighs more than 1/``floor_fraction``
    times the pooled one. Joints without degrees of freedom (ν_j ≤ 0) get the pooled σ
    (:attr:`JointNoise.without_freedom` names them). ``n``: the joints (default: up to the largest in ``joints``;
    a joint without rows, its equations left out, has no σ); ``groups``: the rows reduced, where the caller has them.
    """
    if not 0 < floor_fraction <= 1:
        raise InputError(f'noise_floor_fraction must be within (0, 1], got {floor_fraction!r}')
    squares, rows, ranks, parameters = _joint_fits(w, y, joints, n, groups)
    freedom = rows - ranks
    with np.errstate(divide='ignore', invalid='ignore'):
        estimated = np.where(freedom > 0, np.sqrt(squares / np.maximum(freedom, 1)), np.nan)
    total = int(freedom[freedom > 0].sum())
    pooled = float(np.sqrt(squares[freedom > 0].sum() / total)) if total else 0.0
    if not pooled > 0:
        raise TooFewRowsError('every joint\'s equations are fitted exactly: the data carry no noise information for '
                              'WLS (more rows are needed: a longer recording or less decimation)')
    floor = pooled * np.maximum(floor_fraction, 1.0 / np.sqrt(np.maximum(freedom, 0) + 1.0))
    sigma = np.where(estimated >= floor, estimated, floor)
    return JointNoise(sigma, estimated, rows, ranks, parameters, pooled, floor)


def short_joints_text(noise: JointNoise, joint_names: Sequence[str] | None = None) -> str:
    """The joints without degrees of freedom with their counts, e.g. 'joint_1 (37 rows for 41 parameters)'."""
    names = joint_names or [f'joint {j + 1}' for j in range(len(noise.rows))]
    return ', '.join(f'{names[j]} ({noise.rows[j]} rows for {noise.parameters[j]} parameters)'
                     for j in np.flatnonzero(noise.without_freedom))


