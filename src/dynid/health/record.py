"""The health record: every estimation session's per-joint estimates, in one SQLite file.

One file holds one robot or a fleet (robots by name). It is SQLite in WAL mode (readers never wait
for the writer; a second writer waits up to ``timeout_s``) with ``synchronous=FULL``; the schema is
versioned and migrated (:mod:`dynid.health.schema`, docs/health.md). A session's rows are written
in one transaction, so a process killed while writing leaves every committed session intact and
none of the one in progress. A file that is not a dynid health record, is damaged, or has a newer
schema than this dynid knows is refused with an :class:`InputError` and left untouched.

    >>> with HealthRecord(path) as record:                                    # doctest: +SKIP
    ...     record.append(session)
    ...     history = record.history('ur5e-cell-3')
"""

from __future__ import annotations

import json
import math
import os
import sqlite3
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from dynid.errors import InputError
from dynid.health.schema import APPLICATION_ID, EVENT_KINDS, JOINT_COLUMNS, MIGRATIONS, SCHEMA_VERSION

SQLITE_HEADER = b'SQLite format 3\x00'
SOURCES = ('node', 'replay', 'import', 'twin', 'test')


def default_record_path() -> Path:
    """``$XDG_DATA_HOME/dynid/health.sqlite3`` (``~/.local/share`` when XDG_DATA_HOME is unset)."""
    base = os.environ.get('XDG_DATA_HOME') or str(Path.home() / '.local' / 'share')
    return Path(base) / 'dynid' / 'health.sqlite3'


@dataclass(frozen=True)
class JointSession:
    """One joint's estimates over one session (units in :data:`dynid.health.schema.JOINT_COLUMNS`);
    NaN where not estimated."""

    joint: str
    temperature_c: float = math.nan
    stiffness: float = math.nan
    stiffness_std: float = math.nan
    friction_scale: float = math.nan
    friction_scale_std: float = math.nan
    viscous_excess: float = math.nan
    viscous_excess_std: float = math.nan
    coulomb_nm: float = math.nan
    viscous_nms: float = math.nan
    stiffness_residual_rms: float = math.nan
    friction_residual_rms: float = math.nan
    samples: int = 0


@dataclass(frozen=True)
class Session:
    """One estimation session of one robot (a node's period, a replayed bag).

    Attributes:
        robot: the robot's name in the record (a unit, e.g. 'cell-3'; by default its model's name).
        model: the robot model (e.g. 'ur5e'); joint_names: its joints, in order.
        started_utc: start [s since 1970-01-01 UTC]; duration_s [s]; operating_hours [h] or NaN.
        joints: one :class:`JointSession` per joint (any subset of ``joint_names``).
        source: 'node', 'replay', 'import', 'twin' or 'test'; input: the bag or topic estimated from.
        result_file, result_sha256: the identification result estimated against.
        software: the dynid version; notes: free text.
    """

    robot: str
    model: str
    joint_names: tuple[str, ...]
    started_utc: float
    joints: tuple[JointSession, ...]
    duration_s: float = math.nan
    operating_hours: float = math.nan
    source: str = 'replay'
    input: str = ''
    result_file: str = ''
    result_sha256: str = ''
    software: str = ''
    notes: str = ''

    def __post_init__(self) -> None:
        if not isinstance(self.robot, str) or not self.robot.strip():
            raise InputError(f'robot must be a non-empty name, got {self.robot!r}')
        if self.source not in SOURCES:
            raise InputError(f'source must be one of {", ".join(SOURCES)}, got {self.source!r}')
        if not math.isfinite(float(self.started_utc)):
            raise InputError(f'started_utc must be finite, got {self.started_utc!r}')
        names = tuple(self.joint_names)
        object.__setattr__(self, 'joint_names', names)
        object.__setattr__(self, 'joints', tuple(self.joints))
        unknown = [j.joint for j in self.joints if j.joint not in names]
        if unknown:
            raise InputError(f'session of {self.robot}: joints {unknown} are not among {list(names)}')
        if len({j.joint for j in self.joints}) != len(self.joints):
            raise InputError(f'session of {self.robot}: a joint appears twice')


@dataclass(frozen=True)
class Event:
    """Something that starts a new trend segment: ``kind`` of :data:`EVENT_KINDS` at ``time_utc`` [s],
    on ``joint`` (None: every joint)."""

    kind: str
    time_utc: float
    joint: str | None = None
    note: str = ''


