"""Where robots come from: the built-in arms, URDF files or strings, and dynid robot files.

The built-ins (:data:`BUILTINS`, ``dynid model --list``) are Universal Robots' CB3 and e-Series arms
and Franka's Panda (FER) and FR3, each with its model's source and its drive data's (estimates where
the vendor publishes none). Most are dynid robot files (:mod:`dynid.model.robot_file`) under
``dynid/model/data/``, each citing its sources in its header; ``ur5`` and ``panda`` are
example-robot-data's URDFs with a drives file beside them.

A URDF (a file, or the ``robot_description`` text a driver publishes) is taken as it is, whatever its
``<robot name>``; when its joints and kinematics are those of a built-in
(:mod:`dynid.model.recognize`), it gets that built-in's drive data and :attr:`RobotModel.builtin` says
which (``ur`` from ur_description is a ``ur5e`` with ``ur_type:=ur5e``; ``fer`` is the Panda).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path

from dynid.errors import InputError
from dynid.files import load_yaml, read_yaml
from dynid.model.description import urdf_joint_names
from dynid.model.drives import JointDrives, load_drives
from dynid.model.naming import UR_JOINTS, parse_joint_map, vendor_arm_joints, vendor_flange
from dynid.model.recognize import recognize
from dynid.model.robot import RobotModel
from dynid.model.robot_file import DHRobotFile, load_robot_file, read_robot_file_data, robot_from_file_data
from dynid.package_files import example_robot_path

_UR_DESCRIPTION = 'ur_description 2.4.5 (Universal_Robots_ROS2_Description), config/{}/'
_UR_DRIVES = 'dynid estimate by torque rating (UR publishes none)'
_FRANKA_DRIVES = 'dynid estimate: effort/12 A, 0.004·effort kg·m² (Franka publishes none)'


@dataclass(frozen=True)
class BuiltinRobot:
    """A built-in arm: its name, what it is, its family, its controller's rate and its data's sources.

    Attributes:
        name: the name ``load_robot`` takes. title: what it is. family: ``ur`` or ``franka``.
        rate_hz: the rate its vendor's controller publishes joint states at [Hz] (UR CB3 125, e-Series
            500, Franka 1000).
        model: where the kinematics, limits and inertials come from. drives: where the drive data come from.
    """

    name: str
    title: str
    family: str
    rate_hz: float
    model: str
    drives: str


BUILTINS: dict[str, BuiltinRobot] = {robot.name: robot for robot in (
    BuiltinRobot('ur3', 'UR3 (CB3)', 'ur', 125.0, _UR_DESCRIPTION.format('ur3') + '; link inertias dynid '
                 'cylinders', _UR_DRIVES),
    BuiltinRobot('ur5', 'UR5 (CB3)', 'ur', 125.0, "example-robot-data's ur5_robot.urdf (from ur_description)",
                 _UR_DRIVES),
    BuiltinRobot('ur10', 'UR10 (CB3)', 'ur', 125.0, _UR_DESCRIPTION.format('ur10'), _UR_DRIVES),
    BuiltinRobot('ur3e', 'UR3e (e-Series)', 'ur', 500.0, "UR's public DH table; link inertias dynid cylinders",
                 _UR_DRIVES),
    BuiltinRobot('ur5e', 'UR5e (e-Series)', 'ur', 500.0, "UR's public DH table; link inertias dynid cylinders",
                 _UR_DRIVES),
    BuiltinRobot('ur10e', 'UR10e (e-Series)', 'ur', 500.0, _UR_DESCRIPTION.format('ur10e') + '; data-sheet limits',
                 _UR_DRIVES),
    BuiltinRobot('ur16e', 'UR16e (e-Series)', 'ur', 500.0, _UR_DESCRIPTION.format('ur16e') + '; data-sheet limits',
                 _UR_DRIVES),
    BuiltinRobot('ur20', 'UR20', 'ur', 500.0, _UR_DESCRIPTION.format('ur20'), _UR_DRIVES),
    BuiltinRobot('ur30', 'UR30', 'ur', 500.0, _UR_DESCRIPTION.format('ur30'), _UR_DRIVES),
    BuiltinRobot('panda', 'Franka Emika Panda (FER), 7 arm joints', 'franka', 1000.0,
                 "example-robot-data's panda.urdf, fingers locked", _FRANKA_DRIVES),
    BuiltinRobot('fr3', 'Franka Research 3', 'franka', 1000.0,
                 'franka_description 1.0.1, robots/fr3/ (modified DH)', _FRANKA_DRIVES),
)}

#: Built-in robot names and what they are (one line each).
BUILTIN_ROBOTS = {name: f'{robot.title}: {robot.model}; drives: {robot.drives}' for name, robot in BUILTINS.items()}

#: Other names of built-ins: franka_description calls the Panda ``fer`` (Franka Emika Robot).
ALIASES = {'fer': 'panda'}

#: The vendors' launch arguments that name an arm (ur_robot_driver's ``ur_type``, franka_bringup's
#: ``robot_type``) -> the built-in, where dynid has one.
VENDOR_TYPES = {
    'ur_type': {name: name for name, robot in BUILTINS.items() if robot.family == 'ur'},
    'robot_type': {'fr3': 'fr3', 'fer': 'panda', 'panda': 'panda'},
}

#: built-ins that are dynid robot files under dynid/model/data/
DH_ROBOTS = ('ur3', 'ur10', 'ur3e', 'ur5e', 'ur10e', 'ur16e', 'ur20', 'ur30', 'fr3')

#: name: (file under example-robot-data's robots/, joints kept, flange frame, drives file under data/)
EXAMPLE_ROBOTS = {
    'ur5': ('ur_description/urdf/ur5_robot.urdf', list(UR_JOINTS), 'tool0', 'ur5_drives.yaml'),
    'panda': ('panda_description/urdf/panda.urdf', [f'panda_joint{i}' for i in range(1, 8)],
              'panda_link8', 'panda_drives.yaml'),
}


def builtin_for(vendor_argument: str, value: str) -> str | None:
    """The built-in a vendor launch argument names (``builtin_for('ur_type', 'ur10e')`` is ``'ur10e'``),
    or None where dynid has none (e.g. ``ur_type:=ur7e``)."""
    return VENDOR_TYPES.get(vendor_argument, {}).get(value)


def load_robot(spec: str, joints: Sequence[str] | None = None, joint_map: str | None = None) -> RobotModel:
    """RobotModel from a built-in name, a ``.urdf`` path, URDF XML, or a dynid robot file (``.yaml``).

    A URDF's robot is recognized by its joints and kinematics (module docstring).

    Args:
        spec: what to load (see :data:`BUILTIN_ROBOTS`; ``fer`` is the Panda).
        joints: for URDFs, the joints to keep (others locked); a built-in model by Denavit–Hartenberg parameters
            takes all of its joints or refuses.
        joint_map: ``NAME=MODEL_JOINT,...``: the model's joints renamed to the names a driver gives them
            (:func:`dynid.model.naming.parse_joint_map`; a node's ``joint_map`` parameter).

    Raises:
        InputError: unknown name, missing or broken file, with a one-line reason.
    """
    if joint_map:
        return load_robot(spec, joints).renamed(parse_joint_map(joint_map))
    if not isinstance(spec, str) or not spec.strip():
        raise InputError(f'robot must be a name ({", ".join(BUILTIN_ROBOTS)}), a .urdf or .yaml path, '
                         f'or URDF XML; got {spec!r}')
    spec = ALIASES.get(spec, spec)
    if spec in DH_ROBOTS:
        data = load_yaml(_data_text(f'{spec}.yaml'))
        robot = robot_from_file_data(data, source=f'built-in {spec}')
        robot.builtin = spec
        if joints and sorted(joints) != sorted(robot.joint_names):
            raise InputError(f'{{joints}} selects a chain of a URDF description; the built-in {spec} models its '
                             f'{robot.n} joints {list(robot.joint_names)} as one chain: give its URDF to model a part '
                             f'of it', fields=('joints',))
        return robot
    if spec in EXAMPLE_ROBOTS:
        return _example_robot(spec, joints)
    if spec.lstrip().startswith('<'):
        return recognized(_urdf_arm(spec, joints))
    path = Path(spec)
    if path.suffix.lower() in ('.yaml', '.yml'):
        return load_robot_file(path)
    if path.suffix.lower() in ('.urdf', '.xml'):
        if not path.is_file():
            raise InputError(f'URDF file {spec} does not exist')
        return recognized(_urdf_arm(str(path), joints))
    raise InputError(f'unknown robot {spec!r}: expected one of {", ".join(BUILTIN_ROBOTS)}, '
                     f'a .urdf path, a dynid robot .yaml, or URDF XML')


def _urdf_arm(urdf: str, joints: Sequence[str] | None) -> RobotModel:
    """The URDF's model; a description that branches (a vendor's arm with its gripper's fingers) gives its one
    vendor arm (:func:`dynid.model.naming.vendor_arm_joints`), the other joints locked."""
    try:
        return RobotModel.from_urdf(urdf, joints=joints)
    except InputError as error:
        if joints is not None or 'not a serial chain' not in str(error):
            raise
        arm = vendor_arm_joints(urdf_joint_names(urdf))
        if arm is None:
            raise
    robot = RobotModel.from_urdf(urdf, joints=arm)
    robot.notes += (f'the description branches: its arm {arm[0]} … {arm[-1]} is taken, the other joints locked',)
    return robot


def _data_text(name: str) -> str:
    return resources.files('dynid.model').joinpath(f'data/{name}').read_text()


def _example_robot(spec: str, joints: Sequence[str] | None) -> RobotModel:
    relative, default_joints, flange, drives_file = EXAMPLE_ROBOTS[spec]
    kept = list(joints) if joints else default_joints
    drives = None
    if kept == default_joints:  # the drive data are for the default joints
        with resources.as_file(resources.files('dynid.model').joinpath(f'data/{drives_file}')) as path:
            drives = load_drives(path, kept)
    robot = RobotModel.from_urdf(str(example_robot_path(relative)), joints=kept, name=spec, flange=flange,
                                 drives=drives)
    robot.builtin = spec if drives is not None else None
    return robot


@cache
def builtin_model(name: str) -> RobotModel:
    """The built-in ``name`` as loaded once (do not modify it; :func:`load_robot` gives a fresh one)."""
    return load_robot(name)


def recognized(robot: RobotModel) -> RobotModel:
    """``robot`` (a URDF's) with the built-in it is (:func:`dynid.model.recognize.recognize`) named in
    :attr:`~RobotModel.builtin` and, where it has none, that built-in's drive data, by chain order."""
    found = recognize(robot, BUILTINS, builtin_model)
    if found is None:
        return robot
    flange = vendor_flange(robot.joint_names)
    if flange is not None and robot.flange != flange and robot.pinocchio_model.existFrame(flange):
        kept = robot
        robot = RobotModel(kept.pinocchio_model, kept.name, flange, kept.drives, kept.source)
        robot.urdf, robot.urdf_joints, robot.notes = kept.urdf, kept.urdf_joints, kept.notes
    robot.builtin = found.name
    robot.notes += (f'recognized as the built-in {found.name} ({found.reason})',)
    builtin = builtin_model(found.name)
    if robot.drives is None and builtin.drives is not None:
        drives = builtin.drives
        robot.drives = JointDrives(robot.joint_names, drives.gear_ratio, drives.drive_gain, drives.rotor_inertia)
        robot.notes += (f"drive data of the built-in {found.name} ({BUILTINS[found.name].drives})",)
    return robot


def builtin_robot_file(spec: str) -> DHRobotFile:
    """The robot file of a built-in DH robot (``ur5e``, ...) or of a dynid robot ``.yaml`` path.

    Raises:
        InputError: ``spec`` is a URDF robot (a built-in from example-robot-data or a ``.urdf``) or unknown.
    """
    spec = ALIASES.get(spec, spec)
    if spec in DH_ROBOTS:
        data = load_yaml(_data_text(f'{spec}.yaml'))
        return read_robot_file_data(data, source=f'built-in {spec}')
    if spec in EXAMPLE_ROBOTS:
        raise InputError(f'{spec} is already a URDF: copy {example_robot_path(EXAMPLE_ROBOTS[spec][0])}')
    path = Path(spec)
    if path.suffix.lower() in ('.yaml', '.yml'):
        return read_robot_file_data(read_yaml(path, 'robot file'), source=str(path))
    if path.suffix.lower() in ('.urdf', '.xml') or spec.lstrip().startswith('<'):
        raise InputError(f'{spec if len(spec) < 80 else "the robot"} is already a URDF: copy the file')
    raise InputError(f'unknown robot {spec!r}: expected a built-in DH robot ({", ".join(DH_ROBOTS)}) '
                     f'or a dynid robot .yaml')
