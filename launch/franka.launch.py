"""dynid next to a Franka FR3: franka_bringup with dynid's controllers, and the dynid suite.

    ros2 launch dynid franka.launch.py [robot_ip:=172.16.0.3] [robot_type:=fr3] [use_fake_hardware:=false]
        [namespace:=] [controller:=joint_trajectory_controller] [params_file:=config/franka.yaml]
        [estimator:=true] [feedforward:=trajectory]

Includes ``franka_bringup/launch/franka.launch.py`` (frankarobotics/franka_ros2 2.5.0) with
``controllers_yaml:=config/franka_controllers.yaml``, which adds ``joint_trajectory_controller`` (effort
command, feedforward in the trajectory's effort field) and ``forward_effort_controller``
(ForwardCommandController on effort) for fr3_joint1…7; this file spawns them (the trajectory
controller active, the effort one inactive: one effort claimant at a time). The dynid nodes take the
1 kHz ``franka/joint_states`` (``/joint_states`` is Franka's 30 Hz merge) and the same URDF as the
driver (franka_description's xacro, processed here). On Franka, effort is the measured link torque
τ_J and a torque command excludes gravity and friction: config/franka.yaml leaves gravity to the
robot and keeps dynid's friction.
"""

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, IncludeLaunchDescription, OpaqueFunction
from launch.launch_description_sources import PythonLaunchDescriptionSource
from launch.substitutions import LaunchConfiguration, PathJoinSubstitution
from launch_ros.actions import Node
from launch_ros.substitutions import FindPackageShare

from dynid.nodes import launching


def _description(context) -> str:
    given = launching.argument(context, 'robot_description')
    if given:
        return given
    import xacro  # with franka_description, on a ROS 2 installation
    robot_type = launching.argument(context, 'robot_type')
    path = PathJoinSubstitution([FindPackageShare('franka_description'), 'robots', robot_type,
                                 f'{robot_type}.urdf.xacro']).perform(context)
    return xacro.process_file(path, mappings={'ros2_control': 'false', 'robot_type': robot_type,
                                              'hand': 'false'}).toprettyxml(indent='  ')


def _dynid(context):
    share = FindPackageShare('dynid')
    namespace = launching.argument(context, 'namespace')
    spawners = [Node(package='controller_manager', executable='spawner', namespace=namespace,
                     arguments=[name, *flags], output='screen')
                for name, flags in (('joint_trajectory_controller', []), ('forward_effort_controller', ['--inactive']))]
    suite = IncludeLaunchDescription(
        PythonLaunchDescriptionSource(PathJoinSubstitution([share, 'launch', 'suite.launch.py'])),
        launch_arguments={'use_sim': 'false', 'namespace': namespace, 'robot_description': _description(context),
                          'params_file': launching.argument(context, 'params_file'),
                          'controller': launching.argument(context, 'controller'),
                          'effort_controller': 'forward_effort_controller', 'joint_states': 'franka/joint_states',
                          'estimator': launching.argument(context, 'estimator'),
                          'feedforward': launching.argument(context, 'feedforward')}.items())
    return [*spawners, suite]


def generate_launch_description() -> LaunchDescription:
    share = FindPackageShare('dynid')
    arg = LaunchConfiguration
    bringup = IncludeLaunchDescription(
        PythonLaunchDescriptionSource(PathJoinSubstitution([FindPackageShare('franka_bringup'), 'launch',
                                                            'franka.launch.py'])),
        launch_arguments={'robot_type': arg('robot_type'), 'robot_ip': arg('robot_ip'), 'namespace': arg('namespace'),
                          'use_fake_hardware': arg('use_fake_hardware'), 'load_gripper': 'false',
                          'controllers_yaml': PathJoinSubstitution([share, 'config', 'franka_controllers.yaml'])
                          }.items())
    return LaunchDescription([
        DeclareLaunchArgument('robot_type', default_value='fr3', description="Franka's robot_type (joints "
                              '<robot_type>_joint1..7, as in config/franka_controllers.yaml)'),
        DeclareLaunchArgument('robot_ip', default_value='172.16.0.3', description='IP of the robot'),
        DeclareLaunchArgument('use_fake_hardware', default_value='false', description="Franka's fake hardware"),
        *launching.declare('namespace', 'robot_description', 'controller'),
        DeclareLaunchArgument('params_file', default_value=PathJoinSubstitution([share, 'config', 'franka.yaml']),
                              description='parameters of the dynid nodes'),
        DeclareLaunchArgument('estimator', default_value='true', description='start estimator_node'),
        DeclareLaunchArgument('feedforward', default_value='trajectory', description="feedforward_node's mode"),
        bringup, OpaqueFunction(function=_dynid),
    ])
