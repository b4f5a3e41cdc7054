"""Joint drives: gear ratio, torque constant, drive gain and reflected rotor inertia.

Conventions (thesis ch.4–5; Gautier & Briot 2014):

- θ is the rotor angle **divided by the gear ratio** r (link-side units): θ = θ_m / r.
- The drive gain K_τ [N·m/A] maps motor current to torque **on the link side** of the gear:
  τ_motor,link = K_τ·i = r·k_t·i, with k_t [N·m/A] the motor-side torque constant (which here
  absorbs the gear efficiency).
- The rotor inertia B [kg·m²] is reflected to the link side: B = r²·J_rotor.
- Rotor equation: B·θ̈ + f + τ_j = K_τ·i, with f the friction and τ_j the joint (link-side) torque.

A **drives file** (YAML; :func:`load_drives`) gives them for any robot, by joint name::

    shoulder_pan_joint: {gear_ratio: 101, drive_gain: 11.9, rotor_inertia: 0.6}   # -, N·m/A, kg·m²
    shoulder_lift_joint: {gear_ratio: 101, drive_gain: 11.9, rotor_inertia: 0.6}
    ...

Every joint of the robot needs all three values; names the robot does not have are refused (a
typo would otherwise go unnoticed). The mapping may also sit under a top-level ``drives:`` key.

**Coupled joints** (a wrist whose last motor turns with q5 + q6; ros2_control's transmissions): the entry of
the joint a motor is declared under may say which joints that motor turns, and where its encoder reads zero::

    wrist_2_joint: {gear_ratio: 101, drive_gain: 4.6, rotor_inertia: 0.2, coupling: {wrist_2_joint: -1}}
    wrist_3_joint: {gear_ratio: 101, drive_gain: 4.6, rotor_inertia: 0.2,
                    coupling: {wrist_2_joint: 1, wrist_3_joint: 1}, motor_offset: 0.35}   # -, rad (motor)

Row k of the coupling matrix C [-] (identity where not given) holds the joints motor k turns: its angle in link
units is θ_k = Σ_j C_kj·q_j, on its shaft θ_m,k = r_k·θ_k + motor_offset_k. A motor turning against its joint
(a gear ratio of negative sign) is a −1 on C's diagonal; r stays > 0. By the principle of virtual work (the
motors' power θ̇ᵀ·τ_m equals the joints' q̇ᵀ·τ), the joint torques are τ = Cᵀ·τ_m with τ_m = K_τ·i per motor,
and a motor's rotor inertia B and friction f(θ̇) act on θ = C·q: B·θ̈ + f(θ̇) + C⁻ᵀ·τ_link = K_τ·i per motor
(Siciliano et al. 2009, Robotics, §8.2 and the transmission matrix of ros2_control's transmission_interface).
With a coupling, a recording's ``theta`` (motor_states) holds θ per motor (in link units), and the
identification's equations are the motors' (one per drive, named after the joint it is declared under).
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from dynid.errors import InputError
from dynid.files import read_yaml
from dynid.schema import Fields, MismatchError, Number, Table, check


class _GearRatio(Number):
    """A gear ratio r > 0 [-]; a negative one (a motor turning against its joint, as manufacturers publish it) is
    refused with how a drives file writes that motor (:func:`reversed_motor_text`)."""

    def check(self, value, path, context) -> None:
        if isinstance(value, numbers.Real) and not isinstance(value, bool) and value < 0:
            joint = path[-2] if len(path) > 1 and path[-2] in (context.get('joints') or ()) else None
            raise MismatchError(path, reversed_motor_text(joint, float(value)))
        super().check(value, path, context)


#: one joint's entry of a drives file (module docstring): gear ratio r [-], drive gain K_τ [N·m/A], rotor inertia B
#: [kg·m²], both link side; a coupling row {joint: C_kj [-]} and the motor encoder's offset [rad, motor shaft]
DRIVE_FIELDS = Fields(
    required={'gear_ratio': _GearRatio('[-]', above=0.0, high=1.0e5),
              'drive_gain': Number('N·m/A', low=-1.0e5, high=1.0e5, nonzero=True),
              'rotor_inertia': Number('kg·m²', low=0.0, high=1.0e6)},
    optional={'coupling': Table(Number('[-]', low=-1.0e3, high=1.0e3), keys='joints'),
              'motor_offset': Number('rad', low=-1.0e6, high=1.0e6)},
    name='a mapping of gear_ratio, drive_gain and rotor_inertia')


def _per_joint(values, n: int, what: str) -> np.ndarray:
    a = np.asarray(values, dtype=float)
    a = np.full(n, float(a)) if a.ndim == 0 else a.reshape(-1)
    if a.shape != (n,) or not np.all(np.isfinite(a)):
        raise InputError(f'{what}: expected one finite value per joint ({n}), got {values!r}')
    return a


@dataclass(frozen=True)
class JointDrives:
    """Drive parameters of each joint, in model joint order.

    Attributes:
        joint_names: joint names, in the order of all arrays.
        gear_ratio: r [-], rotor angle per link angle, > 0.
        drive_gain: K_τ [N·m/A], link side, nonzero (its sign follows the current's sign convention).
        rotor_inertia: B [kg·m²], reflected to the link side, >= 0.
        coupling: C (n, n) [-], motor angles in link units θ = C·q (module docstring), or None (identity).
        motor_offset: [rad, motor shaft] the motor encoders' reading at θ = 0 (zeros if None).
    """

    joint_names: tuple[str, ...]
    gear_ratio: np.ndarray
    drive_gain: np.ndarray
    rotor_inertia: np.ndarray
    coupling: np.ndarray | None = None
    motor_offset: np.ndarray | None = None

    def __post_init__(self) -> None:
        names = tuple(self.joint_names)
        n = len(names)
        if n == 0 or len(set(names)) != n:
            raise InputError(f'drives need unique joint names, got {names!r}')
        gear = _per_joint(self.gear_ratio, n, 'gear_ratio')
        gain = _per_joint(self.drive_gain, n, 'drive_gain')
        inertia = _per_joint(self.rotor_inertia, n, 'rotor_inertia')
        if np.any(gear < 0):
            k = int(np.flatnonzero(gear < 0)[0])
            raise InputError(f'{names[k]}.gear_ratio {reversed_motor_text(names[k], float(gear[k]))}')
        if np.any(gear == 0):
            raise InputError(f'gear_ratio must be > 0 for every joint, got {gear.tolist()}')
        if np.any(gain == 0):
            raise InputError(f'drive_gain must be nonzero for every joint, got {gain.tolist()}')
        if np.any(inertia < 0):
            raise InputError(f'rotor_inertia must be >= 0 for every joint, got {inertia.tolist()}')
        object.__setattr__(self, 'joint_names', names)
        object.__setattr__(self, 'gear_ratio', gear)
        object.__setattr__(self, 'drive_gain', gain)
        object.__setattr__(self, 'rotor_inertia', inertia)
        object.__setattr__(self, 'motor_offset', None if self.motor_offset is None
                           else _per_joint(self.motor_offset, n, 'motor_offset'))
        if self.coupling is not None:
            coupling = np.asarray(self.coupling, dtype=float)
            if coupling.shape != (n, n) or not np.all(np.isfinite(coupling)):
                raise InputError(f'coupling: expected a finite {n}×{n} matrix, got shape {coupling.shape}')
            if np.linalg.cond(coupling) > 1e8:
                raise InputError('coupling: the matrix is singular (two motors turn the same combination of joints, '
                                 'or a joint is turned by no motor)')
            object.__setattr__(self, 'coupling', None if np.array_equal(coupling, np.eye(n)) else coupling)

    @classmethod
    def from_motor(
        cls,
        joint_names: Sequence[str],
        gear_ratio,
        torque_constant,
        rotor_inertia_motor,
    ) -> JointDrives:
        """Drives from motor-side data: k_t [N·m/A] and rotor inertia J [kg·m²] on the motor shaft."""
        names = tuple(joint_names)
        gear = _per_joint(gear_ratio, len(names), 'gear_ratio')
        k_t = _per_joint(torque_constant, len(names), 'torque_constant')
        j = _per_joint(rotor_inertia_motor, len(names), 'rotor_inertia_motor')
        return cls(names, gear, gear * k_t, gear**2 * j)

    @classmethod
    def from_dict(cls, data: Mapping, joint_names: Sequence[str]) -> JointDrives:
        """Drives from ``{joint: {gear_ratio, drive_gain, rotor_inertia}}``, taken by joint name."""
        missing = [name for name in joint_names if name not in data]
        if missing:
            raise InputError(f'drive parameters missing for joints {missing}')
        rows = [data[name] for name in joint_names]
        try:
            columns = {key: [float(row[key]) for row in rows]
                       for key in ('gear_ratio', 'drive_gain', 'rotor_inertia')}
        except (KeyError, TypeError, ValueError) as error:
            raise InputError(f'drive parameters need numeric gear_ratio, drive_gain and '
                             f'rotor_inertia per joint ({error})') from None
        return cls(tuple(joint_names), **columns, coupling=_coupling(rows, joint_names),
                   motor_offset=_offsets(rows))

    def to_dict(self) -> dict:
        """``{joint: {gear_ratio, drive_gain, rotor_inertia[, coupling, motor_offset]}}`` in plain floats (the
        coupling's rows and the offsets only where they are not the identity's and zero)."""
        out = {
            name: {'gear_ratio': float(r), 'drive_gain': float(k), 'rotor_inertia': float(b)}
            for name, r, k, b in zip(self.joint_names, self.gear_ratio, self.drive_gain,
                                     self.rotor_inertia, strict=True)
        }
        for k, name in enumerate(self.joint_names):
            if self.coupling is not None and not np.array_equal(self.coupling[k], np.eye(len(out))[k]):
                out[name]['coupling'] = {other: float(c) for other, c in zip(self.joint_names, self.coupling[k],
                                                                             strict=True) if c != 0.0}
            if self.motor_offset is not None and self.motor_offset[k] != 0.0:
                out[name]['motor_offset'] = float(self.motor_offset[k])
        return out

    def reordered(self, joint_names: Sequence[str]) -> JointDrives:
        """The same drives in another joint order, matched by name."""
        return JointDrives.from_dict(self.to_dict(), joint_names)

    def with_drive_gain(self, drive_gain) -> JointDrives:
        """A copy with other drive gains (e.g. identified ones) [N·m/A, link side]."""
        return JointDrives(self.joint_names, self.gear_ratio, drive_gain, self.rotor_inertia, self.coupling,
                           self.motor_offset)

    def with_rotor_inertia(self, rotor_inertia) -> JointDrives:
        """A copy with other rotor inertias (e.g. identified ones) [kg·m², link side]."""
        return JointDrives(self.joint_names, self.gear_ratio, self.drive_gain, rotor_inertia, self.coupling,
                           self.motor_offset)

    # Coupled joints (module docstring). Arrays broadcast over a last axis of joints (or motors): (n,) or (N, n).
    def joints_to_motors(self, q):
        """θ = C·q [link units] of joint positions, velocities or accelerations (q itself without a coupling)."""
        return np.asarray(q) if self.coupling is None else np.asarray(q) @ self.coupling.T

    def motors_to_joints(self, theta):
        """q = C⁻¹·θ of motor angles in link units (or their derivatives)."""
        return np.asarray(theta) if self.coupling is None else np.linalg.solve(self.coupling, np.asarray(theta).T).T

    def shared_joints(self) -> tuple[int, ...]:
        """The joints (indices) whose velocity is made of several motors' (a row of C⁻¹ with more than one nonzero
        entry, e.g. q̇6 = θ̇6 − θ̇5 of a wrist whose last motor turns with q5 + q6): friction on such a joint's own
        velocity (a stage that turns with the joint) is no motor's friction f(θ̇_k). None without a coupling."""
        if self.coupling is None:
            return ()
        inverse = np.linalg.inv(self.coupling)
        size = np.abs(inverse).max(axis=1, keepdims=True)
        return tuple(int(j) for j in np.flatnonzero(np.count_nonzero(np.abs(inverse) > 1e-12 * size, axis=1) > 1))

    def joint_to_motor_torque_space(self, torque):
        """C⁻ᵀ·τ [N·m]: the share of each motor (link units) in joint torques τ (τ itself without a coupling)."""
        return np.asarray(torque) if self.coupling is None else np.linalg.solve(self.coupling.T,
                                                                                np.asarray(torque).T).T

    def motor_to_joint_torque_space(self, motor_torque):
        """τ = Cᵀ·τ_m [N·m] of the motors' torques in link units."""
        return np.asarray(motor_torque) if self.coupling is None else np.asarray(motor_torque) @ self.coupling

    def motor_positions_to_link_units(self, motor_position):
        """θ = (θ_m − motor_offset)/r [rad, link units] from motor encoder readings [rad, motor shaft]."""
        offset = 0.0 if self.motor_offset is None else self.motor_offset
        return (np.asarray(motor_position) - offset) / self.gear_ratio

    @property
    def torque_constant(self) -> np.ndarray:
        """k_t = K_τ / r [N·m/A], motor side."""
        return self.drive_gain / self.gear_ratio

    @property
    def rotor_inertia_motor(self) -> np.ndarray:
        """J = B / r² [kg·m²], rotor inertia on the motor shaft."""
        return self.rotor_inertia / self.gear_ratio**2

    # Conversions. Arrays broadcast over a last axis of joints: shape (n,) or (N, n).
    def current_to_joint_torque(self, current):
        """Drive torque K_τ·i [N·m, link side] from motor current [A]."""
        return np.asarray(current) * self.drive_gain

    def joint_torque_to_current(self, torque):
        """Motor current [A] that gives a link-side drive torque [N·m]."""
        return np.asarray(torque) / self.drive_gain

    def current_to_motor_torque(self, current):
        """Motor torque k_t·i [N·m, motor side] from current [A]."""
        return np.asarray(current) * self.torque_constant

    def motor_torque_to_joint_torque(self, motor_torque):
        """Link-side torque r·τ_m [N·m] from motor-side torque [N·m]."""
        return np.asarray(motor_torque) * self.gear_ratio

    def joint_torque_to_motor_torque(self, torque):
        """Motor-side torque τ / r [N·m] from link-side torque [N·m]."""
        return np.asarray(torque) / self.gear_ratio

    def motor_angle_to_link_units(self, motor_angle):
        """θ = θ_m / r [rad, link units] from the rotor angle on the motor shaft [rad]."""
        return np.asarray(motor_angle) / self.gear_ratio

    def link_units_to_motor_angle(self, theta):
        """θ_m = r·θ [rad, motor shaft] from the rotor angle in link units [rad]."""
        return np.asarray(theta) * self.gear_ratio

    def rotor_inertia_torque(self, rotor_acceleration):
        """B·θ̈ [N·m, link side] from the rotor acceleration in link units [rad/s²]."""
        return np.asarray(rotor_acceleration) * self.rotor_inertia


