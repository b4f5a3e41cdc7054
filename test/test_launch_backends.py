"""The backend launch files (ur, franka, gazebo, mujoco) visited by the real ``launch`` against stand-in vendors.

Each launch file is loaded and visited in a :class:`launch.LaunchContext` (OpaqueFunctions run,
includes are expanded, arguments are checked against their ``choices``; no process starts) with the
stand-ins of ``vendor_stand_ins.py`` on the ament prefix path. Checked: every argument we pass to an
included launch file is declared there; our controllers files give the controllers we use real
plugin types and that robot's joints; the remapped controller topics of the dynid nodes name
controllers that are spawned and of the right type; the nodes that read joint_states' effort read it
as current on UR only (``joint_states_effort``); the twin's robot_state_publisher gets the URDF of a built-in
DH robot. Skipped where launch/launch_ros are not installed
(they come with ROS 2, not from PyPI); the gazebo case also needs xacro.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml

pytest.importorskip('launch')
pytest.importorskip('launch_ros')

from launch_ros.actions import Node  # noqa: E402

from dynid.ros.wiring import EFFORT_TOPIC, JTC_TOPIC, resolve  # noqa: E402
from testing.launch_prefix import ROOT, add_prefix, ensure_dynid, mark_package  # noqa: E402
from testing.launch_visit import Visit  # noqa: E402
from vendor_stand_ins import UR_JOINTS, franka_joints, vendor_prefix  # noqa: E402

#: controller plugin types of ros2_controllers (kilted), ur_controllers and franka's broadcasters
PLUGINS = {
    'joint_state_broadcaster/JointStateBroadcaster', 'joint_trajectory_controller/JointTrajectoryController',
    'forward_command_controller/ForwardCommandController', 'velocity_controllers/JointGroupVelocityController',
    'position_controllers/JointGroupPositionController', 'effort_controllers/JointGroupEffortController',
    'force_torque_sensor_broadcaster/ForceTorqueSensorBroadcaster', 'pose_broadcaster/PoseBroadcaster',
    'ur_controllers/GPIOController', 'ur_controllers/SpeedScalingStateBroadcaster',
    'ur_controllers/URConfigurationController', 'ur_controllers/GravityUpdateController',
    'ur_controllers/FrictionModelController', 'ur_controllers/ScaledJointTrajectoryController',
    'ur_controllers/ForceModeController', 'ur_controllers/PassthroughTrajectoryController',
    'ur_controllers/FreedriveModeController', 'ur_controllers/ToolContactController',
    'motion_primitives_controllers/MotionPrimitivesForwardController',
    'franka_robot_state_broadcaster/FrankaRobotStateBroadcaster',
}
TRAJECTORY_TYPES = {'joint_trajectory_controller/JointTrajectoryController',
                    'ur_controllers/ScaledJointTrajectoryController'}
EFFORT_TYPE = 'forward_command_controller/ForwardCommandController'


@pytest.fixture(scope='module', autouse=True)
def stand_ins(tmp_path_factory):
    """The stand-ins on the prefix path; the UR description's joints without an effort command interface
    (ur_description 2.4.5). Returns a prefix of stand-ins whose UR joints have one, for :func:`ur_effort`."""
    saved = os.environ.get('AMENT_PREFIX_PATH')
    ensure_dynid()
    add_prefix(vendor_prefix(tmp_path_factory.mktemp('vendors')))
    yield vendor_prefix(tmp_path_factory.mktemp('vendors_effort'), ur_effort=True)
    if saved is None:
        os.environ.pop('AMENT_PREFIX_PATH', None)
    else:
        os.environ['AMENT_PREFIX_PATH'] = saved


@pytest.fixture
def ur_effort(stand_ins, monkeypatch):
    """The UR description with effort command interfaces (ur_description after 2.4.5) first on the path."""
    monkeypatch.setenv('AMENT_PREFIX_PATH', os.pathsep.join([str(stand_ins), os.environ['AMENT_PREFIX_PATH']]))


def controllers_file(name: str) -> tuple[dict, dict]:
    """Our controllers file: (controller -> type, controller -> its ros__parameters); ``/**`` unwrapped,
    ``$(var tf_prefix)`` as ''."""
    text = (ROOT / 'config' / name).read_text().replace('$(var tf_prefix)', '')
    document = yaml.safe_load(text)
    document = document.get('/**', document)
    manager = document['controller_manager']['ros__parameters']
    types = {key: value['type'] for key, value in manager.items() if isinstance(value, dict) and 'type' in value}
    parameters = {key: value.get('ros__parameters', {}) for key, value in document.items()
                  if key != 'controller_manager'}
    return types, parameters


def check_includes(visit: Visit) -> None:
    for location, given, declared in visit.includes:
        unknown = sorted(set(given) - set(declared))
        assert not unknown, f'{location} does not declare {unknown}'


def check_controllers(name: str, joints: list[str]) -> tuple[dict, dict]:
    types, parameters = controllers_file(name)
    assert set(types.values()) <= PLUGINS, sorted(set(types.values()) - PLUGINS)
    assert types['joint_state_broadcaster'] == 'joint_state_broadcaster/JointStateBroadcaster'
    assert types['joint_trajectory_controller'] == 'joint_trajectory_controller/JointTrajectoryController'
    assert types['forward_effort_controller'] == EFFORT_TYPE
    jtc, effort = parameters['joint_trajectory_controller'], parameters['forward_effort_controller']
    assert jtc['joints'] == joints and jtc['command_interfaces'] == ['effort']
    assert set(jtc['state_interfaces']) == {'position', 'velocity'}
    assert sorted(jtc['gains']) == sorted(joints)
    assert effort['joints'] == joints and effort['interface_name'] == 'effort'
    for controller, values in parameters.items():  # every joint named anywhere is the robot's
        assert controller in types, f'{controller} has parameters but is not declared'
        assert set(values.get('joints', [])) <= set(joints), (controller, values['joints'])
    return types, parameters


def check_remappings(visit: Visit, types: dict, joint_states: str = 'joint_states',
                     feedforward: bool = True) -> dict[str, str]:
    """Where each dynid node's topics go, resolved as rcl resolves its rules (the first that matches wins):
    every controller topic is a spawned controller of the right type. Returns {node:topic: where it goes}."""
    spawned, targets = visit.spawned(), {}
    nodes = visit.dynid_nodes()
    wanted = {'excitation_node', 'identifier_node', 'estimator_node'} | ({'feedforward_node'} if feedforward else set())
    assert wanted <= {name.rsplit('/', 1)[-1] for name in nodes}, sorted(nodes)
    assert feedforward or not any(name.endswith('/feedforward_node') for name in nodes)
    for name, node in nodes.items():
        rules = [tuple(rule) for rule in node.expanded_remapping_rules or []]
        for source in {source for source, _ in rules} | {JTC_TOPIC, EFFORT_TOPIC, 'joint_states'}:
            target = targets[f'{name}:{source}'] = resolve(rules, source)
            controller, _, topic = target.rpartition('/')
            if controller == 'feedforward_node' or source.startswith('~'):
                continue
            if topic == 'joint_trajectory':
                assert types.get(controller) in TRAJECTORY_TYPES, (name, target)
                assert spawned.get(controller) is True, f'{name} sends to {controller}, which is not started active'
            elif topic == 'commands':
                assert types.get(controller) == EFFORT_TYPE, (name, target)
                assert controller in spawned, f'{name} streams to {controller}, which is not loaded'
            elif source == 'joint_states':
                assert target == joint_states, (name, target)
    return targets


EFFORT_READERS = ('identifier_node', 'estimator_node', 'feedforward_node')


def node_parameter(visit: Visit, node: Node, name: str, default=None):
    """The value of parameter ``name`` that ``node`` would start with: the last of its parameter files (in
    launch_ros's order) whose section for the node (``/**``, ``/**/<node>`` or its full name) sets it."""
    full = node.node_name
    sections = ('/**', f'/**/{full.rsplit("/", 1)[-1]}', full, full.lstrip('/'))
    value = default
    for path in _parameter_files(visit, node):
        document = yaml.load(Path(path).read_text(), Loader=yaml.FullLoader) or {}  # launch_ros dumps tuples
        for key, section in document.items():
            if key in sections and name in (section or {}).get('ros__parameters', {}):
                value = section['ros__parameters'][name]
    return value


def check_effort(visit: Visit) -> str:
    """The one ``joint_states_effort`` of every dynid node that reads joint_states' effort (default torque)."""
    nodes = {name.rsplit('/', 1)[-1]: node for name, node in visit.dynid_nodes().items()}
    values = {name: node_parameter(visit, nodes[name], 'joint_states_effort', 'torque')
              for name in EFFORT_READERS if name in nodes}
    assert {'identifier_node', 'estimator_node'} <= set(values), sorted(nodes)
    assert len(set(values.values())) == 1, values
    return next(iter(values.values()))


