"""sim_node: the digital twin (:mod:`dynid.sim`) in real time over DDS, publishing what a robot driver publishes.

``engine:=mujoco`` puts MuJoCo in place of the twin's plant (:mod:`dynid.sim.mujoco_twin`): the same topics,
stamps, controller and sensors.

Its topics, service and parameters are in docs/nodes/README.md. Samples are produced on the node clock
at ``rate`` Hz in bursts every ``batch_period`` s, each with its own stamp, and published as serialized
messages built for the whole burst at once (:class:`dynid.io.cdr.JointStateEncoder`). Sample k carries
the stamp start + k/rate for good: when the process falls behind, the twin runs late and catches up (at
most :data:`dynid.sim.driver.CATCH_UP_S` of samples per turn) and never skips ahead (:mod:`dynid.sim.realtime`);
trajectories stamped in wall time stay where they belong, and ``/diagnostics`` reports the lag. The twin as a
driver, without ROS types, is :class:`dynid.sim.driver.DriverTwin`: the node converts its messages and publishes.
"""

from __future__ import annotations

import math

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
from dynid.ros.conversions import effort_command, stamp_ns, trajectory_from_message
from dynid.ros.diagnostics import DiagnosticsPublisher, status
from dynid.ros.parameters import declarer
from dynid.ros.parameters import descriptor as _descriptor
from dynid.ros.runner import node_message, run_node
from dynid.sim.changes import parse_joint_change
from dynid.sim.driver import COMMANDS, DriverTwin
from dynid.sim.mujoco_twin import make_twin
from dynid.sim.parameters import PlantParameters
from dynid.sim.settings import ENGINES
from dynid.sim.ur_modes import URDriverSide

HISTORY_S = 5.0  # seconds of samples the state publishers keep for reliable readers


