"""A throwaway PostgreSQL server for the tests and bench_fleet: its own data folder and a free loopback port.

The server binaries are looked up on PATH, then in Debian's /usr/lib/postgresql/<version>/bin (the
``postgresql`` package; ``.ci/run`` installs it in CI). PostgreSQL refuses to run as root, so as root
the data folder is given to the ``postgres`` user (the Debian package makes it) and initdb, pg_ctl and
the server run as that user. :func:`unavailable` says, in one line, why no server can start here.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path

SERVICE_USER = 'postgres'


def _binaries() -> Path | None:
    found = shutil.which('pg_ctl')
    if found and shutil.which('initdb'):
        return Path(found).resolve().parent
    versions = sorted(glob.glob('/usr/lib/postgresql/*/bin/pg_ctl'), key=lambda p: int(Path(p).parts[-3]))
    return Path(versions[-1]).parent if versions else None


def _user() -> pwd.struct_passwd | None:
    """The account the server runs as: this one, or ``postgres`` when this one is root."""
    if os.geteuid() != 0:
        return None
    try:
        return pwd.getpwnam(SERVICE_USER)
    except KeyError:
        return None


def unavailable() -> str:
    """Why no PostgreSQL server can start on this machine, or '' when one can."""
    try:
        import psycopg  # noqa: F401
    except ImportError:
        return 'psycopg is not installed (pip install -r requirements.txt)'
    if _binaries() is None:
        return ('no PostgreSQL server binaries (pg_ctl, initdb) on PATH or in /usr/lib/postgresql/*/bin: '
                'apt-get install postgresql')
    if os.geteuid() == 0 and _user() is None:
        return f'running as root and there is no {SERVICE_USER!r} user to run the server as (PostgreSQL refuses root)'
    return ''


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


class Server:
    """A PostgreSQL server on 127.0.0.1:``port`` with trust authentication for ``dynid`` (tests only)."""

    def __init__(self) -> None:
        reason = unavailable()
        if reason:
            raise RuntimeError(reason)
        self.bin = _binaries()
        self.user = _user()
        self.folder = Path(tempfile.mkdtemp(prefix='dynid-pg-'))
        self.data = self.folder / 'data'
        if self.user is not None:
            os.chown(self.folder, self.user.pw_uid, self.user.pw_gid)
        self.port = _free_port()
        self._run('initdb', '-D', str(self.data), '-U', 'dynid', '--auth=trust', '-E', 'UTF8', '--no-sync',
                  '--locale=C')
        self.start()

    def _run(self, program: str, *arguments: str, check: bool = True) -> subprocess.CompletedProcess:
        kwargs = {}
        if self.user is not None:
            kwargs = {'user': self.user.pw_uid, 'group': self.user.pw_gid, 'extra_groups': []}
        return subprocess.run([str(self.bin / program), *arguments], capture_output=True, text=True, check=check,
                              cwd=self.folder, timeout=120, **kwargs)

    def start(self) -> None:
        options = f'-p {self.port} -k {self.folder} -c listen_addresses=127.0.0.1 -c max_connections=200'
        self._run('pg_ctl', '-D', str(self.data), '-o', options, '-l', str(self.folder / 'server.log'), '-w',
                  '-t', '90', 'start')

    def stop(self, mode: str = 'fast') -> None:
        """Stop the server; ``mode`` 'immediate' is a crash: no checkpoint, WAL recovery at the next start."""
        self._run('pg_ctl', '-D', str(self.data), '-m', mode, '-w', 'stop', check=False)

    def restart(self, mode: str = 'immediate') -> None:
        self.stop(mode)
        self.start()

    def url(self, database: str = 'postgres') -> str:
        return f'postgresql://dynid@127.0.0.1:{self.port}/{database}'

    def database(self, name: str) -> str:
        """Create the database ``name`` (empty) and return its URL."""
        import psycopg

        with psycopg.connect(self.url(), autocommit=True) as connection:
            connection.execute(f'DROP DATABASE IF EXISTS "{name}"')
            connection.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def running(self) -> bool:
        return self._run('pg_ctl', '-D', str(self.data), 'status', check=False).returncode == 0

    def close(self) -> None:
        self.stop('fast')
        if self.running():  # never leave a server behind
            self.stop('immediate')
        shutil.rmtree(self.folder, ignore_errors=True)
