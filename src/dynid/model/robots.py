"""Where robots come from: built-in names, URDF files or strings, and dynid DH robot files.

A **dynid robot file** (YAML, ``dynid_robot: 1``) describes a serial arm of revolute joints by its
DH table; the built-ins ``ur3e``, ``ur5e``, ``ur10e`` and ``ur16e`` are ones (``dynid/model/data/``,
each with its sources and assumptions)::

    dynid_robot: 1
    name: my_arm
    convention: standard            # or modified (see dynid.model.dh)
    gravity: [0, 0, -9.81]          # m/s², base frame; optional
    flange: tool0                   # payload frame name, at DH frame n; optional
    joints:
      - name: joint_1
        dh: {a: 0.0, d: 0.1625, alpha_deg: 90.0, theta_offset_deg: 0.0}   # m; or alpha [rad]
        limits: {lower_deg: -360, upper_deg: 360, velocity_deg: 180, effort: 150}  # optional
        link:                       # in DH frame i
          mass: 3.761                                    # kg
          com: [0.0, -0.02561, 0.00193]                  # m
          inertia: {cylinder: {radius: 0.06, length: 0.15, axis: z}}   # or a 3x3 about the CoM
        drive: {gear_ratio: 101, drive_gain: 13.5, rotor_inertia: 0.6}  # optional, all or none
        friction: {viscous: 0.2, coulomb: 3.0}  # optional nominal N·m·s/rad, N·m: written to URDFs only

Angles are in radians unless the key ends in ``_deg``.
"""

from __future__ import annotations

import os
import sysconfig
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import numpy as np
import yaml

from dynid.errors import InputError
from dynid.files import read_yaml
from dynid.model.dh import DHJoint, build_dh_model
from dynid.model.drives import JointDrives, load_drives
from dynid.model.inertial import check_inertia, cylinder_inertia, parameters_from_com
from dynid.model.robot import RobotModel

ROBOT_FILE_VERSION = 1

#: Built-in robot names and what they are.
BUILTIN_ROBOTS = {
    'ur5e': 'UR5e from the public standard-DH table (dynid robot file; inertias assumed)',
    'ur3e': 'UR3e from the public standard-DH table (dynid robot file; inertias and drives assumed)',
    'ur10e': 'UR10e from the public standard-DH table (dynid robot file; inertias and drives assumed)',
    'ur16e': 'UR16e from the public standard-DH table (dynid robot file; inertias and drives assumed)',
    'ur5': 'UR5 URDF from example-robot-data',
    'panda': 'Franka Panda URDF from example-robot-data, 7 arm joints (fingers locked), nominal drives assumed',
}

#: The joints of a Universal Robots arm, in chain order (ur_description; the built-in ur* robots).
UR_JOINTS = ('shoulder_pan_joint', 'shoulder_lift_joint', 'elbow_joint', 'wrist_1_joint', 'wrist_2_joint',
             'wrist_3_joint')


def is_universal_robot(joint_names: Sequence[str]) -> bool:
    """Whether ``joint_names`` are a UR arm's: :data:`UR_JOINTS` in order, each under the same prefix (as
    ur_description's ``tf_prefix`` puts before them, e.g. ``left_shoulder_pan_joint``)."""
    names = tuple(joint_names)
    if len(names) != len(UR_JOINTS) or not names[0].endswith(UR_JOINTS[0]):
        return False
    prefix = names[0][:-len(UR_JOINTS[0])]
    return names == tuple(prefix + name for name in UR_JOINTS)


# Built-ins that are dynid robot files under dynid/model/data/.
_DH_ROBOTS = ('ur3e', 'ur5e', 'ur10e', 'ur16e')

# name: (file under example-robot-data's robots/, joints kept, flange frame, drives file under data/ or None)
_EXAMPLE_ROBOTS = {
    'ur5': ('ur_description/urdf/ur5_robot.urdf', None, 'tool0', None),
    'panda': ('panda_description/urdf/panda.urdf', [f'panda_joint{i}' for i in range(1, 8)],
              'panda_link8', 'panda_drives.yaml'),
}


