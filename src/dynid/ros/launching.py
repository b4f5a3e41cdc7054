"""What dynid's launch files share: their arguments, typed, and the parameters and remappings of each node.

Imported by the files in ``launch/`` only (it needs ``launch`` and ``launch_ros``, which come with a
ROS 2 installation, not from PyPI). Rules every launch file follows through it:

- Parameters, in rising priority: the node's defaults, dynid's config file for the node, the
  ``params_file`` argument, then the launch arguments the user gave. An argument left at its default
  (empty) is not passed, so a parameter file's value stands: ``robot``, ``rate``,
  ``robot_description`` and ``use_sim_time`` default to ''.
- Arguments are typed before they become parameters: ``rate:=200`` is the float 200.0 (sim_node
  declares a float), ``use_sim_time:=true`` a bool.
- Topics are remapped, not renamed in code: ``controller`` (the joint_trajectory_controller whose
  ``joint_trajectory`` topic carries the references; the Jazzy and Kilted UR drivers start
  ``scaled_joint_trajectory_controller``, the Lyrical one ``joint_trajectory_controller``),
  ``effort_controller`` (the forward_command_controller with ``interface_name: effort`` that takes
  streamed efforts) and ``joint_states`` (Franka publishes the 1 kHz states on ``franka/joint_states``).
- ``joint_states_effort`` (torque or current) reaches the nodes that read joint_states' effort (and
  sim_node, which then publishes current there, as the UR driver does).
"""

from __future__ import annotations

import os
from xml.etree import ElementTree

from launch.actions import DeclareLaunchArgument, LogInfo
from launch.substitutions import LaunchConfiguration, PathJoinSubstitution
from launch_ros.actions import Node
from launch_ros.substitutions import FindPackageShare

from dynid.ros.wiring import node_rules, shared_rules

#: name: (default, description) of the arguments the launch files share
ARGUMENTS = {
    'namespace': ('', 'namespace of the dynid nodes and of their relative topics'),
    'robot': ('', "robot of every dynid node: built-in name (ur5e, ur5, panda), URDF path or dynid robot "
                  "file; '' = the parameter file's, else ur5e"),
    'robot_description': ('', 'URDF XML for every dynid node (wins over robot); on a real robot the '
                              "driver's description"),
    'use_sim': ('true', 'start sim_node, the digital twin, in place of a robot'),
    'rate': ('', "sim_node's publishing rate [Hz] (a float; 200 is read as 200.0); '' = the parameter file's"),
    'use_sim_time': ('', "true: every dynid node takes its time from /clock (Gazebo); '' = the parameter file's"),
    'controller': ('joint_trajectory_controller',
                   'joint_trajectory_controller whose <controller>/joint_trajectory topic gets the references '
                   '(Jazzy/Kilted UR drivers: scaled_joint_trajectory_controller)'),
    'effort_controller': ('forward_effort_controller',
                          'forward_command_controller (interface_name: effort) whose <effort_controller>/commands '
                          'topic gets streamed efforts'),
    'joint_states': ('joint_states', 'joint state topic the nodes take (Franka: franka/joint_states)'),
    'robot_state_publisher': ('true', 'start robot_state_publisher for the twin (RViz shows it) when the '
                                      'package is installed and a URDF is at hand'),
    'joint_states_effort': ('', "what joint_states' effort holds: torque or current (motor current [A]: the UR "
                                "driver; the twin then publishes current there); '' = the parameter file's, "
                                'else torque'),
}
#: the shared arguments of the launch files that run dynid nodes beside the twin or a robot
NODE_ARGUMENTS = ('robot', 'namespace', 'use_sim', 'rate', 'robot_description', 'use_sim_time', 'controller',
                  'effort_controller', 'joint_states', 'robot_state_publisher', 'joint_states_effort')
#: the nodes that read (or, sim_node, write) joint_states' effort: they take ``joint_states_effort``
EFFORT_NODES = ('sim_node', 'identifier_node', 'estimator_node', 'feedforward_node')
FLOAT_ARGUMENTS = ('rate',)
BOOL_ARGUMENTS = ('use_sim_time',)


def declare(*names: str, **defaults: str) -> list[DeclareLaunchArgument]:
    """DeclareLaunchArgument for each shared argument ``names``; ``defaults`` replace their defaults."""
    return [DeclareLaunchArgument(name, default_value=defaults.get(name, ARGUMENTS[name][0]),
                                  description=ARGUMENTS[name][1]) for name in names]


def argument(context, name: str) -> str:
    """The launch argument ``name`` as given (a string)."""
    return LaunchConfiguration(name).perform(context)


