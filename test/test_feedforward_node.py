"""feedforward_node (issue 10): its pure helpers, the lifecycle in one process, and over real DDS with the twin.

- Helpers: the trajectory mode's effort filling (points added where the linear effort misses the dense
  one by more than the tolerance; the controller's interpolated motion unchanged), the estimator's α̂
  table, the measured acceleration.
- One process (the node and a probe in one executor, an isolated domain): configure refusals,
  streaming (gravity at a held reference, in the controller's joint order), zeros on deactivate and
  when joint_states goes stale, measured mode after a clean-up, trajectory mode's republished message.
- Over DDS (sim_node and feedforward_node as processes): lifecycle services, zeros on deactivate, a
  stale joint_states and Ctrl-C; tracking of the twin with its own model feedforward off, better with
  the trajectory mode's efforts than without; a mismatched result refused with exit code 2.

Waits end on conditions with deadlines generous enough for a loaded 2-core machine.
"""

import dataclasses
import signal
import subprocess
import threading
import time

import numpy as np
import pytest
import rclpy
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
from lifecycle_msgs.msg import Transition
from lifecycle_msgs.srv import ChangeState, GetState
from rclpy.executors import SingleThreadedExecutor
from rclpy.lifecycle import TransitionCallbackReturn
from rclpy.parameter import Parameter
from rclpy.qos import qos_profile_sensor_data
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray, MultiArrayDimension
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from builders import identified
from dds_helpers import environment, node_executable, parameters, spinning, start_node, stop, wait_until
from dynid.control import Feedforward
from dynid.control.inputs import MeasuredAcceleration, friction_alpha
from dynid.control.trajectory_effort import fill_effort
from dynid.errors import InputError
from dynid.excite.trajectory import PointTrajectory
from dynid.sim.parameters import PlantParameters
from dynid.sim.twin import home_configuration

SUCCESS, FAILURE = TransitionCallbackReturn.SUCCESS, TransitionCallbackReturn.FAILURE
POSE = np.array([0.2, -1.2, 1.0, -1.5, -1.5, 0.3])
JOINTS = ('shoulder_pan_joint', 'shoulder_lift_joint', 'elbow_joint', 'wrist_1_joint', 'wrist_2_joint',
          'wrist_3_joint')


def _round_trip(robot, start, period_s, hold_s=1.0, dt=0.05, amplitude=(0.8, 0.5, 0.7, 0.8, 0.8, 1.0)):
    """A quintic point trajectory: hold, out and back along (1 − cos)/2 in ``period_s``, hold."""
    t = np.arange(0.0, period_s + 1e-9, dt)
    w = 2 * np.pi / period_s
    amplitude = np.asarray(amplitude)
    q = start + np.outer((1 - np.cos(w * t)) / 2, amplitude)
    dq, ddq = np.outer(w * np.sin(w * t) / 2, amplitude), np.outer(w * w * np.cos(w * t) / 2, amplitude)
    held = np.arange(0.0, hold_s, dt)
    zeros = np.zeros((held.size, robot.n))
    times = np.concatenate([held, hold_s + t, hold_s + period_s + dt + held])
    return PointTrajectory(tuple(robot.joint_names), times, np.vstack([np.tile(start, (held.size, 1)), q,
                                                                      np.tile(start, (held.size, 1))]),
                           np.vstack([zeros, dq, zeros]), np.vstack([zeros, ddq, zeros]))


def _message(trajectory: PointTrajectory, order=None, stamp_ns: int = 0) -> JointTrajectory:
    """A JointTrajectory of the trajectory, columns in ``order`` (joint names) if given."""
    names = list(order or trajectory.joint_names)
    index = [list(trajectory.joint_names).index(name) for name in names]
    message = JointTrajectory(joint_names=names)
    message.header.stamp.sec, message.header.stamp.nanosec = divmod(stamp_ns, 10**9)
    for k, t in enumerate(trajectory.time_s):
        point = JointTrajectoryPoint(positions=trajectory.positions[k, index].tolist())
        for field in ('velocities', 'accelerations'):
            values = getattr(trajectory, field)
            if values is not None:
                setattr(point, field, values[k, index].tolist())
        point.time_from_start.sec, point.time_from_start.nanosec = divmod(int(round(t * 1e9)), 10**9)
        message.points.append(point)
    return message


