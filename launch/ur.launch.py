"""dynid next to a Universal Robots arm: the UR driver with dynid's controllers, and the dynid suite.

    ros2 launch dynid ur.launch.py robot_ip:=192.168.56.101 [ur_type:=ur5e] [tf_prefix:=]
        [use_mock_hardware:=false] [initial_joint_controller:=scaled_joint_trajectory_controller]
        [launch_rviz:=false] [robot:=] [params_file:=config/ur.yaml] [estimator:=true] [feedforward:=auto]
        [use_currents_as_efforts:=true] [rtde_publisher:=false] [rtde_frequency:=500]

Includes ``ur_robot_driver/launch/ur_control.launch.py`` (Universal_Robots_ROS2_Driver: jazzy branch 3.8.0,
kilted branch 4.8.0) with ``controllers_file:=config/ur_controllers.yaml`` (the driver's controllers; its
``joint_trajectory_controller`` commands effort, the feedforward in the trajectory's effort field). The
Lyrical driver (lyrical branch 6.0.0, main 7.0.0) has no ``scaled_joint_trajectory_controller``: there its
own controllers file and ``joint_trajectory_controller`` (:func:`controller_setup`).

The dynid nodes get the driver's robot description (ur_robot_driver's ``urdf/ur.urdf.xacro`` with
``ur_type`` and ``tf_prefix``), so ``ur_type`` selects their arm (recognized as dynid's built-in of that
type, whose drive data they use) and the joints carry the ``tf_prefix``; ``robot`` replaces it.

Wiring, explicit: ``feedforward:=auto`` runs feedforward_node in trajectory mode only where
``initial_joint_controller`` commands effort (``joint_trajectory_controller``, torque control); with the
position-only ``scaled_joint_trajectory_controller`` (the default, for identification) there is no
feedforward_node and the excitation goes straight to that controller, which would refuse points that
carry efforts. ``feedforward:=trajectory`` with a position-only controller is refused at start, and so is
any feedforward where the description gives the arm's joints no ``effort`` command interface
(ur_description releases after 2.4.5 add it); torque control also needs PolyScope >= 5.23.0 / 10.10.0
and has no effect in URSim (docs/backends/ur.md).

What joint_states' effort holds is chosen here and passed to both sides (docs/backends/ur.md):
``use_currents_as_efforts:=true`` (the default) keeps the motor current [A] every driver and PolyScope
publish, and the nodes read it as current (``joint_states_effort:=current``, also in config/ur.yaml; the
identifier records it as ``joint_currents``); ``use_currents_as_efforts:=false`` asks a driver with PR
#1551/#1918 (PolyScope >= 5.23.0 / 10.11.0) for UR's gravity-compensated ``actual_current_as_torque`` and
the nodes read ``gravity_compensated_torque`` (the gravity added back). The argument goes to the driver
only where its ``ur_control.launch.py`` declares it; ``false`` with a driver that does not is refused
(it would publish current). The choice is logged. Effort commands are joint torques [N·m] without
gravity (direct_torque): the feedforward leaves gravity to the robot. The driver runs at the root
namespace, so the dynid nodes do too.
"""

import os

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, IncludeLaunchDescription, LogInfo, OpaqueFunction
from launch.launch_description_sources import PythonLaunchDescriptionSource
from launch.substitutions import LaunchConfiguration, PathJoinSubstitution
from launch_ros.actions import Node
from launch_ros.substitutions import FindPackageShare

from dynid.io import rtde
from dynid.model.description import missing_effort_commands
from dynid.model.robots import builtin_for
from dynid.ros import launching, wiring

URSIM_IP = '192.168.56.101'  # URSim's address in the driver's docs, dynid's default robot_ip
SCALED = 'scaled_joint_trajectory_controller'  # the Jazzy/Kilted drivers' position controller, dynid's default


def _description(context) -> str:
    """The driver's robot description for ``ur_type`` and ``tf_prefix``; '' where xacro or the driver is missing."""
    try:
        import xacro  # with ur_robot_driver, on a ROS 2 installation
    except ImportError:
        return ''
    path = PathJoinSubstitution([FindPackageShare('ur_robot_driver'), 'urdf', 'ur.urdf.xacro']).perform(context)
    if not os.path.isfile(path):
        return ''
    mappings = {name: launching.argument(context, name) for name in ('ur_type', 'tf_prefix', 'use_mock_hardware')}
    return xacro.process_file(path, mappings={'name': 'ur', **mappings}).toprettyxml(indent='  ')


def _driver_launch(context) -> str:
    return PathJoinSubstitution([FindPackageShare('ur_robot_driver'), 'launch',
                                 'ur_control.launch.py']).perform(context)


