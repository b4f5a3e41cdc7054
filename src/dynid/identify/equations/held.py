"""Parameters held at a value instead of identified: structural offsets and the parameters of left-out joints.

- **Structural offset.** Where a rigid-body parameter's gravity torque on joint j is the same at every pose
  (a vertical prismatic joint: the mass it lifts times g, a constant force), it is indistinguishable from
  that joint's friction offset (``tau0_j``, ``fo_j``) in every recording that does not accelerate the joint
  hard; no excitation separates them in practice, so the offset is held at 0 and the rigid-body parameter
  holds both (its value is then m·g plus the drive's offset, over g).
- **One-way joints.** Where a joint's friction velocity keeps one sign in (nearly) every row the identification uses
  (a task log that never reverses the joint), its Coulomb column Fc·sgn(ω) is the constant ±1 and duplicates the
  offset's column (Gautier & Briot 2014 separate Fc and τ_off only with motion both ways): the offset is held at 0
  and Coulomb friction holds both. Held at 0 rather than at any other value because a drive's friction is always
  there and opposes the motion, while a torque sensor's offset is zeroed at start-up; the result then predicts the
  same friction when the joint reverses, which is what a geared joint does, instead of two opposite constants of any
  size. Where such a joint's speed hardly varies too (its spread below :data:`STEADY_SPREAD` of its mean), Fv·ω is
  a third copy of the constant: viscous friction is held at 0 as well and Coulomb friction holds all three (the data
  say nothing of how the friction grows with speed; left free, Fc and Fv split the constant into ±1e5 N·m).
- **Left-out joints** (``ModelSpec.exclude_joints``): their equations are left out of the fit, their motion
  stays in every other joint's equations. What only their equations hold is held: their friction at 0, the
  rigid-body parameters that act on them alone at the robot file's values (so that their predicted torque
  stays the robot file's there).

:func:`held_parameters` returns ``{name: {'value': ..., 'reason': ...}}`` for a problem; the solvers fit the
others with the held columns moved to the measured side (:func:`dynid.identify.steps.run`).
"""

from __future__ import annotations

import numpy as np

from dynid.errors import InputError

_OFFSET_SYMBOLS = ('tau0', 'fo')
#: the laws' (Coulomb symbol, offset symbol) pairs whose columns are sgn(ω) and 1 (Gautier & Briot 2014; Li et al.
#: 2024 eq. (3))
_COULOMB_OFFSET = (('Fc', 'tau0'), ('fc', 'fo'))
#: a joint moves one way where its friction velocity takes its rarer sign on fewer than this share of its rows
ONE_WAY_SHARE = 0.01
#: a one-way joint moves at a steady speed where the spread (standard deviation) of its friction velocity over its rows
#: is below this share of its mean
STEADY_SPREAD = 0.05
#: the laws' viscous symbols whose column is ω (Li et al. 2024's fv at α = 1)
_VISCOUS = ('Fv', 'fv')
_STATES = 40  # random poses for the structural tests (as the base parameters use)
_RELATIVE = 1e-9


def _base_rows(problem, q: np.ndarray, dq: np.ndarray, ddq: np.ndarray) -> np.ndarray:
    """The base rigid columns (M, n, p) of the arm's regressor at the states (payload blocks zero; the rotor
    inertias' θ̈_j on joint j where the problem identifies them)."""
    robot, base = problem.robot, problem.base
    arm = robot.regressor(q, dq, ddq)
    full = np.zeros((arm.shape[0], len(base.standard_names)))
    full[:, :arm.shape[1]] = arm
    if problem.identify_rotor_inertia:  # the last n standard columns (dynid.identify.equations.prepare)
        from dynid.model.joint_terms import joint_term_regressor

        full[:, -robot.n:] = joint_term_regressor(('rotor_inertia',), dq, ddq)
    return base.columns(full).reshape(len(q), robot.n, -1)


