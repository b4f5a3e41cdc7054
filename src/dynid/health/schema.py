"""The health record's schema, as the list of migrations that builds it, for SQLite and PostgreSQL (docs/health.md).

The migrations are written once, with the few dialect differences as placeholders filled by
:func:`migrations` (:data:`DIALECTS`): the surrogate keys (SQLite's ``INTEGER PRIMARY KEY``, PostgreSQL's
identity column), floating point (``REAL`` is 8 bytes in SQLite, 4 in PostgreSQL: ``DOUBLE PRECISION``
there), bytes (``BLOB``, ``BYTEA``), and SQLite's ``STRICT`` and ``WITHOUT ROWID`` table options. A
record's version is the number of migrations applied to it (SQLite: ``PRAGMA user_version``; PostgreSQL:
the ``dynid_health`` table); a new record gets all of them in order, an older one the missing ones, in one
transaction (schema changes are transactional in both, so a failed migration leaves the record as it was).
``PRAGMA application_id`` (SQLite) or the ``dynid_health`` table (PostgreSQL) marks a database as a dynid
health record.

Version 1: robots, sessions, one row per joint and session. Version 2: events (a reset, a new
baseline, a gearbox swap, a collision), which start a new trend segment. Version 3: the conditions of
each session (:data:`SESSION_COVARIATES`, the joints' ``load_rms_nm``) and a unique ``uid`` per session,
so that a writer that lost its connection at COMMIT can write the session again without a duplicate.
Version 4: each robot's stored judgement (``judgements``: :mod:`dynid.health.stored`), with what it was
judged from, so that a fleet's page reads it instead of judging every robot again. Version 5: each robot's
place in its fleet (``standings``): its identified parameters against the other robots' results, as the one who had
the fleet's results at hand judged them (``dynid batch``, the fleet's page). Version 6: the fleet's identification
results (``results``: :mod:`dynid.health.results`), each robot's parameters, their σ and the model they belong to, so
that a fleet prior is pooled from the record in one query, without the result files.
"""

from __future__ import annotations

import numpy as np

from dynid.errors import InputError
from dynid.schema import Number, Text, check

APPLICATION_ID = 0x64796E68  # 'dynh'

#: the latest time a record takes [s since 1970 UTC]: 2200-01-01 (a time in ms or ns read as seconds is far beyond)
TIME_LIMIT_S = 7258118400.0
#: the most samples a session's joint row counts (the column is a 32-bit INTEGER on PostgreSQL)
SAMPLES_LIMIT = 2**31 - 1

#: the columns of ``joint_sessions`` after the keys, with unit, meaning and the range a value must lie in (NULL, i.e.
#: NaN, where not estimated) (docs/health.md)
JOINT_COLUMNS = {
    'temperature_c': ('°C', 'mean joint temperature over the session', (-100.0, 500.0)),
    'stiffness': ('N·m/rad', 'α̂1 of the joint stiffness τ_E = α1·φ + α3·φ³ (k at zero deflection)', (-1e9, 1e9)),
    'stiffness_std': ('N·m/rad', 'standard deviation of the session\'s α̂1', (0.0, 1e9)),
    'friction_scale': ('-', 'α̂1 of the adaptive E-GMS friction: factor on the identified Coulomb level', (-1e6, 1e6)),
    'friction_scale_std': ('-', 'standard deviation of the session\'s friction α̂1', (0.0, 1e6)),
    'viscous_excess': ('N·m·s/rad', 'α̂2 of the adaptive friction: viscous friction above the identified one',
                       (-1e6, 1e6)),
    'viscous_excess_std': ('N·m·s/rad', 'standard deviation of the session\'s α̂2', (0.0, 1e6)),
    'coulomb_nm': ('N·m', 'identified no-load Coulomb level Fc the friction α̂1 scales', (-1e6, 1e6)),
    'viscous_nms': ('N·m·s/rad', 'identified viscous coefficient Fv', (-1e6, 1e6)),
    'stiffness_residual_rms': ('N·m', 'RMS of the stiffness RLS\'s one-step prediction error', (0.0, 1e9)),
    'friction_residual_rms': ('N·m', 'RMS of the adaptive friction\'s prediction error while adapting', (0.0, 1e9)),
    'samples': ('-', 'samples the estimators received in the session', (0, SAMPLES_LIMIT)),
    'load_rms_nm': ('N·m', 'RMS of the joint\'s load torque over the session (the load the friction depends on)',
                    (0.0, 1e9)),
}