# ------------------------------------------------------------------------------------ pure helpers
def test_fill_effort_adds_points_until_the_linear_effort_is_within_tolerance(ur5e):
    """Cubic points 0.5 s apart (velocities, no accelerations): the efforts of the given points are the
    Feedforward of the interpolated motion there; between the points the controller's linear effort
    stays within the tolerance of the dense effort (a grid step away from the knots, where the cubic's
    acceleration jumps); the added points leave the interpolated motion unchanged (1e-9 rad)."""
    t = np.linspace(0.0, 4.0, 9)
    w = 1.5
    q = POSE + 0.5 * np.sin(w * t)[:, None]
    dq = 0.5 * w * np.cos(w * t)[:, None] * np.ones(6)
    names = list(ur5e.joint_names)[::-1]  # message order differs from the model's
    trajectory = PointTrajectory(tuple(names), t, q[:, ::-1], dq[:, ::-1])
    feedforward = Feedforward(ur5e, None, ['rigid_body', 'rotor_inertia'], rate_hz=500.0)
    coarse = fill_effort(feedforward, trajectory, 500.0, 5.0)
    fine = fill_effort(feedforward, trajectory, 500.0, 0.1)
    assert coarse.added < fine.added and fine.max_error <= 0.1 and fine.grid_samples == 2001
    assert np.array_equal(fine.time_s[fine.given], t)
    dense_t = np.arange(0.0, 4.0, 1e-3)
    qd, dqd, ddqd = trajectory.evaluate(dense_t)
    dense = feedforward.evaluate(qd[:, ::-1], dqd[:, ::-1], ddqd[:, ::-1])[:, ::-1]
    knot_q, knot_dq, knot_ddq = trajectory.evaluate(t[:-1])  # right-hand values, as the grid has them
    np.testing.assert_allclose(fine.effort[fine.given][:-1],
                               feedforward.evaluate(knot_q[:, ::-1], knot_dq[:, ::-1], knot_ddq[:, ::-1])[:, ::-1],
                               atol=1e-9)
    linear = np.column_stack([np.interp(dense_t, fine.time_s, fine.effort[:, j]) for j in range(6)])
    away = np.min(np.abs(dense_t[:, None] - t[None, :]), axis=1) > 2.5e-3  # a grid step off the knots
    assert np.abs(linear - dense)[away].max() <= 0.1 + 0.02  # tolerance at the grid, + between grid samples
    refined = PointTrajectory(tuple(names), fine.time_s, fine.positions, fine.velocities)
    for before, after in zip(trajectory.evaluate(dense_t), refined.evaluate(dense_t), strict=True):
        np.testing.assert_allclose(after, before, atol=1e-9)
    assert fine.accelerations is None  # none given, none added: the controller keeps cubic segments


def test_fill_effort_refuses_other_joints(ur5e):
    trajectory = PointTrajectory(('a', 'b'), [0.0, 1.0], [[0, 0], [1, 1]])
    with pytest.warns(UserWarning, match='feedforward without friction'):
        feedforward = Feedforward(ur5e)
    with pytest.raises(InputError, match='not the robot'):
        fill_effort(feedforward, trajectory, 100.0, 0.5)


def test_friction_alpha_reads_the_estimators_table_by_joint_name(ur5e):
    names = list(ur5e.joint_names)[::-1]
    table = np.column_stack([np.linspace(0.9, 1.4, 6), np.linspace(0.0, 0.5, 6), np.ones(6)])
    labels = ['joint:' + ','.join(names), 'quantity:alpha1,alpha2,active']
    alpha = friction_alpha(labels, [6, 3], table.ravel(), ur5e.joint_names)
    np.testing.assert_allclose(alpha, table[::-1, :2])
    for bad_labels, sizes, data, reason in ((labels, [6, 3], table.ravel()[:-1], '17 values'),
                                            (['joint:a,b', labels[1]], [2, 3], np.ones(6), 'no joints'),
                                            (labels, [6, 3], np.full(18, np.nan), 'non-finite'),
                                            (['x', labels[1]], [6, 3], table.ravel(), 'joint:')):
        with pytest.raises(InputError, match=reason):
            friction_alpha(bad_labels, sizes, data, ur5e.joint_names)


def test_measured_acceleration_is_the_slope_of_the_velocity():
    """q̈ of a velocity ramp 2 rad/s² (plus a parabola that the end-point fit follows exactly) from
    irregular stamps, in two batches."""
    estimate = MeasuredAcceleration(2, window_s=0.05)
    stamps = np.cumsum(np.r_[0, np.random.default_rng(0).uniform(1e6, 3e6, 59)]).astype(np.int64)
    t = (stamps - stamps[0]) * 1e-9
    dq = np.column_stack([2.0 * t, 3.0 * t**2])
    estimate.update(stamps[:30], dq[:30])
    value = estimate.update(stamps[30:], dq[30:])
    np.testing.assert_allclose(value, [2.0, 6.0 * t[-1]], rtol=1e-6)


