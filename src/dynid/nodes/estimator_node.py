"""estimator_node: watches a running robot and tells its joint stiffness and friction as they drift.

Takes the state topics through the shared intake (:mod:`dynid.ros.intake`: batches joined by stamp, joints by
name) and runs the estimators of :class:`dynid.estimate.online.OnlineEstimation`: the joint stiffness (RLS with
directional forgetting on the virtual flexibility torque from both encoders and the current; Madsen et al. 2019)
and, with a ``viscous_coulomb`` or ``load_squared`` result (``result_file``, ``result_topic``), the adaptive E-GMS
friction (Madsen 2020 ch.6: α1 scales the identified Coulomb level, a wear indicator; α2 an excess viscous
coefficient). Drives from ``drives_file``, else the result's, else the robot model's.

Publishes ``~/stiffness`` and ``~/friction`` (std_msgs/Float64MultiArray with a labelled joint × quantity layout,
at most ``publish_rate`` Hz; quantities :data:`~dynid.estimate.online.QUANTITIES` and ``FRICTION_QUANTITIES``)
and ``/diagnostics`` once per second (:meth:`~dynid.estimate.online.OnlineEstimation.display`: the mode, what is
left out and why, per joint converged, below the baseline, a detected change or an α̂ capped on its box; stale
inputs; the intake's lost samples). ``~/reset`` starts the estimation again; ``~/set_baseline`` stores k0 in
``baseline_file``. The settled estimates go to the health record (:mod:`dynid.ros.health`, docs/health.md).

Without motor encoders (joint_states for 2 s and no ``motor_states``), or with ``stiffness`` false, it adapts the
friction alone, on rigid joints (θ = q) without them, as ``dynid estimate --no-stiffness`` does, and takes θ
again once motor_states come (:class:`~dynid.estimate.online.EncoderWatch`). Topics, parameters and
diagnostics in full: docs/nodes/README.md.
"""

from __future__ import annotations

from rclpy.node import Node
from std_msgs.msg import Float64MultiArray, String
from std_srvs.srv import Trigger

from dynid.errors import InputError
from dynid.estimate.online import (
    FRICTION_QUANTITIES,
    QUANTITIES,
    EncoderWatch,
    EstimatorNodeSettings,
    OnlineEstimation,
    load_baseline,
)
from dynid.estimate.replay import EstimationSettings
from dynid.identify import IdentificationResult, recorded_joints
from dynid.model import load_robot
from dynid.model.drives import load_drives
from dynid.ros.conversions import labelled_table_message
from dynid.ros.diagnostics import DiagnosticsPublisher, status
from dynid.ros.health import HealthReporting
from dynid.ros.intake import IntakeSettings, StateIntake
from dynid.ros.parameters import declare_robot, declare_settings, value_or
from dynid.ros.payload_updates import LATCHED, declare_payload_updates, payload_subscription
from dynid.ros.runner import node_message, run_node
from dynid.settings import from_values

INTAKE_PERIOD_S = 0.05  # default intake_period [s]: estimates are published at 10 Hz by default
NODE_SETTINGS = ('stiffness', 'damping', 'min_velocity', 'friction_change', 'bound_sigmas')  # parameters of the job's


