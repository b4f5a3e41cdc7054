"""Stand-in vendor packages: what dynid's backend launch files include, with the vendors' real arguments.

:func:`vendor_prefix` writes an ament prefix whose packages hold launch files that declare the same
launch arguments (names, defaults, ``choices``) as the vendors' and spawn the controllers theirs
spawn, but start nothing; and description packages whose xacro files give each robot its real joint
names. The argument lists were read from the vendors' repositories:

- ``ur_robot_driver/launch/ur_control.launch.py``: UniversalRobots/Universal_Robots_ROS2_Driver,
  main branch (commit f0af926), the argument set of the 4.x releases (kilted); the controllers it
  spawns, active and inactive, as in the kilted branch (forward_effort_controller loaded inactive).
- ``franka_bringup/launch/franka.launch.py``: frankarobotics/franka_ros2 2.x (commit 0e31d3c); its
  joint_state_broadcaster is remapped to ``franka/joint_states``.
- ``franka_description/robots/<robot_type>/<robot_type>.urdf.xacro``: frankarobotics/franka_description
  (robots fr3 and fer, the Franka Emika Robot formerly called Panda; joints ``<robot_type>_joint1..7``).
- ``ur_description/urdf/ur.urdf.xacro``: UniversalRobots/Universal_Robots_ROS2_Description
  (joints shoulder_pan_joint … wrist_3_joint with tf_prefix '').
- ``ur_robot_driver/urdf/ur.urdf.xacro``: the driver's description of the arm ``ur_type`` names (the URDF
  dynid writes of its built-in of that type, the kinematics and inertials of ur_description's), joints behind
  ``tf_prefix``, with a ``<ros2_control>`` block whose joints command position and velocity, as
  ur_description 2.4.5's ``inc/ur_joint_control.xacro`` gives them, and ``effort`` as its later releases do
  (``ur_effort``).
- ``ros_gz_sim/launch/gz_sim.launch.py``: gazebosim/ros_gz (``gz_sim.launch.py.in``, commit 8aabc20).
"""

from __future__ import annotations

from pathlib import Path

from testing.launch_prefix import mark_package

UR_JOINTS = ['shoulder_pan_joint', 'shoulder_lift_joint', 'elbow_joint', 'wrist_1_joint', 'wrist_2_joint',
             'wrist_3_joint']


def franka_joints(robot_type: str) -> list[str]:
    return [f'{robot_type}_joint{i}' for i in range(1, 8)]


_HEADER = '''"""Stand-in for {what}: declares its launch arguments, spawns its controllers, starts nothing."""
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node


def spawner(controllers, flags=()):
    return Node(package='controller_manager', executable='spawner', arguments=[*controllers, *flags])


def declare(arguments):
    return [DeclareLaunchArgument(name, default_value=default, choices=choices, description=name)
            if choices else DeclareLaunchArgument(name, default_value=default, description=name)
            for name, default, choices in arguments]
'''

UR_CONTROL = _HEADER.format(what='ur_robot_driver/launch/ur_control.launch.py') + '''
UR_TYPES = ['ur3', 'ur3e', 'ur5', 'ur5e', 'ur7e', 'ur10', 'ur10e', 'ur12e', 'ur16e', 'ur8long', 'ur15', 'ur18',
            'ur20', 'ur30']
JOINT_CONTROLLERS = ['scaled_joint_trajectory_controller', 'joint_trajectory_controller',
                     'forward_velocity_controller', 'forward_position_controller', 'forward_effort_controller',
                     'force_mode_controller', 'passthrough_trajectory_controller', 'freedrive_mode_controller',
                     'tool_contact_controller']
ARGUMENTS = [
    ('ur_type', None, UR_TYPES), ('robot_ip', None, None), ('safety_limits', 'true', None),
    ('safety_pos_margin', '0.15', None), ('safety_k_position', '20', None), ('controllers_file', 'x.yaml', None),
    ('description_launchfile', 'ur_rsp.launch.py', None), ('tf_prefix', '', None),
    ('use_mock_hardware', 'false', None), ('mock_sensor_commands', 'false', None), ('headless_mode', 'false', None),
    ('controller_spawner_timeout', '10', None),
    ('initial_joint_controller', 'scaled_joint_trajectory_controller', JOINT_CONTROLLERS),
    ('activate_joint_controller', 'true', None), ('launch_rviz', 'true', None), ('rviz_config_file', 'x.rviz', None),
    ('launch_dashboard_client', 'true', None), ('use_tool_communication', 'false', None), ('tool_parity', '0', None),
    ('tool_baud_rate', '115200', None), ('tool_stop_bits', '1', None), ('tool_rx_idle_chars', '1.5', None),
    ('tool_tx_idle_chars', '3.5', None), ('tool_device_name', '/tmp/ttyUR', None), ('tool_tcp_port', '54321', None),
    ('tool_voltage', '0', None), ('reverse_ip', '0.0.0.0', None), ('script_command_port', '50004', None),
    ('reverse_port', '50001', None), ('script_sender_port', '50002', None), ('trajectory_port', '50003', None),
    ('update_rate_config_file', 'ur5e_update_rate.yaml', None),
]


def launch_setup(context):
    active = ['joint_state_broadcaster', 'io_and_status_controller', 'speed_scaling_state_broadcaster',
              'force_torque_sensor_broadcaster', 'tcp_pose_broadcaster', 'ur_configuration_controller',
              'gravity_update_controller', 'friction_model_controller']
    inactive = list(JOINT_CONTROLLERS) + ['motion_primitive_forward_controller']
    if LaunchConfiguration('activate_joint_controller').perform(context) == 'true':
        initial = LaunchConfiguration('initial_joint_controller').perform(context)
        active.append(initial)
        inactive.remove(initial)
    return [spawner(active), spawner(inactive, ['--inactive'])]


def generate_launch_description():
    return LaunchDescription(declare(ARGUMENTS) + [OpaqueFunction(function=launch_setup)])
'''

