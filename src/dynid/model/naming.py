"""Joint names as the vendors write them, matched to a model's joints.

A driver, a recording or a URDF may name a model's joints differently:

- Universal Robots: ``shoulder_pan_joint`` … ``wrist_3_joint`` behind the driver's ``tf_prefix``
  (``left_shoulder_pan_joint``);
- Franka: ``<robot_type>_joint1..7`` with robot_type ``fr3``, ``fer`` (the Panda, formerly ``panda``) or
  ``fp3``, behind franka_ros2's ``arm_prefix`` (``left_fr3_joint1``);
- anything else: an explicit joint map, ``NAME=MODEL_JOINT`` pairs (``--joint-map`` / ``joint_map``).

:func:`match_joint_names` finds, for each model joint in order, the name it has among the names
available: the map's, the same name, or the same joint behind one common prefix (the vendors' prefixes
above). Which robot a description is (by its joints and kinematics) is :mod:`dynid.model.recognize`'s
job; this module only matches names.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from dynid.errors import InputError

#: The joints of a Universal Robots arm, in chain order (ur_description).
UR_JOINTS = ('shoulder_pan_joint', 'shoulder_lift_joint', 'elbow_joint', 'wrist_1_joint', 'wrist_2_joint',
             'wrist_3_joint')

#: What a ``joint_map`` parameter or ``--joint-map`` option holds, for their descriptions.

#: franka_description's robot types, whose joints are ``<robot_type>_joint<i>``.
FRANKA_TYPES = ('panda', 'fer', 'fr3', 'fp3')

_FRANKA = re.compile(r'^(?P<prefix>.*?)(?P<kind>' + '|'.join(FRANKA_TYPES) + r')_(?P<joint>joint\d+)$')


def joint_core(name: str) -> tuple[str, str]:
    """(prefix, the joint's vendor-independent name) of a joint name.

    ``left_shoulder_pan_joint`` -> (``left_``, ``shoulder_pan_joint``); ``left_fr3_joint2`` and ``fer_joint2``
    -> (``left_``, ``franka_joint2``) and (``''``, ``franka_joint2``): Franka's robot types name the same
    joints. Other names are their own core.
    """
    franka = _FRANKA.match(name)
    if franka:
        return franka['prefix'], f'franka_{franka["joint"]}'
    for core in UR_JOINTS:
        if name.endswith(core):
            return name[:-len(core)], core
    return '', name


def franka_type(name: str) -> str | None:
    """The franka_description robot type a joint name carries (``fr3`` of ``left_fr3_joint1``), or None."""
    match = _FRANKA.match(name)
    return match['kind'] if match else None


def family(joint_names: Sequence[str]) -> str | None:
    """``'ur'`` or ``'franka'`` where the names are that vendor's arm joints in chain order (any one prefix)."""
    cores = [joint_core(name) for name in joint_names]
    if len({prefix for prefix, _ in cores}) != 1:
        return None
    names = tuple(core for _, core in cores)
    if names == UR_JOINTS:
        return 'ur'
    if names == tuple(f'franka_joint{i}' for i in range(1, 8)):
        return 'franka'
    return None


def vendor_arm_joints(joint_names: Sequence[str]) -> list[str] | None:
    """The joints of the one vendor arm among ``joint_names`` (a description's movable joints, e.g. an FR3
    with its hand's fingers), in chain order; None where there is none or more than one arm."""
    by_prefix: dict[tuple[str, str], dict[str, str]] = {}
    for name in joint_names:
        prefix, core = joint_core(name)
        kind = 'franka' if core.startswith('franka_joint') else 'ur' if core in UR_JOINTS else None
        if kind:
            by_prefix.setdefault((prefix, kind), {})[core] = name
    arms = []
    for (_, kind), cores in by_prefix.items():
        order = UR_JOINTS if kind == 'ur' else tuple(f'franka_joint{i}' for i in range(1, 8))
        if all(core in cores for core in order):
            arms.append([cores[core] for core in order])
    return arms[0] if len(arms) == 1 else None


def vendor_flange(joint_names: Sequence[str]) -> str | None:
    """The flange frame of a vendor's arm with these joints: ``<tf_prefix>tool0`` (ur_description) or
    ``<arm_prefix><robot_type>_link8`` (franka_description); None for other arms."""
    kind = family(joint_names)
    prefix = joint_core(joint_names[0])[0] if kind else ''
    if kind == 'ur':
        return f'{prefix}tool0'
    if kind == 'franka':
        return f'{prefix}{franka_type(joint_names[0])}_link8'
    return None


def parse_joint_map(text: str | Mapping[str, str] | None) -> dict[str, str]:
    """A joint map from ``'NAME=MODEL_JOINT,...'`` text (or a mapping): {model joint: its name elsewhere}.

    Raises InputError naming ``joint_map`` for a malformed pair or a model joint given twice.
    """
    if not text:
        return {}
    pairs = text.items() if isinstance(text, Mapping) else \
        [pair.split('=', 1) if '=' in pair else (pair, '') for pair in str(text).split(',') if pair.strip()]
    mapping: dict[str, str] = {}
    for name, model in pairs:
        name, model = str(name).strip(), str(model).strip()
        if not name or not model:
            raise InputError(f'joint_map: expected NAME=MODEL_JOINT pairs separated by commas, got {text!r}')
        if model in mapping:
            raise InputError(f'joint_map: model joint {model!r} is given twice')
        mapping[model] = name
    return mapping


def match_joint_names(model_names: Sequence[str], available: Sequence[str],
                      joint_map: Mapping[str, str] | None = None, where: str = 'the recording') -> tuple[str, ...]:
    """The name of each model joint among ``available``, in model order.

    Each model joint is found by the joint map ({model joint: name}), by its own name, or as the same
    vendor joint (:func:`joint_core`) behind one prefix common to all of them. Raises InputError naming
    ``where``, the joints not found and the names it has, when a joint is missing or two prefixes fit
    (two arms in one message: give the map).
    """
    joint_map = dict(joint_map or {})
    unknown = sorted(set(joint_map) - set(model_names))
    if unknown:
        raise InputError(f'joint_map names {unknown}, which are not joints of the model ({list(model_names)})')
    names = list(available)
    found: dict[str, str] = {}
    for model in model_names:
        if model in joint_map:
            if joint_map[model] not in names:
                raise InputError(f'joint_map: {where} has no joint {joint_map[model]!r} (it has {names})')
            found[model] = joint_map[model]
        elif model in names:
            found[model] = model
    rest = [model for model in model_names if model not in found]
    if rest:
        cores = {joint_core(name): name for name in names}
        wanted = {model: joint_core(model)[1] for model in rest}
        prefixes = sorted({prefix for (prefix, core) in cores if core in wanted.values()})
        fitting = [p for p in prefixes if all((p, core) in cores for core in wanted.values())]
        if len(fitting) > 1:
            raise InputError(f'{where} holds the joints {sorted(wanted.values())} under several prefixes '
                             f'({", ".join(repr(p) for p in fitting)}): give a joint_map (NAME=MODEL_JOINT,...)')
        if not fitting:
            raise InputError(f'{where} lacks joints {rest} of the model (it has {names}); name them with a '
                             f'joint_map (NAME=MODEL_JOINT,...)')
        found.update({model: cores[(fitting[0], core)] for model, core in wanted.items()})
    result = tuple(found[model] for model in model_names)
    if len(set(result)) != len(result):
        raise InputError(f'{where}: two model joints map to one name ({list(result)})')
    return result
