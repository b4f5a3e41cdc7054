"""excitation_node over real DDS (issue 5): approach then trajectory in chunks; refusals publish nothing."""

import os
import subprocess
import time

import numpy as np
import pytest
import rclpy
from rclpy.executors import SingleThreadedExecutor
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState
from std_msgs.msg import String
from std_srvs.srv import Trigger
from trajectory_msgs.msg import JointTrajectory

from dds_helpers import STARTUP_S, call, parameters, spinning, start_node, stop
from dynid.excite.trajectory import FourierTrajectory, save_trajectory
from dynid.model import load_robot

POINT_RATE = 50.0


def _start_node(namespace: str, trajectory_file: str, domain: int) -> subprocess.Popen:
    return start_node('excitation_node', domain, '-r', f'__ns:={namespace}',
                      *parameters(f'trajectory_file:={trajectory_file}', 'chunk_duration:=1.0',
                                  f'point_rate:={POINT_RATE}', 'lead_time:=0.3', 'approach_velocity:=0.5'))


@pytest.fixture(scope='module')
def nodes(tmp_path_factory, module_ros_domain):
    folder = tmp_path_factory.mktemp('excitation')
    robot = load_robot('ur5e')
    home = np.array([0.0, -1.5708, 1.5708, -1.5708, -1.5708, 0.0])
    good = FourierTrajectory(robot.joint_names, 0.5, home, np.zeros((6, 2)), np.tile([[0.1, 0.02]], (6, 1)))
    bad = FourierTrajectory(robot.joint_names, 0.5, home, np.zeros((6, 1)), np.full((6, 1), 4.0))
    save_trajectory(good, folder / 'good.yaml')
    save_trajectory(bad, folder / 'bad.yaml')
    domain = module_ros_domain
    processes = [_start_node('/good', str(folder / 'good.yaml'), domain),
                 _start_node('/bad', str(folder / 'bad.yaml'), domain)]
    os.environ['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'
    context = rclpy.Context()
    rclpy.init(context=context, domain_id=domain)
    node = rclpy.create_node('excitation_probe', context=context)
    received = {'good': [], 'bad': []}
    states = {'good': [], 'bad': []}
    reliable = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE)
    latched = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL)
    publishers = {}
    for ns in received:
        node.create_subscription(JointTrajectory, f'/{ns}/joint_trajectory_controller/joint_trajectory',
                                 lambda m, ns=ns: received[ns].append(m), reliable)
        node.create_subscription(String, f'/{ns}/excitation_node/state', lambda m, ns=ns: states[ns].append(m.data),
                                 latched)
        publishers[ns] = node.create_publisher(JointState, f'/{ns}/joint_states', 10)
    clients = {ns: node.create_client(Trigger, f'/{ns}/excitation_node/start') for ns in received}
    start_q = good.evaluate(np.array([0.0]))[0][0]
    current = start_q.copy()
    current[0] += 0.1  # the robot is 0.1 rad away from the trajectory's start

    def publish_states():
        message = JointState(name=list(robot.joint_names), position=current.tolist())
        for publisher in publishers.values():
            publisher.publish(message)

    node.create_timer(0.02, publish_states)
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(node)
    try:
        with spinning(executor, context):
            yield {'robot': robot, 'received': received, 'states': states, 'clients': clients, 'current': current,
                   'start_q': start_q}
    finally:
        node.destroy_node()
        rclpy.shutdown(context=context)
        stop(processes)


def _call(client, timeout=20.0):
    return call(client, timeout, wait=STARTUP_S)  # the first call waits for the node processes to start


def test_trajectory_breaking_limits_is_refused_and_nothing_is_published(nodes):
    time.sleep(1.0)  # let joint_states arrive
    response = _call(nodes['clients']['bad'])
    assert not response.success and 'position limits' in response.message
    time.sleep(1.0)
    assert nodes['received']['bad'] == []
    assert any(s.startswith('refused') for s in nodes['states']['bad'])


