"""The robot file's own model as a fixed reference: what ``dynid validate`` predicts beside a result, whatever law the
result chose.

Its links exactly as the robot file has them (the base parameters of its standard parameters, unknown payloads 0),
the rotor inertias where the identification models them, and per joint Coulomb + viscous friction and an offset,
Fc·sgn(ω) + Fv·ω + τ0 on the friction velocity ω, fitted by least squares on the identification's training rows
(:func:`fit_reference`). The friction law is the same for every result: a reference that took the result's law (a
viscous exponent, a Stribeck excess, friction on the output torque) moved with it, and with it every comparison built
on it (the same Panda rows gave the robot file 12.3 % with Coulomb + viscous friction and 18.9 % with the law a result
chose). On a joint that never reverses in the training rows the Coulomb and offset columns are one constant (and at
a steady speed the viscous column a third): the offset (and the viscous friction) is held at 0 there, as the
identification holds it (``held``, as :func:`dynid.identify.equations.held.one_way_joints` and ``steady_joints`` find
them) (else the least squares split the constant into two opposite values of any size, ±1.08e4 N·m on a twin's one-way
log, which a motion that reverses turns into a prediction of 2e4 N·m). The result keeps it as
``prior.robot_file_reference`` ({parameter: value}: the base rigid parameters' names, then ``Fc_j``, ``Fv_j``,
``tau0_j``); :func:`reference_rows` predicts a recording's rows with it.
"""

from __future__ import annotations

import numpy as np

from dynid.identify.result.result_schema import REFERENCE_SYMBOLS as _SYMBOLS
from dynid.identify.solve.solvers import accumulated_r_factor


def _friction_block(problem, k: int) -> np.ndarray:
    """(M, n, 3) block k's Coulomb, viscous and offset features per joint (decimated as the regressor is)."""
    block = problem.prepared.blocks[k]
    sign = block.features.get('sign')
    sign = np.sign(block.velocity) if sign is None else sign
    return np.stack([sign, block.velocity, np.ones_like(block.velocity)], axis=2)


def _row_features(problem) -> tuple[np.ndarray, np.ndarray]:
    """(the joint of each of ``problem``'s kept rows (rows,), its Coulomb, viscous and offset features (rows, 3)), in
    the row order of :meth:`dynid.identify.equations.problem.IdentificationProblem.equations` (sample-major)."""
    joints, features = [], []
    for k, block in enumerate(problem.prepared.blocks):
        keep = problem.block_keep(k)
        sign, velocity = block.features.get('sign'), block.velocity[keep]
        sign = np.sign(velocity) if sign is None else sign[keep]
        joints.append(np.nonzero(keep)[1])
        features.append(np.column_stack([sign, velocity, np.ones_like(velocity)]))
    return np.concatenate(joints), np.concatenate(features)


def _spread(joints: np.ndarray, features: np.ndarray, n: int) -> np.ndarray:
    """(rows, 3·n) each row's three features in its joint's columns (``Fc_1..n``, ``Fv_1..n``, ``tau0_1..n``)."""
    out = np.zeros((len(joints), 3 * n))
    for s in range(3):
        out[np.arange(len(joints)), s * n + joints] = features[:, s]
    return out


def plain_friction_rows(problem) -> np.ndarray:
    """(rows, 3·n) Coulomb, viscous and offset columns of every joint on ``problem``'s kept rows, in the order of its
    equations (columns ``Fc_1..n``, ``Fv_1..n``, ``tau0_1..n``)."""
    return _spread(*_row_features(problem), problem.robot.n)


def _file_standard(problem) -> tuple[np.ndarray, np.ndarray]:
    """(the standard parameters with the robot file's links and everything else 0, the mask of the rotor inertias'
    entries), in the order of ``problem.base``'s standard parameters."""
    count = problem.base.regrouping.shape[1]
    standard = np.zeros(count)
    links = problem.robot.standard_parameters
    standard[:links.size] = links
    rotor = np.zeros(count, dtype=bool)
    if problem.identify_rotor_inertia:
        rotor[count - problem.robot.n:] = True
    return standard, rotor


def fit_reference(problem, w: np.ndarray, y: np.ndarray, held: np.ndarray | None = None) -> dict[str, float]:
    """The reference (module docstring) fitted on ``problem``'s training rows ``w`` (its equations: the base rigid
    columns first) and ``y``: {parameter: value} over the base rigid parameters and ``Fc_j``, ``Fv_j``, ``tau0_j``;
    ``held``: (n, 3) bool, the Coulomb, viscous and offset columns of each joint held at 0 (module docstring).
    The least squares is solved on the R factor of [A | target], made a piece of rows at a time
    (:func:`dynid.identify.solve.solvers.accumulated_r_factor`: no copy of the rows, ~70 MB for a 10-minute log)."""
    n = problem.robot.n
    rigid_names = list(problem.rigid_names)
    regrouping = problem.base.regrouping
    standard, rotor = _file_standard(problem)
    known, rotor_columns = regrouping @ standard, regrouping[:, rotor]
    count = 3 * n + int(rotor.sum())
    joints, features = _row_features(problem)
    free = np.ones(count, dtype=bool)
    if held is not None:  # columns Fc_1..n, Fv_1..n, tau0_1..n: out of the least squares, at 0 (module docstring)
        free[:3 * n] = ~np.asarray(held, dtype=bool).T.reshape(-1)

    def rows(a: int, b: int) -> np.ndarray:
        rigid = w[a:b, :len(rigid_names)]
        return np.column_stack([_spread(joints[a:b], features[a:b], n), rigid @ rotor_columns, y[a:b] - rigid @ known])

    factor = accumulated_r_factor(rows, len(y), count + 1)
    a, target = factor[:, :count], factor[:, count]
    scale = np.linalg.norm(a, axis=0)
    scale[scale == 0] = 1.0
    solution = np.zeros(count)
    solution[free] = np.linalg.lstsq((a / scale)[:, free], target, rcond=None)[0] / scale[free]
    if rotor.any():
        standard[rotor] = solution[3 * n:]
    names = rigid_names + [f'{symbol}_{j + 1}' for symbol in _SYMBOLS for j in range(n)]
    values = np.concatenate([regrouping @ standard, solution[:3 * n]])
    return dict(zip(names, values.tolist(), strict=True))


def reference_rows(problem, reference: dict[str, float], w: np.ndarray) -> np.ndarray:
    """The reference's prediction of ``problem``'s rows (``w``: its equations, the base rigid columns first); a base
    parameter the reference does not hold (a payload block of the recording) counts 0."""
    n = problem.robot.n
    rigid_names = list(problem.rigid_names)
    rigid = np.array([reference.get(name, 0.0) for name in rigid_names])
    friction = np.array([reference[f'{symbol}_{j + 1}'] for symbol in _SYMBOLS for j in range(n)])
    return w[:, :len(rigid_names)] @ rigid + plain_friction_rows(problem) @ friction


def reference_block(problem, reference: dict[str, float], k: int, w: np.ndarray) -> np.ndarray:
    """(M, n) the reference's torque of block k on every decimated sample (``w``: the block's equations (M, n, p),
    the base rigid columns first), as :func:`dynid.identify.validation.validate.joint_space` takes a model's."""
    n = problem.robot.n
    rigid_names = list(problem.rigid_names)
    rigid = np.array([reference.get(name, 0.0) for name in rigid_names])
    friction = np.array([[reference[f'{symbol}_{j + 1}'] for symbol in _SYMBOLS] for j in range(n)])
    return w[:, :, :len(rigid_names)] @ rigid + np.einsum('mjs,js->mj', _friction_block(problem, k), friction)
