"""Start dynid's digital twin (sim_node) as a stand-in for a robot driver.

    ros2 launch dynid sim.launch.py [robot:=ur5e] [rate:=500.0] [namespace:=] [params_file:=...]

The node publishes joint_states, motor_states, joint_currents and joint_temperatures and follows
joint_trajectory_controller/joint_trajectory, like a ros2_control robot would.
"""

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument
from launch.substitutions import LaunchConfiguration, PathJoinSubstitution
from launch_ros.actions import Node
from launch_ros.substitutions import FindPackageShare


def generate_launch_description() -> LaunchDescription:
    arguments = [
        DeclareLaunchArgument('robot', default_value='ur5e', description='robot name, URDF or robot file'),
        DeclareLaunchArgument('rate', default_value='500.0', description='publishing rate [Hz]'),
        DeclareLaunchArgument('namespace', default_value='', description='namespace of the topics'),
        DeclareLaunchArgument('params_file', description='sim_node parameters',
                              default_value=PathJoinSubstitution([FindPackageShare('dynid'), 'config',
                                                                  'sim_node.yaml'])),
    ]
    sim = Node(
        package='dynid', executable='sim_node', name='sim_node', namespace=LaunchConfiguration('namespace'),
        parameters=[LaunchConfiguration('params_file'),
                    {'robot': LaunchConfiguration('robot'), 'rate': LaunchConfiguration('rate')}],
        output='screen', emulate_tty=True,
    )
    return LaunchDescription([*arguments, sim])