def driver_declares(path: str, name: str) -> bool | None:
    """Whether the driver's launch file at ``path`` declares the argument ``name`` (None: no such file)."""
    try:
        with open(path, encoding='utf-8') as file:
            return f'"{name}"' in (text := file.read()) or f"'{name}'" in text
    except OSError:
        return None


def effort_meaning(context) -> tuple[str, bool]:
    """(what the dynid nodes read joint_states' effort as, whether the driver takes use_currents_as_efforts)."""
    currents = launching.argument(context, 'use_currents_as_efforts').lower() in ('true', '1')
    try:
        declared = driver_declares(_driver_launch(context), 'use_currents_as_efforts')
    except Exception:  # noqa: BLE001 - no ur_robot_driver package here: nothing to pass it to
        declared = None
    if not currents and not declared:
        raise RuntimeError('use_currents_as_efforts:=false asks the UR driver for its torques, but this driver\'s '
                           'ur_control.launch.py has no such argument (it publishes motor current): update '
                           'ur_robot_driver (PR #1551/#1918) or leave use_currents_as_efforts:=true')
    return ('current' if currents else 'gravity_compensated_torque'), bool(declared)


def controller_setup(context) -> tuple[str, str, bool]:
    """(controllers file, initial joint controller, whether the driver is one without UR's scaled trajectory
    controller). The driver's PR #1769 (lyrical branch 6.0.0 and main) removed scaled_joint_trajectory_controller;
    its joint_trajectory_controller is then the speed-scaled position controller, and dynid's controllers file
    (which makes joint_trajectory_controller command effort) does not fit it: the driver's own file is used, and
    dynid's default initial controller becomes joint_trajectory_controller."""
    given = launching.argument(context, 'initial_joint_controller')
    try:
        upstream = driver_declares(_driver_launch(context), 'scaled_joint_trajectory_controller') is False
    except Exception:  # noqa: BLE001 - no ur_robot_driver package here
        upstream = False
    if not upstream:
        return (PathJoinSubstitution([FindPackageShare('dynid'), 'config', 'ur_controllers.yaml']).perform(context),
                given, False)
    own = PathJoinSubstitution([FindPackageShare('ur_robot_driver'), 'config', 'ur_controllers.yaml']).perform(context)
    return own, 'joint_trajectory_controller' if given == SCALED else given, True


def _driver(context):
    arg = LaunchConfiguration
    meaning, declared = effort_meaning(context)
    controllers, controller, upstream = controller_setup(context)
    arguments = {'ur_type': arg('ur_type'), 'robot_ip': arg('robot_ip'), 'tf_prefix': arg('tf_prefix'),
                 'use_mock_hardware': arg('use_mock_hardware'), 'controllers_file': controllers,
                 'initial_joint_controller': controller, 'launch_rviz': arg('launch_rviz')}
    if declared:
        arguments['use_currents_as_efforts'] = 'true' if meaning == 'current' else 'false'
    said = LogInfo(msg=f'dynid: joint_states effort read as {meaning} (use_currents_as_efforts:='
                       f'{"true" if meaning == "current" else "false"}'
                       f'{"" if declared else "; this driver has no such argument and publishes motor current"})')
    notes = [said]
    if upstream:
        notes.append(LogInfo(msg=f'dynid: this UR driver has no scaled_joint_trajectory_controller (its PR #1769): '
                                 f'its own controllers file and {controller}'))
    return [*notes, IncludeLaunchDescription(PythonLaunchDescriptionSource(_driver_launch(context)),
                                             launch_arguments=arguments.items())]


