"""Start dynid's digital twin (sim_node) as a stand-in for a robot driver, with robot_state_publisher.

    ros2 launch dynid sim.launch.py [robot:=ur5e] [rate:=500.0] [namespace:=] [params_file:=...]
        [robot_description:=...] [use_sim_time:=] [controller:=joint_trajectory_controller]
        [effort_controller:=forward_effort_controller] [robot_state_publisher:=true]
        [joint_states_effort:=torque|current]

The node publishes joint_states, motor_states, joint_currents and joint_temperatures and follows
``<controller>/joint_trajectory`` and ``<effort_controller>/commands``, like a ros2_control robot
would. Parameters: config/sim_node.yaml, then ``params_file``, then the arguments given (an
argument left empty keeps the file's value). robot_state_publisher (when installed) publishes the
twin's ``robot_description`` and TF, so RViz shows it (a URDF robot, the URDF dynid writes of a
built-in DH robot such as ``ur5e``, or ``robot_description:=``).
``joint_states_effort:=current`` puts motor current [A] into joint_states' effort, as the UR driver does.
"""

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, OpaqueFunction

from dynid.ros import launching


def generate_launch_description() -> LaunchDescription:
    return LaunchDescription([
        *launching.declare('robot', 'rate', 'namespace', 'robot_description', 'use_sim_time', 'controller',
                           'effort_controller', 'joint_states', 'robot_state_publisher', 'joint_states_effort'),
        DeclareLaunchArgument('params_file', default_value='', description='sim_node parameters (wins over '
                              'config/sim_node.yaml)'),
        OpaqueFunction(function=launching.twin),
    ])