def load_robot(spec: str, joints: Sequence[str] | None = None) -> RobotModel:
    """RobotModel from a built-in name, a ``.urdf`` path, URDF XML, or a dynid robot file (``.yaml``).

    Args:
        spec: what to load (see :data:`BUILTIN_ROBOTS`).
        joints: for URDFs, the joints to keep (others locked).

    Raises:
        InputError: unknown name, missing or broken file, with a one-line reason.
    """
    if not isinstance(spec, str) or not spec.strip():
        raise InputError(f'robot must be a name ({", ".join(BUILTIN_ROBOTS)}), a .urdf or .yaml path, '
                         f'or URDF XML; got {spec!r}')
    if spec in _DH_ROBOTS:
        text = resources.files('dynid.model').joinpath(f'data/{spec}.yaml').read_text()
        return robot_from_file_data(yaml.safe_load(text), source=f'built-in {spec}')
    if spec in _EXAMPLE_ROBOTS:
        relative, default_joints, flange, drives_file = _EXAMPLE_ROBOTS[spec]
        kept = joints or default_joints
        drives = None
        if drives_file is not None and kept == default_joints:  # nominal drives are for the default joints
            with resources.as_file(resources.files('dynid.model').joinpath(f'data/{drives_file}')) as path:
                drives = load_drives(path, kept)
        return RobotModel.from_urdf(str(example_robot_path(relative)), joints=kept, name=spec, flange=flange,
                                    drives=drives)
    if spec.lstrip().startswith('<'):
        return RobotModel.from_urdf(spec, joints=joints)
    path = Path(spec)
    if path.suffix.lower() in ('.yaml', '.yml'):
        return load_robot_file(path)
    if path.suffix.lower() in ('.urdf', '.xml'):
        if not path.is_file():
            raise InputError(f'URDF file {spec} does not exist')
        return RobotModel.from_urdf(str(path), joints=joints)
    raise InputError(f'unknown robot {spec!r}: expected one of {", ".join(BUILTIN_ROBOTS)}, '
                     f'a .urdf path, a dynid robot .yaml, or URDF XML')


def example_robot_path(relative: str) -> Path:
    """Path of a file of the example-robot-data package (installed under the cmeel prefix)."""
    roots = {sysconfig.get_paths()['purelib'], sysconfig.get_paths()['platlib']}
    for root in sorted(roots):
        candidate = Path(root) / 'cmeel.prefix' / 'share' / 'example-robot-data' / 'robots' / relative
        if candidate.is_file():
            return candidate
    raise InputError(f'example-robot-data is not installed (needed for {relative}); '
                     f'pip install example-robot-data')


def load_robot_file(path: str | os.PathLike) -> RobotModel:
    """RobotModel from a dynid robot file (module docstring)."""
    return robot_from_file_data(read_yaml(path, 'robot file'), source=str(path))


def _number(mapping: Mapping, key: str, where: str, default: float | None = None,
            angle: bool = False) -> float:
    if angle and f'{key}_deg' in mapping:
        return np.deg2rad(_number(mapping, f'{key}_deg', where))
    if key not in mapping:
        if default is None:
            raise InputError(f'{where}: missing {key!r}')
        return default
    try:
        value = float(mapping[key])
    except (TypeError, ValueError):
        raise InputError(f'{where}: {key!r} must be a number, got {mapping[key]!r}') from None
    if np.isnan(value):
        raise InputError(f'{where}: {key!r} is NaN')
    return value


def _link_parameters(link: Mapping, where: str) -> np.ndarray:
    mass = _number(link, 'mass', where)
    if mass < 0:
        raise InputError(f'{where}: mass must be >= 0, got {mass}')
    com = np.asarray(link.get('com', [0.0, 0.0, 0.0]), dtype=float)
    if com.shape != (3,) or not np.all(np.isfinite(com)):
        raise InputError(f'{where}: com must be 3 numbers [m]')
    inertia = link.get('inertia', [[0.0] * 3] * 3)
    if isinstance(inertia, Mapping) and 'cylinder' in inertia:
        c = inertia['cylinder']
        tensor = cylinder_inertia(mass, _number(c, 'radius', where), _number(c, 'length', where),
                                  str(c.get('axis', 'z')))
    else:
        try:
            tensor = check_inertia(np.asarray(inertia, dtype=float), where)
        except (TypeError, ValueError) as error:
            raise InputError(f'{where}: inertia must be a 3x3 matrix or a cylinder ({error})') from None
    return parameters_from_com(mass, com, tensor)


@dataclass(frozen=True)
class DHRobotFile:
    """The content of a dynid robot file, read and checked (module docstring).

    Attributes:
        name: robot name. convention: ``standard`` or ``modified`` (:mod:`dynid.model.dh`).
        joints: the DH rows, base to tip. flange: payload frame name, at DH frame n.
        gravity: gravity [m/s²] in the base frame as the file gives it (checked by the model), or None
            (the default (0, 0, -9.81)).
        drives: joint name -> drive mapping (gear_ratio, drive_gain, rotor_inertia), or None.
        friction: joint name -> nominal ``{'viscous': Fv [N·m·s/rad], 'coulomb': Fc [N·m]}`` of the joints
            that give one (used by the URDF writer, :mod:`dynid.model.dh_urdf`; the model has no friction).
    """

    name: str
    convention: str
    joints: tuple[DHJoint, ...]
    flange: str
    gravity: Sequence[float] | None
    drives: dict | None
    friction: dict