#: a session's times, with unit, meaning and range (NULL, i.e. NaN, where not known, but for the start)
SESSION_TIMES = {
    'started_utc': ('s', 'start, since 1970-01-01 UTC', (0.0, TIME_LIMIT_S)),
    'duration_s': ('s', 'length of the session', (0.0, 1e8)),
    'operating_hours': ('h', 'the robot\'s operating hours at the start', (0.0, 1e7)),
}

#: the session's conditions (version 3), with unit and meaning (docs/health.md), and the range of the numbers
SESSION_COVARIATES = {
    'payload_kg': ('kg', 'payload mass the robot carried (NaN: not known)', (0.0, 1e4)),
    'mounting': ('-', 'how the robot is mounted: its base gravity vector in the base frame [m/s²], as x y z', None),
    'effort_meaning': ('-', 'what the driver\'s effort was: torque, current or the check\'s finding', None),
    'robot_file': ('-', 'the robot description the session was estimated with', None),
    'robot_sha256': ('-', 'sha256 of that robot description', None),
}

EVENT_KINDS = ('reset', 'set_baseline', 'gearbox_swap', 'collision', 'maintenance', 'detected_change')

_VERSION_1 = """
CREATE TABLE robots (
    robot_id {key},
    name TEXT NOT NULL UNIQUE,
    model TEXT NOT NULL,
    joint_names TEXT NOT NULL
){strict};
CREATE TABLE sessions (
    session_id {key},
    robot_id {ref} NOT NULL REFERENCES robots(robot_id),
    started_utc {real} NOT NULL,
    duration_s {real},
    operating_hours {real},
    source TEXT NOT NULL,
    input TEXT NOT NULL DEFAULT '',
    result_file TEXT NOT NULL DEFAULT '',
    result_sha256 TEXT NOT NULL DEFAULT '',
    software TEXT NOT NULL DEFAULT '',
    notes TEXT NOT NULL DEFAULT ''
){strict};
CREATE INDEX sessions_by_robot_time ON sessions(robot_id, started_utc);
CREATE TABLE joint_sessions (
    session_id {ref} NOT NULL REFERENCES sessions(session_id) ON DELETE CASCADE,
    joint TEXT NOT NULL,
    temperature_c {real},
    stiffness {real},
    stiffness_std {real},
    friction_scale {real},
    friction_scale_std {real},
    viscous_excess {real},
    viscous_excess_std {real},
    coulomb_nm {real},
    viscous_nms {real},
    stiffness_residual_rms {real},
    friction_residual_rms {real},
    samples INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (session_id, joint)
){strict}{without_rowid};
"""

_VERSION_2 = """
CREATE TABLE events (
    event_id {key},
    robot_id {ref} NOT NULL REFERENCES robots(robot_id),
    time_utc {real} NOT NULL,
    joint TEXT,
    kind TEXT NOT NULL CHECK (kind IN ({event_kinds})),
    note TEXT NOT NULL DEFAULT ''
){strict};
CREATE INDEX events_by_robot_time ON events(robot_id, time_utc);
"""

