"""sim_node: the digital twin in real time over DDS, publishing what a robot driver publishes.

Publishes (relative names, so namespaces and remapping work; one ``header.stamp`` per sample):
``joint_states`` (q, q̇, effort = joint torque), ``motor_states`` (θ, θ̇ in link units),
``joint_currents`` (current [A] in effort), ``joint_temperatures`` ([°C] in effort), and
``/diagnostics`` once per second.

Subscribes ``joint_trajectory_controller/joint_trajectory`` (trajectory_msgs/JointTrajectory with
ros2_control semantics: joints by name, ``time_from_start`` from ``header.stamp`` or from reception
when the stamp is zero, a new message replaces the active one, an empty one stops and holds) and
``forward_effort_controller/commands`` (std_msgs/Float64MultiArray, one effort [N·m] per joint in
the robot's joint order, added to the controller output and held until the next message).
Malformed messages (wrong joints or lengths, NaN, non-increasing times) are logged, counted and
ignored. Service ``~/reset`` (std_srvs/Trigger) restarts at the initial position.

Samples are produced on the node clock at ``rate`` Hz; if a timer callback comes late, the due
samples are produced in that callback with their own stamps, so the published rate holds.
"""

from __future__ import annotations

import numpy as np
import rclpy
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from rcl_interfaces.msg import FloatingPointRange, IntegerRange, ParameterDescriptor, SetParametersResult
from rclpy.exceptions import ParameterUninitializedException
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.qos import QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray
from std_srvs.srv import Trigger
from trajectory_msgs.msg import JointTrajectory

from dynid.errors import InputError
from dynid.excite.trajectory import PointTrajectory
from dynid.model import Payload, load_robot
from dynid.nodes.runner import run_node
from dynid.sim.parameters import PlantParameters, SensorParameters
from dynid.sim.twin import DigitalTwin

MAX_CATCH_UP = 50  # samples produced in one timer callback at most


def _descriptor(description: str, read_only: bool = False, low=None, high=None, integer: bool = False):
    descriptor = ParameterDescriptor(description=description, read_only=read_only)
    if low is not None:
        if integer:
            descriptor.integer_range = [IntegerRange(from_value=int(low), to_value=int(high), step=1)]
        else:
            descriptor.floating_point_range = [FloatingPointRange(from_value=float(low), to_value=float(high))]
    return descriptor


