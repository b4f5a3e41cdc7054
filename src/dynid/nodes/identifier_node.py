"""identifier_node: records the contract topics and identifies the robot's dynamic model on request.

Its services (``~/start_recording``, ``~/stop_recording``, ``~/identify``, ``~/identify_payload``),
``~/result``, ``~/payload`` and what ``/diagnostics`` reports are in docs/nodes/README.md. The topics come
through the shared intake (:mod:`dynid.ros.intake`, its ``intake_*`` parameters) into
:class:`dynid.identify.job.session.IdentificationSession`, which records them and identifies (the payload:
:mod:`dynid.payload.service`). Each job runs on a worker thread while the service coroutine waits for it
(:mod:`dynid.ros.waiting`), so the node, and any node sharing its executor, keeps running; one at a time.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from rcl_interfaces.msg import SetParametersResult
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.node import Node
from rclpy.qos import ReliabilityPolicy
from std_msgs.msg import String
from std_srvs.srv import Trigger

from dynid.errors import InputError, checked_choice
from dynid.identify import IdentificationSession
from dynid.identify.settings import IdentifierSettings, RecordingSettings
from dynid.model import load_robot
from dynid.payload.service import NODE_CHOICES as CHOICES
from dynid.payload.service import PayloadServiceSettings, PayloadSettings, identify_recorded_payload
from dynid.ros.diagnostics import DiagnosticsPublisher, status
from dynid.ros.intake import IntakeSettings, StateIntake
from dynid.ros.parameters import (
    check_method_option,
    declare_method_options,
    declare_robot,
    declare_settings,
    method_option_entries,
    method_option_spelling,
    value_or,
)
from dynid.ros.payload_updates import LATCHED
from dynid.ros.runner import PARAMETER_ADVICE, node_message, run_node
from dynid.ros.ur_payload import call_ur_set_payload
from dynid.ros.waiting import answer_with_job, wakeful_future, with_timeout
from dynid.settings import from_values


class IdentifierNode(Node):
    """Recorder and identifier (module docstring). Takes the usual rclpy Node keyword arguments."""

    def __init__(self, **kwargs) -> None:
        # Before Node: destroy_node() may run on a failed start.
        self.session: IdentificationSession | None = None
        self.intake: StateIntake | None = None
        super().__init__('identifier_node', **kwargs)
        given = declare_robot(self)
        declare_settings(self, RecordingSettings)  # where and how ~/start_recording records
        declare_settings(self, IdentifierSettings)  # how ~/identify identifies, read at each call
        declare_method_options(self)  # the methods' flagged options (weight_function, fix_drive_gain), likewise
        method_option_entries(self)  # a value they refuse stops the start, as a choice's does
        declare_settings(self, PayloadSettings)  # payload_<field>: how ~/identify_payload identifies
        declare_settings(self, PayloadServiceSettings)  # where it starts from, UR's set_payload after
        # reliable, 5 s deep: a recording must hold every sample, also those a busy process missed (dynid.ros.intake)
        intake_settings = IntakeSettings.declare(self, reliability='reliable', depth=5000)
        for name, allowed in CHOICES.items():
            checked_choice(f'parameter {name}', self.get_parameter(name).value, allowed)
        self.add_on_set_parameters_callback(self._on_set_parameters)
        robot = load_robot(given.robot_description or given.robot, joints=list(given.joints) or None,
                           joint_map=given.joint_map)
        self.session = IdentificationSession(robot, given.robot_description or given.robot,
                                             self.get_namespace(), intake_settings.joint_states_effort,
                                             method_option_spelling(PARAMETER_ADVICE), node_message)
        self.result_publisher = self.create_publisher(String, '~/result', LATCHED)
        self.payload_publisher = self.create_publisher(String, '~/payload', LATCHED)
        self.intake = StateIntake(self, intake_settings, on_messages=self._on_messages)
        self.first_data = None  # while ~/start_recording waits: completed by the first joint_states
        # Coroutines (start waits for data, identify for the solver) get their own group, so that the node's
        # other callbacks run while they wait.
        waiting = ReentrantCallbackGroup()
        self.create_service(Trigger, '~/start_recording', self._on_start, callback_group=waiting)
        self.create_service(Trigger, '~/stop_recording', self._on_stop)
        self.create_service(Trigger, '~/identify', self._on_identify, callback_group=waiting)
        self.create_service(Trigger, '~/identify_payload', self._on_identify_payload, callback_group=waiting)
        self.diagnostics = DiagnosticsPublisher(self, self._statuses)
        self.get_logger().info(f'ready to record and identify {robot.name}')

    def _on_messages(self, taken: dict) -> None:
        # One take of the intake, on its thread: written in stamp order; the first joint_states wake ~/start_recording.
        if self.session.write(taken) and self.first_data is not None and not self.first_data.done():
            self.first_data.set_result(True)

    def _statuses(self) -> list:
        name = self.get_fully_qualified_name()
        recording, identification = (status(f'{name}: {what}', level, message, values)
                                     for what, level, message, values in self.session.statuses(
                                         self.count_publishers(self.session.topic('joint_states'))))
        return [recording, self.intake.status(f'{name}: intake'), identification]

    @staticmethod
    def _on_set_parameters(parameters) -> SetParametersResult:
        try:
            for parameter in parameters:
                if parameter.name in CHOICES:
                    checked_choice(parameter.name, parameter.value, CHOICES[parameter.name])
                check_method_option(parameter.name, parameter.value)
        except InputError as error:
            return SetParametersResult(successful=False, reason=node_message(error))
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
            response.success, response.message = False, node_message(error)
            return response
        self.first_data = wakeful_future(self)
        self.intake.start()
        wait_s = self.get_parameter('data_wait').value
        try:
            receiving = await with_timeout(self, self.first_data, wait_s, default=False)
        finally:
            self.first_data = None
        if not receiving:  # a wrong namespace, topic or domain: say so instead of recording nothing
            self.close_recording()
            response.success = False
            response.message = (f'no {self.session.topic("joint_states")} within {wait_s:g} s (data_wait); '
                                f'recording stopped: {folder}{self._unmatched_advice()}')
            self.get_logger().warning(response.message)
            return response
        self.get_logger().info(f'recording to {folder}')
        response.success, response.message = True, str(folder)
        return response

    def _unmatched_advice(self) -> str:
        """Why a reliable intake gets nothing from publishers that are there: they publish best effort."""
        if self.intake.settings.reliability != 'reliable':
            return ''
        publishers = self.get_publishers_info_by_topic(self.session.topic('joint_states'))
        if publishers and all(p.qos_profile.reliability == ReliabilityPolicy.BEST_EFFORT for p in publishers):
            return ('; joint_states is published best effort, which a reliable subscription does not receive: '
                    'set intake_reliability to best_effort')
        return ''

    def _on_stop(self, request, response):
        folder = self.close_recording()
        if folder is None:
            response.success, response.message = False, 'not recording'
            return response
        lost = self.intake.summary().get('joint_states', {}).get('lost', 0)
        response.success = True
        response.message = f'{self.session.last_messages} messages in {folder}; {lost} samples lost'
        self.get_logger().info(f'recording stopped: {response.message}')
        return response

    def _settings(self) -> IdentifierSettings:
        """The identification parameters, as they are now (the flagged method options as ``method_option`` entries)."""
        settings = from_values(IdentifierSettings, lambda name: value_or(self, name))
        return dataclasses.replace(settings, method_option=(*settings.method_option, *method_option_entries(self)))

    async def _on_identify(self, request, response):
        settings, log = self._settings(), self.get_logger().info
        return (await answer_with_job(self, response, self.session.begin, lambda recording: self.session.identify(
            recording, settings, progress=log), 'identification', self.result_publisher))[0]

    async def _on_identify_payload(self, request, response):
        value = lambda name: self.get_parameter(name).value  # noqa: E731
        settings, service = from_values(PayloadSettings, value), from_values(PayloadServiceSettings, value)
        response, outcome = await answer_with_job(self, response, self.session.begin, lambda recording: (
            identify_recorded_payload(self.session, recording, settings, service.result_file)),
            'payload identification', self.payload_publisher)
        if outcome is not None and service.set_ur_payload:
            called = await call_ur_set_payload(self, service.ur_payload_service, outcome.ur_set_payload['request'],
                                               transition_time_s=service.ur_payload_transition_time)
            response.message = f'{response.message}; {called}'
            self.get_logger().info(called)
        return response


def main(args=None) -> None:
    """Run identifier_node until shut down; an open recording is closed on the way out."""
    run_node(IdentifierNode, 'identifier_node', args)


if __name__ == '__main__':
    main()
