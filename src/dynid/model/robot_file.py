"""The dynid robot file: a serial arm of revolute joints described by its DH table (YAML, ``dynid_robot: 1``).

The built-in arms of :mod:`dynid.model.robots` are such files (``dynid/model/data/``, each with its
sources and assumptions)::

    dynid_robot: 1
    name: my_arm
    convention: standard            # or modified (see dynid.model.dh)
    gravity: [0, 0, -9.81]          # m/s², base frame; optional
    flange: tool0                   # payload frame name, at DH frame n; optional
    flange_origin: {xyz: [0, 0, 0.107], rpy_deg: [0, 0, 0]}   # the flange in DH frame n; optional
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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pinocchio as pin

from dynid.errors import InputError
from dynid.files import read_yaml
from dynid.model.dh import DHJoint, build_dh_model
from dynid.model.drives import DRIVE_FIELDS, JointDrives
from dynid.model.inertial import check_inertia, cylinder_inertia, parameters_from_com
from dynid.model.robot import RobotModel
from dynid.schema import Fields, Items, Number, OneOf, Text, check, matrix, vector

ROBOT_FILE_VERSION = 1
LENGTH_LIMIT_M = 100.0  # what a DH length, a centre of mass or a flange offset may be at all [m]
ANGLE_LIMIT_RAD = 1000.0  # what an angle (or a joint limit) may be at all [rad]; ±inf for no limit


def _angles(*names: str) -> dict:
    """Each of ``names`` in rad and as ``<name>_deg`` in degrees (the file takes either)."""
    spec = {}
    for name in names:
        spec[name] = Number('rad', low=-ANGLE_LIMIT_RAD, high=ANGLE_LIMIT_RAD)
        spec[f'{name}_deg'] = Number('°', low=-np.rad2deg(ANGLE_LIMIT_RAD), high=np.rad2deg(ANGLE_LIMIT_RAD))
    return spec


_LIMIT = {'lower': Number('rad', low=-np.inf, high=np.inf), 'lower_deg': Number('°', low=-np.inf, high=np.inf),
          'upper': Number('rad', low=-np.inf, high=np.inf), 'upper_deg': Number('°', low=-np.inf, high=np.inf),
          'velocity': Number('rad/s', above=0.0, high=np.inf), 'velocity_deg': Number('°/s', above=0.0, high=np.inf),
          'effort': Number('N·m', above=0.0, high=np.inf)}
_CYLINDER = Fields(required={'radius': Number('m', above=0.0, high=LENGTH_LIMIT_M),
                             'length': Number('m', above=0.0, high=LENGTH_LIMIT_M)},
                   optional={'axis': Text(('x', 'y', 'z'))})
_LINK = Fields(required={'mass': Number('kg', low=0.0, high=1.0e5)},
               optional={'com': vector(3, 'm'),
                         'inertia': OneOf((matrix(3, 3, 'kg·m²'), Fields(required={'cylinder': _CYLINDER})),
                                          'a 3x3 matrix [kg·m²] or {cylinder: {radius, length, axis}}')})
#: one joint of a robot file (module docstring)
JOINT_FIELDS = Fields(
    required={'name': Text(empty=False),
              'dh': Fields(required={'a': Number('m', low=-LENGTH_LIMIT_M, high=LENGTH_LIMIT_M),
                                     'd': Number('m', low=-LENGTH_LIMIT_M, high=LENGTH_LIMIT_M)},
                           optional=_angles('alpha', 'theta_offset'))},
    optional={'limits': Fields(optional=_LIMIT), 'link': _LINK, 'drive': DRIVE_FIELDS,
              'friction': Fields(optional={'viscous': Number('N·m·s/rad', low=0.0, high=1.0e6),
                                           'coulomb': Number('N·m', low=0.0, high=1.0e6)})},
    name='a joint: {name, dh, limits, link, drive, friction}')
#: a dynid robot file (module docstring)
ROBOT_FILE = Fields(
    required={'dynid_robot': Number(low=ROBOT_FILE_VERSION, high=ROBOT_FILE_VERSION, integer=True),
              'joints': Items(JOINT_FIELDS, least=1)},
    optional={'name': Text(empty=False), 'convention': Text(('standard', 'modified')), 'gravity': vector(3, 'm/s²'),
              'flange': Text(empty=False),
              'flange_origin': Fields(optional={'xyz': vector(3, 'm'), 'rpy': vector(3, 'rad'),
                                                'rpy_deg': vector(3, '°')})})


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


def _vector(mapping: Mapping, key: str, where: str) -> np.ndarray:
    """A 3-vector ``key`` (or ``<key>_deg``, in degrees) of ``mapping``, zeros when absent."""
    scale = 1.0
    if f'{key}_deg' in mapping:
        key, scale = f'{key}_deg', np.pi / 180.0
    try:
        value = np.asarray(mapping.get(key, (0.0, 0.0, 0.0)), dtype=float) * scale
    except (TypeError, ValueError):
        value = np.full(1, np.nan)
    if value.shape != (3,) or not np.all(np.isfinite(value)):
        raise InputError(f'{where}: {key!r} must be 3 numbers')
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
        joints: the DH rows, base to tip. flange: payload frame name.
        flange_placement: the flange in DH frame n (identity: DH frame n itself).
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
    flange_placement: pin.SE3 = pin.SE3.Identity()


def _friction(row: Mapping, where: str) -> dict[str, float]:
    values = row['friction']
    if not isinstance(values, Mapping) or not set(values) <= {'viscous', 'coulomb'}:
        raise InputError(f'{where}: friction must be a mapping of viscous [N·m·s/rad] and coulomb [N·m]')
    friction = {key: _number(values, key, where, 0.0) for key in ('viscous', 'coulomb')}
    if min(friction.values()) < 0:
        raise InputError(f'{where}: friction coefficients must be >= 0, got {dict(values)}')
    return friction


def _flange_placement(data: Mapping, source: str) -> pin.SE3:
    origin = data.get('flange_origin', {})
    if not isinstance(origin, Mapping) or not set(origin) <= {'xyz', 'rpy', 'rpy_deg'}:
        raise InputError(f'{source}: flange_origin must be a mapping of xyz [m] and rpy [rad] (or rpy_deg)')
    where = f'{source}: flange_origin'
    return pin.SE3(pin.rpy.rpyToMatrix(_vector(origin, 'rpy', where)), _vector(origin, 'xyz', where))


def read_robot_file_data(data, source: str) -> DHRobotFile:
    """The checked content of a parsed dynid robot file (:class:`DHRobotFile`)."""
    if not isinstance(data, Mapping) or data.get('dynid_robot') != ROBOT_FILE_VERSION:
        raise InputError(f'{source} is not a dynid robot file (needs "dynid_robot: {ROBOT_FILE_VERSION}")')
    check(data, ROBOT_FILE, source)
    names = [row['name'] for row in data['joints']]
    if len(set(names)) != len(names):
        raise InputError(f'{source}: joints must have distinct names, got {names}')
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
                       drives=drives or None, friction=friction, flange_placement=_flange_placement(data, source))


def robot_from_file_data(data, source: str) -> RobotModel:
    """RobotModel from the parsed content of a dynid robot file."""
    table = read_robot_file_data(data, source)
    names = [j.name for j in table.joints]
    model = build_dh_model(table.joints, convention=table.convention, name=table.name, flange=table.flange,
                           flange_placement=table.flange_placement)
    robot = RobotModel(model, flange=table.flange, source=source,
                       drives=JointDrives.from_dict(table.drives, names) if table.drives else None)
    return robot.with_gravity(table.gravity) if table.gravity is not None else robot


def load_robot_file(path: str | os.PathLike) -> RobotModel:
    """RobotModel from a dynid robot file (module docstring)."""
    return robot_from_file_data(read_yaml(path, 'robot file'), source=str(path))
