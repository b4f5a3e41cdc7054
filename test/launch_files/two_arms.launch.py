"""A user's launch file: two dynid suites, each under a namespace of its own, wired to other controllers.

The user's application names its controllers ``<side>_arm_controller`` (trajectory) and
``<side>_effort_controller`` (effort stream); each suite runs on its own twin.
"""

from launch import LaunchDescription
from launch.actions import GroupAction, IncludeLaunchDescription
from launch.launch_description_sources import PythonLaunchDescriptionSource
from launch.substitutions import PathJoinSubstitution
from launch_ros.actions import PushROSNamespace
from launch_ros.substitutions import FindPackageShare


def arm(side: str) -> GroupAction:
    suite = PathJoinSubstitution([FindPackageShare('dynid'), 'launch', 'suite.launch.py'])
    return GroupAction([PushROSNamespace(side), IncludeLaunchDescription(
        PythonLaunchDescriptionSource(suite),
        launch_arguments={'use_sim': 'true', 'rate': '100', 'estimator': 'false', 'feedforward': 'trajectory',
                          'controller': f'{side}_arm_controller',
                          'effort_controller': f'{side}_effort_controller'}.items())])


def generate_launch_description() -> LaunchDescription:
    return LaunchDescription([arm('left'), arm('right')])
