"""dynid's backend launch files against the vendors' real files: includes, arguments, controllers, joints, runs.

    python -m benchmarks.bench_vendor VENDOR_DIR... [--seconds 30] [--backends ur,franka,gazebo_ur5e,...]

VENDOR_DIR: git checkouts of the vendors' sources (never part of dynid), each searched for packages
(``package.xml``); the JSON line names each folder's branch and commit. Fetch one set per ROS 2 distribution,
e.g. into ~/vendors/jazzy (DISTRO: ``jazzy``; for Kilted the UR driver, ros2_controllers and ros2_control at
``kilted``; for Lyrical the UR driver at ``lyrical`` and ros2_controllers, ros2_control at ``master``)::

    git clone -b DISTRO https://github.com/UniversalRobots/Universal_Robots_ROS2_Driver
    git clone https://github.com/UniversalRobots/Universal_Robots_ROS2_Description
    git clone -b jazzy https://github.com/frankarobotics/franka_ros2
    git clone https://github.com/frankarobotics/franka_description
    git clone -b jazzy https://github.com/ros-controls/gz_ros2_control       # rolling beyond Jazzy
    git clone -b jazzy https://github.com/gazebosim/ros_gz                   # ros2 beyond Jazzy
    git clone https://github.com/ros-controls/mujoco_ros2_control
    git clone -b DISTRO https://github.com/ros-controls/ros2_controllers
    git clone -b DISTRO https://github.com/ros-controls/ros2_control
    git clone -b jazzy https://github.com/ros2/launch    # rolling beyond Jazzy; its data files (the grammar)
    git clone -b jazzy https://github.com/ros2/launch_ros

and run it from this tree's root in a throwaway Python environment that has dynid (``pip install -e .``) and,
installed with ``pip install --no-deps`` from ros2/launch and ros2/launch_ros, the packages launch, launch_xml,
launch_yaml and launch_ros, plus
``osrf-pycommon``, ``lark``, ``xacro`` and ``catkin-pkg`` from PyPI and an importable ``composition_interfaces``
(an empty stand-in with ``srv.LoadNode``, ``UnloadNode``, ``ListNodes`` classes suffices): launch and launch_ros
are not on PyPI (the name ``launch`` there is an unrelated project). ros2cli's ``ros2pkg``, which ros_gz_sim's
launch file imports, is stood in for (package names from the ament index) where it is not installed; a package
the launch files look up that no vendor folder holds (ur_client_library) gets an empty share folder.

What it does, per backend (``ur``: ur.launch.py; ``franka``: franka.launch.py; ``gazebo_ur5e``, ``gazebo_panda``:
gazebo.launch.py robot:=ur5e|panda gazebo_gui:=false; ``mujoco_ur5e``, ``mujoco_panda``: mujoco.launch.py
robot:=ur5e|panda, which also needs the ``mujoco`` package to write its MJCF), with the default arguments:

1. installs the vendors' packages into a scratch ament prefix (their share folders; ros_gz_sim's
   ``gz_sim.launch.py`` configured from its ``.in`` as its CMake does) beside dynid's, with **stub
   executables** for every program the launch files start (the vendors' C++ nodes, ``gz``): they stay up, and
   three act their part: ``robot_state_publisher`` publishes its ``robot_description``, the ``spawner`` of
   ``joint_state_broadcaster`` publishes the description's joints at 100 Hz (remapped as its
   ``--controller-ros-args`` say) and the spawners of trajectory controllers subscribe to their
   ``joint_trajectory``, and ``parameter_bridge`` (mujoco_ros2_control's ``ros2_control_node``) publishes ``/clock``;
2. visits the launch file with the real launch tooling (no process started): resolves every include with the
   arguments dynid passes (each argument must be declared by the included file and within its ``choices``);
   checks the controllers dynid's controllers files declare against the plugin XMLs of the vendors'
   packages, and their joints against the joints of the vendors' expanded xacros;
3. starts the backend (an isolated ROS domain, localhost only) and, once every dynid node is up, runs it
   ``--seconds``: calls excitation_node's ``~/start`` once the joint states come, and counts the trajectory
   messages that reach the controller's topic (through feedforward_node where it is in the path) and the dynid
   nodes that exit before the end.

Ends with one JSON line: {"benchmark": "vendor", "includes_ok": N, "arguments_undeclared": 0,
"controller_types_unknown": 0, "nodes_exited": 0, "excitation_reaches_controller": {...}, "vendors": {folder:
"branch@commit"}} and more counts.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import json
import os
import random
import signal
import stat
import subprocess
import sys
import tempfile
import textwrap
import time
import xml.etree.ElementTree as ElementTree
from pathlib import Path
from typing import TYPE_CHECKING

import yaml

from testing.launch_prefix import dynid_prefix, mark_package

ROOT = Path(__file__).resolve().parents[1]

if TYPE_CHECKING:
    from testing.launch_visit import Visit  # imported where launch is known to be installed (visit_with_empty_packages)

BACKENDS = {
    'ur': ('ur.launch.py', {}),
    'franka': ('franka.launch.py', {}),
    'gazebo_ur5e': ('gazebo.launch.py', {'robot': 'ur5e', 'gazebo_gui': 'false'}),
    'gazebo_panda': ('gazebo.launch.py', {'robot': 'panda', 'gazebo_gui': 'false'}),
    'mujoco_ur5e': ('mujoco.launch.py', {'robot': 'ur5e'}),
    'mujoco_panda': ('mujoco.launch.py', {'robot': 'panda'}),
}
#: the controllers file and the vendor xacro (package, path, mappings) whose joints it names, per backend
CONTROLLERS = {
    'ur': ('ur_controllers.yaml', ('ur_description', 'urdf/ur.urdf.xacro', {'ur_type': 'ur5e', 'name': 'ur'})),
    'franka': ('franka_controllers.yaml', ('franka_description', 'robots/fr3/fr3.urdf.xacro',
                                           {'robot_type': 'fr3', 'hand': 'false'})),
    'gazebo_ur5e': ('gazebo_ur5e_controllers.yaml', ('ur_description', 'urdf/ur.urdf.xacro',
                                                     {'ur_type': 'ur5e', 'name': 'ur'})),
    'gazebo_panda': ('gazebo_panda_controllers.yaml', ('franka_description', 'robots/fer/fer.urdf.xacro',
                                                       {'robot_type': 'fer', 'hand': 'false', 'gazebo': 'true'})),
    'mujoco_ur5e': ('mujoco_ur5e_controllers.yaml', ('ur_description', 'urdf/ur.urdf.xacro',
                                                     {'ur_type': 'ur5e', 'name': 'ur'})),
    'mujoco_panda': ('mujoco_panda_controllers.yaml', ('franka_description', 'robots/fer/fer.urdf.xacro',
                                                       {'robot_type': 'fer', 'hand': 'false', 'gazebo': 'true'})),
}
PROGRAMS = ('gz', 'ign', 'ruby')  # what ExecuteProcess runs by name (ros_gz_sim's gz_sim.launch.py)
STARTUP_S = 120.0  # the longest the dynid nodes may take to come up (not part of the run)

STUB = '''#!{python}
"""Stand-in for {package}/{executable}: stays up; acts its part where a backend's wiring needs it."""
import math, re, signal, sys, threading, time, xml.etree.ElementTree as ET

