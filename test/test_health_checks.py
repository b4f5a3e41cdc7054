"""The health record checks every session before it stores it, and one robot's bad data never stops another's
judgement: on SQLite and on a real PostgreSQL server (testing/pg_server.py). A start time of 1e300 or in nanoseconds,
a count beyond the 32-bit column, an infinite value are refused naming the field; sessions that an older dynid
stored out of range name their robot on the fleet's page and in ``dynid health`` while every other robot is judged;
the judgement's write (its history read included) waits out a server restart as a session's write does; a password
given in the URL's query never reaches a message or a page."""

import json
import math
import sqlite3
import threading

import numpy as np
import pytest

from builders import fleet_record
from dynid.cli import main
from dynid.errors import InputError
from dynid.health.record import Event, HealthRecord, JointSession, Session
from record_backends import needs_postgres

JOINTS = ('a', 'b', 'c')


def session(k: int, robot: str = 'cell-1', **changes) -> Session:
    joint = {'stiffness': 4e4 - k, 'stiffness_std': 10.0, 'friction_scale': 1.0, 'samples': 30000}
    joint.update(changes.pop('joint', {}))
    return Session(robot, 'test-arm', JOINTS, changes.pop('started_utc', 1.7e9 + 86400.0 * k),
                   tuple(JointSession(j, **joint) for j in JOINTS), source='test', **changes)


@pytest.mark.parametrize('changes, field', [
    ({'started_utc': 1e300}, 'started_utc'),
    ({'started_utc': -5.0}, 'started_utc'),
    ({'duration_s': math.inf}, 'duration_s'),
    ({'operating_hours': -1.0}, 'operating_hours'),
    ({'payload_kg': 1e9}, 'payload_kg'),
    ({'joint': {'samples': 2**31}}, 'samples'),
    ({'joint': {'samples': 2.5}}, 'samples'),
    ({'joint': {'stiffness': math.inf}}, 'stiffness'),
    ({'joint': {'stiffness_std': -3.0}}, 'stiffness_std'),
    ({'joint': {'temperature_c': 1e6}}, 'temperature_c'),
])
def test_a_session_out_of_range_is_refused_naming_the_field(changes, field):
    with pytest.raises(InputError, match=rf'^session of cell-1: (a: )?{field} must be '):
        session(0, **changes)


def test_a_start_in_nanoseconds_or_milliseconds_is_refused_and_said_to_be(tmp_path):
    with pytest.raises(InputError, match=r'started_utc must be a number in \[0, 7.25812e\+09\] s, got 1\.7e\+18 '
                                         r'\(nanoseconds read as seconds\?\)$'):
        session(0, started_utc=1.7e18)
    with pytest.raises(InputError, match=r'\(milliseconds read as seconds\?\)$'):
        session(0, started_utc=1.7e12)
    with HealthRecord(tmp_path / 'health.sqlite3') as record:
        record.append(session(0))
        with pytest.raises(InputError, match=r'event of cell-1: time_utc must be .*\(nanoseconds read as seconds\?\)'):
            record.add_event('cell-1', Event('reset', 1.7e18))
        assert record.session_count() == 1 and record.history('cell-1').events == []


def test_nan_stands_for_not_known_and_is_stored(target):
    with HealthRecord(target) as record:
        record.append(session(0, joint={'stiffness': math.nan}, duration_s=math.nan, payload_kg=math.nan))
        record.append(session(1))
        history = record.history('cell-1')
    assert np.isnan(history.values['stiffness'][0]).all() and history.values['stiffness'][1, 0] == 4e4 - 1
    assert history.problem is None


def _stored_out_of_range(target, robot: str, sql: str) -> None:
    """What an older dynid may have stored: ``sql`` run on the record directly (``?``: the robot's newest session)."""
    if str(target).startswith('postgresql'):
        import psycopg

        with psycopg.connect(target, autocommit=True) as connection:
            newest = connection.execute('SELECT max(session_id) FROM sessions JOIN robots USING (robot_id) WHERE '
                                        'name = %s', (robot,)).fetchone()[0]
            connection.execute(sql.replace('?', '%s'), (newest,))
        return
    connection = sqlite3.connect(target)
    newest = connection.execute('SELECT max(session_id) FROM sessions JOIN robots USING (robot_id) WHERE name = ?',
                                (robot,)).fetchone()[0]
    connection.execute(sql, (newest,))
    connection.commit()
    connection.close()


