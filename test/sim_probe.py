"""A probe node for sim_node over DDS: the state topics taken with the shared intake, the command topics
published (test_sim_node.py, test_mujoco_plant.py)."""

import threading
import time

import numpy as np
import rclpy
from diagnostic_msgs.msg import DiagnosticArray
from rclpy.executors import SingleThreadedExecutor
from rclpy.qos import QoSProfile, ReliabilityPolicy
from std_msgs.msg import Float64MultiArray
from std_srvs.srv import Trigger
from trajectory_msgs.msg import JointTrajectory

from dynid.io.stream import StateBatch
from dynid.ros.intake import IntakeSettings, StateIntake

RATE = 500.0
TOPICS = ('joint_states', 'motor_states', 'joint_currents', 'joint_temperatures')
JOINTS = ['shoulder_pan_joint', 'shoulder_lift_joint', 'elbow_joint', 'wrist_1_joint', 'wrist_2_joint',
          'wrist_3_joint']


class Probe:
    """A test node in its own context, spun in a thread, recording what it receives."""

    def __init__(self, domain: int, reliability: str = 'best_effort', depth: int | None = None) -> None:
        """``reliability`` and queue ``depth`` of the state subscriptions (the intake's; None: its default; the nodes
        read best effort)."""
        self.context = rclpy.Context()
        rclpy.init(context=self.context, domain_id=domain)
        self.node = rclpy.create_node('dynid_test_probe', context=self.context)
        reliable = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE)
        self.lock = threading.Lock()
        self.stamps = {topic: [] for topic in TOPICS}
        self.position: np.ndarray | None = None  # latest q and q̇ [rad, rad/s], robot order
        self.velocity: np.ndarray | None = None
        self.batches: list[StateBatch] = []  # every joined sample
        self.diagnostics: dict[str, str] = {}
        settings = IntakeSettings(reliability=reliability, **({} if depth is None else {'depth': depth}))
        self.intake = StateIntake(self.node, settings, on_messages=self._on_messages,
                                  on_samples=self._on_samples, joint_names=JOINTS)
        self.intake.start()
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

    def _on_messages(self, taken: dict) -> None:
        with self.lock:
            for topic, (stamps, _) in taken.items():
                self.stamps[topic].extend(stamps.tolist())

    def _on_samples(self, batch) -> None:
        with self.lock:
            self.position, self.velocity = batch.q[-1], batch.dq[-1]
            self.batches.append(batch)

    def _on_diagnostics(self, message: DiagnosticArray) -> None:
        for status in message.status:
            if 'digital twin' in status.name:
                with self.lock:
                    self.diagnostics = {v.key: v.value for v in status.values}

    def send(self, publisher, message, timeout: float = 60.0) -> None:
        """Publish ``message`` once a subscriber is matched (one published before discovery is lost)."""
        end = time.monotonic() + timeout
        while publisher.get_subscription_count() == 0:
            assert time.monotonic() < end, f'no subscriber on {publisher.topic_name}'
            time.sleep(0.05)
        publisher.publish(message)

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
