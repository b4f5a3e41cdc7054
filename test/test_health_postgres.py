"""The health record on a real PostgreSQL server (started here on a temporary folder and a free port,
testing/pg_server.py): the same schema as SQLite, migration from version 2, stored judgements, a newer or foreign
database refused and untouched, eight writer processes at once, a writer killed inside a session, and a server
crash and restart while writing."""

import json
import math
import os
import signal
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from builders import FLEET_WORN, fleet_record
from dynid.errors import InputError
from dynid.health.job import judge_record
from dynid.health.record import HealthRecord, JointSession, Session
from dynid.health.schema import SCHEMA_VERSION, migrations, statements
from health_sessions import assert_some_robots_read_as_in_the_whole_fleet
from record_backends import needs_postgres

pytestmark = needs_postgres
JOINTS = ('a', 'b', 'c')


@pytest.fixture
def url(server, request):
    return server.database(request.node.name.replace('[', '_').replace(']', '')[:60])


def session(k: int, robot: str = 'cell-1') -> Session:
    return Session(robot, 'test-arm', JOINTS, 1.7e9 + 86400.0 * k,
                   tuple(JointSession(j, temperature_c=20.0 + k, stiffness=4e4 - k, stiffness_std=10.0,
                                      friction_scale=1.0 + 0.01 * k, samples=30000, load_rms_nm=12.5) for j in JOINTS),
                   duration_s=30.0, source='test', input=f'session {k}', payload_kg=2.5, mounting='0 0 -9.81',
                   effort_meaning='torque', robot_sha256='ab' * 32)


def test_the_schema_and_the_values_are_the_same_as_in_sqlite(url, tmp_path):
    histories = []
    for target in (url, tmp_path / 'health.sqlite3'):
        with HealthRecord(target) as record:
            for k in range(4):
                record.append(session(k))
            record.append(Session('cell-1', 'test-arm', JOINTS, 1.7e9 + 86400.0 * 9,
                                  (JointSession('b', stiffness=3e4),)))
            assert record.schema_version == SCHEMA_VERSION == 6
            histories.append((record.dialect, record.columns(), record.history('cell-1')))
    (pg, pg_columns, pg_history), (lite, lite_columns, lite_history) = histories
    assert (pg, lite) == ('postgresql', 'sqlite')
    assert pg_columns == lite_columns and 'load_rms_nm' in pg_columns['joint_sessions']
    for column, values in lite_history.values.items():
        np.testing.assert_array_equal(pg_history.values[column], values, err_msg=column)
    np.testing.assert_array_equal(pg_history.started_utc, lite_history.started_utc)
    assert pg_history.conditions['mounting'] == lite_history.conditions['mounting'][:4] + ['']
    np.testing.assert_array_equal(pg_history.conditions['payload_kg'], [2.5] * 4 + [math.nan])


def test_some_robots_read_alone_are_as_in_the_whole_fleet(url):
    assert_some_robots_read_as_in_the_whole_fleet(url)


def test_stored_judgements_are_the_same_as_in_sqlite(url, tmp_path):
    from dynid.health.settings import HealthSettings
    from dynid.health.stored import read_judgements, store_judgement

    settings, found = HealthSettings(), []
    for target in (url, tmp_path / 'health.sqlite3'):
        with HealthRecord(target) as record:
            for k in range(10):
                record.append(session(k))
            store_judgement(record, 'cell-1', settings)
            current, stale, _ = read_judgements(record, settings)
            assert stale == []
            record.append(session(10))
            assert read_judgements(record, settings)[1] == ['cell-1']  # a new session: stale
            found.append(current['cell-1'])
    (pg, pg_section), (lite, lite_section) = found
    assert pg.to_dict() == lite.to_dict() and pg_section == lite_section and pg.sessions == 10


