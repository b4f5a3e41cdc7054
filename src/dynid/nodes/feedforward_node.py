"""feedforward_node: model torque from an identification result into ros2_control (a lifecycle node).

The torque is :class:`dynid.control.Feedforward`: the sum of the ``terms`` (entry points
``dynid.feedforward_terms``) built from ``result_file``, with the backend's semantics
(``compensate_gravity``, ``compensate_friction``, ``effort_is_current``), the robot's effort limits and
``rate_limit``. Every parameter is read at configure (and can only be changed while unconfigured).

Modes (``mode``):

- ``trajectory``: JointTrajectory on ``~/reference`` (joints by name) is republished on
  ``<controller>/joint_trajectory`` with ``effort`` filled for every point, plus points where the
  effort bends more than ``effort_tolerance`` between them (:mod:`dynid.control.trajectory_effort`:
  the rule, and why the controller's motion does not change), for a joint_trajectory_controller with
  an effort command interface. The header (start time) is kept; an empty trajectory (cancel) passes.
  With ``reference_correction`` the positions (velocities, accelerations) also carry the flexible-joint
  deflection φ_d (thesis ch.2 eq. (2.69)): the motor-side reference θ_d = q_d + φ_d, for a controller
  that regulates the motor position (docs/backends); refused in the other modes (an effort stream has
  no position channel) and without the flexible_joint term.
- ``streaming``: every 1/``rate`` s, the feedforward of the active reference (``~/reference`` with
  joint_trajectory_controller semantics: started at its header stamp, or on reception when zero;
  replaced by the next; the last point held at rest after the end) on
  ``<effort_controller>/commands`` (Float64MultiArray, reliable, in ``joints`` order). Zeros before
  the first reference.
- ``measured``: the same stream, of the measured state (``joint_states`` through the shared intake;
  q̈ = 0, or ``acceleration: estimated``): gravity and friction compensation for hand guiding.

Safety: commands only while active. The stream sends zeros on deactivate, cleanup, shutdown, error,
Ctrl-C or SIGTERM (this node's ``main``) and node destruction; zeros at the next period once
``joint_states`` has been silent for ``timeout`` s (each such event counted and reported); in
trajectory mode references are forwarded only while active (the efforts of a trajectory the
controller already holds stay with it); a stale ``joint_states`` only leaves out the measured inputs
(temperature: the terms' reference temperature), so a busy PC that delays the state topic does not
drop a reference the controller is waiting for. A result for another robot or other joints, an unknown term
or a bad parameter fails the configure transition with the reason in the log and on ``/diagnostics``
(with ``autostart`` the process exits with code 2). Efforts are bounded and never NaN (the
Feedforward). ``/diagnostics``: state, counters (messages, errors, stale events, published), the
RMS of each term over the recent motion, the intake.

α̂ of the friction_adaptive term comes from the estimator's ``~/friction`` table on ``adaptive_topic``.
"""

from __future__ import annotations

import os
import signal
import sys

import rclpy
from rcl_interfaces.msg import SetParametersResult
from rclpy.duration import Duration
from rclpy.exceptions import ParameterException, ParameterUninitializedException
from rclpy.executors import SingleThreadedExecutor
from rclpy.lifecycle import LifecycleNode, TransitionCallbackReturn
from rclpy.parameter import Parameter
from rclpy.qos import QoSProfile, ReliabilityPolicy
from rclpy.signals import SignalHandlerOptions
from std_msgs.msg import Float64MultiArray
from trajectory_msgs.msg import JointTrajectory

from dynid.control.commander import ACCELERATIONS, MODES, FeedforwardCommander
from dynid.control.configuration import FeedforwardSettings
from dynid.errors import InputError
from dynid.nodes.conversions import trajectory_from_message, trajectory_with_effort
from dynid.nodes.diagnostics import DiagnosticsPublisher, status
from dynid.nodes.intake import IntakeSettings, StateIntake
from dynid.nodes.parameters import declarer, descriptor
from dynid.nodes.runner import PARENT_VARIABLE

SUCCESS, FAILURE = TransitionCallbackReturn.SUCCESS, TransitionCallbackReturn.FAILURE
ACK_TIMEOUT_S = 0.5  # how long a stop waits for the subscribers to acknowledge the zeros


