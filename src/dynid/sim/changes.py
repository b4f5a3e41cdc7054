"""Scheduled changes of the twin's true joint properties during a run: wear and stiffness loss.

Online estimators are benchmarked against a known change of the truth: Madsen et al. 2019 (ICRA)
scale the flexibility torque τ_E(φ) of a joint by 0.5 at t = 10 s; Madsen 2020, ch.6 eq. (24)
adapts a scale α1 on the E-GMS Coulomb term F(τ_j)·H (wear raises the Coulomb friction; eq. (27)
projects α1 to [0.4, 1.5]) and an excess viscous coefficient α2 (a lagging temperature compensation).

One :class:`JointChange` says what changes, on which joints, and when:

    stiffness_scale  s > 0:  α1 ← s·α1⁰,  α3 ← s·α3⁰           (τ_E(φ) ← s·τ_E⁰(φ))
    coulomb_scale    c > 0:  Fc0 ← c·Fc0⁰,  Fc1 ← c·Fc1⁰,  Fs ← Fs⁰ + (c − 1)·Fc0⁰
    viscous_excess   v:      Fv1 ← Fv1⁰ + v   [N·m·s/rad]

with ⁰ the values when the twin was made, so that a change is absolute (scale 0.5 then 1.0 restores
the original) and the effects of separate fields combine. The Coulomb scale multiplies the whole
load-dependent level F(τ_j) = Fc0 + Fc1·τ_j² (Madsen 2020, ch.6 eq. (20)), as the adaptive law's α1
does, so an estimator of that law should converge to α1 = c; the Stribeck excess Fs − Fc0 (the part
of static friction above the no-load Coulomb level, ch.6 eq. (11)) is kept. Fields a change leaves
out (None) keep their current values.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np

from dynid.checks import finite
from dynid.errors import InputError
from dynid.sim.parameters import JointParameters

#: The joint parameters a change can move (recorded before and after each change).
CHANGED_FIELDS = ('alpha1', 'alpha3', 'coulomb', 'static', 'load_coefficient', 'viscous1')
#: Keys of a change in a trajectory file's ``joint_changes`` entries and in ``--change`` strings.
CHANGE_KEYS = ('time_s', 'joints', 'stiffness_scale', 'coulomb_scale', 'viscous_excess')
_ALIASES = {'time': 'time_s', 't': 'time_s'}
_ALL = ('all', '*')


#: the setting a change's error names (``{joint_changes}``: the command line's --change, sim_node's parameter)
FIELDS = ('joint_changes',)


def joint_mask(joints: Sequence[str] | None, joint_names: Sequence[str], where: str) -> np.ndarray:
    """(n,) bool: the joints of ``joint_names`` that ``joints`` names (None: every joint); InputError naming
    ``where`` for a name the robot does not have."""
    if joints is None:
        return np.ones(len(joint_names), dtype=bool)
    unknown = [j for j in joints if j not in joint_names]
    if unknown:
        raise InputError(f'{where}: unknown joints {unknown}; the robot has {list(joint_names)}', fields=FIELDS)
    return np.array([name in joints for name in joint_names], dtype=bool)


@dataclass(frozen=True)
class JointChange:
    """A change of the true joint parameters at ``time_s`` [s] (module docstring).

    Args:
        time_s: twin time [s] >= 0; the change applies at the first output sample at or after it.
        joints: joint names, or None for every joint.
        stiffness_scale: factor > 0 on α1 and α3 (of the values when the twin was made).
        coulomb_scale: factor > 0 on Fc0 and Fc1, with the Stribeck excess Fs − Fc0 kept.
        viscous_excess: [N·m·s/rad] added to Fv1 (may be negative while Fv1 stays >= 0).
    """

    time_s: float
    joints: tuple[str, ...] | None = None
    stiffness_scale: float | None = None
    coulomb_scale: float | None = None
    viscous_excess: float | None = None

    def __post_init__(self) -> None:
        time_s = finite(self.time_s, 'joint change time_s')
        if time_s < 0:
            raise InputError(f'joint change time_s must be >= 0 s, got {time_s:g}')
        object.__setattr__(self, 'time_s', time_s)
        for name in ('stiffness_scale', 'coulomb_scale'):
            value = getattr(self, name)
            if value is not None:
                value = finite(value, f'joint change {name}')
                if value <= 0:
                    raise InputError(f'joint change {name} must be > 0, got {value!r}')
                object.__setattr__(self, name, value)
        if self.viscous_excess is not None:
            object.__setattr__(self, 'viscous_excess', finite(self.viscous_excess, 'joint change viscous_excess'))
        if self.stiffness_scale is None and self.coulomb_scale is None and self.viscous_excess is None:
            raise InputError(f'joint change at {time_s:g} s changes nothing: give stiffness_scale, coulomb_scale '
                             'or viscous_excess')
        joints = self.joints
        if joints is not None:
            if isinstance(joints, str):
                joints = (joints,)
            if not isinstance(joints, Iterable) or not all(isinstance(j, str) and j for j in joints):
                raise InputError(f'joint change joints must be joint names, got {self.joints!r}')
            joints = tuple(joints)
            if not joints:
                raise InputError('joint change joints is empty (leave it out for all joints)')
            if len(set(joints)) != len(joints):
                raise InputError(f'joint change names a joint twice: {list(joints)}')
            if any(j in _ALL for j in joints):
                if len(joints) > 1:
                    raise InputError(f"joint change joints: 'all' stands alone, got {list(joints)}")
                joints = None
            object.__setattr__(self, 'joints', joints)

    def mask(self, joint_names: Sequence[str]) -> np.ndarray:
        """(n,) bool: the joints of ``joint_names`` this change acts on; InputError for unknown names."""
        return joint_mask(self.joints, joint_names, f'joint change at {self.time_s:g} s')

    def applied_to(self, original: JointParameters, current: JointParameters,
                   joint_names: Sequence[str]) -> JointParameters:
        """``current`` with this change made on its joints, relative to ``original`` (module docstring).

        Raises InputError when a viscous excess would make Fv1 negative.
        """
        mask = self.mask(joint_names)
        values = {}
        if self.stiffness_scale is not None:
            values['alpha1'] = np.where(mask, self.stiffness_scale * original.alpha1, current.alpha1)
            values['alpha3'] = np.where(mask, self.stiffness_scale * original.alpha3, current.alpha3)
        if self.coulomb_scale is not None:
            c = self.coulomb_scale
            values['coulomb'] = np.where(mask, c * original.coulomb, current.coulomb)
            values['load_coefficient'] = np.where(mask, c * original.load_coefficient, current.load_coefficient)
            values['static'] = np.where(mask, original.static + (c - 1.0) * original.coulomb, current.static)
        if self.viscous_excess is not None:
            viscous1 = np.where(mask, original.viscous1 + self.viscous_excess, current.viscous1)
            if np.any(viscous1 < 0):
                names = [n for n, bad in zip(joint_names, viscous1 < 0, strict=True) if bad]
                raise InputError(f'joint change at {self.time_s:g} s: viscous_excess {self.viscous_excess:g} makes '
                                 f'Fv1 of {names} negative')
            values['viscous1'] = viscous1
        return replace(current, **values).validated(len(joint_names))

    def to_dict(self) -> dict:
        """Plain data: time_s, joints ('all' or names) and the fields given."""
        data = {'time_s': self.time_s, 'joints': 'all' if self.joints is None else list(self.joints)}
        for name in ('stiffness_scale', 'coulomb_scale', 'viscous_excess'):
            if getattr(self, name) is not None:
                data[name] = getattr(self, name)
        return data


def joint_change_from_mapping(entry: Mapping, where: str = 'joint change') -> JointChange:
    """A change from plain data: keys of :data:`CHANGE_KEYS` (``time`` for ``time_s`` too); joints
    as a list of names, one name or 'all'."""
    if not isinstance(entry, Mapping):
        raise InputError(f'{where} must be a mapping of {", ".join(CHANGE_KEYS)}, got {entry!r}', fields=FIELDS)
    values = {}
    for key, value in entry.items():
        name = _ALIASES.get(str(key), str(key))
        if name not in CHANGE_KEYS:
            raise InputError(f'{where}: unknown key {key!r} (expected {", ".join(CHANGE_KEYS)})', fields=FIELDS)
        if name in values:
            raise InputError(f'{where}: {name} given twice', fields=FIELDS)
        values[name] = value
    if 'time_s' not in values:
        raise InputError(f'{where}: the time (time_s, or time) is missing', fields=FIELDS)
    try:
        return JointChange(**values)
    except InputError as error:
        raise InputError(f'{where}: {error}', fields=FIELDS) from None


def parse_joint_change(text: str) -> JointChange:
    """A change from ``time=10,stiffness_scale=0.5,joints=shoulder_pan_joint,elbow_joint``.

    Comma-separated KEY=VALUE (keys of :data:`CHANGE_KEYS`, ``time`` for ``time_s``); after
    ``joints=`` further names follow as bare comma-separated words; joints default to all.
    """
    where = f'{{joint_changes}} {text!r}'
    entry: dict = {}
    last = None
    for token in (t.strip() for t in str(text).split(',')):
        if not token:
            raise InputError(f'{where}: empty item (expected KEY=VALUE, comma-separated)', fields=FIELDS)
        if '=' not in token:
            if last != 'joints':
                raise InputError(f'{where}: {token!r} is not KEY=VALUE', fields=FIELDS)
            entry['joints'].append(token)
            continue
        key, value = (part.strip() for part in token.split('=', 1))
        if key in entry or _ALIASES.get(key, key) in {_ALIASES.get(k, k) for k in entry}:
            raise InputError(f'{where}: {key} given twice', fields=FIELDS)
        entry[key] = [value] if key == 'joints' else value
        last = key
    if 'joints' in entry and entry['joints'] == ['all']:
        entry['joints'] = None
    return joint_change_from_mapping(entry, where)


def joint_changes_from_list(entries, where: str = 'joint_changes') -> list[JointChange]:
    """The ``joint_changes`` list of a trajectory file (each entry as :func:`joint_change_from_mapping`)."""
    if entries is None:
        return []
    if not isinstance(entries, list):
        raise InputError(f'{where} must be a list of changes, got {type(entries).__name__}', fields=FIELDS)
    return [joint_change_from_mapping(entry, f'{where}[{i}]') for i, entry in enumerate(entries)]


@dataclass(frozen=True)
class AppliedJointChange:
    """A change as the twin applied it: at output ``sample`` (time ``applied_s`` [s]), with the
    :data:`CHANGED_FIELDS` of its joints before and after, {joint: {field: value}}."""

    change: JointChange
    sample: int
    applied_s: float
    before: dict
    after: dict

    def to_dict(self) -> dict:
        return {**self.change.to_dict(), 'applied_s': self.applied_s, 'sample': self.sample,
                'before': self.before, 'after': self.after}


def changed_fields(joints: JointParameters, joint_names: Sequence[str], mask: np.ndarray) -> dict:
    """{joint: {field: value}} of :data:`CHANGED_FIELDS` for the joints in ``mask``."""
    return {name: {f: float(getattr(joints, f)[i]) for f in CHANGED_FIELDS}
            for i, name in enumerate(joint_names) if mask[i]}
