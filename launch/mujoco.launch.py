"""dynid next to MuJoCo (mujoco_ros2_control): a UR5e (or a Panda) with effort controllers, and the suite.

    ros2 launch dynid mujoco.launch.py [robot:=ur5e|panda] [headless:=true]
        [params_file:=config/mujoco.yaml] [estimator:=true] [feedforward:=trajectory]

The description (ur_description's ur.urdf.xacro for ur5e; for panda franka_description's fer xacro, joints
fer_joint1..7, as gazebo.launch.py) is turned into the MuJoCo model by MuJoCo's URDF compiler
(:func:`dynid.ros.launching.mujoco_model`: a motor actuator per joint named as the joint, gear 1; joint
armature, damping and friction loss as dynid's MuJoCo plant has them), written to a temporary folder, and the
description gets a ``<ros2_control>`` block with ``mujoco_ros2_control/MujocoSystemInterface`` pointing to it
(``mujoco_model``, ``headless``) and an effort command interface per joint
(:func:`dynid.ros.launching.mujoco_ros2_control`). Then: robot_state_publisher, mujoco_ros2_control's
``ros2_control_node`` (MuJoCo inside it; it publishes /clock) loading config/mujoco_<robot>_controllers.yaml,
spawners for joint_state_broadcaster, joint_trajectory_controller (effort) and forward_effort_controller
(inactive), and the dynid suite on sim time. Efforts are applied raw: config/mujoco.yaml has the feedforward
compensate gravity too. Matches ros-controls/mujoco_ros2_control (its hardware_interface.rst and its demos'
01_basic_robot.launch.py).
"""

import tempfile
from pathlib import Path

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch.substitutions import PathJoinSubstitution
from launch_ros.actions import Node
from launch_ros.substitutions import FindPackageShare

from dynid.ros import launching

ROBOTS = launching.SIM_DESCRIPTIONS  # robot: (description package, xacro path, xacro mappings, joints)


def _nodes(context):
    robot, urdf, joints = launching.sim_description(context)
    share = FindPackageShare('dynid')
    controllers = PathJoinSubstitution([share, 'config', f'mujoco_{robot}_controllers.yaml']).perform(context)
    model = launching.mujoco_model(urdf, joints, str(Path(tempfile.mkdtemp(prefix='dynid_mujoco_')) / f'{robot}.xml'))
    description = launching.mujoco_ros2_control(urdf, joints, model, launching.is_true(context, 'headless'))
    sim_time = {'use_sim_time': True}
    return [
        Node(package='robot_state_publisher', executable='robot_state_publisher',
             parameters=[{'robot_description': description, **sim_time}], output='screen'),
        Node(package='mujoco_ros2_control', executable='ros2_control_node', parameters=[sim_time, controllers],
             output='screen'),
        *launching.simulator_suite(context, description),
    ]


def generate_launch_description() -> LaunchDescription:
    share = FindPackageShare('dynid')
    return LaunchDescription([
        DeclareLaunchArgument('robot', default_value='ur5e', choices=list(ROBOTS), description='robot in MuJoCo'),
        DeclareLaunchArgument('headless', default_value='true',
                              description='MuJoCo without its viewer window (false: the Simulate window)'),
        DeclareLaunchArgument('params_file', default_value=PathJoinSubstitution([share, 'config', 'mujoco.yaml']),
                              description='parameters of the dynid nodes'),
        DeclareLaunchArgument('estimator', default_value='true', description='start estimator_node'),
        DeclareLaunchArgument('feedforward', default_value='trajectory', description="feedforward_node's mode"),
        OpaqueFunction(function=_nodes),
    ])
