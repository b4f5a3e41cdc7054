"""identifier_node: records the contract topics and identifies the robot's dynamic model on request.

Services (std_srvs/Trigger): ``~/start_recording`` opens a new recording under ``output_directory``
(rosbag2 segments of ``segment_duration`` seconds, written as messages arrive, so a crash loses at
most the open segment; messages are stored as received, in canonical CDR, see :mod:`dynid.io.cdr`)
and answers once joint_states are being written; when none arrive within ``data_wait`` seconds
(default 10) it closes the recording again and answers success false with the reason;
``~/stop_recording`` takes what is still waiting, closes the recording and says how many samples
were lost (stamp gaps); ``~/identify`` identifies from the last recording with the node's
``method``, ``friction``, ``temperature`` and filter parameters, writes ``result.yaml`` and a report
folder next to the recording, and publishes the result YAML on ``~/result`` (std_msgs/String,
transient local). Data that cannot identify the model are refused as ``dynid identify`` refuses them
(:func:`dynid.identify.quality.identifiability_refusal`; ``force`` keeps such a result, with a
warning in it): the answer and ``/diagnostics`` say why, nothing is written or published.

Recorded topics: ``joint_states``, ``motor_states``, ``joint_currents``, ``joint_temperatures``,
subscribed while recording only and taken in batches by the shared intake
(:mod:`dynid.nodes.intake`; its ``intake_*`` parameters); ``/diagnostics`` reports the recording,
the samples lost and the last identification, once per second. What is recorded and how it is
identified is :class:`dynid.identify.session.IdentificationSession`; the identification runs on a
worker thread while the ``~/identify`` callback (a coroutine) waits for it, so the node, and any
node sharing its executor, keeps running; one identification at a time.
"""

from __future__ import annotations

import threading
from pathlib import Path

from rcl_interfaces.msg import SetParametersResult
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from rclpy.task import Future
from std_msgs.msg import String
from std_srvs.srv import Trigger

from dynid.errors import InputError, checked_choice
from dynid.identify.choices import FRICTION_MODELS, METHODS
from dynid.identify.session import CHOICES, IdentificationSession, IdentifierSettings
from dynid.model import load_robot
from dynid.nodes.diagnostics import DiagnosticsPublisher, status
from dynid.nodes.intake import IntakeSettings, StateIntake
from dynid.nodes.parameters import declarer, descriptor
from dynid.nodes.runner import run_node

#: IdentifierSettings field: the parameter that sets it (declared with the field's default)
SETTINGS = {'method': 'method', 'friction': 'friction', 'temperature': 'temperature', 'physical': 'physical',
            'position_cutoff_hz': 'position_cutoff', 'decimation_cutoff_hz': 'decimation_cutoff',
            'stiction_velocity': 'stiction_velocity', 'report': 'report', 'force': 'force'}
FIRST_DATA_WAIT_S = 10.0  # default of data_wait: ~/start_recording waits this long for the first joint_states [s]


