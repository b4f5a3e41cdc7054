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

How it is computed: τ_j is linear in the 10·n standard parameters π (Gautier and Khalil), and
W_b·χ̂_b = Y·π for π zero except at the arm's base columns, where it holds χ̂_b (plus the payload's
parameters moved to the last link). So τ_j is the inverse dynamics (RNEA) of a model whose link
parameters are π, run for a whole batch inside pinocchio instead of building Y sample by sample.
π describes no physical bodies: its masses are zero (or negative) under non-zero first moments, and
pinocchio keeps a body's centre of mass c = (m·c)/m, which a zero mass cannot hold. Linearity gives
τ(π) = τ(π + π₀) − τ(π₀) with π₀ one physical body per link, mass 1 + 2·|m_i| kg (so every mass in
π + π₀ is at least 1 + |m_i| kg), centre of mass at the joint frame origin, inertia m·(0.1 m)² about
every axis. With masses that large the two torques stay of the order of τ itself and agree with
Y·π to ~1e-14 of the torque scale on the UR5e at large velocities and accelerations (tested to 1e-9).
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from dynid.errors import InputError
from dynid.identify.result.result import IdentificationResult
from dynid.model.base_parameters import compute_base_parameters
from dynid.model.inertial import INERTIAL_PARAMETER_NAMES, Payload, parameters_from_com
from dynid.model.robot import RobotModel

_PAYLOAD_BLOCK = re.compile(r'_P(\d+)$')
_OFFSET_MASS_KG = 1.0  # π₀'s mass per link beyond 2·|m_i| (module docstring)
_OFFSET_GYRATION_M = 0.1  # π₀'s radius of gyration about every axis


class RigidBodyTorque:
    """τ_j(q, q̇, q̈) [N·m] of an identified model (module docstring).

    Args:
        result: an identification of ``robot``.
        robot: the robot model it was identified for (same joints).
        payload: a known payload at the flange to add, or None.
    """

    def __init__(self, result: IdentificationResult, robot: RobotModel, payload: Payload | None = None,
                 base=None) -> None:
        """``base``: the result's base parameters (:class:`dynid.model.base_parameters.BaseParameters`) where the
        caller holds them (the identification's own); found again from the result where not."""
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
        if base is None:
            base = structural_base(robot, groups, blocks, bool(result.model.get('rotor_inertia_identified', False)))
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
        standard = np.zeros(self.arm_columns)
        standard[self._columns] = self._values
        if payload is not None:
            standard[-10:] += robot.payload_link_parameters(payload)
        offset = offset_bodies(standard)
        #: π (10·n, the payload's on the last link) and π₀ of τ(π + π₀) − τ(π₀) (module docstring)
        self.standard_parameters, self.offset_parameters = standard, offset
        self._shifted = robot.with_parameters(standard + offset)  # τ(π + π₀)
        self._offset = robot.with_parameters(offset)  # τ(π₀)

    def __call__(self, q: np.ndarray, dq: np.ndarray, ddq: np.ndarray) -> np.ndarray:
        """τ_j (N, n) [N·m, or N for prismatic joints] at states (N, n) [rad, rad/s, rad/s²].

        One state (n,) gives (n,). τ_j = τ(π + π₀) − τ(π₀), two batch RNEAs (module docstring).
        """
        single = np.ndim(q) == 1
        torque = self._shifted.inverse_dynamics(q, dq, ddq) - self._offset.inverse_dynamics(q, dq, ddq)
        return torque[0] if single else torque


def compensated_rotor(result: IdentificationResult | None, robot: RobotModel) -> np.ndarray:
    """The drive data's B [kg·m²] where ``result`` identified rotor inertia from currents after subtracting B·θ̈
    (rotor compensation: its Ia_j, and an Ia_j regrouped with a link inertia, are then the excess over B), else
    zeros."""
    both = result is not None and result.model.get('rotor_compensation') and \
        result.model.get('rotor_inertia_identified')
    return robot.drives.rotor_inertia.copy() if both and robot.drives is not None else np.zeros(robot.n)


