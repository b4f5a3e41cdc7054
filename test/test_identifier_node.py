"""identifier_node over real DDS (issue 6): record from sim_node, identify through the service, get the result."""

import os
import signal
import subprocess
import time

import pytest
import rclpy
import yaml
from rcl_interfaces.msg import Parameter, ParameterType, ParameterValue
from rcl_interfaces.srv import SetParameters
from rclpy.executors import SingleThreadedExecutor
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from std_msgs.msg import String
from std_srvs.srv import Trigger

from dds_helpers import call, parameters, spinning, start_node, stop, wait_until
from dynid.excite.trajectory import builtin_excitation_path


def _process(name: str, domain: int, *assignments: str) -> subprocess.Popen:
    return start_node(name, domain, *parameters(*assignments))


@pytest.fixture(scope='module')
def suite(tmp_path_factory):
    folder = tmp_path_factory.mktemp('recordings')
    domain = 100 + (os.getpid() + 71) % 100
    processes = [
        _process('sim_node', domain, 'rate:=500.0', 'seed:=2'),
        _process('excitation_node', domain, f'trajectory_file:={builtin_excitation_path("ur5e")}',
                 'approach_velocity:=0.5', 'chunk_duration:=5.0'),
        _process('identifier_node', domain, f'output_directory:={folder}', 'segment_duration:=2.0', 'report:=false',
                 'data_wait:=60.0'),
    ]
    os.environ['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'
    context = rclpy.Context()
    rclpy.init(context=context, domain_id=domain)
    node = rclpy.create_node('identifier_probe', context=context)
    results, states = [], []
    latched = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL)
    node.create_subscription(String, '/identifier_node/result', lambda m: results.append(m.data), latched)
    node.create_subscription(String, '/excitation_node/state', lambda m: states.append(m.data), latched)
    clients = {name: node.create_client(Trigger, name) for name in (
        '/identifier_node/start_recording', '/identifier_node/stop_recording', '/identifier_node/identify',
        '/excitation_node/start')}
    set_parameters = node.create_client(SetParameters, '/identifier_node/set_parameters')
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(node)
    try:
        with spinning(executor, context):
            yield {'clients': clients, 'results': results, 'states': states, 'folder': folder,
                   'set_parameters': set_parameters}
    finally:
        node.destroy_node()
        rclpy.shutdown(context=context)
        stop(processes)


def _call(client, timeout=60.0):
    return call(client, timeout)


def test_record_identify_and_receive_the_result(suite):
    clients = suite['clients']
    time.sleep(2.0)  # let the excitation node see joint states
    assert not _call(clients['/identifier_node/identify']).success  # nothing recorded yet
    started = _call(clients['/identifier_node/start_recording'])
    assert started.success, started.message
    response = _call(clients['/excitation_node/start'])
    assert response.success, response.message
    end = time.monotonic() + 60.0
    while time.monotonic() < end and 'done' not in suite['states']:
        time.sleep(0.2)
    assert 'done' in suite['states'], suite['states']
    stopped = _call(clients['/identifier_node/stop_recording'])
    assert stopped.success, stopped.message
    segments = list(suite['folder'].glob('recording_*/segment_*'))
    assert len(segments) >= 3  # written incrementally, in closed segments
    pending = clients['/identifier_node/identify'].call_async(Trigger.Request())
    during = _call(clients['/identifier_node/stop_recording'])  # the node keeps serving while it solves
    assert during.message == 'not recording' and not pending.done()
    end = time.monotonic() + 120.0
    while not pending.done() and time.monotonic() < end:
        time.sleep(0.05)
    identified = pending.result()
    assert identified is not None and identified.success, identified
    end = time.monotonic() + 10.0
    while time.monotonic() < end and not suite['results']:
        time.sleep(0.1)
    document = yaml.safe_load(suite['results'][-1])
    assert document['dynid_result'] == 1 and document['robot'] == 'ur5e'
    assert len(document['base_parameters']) == 36
    assert document['metrics']['train']['relative_residual'] < 0.1
    assert list(suite['folder'].glob('recording_*/result.yaml'))


def test_physical_parameter_gives_a_physically_consistent_result(suite):
    # After the recording of the test above: physical:=true re-identifies it with every link a realizable
    # body; the published result carries the physical section (prior weight chosen, M(q) check).
    request = SetParameters.Request(parameters=[Parameter(name='physical', value=ParameterValue(
        type=ParameterType.PARAMETER_BOOL, bool_value=True))])
    client = suite['set_parameters']
    assert client.wait_for_service(timeout_sec=30.0)
    future = client.call_async(request)
    end = time.monotonic() + 30.0
    while not future.done() and time.monotonic() < end:
        time.sleep(0.05)
    assert future.done() and future.result().results[0].successful, future.result()
    before = len(suite['results'])
    identified = _call(suite['clients']['/identifier_node/identify'], timeout=180.0)
    assert identified.success, identified.message
    end = time.monotonic() + 10.0
    while time.monotonic() < end and len(suite['results']) == before:
        time.sleep(0.1)
    document = yaml.safe_load(suite['results'][-1])
    physical = document['physical']
    assert len(physical['links']) == 6 and physical['mass_matrix']['positive_definite_percent'] == 100.0
    assert physical['prior']['used'] and physical['prior']['cross_validation'] is not None
    assert all(link['parameters'][0] > 0 for link in physical['links'])  # every mass positive
    assert physical['consistency']['cost_percent'] >= 0


