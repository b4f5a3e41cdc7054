"""The candidate columns the model choice makes from the data: a viscous exponent and a Stribeck excess per joint.

Each is picked on one joint's weighted rows with the joint's other columns projected out (:class:`JointRemainder`):
the column that explains most of what they leave, on a grid (first on the decimated velocity, then on the exact
column made at the full rate and decimated as the regressor is). The folds then decide whether a joint keeps it
(:mod:`dynid.identify.steps.choose`).
"""

from __future__ import annotations

import numpy as np

from dynid.friction.power_law import power_term
from dynid.identify.equations.problem import IdentificationProblem
from dynid.identify.result.stribeck import STRIBECK_SHAPES, stribeck_decay
from dynid.identify.selection.choice import LOAD_FRICTION_OVER_LOAD_MAX
from dynid.identify.solve.solvers import accumulated_r_factor

#: The viscous exponents the model choice tries, in twentieths (sub-linear only: a term that grows faster than ω,
#: fitted on one motion, grows faster still beyond its velocities; on the twin with linear viscous friction, α̂ ≈
#: 1.2–1.9 gained on the folds and lost on another motion). Each is k/20, the double nearest its decimal, so that
#: the grid's 0.85 is :data:`EXPONENT_CANDIDATE_MAX` exactly (``np.linspace`` does not give that: its 0.9 of
#: 0.2…1 came out 0.9000000000000001, and the same 0.9 of 0.05…1 exactly 0.9, which made a candidate of it on one
#: grid and not on the other). The grid stops at 0.2, where every figure of the model choice was measured: the shifted
#: form (:mod:`dynid.friction.power_law`) reaches its limit α = 0, the logarithmic law sgn(ω)·ln(|ω|/v_s), with fc
#: and fv apart (Li's sgn(ω)·|ω|^α becomes the Coulomb column there, and fc and fv grow large and opposite), but
#: lower floors were taken by joints of the public logs that then predicted worse held out (benchmarks/README.md,
#: "The figures behind the defaults").
EXPONENT_GRID = np.arange(4, 21) / 20
#: The largest exponent that is a candidate: the best must lie at least 0.15 below the linear term. Nearer 1 the
#: twin's Stribeck and load terms (linear viscous friction in truth) give α̂ of 0.9–0.95 and a fold gain that a
#: slower motion of the same joint loses (benchmarks/README.md, "The figures behind the defaults").
EXPONENT_CANDIDATE_MAX = 0.85


def _open_joints(problem: IdentificationProblem, joints: np.ndarray, symbol: str):
    """(j, rows) of each joint a friction candidate may be tried on: it has rows, its equations are not left out and
    its column ``symbol``_j (the one the candidate replaces or stands beside) is not held."""
    for j in range(problem.robot.n):
        rows = joints == j
        if rows.any() and not problem.excluded[j] and f'{symbol}_{j + 1}' not in problem.held:
            yield j, rows


#: Rows of W read at a time by :class:`JointRemainder` (no copy of a joint's rows is made).
_PIECE_ROWS = 4096