def test_a_version_2_database_is_migrated_with_its_sessions(url):
    import psycopg

    with psycopg.connect(url, autocommit=True) as connection:  # the schema as dynid's version 2 wrote it
        for step in migrations('postgresql')[:2]:
            for statement in statements(step):
                connection.execute(statement)
        connection.execute('CREATE TABLE dynid_health (key TEXT PRIMARY KEY, value TEXT NOT NULL)')
        connection.execute("INSERT INTO dynid_health VALUES ('application', 'dynid health record'), "
                           "('schema_version', '2')")
        connection.execute('INSERT INTO robots (name, model, joint_names) VALUES (%s, %s, %s)',
                           ('old', 'ur5e', '["a", "b", "c"]'))
        connection.execute("INSERT INTO sessions (robot_id, started_utc, source) VALUES (1, 1.6e9, 'node')")
        connection.execute("INSERT INTO joint_sessions (session_id, joint, stiffness) VALUES (1, 'a', 41000.0)")
    with pytest.raises(InputError, match='older'):
        HealthRecord(url, readonly=True)  # reading alone never changes the database
    with HealthRecord(url) as record:
        assert record.schema_version == SCHEMA_VERSION
        record.append(session(1, robot='old'))
        history = record.history('old')
        assert 'judgements' in record.columns()
    assert history.values['stiffness'][0, 0] == 41000.0 and math.isnan(history.values['load_rms_nm'][0, 0])
    assert history.values['load_rms_nm'][1, 0] == 12.5 and history.conditions['effort_meaning'] == ['', 'torque']


def test_a_newer_or_foreign_database_is_refused_and_left_as_it_was(url, server):
    import psycopg

    with HealthRecord(url) as record:
        record.append(session(0))
    with psycopg.connect(url, autocommit=True) as connection:
        connection.execute(f"UPDATE dynid_health SET value = '{SCHEMA_VERSION + 1}' WHERE key = 'schema_version'")
    for readonly in (False, True):
        with pytest.raises(InputError, match='newer than this dynid reads'):
            HealthRecord(url, readonly=readonly)
    with psycopg.connect(url, autocommit=True) as connection:
        version = connection.execute("SELECT value FROM dynid_health WHERE key = 'schema_version'").fetchone()[0]
        assert version == str(SCHEMA_VERSION + 1)
        assert connection.execute('SELECT count(*) FROM sessions').fetchone()[0] == 1
    foreign = server.database('foreign_tables')
    with psycopg.connect(foreign, autocommit=True) as connection:
        connection.execute('CREATE TABLE robots (id INT)')
    with pytest.raises(InputError, match='not a dynid health record'):
        HealthRecord(foreign)
    with pytest.raises(InputError, match='cannot connect'):
        HealthRecord(server.url('no_such_database'))


WRITER = textwrap.dedent('''
    import sys, time
    from dynid.health.record import HealthRecord, JointSession, Session
    url, robot, count, mode = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    joints = ('a', 'b', 'c')
    record = HealthRecord(url, timeout_s=120.0)
    def session(k, name=robot):
        return Session(name, 'test-arm', joints, 1.7e9 + k, tuple(JointSession(j, stiffness=4e4 + k) for j in joints))
    print('open', flush=True)
    record.append(session(0, 'shared-' + robot[-1]))  # writers register the same robots at once
    for k in range(count):
        record.append(session(k))
        if mode == 'slow':
            time.sleep(0.05)
    if mode == 'stall':
        backend = record._db
        def stall(sql, rows):  # stop inside the next session's transaction, its session row written
            print('inside', flush=True)
            time.sleep(600)
        backend.executemany = stall
        record.append(session(count))
    print('done', flush=True)
''')


def _writer(url, robot, count, mode='-'):
    return subprocess.Popen([sys.executable, '-c', WRITER, url, robot, str(count), mode], stdout=subprocess.PIPE,
                            text=True, env=dict(os.environ))


def _finish(writers, timeout=300):
    for writer in writers:
        out = writer.communicate(timeout=timeout)[0]
        assert writer.returncode == 0 and out.strip().endswith('done'), out


def test_eight_writer_processes_at_once(url):
    writers = [_writer(url, f'cell-{w}', 15) for w in range(8)]
    _finish(writers)
    with HealthRecord(url, readonly=True) as record:
        assert record.robots() == sorted([f'cell-{w}' for w in range(8)] + [f'shared-{w}' for w in range(8)])
        assert record.session_count() == 8 * 16
        for history in record.histories():
            assert np.isfinite(history.values['stiffness']).all()
            assert len(history) == (15 if history.robot.startswith('cell') else 1)


