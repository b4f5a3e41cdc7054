"""The joint torque of an identified rigid-body model at any state: base regressor times base parameters.

τ_j = M(q)·q̈ + C(q, q̇)·q̇ + g(q) = W_b(q, q̇, q̈)·χ̂_b   (link side, N·m; Gautier and Khalil's base model)

The online estimator (τ̂_j in the virtual friction measurement, Madsen 2020 ch.6 eq. (23)) and the
feedforward controller (τ_J,d, eqs. (29)–(30)) need it at states the identification never saw. The
result stores the base parameters χ̂_b and their names; the base columns are rebuilt exactly as the
identification chose them (same structure: payload blocks, rotor inertias) and checked against the
stored names, so a result and a robot that do not belong together are refused.

What the torque holds: the arm's base parameters, plus a known payload if one is given. The base
parameters whose base column is a payload block's (one block per run with only a known mass: the
runs' payloads, not the robot's) or a rotor inertia's (identified from link accelerations when there
are no motor encoders) are left out (``left_out`` names them). Whatever folded into an arm base
parameter stays in it: a rotor inertia that regroups with a link inertia (Ia_1 with Izz_1) adds
B·q̈ of that joint, and a payload every run carried adds its torque; the data cannot separate them.
"""

from __future__ import annotations

import re

import numpy as np

from dynid.errors import InputError
from dynid.identify.model import _structural_base
from dynid.identify.result import IdentificationResult
from dynid.model.inertial import Payload
from dynid.model.robot import RobotModel

_PAYLOAD_BLOCK = re.compile(r'_P(\d+)$')


class RigidBodyTorque:
    """τ_j(q, q̇, q̈) [N·m] of an identified model (module docstring).

    Args:
        result: an identification of ``robot``.
        robot: the robot model it was identified for (same joints).
        payload: a known payload at the flange to add, or None.
    """

    def __init__(self, result: IdentificationResult, robot: RobotModel, payload: Payload | None = None) -> None:
        if result.robot != robot.name:
            raise InputError(f'the result identifies robot {result.robot!r}, not {robot.name!r}')
        if tuple(result.joint_names) != tuple(robot.joint_names):
            raise InputError(f'the result is for joints {list(result.joint_names)}, the robot {robot.name!r} has '
                             f'{list(robot.joint_names)}')
        symbols = set(result.model.get('friction_symbols', []))
        rigid = [name for name in result.parameter_names if name.rpartition('_')[0] not in symbols]
        blocks = int(result.model.get('payload_blocks', 0))
        inputs = result.provenance.get('inputs') or [{}]
        known = [i for i, entry in enumerate(inputs) if entry.get('payload_mass_known') is not None]
        groups = [[known.index(i)] if i in known else [] for i in range(len(inputs))]
        base = _structural_base(robot, groups, blocks, bool(result.model.get('rotor_inertia_identified', False)))
        if list(base.names) != rigid:
            raise InputError(f'the result\'s {len(rigid)} rigid-body parameters do not match the base parameters of '
                             f'{robot.name!r} ({len(base.names)}): identified for another robot model?')
        self.robot, self.payload = robot, payload
        self.base = base
        self.values = np.array([result.value(name) for name in rigid])
        self.arm_columns = 10 * robot.n
        keep = np.flatnonzero(base.indices < self.arm_columns)  # the arm's base columns
        left_out = [rigid[k] for k in np.flatnonzero(base.indices >= self.arm_columns)]
        self.left_out = left_out  # payload-block and rotor-inertia base parameters not in τ_j
        self._columns = base.indices[keep]
        self._values = self.values[keep]

    def __call__(self, q: np.ndarray, dq: np.ndarray, ddq: np.ndarray) -> np.ndarray:
        """τ_j (N, n) [N·m] at states (N, n) [rad, rad/s, rad/s²] (one state (n,) gives (n,))."""
        single = np.ndim(q) == 1
        q, dq, ddq = (np.atleast_2d(np.asarray(x, dtype=float)) for x in (q, dq, ddq))
        regressor = self.robot.regressor(q, dq, ddq)
        torque = (regressor[:, self._columns] @ self._values).reshape(q.shape)
        if self.payload is not None:
            torque += (self.robot.payload_regressor(q, dq, ddq, arm_regressor=regressor)
                       @ self.payload.parameters()).reshape(q.shape)
        return torque[0] if single else torque
