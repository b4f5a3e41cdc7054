"""The health record's SQLite schema, as the list of migrations that builds it (docs/health.md).

A record's ``PRAGMA user_version`` is the number of migrations applied to it; a new file gets all
of them in order, an older one the missing ones, each in the transaction that opens it (SQLite's
schema changes are transactional, so a failed migration leaves the file as it was).
``PRAGMA application_id`` marks the file as a dynid health record.

Version 1: robots, sessions, one row per joint and session. Version 2: events (a reset, a new
baseline, a gearbox swap, a collision), which start a new trend segment.
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
}

EVENT_KINDS = ('reset', 'set_baseline', 'gearbox_swap', 'collision', 'maintenance', 'detected_change')

_VERSION_1 = """
CREATE TABLE robots (
    robot_id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    model TEXT NOT NULL,
    joint_names TEXT NOT NULL
) STRICT;
CREATE TABLE sessions (
    session_id INTEGER PRIMARY KEY,
    robot_id INTEGER NOT NULL REFERENCES robots(robot_id),
    started_utc REAL NOT NULL,
    duration_s REAL,
    operating_hours REAL,
    source TEXT NOT NULL,
    input TEXT NOT NULL DEFAULT '',
    result_file TEXT NOT NULL DEFAULT '',
    result_sha256 TEXT NOT NULL DEFAULT '',
    software TEXT NOT NULL DEFAULT '',
    notes TEXT NOT NULL DEFAULT ''
) STRICT;
CREATE INDEX sessions_by_robot_time ON sessions(robot_id, started_utc);
CREATE TABLE joint_sessions (
    session_id INTEGER NOT NULL REFERENCES sessions(session_id) ON DELETE CASCADE,
    joint TEXT NOT NULL,
    temperature_c REAL,
    stiffness REAL,
    stiffness_std REAL,
    friction_scale REAL,
    friction_scale_std REAL,
    viscous_excess REAL,
    viscous_excess_std REAL,
    coulomb_nm REAL,
    viscous_nms REAL,
    stiffness_residual_rms REAL,
    friction_residual_rms REAL,
    samples INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (session_id, joint)
) STRICT, WITHOUT ROWID;
"""

_VERSION_2 = f"""
CREATE TABLE events (
    event_id INTEGER PRIMARY KEY,
    robot_id INTEGER NOT NULL REFERENCES robots(robot_id),
    time_utc REAL NOT NULL,
    joint TEXT,
    kind TEXT NOT NULL CHECK (kind IN ({', '.join(repr(k) for k in EVENT_KINDS)})),
    note TEXT NOT NULL DEFAULT ''
) STRICT;
CREATE INDEX events_by_robot_time ON events(robot_id, time_utc);
"""

#: MIGRATIONS[k] takes a record from version k to k + 1.
MIGRATIONS = (_VERSION_1, _VERSION_2)
SCHEMA_VERSION = len(MIGRATIONS)
