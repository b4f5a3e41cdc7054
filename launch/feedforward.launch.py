"""Start dynid's feedforward: feedforward_node (a lifecycle node, configured and activated), and the twin if asked.

    ros2 launch dynid feedforward.launch.py [robot:=ur5e] [namespace:=] [use_sim:=true] [rate:=500.0]
        [activate:=true] [params_file:=...] [controller:=joint_trajectory_controller]
        [effort_controller:=forward_effort_controller] [use_sim_time:=] [robot_description:=...]

feedforward_node loads ``result_file`` and, in its default ``trajectory`` mode, takes JointTrajectory
messages on ``feedforward_node/reference`` and republishes them with efforts on
``<controller>/joint_trajectory`` (``streaming``/``measured``: Float64MultiArray on
``<effort_controller>/commands``). With ``use_sim`` the twin stands in for the robot, its own
model feedforward off (``internal_feedforward: none``), so the torque is all ours. The launch emits
the configure transition and, once the node is inactive after configuring, the activate transition
(launch_ros lifecycle events); with ``activate:=false`` it stays unconfigured for
``ros2 lifecycle set /feedforward_node configure`` (then ``activate``). Copy
``config/feedforward.yaml``, set ``result_file``, ``terms`` and the backend flags (UR: no gravity,
effort is current; Franka: no gravity, no friction; Gazebo: everything) and pass it as ``params_file``
(it reaches sim_node too).
"""

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, EmitEvent, OpaqueFunction, RegisterEventHandler
from launch.events import matches_action
from launch.substitutions import PathJoinSubstitution
from launch_ros.actions import LifecycleNode
from launch_ros.event_handlers import OnStateTransition
from launch_ros.events.lifecycle import ChangeState
from launch_ros.substitutions import FindPackageShare
from lifecycle_msgs.msg import Transition

from dynid.ros import launching


def _nodes(context):
    feedforward = launching.dynid_node(context, 'feedforward_node', [launching.argument(context, 'params_file')],
                                       node_class=LifecycleNode)
    nodes = [feedforward]
    if launching.is_true(context, 'use_sim'):
        nodes += launching.twin(context, {'internal_feedforward': 'none'})
    if launching.is_true(context, 'activate'):
        def change(transition: int) -> EmitEvent:
            return EmitEvent(event=ChangeState(lifecycle_node_matcher=matches_action(feedforward),
                                               transition_id=transition))
        nodes += [RegisterEventHandler(OnStateTransition(target_lifecycle_node=feedforward, start_state='configuring',
                                                         goal_state='inactive',
                                                         entities=[change(Transition.TRANSITION_ACTIVATE)])),
                  change(Transition.TRANSITION_CONFIGURE)]
    return nodes


def generate_launch_description() -> LaunchDescription:
    return LaunchDescription([
        *launching.declare(*launching.NODE_ARGUMENTS),
        DeclareLaunchArgument('activate', default_value='true',
                              description='configure and activate feedforward_node at start'),
        DeclareLaunchArgument('params_file', description='feedforward_node parameters (sim_node ones too, if given)',
                              default_value=PathJoinSubstitution([FindPackageShare('dynid'), 'config',
                                                                  'feedforward.yaml'])),
        OpaqueFunction(function=_nodes),
    ])
