"""excitation_node: sends an excitation trajectory to a joint_trajectory_controller, safely.

On ``~/start`` (std_srvs/Trigger) it checks the trajectory against the robot model's limits and the
joint names against the next ``joint_states`` (waited for up to 1 s), waits (up to 10 s) until the
controller's subscription is matched, so that no chunk is published into the void, then publishes on
``joint_trajectory_controller/joint_trajectory`` (trajectory_msgs/JointTrajectory with positions,
velocities and accelerations at ``point_rate``): first a rest-to-rest approach from the measured
position to the trajectory's start, then the trajectory (``repeat`` times), in chunks of
``chunk_duration`` seconds, each stamped with its own start time and published ``lead_time`` ahead.
``~/stop`` sends an empty trajectory (the controller holds position). The state (idle, running,
done, stopped, refused: <reason>) is published on ``~/state`` (std_msgs/String, transient local).
If a check fails, ``~/start`` answers with the reason and nothing is published.

The trajectory comes from ``trajectory_file`` (a dynid trajectory file, or ``builtin`` for the
robot's shipped optimized excitation) or, when that is empty, is designed from ``harmonics``,
``period``, ``seed`` (random feasible Fourier series, or optimized with ``optimize``; optimization
can take a minute, at start-up). A robot without a shipped one (``builtin``) gets a design within its
description's limits, with a warning. ``/diagnostics`` says where the trajectory came from and what was
designed in place of what.
"""

from __future__ import annotations

from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy, qos_profile_sensor_data
from sensor_msgs.msg import JointState
from std_msgs.msg import String
from std_srvs.srv import Trigger
from trajectory_msgs.msg import JointTrajectory

from dynid.errors import InputError
from dynid.excite.experiments import check_robot_limits
from dynid.excite.schedule import ChunkSchedule, excitation_timeline, excitation_trajectory
from dynid.excite.settings import ExcitationRunSettings
from dynid.model import load_robot
from dynid.ros.conversions import joint_positions, trajectory_message
from dynid.ros.diagnostics import DiagnosticsPublisher, status
from dynid.ros.parameters import declare_robot, declare_settings, value_or
from dynid.ros.runner import node_message, run_node
from dynid.ros.waiting import next_message, until
from dynid.settings import from_values

STATE_WAIT_S = 10.0  # how long ~/start waits for a joint_states message [s]: its subscription is made at the call and
# must be matched by discovery first (seconds on a busy machine); the wait ends with the first message
LISTENER_WAIT_S = 10.0  # how long ~/start waits for the controller's subscription to be matched [s]