def _coupling(rows: list[Mapping], joint_names: Sequence[str]) -> np.ndarray | None:
    """The coupling matrix from the joints' optional ``coupling: {joint: coefficient}`` (module docstring)."""
    if not any('coupling' in row for row in rows):
        return None
    n, index = len(joint_names), {name: k for k, name in enumerate(joint_names)}
    matrix = np.eye(n)
    for k, row in enumerate(rows):
        entry = row.get('coupling')
        if entry is None:
            continue
        if not isinstance(entry, Mapping) or not entry:
            raise InputError(f'coupling of {joint_names[k]}: expected {{joint: coefficient}}, got {entry!r}')
        matrix[k] = 0.0
        for name, value in entry.items():
            if name not in index:
                raise InputError(f'coupling of {joint_names[k]}: {name!r} is not a joint of the robot')
            try:
                matrix[k, index[name]] = float(value)
            except (TypeError, ValueError):
                raise InputError(f'coupling of {joint_names[k]}: {name}: expected a number, got {value!r}') from None
    return matrix


def _offsets(rows: list[Mapping]) -> np.ndarray | None:
    if not any('motor_offset' in row for row in rows):
        return None
    try:
        return np.array([float(row.get('motor_offset', 0.0)) for row in rows])
    except (TypeError, ValueError) as error:
        raise InputError(f'motor_offset: expected a number per joint [rad] ({error})') from None


