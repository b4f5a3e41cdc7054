"""Where a result's robot came from, so that the result loads it again from any directory.

A result records the robot as it was given (``provenance.robot_source``):

- a built-in name: ``{kind: built-in, spec: ur5e}``;
- a file (URDF or dynid robot file): ``{kind: file, path: <absolute path>, sha256: <of its bytes>}``;
- URDF XML given as text (``robot_description``): ``{kind: urdf_xml, sha256, urdf_xml: <the text>}``;

each with ``joints`` (the serial chain kept, others locked) where one was selected (``--joints``).

``provenance.robot_spec`` holds what :func:`dynid.model.load_robot` takes (the name or the absolute
path; ``robot_description`` for text, which is kept once, in ``robot_source``). When the robot is
loaded from a result, a file must still exist with the same sha256; a file that moved or changed is
refused with a one-line reason, since the identified base parameters belong to the model as it was.
A robot given explicitly beside a result is used as given, with a warning when it is a file whose
content differs from the recorded one.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from dynid.errors import InputError
from dynid.files import file_sha256
from dynid.model.robots import ALIASES, BUILTIN_ROBOTS


def robot_source(spec: str) -> dict:
    """What a result records about the robot ``spec`` (module docstring); call it after the robot loaded."""
    if spec in BUILTIN_ROBOTS or spec in ALIASES:
        return {'kind': 'built-in', 'spec': ALIASES.get(spec, spec)}
    if spec.lstrip().startswith('<'):
        return {'kind': 'urdf_xml', 'sha256': hashlib.sha256(spec.encode()).hexdigest(), 'urdf_xml': spec}
    path = Path(spec).resolve()
    return {'kind': 'file', 'path': str(path), 'sha256': file_sha256(path)}


def loadable_spec(source: dict) -> str:
    """The :func:`dynid.model.load_robot` argument of a recorded source."""
    return {'built-in': source.get('spec'), 'file': source.get('path'),
            'urdf_xml': source.get('urdf_xml')}.get(source.get('kind'), '') or ''


def record_robot(provenance: dict, spec: str, joints=None) -> None:
    """Store the robot ``spec`` in a result's ``provenance`` (``robot_source`` and ``robot_spec``), with the
    serial chain selected from it (``joints``, the model's joint names; ``robot_source.joints``) when one was."""
    source = robot_source(spec)
    if joints:
        source['joints'] = list(joints)
    provenance['robot_source'] = source
    provenance['robot_spec'] = 'robot_description' if source['kind'] == 'urdf_xml' else loadable_spec(source)


def recorded_joints(provenance: dict) -> list[str] | None:
    """The serial chain the result's robot was selected to (``robot_source.joints``), or None (the whole robot)."""
    joints = (provenance.get('robot_source') or {}).get('joints')
    return list(joints) if joints else None


def robot_spec_of(provenance: dict, robot_name: str, explicit: str | None = None,
                  warn=None) -> str:
    """The robot to load for a result: ``explicit`` if given, else the recorded one, checked.

    Raises InputError when the recorded file is gone or changed. ``warn(text)`` receives a warning
    when an explicit file differs from the recorded one. Results without ``robot_source`` (older
    ones) give their ``robot_spec`` or the robot's name.
    """
    source = provenance.get('robot_source') or {}
    if explicit is not None:
        if source.get('kind') == 'file' and Path(explicit).is_file() and warn is not None:
            if file_sha256(explicit) != source.get('sha256'):
                warn(f'robot file {explicit} differs from the one the result was identified with '
                     f'({source.get("path")}, sha256 {str(source.get("sha256"))[:12]}…)')
        return explicit
    if source.get('kind') == 'file':
        path = Path(source.get('path', ''))
        if not path.is_file():
            raise InputError(f'the result was identified with robot file {path}, which no longer exists (moved or '
                             f'deleted?); give it with {{robot}}', fields=('robot',))
        digest = file_sha256(path)
        if digest != source.get('sha256'):
            raise InputError(f'robot file {path} changed since the identification (sha256 '
                             f'{str(source.get("sha256"))[:12]}… then, {digest[:12]}… now): the result may not fit '
                             f'it; give {{robot}} {path} to use it anyway', fields=('robot',))
        return str(path)
    if source:
        spec = loadable_spec(source)
        if source.get('kind') == 'urdf_xml' and hashlib.sha256(spec.encode()).hexdigest() != source.get('sha256'):
            raise InputError('the URDF text stored in the result does not match its sha256 (edited by hand?)')
        if spec:
            return spec
    return provenance.get('robot_spec') or robot_name