def typed(name: str, text: str):
    """The parameter value of launch argument ``name``: float, bool or the string itself."""
    if name in FLOAT_ARGUMENTS:
        try:
            return float(text)
        except ValueError:
            raise ValueError(f'launch argument {name} must be a number, got {text!r}') from None
    if name in BOOL_ARGUMENTS:
        if text.lower() not in ('true', 'false'):
            raise ValueError(f'launch argument {name} must be true or false, got {text!r}')
        return text.lower() == 'true'
    return text


def given(context, *names: str) -> dict:
    """The arguments among ``names`` that are not empty, typed (:func:`typed`), as parameters."""
    values = {name: argument(context, name) for name in names}
    return {name: typed(name, text) for name, text in values.items() if text != ''}


def is_true(context, name: str) -> bool:
    return argument(context, name).lower() == 'true'


def given_robot(context, fallback_robot: str = 'ur5e') -> str:
    """The robot the arguments name: ``robot_description``, else ``robot``, else ``fallback_robot`` (a
    parameter file's robot is not read here)."""
    return argument(context, 'robot_description') or argument(context, 'robot') or fallback_robot


def remappings(context) -> list[tuple[str, str]]:
    """The controller and joint-state topic remappings of a dynid node (from the shared arguments)."""
    return shared_rules(argument(context, 'controller'), argument(context, 'effort_controller'),
                        argument(context, 'joint_states'))


def dynid_node(context, executable: str, files: list, overrides: dict | None = None, name: str | None = None,
               extra_remappings: list | None = None, node_class=Node) -> Node:
    """A dynid node: parameters from ``files`` (paths, in rising priority; '' skipped), then the given
    shared arguments (robot, robot_description, rate for sim_node, use_sim_time, joint_states_effort for
    :data:`EFFORT_NODES`), then ``overrides``;
    ``extra_remappings`` (the node's own), then those of :func:`remappings` for the names they leave
    (:func:`dynid.ros.wiring.node_rules`: rcl applies the first matching rule). ``node_class``: launch_ros's
    Node or LifecycleNode."""
    shared = given(context, 'robot', 'robot_description', 'use_sim_time')
    if executable == 'sim_node':
        shared.update(given(context, 'rate'))
    effort = context.launch_configurations.get('joint_states_effort', '')  # declared by the files that take it
    if executable in EFFORT_NODES and effort:
        shared['joint_states_effort'] = effort
    parameters = [path for path in files if path] + [{**shared, **(overrides or {})}]
    return node_class(package='dynid', executable=executable, name=name or executable,
                      namespace=argument(context, 'namespace'), parameters=parameters,
                      remappings=node_rules(remappings(context), extra_remappings or []), output='screen',
                      emulate_tty=True)


def sim_config(context) -> str:
    """Path of dynid's config/sim_node.yaml (sim_node's first parameter file)."""
    return PathJoinSubstitution([FindPackageShare('dynid'), 'config', 'sim_node.yaml']).perform(context)


def twin(context, overrides: dict | None = None) -> list:
    """sim_node (config/sim_node.yaml, then ``params_file``, then the arguments and ``overrides``) and the
    twin's robot_state_publisher."""
    files = [sim_config(context), argument(context, 'params_file')]
    return [dynid_node(context, 'sim_node', files, overrides), *robot_state_publisher(context)]


def robot_state_publisher(context, fallback_robot: str = 'ur5e') -> list:
    """robot_state_publisher for the twin, publishing ``robot_description`` and TF from its joint states.

    The URDF is the ``robot_description`` argument, else the ``robot`` argument when it is a URDF
    file or an example-robot-data robot (``ur5``, ``panda``), else the URDF dynid writes of a DH
    robot (built-in ``ur3e``, ``ur5e``, ``ur10e``, ``ur16e`` or a dynid robot ``.yaml``;
    :mod:`dynid.model.dh_urdf`, as ``dynid model --robot ur5e --urdf OUT.urdf``).
    """
    if not is_true(context, 'robot_state_publisher'):
        return []
    from ament_index_python.packages import PackageNotFoundError, get_package_prefix
    try:
        get_package_prefix('robot_state_publisher')
    except PackageNotFoundError:
        return [LogInfo(msg='robot_state_publisher is not installed: the twin runs without it (no RViz model)')]
    description = urdf_text(argument(context, 'robot_description'), argument(context, 'robot') or fallback_robot)
    if description is None:
        return [LogInfo(msg='no URDF for the twin\'s robot: pass robot_description:=... to see it in RViz')]
    parameters = {'robot_description': description, **given(context, 'use_sim_time')}
    return [Node(package='robot_state_publisher', executable='robot_state_publisher',
                 namespace=argument(context, 'namespace'), parameters=[parameters],
                 remappings=[('joint_states', argument(context, 'joint_states'))], output='screen')]


