"""`dynid bringup` and `dynid demo` (issue 6): the suite in one process over real DDS."""

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import rclpy
import yaml
from rclpy.executors import SingleThreadedExecutor
from sensor_msgs.msg import JointState
from std_srvs.srv import Trigger

from dds_helpers import STARTUP_S, ProcessOutput, environment, executable, node_executable, wait_until


def _dynid(*arguments: str) -> list[str]:
    return executable('dynid', 'dynid.cli') + list(arguments)


#: the two ``dynid demo`` runs of the tests below (the twin's, one process per node; MuJoCo's, in the demo's
#: process at the 500 Hz that asks for): (test, arguments after ``-o OUTPUT``)
DEMOS = {'twin': ('test_demo_runs_end_to_end', ('--periods', '1')),
         'mujoco': ('test_demo_runs_end_to_end_on_mujoco',
                    ('--engine', 'mujoco', '--periods', '1', '--rate', '500', '--no-processes'))}


class DemoRuns:
    """The demo runs the session selected, started together, each on a ROS domain of its own: most of a demo is
    its excitations played in real time (with a startup of seconds before), so two overlap instead of taking
    the sum of their times. :meth:`result` waits for one to end (a hang: 900 s)."""

    def __init__(self, root: Path, names, twin_domain: int) -> None:
        from dds_helpers import claim_domain

        self.runs, self.claimed = {}, []
        for name in names:
            domain = twin_domain if name == 'twin' else claim_domain()
            if domain != twin_domain:
                self.claimed.append(domain)
            output = root / name / 'demo'
            streams = [open(root / f'{name}.{stream}', 'w+') for stream in ('out', 'err')]  # noqa: SIM115
            process = subprocess.Popen(_dynid('demo', '-o', str(output), *DEMOS[name][1]), env=environment(domain),
                                       stdout=streams[0], stderr=streams[1], text=True)
            self.runs[name] = (process, streams, output, time.monotonic())

    def result(self, name: str) -> tuple[subprocess.CompletedProcess, Path, float]:
        """(the finished run, its output folder, its wall time [s])."""
        process, streams, output, started = self.runs[name]
        try:
            process.wait(timeout=max(1.0, started + 900.0 - time.monotonic()))  # a hang
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        for stream in streams:
            stream.seek(0)
        out, err = (stream.read() for stream in streams)
        return subprocess.CompletedProcess(process.args, process.returncode, out, err), output, \
            time.monotonic() - started

    def close(self) -> None:
        from dds_helpers import release_domain

        for process, streams, *_ in self.runs.values():
            if process.poll() is None:
                process.kill()
                process.wait()
            for stream in streams:
                stream.close()
        for domain in self.claimed:
            release_domain(domain)


@pytest.fixture(scope='module')
def demos(request, tmp_path_factory, module_ros_domain):
    """Both demo runs, started when the first of their tests needs one (only those the session selected;
    MuJoCo's where mujoco is installed): the twin's on the module's ROS domain, MuJoCo's on one of its own."""
    import importlib.util

    selected = {item.name for item in request.session.items}
    names = [name for name, (test, _) in DEMOS.items() if test in selected
             and (name != 'mujoco' or importlib.util.find_spec('mujoco') is not None)]
    runs = DemoRuns(tmp_path_factory.mktemp('demos'), names, module_ros_domain)
    yield runs
    runs.close()


def test_demo_runs_end_to_end(demos):
    run, output, seconds = demos.result('twin')
    assert run.returncode == 0, run.stderr[-3000:]
    assert 'held-out fit %' in run.stdout and 'wrist_3_joint' in run.stdout
    assert 'identifying' in run.stderr and 'done' in run.stderr  # progress goes to stderr
    document = yaml.safe_load((output / 'result.yaml').read_text())
    held_out = document['metrics']['validation']['joints']
    assert set(held_out) == {'shoulder_pan_joint', 'shoulder_lift_joint', 'elbow_joint', 'wrist_1_joint',
                             'wrist_2_joint', 'wrist_3_joint'}
    assert min(joint['nrmse_fit_percent'] for joint in held_out.values()) > 90.0
    assert (output / 'report' / 'index.html').exists()
    recordings = sorted((output / 'recordings').glob('recording_*'))
    assert len(recordings) == 3 and (recordings[0] / 'result.yaml').exists()
    # The loop: the same held-out trajectory tracked better with feedforward_node on every joint; the online
    # estimates within the stated tolerances of the twin's truth where they converged.
    loop = yaml.safe_load((output / 'loop.yaml').read_text())
    assert 'tracking RMS' in run.stdout and (output / 'report' / 'loop.html').exists()
    assert all(ratio < 1.0 for ratio in loop['tracking']['ratio'].values()), loop['tracking']
    stiffness, friction = loop['stiffness'], loop['friction']
    converged = [name for name, done in stiffness['converged'].items() if done]
    assert converged, stiffness
    assert all(abs(stiffness['relative_error'][name]) <= stiffness['tolerance'] for name in converged), stiffness
    assert all(abs(alpha - 1.0) <= friction['tolerance'] for alpha in friction['alpha1'].values()), friction
    print(f'dynid demo --periods 1: {seconds:.0f} s')


