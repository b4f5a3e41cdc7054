"""contact_node: what the arm feels, live: the external joint torque, the flange wrench and contacts.

Takes the state topics through the shared intake (:mod:`dynid.ros.intake`: batches joined by stamp, joints by name)
and runs the momentum observer on the identified model with its state-dependent σ, contact detection and the flange
wrench (:mod:`dynid.contact.live`, :mod:`dynid.contact.monitor`). Publishes, at the state rate, ``~/external_torque``
(sensor_msgs/JointState, effort = τ̂_ext [N·m] less the rest baseline), ``~/external_torque_std`` (the same message,
effort = its state-dependent σ [N·m]) and ``~/external_wrench`` (geometry_msgs/WrenchStamped in the flange frame, arms
of six joints or more, not at singular poses); each contact's start and end on ``~/contacts`` (std_msgs/String, JSON);
the contact state with each joint's alarm level [N·m], the intake's losses and any skipped input on /diagnostics.
Each contact goes into the health record as a ``collision`` event. The estimate is advisory: never the robot's safety
function. Parameters: docs/nodes/README.md.
"""

from __future__ import annotations

import numpy as np
from geometry_msgs.msg import WrenchStamped
from rclpy.node import Node
from sensor_msgs.msg import JointState
from std_msgs.msg import String
from trajectory_msgs.msg import JointTrajectory

from dynid.contact.live import LiveContacts, contact_message
from dynid.contact.monitor import ContactMonitor, load_calibration
from dynid.contact.settings import ContactNodeSettings, ContactSettings
from dynid.errors import InputError
from dynid.identify import IdentificationResult, recorded_joints
from dynid.io.cdr import JointStateEncoder, stamp_ns
from dynid.io.trajectories import trajectory_of_message
from dynid.model import Payload, load_robot
from dynid.ros.diagnostics import DiagnosticsPublisher, status
from dynid.ros.intake import IntakeSettings, StateIntake
from dynid.ros.parameters import declare_robot, declare_settings, value_or
from dynid.ros.runner import node_message, run_node
from dynid.settings import from_values

INTAKE_PERIOD_S = 0.05


