"""Launch test: `sim.launch.py` starts sim_node, which publishes joint states (launch_pytest).

Skipped where launch_pytest is not installed (it is not on PyPI); runs against a colcon-built
workspace or, without one, this source tree (launch_prefix.py),
so that `launch_ros` finds the package and executable.
"""

import os
import threading
import time

import pytest

launch_pytest = pytest.importorskip('launch_pytest')
pytest.importorskip('launch_ros')

import rclpy  # noqa: E402
from ament_index_python.packages import get_package_share_directory  # noqa: E402
from launch import LaunchDescription  # noqa: E402
from launch.actions import IncludeLaunchDescription, SetEnvironmentVariable  # noqa: E402
from launch.launch_description_sources import PythonLaunchDescriptionSource  # noqa: E402
from rclpy.qos import qos_profile_sensor_data  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402

from dds_helpers import claim_domain  # noqa: E402
from testing.launch_prefix import ensure_dynid  # noqa: E402

ensure_dynid()
DOMAIN = claim_domain()  # this module's for the whole run (dds_helpers: launch descriptions read it)
os.environ['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'  # this process (the probe); same everywhere


@launch_pytest.fixture
def sim_launch():
    path = os.path.join(get_package_share_directory('dynid'), 'launch', 'sim.launch.py')
    include = IncludeLaunchDescription(PythonLaunchDescriptionSource(path),
                                       launch_arguments={'rate': '200.0', 'namespace': 'twin'}.items())
    # The launched processes get this module's domain (set here, not in os.environ: modules share it).
    return LaunchDescription([SetEnvironmentVariable('ROS_DOMAIN_ID', str(DOMAIN)),
                              SetEnvironmentVariable('ROS_AUTOMATIC_DISCOVERY_RANGE', 'LOCALHOST'),
                              include, launch_pytest.actions.ReadyToTest()])


@pytest.mark.launch(fixture=sim_launch)
def test_sim_launch_publishes_joint_states():
    context = rclpy.Context()
    rclpy.init(context=context, domain_id=DOMAIN)
    node = rclpy.create_node('launch_probe', context=context)
    received = threading.Event()
    names = []

    def on_state(message):
        names[:] = list(message.name)
        received.set()

    node.create_subscription(JointState, '/twin/joint_states', on_state, qos_profile_sensor_data)
    executor = rclpy.executors.SingleThreadedExecutor(context=context)
    executor.add_node(node)
    try:
        end = time.monotonic() + 30.0
        while not received.is_set() and time.monotonic() < end:
            executor.spin_once(timeout_sec=0.1)
        assert received.is_set(), 'no joint_states from the launched sim_node within 30 s'
        assert names[0] == 'shoulder_pan_joint' and len(names) == 6
    finally:
        executor.shutdown()
        node.destroy_node()
        rclpy.shutdown(context=context)
