"""Which built-in arm a robot description is, by its joints and kinematics (not by its ``<robot name>``).

The vendors' descriptions name their robots ``ur`` (ur_description, whatever ``ur_type``), ``fer`` or
``fr3`` (franka_description), and users name theirs as they like. What identifies an arm is its
geometry: the lines of its joint axes. For every pair of joints, the distance between their axis
lines and the angle between them, at a few configurations, do not depend on where the base frame or
the link frames are put, nor on the names: :func:`axis_signature`. A description is the built-in
whose signature (same joint count) is within :data:`TOLERANCE_M` (RMS over the pairs) and nearest;
a tie (the Panda and the FR3 share their kinematics) goes to the built-in whose joint names are the
description's vendor's (``fr3_`` -> fr3, ``fer_``/``panda_`` -> panda), else to the nearer link masses.
The base height (UR's d1) is not in the signature; the nearest pairs of built-ins differ by 3.0 mm RMS
(UR10 and UR10e, in d4, d5 and d6), 4.6 mm (UR3, UR3e) and 6.2 mm (UR5, UR5e); a calibrated
description's few tenths of a millimetre keep it nearest to its own arm.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np
import pinocchio as pin

from dynid.model.naming import family, franka_type
from dynid.model.robot import RobotModel

#: RMS difference of the axis-pair distances [m] within which a description is a built-in.
TOLERANCE_M = 0.004
#: Built-ins whose RMS differs from the nearest's by less than this [m] are told apart by the joint names
#: (Franka's robot types), else by the link masses.
TIE_M = 0.001
#: Largest difference of an axis-pair angle [rad] within which a description is a built-in.
ANGLE_TOLERANCE = 0.02
_CONFIGURATIONS = 4  # besides q = 0
_SEED = 7


@dataclass(frozen=True)
class Recognition:
    """The built-in a description was recognized as: its name, the RMS difference [m], and why."""

    name: str
    rms_m: float
    reason: str


def _configurations(n: int) -> np.ndarray:
    rng = np.random.default_rng(_SEED)
    return np.vstack([np.zeros(n), rng.uniform(-0.6, 0.6, size=(_CONFIGURATIONS, n))])


def axis_signature(robot: RobotModel) -> tuple[np.ndarray, np.ndarray] | None:
    """(distances [m], angles [rad]) between every pair of joint axis lines at :func:`_configurations`,
    or None for a robot with prismatic joints. Axis sign does not matter (angles in [0, π/2])."""
    if any(kind == 'prismatic' for kind in robot.joint_types):
        return None
    model = robot.pinocchio_model
    data = model.createData()
    n = robot.n
    upper = np.triu_indices(n, 1)
    distances, angles = [], []
    for q in _configurations(n):
        jacobian = pin.computeJointJacobians(model, data, robot.configuration_vector(q))
        moment, direction = jacobian[:3].T, jacobian[3:].T  # Plücker lines (p × ω, ω) in the world frame
        direction = direction / np.linalg.norm(direction, axis=1, keepdims=True)
        i, j = upper
        cosine = np.einsum('ij,ij->i', direction[i], direction[j])
        cross = np.linalg.norm(np.cross(direction[i], direction[j]), axis=1)
        sign = np.where(cosine < 0, -1.0, 1.0)[:, None]
        parallel = np.linalg.norm(np.cross(direction[i], moment[i] - sign * moment[j]), axis=1)
        skew = np.abs(np.einsum('ij,ij->i', direction[i], moment[j]) + np.einsum('ij,ij->i', direction[j], moment[i]))
        distances.append(np.where(cross > 1e-6, skew / np.maximum(cross, 1e-12), parallel))
        angles.append(np.arctan2(cross, np.abs(cosine)))
    return np.concatenate(distances), np.concatenate(angles)


def recognize(robot: RobotModel, builtins: Mapping, load: Callable[[str], RobotModel]) -> Recognition | None:
    """The built-in ``robot`` is (module docstring), or None.

    Args:
        robot: the description's model, all its joints in chain order.
        builtins: {name: :class:`dynid.model.robots.BuiltinRobot`} of the candidates.
        load: the built-in model of a name.
    """
    own = axis_signature(robot)
    if own is None:
        return None
    kind = family(robot.joint_names)
    candidates = [name for name, builtin in builtins.items() if kind is None or builtin.family == kind]
    scored = []
    masses = robot.standard_parameters[0::10]
    for name in candidates:
        other = load(name)
        if other.n != robot.n:
            continue
        signature = axis_signature(other)
        rms = float(np.sqrt(np.mean((signature[0] - own[0]) ** 2)))
        if rms <= TOLERANCE_M and np.abs(signature[1] - own[1]).max() <= ANGLE_TOLERANCE:
            scored.append((rms, name, float(np.abs(other.standard_parameters[0::10] - masses).sum())))
    if not scored:
        return None
    best = min(rms for rms, _, _ in scored)
    near = [(name, rms, mass) for rms, name, mass in scored if rms <= best + TIE_M]
    preferred = {'fr3': 'fr3', 'fer': 'panda', 'panda': 'panda'}.get(franka_type(robot.joint_names[0]) or '')
    chosen = next((entry for entry in near if entry[0] == preferred), None) or min(near, key=lambda e: e[2])
    name, rms, _ = chosen
    how = f'joint axes within {rms * 1e3:.1f} mm RMS'
    if len(near) > 1:
        how += f'; as near as {", ".join(e[0] for e in near if e[0] != name)}, ' + \
            ('told apart by the joint names' if name == preferred else 'told apart by the link masses')
    return Recognition(name, rms, how)
