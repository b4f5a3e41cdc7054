"""The health record: every estimation session's per-joint estimates, in one SQLite file.

One record holds one robot or a fleet (robots by name). It is an SQLite file in WAL mode (readers never
wait for the writer; a second writer waits up to ``timeout_s``) with ``synchronous=FULL``, or a
PostgreSQL database reached by URL (many robots writing at once; :mod:`dynid.health.backend`). The
schema is versioned and migrated the same way on both (:mod:`dynid.health.schema`, docs/health.md). A
session's rows are written in one transaction, so a process killed while writing leaves every committed
session intact and none of the one in progress. A record that is not a dynid health record, is damaged,
or has a newer schema than this dynid knows is refused with an :class:`InputError` and left untouched.

    >>> with HealthRecord(path) as record:                                    # doctest: +SKIP
    ...     record.append(session)
    ...     history = record.history('ur5e-cell-3')
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import sqlite3
import threading
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from dynid.errors import InputError
from dynid.health.backend import (
    PostgresBackend,
    RecordUnavailableError,
    SQLiteBackend,
    first_line,
    is_postgres,
    redacted,
)
from dynid.health.fleet_place import FleetPlace
from dynid.health.results import StoredResult
from dynid.health.schema import (
    APPLICATION_ID,
    EVENT_KINDS,
    JOINT_COLUMNS,
    SCHEMA_VERSION,
    SESSION_COVARIATES,
    check_event_time,
    check_session,
    history_problem,
    migrations,
    statements,
)

SQLITE_HEADER = b'SQLite format 3\x00'
#: :meth:`HealthRecord.histories` of at most this many robots reads their rows only (one statement parameter each;
#: SQLite allows 32 766, PostgreSQL 65 535); of more, every row
HISTORY_FILTER_ROBOTS = 1000
SOURCES = ('node', 'replay', 'import', 'twin', 'test', 'identify')


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
    load_rms_nm: float = math.nan


@dataclass(frozen=True)
class Session:
    """One estimation session of one robot (a node's period, a replayed bag).

    Attributes:
        robot: the robot's name in the record (a unit, e.g. 'cell-3'; by default its model's name).
        model: the robot model (e.g. 'ur5e'); joint_names: its joints, in order.
        started_utc: start [s since 1970-01-01 UTC]; duration_s [s]; operating_hours [h] or NaN.
        joints: one :class:`JointSession` per joint (any subset of ``joint_names``).
        source: 'node', 'replay', 'import', 'twin', 'test' or 'identify' (dynid batch); input: the bag or topic.
        result_file, result_sha256: the identification result estimated against.
        software: the dynid version; notes: free text.
        payload_kg, mounting, effort_meaning, robot_file, robot_sha256: the session's conditions
            (:data:`dynid.health.schema.SESSION_COVARIATES`).
        uid: the session's unique id (made here): a retried write of it is written once.
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
    payload_kg: float = math.nan
    mounting: str = ''
    effort_meaning: str = ''
    robot_file: str = ''
    robot_sha256: str = ''
    uid: str = field(default_factory=lambda: uuid.uuid4().hex)

    def __post_init__(self) -> None:
        if not isinstance(self.robot, str) or not self.robot.strip():
            raise InputError(f'robot must be a non-empty name, got {self.robot!r}')
        if self.source not in SOURCES:
            raise InputError(f'source must be one of {", ".join(SOURCES)}, got {self.source!r}')
        names = tuple(self.joint_names)
        if not names or not all(isinstance(name, str) and name for name in names) or len(set(names)) != len(names):
            raise InputError(f'session of {self.robot}: joint_names must be distinct names, got {list(names)}')
        object.__setattr__(self, 'joint_names', names)
        object.__setattr__(self, 'joints', tuple(self.joints))
        unknown = [j.joint for j in self.joints if j.joint not in names]
        if unknown:
            raise InputError(f'session of {self.robot}: joints {unknown} are not among {list(names)}')
        if len({j.joint for j in self.joints}) != len(self.joints):
            raise InputError(f'session of {self.robot}: a joint appears twice')
        check_session(self)  # times, counts and values in range, before anything is stored


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
    ``joint_names`` order); ``session_id`` (S,); ``events`` oldest first; ``conditions``: each session's
    covariates (:data:`dynid.health.schema.SESSION_COVARIATES`), ``payload_kg`` as an (S,) array [kg].
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
    conditions: dict = field(default_factory=dict)
    problem: str | None = None

    def __len__(self) -> int:
        return int(self.started_utc.size)


