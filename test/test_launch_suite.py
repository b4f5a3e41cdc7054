"""Launch test: ``suite.launch.py use_sim:=true``, the whole loop on the twin (launch_pytest).

The five nodes come up; identifier_node records and identifies through its services while
excitation_node runs its trajectory through feedforward_node (active from the start), whose
trajectories with efforts go to the controller topic that sim_node takes, and the twin follows
them; estimator_node publishes estimates. Skipped where launch_pytest is not installed (not on
PyPI); dynid comes from a colcon install or, without one, from this source tree (launch_prefix.py).
"""

import os
import tempfile

import pytest

launch_pytest = pytest.importorskip('launch_pytest')
pytest.importorskip('launch_ros')

import yaml  # noqa: E402
from ament_index_python.packages import get_package_share_directory  # noqa: E402
from launch import LaunchDescription  # noqa: E402
from launch.actions import IncludeLaunchDescription, SetEnvironmentVariable  # noqa: E402
from launch.launch_description_sources import PythonLaunchDescriptionSource  # noqa: E402
from lifecycle_msgs.srv import GetState  # noqa: E402
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy, qos_profile_sensor_data  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from std_msgs.msg import Float64MultiArray, String  # noqa: E402
from trajectory_msgs.msg import JointTrajectory  # noqa: E402

from dds_helpers import claim_domain  # noqa: E402
from launch_probe import Probe  # noqa: E402
from testing.launch_prefix import ensure_dynid  # noqa: E402

ensure_dynid()
DOMAIN = claim_domain()  # this module's for the whole run (dds_helpers: launch descriptions read it)
os.environ['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'  # this process (the probe); same everywhere
OUTPUT = tempfile.mkdtemp(prefix='launch_suite_')
LATCHED = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL)


def suite_parameters() -> str:
    """The shipped config/suite.yaml with one period of the excitation and the recordings in OUTPUT."""
    share = get_package_share_directory('dynid')
    with open(os.path.join(share, 'config', 'suite.yaml'), encoding='utf-8') as file:
        document = yaml.safe_load(file)
    document['/**/excitation_node']['ros__parameters']['repeat'] = 1
    document['/**/identifier_node']['ros__parameters'].update(output_directory=OUTPUT, report=False)
    path = os.path.join(OUTPUT, 'suite.yaml')
    with open(path, 'w', encoding='utf-8') as file:
        yaml.safe_dump(document, file)
    return path


@launch_pytest.fixture
def suite_launch():
    path = os.path.join(get_package_share_directory('dynid'), 'launch', 'suite.launch.py')
    include = IncludeLaunchDescription(PythonLaunchDescriptionSource(path), launch_arguments={
        'use_sim': 'true', 'namespace': 'suite', 'rate': '200', 'params_file': suite_parameters()}.items())
    # The launched processes get this module's domain (set here, not in os.environ: modules share it).
    return LaunchDescription([SetEnvironmentVariable('ROS_DOMAIN_ID', str(DOMAIN)),
                              SetEnvironmentVariable('ROS_AUTOMATIC_DISCOVERY_RANGE', 'LOCALHOST'),
                              include, launch_pytest.actions.ReadyToTest()])


@pytest.mark.launch(fixture=suite_launch)
def test_suite_on_the_twin_records_identifies_estimates_and_feeds_forward():
    probe = Probe(DOMAIN)
    node = probe.node
    states, sent, estimates, excitation, results = [], [], [], [], []
    node.create_subscription(JointState, '/suite/joint_states', states.append, qos_profile_sensor_data)
    node.create_subscription(JointTrajectory, '/suite/joint_trajectory_controller/joint_trajectory', sent.append, 10)
    node.create_subscription(Float64MultiArray, '/suite/estimator_node/stiffness', estimates.append, 10)
    node.create_subscription(String, '/suite/excitation_node/state', lambda m: excitation.append(m.data), LATCHED)
    node.create_subscription(String, '/suite/identifier_node/result', lambda m: results.append(m.data), LATCHED)
    get_state = node.create_client(GetState, '/suite/feedforward_node/get_state')
    try:
        assert probe.spin_until(lambda: len(states) > 10, 60.0), 'no joint_states from the launched sim_node'
        assert get_state.wait_for_service(timeout_sec=60.0), 'no feedforward_node'

        def active() -> bool:
            response = probe.call(get_state, GetState.Request(), 10.0)
            return response is not None and response.current_state.label == 'active'
        assert probe.spin_until(active, 60.0), 'feedforward_node did not become active (autostart)'

        response = probe.trigger('/suite/identifier_node/start_recording')
        assert response.success, response.message
        start = list(states[-1].position)
        response = probe.trigger('/suite/excitation_node/start')
        assert response.success, response.message
        assert probe.spin_until(lambda: excitation and excitation[-1] == 'done', 180.0), excitation[-3:]

        # feedforward_node forwarded the excitation with efforts to the controller topic sim_node takes
        assert sent and all(len(point.effort) == 6 for message in sent for point in message.points)
        assert max(abs(point.effort[1]) for message in sent for point in message.points) > 10.0  # shoulder load
        takers = {info.node_name for info in node.get_subscriptions_info_by_topic(
            '/suite/joint_trajectory_controller/joint_trajectory')}
        assert 'sim_node' in takers, takers
        moved = max(abs(a - b) for a, b in zip(states[-1].position, start, strict=True))
        assert moved > 0.05, f'the twin did not follow the trajectory (moved {moved:.3f} rad)'

        assert probe.spin_until(lambda: len(estimates) >= 3, 30.0), 'no ~/stiffness from estimator_node'
        assert [d.size for d in estimates[-1].layout.dim] == [6, 6]

        response = probe.trigger('/suite/identifier_node/stop_recording')
        assert response.success, response.message
        response = probe.trigger('/suite/identifier_node/identify', timeout=240.0)
        assert response.success, response.message
        assert probe.spin_until(lambda: bool(results), 10.0), 'no ~/result after identify'
        result = yaml.safe_load(results[-1])
        assert result['dynid_result'] == 1 and result['robot'] == 'ur5e' and len(result['base_parameters']) > 10
        assert result['metrics']['train']['relative_residual'] < 0.05  # the twin's torques, explained
    finally:
        probe.close()
