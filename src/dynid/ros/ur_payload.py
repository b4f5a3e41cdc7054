"""UR's ``set_payload`` called from a node, where ``ur_msgs`` is importable.

ur_msgs is not on PyPI: where it is missing (or the service does not answer) nothing is called and the
returned line says so; the node publishes the payload file on ``~/payload`` either way, and the file holds
the request and the ``ros2 service call`` line (:mod:`dynid.payload.robot_calls`).
"""

from __future__ import annotations

from rclpy.node import Node

from dynid.ros.waiting import until, wakeful_future, with_timeout

INERTIA_FIELDS = ('ixx', 'iyy', 'izz', 'ixy', 'ixz', 'iyz')


def ur_payload_request(request_type, values: dict):
    """A ``SetPayload.Request`` of ``request_type`` from :func:`~dynid.payload.robot_calls.ur_set_payload`'s
    request values; the inertia fields only where this ur_msgs has them (the Kilted driver's does)."""
    request = request_type()
    request.mass = float(values['mass'])
    for axis in 'xyz':
        setattr(request.center_of_gravity, axis, float(values['center_of_gravity'][axis]))
    for name in INERTIA_FIELDS:
        if name in values and hasattr(request, name):
            setattr(request, name, float(values[name]))
    return request


async def call_ur_set_payload(node: Node, service: str, values: dict, timeout_s: float = 5.0) -> str:
    """Call UR's ``service`` (ur_msgs/srv/SetPayload) with ``values``; one line saying what happened."""
    try:
        from ur_msgs.srv import SetPayload
    except ImportError:
        return f'ur_msgs is not installed here: {service} not called (the values are on ~/payload)'
    client = node.create_client(SetPayload, service)
    try:
        if not await until(node, client.service_is_ready, timeout_s):
            return f'{service} did not appear within {timeout_s:g} s: not called (the values are on ~/payload)'
        answered = wakeful_future(node)
        client.call_async(ur_payload_request(SetPayload.Request, values)).add_done_callback(
            lambda future: answered.done() or answered.set_result(future.result()))
        response = await with_timeout(node, answered, timeout_s)
        if response is None:
            return f'{service} did not answer within {timeout_s:g} s'
        return f'{service} answered success {bool(response.success)}'
    finally:
        node.destroy_client(client)