class SimNode(Node):
    """The twin as a ROS node (module docstring). Takes the usual rclpy Node keyword arguments."""

    def __init__(self, **kwargs) -> None:
        super().__init__('sim_node', **kwargs)
        declare = self.declare_parameter
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

        get = self.get_parameter
        description = get('robot_description').value
        robot = load_robot(description if description else get('robot').value)
        payload_mass = get('payload_mass').value
        params = PlantParameters.defaults(robot, payload=self._payload(payload_mass),
                                          drive_gain_error=get('drive_gain_error').value, seed=get('seed').value)
        params.ambient_c = params.initial_temperature_c = get('temperature').value
        if not get('noise').value:
            params.sensors = SensorParameters.noiseless()
        try:
            initial = get('initial_position').value
        except ParameterUninitializedException:  # declared without a default: not given
            initial = None
        self.initial_q = None if initial is None or len(initial) == 0 else np.array(initial, dtype=float)
        self.rate = get('rate').value
        self.twin = DigitalTwin(params, rate_hz=self.rate, seed=get('seed').value, initial_q=self.initial_q)
        self.joint_names = list(robot.joint_names)
        self.add_on_set_parameters_callback(self._on_set_parameters)

        reliable = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE)
        self.publishers_ = {topic: self.create_publisher(JointState, topic, reliable) for topic in
                            ('joint_states', 'motor_states', 'joint_currents', 'joint_temperatures')}
        self.diagnostics = self.create_publisher(DiagnosticArray, '/diagnostics', 10)
        self.create_subscription(JointTrajectory, 'joint_trajectory_controller/joint_trajectory',
                                 self._on_trajectory, reliable)
        self.create_subscription(Float64MultiArray, 'forward_effort_controller/commands', self._on_effort,
                                 reliable)
        self.create_service(Trigger, '~/reset', self._on_reset)
        self.counters = {'samples': 0, 'trajectories': 0, 'rejected_trajectories': 0, 'effort_commands': 0,
                         'rejected_effort_commands': 0, 'late_callbacks': 0}
        self.start_ns = self.get_clock().now().nanoseconds
        self.create_timer(1.0 / self.rate, self._on_timer)
        self.create_timer(1.0, self._publish_diagnostics)
        self.get_logger().info(f'simulating {robot.name} ({len(self.joint_names)} joints) at {self.rate:g} Hz')

    @staticmethod
    def _payload(mass: float) -> Payload | None:
        return Payload(mass, [0.0, 0.0, 0.05]) if mass > 0 else None

    # ---------------------------------------------------------------------------------- timing
    def _on_timer(self) -> None:
        due = int((self.get_clock().now().nanoseconds - self.start_ns) * self.rate / 1e9)
        missing = due - self.twin.samples
        if missing > MAX_CATCH_UP:  # far behind (e.g. the process was stopped): skip ahead in time
            self.counters['late_callbacks'] += 1
            self.start_ns += int((missing - 1) * 1e9 / self.rate)
            missing = 1
        for _ in range(max(missing, 0)):
            self._publish(self.twin.step())

    def _stamp(self):
        return rclpy.time.Time(nanoseconds=self.start_ns + round(self.twin.time * 1e9)).to_msg()

    def _publish(self, sample) -> None:
        m = sample.measured
        stamp = self._stamp()
        empty: list[float] = []
        for topic, (position, velocity, effort) in {
            'joint_states': (m.q, m.dq, m.joint_torque), 'motor_states': (m.theta, m.dtheta, None),
            'joint_currents': (None, None, m.current), 'joint_temperatures': (None, None, m.temperature),
        }.items():
            message = JointState()
            message.header.stamp = stamp
            message.name = self.joint_names
            message.position = empty if position is None else position.tolist()
            message.velocity = empty if velocity is None else velocity.tolist()
            message.effort = empty if effort is None else effort.tolist()
            self.publishers_[topic].publish(message)
        self.counters['samples'] += 1

    # -------------------------------------------------------------------------------- commands
    def _reject(self, kind: str, reason: str) -> None:
        self.counters[f'rejected_{kind}'] += 1
        label = {'trajectories': 'trajectory', 'effort_commands': 'effort command'}[kind]
        self.get_logger().warning(f'ignored {label}: {reason}', throttle_duration_sec=1.0)

    def _on_trajectory(self, message: JointTrajectory) -> None:
        try:
            trajectory, effort = self._trajectory_from_message(message)
        except InputError as error:
            self._reject('trajectories', str(error))
            return
        if trajectory is None:  # an empty trajectory cancels: hold where the reference is
            self.twin.reference.hold(self.twin.reference.sample(self.twin.time)[0], self.twin.time)
            return
        stamp_ns = message.header.stamp.sec * 10**9 + message.header.stamp.nanosec
        start = self.twin.time if stamp_ns == 0 else (stamp_ns - self.start_ns) / 1e9
        try:
            self.twin.follow(trajectory, start_time=start, effort=effort)
        except InputError as error:
            self._reject('trajectories', str(error))
            return
        self.counters['trajectories'] += 1

    def _trajectory_from_message(self, message: JointTrajectory):
        names = list(message.joint_names)
        if not message.points:
            return None, None
        if sorted(names) != sorted(self.joint_names):
            raise InputError(f'joints {names} do not match {self.joint_names}')
        n = len(names)
        times = [p.time_from_start.sec + p.time_from_start.nanosec * 1e-9 for p in message.points]

        def column(field: str, required: bool):
            rows = [list(getattr(p, field)) for p in message.points]
            if all(len(r) == 0 for r in rows) and not required:
                return None
            if any(len(r) != n for r in rows):
                raise InputError(f'every point needs {n} {field}')
            values = np.array(rows, dtype=float)
            if not np.all(np.isfinite(values)):
                raise InputError(f'{field} hold NaN or infinite values')
            return values

        positions = column('positions', True)
        velocities = column('velocities', False)
        accelerations = column('accelerations', False) if velocities is not None else None
        effort = column('effort', False)
        return PointTrajectory(tuple(names), times, positions, velocities, accelerations), effort

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
        self.start_ns = self.get_clock().now().nanoseconds
        response.success, response.message = True, 'restarted at the initial position'
        return response

    def _on_set_parameters(self, parameters) -> SetParametersResult:
        for parameter in parameters:
            if parameter.name == 'payload_mass':
                self.twin.set_payload(self._payload(float(parameter.value)))
        return SetParametersResult(successful=True)

    def _publish_diagnostics(self) -> None:
        status = DiagnosticStatus(name=f'{self.get_name()}: digital twin', hardware_id='dynid_sim')
        rejected = self.counters['rejected_trajectories'] + self.counters['rejected_effort_commands']
        status.level = DiagnosticStatus.WARN if rejected or self.counters['late_callbacks'] else DiagnosticStatus.OK
        status.message = f'{rejected} malformed commands ignored' if rejected else 'running'
        status.values = [KeyValue(key=k, value=str(v)) for k, v in self.counters.items()]
        array = DiagnosticArray(status=[status])
        array.header.stamp = self.get_clock().now().to_msg()
        self.diagnostics.publish(array)


def main(args=None) -> None:
    """Run sim_node until shut down."""
    run_node(SimNode, 'sim_node', args)


if __name__ == '__main__':
    main()
