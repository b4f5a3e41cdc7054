"""sim_node: the digital twin in real time over DDS, publishing what a robot driver publishes.

Publishes (relative names, so namespaces and remapping work; one ``header.stamp`` per sample):
``joint_states`` (q, q̇, effort = joint torque), ``motor_states`` (θ, θ̇ in link units),
``joint_currents`` (current [A] in effort), ``joint_temperatures`` ([°C] in effort), and
``/diagnostics`` once per second. Parameter ``joint_states_effort`` (torque, current) chooses what
joint_states' effort holds: ``current`` puts the motor current [A] there, as the Universal Robots
driver does (the other topics stay as they are).

Subscribes ``joint_trajectory_controller/joint_trajectory`` (trajectory_msgs/JointTrajectory with
ros2_control semantics: joints by name, ``time_from_start`` from ``header.stamp`` or from reception
when the stamp is zero, a new message replaces the active one, an empty one stops and holds) and
``forward_effort_controller/commands`` (std_msgs/Float64MultiArray, one effort [N·m] per joint in
the robot's joint order, added to the controller output and held until the next message).
Malformed messages (wrong joints or lengths, NaN, non-increasing times) are logged, counted and
ignored. Service ``~/reset`` (std_srvs/Trigger) restarts at the initial position. Parameter
``internal_feedforward`` (full, gravity, none) chooses the model torque the twin's controller adds on
its own, as robot controllers do; ``none`` leaves it all to an external feedforward. Parameter
``joint_changes`` schedules changes of the true joints (stiffness halved, Coulomb friction raised:
:mod:`dynid.sim.changes`) at twin times since the start, to try the estimators on.

Samples are produced on the node clock at ``rate`` Hz, in bursts every ``batch_period`` seconds
(each sample with its own stamp; a burst costs the executor one turn instead of one per sample), and
published as serialized messages built for the whole burst at once. Sample k carries the stamp
start + k/rate for good: when the process falls behind (a loaded machine), the twin runs late and
catches up, up to 0.1 s of samples per turn, and never skips ahead, so trajectories stamped in wall
time stay where they belong (:mod:`dynid.sim.realtime`); ``/diagnostics`` reports the lag.
"""

from __future__ import annotations

import dataclasses

import numpy as np
from rcl_interfaces.msg import SetParametersResult
from rclpy.exceptions import ParameterUninitializedException
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.qos import QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray
from std_srvs.srv import Trigger
from trajectory_msgs.msg import JointTrajectory

from dynid.errors import InputError, checked_choice
from dynid.io import EFFORT_MEANINGS
from dynid.io.cdr import JointStateEncoder
from dynid.model import Payload, load_robot
from dynid.nodes.conversions import stamp_ns, trajectory_from_message
from dynid.nodes.diagnostics import DiagnosticsPublisher, status
from dynid.nodes.parameters import declarer
from dynid.nodes.parameters import descriptor as _descriptor
from dynid.nodes.runner import run_node
from dynid.sim.changes import parse_joint_change
from dynid.sim.parameters import PlantParameters, SensorParameters
from dynid.sim.realtime import RealTimeSchedule
from dynid.sim.twin import DigitalTwin

CATCH_UP_S = 0.1  # seconds of samples produced in one timer callback at most
LATE_S = 0.1  # a lag above this is reported as a warning
#: topic: {JointState field: the twin's measurement in it}
TOPICS = {'joint_states': {'position': 'q', 'velocity': 'dq', 'effort': 'joint_torque'},
          'motor_states': {'position': 'theta', 'velocity': 'dtheta'},
          'joint_currents': {'effort': 'current'}, 'joint_temperatures': {'effort': 'temperature'}}


