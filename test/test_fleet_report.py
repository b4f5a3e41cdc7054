"""The fleet's page and JSON (dynid.fleet.report, dynid health --fleet-report/--fleet-json): worn joints of
twin robots ranked first, each robot's own page linked, the folder written whole or not at all; stored
judgements (dynid.health.stored) give the same page as judging every robot, and go stale with the record."""

import json
import re
import shutil
import sqlite3
from pathlib import Path

import numpy as np
import pytest

from builders import FLEET_WORN, fleet_record
from dynid.cli import main
from dynid.errors import InputError
from dynid.fleet.report import judge_fleet, write_fleet_report
from dynid.fleet.synthetic import wear_sessions
from dynid.health.assessment import assess
from dynid.health.record import Event, HealthRecord
from dynid.health.settings import HealthSettings
from dynid.health.stored import decode, encode, store_judgement
from dynid.sim.wear import SessionSchedule


@pytest.fixture(scope='module')
def record(tmp_path_factory):
    path = tmp_path_factory.mktemp('fleet') / 'health.sqlite3'
    fleet_record(path)
    return path


def test_worn_joints_lead_the_ranking_and_every_robot_has_its_page(record, tmp_path, capsys):
    folder = tmp_path / 'fleet_report'
    assert main(['health', '--db', str(record), '--fleet-report', str(folder), '--fleet-json']) == 0
    data = json.loads(capsys.readouterr().out)
    top = [(e['robot'], e['joint'], e['quantity']) for e in data['by_forecast'][:2]]
    assert sorted(top) == sorted((robot, joint, 'friction') for robot, joint in FLEET_WORN.items())
    assert all(e['forecast_days'] is not None for e in data['by_forecast'][:2])
    assert [r['robot'] for r in data['robots']][:2] == [t[0] for t in top]
    assert len(data['robots']) == 6 and json.loads((folder / 'fleet.json').read_text())['robots'] == data['robots']
    page = (folder / 'index.html').read_text()
    for robot in data['robots']:
        assert f'href="{robot["page"]}"' in page
        own = (folder / robot['page']).read_text()
        assert robot['robot'] in own and 'href="../../index.html"' in own
    assert not [p for p in tmp_path.iterdir() if p.name.startswith('.')]  # no staging left behind


def test_the_folder_is_written_whole_or_left_as_it_was(record, tmp_path, monkeypatch):
    folder = tmp_path / 'out'
    fleet = judge_fleet(record)
    write_fleet_report(fleet, folder)
    before = {p.relative_to(folder): p.read_bytes() for p in folder.rglob('*') if p.is_file()}
    assert len(before) > 2

    calls, write = [], Path.write_text

    def full_disk(path, *args, **kwargs):  # the third file fails: the old folder stays as it was
        calls.append(path)
        if len(calls) == 3:
            raise OSError(28, 'No space left on device')
        return write(path, *args, **kwargs)
    monkeypatch.setattr(Path, 'write_text', full_disk)
    with pytest.raises(OSError):
        write_fleet_report(fleet, folder)
    monkeypatch.undo()
    assert {p.relative_to(folder): p.read_bytes() for p in folder.rglob('*') if p.is_file()} == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ['out']


def test_an_empty_or_missing_record_is_a_one_line_error(tmp_path, capsys):
    with pytest.raises(InputError, match='no such health record'):
        judge_fleet(tmp_path / 'missing.sqlite3')
    assert main(['health', '--db', str(tmp_path / 'missing.sqlite3'), '--fleet-json']) == 2
    assert 'no such health record' in capsys.readouterr().err


def test_the_ranking_reads_the_same_from_the_python_function(record):
    fleet = judge_fleet(record)
    assert {e.robot for e in fleet.by_forecast[:2]} == set(FLEET_WORN)
    assert fleet.pages['cell-00'] == 'robots/cell-00/index.html'
    path = write_fleet_report(fleet, record.parent / 'again')
    assert (path / 'robots' / 'cell-05' / 'index.html').exists()