@dataclass
class RobotHistory:
    """A robot's sessions from the record, oldest first, as arrays.

    ``started_utc`` (S,) [s]; ``values[column]`` (S, J) for each column of
    :data:`JOINT_COLUMNS`, NaN where a session has no row or no value for a joint (joints in
    ``joint_names`` order); ``session_id`` (S,); ``events`` oldest first.
    """

    robot: str
    model: str
    joint_names: tuple[str, ...]
    session_id: np.ndarray
    started_utc: np.ndarray
    duration_s: np.ndarray
    operating_hours: np.ndarray
    result_sha256: list[str]
    values: dict[str, np.ndarray]
    events: list[Event] = field(default_factory=list)

    def __len__(self) -> int:
        return int(self.started_utc.size)


class HealthRecord:
    """A health record file, opened (and created, or migrated) on construction (module docstring).

    Args:
        path: the SQLite file; None: :func:`default_record_path`.
        create: make the file (and its folder) when it does not exist; else InputError.
        readonly: open for reading only (no migration: an older schema is refused).
        timeout_s: how long a writer waits for another one [s].
        check: run SQLite's ``quick_check`` on opening (damaged pages are refused before any write).

    One connection, usable from several threads (calls are serialized by a lock).
    """

    def __init__(self, path=None, *, create: bool = True, readonly: bool = False, timeout_s: float = 30.0,
                 check: bool = True) -> None:
        self.path = Path(default_record_path() if path is None or str(path) == '' else path).expanduser()
        self._lock = threading.Lock()
        self._connection = None
        self.readonly = readonly
        exists = self.path.exists()
        if exists:
            _check_header(self.path)
        elif readonly or not create:
            raise InputError(f'{self.path}: no such health record')
        else:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as error:
                raise InputError(f'{self.path}: cannot create its folder ({error.strerror})') from None
        mode = 'ro' if readonly else ('rw' if exists else 'rwc')
        try:
            self._connection = sqlite3.connect(f'{self.path.resolve().as_uri()}?mode={mode}', uri=True,
                                               timeout=timeout_s, isolation_level=None, check_same_thread=False)
            self._prepare(check)
        except sqlite3.DatabaseError as error:
            self.close()
            raise InputError(f'{self.path}: not a readable health record ({error}); the file was left as it '
                             'was') from None

    # ------------------------------------------------------------------------------ opening
    def _prepare(self, check: bool) -> None:
        c = self._connection
        c.execute('PRAGMA foreign_keys = ON')
        application_id, version = self._identity()
        if application_id == 0 and version == 0 and not self._has_tables():
            if self.readonly:
                raise InputError(f'{self.path}: an empty file, not a health record')
        elif application_id != APPLICATION_ID:
            raise InputError(f'{self.path}: an SQLite file but not a dynid health record (application_id '
                             f'{application_id:#x}); the file was left as it was')
        if version > SCHEMA_VERSION:
            raise InputError(f'{self.path}: health record schema {version} is newer than this dynid reads '
                             f'({SCHEMA_VERSION}); update dynid; the file was left as it was')
        if check:
            problems = [row[0] for row in c.execute('PRAGMA quick_check')]
            if problems != ['ok']:
                raise InputError(f'{self.path}: damaged health record ({"; ".join(problems[:3])}); the file was '
                                 'left as it was')
        if version < SCHEMA_VERSION:
            if self.readonly:
                raise InputError(f'{self.path}: health record schema {version} is older than {SCHEMA_VERSION}; '
                                 'open it once for writing to migrate it')
            self._migrate()
        if not self.readonly:
            c.execute('PRAGMA journal_mode = WAL')
            c.execute('PRAGMA synchronous = FULL')

    def _identity(self) -> tuple[int, int]:
        c = self._connection
        return (int(c.execute('PRAGMA application_id').fetchone()[0]),
                int(c.execute('PRAGMA user_version').fetchone()[0]))

    def _has_tables(self) -> bool:
        return self._connection.execute('SELECT count(*) FROM sqlite_master').fetchone()[0] > 0

    def _migrate(self) -> None:
        """Apply the missing migrations in one transaction (version read again inside it: another
        process may have migrated meanwhile)."""
        c = self._connection
        c.execute('BEGIN IMMEDIATE')
        try:
            application_id, version = self._identity()
            if version == 0 and application_id == 0 and self._has_tables():
                raise InputError(f'{self.path}: an SQLite file but not a dynid health record')
            for step in MIGRATIONS[version:]:
                for statement in filter(str.strip, step.split(';')):
                    c.execute(statement)
            c.execute(f'PRAGMA application_id = {APPLICATION_ID}')
            c.execute(f'PRAGMA user_version = {SCHEMA_VERSION}')
            c.execute('COMMIT')
        except BaseException:
            c.execute('ROLLBACK')
            raise

    @property
    def schema_version(self) -> int:
        with self._lock:
            return self._identity()[1]

    # ------------------------------------------------------------------------------ writing
    def append(self, session: Session) -> int:
        """Write ``session`` and its joint rows in one transaction; returns its session id.

        The robot is registered on its first session; later sessions must name the same joints.
        """
        if self.readonly:
            raise InputError(f'{self.path}: opened read-only')
        columns = list(JOINT_COLUMNS)
        rows = [[j.joint, *(_sql_value(getattr(j, name)) for name in columns)] for j in session.joints]
        with self._lock, self._transaction() as c:
            robot_id = self._robot_id(c, session.robot, session.model, session.joint_names)
            cursor = c.execute(
                'INSERT INTO sessions (robot_id, started_utc, duration_s, operating_hours, source, input, '
                'result_file, result_sha256, software, notes) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
                (robot_id, float(session.started_utc), _sql_value(session.duration_s),
                 _sql_value(session.operating_hours), session.source, session.input, session.result_file,
                 session.result_sha256, session.software, session.notes))
            session_id = int(cursor.lastrowid)
            c.executemany(f'INSERT INTO joint_sessions (session_id, joint, {", ".join(columns)}) VALUES '
                          f'({", ".join("?" * (len(columns) + 2))})', [[session_id, *row] for row in rows])
        return session_id

    def add_event(self, robot: str, event: Event, *, model: str | None = None,
                  joint_names: Sequence[str] | None = None) -> int:
        """Record ``event`` for ``robot`` (registered here when ``model`` and ``joint_names`` are given)."""
        if event.kind not in EVENT_KINDS:
            raise InputError(f'event kind must be one of {", ".join(EVENT_KINDS)}, got {event.kind!r}')
        with self._lock, self._transaction() as c:
            if model is not None and joint_names is not None:
                robot_id = self._robot_id(c, robot, model, tuple(joint_names))
            else:
                robot_id, names = self._known_robot(c, robot)
                if event.joint is not None and event.joint not in names:
                    raise InputError(f'event joint {event.joint!r} is not a joint of {robot} ({list(names)})')
            cursor = c.execute('INSERT INTO events (robot_id, time_utc, joint, kind, note) VALUES (?, ?, ?, ?, ?)',
                               (robot_id, float(event.time_utc), event.joint, event.kind, event.note))
            return int(cursor.lastrowid)

    def _transaction(self, read: bool = False):
        return _Transaction(self._connection, read)

    def _robot_id(self, c, name: str, model: str, joint_names: tuple[str, ...]) -> int:
        row = c.execute('SELECT robot_id, joint_names FROM robots WHERE name = ?', (name,)).fetchone()
        if row is None:
            cursor = c.execute('INSERT INTO robots (name, model, joint_names) VALUES (?, ?, ?)',
                               (name, model, json.dumps(list(joint_names))))
            return int(cursor.lastrowid)
        if tuple(json.loads(row[1])) != tuple(joint_names):
            raise InputError(f'robot {name!r} is in {self.path} with joints {json.loads(row[1])}, not '
                             f'{list(joint_names)}: give this robot another name')
        return int(row[0])

    def _known_robot(self, c, name: str) -> tuple[int, tuple[str, ...]]:
        row = c.execute('SELECT robot_id, joint_names FROM robots WHERE name = ?', (name,)).fetchone()
        if row is None:
            robots = [r[0] for r in c.execute('SELECT name FROM robots ORDER BY name')]
            raise InputError(f'{self.path} holds no robot {name!r} (it holds {robots or "none"})')
        return int(row[0]), tuple(json.loads(row[1]))

    # ------------------------------------------------------------------------------ reading
    def robots(self) -> list[str]:
        """The robots' names, sorted."""
        with self._lock:
            return [row[0] for row in self._connection.execute('SELECT name FROM robots ORDER BY name')]

    def session_count(self, robot: str | None = None) -> int:
        with self._lock:
            if robot is None:
                return int(self._connection.execute('SELECT count(*) FROM sessions').fetchone()[0])
            robot_id, _ = self._known_robot(self._connection, robot)
            return int(self._connection.execute('SELECT count(*) FROM sessions WHERE robot_id = ?',
                                                (robot_id,)).fetchone()[0])

    def inputs(self, robot: str) -> set[str]:
        """The ``input`` of every session of ``robot`` (what was estimated from: bag paths, topics)."""
        with self._lock:
            robot_id, _ = self._known_robot(self._connection, robot)
            return {row[0] for row in self._connection.execute('SELECT input FROM sessions WHERE robot_id = ?',
                                                                (robot_id,))}

    def history(self, robot: str) -> RobotHistory:
        """Every session of ``robot``, oldest first, as arrays (one read transaction)."""
        columns = list(JOINT_COLUMNS)
        with self._lock, self._transaction(read=True) as c:
            robot_id, names = self._known_robot(c, robot)
            model = c.execute('SELECT model FROM robots WHERE robot_id = ?', (robot_id,)).fetchone()[0]
            sessions = c.execute('SELECT session_id, started_utc, duration_s, operating_hours, result_sha256 '
                                 'FROM sessions WHERE robot_id = ? ORDER BY started_utc, session_id',
                                 (robot_id,)).fetchall()
            rows = c.execute(f'SELECT j.session_id, j.joint, {", ".join("j." + n for n in columns)} FROM '
                             'joint_sessions j JOIN sessions s ON s.session_id = j.session_id WHERE s.robot_id = ?',
                             (robot_id,)).fetchall()
            events = c.execute('SELECT kind, time_utc, joint, note FROM events WHERE robot_id = ? '
                               'ORDER BY time_utc, event_id', (robot_id,)).fetchall()
        ids = np.array([s[0] for s in sessions], dtype=np.int64)
        index = {int(i): k for k, i in enumerate(ids)}
        joint_index = {name: j for j, name in enumerate(names)}
        values = {name: np.full((len(ids), len(names)), np.nan) for name in columns}
        for row in rows:
            k, j = index[row[0]], joint_index.get(row[1])
            if j is None:
                continue
            for name, value in zip(columns, row[2:], strict=True):
                values[name][k, j] = np.nan if value is None else value
        as_float = lambda position: np.array([np.nan if s[position] is None else s[position] for s in sessions],  # noqa: E731
                                             dtype=float)
        return RobotHistory(robot, model, names, ids, as_float(1), as_float(2), as_float(3),
                            [s[4] for s in sessions], values, [Event(*e) for e in events])

    # ------------------------------------------------------------------------------ closing
    def close(self) -> None:
        if self._connection is not None:
            self._connection.close()
            self._connection = None

    def __enter__(self) -> HealthRecord:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __del__(self) -> None:
        self.close()