def urdf_text(description: str, robot: str) -> str | None:
    """URDF XML of the description or robot (see :func:`robot_state_publisher`), or None."""
    if description:
        return description
    if robot.endswith('.urdf') and os.path.isfile(robot):
        with open(robot, encoding='utf-8') as file:
            return file.read()
    from dynid.model.robots import DH_ROBOTS, EXAMPLE_ROBOTS, example_robot_path
    if robot in EXAMPLE_ROBOTS:
        return example_robot_path(EXAMPLE_ROBOTS[robot][0]).read_text()
    if robot in DH_ROBOTS or (robot.endswith(('.yaml', '.yml')) and os.path.isfile(robot)):
        from dynid.model.dh_urdf import robot_urdf
        return robot_urdf(robot)
    return None


def gazebo_ros2_control(urdf: str, joints: list[str], controllers_file: str, namespace: str = '') -> str:
    """``urdf`` with its ``<ros2_control>`` blocks replaced by one for gz_ros2_control.

    The block (gz_ros2_control, ``doc/index.rst``): hardware plugin ``gz_ros2_control/GazeboSimSystem``;
    per joint of ``joints`` an ``effort`` command interface (applied raw: gravity is not compensated)
    and ``position``, ``velocity``, ``effort`` state interfaces; and the Gazebo system plugin
    ``gz_ros2_control::GazeboSimROS2ControlPlugin`` (``gz_ros2_control-system``) loading
    ``controllers_file``, under ``namespace``.
    """
    root = ElementTree.fromstring(urdf)
    for block in root.findall('ros2_control'):
        root.remove(block)
    for gazebo in root.findall('gazebo'):
        if any(p.get('filename') == 'gz_ros2_control-system' for p in gazebo.findall('plugin')):
            root.remove(gazebo)
    _effort_control(root, 'GazeboSimSystem', 'gz_ros2_control/GazeboSimSystem', joints)
    plugin = ElementTree.SubElement(ElementTree.SubElement(root, 'gazebo'), 'plugin',
                                    filename='gz_ros2_control-system',
                                    name='gz_ros2_control::GazeboSimROS2ControlPlugin')
    ElementTree.SubElement(plugin, 'parameters').text = controllers_file
    if namespace:
        ElementTree.SubElement(ElementTree.SubElement(plugin, 'ros'), 'namespace').text = namespace
    return ElementTree.tostring(root, encoding='unicode')


#: The simulators' robots (gazebo.launch.py, mujoco.launch.py): robot: (description package, xacro path in it,
#: xacro mappings, joint names). The Panda is franka_description's `fer` (Franka Emika Robot): its current
#: releases have no robots/panda; gazebo:=true fixes its base to the world.
SIM_DESCRIPTIONS = {
    'ur5e': ('ur_description', ('urdf', 'ur.urdf.xacro'), {'ur_type': 'ur5e', 'name': 'ur'},
             ['shoulder_pan_joint', 'shoulder_lift_joint', 'elbow_joint', 'wrist_1_joint', 'wrist_2_joint',
              'wrist_3_joint']),
    'panda': ('franka_description', ('robots', 'fer', 'fer.urdf.xacro'),
              {'robot_type': 'fer', 'hand': 'false', 'ros2_control': 'false', 'gazebo': 'true'},
              [f'fer_joint{i}' for i in range(1, 8)]),
}


def sim_description(context) -> tuple[str, str, list[str]]:
    """(robot, URDF text, joints) of the launch argument ``robot`` of a simulator launch file
    (:data:`SIM_DESCRIPTIONS`: the vendor's xacro expanded with its mappings); ValueError for another robot."""
    import xacro  # on a ROS 2 installation
    robot = argument(context, 'robot')
    if robot not in SIM_DESCRIPTIONS:
        raise ValueError(f'robot must be one of {", ".join(SIM_DESCRIPTIONS)}, got {robot!r}')
    package, path, mappings, joints = SIM_DESCRIPTIONS[robot]
    xacro_file = PathJoinSubstitution([FindPackageShare(package), *path]).perform(context)
    return robot, xacro.process_file(xacro_file, mappings=mappings).toxml(), joints