@pytest.mark.parametrize('sql, said', [
    ('UPDATE sessions SET started_utc = 1e300 WHERE session_id = ?', 'started_utc 1e+300 is not within'),
    ('UPDATE sessions SET started_utc = 1.7e18 WHERE session_id = ?', 'nanoseconds read as seconds'),
    ('UPDATE joint_sessions SET samples = 3000000000 WHERE session_id = ?', "samples 3000000000.0 is not within"),
])
def test_an_older_robots_bad_session_names_it_and_every_other_robot_is_judged(target, tmp_path, capsys, sql, said):
    if 'samples = 3000000000' in sql and target.startswith('postgresql'):
        pytest.skip('the PostgreSQL column cannot hold it: no dynid could have stored it there')
    fleet_record(target, robots=4, sessions=20)
    _stored_out_of_range(target, 'cell-02', sql)
    folder = tmp_path / 'fleet'
    assert main(['health', '--db', target, '--fleet-report', str(folder), '--fleet-json']) == 0
    out = capsys.readouterr()
    data = json.loads(out.out)
    assert [r['robot'] for r in data['robots']] and {r['robot'] for r in data['robots']} == {
        'cell-00', 'cell-01', 'cell-03'}
    assert data['not_judged'][0]['robot'] == 'cell-02' and said in data['not_judged'][0]['reason']
    page = (folder / 'index.html').read_text()
    assert 'Robots not judged' in page and said in page and all(
        (folder / r['page']).is_file() for r in data['robots'])
    assert main(['health', '--db', target]) == 0  # the plain listing: the others' lines, the bad one named
    listing = capsys.readouterr().out
    assert 'cell-00 (' in listing and 'cell-03 (' in listing and 'cell-02: NOT JUDGED: session' in listing
    assert main(['health', '--db', target, '--robot', 'cell-02', '--report', str(tmp_path / 'one')]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and "robot 'cell-02' cannot be judged: session" in lines[0] and said in lines[0]
    assert not (tmp_path / 'one' / 'index.html').exists()
    assert main(['health', '--db', target, '--robot', 'cell-01']) == 0


def test_a_damaged_stored_judgement_is_judged_again(tmp_path):
    from dynid.health.settings import HealthSettings
    from dynid.health.stored import read_judgements, store_judgement

    path = tmp_path / 'health.sqlite3'
    with HealthRecord(path) as record:
        for k in range(8):
            record.append(session(k))
        store_judgement(record, 'cell-1')
    connection = sqlite3.connect(path)
    connection.execute("UPDATE judgements SET judgement = X'789c030000000001'")  # zlib of '': not a judgement
    connection.commit()
    connection.close()
    with HealthRecord(path, readonly=True) as record:
        current, stale, _ = read_judgements(record, HealthSettings())
    assert current == {} and stale == ['cell-1']


def test_a_robot_whose_joint_names_are_unreadable_is_named(tmp_path, capsys):
    path = tmp_path / 'health.sqlite3'
    fleet_record(path, robots=2, sessions=10)
    connection = sqlite3.connect(path)
    connection.execute("UPDATE robots SET joint_names = '{\"a\": 1}' WHERE name = 'cell-01'")
    connection.commit()
    connection.close()
    assert main(['health', '--db', str(path)]) == 0
    out = capsys.readouterr().out
    assert 'cell-00 (' in out and 'cell-01: NOT JUDGED: its joint names in the record are not a list' in out


@needs_postgres
def test_the_judgement_rides_out_a_server_restart(server):
    from dynid.health.settings import HealthSettings
    from dynid.health.stored import read_judgements, store_judgement

    url = server.database('judgement_restart')
    with HealthRecord(url, timeout_s=90.0) as record:
        for k in range(12):
            record.append(session(k))
        server.stop('immediate')  # down when the judgement reads the history, back 2 s later
        restart = threading.Timer(2.0, server.start)
        restart.start()
        try:
            health = store_judgement(record, 'cell-1')
        finally:
            restart.join()
        current, stale, _ = read_judgements(record, HealthSettings())
    assert stale == [] and current['cell-1'][0].to_dict() == health.to_dict() and health.sessions == 12


@needs_postgres
def test_the_judgement_write_itself_rides_out_a_restart(server):
    """The restart falls between the history's read and the judgement's write (the write reconnects and writes
    once: the judgement replaces the one before, whichever attempt arrived)."""
    from dynid.health.assessment import assess
    from dynid.health.settings import HealthSettings
    from dynid.health.stored import basis_of, encode, read_judgements

    url = server.database('judgement_write_restart')
    with HealthRecord(url, timeout_s=90.0) as record:
        for k in range(6):
            record.append(session(k))
        history = record.history('cell-1')
        health = assess(history, HealthSettings())
        server.stop('fast')
        restart = threading.Timer(1.5, server.start)
        restart.start()
        try:
            record.store_judgement('cell-1', basis_of(history, HealthSettings()), encode(health, 'section'))
        finally:
            restart.join()
        current, stale, _ = read_judgements(record, HealthSettings())
    assert stale == [] and current['cell-1'][1] == 'section'


@needs_postgres
def test_a_password_in_the_url_query_never_reaches_a_message_or_a_page(server, tmp_path, capsys):
    secret = 'hunter2-Query'
    good = server.database('secret_query') + f'?password={secret}&application_name=dynid'
    fleet_record(good, robots=2, sessions=8)
    folder = tmp_path / 'fleet'
    assert main(['health', '--db', good, '--fleet-report', str(folder), '--fleet-json']) == 0
    missing = server.url('no_such_database') + f'?sslmode=disable&password={secret}'
    encoded = server.url('no_such_database').replace('dynid@', f'dynid:{secret}@') + '?pass%77ord=hunter2%2DQuery'
    for url in (missing, encoded, good.replace('application_name', 'no_such_option')):
        assert main(['health', '--db', url]) == 2
    with pytest.raises(InputError) as refused:
        HealthRecord(missing)
    out = capsys.readouterr()
    shown = out.out + out.err + str(refused.value) + ''.join(p.read_text() for p in folder.rglob('*') if p.is_file())
    assert secret not in shown and 'hunter2' not in shown
    assert 'password=***' in out.err and 'record postgresql://dynid@' in (folder / 'index.html').read_text()
