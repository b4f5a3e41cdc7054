"""identifier_node's ``~/identify_payload``, free of ROS: the payload of the session's last recording.

The arm's result is ``result_file`` when given, else the result of the session's last identification
(:attr:`~dynid.identify.job.session.IdentificationSession.last_result`): record the arm's excitation (and,
best, the payload motion without the payload) and identify, then record the payload motion with the
payload and call this. The payload file (:mod:`dynid.payload.document`) is written as ``payload.yaml``
into the recording; the outcome joins the session's one line for diagnostics.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from dynid.errors import InputError
from dynid.files import file_sha256, write_text
from dynid.identify import IdentificationResult, IdentificationSession
from dynid.identify.settings import CHOICES
from dynid.payload.document import payload_document, payload_yaml
from dynid.payload.estimate import INERTIA_CHOICES, PayloadEstimate, PayloadSettings, identify_payload
from dynid.settings import setting

#: identifier_node's parameters that take one of a list of values: the identification's and the payload's
NODE_CHOICES = {**CHOICES, 'payload_inertia': INERTIA_CHOICES}


@dataclass(frozen=True)
class PayloadServiceSettings:
    """What ``~/identify_payload`` starts from and does after (identifier_node's parameters)."""

    result_file: str = setting('', 'the arm\'s result for ~/identify_payload; empty: the last ~/identify\'s',
                               parameter='payload_result_file')
    set_ur_payload: bool = setting(False, '~/identify_payload also calls UR\'s set_payload (needs ur_msgs)')
    ur_payload_service: str = setting('/io_and_status_controller/set_payload', 'UR driver\'s set_payload service')
    ur_payload_transition_time: float = setting(0.0, 'time UR takes to move to the new payload (set_payload\'s '
                                                'transition_time, where its ur_msgs has it)', unit='s', low=0.0,
                                                high=60.0)


@dataclass(frozen=True)
class IdentifiedPayload:
    """A payload identified from a recording: the estimate, the payload file's YAML, where it was written, the
    one line that says so, and UR's ``set_payload`` (:func:`dynid.payload.robot_calls.ur_set_payload`)."""

    estimate: PayloadEstimate
    document: str
    path: Path
    message: str
    ur_set_payload: dict


def identify_recorded_payload(session: IdentificationSession, recording: Path, settings: PayloadSettings,
                              result_file: str = '') -> IdentifiedPayload:
    """The payload during ``recording`` (a folder :meth:`IdentificationSession.begin` gave; it marks the session
    busy until this returns), given ``result_file`` or the session's last result (module docstring).

    Raises InputError for the refusals of :func:`dynid.payload.estimate.identify_payload` and when there is no
    result to start from; every outcome is kept in the session's ``outcome``.
    """
    identified = session.run_job(lambda: _identify(session, Path(recording), settings, result_file),
                                 'payload refused', 'payload identification crashed')
    session.outcome = ('ok', identified.message)
    return identified


def _identify(session: IdentificationSession, recording: Path, settings: PayloadSettings,
              result_file: str) -> IdentifiedPayload:
    source = Path(result_file) if result_file else session.last_result
    if source is None:
        raise InputError('no result of the arm: identify it first (~/identify, from a recording without the payload) '
                         'or set payload_result_file')
    if source.parent == recording:
        raise InputError(f'the last result was identified from this very recording ({recording}): record the '
                         f'payload motion with the payload after identifying the arm')
    result = IdentificationResult.load(source)
    estimate = identify_payload(result, session.robot, session.read(recording), settings, name=str(recording))
    document = payload_document(estimate, session.robot, settings, {
        'recording': str(recording), 'result': str(source), 'result_sha256': file_sha256(source)})
    path = recording / 'payload.yaml'
    text = payload_yaml(document)
    write_text(path, text)
    inertia = 'inertia identified' if estimate.inertia_identified else 'inertia not identified'
    message = (f'payload {estimate.mass:.4g} ± {estimate.mass_std:.2g} kg, centre of mass '
               f'{[round(float(c), 4) for c in estimate.com]} m ({estimate.flange}), {inertia}; wrote {path}')
    return IdentifiedPayload(estimate, text, path, message, document['robot_settings']['ur_set_payload'])
