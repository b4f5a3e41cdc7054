"""estimator_node: watches a running robot and tells its joint stiffness and friction as they drift.

Takes ``joint_states``, ``motor_states``, ``joint_currents`` and ``joint_temperatures`` through the
shared intake (:mod:`dynid.nodes.intake`: batches joined by stamp, joints by name; every sample is
used) and runs :class:`dynid.estimate.StiffnessEstimator` on them (RLS with directional forgetting on
the virtual flexibility torque from both encoders and the current; Madsen et al. 2019). The friction
map comes from an identification result (``result_file``), the drives from the robot model. With a
result whose friction model is ``viscous_coulomb`` or ``load_squared`` it also adapts the E-GMS
friction (:class:`dynid.estimate.AdaptiveFrictionEstimator`, Madsen 2020 ch.6: α1 scales the
identified Coulomb level, a wear indicator; α2 is an excess viscous coefficient [N·m·s/rad]), with
τ̂_j from the result's rigid-body model, and publishes ``~/friction`` the same way (quantities
alpha1, alpha2, active).

Publishes ``~/stiffness`` (std_msgs/Float64MultiArray, at most ``publish_rate`` Hz) with a labelled
layout: dimension ``joint`` (the robot's joints, in order) × dimension ``quantity`` (alpha1 [N·m/rad],
alpha3 [N·m/rad³], k0 = stiffness at zero deflection [N·m/rad], relative_to_baseline [-], fit [%],
relative_std = standard deviation of α̂1 relative to α̂1 [-]); and ``/diagnostics`` once per second:
per joint converged or not (relative_std ≤ 2 %), the stiffness relative to the stored baseline
(WARN below 1 − ``stiffness_drop_warning``), a stiffness change the estimator detected (WARN for
30 s, with k0 against its value before; the estimator restarts its covariance and learns again
within seconds), plus stale inputs and the intake's lost samples. Services
(std_srvs/Trigger): ``~/reset`` starts the estimation again; ``~/set_baseline`` stores the current
k0 of every joint in ``baseline_file`` (YAML), which is read again at start-up.
Without motor encoders (no ``motor_states``) nothing can be estimated: diagnostics say so.
"""

from __future__ import annotations

from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from std_msgs.msg import Float64MultiArray, String
from std_srvs.srv import Trigger

from dynid.errors import InputError
from dynid.estimate.online import FRICTION_QUANTITIES, QUANTITIES, STALE_S, OnlineEstimation, load_baseline
from dynid.estimate.replay import EstimationSettings
from dynid.identify.result import IdentificationResult
from dynid.model import load_robot
from dynid.nodes.conversions import labelled_table_message
from dynid.nodes.diagnostics import DiagnosticsPublisher, status
from dynid.nodes.intake import IntakeSettings, StateIntake
from dynid.nodes.parameters import declarer, descriptor
from dynid.nodes.runner import run_node

INTAKE_PERIOD_S = 0.05  # default intake_period [s]: estimates are published at 10 Hz by default


