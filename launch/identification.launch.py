"""Start dynid's identification suite: excitation_node and identifier_node, and the twin if asked.

    ros2 launch dynid identification.launch.py [robot:=ur5e] [namespace:=] [use_sim:=true]
        [rate:=500.0] [params_file:=...] [controller:=joint_trajectory_controller] [use_sim_time:=]
        [robot_description:=...]

With ``use_sim:=false`` a real ros2_control robot provides joint_states (and, where it can,
motor_states, joint_currents, joint_temperatures) and runs a joint_trajectory_controller named
``controller`` on the same namespace (UR: ``controller:=scaled_joint_trajectory_controller`` with the Jazzy and
Kilted drivers, the default ``joint_trajectory_controller`` with the Lyrical one). Then:
``ros2 service call /identifier_node/start_recording std_srvs/srv/Trigger``,
``.../excitation_node/start``, wait for ``done`` on ``excitation_node/state``, ``stop_recording`` and
``identify``; the result comes on ``identifier_node/result`` and in the recording's folder.
``params_file`` (default config/identification.yaml) reaches every node, sim_node included.
"""

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch.substitutions import PathJoinSubstitution
from launch_ros.substitutions import FindPackageShare

from dynid.ros import launching


def _nodes(context):
    params_file = launching.argument(context, 'params_file')
    nodes = [launching.dynid_node(context, name, [params_file]) for name in ('excitation_node', 'identifier_node')]
    return nodes + (launching.twin(context) if launching.is_true(context, 'use_sim') else [])


def generate_launch_description() -> LaunchDescription:
    return LaunchDescription([
        *launching.declare(*launching.NODE_ARGUMENTS),
        DeclareLaunchArgument('params_file', description='parameters of every node (sim_node ones too)',
                              default_value=PathJoinSubstitution([FindPackageShare('dynid'), 'config',
                                                                  'identification.yaml'])),
        OpaqueFunction(function=_nodes),
    ])