EXECUTABLE = {executable!r}
ros_args = sys.argv[sys.argv.index('--ros-args'):] if '--ros-args' in sys.argv else []
words = sys.argv[1:len(sys.argv) - len(ros_args)]
signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
CLOCK = EXECUTABLE == 'parameter_bridge' and any(w.startswith('/clock@') for w in words) or (
    {package!r} == 'mujoco_ros2_control' and EXECUTABLE == 'ros2_control_node')  # MuJoCo's publishes /clock
if EXECUTABLE not in ('robot_state_publisher', 'spawner') and not CLOCK:
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        sys.exit(0)

import rclpy
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy

rclpy.init(args=['stub', *ros_args])
node = Node(EXECUTABLE.replace('-', '_') + '_stub', automatically_declare_parameters_from_overrides=True)
latched = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL, reliability=ReliabilityPolicy.RELIABLE)

if EXECUTABLE == 'robot_state_publisher':
    from std_msgs.msg import String
    publisher = node.create_publisher(String, 'robot_description', latched)
    publisher.publish(String(data=node.get_parameter('robot_description').value))

elif CLOCK:
    from rosgraph_msgs.msg import Clock
    clock = node.create_publisher(Clock, '/clock', 10)
    def tick():
        now = time.time()
        message = Clock()
        message.clock.sec, message.clock.nanosec = int(now), int((now % 1) * 1e9)
        clock.publish(message)
    from rclpy.clock import Clock as SteadyClock, ClockType
    node.create_timer(0.01, tick, clock=SteadyClock(clock_type=ClockType.STEADY_TIME))  # on sim time itself: steady