class SimNode(Node):
    """The twin as a ROS node (module docstring). Takes the usual rclpy Node keyword arguments."""

    def __init__(self, **kwargs) -> None:
        super().__init__('sim_node', **kwargs)
        declare = declarer(self)
        declare('robot', 'ur5e', _descriptor('built-in robot name, URDF path or dynid robot file', True))
        declare('robot_description', '', _descriptor('URDF XML; used instead of robot when not empty', True))
        declare('rate', 500.0, _descriptor('publishing rate [Hz]', True, 1.0, 2000.0))
        declare('payload_mass', 0.0, _descriptor('payload at the flange [kg], 5 cm out; changeable', False,
                                                 0.0, 100.0))
        declare('noise', True, _descriptor('sensor noise and quantization on', True))
        declare('seed', 0, _descriptor('seed of noise and perturbations', True, 0, 2**31 - 1, integer=True))
        declare('initial_position', Parameter.Type.DOUBLE_ARRAY,
                _descriptor('start configuration [rad], one per joint; empty: home', True))
        declare('drive_gain_error', 0.0, _descriptor('true drive gains differ by up to this fraction', True,
                                                     0.0, 0.45))
        declare('temperature', 25.0, _descriptor('initial and ambient temperature [°C]', True, -20.0, 80.0))
        declare('batch_period', 0.005, _descriptor('samples are produced and published in bursts this often [s]',
                                                   True, 0.001, 0.1))
        declare('internal_feedforward', 'full', _descriptor("the twin controller's own model torque: full (nominal "
                                                            "rigid body, rotor inertia, friction), gravity or none "
                                                            "(an external feedforward, e.g. feedforward_node, "
                                                            "supplies it)", True))
        declare('joint_changes', Parameter.Type.STRING_ARRAY,
                _descriptor("scheduled changes of the true joints, e.g. 'time=10,stiffness_scale=0.5,"
                            "joints=shoulder_pan_joint' (time [s] since start; keys as dynid simulate --change)",
                            True))
        declare('joint_states_effort', 'torque', _descriptor("what joint_states' effort holds: torque (joint "
                                                             'torque [N·m]) or current (motor current [A], as the UR '
                                                             'driver publishes)', True, choices=EFFORT_MEANINGS))

        get = self.get_parameter
        effort = get('joint_states_effort').value
        checked_choice('parameter joint_states_effort', effort, EFFORT_MEANINGS)
        self.topics = {**TOPICS, 'joint_states': {**TOPICS['joint_states'],
                                                  'effort': 'joint_torque' if effort == 'torque' else 'current'}}
        description = get('robot_description').value
        robot = load_robot(description if description else get('robot').value)
        payload_mass = get('payload_mass').value
        params = PlantParameters.defaults(robot, payload=self._payload(payload_mass),
                                          drive_gain_error=get('drive_gain_error').value, seed=get('seed').value)
        params.ambient_c = params.initial_temperature_c = get('temperature').value
        params.controller = dataclasses.replace(params.controller,
                                                internal_feedforward=get('internal_feedforward').value)
        if not get('noise').value:
            params.sensors = SensorParameters.noiseless()
        try:
            initial = get('initial_position').value
        except ParameterUninitializedException:  # declared without a default: not given
            initial = None
        self.initial_q = None if initial is None or len(initial) == 0 else np.array(initial, dtype=float)
        self.rate = get('rate').value
        try:
            changes = [parse_joint_change(text) for text in get('joint_changes').value]
        except ParameterUninitializedException:
            changes = []
        self.twin = DigitalTwin(params, rate_hz=self.rate, seed=get('seed').value, initial_q=self.initial_q,
                                joint_changes=changes)
        self.joint_names = list(robot.joint_names)
        self.add_on_set_parameters_callback(self._on_set_parameters)

        reliable = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE)
        deep = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE)  # holds a burst of catching up
        self.publishers_ = {topic: self.create_publisher(JointState, topic, deep) for topic in self.topics}
        self.encoders = {topic: JointStateEncoder(self.joint_names, fields) for topic, fields in self.topics.items()}
        self.create_subscription(JointTrajectory, 'joint_trajectory_controller/joint_trajectory',
                                 self._on_trajectory, reliable)
        self.create_subscription(Float64MultiArray, 'forward_effort_controller/commands', self._on_effort,
                                 reliable)
        self.create_service(Trigger, '~/reset', self._on_reset)
        self.counters = {'samples': 0, 'trajectories': 0, 'rejected_trajectories': 0, 'effort_commands': 0,
                         'rejected_effort_commands': 0, 'late_callbacks': 0}
        self.schedule = RealTimeSchedule(self.rate, self._now_ns(), max(1, int(CATCH_UP_S * self.rate)))
        self.create_timer(max(get('batch_period').value, 1.0 / self.rate), self._on_timer)
        self.diagnostics = DiagnosticsPublisher(self, lambda: [self._status()])
        self.get_logger().info(f'simulating {robot.name} ({len(self.joint_names)} joints) at {self.rate:g} Hz')

    @staticmethod
    def _payload(mass: float) -> Payload | None:
        return Payload(mass, [0.0, 0.0, 0.05]) if mass > 0 else None

    # ---------------------------------------------------------------------------------- timing
    def _now_ns(self) -> int:
        return self.get_clock().now().nanoseconds

    def _on_timer(self) -> None:
        count = self.schedule.due(self._now_ns(), self.twin.samples)
        if count == 0:
            return
        if count == self.schedule.max_batch:
            self.counters['late_callbacks'] += 1
        first = self.twin.samples + 1
        record = self.twin.advance(count)
        stamps = self.schedule.stamps(first, count)
        for topic, fields in self.topics.items():
            values = {field: record.measured[name] for field, name in fields.items()}
            for data in self.encoders[topic].encode(stamps, **values):
                self.publishers_[topic].publish(data)
        self.counters['samples'] += count

    # -------------------------------------------------------------------------------- commands
    def _reject(self, kind: str, reason: str) -> None:
        self.counters[f'rejected_{kind}'] += 1
        label = {'trajectories': 'trajectory', 'effort_commands': 'effort command'}[kind]
        self.get_logger().warning(f'ignored {label}: {reason}', throttle_duration_sec=1.0)

    def _on_trajectory(self, message: JointTrajectory) -> None:
        try:
            trajectory, effort = trajectory_from_message(message, self.joint_names)
        except InputError as error:
            self._reject('trajectories', str(error))
            return
        if trajectory is None:  # an empty trajectory cancels: hold where the reference is
            self.twin.reference.hold(self.twin.reference.sample(self.twin.time)[0], self.twin.time)
            return
        stamp = stamp_ns(message.header.stamp)
        start = self.twin.time if stamp == 0 else self.schedule.twin_time(stamp)
        try:
            self.twin.follow(trajectory, start_time=start, effort=effort)
        except InputError as error:
            self._reject('trajectories', str(error))
            return
        self.counters['trajectories'] += 1

    def _on_effort(self, message: Float64MultiArray) -> None:
        values = np.array(message.data, dtype=float)
        if values.shape != (len(self.joint_names),):
            self._reject('effort_commands', f'{values.size} values for {len(self.joint_names)} joints')
            return
        if not np.all(np.isfinite(values)):
            self._reject('effort_commands', 'NaN or infinite values')
            return
        self.twin.set_effort_command(values)
        self.counters['effort_commands'] += 1

    def _on_reset(self, request, response):
        self.twin.reset(self.initial_q)
        self.schedule.restart(self._now_ns())
        response.success, response.message = True, 'restarted at the initial position'
        return response

    def _on_set_parameters(self, parameters) -> SetParametersResult:
        for parameter in parameters:
            if parameter.name == 'payload_mass':
                self.twin.set_payload(self._payload(float(parameter.value)))
        return SetParametersResult(successful=True)

    def _status(self):
        rejected = self.counters['rejected_trajectories'] + self.counters['rejected_effort_commands']
        behind = self.schedule.behind_s(self._now_ns(), self.twin.samples)
        values = {**self.counters, 'behind_s': f'{behind:.4f}', 'rate_hz': self.rate,
                  'last_stamp_ns': int(self.schedule.stamps(self.twin.samples, 1)[0])}
        name = f'{self.get_fully_qualified_name()}: digital twin'
        if behind > LATE_S:
            return status(name, 'warn', f'{behind:.2f} s behind the clock, catching up', values, 'dynid_sim')
        if rejected:
            return status(name, 'warn', f'{rejected} malformed commands ignored', values, 'dynid_sim')
        return status(name, 'ok', 'running', values, 'dynid_sim')


def main(args=None) -> None:
    """Run sim_node until shut down."""
    run_node(SimNode, 'sim_node', args)


if __name__ == '__main__':
    main()
