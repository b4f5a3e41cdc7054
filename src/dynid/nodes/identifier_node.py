"""identifier_node: records the contract topics and identifies the robot's dynamic model on request.

Services (std_srvs/Trigger): ``~/start_recording`` opens a new recording under ``output_directory``
(rosbag2 segments of ``segment_duration`` seconds, written as messages arrive, so a crash loses at
most the open segment; messages are stored as received, in canonical CDR, see
:mod:`dynid.io.cdr`) and answers once joint_states are being written; when none arrive within ``data_wait`` seconds
(default 10) it closes the recording again and answers success false with the reason;
``~/stop_recording`` takes what is still waiting, closes the recording and says how many samples
were lost (stamp gaps); ``~/identify``
identifies from the last recording with the node's ``method``, ``friction``, ``temperature`` and
filter parameters, writes ``result.yaml`` and a report folder next to the recording, and publishes
the result YAML on ``~/result`` (std_msgs/String, transient local). Recorded topics: ``joint_states``,
``motor_states``, ``joint_currents``, ``joint_temperatures``, subscribed while recording only and
taken in batches by the shared intake (:mod:`dynid.nodes.intake`; its ``intake_*`` parameters);
``/diagnostics`` reports the recording and the samples lost, once per second.

The identification runs on a worker thread while the ``~/identify`` callback (a coroutine) waits
for it, so the node, and any node sharing its executor, keeps running; one identification at a time.
"""

from __future__ import annotations

import datetime
import threading
from pathlib import Path

import numpy as np
import yaml
from rcl_interfaces.msg import SetParametersResult
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from rclpy.task import Future
from std_msgs.msg import String
from std_srvs.srv import Trigger

from dynid.errors import InputError
from dynid.identify.model import FRICTION_MODELS, ModelSpec, RecordingInput
from dynid.identify.physical import PhysicalSettings
from dynid.identify.preprocess import FilterSettings
from dynid.identify.report import write_report
from dynid.identify.run import METHODS, IdentifyOptions, identify
from dynid.io.cdr import JOINT_STATE
from dynid.io.recorder import SegmentedRecorder, read_recording
from dynid.model import load_robot
from dynid.nodes.diagnostics import DiagnosticsPublisher, status
from dynid.nodes.intake import IntakeSettings, StateIntake
from dynid.nodes.parameters import declarer, descriptor
from dynid.nodes.runner import run_node

CHOICES = {'method': METHODS, 'friction': FRICTION_MODELS}
FIRST_DATA_WAIT_S = 10.0  # default of data_wait: ~/start_recording waits this long for the first joint_states [s]


def _refusal(name: str, value) -> str | None:
    """Why ``value`` is refused for the choice parameter ``name``, or None."""
    choices = CHOICES.get(name)
    if choices is None or value in choices:
        return None
    return f'{name} must be one of {", ".join(choices)}, got {value!r}'