FRANKA_BRINGUP = _HEADER.format(what='franka_bringup/launch/franka.launch.py') + '''
ARGUMENTS = [
    ('robot_type', '', None), ('arm_prefix', '', None), ('namespace', '', None), ('robot_ip', '172.16.0.3', None),
    ('load_gripper', 'false', None), ('use_fake_hardware', 'false', None), ('fake_sensor_commands', 'false', None),
    ('joint_state_rate', '30', None), ('load_franka_robot_state_broadcaster', 'true', None),
    ('controllers_yaml', 'controllers.yaml', None),
]


def robot_nodes(context):
    namespace = LaunchConfiguration('namespace').perform(context)
    nodes = [Node(package='controller_manager', executable='spawner', namespace=namespace,
                  arguments=['joint_state_broadcaster', '--controller-ros-args',
                             '--remap joint_states:=franka/joint_states'])]
    if LaunchConfiguration('use_fake_hardware').perform(context).lower() != 'true':
        nodes.append(Node(package='controller_manager', executable='spawner', namespace=namespace,
                          arguments=['franka_robot_state_broadcaster']))
    return nodes


def generate_launch_description():
    return LaunchDescription(declare(ARGUMENTS) + [OpaqueFunction(function=robot_nodes)])
'''

GZ_SIM = _HEADER.format(what='ros_gz_sim/launch/gz_sim.launch.py') + '''
ARGUMENTS = [('gz_args', '', None), ('gz_version', '8', None), ('ign_args', '', None), ('ign_version', '', None),
             ('debugger', 'false', None), ('on_exit_shutdown', 'false', None)]


def generate_launch_description():
    return LaunchDescription(declare(ARGUMENTS))
'''


def chain_xacro(name: str, joints: list[str], arguments: list[str], command_interfaces: list[str] | None = None,
                prefix: str = '') -> str:
    """A xacro file of a serial chain with these revolute ``joints`` (each behind ``prefix``, e.g. an xacro
    expression), declaring the xacro ``arguments``; with ``command_interfaces``, a ``<ros2_control>`` block giving
    each joint those."""
    joints = [f'{prefix}{joint}' for joint in joints]
    lines = ['<?xml version="1.0"?>', f'<robot xmlns:xacro="http://www.ros.org/wiki/xacro" name="{name}">',
             *[f'  <xacro:arg name="{a}" default=""/>' for a in arguments],
             '  <link name="world"/>', '  <link name="link0"/>',
             '  <joint name="world_joint" type="fixed"><parent link="world"/><child link="link0"/></joint>']
    for k, joint in enumerate(joints, start=1):
        lines += [f'  <link name="link{k}"><inertial><mass value="1.0"/><origin xyz="0 0 0.05"/>'
                  '<inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial></link>',
                  f'  <joint name="{joint}" type="revolute"><parent link="link{k - 1}"/><child link="link{k}"/>'
                  '<origin xyz="0 0 0.1"/><axis xyz="0 0 1"/>'
                  '<limit lower="-3" upper="3" effort="100" velocity="2"/></joint>']
    if command_interfaces is not None:
        lines += ['  <ros2_control name="stand_in" type="system"><hardware><plugin>stand_in</plugin></hardware>']
        commands = ''.join(f'<command_interface name="{c}"/>' for c in command_interfaces)
        lines += [f'    <joint name="{joint}">{commands}<state_interface name="position"/>'
                  '<state_interface name="velocity"/><state_interface name="effort"/></joint>' for joint in joints]
        lines += ['  </ros2_control>']
    return '\n'.join(lines + ['</robot>', ''])


UR_TYPES = ('ur3', 'ur3e', 'ur5e', 'ur10', 'ur10e', 'ur16e', 'ur20', 'ur30')

UR_DRIVER_XACRO = '''<?xml version="1.0"?>
<robot xmlns:xacro="http://www.ros.org/wiki/xacro" name="$(arg name)">
  <xacro:arg name="name" default="ur"/>
  <xacro:arg name="ur_type" default="urXe"/>
  <xacro:arg name="tf_prefix" default=""/>
  <xacro:arg name="use_mock_hardware" default="false"/>
  <xacro:include filename="$(find ur_robot_driver)/urdf/arms/$(arg ur_type).xacro"/>
</robot>
'''


