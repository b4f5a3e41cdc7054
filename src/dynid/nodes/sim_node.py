"""sim_node: the digital twin (:mod:`dynid.sim`) in real time over DDS, publishing what a robot driver publishes.

``engine:=mujoco`` puts MuJoCo in place of the twin's plant (:mod:`dynid.sim.mujoco_twin`): the same topics,
stamps, controller and sensors.

Its topics, service and parameters are in docs/nodes/README.md. Samples are produced on the node clock
at ``rate`` Hz in bursts every ``batch_period`` s, each with its own stamp, and published as serialized
messages built for the whole burst at once (:class:`dynid.io.cdr.JointStateEncoder`). Sample k carries
the stamp start + k/rate for good: when the process falls behind, the twin runs late and catches up (at
most :data:`dynid.sim.driver.CATCH_UP_S` of samples per turn) and never skips ahead (:mod:`dynid.sim.realtime`);
trajectories stamped in wall time stay where they belong, and ``/diagnostics`` reports the lag. The twin as a
driver, without ROS types, is :class:`dynid.sim.driver.DriverTwin`: the node converts its messages and publishes.
"""

from __future__ import annotations

import math

import numpy as np
from rcl_interfaces.msg import SetParametersResult
from rclpy.node import Node
from rclpy.qos import QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray, String
from std_srvs.srv import Trigger
from trajectory_msgs.msg import JointTrajectory

from dynid.errors import InputError, checked_choice
from dynid.io import EFFORT_MEANINGS
from dynid.io.cdr import JointStateEncoder, stamp_ns
from dynid.io.trajectories import trajectory_of_message
from dynid.model import Payload, load_robot
from dynid.ros.conversions import effort_command
from dynid.ros.diagnostics import DiagnosticsPublisher, status
from dynid.ros.parameters import declare_robot, declare_settings, value_or
from dynid.ros.runner import node_message, run_node
from dynid.settings import from_values
from dynid.sim.changes import parse_joint_change
from dynid.sim.driver import COMMANDS, DriverTwin
from dynid.sim.mujoco_twin import make_twin
from dynid.sim.parameters import PlantParameters
from dynid.sim.settings import ENGINES, TwinSettings
from dynid.sim.ur_modes import URDriverSide

HISTORY_S = 5.0  # seconds of samples the state publishers keep for reliable readers


