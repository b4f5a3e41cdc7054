"""UR's ``set_payload`` called from a node, where ``ur_msgs`` is importable.

ur_msgs is not on PyPI: where it is missing (or the service does not answer) nothing is called and the
returned line says so; the node publishes the payload file on ``~/payload`` either way, and the file holds
the request and the ``ros2 service call`` line (:mod:`dynid.payload.robot_calls`).
"""

from __future__ import annotations

from rclpy.node import Node

from dynid.control.ur_direct_torque import INERTIA_FIELDS, set_payload_request
from dynid.ros.waiting import until, wakeful_future, with_timeout

__all__ = ['INERTIA_FIELDS', 'call_ur_set_payload', 'ur_payload_request']


def ur_payload_request(request_type, values: dict, transition_time_s: float = 0.0):
    """A ``SetPayload.Request`` of ``request_type`` from :func:`~dynid.payload.robot_calls.ur_set_payload`'s
    request values, for whichever ur_msgs is installed (:func:`dynid.control.ur_direct_torque.set_payload_request`:
    the main branch's nested ``payload``, or the Kilted/Jazzy flat fields; inertia and transition time where the
    class has them)."""
    return set_payload_request(request_type, values, transition_time_s)


async def call_ur_set_payload(node: Node, service: str, values: dict, timeout_s: float = 5.0,
                              transition_time_s: float = 0.0) -> str:
    """Call UR's ``service`` (ur_msgs/srv/SetPayload) with ``values`` (inertia and ``transition_time_s`` [s]
    where its ur_msgs has them); one line saying what happened."""
    try:
        from ur_msgs.srv import SetPayload
    except ImportError:
        return f'ur_msgs is not installed here: {service} not called (the values are on ~/payload)'
    client = node.create_client(SetPayload, service)
    try:
        if not await until(node, client.service_is_ready, timeout_s):
            return f'{service} did not appear within {timeout_s:g} s: not called (the values are on ~/payload)'
        answered = wakeful_future(node)
        client.call_async(ur_payload_request(SetPayload.Request, values, transition_time_s)).add_done_callback(
            lambda future: answered.done() or answered.set_result(future.result()))
        response = await with_timeout(node, answered, timeout_s)
        if response is None:
            return f'{service} did not answer within {timeout_s:g} s'
        return f'{service} answered success {bool(response.success)}'
    finally:
        node.destroy_client(client)
