"""A held-out verdict: how an identification result predicts recordings it was not identified on, judged
against fit thresholds, with the sha256 of every input, as a JSON document a CI job can keep and read.

Document (``dynid_verdict: 1``; every number a number or null)::

    {"dynid_verdict": 1,
     "passed": true,                     # every threshold met; false: one failed; null: no threshold set
     "thresholds": {"nrmse_fit_percent": {"default": 90.0, "joints": {"wrist_3_joint": 70.0}}},
     "failures": ["held_out: wrist_3_joint NRMSE fit 65.20 % < 70 %"],
     "result": {"path": ..., "bytes": ..., "sha256": ...},
     "robot": {"spec": "ur5e", "files": [...]},            # files: a robot given as a file
     "drives": {"path": ..., "sha256": ...} | null,
     "recordings": [
       {"name": "held_out", "files": [{"path", "bytes", "sha256"}, ...],   # every file of the bag
        "payload_kg": 0.0, "warnings": [...],
        "predictions": {                 # one block per model that predicted the recording
          "result": {"judged": true, "relative_residual": .., "rmse": .., "rows": .., "scored_joints": ..,
                     "joints": {NAME: {"rmse": N·m, "nrmse_fit_percent": %, "rows": ..,
                                       "required_fit_percent": % | null, "passed": true | false | null}}}}}],
     "software": {"dynid": ...}, "created": ...}

The NRMSE fit is 100·(1 − ‖y − ŷ‖/‖y − ȳ‖) per joint over the recording's equations (the same metrics as
``dynid validate`` prints). A joint passes when its fit is at least its threshold; a joint with a threshold
that could not be scored (no rows, a constant torque) fails. Only blocks marked ``judged`` are held to the
thresholds: a second prediction of the same recording (another model, for comparison) adds its own block with
:meth:`RecordingVerdict.add_prediction` and ``judged=False``.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from dynid import __version__
from dynid.errors import InputError
from dynid.files import input_files, write_text
from dynid.identify.result.result import plain_data
from dynid.text import format_number

VERDICT_VERSION = 1


@dataclass(frozen=True)
class FitThresholds:
    """Least NRMSE fit [%] each joint must reach: ``default`` for every joint (None: none), ``joints`` per joint.

    >>> FitThresholds.parse(['90', 'wrist_3_joint=70'], ['elbow_joint', 'wrist_3_joint']).required('wrist_3_joint')
    70.0
    """

    default: float | None = None
    joints: Mapping[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for name, value in ({'default': self.default} | dict(self.joints)).items():
            if value is not None and not (math.isfinite(value) and value <= 100.0):
                raise InputError(f'fit threshold of {name} must be a finite percentage <= 100, got {value!r}')

    @classmethod
    def parse(cls, items: Sequence[str], joint_names: Sequence[str]) -> FitThresholds:
        """Thresholds from strings ``PERCENT`` (every joint) or ``JOINT=PERCENT`` (one joint; several with commas),
        the joints checked against ``joint_names``."""
        default, joints = None, {}
        for item in items:
            for part in (p.strip() for p in str(item).split(',') if p.strip()):
                name, _, text = part.rpartition('=')
                try:
                    value = float(text)
                except ValueError:
                    raise InputError(f'fit threshold {part!r}: expected PERCENT or JOINT=PERCENT') from None
                if not name:
                    default = value
                elif name not in joint_names:
                    raise InputError(f'fit threshold {part!r}: no joint {name!r} (the robot has '
                                     f'{", ".join(joint_names)})')
                else:
                    joints[name] = value
        return cls(default, joints)

    def required(self, joint: str) -> float | None:
        """The threshold of ``joint`` [%], or None."""
        return self.joints.get(joint, self.default)

    @property
    def any(self) -> bool:
        return self.default is not None or bool(self.joints)

    def to_dict(self) -> dict:
        return {'nrmse_fit_percent': {'default': self.default, 'joints': dict(self.joints)}}


def judged_joints(metrics: Mapping, thresholds: FitThresholds) -> dict:
    """Per joint of ``metrics`` (as :func:`dynid.identify.result.metrics.equation_metrics` gives them) its RMSE, fit and
    rows with ``required_fit_percent`` and ``passed`` (None where no threshold applies)."""
    joints = {}
    for name, entry in metrics['joints'].items():
        required = None if entry.get('left_out') else thresholds.required(name)  # not identified: not judged
        fit = entry.get('nrmse_fit_percent')
        passed = None if required is None else (fit is not None and fit >= required)
        joints[name] = {'rmse': entry.get('rmse'), 'nrmse_fit_percent': fit, 'rows': entry.get('rows'),
                        'required_fit_percent': required, 'passed': passed,
                        **({'left_out': True} if entry.get('left_out') else {})}
    return joints


@dataclass
class RecordingVerdict:
    """One recording of a verdict: its files and the predictions of it (module docstring)."""

    name: str
    files: list[dict]
    payload_kg: float = 0.0
    predictions: dict[str, dict] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

    @classmethod
    def of(cls, bag, payload_kg: float = 0.0) -> RecordingVerdict:
        """The recording at ``bag`` (a rosbag2 folder or a file), its files digested."""
        return cls(str(bag), input_files(bag), float(payload_kg))

    def add_prediction(self, label: str, metrics: Mapping, thresholds: FitThresholds, judged: bool = True) -> None:
        """A block of per-joint figures under ``label`` (metrics as ``dynid validate`` computes them); a block
        ``judged`` is held to ``thresholds``, another only shows them."""
        if label in self.predictions:
            raise ValueError(f'prediction {label!r} of {self.name} given twice')
        self.predictions[label] = {
            'judged': judged, **{k: metrics.get(k) for k in ('relative_residual', 'rmse', 'rows', 'scored_joints')},
            'joints': judged_joints(metrics, thresholds if judged else FitThresholds())}
        self.warnings.extend(w for w in metrics.get('warnings', []) if w not in self.warnings)

    def failures(self) -> list[str]:
        """One line per joint of a judged block that failed its threshold."""
        lines = []
        for label, block in self.predictions.items():
            if not block['judged']:
                continue
            for joint, entry in block['joints'].items():
                if entry['passed'] is False:
                    fit = format_number(entry['nrmse_fit_percent'], '.2f')
                    lines.append(f'{self.name}: {joint} NRMSE fit {fit} % < {entry["required_fit_percent"]:g} %'
                                 + ('' if label == 'result' else f' ({label})'))
        return lines

    def to_dict(self) -> dict:
        return {'name': self.name, 'files': self.files, 'payload_kg': self.payload_kg,
                'warnings': list(self.warnings), 'predictions': self.predictions}


@dataclass
class Verdict:
    """The verdict of a result on held-out recordings (module docstring)."""

    thresholds: FitThresholds
    result: dict
    robot: dict
    drives: dict | None = None
    recordings: list[RecordingVerdict] = field(default_factory=list)

    @classmethod
    def start(cls, result_path, robot_spec: str, thresholds: FitThresholds, drives_path=None) -> Verdict:
        """A verdict of the result file ``result_path`` on robot ``robot_spec`` (its files digested where it is
        one), with ``thresholds`` and the drives file ``drives_path`` (or None); recordings come with
        :meth:`RecordingVerdict.of`."""
        if robot_spec.lstrip().startswith('<'):  # URDF text (robot_description)
            robot = {'spec': 'robot_description', 'sha256': hashlib.sha256(robot_spec.encode()).hexdigest()}
        else:
            robot = {'spec': robot_spec, **({'files': input_files(robot_spec)} if Path(robot_spec).is_file() else {})}
        return cls(thresholds, input_files(result_path)[0], robot,
                   None if drives_path is None else input_files(drives_path)[0])

    def failures(self) -> list[str]:
        return [line for recording in self.recordings for line in recording.failures()]

    @property
    def passed(self) -> bool | None:
        """True when every threshold is met, False when one fails, None without thresholds."""
        return None if not self.thresholds.any else not self.failures()

    def summary_line(self) -> str:
        """One line for people: passed or failed, over how many judged joints."""
        judged = [entry for r in self.recordings for block in r.predictions.values() if block['judged']
                  for entry in block['joints'].values() if entry['passed'] is not None]
        if self.passed is None:
            return 'verdict: no fit threshold set (nothing to pass or fail)'
        failed = sum(entry['passed'] is False for entry in judged)
        where = f'{len(judged)} joint fits on {len(self.recordings)} recording(s)'
        return f'verdict: {"passed" if not failed else "FAILED"}: {len(judged) - failed} of {where} meet their ' \
               'threshold'

    def to_dict(self) -> dict:
        return plain_data({
            'dynid_verdict': VERDICT_VERSION, 'passed': self.passed, 'thresholds': self.thresholds.to_dict(),
            'failures': self.failures(), 'result': self.result, 'robot': self.robot, 'drives': self.drives,
            'recordings': [r.to_dict() for r in self.recordings], 'software': {'dynid': __version__},
            'created': datetime.datetime.now(datetime.timezone.utc).isoformat(timespec='seconds')})

    def write(self, path) -> Path:
        """Write the JSON document to ``path``; returns it."""
        path = Path(path)
        try:
            write_text(path, json.dumps(self.to_dict(), indent=2, allow_nan=False) + '\n')
        except OSError as error:
            raise InputError(f'cannot write {path}: {error.strerror or error}') from None
        return path
