"""dynid next to a Universal Robots arm: the UR driver with dynid's controllers, and the dynid suite.

    ros2 launch dynid ur.launch.py robot_ip:=192.168.56.101 [ur_type:=ur5e] [use_mock_hardware:=false]
        [initial_joint_controller:=scaled_joint_trajectory_controller] [launch_rviz:=false]
        [robot:=ur5e] [params_file:=config/ur.yaml] [estimator:=true] [feedforward:=trajectory]

Includes ``ur_robot_driver/launch/ur_control.launch.py`` (Universal_Robots_ROS2_Driver, kilted branch
4.8.0) with ``controllers_file:=config/ur_controllers.yaml``: the driver's controllers, with
``joint_trajectory_controller`` commanding effort (feedforward in the trajectory's effort field) and
``forward_effort_controller`` a ForwardCommandController on effort. The dynid nodes (suite.launch.py,
no twin) send the excitation and references to ``initial_joint_controller``: the default
``scaled_joint_trajectory_controller`` (position) for identification,
``initial_joint_controller:=joint_trajectory_controller`` for model-based torque (PolyScope with torque
control). On UR, joint_states' effort is motor current [A], while effort commands are joint torques
[N·m] without gravity (direct_torque). So the dynid nodes run with ``joint_states_effort:=current``
(also in config/ur.yaml): they read joint_states' effort as current, the identifier records it as
``joint_currents`` (identification applies the drive gains), while the feedforward keeps
``effort_is_current: false`` for its torque commands and leaves gravity to the robot. The driver runs at
the root namespace, so the dynid nodes do too.
"""

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, IncludeLaunchDescription
from launch.launch_description_sources import PythonLaunchDescriptionSource
from launch.substitutions import LaunchConfiguration, PathJoinSubstitution
from launch_ros.substitutions import FindPackageShare

from dynid.nodes import launching


def generate_launch_description() -> LaunchDescription:
    share = FindPackageShare('dynid')
    arg = LaunchConfiguration
    driver = IncludeLaunchDescription(
        PythonLaunchDescriptionSource(PathJoinSubstitution([FindPackageShare('ur_robot_driver'), 'launch',
                                                            'ur_control.launch.py'])),
        launch_arguments={'ur_type': arg('ur_type'), 'robot_ip': arg('robot_ip'),
                          'use_mock_hardware': arg('use_mock_hardware'),
                          'controllers_file': PathJoinSubstitution([share, 'config', 'ur_controllers.yaml']),
                          'initial_joint_controller': arg('initial_joint_controller'),
                          'launch_rviz': arg('launch_rviz')}.items())
    suite = IncludeLaunchDescription(
        PythonLaunchDescriptionSource(PathJoinSubstitution([share, 'launch', 'suite.launch.py'])),
        launch_arguments={'use_sim': 'false', 'robot': arg('robot'), 'params_file': arg('params_file'),
                          'controller': arg('initial_joint_controller'),
                          'effort_controller': 'forward_effort_controller', 'joint_states': 'joint_states',
                          'joint_states_effort': 'current',  # the driver's effort state is motor current [A]
                          'estimator': arg('estimator'), 'feedforward': arg('feedforward')}.items())
    return LaunchDescription([
        DeclareLaunchArgument('ur_type', default_value='ur5e', description="UR model (the driver's ur_type)"),
        DeclareLaunchArgument('robot_ip', default_value='192.168.56.101', description='IP of the robot (URSim: '
                              '192.168.56.101)'),
        DeclareLaunchArgument('use_mock_hardware', default_value='false', description="the driver's mock hardware "
                              '(mirrors commands; no dynamics)'),
        DeclareLaunchArgument('initial_joint_controller', default_value='scaled_joint_trajectory_controller',
                              description='controller started active; dynid sends its trajectories there'),
        DeclareLaunchArgument('launch_rviz', default_value='false', description="the driver's RViz"),
        *launching.declare('robot', robot='ur5e'),
        DeclareLaunchArgument('params_file', default_value=PathJoinSubstitution([share, 'config', 'ur.yaml']),
                              description='parameters of the dynid nodes'),
        DeclareLaunchArgument('estimator', default_value='true', description='start estimator_node'),
        DeclareLaunchArgument('feedforward', default_value='trajectory', description="feedforward_node's mode; '' "
                              'leaves it out'),
        driver, suite,
    ])