def _dynid(context):
    share = FindPackageShare('dynid')
    controllers, controller, _ = controller_setup(context)
    ur_type, prefix = launching.argument(context, 'ur_type'), launching.argument(context, 'tf_prefix')
    effort = wiring.takes_effort(controllers, controller)
    mode = launching.argument(context, 'feedforward')
    if mode == 'auto':
        mode = 'trajectory' if effort else ''
    if mode == 'trajectory' and not effort:
        raise RuntimeError(f'feedforward:=trajectory needs a trajectory controller that commands effort; '
                           f'{controller} commands {wiring.command_interfaces(controllers, controller) or "position"} '
                           f'(it refuses points with efforts): give '
                           f'initial_joint_controller:=joint_trajectory_controller or feedforward:=streaming')
    robot = launching.argument(context, 'robot')
    description = '' if robot else _description(context)
    notes = []
    if mode:
        joints = [f'{prefix}{joint}' for joint in ('shoulder_pan_joint', 'shoulder_lift_joint', 'elbow_joint',
                                                   'wrist_1_joint', 'wrist_2_joint', 'wrist_3_joint')]
        missing = missing_effort_commands(description, joints) if description else None
        if missing:
            raise RuntimeError(f'feedforward:={mode} commands torque, but the robot description gives {missing} no '
                               f'effort command interface (ur_description releases after 2.4.5 add it): update '
                               f'ur_description, or leave the feedforward out (feedforward:=)')
        if missing is None:
            notes.append(LogInfo(msg='dynid: could not check the description for effort command interfaces '
                                     '(no xacro or ur_robot_driver); torque control needs them'))
        if launching.argument(context, 'robot_ip') == URSIM_IP:
            notes.append(LogInfo(msg='dynid: effort control has no effect in URSim (ur_robot_driver, '
                                     'doc/usage/simulation.rst); the feedforward runs, the arm does not feel it'))
    if not robot and not description:
        robot = builtin_for('ur_type', ur_type) or ''
        if not robot or prefix:
            raise RuntimeError(f'no robot description for ur_type {ur_type!r} (xacro or ur_robot_driver missing) and '
                               f'{"a tf_prefix" if robot else "no built-in of that type"}: give robot:=<URDF file>')
    suite = IncludeLaunchDescription(
        PythonLaunchDescriptionSource(PathJoinSubstitution([share, 'launch', 'suite.launch.py'])),
        launch_arguments={'use_sim': 'false', 'robot': robot, 'robot_description': description,
                          'params_file': launching.argument(context, 'params_file'), 'controller': controller,
                          'effort_controller': 'forward_effort_controller', 'joint_states': 'joint_states',
                          'joint_states_effort': effort_meaning(context)[0],  # what the driver was asked for
                          'estimator': launching.argument(context, 'estimator'), 'feedforward': mode}.items())
    if launching.argument(context, 'rtde_publisher').lower() in ('true', '1'):
        # UR's RTDE publisher beside the driver: joint temperatures, currents, actual_current_as_torque and the
        # payload set on the robot on rtde/<field>, for recordings (dynid.io.rtde joins them by its timestamp)
        notes.append(Node(package='ur_rtde_publisher', executable='ur_rtde_publisher_node',
                          name='ur_rtde_publisher_node', output='screen',
                          parameters=[{'robot_ip': launching.argument(context, 'robot_ip'),
                                       'output_recipe': list(rtde.RECIPE),
                                       'rtde_frequency': int(launching.argument(context, 'rtde_frequency'))}]))
    return [*notes, suite]


def generate_launch_description() -> LaunchDescription:
    share = FindPackageShare('dynid')
    return LaunchDescription([
        DeclareLaunchArgument('ur_type', default_value='ur5e', description="UR model (the driver's ur_type); "
                              "dynid's nodes take that arm"),
        DeclareLaunchArgument('robot_ip', default_value=URSIM_IP, description=f'IP of the robot (URSim: {URSIM_IP})'),
        DeclareLaunchArgument('tf_prefix', default_value='', description="the driver's tf_prefix (joint names "
                              '<tf_prefix>shoulder_pan_joint …)'),
        DeclareLaunchArgument('use_mock_hardware', default_value='false', description="the driver's mock hardware "
                              '(mirrors commands; no dynamics)'),
        DeclareLaunchArgument('initial_joint_controller', default_value='scaled_joint_trajectory_controller',
                              description='controller started active; dynid sends its trajectories there'),
        DeclareLaunchArgument('launch_rviz', default_value='false', description="the driver's RViz"),
        DeclareLaunchArgument('robot', default_value='', description="robot of the dynid nodes; '' = the driver's "
                              'description for ur_type'),
        DeclareLaunchArgument('params_file', default_value=PathJoinSubstitution([share, 'config', 'ur.yaml']),
                              description='parameters of the dynid nodes'),
        DeclareLaunchArgument('estimator', default_value='true', description='start estimator_node'),
        DeclareLaunchArgument('feedforward', default_value='auto', choices=['auto', 'trajectory', 'streaming',
                                                                            'measured', ''],
                              description="feedforward_node's mode; auto: trajectory where initial_joint_controller "
                                          "commands effort, else none; '' leaves it out"),
        DeclareLaunchArgument('use_currents_as_efforts', default_value='true', choices=['true', 'false'],
                              description="joint_states' effort: motor current (true) or, with a driver that has "
                                          "the argument and PolyScope >= 5.23.0 / 10.11.0, UR's gravity-compensated "
                                          'torque (false); the dynid nodes read it as such'),
        DeclareLaunchArgument('rtde_publisher', default_value='false', choices=['true', 'false'],
                              description="start UR's RTDE publisher (ur_rtde_publisher) beside the driver with "
                                          'the fields dynid uses (joint temperatures, currents, '
                                          'actual_current_as_torque, payload)'),
        DeclareLaunchArgument('rtde_frequency', default_value='500', description="the RTDE publisher's rate [Hz] "
                              '(500 on e-Series, 125 on CB3)'),
        OpaqueFunction(function=_driver), OpaqueFunction(function=_dynid),
    ])