def _friction(row: Mapping, where: str) -> dict[str, float]:
    values = row['friction']
    if not isinstance(values, Mapping) or not set(values) <= {'viscous', 'coulomb'}:
        raise InputError(f'{where}: friction must be a mapping of viscous [N·m·s/rad] and coulomb [N·m]')
    friction = {key: _number(values, key, where, 0.0) for key in ('viscous', 'coulomb')}
    if min(friction.values()) < 0:
        raise InputError(f'{where}: friction coefficients must be >= 0, got {dict(values)}')
    return friction


def read_robot_file_data(data, source: str) -> DHRobotFile:
    """The checked content of a parsed dynid robot file (:class:`DHRobotFile`)."""
    if not isinstance(data, Mapping) or data.get('dynid_robot') != ROBOT_FILE_VERSION:
        raise InputError(f'{source} is not a dynid robot file (needs "dynid_robot: {ROBOT_FILE_VERSION}")')
    rows = data.get('joints')
    if not isinstance(rows, list) or not rows:
        raise InputError(f'{source}: "joints" must be a non-empty list')
    joints, drives, friction = [], {}, {}
    for i, row in enumerate(rows, start=1):
        where = f'{source}: joint {i}'
        if not isinstance(row, Mapping) or not isinstance(row.get('name'), str):
            raise InputError(f'{where}: needs a name')
        dh, limits, link = (row.get(key, {}) for key in ('dh', 'limits', 'link'))
        if not all(isinstance(m, Mapping) for m in (dh, limits, link)):
            raise InputError(f'{where}: dh, limits and link must be mappings')
        joints.append(DHJoint(
            name=row['name'],
            a=_number(dh, 'a', where), d=_number(dh, 'd', where),
            alpha=_number(dh, 'alpha', where, angle=True),
            theta_offset=_number(dh, 'theta_offset', where, 0.0, angle=True),
            lower=_number(limits, 'lower', where, -np.inf, angle=True),
            upper=_number(limits, 'upper', where, np.inf, angle=True),
            velocity=_number(limits, 'velocity', where, np.inf, angle=True),
            effort=_number(limits, 'effort', where, np.inf),
            inertial=tuple(_link_parameters(link, where)) if link else (0.0,) * 10,
        ))
        if 'drive' in row:
            drives[row['name']] = row['drive']
        if 'friction' in row:
            friction[row['name']] = _friction(row, where)
    if drives and len(drives) != len(joints):
        raise InputError(f'{source}: give drive parameters for all joints or none')
    return DHRobotFile(name=str(data.get('name', 'robot')), convention=str(data.get('convention', 'standard')),
                       joints=tuple(joints), flange=str(data.get('flange', 'flange')), gravity=data.get('gravity'),
                       drives=drives or None, friction=friction)


def builtin_robot_file(spec: str) -> DHRobotFile:
    """The robot file of a built-in DH robot (``ur5e``, ...) or of a dynid robot ``.yaml`` path.

    Raises:
        InputError: ``spec`` is a URDF robot (a built-in from example-robot-data or a ``.urdf``) or unknown.
    """
    if spec in _DH_ROBOTS:
        text = resources.files('dynid.model').joinpath(f'data/{spec}.yaml').read_text()
        return read_robot_file_data(yaml.safe_load(text), source=f'built-in {spec}')
    if spec in _EXAMPLE_ROBOTS:
        raise InputError(f'{spec} is already a URDF: copy {example_robot_path(_EXAMPLE_ROBOTS[spec][0])}')
    path = Path(spec)
    if path.suffix.lower() in ('.yaml', '.yml'):
        return read_robot_file_data(read_yaml(path, 'robot file'), source=str(path))
    if path.suffix.lower() in ('.urdf', '.xml') or spec.lstrip().startswith('<'):
        raise InputError(f'{spec if len(spec) < 80 else "the robot"} is already a URDF: copy the file')
    raise InputError(f'unknown robot {spec!r}: expected a built-in DH robot ({", ".join(_DH_ROBOTS)}) '
                     f'or a dynid robot .yaml')


def robot_from_file_data(data, source: str) -> RobotModel:
    """RobotModel from the parsed content of a dynid robot file."""
    table = read_robot_file_data(data, source)
    names = [j.name for j in table.joints]
    model = build_dh_model(table.joints, convention=table.convention, name=table.name, flange=table.flange)
    robot = RobotModel(model, flange=table.flange, source=source,
                       drives=JointDrives.from_dict(table.drives, names) if table.drives else None)
    return robot.with_gravity(table.gravity) if table.gravity is not None else robot
