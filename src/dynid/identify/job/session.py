"""Record the state topics, then identify from the last recording (identifier_node's core), free of ROS.

:class:`IdentificationSession` holds one robot, at most one open recording and the last one closed:

- :meth:`~IdentificationSession.start` opens ``recording_<date>_<time>`` under an output directory
  (:class:`~dynid.io.recorder.SegmentedRecorder`: rosbag2 segments, each readable once closed);
  :meth:`~IdentificationSession.write` appends one take of the intake (per topic: stamps [ns] and
  canonical CDR bytes, :mod:`dynid.io.cdr`) in stamp order; :meth:`~IdentificationSession.close`
  closes it, and it becomes the last recording.
- :meth:`~IdentificationSession.begin` says why an identification cannot run now (recording open,
  nothing recorded, one already running) or takes the last recording for one;
  :meth:`~IdentificationSession.identify` identifies from it with :class:`IdentifierSettings` through the
  workflow ``dynid identify`` runs (:func:`dynid.identify.job.workflow.identify_with_settings`): the torque's signs
  applied (``torque_sign``), the recording diagnosed against the robot file (:mod:`dynid.diagnosis`: effort
  meaning, sign, scale; the result's ``diagnosis`` section, its warnings in the result), left-out joints
  (``exclude_joints``), refused unless ``force`` where the data cannot identify the model; it writes
  ``result.yaml`` (and the report) into the recording and keeps a one-line outcome for diagnostics, a
  warning where the check found something.

:meth:`~IdentificationSession.write` runs on the intake's thread, the identification on a worker
thread, the rest on the caller's: the recorder is guarded by ``lock``.

A recording that has received nothing for :data:`SILENT_S` is a warning of :meth:`~IdentificationSession.statuses`
(the node adds how many joint_states publishers it sees): a stopped publisher, or a node that no longer hears one
(a process stopped for more than about a second can lose its shared-memory port: docs/contract.md).
"""

from __future__ import annotations

import datetime
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import numpy as np
import yaml

from dynid.errors import InputError, checked_choice
from dynid.identify.equations.request import RecordingInput
from dynid.identify.job.workflow import identify_with_settings
from dynid.identify.result.result import IdentificationResult
from dynid.identify.settings import CHOICES, IdentifierSettings
from dynid.io import TORQUE_MEANINGS
from dynid.io.cdr import JOINT_STATE
from dynid.io.dataset import parse_torque_signs
from dynid.io.recorder import SegmentedRecorder, read_recording

#: No state message for this long [s] while recording: a warning (module docstring).
SILENT_S = 3.0

T = TypeVar('T')

@dataclass(frozen=True)
class Identified:
    """An identification kept: the result, where it was written, the one line that says so (with the sign and
    unit check's ``warnings``, which the result holds too)."""

    result: IdentificationResult
    path: Path
    message: str
    warnings: tuple[str, ...] = ()

    @property
    def document(self) -> str:
        """The result file's YAML text (what ``result.yaml`` holds)."""
        return yaml.safe_dump(self.result.to_dict(), sort_keys=False, allow_unicode=True)