class IdentifierNode(Node):
    """Recorder and identifier (module docstring). Takes the usual rclpy Node keyword arguments."""

    def __init__(self, **kwargs) -> None:
        # Before Node: destroy_node() may run on a failed start.
        self.recorder: SegmentedRecorder | None = None
        self.intake: StateIntake | None = None
        self.lock = threading.Lock()
        super().__init__('identifier_node', **kwargs)
        d = declarer(self)
        d('robot', 'ur5e', descriptor('robot name, URDF path or robot file', read_only=True))
        d('robot_description', '', descriptor('URDF XML, preferred when set', read_only=True))
        d('output_directory', 'dynid_recordings', descriptor('where recordings and results go'))
        d('segment_duration', 5.0, descriptor('seconds per recording segment', False, 0.5, 600.0))
        d('method', 'wls', descriptor('identification method', choices=METHODS))
        d('friction', 'viscous_coulomb', descriptor('friction model', choices=FRICTION_MODELS))
        d('temperature', False, descriptor('add the temperature friction term'))
        d('physical', False, descriptor('physically consistent standard parameters (method ols, wls or irls; '
                                        'friction none or viscous_coulomb)'))
        d('position_cutoff', 0.0, descriptor('position low-pass [Hz]; 0: from the sample rate (50 Hz from 500 Hz up)',
                                             False, 0.0, 1000.0))
        d('decimation_cutoff', 0.0, descriptor('parallel low-pass [Hz]; 0: from the sample rate (20 Hz from 500 Hz '
                                               'up)', False, 0.0, 1000.0))
        d('stiction_velocity', 0.02, descriptor('rows below this friction velocity are dropped [rad/s]', False,
                                                0.0, 10.0))
        d('report', True, descriptor('write an HTML report beside the result'))
        d('data_wait', FIRST_DATA_WAIT_S, descriptor('~/start_recording fails when no joint_states arrive within '
                                                     'this [s]', False, 0.1, 60.0))
        intake_settings = IntakeSettings.declare(self)
        for name in CHOICES:
            refusal = _refusal(name, self.get_parameter(name).value)
            if refusal:
                raise InputError(f'parameter {refusal}')
        self.add_on_set_parameters_callback(self._on_set_parameters)
        get = self.get_parameter
        description = get('robot_description').value
        self.robot_spec = description if description else get('robot').value
        self.robot = load_robot(self.robot_spec)
        self.last_recording: Path | None = None
        self.identifying = False
        latched = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                             durability=DurabilityPolicy.TRANSIENT_LOCAL)
        self.result_publisher = self.create_publisher(String, '~/result', latched)
        self.intake = StateIntake(self, intake_settings, on_messages=self._on_messages)
        self.first_data: Future | None = None
        # Coroutines (start waits for data, identify for the solver) get their own group, so that the node's
        # other callbacks run while they wait.
        waiting = ReentrantCallbackGroup()
        self.create_service(Trigger, '~/start_recording', self._on_start, callback_group=waiting)
        self.create_service(Trigger, '~/stop_recording', self._on_stop)
        self.create_service(Trigger, '~/identify', self._on_identify, callback_group=waiting)
        self.diagnostics = DiagnosticsPublisher(self, self._statuses)
        self.get_logger().info(f'ready to record and identify {self.robot.name}')

    def _on_messages(self, taken: dict) -> None:
        # One take of the intake: canonical bytes of every topic, written in stamp order.
        with self.lock:
            if self.recorder is None:
                return
            topics = [self._topic(t) for t in taken]
            topics = [name for t, name in zip(taken, topics, strict=True) for _ in taken[t][1]]
            messages = [m for t in taken for m in taken[t][1]]
            stamps = np.concatenate([taken[t][0] for t in taken])
            for k in np.argsort(stamps, kind='stable'):
                self.recorder.write(topics[k], JOINT_STATE, int(stamps[k]), messages[k])
            if 'joint_states' in taken and self.first_data is not None and not self.first_data.done():
                self.first_data.set_result(True)

    def _topic(self, topic: str) -> str:
        return f'{self.get_namespace().rstrip("/")}/{topic}'

    def _statuses(self) -> list:
        name = self.get_fully_qualified_name()
        if self.recorder is not None:
            recording = status(f'{name}: recording', 'ok', f'recording to {self.recorder.folder}',
                                {'messages': self.recorder.messages})
        else:
            recording = status(f'{name}: recording', 'ok', 'not recording',
                                {'last_recording': self.last_recording or ''})
        return [recording, self.intake.status(f'{name}: intake')]

    @staticmethod
    def _on_set_parameters(parameters) -> SetParametersResult:
        for parameter in parameters:
            refusal = _refusal(parameter.name, parameter.value)
            if refusal:
                return SetParametersResult(successful=False, reason=refusal)
        return SetParametersResult(successful=True)

    def close_recording(self) -> Path | None:
        """Take what is still waiting, close an open recording (its last segment becomes readable);
        returns its folder or None."""
        if self.intake is not None:
            self.intake.stop()
        with self.lock:
            if self.recorder is None:
                return None
            self.last_recording = self.recorder.close()
            self.recorder = None
            return self.last_recording

    def destroy_node(self) -> None:
        self.close_recording()
        super().destroy_node()

    async def _on_start(self, request, response):
        # Answers once joint_states are being written (new subscriptions take a moment to match across
        # processes), so a caller can start the motion right after; after FIRST_DATA_WAIT_S it answers anyway.
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
        first = Future(executor=self.executor)
        first.add_done_callback(lambda _: None)  # completing it wakes the executor
        self.first_data = first
        self.intake.start()
        wait_s = self.get_parameter('data_wait').value
        timer = self.create_timer(wait_s, lambda: first.done() or first.set_result(False))
        try:
            receiving = await first
        finally:
            self.destroy_timer(timer)
            self.first_data = None
        if not receiving:  # a wrong namespace, topic or domain: say so instead of recording nothing
            self.close_recording()
            response.success = False
            response.message = (f'no {self._topic("joint_states")} within {wait_s:g} s (data_wait); '
                                f'recording stopped: {folder}')
            self.get_logger().warning(response.message)
            return response
        self.get_logger().info(f'recording to {folder}')
        response.success, response.message = True, str(folder)
        return response

    def _on_stop(self, request, response):
        recorder = self.recorder
        folder = self.close_recording()
        if folder is None:
            response.success, response.message = False, 'not recording'
            return response
        lost = self.intake.summary().get('joint_states', {}).get('lost', 0)
        response.success, response.message = True, f'{recorder.messages} messages in {folder}; {lost} samples lost'
        return response

    async def _on_identify(self, request, response):
        # The solve runs on a worker thread; this coroutine waits for it without blocking the executor,
        # so nodes sharing it (recording, simulation, excitation) keep running.
        if self.recorder is not None:
            response.success, response.message = False, 'stop the recording first'
            return response
        if self.last_recording is None:
            response.success, response.message = False, 'nothing recorded yet'
            return response
        if self.identifying:
            response.success, response.message = False, 'an identification is already running'
            return response
        self.identifying = True
        done = Future(executor=self.executor)
        done.add_done_callback(lambda _: None)  # completing it from the worker wakes the executor
        recording = self.last_recording

        def work() -> None:
            try:
                done.set_result(self._identify(recording))
            except InputError as error:
                done.set_result(error)
            except Exception as error:  # noqa: BLE001 - reported to the caller, never lost in a thread
                self.get_logger().error(f'identification crashed: {error!r}')
                done.set_result(error)

        threading.Thread(target=work, name='identification', daemon=True).start()
        try:
            outcome = await done
        finally:
            self.identifying = False
        if isinstance(outcome, Exception):
            self.get_logger().error(f'identification failed: {outcome}')
            response.success, response.message = False, str(outcome)
            return response
        result, path = outcome
        document = yaml.safe_dump(result.to_dict(), sort_keys=False, allow_unicode=True)
        self.result_publisher.publish(String(data=document))
        train = result.metrics['train']
        response.success = True
        response.message = (f'{result.method.upper()}: {len(result.parameter_names)} parameters, relative residual '
                            f'{train["relative_residual"]:.4g}; wrote {path}')
        self.get_logger().info(response.message)
        return response

    def _identify(self, recording: Path):
        """Identify from a recording folder; writes result.yaml (and the report) into it."""
        get = self.get_parameter
        dataset = read_recording(recording, self.robot.joint_names, self.get_namespace().rstrip('/'))
        spec = ModelSpec(friction=get('friction').value, temperature=get('temperature').value)
        settings = FilterSettings(position_cutoff_hz=get('position_cutoff').value or None,
                                  decimation_cutoff_hz=get('decimation_cutoff').value or None,
                                  stiction_velocity=get('stiction_velocity').value)
        result = identify(self.robot, [RecordingInput(dataset, name=str(recording))], spec, settings,
                          IdentifyOptions(method=get('method').value,
                                          physical=PhysicalSettings() if get('physical').value else None),
                          progress=lambda text: self.get_logger().info(text))
        result.provenance['robot_spec'] = self.robot_spec if not get('robot_description').value else 'robot_description'
        path = result.save(recording / 'result.yaml')
        if get('report').value:
            write_report(recording / 'report', result, self.robot, [dataset])
        return result, path


def main(args=None) -> None:
    """Run identifier_node until shut down; an open recording is closed on the way out."""
    run_node(IdentifierNode, 'identifier_node', args)


if __name__ == '__main__':
    main()
