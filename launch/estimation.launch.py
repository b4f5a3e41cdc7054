"""Start dynid's online estimation: estimator_node, and the twin if asked.

    ros2 launch dynid estimation.launch.py [robot:=ur5e] [namespace:=] [use_sim:=true]
        [rate:=500.0] [params_file:=...]

estimator_node takes joint_states, motor_states, joint_currents and joint_temperatures (the twin
publishes all four; a real robot needs motor encoders for motor_states) and publishes
``estimator_node/stiffness`` and, with an identification result in ``result_file``,
``estimator_node/friction``, with health on ``/diagnostics``. To use a result, copy
``config/estimation.yaml``, set ``result_file`` and pass the copy as ``params_file``. Then
``ros2 service call /estimator_node/set_baseline std_srvs/srv/Trigger`` stores today's stiffness as
the baseline against which drops are reported.
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
        DeclareLaunchArgument('params_file', description='estimator_node parameters (sim_node ones too, if given)',
                              default_value=PathJoinSubstitution([share, 'config', 'estimation.yaml'])),
    ]
    robot, namespace = LaunchConfiguration('robot'), LaunchConfiguration('namespace')
    params_file = LaunchConfiguration('params_file')
    common = {'package': 'dynid', 'namespace': namespace, 'output': 'screen', 'emulate_tty': True}
    sim = Node(executable='sim_node', name='sim_node', condition=IfCondition(LaunchConfiguration('use_sim')),
               parameters=[PathJoinSubstitution([share, 'config', 'sim_node.yaml']), params_file,
                           {'robot': robot, 'rate': LaunchConfiguration('rate')}], **common)
    estimator = Node(executable='estimator_node', name='estimator_node',
                     parameters=[params_file, {'robot': robot}], **common)
    return LaunchDescription([*arguments, sim, estimator])