def test_ctrl_c_while_recording_keeps_every_segment(tmp_path):
    from dynid.io.recorder import read_recording

    domain = 100 + (os.getpid() + 29) % 100
    processes = [_process('sim_node', domain, 'rate:=200.0'),
                 _process('identifier_node', domain, f'output_directory:={tmp_path}', 'segment_duration:=1.0',
                          'data_wait:=60.0')]
    context = rclpy.Context()
    rclpy.init(context=context, domain_id=domain)
    try:
        node = rclpy.create_node('ctrl_c_probe', context=context)
        client = node.create_client(Trigger, '/identifier_node/start_recording')
        assert client.wait_for_service(timeout_sec=30.0)
        future = client.call_async(Trigger.Request())
        rclpy.spin_until_future_complete(node, future, executor=SingleThreadedExecutor(context=context),
                                         timeout_sec=70.0)  # the twin may start after the identifier
        assert future.result().success, future.result()  # answered once joint_states were being written
        time.sleep(2.5)
    finally:
        rclpy.shutdown(context=context)
        processes[1].send_signal(signal.SIGINT)
        output, _ = processes[1].communicate(timeout=20)
        stop(processes[:1])
    assert processes[1].returncode == 0, output
    dataset = read_recording(next(tmp_path.glob('recording_*')))  # the open segment was closed on the way out
    assert dataset.t[-1] > 2.0 and len(list(tmp_path.glob('recording_*/segment_*'))) >= 3


def test_data_that_cannot_identify_the_model_are_refused_on_the_answer_and_diagnostics(tmp_path):
    """In one process: the last recording is 15 s of the twin's gentle motion (cond ~1e4), which dynid
    identify refuses. The node refuses it too, says why on ~/identify and /diagnostics, publishes and
    writes nothing and keeps serving; with force:=true it keeps the result, with the warning first."""
    from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
    from rclpy.parameter import Parameter as NodeParameter

    from dynid.io.bag import write_bag
    from dynid.model import load_robot
    from dynid.nodes.identifier_node import IdentifierNode
    from dynid.sim.parameters import PlantParameters
    from dynid.sim.recording import record_to_dataset
    from dynid.sim.twin import DigitalTwin, gentle_motion, trajectory_start

    robot = load_robot('ur5e')
    motion = gentle_motion(robot)
    twin = DigitalTwin(PlantParameters.defaults(robot, seed=0), rate_hz=250.0, seed=0,
                       initial_q=trajectory_start(motion, robot.joint_names))
    twin.follow(motion, start_time=0.0)
    recording = write_bag(tmp_path / 'gentle', record_to_dataset(twin.run(15.0), None, {}))
    context = rclpy.Context()
    rclpy.init(context=context, domain_id=100 + (os.getpid() + 53) % 100)
    node = IdentifierNode(context=context, parameter_overrides=[NodeParameter('report', value=False)])
    probe = rclpy.create_node('refusal_probe', context=context)
    results, statuses = [], {}
    latched = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL)
    probe.create_subscription(String, '/identifier_node/result', lambda m: results.append(m.data), latched)
    probe.create_subscription(DiagnosticArray, '/diagnostics',
                              lambda m: statuses.update({s.name: s for s in m.status}), 10)
    client = probe.create_client(Trigger, '/identifier_node/identify')
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(node)
    executor.add_node(probe)
    name = '/identifier_node: identification'
    try:
        with spinning(executor, context):
            node.session.last_recording = recording  # as if it had just been recorded
            refused = _call(client, timeout=120.0)
            assert not refused.success and refused.message.startswith('the data cannot identify the model: cond(W)')
            assert refused.message.endswith('(force:=true keeps the result anyway)'), refused.message
            assert wait_until(lambda: name in statuses and statuses[name].level == DiagnosticStatus.WARN, 10.0)
            assert statuses[name].message == f'refused: {refused.message}'
            assert not results and not (recording / 'result.yaml').exists()
            magic = node.set_parameters([NodeParameter('method', value='magic')])[0]  # a choice: refused
            assert not magic.successful and magic.reason == ("method must be one of ols, wls, irls, iirls, tls, "
                                                             "mls, got 'magic'")
            assert node.set_parameters([NodeParameter('force', value=True)])[0].successful
            kept = _call(client, timeout=120.0)
            assert kept.success, kept.message
            assert wait_until(lambda: results, 10.0)
            warnings = yaml.safe_load(results[-1])['warnings']
            assert warnings[0].startswith('kept with force:=true although the data cannot identify the model')
            assert wait_until(lambda: statuses[name].level == DiagnosticStatus.OK, 10.0)
            assert statuses[name].message == kept.message and (recording / 'result.yaml').exists()
    finally:
        node.destroy_node()
        probe.destroy_node()
        rclpy.shutdown(context=context)