class SimNode(Node):
    """The twin as a ROS node (module docstring). Takes the usual rclpy Node keyword arguments."""

    def __init__(self, **kwargs) -> None:
        super().__init__('sim_node', **kwargs)
        self._declare_parameters()
        robot, engine = self._start_twin()
        self._open_interfaces()
        self.get_logger().info(f'simulating {robot.name} ({len(self.joint_names)} joints) at {self.rate:g} Hz on '
                               f'the {engine} plant')

    def _declare_parameters(self) -> None:
        """The node's parameters (docs/nodes/parameters.md)."""
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
        declare('engine', 'twin', _descriptor("the plant: twin (dynid's flexible-joint twin) or mujoco (the robot's "
                                              'URDF, or mjcf, in MuJoCo: rigid joints; needs the mujoco package)',
                                              True, choices=ENGINES))
        declare('mjcf', '', _descriptor('with engine mujoco: an MJCF file to simulate instead of the robot\'s URDF '
                                        '(joints named as the robot\'s)', True))
        declare('joint_states_effort', 'torque', _descriptor("what joint_states' effort holds: torque (joint "
                                                             'torque [N·m]), current (motor current [A]), '
                                                             'current_as_torque (K·i [N·m]) or '
                                                             'gravity_compensated_torque (K·i less the gravity with '
                                                             "the payload set on the robot: UR's "
                                                             'actual_current_as_torque)', True,
                                                             choices=EFFORT_MEANINGS))
        declare('robot_payload_mass', -1.0, _descriptor('payload set on the robot [kg] (5 cm out) that a '
                                                        'gravity_compensated_torque effort leaves out; negative: '
                                                        'the one it carries (payload_mass)', True, -1.0, 100.0))
        declare('ur_direct_torque', False, _descriptor('effort commands applied as UR applies direct_torque(): '
                                                       'plus its gravity (with the payload set) and its friction '
                                                       'model scaled by ur_viscous_scale, ur_coulomb_scale (use '
                                                       'internal_feedforward none)', True))
        declare('ur_viscous_scale', [0.0], _descriptor("UR's viscous friction compensation per joint, 0-1 "
                                                       '(FrictionModelController); one value: all joints', False))
        declare('ur_coulomb_scale', [0.0], _descriptor("UR's Coulomb friction compensation per joint, 0-1", False))

    def _start_twin(self):
        """The robot and the twin of the parameters, with UR's driver side where the effort or the commands are
        UR's; returns the robot and the engine."""
        get = self.get_parameter
        effort = get('joint_states_effort').value
        checked_choice('parameter joint_states_effort', effort, EFFORT_MEANINGS)
        description = get('robot_description').value
        robot = load_robot(description if description else get('robot').value)
        set_mass = get('robot_payload_mass').value
        params = PlantParameters.of_twin(robot, self._payload(get('payload_mass').value), get('drive_gain_error').value,
                                         get('seed').value, get('temperature').value,
                                         get('internal_feedforward').value, get('noise').value)
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
        engine = get('engine').value
        checked_choice('parameter engine', engine, ENGINES)
        twin = make_twin(params, engine, get('mjcf').value, rate_hz=self.rate, seed=get('seed').value,
                         initial_q=self.initial_q, joint_changes=changes)
        ur = URDriverSide(params, effort, self._payload(get('payload_mass').value if set_mass < 0 else set_mass),
                          get('ur_direct_torque').value, get('ur_viscous_scale').value, get('ur_coulomb_scale').value)
        self.driver = DriverTwin(twin, ur, self.rate, self._now_ns(), self.initial_q)
        self.twin = twin
        self.joint_names = list(robot.joint_names)
        self.add_on_set_parameters_callback(self._on_set_parameters)
        return robot, engine

    def _open_interfaces(self) -> None:
        """The state publishers, the trajectory and command subscriptions, the reset service, the timer and the
        diagnostics."""
        reliable = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE)
        # The history holds HISTORY_S of samples (at least 100): a reliable reader must get every sample before the
        # history overwrites it, and after a stall the twin catches up in back-to-back bursts, faster than real
        # time, while the reader may still be starved (one second of samples lost ~1000 at 1 kHz when the twin
        # stopped for 1 s and a reliable recorder for 2 s; with 100, a 0.8 s stall at 500 Hz lost ~40).
        deep = QoSProfile(depth=max(100, math.ceil(HISTORY_S * self.rate)), reliability=ReliabilityPolicy.RELIABLE)
        topics = self.driver.topics
        self.publishers_ = {topic: self.create_publisher(JointState, topic, deep) for topic in topics}
        self.encoders = {topic: JointStateEncoder(self.joint_names, fields) for topic, fields in topics.items()}
        self.create_subscription(JointTrajectory, 'joint_trajectory_controller/joint_trajectory',
                                 self._on_trajectory, reliable)
        for topic, (kind, _) in COMMANDS.items():
            self.create_subscription(Float64MultiArray, topic,
                                     lambda message, k=kind: self._on_command(k, message), reliable)
        self.create_service(Trigger, '~/reset', self._on_reset)
        self.driver.start(self._now_ns())  # the clock starts once the node is set up
        self.create_timer(max(self.get_parameter('batch_period').value, 1.0 / self.rate), self._on_timer)
        self.diagnostics = DiagnosticsPublisher(self, lambda: [self._status()])

    @staticmethod
    def _payload(mass: float) -> Payload | None:
        return Payload(mass, [0.0, 0.0, 0.05]) if mass > 0 else None

    def _now_ns(self) -> int:
        return self.get_clock().now().nanoseconds

    def _on_timer(self) -> None:
        burst = self.driver.burst(self._now_ns())
        if burst is None:
            return
        stamps, topics = burst
        for topic, values in topics.items():
            for data in self.encoders[topic].encode(stamps, **values):
                self.publishers_[topic].publish(data)

    def _reject(self, kind: str, error: InputError) -> None:
        label = self.driver.rejected(kind)
        self.get_logger().warning(f'ignored {label}: {node_message(error)}', throttle_duration_sec=1.0)

    def _on_trajectory(self, message: JointTrajectory) -> None:
        try:
            self.driver.follow(*trajectory_from_message(message, self.joint_names), stamp_ns(message.header.stamp))
        except InputError as error:
            self._reject('trajectories', error)

    def _on_command(self, kind: str, message: Float64MultiArray) -> None:
        """A forward command controller's command (:meth:`dynid.sim.driver.DriverTwin.command`); bad ones counted
        and ignored."""
        try:
            values = effort_command(message, len(self.joint_names))
        except InputError as error:
            self._reject(kind, error)
            return
        self.driver.command(kind, values)

    def _on_reset(self, request, response):
        self.driver.reset(self._now_ns())
        response.success, response.message = True, 'restarted at the initial position'
        return response

    def _on_set_parameters(self, parameters) -> SetParametersResult:
        for parameter in parameters:
            if parameter.name == 'payload_mass':
                self.twin.set_payload(self._payload(float(parameter.value)))
            elif parameter.name in ('ur_viscous_scale', 'ur_coulomb_scale'):
                try:
                    self.driver.ur.set_scales(**{parameter.name[3:]: list(parameter.value)})
                except InputError as error:
                    return SetParametersResult(successful=False, reason=node_message(error))
        return SetParametersResult(successful=True)

    def _status(self):
        level, message, values = self.driver.health(self._now_ns())
        return status(f'{self.get_fully_qualified_name()}: digital twin', level, message, values, 'dynid_sim')


def main(args=None) -> None:
    """Run sim_node until shut down."""
    run_node(SimNode, 'sim_node', args)


if __name__ == '__main__':
    main()
