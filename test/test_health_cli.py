"""``dynid health`` (judge, import, event) and ``dynid estimate`` appending to the health record.

Two short twin recordings (UR5e, 1.2 s at 250 Hz, made with ``dynid simulate``) replayed against a result
holding the twin's truth: the commands are checked, not the estimates of a second of data.
"""

import hashlib
import json
import sqlite3

import pytest
import yaml

from builders import health_record, truth_result
from dynid.cli import main
from dynid.health.record import HealthRecord


@pytest.fixture(scope='module')
def bags(tmp_path_factory):
    folder = tmp_path_factory.mktemp('health_cli')
    paths = []
    for k, temperature in enumerate((15.0, 35.0)):
        bag = folder / f'session{k}'
        assert main(['simulate', '--quiet', '--duration', '1.2', '--rate', '250', '--temperature', str(temperature),
                     '--seed', str(k), '-o', str(bag)]) == 0
        paths.append(bag)
    params = truth_result(yaml.safe_load((paths[0] / 'truth.yaml').read_text())).save(folder / 'result.yaml')
    return folder, paths, params


def test_import_records_one_session_per_bag_once_and_reports_bad_ones(bags, tmp_path, capsys):
    folder, paths, params = bags
    db = tmp_path / 'health.sqlite3'
    code = main(['health', 'import', *map(str, paths), str(tmp_path / 'missing'), '--params', str(params),
                 '--db', str(db), '--robot', 'cell-7'])
    out, err = capsys.readouterr()
    assert code == 2 and 'missing' in err and '2 of 3 bags recorded' in out
    assert 'stamps are not dates' in out  # simulated bags are dated by their files
    with HealthRecord(db, readonly=True) as record:
        history = record.history('cell-7')
        assert record.inputs('cell-7') == {str(p) for p in paths}
    assert len(history) == 2 and history.model == 'ur5e'
    assert history.values['temperature_c'][:, 0] == pytest.approx([15.0, 35.0], abs=1.0)
    assert history.result_sha256[0] == hashlib.sha256(params.read_bytes()).hexdigest()
    assert (history.values['samples'] > 0).all()
    assert (history.values['load_rms_nm'] > 0).all()  # the session's conditions (schema version 3)
    assert history.conditions['mounting'] == ['0 0 -9.81'] * 2
    assert history.conditions['effort_meaning'] == ['torque'] * 2
    assert history.conditions['robot_file'] == ['ur5e'] * 2
    assert main(['health', 'import', str(paths[0]), '--params', str(params), '--db', str(db), '--robot', 'cell-7']) == 0
    assert 'already in the record' in capsys.readouterr().out
    with HealthRecord(db, readonly=True) as record:
        assert record.session_count('cell-7') == 2


def test_estimate_appends_its_session_to_the_default_record(bags, data_home, capsys):
    _, paths, params = bags
    assert main(['estimate', str(paths[1]), '--params', str(params), '--quiet', '--health-robot', 'cell-8']) == 0
    assert 'recorded session' in capsys.readouterr().out
    with HealthRecord(f'{data_home}/dynid/health.sqlite3', readonly=True) as record:
        assert record.session_count('cell-8') == 1
    assert main(['estimate', str(paths[1]), '--params', str(params), '--quiet', '--health-robot', 'cell-8',
                 '--no-record']) == 0
    with HealthRecord(f'{data_home}/dynid/health.sqlite3', readonly=True) as record:
        assert record.session_count('cell-8') == 1


def test_judge_as_text_json_and_page(tmp_path, capsys):
    db = tmp_path / 'health.sqlite3'
    health_record(db)
    assert main(['health', '--db', str(db)]) == 0
    text = capsys.readouterr().out
    assert 'cell-1 (test-arm, 40 sessions): ERROR' in text and 'limit in' in text
    assert main(['health', '--db', str(db), '--json', '--friction-limit', '0.2', '--report', str(tmp_path / 'r')]) == 0
    document = json.loads(capsys.readouterr().out)
    (robot,) = document['robots']
    assert robot['joints']['c']['friction']['limit'] == 0.2 and robot['joints']['c']['friction']['state'] == 'error'
    assert robot['joints']['b']['stiffness']['changes'][0]['session'] == 25
    assert (tmp_path / 'r' / 'index.html').exists()


def test_events_are_recorded_for_known_robots_and_joints(tmp_path, capsys):
    db = tmp_path / 'health.sqlite3'
    health_record(db)
    assert main(['health', 'event', 'collision', '--joint', 'b', '--note', 'hit the fixture', '--time',
                 '2023-12-01T10:00', '--db', str(db)]) == 0
    with HealthRecord(db, readonly=True) as record:
        events = record.history('cell-1').events
    assert [e.kind for e in events] == ['gearbox_swap', 'collision'] and events[1].note == 'hit the fixture'
    assert main(['health', 'event', 'collision', '--joint', 'z', '--db', str(db)]) == 2
    assert "'z' is not a joint" in capsys.readouterr().err
    assert main(['health', 'event', 'reset', '--time', 'yesterday', '--db', str(db)]) == 2


def test_bad_records_are_refused_with_exit_2_and_kept(tmp_path, capsys):
    text = tmp_path / 'notes.sqlite3'
    text.write_text('my notes\n')
    assert main(['health', '--db', str(text)]) == 2
    assert 'not an SQLite file' in capsys.readouterr().err and text.read_text() == 'my notes\n'
    assert main(['health', '--db', str(tmp_path / 'none.sqlite3')]) == 2
    assert 'no such health record' in capsys.readouterr().err
    newer = tmp_path / 'newer.sqlite3'
    health_record(newer)
    connection = sqlite3.connect(newer)
    connection.execute('PRAGMA user_version = 99')
    connection.commit()
    connection.close()
    assert main(['health', '--db', str(newer), '--json']) == 2
    assert 'newer than this dynid reads' in capsys.readouterr().err
