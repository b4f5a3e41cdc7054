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

Safety (the lifecycle of :mod:`dynid.nodes.lifecycle`): commands only while active. The stream sends
zeros on deactivate, cleanup, shutdown, error, Ctrl-C or SIGTERM (this node's ``main``) and node
destruction; zeros at the next period once ``joint_states`` has been silent for ``timeout`` s (each
such event counted and reported); in trajectory mode references are forwarded only while active (the
efforts of a trajectory the controller already holds stay with it); a stale ``joint_states`` only
leaves out the measured inputs (temperature: the terms' reference temperature), so a busy PC that
delays the state topic does not drop a reference the controller is waiting for. A result for another
robot or other joints, an unknown term or a bad parameter fails the configure transition with the
reason in the log and on ``/diagnostics`` (with ``autostart`` the process exits with code 2). Efforts
are bounded and never NaN (the Feedforward). ``/diagnostics``
(:func:`~dynid.control.commander.node_statuses`): state, counters (messages, errors, stale events,
published), the RMS of each term over the recent motion, the intake.

α̂ of the friction_adaptive term comes from the estimator's ``~/friction`` table on ``adaptive_topic``.
"""

from __future__ import annotations

from rclpy.lifecycle import TransitionCallbackReturn
from rclpy.parameter import Parameter
from rclpy.qos import QoSProfile, ReliabilityPolicy
from std_msgs.msg import Float64MultiArray
from trajectory_msgs.msg import JointTrajectory

from dynid.control.commander import ACCELERATIONS, MODES, FeedforwardCommander, node_statuses
from dynid.control.configuration import FeedforwardSettings
from dynid.errors import InputError
from dynid.nodes.conversions import stamp_ns, trajectory_from_message, trajectory_with_effort
from dynid.nodes.diagnostics import DiagnosticsPublisher, status
from dynid.nodes.intake import IntakeSettings, StateIntake
from dynid.nodes.lifecycle import FAILURE, SUCCESS, CommandingNode, run_lifecycle_node
from dynid.nodes.parameters import declarer, descriptor


class FeedforwardNode(CommandingNode):
    """The feedforward (module docstring). Takes the usual rclpy Node keyword arguments."""

    def __init__(self, **kwargs) -> None:
        self.intake: StateIntake | None = None  # before Node: destroy_node() may run on a failed start
        self.output = self.commander = None
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
        self.refusal = ''
        self.counters = {'messages': 0, 'errors': 0, 'stale_events': 0, 'published': 0, 'points_added': 0}
        self.diagnostics = DiagnosticsPublisher(self, self._statuses)
        if self.get_parameter('autostart').value:
            if self.trigger_configure() != SUCCESS:
                raise InputError(self.refusal)
            self.trigger_activate()

    @property
    def sample(self):
        """The newest measured sample (:attr:`FeedforwardCommander.sample`), None while unconfigured."""
        return None if self.commander is None else self.commander.sample

    # ----------------------------------------------------------------------------- lifecycle
    def on_configure(self, state) -> TransitionCallbackReturn:
        try:
            commander = self.commander = FeedforwardCommander.from_parameters(self.parameter_value,
                                                                              counters=self.counters)
        except InputError as error:  # a bad setting, never a crash
            self.refusal = f'configure refused: {error}'
            self.counters['errors'] += 1
            self.get_logger().error(self.refusal)
            self.commander = None
            return FAILURE
        reliable = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE)
        value = self.parameter_value
        if commander.streamed:
            self.commands = self.create_publisher(Float64MultiArray, f'{value("effort_controller")}/commands',
                                                  reliable)
        else:
            self.output = self.create_publisher(JointTrajectory, f'{value("controller")}/joint_trajectory', reliable)
        self.publishers_made = [self.commands if commander.streamed else self.output]
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
        self.get_logger().info(commander.describe())
        return SUCCESS

    def on_activate(self, state) -> TransitionCallbackReturn:
        self.commander.activate()
        self.origin_ns = self._now_ns()
        if self.commander.streamed:
            self.timer = self.create_timer(1.0 / self.commander.rate_hz, self._on_tick)
        self.state_label = 'active'
        return super().on_activate(state)

    def release_inputs(self) -> None:
        if self.intake is not None:
            self.intake.stop()
            self.intake = None

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
            self._count_error(f'{self.parameter_value("adaptive_topic")}: ignored: {error}')

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
                start_ns = stamp_ns(message.header.stamp)
                self.commander.follow(trajectory, self._seconds(start_ns) if start_ns else None,
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
            self.publish_zeros()
        else:
            self.commands.publish(Float64MultiArray(data=effort.tolist()))

    def publish_zeros(self) -> None:
        if self.commands is not None and self.context.ok():
            self.commands.publish(Float64MultiArray(data=self.commander.zeros().tolist()))

    def _now_ns(self) -> int:
        return self.get_clock().now().nanoseconds

    def _seconds(self, clock_ns: int) -> float:
        return (clock_ns - self.origin_ns) * 1e-9

    # ---------------------------------------------------------------------------- diagnostics
    def _statuses(self) -> list:
        name = self.get_fully_qualified_name()
        found = node_statuses(self.commander, self.state_label, self.parameter_value('mode'), self.counters,
                              self.refusal, self._fresh if self.intake is not None else None,
                              self.parameter_value('timeout'))
        statuses = [status(f'{name}: {what}', level, message, values) for what, level, message, values in found]
        if self.intake is not None:
            statuses.append(self.intake.status(f'{name}: intake'))
        return statuses


def main(args=None) -> None:
    """Run feedforward_node until Ctrl-C or SIGTERM, sending zeros on the way out (module docstring)."""
    run_lifecycle_node(FeedforwardNode, 'feedforward_node', args)


if __name__ == '__main__':
    main()