elif EXECUTABLE == 'spawner':
    from sensor_msgs.msg import JointState
    from std_msgs.msg import String
    from trajectory_msgs.msg import JointTrajectory
    skip = {{'-c', '--controller-manager', '--controller-manager-timeout', '-p', '--param-file', '--controller-type',
            '-t', '--switch-timeout', '--service-call-timeout', '-n', '--namespace', '--controller-ros-args'}}
    names, remaps, i = [], {{}}, 0
    while i < len(words):
        if words[i] == '--controller-ros-args' and i + 1 < len(words):
            remaps.update(re.findall(r'(?:--remap|-r)\\s+([^\\s:]+):=(\\S+)', words[i + 1]))
        if words[i] in skip:
            i += 2
            continue
        if not words[i].startswith('-'):
            names.append(words[i])
        i += 1
    active = '--inactive' not in words
    state = {{'joints': None}}
    if active and 'joint_state_broadcaster' in names:
        topic = remaps.get('joint_states', 'joint_states')
        states = node.create_publisher(JointState, topic, 10)
        def description(message):
            root = ET.fromstring(message.data)
            joints, home = [], []
            for joint in root.iter('joint'):
                if joint.get('type') in ('revolute', 'continuous', 'prismatic'):
                    limit = joint.find('limit')
                    low = float(limit.get('lower', 0)) if limit is not None else 0.0
                    high = float(limit.get('upper', 0)) if limit is not None else 0.0
                    joints.append(joint.get('name'))
                    home.append(0.5 * (low + high) if math.isfinite(low + high) else 0.0)
            state['joints'] = (joints, home)
        node.create_subscription(String, 'robot_description', description, latched)
        def publish():
            if state['joints'] is None:
                return
            joints, home = state['joints']
            message = JointState(name=joints, position=home, velocity=[0.0] * len(joints), effort=[0.0] * len(joints))
            message.header.stamp = node.get_clock().now().to_msg()
            states.publish(message)
        node.create_timer(0.01, publish)
    received = {{}}
    for name in names:
        if active and name.endswith('trajectory_controller'):
            node.create_subscription(JointTrajectory, f'{{name}}/joint_trajectory',
                                     lambda m, name=name: received.__setitem__(name, received.get(name, 0) + 1), 10)
try:
    rclpy.spin(node)
except (KeyboardInterrupt, Exception):
    pass
'''

RUNNER = '''
import json, sys, time
from launch import LaunchDescription, LaunchService
from launch.actions import IncludeLaunchDescription, RegisterEventHandler
from launch.event_handlers import OnProcessExit
from launch.launch_description_sources import PythonLaunchDescriptionSource

path, arguments = sys.argv[1], json.loads(sys.argv[2])

def exited(event, context):
    command = ' '.join(str(part) for part in event.cmd)
    if '/lib/dynid/' in command:
        print('DYNID_EXIT ' + json.dumps({'name': event.action.name, 'returncode': event.returncode,
                                          'time': time.time()}), flush=True)

service = LaunchService(noninteractive=True)
service.include_launch_description(LaunchDescription([
    RegisterEventHandler(OnProcessExit(on_exit=exited)),
    IncludeLaunchDescription(PythonLaunchDescriptionSource(path), launch_arguments=arguments.items())]))
