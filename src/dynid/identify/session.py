"""Record the state topics, then identify from the last recording (identifier_node's core), free of ROS.

:class:`IdentificationSession` holds one robot, at most one open recording and the last one closed:

- :meth:`~IdentificationSession.start` opens ``recording_<date>_<time>`` under an output directory
  (:class:`~dynid.io.recorder.SegmentedRecorder`: rosbag2 segments, each readable once closed);
  :meth:`~IdentificationSession.write` appends one take of the intake (per topic: stamps [ns] and
  canonical CDR bytes, :mod:`dynid.io.cdr`) in stamp order; :meth:`~IdentificationSession.close`
  closes it, and it becomes the last recording.
- :meth:`~IdentificationSession.begin` says why an identification cannot run now (recording open,
  nothing recorded, one already running) or takes the last recording for one;
  :meth:`~IdentificationSession.identify` identifies from it (:func:`dynid.identify.run.identify`)
  with :class:`IdentifierSettings`, applies the check of ``dynid identify``
  (:func:`dynid.identify.quality.identifiability_refusal`: refused unless ``force``), writes
  ``result.yaml`` (and the report) into the recording and keeps a one-line outcome for diagnostics.

:meth:`~IdentificationSession.write` runs on the intake's thread, the identification on a worker
thread, the rest on the caller's: the recorder is guarded by ``lock``.
"""

from __future__ import annotations

import datetime
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import yaml

from dynid.errors import InputError, checked_choice
from dynid.identify.choices import FRICTION_MODELS, METHODS
from dynid.identify.model import ModelSpec, RecordingInput
from dynid.identify.physical import PhysicalSettings
from dynid.identify.preprocess import FilterSettings
from dynid.identify.quality import identifiability_refusal
from dynid.identify.report import write_report
from dynid.identify.result import IdentificationResult
from dynid.identify.run import IdentifyOptions, identify
from dynid.io.cdr import JOINT_STATE
from dynid.io.recorder import SegmentedRecorder, read_recording

#: the settings that take one of a list of values, and those values (checked with
#: :func:`dynid.errors.checked_choice`)
CHOICES = {'method': METHODS, 'friction': FRICTION_MODELS}


@dataclass(frozen=True)
class IdentifierSettings:
    """How one identification runs: ``method`` and ``friction`` (:data:`CHOICES`), the temperature
    friction term, physically consistent parameters (``physical``), the filters (``position_cutoff_hz``,
    ``decimation_cutoff_hz`` [Hz], 0: from the sample rate; ``stiction_velocity`` [rad/s]), an HTML
    ``report`` beside the result, and ``force``: keep a result the data cannot identify."""

    method: str = 'wls'
    friction: str = 'viscous_coulomb'
    temperature: bool = False
    physical: bool = False
    position_cutoff_hz: float = 0.0
    decimation_cutoff_hz: float = 0.0
    stiction_velocity: float = 0.02
    report: bool = True
    force: bool = False


@dataclass(frozen=True)
class Identified:
    """An identification kept: the result, where it was written, and the one line that says so."""

    result: IdentificationResult
    path: Path
    message: str

    @property
    def document(self) -> str:
        """The result file's YAML text (what ``result.yaml`` holds)."""
        return yaml.safe_dump(self.result.to_dict(), sort_keys=False, allow_unicode=True)


class IdentificationSession:
    """Recordings and identifications of one robot (module docstring).

    Args:
        robot: the robot model; recordings are read in its joint order.
        robot_spec: how the robot was given, kept in the result's provenance (``robot_spec``).
        namespace: the node's namespace ('' or '/arm'); topics are recorded under it.

    Attributes:
        recorder: the open recording, or None. last_recording, last_messages: the folder of the last
        one closed and the messages it holds.
        identifying: whether an identification runs. outcome: (level 'ok', 'warn' or 'error', text)
        of the last identification; ('ok', 'no identification yet') before the first.
    """

    def __init__(self, robot, robot_spec: str, namespace: str = '') -> None:
        self.robot, self.robot_spec = robot, robot_spec
        self.namespace = namespace.rstrip('/')
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
            except (InputError, OSError) as error:
                raise InputError(f'cannot record: {error}') from None
            return folder

    def write(self, taken: Mapping[str, tuple[np.ndarray, list]]) -> bool:
        """Append one take {topic: (stamps [ns], CDR bytes)} in stamp order (stable across topics);
        whether it held joint_states and a recording took them."""
        with self.lock:
            if self.recorder is None or not taken:
                return False
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
        try:
            identified = self._identify(Path(recording), settings, progress)
        except InputError as error:
            self.outcome = ('warn', f'refused: {error}')
            raise
        except Exception as error:
            self.outcome = ('error', f'crashed: {error!r}')
            raise
        finally:
            self.identifying = False
        self.outcome = ('ok', identified.message)
        return identified

    def _identify(self, recording: Path, settings: IdentifierSettings,
                  progress: Callable[[str], None] | None) -> Identified:
        for name, allowed in CHOICES.items():
            checked_choice(name, getattr(settings, name), allowed)
        dataset = read_recording(recording, self.robot.joint_names, self.namespace)
        spec = ModelSpec(friction=settings.friction, temperature=settings.temperature)
        filters = FilterSettings(position_cutoff_hz=settings.position_cutoff_hz or None,
                                 decimation_cutoff_hz=settings.decimation_cutoff_hz or None,
                                 stiction_velocity=settings.stiction_velocity)
        options = IdentifyOptions(method=settings.method, physical=PhysicalSettings() if settings.physical else None)
        result = identify(self.robot, [RecordingInput(dataset, name=str(recording))], spec, filters, options,
                          progress=progress)
        refusal = identifiability_refusal(result)
        if refusal and not settings.force:
            raise InputError(f'{refusal} (force:=true keeps the result anyway)')
        if refusal:
            result.warnings.insert(0, f'kept with force:=true although {refusal}')
        result.provenance['robot_spec'] = self.robot_spec
        path = result.save(recording / 'result.yaml')
        if settings.report:
            write_report(recording / 'report', result, self.robot, [dataset])
        train = result.metrics['train']
        message = (f'{result.method.upper()}: {len(result.parameter_names)} parameters, relative residual '
                   f'{train["relative_residual"]:.4g}; wrote {path}')
        return Identified(result, path, message)