_VERSION_3 = """
ALTER TABLE sessions ADD COLUMN uid TEXT;
CREATE UNIQUE INDEX sessions_by_uid ON sessions(uid);
ALTER TABLE sessions ADD COLUMN payload_kg {real};
ALTER TABLE sessions ADD COLUMN mounting TEXT NOT NULL DEFAULT '';
ALTER TABLE sessions ADD COLUMN effort_meaning TEXT NOT NULL DEFAULT '';
ALTER TABLE sessions ADD COLUMN robot_file TEXT NOT NULL DEFAULT '';
ALTER TABLE sessions ADD COLUMN robot_sha256 TEXT NOT NULL DEFAULT '';
ALTER TABLE joint_sessions ADD COLUMN load_rms_nm {real};
"""

_VERSION_4 = """
CREATE TABLE judgements (
    robot_id {ref} PRIMARY KEY REFERENCES robots(robot_id),
    sessions INTEGER NOT NULL,
    last_session_id {ref} NOT NULL,
    events_sha256 TEXT NOT NULL,
    settings_sha256 TEXT NOT NULL,
    software TEXT NOT NULL,
    judged_utc {real} NOT NULL,
    judgement {blob} NOT NULL
){strict};
"""

_VERSION_5 = """
CREATE TABLE standings (
    robot_id {ref} PRIMARY KEY REFERENCES robots(robot_id),
    judged_utc {real} NOT NULL,
    result_sha256 TEXT NOT NULL,
    standing TEXT NOT NULL
){strict};
"""

_VERSION_6 = """
CREATE TABLE results (
    result_id {key},
    robot_id {ref} NOT NULL REFERENCES robots(robot_id),
    model TEXT NOT NULL,
    identified_utc {real} NOT NULL,
    input TEXT NOT NULL DEFAULT '',
    result_file TEXT NOT NULL DEFAULT '',
    result_sha256 TEXT NOT NULL,
    software TEXT NOT NULL DEFAULT '',
    pooling TEXT NOT NULL,
    parameter_values {blob} NOT NULL,
    parameter_std {blob} NOT NULL,
    drive_gains {blob},
    drive_gains_std {blob},
    document {blob} NOT NULL,
    UNIQUE (robot_id, result_sha256)
){strict};
CREATE INDEX results_by_model ON results(model, robot_id, identified_utc);
"""

#: the dialects' spellings of the placeholders in the migrations
DIALECTS = {
    'sqlite': {'key': 'INTEGER PRIMARY KEY', 'ref': 'INTEGER', 'real': 'REAL', 'strict': ' STRICT',
               'without_rowid': ', WITHOUT ROWID', 'blob': 'BLOB'},
    'postgresql': {'key': 'BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY', 'ref': 'BIGINT',
                   'real': 'DOUBLE PRECISION', 'strict': '', 'without_rowid': '', 'blob': 'BYTEA'},
}
_TEMPLATES = (_VERSION_1, _VERSION_2, _VERSION_3, _VERSION_4, _VERSION_5, _VERSION_6)
SCHEMA_VERSION = len(_TEMPLATES)


def migrations(dialect: str) -> tuple[str, ...]:
    """The migrations in ``dialect`` ('sqlite' or 'postgresql'): element k takes a record from version k to k + 1."""
    words = dict(DIALECTS[dialect], event_kinds=', '.join(repr(k) for k in EVENT_KINDS))
    return tuple(template.format(**words) for template in _TEMPLATES)


def statements(migration: str) -> list[str]:
    """The SQL statements of one migration (no statement holds a ';' inside it)."""
    return [part.strip() for part in migration.split(';') if part.strip()]


#: MIGRATIONS[k] takes an SQLite record from version k to k + 1.
MIGRATIONS = migrations('sqlite')


# ------------------------------------------------------------------------------------------ checking sessions
def _spec(unit: str, bounds, integer: bool = False, missing: bool = True) -> Number:
    """A value of a column in ``unit`` within ``bounds`` (NaN or None where ``missing``: not known)."""
    return Number(None if unit == '-' else unit, *bounds, integer=integer, null=missing, nan=missing)