def test_start_sends_approach_then_trajectory_in_chunks(nodes):
    response = _call(nodes['clients']['good'])
    assert response.success, response.message
    end = time.monotonic() + 10.0
    while time.monotonic() < end and 'done' not in nodes['states']['good']:
        time.sleep(0.1)
    messages = nodes['received']['good']
    assert len(messages) >= 3 and 'done' in nodes['states']['good']
    assert all(list(m.joint_names) == list(nodes['robot'].joint_names) for m in messages)
    first = messages[0].points[0]
    np.testing.assert_allclose(first.positions, nodes['current'], atol=1e-9)  # approach from where it is
    np.testing.assert_allclose(first.velocities, 0.0, atol=1e-12)
    # Integer nanoseconds from the first stamp: floats of ~1.8e9 s would only resolve ~0.2 µs.
    stamps = [m.header.stamp.sec * 10**9 + m.header.stamp.nanosec for m in messages]
    stamps = [(stamp - stamps[0]) for stamp in stamps]
    assert np.all(np.diff(stamps) > 0.9e9) and np.all(np.diff(stamps) < 1.1e9)  # 1 s chunks
    times, positions = [], []
    for stamp, message in zip(stamps, messages, strict=True):
        for point in message.points:
            times.append(stamp + point.time_from_start.sec * 10**9 + point.time_from_start.nanosec)
            positions.append(point.positions)
    times, positions = np.array(times) * 1e-9, np.array(positions)
    # chunk boundaries repeat one point, at the same nanosecond give or take the rounding of each offset
    unique = np.concatenate([[True], np.diff(times) > 1e-6])
    assert np.all(np.diff(times) >= -2e-9) and np.all(np.diff(times)[~unique[1:]] < 2e-9)  # stamps in integer ns
    assert np.allclose(np.diff(times[unique])[2:-2], 1.0 / POINT_RATE, atol=1e-6)
    reached = np.flatnonzero(np.abs(positions - nodes['start_q']).max(axis=1) < 1e-9)
    assert reached.size and 0.0 < times[reached[0]] - times[0] < 10.0  # the approach ends at the start
    assert times[-1] - times[reached[0]] == pytest.approx(2.0, abs=0.05)  # then one 2 s period


def test_start_is_refused_while_nobody_listens_on_the_controller_topic(tmp_path, monkeypatch, ros_domain):
    """Chunks are published once: with joint_states arriving but no controller subscribed (e.g. a wrong
    controller name), ~/start waits for the match, then refuses with the reason and publishes nothing."""
    from rclpy.parameter import Parameter

    from dynid.nodes import excitation_node
    from dynid.nodes.excitation_node import ExcitationNode

    robot = load_robot('ur5e')
    home = np.array([0.0, -1.5708, 1.5708, -1.5708, -1.5708, 0.0])
    save_trajectory(FourierTrajectory(robot.joint_names, 0.5, home, np.zeros((6, 1)), np.full((6, 1), 0.05)),
                    tmp_path / 'good.yaml')
    context = rclpy.Context()
    rclpy.init(context=context, domain_id=ros_domain)
    monkeypatch.setattr(excitation_node, 'LISTENER_WAIT_S', 1.0)
    try:
        node = ExcitationNode(context=context, namespace='lonely', parameter_overrides=[
            Parameter('trajectory_file', value=str(tmp_path / 'good.yaml'))])
        probe = rclpy.create_node('lonely_probe', context=context)
        states = probe.create_publisher(JointState, '/lonely/joint_states', 10)
        probe.create_timer(0.02, lambda: states.publish(JointState(name=list(robot.joint_names),
                                                                   position=home.tolist())))
        client = probe.create_client(Trigger, '/lonely/excitation_node/start')
        executor = SingleThreadedExecutor(context=context)
        executor.add_node(node)
        executor.add_node(probe)
        with spinning(executor, context):
            response = call(client, 30.0, wait=30.0)
        assert not response.success
        assert 'nobody subscribes to /lonely/joint_trajectory_controller/joint_trajectory' in response.message
        assert node.chunks == [] and node.next_chunk == 0
    finally:
        rclpy.shutdown(context=context)