# --------------------------------------------------------------------------------- one process
class OneProcess:
    """feedforward_node and a probe (stand-in driver and controller) in one executor on their own domain."""

    def __init__(self, domain: int, overrides: dict) -> None:
        from dynid.nodes.feedforward_node import FeedforwardNode

        self.context = rclpy.Context()
        rclpy.init(context=self.context, domain_id=domain)
        self.node = FeedforwardNode(context=self.context, parameter_overrides=[
            Parameter(name, value=value) for name, value in overrides.items()])
        self.probe = rclpy.create_node('probe', context=self.context)
        self.commands, self.trajectories, self.statuses = [], [], {}
        self.probe.create_subscription(Float64MultiArray, 'forward_effort_controller/commands',
                                       lambda m: self.commands.append(np.array(m.data)), 100)
        self.probe.create_subscription(JointTrajectory, 'joint_trajectory_controller/joint_trajectory',
                                       self.trajectories.append, 10)
        self.probe.create_subscription(DiagnosticArray, '/diagnostics',
                                       lambda m: self.statuses.update({s.name: s for s in m.status}), 10)
        self.joint_states = self.probe.create_publisher(JointState, 'joint_states', 10)
        self.reference = self.probe.create_publisher(JointTrajectory, 'feedforward_node/reference', 10)
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)
        self.executor.add_node(self.probe)
        self.q, self.driving, self.last_state = POSE.copy(), True, 0.0
        self.names = list(JOINTS)

    def spin_until(self, condition, timeout: float = 30.0) -> bool:
        """Spin, publishing joint_states at ~100 Hz while ``driving``, until ``condition()`` or the timeout."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if self.driving and time.monotonic() - self.last_state > 0.01:
                message = JointState(name=self.names, position=self.q.tolist(), velocity=[0.0] * 6, effort=[0.0] * 6)
                message.header.stamp = self.probe.get_clock().now().to_msg()
                self.joint_states.publish(message)
                self.last_state = time.monotonic()
            self.executor.spin_once(timeout_sec=0.005)
            if condition():
                return True
        return condition()

    def send(self, message: JointTrajectory) -> None:
        """Publish a reference once the node's subscription is matched (created at configure)."""
        assert self.spin_until(lambda: self.reference.get_subscription_count() > 0, 10.0)
        self.reference.publish(message)

    def close(self) -> None:
        """Destroy the node, then take what it sent on the way out."""
        self.executor.remove_node(self.node)
        self.node.destroy_node()
        self.driving = False
        if self.commands:  # a node that never commanded has nothing in flight
            self.spin_until(lambda: not np.any(self.commands[-1]), 2.0)  # in flight, then zeros
        self.probe.destroy_node()
        rclpy.shutdown(context=self.context)


@pytest.fixture
def domain(ros_domain):
    return ros_domain


def _result_file(path, robot, **changes):
    result = dataclasses.replace(identified(robot, 'viscous_coulomb', {'Fc': 2.0, 'Fv': 5.0}), **changes)
    result.save(path)
    return str(path)


@pytest.mark.parametrize(('case', 'reason'), [
    ('panda', "identifies robot 'panda'"),
    ('joints', 'is for joints'),
    ('missing', 'cannot read result file'),
    ('unknown_term', "unknown feedforward term 'no_such_term'"),
    ('friction_without_result', 'friction_static needs an identification result'),
    ('joints_order', 'must name the robot'),
    ('term_options', 'YAML mapping'),
    ('mode', 'mode must be one of'),
    ('correction_without_term', 'reference_correction needs the flexible_joint term'),
    ('correction_streaming', 'reference_correction needs mode trajectory'),
])
def test_configure_refuses_with_a_reason(tmp_path, domain, ur5e, panda, case, reason):
    """The configure transition fails (the node stays unconfigured) and says why, in the log and on
    /diagnostics; nothing is published."""
    result = tmp_path / 'result.yaml'
    overrides = {
        'panda': lambda: {'result_file': _result_file(result, panda)},
        'joints': lambda: {'result_file': _result_file(result, ur5e, joint_names=tuple(f'j{k}' for k in range(6)))},
        'missing': lambda: {'result_file': str(tmp_path / 'missing.yaml')},
        'unknown_term': lambda: {'terms': ['rigid_body', 'no_such_term']},
        'friction_without_result': lambda: {'terms': ['rigid_body', 'friction_static']},  # named: refused
        'joints_order': lambda: {'joints': ['shoulder_pan_joint']},
        'term_options': lambda: {'term_options': '[1, 2]'},
        'mode': lambda: {'mode': 'torque'},
        'correction_without_term': lambda: {'terms': ['rigid_body'], 'reference_correction': True},
        'correction_streaming': lambda: {'mode': 'streaming', 'terms': ['rigid_body', 'flexible_joint'],
                                         'term_options': 'flexible_joint: {stiffness: 20000.0}',
                                         'reference_correction': True},
    }[case]()
    suite = OneProcess(domain, overrides)
    try:
        assert suite.node.trigger_configure() == FAILURE
        assert reason in suite.node.refusal and suite.node.state_label == 'unconfigured'
        name = '/feedforward_node: feedforward'
        assert suite.spin_until(lambda: name in suite.statuses, 10.0)
        assert suite.statuses[name].level == DiagnosticStatus.ERROR and reason in suite.statuses[name].message
        assert suite.node.trigger_activate() != SUCCESS  # not configured: cannot activate
        assert not suite.commands and not suite.trajectories
    finally:
        suite.close()


