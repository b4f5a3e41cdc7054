"""The node suite in one process: ``dynid bringup`` (DESIGN.md §6), also the base of ``dynid demo``.

The nodes share one rclpy context and one single-threaded executor but still talk over DDS topics
and services, exactly as separate ``ros2 run`` processes do. (rclpy's MultiThreadedExecutor
delivered under 10 % of a 500 Hz twin's samples here; one thread keeps up, using about one core,
and no callback blocks it: identifier_node solves on a worker thread.) Parameters come, in rising priority,
from the nodes' defaults, a ROS parameter file (``--params-file``, node names as keys) and the
overrides given here.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

import rclpy
from rclpy.context import Context
from rclpy.exceptions import NameValidationException, ParameterException
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
from rclpy.node import Node
from rclpy.parameter import Parameter

from dynid.errors import InputError
from dynid.nodes.excitation_node import ExcitationNode
from dynid.nodes.identifier_node import IdentifierNode
from dynid.nodes.sim_node import SimNode


def _overrides(values: Mapping[str, object]) -> list[Parameter]:
    return [Parameter(name, value=value) for name, value in values.items()]


def build_suite(context: Context, robot: str = 'ur5e', namespace: str = '', simulate: bool = True,
                parameters: Mapping[str, Mapping[str, object]] | None = None,
                excitations: Mapping[str, Mapping[str, object]] | None = None,
                lean: bool = False) -> dict[str, Node]:
    """Create the suite's nodes in ``context``.

    Args:
        context: an initialized rclpy context.
        robot: robot of every node (built-in name, URDF path or dynid robot file).
        namespace: namespace of every node and of their relative topics ('' for the root).
        simulate: include sim_node (the digital twin); leave it out on a real robot.
        parameters: overrides per node name, e.g. {'sim_node': {'rate': 1000.0}}; values have the
            declared types (1000.0, not 1000).
        excitations: excitation nodes to create, {node name: overrides}; default one 'excitation_node'.
        lean: leave out the parameter and type-description services of every node (7 per node): each
            executor turn walks all services, so the suite runs noticeably lighter without them.

    Returns:
        {node name: node}. Raises InputError for an unknown robot or a refused parameter value.
    """
    parameters = dict(parameters or {})
    excitations = dict(excitations or {'excitation_node': parameters.get('excitation_node', {})})
    plan = [('sim_node', SimNode, parameters.get('sim_node', {}), {})] if simulate else []
    plan += [(name, ExcitationNode, values, {'node_name': name}) for name, values in excitations.items()]
    plan += [('identifier_node', IdentifierNode, parameters.get('identifier_node', {}), {})]
    nodes: dict[str, Node] = {}
    try:
        for name, cls, overrides, extra in plan:
            values = {'robot': robot, **overrides}
            if lean:
                values['start_type_description_service'] = False
                extra['start_parameter_services'] = False
            nodes[name] = cls(context=context, namespace=namespace, parameter_overrides=_overrides(values), **extra)
    except (ParameterException, NameValidationException, InputError) as error:
        for node in nodes.values():
            node.destroy_node()
        raise InputError(f'{name}: {error}') from None
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


def run_bringup(robot: str, namespace: str, simulate: bool, params_file: str | None,
                overrides: Mapping[str, Mapping[str, object]]) -> None:
    """``dynid bringup``: build the suite and spin it until Ctrl-C."""
    arguments = []
    if params_file:
        if not os.path.isfile(params_file):
            raise InputError(f'parameter file {params_file} does not exist')
        arguments = ['--ros-args', '--params-file', params_file]
    context = Context()
    rclpy.init(args=['dynid'] + arguments, context=context)
    try:
        nodes = build_suite(context, robot, namespace, simulate, overrides)
        names = ', '.join(n.get_fully_qualified_name() for n in nodes.values())
        print(f'dynid bringup: running {names}; Ctrl-C stops', flush=True)
        spin_suite(nodes, context)
    except (KeyboardInterrupt, ExternalShutdownException):
        print('dynid bringup: stopped', flush=True)
    finally:
        if context.ok():
            rclpy.shutdown(context=context)
