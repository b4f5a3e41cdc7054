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

import threading
import time
from pathlib import Path

import numpy as np
import yaml
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from std_msgs.msg import Float64MultiArray, MultiArrayDimension, String
from std_srvs.srv import Trigger

from dynid.errors import InputError
from dynid.estimate.replay import EstimationSettings, build_estimators
from dynid.estimate.stiffness import CONVERGED_RELATIVE_STD
from dynid.identify.result import IdentificationResult
from dynid.model import load_robot
from dynid.nodes.diagnostics import DiagnosticsPublisher, status
from dynid.nodes.intake import IntakeSettings, StateIntake
from dynid.nodes.parameters import declarer, descriptor
from dynid.nodes.runner import run_node

QUANTITIES = ('alpha1', 'alpha3', 'k0', 'relative_to_baseline', 'fit', 'relative_std')
FRICTION_QUANTITIES = ('alpha1', 'alpha2', 'active')
INTAKE_PERIOD_S = 0.05  # default intake_period [s]: estimates are published at 10 Hz by default
STALE_S = 1.0  # no joined sample for this long: inputs are stale
CHANGE_REPORT_S = 30.0  # a detected stiffness change is reported (WARN) for this long [s of samples]


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
        # Takes of 50 samples at 1 kHz: the estimators' per-update overhead is paid half as often as with
        # the intake's usual 20 ms (about 50 instead of 100 µs per 6-joint sample on the test machine).
        settings = IntakeSettings.declare(self, period_s=INTAKE_PERIOD_S)
        get = self.get_parameter
        description = get('robot_description').value
        self.robot = load_robot(description if description else get('robot').value)
        result_file = get('result_file').value
        self.result = IdentificationResult.load(result_file) if result_file else None
        self.result_source = f'result from {result_file}' if result_file else ''
        # The sample rate is expected_rate, or read off the first batch's stamps (the estimators are then
        # made again); made here in any case, so that bad input is refused at start-up.
        self.rate_hz = settings.expected_rate_hz or 1000.0
        self.rate_known = settings.expected_rate_hz > 0
        self.estimator, self.friction = self._build_estimators(self.result)
        self.lock = threading.Lock()  # the intake's thread updates, the executor's thread reads
        self.results_refused = 0
        if topic := get('result_topic').value:
            latched = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                                 durability=DurabilityPolicy.TRANSIENT_LOCAL)
            self.create_subscription(String, topic, self._on_result, latched)
        self.last_sample_time: float | None = None
        self.baseline = self._load_baseline()
        self.stiffness = self.create_publisher(Float64MultiArray, '~/stiffness', 10)
        self.friction_publisher = self.create_publisher(Float64MultiArray, '~/friction', 10)
        self.intake = StateIntake(self, settings, on_samples=self._on_samples, joint_names=self.robot.joint_names)
        self.create_service(Trigger, '~/reset', self._on_reset)
        self.create_service(Trigger, '~/set_baseline', self._on_set_baseline)
        self.create_timer(1.0 / get('publish_rate').value, self._publish)
        self.diagnostics = DiagnosticsPublisher(self, self._statuses)
        self.intake.start()
        self.get_logger().info(f'estimating the joint stiffness of {self.robot.name}')

    # ------------------------------------------------------------------------------ inputs
    def _build_estimators(self, result):
        """(stiffness, friction) estimators as ``dynid estimate`` builds them (one construction)."""
        settings = EstimationSettings(damping=float(self.get_parameter('damping').value),
                                      min_velocity=float(self.get_parameter('min_velocity').value))
        built = build_estimators(self.robot, result, settings, self.rate_hz)
        log = self.get_logger().warning if result is not None else self.get_logger().info
        for note in built.notes:
            log(note)
        return built.stiffness, built.friction

    def _on_result(self, message: String) -> None:
        """A result from ``result_topic``: the estimators start again with it; a bad one is refused."""
        try:
            result = IdentificationResult.from_dict(yaml.safe_load(message.data), 'result_topic')
            with self.lock:
                rate_hz = self.rate_hz
            built = self._build_estimators(result)
        except (yaml.YAMLError, InputError, TypeError, ValueError, KeyError, AttributeError) as error:
            self.results_refused += 1
            self.get_logger().error(f'result_topic: refused a result ({self.results_refused} so far): {error}')
            return
        with self.lock:
            if self.rate_hz != rate_hz:  # the rate became known meanwhile
                built = self._build_estimators(result)
            self.result, self.result_source = result, f'result from {self.get_parameter("result_topic").value}'
            self.estimator, self.friction = built
        self.get_logger().info('estimating again with the result received on result_topic')

    def _on_samples(self, batch) -> None:
        with self.lock:
            if not self.rate_known:  # the publisher's rate from the first stamps
                if len(batch) < 3:
                    return
                self.rate_hz, self.rate_known = float(1e9 / np.median(np.diff(batch.stamps_ns))), True
                self.estimator, self.friction = self._build_estimators(self.result)
                self.get_logger().info(f'samples at {self.rate_hz:.4g} Hz')
            self.estimator.update(batch.q, batch.theta, batch.current, batch.temperature)
            if self.friction is not None:
                self.friction.update(batch.q, batch.theta, batch.current, batch.temperature)
            self.last_sample_time = time.monotonic()

    def _load_baseline(self) -> np.ndarray | None:
        path = Path(self.get_parameter('baseline_file').value)
        if not path.exists():
            return None
        try:
            stored = yaml.safe_load(path.read_text()) or {}
            values = np.array([float(stored['k0'][name]) for name in self.robot.joint_names])
        except (OSError, yaml.YAMLError, KeyError, TypeError, ValueError) as error:
            raise InputError(f'baseline_file {path}: not a baseline of {self.robot.name} ({error})') from None
        self.get_logger().info(f'stiffness baseline from {path}')
        return values

    # ----------------------------------------------------------------------------- outputs
    def _table(self) -> np.ndarray:
        """(joints, quantities) of the current estimates (module docstring)."""
        with self.lock:
            alpha = self.estimator.alpha.copy()
            k0 = self.estimator.stiffness_at_zero.copy()
            fit = np.asarray(self.estimator.fit, dtype=float).copy()
            spread = self.estimator.relative_std
        relative = k0 / self.baseline if self.baseline is not None else np.full(k0.shape, np.nan)
        third = alpha[:, 1] if alpha.shape[1] > 1 else np.zeros(len(k0))
        return np.column_stack([alpha[:, 0], third, k0, relative, fit, spread])

    def _friction_table(self) -> np.ndarray | None:
        with self.lock:
            if self.friction is None:
                return None
            active = np.asarray(self.friction.active, dtype=float).reshape(-1)
            return np.column_stack([self.friction.alpha, np.broadcast_to(active, (self.robot.n,))])

    def _message(self, table: np.ndarray, quantities) -> Float64MultiArray:
        message = Float64MultiArray(data=table.ravel().tolist())
        joints, width = table.shape
        message.layout.dim = [
            MultiArrayDimension(label='joint:' + ','.join(self.robot.joint_names), size=joints, stride=joints * width),
            MultiArrayDimension(label='quantity:' + ','.join(quantities), size=width, stride=width)]
        return message

    def _publish(self) -> None:
        if self.last_sample_time is None:
            return
        self.stiffness.publish(self._message(self._table(), QUANTITIES))
        friction = self._friction_table()
        if friction is not None:
            self.friction_publisher.publish(self._message(friction, FRICTION_QUANTITIES))

    def _statuses(self) -> list:
        name = self.get_fully_qualified_name()
        statuses = [self.intake.status(f'{name}: intake')]
        refused = self.results_refused
        source = self.result_source or 'no identification result (no friction map, no friction adaptation)'
        statuses.append(status(f'{name}: result', 'warn' if refused else 'ok',
                               source + (f'; {refused} refused on result_topic' if refused else ''),
                               {'refused': str(refused)}))
        age = None if self.last_sample_time is None else time.monotonic() - self.last_sample_time
        if age is None or age > STALE_S:
            message = ('no joined samples yet (needs joint_states, motor_states and joint_currents)' if age is None
                       else f'inputs stale: no sample for {age:.1f} s')
            statuses.append(status(f'{name}: inputs', 'stale', message))
            return statuses
        table = self._table()
        drop = self.get_parameter('stiffness_drop_warning').value
        for j, joint in enumerate(self.robot.joint_names):
            alpha1, alpha3, k0, relative, fit, spread = table[j]
            values = dict(zip(QUANTITIES, (f'{v:.6g}' for v in table[j]), strict=True))
            converged = bool(np.isfinite(spread) and spread <= CONVERGED_RELATIVE_STD)
            with self.lock:
                changes, changed_at = int(self.estimator.changes[j]), self.estimator.last_change_s[j]
                before, now = self.estimator.before_change[j], self.estimator.time_s
            values.update(changes=str(changes), last_change_s=f'{changed_at:.3f}')
            if np.isfinite(relative) and relative < 1.0 - drop:
                level, text = 'warn', f'stiffness {100 * (1 - relative):.0f} % below the baseline'
            elif changes and now - changed_at < CHANGE_REPORT_S:
                level, text = 'warn', (f'stiffness changed {now - changed_at:.1f} s ago: k0 '
                                       f'{100 * (k0 / before - 1):+.0f} % since (estimating again)')
            else:
                level, text = 'ok', 'converged' if converged else 'not converged yet (needs deflection while moving)'
            statuses.append(status(f'{name}: stiffness {joint}', level, text, values))
        friction = self._friction_table()
        for j, joint in enumerate(self.robot.joint_names if friction is not None else ()):
            alpha1, alpha2, active = friction[j]
            at_bound = alpha1 <= 0.4 + 1e-9 or alpha1 >= 1.5 - 1e-9
            text = (f'Coulomb level ×{alpha1:.3f} of the identified one' +
                    (' (at its bound: the model no longer explains the friction)' if at_bound else ''))
            statuses.append(status(f'{name}: friction {joint}', 'warn' if at_bound else 'ok', text,
                                   {'alpha1': f'{alpha1:.6g}', 'alpha2': f'{alpha2:.6g}', 'adapting': bool(active)}))
        return statuses

    # ---------------------------------------------------------------------------- services
    def _on_reset(self, request, response):
        with self.lock:
            self.estimator.reset()
            if self.friction is not None:
                self.friction.reset()
        response.success, response.message = True, 'estimation restarted'
        return response

    def _on_set_baseline(self, request, response):
        table = None if self.last_sample_time is None else self._table()
        if table is None or not np.all(np.isfinite(table[:, 2])) or np.any(table[:, 2] <= 0):
            response.success, response.message = False, 'nothing estimated yet'
            return response
        path = Path(self.get_parameter('baseline_file').value)
        document = {'robot': self.robot.name, 'k0': {n: float(v) for n, v in zip(self.robot.joint_names,
                                                                                  table[:, 2], strict=True)}}
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(yaml.safe_dump(document, sort_keys=False))
        except OSError as error:
            response.success, response.message = False, f'cannot write {path}: {error}'
            return response
        self.baseline = table[:, 2].copy()
        response.success, response.message = True, f'baseline stored in {path}'
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