def test_a_transition_the_state_does_not_offer_is_refused_and_the_node_lives_on(domain):
    """``~/change_state`` asked to activate an unconfigured node (by id, as a client may): refused (success
    false), the node still serving and configurable after it (Jazzy's rclpy raises out of the service's callback
    there, which ended the node)."""
    suite = OneProcess(domain, {})
    client = suite.probe.create_client(ChangeState, 'feedforward_node/change_state')
    try:
        assert suite.spin_until(client.service_is_ready, 10.0)
        for transition in (Transition.TRANSITION_ACTIVATE, Transition.TRANSITION_DEACTIVATE):
            future = client.call_async(ChangeState.Request(transition=Transition(id=transition)))
            assert suite.spin_until(future.done, 10.0)
            assert future.result().success is False and suite.node.state_label == 'unconfigured'
        future = client.call_async(ChangeState.Request(transition=Transition(id=Transition.TRANSITION_CONFIGURE)))
        assert suite.spin_until(future.done, 10.0) and future.result().success is True
    finally:
        suite.close()


def test_default_terms_without_a_result_configure_and_say_friction_is_left_out(domain):
    """The default terms (the API's) without a result_file: rigid body and rotor inertia, and a warning that
    friction is left out, in the log and on /diagnostics."""
    suite = OneProcess(domain, {})
    try:
        assert suite.node.trigger_configure() == SUCCESS
        assert list(suite.node.commander.feedforward.terms) == ['rigid_body', 'rotor_inertia']
        name = '/feedforward_node: feedforward'
        assert suite.spin_until(lambda: name in suite.statuses, 10.0)
        values = {value.key: value.value for value in suite.statuses[name].values}
        assert values['left_out'] == 'friction_static' and 'feedforward without friction' in values['warnings']
    finally:
        suite.close()


def test_streaming_lifecycle_staleness_and_measured_mode(domain, ur5e):
    """Streaming: zeros until a reference arrives, then the model torque of the held reference (gravity)
    in the controller's joint order; zeros right after deactivate and while joint_states is stale
    (counted, reported); configure-time parameters refused while configured; after a clean-up the
    measured mode compensates gravity at the measured position."""
    order = list(ur5e.joint_names)[::-1]
    suite = OneProcess(domain, {'mode': 'streaming', 'terms': ['rigid_body', 'rotor_inertia'], 'joints': order,
                                'rate': 100.0, 'timeout': 0.2})
    gravity = ur5e.inverse_dynamics(POSE[None], np.zeros((1, 6)), np.zeros((1, 6)))[0]
    index = [list(ur5e.joint_names).index(name) for name in order]
    node = suite.node
    try:
        assert node.trigger_configure() == SUCCESS and node.trigger_activate() == SUCCESS
        assert suite.spin_until(lambda: len(suite.commands) >= 5)
        assert not np.any(suite.commands[-1])  # no reference yet
        held = PointTrajectory(tuple(ur5e.joint_names), [0.0], POSE[None])
        suite.send(_message(held, order=order))
        assert suite.spin_until(lambda: np.any(suite.commands[-1]))
        np.testing.assert_allclose(suite.commands[-1], gravity[index], atol=1e-6)
        refused = node.set_parameters([Parameter('rate', value=50.0)])[0]
        assert not refused.successful and 'read at configure' in refused.reason

        count = len(suite.commands)
        assert node.trigger_deactivate() == SUCCESS
        # Commands published before the deactivation may still be on their way (a loaded machine): what
        # counts is that the deactivation's zeros arrive and nothing follows them.
        assert suite.spin_until(lambda: any(not np.any(c) for c in suite.commands[count:]), 5.0)
        suite.spin_until(lambda: False, 0.3)
        tail = suite.commands[count:]
        assert not np.any(tail[-1]) and sum(not np.any(c) for c in tail) == 1, tail
        assert all(np.allclose(c, gravity[index], atol=1e-6) for c in tail[:-1])  # in flight: the held torque

        assert node.trigger_activate() == SUCCESS
        suite.send(_message(held))
        assert suite.spin_until(lambda: np.any(suite.commands[-1]))
        suite.driving = False
        assert suite.spin_until(lambda: node.counters['stale_events'] == 1, 10.0)
        stale_at = len(suite.commands)
        assert suite.spin_until(lambda: len(suite.commands) >= stale_at + 3, 10.0)
        # zeros from the period it went stale on; on a loaded machine the command of the period before may still
        # be on its way when the counter is read, as after the deactivation above
        after = [bool(np.any(c)) for c in suite.commands[stale_at:]]
        first_zero = after.index(False)
        assert first_zero <= 1 and not any(after[first_zero:]), after
        name = '/feedforward_node: joint_states'
        assert suite.spin_until(lambda: name in suite.statuses and suite.statuses[name].level == DiagnosticStatus.STALE,
                                 10.0)
        suite.driving = True
        assert suite.spin_until(lambda: np.any(suite.commands[-1]))

        assert node.trigger_deactivate() == SUCCESS and node.trigger_cleanup() == SUCCESS
        assert node.set_parameters([Parameter('mode', value='measured')])[0].successful
        suite.q = POSE + 0.2
        assert node.trigger_configure() == SUCCESS and node.trigger_activate() == SUCCESS
        at = ur5e.inverse_dynamics(suite.q[None], np.zeros((1, 6)), np.zeros((1, 6)))[0]
        assert suite.spin_until(lambda: np.allclose(suite.commands[-1], at[index], atol=1e-6))
        values = {v.key: v.value for v in suite.statuses['/feedforward_node: feedforward'].values}
        assert float(values['rms_rigid_body_Nm']) > 1.0 and values['stale_events'] == '1'
    finally:
        suite.close()
    assert not np.any(suite.commands[-1])  # destroyed while active: zeros