def test_demo_runs_end_to_end_on_mujoco(demos):
    """Issue 36: the same job with MuJoCo as the plant (rigid joints: no stiffness estimate, the friction adapts
    on θ = q); the same summary, recordings and report. The suite runs in the demo's process (``--no-processes``,
    at the 500 Hz that asks for), over DDS all the same: one process per node is the test above's, and sim_node
    with engine:=mujoco as a process of its own is test_mujoco_plant.py's (seven processes, each importing ROS
    and dynid, are the slow part of a demo's start)."""
    pytest.importorskip('mujoco')
    run, output, _ = demos.result('mujoco')
    assert run.returncode == 0, run.stderr[-3000:]
    assert 'ur5e in MuJoCo at 500 Hz' in run.stdout and 'held-out fit %' in run.stdout
    assert 'suite up in /' in run.stderr and '(one process each)' not in run.stderr  # in the demo's process
    held_out = yaml.safe_load((output / 'result.yaml').read_text())['metrics']['validation']['joints']
    assert min(joint['nrmse_fit_percent'] for joint in held_out.values()) > 90.0
    assert len(sorted((output / 'recordings').glob('recording_*'))) == 3
    loop = yaml.safe_load((output / 'loop.yaml').read_text())
    assert all(ratio < 1.0 for ratio in loop['tracking']['ratio'].values()), loop['tracking']
    assert loop['stiffness']['k0'] is None and all(v == float('inf') for v in loop['stiffness']['true_alpha1'].values())
    friction = loop['friction']
    assert all(abs(alpha - 1.0) <= friction['tolerance'] for alpha in friction['alpha1'].values()), friction


