"""feedforward_node: model torque from an identification result into ros2_control (a lifecycle node).

:class:`dynid.control.commander.FeedforwardCommander` computes and schedules the torque (the ``terms`` of
``result_file``, with the backend's ``compensate_*`` and ``effort_is_current`` flags; the payload of
``payload_file``, replaced by each one on ``payload_topic``), every parameter read at configure. Modes,
``reference_correction`` and the safety rules: docs/methods/feedforward.md; topics: docs/nodes/README.md.
:class:`dynid.ros.lifecycle.CommandingNode` sends zeros on every way out of active (Ctrl-C and SIGTERM
included); a bad setting fails configure with the reason (``autostart``: exit code 2).
"""

from __future__ import annotations

from rclpy.lifecycle import TransitionCallbackReturn
from rclpy.qos import QoSProfile, ReliabilityPolicy
from std_msgs.msg import Float64MultiArray
from trajectory_msgs.msg import JointTrajectory

from dynid.control.commander import FeedforwardCommander, node_statuses
from dynid.control.configuration import FeedforwardSettings
from dynid.errors import InputError
from dynid.io.cdr import stamp_ns
from dynid.io.trajectories import trajectory_of_message
from dynid.ros.conversions import trajectory_with_effort
from dynid.ros.diagnostics import DiagnosticsPublisher, status
from dynid.ros.intake import IntakeSettings, StateIntake
from dynid.ros.lifecycle import FAILURE, SUCCESS, CommandingNode, LifecycleSettings, run_lifecycle_node
from dynid.ros.parameters import declare_settings
from dynid.ros.payload_updates import payload_subscription
from dynid.ros.runner import node_message
from dynid.ros.ur_services import configure_ur


class FeedforwardNode(CommandingNode):
    """The feedforward (module docstring). Takes the usual rclpy Node keyword arguments."""

    def __init__(self, **kwargs) -> None:
        self.intake: StateIntake | None = None  # before Node: destroy_node() may run on a failed start
        self.output = self.commander = None
        super().__init__('feedforward_node', **kwargs)
        declare_settings(self, FeedforwardSettings)
        declare_settings(self, LifecycleSettings)  # autostart
        self.settings = IntakeSettings.declare(self)
        self.refusal = ''
        self.counters = {'messages': 0, 'errors': 0, 'stale_events': 0, 'published': 0, 'points_added': 0,
                         'late_references': 0}
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
            commander = self.commander = FeedforwardCommander.from_parameters(
                self.parameter_value, counters=self.counters, warn=self._warn_at_configure)
        except InputError as error:  # a bad setting, never a crash
            self.refusal = f'configure refused: {node_message(error)}'
            self.counters['errors'] += 1
            self.get_logger().error(self.refusal)
            self.commander = None
            return FAILURE
        reliable = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE)
        value = self.parameter_value
        for line in configure_ur(self, commander.robot, value('compensate_friction'),
                                 value('ur_friction_model_service'), value('ur_gravity_service')):
            self.get_logger().info(line)  # UR's friction scales and gravity vector (dynid.ros.ur_services)
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
        self.subscriptions_made += payload_subscription(self, value('payload_topic'), commander.set_payload_document)
        self.intake = StateIntake(self, self.settings, topics=('joint_states', 'joint_temperatures'),
                                  on_samples=commander.measure, joint_names=commander.robot.joint_names,
                                  required=(), robot=commander.robot)
        self.intake.start()
        self.refusal, self.state_label = '', 'inactive'
        self.get_logger().info(commander.describe())
        return SUCCESS

    def _warn_at_configure(self, text: str) -> None:
        self.get_logger().warning(text)

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
            self._count_error(f'{self.parameter_value("adaptive_topic")}: ignored: {node_message(error)}')

    def _count_error(self, reason: str) -> None:
        self.counters['errors'] += 1
        self.get_logger().warning(reason, throttle_duration_sec=1.0)

    def _on_reference(self, message: JointTrajectory) -> None:
        self.counters['messages'] += 1
        if self.state_label != 'active':
            self._count_error('reference not used: inactive')
            return
        try:
            trajectory, _ = trajectory_of_message(message, self.commander.robot.joint_names)
            if self.commander.streamed:
                start_ns = stamp_ns(message.header.stamp)
                self.commander.follow(trajectory, self._seconds(start_ns) if start_ns else None,
                                      self._seconds(self._now_ns()))
            else:
                filled = self.commander.fill(trajectory, self._fresh())
                self.output.publish(message if filled is None else trajectory_with_effort(message, filled))
        except InputError as error:
            self._count_error(f'reference refused: {node_message(error)}')
            return
        if trajectory is not None:  # not a cancel
            self._count_late(stamp_ns(message.header.stamp))

    def _count_late(self, start_ns: int) -> None:
        """A reference passed on after its start (header stamp; 0: now) starts late at the controller: counted,
        warned."""
        late_s = (self._now_ns() - start_ns) * 1e-9 if start_ns else 0.0
        if late_s > 0.0:
            self.counters['late_references'] += 1
            self.get_logger().warning(f'reference passed on {late_s:.3f} s after its start: the controller starts it '
                                      'late; its sender needs a longer lead time', throttle_duration_sec=5.0)

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
