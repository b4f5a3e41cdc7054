"""What a launch file does with given arguments, found by visiting it with the real ``launch`` (no process starts).

Used by the launch-file tests (``test_launch_backends.py``) and by ``benchmarks/bench_vendor.py``. Needs launch
and launch_ros importable (they come with ROS 2, not from PyPI): import this module only where they are.
"""

from __future__ import annotations

from pathlib import Path

from launch import LaunchContext, LaunchDescription
from launch.actions import ExecuteProcess, IncludeLaunchDescription
from launch.launch_description_sources import PythonLaunchDescriptionSource
from launch.utilities import normalize_to_list_of_substitutions, perform_substitutions
from launch_ros.actions import Node

from testing.launch_prefix import ROOT

#: the options of controller_manager's spawner that take a value (the rest of its words are controller names)
SPAWNER_OPTIONS_WITH_VALUE = {'--controller-manager', '-c', '--controller-manager-timeout', '--param-file', '-p',
                              '--controller-ros-args', '--switch-timeout', '--controller-type', '-t',
                              '--service-call-timeout', '--namespace', '-n'}


class Visit:
    """The nodes and processes a launch file would start and, per include, the arguments given and those the
    included file declares. ``launch_file``: a path, or a name in this tree's ``launch/``."""

    def __init__(self, launch_file: str | Path, arguments: dict[str, str]):
        path = Path(launch_file) if Path(launch_file).is_absolute() else ROOT / 'launch' / launch_file
        self.context = LaunchContext()
        self.nodes: list[Node] = []
        self.processes: list[ExecuteProcess] = []
        self.includes: list[tuple[str, list[str], list[str]]] = []  # (file, arguments given, declared)
        include = IncludeLaunchDescription(PythonLaunchDescriptionSource(str(path)),
                                           launch_arguments=arguments.items())
        self._walk([LaunchDescription([include])])

    def _text(self, substitutions) -> str:
        return perform_substitutions(self.context, normalize_to_list_of_substitutions(substitutions))

    def _walk(self, entities) -> None:
        for entity in entities:
            condition = getattr(entity, 'condition', None)
            if condition is not None and not condition.evaluate(self.context):
                continue
            if isinstance(entity, Node):  # recorded with its substitutions done, never started
                entity._perform_substitutions(self.context)
                self.nodes.append(entity)
                continue
            if isinstance(entity, ExecuteProcess):
                self.processes.append(entity)
                continue
            if isinstance(entity, IncludeLaunchDescription):
                source = entity.launch_description_source
                described = source.get_launch_description(self.context)
                self.includes.append((source.location, [self._text(name) for name, _ in entity.launch_arguments],
                                      [a.name for a in described.get_launch_arguments()]))
            self._walk(entity.visit(self.context) or [])

    def node_arguments(self, node: Node) -> list[str]:
        """The command-line arguments of ``node`` (between the executable and ``--ros-args``)."""
        words = []
        for part in node.cmd[1:]:
            word = self._text(part) if not any(type(s).__name__ == 'LocalSubstitution' for s in part) else '-r'
            if word in ('--ros-args', '-r'):  # launch_ros's own arguments follow
                break
            words.append(word)
        return words

    def spawned(self) -> dict[str, bool]:
        """Controllers the spawners load: name -> started active."""
        controllers = {}
        for node in self.nodes:
            if node.node_package == 'controller_manager' and node.node_executable == 'spawner':
                words, names = self.node_arguments(node), []
                skip = False
                for word in words:
                    if skip:
                        skip = False
                    elif word in SPAWNER_OPTIONS_WITH_VALUE:
                        skip = True
                    elif not word.startswith('-'):
                        names.append(word)
                controllers.update({name: '--inactive' not in words for name in names})
        return controllers

    def dynid_nodes(self) -> dict[str, Node]:
        return {node.node_name: node for node in self.nodes if node.node_package == 'dynid'}

    def programs(self) -> set[tuple[str, str]]:
        """(package, executable) of the nodes started."""
        return {(node.node_package, node.node_executable) for node in self.nodes}
