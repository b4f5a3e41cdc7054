"""Launch test: `identification.launch.py` starts the twin, excitation_node and identifier_node.

Skipped where launch_pytest is not installed (it is not on PyPI); runs against a colcon-built
workspace or, without one, this source tree (launch_prefix.py),
so that `launch_ros` finds the package, executables and config files.
"""

import os
import time

import pytest

launch_pytest = pytest.importorskip('launch_pytest')
pytest.importorskip('launch_ros')

import rclpy  # noqa: E402
from ament_index_python.packages import get_package_share_directory  # noqa: E402
from launch import LaunchDescription  # noqa: E402
from launch.actions import IncludeLaunchDescription, SetEnvironmentVariable  # noqa: E402
from launch.launch_description_sources import PythonLaunchDescriptionSource  # noqa: E402
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy, qos_profile_sensor_data  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from std_msgs.msg import String  # noqa: E402
from std_srvs.srv import Trigger  # noqa: E402

from dds_helpers import claim_domain  # noqa: E402
from testing.launch_prefix import ensure_dynid  # noqa: E402

ensure_dynid()
DOMAIN = claim_domain()  # this module's for the whole run (dds_helpers: launch descriptions read it)
os.environ['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'  # this process (the probe); same everywhere


@launch_pytest.fixture
def suite_launch():
    path = os.path.join(get_package_share_directory('dynid'), 'launch', 'identification.launch.py')
    include = IncludeLaunchDescription(PythonLaunchDescriptionSource(path),
                                       launch_arguments={'rate': '200.0', 'namespace': 'lid'}.items())
    # The launched processes get this module's domain (set here, not in os.environ: modules share it).
    return LaunchDescription([SetEnvironmentVariable('ROS_DOMAIN_ID', str(DOMAIN)),
                              SetEnvironmentVariable('ROS_AUTOMATIC_DISCOVERY_RANGE', 'LOCALHOST'),
                              include, launch_pytest.actions.ReadyToTest()])


@pytest.mark.launch(fixture=suite_launch)
def test_identification_launch_brings_up_the_suite():
    context = rclpy.Context()
    rclpy.init(context=context, domain_id=DOMAIN)
    node = rclpy.create_node('launch_probe', context=context)
    states, excitation = [], []
    latched = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL)
    node.create_subscription(JointState, '/lid/joint_states', states.append, qos_profile_sensor_data)
    node.create_subscription(String, '/lid/excitation_node/state', lambda m: excitation.append(m.data), latched)
    client = node.create_client(Trigger, '/lid/identifier_node/identify')
    executor = rclpy.executors.SingleThreadedExecutor(context=context)
    executor.add_node(node)
    try:
        end = time.monotonic() + 30.0
        while (not states or not excitation) and time.monotonic() < end:
            executor.spin_once(timeout_sec=0.1)
        assert states and states[-1].name[0] == 'shoulder_pan_joint', 'no joint_states from the launched sim_node'
        assert excitation == ['idle'], excitation  # the builtin excitation loaded from the config file
        assert client.wait_for_service(timeout_sec=20.0), 'identifier_node services missing'
        future = client.call_async(Trigger.Request())
        end = time.monotonic() + 10.0
        while not future.done() and time.monotonic() < end:
            executor.spin_once(timeout_sec=0.1)
        assert future.done() and future.result().message == 'nothing recorded yet'
    finally:
        executor.shutdown()
        node.destroy_node()
        rclpy.shutdown(context=context)
