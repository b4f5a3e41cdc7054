"""Launch test: `feedforward.launch.py` starts the twin and feedforward_node, configures and activates it
through launch_ros lifecycle events, and a reference comes back with efforts (launch_pytest).

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
from lifecycle_msgs.srv import GetState  # noqa: E402
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint  # noqa: E402

from dds_helpers import claim_domain  # noqa: E402
from testing.launch_prefix import ensure_dynid  # noqa: E402

ensure_dynid()
DOMAIN = claim_domain()  # this module's for the whole run (dds_helpers: launch descriptions read it)
os.environ['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'  # this process (the probe); same everywhere
JOINTS = ['shoulder_pan_joint', 'shoulder_lift_joint', 'elbow_joint', 'wrist_1_joint', 'wrist_2_joint',
          'wrist_3_joint']


@launch_pytest.fixture
def feedforward_launch():
    path = os.path.join(get_package_share_directory('dynid'), 'launch', 'feedforward.launch.py')
    include = IncludeLaunchDescription(PythonLaunchDescriptionSource(path),
                                       launch_arguments={'rate': '200.0', 'namespace': 'lff'}.items())
    # The launched processes get this module's domain (set here, not in os.environ: modules share it).
    return LaunchDescription([SetEnvironmentVariable('ROS_DOMAIN_ID', str(DOMAIN)),
                              SetEnvironmentVariable('ROS_AUTOMATIC_DISCOVERY_RANGE', 'LOCALHOST'),
                              include, launch_pytest.actions.ReadyToTest()])


@pytest.mark.launch(fixture=feedforward_launch)
def test_feedforward_launch_activates_and_fills_efforts():
    context = rclpy.Context()
    rclpy.init(context=context, domain_id=DOMAIN)
    node = rclpy.create_node('launch_probe', context=context)
    sent = []
    node.create_subscription(JointTrajectory, '/lff/joint_trajectory_controller/joint_trajectory', sent.append, 10)
    reference = node.create_publisher(JointTrajectory, '/lff/feedforward_node/reference', 10)
    get_state = node.create_client(GetState, '/lff/feedforward_node/get_state')
    executor = rclpy.executors.SingleThreadedExecutor(context=context)
    executor.add_node(node)

    def spin_until(condition, timeout: float) -> bool:
        end = time.monotonic() + timeout
        while not condition() and time.monotonic() < end:
            executor.spin_once(timeout_sec=0.1)
        return condition()

    def state() -> str:
        future = get_state.call_async(GetState.Request())
        return future.result().current_state.label if spin_until(future.done, 10.0) else ''

    try:
        assert get_state.wait_for_service(timeout_sec=60.0), 'no feedforward_node'
        assert spin_until(lambda: state() == 'active', 60.0), 'the launch did not activate feedforward_node'
        assert spin_until(lambda: reference.get_subscription_count() > 0, 30.0)
        message = JointTrajectory(joint_names=JOINTS)  # a small move from home, positions only (lines)
        for k, t in enumerate((0.0, 1.0, 2.0)):
            point = JointTrajectoryPoint(positions=[0.0, -1.5708 + 0.1 * k, 1.5708, -1.5708, -1.5708, 0.0])
            point.time_from_start.sec = int(t)
            message.points.append(point)
        end = time.monotonic() + 30.0  # the node forwards once joint_states is fresh: send until it does
        while not sent and time.monotonic() < end:
            reference.publish(message)
            spin_until(lambda: bool(sent), 1.0)
        assert sent, 'no trajectory with efforts from the launched feedforward_node'
        assert all(len(point.effort) == 6 for point in sent[0].points)
        assert abs(sent[0].points[0].effort[1]) > 10.0  # the shoulder carries the arm
    finally:
        executor.shutdown()
        node.destroy_node()
        rclpy.shutdown(context=context)
