"""dynid where a robot PC has it: run by an interpreter whose own site-packages hold none of its dependencies.

A colcon workspace is commonly combined with a virtual environment, ``pip install --user`` or
``--system-site-packages``: the interpreter that runs the nodes finds pinocchio, example-robot-data and the rest
through a path entry, not in its own ``purelib``. Here that layout is built as a user builds it::

    python3.11 -m venv --without-pip ws
    # ws/lib/python3.11/site-packages/deps.pth:
    import site; site.addsitedir('<this environment's site-packages>')
    <dynid's src folder>

and in it every node executable starts with the vendors' descriptions as ``robot_description`` (UR: example-robot-
data's UR5 from ur_description, named ``ur`` as ur_description names it; Franka: its Panda with the names
franka_description gives the Franka Emika Robot, ``fer_joint1`` …, fingers included) and every ``dynid`` command
does its job. Then the robots are moved where ROS's and pip's other installs put them: only under an ament prefix's
``share/example-robot-data/robots`` (``AMENT_PREFIX_PATH``), and only in the user's site folder (``pip install
--user``). The ROS libraries are found as the test's own environment finds them (a sourced ROS setup file, or the
ROS wheels' bootstrap).
"""

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
import rclpy
import yaml

from dds_helpers import STARTUP_S, STOP_S, ProcessOutput, environment, wait_until
from dynid.model.robots import example_robot_path
from dynid.ros.runner import NODES, interrupt_processes

ROOT = Path(__file__).resolve().parents[1]
SITE = Path(sysconfig.get_paths()['purelib'])  # this environment's site-packages: everything dynid needs
UR5 = 'ur_description/urdf/ur5_robot.urdf'
PANDA = 'panda_description/urdf/panda.urdf'
MISSING = 'example-robot-data is not installed'

#: ``python -c`` program of the workspace interpreter: ``dynid.cli.main`` on each argv of the JSON list argv[1],
#: in order, in one process (dynid imported once); one JSON line per command: exit code, seconds, stderr's end
DRIVER = '''
import contextlib, io, json, sys, time
from dynid.cli import main
for argv in json.loads(sys.argv[1]):
    err, start = io.StringIO(), time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as exit_:
            code = exit_.code
    print(json.dumps({"argv": argv, "code": code, "s": time.perf_counter() - start, "err": err.getvalue()[-1500:]}),
          flush=True)
'''


def make_workspace(folder: Path, *site_folders: Path, system_site_packages: bool = False) -> Path:
    """A ``python3.11 -m venv --without-pip`` interpreter whose ``deps.pth`` adds ``site_folders`` (site.addsitedir:
    their own ``.pth`` files run too) and dynid's src folder; its python."""
    base = getattr(sys, '_base_executable', sys.executable)
    subprocess.run([base, '-m', 'venv', '--without-pip', *(['--system-site-packages'] * system_site_packages),
                    str(folder)], check=True, timeout=120)
    python = folder / 'bin' / 'python'
    purelib = subprocess.run([str(python), '-c', 'import sysconfig; print(sysconfig.get_paths()["purelib"])'],
                             capture_output=True, text=True, check=True).stdout.strip()
    lines = [f'import site; site.addsitedir({str(site)!r})' for site in site_folders] + [str(ROOT / 'src')]
    (Path(purelib) / 'deps.pth').write_text('\n'.join(lines) + '\n')
    return python


def workspace_environment(domain: int | None = None, **changes: str) -> dict:
    """The environment of a workspace process: this test's (ROS libraries, isolated domain, the session's data and
    log folders) without PYTHONPATH, which a workspace does not need."""
    env = environment(domain) if domain is not None else dict(os.environ)
    env.pop('PYTHONPATH', None)
    env.update(changes)
    return env


def run_commands(python: Path, commands: list[list[str]], cwd: Path, env: dict, timeout: float = 900.0) -> list:
    """Each ``dynid`` command of ``commands`` in one workspace process (:data:`DRIVER`): their outcomes."""
    done = subprocess.run([str(python), '-c', DRIVER, json.dumps(commands)], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=timeout)
    assert done.returncode == 0, done.stderr[-3000:]
    return [json.loads(line) for line in done.stdout.splitlines() if line.startswith('{')]