class EstimatorNode(Node):
    """The estimator (module docstring). Takes the usual rclpy Node keyword arguments."""

    def __init__(self, **kwargs) -> None:
        self.intake: StateIntake | None = None  # before Node: destroy_node() may run on a failed start
        self.health: HealthReporting | None = None
        super().__init__('estimator_node', **kwargs)
        try:
            self._start()
        except BaseException:  # a refused start leaves no half-made node behind (one-process suites)
            self.destroy_node()
            raise

    def _start(self) -> None:
        given = declare_robot(self)
        declare_settings(self, EstimatorNodeSettings)
        declare_settings(self, EstimationSettings, read_only=True, names=NODE_SETTINGS)
        updates = declare_payload_updates(self)
        # Takes of 50 samples at 1 kHz: the estimators' per-update overhead is paid less often than with
        # the intake's usual 20 ms (benchmarks/README.md, "The figures behind the defaults").
        settings = IntakeSettings.declare(self, period_s=INTAKE_PERIOD_S)
        get, node = self.get_parameter, from_values(EstimatorNodeSettings, lambda name: value_or(self, name))
        result_file = node.result_file
        result = IdentificationResult.load(result_file) if result_file else None
        joints = list(given.joints) or (None if result is None else recorded_joints(result.provenance))
        robot = load_robot(given.robot_description or given.robot, joints=joints, joint_map=given.joint_map)
        baseline = load_baseline(node.baseline_file, robot)
        if baseline is not None:
            self.get_logger().info(f'stiffness baseline from {node.baseline_file}')
        # The sample rate is expected_rate, or read off the first batch's stamps (the estimators are then
        # made again); made here in any case, so that bad input is refused at start-up.
        drives = load_drives(node.drives_file, robot.joint_names) if node.drives_file else None
        self.estimation = OnlineEstimation(
            robot, result, from_values(EstimationSettings, lambda n: get(n).value if n in NODE_SETTINGS else None),
            settings.expected_rate_hz, result_source=f'result from {result_file}' if result_file else '',
            baseline=baseline, drives=drives, payload_file=updates.payload_file)
        self.encoders = EncoderWatch()
        self._log(self.estimation.notes)
        if topic := node.result_topic:
            self.create_subscription(String, topic, self._on_result, LATCHED)
        payload_subscription(self, updates.payload_topic, self.estimation.replace_payload_document)
        self.stiffness = self.create_publisher(Float64MultiArray, '~/stiffness', 10)
        self.friction_publisher = self.create_publisher(Float64MultiArray, '~/friction', 10)
        self.intake = StateIntake(self, settings, on_samples=lambda batch: self._log(self.estimation.update(batch)),
                                  joint_names=robot.joint_names,
                                  robot=robot if drives is None else robot.with_drives(drives))
        self.create_service(Trigger, '~/reset', self._on_reset)
        self.create_service(Trigger, '~/set_baseline', self._on_set_baseline)
        self.create_timer(1.0 / node.publish_rate, self._publish)
        self.create_timer(0.5, self._watch_encoders)
        self.diagnostics = DiagnosticsPublisher(self, self._statuses)
        self.health = HealthReporting(self, self.estimation, result_file, self._log)
        self.intake.start()
        self.get_logger().info(f'estimating {robot.name}: {self.estimation.mode()}')

    def _log(self, notes) -> None:
        for level, text in notes:  # one call site per severity: rclpy refuses a call site whose severity changes
            if level == 'warn':
                self.get_logger().warning(text)
            else:
                self.get_logger().info(text)

    def _on_result(self, message: String) -> None:
        """A result from ``result_topic``: the estimators start again with it; a bad one is refused."""
        try:
            topic = self.get_parameter('result_topic').value
            self._log(self.estimation.replace_result(message.data, 'result_topic', topic))
        except InputError as error:
            self.get_logger().error(f'result_topic: refused a result ({self.estimation.results_refused} so far): '
                                    f'{node_message(error)}')
            return
        self.get_logger().info('estimating again with the result received on result_topic')

    # ----------------------------------------------------------------------------- outputs
    def _watch_encoders(self) -> None:
        """θ from motor_states while they come; rigid joints (θ = q) where joint_states come without them."""
        rotor = self.encoders.update(self.intake.received('joint_states'), self.intake.received('motor_states'))
        if rotor != self.estimation.rotor:
            self.intake.require(('motor_states', 'joint_currents') if rotor else ('joint_currents',))
            self._log(self.estimation.use_rotor(rotor))

    def _publish(self) -> None:
        estimation = self.estimation
        if estimation.last_sample_time is None:
            return
        names = estimation.robot.joint_names
        if estimation.stiffness is not None:
            self.stiffness.publish(labelled_table_message(estimation.stiffness_table(), names, QUANTITIES))
        friction = estimation.friction_table()
        if friction is not None:
            self.friction_publisher.publish(labelled_table_message(friction, names, FRICTION_QUANTITIES))

    def _statuses(self) -> list:
        name, drop = self.get_fully_qualified_name(), self.get_parameter('stiffness_drop_warning').value
        return [self.intake.status(f'{name}: intake')] + [status(f'{name}: {what}', level, text, values) for
                                                           what, level, text, values in self.estimation.display(drop)]

    # ---------------------------------------------------------------------------- services
    def _on_reset(self, request, response):
        self.health.event('reset')  # the session so far is written before the estimators start again
        self.estimation.reset()
        response.success, response.message = True, 'estimation restarted'
        return response

    def _on_set_baseline(self, request, response):
        response.success, response.message = self.estimation.set_baseline(self.get_parameter('baseline_file').value)
        if response.success:
            self.health.event('set_baseline')
        return response

    def destroy_node(self) -> None:
        if self.intake is not None:
            self.intake.stop()
        if self.health is not None:
            self.health.close()
        super().destroy_node()


def main(args=None) -> None:
    """Run estimator_node until shut down."""
    run_node(EstimatorNode, 'estimator_node', args)


if __name__ == '__main__':
    main()
