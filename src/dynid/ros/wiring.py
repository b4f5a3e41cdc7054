"""How the suite's topics reach a robot's controllers: remapping rules as rcl applies them, and what a
controllers file's controllers command.

rcl applies a node's remapping rules in the order given and the **first** rule whose source matches a name
wins (``rcl_remap_topic_name``; the rules of a launch file's ``remappings`` come in its list's order). A
node's own rule (the excitation sent to ``feedforward_node/reference``) must therefore come before the rule
every node shares (``joint_trajectory_controller/joint_trajectory`` to the robot's controller), or it is
dead: :func:`node_rules` puts it first and drops the shared rule it overrides, so the wiring no longer
depends on the order, and :func:`resolve` says where a name goes.

A joint_trajectory_controller takes a trajectory's ``effort`` field only when it commands the ``effort``
interface (ros2_controllers: "Trajectories with effort fields are only supported for controllers using the
'effort' command interface"); :func:`command_interfaces` reads that from a controllers file (whether the
hardware offers effort commands at all is the robot description's: :mod:`dynid.model.description`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import yaml

JTC_TOPIC = 'joint_trajectory_controller/joint_trajectory'  # what the nodes publish and subscribe
EFFORT_TOPIC = 'forward_effort_controller/commands'


def shared_rules(controller: str, effort_controller: str, joint_states: str) -> list[tuple[str, str]]:
    """The rules every dynid node gets: the trajectory controller, the effort controller, the joint states
    (those that rename nothing left out)."""
    rules = [(JTC_TOPIC, f'{controller}/joint_trajectory'), (EFFORT_TOPIC, f'{effort_controller}/commands'),
             ('joint_states', joint_states)]
    return [(source, target) for source, target in rules if source != target]


def node_rules(shared: Sequence[tuple[str, str]], own: Sequence[tuple[str, str]] | Mapping[str, str] = ()
               ) -> list[tuple[str, str]]:
    """A node's rules: its own first, then the shared ones for the names its own do not remap.

    rcl remaps a name once (rules do not chain): an own rule whose target is a shared rule's source (feedforward
    streaming along ``joint_trajectory_controller/joint_trajectory``) gets that rule's target.
    """
    own = list(own.items()) if isinstance(own, Mapping) else list(own)
    mine = {source for source, _ in own}
    return [(source, resolve(shared, target)) for source, target in own] + \
        [(source, target) for source, target in shared if source not in mine]


def resolve(rules: Sequence[tuple[str, str]], name: str) -> str:
    """Where ``name`` goes under ``rules``, as rcl resolves it: the first rule whose source is ``name`` wins."""
    return next((target for source, target in rules if source == name), name)


def controllers_document(path: str | Path) -> dict:
    """A controllers file (ros2_control parameters) as a mapping, ``/**`` unwrapped and ``$(var tf_prefix)`` as ''."""
    text = Path(path).read_text(encoding='utf-8').replace('$(var tf_prefix)', '')
    document = yaml.safe_load(text) or {}
    return document.get('/**', document)


def command_interfaces(path: str | Path, controller: str) -> list[str] | None:
    """The ``command_interfaces`` of ``controller`` in the controllers file ``path``; None where the file does not
    declare the controller or give them (e.g. ur_controllers' scaled controller, position by the driver's file)."""
    document = controllers_document(path)
    section = (document.get(controller) or {}).get('ros__parameters') or {}
    interfaces = section.get('command_interfaces')
    return list(interfaces) if isinstance(interfaces, list) else None


def takes_effort(path: str | Path, controller: str) -> bool:
    """Whether ``controller`` of the controllers file commands ``effort`` (so a trajectory may carry efforts)."""
    return 'effort' in (command_interfaces(path, controller) or [])