class IdentifierNode(Node):
    """Recorder and identifier (module docstring). Takes the usual rclpy Node keyword arguments."""

    def __init__(self, **kwargs) -> None:
        # Before Node: destroy_node() may run on a failed start.
        self.session: IdentificationSession | None = None
        self.intake: StateIntake | None = None
        super().__init__('identifier_node', **kwargs)
        d = declarer(self)
        d('robot', 'ur5e', descriptor('robot name, URDF path or robot file', read_only=True))
        d('robot_description', '', descriptor('URDF XML, preferred when set', read_only=True))
        d('output_directory', 'dynid_recordings', descriptor('where recordings and results go'))
        d('segment_duration', 5.0, descriptor('seconds per recording segment', False, 0.5, 600.0))
        default = IdentifierSettings()
        d('method', default.method, descriptor('identification method', choices=METHODS))
        d('friction', default.friction, descriptor('friction model', choices=FRICTION_MODELS))
        d('temperature', default.temperature, descriptor('add the temperature friction term'))
        d('physical', default.physical, descriptor('physically consistent standard parameters (method ols, wls or '
                                                   'irls; friction none or viscous_coulomb)'))
        d('position_cutoff', default.position_cutoff_hz, descriptor(
            'position low-pass [Hz]; 0: from the sample rate (50 Hz from 500 Hz up)', False, 0.0, 1000.0))
        d('decimation_cutoff', default.decimation_cutoff_hz, descriptor(
            'parallel low-pass [Hz]; 0: from the sample rate (20 Hz from 500 Hz up)', False, 0.0, 1000.0))
        d('stiction_velocity', default.stiction_velocity, descriptor(
            'rows below this friction velocity are dropped [rad/s]', False, 0.0, 10.0))
        d('report', default.report, descriptor('write an HTML report beside the result'))
        d('force', default.force, descriptor('keep a result the data cannot identify (cond of the column-scaled '
                                             'regressor > 1000 or most parameters above 50 % σ), which is refused '
                                             'otherwise, as by dynid identify'))
        d('data_wait', FIRST_DATA_WAIT_S, descriptor('~/start_recording fails when no joint_states arrive within '
                                                     'this [s]', False, 0.1, 60.0))
        intake_settings = IntakeSettings.declare(self)
        for name, allowed in CHOICES.items():
            checked_choice(f'parameter {name}', self.get_parameter(name).value, allowed)
        self.add_on_set_parameters_callback(self._on_set_parameters)
        description = self.get_parameter('robot_description').value
        robot = load_robot(description if description else self.get_parameter('robot').value)
        self.session = IdentificationSession(robot, 'robot_description' if description else
                                             self.get_parameter('robot').value, self.get_namespace())
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
        self.get_logger().info(f'ready to record and identify {robot.name}')

    def _on_messages(self, taken: dict) -> None:
        # One take of the intake, on its thread: written in stamp order; the first joint_states wake ~/start_recording.
        if self.session.write(taken) and self.first_data is not None and not self.first_data.done():
            self.first_data.set_result(True)

    def _statuses(self) -> list:
        name, session = self.get_fully_qualified_name(), self.session
        recorder = session.recorder
        if recorder is not None:
            recording = status(f'{name}: recording', 'ok', f'recording to {recorder.folder}',
                                {'messages': recorder.messages})
        else:
            recording = status(f'{name}: recording', 'ok', 'not recording',
                                {'last_recording': session.last_recording or ''})
        level, text = session.outcome
        identification = status(f'{name}: identification', level,
                                'identifying' if session.identifying else text)
        return [recording, self.intake.status(f'{name}: intake'), identification]

    @staticmethod
    def _on_set_parameters(parameters) -> SetParametersResult:
        try:
            for parameter in parameters:
                if parameter.name in CHOICES:
                    checked_choice(parameter.name, parameter.value, CHOICES[parameter.name])
        except InputError as error:
            return SetParametersResult(successful=False, reason=str(error))
        return SetParametersResult(successful=True)

    def close_recording(self) -> Path | None:
        """Take what is still waiting, close an open recording (its last segment becomes readable);
        returns its folder or None."""
        if self.intake is not None:
            self.intake.stop()
        return None if self.session is None else self.session.close()

    def destroy_node(self) -> None:
        self.close_recording()
        super().destroy_node()

    async def _on_start(self, request, response):
        # Answers once joint_states are being written (new subscriptions take a moment to match across
        # processes), so a caller can start the motion right after; after data_wait it answers anyway.
        try:
            folder = self.session.start(self.get_parameter('output_directory').value,
                                        self.get_parameter('segment_duration').value)
        except InputError as error:
            response.success, response.message = False, str(error)
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
            response.message = (f'no {self.session.topic("joint_states")} within {wait_s:g} s (data_wait); '
                                f'recording stopped: {folder}')
            self.get_logger().warning(response.message)
            return response
        self.get_logger().info(f'recording to {folder}')
        response.success, response.message = True, str(folder)
        return response

    def _on_stop(self, request, response):
        folder = self.close_recording()
        if folder is None:
            response.success, response.message = False, 'not recording'
            return response
        lost = self.intake.summary().get('joint_states', {}).get('lost', 0)
        response.success = True
        response.message = f'{self.session.last_messages} messages in {folder}; {lost} samples lost'
        return response

    def _settings(self) -> IdentifierSettings:
        """The identification parameters, as they are now."""
        return IdentifierSettings(**{field: self.get_parameter(name).value for field, name in SETTINGS.items()})

    async def _on_identify(self, request, response):
        # The solve runs on a worker thread; this coroutine waits for it without blocking the executor,
        # so nodes sharing it (recording, simulation, excitation) keep running.
        settings = self._settings()
        try:
            recording = self.session.begin()
        except InputError as error:
            response.success, response.message = False, str(error)
            return response
        done = Future(executor=self.executor)
        done.add_done_callback(lambda _: None)  # completing it from the worker wakes the executor

        def work() -> None:
            try:
                done.set_result(self.session.identify(recording, settings, progress=self.get_logger().info))
            except InputError as error:
                done.set_result(error)
            except Exception as error:  # noqa: BLE001 - reported to the caller, never lost in a thread
                self.get_logger().error(f'identification crashed: {error!r}')
                done.set_result(error)

        threading.Thread(target=work, name='identification', daemon=True).start()
        outcome = await done
        if isinstance(outcome, Exception):  # bad data or a refusal (InputError): a warning; a crash: an error
            log = self.get_logger().warning if isinstance(outcome, InputError) else self.get_logger().error
            log(f'identification failed: {outcome}')
            response.success, response.message = False, str(outcome)
            return response
        self.result_publisher.publish(String(data=outcome.document))
        response.success, response.message = True, outcome.message
        self.get_logger().info(response.message)
        return response


def main(args=None) -> None:
    """Run identifier_node until shut down; an open recording is closed on the way out."""
    run_node(IdentifierNode, 'identifier_node', args)


if __name__ == '__main__':
    main()