def description_of(visit: Visit, node_name: str) -> str:
    nodes = {name.rsplit('/', 1)[-1]: node for name, node in visit.dynid_nodes().items()}
    return node_parameter(visit, nodes[node_name], 'robot_description', '')


def test_ur_launch_matches_the_ur_driver():
    visit = Visit('ur.launch.py', {'robot_ip': '192.168.56.101'})
    check_includes(visit)
    locations = [Path(location).name for location, _, _ in visit.includes]
    assert 'ur_control.launch.py' in locations and 'suite.launch.py' in locations
    types, _ = check_controllers('ur_controllers.yaml', UR_JOINTS)
    spawned = visit.spawned()
    assert set(spawned) <= set(types), f'the driver spawns controllers our file lacks: {set(spawned) - set(types)}'
    assert spawned['scaled_joint_trajectory_controller'] and spawned['forward_effort_controller'] is False
    # The position-only scaled controller would refuse points with efforts: no feedforward_node, and the
    # excitation goes straight to that controller by design (its rules resolved as rcl resolves them).
    targets = check_remappings(visit, types, feedforward=False)
    assert targets[f'/excitation_node:{JTC_TOPIC}'] == 'scaled_joint_trajectory_controller/joint_trajectory'
    assert 'sim_node' not in {name.rsplit('/', 1)[-1] for name in visit.dynid_nodes()}
    assert check_effort(visit) == 'current'
    from dynid.model import load_robot
    assert load_robot(description_of(visit, 'identifier_node')).builtin == 'ur5e'  # the driver's, ur_type ur5e


