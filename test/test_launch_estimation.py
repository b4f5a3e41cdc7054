"""Launch test: `estimation.launch.py` starts the twin and estimator_node, which estimates (launch_pytest).

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
from diagnostic_msgs.msg import DiagnosticArray  # noqa: E402
from launch import LaunchDescription  # noqa: E402
from launch.actions import IncludeLaunchDescription, SetEnvironmentVariable  # noqa: E402
from launch.launch_description_sources import PythonLaunchDescriptionSource  # noqa: E402
from std_msgs.msg import Float64MultiArray  # noqa: E402

from dds_helpers import claim_domain  # noqa: E402
from testing.launch_prefix import ensure_dynid  # noqa: E402

ensure_dynid()
DOMAIN = claim_domain()  # this module's for the whole run (dds_helpers: launch descriptions read it)
os.environ['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'  # this process (the probe); same everywhere


@launch_pytest.fixture
def estimation_launch():
    path = os.path.join(get_package_share_directory('dynid'), 'launch', 'estimation.launch.py')
    include = IncludeLaunchDescription(PythonLaunchDescriptionSource(path),
                                       launch_arguments={'rate': '200.0', 'namespace': 'lest'}.items())
    # The launched processes get this module's domain (set here, not in os.environ: modules share it).
    return LaunchDescription([SetEnvironmentVariable('ROS_DOMAIN_ID', str(DOMAIN)),
                              SetEnvironmentVariable('ROS_AUTOMATIC_DISCOVERY_RANGE', 'LOCALHOST'),
                              include, launch_pytest.actions.ReadyToTest()])


@pytest.mark.launch(fixture=estimation_launch)
def test_estimation_launch_estimates_stiffness():
    context = rclpy.Context()
    rclpy.init(context=context, domain_id=DOMAIN)
    node = rclpy.create_node('launch_probe', context=context)
    estimates, statuses = [], {}
    node.create_subscription(Float64MultiArray, '/lest/estimator_node/stiffness', estimates.append, 10)
    node.create_subscription(DiagnosticArray, '/diagnostics', lambda m: statuses.update({s.name: s for s in m.status}),
                             10)
    intake = '/lest/estimator_node: intake'

    def joined() -> int:  # samples the intake has joined, as its last status on /diagnostics says
        values = {v.key: v.value for v in statuses[intake].values} if intake in statuses else {}
        return int(values.get('joined', 0))

    executor = rclpy.executors.SingleThreadedExecutor(context=context)
    executor.add_node(node)
    try:
        end = time.monotonic() + 60.0
        while (len(estimates) < 3 or joined() == 0) and time.monotonic() < end:  # statuses come once a second
            executor.spin_once(timeout_sec=0.1)
        assert estimates, 'no ~/stiffness from the launched estimator_node'
        message = estimates[-1]
        assert [d.size for d in message.layout.dim] == [6, 6]
        assert message.layout.dim[0].label.startswith('joint:shoulder_pan_joint,')
        assert message.layout.dim[1].label.startswith('quantity:alpha1,alpha3,k0')
        assert intake in statuses, sorted(statuses)
        assert joined() > 0, [(v.key, v.value) for v in statuses[intake].values]
    finally:
        executor.shutdown()
        node.destroy_node()
        rclpy.shutdown(context=context)