def structural_offsets(problem) -> dict[str, dict]:
    """The friction offsets held at 0 because a rigid-body gravity term of their joint is a constant (module
    docstring), each with its reason."""
    offsets = [s for s in problem.friction_names if s in _OFFSET_SYMBOLS]
    if not offsets:
        return {}
    robot = problem.robot
    q = robot.random_states(_STATES, seed=7)[0]
    gravity = _base_rows(problem, q, np.zeros_like(q), np.zeros_like(q))
    held = {}
    for j, joint in enumerate(robot.joint_names):
        columns = gravity[:, j, :]
        size = np.abs(columns).max(axis=0)
        constant = (size > _RELATIVE * max(np.abs(gravity).max(), 1e-300)) & \
            (np.ptp(columns, axis=0) <= _RELATIVE * np.maximum(size, 1e-300))
        names = [problem.rigid_names[c] for c in np.flatnonzero(constant)]
        if names:
            for symbol in offsets:
                held[f'{symbol}_{j + 1}'] = {'value': 0.0, 'reason': (
                    f'structural: the gravity term of {", ".join(names)} on {joint} is the same constant torque at '
                    f'every pose (a joint lifting along gravity), which an offset would duplicate; {", ".join(names)} '
                    f'holds both')}
    return held


def reversal_counts(equations) -> tuple[np.ndarray, np.ndarray]:
    """(rows with ω > 0, rows with ω < 0) per joint (n,) over the rows the identification uses (stiction rejection:
    |ω| at least the stiction velocity), every recording's pieces together."""
    positive, negative = np.zeros(equations.robot.n, int), np.zeros(equations.robot.n, int)
    for k, block in enumerate(equations.blocks):
        keep = equations.block_keep(k)
        positive += ((block.velocity > 0) & keep).sum(axis=0)
        negative += ((block.velocity < 0) & keep).sum(axis=0)
    return positive, negative


def one_way_joints(equations) -> np.ndarray:
    """(n,) bool: the joints whose friction velocity takes its rarer sign on fewer than :data:`ONE_WAY_SHARE` of the
    rows the identification uses (:func:`reversal_counts`; a joint without rows is not one-way)."""
    positive, negative = reversal_counts(equations)
    rows = positive + negative
    return (rows > 0) & (np.minimum(positive, negative) < ONE_WAY_SHARE * rows)


def steady_joints(equations) -> np.ndarray:
    """(n,) bool: the one-way joints (:func:`one_way_joints`) whose friction velocity's spread over the rows used is
    below :data:`STEADY_SPREAD` of its mean (Fv·ω one more constant there)."""
    total, square, rows = (np.zeros(equations.robot.n) for _ in range(3))
    for k, block in enumerate(equations.blocks):
        keep = equations.block_keep(k)
        total += np.where(keep, block.velocity, 0.0).sum(axis=0)
        square += np.where(keep, block.velocity ** 2, 0.0).sum(axis=0)
        rows += keep.sum(axis=0)
    mean = total / np.maximum(rows, 1)
    spread = np.sqrt(np.maximum(square / np.maximum(rows, 1) - mean ** 2, 0.0))
    return one_way_joints(equations) & (spread < STEADY_SPREAD * np.abs(mean))


def one_way_columns(equations) -> np.ndarray:
    """(n, 3) bool: per joint whether its Coulomb, viscous and offset columns are held at 0 by
    :func:`one_way_friction`'s rule (the offset on one-way joints, the viscous friction on steady ones; Coulomb
    never), for a fit of those three."""
    one_way = one_way_joints(equations)
    return np.column_stack([np.zeros_like(one_way), steady_joints(equations), one_way])