@dataclass(frozen=True)
class JudgementBasis:
    """What a stored judgement was made from (:mod:`dynid.health.stored`): the robot's session count and newest
    session id, sha256 of its events (:func:`events_sha256`) and of the judging settings, and the dynid that
    judged (e.g. 'dynid 0.9.0')."""

    sessions: int
    last_session_id: int
    events_sha256: str
    settings_sha256: str
    software: str


@dataclass(frozen=True)
class StoredJudgement:
    """A robot as :meth:`HealthRecord.stored_judgements` reads it: its session count and newest session id now,
    its events, and its stored judgement (bytes, as written) with the basis it was made from (None: none stored)."""

    robot: str
    sessions: int
    last_session_id: int
    events: list[Event]
    basis: JudgementBasis | None
    judgement: bytes | None


def events_sha256(events: Sequence[Event]) -> str:
    """sha256 of a robot's events (kind, time, joint, note, oldest first): a judgement's events in one word."""
    text = json.dumps([[e.kind, float(e.time_utc), e.joint, e.note] for e in events])
    return hashlib.sha256(text.encode()).hexdigest()


class HealthRecord:
    """A health record, opened (and created, or migrated) on construction (module docstring).

    Args:
        path: the SQLite file, or a PostgreSQL URL (``postgresql://user@host:5432/fleet``); None or '':
            :func:`default_record_path`.
        create: make the file (and its folder) or the schema when there is none; else InputError.
        readonly: open for reading only (no migration: an older schema is refused).
        timeout_s: how long a writer waits for another one, and (PostgreSQL) for the server to come back [s].
        check: run SQLite's ``quick_check`` on opening (damaged pages are refused before any write).

    One connection, usable from several threads (calls are serialized by a lock).
    """

    def __init__(self, path=None, *, create: bool = True, readonly: bool = False, timeout_s: float = 30.0,
                 check: bool = True) -> None:
        self._lock = threading.Lock()
        self._db = None
        self._connection = None
        self.readonly, self.timeout_s = readonly, timeout_s
        if is_postgres(path):
            self.url, self.path = path, redacted(path)
            self._db = PostgresBackend(path, readonly, timeout_s)
            self._connection = self._db.connection
            try:
                self._prepare(check, create)
            except self._db.psycopg.Error as error:
                self.close()
                raise InputError(f'{self.path}: not a usable health record ({first_line(error, self.url)})') from None
            except BaseException:
                self.close()
                raise
            return
        self.url = None
        self.path = Path(default_record_path() if path is None or str(path) == '' else path).expanduser()
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
            self._db = SQLiteBackend(self.path, mode, timeout_s)
            self._connection = self._db.connection
            self._prepare(check, create)
        except sqlite3.DatabaseError as error:
            self.close()
            raise InputError(f'{self.path}: not a readable health record ({error}); the file was left as it '
                             'was') from None
        except BaseException:
            self.close()
            raise

    @staticmethod
    def display(db) -> str:
        """How messages name the record ``db``: its path, or its URL without the password."""
        return redacted(db) if is_postgres(db) else str(db)

    @property
    def dialect(self) -> str:
        """'sqlite' or 'postgresql'."""
        return self._db.dialect

    # ------------------------------------------------------------------------------ opening
    def _prepare(self, check: bool, create: bool = True) -> None:
        db = self._db
        application_id, version = db.identity()
        if application_id == 0 and version == 0:
            # tables but no mark: another application's, or (PostgreSQL) a writer's migration that committed
            # between the two reads; a writer decides in _migrate, under the migration's lock
            if db.has_tables() and self.readonly:
                raise InputError(f'{self.path}: a database but not a dynid health record; it was left as it was')
            if self.readonly or (not create and self.url):
                raise InputError(f'{self.path}: an empty database, not a health record')
        elif application_id != APPLICATION_ID:
            raise InputError(f'{self.path}: a database but not a dynid health record (application_id '
                             f'{application_id:#x}); it was left as it was')
        if version > SCHEMA_VERSION:
            raise InputError(f'{self.path}: health record schema {version} is newer than this dynid reads '
                             f'({SCHEMA_VERSION}); update dynid; the record was left as it was')
        if check:
            problems = db.problems()
            if problems:
                raise InputError(f'{self.path}: damaged health record ({"; ".join(problems[:3])}); the file was '
                                 'left as it was')
        if version < SCHEMA_VERSION:
            if self.readonly:
                raise InputError(f'{self.path}: health record schema {version} is older than {SCHEMA_VERSION}; '
                                 'open it once for writing to migrate it')
            self._migrate()
        db.after_open(self.readonly)

    def _migrate(self) -> None:
        """Apply the missing migrations in one transaction (identity read again inside it: another
        process may have migrated meanwhile)."""
        db = self._db
        db.begin_migration()
        try:
            application_id, version = db.identity()
            if version == 0 and application_id == 0 and db.has_tables():
                raise InputError(f'{self.path}: a database but not a dynid health record')
            if version > SCHEMA_VERSION:
                raise InputError(f'{self.path}: health record schema {version} is newer than this dynid reads '
                                 f'({SCHEMA_VERSION}); update dynid; the record was left as it was')
            for step in migrations(db.dialect)[version:]:
                for statement in statements(step):
                    db.execute(statement)
            db.set_identity(SCHEMA_VERSION)
            db.execute('COMMIT')
        except BaseException:
            db.execute('ROLLBACK')
            raise

    @property
    def schema_version(self) -> int:
        with self._lock:
            return self._db.identity()[1]

    def columns(self) -> dict[str, list[str]]:
        """{table: its columns in order}: the schema as the database holds it (the same on both backends)."""
        with self._lock:
            return self._db.columns()

    # ------------------------------------------------------------------------------ writing
    def append(self, session: Session) -> int:
        """Write ``session`` and its joint rows in one transaction; returns its session id.

        The robot is registered on its first session; later sessions must name the same joints. On
        PostgreSQL a lost connection (a server restart) is retried for ``timeout_s``: the session's ``uid``
        makes the retry write it once, whether or not the first COMMIT arrived.
        """
        if self.readonly:
            raise InputError(f'{self.path}: opened read-only')
        columns = list(JOINT_COLUMNS)
        covariates = list(SESSION_COVARIATES)
        rows = [[j.joint, *(_sql_value(getattr(j, name)) for name in columns)] for j in session.joints]

        def write(c) -> int:
            robot_id = self._robot_id(c, session.robot, session.model, session.joint_names)
            row = c.execute(
                'INSERT INTO sessions (robot_id, started_utc, duration_s, operating_hours, source, input, '
                f'result_file, result_sha256, software, notes, uid, {", ".join(covariates)}) VALUES '
                f'({", ".join("?" * (11 + len(covariates)))}) ON CONFLICT (uid) DO NOTHING RETURNING session_id',
                (robot_id, float(session.started_utc), _sql_value(session.duration_s),
                 _sql_value(session.operating_hours), session.source, session.input, session.result_file,
                 session.result_sha256, session.software, session.notes, session.uid,
                 *(_sql_value(getattr(session, name)) for name in covariates))).fetchone()
            if row is None:  # written before: the COMMIT of a retried call had arrived
                return int(c.execute('SELECT session_id FROM sessions WHERE uid = ?', (session.uid,)).fetchone()[0])
            session_id = int(row[0])
            c.executemany(f'INSERT INTO joint_sessions (session_id, joint, {", ".join(columns)}) VALUES '
                          f'({", ".join("?" * (len(columns) + 2))})', [[session_id, *r] for r in rows])
            return session_id

        return self._write(write)

    def add_event(self, robot: str, event: Event, *, model: str | None = None,
                  joint_names: Sequence[str] | None = None) -> int:
        """Record ``event`` for ``robot`` (registered here when ``model`` and ``joint_names`` are given)."""
        if event.kind not in EVENT_KINDS:
            raise InputError(f'event kind must be one of {", ".join(EVENT_KINDS)}, got {event.kind!r}')
        check_event_time(event.time_utc, f'event of {robot}')

        def write(c) -> int:
            if model is not None and joint_names is not None:
                robot_id = self._robot_id(c, robot, model, tuple(joint_names))
            else:
                robot_id, names = self._known_robot(c, robot)
                if event.joint is not None and event.joint not in names:
                    raise InputError(f'event joint {event.joint!r} is not a joint of {robot} ({list(names)})')
            return int(c.execute('INSERT INTO events (robot_id, time_utc, joint, kind, note) VALUES (?, ?, ?, ?, ?) '
                                 'RETURNING event_id', (robot_id, float(event.time_utc), event.joint, event.kind,
                                                        event.note)).fetchone()[0])

        return self._write(write)

    def _write(self, work):
        """``work(backend)`` in one write transaction (:meth:`_run`)."""
        return self._run(work, read=False)

    def _run(self, work, read: bool):
        """``work(backend)`` in one transaction; on PostgreSQL again on a new connection after a lost one (a server
        restart), waiting for the server for ``timeout_s`` (reads and writes alike: a session, a judgement, the
        history a judgement is made from)."""
        deadline = time.monotonic() + self.timeout_s
        while True:
            with self._lock:
                try:
                    with self._transaction(read) as c:
                        return work(c)
                except self._retryable() as error:
                    if time.monotonic() > deadline:
                        raise RecordUnavailableError(f'{self.path}: the server did not come back within '
                                                     f'{self.timeout_s:g} s ({first_line(error, self.url)})') from None
                    self._reconnect(deadline)
                except _postgres_errors(self._db) as error:
                    raise InputError(f'{self.path}: {first_line(error, self.url)}') from None

    def _retryable(self) -> tuple:
        if self.url is None:
            return ()
        return (self._db.psycopg.OperationalError, RecordUnavailableError)

    def _reconnect(self, deadline: float) -> None:
        """Connect again (PostgreSQL), waiting for the server until ``deadline``."""
        self._db.close()
        while True:
            try:
                self._db.connect()
                self._connection = self._db.connection
                return
            except RecordUnavailableError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.25)

    def _transaction(self, read: bool = False):
        return _Transaction(self._db, read)

    def _robot_id(self, c, name: str, model: str, joint_names: tuple[str, ...]) -> int:
        c.execute('INSERT INTO robots (name, model, joint_names) VALUES (?, ?, ?) ON CONFLICT (name) DO NOTHING',
                  (name, model, json.dumps(list(joint_names))))
        row = c.execute('SELECT robot_id, joint_names FROM robots WHERE name = ?', (name,)).fetchone()
        if stored_joint_names(row[1]) != tuple(joint_names):
            raise InputError(f'robot {name!r} is in {self.path} with joints {row[1]}, not {list(joint_names)}: give '
                             'this robot another name')
        return int(row[0])

    def _known_robot(self, c, name: str) -> tuple[int, tuple[str, ...]]:
        row = c.execute('SELECT robot_id, joint_names FROM robots WHERE name = ?', (name,)).fetchone()
        if row is None:
            robots = [r[0] for r in c.execute('SELECT name FROM robots ORDER BY name').fetchall()]
            raise InputError(f'{self.path} holds no robot {name!r} (it holds {robots or "none"})')
        joint_names = stored_joint_names(row[1])
        if joint_names is None:
            raise InputError(f'{self.path}: the joint names of robot {name!r} are not a list of names ({row[1]!r:.80})')
        return int(row[0]), joint_names

    # ------------------------------------------------------------------------------ reading
    def _read(self, work):
        """``work(backend)`` in one read transaction (a consistent snapshot on both databases; :meth:`_run`)."""
        return self._run(work, read=True)

    def robots(self) -> list[str]:
        """The robots' names, sorted."""
        return self._read(lambda c: [row[0] for row in c.execute('SELECT name FROM robots ORDER BY name').fetchall()])

    def session_count(self, robot: str | None = None) -> int:
        def count(c) -> int:
            if robot is None:
                return int(c.execute('SELECT count(*) FROM sessions').fetchone()[0])
            robot_id, _ = self._known_robot(c, robot)
            return int(c.execute('SELECT count(*) FROM sessions WHERE robot_id = ?', (robot_id,)).fetchone()[0])

        return self._read(count)

    def inputs(self, robot: str) -> set[str]:
        """The ``input`` of every session of ``robot`` (what was estimated from: bag paths, topics)."""
        def read(c) -> set[str]:
            robot_id, _ = self._known_robot(c, robot)
            rows = c.execute('SELECT input FROM sessions WHERE robot_id = ?', (robot_id,)).fetchall()
            return {row[0] for row in rows}

        return self._read(read)

    def history(self, robot: str) -> RobotHistory:
        """Every session of ``robot``, oldest first, as arrays (one read transaction)."""
        return self.histories([robot])[0]

    def histories(self, robots: Sequence[str] | None = None) -> list[RobotHistory]:
        """Every session of each of ``robots`` (default: every robot, by name), oldest first, read in one
        transaction with one query per table (a fleet's page reads them all at once)."""
        columns, covariates = list(JOINT_COLUMNS), list(SESSION_COVARIATES)

        def read(c):
            known = {r[0]: (int(r[1]), r[2], stored_joint_names(r[3])) for r in c.execute(
                'SELECT name, robot_id, model, joint_names FROM robots').fetchall()}
            names = sorted(known) if robots is None else list(robots)
            for name in names:
                if name not in known:
                    self._known_robot(c, name)  # raises, naming the robots held
            # the robots asked for (a listing judges only those whose stored judgement is not current): their rows
            # only, not the fleet's; every row where they are many (a statement's parameters are bounded)
            ids = [known[name][0] for name in names]
            some = robots is not None and 0 < len(ids) <= HISTORY_FILTER_ROBOTS
            mine = f'robot_id IN ({", ".join("?" * len(ids))})' if some else ''
            chosen = tuple(ids) if some else ()
            where = f' WHERE {mine}' if some else ''
            sessions = c.execute('SELECT robot_id, session_id, started_utc, duration_s, operating_hours, '
                                 f'result_sha256, {", ".join(covariates)} FROM sessions{where} ORDER BY robot_id, '
                                 'started_utc, session_id', chosen).fetchall()
            of = f' WHERE session_id IN (SELECT session_id FROM sessions WHERE {mine})' if some else ''
            rows = c.execute(f'SELECT session_id, joint, {", ".join(columns)} FROM joint_sessions{of}',
                             chosen).fetchall()
            events = c.execute(f'SELECT robot_id, kind, time_utc, joint, note FROM events{where} ORDER BY robot_id, '
                               'time_utc, event_id', chosen).fetchall()
            return names, known, sessions, rows, events

        names, known, sessions, rows, events = self._read(read)
        by_robot: dict[int, list] = {}
        for s in sessions:
            by_robot.setdefault(s[0], []).append(s[1:])
        joint_rows: dict[int, list] = {}
        for row in rows:
            joint_rows.setdefault(row[0], []).append(row[1:])
        robot_events: dict[int, list] = {}
        for e in events:
            robot_events.setdefault(e[0], []).append(Event(*e[1:]))
        found = []
        for name in names:
            robot_id, model, joint_names = known[name]
            unreadable = joint_names is None
            joint_names = () if unreadable else joint_names
            mine = by_robot.get(robot_id, [])
            ids = np.array([s[0] for s in mine], dtype=np.int64)
            index = {int(i): k for k, i in enumerate(ids)}
            joint_index = {j: k for k, j in enumerate(joint_names)}
            values = {column: np.full((len(ids), len(joint_names)), np.nan) for column in columns}
            for session_id in ids:
                k = index[int(session_id)]
                for row in joint_rows.get(int(session_id), ()):
                    j = joint_index.get(row[0])
                    if j is None:
                        continue
                    for column, value in zip(columns, row[1:], strict=True):
                        values[column][k, j] = np.nan if value is None else value
            as_float = lambda position, mine=mine: np.array(  # noqa: E731
                [np.nan if s[position] is None else s[position] for s in mine], dtype=float)
            conditions = {name_: [s[5 + k] for s in mine] for k, name_ in enumerate(covariates)}
            conditions['payload_kg'] = as_float(5 + covariates.index('payload_kg'))
            history = RobotHistory(name, model, joint_names, ids, as_float(1), as_float(2), as_float(3),
                                   [s[4] for s in mine], values, robot_events.get(robot_id, []), conditions)
            history.problem = 'its joint names in the record are not a list of names' if unreadable else \
                history_problem(history)
            found.append(history)
        return found

    # ------------------------------------------------------------------------------ stored judgements
    def store_judgement(self, robot: str, basis: JudgementBasis, judgement: bytes) -> None:
        """Write ``robot``'s judgement (bytes: :mod:`dynid.health.stored`) made from ``basis``, in place of the one
        stored before, in one transaction."""
        if self.readonly:
            raise InputError(f'{self.path}: opened read-only')
        b = basis

        def write(c) -> None:
            robot_id, _ = self._known_robot(c, robot)
            c.execute('INSERT INTO judgements (robot_id, sessions, last_session_id, events_sha256, settings_sha256, '
                      'software, judged_utc, judgement) VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (robot_id) DO '
                      'UPDATE SET sessions = excluded.sessions, last_session_id = excluded.last_session_id, '
                      'events_sha256 = excluded.events_sha256, settings_sha256 = excluded.settings_sha256, '
                      'software = excluded.software, judged_utc = excluded.judged_utc, judgement = excluded.judgement',
                      (robot_id, int(b.sessions), int(b.last_session_id), b.events_sha256, b.settings_sha256,
                       b.software, time.time(), bytes(judgement)))

        self._write(write)

    def stored_judgements(self, robots: Sequence[str] | None = None) -> list[StoredJudgement]:
        """Each of ``robots`` (default every robot, by name) with its session count and newest session id, its
        events and its stored judgement, read in one transaction without the sessions' rows (the count and
        the newest id come from an aggregate per robot)."""
        def read(c):
            known = {r[0]: int(r[1]) for r in c.execute('SELECT name, robot_id FROM robots').fetchall()}
            names = sorted(known) if robots is None else list(robots)
            for name in names:
                if name not in known:
                    self._known_robot(c, name)  # raises, naming the robots held
            counts = {int(r[0]): (int(r[1]), int(r[2])) for r in c.execute(
                'SELECT robot_id, count(*), max(session_id) FROM sessions GROUP BY robot_id').fetchall()}
            events = c.execute('SELECT robot_id, kind, time_utc, joint, note FROM events ORDER BY robot_id, '
                               'time_utc, event_id').fetchall()
            stored = {int(r[0]): r[1:] for r in c.execute(
                'SELECT robot_id, sessions, last_session_id, events_sha256, settings_sha256, software, judgement '
                'FROM judgements').fetchall()}
            return names, known, counts, events, stored

        names, known, counts, events, stored = self._read(read)
        robot_events: dict[int, list] = {}
        for e in events:
            robot_events.setdefault(int(e[0]), []).append(Event(*e[1:]))
        found = []
        for name in names:
            robot_id = known[name]
            row = stored.get(robot_id)
            basis = None if row is None else JudgementBasis(int(row[0]), int(row[1]), row[2], row[3], row[4])
            found.append(StoredJudgement(name, *counts.get(robot_id, (0, 0)), robot_events.get(robot_id, []), basis,
                                         None if row is None else bytes(row[5])))
        return found

    # ------------------------------------------------------------------------------ places in the fleet
    def store_standings(self, places: Sequence[FleetPlace]) -> list[str]:
        """Write each robot's place in its fleet (:mod:`dynid.health.fleet_place`) in place of the one stored before,
        all in one transaction; robots the record does not hold are left out. The robots written, in order."""
        if self.readonly:
            raise InputError(f'{self.path}: opened read-only')

        def write(c) -> list[str]:
            known = {r[0]: int(r[1]) for r in c.execute('SELECT name, robot_id FROM robots').fetchall()}
            done = []
            for place in places:
                if place.robot not in known:
                    continue
                c.execute('INSERT INTO standings (robot_id, judged_utc, result_sha256, standing) VALUES (?, ?, ?, ?) '
                          'ON CONFLICT (robot_id) DO UPDATE SET judged_utc = excluded.judged_utc, result_sha256 = '
                          'excluded.result_sha256, standing = excluded.standing',
                          (known[place.robot], float(place.judged_utc), place.result_sha256, place.encode()))
                done.append(place.robot)
            return done

        return self._write(write)

    def standings(self, robots: Sequence[str] | None = None) -> dict[str, FleetPlace]:
        """{robot: its stored place in the fleet} of ``robots`` (default every robot) that have one; a damaged one
        is left out."""
        rows = self._read(lambda c: c.execute(
            'SELECT r.name, s.judged_utc, s.result_sha256, s.standing FROM standings s JOIN robots r ON '
            'r.robot_id = s.robot_id ORDER BY r.name').fetchall())
        wanted = None if robots is None else set(robots)
        places = {}
        for name, judged_utc, result_sha256, text in rows:
            if wanted is None or name in wanted:
                place = FleetPlace.decode(name, judged_utc, result_sha256, text)
                if place is not None:
                    places[name] = place
        return places

    # ------------------------------------------------------------------------------ identification results
    def store_result(self, robot: str, robot_model: str, joint_names: Sequence[str], stored: StoredResult) -> bool:
        """Keep ``robot``'s identification result (:mod:`dynid.health.results`), registering the robot (its
        ``robot_model`` as the robots table names it, its ``joint_names``) where the record does not hold it; in one
        transaction. False when the record holds that result of that robot already (the same sha256)."""
        if self.readonly:
            raise InputError(f'{self.path}: opened read-only')
        s = stored

        def write(c) -> bool:
            robot_id = self._robot_id(c, robot, robot_model, tuple(joint_names))
            row = c.execute(
                'INSERT INTO results (robot_id, model, identified_utc, input, result_file, result_sha256, software, '
                'pooling, parameter_values, parameter_std, drive_gains, drive_gains_std, document) VALUES '
                '(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (robot_id, result_sha256) DO NOTHING RETURNING '
                'result_id', (robot_id, s.model, float(s.identified_utc), s.input, s.result_file, s.result_sha256,
                              s.software, s.pooling, s.parameter_values, s.parameter_std, s.drive_gains,
                              s.drive_gains_std, s.document)).fetchone()
            return row is not None

        return self._write(write)

    def newest_results(self, model: str | None = None, document: bool = False) -> list[tuple[str, StoredResult]]:
        """(robot, its newest result) for every robot with a result (of the robot ``model``, default any), by robot
        name; newest by ``identified_utc``, then by the order stored. One query; the result files' text (``document``)
        only when asked for (else b'')."""
        where = 'WHERE model = ?' if model is not None else ''
        sql = (f'SELECT r.name, s.model, s.identified_utc, s.input, s.result_file, s.result_sha256, s.software, '
               f's.pooling, s.parameter_values, s.parameter_std, s.drive_gains, s.drive_gains_std, '
               f'{"s.document" if document else "NULL"} FROM (SELECT *, row_number() OVER (PARTITION BY robot_id '
               f'ORDER BY identified_utc DESC, result_id DESC) AS newest FROM results {where}) s JOIN robots r ON '
               f'r.robot_id = s.robot_id WHERE s.newest = 1 ORDER BY r.name')
        rows = self._read(lambda c: c.execute(sql, () if model is None else (model,)).fetchall())
        return [(row[0], StoredResult(row[1], float(row[2]), *row[3:8], bytes(row[8]), bytes(row[9]),
                                      None if row[10] is None else bytes(row[10]),
                                      None if row[11] is None else bytes(row[11]),
                                      b'' if row[12] is None else bytes(row[12]))) for row in rows]

    # ------------------------------------------------------------------------------ closing
    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None
            self._connection = None

    def __enter__(self) -> HealthRecord:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __del__(self) -> None:
        self.close()