def test_trajectory_mode_republishes_with_efforts(domain, ur5e):
    """A reference in another joint order goes out on joint_trajectory_controller/joint_trajectory with
    the same header and points, each with effort (the Feedforward at the point, message order), and
    points added between; nothing is forwarded while inactive; a reference still passes while joint_states
    is silent (a busy PC must not drop what the controller waits for)."""
    suite = OneProcess(domain, {'terms': ['rigid_body', 'rotor_inertia'], 'rate': 250.0, 'effort_tolerance': 0.2})
    reference = _round_trip(ur5e, POSE, 1.5, hold_s=0.2, dt=0.1)
    order = list(ur5e.joint_names)[::-1]
    message = _message(reference, order=order, stamp_ns=1_700_000_000 * 10**9)
    try:
        assert suite.node.trigger_configure() == SUCCESS
        suite.send(message)
        assert suite.spin_until(lambda: suite.node.counters['messages'] == 1, 10.0)
        assert suite.node.trigger_activate() == SUCCESS
        assert suite.spin_until(lambda: suite.node.sample is not None, 10.0)  # joint_states heard
        suite.send(message)
        assert suite.spin_until(lambda: suite.trajectories, 10.0)
        suite.driving = False  # joint_states silent: the next reference still passes, without measured inputs
        time.sleep(0.2)
        suite.send(message)
        assert suite.spin_until(lambda: len(suite.trajectories) == 2, 10.0)
    finally:
        suite.close()
    assert suite.node.counters['errors'] == 1  # the one sent while inactive
    assert suite.node.counters['late_references'] == 2  # stamped in 2023: both passed on after their start
    assert suite.trajectories[1].points[5].effort == suite.trajectories[0].points[5].effort
    out = suite.trajectories[0]
    assert out.joint_names == order and out.header.stamp == message.header.stamp
    times = np.array([p.time_from_start.sec + 1e-9 * p.time_from_start.nanosec for p in out.points])
    assert len(out.points) > len(message.points) and np.all(np.diff(times) > 0)
    assert all(len(p.effort) == 6 and len(p.accelerations) == 6 for p in out.points)
    given = np.isin(np.round(times, 9), np.round(reference.time_s, 9))
    assert given.sum() == len(message.points)
    index = [order.index(name) for name in ur5e.joint_names]
    effort = np.array([p.effort for p in out.points])[:, index]
    q, dq, ddq = reference.evaluate(times[given][:-1])
    expected = Feedforward(ur5e, None, ['rigid_body', 'rotor_inertia']).evaluate(q, dq, ddq)
    np.testing.assert_allclose(effort[given][:-1], expected, atol=1e-6)


