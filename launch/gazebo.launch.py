"""dynid next to Gazebo (gz sim + gz_ros2_control): a UR5e (or a Panda) with effort controllers, and the suite.

    ros2 launch dynid gazebo.launch.py [robot:=ur5e|panda] [gazebo_gui:=true] [world_file:=empty.sdf]
        [params_file:=config/gazebo.yaml] [estimator:=true] [feedforward:=trajectory]

The description (ur_description's ur.urdf.xacro for ur5e; for panda franka_description's fer xacro,
the Franka Emika Robot, joints fer_joint1..7) gets a ``<ros2_control>`` block with
``gz_ros2_control/GazeboSimSystem`` and an effort command interface per joint, and the
GazeboSimROS2ControlPlugin loading config/gazebo_<robot>_controllers.yaml
(:func:`dynid.ros.launching.gazebo_ros2_control`). Then: robot_state_publisher, gz sim
(``ros_gz_sim/launch/gz_sim.launch.py``), ``ros_gz_sim create`` from ``robot_description``, the /clock
bridge (``ros_gz_bridge parameter_bridge``), spawners for joint_state_broadcaster,
joint_trajectory_controller (effort) and forward_effort_controller (inactive), and the dynid suite on
sim time. Gazebo applies efforts raw: config/gazebo.yaml has the feedforward compensate gravity too.
Matches gz_ros2_control and ros_gz of the kilted release.
"""

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, IncludeLaunchDescription, OpaqueFunction
from launch.launch_description_sources import PythonLaunchDescriptionSource
from launch.substitutions import PathJoinSubstitution
from launch_ros.actions import Node
from launch_ros.substitutions import FindPackageShare

from dynid.ros import launching

ROBOTS = launching.SIM_DESCRIPTIONS  # robot: (description package, xacro path, xacro mappings, joints)


def _nodes(context):
    robot, urdf, joints = launching.sim_description(context)
    share = FindPackageShare('dynid')
    controllers = PathJoinSubstitution([share, 'config', f'gazebo_{robot}_controllers.yaml']).perform(context)
    description = launching.gazebo_ros2_control(urdf, joints, controllers)
    gz_args = f' -r -v 2 {launching.argument(context, "world_file")}'
    if not launching.is_true(context, 'gazebo_gui'):
        gz_args = ' -s' + gz_args
    sim_time = {'use_sim_time': True}
    return [
        Node(package='robot_state_publisher', executable='robot_state_publisher',
             parameters=[{'robot_description': description, **sim_time}], output='screen'),
        IncludeLaunchDescription(
            PythonLaunchDescriptionSource(PathJoinSubstitution([FindPackageShare('ros_gz_sim'), 'launch',
                                                                'gz_sim.launch.py'])),
            launch_arguments={'gz_args': gz_args}.items()),
        Node(package='ros_gz_sim', executable='create', output='screen',
             arguments=['-topic', 'robot_description', '-name', robot, '-allow_renaming', 'true']),
        Node(package='ros_gz_bridge', executable='parameter_bridge', output='screen',
             arguments=['/clock@rosgraph_msgs/msg/Clock[gz.msgs.Clock']),
        *launching.simulator_suite(context, description),
    ]


def generate_launch_description() -> LaunchDescription:
    share = FindPackageShare('dynid')
    return LaunchDescription([
        DeclareLaunchArgument('robot', default_value='ur5e', choices=list(ROBOTS), description='robot in Gazebo'),
        DeclareLaunchArgument('gazebo_gui', default_value='true', description='Gazebo with its GUI (false: -s)'),
        DeclareLaunchArgument('world_file', default_value='empty.sdf', description='Gazebo world'),
        DeclareLaunchArgument('params_file', default_value=PathJoinSubstitution([share, 'config', 'gazebo.yaml']),
                              description='parameters of the dynid nodes'),
        DeclareLaunchArgument('estimator', default_value='true', description='start estimator_node'),
        DeclareLaunchArgument('feedforward', default_value='trajectory', description="feedforward_node's mode"),
        OpaqueFunction(function=_nodes),
    ])
