"""The health record: sessions in and out, migration, refusal of damaged or newer files, killed and
concurrent writers (SQLite in WAL mode; dynid.health.record)."""

import hashlib
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from dynid.errors import InputError
from dynid.health.record import Event, HealthRecord, JointSession, Session, default_record_path
from dynid.health.schema import APPLICATION_ID, MIGRATIONS, SCHEMA_VERSION
from health_sessions import JOINTS, assert_some_robots_read_as_in_the_whole_fleet, session


def digest(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_sessions_round_trip_with_missing_values_as_nan(tmp_path):
    path = tmp_path / 'health.sqlite3'
    with HealthRecord(path) as record:
        for k in range(3):
            record.append(session(k))
        partial = Session('cell-1', 'test-arm', JOINTS, 1.7e9 + 86400.0 * 5, (JointSession('b', stiffness=3e4),))
        record.append(partial)
        record.add_event('cell-1', Event('gearbox_swap', 1.7e9 + 86400.0 * 4, 'c', 'new gear'))
    with HealthRecord(path, readonly=True) as record:
        assert record.robots() == ['cell-1']
        history = record.history('cell-1')
    assert len(history) == 4 and history.joint_names == JOINTS and history.model == 'test-arm'
    np.testing.assert_array_equal(history.values['stiffness'][:3, 0], [4e4, 4e4 - 1, 4e4 - 2])
    assert history.values['stiffness'][3, 1] == 3e4
    assert np.isnan(history.values['stiffness'][3, 0]) and np.isnan(history.values['viscous_excess']).all()
    assert history.values['samples'][0, 0] == 30000
    assert history.events == [Event('gearbox_swap', 1.7e9 + 86400.0 * 4, 'c', 'new gear')]


def test_some_robots_read_alone_are_as_in_the_whole_fleet(tmp_path):
    assert_some_robots_read_as_in_the_whole_fleet(tmp_path / 'health.sqlite3')


def test_a_robot_keeps_its_joints_and_bad_sessions_are_refused(tmp_path):
    with HealthRecord(tmp_path / 'h.sqlite3') as record:
        record.append(session(0))
        with pytest.raises(InputError, match="robot 'cell-1' is in .* with joints"):
            record.append(session(1, joints=('a', 'b')))
        assert record.session_count('cell-1') == 1  # the refused session left nothing
        with pytest.raises(InputError, match='no robot'):
            record.history('cell-9')
    with pytest.raises(InputError, match='not among'):
        Session('r', 'm', JOINTS, 0.0, (JointSession('z'),))
    with pytest.raises(InputError, match='source'):
        Session('r', 'm', JOINTS, 0.0, (), source='guess')


def test_default_location_is_under_xdg_data_home(monkeypatch, tmp_path):
    monkeypatch.setenv('XDG_DATA_HOME', str(tmp_path))
    assert default_record_path() == tmp_path / 'dynid' / 'health.sqlite3'
    with HealthRecord(None) as record:
        record.append(session(0))
    assert (tmp_path / 'dynid' / 'health.sqlite3').exists()


def test_a_version_1_record_is_migrated_with_its_sessions(tmp_path):
    path = tmp_path / 'old.sqlite3'
    connection = sqlite3.connect(path)
    connection.executescript(MIGRATIONS[0])  # the schema as version 1 of dynid wrote it
    connection.execute(f'PRAGMA application_id = {APPLICATION_ID}')
    connection.execute('PRAGMA user_version = 1')
    connection.execute("INSERT INTO robots (name, model, joint_names) VALUES ('old', 'ur5e', '[\"a\", \"b\", \"c\"]')")
    connection.execute("INSERT INTO sessions (robot_id, started_utc, source) VALUES (1, 1.6e9, 'node')")
    connection.execute("INSERT INTO joint_sessions (session_id, joint, stiffness) VALUES (1, 'a', 41000.0)")
    connection.commit()
    connection.close()
    with pytest.raises(InputError, match='older'):
        HealthRecord(path, readonly=True)  # reading alone never changes the file
    with HealthRecord(path) as record:
        assert record.schema_version == SCHEMA_VERSION == 6
        record.add_event('old', Event('set_baseline', 1.6e9 + 10))  # the table version 2 added
        history = record.history('old')
    assert history.values['stiffness'][0, 0] == 41000.0 and history.events[0].kind == 'set_baseline'


def test_a_version_3_record_is_migrated_and_stores_judgements(tmp_path):
    from dynid.health.settings import HealthSettings
    from dynid.health.stored import read_judgements, store_judgement

    path = tmp_path / 'v3.sqlite3'
    connection = sqlite3.connect(path)
    for step in MIGRATIONS[:3]:  # the schema as version 3 of dynid wrote it, with a session
        connection.executescript(step)
    connection.execute(f'PRAGMA application_id = {APPLICATION_ID}')
    connection.execute('PRAGMA user_version = 3')
    connection.execute("INSERT INTO robots (name, model, joint_names) VALUES ('cell-1', 'test-arm', '[\"a\", \"b\", "
                       "\"c\"]')")
    connection.execute("INSERT INTO sessions (robot_id, started_utc, source, uid) VALUES (1, 1.6e9, 'node', 'u0')")
    connection.execute("INSERT INTO joint_sessions (session_id, joint, stiffness) VALUES (1, 'a', 41000.0)")
    connection.commit()
    connection.close()
    with pytest.raises(InputError, match='older'):
        HealthRecord(path, readonly=True)
    with HealthRecord(path) as record:
        for k in range(8):
            record.append(session(k))
        assert record.schema_version == SCHEMA_VERSION and 'judgements' in record.columns()
        assert record.history('cell-1').values['stiffness'][0, 0] == 41000.0
        settings = HealthSettings()
        assert read_judgements(record, settings)[1] == ['cell-1']  # none stored yet: to be judged
        stored = store_judgement(record, 'cell-1', settings)
        current, stale, events = read_judgements(record, settings)
        assert stale == [] and current['cell-1'][0].to_dict() == stored.to_dict() and events == {'cell-1': []}
        record.append(session(8))
        assert read_judgements(record, settings)[1] == ['cell-1']


def test_newer_foreign_and_damaged_files_are_refused_and_left_untouched(tmp_path):
    newer = tmp_path / 'newer.sqlite3'
    with HealthRecord(newer) as record:
        record.append(session(0))
    connection = sqlite3.connect(newer)
    connection.execute(f'PRAGMA user_version = {SCHEMA_VERSION + 1}')
    connection.commit()
    connection.close()
    foreign = tmp_path / 'foreign.sqlite3'
    connection = sqlite3.connect(foreign)
    connection.execute('CREATE TABLE notes (x TEXT)')
    connection.commit()
    connection.close()
    text = tmp_path / 'notes.txt'
    text.write_text('not a database at all\n' * 100)
    damaged = tmp_path / 'damaged.sqlite3'
    with HealthRecord(damaged) as record:
        for k in range(60):
            record.append(session(k))
    connection = sqlite3.connect(damaged)
    connection.execute('PRAGMA wal_checkpoint(TRUNCATE)')
    connection.close()
    data = bytearray(damaged.read_bytes())
    page = 4096
    data[2 * page + 100:3 * page] = os.urandom(page - 100)  # garbage over one b-tree page
    damaged.write_bytes(bytes(data))
    cases = {newer: 'newer than this dynid reads', foreign: 'not a dynid health record', text: 'not an SQLite file',
             damaged: 'damaged|not a readable'}
    before = {path: digest(path) for path in cases}
    for path, reason in cases.items():
        with pytest.raises(InputError, match=reason):
            HealthRecord(path)
        assert digest(path) == before[path], f'{path.name} was changed'


WRITER = textwrap.dedent('''
    import sys, time
    from dynid.health.record import HealthRecord, JointSession, Session
    path, robot, count, stall = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4] == 'stall'
    joints = ('a', 'b', 'c')
    record = HealthRecord(path, timeout_s=60.0)
    def session(k):
        return Session(robot, 'test-arm', joints, 1.7e9 + k, tuple(JointSession(j, stiffness=4e4 + k) for j in joints))
    for k in range(count):
        record.append(session(k))
    if stall:
        def trace(statement):  # stop inside the next session's transaction, after its first joint row
            if statement.startswith('INSERT INTO joint_sessions'):
                print('inside', flush=True)
                time.sleep(600)
        record._connection.set_trace_callback(trace)
        record.append(session(count))
    print('done', flush=True)
''')


def _writer(path, robot, count, stall=False):
    return subprocess.Popen([sys.executable, '-c', WRITER, str(path), robot, str(count), 'stall' if stall else '-'],
                            stdout=subprocess.PIPE, text=True)


def test_a_writer_killed_inside_a_session_loses_that_session_only_and_readers_go_on(tmp_path):
    path = tmp_path / 'health.sqlite3'
    writer = _writer(path, 'cell-1', 5, stall=True)
    try:
        assert writer.stdout.readline().strip() == 'inside'
        with HealthRecord(path, readonly=True) as reader:  # the open write transaction does not block readers
            assert len(reader.history('cell-1')) == 5
        os.kill(writer.pid, signal.SIGKILL)
        writer.wait(timeout=30)
    finally:
        if writer.poll() is None:
            writer.kill()
            writer.wait()
    with HealthRecord(path) as record:
        history = record.history('cell-1')
        assert len(history) == 5  # every committed session, nothing of the killed one
        assert np.isfinite(history.values['stiffness']).all()
        record.append(session(6))  # and the record takes the next session
        assert record.session_count('cell-1') == 6


def test_two_writers_append_side_by_side(tmp_path):
    path = tmp_path / 'health.sqlite3'
    with HealthRecord(path) as record:
        record.append(session(0, robot='cell-1'))
    writers = [_writer(path, robot, 25) for robot in ('cell-1', 'cell-2')]
    for writer in writers:
        assert writer.communicate(timeout=120)[0].strip() == 'done'
        assert writer.returncode == 0
    with HealthRecord(path, readonly=True) as record:
        assert record.session_count('cell-1') == 26 and record.session_count('cell-2') == 25
        for robot in ('cell-1', 'cell-2'):
            assert np.isfinite(record.history(robot).values['stiffness']).all()


def test_times_and_values_are_plain_numbers_in_the_file(tmp_path):
    path = tmp_path / 'h.sqlite3'
    with HealthRecord(path) as record:
        record.append(session(1))
    connection = sqlite3.connect(path)
    row = connection.execute('SELECT typeof(started_utc), typeof(duration_s), typeof(operating_hours) '
                             'FROM sessions').fetchone()
    connection.close()
    assert row == ('real', 'real', 'null')


def test_the_schema_page_names_every_column_with_its_unit():
    from pathlib import Path

    from dynid.health.schema import JOINT_COLUMNS

    page = (Path(__file__).resolve().parents[1] / 'docs' / 'health.md').read_text()
    for column, (unit, meaning, (low, high)) in JOINT_COLUMNS.items():
        assert f'| `{column}` | {unit} | [{low:g}, {high:g}] | {meaning} |' in page, column
    assert f'Schema (version {SCHEMA_VERSION})' in page
