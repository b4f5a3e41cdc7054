"""A UR's drive-torque effort taken live: sim_node publishing as UR's ``actual_current_as_torque``, the intake
joining it as the motor current (dynid.ros.intake, dynid.io.gravity_restore.drive_torque_reader).

sim_node runs as its own process with ``joint_states_effort:=gravity_compensated_torque`` (no payload: live,
the payload set on the robot is taken as none) beside its ``joint_currents``; a probe's intake told the same
meaning joins joint_states' effort as the current i = (e + g(q)) / K_τ, which must be the current the twin
published on joint_currents at the same stamps.
"""

import os
import threading
import time

import numpy as np
import rclpy
from rclpy.executors import SingleThreadedExecutor
from rclpy.qos import QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState

from dds_helpers import parameters, start_node, stop
from dynid.model import load_robot
from dynid.ros.intake import IntakeSettings, StateIntake


def test_a_gravity_compensated_effort_joins_as_the_current(module_ros_domain):
    domain = module_ros_domain
    robot = load_robot('ur5e')
    process = start_node('sim_node', domain, *parameters('rate:=250.0', 'seed:=2',
                                                         'joint_states_effort:=gravity_compensated_torque'))
    os.environ['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'
    context = rclpy.Context()
    rclpy.init(context=context, domain_id=domain)
    node = rclpy.create_node('dynid_test_effort_probe', context=context)
    lock, joined, published = threading.Lock(), [], {}

    def on_samples(batch):
        with lock:
            joined.append(batch)

    def on_currents(message):
        with lock:
            stamp = message.header.stamp.sec * 1_000_000_000 + message.header.stamp.nanosec
            published[stamp] = np.array(message.effort)

    intake = StateIntake(node, IntakeSettings(joint_states_effort='gravity_compensated_torque'),
                         on_samples=on_samples, joint_names=robot.joint_names, required=('joint_currents',),
                         robot=robot)
    node.create_subscription(JointState, 'joint_currents', on_currents,
                             QoSProfile(depth=1000, reliability=ReliabilityPolicy.RELIABLE))
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(node)
    intake.start()
    try:
        end = time.monotonic() + 120.0
        while time.monotonic() < end:
            executor.spin_once(timeout_sec=0.05)
            with lock:
                if sum(len(b) for b in joined) > 200 and len(published) > 200:
                    break
        with lock:
            batches = list(joined)
            currents = dict(published)
        assert batches and currents, 'sim_node did not publish'
        assert 'joint_currents' not in intake.topics  # the current comes from joint_states' effort
        matched = 0
        for batch in batches:
            for k, stamp in enumerate(batch.stamps_ns):
                if int(stamp) in currents:
                    np.testing.assert_allclose(batch.current[k], currents[int(stamp)], rtol=1e-9, atol=1e-9)
                    assert np.all(np.isnan(batch.tau[k]))
                    matched += 1
        assert matched > 100
    finally:
        intake.stop()
        node.destroy_node()
        rclpy.shutdown(context=context)
        stop([process])
