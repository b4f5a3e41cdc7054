"""Start the five dynid nodes with one parameter file: what ``dynid bringup`` composes, as launch.

    ros2 launch dynid suite.launch.py [namespace:=] [use_sim:=false] [robot:=] [params_file:=...]
        [controller:=joint_trajectory_controller] [effort_controller:=forward_effort_controller]
        [joint_states:=joint_states] [estimator:=true] [feedforward:=trajectory] [rate:=]
        [use_sim_time:=] [robot_description:=...] [joint_states_effort:=torque|current]

excitation_node, identifier_node, estimator_node (``estimator:=false`` leaves it out) and
feedforward_node (``feedforward``: trajectory, streaming, measured, or '' to leave it out; it starts
configured and active, ``autostart``) run against a robot's controllers, whose topics the
``controller``, ``effort_controller`` and ``joint_states`` arguments name; sim_node, the twin, only
with ``use_sim:=true``. The wiring is :func:`dynid.suite.bringup.plan_suite`'s: in trajectory mode
the excitation goes through ``feedforward_node/reference``, which forwards it with efforts to the
controller (a node's own rules come before the shared ones: rcl applies the first that matches,
:mod:`dynid.ros.wiring`). ``params_file`` (default config/suite.yaml) reaches every node; the arguments given
win over it. ``joint_states_effort:=current`` reads joint_states' effort as motor current (the UR
driver's; with ``use_sim:=true`` the twin publishes it so). The backend launch files (ur, franka,
gazebo) include this one.
"""

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch.substitutions import PathJoinSubstitution
from launch_ros.substitutions import FindPackageShare

from dynid.ros import launching
from dynid.suite.bringup import plan_suite

FEEDFORWARD_MODES = ('trajectory', 'streaming', 'measured', '')


def _nodes(context):
    config = launching.sim_config(context)
    params_file = launching.argument(context, 'params_file')
    mode = launching.argument(context, 'feedforward')
    plan = plan_suite(launching.given_robot(context), simulate=launching.is_true(context, 'use_sim'),
                      estimator=launching.is_true(context, 'estimator'), feedforward=mode or None)
    nodes = []
    for node in plan:
        overrides = {k: v for k, v in node.overrides.items() if k != 'robot'}  # the argument's, if given
        files = [config, params_file] if node.module == 'sim_node' else [params_file]
        nodes.append(launching.dynid_node(context, node.module, files, overrides, node.name,
                                          list(node.remappings.items())))
    if launching.is_true(context, 'use_sim'):
        nodes += launching.robot_state_publisher(context)
    return nodes


def generate_launch_description() -> LaunchDescription:
    return LaunchDescription([
        *launching.declare('namespace', 'robot', 'robot_description', 'use_sim', 'rate', 'use_sim_time',
                           'controller', 'effort_controller', 'joint_states', 'robot_state_publisher',
                           'joint_states_effort', use_sim='false'),
        DeclareLaunchArgument('estimator', default_value='true', description='start estimator_node'),
        DeclareLaunchArgument('feedforward', default_value='trajectory', choices=list(FEEDFORWARD_MODES),
                              description="feedforward_node's mode; '' leaves it out"),
        DeclareLaunchArgument('params_file', description='parameters of every node',
                              default_value=PathJoinSubstitution([FindPackageShare('dynid'), 'config', 'suite.yaml'])),
        OpaqueFunction(function=_nodes),
    ])