class _Transaction:
    """A write transaction (SQLite ``BEGIN IMMEDIATE``: waits for another writer) or a read; COMMIT on
    success, ROLLBACK on any exception (and none when the connection is gone: the server rolled back)."""

    def __init__(self, backend, read: bool = False) -> None:
        self.backend, self.read = backend, read

    def __enter__(self):
        self.backend.begin(self.read)
        return self.backend

    def __exit__(self, kind, value, traceback) -> None:
        if kind is None:
            self.backend.execute('COMMIT')
            return
        try:
            self.backend.execute('ROLLBACK')
        except Exception:  # noqa: BLE001 - the connection is lost; the server rolled the transaction back
            pass


def _postgres_errors(backend) -> tuple:
    """psycopg's error class when ``backend`` is PostgreSQL (sqlite3 errors pass through as before)."""
    return (backend.psycopg.Error,) if backend is not None and backend.dialect == 'postgresql' else ()


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


def stored_joint_names(text) -> tuple[str, ...] | None:
    """A robot's joint names as the record holds them (a JSON list of names); None when they are not that."""
    try:
        names = json.loads(text)
    except (TypeError, ValueError, RecursionError):
        return None
    if not isinstance(names, list) or not names or not all(isinstance(n, str) for n in names):
        return None
    return tuple(names)


def _sql_value(value):
    """None for NaN (SQL NULL), else a plain float or int (text as it is)."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, int | np.integer) and not isinstance(value, bool):
        return int(value)
    value = float(value)
    return None if math.isnan(value) else value


def record_exists(db) -> bool:
    """Whether the record ``db`` (a path, or a PostgreSQL URL: assumed to exist) is there to be opened."""
    return is_postgres(db) or Path(default_record_path() if not db else db).expanduser().exists()


def now_utc() -> float:
    """Seconds since 1970-01-01 UTC."""
    return time.time()


__all__ = ['Event', 'FleetPlace', 'HealthRecord', 'JointSession', 'JudgementBasis', 'RecordUnavailableError',
           'RobotHistory', 'Session', 'StoredJudgement', 'StoredResult', 'default_record_path', 'events_sha256',
           'is_postgres', 'now_utc', 'record_exists']