def test_ur_type_and_tf_prefix_reach_the_dynid_nodes():
    from dynid.model import load_robot

    visit = Visit('ur.launch.py', {'robot_ip': '10.0.0.2', 'ur_type': 'ur10e', 'tf_prefix': 'left_'})
    robot = load_robot(description_of(visit, 'estimator_node'))
    assert robot.builtin == 'ur10e' and robot.joint_names[0] == 'left_shoulder_pan_joint'
    assert robot.drives is not None  # the built-in's drive data: the estimator does not start without them


def test_ur_effort_is_current_whatever_the_params_file(tmp_path):
    # A user's own parameter file (no joint_states_effort) does not turn UR's current back into torque.
    own = tmp_path / 'mine.yaml'
    own.write_text(yaml.safe_dump({'/**/identifier_node': {'ros__parameters': {'method': 'ols'}}}))
    visit = Visit('ur.launch.py', {'robot_ip': '10.0.0.2', 'params_file': str(own)})
    assert check_effort(visit) == 'current'


def test_ur_launch_with_the_effort_trajectory_controller(ur_effort):
    visit = Visit('ur.launch.py', {'robot_ip': '10.0.0.2', 'initial_joint_controller': 'joint_trajectory_controller'})
    types, _ = check_controllers('ur_controllers.yaml', UR_JOINTS)
    targets = check_remappings(visit, types)
    assert targets[f'/excitation_node:{JTC_TOPIC}'] == 'feedforward_node/reference'
    assert targets[f'/feedforward_node:{JTC_TOPIC}'] == JTC_TOPIC  # the effort JTC, by its own name
    assert visit.spawned()['joint_trajectory_controller'] is True