def rotor_inertia(robot: RobotModel, result: IdentificationResult | None, regrouped_as_zero: bool) -> np.ndarray:
    """The rotor inertia B per joint [kg·m², link side] to use beside the result's rigid-body torque.

    Where the result identified rotor inertia (``rotor_inertia_identified``: ``--torque motor_torque``, or
    currents without rotor compensation), B is the identified Ia_j where it is a base parameter of its own,
    and where the identification regrouped Ia_j with a link inertia (Ia_1 with Izz_1) it is 0 with
    ``regrouped_as_zero`` (:class:`RigidBodyTorque` already holds that joint's B·q̈) or the drive data's B
    without (the physical rotor inertia); where B·θ̈ was subtracted before (rotor compensation), the drive data's
    B is added to both (:func:`compensated_rotor`). Where the result did not identify it: the drive data's B. An
    InputError names the joints whose B nothing gives.
    """
    identified = bool(result is not None and result.model.get('rotor_inertia_identified', False))
    names = [] if result is None else result.parameter_names
    values, missing = np.zeros(robot.n), []
    excess = compensated_rotor(result, robot)
    for j, joint in enumerate(robot.joint_names):
        if identified and f'Ia_{j + 1}' in names:
            values[j] = result.value(f'Ia_{j + 1}') + excess[j]
        elif identified and regrouped_as_zero:
            values[j] = excess[j]
        elif robot.drives is not None:
            values[j] = robot.drives.rotor_inertia[j]
        else:
            missing.append(joint)
    if missing:
        raise InputError(f'the rotor inertia of {missing} is unknown: robot {robot.name!r} has no drive data '
                         f'and the result did not identify it (give the option rotor_inertia)')
    return values


def offset_bodies(standard: np.ndarray) -> np.ndarray:
    """π₀: one physical body per link of ``standard`` (10·n), heavier than twice its |mass|."""
    bodies = []
    for mass in _OFFSET_MASS_KG + 2.0 * np.abs(standard[0::10]):
        inertia = mass * _OFFSET_GYRATION_M**2 * np.eye(3)
        bodies.append(parameters_from_com(mass, np.zeros(3), inertia))
    return np.concatenate(bodies)


def round_trip_error(result: IdentificationResult, original_urdf: str | Path, exported: str,
                     samples: int = 200) -> float:
    """Largest |τ_exported − τ_result| [N·m] on random states, relative to the largest torque.

    τ_result is the result's rigid-body torque on the original URDF's model (base parameters, rotor inertia
    left out); τ_exported the plain inverse dynamics of the exported URDF
    (:func:`dynid.identify.outputs.urdf_export.export_urdf`) loaded by pinocchio.
    """
    joints = list(result.joint_names)
    original = RobotModel.from_urdf(str(original_urdf), joints=joints, name=result.robot)
    loaded = RobotModel.from_urdf(exported, joints=joints, name=result.robot)
    q, dq, ddq = original.random_states(samples, seed=3)
    expected = RigidBodyTorque(result, original)(q, dq, ddq)
    return float(np.abs(loaded.inverse_dynamics(q, dq, ddq) - expected).max() / max(np.abs(expected).max(), 1e-12))


def structural_base(robot: RobotModel, groups: list[list[int]], n_payload_blocks: int, rotor_inertia: bool,
                    tolerance: float = 1e-8):
    """Base columns of [arm | payload blocks | Ia] given which payload blocks each recording carries."""
    rng_seed = 20200604
    q, dq, ddq = robot.random_states(40 * max(1, len(groups)), seed=rng_seed)
    y_arm = robot.regressor(q, dq, ddq)
    y_payload = robot.payload_regressor(q, dq, ddq, arm_regressor=y_arm)
    rows = y_arm.shape[0]
    per_group = rows // max(1, len(groups))
    blocks = [y_arm]
    for b in range(n_payload_blocks):  # the mass is known: the other 9 payload parameters are unknowns
        column = np.zeros((rows, 9))
        for g, members in enumerate(groups):
            if b in members:
                column[g * per_group:(g + 1) * per_group] = y_payload[g * per_group:(g + 1) * per_group, 1:]
        blocks.append(column)
    if rotor_inertia:
        from dynid.model.joint_terms import joint_term_regressor

        blocks.append(joint_term_regressor(('rotor_inertia',), dq, ddq))
    names = list(robot.standard_parameter_names)
    for b in range(n_payload_blocks):
        names += [f'{p}_P{b + 1}' for p in INERTIAL_PARAMETER_NAMES[1:]]
    if rotor_inertia:
        names += [f'Ia_{j + 1}' for j in range(robot.n)]
    return compute_base_parameters(np.hstack(blocks), names, tolerance)
