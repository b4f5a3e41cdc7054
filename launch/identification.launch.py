"""Start dynid's identification suite: excitation_node and identifier_node, and the twin if asked.

    ros2 launch dynid identification.launch.py [robot:=ur5e] [namespace:=] [use_sim:=true]
        [rate:=500.0] [params_file:=...]

With ``use_sim:=false`` a real ros2_control robot provides joint_states (and, where it can,
motor_states, joint_currents, joint_temperatures) and runs a joint_trajectory_controller on the same
namespace. Then: ``ros2 service call /identifier_node/start_recording std_srvs/srv/Trigger``,
``.../excitation_node/start``, wait for ``done`` on ``excitation_node/state``, ``stop_recording`` and
``identify``; the result comes on ``identifier_node/result`` and in the recording's folder.
"""

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument
from launch.conditions import IfCondition
from launch.substitutions import LaunchConfiguration, PathJoinSubstitution
from launch_ros.actions import Node
from launch_ros.substitutions import FindPackageShare


def generate_launch_description() -> LaunchDescription:
    share = FindPackageShare('dynid')
    arguments = [
        DeclareLaunchArgument('robot', default_value='ur5e', description='robot name, URDF or robot file'),
        DeclareLaunchArgument('namespace', default_value='', description='namespace of the nodes and topics'),
        DeclareLaunchArgument('use_sim', default_value='true', description='start sim_node (the digital twin)'),
        DeclareLaunchArgument('rate', default_value='500.0', description='sim_node publishing rate [Hz]'),
        DeclareLaunchArgument('params_file', description='excitation_node and identifier_node parameters',
                              default_value=PathJoinSubstitution([share, 'config', 'identification.yaml'])),
    ]
    robot, namespace = LaunchConfiguration('robot'), LaunchConfiguration('namespace')
    common = {'package': 'dynid', 'namespace': namespace, 'output': 'screen', 'emulate_tty': True}
    sim = Node(executable='sim_node', name='sim_node', condition=IfCondition(LaunchConfiguration('use_sim')),
               parameters=[PathJoinSubstitution([share, 'config', 'sim_node.yaml']),
                           {'robot': robot, 'rate': LaunchConfiguration('rate')}], **common)
    excitation = Node(executable='excitation_node', name='excitation_node',
                      parameters=[LaunchConfiguration('params_file'), {'robot': robot}], **common)
    identifier = Node(executable='identifier_node', name='identifier_node',
                      parameters=[LaunchConfiguration('params_file'), {'robot': robot}], **common)
    return LaunchDescription([*arguments, sim, excitation, identifier])
