"""The nodes' ``joints`` parameter selects one serial chain of a description that branches, in-process over DDS.

The robot is test/data/torso_arm.urdf (a vertical prismatic torso carrying a six-joint arm and a two-joint head).
A driver of the whole robot publishes every joint, the arm's in another order: identifier_node records it and
reads the arm back in chain order, estimator_node joins the arm's samples by name.
"""

import os
import time
from pathlib import Path

import numpy as np
import pytest
import rclpy
import yaml
from rclpy.parameter import Parameter
from sensor_msgs.msg import JointState

from dynid.errors import InputError
from dynid.io.recorder import read_recording
from dynid.nodes.estimator_node import EstimatorNode
from dynid.nodes.identifier_node import IdentifierNode

URDF = str(Path(__file__).parent / 'data' / 'torso_arm.urdf')
ARM = [f'arm_{i}_joint' for i in range(1, 7)]
# as the driver publishes them: the whole robot, the arm's joints not in chain order
PUBLISHED = ['head_2_joint', 'arm_4_joint', 'torso_lift_joint', 'arm_2_joint', 'arm_6_joint', 'head_1_joint',
             'arm_1_joint', 'arm_5_joint', 'arm_3_joint']
POSITION = {name: 0.01 * (k + 1) for k, name in enumerate(PUBLISHED)}  # each joint its own value [rad]
NAMESPACE = 'mobile'


@pytest.fixture(scope='module')
def context(module_ros_domain):
    os.environ['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'
    context = rclpy.Context()
    rclpy.init(context=context, domain_id=module_ros_domain)
    yield context
    rclpy.shutdown(context=context)


class Driver:
    """Publishes the whole robot's joint_states, motor_states and joint_currents, one stamp per sample, reliable
    as ros2_control's broadcasters do (the identifier's intake reads reliable, the estimator's best effort)."""

    def __init__(self, context):
        self.node = rclpy.create_node('whole_robot_driver', namespace=NAMESPACE, context=context)
        self.publishers = {topic: self.node.create_publisher(JointState, topic, 100)
                           for topic in ('joint_states', 'motor_states', 'joint_currents')}
        self.sample = 0

    def publish(self) -> None:
        self.sample += 1
        message = JointState(name=PUBLISHED, position=[POSITION[n] for n in PUBLISHED],
                             velocity=[0.0] * len(PUBLISHED), effort=[1.0] * len(PUBLISHED))
        message.header.stamp.sec, message.header.stamp.nanosec = 1_700_000_000, self.sample * 2_000_000
        for publisher in self.publishers.values():
            publisher.publish(message)

    def until(self, condition, timeout_s: float = 30.0) -> bool:
        end = time.monotonic() + timeout_s
        while time.monotonic() < end:
            self.publish()
            time.sleep(0.02)
            if condition():
                return True
        return False


def test_identifier_node_records_the_chain_its_joints_parameter_selects(context, tmp_path):
    with pytest.raises(InputError, match='select one chain with joints'):
        IdentifierNode(context=context, namespace=NAMESPACE, parameter_overrides=[Parameter('robot', value=URDF)])
    node = IdentifierNode(context=context, namespace=NAMESPACE, parameter_overrides=[
        Parameter('robot', value=URDF), Parameter('joints', value=list(reversed(ARM))),
        Parameter('output_directory', value=str(tmp_path))])
    driver = Driver(context)
    try:
        assert node.session.robot.joint_names == tuple(ARM)  # the chain, in chain order
        node.session.start(tmp_path, 5.0)
        node.intake.start()
        assert driver.until(lambda: node.session.recorder.messages >= 30), 'nothing recorded'
        folder = node.close_recording()
    finally:
        node.destroy_node()
        driver.node.destroy_node()
    recorded = read_recording(folder, ARM, f'/{NAMESPACE}')
    np.testing.assert_array_equal(recorded.q[-1], [POSITION[name] for name in ARM])


def test_estimator_node_joins_the_chain_its_joints_parameter_selects(context, tmp_path):
    drives = tmp_path / 'drives.yaml'
    drives.write_text(yaml.safe_dump({'drives': {name: {'gear_ratio': 101.0, 'drive_gain': 10.0, 'rotor_inertia': 0.3}
                                                 for name in ARM}}))
    node = EstimatorNode(context=context, namespace=NAMESPACE, parameter_overrides=[
        Parameter('robot', value=URDF), Parameter('joints', value=list(reversed(ARM))),
        Parameter('drives_file', value=str(drives)), Parameter('baseline_file', value=str(tmp_path / 'b.yaml'))])
    driver = Driver(context)
    batches = []
    try:
        assert node.estimation.robot.joint_names == tuple(ARM)
        node.intake.on_samples = batches.append  # what the estimators would be given
        assert driver.until(lambda: len(batches) > 0), 'no sample of the arm was joined'
    finally:
        node.destroy_node()
        driver.node.destroy_node()
    np.testing.assert_array_equal(batches[0].q[0], [POSITION[name] for name in ARM])
