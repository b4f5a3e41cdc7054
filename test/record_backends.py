"""Whether a real PostgreSQL server can start here for the health record's tests (testing/pg_server.py): ``REASON``
('' where it can) and the mark that skips a test by that reason. The fixtures ``server`` and ``target`` (a record on
each backend) are conftest.py's."""

import pytest

from testing import pg_server

REASON = pg_server.unavailable()
needs_postgres = pytest.mark.skipif(bool(REASON), reason=f'no PostgreSQL server can start here: {REASON}')