def mujoco_model(urdf: str, joints: list[str], path: str) -> str:
    """Write the MJCF mujoco.launch.py simulates to ``path`` and return ``path``: the description through MuJoCo's
    URDF compiler (:func:`dynid.model.mjcf.actuated_mjcf`: a motor per joint, gear 1), with the joint armature,
    damping and friction loss of dynid's MuJoCo plant (the recognized built-in's drive data for the rotor
    inertia, the twin's default viscous and Coulomb friction: :mod:`dynid.sim.mujoco_twin`), step 1 ms. Link
    inertias that violate the triangle inequality (franka_description's fer has such) are balanced by MuJoCo."""
    from dynid.model import load_robot
    from dynid.model.mjcf import actuated_mjcf
    from dynid.sim.parameters import PlantParameters

    robot = load_robot(urdf, joints=joints)
    params = PlantParameters.defaults(robot)
    text = actuated_mjcf(urdf, joints, params.drives.rotor_inertia, params.joints.viscous1, params.joints.coulomb,
                         robot.effort_limits, balance_inertia=True)
    with open(path, 'w', encoding='utf-8') as file:
        file.write(text)
    return path


def mujoco_ros2_control(urdf: str, joints: list[str], model_file: str, headless: bool = True) -> str:
    """``urdf`` with its ``<ros2_control>`` blocks replaced by one for mujoco_ros2_control.

    The block (mujoco_ros2_control, ``docs/hardware_interface.rst``): hardware plugin
    ``mujoco_ros2_control/MujocoSystemInterface`` with the parameters ``mujoco_model`` (the MJCF ``model_file``)
    and ``headless``; per joint of ``joints`` an ``effort`` command interface (the MJCF's motor of the same
    name: applied raw, gravity not compensated) and ``position``, ``velocity``, ``effort`` state interfaces.
    """
    root = ElementTree.fromstring(urdf)
    for block in root.findall('ros2_control'):
        root.remove(block)
    _effort_control(root, 'MujocoSystem', 'mujoco_ros2_control/MujocoSystemInterface', joints,
                    {'mujoco_model': model_file, 'headless': 'true' if headless else 'false'})
    return ElementTree.tostring(root, encoding='unicode')


def _effort_control(root: ElementTree.Element, name: str, plugin: str, joints: list[str],
                    parameters: dict[str, str] | None = None) -> None:
    """Add to the description ``root`` a ``<ros2_control>`` system ``name`` with the hardware ``plugin`` and its
    ``parameters``, and per joint of ``joints`` an ``effort`` command interface and ``position``, ``velocity``,
    ``effort`` state interfaces; ValueError naming the joints the description lacks."""
    names = {joint.get('name') for joint in root.findall('joint')}
    missing = [joint for joint in joints if joint not in names]
    if missing:
        raise ValueError(f'joints {missing} are not in the robot description')
    control = ElementTree.SubElement(root, 'ros2_control', name=name, type='system')
    hardware = ElementTree.SubElement(control, 'hardware')
    ElementTree.SubElement(hardware, 'plugin').text = plugin
    for key, value in (parameters or {}).items():
        ElementTree.SubElement(hardware, 'param', name=key).text = value
    for joint in joints:
        element = ElementTree.SubElement(control, 'joint', name=joint)
        ElementTree.SubElement(element, 'command_interface', name='effort')
        for interface in ('position', 'velocity', 'effort'):
            ElementTree.SubElement(element, 'state_interface', name=interface)


def simulator_suite(context, description: str) -> list:
    """What gazebo.launch.py and mujoco.launch.py start after the simulator: the spawners of
    joint_state_broadcaster, joint_trajectory_controller and forward_effort_controller (inactive), and the dynid
    suite (suite.launch.py) on sim time for ``description``, with the launch arguments ``params_file``,
    ``estimator`` and ``feedforward``."""
    from launch.actions import IncludeLaunchDescription
    from launch.launch_description_sources import PythonLaunchDescriptionSource

    spawner = [('joint_state_broadcaster', []), ('joint_trajectory_controller', []),
               ('forward_effort_controller', ['--inactive'])]
    return [
        *[Node(package='controller_manager', executable='spawner', arguments=[name, *flags], output='screen')
          for name, flags in spawner],
        IncludeLaunchDescription(
            PythonLaunchDescriptionSource(PathJoinSubstitution([FindPackageShare('dynid'), 'launch',
                                                                'suite.launch.py'])),
            launch_arguments={'use_sim': 'false', 'robot_description': description, 'use_sim_time': 'true',
                              'params_file': argument(context, 'params_file'),
                              'controller': 'joint_trajectory_controller',
                              'effort_controller': 'forward_effort_controller',
                              'estimator': argument(context, 'estimator'),
                              'feedforward': argument(context, 'feedforward')}.items()),
    ]
