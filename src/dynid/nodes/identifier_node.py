"""identifier_node: records the contract topics and identifies the robot's dynamic model on request.

Services (std_srvs/Trigger): ``~/start_recording`` opens a new recording under ``output_directory``
(rosbag2 segments of ``segment_duration`` seconds, written as messages arrive, so a crash loses at
most the open segment; messages are re-serialized by rosbags, whose reader refuses the trailing
padding of rclpy's CDR); ``~/stop_recording`` closes it; ``~/identify`` identifies from the last
recording with the node's ``method``, ``friction``, ``temperature`` and filter parameters, writes
``result.yaml`` and a report folder next to the recording, and publishes the result YAML on
``~/result`` (std_msgs/String, transient local). Recorded topics: ``joint_states``,
``motor_states``, ``joint_currents``, ``joint_temperatures`` (best effort, deep queue).
"""

from __future__ import annotations

import datetime
import threading
from pathlib import Path

import rclpy
import yaml
from rcl_interfaces.msg import FloatingPointRange, ParameterDescriptor
from rclpy.callback_groups import MutuallyExclusiveCallbackGroup
from rclpy.executors import ExternalShutdownException, MultiThreadedExecutor
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState
from std_msgs.msg import String
from std_srvs.srv import Trigger

from dynid.errors import InputError
from dynid.identify.model import FRICTION_MODELS, ModelSpec, RecordingInput
from dynid.identify.preprocess import FilterSettings
from dynid.identify.report import write_report
from dynid.identify.run import METHODS, IdentifyOptions, identify
from dynid.io.bag import joint_state_cdr
from dynid.io.recorder import SegmentedRecorder, read_recording
from dynid.model import load_robot

TOPICS = ('joint_states', 'motor_states', 'joint_currents', 'joint_temperatures')


def _choices(description: str, choices) -> ParameterDescriptor:
    return ParameterDescriptor(description=f'{description} ({", ".join(choices)})')


def _range(description: str, low: float, high: float) -> ParameterDescriptor:
    return ParameterDescriptor(description=description,
                               floating_point_range=[FloatingPointRange(from_value=low, to_value=high)])


