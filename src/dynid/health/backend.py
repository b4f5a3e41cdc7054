"""The two databases a health record lives in, behind one small interface: an SQLite file, or PostgreSQL by URL.

:class:`HealthRecord <dynid.health.record.HealthRecord>` writes its SQL once, with ``?`` parameters and
``RETURNING`` (both databases take it); a backend connects, translates the parameters, keeps the
record's identity and version (SQLite: ``PRAGMA application_id``/``user_version``; PostgreSQL: the
``dynid_health`` table), and opens transactions:

- SQLite: ``BEGIN IMMEDIATE`` (a second writer waits), WAL, ``synchronous=FULL``.
- PostgreSQL (psycopg 3): ``BEGIN`` at READ COMMITTED, with the server's own durability (a COMMIT returns
  once its WAL is flushed: ``synchronous_commit`` on, the default); a migration holds a transaction-level
  advisory lock, so that writers starting together migrate once.

Connection failures of PostgreSQL (server down, restarting, unreachable) are :class:`RecordUnavailableError`;
everything else the server refuses is an :class:`InputError` naming the record.
"""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path
from urllib.parse import unquote

from dynid.errors import InputError
from dynid.health.schema import APPLICATION_ID

POSTGRES_SCHEMES = ('postgresql://', 'postgres://')
APPLICATION_NAME = 'dynid health record'
MIGRATION_LOCK = APPLICATION_ID  # the advisory lock key of a migration (PostgreSQL)


class RecordUnavailableError(InputError):
    """The record's server cannot be reached (PostgreSQL down, restarting, or the network)."""


def is_postgres(target) -> bool:
    """Whether ``target`` (a path or URL) names a PostgreSQL database."""
    return isinstance(target, str) and target.startswith(POSTGRES_SCHEMES)


_USERINFO = re.compile(r'^(?P<head>[A-Za-z][\w+.-]*://[^:/?#@]*):(?P<secret>[^/?#]*)@')
_QUERY_SECRET = re.compile(r'(?P<head>[?&](?P<key>[^=&#]*)=)(?P<secret>[^&#]*)')


def _secret_key(key: str) -> bool:
    """Whether a URL query parameter holds a secret (``password``, ``sslpassword``, however it is spelt or encoded)."""
    return 'pass' in unquote(key).lower()


def url_secrets(url: str) -> list[str]:
    """The secrets a connection URL holds: the password of its user part and the values of its query parameters that
    name a password, each as written and percent-decoded (libpq takes both)."""
    found = []
    user = _USERINFO.match(url)
    if user and user['secret']:
        found.append(user['secret'])
    found += [m['secret'] for m in _QUERY_SECRET.finditer(url) if _secret_key(m['key']) and m['secret']]
    found += [unquote(secret) for secret in found]
    return sorted({secret for secret in found if secret}, key=len, reverse=True)


def redacted(url: str) -> str:
    """``url`` with every secret it holds (:func:`url_secrets`) replaced by ``***``, for messages and pages."""
    url = _USERINFO.sub(lambda m: f'{m["head"]}:***@', url)
    return _QUERY_SECRET.sub(lambda m: m['head'] + ('***' if _secret_key(m['key']) else m['secret']), url)


def scrubbed(text: str, url: str | None) -> str:
    """``text`` (a message, perhaps quoting the connection string) with the secrets of ``url`` replaced by ``***``."""
    if not url:
        return text
    text = text.replace(url, redacted(url))
    for secret in url_secrets(url):
        text = text.replace(secret, '***')
    return text


class SQLiteBackend:
    """An SQLite file (module docstring); ``connection`` is the sqlite3 connection."""

    dialect = 'sqlite'

    def __init__(self, path: Path, mode: str, timeout_s: float) -> None:
        self.connection = sqlite3.connect(f'{path.resolve().as_uri()}?mode={mode}', uri=True, timeout=timeout_s,
                                          isolation_level=None, check_same_thread=False)
        self.connection.execute('PRAGMA foreign_keys = ON')

    def execute(self, sql: str, parameters=()):
        return self.connection.execute(sql, parameters)

    def executemany(self, sql: str, rows) -> None:
        self.connection.executemany(sql, rows)

    def begin(self, read: bool = False) -> None:
        self.connection.execute('BEGIN' if read else 'BEGIN IMMEDIATE')

    def begin_migration(self) -> None:
        self.connection.execute('BEGIN IMMEDIATE')

    def identity(self) -> tuple[int, int]:
        """(application id, schema version); (0, 0) for a new database."""
        c = self.connection
        application = int(c.execute('PRAGMA application_id').fetchone()[0])
        return application, int(c.execute('PRAGMA user_version').fetchone()[0])

    def set_identity(self, version: int) -> None:
        self.connection.execute(f'PRAGMA application_id = {APPLICATION_ID}')
        self.connection.execute(f'PRAGMA user_version = {int(version)}')

    def has_tables(self) -> bool:
        return self.connection.execute('SELECT count(*) FROM sqlite_master').fetchone()[0] > 0

    def columns(self) -> dict[str, list[str]]:
        """{table: its column names in order} of the record's tables."""
        tables = [r[0] for r in self.connection.execute("SELECT name FROM sqlite_master WHERE type = 'table' "
                                                        'ORDER BY name')]
        return {t: [r[1] for r in self.connection.execute(f'PRAGMA table_info({t})')] for t in tables}

    def problems(self) -> list[str]:
        """SQLite's quick_check findings (empty when the file is sound)."""
        found = [row[0] for row in self.connection.execute('PRAGMA quick_check')]
        return [] if found == ['ok'] else found

    def after_open(self, readonly: bool) -> None:
        if not readonly:
            self.connection.execute('PRAGMA journal_mode = WAL')
            self.connection.execute('PRAGMA synchronous = FULL')

    def close(self) -> None:
        self.connection.close()


