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
judged from, so that a fleet's page reads it instead of judging every robot again.
"""

from __future__ import annotations

APPLICATION_ID = 0x64796E68  # 'dynh'

#: the columns of ``joint_sessions`` after the keys, with unit and meaning (docs/health.md)
JOINT_COLUMNS = {
    'temperature_c': ('°C', 'mean joint temperature over the session'),
    'stiffness': ('N·m/rad', 'α̂1 of the joint stiffness τ_E = α1·φ + α3·φ³ (k at zero deflection)'),
    'stiffness_std': ('N·m/rad', 'standard deviation of the session\'s α̂1'),
    'friction_scale': ('-', 'α̂1 of the adaptive E-GMS friction: factor on the identified Coulomb level'),
    'friction_scale_std': ('-', 'standard deviation of the session\'s friction α̂1'),
    'viscous_excess': ('N·m·s/rad', 'α̂2 of the adaptive friction: viscous friction above the identified one'),
    'viscous_excess_std': ('N·m·s/rad', 'standard deviation of the session\'s α̂2'),
    'coulomb_nm': ('N·m', 'identified no-load Coulomb level Fc the friction α̂1 scales'),
    'viscous_nms': ('N·m·s/rad', 'identified viscous coefficient Fv'),
    'stiffness_residual_rms': ('N·m', 'RMS of the stiffness RLS\'s one-step prediction error'),
    'friction_residual_rms': ('N·m', 'RMS of the adaptive friction\'s prediction error while adapting'),
    'samples': ('-', 'samples the estimators received in the session'),
    'load_rms_nm': ('N·m', 'RMS of the joint\'s load torque over the session (the load the friction depends on)'),
}

#: the session's conditions (version 3), with unit and meaning (docs/health.md)
SESSION_COVARIATES = {
    'payload_kg': ('kg', 'payload mass the robot carried (NaN: not known)'),
    'mounting': ('-', 'how the robot is mounted: its base gravity vector in the base frame [m/s²], as x y z'),
    'effort_meaning': ('-', 'what the driver\'s effort was: torque, current or the check\'s finding'),
    'robot_file': ('-', 'the robot description the session was estimated with'),
    'robot_sha256': ('-', 'sha256 of that robot description'),
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

#: the dialects' spellings of the placeholders in the migrations
DIALECTS = {
    'sqlite': {'key': 'INTEGER PRIMARY KEY', 'ref': 'INTEGER', 'real': 'REAL', 'strict': ' STRICT',
               'without_rowid': ', WITHOUT ROWID', 'blob': 'BLOB'},
    'postgresql': {'key': 'BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY', 'ref': 'BIGINT',
                   'real': 'DOUBLE PRECISION', 'strict': '', 'without_rowid': '', 'blob': 'BYTEA'},
}
_TEMPLATES = (_VERSION_1, _VERSION_2, _VERSION_3, _VERSION_4)
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
