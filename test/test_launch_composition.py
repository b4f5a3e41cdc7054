"""Launch test: a user's launch file composes two dynid suites without crosstalk (launch_pytest).

``launch_files/two_arms.launch.py`` includes suite.launch.py twice, under the namespaces ``left``
and ``right`` (PushROSNamespace) with the controller topics remapped to the user's controller
names. A reference sent to the left feedforward_node comes out with efforts on the left
controller's topic only, where the left twin takes it. Skipped where launch_pytest is not installed.
"""

import os
from pathlib import Path

import pytest

launch_pytest = pytest.importorskip('launch_pytest')
pytest.importorskip('launch_ros')

from launch import LaunchDescription  # noqa: E402
from launch.actions import IncludeLaunchDescription, SetEnvironmentVariable  # noqa: E402
from launch.launch_description_sources import PythonLaunchDescriptionSource  # noqa: E402
from lifecycle_msgs.srv import GetState  # noqa: E402
from rclpy.qos import qos_profile_sensor_data  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint  # noqa: E402

from dds_helpers import claim_domain  # noqa: E402
from launch_probe import Probe  # noqa: E402
from testing.launch_prefix import ensure_dynid  # noqa: E402

ensure_dynid()
DOMAIN = claim_domain()  # this module's for the whole run (dds_helpers: launch descriptions read it)
os.environ['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'
USER_LAUNCH = Path(__file__).resolve().parent / 'launch_files' / 'two_arms.launch.py'
JOINTS = ['shoulder_pan_joint', 'shoulder_lift_joint', 'elbow_joint', 'wrist_1_joint', 'wrist_2_joint',
          'wrist_3_joint']


@launch_pytest.fixture
def two_arms():
    return LaunchDescription([SetEnvironmentVariable('ROS_DOMAIN_ID', str(DOMAIN)),
                              SetEnvironmentVariable('ROS_AUTOMATIC_DISCOVERY_RANGE', 'LOCALHOST'),
                              IncludeLaunchDescription(PythonLaunchDescriptionSource(str(USER_LAUNCH))),
                              launch_pytest.actions.ReadyToTest()])


@pytest.mark.launch(fixture=two_arms)
def test_two_suites_under_their_namespaces_do_not_cross_talk():
    probe = Probe(DOMAIN)
    node = probe.node
    states = {side: [] for side in ('left', 'right')}
    sent = {side: [] for side in ('left', 'right')}
    for side in states:
        node.create_subscription(JointState, f'/{side}/joint_states', states[side].append, qos_profile_sensor_data)
        node.create_subscription(JointTrajectory, f'/{side}/{side}_arm_controller/joint_trajectory',
                                 sent[side].append, 10)
    default = []
    node.create_subscription(JointTrajectory, '/left/joint_trajectory_controller/joint_trajectory', default.append, 10)
    reference = node.create_publisher(JointTrajectory, '/left/feedforward_node/reference', 10)
    get_state = node.create_client(GetState, '/left/feedforward_node/get_state')
    try:
        assert probe.spin_until(lambda: all(len(s) > 5 for s in states.values()), 90.0), \
            {side: len(s) for side, s in states.items()}
        assert get_state.wait_for_service(timeout_sec=60.0)

        def active() -> bool:
            response = probe.call(get_state, GetState.Request(), 10.0)
            return response is not None and response.current_state.label == 'active'
        assert probe.spin_until(active, 60.0), 'the left feedforward_node did not become active'
        message = JointTrajectory(joint_names=JOINTS)
        for k in range(3):
            point = JointTrajectoryPoint(positions=[0.0, -1.5708 + 0.1 * k, 1.5708, -1.5708, -1.5708, 0.0])
            point.time_from_start.sec = k
            message.points.append(point)
        for _ in range(30):  # until the node has fresh joint_states and forwards
            reference.publish(message)
            if probe.spin_until(lambda: bool(sent['left']), 1.0):
                break
        assert sent['left'] and len(sent['left'][0].points[0].effort) == 6
        probe.spin_until(lambda: False, 2.0)  # anything that would leak has time to arrive
        assert not sent['right'] and not default, 'the reference leaked to the other suite or the default topic'
        takers = {(i.node_namespace, i.node_name) for i in node.get_subscriptions_info_by_topic(
            '/left/left_arm_controller/joint_trajectory')}
        assert ('/left', 'sim_node') in takers, takers
        assert all(('/right', 'sim_node') != taker for taker in takers)
    finally:
        probe.close()