class ExcitationNode(Node):
    """The excitation publisher (module docstring). Takes the usual rclpy Node keyword arguments.

    ``node_name`` lets several excitations run side by side (e.g. training and held-out validation).
    """

    def __init__(self, node_name: str = 'excitation_node', **kwargs) -> None:
        super().__init__(node_name, **kwargs)
        given = declare_robot(self, ('robot', 'robot_description', 'joint_map'))
        declare_settings(self, ExcitationRunSettings)
        settings = self.settings()
        self.robot = load_robot(given.robot_description or given.robot, joint_map=given.joint_map)
        for note in self.robot.notes:
            self.get_logger().info(note)
        self.warnings: list[str] = []
        self.trajectory = excitation_trajectory(
            self.robot, settings.trajectory_file, settings.harmonics, settings.period, settings.seed,
            settings.optimize, progress=self.get_logger().info, warn=self._warn)
        self.schedule: ChunkSchedule | None = None
        self.starting = False
        reliable = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE)
        latched = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                             durability=DurabilityPolicy.TRANSIENT_LOCAL)
        self.output = self.create_publisher(JointTrajectory, 'joint_trajectory_controller/joint_trajectory',
                                            reliable)
        self.state = self.create_publisher(String, '~/state', latched)
        # A coroutine: in its own group, so that the node's other callbacks run while it waits.
        self.create_service(Trigger, '~/start', self._on_start, callback_group=ReentrantCallbackGroup())
        self.create_service(Trigger, '~/stop', self._on_stop)
        self.timer = self.create_timer(0.05, self._on_timer)
        self.diagnostics = DiagnosticsPublisher(self, lambda: [status(
            f'{self.get_fully_qualified_name()}: excitation', 'warn' if self.warnings else 'ok',
            '; '.join(self.warnings) or f'{self.trajectory.duration_s:.2f} s ready',
            {'robot': self.robot.name, 'builtin': self.robot.builtin or '', 'duration_s': self.trajectory.duration_s})])
        self._set_state('idle')
        self.get_logger().info(f'excitation of {self.trajectory.duration_s:.2f} s for {self.robot.name} ready; '
                               f'call ~/start')

    def settings(self) -> ExcitationRunSettings:
        """The parameters now (those not read-only may have changed since start-up)."""
        return from_values(ExcitationRunSettings, lambda name: value_or(self, name))

    def _warn(self, text: str) -> None:
        self.warnings.append(text)
        self.get_logger().warning(text)

    def _set_state(self, text: str) -> None:
        self.state.publish(String(data=text))

    def _refuse(self, response, reason: str):
        self._set_state(f'refused: {reason}')
        self.get_logger().error(f'start refused: {reason}')
        response.success, response.message = False, reason
        return response

    async def _on_start(self, request, response):
        if (self.schedule is not None and self.schedule.pending) or self.starting:
            return self._refuse(response, 'already running; call ~/stop first')
        self.starting = True
        try:
            message = await next_message(self, JointState, 'joint_states', qos_profile_sensor_data, STATE_WAIT_S)
            listened = message is not None and await until(
                self, lambda: self.output.get_subscription_count() > 0, LISTENER_WAIT_S)
        finally:
            self.starting = False
        if message is None:
            return self._refuse(response, f'no joint_states within {STATE_WAIT_S:g} s')
        if not listened:
            return self._refuse(response, f'nobody subscribes to {self.output.topic_name} within '
                                          f'{LISTENER_WAIT_S:g} s: is the controller running?')
        settings, names = self.settings(), self.robot.joint_names
        try:
            check_robot_limits(self.robot, self.trajectory)
            timeline = excitation_timeline(self.trajectory, names, joint_positions(message, names),
                                           settings.point_rate, settings.repeat, settings.approach_velocity)
        except InputError as error:
            return self._refuse(response, node_message(error))
        now = self._now_ns()
        self.schedule = ChunkSchedule(self.robot.joint_names, timeline, settings.chunk_duration,
                                      now + int(round(settings.lead_time * 1e9)), settings.lead_time)
        self._publish_due(now)
        self._set_state('running')
        response.success = True
        response.message = f'running {timeline[0][-1]:.2f} s in {len(self.schedule.chunks)} messages'
        return response

    @property
    def chunks(self) -> list:
        """The chunks of the run, [] when none is under way."""
        return [] if self.schedule is None else self.schedule.chunks

    @property
    def next_chunk(self) -> int:
        return 0 if self.schedule is None else self.schedule.next_chunk

    def _now_ns(self) -> int:
        return self.get_clock().now().nanoseconds

    def _publish_due(self, now: int) -> None:
        self.schedule.lead_s = self.get_parameter('lead_time').value
        for start_ns, piece in self.schedule.due(now):
            self.output.publish(trajectory_message(self.robot.joint_names, start_ns, piece))

    def _on_timer(self) -> None:
        if self.schedule is None:
            return
        now = self._now_ns()
        self._publish_due(now)
        if self.schedule.done(now):
            self.schedule = None
            self._set_state('done')

    def _on_stop(self, request, response):
        self.schedule = None
        self.output.publish(JointTrajectory(joint_names=list(self.robot.joint_names)))  # empty: hold
        self._set_state('stopped')
        response.success, response.message = True, 'stopped; the controller holds position'
        return response


def main(args=None) -> None:
    """Run excitation_node until shut down."""
    run_node(ExcitationNode, 'excitation_node', args)


if __name__ == '__main__':
    main()
