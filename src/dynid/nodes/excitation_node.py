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
can take a minute, at start-up).
"""

from __future__ import annotations

import numpy as np
import rclpy
from rcl_interfaces.msg import FloatingPointRange, IntegerRange, ParameterDescriptor
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy, qos_profile_sensor_data
from rclpy.task import Future
from sensor_msgs.msg import JointState
from std_msgs.msg import String
from std_srvs.srv import Trigger
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from dynid.errors import InputError
from dynid.excite.experiments import check_robot_limits
from dynid.excite.schedule import ChunkSchedule, excitation_timeline, excitation_trajectory
from dynid.model import load_robot
from dynid.nodes.conversions import duration
from dynid.nodes.parameters import declarer
from dynid.nodes.runner import run_node

STATE_WAIT_S = 10.0  # how long ~/start waits for a joint_states message [s]: its subscription is made at the call and
# must be matched by discovery first (seconds on a busy machine); the wait ends with the first message
LISTENER_WAIT_S = 10.0  # how long ~/start waits for the controller's subscription to be matched [s]


def _range(low: float, high: float, integer: bool = False):
    if integer:
        return {'integer_range': [IntegerRange(from_value=int(low), to_value=int(high), step=1)]}
    return {'floating_point_range': [FloatingPointRange(from_value=float(low), to_value=float(high))]}


class ExcitationNode(Node):
    """The excitation publisher (module docstring). Takes the usual rclpy Node keyword arguments.

    ``node_name`` lets several excitations run side by side (e.g. training and held-out validation).
    """

    def __init__(self, node_name: str = 'excitation_node', **kwargs) -> None:
        super().__init__(node_name, **kwargs)
        d = declarer(self)
        d('robot', 'ur5e', ParameterDescriptor(description='robot name, URDF path or robot file', read_only=True))
        d('robot_description', '', ParameterDescriptor(description='URDF XML, preferred when set', read_only=True))
        d('trajectory_file', '', ParameterDescriptor(description="dynid trajectory file, 'builtin' (the robot's "
                                                                 "shipped optimized one) or empty: design one",
                                                     read_only=True))
        d('harmonics', 5, ParameterDescriptor(description='harmonics of a designed trajectory', read_only=True,
                                              **_range(2, 20, integer=True)))
        d('period', 10.0, ParameterDescriptor(description='period of a designed trajectory [s]', read_only=True,
                                              **_range(1.0, 600.0)))
        d('seed', 0, ParameterDescriptor(description='seed of the design', read_only=True,
                                         **_range(0, 2**31 - 1, integer=True)))
        d('optimize', False, ParameterDescriptor(description='optimize the designed trajectory', read_only=True))
        d('point_rate', 100.0, ParameterDescriptor(description='trajectory points per second [Hz]',
                                                   **_range(1.0, 1000.0)))
        d('chunk_duration', 10.0, ParameterDescriptor(description='seconds per published message',
                                                      **_range(0.5, 600.0)))
        d('lead_time', 0.5, ParameterDescriptor(description='publish each chunk this early [s]',
                                                **_range(0.05, 10.0)))
        d('approach_velocity', 0.2, ParameterDescriptor(description='peak speed of the approach [rad/s]',
                                                        **_range(0.01, 2.0)))
        d('repeat', 1, ParameterDescriptor(description='periods of the trajectory to run',
                                           **_range(1, 1000, integer=True)))
        get = self.get_parameter
        description = get('robot_description').value
        self.robot = load_robot(description if description else get('robot').value)
        self.trajectory = excitation_trajectory(
            self.robot, get('trajectory_file').value, get('harmonics').value, get('period').value, get('seed').value,
            get('optimize').value, progress=self.get_logger().info, warn=self.get_logger().warning)
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
        self._set_state('idle')
        self.get_logger().info(f'excitation of {self.trajectory.duration_s:.2f} s for {self.robot.name} ready; '
                               f'call ~/start')

    def _set_state(self, text: str) -> None:
        self.state.publish(String(data=text))

    async def _latest_joint_state(self) -> JointState | None:
        """The next joint_states message, or None if none comes within STATE_WAIT_S.

        joint_states is subscribed only while waiting: at driver rates a permanent subscription would
        cost the executor a turn per message for a value needed once per start.
        """
        received = Future(executor=self.executor)
        received.add_done_callback(lambda _: None)  # completing it wakes the executor

        def finish(message) -> None:
            if not received.done():
                received.set_result(message)

        subscription = self.create_subscription(JointState, 'joint_states', finish, qos_profile_sensor_data)
        timer = self.create_timer(STATE_WAIT_S, lambda: finish(None))
        try:
            return await received
        finally:
            self.destroy_subscription(subscription)
            self.destroy_timer(timer)

    async def _listener_matched(self) -> bool:
        """Whether the controller topic has a matched subscriber, waited for up to LISTENER_WAIT_S.

        Chunks are published once (volatile): one sent before discovery has matched the controller (a
        controller or feedforward_node started a moment ago, on a loaded machine) would be lost.
        """
        matched = Future(executor=self.executor)
        matched.add_done_callback(lambda _: None)  # completing it wakes the executor
        deadline = self.get_clock().now().nanoseconds + int(LISTENER_WAIT_S * 1e9)

        def check() -> None:
            if not matched.done() and (self.output.get_subscription_count() > 0
                                       or self.get_clock().now().nanoseconds > deadline):
                matched.set_result(self.output.get_subscription_count() > 0)

        timer = self.create_timer(0.05, check)
        try:
            return await matched
        finally:
            self.destroy_timer(timer)

    def _current_position(self, message: JointState) -> np.ndarray:
        """The robot's joint positions in a joint_states message, robot order; InputError if unusable."""
        names = list(message.name)
        if len(message.position) != len(names):
            raise InputError('the latest joint_states has fewer positions than names')
        missing = [n for n in self.robot.joint_names if n not in names]
        if missing:
            raise InputError(f'the latest joint_states lacks joints {missing}')
        q = np.array([message.position[names.index(n)] for n in self.robot.joint_names], dtype=float)
        if not np.all(np.isfinite(q)):
            raise InputError('the latest joint_states has non-finite positions')
        return q

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
            message = await self._latest_joint_state()
            listened = message is not None and await self._listener_matched()
        finally:
            self.starting = False
        if message is None:
            return self._refuse(response, f'no joint_states within {STATE_WAIT_S:g} s')
        if not listened:
            return self._refuse(response, f'nobody subscribes to {self.output.topic_name} within '
                                          f'{LISTENER_WAIT_S:g} s: is the controller running?')
        get = self.get_parameter
        try:
            check_robot_limits(self.robot, self.trajectory)
            timeline = excitation_timeline(self.trajectory, self.robot.joint_names, self._current_position(message),
                                           get('point_rate').value, get('repeat').value, get('approach_velocity').value)
        except InputError as error:
            return self._refuse(response, str(error))
        now = self._now_ns()
        self.schedule = ChunkSchedule(self.robot.joint_names, timeline, get('chunk_duration').value,
                                      now + int(round(get('lead_time').value * 1e9)), get('lead_time').value)
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
            message = JointTrajectory(joint_names=list(self.robot.joint_names))
            message.header.stamp = rclpy.time.Time(nanoseconds=start_ns).to_msg()
            message.points = [
                JointTrajectoryPoint(positions=p.tolist(), velocities=v.tolist(), accelerations=a.tolist(),
                                     time_from_start=duration(t))
                for t, p, v, a in zip(piece.time_s, piece.positions, piece.velocities, piece.accelerations,
                                      strict=True)]
            self.output.publish(message)

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