def ur_arm_xacro(ur_type: str, command_interfaces: list[str]) -> str:
    """The body of the stand-in driver description for ``ur_type``: dynid's URDF of that built-in, joints behind
    ``$(arg tf_prefix)``, with a ros2_control block."""
    from dynid.model.dh_urdf import robot_urdf

    text = robot_urdf(ur_type)
    for joint in UR_JOINTS:
        text = text.replace(f'name="{joint}"', f'name="$(arg tf_prefix){joint}"')
    body = text[text.index('>', text.index('<robot')) + 1:text.rindex('</robot>')]
    control = chain_xacro('x', UR_JOINTS, [], command_interfaces, '$(arg tf_prefix)')
    block = control[control.index('  <ros2_control'):control.index('</robot>')]
    return f'<?xml version="1.0"?>\n<robot xmlns:xacro="http://www.ros.org/wiki/xacro">{body}{block}</robot>\n'


#: the argument the driver's ur_control.launch.py declares from PR #1918 on (merged 2026-07-31): joint_states'
#: effort is motor current (true) or UR's gravity-compensated actual_current_as_torque (false, the default)
UR_CURRENTS_ARGUMENT = "ARGUMENTS.append(('use_currents_as_efforts', 'false', ['true', 'false']))\n"


#: the driver's own controllers file after its PR #1769 (main): joint_trajectory_controller commands position
UR_UPSTREAM_CONTROLLERS = '''controller_manager:
  ros__parameters:
    joint_trajectory_controller:
      type: joint_trajectory_controller/JointTrajectoryController
    forward_effort_controller:
      type: forward_command_controller/ForwardCommandController
joint_trajectory_controller:
  ros__parameters:
    command_interfaces: [position]
    state_interfaces: [position, velocity]
forward_effort_controller:
  ros__parameters:
    interface_name: effort
'''


def _upstream(control: str) -> str:
    """The UR driver's launch file after its PR #1769 (main): no scaled_joint_trajectory_controller, the
    joint_trajectory_controller the default."""
    return (control.replace("['scaled_joint_trajectory_controller', 'joint_trajectory_controller',",
                            "['joint_trajectory_controller',")
            .replace("('initial_joint_controller', 'scaled_joint_trajectory_controller', JOINT_CONTROLLERS)",
                     "('initial_joint_controller', 'joint_trajectory_controller', JOINT_CONTROLLERS)"))


def vendor_prefix(prefix: Path, ur_effort: bool = False, ur_currents_argument: bool = False,
                  ur_upstream: bool = False) -> Path:
    """Write the stand-in packages (see the module docstring) under ``prefix``; returns it. ``ur_effort``: the UR
    description's joints have an effort command interface; ``ur_currents_argument``: the UR driver declares
    ``use_currents_as_efforts`` (its PR #1918); ``ur_upstream``: the driver without UR's scaled trajectory
    controller (its PR #1769), with its own controllers file."""
    commands = ['position', 'velocity'] + (['effort'] if ur_effort else [])
    control = UR_CONTROL.replace('\n\ndef launch_setup', '\n' + UR_CURRENTS_ARGUMENT + '\n\ndef launch_setup') \
        if ur_currents_argument else UR_CONTROL
    control = _upstream(control) if ur_upstream else control
    packages = {
        'ur_robot_driver': {'launch/ur_control.launch.py': control, 'urdf/ur.urdf.xacro': UR_DRIVER_XACRO,
                            **({'config/ur_controllers.yaml': UR_UPSTREAM_CONTROLLERS} if ur_upstream else {}),
                            **{f'urdf/arms/{ur_type}.xacro': ur_arm_xacro(ur_type, commands) for ur_type in UR_TYPES}},
        'franka_bringup': {'launch/franka.launch.py': FRANKA_BRINGUP},
        'ros_gz_sim': {'launch/gz_sim.launch.py': GZ_SIM},
        'mujoco_ros2_control': {},  # its ros2_control_node is started, never visited into
        'ur_description': {'urdf/ur.urdf.xacro': chain_xacro('ur', UR_JOINTS, ['ur_type', 'name', 'tf_prefix'])},
        'franka_description': {
            f'robots/{robot_type}/{robot_type}.urdf.xacro':
                chain_xacro(robot_type, franka_joints(robot_type),
                            ['robot_type', 'arm_prefix', 'hand', 'ros2_control', 'gazebo', 'robot_ip',
                             'use_fake_hardware', 'fake_sensor_commands'])
            for robot_type in ('fr3', 'fer')},
    }
    for package, files in packages.items():
        share = mark_package(prefix, package)
        for relative, text in files.items():
            (share / relative).parent.mkdir(parents=True, exist_ok=True)
            (share / relative).write_text(text)
    return prefix
