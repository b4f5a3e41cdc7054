"""Start dynid's feedforward: feedforward_node (a lifecycle node, configured and activated), and the twin if asked.

    ros2 launch dynid feedforward.launch.py [robot:=ur5e] [namespace:=] [use_sim:=true] [rate:=500.0]
        [activate:=true] [params_file:=...]

feedforward_node loads ``result_file`` and, in its default ``trajectory`` mode, takes JointTrajectory
messages on ``feedforward_node/reference`` and republishes them with efforts on
``joint_trajectory_controller/joint_trajectory`` (``streaming``/``measured``: Float64MultiArray on
``forward_effort_controller/commands``). With ``use_sim`` the twin stands in for the robot, its own
model feedforward off (``internal_feedforward: none``), so the torque is all ours. The launch emits
the configure transition and, once the node is inactive after configuring, the activate transition
(launch_ros lifecycle events); with ``activate:=false`` it stays unconfigured for
``ros2 lifecycle set /feedforward_node configure`` (then ``activate``). Copy
``config/feedforward.yaml``, set ``result_file``, ``terms`` and the backend flags (UR: no gravity,
effort is current; Franka: no gravity, no friction; Gazebo: everything) and pass it as ``params_file``.
"""

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, EmitEvent, RegisterEventHandler
from launch.conditions import IfCondition
from launch.events import matches_action
from launch.substitutions import LaunchConfiguration, PathJoinSubstitution
from launch_ros.actions import LifecycleNode, Node
from launch_ros.event_handlers import OnStateTransition
from launch_ros.events.lifecycle import ChangeState
from launch_ros.substitutions import FindPackageShare
from lifecycle_msgs.msg import Transition


def generate_launch_description() -> LaunchDescription:
    share = FindPackageShare('dynid')
    arguments = [
        DeclareLaunchArgument('robot', default_value='ur5e', description='robot name, URDF or robot file'),
        DeclareLaunchArgument('namespace', default_value='', description='namespace of the nodes and topics'),
        DeclareLaunchArgument('use_sim', default_value='true', description='start sim_node (the digital twin)'),
        DeclareLaunchArgument('rate', default_value='500.0', description='sim_node publishing rate [Hz]'),
        DeclareLaunchArgument('activate', default_value='true',
                              description='configure and activate feedforward_node at start'),
        DeclareLaunchArgument('params_file', description='feedforward_node parameters (sim_node ones too, if given)',
                              default_value=PathJoinSubstitution([share, 'config', 'feedforward.yaml'])),
    ]
    robot, namespace = LaunchConfiguration('robot'), LaunchConfiguration('namespace')
    params_file, activate = LaunchConfiguration('params_file'), IfCondition(LaunchConfiguration('activate'))
    common = {'package': 'dynid', 'namespace': namespace, 'output': 'screen', 'emulate_tty': True}
    sim = Node(executable='sim_node', name='sim_node', condition=IfCondition(LaunchConfiguration('use_sim')),
               parameters=[PathJoinSubstitution([share, 'config', 'sim_node.yaml']), params_file,
                           {'robot': robot, 'rate': LaunchConfiguration('rate'), 'internal_feedforward': 'none'}],
               **common)
    feedforward = LifecycleNode(executable='feedforward_node', name='feedforward_node',
                                parameters=[params_file, {'robot': robot}], **common)
    configure = EmitEvent(condition=activate, event=ChangeState(
        lifecycle_node_matcher=matches_action(feedforward), transition_id=Transition.TRANSITION_CONFIGURE))
    activate_when_configured = RegisterEventHandler(condition=activate, event_handler=OnStateTransition(
        target_lifecycle_node=feedforward, start_state='configuring', goal_state='inactive',
        entities=[EmitEvent(event=ChangeState(lifecycle_node_matcher=matches_action(feedforward),
                                              transition_id=Transition.TRANSITION_ACTIVATE))]))
    return LaunchDescription([*arguments, sim, feedforward, activate_when_configured, configure])
