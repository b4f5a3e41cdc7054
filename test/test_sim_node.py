"""sim_node over real DDS (issue 4): rate, equal stamps, following a trajectory, surviving bad input.

The node runs as its own process, as users run it; this test talks to it from a probe node on an
isolated ROS_DOMAIN_ID with localhost-only discovery.
"""

import os
import threading
import time

import numpy as np
import pytest
import rclpy
from builtin_interfaces.msg import Duration
from diagnostic_msgs.msg import DiagnosticArray
from rclpy.executors import SingleThreadedExecutor
from rclpy.qos import HistoryPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray
from std_srvs.srv import Trigger
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from dds_helpers import parameters, start_node, stop

RATE = 500.0
TOPICS = ('joint_states', 'motor_states', 'joint_currents', 'joint_temperatures')
JOINTS = ['shoulder_pan_joint', 'shoulder_lift_joint', 'elbow_joint', 'wrist_1_joint', 'wrist_2_joint',
          'wrist_3_joint']


class Probe:
    """A test node in its own context, spun in a thread, recording what it receives."""

    def __init__(self, domain: int) -> None:
        self.context = rclpy.Context()
        rclpy.init(context=self.context, domain_id=domain)
        self.node = rclpy.create_node('dynid_test_probe', context=self.context)
        reliable = QoSProfile(depth=5000, reliability=ReliabilityPolicy.RELIABLE, history=HistoryPolicy.KEEP_LAST)
        self.lock = threading.Lock()
        self.stamps = {topic: [] for topic in TOPICS}
        self.last_state: JointState | None = None
        self.diagnostics: dict[str, str] = {}
        for topic in TOPICS:
            self.node.create_subscription(JointState, topic, lambda m, t=topic: self._on_state(t, m), reliable)
        self.node.create_subscription(DiagnosticArray, '/diagnostics', self._on_diagnostics, 10)
        self.trajectory = self.node.create_publisher(JointTrajectory, 'joint_trajectory_controller/joint_trajectory',
                                                     reliable)
        self.effort = self.node.create_publisher(Float64MultiArray, 'forward_effort_controller/commands', reliable)
        self.reset = self.node.create_client(Trigger, 'sim_node/reset')
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)
        self.thread = threading.Thread(target=self._spin, daemon=True)
        self.running = True
        self.thread.start()

    def _spin(self) -> None:
        while self.running and self.context.ok():
            self.executor.spin_once(timeout_sec=0.05)

    def _on_state(self, topic: str, message: JointState) -> None:
        with self.lock:
            self.stamps[topic].append(message.header.stamp.sec * 10**9 + message.header.stamp.nanosec)
            if topic == 'joint_states':
                self.last_state = message

    def _on_diagnostics(self, message: DiagnosticArray) -> None:
        for status in message.status:
            if 'digital twin' in status.name:
                with self.lock:
                    self.diagnostics = {v.key: v.value for v in status.values}

    def wait_for(self, condition, timeout: float) -> bool:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            with self.lock:
                if condition():
                    return True
            time.sleep(0.05)
        return False

    def close(self) -> None:
        self.running = False
        self.thread.join(timeout=2)
        self.node.destroy_node()
        rclpy.shutdown(context=self.context)


@pytest.fixture(scope='module')
def sim():
    domain = 100 + os.getpid() % 100
    process = start_node('sim_node', domain, *parameters(f'rate:={RATE}', 'seed:=1'))
    os.environ['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'
    probe = Probe(domain)
    try:
        assert probe.wait_for(lambda: len(probe.stamps['joint_states']) > 10, 30.0), 'sim_node did not publish'
        yield process, probe
    finally:
        probe.close()
        stop([process])


def test_publishes_four_topics_at_the_nominal_rate_with_equal_stamps(sim):
    _, probe = sim
    start = time.monotonic()
    time.sleep(6.5)
    assert time.monotonic() - start >= 6.5
    with probe.lock:
        stamps = {topic: np.array(values) for topic, values in probe.stamps.items()}
    window_start = stamps['joint_states'][0] + 10**9  # skip the first second (discovery)
    for topic in TOPICS:
        inside = stamps[topic][(stamps[topic] >= window_start) & (stamps[topic] < window_start + 5 * 10**9)]
        assert inside.size >= 0.95 * 5 * RATE, (topic, inside.size)
    common = set(stamps['joint_states'].tolist())
    for topic in TOPICS[1:]:
        overlap = len(common & set(stamps[topic].tolist()))
        assert overlap >= 0.95 * min(len(common), stamps[topic].size)


def test_follows_a_joint_trajectory(sim):
    _, probe = sim
    with probe.lock:
        start = np.array(probe.last_state.position)
        names = list(probe.last_state.name)
    assert names == JOINTS
    target = start.copy()
    target[0] += 0.3
    message = JointTrajectory(joint_names=list(reversed(JOINTS)))  # joints are matched by name
    for seconds, position in ((1.0, start + 0.5 * (target - start)), (2.0, target)):
        point = JointTrajectoryPoint(positions=list(reversed(position.tolist())), velocities=[0.0] * 6,
                                     time_from_start=Duration(sec=int(seconds), nanosec=0))
        message.points.append(point)
    probe.trajectory.publish(message)
    reached = probe.wait_for(lambda: abs(probe.last_state.position[0] - target[0]) < 5e-3
                             and abs(probe.last_state.velocity[0]) < 0.05, 8.0)
    assert reached, f'joint 1 at {probe.last_state.position[0]:.4f}, target {target[0]:.4f}'


def test_ignores_malformed_commands_and_keeps_publishing(sim):
    process, probe = sim
    probe.effort.publish(Float64MultiArray(data=[1.0, 2.0, 3.0]))              # wrong length
    probe.effort.publish(Float64MultiArray(data=[0.0, float('nan'), 0, 0, 0, 0]))  # NaN
    probe.trajectory.publish(JointTrajectory(joint_names=['not_a_joint'], points=[
        JointTrajectoryPoint(positions=[0.0], time_from_start=Duration(sec=1))]))  # unknown joint
    assert probe.wait_for(lambda: int(probe.diagnostics.get('rejected_effort_commands', 0)) >= 2
                          and int(probe.diagnostics.get('rejected_trajectories', 0)) >= 1, 5.0), probe.diagnostics
    with probe.lock:
        before = len(probe.stamps['joint_states'])
    assert probe.wait_for(lambda: len(probe.stamps['joint_states']) > before + 200, 3.0)
    assert process.poll() is None


def test_reset_service(sim):
    _, probe = sim
    assert probe.reset.wait_for_service(timeout_sec=5.0)
    future = probe.reset.call_async(Trigger.Request())
    assert probe.wait_for(lambda: future.done(), 5.0)
    assert future.result().success