class IdentificationSession:
    """Recordings and identifications of one robot (module docstring).

    Args:
        robot: the robot model; recordings are read in its joint order.
        robot_spec: what :func:`dynid.model.load_robot` made ``robot`` of (a built-in name, a file path or URDF
            text), recorded in each result (:func:`dynid.identify.result.robot_source.record_robot`).
        namespace: the node's namespace ('' or '/arm'); topics are recorded under it.
        joint_states_effort: what joint_states' effort holds by the intake's setting ('torque' or 'current':
            the intake records it as joint_currents), said to the sign and unit check.
        spelling: how the front end takes the settings an identification's advice names (templates, ``{}`` for
            the value: :class:`dynid.identify.job.workflow.Identification`); None: the fields and the values.
        message: how the front end says a refusal (an InputError naming fields) in :attr:`outcome`; default
            ``str``, the fields' bare names.

    Attributes:
        recorder: the open recording, or None. last_recording, last_messages: the folder of the last
        one closed and the messages it holds. last_result: the result file of the last identification.
        identifying: whether an identification runs. outcome: (level 'ok', 'warn' or 'error', text)
        of the last identification; ('ok', 'no identification yet') before the first.
    """

    def __init__(self, robot, robot_spec: str, namespace: str = '', joint_states_effort: str = 'torque',
                 spelling: Mapping[str, str] | None = None, message: Callable[[InputError], str] = str,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.robot, self.robot_spec = robot, robot_spec
        self.clock = clock  # [s], for the silence of an open recording
        self.heard_s = 0.0  # the clock when the open recording started or last took a message
        self.spelling, self.message = spelling, message
        self.namespace = namespace.rstrip('/')
        self.joint_states_effort = joint_states_effort
        self.last_result: Path | None = None
        self.lock = threading.Lock()
        self.recorder: SegmentedRecorder | None = None
        self.last_recording: Path | None = None
        self.last_messages = 0
        self.identifying = False
        self.outcome = ('ok', 'no identification yet')

    def topic(self, name: str) -> str:
        """The absolute name of the relative topic ``name`` in the session's namespace."""
        return f'{self.namespace}/{name}'

    # ------------------------------------------------------------------------------ recording
    def start(self, output_directory: str | Path, segment_s: float) -> Path:
        """Open a new recording under ``output_directory`` (segments of ``segment_s`` [s]); its folder.

        Raises InputError when one is open already or the folder cannot be made.
        """
        with self.lock:
            if self.recorder is not None:
                raise InputError('already recording')
            stamp = datetime.datetime.now().strftime('%Y%m%d_%H%M%S_%f')
            folder = Path(output_directory) / f'recording_{stamp}'
            try:
                self.recorder = SegmentedRecorder(folder, segment_s)
                self.heard_s = self.clock()
            except InputError as error:
                raise InputError(f'cannot record: {error.template}', fields=error.fields) from None
            except OSError as error:
                raise InputError(f'cannot record in {{output_directory}} {str(folder)!r}: {error.strerror or error}',
                                 fields=('output_directory',)) from None
            return folder

    def write(self, taken: Mapping[str, tuple[np.ndarray, list]]) -> bool:
        """Append one take {topic: (stamps [ns], CDR bytes)} in stamp order (stable across topics);
        whether it held joint_states and a recording took them."""
        with self.lock:
            if self.recorder is None or not taken:
                return False
            self.heard_s = self.clock()
            topics = [self.topic(t) for t in taken for _ in taken[t][1]]
            messages = [m for t in taken for m in taken[t][1]]
            stamps = np.concatenate([taken[t][0] for t in taken])
            for k in np.argsort(stamps, kind='stable'):
                self.recorder.write(topics[k], JOINT_STATE, int(stamps[k]), messages[k])
            return 'joint_states' in taken

    def close(self) -> Path | None:
        """Close the open recording (its last segment becomes readable); its folder, or None."""
        with self.lock:
            if self.recorder is None:
                return None
            self.last_recording, self.last_messages = self.recorder.close(), self.recorder.messages
            self.recorder = None
            return self.last_recording

    def statuses(self, publishers: int | None = None) -> list[tuple[str, str, str, dict]]:
        """What identifier_node reports on ``/diagnostics`` besides its intake: [(what, level, message, values)]
        for the recording and the last identification. ``publishers``: how many joint_states publishers the node
        sees (None: not known), said where the recording has heard nothing for :data:`SILENT_S`."""
        recorder = self.recorder  # the node's timer asks while a service may close it
        if recorder is not None:
            silent_s = self.clock() - self.heard_s
            values = {'messages': recorder.messages, 'silent_s': round(silent_s, 1)}
            recording = ('recording', 'ok', f'recording to {recorder.folder}', values)
            if silent_s > SILENT_S:
                cause = _silence_cause(publishers, self.topic('joint_states'), recorder.messages)
                recording = ('recording', 'warn', f'recording to {recorder.folder}: no state message for '
                             f'{silent_s:.0f} s{cause}', values)
        else:
            recording = ('recording', 'ok', 'not recording', {'last_recording': self.last_recording or ''})
        level, text = self.outcome
        return [recording, ('identification', level, 'identifying' if self.identifying else text, {})]

    def read(self, recording: Path):
        """The :class:`~dynid.io.dataset.Dataset` of a recording, in the robot's joint order (a current in
        joint_states' effort was recorded as joint_currents: :class:`dynid.ros.intake.StateIntake`)."""
        dataset = read_recording(recording, self.robot.joint_names, self.namespace)
        if self.joint_states_effort == 'current':  # the intake recorded joint_states' effort as joint_currents
            dataset.source['joint_states_effort'] = 'current'
        elif self.joint_states_effort in ('current_as_torque', 'gravity_compensated_torque'):
            from dynid.io.gravity_restore import (
                drive_torque_as_current,
                payload_from_record,
                payload_set_check,
                restore_gravity,
            )

            dataset.source['joint_states_effort'] = self.joint_states_effort
            if self.joint_states_effort == 'gravity_compensated_torque':  # UR's: the gravity added back
                payload_set = payload_from_record(dataset.source.get('robot_payload'))
                dataset = restore_gravity(dataset, self.robot, payload_set)
                dataset.source['payload_set_check'] = payload_set_check(dataset, self.robot, payload_set)
            dataset = drive_torque_as_current(dataset, self.robot)  # a drive torque K·i: read as the current
        return dataset

    # ------------------------------------------------------------------------------ identification
    def begin(self) -> Path:
        """Take the last recording for an identification (marks one running); InputError saying why
        none can run now."""
        if self.recorder is not None:
            raise InputError('stop the recording first')
        if self.last_recording is None:
            raise InputError('nothing recorded yet')
        if self.identifying:
            raise InputError('an identification is already running')
        self.identifying = True
        return self.last_recording

    def identify(self, recording: Path, settings: IdentifierSettings,
                 progress: Callable[[str], None] | None = None) -> Identified:
        """Identify from ``recording`` (a folder :meth:`begin` gave) and write the result into it.

        Raises InputError for bad data and for data that cannot identify the model (unless
        ``settings.force``: then kept with a warning first in ``result.warnings``, as ``dynid identify
        --force`` does). Every outcome is kept in :attr:`outcome`; :attr:`identifying` ends.
        """
        identified = self.run_job(lambda: self._identify(Path(recording), settings, progress), 'refused', 'crashed')
        self.outcome = ('warn' if identified.warnings else 'ok', identified.message)
        return identified

    def run_job(self, job: Callable[[], T], refused: str, crashed: str) -> T:
        """Run ``job``, the identification :meth:`begin` marked running, and end it (:attr:`identifying`
        False) whatever happens; a refusal (InputError) is kept in :attr:`outcome` as ('warn', '<refused>:
        reason'), any other error as ('error', '<crashed>: error'), and raised again. The caller keeps the
        outcome of a success."""
        try:
            return job()
        except InputError as error:
            self.outcome = ('warn', f'{refused}: {self.message(error)}')
            raise
        except Exception as error:
            self.outcome = ('error', f'{crashed}: {error!r}')
            raise
        finally:
            self.identifying = False

    def _identify(self, recording: Path, settings: IdentifierSettings,
                  progress: Callable[[str], None] | None) -> Identified:
        for name, allowed in CHOICES.items():
            checked_choice(name, getattr(settings, name), allowed)
        dataset = self.read(recording)
        dataset = dataset.with_torque_signs(parse_torque_signs(settings.torque_sign, self.robot.joint_names))
        said = dataset.source.get('joint_states_effort', 'torque') if self.joint_states_effort in TORQUE_MEANINGS \
            else self.joint_states_effort  # a drive torque is read as the current it was made of
        dataset.source['effort_said'] = {'said': said, 'said_by': 'joint_states_effort' if said else ''}
        path = recording / 'result.yaml'
        result, _ = identify_with_settings(
            self.robot, [RecordingInput(dataset, name=str(recording))], settings, path, self.robot_spec,
            report=recording / 'report' if settings.report else None, spelling=self.spelling, progress=progress)
        self.last_result = path
        checked = list((result.diagnosis_section or {}).get('warnings') or [])
        train = result.metrics['train']
        message = (f'{result.method.upper()}: {len(result.parameter_names)} parameters, relative residual '
                   f'{train["relative_residual"]:.4g}; wrote {path}')
        message += ''.join(f'; warning: {line}' for line in checked)
        return Identified(result, path, message, tuple(checked))


def _silence_cause(publishers: int | None, topic: str, messages: int) -> str:
    """What a recording's silence says, given how many ``topic`` publishers the node sees (None: not known) and how
    many messages it took before. A recording that never heard one is told nothing of a lost port: a best-effort
    publisher a reliable intake cannot receive looks the same, and ``~/start_recording`` names it after data_wait."""
    if publishers is None:
        return ''
    if publishers == 0:
        return f', and no {topic} publisher'
    there = f' while {publishers} {topic} publisher{"s are" if publishers > 1 else " is"} there'
    if messages == 0:
        return there
    return (f'{there}: if it is still publishing, this process no longer hears it (a process stopped for more than '
            'about a second can lose its shared-memory port); restart this node, Ctrl-C closes the recording first')