@pytest.fixture
def ur_torques(tmp_path, monkeypatch):
    """A UR driver whose ur_control.launch.py declares use_currents_as_efforts (PR #1918) first on the path."""
    prefix = vendor_prefix(tmp_path / 'vendors_torques', ur_currents_argument=True)
    monkeypatch.setenv('AMENT_PREFIX_PATH', os.pathsep.join([str(prefix), os.environ['AMENT_PREFIX_PATH']]))


def _driver_arguments(visit: Visit) -> list[str]:
    return next(given for location, given, _ in visit.includes if Path(location).name == 'ur_control.launch.py')


def test_ur_effort_meaning_follows_use_currents_as_efforts(ur_torques):
    # A driver with the argument gets it explicitly (its own default is torques), and the nodes read what it
    # was asked for: motor current by default, UR's gravity-compensated torque with false.
    for value, meaning in (('true', 'current'), ('false', 'gravity_compensated_torque')):
        visit = Visit('ur.launch.py', {'robot_ip': '10.0.0.2', 'use_currents_as_efforts': value})
        check_includes(visit)
        assert 'use_currents_as_efforts' in _driver_arguments(visit)
        assert check_effort(visit) == meaning


def test_ur_launch_with_a_driver_without_the_scaled_trajectory_controller(tmp_path, monkeypatch):
    # The driver's PR #1769 (main) removed scaled_joint_trajectory_controller: its own controllers file and its
    # position joint_trajectory_controller are used, and no feedforward_node runs on it by default.
    prefix = vendor_prefix(tmp_path / 'vendors_upstream', ur_upstream=True)
    monkeypatch.setenv('AMENT_PREFIX_PATH', os.pathsep.join([str(prefix), os.environ['AMENT_PREFIX_PATH']]))
    visit = Visit('ur.launch.py', {'robot_ip': '10.0.0.2'})
    check_includes(visit)
    given = next(include for include in visit.includes if Path(include[0]).name == 'ur_control.launch.py')
    assert 'controllers_file' in given[1]
    assert visit.spawned()['joint_trajectory_controller'] is True
    assert 'feedforward_node' not in {name.rsplit('/', 1)[-1] for name in visit.dynid_nodes()}
    assert check_effort(visit) == 'current'


def test_ur_torques_from_a_driver_without_the_argument_are_refused():
    visit = Visit('ur.launch.py', {'robot_ip': '10.0.0.2'})  # the default: current, which every driver gives
    assert 'use_currents_as_efforts' not in _driver_arguments(visit)  # not declared there: not passed
    with pytest.raises(RuntimeError, match='has no such argument'):
        Visit('ur.launch.py', {'robot_ip': '10.0.0.2', 'use_currents_as_efforts': 'false'})


@pytest.mark.parametrize('arguments, reason', [
    ({'feedforward': 'trajectory'}, 'needs a trajectory controller that commands effort'),
    ({'initial_joint_controller': 'joint_trajectory_controller'}, 'no effort command interface'),
    ({'initial_joint_controller': 'joint_trajectory_controller', 'feedforward': 'streaming'},
     'no effort command interface'),
])
def test_ur_torque_wiring_without_its_prerequisites_is_refused(arguments, reason):
    with pytest.raises(RuntimeError, match=reason):
        Visit('ur.launch.py', {'robot_ip': '10.0.0.2', **arguments})


