"""`dynid bringup` and `dynid demo` (issue 6): the suite in one process over real DDS."""

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest
import rclpy
import yaml
from rclpy.executors import SingleThreadedExecutor
from sensor_msgs.msg import JointState
from std_srvs.srv import Trigger

from dds_helpers import environment, executable, node_executable


def _dynid(*arguments: str) -> list[str]:
    return executable('dynid', 'dynid.cli') + list(arguments)


def test_demo_runs_end_to_end(tmp_path):
    output = tmp_path / 'demo'
    started = time.monotonic()
    run = subprocess.run(_dynid('demo', '-o', str(output), '--periods', '1'), env=environment(150 + os.getpid() % 50),
                         capture_output=True, text=True, timeout=300)
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
    print(f'dynid demo --periods 1: {time.monotonic() - started:.0f} s')


def test_bringup_serves_the_contract_and_stops_on_ctrl_c(tmp_path):
    domain = 100 + (os.getpid() + 13) % 50
    config = Path(__file__).resolve().parents[1] / 'config' / 'identification.yaml'  # the shipped parameters
    process = subprocess.Popen(_dynid('bringup', '--namespace', 'bt', '--rate', '200', '--params-file', str(config),
                                      '--output-directory', str(tmp_path)),
                               env=environment(domain), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    context = rclpy.Context()
    rclpy.init(context=context, domain_id=domain)
    try:
        node = rclpy.create_node('bringup_probe', context=context)
        states = []
        node.create_subscription(JointState, '/bt/joint_states', states.append, 10)
        client = node.create_client(Trigger, '/bt/identifier_node/identify')
        executor = SingleThreadedExecutor(context=context)
        executor.add_node(node)
        end = time.monotonic() + 30.0
        while len(states) < 20 and time.monotonic() < end:
            executor.spin_once(timeout_sec=0.1)
        assert len(states) >= 20 and len(states[-1].position) == 6
        assert client.wait_for_service(timeout_sec=10.0)
        future = client.call_async(Trigger.Request())
        end = time.monotonic() + 10.0
        while not future.done() and time.monotonic() < end:
            executor.spin_once(timeout_sec=0.1)
        assert future.done() and not future.result().success  # nothing recorded yet: a reason, not a crash
        assert 'nothing recorded' in future.result().message
    finally:
        rclpy.shutdown(context=context)
        process.send_signal(signal.SIGINT)
        output, _ = process.communicate(timeout=20)
    assert process.returncode == 0, output[-2000:]
    assert 'running /bt/sim_node, /bt/excitation_node, /bt/identifier_node' in output and 'stopped' in output


@pytest.mark.parametrize(('arguments', 'reason'), [
    (('bringup', '--robot', 'no_such_robot'), 'no_such_robot'),
    (('bringup', '--params-file', '/nonexistent/params.yaml'), 'parameter file'),
    (('bringup', '--rate', '1e6'), 'rate'),
    (('demo', '--rate', '5'), '--rate'),
    (('demo', '--periods', '0'), '--periods'),
    (('demo', '--robot', 'panda'), 'no built-in excitation'),
])
def test_bad_input_exits_2_with_a_reason(arguments, reason):
    run = subprocess.run(_dynid(*arguments), env=environment(199), capture_output=True, text=True, timeout=60)
    assert run.returncode == 2, (run.stdout, run.stderr)
    assert reason in run.stderr and 'Traceback' not in run.stderr


def test_identifier_node_refuses_unknown_method():
    run = subprocess.run(_dynid('bringup', '--params-file', '/dev/null'), env=environment(199), capture_output=True,
                         text=True, timeout=60)
    assert run.returncode == 2  # /dev/null is no parameter file
    command = node_executable('identifier_node') + ['--ros-args', '-p', 'method:=magic']
    run = subprocess.run(command, env=environment(199), capture_output=True, text=True, timeout=60)
    assert run.returncode == 2 and 'method must be one of' in run.stderr


# ------------------------------------------------------------------------- the suite with estimator_node
def test_plan_suite_adds_estimator_node_with_its_parameters():
    from dynid.nodes.bringup import NodeProcesses, plan_suite
    from dynid.nodes.estimator_node import EstimatorNode

    assert 'estimator_node' not in [plan.name for plan in plan_suite()]  # only when asked
    plans = plan_suite('ur5e', True, {'estimator_node': {'result_file': 'result.yaml', 'publish_rate': 20.0}},
                       estimator=True)
    assert [plan.name for plan in plans] == ['sim_node', 'excitation_node', 'identifier_node', 'estimator_node']
    estimator = plans[-1]
    assert estimator.cls is EstimatorNode and estimator.module == 'estimator_node'
    assert estimator.overrides == {'robot': 'ur5e', 'result_file': 'result.yaml', 'publish_rate': 20.0}
    assert [plan.name for plan in plan_suite(simulate=False, estimator=True)] == [
        'excitation_node', 'identifier_node', 'estimator_node']
    command = NodeProcesses(plans, 'est', params_file='estimation.yaml').command(estimator)
    assert command[1:4] == ['-m', 'dynid.nodes', 'estimator_node']
    assert command[command.index('--ros-args'):] == [
        '--ros-args', '-r', '__node:=estimator_node', '-r', '__ns:=/est', '--params-file', 'estimation.yaml',
        '-p', 'robot:="ur5e"', '-p', 'result_file:="result.yaml"', '-p', 'publish_rate:=20.0']


def test_build_suite_with_estimator_node_estimates_in_one_process(tmp_path):
    from std_msgs.msg import Float64MultiArray

    from dynid.nodes.bringup import build_suite

    domain = 100 + (os.getpid() + 47) % 50
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
def test_build_suite_refuses_a_bad_result_file(tmp_path, content, reason):
    from dynid.errors import InputError
    from dynid.nodes.bringup import build_suite

    path = tmp_path / 'result.yaml'
    if content is not None:
        path.write_text(content)
    context = rclpy.Context()
    rclpy.init(context=context, domain_id=199)
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
def test_bringup_refuses_a_bad_estimator_result(tmp_path, arguments, reason):
    run = subprocess.run(_dynid('bringup', '--namespace', 'bad', *arguments), env=environment(199), cwd=tmp_path,
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 2, (run.stdout, run.stderr)
    assert reason in run.stderr and 'Traceback' not in run.stderr


def test_bringup_with_the_estimator_publishes_stiffness(tmp_path):
    from std_msgs.msg import Float64MultiArray

    domain = 100 + (os.getpid() + 29) % 50
    process = subprocess.Popen(_dynid('bringup', '--estimator', '--namespace', 'be', '--rate', '200'), cwd=tmp_path,
                               env=environment(domain), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    context = rclpy.Context()
    rclpy.init(context=context, domain_id=domain)
    try:
        node = rclpy.create_node('bringup_estimator_probe', context=context)
        estimates = []
        node.create_subscription(Float64MultiArray, '/be/estimator_node/stiffness', estimates.append, 10)
        executor = SingleThreadedExecutor(context=context)
        executor.add_node(node)
        end = time.monotonic() + 60.0
        while len(estimates) < 3 and time.monotonic() < end and process.poll() is None:
            executor.spin_once(timeout_sec=0.1)
        assert len(estimates) >= 3, 'no stiffness estimates from estimator_node'
    finally:
        rclpy.shutdown(context=context)
        process.send_signal(signal.SIGINT)
        output, _ = process.communicate(timeout=20)
    assert process.returncode == 0, output[-2000:]
    assert 'running /be/sim_node, /be/excitation_node, /be/identifier_node, /be/estimator_node' in output


# ----------------------------------------------------------------------- the suite with feedforward_node
def test_plan_suite_wires_feedforward_node_per_mode():
    from dynid.nodes.bringup import NodeProcesses, plan_suite
    from dynid.nodes.feedforward_node import FeedforwardNode

    assert 'feedforward_node' not in [plan.name for plan in plan_suite()]  # only when asked
    plans = {plan.name: plan for plan in plan_suite('ur5e', True, feedforward='trajectory')}
    assert list(plans) == ['sim_node', 'excitation_node', 'identifier_node', 'feedforward_node']
    feedforward = plans['feedforward_node']
    assert feedforward.cls is FeedforwardNode and feedforward.module == 'feedforward_node'
    assert feedforward.overrides == {'robot': 'ur5e', 'mode': 'trajectory', 'autostart': True,
                                     'terms': ['rigid_body', 'rotor_inertia']}  # no result: the model's own
    assert plans['sim_node'].overrides['internal_feedforward'] == 'none'
    assert plans['excitation_node'].remappings == {
        'joint_trajectory_controller/joint_trajectory': 'feedforward_node/reference'}
    command = NodeProcesses(list(plans.values()), 'ff').command(plans['excitation_node'])
    assert command[-2:] == ['-r', 'joint_trajectory_controller/joint_trajectory:=feedforward_node/reference']
    command = NodeProcesses(list(plans.values()), 'ff').command(feedforward)
    assert '-p' in command and 'terms:=["rigid_body", "rotor_inertia"]' in command

    streaming = {plan.name: plan for plan in plan_suite(
        'ur5e', True, {'feedforward_node': {'result_file': 'r.yaml'}}, feedforward='streaming')}
    assert streaming['feedforward_node'].remappings == {'~/reference': 'joint_trajectory_controller/joint_trajectory'}
    assert streaming['excitation_node'].remappings == {}
    assert 'terms' not in streaming['feedforward_node'].overrides  # the node's defaults, friction included
    config = Path(__file__).resolve().parents[1] / 'config'
    shipped = plan_suite(feedforward='trajectory', params_file=str(config / 'feedforward.yaml'))[-1]
    assert 'terms' not in shipped.overrides  # the file's terms apply
    other = plan_suite(feedforward='trajectory', params_file=str(config / 'identification.yaml'))[-1]
    assert other.overrides['terms'] == ['rigid_body', 'rotor_inertia']
    measured = plan_suite('ur5e', False, {'sim_node': {'rate': 100.0}}, feedforward='measured')
    assert [plan.name for plan in measured] == ['excitation_node', 'identifier_node', 'feedforward_node']
    assert measured[-1].remappings == {}


def test_build_suite_with_feedforward_node_compensates_gravity_in_one_process(tmp_path):
    """Measured mode composed with the twin: active from the start, efforts (gravity of the measured
    position) arrive on forward_effort_controller/commands; destroyed: zeros last."""
    import numpy as np
    from std_msgs.msg import Float64MultiArray

    from dynid.nodes.bringup import build_suite

    domain = 100 + (os.getpid() + 53) % 50
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
def test_bringup_refuses_a_result_of_another_robot_for_feedforward(tmp_path, panda, processes):
    from test_feedforward_terms import identified

    path = tmp_path / 'panda.yaml'
    identified(panda, 'viscous_coulomb').save(path)
    arguments = ['--feedforward', '--result', str(path)] + ([] if processes else ['--no-processes'])
    run = subprocess.run(_dynid('bringup', '--namespace', 'bad', '--rate', '100', *arguments), cwd=tmp_path,
                         env=environment(198), capture_output=True, text=True, timeout=120)
    assert run.returncode == 2, (run.stdout[-2000:], run.stderr[-2000:])
    assert "identifies robot 'panda'" in run.stdout + run.stderr and 'Traceback' not in run.stdout + run.stderr


def test_bringup_with_the_feedforward_fills_the_excitations_efforts(tmp_path):
    """``dynid bringup --feedforward``: feedforward_node is active; the excitation (started through its
    service) reaches the controller topic through it, every point with an effort; Ctrl-C stops all."""
    from lifecycle_msgs.srv import GetState
    from trajectory_msgs.msg import JointTrajectory

    from dds_helpers import call, spinning, wait_until

    domain = 100 + (os.getpid() + 37) % 50
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
            assert get_state.wait_for_service(timeout_sec=60.0), 'no feedforward_node'

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
