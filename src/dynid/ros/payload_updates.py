"""A payload update for a running node: a payload file at start and each payload file received on a topic.

feedforward_node and estimator_node take the payload identified by ``dynid payload`` or identifier_node's
``~/identify_payload`` (a ``dynid_payload: 1`` file, :mod:`dynid.payload.document`) without identifying the arm
again: ``payload_file`` is read at start (configure; by the node's core, so that a bad file refuses the start),
and every std_msgs/String on ``payload_topic`` (transient local, e.g. ``/identifier_node/payload``) replaces
the payload; a bad message is logged and counted, and the payload in use stays.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from std_msgs.msg import String

from dynid.errors import InputError
from dynid.ros.parameters import declare_settings
from dynid.ros.runner import node_message
from dynid.settings import from_values, setting

#: The QoS of dynid's latched documents (identification results, payload files): reliable, transient local.
LATCHED = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL)


@dataclass(frozen=True)
class PayloadUpdates:
    """Where estimator_node's payload comes from (the parameters ``payload_file`` and ``payload_topic``;
    feedforward_node's are in :class:`dynid.control.configuration.FeedforwardSettings`)."""

    payload_file: str = setting('', 'payload file (dynid payload -o, dynid_payload: 1) at the flange from the start; '
                                    'empty: none')
    payload_topic: str = setting('', 'payload files (std_msgs/String YAML, transient local, e.g. '
                                     '/identifier_node/payload), each replacing the payload; empty: none')


def declare_payload_updates(node: Node) -> PayloadUpdates:
    """Declare ``payload_file`` and ``payload_topic`` on ``node`` (read once, at start) and return their values."""
    declare_settings(node, PayloadUpdates, read_only=True)
    return from_values(PayloadUpdates, lambda name: node.get_parameter(name).value)


def payload_subscription(node: Node, topic: str, apply: Callable[[str, str], str]) -> list:
    """Subscribe to ``topic`` (none where empty): ``apply(yaml_text, topic)`` parses and applies each payload
    document received and returns the line to log; a refusal (InputError) is logged and counted. Returns the
    subscriptions made."""
    if not topic:
        return []
    refused = [0]

    def received(message: String) -> None:
        try:
            node.get_logger().info(apply(message.data, topic))
        except InputError as error:
            refused[0] += 1
            node.get_logger().error(f'payload_topic: refused a payload ({refused[0]} so far): {node_message(error)}')

    return [node.create_subscription(String, topic, received, LATCHED)]