def _files(fleet, folder) -> dict:
    """The report's files, the minute it was written left out."""
    write_fleet_report(fleet, folder)
    found = {}
    for path in sorted(folder.rglob('*')):
        if path.is_file():
            text = re.sub(r'written \d{4}-\d\d-\d\d \d\d:\d\d UTC', 'written', path.read_text())
            if path.name == 'fleet.json':
                document = json.loads(text)
                document.pop('written_utc')
                text = json.dumps(document)
            found[path.relative_to(folder)] = text
    return found


def _judged_afresh(path, tmp_path, settings=None):
    """The fleet judged from all its sessions: a copy of the record without its stored judgements."""
    copy = tmp_path / f'fresh-{len(list(tmp_path.iterdir()))}.sqlite3'
    shutil.copy(path, copy)
    connection = sqlite3.connect(copy)
    connection.execute('DELETE FROM judgements')
    connection.commit()
    connection.close()
    fleet = judge_fleet(copy, settings)
    assert fleet.sections == {}
    fleet.source = f'record {path}'  # named as the record it was copied from
    return fleet


def test_stored_judgements_give_the_same_page_and_go_stale_with_new_sessions_events_and_settings(tmp_path):
    path = tmp_path / 'health.sqlite3'
    fleet_record(path, robots=5, sessions=30)
    assert judge_fleet(path).sections == {}  # nothing stored yet: every robot judged here
    assert len(judge_fleet(path, store=True).judged) == 5
    fast = judge_fleet(path)
    assert sorted(fast.sections) == [f'cell-{r:02d}' for r in range(5)] and fast.judged == []  # every robot read
    assert _files(fast, tmp_path / 'fast') == _files(_judged_afresh(path, tmp_path), tmp_path / 'full')
    assert [(e.robot, e.joint, e.quantity) for e in fast.by_forecast][:1] == [('cell-02', 'elbow_joint', 'friction')]

    later = wear_sessions('cell-01', SessionSchedule.regular(31, seed=1), seed=1)[-1]
    with HealthRecord(path) as record:
        record.append(later)  # a new session: cell-01's stored judgement is stale
        record.add_event('cell-03', Event('maintenance', later.started_utc - 86400.0 * 5, 'elbow_joint'))
        store_judgement(record, 'cell-04')  # stored by its writer again: still current
    again = judge_fleet(path)
    assert sorted(again.sections) == ['cell-00', 'cell-02', 'cell-04'] and again.judged == ['cell-01', 'cell-03']
    assert again.healths['cell-01'].sessions == 31 and again.healths['cell-03'].joints['elbow_joint'][
        'stiffness'].segments[-1] == 25
    assert _files(again, tmp_path / 'again') == _files(_judged_afresh(path, tmp_path), tmp_path / 'full-again')
    other = HealthSettings(warn_days=10.0)  # other judging settings: nothing stored is theirs
    assert judge_fleet(path, other).sections == {}
    assert judge_fleet(path, HealthSettings(db='elsewhere', session_s=600.0)).sections.keys() == {
        'cell-00', 'cell-02', 'cell-04'}  # where the record is and how a node writes it do not judge


def test_stored_judgements_read_back_bit_for_bit(record):
    with HealthRecord(record, readonly=True) as opened:
        history = opened.history('cell-02')
    health = assess(history, HealthSettings())
    back, section = decode(encode(health, 'section'))
    assert section == 'section' and back.to_dict() == health.to_dict()
    for joint, quantities in health.joints.items():
        for quantity, q in quantities.items():
            for name in ('t_days', 'value', 'compensated', 'relative'):
                np.testing.assert_array_equal(getattr(back.joints[joint][quantity], name), getattr(q, name))


def test_the_command_stores_the_judgements_it_made_and_the_next_page_reads_them(tmp_path, capsys):
    path = tmp_path / 'health.sqlite3'
    fleet_record(path, robots=3, sessions=20)
    assert main(['health', '--db', str(path), '--fleet-report', str(tmp_path / 'a'), '--store-judgements']) == 0
    assert '(3 robots, 0 of them from their stored judgements)' in capsys.readouterr().err
    assert main(['health', '--db', str(path), '--fleet-report', str(tmp_path / 'b')]) == 0
    assert '(3 robots, 3 of them from their stored judgements)' in capsys.readouterr().err
    assert main(['health', '--db', str(path), '--store-judgements']) == 2
    assert '--fleet-report or --fleet-json' in capsys.readouterr().err
