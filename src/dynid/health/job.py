"""The health job: read a record, judge its robots, and write the page or the JSON (``dynid health``).

    >>> healths, events = judge_record('health.sqlite3')                                  # doctest: +SKIP
    >>> write_report('health.sqlite3', 'health_report')                                  # doctest: +SKIP
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

from dynid.errors import InputError
from dynid.health.assessment import RobotHealth, assess
from dynid.health.page import write_page
from dynid.health.record import HealthRecord
from dynid.health.settings import HealthSettings


def judge_record(path, robots: Sequence[str] | None = None, settings: HealthSettings | None = None,
                 now_utc: float | None = None) -> tuple[list[RobotHealth], dict]:
    """(judgements, {robot: events}) of ``robots`` (default every robot) in the record at ``path``, opened
    read-only. InputError for a missing, damaged or newer record, or a robot it does not hold."""
    settings = settings or HealthSettings()
    with HealthRecord(path, readonly=True) as record:
        names = list(robots) if robots else record.robots()
        if not names:
            raise InputError(f'{record.path} holds no sessions yet')
        histories = [record.history(name) for name in names]
    return ([assess(h, settings, now_utc) for h in histories], {h.robot: h.events for h in histories})


def write_report(path, folder, robots: Sequence[str] | None = None, settings: HealthSettings | None = None,
                 now_utc: float | None = None) -> tuple[Path, list[RobotHealth]]:
    """Judge the record at ``path`` and write ``folder/index.html``; (the page, the judgements)."""
    healths, events = judge_record(path, robots, settings, now_utc)
    return write_page(folder, healths, events, source=f'record {HealthRecord.display(path)}'), healths


def record_replay(db, history, dataset, recording, result, result_file, model: str, robot: str = '',
                  source: str = 'replay', robot_model=None, robot_file: str = '') -> tuple[int, Path, str]:
    """Append a replay's session to the record at ``db`` ('' or None: the default record); (session id, the
    record's path, a note about the session's date or '').

    The session is dated by the recording's first stamp (:func:`dynid.health.session.recording_start_utc`)
    and named ``robot`` (default ``model``) in the record, with its conditions: the recording's payload, RMS
    joint torque and effort meaning, ``robot_model``'s gravity (mounting), ``robot_file`` (a built-in's name or
    a file, hashed).
    """
    from dynid.health.session import load_rms, mounting_text, recording_start_utc, session_from_history
    from dynid.health.stored import store_judgement

    started, note = recording_start_utc(dataset, recording)
    session = session_from_history(
        history, robot=robot or model, model=model, started_utc=started, temperature_c=dataset.temperature,
        result=result, result_file=result_file, source=source, input=str(recording), load_rms_nm=load_rms(dataset.tau),
        payload_kg=dataset.payload.mass if dataset.payload is not None else math.nan,
        mounting=mounting_text(robot_model.gravity) if robot_model is not None else '',
        effort_meaning=str(dataset.source.get('joint_states_effort', '')),
        robot_file=robot_file)
    with HealthRecord(db or None) as record:
        session_id = record.append(session)
        store_judgement(record, session.robot)  # for the fleet's page (dynid.health.stored)
        return session_id, record.path, note
