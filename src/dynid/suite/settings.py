"""What ``dynid bringup`` starts (:class:`BringupSettings`), apart from the suite so that the command line lists it
without loading rclpy."""

from __future__ import annotations

from dataclasses import dataclass

from dynid.settings import RobotSettings, setting


@dataclass(frozen=True)
class BringupSettings:
    """The suite's robot, namespace and how its nodes run (:func:`dynid.suite.bringup.plan_suite`)."""

    robot: str = setting(RobotSettings.robot, 'robot of every node (as for dynid model)')
    namespace: str = setting('', 'namespace of the nodes and topics; empty: root')
    processes: bool = setting(True, 'one process per node; false: composed in one process, which keeps up with a '
                                    'twin of a few hundred hertz')
