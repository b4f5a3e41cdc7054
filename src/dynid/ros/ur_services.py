"""UR's FrictionModelController and GravityUpdateController set from a node, where ``ur_msgs`` is importable.

feedforward_node on a UR (docs/backends/ur.md) sets at configure what its feedforward assumes of the robot:
the friction scale factors of :func:`dynid.control.ur_direct_torque.ur_friction_plan` (UR's own coefficients
are not published, so on a real UR the plan is dynid's friction with UR's scales at 0 where the feedforward
compensates friction; with ``compensate_friction: false`` UR's model is left as set on the robot) and, where the
robot model's gravity is not straight down (a tilted mounting), the gravity vector. ur_msgs is not on PyPI:
where it is missing nothing is called and the line logged gives the ``ros2 service call`` to run instead.
Calls are sent without waiting for the answer (configure does not block on the driver); the answer is logged.
"""

from __future__ import annotations

import numpy as np
from rclpy.node import Node

from dynid.control.ur_direct_torque import (
    GRAVITY_TYPE,
    FrictionPlan,
    friction_model_request,
    gravity_in_base,
    gravity_request,
    ur_friction_plan,
)


def _call(node: Node, type_name: str, service: str, build, command: str) -> str:
    try:
        from ur_msgs import srv
        service_type = getattr(srv, type_name)
    except (ImportError, AttributeError):
        return f'ur_msgs (with {type_name}) is not installed here: {service} not called; run: {command}'
    client = node.create_client(service_type, service)
    if not client.wait_for_service(timeout_sec=2.0):
        node.destroy_client(client)
        return f'{service} is not there (is the UR driver running?): not called; run: {command}'
    future = client.call_async(build(service_type.Request))
    future.add_done_callback(lambda done: node.get_logger().info(
        f'{service} answered success {bool(getattr(done.result(), "success", False))}'))
    return f'{service} called'


def friction_plan_for(robot, compensate_friction: bool) -> FrictionPlan | None:
    """The friction plan of a feedforward that compensates friction or not (module docstring); None: leave UR's."""
    if not compensate_friction:
        return None
    n = robot.n
    return ur_friction_plan(np.zeros(n), np.zeros(n))  # UR's coefficients unknown: its scales 0, dynid's friction


def configure_ur(node: Node, robot, compensate_friction: bool, friction_service: str, gravity_service: str
                 ) -> list[str]:
    """Set UR's friction scales and gravity vector as the module docstring says; the lines to log."""
    lines = []
    if friction_service:
        plan = friction_plan_for(robot, compensate_friction)
        if plan is None:
            lines.append(f"compensate_friction false: UR's friction model left as set on the robot ({friction_service} "
                         'not called)')
        else:
            command = plan.command().replace(' /friction_model_controller/set_friction_model_parameters ',
                                             f' {friction_service} ')
            lines.append(f'friction: {plan.reason}; ' + _call(node, 'SetFrictionModelParameters', friction_service,
                                                               lambda request: friction_model_request(request, plan),
                                                               command))
    if gravity_service:
        gravity = gravity_in_base(robot)
        if np.allclose(gravity[:2], 0.0) and gravity[2] < 0:
            lines.append(f'gravity straight down in the robot model: {gravity_service} not called')
        else:
            g = ', '.join(f'{v:.4g}' for v in gravity)
            command = (f'ros2 service call {gravity_service} {GRAVITY_TYPE} "{{gravity: {{header: {{frame_id: base}}, '
                       f'vector: {{x: {gravity[0]:.4g}, y: {gravity[1]:.4g}, z: {gravity[2]:.4g}}}}}}}"')
            lines.append(f'gravity ({g}) m/s² from the robot model: '
                         + _call(node, 'SetGravity', gravity_service,
                                 lambda request: gravity_request(request, gravity), command))
    return lines
