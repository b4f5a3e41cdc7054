"""Start dynid's online estimation: estimator_node, and the twin if asked.

    ros2 launch dynid estimation.launch.py [robot:=ur5e] [namespace:=] [use_sim:=true]
        [rate:=500.0] [params_file:=...] [use_sim_time:=] [robot_description:=...]

estimator_node takes joint_states, motor_states, joint_currents and joint_temperatures (the twin
publishes all four; a real robot needs motor encoders for motor_states) and publishes
``estimator_node/stiffness`` and, with an identification result in ``result_file``,
``estimator_node/friction``, with health on ``/diagnostics``. To use a result, copy
``config/estimation.yaml``, set ``result_file`` and pass the copy as ``params_file`` (it reaches
sim_node too). Then ``ros2 service call /estimator_node/set_baseline std_srvs/srv/Trigger`` stores
today's stiffness as the baseline against which drops are reported. Beside the twin, estimator_node
writes its health record as ``<robot>-twin`` (``health_robot``), apart from the real arm's.
"""

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch.substitutions import PathJoinSubstitution
from launch_ros.substitutions import FindPackageShare

from dynid.ros import launching
from dynid.suite.bringup import twin_health_robot


def _nodes(context):
    simulate = launching.is_true(context, 'use_sim')
    # the twin's sessions stay apart from a real arm's in the health record, as with dynid bringup
    overrides = {'health_robot': twin_health_robot(launching.given_robot(context))} if simulate else {}
    nodes = [launching.dynid_node(context, 'estimator_node', [launching.argument(context, 'params_file')], overrides)]
    return nodes + (launching.twin(context) if simulate else [])


def generate_launch_description() -> LaunchDescription:
    return LaunchDescription([
        *launching.declare(*launching.NODE_ARGUMENTS),
        DeclareLaunchArgument('params_file', description='estimator_node parameters (sim_node ones too, if given)',
                              default_value=PathJoinSubstitution([FindPackageShare('dynid'), 'config',
                                                                  'estimation.yaml'])),
        OpaqueFunction(function=_nodes),
    ])
