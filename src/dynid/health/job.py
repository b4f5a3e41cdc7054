"""The health job: read a record, judge its robots, and write the page or the JSON (``dynid health``).

:func:`judge_robots` reads each robot's stored judgement where it is current (:mod:`dynid.health.stored`) and
judges the others from their sessions; a robot whose stored data cannot be judged (a start time or a value out of
range, written by an older dynid) is named with the reason instead, and every other robot is judged as before.

    >>> healths, events = judge_record('health.sqlite3')                                  # doctest: +SKIP
    >>> write_report('health.sqlite3', 'health_report')                                  # doctest: +SKIP
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from dynid.errors import InputError
from dynid.health.assessment import RobotHealth, assess
from dynid.health.page import robot_section, write_page
from dynid.health.record import HealthRecord, RobotHistory
from dynid.health.settings import HealthSettings
from dynid.health.stored import basis_of, encode, read_judgements, store_judgement


@dataclass
class Judged:
    """The robots of a record, judged: ``healths`` by name (in the order asked, or by name), their ``events``, the
    page ``sections`` of the stored judgements read, the robots ``judged`` here (not read), the robots that could
    not be judged, ``unjudged`` {robot: why}, and the record it came from (``source``, without secrets)."""

    source: str
    healths: dict[str, RobotHealth]
    events: dict
    sections: dict[str, str] = field(default_factory=dict)
    judged: list[str] = field(default_factory=list)
    unjudged: dict[str, str] = field(default_factory=dict)


def judged_or_why(history: RobotHistory, settings: HealthSettings, now_utc: float | None) -> RobotHealth | str:
    """``history`` judged (:func:`assess`), or why it cannot be: the problem of its stored data, or what judging it
    found out of range. A process pool's task: it never raises on a robot's data."""
    if history.problem:
        return history.problem
    try:
        return assess(history, settings, now_utc)
    except (ArithmeticError, ValueError) as error:  # data the checks let through: named, never the fleet's end
        return f'{type(error).__name__}: {error}'


def judge_robots(db, settings: HealthSettings | None = None, now_utc: float | None = None, robots=None,
                 workers: int | None = None, store: bool = False, use_stored: bool = True) -> Judged:
    """Read every robot (or ``robots``) of the record ``db`` and judge them (module docstring). ``now_utc``: the time
    judged at [s since 1970 UTC]; default each robot's last session, and then a robot's stored judgement is read
    where it is current: only the others are judged here (``use_stored`` False: every robot is). ``store``: open the
    record for writing and store the judgements made here. ``workers``: processes judging the robots side by side
    (default: the CPUs, for 16 robots or more). InputError for a missing, damaged or newer record, or one without
    sessions."""
    settings = settings or HealthSettings()
    stored = {}
    with HealthRecord(db, readonly=not store, create=False) as record:
        if now_utc is None and use_stored:
            stored, stale, events = read_judgements(record, settings, robots)
            histories = record.histories(stale) if stale else []
        else:
            histories = record.histories(robots)
            events = {h.robot: h.events for h in histories}
        source = f'record {record.path}'
        if not histories and not stored:
            raise InputError(f'{record.path} holds no sessions yet')
        if workers is None:
            workers = min(os.cpu_count() or 1, len(histories) // 8) if len(histories) >= 16 else 1
        if workers > 1:
            from concurrent.futures import ProcessPoolExecutor

            with ProcessPoolExecutor(workers) as pool:  # each robot's judgement is independent of the others'
                outcomes = list(pool.map(judged_or_why, histories, [settings] * len(histories),
                                         [now_utc] * len(histories), chunksize=max(1, len(histories) // (4 * workers))))
        else:
            outcomes = [judged_or_why(h, settings, now_utc) for h in histories]
        judged = {h.robot: (h, o) for h, o in zip(histories, outcomes, strict=True) if isinstance(o, RobotHealth)}
        places = record.standings(robots)  # each robot's place in its fleet, where one was stored
        if store and now_utc is None:
            for history, health in judged.values():
                section = robot_section(health, history.events)
                record.store_judgement(history.robot, basis_of(history, settings), encode(health, section))
                stored[history.robot] = health, section
    healths = {name: health for name, (_, health) in judged.items()} | {
        robot: health for robot, (health, _) in stored.items()}
    unjudged = {h.robot: o for h, o in zip(histories, outcomes, strict=True) if isinstance(o, str)}
    names = [name for name in (sorted(healths) if robots is None else list(robots)) if name in healths]
    for name in names:
        healths[name].fleet = places.get(name)
    return Judged(source, {name: healths[name] for name in names}, events,
                  sections={robot: section for robot, (_, section) in stored.items()}, judged=list(judged),
                  unjudged=unjudged)


def judge_record(path, robots: Sequence[str] | None = None, settings: HealthSettings | None = None,
                 now_utc: float | None = None) -> tuple[list[RobotHealth], dict]:
    """(judgements, {robot: events}) of ``robots`` (default every robot) in the record at ``path``, opened
    read-only (stored judgements read where current: :func:`judge_robots`). InputError for a missing, damaged or
    newer record, a robot it does not hold, or one whose stored data cannot be judged (naming the session and
    field)."""
    found = judge_robots(path, settings, now_utc, list(robots) if robots else None)
    if found.unjudged:
        robot, why = next(iter(found.unjudged.items()))
        raise InputError(f'{HealthRecord.display(path)}: robot {robot!r} cannot be judged: {why}')
    return list(found.healths.values()), found.events


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