class IdentifierNode(Node):
    """Recorder and identifier (module docstring). Takes the usual rclpy Node keyword arguments."""

    def __init__(self, **kwargs) -> None:
        super().__init__('identifier_node', **kwargs)
        d = self.declare_parameter
        d('robot', 'ur5e', ParameterDescriptor(description='robot name, URDF path or robot file', read_only=True))
        d('robot_description', '', ParameterDescriptor(description='URDF XML, preferred when set', read_only=True))
        d('output_directory', 'dynid_recordings', ParameterDescriptor(description='where recordings and results go'))
        d('segment_duration', 5.0, _range('seconds per recording segment', 0.5, 600.0))
        d('method', 'wls', _choices('identification method', METHODS))
        d('friction', 'viscous_coulomb', _choices('friction model', FRICTION_MODELS))
        d('temperature', False, ParameterDescriptor(description='add the temperature friction term'))
        d('position_cutoff', 50.0, _range('position low-pass [Hz]', 1.0, 1000.0))
        d('decimation_cutoff', 20.0, _range('parallel low-pass [Hz]', 1.0, 1000.0))
        d('stiction_velocity', 0.02, _range('rows below this friction velocity are dropped [rad/s]', 0.0, 10.0))
        d('report', True, ParameterDescriptor(description='write an HTML report beside the result'))
        get = self.get_parameter
        description = get('robot_description').value
        self.robot_spec = description if description else get('robot').value
        self.robot = load_robot(self.robot_spec)
        self.recorder: SegmentedRecorder | None = None
        self.last_recording: Path | None = None
        self.lock = threading.Lock()
        self.dropped = 0
        latched = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                             durability=DurabilityPolicy.TRANSIENT_LOCAL)
        deep = QoSProfile(depth=2000, reliability=ReliabilityPolicy.BEST_EFFORT, history=HistoryPolicy.KEEP_LAST)
        self.result_publisher = self.create_publisher(String, '~/result', latched)
        for topic in TOPICS:
            self.create_subscription(JointState, topic, lambda m, t=topic: self._on_message(t, m), deep)
        services = MutuallyExclusiveCallbackGroup()  # identification is slow: keep it off the recording thread
        self.create_service(Trigger, '~/start_recording', self._on_start, callback_group=services)
        self.create_service(Trigger, '~/stop_recording', self._on_stop, callback_group=services)
        self.create_service(Trigger, '~/identify', self._on_identify, callback_group=services)
        self.get_logger().info(f'ready to record and identify {self.robot.name}')

    def _on_message(self, topic: str, message: JointState) -> None:
        with self.lock:
            if self.recorder is None:
                return
            stamp = message.header.stamp.sec * 1_000_000_000 + message.header.stamp.nanosec
            if stamp == 0:
                self.dropped += 1
                return
            data = joint_state_cdr(stamp, message.name, message.position, message.velocity, message.effort)
            self.recorder.write(f'{self.get_namespace().rstrip("/")}/{topic}', 'sensor_msgs/msg/JointState',
                                stamp, data)

    def _on_start(self, request, response):
        with self.lock:
            if self.recorder is not None:
                response.success, response.message = False, 'already recording'
                return response
            stamp = datetime.datetime.now().strftime('%Y%m%d_%H%M%S_%f')
            folder = Path(self.get_parameter('output_directory').value) / f'recording_{stamp}'
            try:
                self.recorder = SegmentedRecorder(folder, self.get_parameter('segment_duration').value)
            except (InputError, OSError) as error:
                response.success, response.message = False, f'cannot record: {error}'
                return response
        self.get_logger().info(f'recording to {folder}')
        response.success, response.message = True, str(folder)
        return response

    def _on_stop(self, request, response):
        with self.lock:
            if self.recorder is None:
                response.success, response.message = False, 'not recording'
                return response
            self.last_recording = self.recorder.close()
            count = self.recorder.messages
            self.recorder = None
        response.success, response.message = True, f'{count} messages in {self.last_recording}'
        return response

    def _on_identify(self, request, response):
        if self.recorder is not None:
            response.success, response.message = False, 'stop the recording first'
            return response
        if self.last_recording is None:
            response.success, response.message = False, 'nothing recorded yet'
            return response
        get = self.get_parameter
        try:
            dataset = read_recording(self.last_recording, self.robot.joint_names, self.get_namespace().rstrip('/'))
            spec = ModelSpec(friction=get('friction').value, temperature=get('temperature').value)
            settings = FilterSettings(position_cutoff_hz=get('position_cutoff').value,
                                      decimation_cutoff_hz=get('decimation_cutoff').value,
                                      stiction_velocity=get('stiction_velocity').value)
            result = identify(self.robot, [RecordingInput(dataset, name=str(self.last_recording))], spec, settings,
                              IdentifyOptions(method=get('method').value),
                              progress=lambda text: self.get_logger().info(text))
        except InputError as error:
            self.get_logger().error(f'identification failed: {error}')
            response.success, response.message = False, str(error)
            return response
        result.provenance['robot_spec'] = self.robot_spec if not get('robot_description').value else 'robot_description'
        path = result.save(self.last_recording / 'result.yaml')
        if get('report').value:
            write_report(self.last_recording / 'report', result, self.robot, [dataset])
        document = yaml.safe_dump(result.to_dict(), sort_keys=False, allow_unicode=True)
        self.result_publisher.publish(String(data=document))
        train = result.metrics['train']
        response.success = True
        response.message = (f'{result.method.upper()}: {len(result.parameter_names)} parameters, relative residual '
                            f'{train["relative_residual"]:.4g}; wrote {path}')
        self.get_logger().info(response.message)
        return response


def main(args=None) -> None:
    """Run identifier_node until shut down (multi-threaded: recording goes on while identifying)."""
    try:
        with rclpy.init(args=args):
            executor = MultiThreadedExecutor(num_threads=2)
            executor.add_node(IdentifierNode())
            executor.spin()
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    except InputError as error:
        import sys

        print(f'identifier_node: error: {error}', file=sys.stderr)
        raise SystemExit(2) from None


if __name__ == '__main__':
    main()
