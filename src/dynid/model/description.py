"""What a robot description (URDF XML or file) says besides the arm dynid models: its movable joints' names, and
the command interfaces its ``<ros2_control>`` blocks give them (a torque command needs ``effort``)."""

from __future__ import annotations

from collections.abc import Sequence
from xml.etree import ElementTree


def urdf_joint_names(urdf: str) -> list[str]:
    """The movable joints of a URDF (path or XML), in file order; [] where it does not parse."""
    try:
        text = urdf if urdf.lstrip().startswith('<') else open(urdf, encoding='utf-8').read()
        root = ElementTree.fromstring(text.strip())
    except (OSError, UnicodeDecodeError, ElementTree.ParseError):
        return []
    return [joint.get('name') for joint in root.iter('joint') if joint.get('type') not in (None, 'fixed')]


def joint_command_interfaces(urdf_xml: str) -> dict[str, list[str]]:
    """{joint: command interface names} of the ``<ros2_control>`` blocks of a robot description; {} without one
    (an arm-only URDF) or when it does not parse."""
    try:
        root = ElementTree.fromstring(urdf_xml.strip())
    except ElementTree.ParseError:
        return {}
    return {joint.get('name'): [interface.get('name') for interface in joint.findall('command_interface')]
            for block in root.findall('ros2_control') for joint in block.findall('joint')}


def missing_effort_commands(urdf_xml: str, joints: Sequence[str]) -> list[str] | None:
    """The ``joints`` a description's ros2_control blocks give no ``effort`` command interface (torque commands to
    them are refused); None when the description has no ros2_control block (nothing to check)."""
    interfaces = joint_command_interfaces(urdf_xml)
    if not interfaces:
        return None
    return [joint for joint in joints if 'effort' not in interfaces.get(joint, [])]