def _combination(coefficients, symbols) -> str:
    """``2·a − b`` of the nonzero coefficients (1 and −1 without a factor), ``0`` when none."""
    text = ''
    for c, symbol in zip(coefficients, symbols, strict=True):
        if c == 0:
            continue
        size = abs(float(c))
        term = symbol if size == 1 else f'{size:g}·{symbol}'
        text += (' − ' if c < 0 else ' + ') + term if text else ('−' if c < 0 else '') + term
    return text or '0'


def transmission(drives: JointDrives) -> dict:
    """What a drives file means, motor by motor (module docstring): its gear ratio r, drive gain K_τ [N·m/A, link
    side] and torque constant k_t = K_τ/r [N·m/A, motor side], rotor inertia B [kg·m², link side] and J = B/r²
    [kg·m², motor side], encoder offset [rad, shaft], the coupling C (rows: motors, columns: joints; identity
    without one) and, as text, the motors' shaft angles from the joints', the joints' angles from the motors' and the
    joints' torques from the motors' (τ = Cᵀ·(K_τ·i) = Cᵀ·(r·τ_m)), and the joints several motors make
    (:meth:`JointDrives.shared_joints`)."""
    names = drives.joint_names
    n = len(names)
    coupling = np.eye(n) if drives.coupling is None else drives.coupling
    inverse = np.linalg.inv(coupling)
    offset = np.zeros(n) if drives.motor_offset is None else drives.motor_offset
    motors = [{'joint': name, 'gear_ratio': float(drives.gear_ratio[k]), 'drive_gain': float(drives.drive_gain[k]),
               'torque_constant': float(drives.torque_constant[k]), 'rotor_inertia': float(drives.rotor_inertia[k]),
               'rotor_inertia_motor': float(drives.rotor_inertia_motor[k]), 'motor_offset': float(offset[k]),
               'turns': {other: float(c) for other, c in zip(names, coupling[k], strict=True) if c != 0}}
              for k, name in enumerate(names)]
    q = [f'q[{name}]' for name in names]
    angles = [f'θ_m[{name}] = {_combination(drives.gear_ratio[k] * coupling[k], q)}'
              + (f' {"−" if offset[k] < 0 else "+"} {abs(offset[k]):g} rad' if offset[k] else '')
              for k, name in enumerate(names)]
    theta = [f'θ[{name}]' for name in names]
    joints = [f'q[{name}] = ' + _combination(inverse[j], theta) for j, name in enumerate(names)]
    motor_torque = [f'τ_m[{name}]' for name in names]
    torques = [f'τ[{name}] = ' + _combination(coupling[:, j] * drives.gear_ratio, motor_torque)
               for j, name in enumerate(names)]
    return {'motors': motors, 'coupling': None if drives.coupling is None else coupling.tolist(),
            'motor_angles': angles, 'joint_angles': joints, 'joint_torques': torques,
            'shared_joints': [names[j] for j in drives.shared_joints()]}


def reversed_motor_text(joint: str | None, ratio: float) -> str:
    """Why a gear ratio of negative sign (a motor that turns against its joint, as manufacturers publish it) is refused
    and how a drives file writes that motor: r > 0 and −1 in its coupling row (module docstring). ``joint``: the
    joint's name where known."""
    name = joint if joint is not None else '<this joint>'
    return (f'must be > 0, got {ratio:g}: a motor that turns against its joint is written gear_ratio: {abs(ratio):g} '
            f'with coupling: {{{name}: -1}} (where its entry has a coupling row, negate that row\'s entries)')


def load_drives(path, joint_names: Sequence[str]) -> JointDrives:
    """Drives of the joints ``joint_names`` from a drives file (module docstring); InputError naming
    the file and the field otherwise."""
    data = read_yaml(path, 'drives file')
    spec = Table(DRIVE_FIELDS, keys='joints', every=True)
    wrapped = isinstance(data, Mapping) and set(data) == {'drives'}
    check(data, Fields(required={'drives': spec}) if wrapped else spec, f'drives file {path}', joints=joint_names)
    data = data['drives'] if wrapped else data
    try:
        return JointDrives.from_dict(data, joint_names)
    except InputError as error:
        raise InputError(f'drives file {path}: {error}') from None