class EstimatorNode(Node):
    """The estimator (module docstring). Takes the usual rclpy Node keyword arguments."""

    def __init__(self, **kwargs) -> None:
        self.intake: StateIntake | None = None  # before Node: destroy_node() may run on a failed start
        super().__init__('estimator_node', **kwargs)
        try:
            self._start()
        except BaseException:  # a refused start leaves no half-made node behind (one-process suites)
            self.destroy_node()
            raise

    def _start(self) -> None:
        d = declarer(self)
        d('robot', 'ur5e', descriptor('robot name, URDF path or robot file', read_only=True))
        d('robot_description', '', descriptor('URDF XML, preferred when set', read_only=True))
        d('result_file', '', descriptor('identification result (YAML) with the friction map; empty: none',
                                        read_only=True))
        d('result_topic', '', descriptor('topic of identification results (std_msgs/String YAML, e.g. '
                                         '/identifier_node/result); each one received replaces the result; empty: none',
                                         read_only=True))
        d('damping', 0.0, descriptor('transmission damping D of every joint [N·m·s/rad]', True, 0.0, 1e4))
        d('min_velocity', 0.05, descriptor('stiffness learns only while |rotor velocity| reaches this [rad/s]: '
                                           'the friction map does not hold at rest', True, 0.0, 10.0))
        d('publish_rate', 10.0, descriptor('estimates published at most this often [Hz]', True, 0.1, 100.0))
        d('stiffness_drop_warning', 0.15, descriptor('warn when k0 falls this fraction below the baseline',
                                                     False, 0.01, 0.99))
        d('baseline_file', 'dynid_stiffness_baseline.yaml', descriptor('where ~/set_baseline stores k0'))
        # Takes of 50 samples at 1 kHz: the estimators' per-update overhead is paid less often than with
        # the intake's usual 20 ms (about 34 instead of 60 µs of CPU per 6-joint sample replaying
        # bench_estimation's B2 estimators, load 1.5 on 2 cores).
        settings = IntakeSettings.declare(self, period_s=INTAKE_PERIOD_S)
        get = self.get_parameter
        robot = load_robot(get('robot_description').value or get('robot').value)
        result_file = get('result_file').value
        result = IdentificationResult.load(result_file) if result_file else None
        baseline = load_baseline(get('baseline_file').value, robot)
        if baseline is not None:
            self.get_logger().info(f'stiffness baseline from {get("baseline_file").value}')
        # The sample rate is expected_rate, or read off the first batch's stamps (the estimators are then
        # made again); made here in any case, so that bad input is refused at start-up.
        self.estimation = OnlineEstimation(
            robot, result,
            EstimationSettings(damping=float(get('damping').value), min_velocity=float(get('min_velocity').value)),
            settings.expected_rate_hz, result_source=f'result from {result_file}' if result_file else '',
            baseline=baseline)
        self._log(self.estimation.notes)
        if topic := get('result_topic').value:
            latched = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                                 durability=DurabilityPolicy.TRANSIENT_LOCAL)
            self.create_subscription(String, topic, self._on_result, latched)
        self.stiffness = self.create_publisher(Float64MultiArray, '~/stiffness', 10)
        self.friction_publisher = self.create_publisher(Float64MultiArray, '~/friction', 10)
        self.intake = StateIntake(self, settings, on_samples=lambda batch: self._log(self.estimation.update(batch)),
                                  joint_names=robot.joint_names)
        self.create_service(Trigger, '~/reset', self._on_reset)
        self.create_service(Trigger, '~/set_baseline', self._on_set_baseline)
        self.create_timer(1.0 / get('publish_rate').value, self._publish)
        self.diagnostics = DiagnosticsPublisher(self, self._statuses)
        self.intake.start()
        self.get_logger().info(f'estimating the joint stiffness of {robot.name}')

    def _log(self, notes) -> None:
        for level, text in notes:
            (self.get_logger().warning if level == 'warn' else self.get_logger().info)(text)

    def _on_result(self, message: String) -> None:
        """A result from ``result_topic``: the estimators start again with it; a bad one is refused."""
        try:
            topic = self.get_parameter('result_topic').value
            self._log(self.estimation.replace_result(message.data, 'result_topic', topic))
        except InputError as error:
            self.get_logger().error(f'result_topic: refused a result ({self.estimation.results_refused} so far): '
                                    f'{error}')
            return
        self.get_logger().info('estimating again with the result received on result_topic')

    # ----------------------------------------------------------------------------- outputs
    def _publish(self) -> None:
        estimation = self.estimation
        if estimation.last_sample_time is None:
            return
        names = estimation.robot.joint_names
        self.stiffness.publish(labelled_table_message(estimation.stiffness_table(), names, QUANTITIES))
        friction = estimation.friction_table()
        if friction is not None:
            self.friction_publisher.publish(labelled_table_message(friction, names, FRICTION_QUANTITIES))

    def _statuses(self) -> list:
        name, estimation = self.get_fully_qualified_name(), self.estimation
        statuses = [self.intake.status(f'{name}: intake')]
        refused = estimation.results_refused
        source = estimation.result_source or 'no identification result (no friction map, no friction adaptation)'
        statuses.append(status(f'{name}: result', 'warn' if refused else 'ok',
                               source + (f'; {refused} refused on result_topic' if refused else ''),
                               {'refused': str(refused)}))
        age = estimation.age_s()
        if age is None or age > STALE_S:
            message = ('no joined samples yet (needs joint_states, motor_states and joint_currents)' if age is None
                       else f'inputs stale: no sample for {age:.1f} s')
            return statuses + [status(f'{name}: inputs', 'stale', message)]
        return statuses + [status(f'{name}: {s.kind} {s.joint}', s.level, s.text, s.values)
                           for s in estimation.joint_states(self.get_parameter('stiffness_drop_warning').value)]

    # ---------------------------------------------------------------------------- services
    def _on_reset(self, request, response):
        self.estimation.reset()
        response.success, response.message = True, 'estimation restarted'
        return response

    def _on_set_baseline(self, request, response):
        response.success, response.message = self.estimation.set_baseline(self.get_parameter('baseline_file').value)
        return response

    def destroy_node(self) -> None:
        if self.intake is not None:
            self.intake.stop()
        super().destroy_node()


def main(args=None) -> None:
    """Run estimator_node until shut down."""
    run_node(EstimatorNode, 'estimator_node', args)


if __name__ == '__main__':
    main()
