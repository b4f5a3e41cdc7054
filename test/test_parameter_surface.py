"""The parameter surface a ROS user expects (issue 14, part 0), in-process, no launch needed.

Integers for float parameters (``rate:=200`` on a command line or from a launch file,
``payload_mass: 2`` in a parameter file, ``ros2 param set ... 2``) are taken as floats, where
rclpy alone raises InvalidParameterTypeException; ``~/start_recording`` fails, with the reason,
when no joint_states arrive within ``data_wait`` (and says so when they are published best effort).
"""

import threading

import pytest
import rclpy
from rclpy.executors import SingleThreadedExecutor
from rclpy.parameter import Parameter
from rclpy.qos import QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState
from std_srvs.srv import Trigger

from dynid.nodes.identifier_node import IdentifierNode
from dynid.nodes.sim_node import SimNode


def test_float_parameters_take_integers_from_arguments_files_and_set(ros_context, tmp_path):
    params_file = tmp_path / 'params.yaml'
    params_file.write_text('/**/sim_node:\n  ros__parameters:\n    payload_mass: 2\n    temperature: 30\n')
    node = SimNode(context=ros_context, cli_args=['--ros-args', '-p', 'rate:=200', '--params-file', str(params_file)])
    try:
        assert node.get_parameter('rate').type_ == Parameter.Type.DOUBLE and node.rate == 200.0
        assert node.get_parameter('payload_mass').value == 2.0 and node.twin.params.payload.mass == 2.0
        assert node.get_parameter('temperature').value == 30.0
        assert node.set_parameters([Parameter('payload_mass', value=3)])[0].successful
        assert node.get_parameter('payload_mass').value == 3.0
        # still typed: a string is refused, and so is an integer outside the declared range
        assert not node.set_parameters([Parameter('payload_mass', value='heavy')])[0].successful
        assert not node.set_parameters([Parameter('payload_mass', value=500)])[0].successful
        assert node.get_parameter('payload_mass').value == 3.0
    finally:
        node.destroy_node()


@pytest.mark.parametrize('publisher', [None, 'best_effort'])
def test_start_recording_fails_without_joint_states(ros_context, tmp_path, publisher):
    """No joint_states at all, or only from a best-effort publisher, which the identifier's reliable intake does
    not receive: the answer says to subscribe best effort."""
    node = IdentifierNode(context=ros_context, namespace='nodata', parameter_overrides=[
        Parameter('output_directory', value=str(tmp_path)), Parameter('data_wait', value=1)])
    client_node = rclpy.create_node('recording_client', context=ros_context)
    if publisher is not None:  # announced, never published: the intake does not match it anyway
        client_node.create_publisher(JointState, '/nodata/joint_states',
                                     QoSProfile(depth=10, reliability=ReliabilityPolicy.BEST_EFFORT))
    client = client_node.create_client(Trigger, '/nodata/identifier_node/start_recording')
    executor = SingleThreadedExecutor(context=ros_context)
    executor.add_node(node)
    executor.add_node(client_node)
    thread = threading.Thread(target=executor.spin, daemon=True)
    thread.start()
    try:
        assert client.wait_for_service(timeout_sec=10.0)
        future = client.call_async(Trigger.Request())
        done = threading.Event()
        future.add_done_callback(lambda _: done.set())
        assert done.wait(timeout=30.0)
        response = future.result()
        assert not response.success
        assert 'no /nodata/joint_states within 1 s' in response.message, response.message
        advice = 'set intake_reliability to best_effort' in response.message
        assert advice == (publisher is not None), response.message
        assert node.session.recorder is None  # closed again: a later start (with data) opens a new recording
    finally:
        executor.shutdown()
        thread.join(timeout=5.0)
        node.destroy_node()
        client_node.destroy_node()
