"""The payload update of feedforward_node and estimator_node, in one process: a payload file at start
(``payload_file``) and payload files arriving on ``payload_topic`` (latched), the arm not identified again;
a bad message is refused and the payload in use stays; a bad file refuses the start (configure)."""


import numpy as np
import pytest
import rclpy
from rclpy.executors import SingleThreadedExecutor
from rclpy.lifecycle import TransitionCallbackReturn
from rclpy.parameter import Parameter
from std_msgs.msg import String

from dds_helpers import spinning, wait_until
from dynid.model import Payload, load_robot
from dynid.nodes.estimator_node import EstimatorNode
from dynid.nodes.feedforward_node import FeedforwardNode
from dynid.payload.document import payload_document, payload_yaml
from dynid.payload.estimate import PayloadEstimate, PayloadSettings
from dynid.ros.payload_updates import LATCHED

TOPIC = '/identifier_node/payload'


def document(robot, mass: float, com) -> str:
    """The YAML of a payload file of a point mass (what dynid payload writes, without a recording)."""
    payload = Payload(mass, com)
    estimate = PayloadEstimate(mass, 0.001, payload.com, np.full(3, 1e-4), None, None, 'not identified',
                               payload.parameters(), False, 0.0, {}, {}, {}, [], 0, robot.name, robot.flange)
    return payload_yaml(payload_document(estimate, robot, PayloadSettings()))


def test_feedforward_node_takes_a_payload_file_then_the_topic(ros_context, tmp_path):
    robot = load_robot('ur5e')
    path = tmp_path / 'payload.yaml'
    path.write_text(document(robot, 1.5, [0.0, 0.0, 0.05]))
    node = FeedforwardNode(context=ros_context, parameter_overrides=[
        Parameter('payload_file', value=str(path)), Parameter('payload_topic', value=TOPIC),
        Parameter('mode', value='streaming'), Parameter('terms', value=['rigid_body'])])
    probe = rclpy.create_node('payload_source', context=ros_context)
    publisher = probe.create_publisher(String, TOPIC, LATCHED)
    executor = SingleThreadedExecutor(context=ros_context)
    executor.add_node(node)
    executor.add_node(probe)
    try:
        assert node.trigger_configure() == TransitionCallbackReturn.SUCCESS, node.refusal
        rigid = node.commander.feedforward.terms['rigid_body']
        assert rigid.payload.mass == pytest.approx(1.5)  # from payload_file at configure
        with spinning(executor, ros_context):
            publisher.publish(String(data='dynid_payload: 7'))  # refused: the payload in use stays
            publisher.publish(String(data=document(robot, 3.0, [0.02, 0.0, 0.06])))
            assert wait_until(lambda: rigid.payload.mass == pytest.approx(3.0), 10.0)
        assert rigid.payload.com == pytest.approx([0.02, 0.0, 0.06])
        node.trigger_cleanup()
        path.write_text('not: a payload')
        assert node.trigger_configure() == TransitionCallbackReturn.FAILURE  # a bad file refuses configure
        assert 'not a dynid payload file' in node.refusal
    finally:
        node.destroy_node()
        probe.destroy_node()


def test_estimator_node_takes_a_payload_from_the_topic(ros_context, tmp_path):
    robot = load_robot('ur5e')
    path = tmp_path / 'payload.yaml'
    path.write_text(document(robot, 0.8, [0.0, 0.01, 0.04]))
    node = EstimatorNode(context=ros_context, parameter_overrides=[
        Parameter('payload_file', value=str(path)), Parameter('payload_topic', value=TOPIC)])
    probe = rclpy.create_node('payload_source', context=ros_context)
    publisher = probe.create_publisher(String, TOPIC, LATCHED)
    executor = SingleThreadedExecutor(context=ros_context)
    executor.add_node(node)
    executor.add_node(probe)
    try:
        assert node.estimation.payload.mass == pytest.approx(0.8)
        with spinning(executor, ros_context):
            publisher.publish(String(data=document(robot, 2.5, [0.0, 0.0, 0.05])))
            assert wait_until(lambda: node.estimation.payload.mass == pytest.approx(2.5), 10.0)
        assert node.estimation.payload_source == TOPIC
    finally:
        node.destroy_node()
        probe.destroy_node()
