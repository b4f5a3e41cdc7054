"""Start dynid's contact estimation: contact_node, and the twin if asked.

    ros2 launch dynid contact.launch.py [robot:=ur5e] [namespace:=] [use_sim:=true] [rate:=500.0]
        [params_file:=config/contact.yaml] [use_sim_time:=] [robot_description:=...]

contact_node takes the state topics (joint_states; joint_currents where the result reads currents; motor_states and
joint_temperatures where published) and publishes ``contact_node/external_torque`` (sensor_msgs/JointState, effort
τ̂_ext [N·m]), ``contact_node/external_wrench`` (geometry_msgs/WrenchStamped, flange frame), each contact on
``contact_node/contacts`` and its state on ``/diagnostics``; each contact goes into the health record as a
``collision`` event. Copy ``config/contact.yaml`` (the twin; ``contact_mujoco.yaml``, ``contact_ur.yaml``,
``contact_franka.yaml`` beside the MuJoCo plant and the vendors' drivers), set ``result_file`` and the
``calibration_file`` written by ``dynid contact --calibrate ... --save-calibration``, and pass the copy as
``params_file``. The estimate is advisory: it never replaces the robot's safety function.
"""

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch.substitutions import PathJoinSubstitution
from launch_ros.substitutions import FindPackageShare

from dynid.ros import launching


def _nodes(context):
    nodes = [launching.dynid_node(context, 'contact_node', [launching.argument(context, 'params_file')])]
    return nodes + (launching.twin(context) if launching.is_true(context, 'use_sim') else [])


def generate_launch_description() -> LaunchDescription:
    return LaunchDescription([
        *launching.declare(*launching.NODE_ARGUMENTS),
        DeclareLaunchArgument('params_file', description='contact_node parameters (sim_node ones too, if given)',
                              default_value=PathJoinSubstitution([FindPackageShare('dynid'), 'config',
                                                                  'contact.yaml'])),
        OpaqueFunction(function=_nodes),
    ])