class _Transaction:
    """``BEGIN IMMEDIATE`` (a writer: waits for another writer) or a deferred read; COMMIT on success,
    ROLLBACK on any exception."""

    def __init__(self, connection, read: bool = False) -> None:
        self.connection, self.read = connection, read

    def __enter__(self):
        self.connection.execute('BEGIN' if self.read else 'BEGIN IMMEDIATE')
        return self.connection

    def __exit__(self, kind, value, traceback) -> None:
        self.connection.execute('ROLLBACK' if kind is not None else 'COMMIT')


def _check_header(path: Path) -> None:
    """Refuse a file that is not SQLite (an empty file passes: SQLite makes it a database)."""
    if path.is_dir():
        raise InputError(f'{path}: a folder, not a health record file')
    try:
        with path.open('rb') as handle:
            header = handle.read(len(SQLITE_HEADER))
    except OSError as error:
        raise InputError(f'{path}: cannot read ({error.strerror})') from None
    if header and header != SQLITE_HEADER:
        raise InputError(f'{path}: not an SQLite file, so not a health record; the file was left as it was')


def _sql_value(value):
    """None for NaN (SQL NULL), else a plain float or int."""
    if value is None:
        return None
    if isinstance(value, int | np.integer) and not isinstance(value, bool):
        return int(value)
    value = float(value)
    return None if math.isnan(value) else value


def now_utc() -> float:
    """Seconds since 1970-01-01 UTC."""
    return time.time()


__all__ = ['Event', 'HealthRecord', 'JointSession', 'RobotHistory', 'Session', 'default_record_path', 'now_utc']