def _psycopg():
    try:
        import psycopg
    except ImportError:
        raise InputError('a PostgreSQL health record needs psycopg 3: pip install "psycopg[binary]"') from None
    return psycopg


class PostgresBackend:
    """A PostgreSQL database by URL (module docstring); ``connection`` is the psycopg connection."""

    dialect = 'postgresql'

    def __init__(self, url: str, readonly: bool, timeout_s: float) -> None:
        self.url, self.readonly, self.timeout_s = url, readonly, timeout_s
        self.psycopg = _psycopg()
        self.connection = None
        self.connect()

    def connect(self) -> None:
        psycopg = self.psycopg
        try:
            self.connection = psycopg.connect(self.url, autocommit=True, connect_timeout=max(2, int(self.timeout_s)),
                                              application_name='dynid')
        except psycopg.OperationalError as error:
            raise RecordUnavailableError(f'{redacted(self.url)}: cannot connect ({first_line(error, self.url)})') \
                from None
        except psycopg.ProgrammingError as error:
            raise InputError(f'{redacted(self.url)}: not a usable PostgreSQL URL ({first_line(error, self.url)})') \
                from None
        if self.readonly:
            self.connection.execute('SET default_transaction_read_only = on')
        # a writer waits for another's row lock at most this long, like SQLite's busy timeout
        self.connection.execute(f"SET lock_timeout = '{int(self.timeout_s * 1000)}ms'")

    @staticmethod
    def _sql(sql: str) -> str:
        return sql.replace('?', '%s')

    def execute(self, sql: str, parameters=()):
        return self.connection.execute(self._sql(sql), parameters or None)

    def executemany(self, sql: str, rows) -> None:
        with self.connection.cursor() as cursor:
            cursor.executemany(self._sql(sql), rows)

    def begin(self, read: bool = False) -> None:
        self.connection.execute('BEGIN')

    def begin_migration(self) -> None:
        self.connection.execute('BEGIN')
        self.connection.execute('SELECT pg_advisory_xact_lock(%s)', (MIGRATION_LOCK,))

    def _tables(self, *names: str) -> bool:
        """Whether any of the tables ``names`` exists (read from pg_tables with the statement's snapshot: a
        name looked up by to_regclass may come from the session's catalog cache, stale inside a transaction
        that waited for another's migration)."""
        return self.connection.execute('SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_tables WHERE schemaname = '
                                       'current_schema() AND tablename = ANY(%s))', (list(names),)).fetchone()[0]

    def _has_meta(self) -> bool:
        return self._tables('dynid_health')

    def identity(self) -> tuple[int, int]:
        if not self._has_meta():
            return 0, 0
        values = dict(self.connection.execute('SELECT key, value FROM dynid_health').fetchall())
        application = APPLICATION_ID if values.get('application') == APPLICATION_NAME else -1
        return application, int(values.get('schema_version', 0))

    def set_identity(self, version: int) -> None:
        c = self.connection
        c.execute('CREATE TABLE IF NOT EXISTS dynid_health (key TEXT PRIMARY KEY, value TEXT NOT NULL)')
        for key, value in (('application', APPLICATION_NAME), ('schema_version', str(int(version)))):
            c.execute('INSERT INTO dynid_health (key, value) VALUES (%s, %s) ON CONFLICT (key) DO UPDATE SET '
                      'value = excluded.value', (key, value))

    def has_tables(self) -> bool:
        return self._tables('robots', 'sessions')

    def columns(self) -> dict[str, list[str]]:
        rows = self.connection.execute(
            "SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = current_schema() "
            "AND table_name <> 'dynid_health' ORDER BY table_name, ordinal_position").fetchall()
        found: dict[str, list[str]] = {}
        for table, column in rows:
            found.setdefault(table, []).append(column)
        return found

    def problems(self) -> list[str]:
        return []  # the server keeps its own pages checked (data checksums, WAL)

    def after_open(self, readonly: bool) -> None:
        pass

    def close(self) -> None:
        if self.connection is not None:
            self.connection.close()


def first_line(error, url: str | None = None) -> str:
    """The first line of ``error``'s message, without the secrets of the connection ``url`` (:func:`scrubbed`)."""
    return scrubbed((str(error).strip().splitlines() or [type(error).__name__])[0], url)


def database_errors() -> tuple[type[BaseException], ...]:
    """The exception classes of the databases' own errors (sqlite3's, and psycopg's when installed)."""
    try:
        import psycopg
    except ImportError:
        return (sqlite3.Error,)
    return (sqlite3.Error, psycopg.Error)