def test_a_writer_killed_inside_a_session_loses_that_session_only(url):
    writer = _writer(url, 'cell-1', 5, 'stall')
    try:
        assert writer.stdout.readline().strip() == 'open'
        assert writer.stdout.readline().strip() == 'inside'
        with HealthRecord(url, readonly=True) as reader:  # the open transaction hides its session from readers
            assert len(reader.history('cell-1')) == 5
        os.kill(writer.pid, signal.SIGKILL)
        writer.wait(timeout=30)
    finally:
        if writer.poll() is None:
            writer.kill()
            writer.wait()
    with HealthRecord(url) as record:
        history = record.history('cell-1')
        assert len(history) == 5  # every committed session, nothing of the killed one (no row without joints)
        assert np.isfinite(history.values['stiffness']).all()
        record.append(session(6))
        assert record.session_count('cell-1') == 6


def test_sessions_survive_a_server_crash_and_writers_carry_on(url, server):
    with HealthRecord(url) as record:
        for k in range(3):
            record.append(session(k))
    writers = [_writer(url, f'cell-{w}', 40, 'slow') for w in (2, 3)]
    for writer in writers:
        assert writer.stdout.readline().strip() == 'open'
    server.restart('immediate')  # a crash: no checkpoint, the WAL replayed at start
    _finish(writers)
    with HealthRecord(url, readonly=True) as record:
        assert record.session_count('cell-1') == 3
        for w in (2, 3):  # every session once: a retry after a lost COMMIT is not written twice
            history = record.history(f'cell-{w}')
            assert sorted(history.started_utc - 1.7e9) == list(range(40))


def test_the_fleet_page_and_json_read_a_postgresql_record(url, tmp_path, capsys):
    from dynid.cli import main

    fleet_record(url, robots=6, sessions=30)
    folder = tmp_path / 'fleet'
    assert main(['health', '--db', url, '--fleet-report', str(folder), '--fleet-json']) == 0
    data = json.loads(capsys.readouterr().out)
    assert {e['robot'] for e in data['by_forecast'][:2]} == set(FLEET_WORN)
    assert data['source'] == f'record {url}' and (folder / data['robots'][0]['page']).exists()


def test_a_robots_place_in_its_fleet_is_stored_and_read_as_in_sqlite(url, tmp_path):
    from dynid.health.fleet_place import FleetPlace

    fleet_record(url, robots=2, sessions=5)
    document = {'model': 'ur5e', 'robots': 24, 'judged': 80, 'false_flag_rate': 0.01, 'apart': [
        {'joint': 'elbow_joint', 'parameter': 'Fc_3', 'kind': 'friction', 'value': 4.8, 'centre': 3.0, 'spread': 0.15,
         'others': 23, 'z': 12.0, 'z_own': 11.5, 'threshold': 6.1, 'relative_percent': 60.0, 'text': 'Fc_3 apart'}]}
    places = [FleetPlace('cell-00', 1.7e9, 'ab' * 32, document), FleetPlace('cell-01', 1.7e9, 'cd' * 32, {
        **document, 'apart': []}), FleetPlace('not-in-the-record', 1.7e9, 'ef' * 32, document)]
    for db in (url, tmp_path / 'health.sqlite3'):
        if db != url:
            fleet_record(db, robots=2, sessions=5)
        with HealthRecord(db) as record:
            assert record.store_standings(places) == ['cell-00', 'cell-01']
            assert record.store_standings(places[:1]) == ['cell-00']  # in place of the one before
            assert record.standings() == {p.robot: p for p in places[:2]}
        health = judge_record(db)[0]
        assert [h.fleet for h in health] == places[:2] and [h.state for h in health][0] == 'warn'


def test_every_query_of_the_grafana_dashboard_runs_on_the_schema(url):
    import re
    from pathlib import Path

    import psycopg

    with HealthRecord(url) as record:
        for k in range(3):
            record.append(session(k))
    dashboard = json.loads((Path(__file__).resolve().parents[1] / 'docs' / 'grafana' / 'fleet-health.json').read_text())
    queries = [dashboard['templating']['list'][0]['query']]
    queries += [t['rawSql'] for panel in dashboard['panels'] for t in panel['targets']]
    with psycopg.connect(url) as connection:
        for sql in queries:  # Grafana's macro and variable, as Grafana expands them
            sql = re.sub(r'\$__unixEpochFilter\(([^)]+)\)', r'\1 BETWEEN 0 AND 4e9', sql).replace('$robot', 'cell-1')
            rows = connection.execute(sql).fetchall()
            assert rows or 'events' in sql, sql