class JointRemainder:
    """One joint's weighted rows with its other columns projected out (all of them but ``drop``, an index, where
    given): what a candidate column explains of the rest (:func:`power_candidates`, :func:`stribeck_candidates`).
    ``w, y``: the system, ``rows``: the joint's (bool), ``weights``: the rows' weights.

    The projection is onto the span of the joint's columns A as ``scipy.linalg.orth`` takes it (A's left singular
    vectors above eps·max(rows, columns) of its largest singular value), worked in the coordinates of the R factor
    of [A | features | y] (Q's columns hold all three, A's span is Q·U with U A's left singular vectors in them), made
    a piece of rows at a time: no copy of the joint's rows or of a basis of them is held (each ~17 MB for 10 minutes
    at 1 kHz), and no singular value is inverted, so that the remainder stays exact where A is ill-conditioned (the
    LBR Med 7's log: the candidates' scores moved with A⁻¹ formed, and the choice with them).
    """

    def __init__(self, w: np.ndarray, y: np.ndarray, rows: np.ndarray, weights: np.ndarray,
                 drop: int | None = None) -> None:
        self.w, self.y, self.index, self.weights = w, y, np.flatnonzero(rows), weights[rows]
        used = np.zeros(w.shape[1], dtype=bool)
        for piece, idx in self._pieces():
            used |= np.any(w[idx] * self.weights[piece, None] != 0, axis=0)
        if drop is not None:
            used[drop] = False
        self.used = used

    def _pieces(self):
        for start in range(0, len(self.index), _PIECE_ROWS):
            yield slice(start, start + _PIECE_ROWS), self.index[start:start + _PIECE_ROWS]

    def fitted(self, features: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(explained ‖·‖², least-squares coefficient) of each column of ``features`` (rows, k) on the remainder."""
        count, k = int(self.used.sum()), features.shape[1]

        def rows(a: int, b: int) -> np.ndarray:
            index = self.index[a:b]
            part = np.column_stack([self.w[index][:, self.used], features[a:b], self.y[index]])
            return part * self.weights[a:b, None]

        factor = accumulated_r_factor(rows, len(self.index), count + k + 1)
        u, s, _ = np.linalg.svd(factor[:, :count], full_matrices=False)
        u = u[:, s > s.max(initial=0.0) * np.finfo(float).eps * max(len(self.index), count)]
        rest = factor[:, count:] - u @ (u.T @ factor[:, count:])  # features and y off A's span, in Q's coordinates
        size = np.einsum('ij,ij->j', rest[:, :k], rest[:, :k])
        along = rest[:, :k].T @ rest[:, k]
        return (np.where(size > 1e-24, along**2 / np.maximum(size, 1e-300), 0.0),
                np.where(size > 1e-24, along / np.maximum(size, 1e-300), 0.0))


def power_candidates(problem: IdentificationProblem, w: np.ndarray, y: np.ndarray, joints: np.ndarray,
                      weights: np.ndarray):
    """The viscous exponent candidates of the model choice (:mod:`dynid.identify.selection.choice`): per joint the α̂_j
    of :data:`EXPONENT_GRID` whose column sgn(ω)·|ω|^α in place of the viscous column Fv_j leaves the least weighted
    residual on the joint's rows, the others' columns projected out (Li's friction loop,
    :func:`dynid.identify.steps.fit.fit_exponents`, on a grid: no search; first on the decimated velocity, then, where
    that finds a sub-linear law, on the exact columns), and the column at α̂_j: ``{joint: (α̂_j, column (M,))}`` for the
    joints with α̂_j ≤ :data:`EXPONENT_CANDIDATE_MAX`; None where there is none or the law has no Fv. ``w, y,
    joints, weights``: the first estimate's system and row weights."""
    if 'Fv' not in problem.friction_names or not problem.keep_full_velocity:
        return None
    names = problem.parameter_names()
    weights = weights if weights.size == len(joints) else np.ones(len(joints))
    out = {}
    for j, rows in _open_joints(problem, joints, 'Fv'):
        remainder = JointRemainder(w, y, rows, weights, names.index(f'Fv_{j + 1}'))
        velocity = problem.velocity_rows(j)

        def best(features: np.ndarray, remainder=remainder) -> float:
            """The exponent of the grid whose column (``features[:, k]``) explains most of the remainder."""
            return float(EXPONENT_GRID[int(np.argmax(remainder.fitted(features)[0]))])

        # on the decimated velocity first (cheap); where that finds a sub-linear law, on the exact columns
        if best(power_term(velocity[:, None], EXPONENT_GRID[None, :], problem.power_velocity)) > \
                EXPONENT_CANDIDATE_MAX:
            continue
        exact = np.column_stack([problem.power_feature(j, float(alpha)) for alpha in EXPONENT_GRID])
        alpha = best(exact)
        if alpha <= EXPONENT_CANDIDATE_MAX:
            column = np.zeros(len(joints))
            column[rows] = exact[:, int(np.flatnonzero(EXPONENT_GRID == alpha)[0])]
            out[j] = (alpha, column)
    return out or None


#: The Stribeck velocities Vs [rad/s] the model choice tries (:func:`stribeck_candidates`), a candidate where at
#: least :data:`STRIBECK_ROWS_MIN` of the joint's rows lie below Vs (the hump is seen) and at least half above it (the
#: sliding level is seen apart from it: a Vs beyond the recording's speeds is the Coulomb column again). From the
#: stiction velocity's default (FilterSettings) to about 0.3 rad/s: the Stribeck effect is the low-speed end of the
#: friction curve (Li et al. 2024 put its mixed-lubrication boundary at 0.1 rad/s); a wider bump is a bend of the
#: viscous curve, the viscous exponent's job (on the unisa-acg UR10's wrist_1 a Gaussian of Vs 0.72 rad/s won its folds
#: over the exponent and lost held out).
STRIBECK_VELOCITY_GRID = np.geomspace(0.02, 1.0, 13)[:9]
STRIBECK_ROWS_MIN = 0.05


def stribeck_candidates(problem: IdentificationProblem, w: np.ndarray, y: np.ndarray, joints: np.ndarray,
                         weights: np.ndarray):
    """The Stribeck excess candidates of the model choice (:mod:`dynid.identify.selection.choice`): per joint the Vs_j
    of :data:`STRIBECK_VELOCITY_GRID` (within the joint's rows, as the grid's comment says) and the shape μ_j of
    :data:`dynid.identify.result.stribeck.STRIBECK_SHAPES` whose column sgn(ω)·exp(−(|ω|/Vs)^μ) beside the joint's other
    columns explains most of its weighted residual with a positive coefficient (static friction above the Coulomb
    level), the others' columns projected out as :func:`power_candidates` does: on the decimated velocity for
    the grid, then on the exact column (the full-rate feature decimated) at the Vs picked, which must keep the
    positive excess. No threshold on what it explains in the fit: the residual here is the superset law's (its
    load term takes part of what a Stribeck column explains beside Coulomb + viscous alone), so the folds decide.
    ``{joint: (Vs_j, column (M,), μ_j)}``, or None where there is none, the law has no Coulomb column or the model
    holds a Stribeck excess already (``ModelSpec.stribeck_velocity``)."""
    if 'Fc' not in problem.friction_names or not problem.keep_full_velocity or problem.stribeck is not None:
        return None
    weights = weights if weights.size == len(joints) else np.ones(len(joints))
    out = {}
    for j, rows in _open_joints(problem, joints, 'Fc'):
        velocity = problem.velocity_rows(j)
        low, middle = np.quantile(np.abs(velocity), (STRIBECK_ROWS_MIN, 0.5))
        grid = STRIBECK_VELOCITY_GRID[(STRIBECK_VELOCITY_GRID >= low) & (STRIBECK_VELOCITY_GRID <= middle)]
        if not grid.size:
            continue
        fitted = JointRemainder(w, y, rows, weights).fitted
        velocities = np.tile(grid, len(STRIBECK_SHAPES))
        shapes = np.repeat(STRIBECK_SHAPES, grid.size)
        explained, coefficient = fitted(np.sign(velocity)[:, None] * stribeck_decay(
            velocity[:, None], velocities[None, :], shapes[None, :]))
        explained = np.where(coefficient > 0, explained, -1.0)
        if explained.max() <= 0:
            continue
        best = int(np.argmax(explained))
        vs, shape = float(velocities[best]), float(shapes[best])
        exact = problem.stribeck_feature(j, vs, shape)
        if fitted(exact[:, None])[1][0] > 0:
            column = np.zeros(len(joints))
            column[rows] = exact
            out[j] = (vs, column, shape)
    return out or None


def load_not_tried(problem: IdentificationProblem, names: list[str], values: np.ndarray, w: np.ndarray,
                   joints: np.ndarray) -> dict[int, str]:
    """{joint index: why} the joints whose load-dependent term (the law's ``Fl`` role: Fl·sgn(ω)·τ_out² or
    Fl·sgn(ω)·|τ_out|, ``FrictionLaw.load_shape``) is no law of theirs, by the first fit of every candidate column
    (``values``, of ``names``; ``w``, ``joints``: its equations, τ_out of that fit): 'falling' where Fl_j < 0
    (friction falling with the load: no such law); 'beyond the load' where the friction the term adds at τ_j, the
    largest |τ_out| of joint j's rows (from its column's largest magnitude), is more than
    :data:`LOAD_FRICTION_OVER_LOAD_MAX` times τ_j (Fl_j·τ_j for the squared load, Fl_j for the absolute one): a gear
    that loses more to the load than it transmits. Such a coefficient comes from a joint whose output torque stays
    small on the recording (a wrist roll at ~0.01 N·m, where a few tenths of a N·m ask for Fl_j ~ 1e3–1e6 /(N·m)): no
    friction the joint has, and every consumer that evaluates the law at other loads (the observer on the measured
    torque, the feed-forward with a payload) would take it at its word.
    :func:`dynid.identify.selection.laws.friction_laws` does not try the first and leaves the second out where the
    folds keep it; :func:`dynid.identify.steps.run.load_terms_held` holds both at 0 in a law given."""
    law = problem.law
    symbol = (law.roles or {}).get('Fl')
    if symbol is None or law.load_shape not in ('squared', 'absolute'):
        return {}
    out = {}
    for j in range(problem.robot.n):
        name = f'{symbol}_{j + 1}'
        if name not in names or name in problem.held:
            continue
        k = names.index(name)
        value, column = float(values[k]), w[joints == j, k]
        largest = float(np.max(np.abs(column))) if column.size else 0.0
        share = value * float(np.sqrt(largest)) if law.load_shape == 'squared' else value  # friction / τ_j at τ_j
        if value < 0:
            out[j] = 'falling'
        elif largest > 0 and share > LOAD_FRICTION_OVER_LOAD_MAX:
            out[j] = 'beyond the load'
    return out