def test_franka_launch_matches_franka_bringup():
    visit = Visit('franka.launch.py', {'namespace': 'fr3'}) if _has_xacro() else \
        Visit('franka.launch.py', {'namespace': 'fr3', 'robot_description': _chain('fr3', franka_joints('fr3'))})
    check_includes(visit)
    assert 'franka.launch.py' in [Path(location).name for location, _, _ in visit.includes]
    types, _ = check_controllers('franka_controllers.yaml', franka_joints('fr3'))
    spawned = visit.spawned()
    assert set(spawned) <= set(types), set(spawned) - set(types)
    check_remappings(visit, types, joint_states='franka/joint_states')
    assert all(name.startswith('/fr3/') for name in visit.dynid_nodes())
    jsb = [n for n in visit.nodes if 'joint_state_broadcaster' in visit.node_arguments(n)]
    assert '--remap joint_states:=franka/joint_states' in visit.node_arguments(jsb[0])
    assert check_effort(visit) == 'torque'  # measured link torque τ_J


@pytest.mark.parametrize('robot, joints', [('ur5e', UR_JOINTS), ('panda', franka_joints('fer'))])
def test_gazebo_launch_matches_ros_gz_and_gz_ros2_control(robot, joints):
    pytest.importorskip('xacro')
    visit = Visit('gazebo.launch.py', {'robot': robot, 'gazebo_gui': 'false'})
    check_includes(visit)
    assert 'gz_sim.launch.py' in [Path(location).name for location, _, _ in visit.includes]
    types, _ = check_controllers(f'gazebo_{robot}_controllers.yaml', joints)
    spawned = visit.spawned()
    assert spawned == {'joint_state_broadcaster': True, 'joint_trajectory_controller': True,
                       'forward_effort_controller': False}
    check_remappings(visit, types)
    publisher = next(n for n in visit.nodes if n.node_package == 'robot_state_publisher')
    import xml.etree.ElementTree as ElementTree
    parameters = yaml.safe_load(Path(_parameter_files(visit, publisher)[0]).read_text())
    urdf = ElementTree.fromstring(next(iter(parameters.values()))['ros__parameters']['robot_description'])
    control = urdf.find('ros2_control')
    assert control.find('hardware/plugin').text == 'gz_ros2_control/GazeboSimSystem'
    assert [j.get('name') for j in control.findall('joint')] == joints
    assert all(j.find('command_interface').get('name') == 'effort' for j in control.findall('joint'))
    plugin = urdf.find('gazebo/plugin')
    assert plugin.get('filename') == 'gz_ros2_control-system'
    assert plugin.find('parameters').text.endswith(f'config/gazebo_{robot}_controllers.yaml')
    assert check_effort(visit) == 'torque'


@pytest.mark.parametrize('robot, joints', [('ur5e', UR_JOINTS), ('panda', franka_joints('fer'))])
def test_mujoco_launch_matches_mujoco_ros2_control(robot, joints):
    """mujoco.launch.py: the hardware plugin and parameters of ros-controls/mujoco_ros2_control
    (docs/hardware_interface.rst), its ros2_control_node, and an MJCF MuJoCo compiles with a motor per joint."""
    pytest.importorskip('xacro')
    mujoco = pytest.importorskip('mujoco')
    import xml.etree.ElementTree as ElementTree
    visit = Visit('mujoco.launch.py', {'robot': robot})
    check_includes(visit)
    types, _ = check_controllers(f'mujoco_{robot}_controllers.yaml', joints)
    assert visit.spawned() == {'joint_state_broadcaster': True, 'joint_trajectory_controller': True,
                               'forward_effort_controller': False}
    check_remappings(visit, types)
    control_node = next(n for n in visit.nodes if n.node_package == 'mujoco_ros2_control')
    assert control_node.node_executable == 'ros2_control_node'
    files = _parameter_files(visit, control_node)
    assert any(path.endswith(f'config/mujoco_{robot}_controllers.yaml') for path in files)
    publisher = next(n for n in visit.nodes if n.node_package == 'robot_state_publisher')
    parameters = yaml.safe_load(Path(_parameter_files(visit, publisher)[0]).read_text())
    urdf = ElementTree.fromstring(next(iter(parameters.values()))['ros__parameters']['robot_description'])
    control = urdf.find('ros2_control')
    assert control.find('hardware/plugin').text == 'mujoco_ros2_control/MujocoSystemInterface'
    hardware = {p.get('name'): p.text for p in control.findall('hardware/param')}
    assert hardware['headless'] == 'true'
    assert [j.get('name') for j in control.findall('joint')] == joints
    assert all(j.find('command_interface').get('name') == 'effort' for j in control.findall('joint'))
    model = mujoco.MjModel.from_xml_path(hardware['mujoco_model'])
    names = [model.actuator(k).name for k in range(model.nu)]
    assert names == joints and all(model.actuator(k).biastype[0] == 0 for k in range(model.nu))  # motors
    assert all(model.joint(name).armature[0] > 0 for name in joints)
    assert check_effort(visit) == 'torque'