def test_trajectory_mode_shifts_the_positions_by_the_deflection_with_reference_correction(domain, ur5e):
    """reference_correction: every point of the republished reference (message order), given and added, sits
    at q_d + τ_J,d/K (the static deflection of the linear spring under the model torque at q_d, computed
    here independently by RNEA); velocities and accelerations carry the Feedforward's φ̇_d and φ̈_d; the
    efforts are those of the uncorrected motion."""
    stiffness = 2e4
    terms = ['rigid_body', 'flexible_joint']
    options = f'flexible_joint: {{stiffness: {stiffness}}}'
    suite = OneProcess(domain, {'terms': terms, 'term_options': options, 'rate': 250.0, 'effort_tolerance': 0.2,
                                'reference_correction': True})
    reference = _round_trip(ur5e, POSE, 1.5, hold_s=0.2, dt=0.1)
    order = list(ur5e.joint_names)[::-1]
    message = _message(reference, order=order)
    try:
        assert suite.node.trigger_configure() == SUCCESS
        assert suite.node.trigger_activate() == SUCCESS
        suite.send(message)
        assert suite.spin_until(lambda: suite.trajectories, 10.0)
    finally:
        suite.close()
    out = suite.trajectories[0]
    index = [order.index(name) for name in ur5e.joint_names]
    times = np.array([p.time_from_start.sec + 1e-9 * p.time_from_start.nanosec for p in out.points])
    inner = times < reference.duration_s - 1e-9  # the last point: the grid's arriving values
    q, dq, ddq = reference.evaluate(times[inner])
    positions = np.array([p.positions for p in out.points])[:, index]
    shift = positions[inner] - q
    expected = ur5e.inverse_dynamics(q, dq, ddq) / stiffness
    assert np.abs(expected).max() > 1e-3  # the shoulder deflects by milliradians
    np.testing.assert_allclose(shift, expected, rtol=0, atol=1e-6)
    feedforward = Feedforward(ur5e, None, terms, {'flexible_joint': {'stiffness': stiffness}}, rate_hz=250.0)
    velocities = np.array([p.velocities for p in out.points])[:, index][inner] - dq
    accelerations = np.array([p.accelerations for p in out.points])[:, index][inner] - ddq
    assert np.abs(velocities).max() > 1e-4
    # at the points on the 250 Hz grid: the grid's φ̇_d, φ̈_d
    on_grid = np.abs(times[inner] * 250.0 - np.round(times[inner] * 250.0)) < 1e-6
    grid = reference.evaluate(np.arange(int(round(reference.duration_s * 250.0)) + 1) / 250.0)
    _, grid_dphi, grid_ddphi = feedforward.reference_correction(*grid)
    rows = np.round(times[inner][on_grid] * 250.0).astype(int)
    np.testing.assert_allclose(velocities[on_grid], grid_dphi[rows], rtol=0, atol=1e-9)
    np.testing.assert_allclose(accelerations[on_grid], grid_ddphi[rows], rtol=0, atol=1e-7)
    # efforts of the grid motion q_d (not q_d + φ_d)
    effort = np.array([p.effort for p in out.points])[:, index][inner][on_grid]
    np.testing.assert_allclose(effort, feedforward.evaluate(*grid)[rows], rtol=0, atol=1e-6)