sys.exit(service.run())  # until SIGINT
'''


def find_packages(folders: list[Path]) -> dict[str, Path]:
    """{package name: its folder} of every package.xml under the vendor folders (tests and .git left out)."""
    packages = {}
    for folder in folders:
        for manifest in sorted(folder.rglob('package.xml')):
            if any(part in ('.git', 'test', 'tests') for part in manifest.relative_to(folder).parts[:-1]):
                continue
            name = ElementTree.parse(manifest).getroot().findtext('name')
            if name and name not in packages:
                packages[name] = manifest.parent
    return packages


def vendor_versions(folders: list[Path]) -> dict[str, str]:
    """{folder name: 'branch@short commit'} of each vendor folder, read with git ('detached@…' off a branch;
    'unknown' where the folder is not a git checkout or git is missing)."""
    def git(folder: Path, *words: str) -> str:
        return subprocess.run(['git', '-C', str(folder), *words], capture_output=True, text=True,
                              check=True, timeout=30).stdout.strip()

    versions = {}
    for folder in folders:
        try:
            if git(folder, 'rev-parse', '--show-toplevel') != str(folder.resolve()):
                raise ValueError('inside another checkout')
            branch = git(folder, 'rev-parse', '--abbrev-ref', 'HEAD')
            commit = git(folder, 'rev-parse', '--short', 'HEAD')
            versions[folder.name] = f'{"detached" if branch == "HEAD" else branch}@{commit}'
        except (OSError, ValueError, subprocess.SubprocessError):
            versions[folder.name] = 'unknown'
    return versions


def install(prefix: Path, packages: dict[str, Path]) -> None:
    """The vendors' share folders (links to their files; ``*.in`` launch files configured) and dynid's."""
    for package, folder in packages.items():
        share = mark_package(prefix, package)
        for entry in folder.iterdir():
            if entry.name in ('launch', 'urdf') and entry.is_dir():  # real folders: configured files may join
                (share / entry.name).mkdir(exist_ok=True)
                for item in entry.iterdir():
                    target = share / entry.name / item.name
                    if item.suffix == '.in':
                        configured = share / entry.name / item.name[:-3]
                        configured.write_text(item.read_text().replace('@GZ_SIM_VER@', '8'))
                    elif not target.exists():
                        target.symlink_to(item)
            elif not (share / entry.name).exists():
                (share / entry.name).symlink_to(entry)
        installed = folder / 'share' / package  # an ament_python package's data files (launch's grammar.lark)
        for entry in installed.iterdir() if installed.is_dir() else ():
            if not (share / entry.name).exists():
                (share / entry.name).symlink_to(entry)
    dynid_prefix(prefix)  # this tree's dynid: share links and node scripts, as the launch tests have it


def script(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)


def stub(prefix: Path, package: str, executable: str) -> None:
    path = prefix / 'lib' / package / executable
    if package != 'dynid' and not path.exists():
        mark_package(prefix, package)  # the ament index finds it (rviz2, robot_state_publisher: in no vendor folder)
        script(path, STUB.format(python=sys.executable, package=package, executable=executable))


def ros2pkg_stand_in(prefix: Path) -> str | None:
    """Where ros2cli's ``ros2pkg`` is not installed (ros_gz_sim's gz_sim.launch.py takes the package names from
    ``ros2pkg.api.get_package_names``), a folder with a module giving them from the ament index, for the launched
    processes' PYTHONPATH, and that module loaded in this process as ``ros2pkg`` (the launch files are visited
    here); else None."""
    try:
        import ros2pkg.api  # noqa: F401
        return None
    except ImportError:
        folder = prefix / 'python'
        script(folder / 'ros2pkg' / '__init__.py', '')
        script(folder / 'ros2pkg' / 'api' / '__init__.py',
               'from ament_index_python.packages import get_packages_with_prefixes\n\n\n'
               'def get_package_names():\n    return get_packages_with_prefixes().keys()\n')
        package = folder / 'ros2pkg'
        spec = importlib.util.spec_from_file_location('ros2pkg', package / '__init__.py',
                                                      submodule_search_locations=[str(package)])
        sys.modules['ros2pkg'] = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(sys.modules['ros2pkg'])
        importlib.import_module('ros2pkg.api')  # found through the package's own folder
        return str(folder)


def visit_with_empty_packages(launch_file: Path, arguments: dict, prefix: Path, empty: list[str]) -> Visit:
    """The visit of a launch file; a package it looks up that no vendor folder has (ur_client_library, whose
    share holds the URScript and recipes the driver reads) gets an empty share folder, named in ``empty``."""
    from ament_index_python.packages import PackageNotFoundError

    from testing.launch_visit import Visit

    while True:
        try:
            return Visit(launch_file, arguments)
        except PackageNotFoundError as error:
            missing = str(error).split("'")[1]
            if missing in empty or len(empty) > 20:
                raise
            mark_package(prefix, missing)
            empty.append(missing)


def plugin_types(packages: dict[str, Path]) -> set[str]:
    """Every class name the vendors' pluginlib XMLs declare."""
    types = set()
    for folder in packages.values():
        for path in folder.glob('*.xml'):
            if path.name == 'package.xml':
                continue
            try:
                root = ElementTree.parse(path).getroot()
            except ElementTree.ParseError:
                continue
            types |= {element.get('name') for element in root.iter('class') if element.get('name')}
    return types


def controllers_file(name: str, packages: dict[str, Path]) -> Path:
    """The controllers file ``name``'s launch file passes: dynid's, but on a UR driver without UR's scaled trajectory
    controller (its PR #1769: lyrical branch, main) the driver's own, as ur.launch.py does."""
    if name == 'ur' and 'ur_robot_driver' in packages:
        launch = packages['ur_robot_driver'] / 'launch' / 'ur_control.launch.py'
        if launch.is_file() and 'scaled_joint_trajectory_controller' not in launch.read_text():
            return packages['ur_robot_driver'] / 'config' / 'ur_controllers.yaml'
    return ROOT / 'config' / CONTROLLERS[name][0]


def controllers_of(path: Path) -> tuple[dict[str, str], set[str]]:
    """({controller: type}, joints named anywhere) of a controllers file (``$(var tf_prefix)``: '')."""
    document = yaml.safe_load(Path(path).read_text().replace('$(var tf_prefix)', ''))
    document = document.get('/**', document)
    manager = document['controller_manager']['ros__parameters']
    types = {key: value['type'] for key, value in manager.items() if isinstance(value, dict) and 'type' in value}
    joints = {joint for key, value in document.items() if key != 'controller_manager'
              for joint in (value or {}).get('ros__parameters', {}).get('joints', [])}
    return types, joints


def xacro_joints(packages: dict[str, Path], package: str, path: str, mappings: dict) -> set[str]:
    import xacro
    root = ElementTree.fromstring(xacro.process_file(str(packages[package] / path), mappings=mappings).toxml())
    return {joint.get('name') for joint in root.iter('joint') if joint.get('type') not in (None, 'fixed')}


def static_checks(name: str, visit: Visit, packages: dict[str, Path], plugins: set[str]) -> dict:
    given_undeclared = sum(len(set(given) - set(declared)) for _, given, declared in visit.includes)
    controllers, joints = controllers_of(controllers_file(name, packages))
    unknown = sorted({t for t in controllers.values() if t not in plugins})
    described = xacro_joints(packages, *CONTROLLERS[name][1])
    return {'includes': len(visit.includes), 'undeclared': given_undeclared, 'unknown_types': unknown,
            'spawned_not_declared': sorted(set(visit.spawned()) - set(controllers)),
            'joints_not_in_description': sorted(joints - described)}


def controller_topic(visit: Visit) -> str:
    """The controller topic the excitation ends on: excitation_node's trajectory topic as rcl resolves its rules,
    through feedforward_node where it is in the path."""
    from dynid.ros.wiring import JTC_TOPIC, resolve

    nodes = {node.node_name.rsplit('/', 1)[-1]: node for node in visit.nodes if node.node_package == 'dynid'}
    excitation = nodes['excitation_node']
    namespace = excitation.node_name.rsplit('/', 1)[0]
    target = resolve([tuple(r) for r in excitation.expanded_remapping_rules or []], JTC_TOPIC)
    if target == 'feedforward_node/reference':
        target = resolve([tuple(r) for r in nodes['feedforward_node'].expanded_remapping_rules or []], JTC_TOPIC)
    return f'{namespace}/{target}'


def run(launch_file: Path, arguments: dict, visit: Visit, seconds: float, env: dict) -> dict:
    """Start the backend; once every dynid node is up, run it ``seconds`` more, calling excitation_node's ``~/start``
    once joint states come and counting what reaches the controller's topic; then stop it. Did every dynid node
    stay up until then?"""
    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.qos import qos_profile_sensor_data
    from sensor_msgs.msg import JointState
    from std_srvs.srv import Trigger
    from trajectory_msgs.msg import JointTrajectory

    from dynid.ros.wiring import resolve

    topic = controller_topic(visit)
    dynid = [node for node in visit.nodes if node.node_package == 'dynid']
    names = sorted(node.node_name for node in dynid)
    namespace = topic.rsplit('/', 2)[0]
    joint_states = resolve([tuple(r) for r in dynid[0].expanded_remapping_rules or []], 'joint_states')
    runner = subprocess.Popen([sys.executable, '-c', RUNNER, str(launch_file), json.dumps(arguments)], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)
    context = rclpy.Context()
    rclpy.init(context=context, domain_id=int(env['ROS_DOMAIN_ID']))
    probe = rclpy.create_node('bench_vendor_probe', context=context)
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(probe)
    counts = {'trajectories': 0, 'states': 0}
    probe.create_subscription(JointTrajectory, topic, lambda _: counts.__setitem__('trajectories',
                                                                                   counts['trajectories'] + 1), 10)
    probe.create_subscription(JointState, f'{namespace}/{joint_states}', lambda _: counts.__setitem__(
        'states', counts['states'] + 1), qos_profile_sensor_data)
    start = probe.create_client(Trigger, f'{namespace}/excitation_node/start')
    started, answer, up_s = False, '', None
    begin = time.monotonic()
    try:
        while up_s is None and time.monotonic() < begin + STARTUP_S:  # the nodes' start-up is not counted
            executor.spin_once(timeout_sec=0.2)
            seen = {f'{ns.rstrip("/")}/{n}' for n, ns in probe.get_node_names_and_namespaces()}
            up_s = time.monotonic() - begin if set(names) <= seen else None
        end = time.monotonic() + seconds
        while up_s is not None and time.monotonic() < end:
            executor.spin_once(timeout_sec=0.1)
            if not started and counts['states'] and start.service_is_ready():
                future = start.call_async(Trigger.Request())
                while not future.done() and time.monotonic() < end:
                    executor.spin_once(timeout_sec=0.1)
                if future.done():
                    started, answer = future.result().success, future.result().message
    finally:
        stopped = time.time()
        executor.shutdown()
        probe.destroy_node()
        rclpy.try_shutdown(context=context)
        os.killpg(runner.pid, signal.SIGINT)
    try:
        output, _ = runner.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(runner.pid, signal.SIGKILL)
        output, _ = runner.communicate()
    try:  # what outlived the launch (a process that ignored SIGINT) goes too
        os.killpg(runner.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    lines = output.splitlines()
    exits = [json.loads(line.split(' ', 1)[1]) for line in lines if line.startswith('DYNID_EXIT ')]
    exits = [e for e in exits if e['time'] < stopped]
    return {'controller_topic': topic, 'dynid_nodes': names, 'up_after_s': up_s, 'joint_states_seen': counts['states'],
            'start': answer if started else f'not started ({answer or "no joint_states or no ~/start in time"})',
            'trajectories_at_controller': counts['trajectories'], 'nodes_exited': exits,
            'log_tail': lines[-15:] if exits or not counts['trajectories'] or up_s is None else []}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('vendors', nargs='*', type=Path, help="folders of the vendors' sources (git checkouts)")
    parser.add_argument('--seconds', type=float, default=30.0, help='how long each backend runs [s]')
    parser.add_argument('--backends', default=','.join(BACKENDS), help='comma-separated, of ' + ', '.join(BACKENDS))
    args = parser.parse_args(argv)
    if not args.vendors:  # make bench runs every benchmark without arguments
        print("bench_vendor: skipped: give the folders of the vendors' sources (python -m benchmarks.bench_vendor "
              '--help says which)')
        print(json.dumps({'benchmark': 'vendor', 'skipped': 'no vendor folders given'}))
        return 0
    try:
        import launch  # noqa: F401
        import launch_ros  # noqa: F401
        import xacro  # noqa: F401
    except ImportError as error:
        print(f'bench_vendor: {error}: install launch, launch_ros (ros2/launch, ros2/launch_ros) and xacro in a '
              f'throwaway environment (module docstring)', file=sys.stderr)
        return 2
    packages = find_packages([folder.resolve() for folder in args.vendors])
    needed = {'ur_robot_driver', 'ur_description', 'franka_bringup', 'franka_description', 'ros_gz_sim', 'launch'}
    if needed - set(packages):
        print(f'bench_vendor: the vendor folders lack {sorted(needed - set(packages))}', file=sys.stderr)
        return 2
    prefix = Path(tempfile.mkdtemp(prefix='bench_vendor_prefix_'))
    install(prefix, packages)
    bin_dir = prefix / 'bin'
    for program in PROGRAMS:
        script(bin_dir / program, STUB.format(python=sys.executable, package='bin', executable=program))
    import xacro
    scripts = [str(Path(sys.executable).parent), str(Path(xacro.__file__).resolve().parents[1] / 'bin')]  # xacro's
    env = dict(os.environ, AMENT_PREFIX_PATH=os.pathsep.join([str(prefix), os.environ.get('AMENT_PREFIX_PATH', '')]),
               PATH=os.pathsep.join([str(bin_dir), *scripts, os.environ.get('PATH', '')]),
               ROS_AUTOMATIC_DISCOVERY_RANGE='LOCALHOST', PYTHONUNBUFFERED='1',
               ROS_DOMAIN_ID=str(random.Random(os.getpid()).randrange(150, 230)))
    os.environ.update({key: env[key] for key in ('AMENT_PREFIX_PATH', 'PATH', 'ROS_AUTOMATIC_DISCOVERY_RANGE',
                                                 'ROS_DOMAIN_ID')})
    helpers = ros2pkg_stand_in(prefix)
    if helpers:
        env['PYTHONPATH'] = os.pathsep.join([helpers, env.get('PYTHONPATH', '')])
    plugins = plugin_types(packages)
    report, reached, exited, empty = {}, {}, 0, []
    totals = {'includes_ok': 0, 'arguments_undeclared': 0, 'arguments_refused': 0, 'controller_types_unknown': 0,
              'controllers_spawned_not_declared': 0, 'joints_not_in_description': 0}
    for name in [b for b in args.backends.split(',') if b]:
        launch_file, arguments = BACKENDS[name]
        launch_file = ROOT / 'launch' / launch_file
        try:
            visit = visit_with_empty_packages(launch_file, arguments, prefix, empty)
        except Exception as error:  # noqa: BLE001 - a refused argument or a broken include is what this counts
            report[name] = {'visit_error': f'{type(error).__name__}: {error}'}
            totals['arguments_refused'] += 1
            reached[name] = False
            continue
        for package, executable in visit.programs():
            stub(prefix, package, executable)
        checks = static_checks(name, visit, packages, plugins)
        totals['includes_ok'] += checks['includes']
        totals['arguments_undeclared'] += checks['undeclared']
        totals['controller_types_unknown'] += len(checks['unknown_types'])
        totals['controllers_spawned_not_declared'] += len(checks['spawned_not_declared'])
        totals['joints_not_in_description'] += len(checks['joints_not_in_description'])
        outcome = run(launch_file, arguments, visit, args.seconds, env)
        exited += len(outcome['nodes_exited']) + (outcome['up_after_s'] is None)
        reached[name] = outcome['trajectories_at_controller'] > 0
        report[name] = {**checks, **outcome}
    print(f'{"backend":<14} {"includes":>8} {"undecl.":>7} {"unknown types":>13} {"up after":>8} {"exited":>6} '
          f'{"at controller":>13}  controller topic')
    for name, entry in report.items():
        if 'visit_error' in entry:
            print(f'{name:<14} refused: {entry["visit_error"]}')
            continue
        up = 'never' if entry['up_after_s'] is None else f'{entry["up_after_s"]:.1f} s'
        print(f'{name:<14} {entry["includes"]:>8} {entry["undeclared"]:>7} {len(entry["unknown_types"]):>13} {up:>8} '
              f'{len(entry["nodes_exited"]):>6} {entry["trajectories_at_controller"]:>13}  {entry["controller_topic"]}')
        for key in ('unknown_types', 'spawned_not_declared', 'joints_not_in_description', 'nodes_exited'):
            if entry[key]:
                print(f'    {key}: {entry[key]}')
        print(f'    ~/start: {entry["start"]}')
        for line in entry['log_tail']:
            print(textwrap.shorten(f'    | {line}', 160))
    if empty:
        print(f'packages no vendor folder holds, given an empty share folder: {", ".join(empty)}')
    print(json.dumps({'benchmark': 'vendor', **totals, 'nodes_exited': exited, 'excitation_reaches_controller': reached,
                      'seconds': args.seconds, 'vendors': vendor_versions(args.vendors)}))
    return 0


if __name__ == '__main__':
    sys.exit(main())