def _time_hint(value) -> str:
    """Why a start time may be out of range: milliseconds or nanoseconds read as seconds."""
    try:
        value = float(value)
    except (TypeError, ValueError):
        return ''
    for scale, unit in ((1e3, 'milliseconds'), (1e6, 'microseconds'), (1e9, 'nanoseconds')):
        if 0.0 <= value / scale <= TIME_LIMIT_S and value > TIME_LIMIT_S:
            return f' ({unit} read as seconds?)'
    return ''


def check_session(session) -> None:
    """InputError naming the session's robot and the field when a time, count or value of ``session`` (a
    :class:`dynid.health.record.Session`) lies outside its range (:data:`SESSION_TIMES`, :data:`JOINT_COLUMNS`,
    :data:`SESSION_COVARIATES`; NaN stands for "not known" but in ``started_utc``), before it is stored."""
    where = f'session of {session.robot}'
    for name, (unit, _, bounds) in SESSION_TIMES.items():
        value = getattr(session, name)
        try:
            check(value, _spec(unit, bounds, missing=name != 'started_utc'), f'{where}: {name}')
        except InputError as error:
            raise InputError(f'{error}{_time_hint(value) if name == "started_utc" else ""}') from None
    for name, (unit, _, bounds) in SESSION_COVARIATES.items():
        value = getattr(session, name)
        check(value, _spec(unit, bounds) if bounds else Text(), f'{where}: {name}')
    for name in ('model', 'source', 'input', 'result_file', 'result_sha256', 'software', 'notes', 'uid'):
        check(getattr(session, name), Text(), f'{where}: {name}')
    for joint in session.joints:
        for name, (unit, _, bounds) in JOINT_COLUMNS.items():
            check(getattr(joint, name), _spec(unit, bounds, integer=name == 'samples', missing=name != 'samples'),
                  f'{where}: {joint.joint}: {name}')


def check_event_time(time_utc, where: str) -> None:
    """InputError when an event's time [s since 1970 UTC] is not a time a record takes."""
    try:
        check(time_utc, _spec('s', SESSION_TIMES['started_utc'][2], missing=False), f'{where}: time_utc')
    except InputError as error:
        raise InputError(f'{error}{_time_hint(time_utc)}') from None


def history_problem(history) -> str | None:
    """The first thing of a robot's stored history (a :class:`dynid.health.record.RobotHistory`) that lies outside its
    range: a session's start, length, operating hours or payload, a joint's value or count, an event's time; in words,
    None when all are in range. Records written by older versions of dynid may hold such sessions."""
    ids = history.session_id
    columns = {name: (unit, bounds, np.asarray(getattr(history, name), dtype=float)[:, None])
               for name, (unit, _, bounds) in SESSION_TIMES.items()}
    columns['payload_kg'] = ('kg', SESSION_COVARIATES['payload_kg'][2],
                             np.asarray(history.conditions.get('payload_kg', np.full(len(ids), np.nan)),
                                        dtype=float)[:, None])
    columns.update({name: (unit, bounds, np.asarray(history.values[name], dtype=float))
                    for name, (unit, _, bounds) in JOINT_COLUMNS.items()})
    for name, (unit, (low, high), column) in columns.items():
        missing = np.zeros(column.shape, bool) if name == 'started_utc' else np.isnan(column)
        bad = ~missing & ~((column >= low) & (column <= high))
        if bad.any():
            k, j = (int(i) for i in np.unravel_index(np.argmax(bad), bad.shape))
            joint = f'{history.joint_names[j]}\'s ' if name in JOINT_COLUMNS else ''
            return (f'session {int(ids[k])}: {joint}{name} {float(column[k, j])!r} is not within [{low:g}, {high:g}]'
                    f'{"" if unit == "-" else " " + unit}{_time_hint(column[k, j]) if name == "started_utc" else ""}')
    low, high = SESSION_TIMES['started_utc'][2]
    for event in history.events:
        if not (isinstance(event.time_utc, int | float) and low <= event.time_utc <= high):
            return f'event {event.kind}: time_utc {event.time_utc!r} is not within [{low:g}, {high:g}] s since 1970 UTC'
    return None
