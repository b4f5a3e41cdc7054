"""The payload file: what ``dynid payload`` writes and identifier_node publishes, and what the feedforward and the
estimator read as a payload update (no re-identification of the arm).

A YAML document with a top-level ``dynid_payload: 1`` version key::

    dynid_payload: 1
    robot: ur10e                       # the robot model and its joints
    joint_names: [...]
    frame: tool0                       # the payload frame (the model's flange); axes of com and inertia
    mass: 2.0013                       # kg
    mass_std: 0.0004
    com: [x, y, z]                     # m, centre of mass in the flange frame
    com_std: [...]
    inertia: [[..], [..], [..]]        # kg·m² about the centre of mass, flange axes; null where not identified
    inertia_std: [[..], [..], [..]]    # or null
    inertia_identified: false
    inertia_note: not identifiable from this motion: ...
    parameters: [m, mx, my, mz, Ixx, Ixy, Iyy, Ixz, Iyz, Izz]   # about the flange origin, as the torques used
    physically_consistent: {min_pseudo_eigenvalue: .., projected: false}
    offsets: {joint: N·m}              # torque offsets estimated beside the payload
    validation: {without_payload: {metrics}, with_payload: {metrics}}
    robot_settings: {ur_set_payload: {...}, franka_set_load: {...}}
    warnings: [...]
    provenance: {recording: .., result: .., result_sha256: .., settings: {...}, solve_s: .., software: .., created: ..}

:func:`load_payload` reads the mass, centre of mass and inertia back as a :class:`~dynid.model.Payload` (a
point mass where the inertia was not identified).
"""

from __future__ import annotations

import dataclasses
import datetime
from pathlib import Path

import numpy as np
import yaml

from dynid import __version__
from dynid.errors import InputError
from dynid.files import load_yaml
from dynid.identify import plain_data
from dynid.model.inertial import Payload
from dynid.model.robot import RobotModel
from dynid.payload.estimate import PayloadEstimate, PayloadSettings
from dynid.payload.robot_calls import franka_set_load, ur_set_payload
from dynid.schema import ANY, Fields, Flag, Items, Number, Table, Text, check, matrix, settings_fields, vector

PAYLOAD_FILE_VERSION = 1
_UNKNOWN = Number(null=True, nan=True)
#: a payload file (module docstring): the mass, centre of mass and inertia are what its readers use; the rest
#: says how they were found
PAYLOAD_FILE = Fields(
    required={'dynid_payload': Number(low=PAYLOAD_FILE_VERSION, high=PAYLOAD_FILE_VERSION, integer=True),
              'mass': Number('kg', low=0.0, high=1.0e4), 'com': vector(3, 'm')},
    optional={'robot': Text(), 'joint_names': Items(Text(empty=False), least=1, name='a list of joint names'),
              'frame': Text(), 'mass_std': _UNKNOWN, 'com_std': Items(_UNKNOWN, length=3, null=True),
              'inertia': matrix(3, 3, 'kg·m²', null=True), 'inertia_std': Items(Items(_UNKNOWN, length=3), length=3,
                                                                               null=True),
              'inertia_identified': Flag(), 'inertia_note': Text(null=True), 'parameters': vector(10, null=True),
              'physically_consistent': Fields(others=ANY, null=True), 'offsets': Table(_UNKNOWN, null=True),
              'joints_used': ANY, 'rows': ANY, 'validation': ANY, 'robot_settings': ANY,
              'warnings': Items(Text(), null=True),
              'provenance': Fields(optional={'settings': settings_fields(PayloadSettings)}, others=ANY, null=True)})


def payload_document(estimate: PayloadEstimate, robot: RobotModel, settings: PayloadSettings,
                     provenance: dict | None = None) -> dict:
    """The payload file's content (module docstring) as plain data."""
    payload = estimate.payload()
    return plain_data({
        'dynid_payload': PAYLOAD_FILE_VERSION,
        'robot': robot.name, 'joint_names': list(robot.joint_names), 'frame': estimate.flange,
        'mass': estimate.mass, 'mass_std': estimate.mass_std, 'com': estimate.com, 'com_std': estimate.com_std,
        'inertia': estimate.inertia, 'inertia_std': estimate.inertia_std,
        'inertia_identified': estimate.inertia_identified, 'inertia_note': estimate.inertia_note,
        'parameters': estimate.parameters,
        'physically_consistent': {'min_pseudo_eigenvalue': estimate.min_pseudo_eigenvalue,
                                  'projected': estimate.constrained},
        'offsets': estimate.offsets, 'joints_used': estimate.joints, 'rows': estimate.rows,
        'validation': estimate.validation,
        'robot_settings': {'ur_set_payload': ur_set_payload(robot, payload, estimate.inertia_identified),
                           'franka_set_load': franka_set_load(robot, payload, estimate.inertia_identified)},
        'warnings': estimate.warnings,
        'provenance': {**(provenance or {}), 'settings': dataclasses.asdict(settings), 'solve_s': estimate.solve_s,
                       'software': {'dynid': __version__},
                       'created': datetime.datetime.now(datetime.timezone.utc).isoformat(timespec='seconds')},
    })


def payload_yaml(document: dict) -> str:
    return yaml.safe_dump(document, sort_keys=False, allow_unicode=True)


def payload_from_document(document, source: str = 'payload', robot: RobotModel | None = None) -> Payload:
    """The :class:`Payload` of a payload document (module docstring); with ``robot``, checked to be its joints."""
    if not isinstance(document, dict) or document.get('dynid_payload') != PAYLOAD_FILE_VERSION:
        raise InputError(f'{source} is not a dynid payload file (needs "dynid_payload: {PAYLOAD_FILE_VERSION}")')
    check(document, PAYLOAD_FILE, source)
    if robot is not None and list(document.get('joint_names') or []) != list(robot.joint_names):
        raise InputError(f'{source} is a payload of joints {document.get("joint_names")}, not of the robot\'s '
                         f'{list(robot.joint_names)}')
    inertia = document.get('inertia')
    return Payload(float(document['mass']), np.asarray(document['com'], dtype=float),
                   np.zeros((3, 3)) if inertia is None else np.asarray(inertia, dtype=float))


def load_payload(path_or_text: str | Path, robot: RobotModel | None = None, text: bool = False) -> Payload:
    """The payload of a payload file (a path), or of its YAML ``text`` (``text=True``: e.g. a message)."""
    source = 'payload message' if text else str(path_or_text)
    try:
        content = str(path_or_text) if text else Path(path_or_text).read_text()
    except (OSError, UnicodeDecodeError) as error:
        raise InputError(f'cannot read payload file {path_or_text}: {error.strerror or error}') from None
    try:
        document = load_yaml(content)
    except yaml.YAMLError as error:
        raise InputError(f'{source} is not YAML: {str(error).splitlines()[0]}') from None
    except ValueError as error:  # YAML with a number Python cannot hold
        raise InputError(f'{source} is not YAML: {error}') from None
    return payload_from_document(document, source, robot)