class SimNode(Node):
    """The twin as a ROS node (module docstring). Takes the usual rclpy Node keyword arguments."""

    def __init__(self, **kwargs) -> None:
        super().__init__('sim_node', **kwargs)
        robot, engine = self._start_twin()
        self._open_interfaces()
        self.get_logger().info(f'simulating {robot.name} ({len(self.joint_names)} joints) at {self.rate:g} Hz on '
                               f'the {engine} plant')

    def _start_twin(self):
        """The robot and the twin of the parameters (:class:`dynid.sim.settings.TwinSettings`), with UR's driver
        side where the effort or the commands are UR's; returns the robot and the engine."""
        given = declare_robot(self, ('robot', 'robot_description'))
        declare_settings(self, TwinSettings)
        settings = from_values(TwinSettings, lambda name: value_or(self, name))
        checked_choice('parameter joint_states_effort', settings.joint_states_effort, EFFORT_MEANINGS)
        checked_choice('parameter engine', settings.engine, ENGINES)
        robot = load_robot(given.robot_description or given.robot)
        params = PlantParameters.of_twin(robot, self._payload(settings.payload_mass), settings.drive_gain_error,
                                         settings.seed, settings.temperature, settings.internal_feedforward,
                                         settings.noise)
        self.initial_q = np.array(settings.initial_position, dtype=float) if settings.initial_position else None
        self.rate, self.batch_period = settings.rate, settings.batch_period
        changes = [parse_joint_change(text) for text in settings.joint_changes]
        twin = make_twin(params, settings.engine, settings.mjcf, rate_hz=self.rate, seed=settings.seed,
                         initial_q=self.initial_q, joint_changes=changes)
        set_mass = settings.payload_mass if settings.robot_payload_mass < 0 else settings.robot_payload_mass
        ur = URDriverSide(params, settings.joint_states_effort, self._payload(set_mass), settings.ur_direct_torque,
                          list(settings.ur_viscous_scale), list(settings.ur_coulomb_scale))
        self.driver = DriverTwin(twin, ur, self.rate, self._now_ns(), self.initial_q)
        self.twin = twin
        self.joint_names = list(robot.joint_names)
        self.add_on_set_parameters_callback(self._on_set_parameters)
        return robot, settings.engine

    def _open_interfaces(self) -> None:
        """The state publishers, the trajectory and command subscriptions, the reset service, the timer and the
        diagnostics."""
        reliable = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE)
        # The history holds HISTORY_S of samples (at least 100): a reliable reader must get every sample before the
        # history overwrites it, and after a stall the twin catches up in back-to-back bursts, faster than real
        # time, while the reader may still be starved (one second of samples lost ~1000 at 1 kHz when the twin
        # stopped for 1 s and a reliable recorder for 2 s; with 100, a 0.8 s stall at 500 Hz lost ~40).
        deep = QoSProfile(depth=max(100, math.ceil(HISTORY_S * self.rate)), reliability=ReliabilityPolicy.RELIABLE)
        topics = self.driver.topics
        self.publishers_ = {topic: self.create_publisher(JointState, topic, deep) for topic in topics}
        self.encoders = {topic: JointStateEncoder(self.joint_names, fields) for topic, fields in topics.items()}
        self.create_subscription(JointTrajectory, 'joint_trajectory_controller/joint_trajectory',
                                 self._on_trajectory, reliable)
        for topic, (kind, _) in COMMANDS.items():
            self.create_subscription(Float64MultiArray, topic,
                                     lambda message, k=kind: self._on_command(k, message), reliable)
        self.create_service(Trigger, '~/reset', self._on_reset)
        self.create_subscription(String, '~/apply_contact', self._on_contact, reliable)
        self.driver.start(self._now_ns())  # the clock starts once the node is set up
        self.create_timer(max(self.batch_period, 1.0 / self.rate), self._on_timer)
        self.diagnostics = DiagnosticsPublisher(self, lambda: [self._status()])

    @staticmethod
    def _payload(mass: float) -> Payload | None:
        return Payload(mass, [0.0, 0.0, 0.05]) if mass > 0 else None

    def _now_ns(self) -> int:
        return self.get_clock().now().nanoseconds

    def _on_timer(self) -> None:
        burst = self.driver.burst(self._now_ns())
        if burst is None:
            return
        stamps, topics = burst
        for topic, values in topics.items():
            for data in self.encoders[topic].encode(stamps, **values):
                self.publishers_[topic].publish(data)

    def _reject(self, kind: str, error: InputError) -> None:
        label = self.driver.rejected(kind)
        self.get_logger().warning(f'ignored {label}: {node_message(error)}', throttle_duration_sec=1.0)

    def _on_trajectory(self, message: JointTrajectory) -> None:
        try:
            self.driver.follow(*trajectory_of_message(message, self.joint_names), stamp_ns(message.header.stamp))
        except InputError as error:
            self._reject('trajectories', error)

    def _on_command(self, kind: str, message: Float64MultiArray) -> None:
        """A forward command controller's command (:meth:`dynid.sim.driver.DriverTwin.command`); bad ones counted
        and ignored."""
        try:
            values = effort_command(message, len(self.joint_names))
        except InputError as error:
            self._reject(kind, error)
            return
        self.driver.command(kind, values)

    def _on_contact(self, message: String) -> None:
        """Contacts to put on the twin (YAML: :meth:`dynid.sim.driver.DriverTwin.apply_contacts`); bad ones ignored."""
        try:
            count = self.driver.apply_contacts(message.data, self._now_ns())
        except InputError as error:
            self._reject('contacts', error)
            return
        self.get_logger().info(f'{count} contact(s) put on the robot')

    def _on_reset(self, request, response):
        self.driver.reset(self._now_ns())
        response.success, response.message = True, 'restarted at the initial position'
        return response

    def _on_set_parameters(self, parameters) -> SetParametersResult:
        for parameter in parameters:
            if parameter.name == 'payload_mass':
                self.twin.set_payload(self._payload(float(parameter.value)))
            elif parameter.name in ('ur_viscous_scale', 'ur_coulomb_scale'):
                try:
                    self.driver.ur.set_scales(**{parameter.name[3:]: list(parameter.value)})
                except InputError as error:
                    return SetParametersResult(successful=False, reason=node_message(error))
        return SetParametersResult(successful=True)

    def _status(self):
        level, message, values = self.driver.health(self._now_ns())
        return status(f'{self.get_fully_qualified_name()}: digital twin', level, message, values, 'dynid_sim')


def main(args=None) -> None:
    """Run sim_node until shut down."""
    run_node(SimNode, 'sim_node', args)


if __name__ == '__main__':
    main()
