"""A system's rows reduced once, per group: the R factor of [W | y] for each joint's rows in each contiguous block.

The identification's equations are rows of joint j (one per decimated sample and joint), weighted by WLS with one
weight per joint (1/σ̂_j), by OLS with none, and cut by the cross-validation into contiguous blocks in time
(:func:`dynid.identify.solve.prior.time_folds`). With R_bj the R factor of [W_bj | y_bj] (the rows of joint j in
block b),

    ‖G·(y − W·v)‖² over any blocks B and joints J = Σ_{b∈B, j∈J} g_j²·‖R_bj·[v; −1]‖²,

so the R factor of any such selection with per-joint weights g_j is that of the stacked, scaled R_bj: a QR of a few
hundred rows. One pass over the rows (:meth:`RowGroups.of`) then serves every WLS and OLS solve of the system, each
joint's own noise estimate, and every fold of the cross-validation (:class:`dynid.identify.solve.prior.ReducedRows`),
where each used to factor the tall system again. Exact up to rounding: the R factor of stacked R factors is the R
factor of the stacked rows (sequential TSQR; Demmel, Grigori, Hoemmen and Langou 2012, SIAM J. Sci. Comput. 34(1)).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

#: Contiguous blocks of rows the groups are cut into: the cross-validation's (dynid.identify.solve.prior).
GROUP_BLOCKS = 8


def r_factor_of(a: np.ndarray) -> np.ndarray:
    """The square R factor (columns × columns) of ``a``, zero-padded where ``a`` has fewer rows than columns."""
    import scipy.linalg  # in the function (here and below): a fifth of a second that importing dynid skips
    columns = a.shape[1]
    out = np.zeros((columns, columns))
    if a.shape[0]:
        r = scipy.linalg.qr(a, mode='r', overwrite_a=True, check_finite=False)[0]
        out[:min(r.shape[0], columns)] = r[:columns]
    return out


@dataclass(frozen=True)
class RowGroups:
    """R factors of [W | y] per (block, joint) of one system (module docstring).

    ``r``: (blocks, n, c + 1, c + 1) with c the columns of W (zero for a group without rows); ``rows``: (blocks, n)
    equations per group; ``energy``: (blocks, n) ‖y‖² per group."""

    r: np.ndarray
    rows: np.ndarray
    energy: np.ndarray

    @classmethod
    def of(cls, w: np.ndarray, y: np.ndarray, joints: np.ndarray, blocks: int = GROUP_BLOCKS,
           n: int | None = None, columns: np.ndarray | None = None, row_weights: np.ndarray | None = None,
           labels: np.ndarray | None = None) -> RowGroups:
        """The groups of the system W·v ≈ y whose rows belong to ``joints`` (row → joint), cut into ``blocks``
        contiguous blocks of rows (as :func:`numpy.array_split` cuts them), or by ``labels`` (row → block, 0 to
        ``blocks`` − 1) where given; ``n``: the joints (default: up to the largest in ``joints``); ``columns``: W's
        columns taken (a mask; default all), without a copy of W; ``row_weights``: each row scaled by its weight
        (IRLS's robust weights; default 1)."""
        n = int(joints.max()) + 1 if n is None else n
        taken = np.arange(w.shape[1]) if columns is None else np.flatnonzero(columns)
        c = len(taken)
        r = np.zeros((blocks, n, c + 1, c + 1))
        rows = np.zeros((blocks, n), dtype=int)
        energy = np.zeros((blocks, n))
        parts = np.array_split(np.arange(len(y)), blocks) if labels is None else \
            [np.flatnonzero(labels == b) for b in range(blocks)]
        for b, part in enumerate(parts):
            of_joint = joints[part]
            for j in range(n):
                mine = part[of_joint == j]
                if mine.size:
                    stacked = np.empty((mine.size, c + 1), order='F')
                    stacked[:, :c], stacked[:, c] = w[np.ix_(mine, taken)], y[mine]
                    if row_weights is not None:
                        stacked *= row_weights[mine, None]
                    rows[b, j], energy[b, j] = mine.size, float(stacked[:, c] @ stacked[:, c])
                    r[b, j] = r_factor_of(stacked)  # overwrites ``stacked``
        return cls(r, rows, energy)

    @property
    def joints(self) -> int:
        return self.r.shape[1]

    def stacked(self, weights: np.ndarray | None = None, blocks=None, joints=None) -> np.ndarray:
        """The R factor ((c + 1) square) of the groups of ``blocks`` and ``joints`` (default all), each joint's rows
        scaled by ``weights[j]`` (default 1)."""
        blocks = range(self.r.shape[0]) if blocks is None else blocks
        joints = range(self.joints) if joints is None else joints
        weights = np.ones(self.joints) if weights is None else weights
        parts = [self.r[b, j] * weights[j] for b in blocks for j in joints if self.rows[b, j]]
        if not parts:
            return np.zeros(self.r.shape[2:])
        return r_factor_of(np.vstack(parts)) if len(parts) > 1 else parts[0].copy()

    def count(self, blocks=None, joints=None) -> int:
        """Equations in the groups of ``blocks`` and ``joints`` (default all)."""
        blocks = slice(None) if blocks is None else list(blocks)
        joints = slice(None) if joints is None else list(joints)
        return int(self.rows[blocks][:, joints].sum())


def per_joint_weights(row_weights: np.ndarray, joints: np.ndarray, n: int) -> np.ndarray | None:
    """(n,) the weight of each joint's rows where ``row_weights`` is one number per joint (WLS, OLS), else None (IRLS's
    robust weights differ row by row)."""
    weights = np.ones(n)
    for j in range(n):
        mine = row_weights[joints == j]
        if mine.size:
            if np.any(mine != mine[0]):
                return None
            weights[j] = mine[0]
    return weights


class FreeColumns:
    """The columns ``free`` (a mask) of W without a copy of W: its shape and W_free·v, all a least-squares solve needs
    of the rows once they are reduced (:class:`RowGroups`)."""

    def __init__(self, w: np.ndarray, free: np.ndarray) -> None:
        self.w, self.free = w, free
        self.shape = (w.shape[0], int(np.count_nonzero(free)))

    def __matmul__(self, values: np.ndarray) -> np.ndarray:
        full = np.zeros(self.w.shape[1])
        full[self.free] = values
        return self.w @ full