def one_way_friction(problem) -> dict[str, dict]:
    """The friction offsets held at 0 on joints whose motion never reverses in the rows used, and their viscous
    friction where their speed is steady too (module docstring), each with its reason; those held already
    (structural, left out) are not named again."""
    pairs = [(c, o) for c, o in _COULOMB_OFFSET if c in problem.friction_names and o in problem.friction_names]
    if not pairs:
        return {}
    one_way = [j for j in np.flatnonzero(one_way_joints(problem.prepared))
               if not all(f'{o}_{j + 1}' in problem.held for _, o in pairs)]
    if not one_way:
        return {}
    reason = _one_way_reason(problem, one_way)
    held = {f'{o}_{j + 1}': {'value': 0.0, 'reason': reason} for j in one_way for _, o in pairs
            if f'{o}_{j + 1}' not in problem.held}
    steady_mask = steady_joints(problem.prepared)
    steady = [j for j in one_way if steady_mask[j]]
    viscous = [v for v in _VISCOUS if v in problem.friction_names]
    if steady and viscous:
        names = ', '.join(problem.robot.joint_names[j] for j in steady)
        why = (f'{names} move{"s" if len(steady) == 1 else ""} one way at a steady speed in these recordings (the '
               f'speed\'s spread under {100 * STEADY_SPREAD:g} % of its mean): viscous friction Fv·ω is one more '
               f'constant there, so it is held at 0 and Coulomb friction holds the constant; a recording at several '
               f'speeds determines it')
        held.update({f'{v}_{j + 1}': {'value': 0.0, 'reason': why} for j in steady for v in viscous
                     if f'{v}_{j + 1}' not in problem.held})
    return held


def _one_way_reason(problem, one_way: list[int]) -> str:
    """Why the offsets of the joints ``one_way`` are held (:func:`one_way_friction`), with their rows each way."""
    positive, negative = reversal_counts(problem.prepared)
    rows = positive + negative
    names = [problem.robot.joint_names[j] for j in one_way]
    counts = '; '.join(f'{name} {"forward" if positive[j] >= negative[j] else "backward"} on '
                       f'{max(positive[j], negative[j])} of its {rows[j]} rows'
                       for name, j in zip(names, one_way, strict=True))
    never = 'never' if all(min(positive[j], negative[j]) == 0 for j in one_way) else 'hardly ever'
    return (f'{", ".join(names)} {never} reverse{"s" if len(names) == 1 else ""} in these recordings ({counts}): '
            f'Coulomb friction and the torque offset cannot be told apart (sgn(ω) is one constant), so the offset '
            f'is held at 0 and Coulomb friction holds both; a recording that moves '
            f'{"the joint" if len(names) == 1 else "them"} both ways separates them')


def left_out(problem, nominal_rigid: np.ndarray) -> dict[str, dict]:
    """The parameters only the left-out joints' equations hold (module docstring), each with its value and reason;
    ``nominal_rigid``: the robot file's base rigid parameters."""
    robot, excluded = problem.robot, problem.excluded
    if not excluded.any():
        return {}
    names = [robot.joint_names[j] for j in np.flatnonzero(excluded)]
    reason = f'the equations of {", ".join(names)} are left out'
    held = {f'{symbol}_{j + 1}': {'value': 0.0, 'reason': reason}
            for symbol in problem.friction_names for j in np.flatnonzero(excluded)}
    rows = _base_rows(problem, *robot.random_states(_STATES, seed=11))
    on_kept = np.abs(rows[:, ~excluded, :]).max(axis=(0, 1))
    on_all = np.abs(rows).max(axis=(0, 1))
    for c in np.flatnonzero((on_kept <= _RELATIVE * np.maximum(on_all, 1e-300)) & (on_all > 0)):
        source = 'the drive data\'s' if problem.rigid_names[c].startswith('Ia_') else 'the robot file\'s'
        held[problem.rigid_names[c]] = {'value': float(nominal_rigid[c]),
                                        'reason': f'{reason} ({source} value: only they hold it)'}
    return held


def excluded_mask(joint_names, exclude) -> np.ndarray:
    """(n,) bool of the joints named in ``exclude``; InputError for unknown names or all joints."""
    unknown = [name for name in exclude if name not in joint_names]
    if unknown:
        raise InputError(f'exclude_joints names {unknown}, which the robot does not have: {list(joint_names)}')
    mask = np.array([name in exclude for name in joint_names])
    if mask.all():
        raise InputError('exclude_joints leaves no joint\'s equations to identify from')
    return mask
