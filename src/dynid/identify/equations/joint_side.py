"""Friction on a coupled joint's own velocity: a transmission stage that turns with the joint, not with a motor.

With coupled drives (θ = C·q, :mod:`dynid.model.drives`) the identification's equations are the motors', and each
motor's friction acts on its own velocity θ̇_k. A stage between the motors and a joint that turns with the joint (the
last gear pair of a coupled wrist, its bearings and seals) has friction on q̇_j instead, which no motor's friction
can express where q̇_j is made of several motors' velocities: a row of C⁻¹ with more than one nonzero entry
(:meth:`dynid.model.drives.JointDrives.shared_joints`; on the Stäubli TX40, q̇6 = θ̇6 − θ̇5). Such a friction is a
torque on joint j, as the links' torques are, so it reaches the motors' equations as C⁻ᵀ·e_j·f_j (virtual work): row
j of C⁻¹ over the motors (on the TX40, −1 on motor 5 and +1 on motor 6)::

    f_j = Fcq_j·sgn(q̇_j) + Fvq_j·q̇_j,    q̇ = C⁻¹·θ̇       [N·m, joint j; Coulomb + viscous, Siciliano et al. 2009 §8.2]

Its columns Fcq_j and Fvq_j are the identification's for each such joint (:func:`joint_side_joints`; the spec's
``joint_side_friction``), made from sgn(q̇_j) and q̇_j at the full rate and decimated as the regressor is. The model
choice keeps them on a joint where the folds of the motors they act on support them (:func:`joint_side_choice`).
Every consumer of a result evaluates them as f_j on joint j in joint space: the prediction (they are columns of W),
the feedforward's friction term, the URDF and MJCF exports (the joint's friction and damping); the online
estimators refuse coupled drives.
"""

from __future__ import annotations

import numpy as np

from dynid.model.drives import JointDrives

#: The symbols of a joint's own friction (module docstring): Coulomb [N·m] and viscous [N·m·s/rad], in column order.
JOINT_SIDE_SYMBOLS = ('Fcq', 'Fvq')
#: The part each symbol plays (as :attr:`dynid.friction.law.FrictionLaw.roles`): Coulomb level, viscous coefficient.
JOINT_SIDE_ROLES = dict(zip(('Fc', 'Fv'), JOINT_SIDE_SYMBOLS, strict=True))
#: The prepared feature each symbol's column is made of (:mod:`dynid.identify.equations.prepare`): sgn(q̇) and q̇, (M, n).
JOINT_SIDE_FEATURES = {'Fcq': 'joint_sign', 'Fvq': 'joint_velocity'}


def joint_side_joints(drives: JointDrives | None, friction: str, wanted: bool, excluded: np.ndarray) -> tuple[int, ...]:
    """The joints whose own friction the equations can hold (module docstring): those several motors make
    (:meth:`JointDrives.shared_joints`), where ``wanted``, the law has friction and some motor it acts on keeps its
    equations (``excluded``: (n,) the motors' equations left out)."""
    if not wanted or friction == 'none' or drives is None or drives.coupling is None:
        return ()
    inverse = np.linalg.inv(drives.coupling)
    return tuple(j for j in drives.shared_joints() if not np.all(excluded[acting_motors(inverse, j)]))


def acting_motors(inverse: np.ndarray, joint: int) -> np.ndarray:
    """The motors (indices) whose equations joint ``joint``'s own friction enters: the nonzero entries of row
    ``joint`` of C⁻¹ (``inverse``)."""
    row = np.abs(inverse[joint])
    return np.flatnonzero(row > 1e-12 * row.max())


def joint_side_features(drives: JointDrives, velocity: np.ndarray):
    """(kind, (N, n) full-rate feature) of the joints' own friction: sgn(q̇) and q̇ = C⁻¹·θ̇ of the motors' friction
    velocity θ̇ [rad/s, link units] (:data:`JOINT_SIDE_FEATURES`)."""
    joint_velocity = drives.motors_to_joints(velocity)
    yield 'joint_sign', np.sign(joint_velocity)
    yield 'joint_velocity', joint_velocity


def joint_side_names(joints: tuple[int, ...]) -> list[str]:
    """The parameters of the joints' own friction in column order: ``Fcq_j`` of every joint, then ``Fvq_j``."""
    return [f'{symbol}_{j + 1}' for symbol in JOINT_SIDE_SYMBOLS for j in joints]


def joint_side_columns(features: dict, joints: tuple[int, ...], coupling: np.ndarray) -> np.ndarray:
    """(M, n, 2·len(joints)) the columns of :func:`joint_side_names` on the motors' equations: feature_j times row j of
    C⁻¹ (module docstring); ``features``: a block's prepared features (kind -> (M, n))."""
    inverse = np.linalg.inv(coupling)
    return np.stack([features[JOINT_SIDE_FEATURES[symbol]][:, j, None] * inverse[j][None, :]
                     for symbol in JOINT_SIDE_SYMBOLS for j in joints], axis=2)


def joint_side_torque(parameters: dict[str, np.ndarray], velocity: np.ndarray, direction: np.ndarray) -> np.ndarray:
    """f = Fcq·s + Fvq·q̇ [N·m] on the joints (module docstring) at joint velocities q̇ [rad/s] with the sign factor
    ``direction`` s (sgn(q̇), or a smoothed one); ``parameters``: {symbol: (n,)} (0 where a joint has none)."""
    zero = np.zeros(np.shape(velocity)[-1])
    return direction * parameters.get('Fcq', zero) + velocity * parameters.get('Fvq', zero)


def joint_side_choice(folds, free: np.ndarray, names: list[str], joints: tuple[int, ...], coupling: np.ndarray,
                      margin: float) -> tuple[tuple[int, ...], list[int], dict]:
    """Which joints keep their own friction, by the folds (:class:`dynid.identify.selection.folds.Folds`) of the model
    with columns ``free`` (the laws chosen): joint by joint, the summed held-out score of the motors its friction acts
    on (:func:`acting_motors`) with and without its columns Fcq_j, Fvq_j; kept where it is lower by more than
    ``margin`` (a richer model must earn its columns, as a friction law's terms must).

    Returns:
        (the joints kept, the columns of the joints dropped, {joint name: {'with', 'without', 'motors', 'kept'}}
        for the choice's table).
    """
    inverse = np.linalg.inv(coupling)
    joint_names = folds.problem.robot.joint_names
    free, tried, kept, dropped = free.copy(), {}, [], []
    for j in joints:
        columns = [names.index(name) for name in (f'{symbol}_{j + 1}' for symbol in JOINT_SIDE_SYMBOLS)
                   if name in names and free[names.index(name)]]
        motors = acting_motors(inverse, j)
        if not columns:
            continue
        without = free.copy()
        without[columns] = False
        scored = [float(np.sum(folds.scores(mask)[motors])) for mask in (free, without)]
        keep = bool(np.isfinite(scored[0]) and scored[0] < scored[1] / (1.0 + margin))
        tried[joint_names[j]] = {'with': scored[0], 'without': scored[1],
                                 'motors': [joint_names[k] for k in motors], 'kept': keep}
        if keep:
            kept.append(j)
        else:
            free, dropped = without, dropped + columns
    return tuple(kept), dropped, tried