def test_bringup_serves_the_contract_and_stops_on_ctrl_c(tmp_path, ros_domain):
    domain = ros_domain
    config = Path(__file__).resolve().parents[1] / 'config' / 'identification.yaml'  # the shipped parameters
    process = subprocess.Popen(_dynid('bringup', '--namespace', 'bt', '--rate', '200', '--params-file', str(config),
                                      '--output-directory', str(tmp_path)),
                               env=environment(domain), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    output = ProcessOutput(process)
    context = rclpy.Context()
    rclpy.init(context=context, domain_id=domain)
    try:
        node = rclpy.create_node('bringup_probe', context=context)
        states = []
        node.create_subscription(JointState, '/bt/joint_states', states.append, 10)
        client = node.create_client(Trigger, '/bt/identifier_node/identify')
        executor = SingleThreadedExecutor(context=context)
        executor.add_node(node)
        # The nodes start in processes of their own (imports take a while on a busy machine), then publish.
        assert wait_until(lambda: '[bt.sim_node]: simulating' in output.text or process.poll() is not None,
                          STARTUP_S) and process.poll() is None, output.text[-2000:]
        end = time.monotonic() + 30.0
        while len(states) < 20 and time.monotonic() < end:
            executor.spin_once(timeout_sec=0.1)
        assert len(states) >= 20 and len(states[-1].position) == 6
        assert client.wait_for_service(timeout_sec=STARTUP_S)
        future = client.call_async(Trigger.Request())
        end = time.monotonic() + 10.0
        while not future.done() and time.monotonic() < end:
            executor.spin_once(timeout_sec=0.1)
        assert future.done() and not future.result().success  # nothing recorded yet: a reason, not a crash
        assert 'nothing recorded' in future.result().message
    finally:
        rclpy.shutdown(context=context)
        process.send_signal(signal.SIGINT)
        text = output.finish()
    assert process.returncode == 0, text[-2000:]
    assert 'running /bt/sim_node, /bt/excitation_node, /bt/identifier_node' in text and 'stopped' in text


@pytest.mark.parametrize(('arguments', 'reason'), [
    (('bringup', '--robot', 'no_such_robot'), 'no_such_robot'),
    (('bringup', '--params-file', '/nonexistent/params.yaml'), 'parameter file'),
    (('bringup', '--rate', '1e6'), 'rate'),
    (('demo', '--rate', '5'), '--rate'),
    (('demo', '--periods', '0'), '--periods'),
    (('demo', '--robot', 'panda'), 'no built-in excitation'),
])
def test_bad_input_exits_2_with_a_reason(arguments, reason, capsys):
    """Refused before anything starts (in this process: the executable's exit code is checked by the test
    below and by the bringup tests)."""
    from dynid.cli import main

    assert main(list(arguments)) == 2
    err = capsys.readouterr().err
    assert reason in err and 'Traceback' not in err


def test_identifier_node_refuses_unknown_method(ros_domain):
    run = subprocess.run(_dynid('bringup', '--params-file', '/dev/null'), env=environment(ros_domain),
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 2  # /dev/null is no parameter file
    command = node_executable('identifier_node') + ['--ros-args', '-p', 'method:=magic']
    run = subprocess.run(command, env=environment(ros_domain), capture_output=True, text=True, timeout=60)
    assert run.returncode == 2 and 'method must be one of' in run.stderr


# ------------------------------------------------------------------------- the suite with estimator_node
def test_plan_suite_adds_estimator_node_with_its_parameters():
    from dynid.nodes.estimator_node import EstimatorNode
    from dynid.suite.bringup import NodeProcesses, plan_suite, twin_health_robot

    assert 'estimator_node' not in [plan.name for plan in plan_suite()]  # only when asked
    plans = plan_suite('ur5e', True, {'estimator_node': {'result_file': 'result.yaml', 'publish_rate': 20.0}},
                       estimator=True)
    assert [plan.name for plan in plans] == ['sim_node', 'excitation_node', 'identifier_node', 'estimator_node']
    estimator = plans[-1]
    assert estimator.cls is EstimatorNode and estimator.module == 'estimator_node'
    assert estimator.overrides == {'robot': 'ur5e', 'result_file': 'result.yaml', 'publish_rate': 20.0,
                                   'health_robot': 'ur5e-twin'}  # the twin's sessions apart from the arm's
    assert plan_suite('/cells/arm.urdf', estimator=True)[-1].overrides['health_robot'] == 'arm-twin'
    assert twin_health_robot('<robot name="cell_7"><link name="base"/></robot>') == 'cell_7-twin'
    real = plan_suite(simulate=False, estimator=True)
    assert [plan.name for plan in real] == ['excitation_node', 'identifier_node', 'estimator_node']
    assert 'health_robot' not in real[-1].overrides
    command = NodeProcesses(plans, 'est', params_file='estimation.yaml').command(estimator)
    assert command[1:4] == ['-m', 'dynid.nodes', 'estimator_node']
    assert command[command.index('--ros-args'):] == [
        '--ros-args', '-r', '__node:=estimator_node', '-r', '__ns:=/est', '--params-file', 'estimation.yaml',
        '-p', 'robot:="ur5e"', '-p', 'result_file:="result.yaml"', '-p', 'publish_rate:=20.0',
        '-p', 'health_robot:="ur5e-twin"']


def test_build_suite_with_estimator_node_estimates_in_one_process(tmp_path, ros_domain):
    from std_msgs.msg import Float64MultiArray

    from dynid.suite.bringup import build_suite

    domain = ros_domain
    context = rclpy.Context()
    rclpy.init(context=context, domain_id=domain)
    executor = SingleThreadedExecutor(context=context)
    try:
        nodes = build_suite(context, namespace='bse', lean=True, estimator=True,
                            parameters={'sim_node': {'rate': 200.0},
                                        'identifier_node': {'output_directory': str(tmp_path)},
                                        'estimator_node': {'publish_rate': 20.0,
                                                           'baseline_file': str(tmp_path / 'baseline.yaml')}})
        assert list(nodes) == ['sim_node', 'excitation_node', 'identifier_node', 'estimator_node']
        estimator = nodes['estimator_node']
        assert estimator.get_fully_qualified_name() == '/bse/estimator_node'
        assert estimator.get_parameter('publish_rate').value == 20.0
        assert estimator.get_parameter('robot').value == 'ur5e'
        probe = rclpy.create_node('bringup_estimator_probe', context=context)
        estimates = []
        probe.create_subscription(Float64MultiArray, '/bse/estimator_node/stiffness', estimates.append, 10)
        for node in [*nodes.values(), probe]:
            executor.add_node(node)
        end = time.monotonic() + 60.0
        while len(estimates) < 3 and time.monotonic() < end:
            executor.spin_once(timeout_sec=0.1)
        assert len(estimates) >= 3, 'no stiffness estimates from the composed estimator_node'
        assert [d.size for d in estimates[-1].layout.dim] == [6, 6]
    finally:
        executor.shutdown()
        for node in executor.get_nodes():
            node.destroy_node()
        rclpy.shutdown(context=context)


@pytest.mark.parametrize(('content', 'reason'), [(None, 'cannot read result file'),
                                                  ('[1, 2]\n', 'not a dynid result file')])
def test_build_suite_refuses_a_bad_result_file(tmp_path, content, reason, ros_domain):
    from dynid.errors import InputError
    from dynid.suite.bringup import build_suite

    path = tmp_path / 'result.yaml'
    if content is not None:
        path.write_text(content)
    context = rclpy.Context()
    rclpy.init(context=context, domain_id=ros_domain)
    try:
        with pytest.raises(InputError, match=reason) as raised:
            build_suite(context, namespace='bad', estimator=True, lean=True,
                        parameters={'identifier_node': {'output_directory': str(tmp_path)},
                                    'estimator_node': {'result_file': str(path)}})
        assert str(raised.value).startswith('estimator_node: ')
    finally:
        rclpy.shutdown(context=context)


@pytest.mark.parametrize(('arguments', 'reason'), [
    (('--result', 'result.yaml'), '--estimator'),
    (('--estimator', '--result', '/nonexistent/result.yaml'), '/nonexistent/result.yaml'),
    (('--no-processes', '--estimator', '--result', '/nonexistent/result.yaml'), '/nonexistent/result.yaml'),
])
def test_bringup_refuses_a_bad_estimator_result(tmp_path, arguments, reason, monkeypatch, capsys):
    from dynid.cli import main

    monkeypatch.chdir(tmp_path)
    assert main(['bringup', '--namespace', 'bad', *arguments]) == 2
    err = capsys.readouterr().err
    assert reason in err and 'Traceback' not in err


IGNORING_CTRL_C = ('import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_IGN); '
                   'os.execv(sys.argv[1], sys.argv[1:])')  # run the command with SIGINT ignored, as nohup's shell


def test_bringup_started_with_ctrl_c_ignored_stops_on_ctrl_c(tmp_path, ros_domain):
    """From a parent that ignores SIGINT (nohup, `cmd &` in a script) bringup and its nodes still stop on
    Ctrl-C, with exit code 0 and no node killed."""
    command = _dynid('bringup', '--no-sim', '--namespace', 'bi', '--output-directory', str(tmp_path))
    process = subprocess.Popen([sys.executable, '-c', IGNORING_CTRL_C, *command], cwd=tmp_path,
                               env=environment(ros_domain), stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True)
    try:
        assert 'dynid bringup: running' in process.stdout.readline()
        time.sleep(1.0)  # the nodes load meanwhile; a Ctrl-C at any point must stop them
        process.send_signal(signal.SIGINT)
        output, _ = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 0, output[-2000:]
    assert 'dynid bringup: stopped' in output and 'killed' not in output


def test_ctrl_c_while_bringup_still_loads_is_a_clean_stop(tmp_path, ros_domain):
    """Ctrl-C before the nodes run (bringup importing rclpy and the nodes): exit code 0, not 130."""
    process = subprocess.Popen(_dynid('bringup', '--no-sim', '--namespace', 'bl'), cwd=tmp_path,
                               env=environment(ros_domain), stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True)
    maps = Path(f'/proc/{process.pid}/maps')
    end = time.monotonic() + 60.0
    while process.poll() is None and time.monotonic() < end and '_rclpy_pybind11' not in maps.read_text():
        time.sleep(0.002)
    process.send_signal(signal.SIGINT)
    output, _ = process.communicate(timeout=60)
    assert process.returncode == 0, output[-2000:]
    assert 'dynid bringup: stopped' in output and 'Traceback' not in output


def test_bringup_with_the_estimator_publishes_stiffness(tmp_path, ros_domain):
    from std_msgs.msg import Float64MultiArray

    domain = ros_domain
    process = subprocess.Popen(_dynid('bringup', '--estimator', '--namespace', 'be', '--rate', '200'), cwd=tmp_path,
                               env=environment(domain), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    output = ProcessOutput(process)
    context = rclpy.Context()
    rclpy.init(context=context, domain_id=domain)
    try:
        node = rclpy.create_node('bringup_estimator_probe', context=context)
        estimates = []
        node.create_subscription(Float64MultiArray, '/be/estimator_node/stiffness', estimates.append, 10)
        executor = SingleThreadedExecutor(context=context)
        executor.add_node(node)
        # The five processes start (imports take a while on a busy machine), then the estimator estimates.
        started = ('[be.sim_node]: simulating', '[be.estimator_node]: estimating')
        assert wait_until(lambda: all(line in output.text for line in started) or process.poll() is not None,
                          STARTUP_S) and process.poll() is None, output.text[-2000:]
        end = time.monotonic() + 60.0
        while len(estimates) < 3 and time.monotonic() < end and process.poll() is None:
            executor.spin_once(timeout_sec=0.1)
        assert len(estimates) >= 3, 'no stiffness estimates from estimator_node'
    finally:
        rclpy.shutdown(context=context)
        process.send_signal(signal.SIGINT)
        text = output.finish()
    assert process.returncode == 0, text[-2000:]
    assert 'running /be/sim_node, /be/excitation_node, /be/identifier_node, /be/estimator_node' in text


# ----------------------------------------------------------------------- the suite with feedforward_node
def test_plan_suite_wires_feedforward_node_per_mode():
    from dynid.nodes.feedforward_node import FeedforwardNode
    from dynid.suite.bringup import NodeProcesses, plan_suite

    assert 'feedforward_node' not in [plan.name for plan in plan_suite()]  # only when asked
    plans = {plan.name: plan for plan in plan_suite('ur5e', True, feedforward='trajectory')}
    assert list(plans) == ['sim_node', 'excitation_node', 'identifier_node', 'feedforward_node']
    feedforward = plans['feedforward_node']
    assert feedforward.cls is FeedforwardNode and feedforward.module == 'feedforward_node'
    assert feedforward.overrides == {'robot': 'ur5e', 'mode': 'trajectory', 'autostart': True}  # its own terms
    assert plans['sim_node'].overrides['internal_feedforward'] == 'none'
    assert plans['excitation_node'].remappings == {
        'joint_trajectory_controller/joint_trajectory': 'feedforward_node/reference'}
    command = NodeProcesses(list(plans.values()), 'ff').command(plans['excitation_node'])
    assert command[-2:] == ['-r', 'joint_trajectory_controller/joint_trajectory:=feedforward_node/reference']
    command = NodeProcesses(list(plans.values()), 'ff').command(feedforward)
    assert '-p' in command and 'mode:="trajectory"' in command and not any('terms' in word for word in command)

    streaming = {plan.name: plan for plan in plan_suite(
        'ur5e', True, {'feedforward_node': {'result_file': 'r.yaml'}}, feedforward='streaming')}
    assert streaming['feedforward_node'].remappings == {'~/reference': 'joint_trajectory_controller/joint_trajectory'}
    assert streaming['excitation_node'].remappings == {}
    assert 'terms' not in streaming['feedforward_node'].overrides  # the node's defaults, friction included
    measured = plan_suite('ur5e', False, {'sim_node': {'rate': 100.0}}, feedforward='measured')
    assert [plan.name for plan in measured] == ['excitation_node', 'identifier_node', 'feedforward_node']
    assert measured[-1].remappings == {}


def test_build_suite_with_feedforward_node_compensates_gravity_in_one_process(tmp_path, ros_domain):
    """Measured mode composed with the twin: active from the start, efforts (gravity of the measured
    position) arrive on forward_effort_controller/commands; destroyed: zeros last."""
    import numpy as np
    from std_msgs.msg import Float64MultiArray

    from dynid.suite.bringup import build_suite

    domain = ros_domain
    context = rclpy.Context()
    rclpy.init(context=context, domain_id=domain)
    executor = SingleThreadedExecutor(context=context)
    commands = []
    try:
        nodes = build_suite(context, namespace='bsf', lean=True, feedforward='measured',
                            parameters={'sim_node': {'rate': 200.0},
                                        'identifier_node': {'output_directory': str(tmp_path)},
                                        'feedforward_node': {'rate': 50.0}})
        feedforward = nodes['feedforward_node']
        assert feedforward.state_label == 'active' and feedforward.get_fully_qualified_name() == '/bsf/feedforward_node'
        assert nodes['sim_node'].get_parameter('internal_feedforward').value == 'none'
        probe = rclpy.create_node('bringup_feedforward_probe', context=context)
        probe.create_subscription(Float64MultiArray, '/bsf/forward_effort_controller/commands',
                                  lambda m: commands.append(np.array(m.data)), 10)
        for node in [*nodes.values(), probe]:
            executor.add_node(node)
        end = time.monotonic() + 60.0
        while not (commands and abs(commands[-1][1]) > 10.0) and time.monotonic() < end:
            executor.spin_once(timeout_sec=0.05)
        assert commands and abs(commands[-1][1]) > 10.0, 'no gravity compensation from the composed node'
        executor.remove_node(feedforward)
        feedforward.destroy_node()
        end = time.monotonic() + 5.0
        while np.any(commands[-1]) and time.monotonic() < end:  # what was in flight, then the zeros
            executor.spin_once(timeout_sec=0.05)
        assert not np.any(commands[-1]), 'no zeros from the destroyed node'
    finally:
        executor.shutdown()
        for node in executor.get_nodes():
            node.destroy_node()
        rclpy.shutdown(context=context)


@pytest.mark.parametrize('processes', [True, False])
def test_bringup_refuses_a_result_of_another_robot_for_feedforward(tmp_path, panda, processes, ros_domain):
    from builders import identified

    path = tmp_path / 'panda.yaml'
    identified(panda, 'viscous_coulomb').save(path)
    arguments = ['--feedforward', '--result', str(path)] + ([] if processes else ['--no-processes'])
    run = subprocess.run(_dynid('bringup', '--namespace', 'bad', '--rate', '100', *arguments), cwd=tmp_path,
                         env=environment(ros_domain), capture_output=True, text=True, timeout=120)
    assert run.returncode == 2, (run.stdout[-2000:], run.stderr[-2000:])
    assert "identifies robot 'panda'" in run.stdout + run.stderr and 'Traceback' not in run.stdout + run.stderr


def test_bringup_with_the_feedforward_fills_the_excitations_efforts(tmp_path, ros_domain):
    """``dynid bringup --feedforward``: feedforward_node is active; the excitation (started through its
    service) reaches the controller topic through it, every point with an effort; Ctrl-C stops all."""
    from lifecycle_msgs.srv import GetState
    from trajectory_msgs.msg import JointTrajectory

    from dds_helpers import call, spinning, wait_until

    domain = ros_domain
    process = subprocess.Popen(_dynid('bringup', '--feedforward', '--namespace', 'bf', '--rate', '200',
                                      '--output-directory', str(tmp_path)), cwd=tmp_path,
                               env=environment(domain), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    context = rclpy.Context()
    rclpy.init(context=context, domain_id=domain)
    sent, arrived = [], False
    try:
        node = rclpy.create_node('bringup_feedforward_probe', context=context)
        node.create_subscription(JointTrajectory, '/bf/joint_trajectory_controller/joint_trajectory', sent.append, 10)
        get_state = node.create_client(GetState, '/bf/feedforward_node/get_state')
        start = node.create_client(Trigger, '/bf/excitation_node/start')
        executor = SingleThreadedExecutor(context=context)
        executor.add_node(node)
        with spinning(executor, context):
            assert get_state.wait_for_service(timeout_sec=STARTUP_S), 'no feedforward_node'

            def state() -> str:
                future = get_state.call_async(GetState.Request())
                return future.result().current_state.label if wait_until(future.done, 10.0) else ''

            assert wait_until(lambda: state() == 'active', 30.0)
            assert call(start).success
            arrived = wait_until(lambda: len(sent) >= 2, 60.0)
    finally:
        rclpy.shutdown(context=context)
        process.send_signal(signal.SIGINT)
        output, _ = process.communicate(timeout=30)
    assert arrived, f'{len(sent)} trajectories reached the controller; bringup said:\n{output[-3000:]}'
    assert process.returncode == 0, output[-2000:]
    assert all(len(point.effort) == 6 for message in sent for point in message.points)
    assert 'running /bf/sim_node, /bf/excitation_node, /bf/identifier_node, /bf/feedforward_node' in output
