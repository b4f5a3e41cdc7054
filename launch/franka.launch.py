"""dynid next to a Franka arm: franka_bringup with dynid's controllers, and the dynid suite.

    ros2 launch dynid franka.launch.py [robot_ip:=172.16.0.3] [robot_type:=fr3] [arm_prefix:=]
        [use_fake_hardware:=false] [namespace:=] [controller:=joint_trajectory_controller]
        [params_file:=config/franka.yaml] [estimator:=true] [feedforward:=trajectory]

Includes ``franka_bringup/launch/franka.launch.py`` (frankarobotics/franka_ros2, jazzy branch 3.4.0, the
ROS 2 line closest to Kilted) with ``controllers_yaml``: config/franka_controllers.yaml with the joints of
``robot_type`` and ``arm_prefix`` (``<arm_prefix>_<robot_type>_joint1..7``, as franka_description names them;
written to a temporary file at launch), which adds ``joint_trajectory_controller`` (effort command,
feedforward in the trajectory's effort field) and ``forward_effort_controller`` (ForwardCommandController on
effort); this file spawns them (the trajectory controller active, the effort one inactive: one effort
claimant at a time). The dynid nodes take the 1 kHz ``franka/joint_states`` (``/joint_states`` is Franka's
30 Hz merge) and the driver's arm as franka_description describes it (its xacro for robot_type and
arm_prefix, processed here), which dynid recognizes as its built-in FR3 or Panda (``fer``).

On Franka, effort is the measured link torque τ_J, and libfranka adds gravity and motor friction to a
commanded torque (τ_c = τ_d + τ_f + τ_g, libfranka docs/overview.rst, "External Controller"):
config/franka.yaml leaves both to the robot (``compensate_gravity`` and ``compensate_friction`` false) and
feeds forward the rigid body alone.
"""

import os
import tempfile

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, IncludeLaunchDescription, OpaqueFunction
from launch.launch_description_sources import PythonLaunchDescriptionSource
from launch.substitutions import PathJoinSubstitution
from launch_ros.actions import Node
from launch_ros.substitutions import FindPackageShare

from dynid.ros import launching

TEMPLATE_JOINT = 'fr3_joint'  # how config/franka_controllers.yaml names the joints (robot_type fr3, no prefix)


def _joint_stem(context) -> str:
    """``<arm_prefix>_<robot_type>_joint`` as franka_description names the joints (no underscore without a prefix)."""
    prefix = launching.argument(context, 'arm_prefix')
    return f'{prefix + "_" if prefix else ""}{launching.argument(context, "robot_type")}_joint'


def _controllers(context) -> str:
    """config/franka_controllers.yaml with the joints of robot_type and arm_prefix, in the temporary folder (one
    file per joint stem, written again at each launch)."""
    template = PathJoinSubstitution([FindPackageShare('dynid'), 'config', 'franka_controllers.yaml']).perform(context)
    stem = _joint_stem(context)
    with open(template, encoding='utf-8') as file:
        text = file.read().replace(TEMPLATE_JOINT, stem)
    path = os.path.join(tempfile.gettempdir(), f'dynid_franka_controllers_{stem}.yaml')
    with open(path, 'w', encoding='utf-8') as file:
        file.write(text)
    return path


def _description(context) -> str:
    given = launching.argument(context, 'robot_description')
    if given:
        return given
    import xacro  # with franka_description, on a ROS 2 installation
    robot_type = launching.argument(context, 'robot_type')
    path = PathJoinSubstitution([FindPackageShare('franka_description'), 'robots', robot_type,
                                 f'{robot_type}.urdf.xacro']).perform(context)
    return xacro.process_file(path, mappings={'ros2_control': 'false', 'robot_type': robot_type, 'hand': 'false',
                                              'arm_prefix': launching.argument(context, 'arm_prefix')}
                              ).toprettyxml(indent='  ')


def _launch(context):
    share = FindPackageShare('dynid')
    namespace = launching.argument(context, 'namespace')
    bringup = IncludeLaunchDescription(
        PythonLaunchDescriptionSource(PathJoinSubstitution([FindPackageShare('franka_bringup'), 'launch',
                                                            'franka.launch.py'])),
        launch_arguments={**{name: launching.argument(context, name) for name in (
            'robot_type', 'arm_prefix', 'robot_ip', 'namespace', 'use_fake_hardware')},
            'load_gripper': 'false', 'controllers_yaml': _controllers(context)}.items())
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
    return [bringup, *spawners, suite]


def generate_launch_description() -> LaunchDescription:
    share = FindPackageShare('dynid')
    return LaunchDescription([
        DeclareLaunchArgument('robot_type', default_value='fr3', description="Franka's robot_type: fr3, or fer "
                              '(the Panda); joints <arm_prefix>_<robot_type>_joint1..7'),
        DeclareLaunchArgument('arm_prefix', default_value='', description="franka_bringup's arm_prefix"),
        DeclareLaunchArgument('robot_ip', default_value='172.16.0.3', description='IP of the robot'),
        DeclareLaunchArgument('use_fake_hardware', default_value='false', description="Franka's fake hardware"),
        *launching.declare('namespace', 'robot_description', 'controller'),
        DeclareLaunchArgument('params_file', default_value=PathJoinSubstitution([share, 'config', 'franka.yaml']),
                              description='parameters of the dynid nodes'),
        DeclareLaunchArgument('estimator', default_value='true', description='start estimator_node'),
        DeclareLaunchArgument('feedforward', default_value='trajectory', description="feedforward_node's mode"),
        OpaqueFunction(function=_launch),
    ])