class FeedforwardNode(LifecycleNode):
    """The feedforward (module docstring). Takes the usual rclpy Node keyword arguments."""

    def __init__(self, **kwargs) -> None:
        self.intake: StateIntake | None = None  # before Node: destroy_node() may run on a failed start
        self.commands = self.output = self.commander = None
        self.state_label = 'unconfigured'
        super().__init__('feedforward_node', **kwargs)
        d = declarer(self)
        d('robot', 'ur5e', descriptor('robot name, URDF path or robot file'))
        d('robot_description', '', descriptor('URDF XML, preferred when set'))
        d('result_file', '', descriptor('identification result (YAML) of this robot; empty: the model\'s own '
                                        'parameters, no friction'))
        d('mode', 'trajectory', descriptor('what is commanded', choices=MODES))
        d('terms', list(FeedforwardSettings.terms),
          descriptor('feedforward terms (entry points dynid.feedforward_terms)'))
        d('term_options', '', descriptor('YAML {term: {option: value}}, e.g. "rigid_body: {payload: {mass: 2.0, '
                                         'com: [0, 0, 0.05]}}"'))
        d('compensate_gravity', True, descriptor('include gravity (false: UR, Franka compensate it)'))
        d('compensate_friction', True, descriptor('include friction (false: the robot compensates it)'))
        d('effort_is_current', False, descriptor('command motor current [A] = torque / drive gain (UR)'))
        d('drive_gains', Parameter.Type.DOUBLE_ARRAY, descriptor('drive gains [N·m/A] per joint for '
                                                                 'effort_is_current; unset: the result\'s'))
        d('rate_limit', 0.0, descriptor('largest effort change [N·m/s]; 0: none', False, 0.0, 1e7))
        d('controller', 'joint_trajectory_controller', descriptor('joint_trajectory_controller (trajectory mode)'))
        d('effort_controller', 'forward_effort_controller', descriptor('forward_command_controller with '
                                                                       'interface effort (streaming, measured)'))
        d('joints', Parameter.Type.STRING_ARRAY, descriptor('the effort controller\'s joints order; unset: the '
                                                            'robot\'s'))
        d('rate', 200.0, descriptor('stream rate, and the trajectory mode\'s evaluation grid [Hz]', False,
                                    1.0, 2000.0))
        d('effort_tolerance', 0.5, descriptor('trajectory mode: largest miss of the linearly interpolated '
                                              'effort [N·m, or A]', False, 1e-6, 1e4))
        d('reference_correction', False, descriptor('trajectory mode: add the flexible-joint deflection φ_d to the '
                                                    'positions (motor-side reference; needs the flexible_joint '
                                                    'term; only for controllers that regulate the motor position)'))
        d('timeout', 0.1, descriptor('joint_states silent this long [s]: stale, zeros', False, 0.005, 10.0))
        d('acceleration', 'zero', descriptor('measured mode: q̈', choices=ACCELERATIONS))
        d('adaptive_topic', 'estimator_node/friction', descriptor('the estimator\'s friction table (α̂ of '
                                                                  'friction_adaptive); empty: none'))
        d('autostart', False, descriptor('configure and activate at start-up', read_only=True))
        self.settings = IntakeSettings.declare(self)
        self.add_on_set_parameters_callback(self._on_set_parameters)
        self.refusal = ''
        self.counters = {'messages': 0, 'errors': 0, 'stale_events': 0, 'published': 0, 'points_added': 0}
        self.timer = None
        self.publishers_made: list = []
        self.subscriptions_made: list = []
        self.diagnostics = DiagnosticsPublisher(self, self._statuses)
        if self.get_parameter('autostart').value:
            if self.trigger_configure() != SUCCESS:
                raise InputError(self.refusal)
            self.trigger_activate()

    @property
    def sample(self):
        """The newest measured sample (:attr:`FeedforwardCommander.sample`), None while unconfigured."""
        return None if self.commander is None else self.commander.sample

    # ---------------------------------------------------------------------------- parameters
    def _value(self, name: str, default=None):
        try:
            return self.get_parameter(name).value
        except ParameterUninitializedException:  # declared without a default: not given
            return default

    def _on_set_parameters(self, parameters) -> SetParametersResult:
        ours = [p.name for p in parameters if self.has_parameter(p.name) and p.name != 'use_sim_time']
        if ours and self.state_label != 'unconfigured':
            return SetParametersResult(successful=False, reason=f'{", ".join(ours)}: read at configure; clean '
                                                                f'up the node (state {self.state_label}) first')
        return SetParametersResult(successful=True)

    def _commander(self) -> FeedforwardCommander:
        """The commander the parameters configure (InputError with the reason)."""
        value = self._value
        settings = FeedforwardSettings(
            value('robot_description') or value('robot'), value('result_file'), tuple(value('terms')),
            value('term_options'), value('compensate_gravity'), value('compensate_friction'),
            value('effort_is_current'), tuple(value('drive_gains', [])), value('rate_limit'), value('rate'),
            tuple(value('joints', [])))
        return FeedforwardCommander.from_settings(settings, value('mode'), value('acceleration'),
                                                  timeout_s=value('timeout'), rate_hz=value('rate'),
                                                  effort_tolerance=value('effort_tolerance'), counters=self.counters,
                                                  reference_correction=value('reference_correction'))

    # ----------------------------------------------------------------------------- lifecycle
    def on_configure(self, state) -> TransitionCallbackReturn:
        try:
            commander = self.commander = self._commander()
        except (InputError, ValueError, TypeError, KeyError) as error:  # a bad setting, never a crash
            reason = str(error) if isinstance(error, InputError) else f'{type(error).__name__}: {error}'
            self.refusal = f'configure refused: {reason}'
            self.counters['errors'] += 1
            self.get_logger().error(self.refusal)
            self.commander = None
            return FAILURE
        reliable = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE)
        value = self._value
        if commander.streamed:
            self.commands = self.create_publisher(Float64MultiArray, f'{value("effort_controller")}/commands',
                                                  reliable)
        else:
            self.output = self.create_publisher(JointTrajectory, f'{value("controller")}/joint_trajectory', reliable)
        self.publishers_made = [self.output or self.commands]
        subscribe = self.create_subscription
        if commander.mode != 'measured':
            self.subscriptions_made.append(subscribe(JointTrajectory, '~/reference', self._on_reference, reliable))
        if value('adaptive_topic') and 'friction_adaptive' in commander.feedforward.terms:
            self.subscriptions_made.append(subscribe(Float64MultiArray, value('adaptive_topic'), self._on_alpha, 10))
        self.intake = StateIntake(self, self.settings, topics=('joint_states', 'joint_temperatures'),
                                  on_samples=commander.measure, joint_names=commander.robot.joint_names,
                                  required=())
        self.intake.start()
        self.refusal, self.state_label = '', 'inactive'
        feedforward = commander.feedforward
        left_out = ''.join(f'; {name} left out ({why})' for name, why in feedforward.left_out.items())
        self.get_logger().info(f'{commander.mode} feedforward of {commander.source}: {", ".join(feedforward.terms)}'
                               f'{left_out}')
        return SUCCESS

    def on_activate(self, state) -> TransitionCallbackReturn:
        self.commander.activate()
        self.origin_ns = self._now_ns()
        if self.commander.streamed:
            self.timer = self.create_timer(1.0 / self.commander.rate_hz, self._on_tick)
        self.state_label = 'active'
        return super().on_activate(state)

    def on_deactivate(self, state) -> TransitionCallbackReturn:
        self._stop_commanding('inactive')
        return super().on_deactivate(state)

    def on_cleanup(self, state) -> TransitionCallbackReturn:
        self._release('unconfigured')
        return SUCCESS

    def on_shutdown(self, state) -> TransitionCallbackReturn:
        self._release('finalized')
        return SUCCESS

    def on_error(self, state) -> TransitionCallbackReturn:
        self._release('unconfigured')
        return SUCCESS

    def _stop_commanding(self, label: str) -> None:
        if self.timer is not None:
            self.destroy_timer(self.timer)
            self.timer = None
        self.state_label = label
        self._publish_zeros()
        if self.commands is not None and self.context.ok():  # the controller holds the last command forever
            self.commands.wait_for_all_acked(Duration(seconds=ACK_TIMEOUT_S))

    def _release(self, label: str) -> None:
        self._stop_commanding(label)
        if self.intake is not None:
            self.intake.stop()
            self.intake = None
        for subscription in self.subscriptions_made:
            self.destroy_subscription(subscription)
        for publisher in self.publishers_made:
            self.destroy_publisher(publisher)
        self.subscriptions_made, self.publishers_made, self.commands, self.output = [], [], None, None

    def destroy_node(self) -> None:
        if self.context.ok() and self.state_label != 'finalized':
            self._stop_commanding(self.state_label)
        if self.intake is not None:
            self.intake.stop()
        super().destroy_node()

    # --------------------------------------------------------------------------------- inputs
    def _fresh(self) -> bool:
        """The commander's staleness watch; going stale is logged once."""
        fresh, news = self.commander.fresh()
        if news:
            self.get_logger().warning(news)
        return fresh

    def _on_alpha(self, message: Float64MultiArray) -> None:
        try:
            self.commander.set_alpha([d.label for d in message.layout.dim], [d.size for d in message.layout.dim],
                                     message.data)
        except InputError as error:
            self._count_error(f'{self._value("adaptive_topic")}: ignored: {error}')

    def _count_error(self, reason: str) -> None:
        self.counters['errors'] += 1
        self.get_logger().warning(reason, throttle_duration_sec=1.0)

    def _on_reference(self, message: JointTrajectory) -> None:
        self.counters['messages'] += 1
        if self.state_label != 'active':
            self._count_error('reference not used: inactive')
            return
        try:
            trajectory, _ = trajectory_from_message(message, self.commander.robot.joint_names)
            if self.commander.streamed:
                stamp_ns = message.header.stamp.sec * 10**9 + message.header.stamp.nanosec
                self.commander.follow(trajectory, self._seconds(stamp_ns) if stamp_ns else None,
                                      self._seconds(self._now_ns()))
                return
            filled = self.commander.fill(trajectory, self._fresh())
            self.output.publish(message if filled is None else trajectory_with_effort(message, filled))
        except InputError as error:
            self._count_error(f'reference refused: {error}')

    # -------------------------------------------------------------------------------- outputs
    def _on_tick(self) -> None:
        """Streaming and measured modes: one command per period."""
        effort = self.commander.tick(self._seconds(self._now_ns()), self._fresh())
        if effort is None:
            self._publish_zeros()
        else:
            self.commands.publish(Float64MultiArray(data=effort.tolist()))

    def _publish_zeros(self) -> None:
        if self.commands is not None and self.context.ok():
            self.commands.publish(Float64MultiArray(data=self.commander.zeros().tolist()))

    def _now_ns(self) -> int:
        return self.get_clock().now().nanoseconds

    def _seconds(self, stamp_ns: int) -> float:
        return (stamp_ns - self.origin_ns) * 1e-9

    # ---------------------------------------------------------------------------- diagnostics
    def _statuses(self) -> list:
        name = self.get_fully_qualified_name()
        values = {'state': self.state_label, 'mode': self._value('mode'), **self.counters}
        fresh = self._fresh() if self.intake is not None else False
        if self.commander is not None:
            values.update(self.commander.values(fresh))
        if self.refusal:
            statuses = [status(f'{name}: feedforward', 'error', self.refusal, values)]
        else:
            statuses = [status(f'{name}: feedforward', 'ok', f'{self.state_label}, {values["mode"]} mode', values)]
        if self.intake is not None:
            statuses.append(status(f'{name}: joint_states', 'ok' if fresh else 'stale', 'fresh' if fresh else
                                   f'no joint_states for more than {self._value("timeout")} s: zero effort',
                                   {'stale_events': self.counters['stale_events']}))
            statuses.append(self.intake.status(f'{name}: intake'))
        return statuses


def main(args=None) -> None:
    """Run feedforward_node until Ctrl-C or SIGTERM, sending zeros on the way out (module docstring).

    rclpy's own signal handlers would shut the context down before zeros could be sent, so this main
    takes SIGINT and SIGTERM as KeyboardInterrupt and spins in short turns to notice them.
    """
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    parent = os.environ.get(PARENT_VARIABLE)
    try:
        with rclpy.init(args=args, signal_handler_options=SignalHandlerOptions.NO):
            node = FeedforwardNode()
            executor = SingleThreadedExecutor()
            executor.add_node(node)
            try:
                while rclpy.ok() and not (parent and os.getppid() != int(parent)):
                    executor.spin_once(timeout_sec=0.1)
            finally:
                if node.state_label != 'finalized' and node.context.ok():
                    node.trigger_shutdown()  # zeros, then the subscriptions go
                node.destroy_node()
    except KeyboardInterrupt:
        pass
    except (InputError, ParameterException) as error:
        print(f'feedforward_node: error: {error}', file=sys.stderr)
        raise SystemExit(2) from None


if __name__ == '__main__':
    main()
