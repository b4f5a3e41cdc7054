"""The fleet's page and JSON (dynid.fleet.report, dynid health --fleet-report/--fleet-json): worn joints of
twin robots ranked first, each robot's own page linked, the folder written whole or not at all."""

import json
from pathlib import Path

import pytest

from dynid.cli import main
from dynid.errors import InputError
from dynid.fleet.report import judge_fleet, write_fleet_report
from dynid.fleet.synthetic import wear_sessions
from dynid.health.record import HealthRecord
from dynid.sim.wear import SessionSchedule, WearChange

WORN = {'cell-02': 'elbow_joint', 'cell-05': 'wrist_1_joint'}


def fill(target, robots: int = 6, sessions: int = 40):
    with HealthRecord(target) as record:
        for r in range(robots):
            name = f'cell-{r:02d}'
            changes = [WearChange(15.0, (WORN[name],), coulomb_per_week=0.08)] if name in WORN else []
            for session in wear_sessions(name, SessionSchedule.regular(sessions, changes=changes, seed=r), seed=r):
                record.append(session)


@pytest.fixture(scope='module')
def record(tmp_path_factory):
    path = tmp_path_factory.mktemp('fleet') / 'health.sqlite3'
    fill(path)
    return path


def test_worn_joints_lead_the_ranking_and_every_robot_has_its_page(record, tmp_path, capsys):
    folder = tmp_path / 'fleet_report'
    assert main(['health', '--db', str(record), '--fleet-report', str(folder), '--fleet-json']) == 0
    data = json.loads(capsys.readouterr().out)
    top = [(e['robot'], e['joint'], e['quantity']) for e in data['by_forecast'][:2]]
    assert sorted(top) == sorted((robot, joint, 'friction') for robot, joint in WORN.items())
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
    assert {e.robot for e in fleet.by_forecast[:2]} == set(WORN)
    assert fleet.pages['cell-00'] == 'robots/cell-00/index.html'
    path = write_fleet_report(fleet, record.parent / 'again')
    assert (path / 'robots' / 'cell-05' / 'index.html').exists()