# --------------------------------------------------------------------------------------- over DDS
def _state(get_state, timeout: float = 30.0) -> str:
    """The node's lifecycle state label ('' if it never answered; a lost answer is asked again)."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        future = get_state.call_async(GetState.Request())
        if wait_until(future.done, 5.0):
            return future.result().current_state.label
    return ''


def _transition(change, get_state, transition: int, goal: str, timeout: float = 90.0) -> None:
    """Ask for a lifecycle transition until the node is in ``goal``. Right after discovery a request or
    its answer can be lost (the other side's reader not matched yet), so an unanswered request is
    followed by a look at the state and, if nothing happened, sent again (a repeated transition that
    is no longer possible is refused by the node, harmlessly)."""
    assert change.wait_for_service(timeout_sec=timeout) and get_state.wait_for_service(timeout_sec=timeout)
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        future = change.call_async(ChangeState.Request(transition=Transition(id=transition)))
        if wait_until(future.done, 10.0) and future.result().success:
            return
        if _state(get_state) == goal:
            return
    raise AssertionError(f'transition {transition}: not {goal} after {timeout} s, {_state(get_state)!r}')


def _diagnostic_values(statuses, name) -> dict:
    return {v.key: v.value for v in statuses[name].values} if name in statuses else {}


def test_lifecycle_over_dds_zeros_on_deactivate_stale_and_ctrl_c(domain):
    """sim_node and feedforward_node (streaming) as processes; the probe drives the lifecycle services.
    Active: the gravity of the held home position arrives on forward_effort_controller/commands; zeros
    after deactivate; sim_node killed: zeros and a stale event; a stand-in driver brings efforts back;
    Ctrl-C: zeros are the last message and the process exits 0."""
    processes = [start_node('sim_node', domain, *parameters('rate:=250.0')),
                 start_node('feedforward_node', domain, *parameters('mode:=streaming', 'rate:=100.0', 'timeout:=0.2',
                                                                    'terms:=[rigid_body, rotor_inertia]'))]
    context = rclpy.Context()
    rclpy.init(context=context, domain_id=domain)
    node = rclpy.create_node('feedforward_probe', context=context)
    commands, states, statuses = [], [], {}
    node.create_subscription(Float64MultiArray, '/forward_effort_controller/commands',
                             lambda m: commands.append(np.array(m.data)), 100)
    node.create_subscription(JointState, '/joint_states', states.append, qos_profile_sensor_data)
    node.create_subscription(DiagnosticArray, '/diagnostics', lambda m: statuses.update({s.name: s for s in m.status}),
                             10)
    change = node.create_client(ChangeState, '/feedforward_node/change_state')
    get_state = node.create_client(GetState, '/feedforward_node/get_state')
    reference = node.create_publisher(JointTrajectory, '/feedforward_node/reference', 10)
    driver = node.create_publisher(JointState, '/joint_states', 10)
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(node)
    from dynid.model import load_robot

    robot = load_robot('ur5e')
    home = home_configuration(robot)
    gravity = robot.inverse_dynamics(home[None], np.zeros((1, 6)), np.zeros((1, 6)))[0]
    held = _message(PointTrajectory(tuple(robot.joint_names), [0.0], home[None]))
    driving = threading.Event()
    try:
        with spinning(executor, context):
            assert wait_until(lambda: len(states) > 10, 120.0), 'no joint_states from sim_node'
            _transition(change, get_state, Transition.TRANSITION_CONFIGURE, 'inactive')
            _transition(change, get_state, Transition.TRANSITION_ACTIVATE, 'active')
            assert wait_until(lambda: reference.get_subscription_count() > 0, 30.0)

            def efforts_after_sending(message) -> bool:  # sent again each second: one may be lost in discovery
                return any(reference.publish(message) or wait_until(lambda: commands and np.any(commands[-1]), 1.0)
                           for _ in range(30))

            assert efforts_after_sending(held), 'no efforts while active'
            np.testing.assert_allclose(commands[-1], gravity, atol=1e-6)

            count = len(commands)
            _transition(change, get_state, Transition.TRANSITION_DEACTIVATE, 'inactive')
            assert wait_until(lambda: not np.any(commands[-1]), 5.0), 'no zeros after deactivate'
            time.sleep(0.3)
            zeros = [k for k in range(count, len(commands)) if not np.any(commands[k])]
            assert not np.any(np.array(commands[zeros[0]:]))  # nothing but zeros since the first

            _transition(change, get_state, Transition.TRANSITION_ACTIVATE, 'active')
            assert efforts_after_sending(held)
            processes[0].kill()  # the driver dies: joint_states stops
            assert wait_until(lambda: not np.any(commands[-1]), 10.0), 'no zeros after joint_states stopped'
            assert wait_until(lambda: int(_diagnostic_values(statuses, '/feedforward_node: feedforward').get(
                'stale_events', 0)) >= 1, 10.0), _diagnostic_values(statuses, '/feedforward_node: feedforward')

            def drive() -> None:  # a stand-in driver holding home
                while driving.is_set():
                    message = JointState(name=list(robot.joint_names), position=home.tolist(), velocity=[0.0] * 6)
                    message.header.stamp = node.get_clock().now().to_msg()
                    driver.publish(message)
                    time.sleep(0.01)

            driving.set()
            threading.Thread(target=drive, daemon=True).start()
            assert wait_until(lambda: np.any(commands[-1]), 30.0), 'no efforts once joint_states is back'
            processes[1].send_signal(signal.SIGINT)
            output, _ = processes[1].communicate(timeout=30)
            assert processes[1].returncode == 0, output[-2000:]
            time.sleep(0.3)
            assert not np.any(commands[-1]), 'Ctrl-C did not leave zeros'
    finally:
        driving.clear()
        node.destroy_node()
        rclpy.shutdown(context=context)
        stop(processes)
        print(processes[1].stdout.read()[-3000:] if processes[1].stdout and not processes[1].stdout.closed else '')


def test_trajectory_mode_improves_tracking_on_the_twin(tmp_path, domain):
    """The twin with its own model feedforward off (``internal_feedforward: none``) follows a 1.5 s
    round trip twice: sent straight to its joint_trajectory_controller topic (feedback alone), then
    through feedforward_node (trajectory mode; a result with the twin's nominal rigid body and
    Coulomb/viscous friction). RMS tracking error of every joint during the motion, from joint_states
    against the reference at the same stamps: with the feedforward at most 0.8 of without (offline on
    the same twin: 0.07–0.55)."""
    from dynid.model import load_robot

    robot = load_robot('ur5e')
    plant = PlantParameters.defaults(robot).joints
    result = tmp_path / 'result.yaml'
    identified(robot, 'viscous_coulomb', {'Fc': plant.coulomb, 'Fv': plant.viscous1}).save(result)
    processes = [start_node('sim_node', domain, *parameters('rate:=250.0', 'internal_feedforward:=none')),
                 start_node('feedforward_node', domain, *parameters('autostart:=true', f'result_file:={result}',
                                                                    'rate:=250.0'))]
    context = rclpy.Context()
    rclpy.init(context=context, domain_id=domain)
    node = rclpy.create_node('tracking_probe', context=context)
    states, sent = [], []
    node.create_subscription(JointState, '/joint_states', states.append, qos_profile_sensor_data)
    node.create_subscription(JointTrajectory, '/joint_trajectory_controller/joint_trajectory', sent.append, 10)
    controller = node.create_publisher(JointTrajectory, '/joint_trajectory_controller/joint_trajectory', 10)
    reference_topic = node.create_publisher(JointTrajectory, '/feedforward_node/reference', 10)
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(node)
    home = home_configuration(robot)
    reference = _round_trip(robot, home, 1.5)
    motion = (1.0, 1.0 + 1.5 + 0.3)  # from the end of the first hold to shortly after the return

    def rms_error(publisher) -> np.ndarray:
        start_ns = node.get_clock().now().nanoseconds + 1_000_000_000
        first = len(states)
        publisher.publish(_message(reference, stamp_ns=start_ns))
        end_ns = start_ns + int(reference.duration_s * 1e9) + 200_000_000
        assert wait_until(lambda: len(states) > first and _stamp(states[-1]) > end_ns, 120.0), 'the twin stopped'
        received = states[first:]  # once: the spinning thread goes on appending
        stamps = np.array([_stamp(m) for m in received])
        q = np.array([m.position for m in received])
        t = (stamps - start_ns) * 1e-9
        inside = (t >= motion[0]) & (t <= motion[1])
        assert inside.sum() > 100, inside.sum()
        return np.sqrt(np.mean((q[inside] - reference.evaluate(t[inside])[0]) ** 2, axis=0))

    try:
        with spinning(executor, context):
            assert wait_until(lambda: len(states) > 10, 120.0), 'no joint_states from sim_node'
            assert wait_until(lambda: reference_topic.get_subscription_count() > 0
                              and controller.get_subscription_count() > 1, 60.0), 'feedforward_node not up'
            without = rms_error(controller)
            first_sent = len(sent)
            with_feedforward = rms_error(reference_topic)
    finally:
        node.destroy_node()
        rclpy.shutdown(context=context)
        stop(processes)
    filled = [m for m in sent[first_sent:] if m.points and m.points[0].effort]
    assert len(filled) == 1 and all(len(p.effort) == 6 for p in filled[0].points)
    ratio = with_feedforward / without
    print(f'RMS tracking error [mrad] without {np.round(without * 1e3, 3)}, '
          f'with {np.round(with_feedforward * 1e3, 3)}; ratio {np.round(ratio, 3)}')
    assert ratio.max() < 0.8, ratio


def _stamp(message) -> int:
    return message.header.stamp.sec * 10**9 + message.header.stamp.nanosec


def test_autostart_refuses_a_result_of_another_robot(tmp_path, panda, ros_domain):
    """With autostart, a refused configuration ends the process with code 2 and a one-line reason."""
    path = _result_file(tmp_path / 'panda.yaml', panda)
    command = node_executable('feedforward_node')
    run = subprocess.run(command + ['--ros-args', '-p', 'autostart:=true', '-p', f'result_file:={path}'],
                         env=environment(ros_domain), capture_output=True, text=True, timeout=60)
    assert run.returncode == 2, run.stderr
    assert "identifies robot 'panda'" in run.stderr and 'Traceback' not in run.stderr


def test_alpha_of_the_estimator_reaches_the_adaptive_term(tmp_path, domain, ur5e):
    """friction_adaptive with α̂ from adaptive_topic: the streamed effort of a constant-velocity reference
    follows α2 (an excess viscous coefficient) sent as the estimator's table."""
    result = identified(ur5e, 'viscous_coulomb', {'Fc': 2.0, 'Fv': 5.0})
    path = tmp_path / 'result.yaml'
    result.save(path)
    suite = OneProcess(domain, {'mode': 'streaming', 'terms': ['friction_adaptive'], 'result_file': str(path),
                                'rate': 100.0})
    publisher = suite.probe.create_publisher(Float64MultiArray, 'estimator_node/friction', 10)
    try:
        assert suite.node.trigger_configure() == SUCCESS and suite.node.trigger_activate() == SUCCESS
        ramp = PointTrajectory(tuple(ur5e.joint_names), [0.0, 100.0], [POSE, POSE + 50.0], [[0.5] * 6, [0.5] * 6])
        suite.send(_message(ramp))
        assert suite.spin_until(lambda: suite.commands and np.any(suite.commands[-1]))
        suite.spin_until(lambda: False, 0.3)  # past the E-GMS presliding: sliding friction from here on
        before = suite.commands[-1].copy()
        table = Float64MultiArray(data=np.column_stack([np.ones(6), np.full(6, 2.0), np.ones(6)]).ravel().tolist())
        table.layout.dim = [MultiArrayDimension(label='joint:' + ','.join(ur5e.joint_names), size=6, stride=18),
                            MultiArrayDimension(label='quantity:alpha1,alpha2,active', size=3, stride=3)]
        publisher.publish(table)
        assert suite.spin_until(lambda: np.allclose(suite.commands[-1] - before, 2.0 * 0.5, atol=1e-3), 10.0), \
            suite.commands[-1] - before
    finally:
        suite.close()