def found(python: Path, relative: str, env: dict) -> Path:
    """Where the workspace interpreter finds example-robot-data's file ``relative``."""
    done = subprocess.run([str(python), '-c', f'from dynid.package_files import example_robot_path as p; '
                                              f'print(p({relative!r}))'], capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    return Path(done.stdout.strip())


def failures(outcomes: list) -> list:
    return [(' '.join(o['argv']), o['code'], o['err']) for o in outcomes if o['code'] != 0]


def franka_description(text: str) -> str:
    """example-robot-data's Panda with the joint and link names franka_description gives the Franka Emika Robot
    (``fer_joint1``, ``fer_link8``, ``fer_finger_joint1`` …); mesh paths unchanged."""
    text = re.sub(r'<robot name="[^"]*"', '<robot name="fer"', text, count=1)
    return re.sub(r'((?:name|link)=")panda_', r'\1fer_', text)


@pytest.fixture(scope='module')
def descriptions() -> dict[str, str]:
    """The vendors' descriptions (module docstring) as a driver's robot_state_publisher publishes them."""
    ur = example_robot_path(UR5).read_text().replace('<robot name="ur5"', '<robot name="ur"', 1)
    return {'ur': ur, 'franka': franka_description(example_robot_path(PANDA).read_text())}


@pytest.fixture(scope='module')
def workspace(tmp_path_factory) -> Path:
    """The interpreter of the workspace layout (module docstring)."""
    return make_workspace(tmp_path_factory.mktemp('ws') / 'ws', SITE)


def test_the_workspace_finds_its_dependencies_only_through_the_path_entry(workspace):
    probe = ('import json, sys, sysconfig, pinocchio\n'
             'from dynid.model.robots import example_robot_path\n'
             f'print(json.dumps([sysconfig.get_paths()["purelib"], str(example_robot_path({UR5!r})), '
             'pinocchio.__file__]))')
    done = subprocess.run([str(workspace), '-c', probe], capture_output=True, text=True, env=workspace_environment(),
                          timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    purelib, urdf, pinocchio_file = json.loads(done.stdout.splitlines()[-1])
    assert not (Path(purelib) / 'cmeel.prefix').exists() and not list(Path(purelib).glob('example_robot_data*'))
    assert Path(urdf).is_relative_to(SITE) and Path(pinocchio_file).is_relative_to(SITE)  # through deps.pth


@pytest.mark.parametrize('vendor', ['ur', 'franka'])
def test_every_node_starts_in_the_workspace_with_the_vendors_description(workspace, descriptions, vendor, tmp_path,
                                                                         ros_domain):
    parameters = tmp_path / 'description.yaml'
    parameters.write_text(yaml.safe_dump({'/**': {'ros__parameters': {'robot_description': descriptions[vendor]}}},
                                         width=1 << 30))
    env = workspace_environment(ros_domain)
    processes = [subprocess.Popen([str(workspace), '-m', 'dynid.nodes', node, '--ros-args', '-r', '__ns:=/ws',
                                   '--params-file', str(parameters)], cwd=tmp_path, env=env, stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, text=True) for node in NODES]
    outputs = [ProcessOutput(process) for process in processes]
    context = rclpy.Context()
    rclpy.init(context=context, domain_id=ros_domain)
    try:
        probe = rclpy.create_node('workspace_probe', context=context)
        expected = {(node, '/ws') for node in NODES}

        def up() -> bool:
            return expected <= set(probe.get_node_names_and_namespaces())

        assert wait_until(lambda: up() or any(p.poll() is not None for p in processes), STARTUP_S)
        exited = {node: out.text[-1500:] for node, p, out in zip(NODES, processes, outputs, strict=True)
                  if p.poll() is not None}
        assert not exited, exited
        assert up()
    finally:
        rclpy.shutdown(context=context)
        codes = interrupt_processes(processes, timeout_s=STOP_S)
    texts = {node: out.finish() for node, out in zip(NODES, outputs, strict=True)}
    assert codes == [0] * len(NODES), {node: text[-1500:] for node, text in texts.items()}
    for node, text in texts.items():
        assert 'Traceback' not in text and MISSING not in text, (node, text[-1500:])
    assert 'recognized as the built-in ' + ('ur5' if vendor == 'ur' else 'panda') in texts['excitation_node']


def test_every_command_runs_in_the_workspace(workspace, descriptions, tmp_path, ros_domain):
    for vendor, text in descriptions.items():
        (tmp_path / f'{vendor}.urdf').write_text(text)
    payload = ['--payload-mass', '2', '--payload-com', '0,0,0.05']
    robot = ['--robot', 'ur5']
    commands = [
        ['model', '--robot', 'ur.urdf', '--json'], ['model', '--robot', 'franka.urdf', '--json'],
        ['excite', '--robot', 'ur.urdf', '--harmonics', '3', '--period', '6', '-o', 'traj.yaml'],
        ['simulate', *robot, '--trajectory', 'traj.yaml', '-o', 'rec', '--quiet'],
        ['simulate', *robot, '--trajectory', 'traj.yaml', '--payload', '2', '--payload-com', '0,0,0.05', '--seed', '2',
         '-o', 'held', '--quiet'],
        ['simulate', *robot, '--trajectory', 'traj.yaml', '--log-rate', '100', '--seed', '3', '-o', 'rtde', '--quiet'],
        ['import', 'rtde/log.csv', '--preset', 'ur_rtde', *robot, '-o', 'imported'],
        ['identify', 'rec', *robot, '-o', 'result.yaml', '--force', '--quiet', '--report', 'report'],
        ['identify', 'rec', *robot, '--physical', '-o', 'physical.yaml', '--force', '--quiet'],
        ['validate', 'held', '--params', 'result.yaml', *robot, *payload],
        ['compare', 'result.yaml', 'physical.yaml', *robot, '--bag', 'held', *payload],
        ['estimate', 'rec', '--params', 'result.yaml', *robot, '-o', 'estimate.yaml', '--quiet'],
        ['health', '--json'],
        ['payload', 'held', '--params', 'result.yaml', *robot, '-o', 'payload.yaml'],
        ['export-urdf', 'physical.yaml', '--robot', 'ur.urdf', '-o', 'identified.urdf'],
        ['export-mjcf', 'physical.yaml', *robot, '-o', 'identified.xml'],
        ['excite', *robot, '--experiment', 'plateaus', '--joint', 'shoulder_pan_joint', '-o', 'plateaus.yaml'],
        ['simulate', *robot, '--trajectory', 'plateaus.yaml', '--rate', '250', '-o', 'plateaus', '--quiet'],
        ['identify-friction', 'plateaus', '--params', 'result.yaml', *robot, '-o', 'friction.yaml'],
        ['simulate', *robot, '--trajectory', 'traj.yaml', '-o', 'fleet/ur5/2025-01-01/rec', '--quiet'],
        ['batch', 'fleet', *robot, '--workers', '1', '--json'],
    ]
    (tmp_path / 'fleet' / 'ur5' / '2025-01-01').mkdir(parents=True)  # ROOT/<robot>/<date>/<bag>
    outcomes = run_commands(workspace, commands, tmp_path, workspace_environment(ros_domain))
    assert [o['argv'] for o in outcomes] == commands and not failures(outcomes), failures(outcomes)
    assert (tmp_path / 'identified.urdf').is_file() and (tmp_path / 'report' / 'index.html').is_file()
    assert not any(MISSING in o['err'] for o in outcomes)

    # The node suite, its nodes processes of the workspace interpreter, with the UR description's file as the robot.
    process = subprocess.Popen([str(workspace), '-m', 'dynid.cli', 'bringup', '--robot', 'ur.urdf', '--namespace',
                                'wsb', '--output-directory', str(tmp_path / 'recordings')], cwd=tmp_path,
                               env=workspace_environment(ros_domain), stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True)
    output = ProcessOutput(process)
    started = ('[wsb.sim_node]: simulating', '[wsb.identifier_node]: ready', '[wsb.excitation_node]: excitation of')
    try:
        assert wait_until(lambda: all(line in output.text for line in started) or process.poll() is not None,
                          STARTUP_S)
        assert process.poll() is None, output.text[-3000:]
    finally:
        process.send_signal(signal.SIGINT)
        text = output.finish(timeout=120)
    assert process.returncode == 0 and 'Traceback' not in text, text[-3000:]

    # The main job end to end, over DDS, the nodes in processes of the workspace interpreter.
    demo = subprocess.run([str(workspace), '-m', 'dynid.cli', 'demo', '-o', 'demo', '--periods', '1'], cwd=tmp_path,
                          env=workspace_environment(ros_domain), capture_output=True, text=True, timeout=900)
    assert demo.returncode == 0, (demo.stdout[-2000:], demo.stderr[-2000:])
    assert 'Traceback' not in demo.stderr


def _venv_without_example_robot_data(folder: Path) -> Path:
    """A site folder that holds what this environment's does, example-robot-data left out: links to every entry
    but its distribution and its ``share/example-robot-data`` (pinocchio's own ``.pth`` files still run)."""
    folder.mkdir()
    for entry in SITE.iterdir():
        if entry.name.startswith('example_robot_data'):
            continue
        if entry.name != 'cmeel.prefix':
            os.symlink(entry, folder / entry.name)
            continue
        prefix = folder / entry.name
        prefix.mkdir()
        for item in entry.iterdir():
            if item.name != 'share':
                os.symlink(item, prefix / item.name)
                continue
            (prefix / 'share').mkdir()
            for shared in item.iterdir():
                if shared.name != 'example-robot-data':
                    os.symlink(shared, prefix / 'share' / shared.name)
    return folder


def _robots_folder() -> Path:
    return example_robot_path(UR5).parents[2]  # .../share/example-robot-data/robots


@pytest.fixture(scope='module')
def hidden(tmp_path_factory) -> Path:
    """A site folder as this environment's, without example-robot-data."""
    return _venv_without_example_robot_data(tmp_path_factory.mktemp('hidden') / 'site-packages')


def test_the_robots_only_under_an_ament_prefix(hidden, tmp_path):
    python = make_workspace(tmp_path / 'ws', hidden)
    prefix = tmp_path / 'ros'
    (prefix / 'share' / 'example-robot-data').mkdir(parents=True)
    os.symlink(_robots_folder(), prefix / 'share' / 'example-robot-data' / 'robots')
    index = prefix / 'share' / 'ament_index' / 'resource_index' / 'packages'
    index.mkdir(parents=True)
    (index / 'example-robot-data').touch()
    commands = [['model', '--robot', 'ur5', '--json'], ['model', '--robot', 'panda', '--json'],
                ['simulate', '--robot', 'panda', '--duration', '1', '-o', 'rec', '--quiet']]
    without = run_commands(python, commands[:1], tmp_path, workspace_environment(AMENT_PREFIX_PATH=sys.prefix))
    assert without[0]['code'] == 2 and MISSING in without[0]['err']  # the layout hides it indeed
    ament = os.pathsep.join([str(prefix), sys.prefix])
    outcomes = run_commands(python, commands, tmp_path, workspace_environment(AMENT_PREFIX_PATH=ament))
    assert not failures(outcomes), failures(outcomes)
    assert found(python, PANDA, workspace_environment(AMENT_PREFIX_PATH=ament)).is_relative_to(prefix)


def test_the_robots_only_in_the_users_site_folder(hidden, tmp_path):
    """``pip install --user example-robot-data``: its distribution and files in the user's site folder, which an
    interpreter with system site packages reads (PYTHONUSERBASE says where it is)."""
    python = make_workspace(tmp_path / 'ws', hidden, system_site_packages=True)
    user_base = tmp_path / 'user'
    user_site = Path(subprocess.run([str(python), '-c', 'import site; print(site.getusersitepackages())'],
                                    capture_output=True, text=True, check=True,
                                    env=workspace_environment(PYTHONUSERBASE=str(user_base))).stdout.strip())
    (user_site / 'cmeel.prefix' / 'share' / 'example-robot-data').mkdir(parents=True)
    os.symlink(_robots_folder(), user_site / 'cmeel.prefix' / 'share' / 'example-robot-data' / 'robots')
    for distribution in SITE.glob('example_robot_data-*.dist-info'):
        shutil.copytree(distribution, user_site / distribution.name)
    env = workspace_environment(PYTHONUSERBASE=str(user_base), AMENT_PREFIX_PATH=sys.prefix)
    outcomes = run_commands(python, [['model', '--robot', 'ur5', '--json'], ['model', '--robot', 'panda', '--json']],
                            tmp_path, env)
    assert not failures(outcomes), failures(outcomes)
    assert found(python, UR5, env).is_relative_to(user_site)