class ContactNode(Node):
    """The contact job (module docstring). Takes the usual rclpy Node keyword arguments."""

    def __init__(self, **kwargs) -> None:
        self.intake: StateIntake | None = None
        super().__init__('contact_node', **kwargs)
        try:
            self._start()
        except BaseException:
            self.destroy_node()
            raise

    def _start(self) -> None:
        given = declare_robot(self)
        declare_settings(self, ContactSettings, read_only=True)  # read once, at start
        declare_settings(self, ContactNodeSettings)
        intake = IntakeSettings.declare(self, period_s=INTAKE_PERIOD_S)
        self.torque = self.create_publisher(JointState, '~/external_torque', 100)
        self.torque_std = self.create_publisher(JointState, '~/external_torque_std', 100)
        self.wrench = self.create_publisher(WrenchStamped, '~/external_wrench', 100)
        self.contacts = self.create_publisher(String, '~/contacts', 10)
        self.diagnostics = DiagnosticsPublisher(self, self._statuses)
        self.live, self.problem = None, ''
        try:  # bad input leaves the node up, saying why in /diagnostics
            monitor, node = self._monitor(given, intake.expected_rate_hz, intake.joint_states_effort)
        except InputError as error:
            self.problem = node_message(error)
            self.get_logger().error(f'not estimating: {self.problem}')
            return
        robot = monitor.robot
        self.short = '' if monitor.calibration is None else monitor.calibration.shortness()
        self.live = LiveContacts(monitor, node.health_db if node.record_collisions else None, node.health_robot)
        self.names, self.frame = list(robot.joint_names), robot.flange
        self.encoder = JointStateEncoder(self.names, ('effort',))
        self.intake = StateIntake(self, intake, on_samples=self._on_samples, joint_names=robot.joint_names,
                                  required=('joint_currents',) if monitor.model.torque_source == 'current' else (),
                                  robot=robot)
        if node.reference_topic and monitor.settings.reference:
            self.create_subscription(JointTrajectory, node.reference_topic, self._on_reference, 10)
        self.intake.start()
        self.get_logger().info(f'contacts of {robot.name}: observer K = {monitor.gain[0]:g} 1/s × '
                               f'{monitor.observer.stages} stages, thresholds '
                               + ('from ' + node.calibration_file if node.calibration_file else 'uncalibrated'))
        if monitor.calibration is not None and monitor.calibration.short:
            self.get_logger().warning(monitor.calibration.shortness())
        for line in [] if monitor.calibration is None else monitor.calibration.warnings:
            self.get_logger().warning(line)

    def _monitor(self, given, rate_hz: float, effort: str):
        """The contact job of the parameters, and the node's own settings; InputError for bad input."""
        node = from_values(ContactNodeSettings, lambda name: value_or(self, name))
        settings = from_values(ContactSettings, lambda name: value_or(self, name)).validated()
        if not node.result_file:
            raise InputError('result_file is required: the identification the observer runs on')
        result = IdentificationResult.load(node.result_file)
        joints = list(given.joints) or recorded_joints(result.provenance)
        robot = load_robot(given.robot_description or given.robot, joints=joints, joint_map=given.joint_map)
        payload = Payload(node.payload_mass, list(node.payload_com)) if node.payload_mass > 0 else None
        wrench = {'auto': None, 'on': True, 'off': False}[node.wrench]
        monitor = ContactMonitor(result, robot, settings, rate_hz or 1000.0, payload, wrench=wrench)
        if node.calibration_file:
            monitor.set_calibration(load_calibration(node.calibration_file, robot, node.result_file, effort))
        self.signs = self._signs(node, result, robot)
        return monitor, node

    @staticmethod
    def _signs(node, result, robot) -> np.ndarray:
        from dynid.io.dataset import parse_torque_signs

        signs = parse_torque_signs(node.torque_sign, robot.joint_names) if node.torque_sign else \
            ((result.provenance.get('inputs') or [{}])[0].get('source') or {}).get('torque_sign') or {}
        return np.array([float(signs.get(name, 1)) for name in robot.joint_names])

    def _on_reference(self, message: JointTrajectory) -> None:
        """A trajectory sent to the controller: it starts at its stamp, or on arrival when the stamp is zero."""
        try:
            trajectory, _ = trajectory_of_message(message, self.names)
        except InputError as error:
            self.live.refuse_reference(node_message(error))
            return
        now = self.get_clock().now().nanoseconds * 1e-9
        start = stamp_ns(message.header.stamp) * 1e-9
        self.live.follow(trajectory, start if start > 0 else now, now)

    def _on_samples(self, batch) -> None:
        if np.any(self.signs < 0) and batch.tau is not None:
            batch.tau = batch.tau * self.signs
        out = self.live.update(batch)
        for contact in out.started:
            self.contacts.publish(String(data=contact_message(contact, self.names, 'start', self.short)))
        for contact in out.ended:
            self.contacts.publish(String(data=contact_message(contact, self.names, 'end', self.short)))
        if out.samples is None:
            return
        for data in self.encoder.encode(batch.stamps_ns, effort=out.samples.estimate):
            self.torque.publish(data)
        for data in self.encoder.encode(batch.stamps_ns, effort=out.samples.sigma):
            self.torque_std.publish(data)
        if out.samples.wrench is not None:
            for stamp, values in zip(batch.stamps_ns, out.samples.wrench, strict=True):
                if np.all(np.isfinite(values)):
                    self.wrench.publish(_wrench_message(int(stamp), self.frame, values))

    def _statuses(self) -> list:
        name = self.get_fully_qualified_name()
        if self.live is None:
            return [status(f'{name}: contacts', 'error', f'not estimating: {self.problem}')]
        level, message, values = self.live.status()
        return [self.intake.status(f'{name}: intake'), status(f'{name}: contacts', level, message, values)]

    def destroy_node(self) -> None:
        if self.intake is not None:
            self.intake.stop()
        super().destroy_node()


def _wrench_message(stamp_ns: int, frame: str, values: np.ndarray) -> WrenchStamped:
    message = WrenchStamped()
    message.header.stamp.sec, message.header.stamp.nanosec = divmod(stamp_ns, 1_000_000_000)
    message.header.frame_id = frame
    force, torque = message.wrench.force, message.wrench.torque
    force.x, force.y, force.z, torque.x, torque.y, torque.z = (float(v) for v in values)
    return message


def main(args=None) -> None:
    """Run contact_node until shut down."""
    run_node(ContactNode, 'contact_node', args)


if __name__ == '__main__':
    main()