def _has_xacro() -> bool:
    try:
        import xacro  # noqa: F401
    except ImportError:
        return False
    return True


def _chain(name: str, joints: list[str]) -> str:
    from vendor_stand_ins import chain_xacro
    return chain_xacro(name, joints, []).replace(' xmlns:xacro="http://www.ros.org/wiki/xacro"', '')


def _parameter_files(visit: Visit, node: Node) -> list[str]:
    """The parameter files ``node`` would be started with (launch_ros writes its dicts to files)."""
    return [path for path, is_file in node._Node__expanded_parameter_arguments if is_file]


@pytest.mark.parametrize('launch_file, arguments', [
    ('sim.launch.py', {'robot': 'ur16e', 'namespace': 'twin'}),
    ('sim.launch.py', {'namespace': 'twin'}),  # robot left empty: the twin's default, ur5e
    ('suite.launch.py', {'robot': 'ur3e', 'use_sim': 'true'}),
])
def test_twin_of_a_builtin_dh_robot_gets_its_urdf(tmp_path, monkeypatch, launch_file, arguments):
    from dynid.model import RobotModel, load_robot
    from dynid.model.dh_urdf import torque_agreement

    mark_package(tmp_path, 'robot_state_publisher')  # found in the ament index (never started)
    monkeypatch.setenv('AMENT_PREFIX_PATH', os.pathsep.join([str(tmp_path), os.environ['AMENT_PREFIX_PATH']]))
    visit = Visit(launch_file, arguments)
    publisher = next(n for n in visit.nodes if n.node_package == 'robot_state_publisher')
    parameters = yaml.safe_load(Path(_parameter_files(visit, publisher)[0]).read_text())
    description = next(iter(parameters.values()))['ros__parameters']['robot_description']
    robot = arguments.get('robot', 'ur5e')
    builtin, urdf = load_robot(robot), RobotModel.from_urdf(description)
    assert urdf.joint_names == builtin.joint_names and urdf.flange == 'tool0'
    assert torque_agreement(builtin, urdf) < 1e-9


@pytest.mark.parametrize('launch_file, arguments, record', [
    ('estimation.launch.py', {'robot': 'ur16e'}, 'ur16e-twin'),
    ('estimation.launch.py', {}, 'ur5e-twin'),  # robot left empty: the twin's default, ur5e
    ('estimation.launch.py', {'robot': 'ur16e', 'use_sim': 'false'}, None),  # a real arm: the model's name
    ('suite.launch.py', {'robot': 'ur3e', 'use_sim': 'true'}, 'ur3e-twin'),
    ('suite.launch.py', {'robot': 'ur3e'}, None),
])
def test_estimator_beside_the_twin_keeps_its_own_health_record(launch_file, arguments, record):
    # As dynid bringup does: the twin's sessions never join a real arm's in the health record.
    visit = Visit(launch_file, {**arguments, 'robot_state_publisher': 'false'})
    estimator = next(node for name, node in visit.dynid_nodes().items() if name.endswith('/estimator_node'))
    assert node_parameter(visit, estimator, 'health_robot') == record
