"""The node suite: ``dynid bringup`` (docs/contract.md), also the base of ``dynid demo``.

sim_node (unless a real robot publishes the joint topics), excitation_node, identifier_node and, if
asked, estimator_node (online stiffness and friction) and feedforward_node (model torque; configured
and activated at start, see :func:`plan_suite` for how it is wired in each mode).

Two ways to run the same nodes, which talk over DDS topics and services either way:

- :class:`NodeProcesses`: each node in its own process, the way ``ros2 launch`` runs them (the
  default of ``dynid bringup``). A 1 kHz twin and the nodes that take its four topics each need a
  good part of a core in Python; in one process they would share one.
- :func:`build_suite` + :func:`spin_suite`: every node in one process and one single-threaded
  executor (composition; ``--no-processes``). Fine at a few hundred hertz. (rclpy's
  MultiThreadedExecutor delivered under 10 % of a 500 Hz twin's samples here; no callback blocks
  the single thread: identifier_node solves on a worker thread.)

Parameters come, in rising priority, from the nodes' defaults, a ROS parameter file
(``--params-file``, node names as keys) and the overrides given here.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field

import rclpy
from rclpy.context import Context
from rclpy.exceptions import NameValidationException, ParameterException
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
from rclpy.node import Node
from rclpy.parameter import Parameter

from dynid.errors import InputError
from dynid.identify import IdentificationResult
from dynid.io.bag import topic_name
from dynid.model import load_robot
from dynid.nodes.estimator_node import EstimatorNode
from dynid.nodes.excitation_node import ExcitationNode
from dynid.nodes.feedforward_node import FeedforwardNode
from dynid.nodes.identifier_node import IdentifierNode
from dynid.nodes.sim_node import SimNode
from dynid.ros.parameter_file import check_parameter_file, declared_parameters, read_parameter_file
from dynid.ros.runner import INTERRUPT_WAIT_S, PARENT_VARIABLE, TERMINATE_WAIT_S, interrupt_processes, node_message


def _overrides(values: Mapping[str, object]) -> list[Parameter]:
    return [Parameter(name, value=value) for name, value in values.items()]


@dataclass
class NodePlan:
    """One node of the suite: its name, class, executable module, parameter overrides and remappings."""

    name: str
    cls: type
    module: str
    overrides: dict = field(default_factory=dict)
    remappings: dict = field(default_factory=dict)

    def ros_arguments(self) -> list[str]:
        """``-r from:=to`` of the remappings."""
        return [item for rule in self.remappings.items() for item in ('-r', ':='.join(rule))]


def twin_health_robot(robot: str) -> str:
    """The digital twin's name in the health record (estimator_node's ``health_robot``): the robot's (a
    built-in name, a file's stem, a URDF text's ``<robot name>``) with ``-twin``, so that the twin's
    sessions stay apart from the real arm's.

    >>> twin_health_robot('ur5e'), twin_health_robot('/cells/arm.urdf')
    ('ur5e-twin', 'arm-twin')
    """
    if robot.lstrip().startswith('<'):
        from xml.etree import ElementTree

        try:
            return (ElementTree.fromstring(robot).get('name') or 'robot') + '-twin'
        except ElementTree.ParseError:
            return 'robot-twin'
    return os.path.splitext(os.path.basename(robot))[0] + '-twin'


def plan_suite(robot: str = 'ur5e', simulate: bool = True,
               parameters: Mapping[str, Mapping[str, object]] | None = None,
               excitations: Mapping[str, Mapping[str, object]] | None = None,
               estimator: bool = False, feedforward: str | None = None,
               feedforward_from: Collection[str] | None = None) -> list[NodePlan]:
    """The suite's nodes (arguments as for :func:`build_suite`).

    With ``feedforward`` (its mode) feedforward_node starts configured and activated (``autostart``),
    the twin's own model feedforward is off (``internal_feedforward: none``); its terms are its own
    defaults (without a result file, the robot model's rigid body and rotor inertia, and a warning that
    friction is left out) unless the overrides or a parameter file say otherwise. Wiring: ``trajectory``:
    the excitation nodes (those named in ``feedforward_from``; None: all) send to
    ``feedforward_node/reference``, which sends on to the controller with efforts; ``streaming``:
    feedforward_node listens to the controller's trajectory topic and streams efforts; ``measured``:
    gravity and friction of the measured state, streamed.
    """
    parameters = dict(parameters or {})
    excitations = dict(excitations or {'excitation_node': parameters.get('excitation_node', {})})
    plan = [NodePlan('sim_node', SimNode, 'sim_node', dict(parameters.get('sim_node', {})))] if simulate else []
    plan += [NodePlan(name, ExcitationNode, 'excitation_node', dict(values)) for name, values in excitations.items()]
    plan += [NodePlan('identifier_node', IdentifierNode, 'identifier_node',
                      dict(parameters.get('identifier_node', {})))]
    if estimator:
        estimation = dict(parameters.get('estimator_node', {}))
        if simulate:
            estimation.setdefault('health_robot', twin_health_robot(robot))
        plan += [NodePlan('estimator_node', EstimatorNode, 'estimator_node', estimation)]
    if feedforward:
        plan += [_feedforward_plan(plan, feedforward, dict(parameters.get('feedforward_node', {})), feedforward_from)]
    for node in plan:
        node.overrides = {'robot': robot, **node.overrides}
    return plan


def _feedforward_plan(plan: list[NodePlan], mode: str, values: dict,
                      feedforward_from: Collection[str] | None) -> NodePlan:
    """feedforward_node in ``mode``, and the rest of the suite wired to it (:func:`plan_suite`)."""
    values = {'mode': mode, 'autostart': True, **values}
    controller_topic = 'joint_trajectory_controller/joint_trajectory'
    remappings = {}
    for node in plan:
        if node.cls is SimNode:
            node.overrides.setdefault('internal_feedforward', 'none')
        elif node.cls is ExcitationNode and mode == 'trajectory' and (feedforward_from is None
                                                                      or node.name in feedforward_from):
            node.remappings[controller_topic] = 'feedforward_node/reference'
    if mode == 'streaming':
        remappings['~/reference'] = controller_topic
    return NodePlan('feedforward_node', FeedforwardNode, 'feedforward_node', values, remappings)


def build_suite(context: Context, robot: str = 'ur5e', namespace: str = '', simulate: bool = True,
                parameters: Mapping[str, Mapping[str, object]] | None = None,
                excitations: Mapping[str, Mapping[str, object]] | None = None,
                lean: bool = False, estimator: bool = False, feedforward: str | None = None,
                feedforward_from: Collection[str] | None = None, params_files: Collection[str] = ()
                ) -> dict[str, Node]:
    """Create the suite's nodes in ``context`` (one process).

    Args:
        context: an initialized rclpy context.
        robot: robot of every node (built-in name, URDF path or dynid robot file).
        namespace: namespace of every node and of their relative topics ('' for the root).
        simulate: include sim_node (the digital twin); leave it out on a real robot.
        parameters: overrides per node name, e.g. {'sim_node': {'rate': 1000.0}}; values have the
            declared types (1000.0, not 1000).
        excitations: excitation nodes to create, {node name: overrides}; default one 'excitation_node'.
        lean: leave out the parameter and type-description services of every node (7 per node): each
            executor turn walks all services, so the suite runs noticeably lighter without them
            (feedforward_node keeps its parameter services: its result file is set while unconfigured).
        estimator: include estimator_node (its parameters, e.g. ``result_file``, under
            'estimator_node' in ``parameters``); it needs motor_states, which the twin publishes.
        feedforward: include feedforward_node in this mode (trajectory, streaming, measured), configured
            and activated; its parameters under 'feedforward_node' (:func:`plan_suite`).
        feedforward_from: the excitation nodes whose trajectories go through feedforward_node in
            trajectory mode (the others send to the controller directly); None: all.
        params_files: the parameter files ``context`` was made with: each node's sections checked against
            what it declares (:func:`dynid.ros.parameter_file.check_parameter_file`).

    Returns:
        {node name: node}. Raises InputError for an unknown robot or a refused parameter value (a
        result_file that does not exist or is no result of the robot, or a refused configuration of
        feedforward_node, too).
    """
    nodes: dict[str, Node] = {}
    try:
        for plan in plan_suite(robot, simulate, parameters, excitations, estimator, feedforward, feedforward_from):
            values, extra = dict(plan.overrides), {}
            if plan.remappings:
                extra['cli_args'] = ['--ros-args', *plan.ros_arguments()]
            if plan.cls is ExcitationNode:
                extra['node_name'] = plan.name
            if lean and plan.cls is not FeedforwardNode:
                values['start_type_description_service'] = False
                extra['start_parameter_services'] = False
            nodes[plan.name] = plan.cls(context=context, namespace=namespace, parameter_overrides=_overrides(values),
                                        **extra)
            for path in params_files:
                check_parameter_file(path, nodes[plan.name].get_fully_qualified_name(),
                                     declared_parameters(nodes[plan.name]))
    except (ParameterException, NameValidationException, InputError) as error:
        for node in nodes.values():
            node.destroy_node()
        detail = node_message(error) if isinstance(error, InputError) else error  # a node's fields as parameters
        raise InputError(f'{plan.name}: {detail}') from None
    return nodes


def spin_suite(nodes: Mapping[str, Node], context: Context) -> None:
    """Spin the nodes in one executor until shut down (Ctrl-C)."""
    executor = SingleThreadedExecutor(context=context)
    for node in nodes.values():
        executor.add_node(node)
    try:
        executor.spin()
    finally:
        executor.shutdown()
        for node in nodes.values():
            node.destroy_node()


def _parameter_value(value) -> str:
    """A ``-p name:=value`` value that ROS parses back to the same type (YAML): floats keep a point,
    strings are quoted."""
    if isinstance(value, bool):
        return 'true' if value else 'false'
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, (list, tuple)):
        return '[' + ', '.join(_parameter_value(item) for item in value) + ']'
    return str(value)


class NodeProcesses:
    """The suite's nodes, each in its own process (``python -m dynid.nodes <module> --ros-args ...``).

    Args:
        plans: the nodes (:func:`plan_suite`).
        namespace: namespace of every node.
        params_file: ROS parameter file given to every node, or None.
        ros_arguments: more ``--ros-args`` arguments for every node (e.g. a log level).
        output: where the nodes' output goes (a file object, or None: this process's).
    """

    def __init__(self, plans: list[NodePlan], namespace: str = '', params_file: str | None = None,
                 ros_arguments=(), output=None) -> None:
        self.plans, self.namespace, self.params_file = plans, namespace, params_file
        self.ros_arguments = list(ros_arguments)
        self.output = output
        self.processes: dict[str, subprocess.Popen] = {}

    def command(self, plan: NodePlan) -> list[str]:
        """The command line of one node."""
        command = [sys.executable, '-m', 'dynid.nodes', plan.module, '--ros-args', '-r', f'__node:={plan.name}']
        if self.namespace.strip('/'):
            command += ['-r', f'__ns:=/{self.namespace.strip("/")}']
        if self.params_file:
            command += ['--params-file', self.params_file]
        for name, value in plan.overrides.items():
            command += ['-p', f'{name}:={_parameter_value(value)}']
        return command + plan.ros_arguments() + self.ros_arguments

    def start(self) -> None:
        """Start every node; each stops by itself if this process dies (:func:`run_node`)."""
        environment = dict(os.environ, **{PARENT_VARIABLE: str(os.getpid())})
        for plan in self.plans:
            self.processes[plan.name] = subprocess.Popen(self.command(plan), stdout=self.output, env=environment,
                                                         stderr=subprocess.STDOUT if self.output else None)

    def exited(self) -> dict[str, int]:
        """{node name: exit code} of the nodes that have stopped."""
        return {name: p.returncode for name, p in self.processes.items() if p.poll() is not None}

    def stop(self) -> dict[str, int]:
        """Ctrl-C every node, SIGTERM and then SIGKILL those that do not end (:func:`interrupt_processes`,
        its stated waits); returns their exit codes. A second Ctrl-C meanwhile skips the wait for the first."""
        try:
            codes = interrupt_processes(self.processes.values())
        except KeyboardInterrupt:
            codes = interrupt_processes(self.processes.values(), timeout_s=0.0)
        return dict(zip(self.processes, codes, strict=True))

    def killed(self, codes: Mapping[str, int]) -> str:
        """The sentence naming the nodes of ``codes`` (:meth:`stop`) that had to be killed, '' if none."""
        names = [name for name, code in codes.items() if code == -signal.SIGKILL]
        return '' if not names else (f'{", ".join(names)} ended neither {INTERRUPT_WAIT_S:g} s after Ctrl-C nor '
                                     f'{TERMINATE_WAIT_S:g} s after SIGTERM: killed')


def _check_params_file(params_file: str | None) -> None:
    """The parameter file's shape checked before any node starts (each node checks its own section's parameters:
    :mod:`dynid.ros.parameter_file`)."""
    if params_file and not os.path.isfile(params_file):
        raise InputError(f'parameter file {params_file} does not exist')
    if params_file:
        read_parameter_file(params_file)


def _check_result_file(overrides: Mapping[str, Mapping[str, object]], robot) -> None:
    for node in ('estimator_node', 'feedforward_node'):
        result_file = overrides.get(node, {}).get('result_file')
        if result_file:
            result = IdentificationResult.load(result_file)
            if result.robot != robot.name or tuple(result.joint_names) != tuple(robot.joint_names):
                raise InputError(f'{node}: result_file {result_file} identifies robot {result.robot!r} '
                                 f'(joints {list(result.joint_names)}), not {robot.name!r}')


def run_processes(robot: str, namespace: str, simulate: bool, params_file: str | None,
                  overrides: Mapping[str, Mapping[str, object]], estimator: bool = False,
                  feedforward: str | None = None) -> int:
    """``dynid bringup``: every node in its own process until Ctrl-C or until one of them stops.

    Returns the exit code: 0 after Ctrl-C or SIGTERM once every node has ended (:meth:`NodeProcesses.stop`),
    1 if one had to be killed; 2 when a node refused its input (its own output says why), 1 when a node
    stopped otherwise.
    """
    _check_params_file(params_file)
    model = load_robot(robot)  # one clear error here rather than one per node
    if estimator or feedforward:
        _check_result_file(overrides, model)
    suite = NodeProcesses(plan_suite(robot, simulate, overrides, estimator=estimator, feedforward=feedforward),
                          namespace, params_file)
    previous = signal.signal(signal.SIGTERM, signal.default_int_handler)  # SIGTERM stops as Ctrl-C does
    try:
        try:
            suite.start()
            names = ', '.join(topic_name(namespace, p.name) for p in suite.plans)
            print(f'dynid bringup: running {names}, one process each; Ctrl-C stops', flush=True)
            while not (exited := suite.exited()):
                time.sleep(0.2)
        except KeyboardInterrupt:
            killed = suite.killed(suite.stop())
            print(f'dynid bringup: stopped{"; " + killed if killed else ""}', flush=True)
            return 1 if killed else 0
        suite.stop()
    finally:
        signal.signal(signal.SIGTERM, previous)
    print(f'dynid bringup: {", ".join(f"{n} stopped (exit code {c})" for n, c in exited.items())}; stopped the rest',
          file=sys.stderr, flush=True)
    return 2 if 2 in exited.values() else 1


def run_bringup(robot: str, namespace: str, simulate: bool, params_file: str | None,
                overrides: Mapping[str, Mapping[str, object]], estimator: bool = False,
                feedforward: str | None = None) -> None:
    """``dynid bringup --no-processes``: build the suite in this process and spin it until Ctrl-C."""
    _check_params_file(params_file)
    arguments = ['--ros-args', '--params-file', params_file] if params_file else []
    context = Context()
    rclpy.init(args=['dynid'] + arguments, context=context)
    try:
        nodes = build_suite(context, robot, namespace, simulate, overrides, estimator=estimator,
                            feedforward=feedforward, params_files=[params_file] if params_file else [])
        names = ', '.join(n.get_fully_qualified_name() for n in nodes.values())
        print(f'dynid bringup: running {names}; Ctrl-C stops', flush=True)
        spin_suite(nodes, context)
    except (KeyboardInterrupt, ExternalShutdownException):
        print('dynid bringup: stopped', flush=True)
    finally:
        if context.ok():
            rclpy.shutdown(context=context)
