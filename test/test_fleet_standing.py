"""Each robot's place in its fleet on the fleet's page, in fleet.json and in the health record's judgements
(dynid.fleet.standing, dynid health --fleet-report --fleet-results, dynid batch's stored places, dynid fleet prior
--json): a robot whose friction stands apart is named with the joint, the parameter and the size, without a trend;
a healthy fleet has none named; a fleet too small to judge says why."""

import json
from pathlib import Path

import numpy as np
import pytest

from builders import fleet_record, fleet_results, members_of, saved
from cli_run import run_dynid
from dynid.cli import main
from dynid.fleet.batch import Outcome, fleet_places
from dynid.fleet.report import fleet_json, judge_fleet
from dynid.fleet.standing import standings_by_model
from dynid.health.job import judge_robots
from dynid.health.record import HealthRecord
from dynid.model import load_robot

ROBOTS = 24
#: the faulty robot: its elbow's Coulomb friction +60 %
FAULT = (7, 'Fc_3', 1.6)
FAULTY, JOINT = 'cell-07', 'elbow_joint'


@pytest.fixture(scope='module')
def ur5e():
    return load_robot('ur5e')


def _fleet(folder: Path, robot, robots: int, faults=()) -> tuple[Path, list[str]]:
    """A record of ``robots`` twin robots (a few sessions each, no trend worth a forecast needed) and their results."""
    record = folder / 'health.sqlite3'
    fleet_record(record, robots=robots, sessions=8)
    (folder / 'results').mkdir()
    return record, saved(folder / 'results', fleet_results(robot, robots, seed=5, faults=faults))


@pytest.fixture(scope='module')
def faulty(tmp_path_factory, ur5e):
    folder = tmp_path_factory.mktemp('standing')
    record, paths = _fleet(folder, ur5e, ROBOTS, faults=(FAULT,))
    return folder, record, paths


def test_the_faulty_robot_is_named_in_fleet_json_and_on_the_page(faulty, tmp_path, capsys):
    _, record, paths = faulty
    out = tmp_path / 'page'
    assert main(['health', '--db', str(record), '--fleet-report', str(out), '--fleet-json',
                 '--fleet-results', *paths]) == 0
    data = json.loads(capsys.readouterr().out)
    assert json.loads((out / 'fleet.json').read_text())['standing'] == data['standing']
    standing = data['standing']
    assert standing['source'] == 'results given' and standing['why_not'] is None
    assert [(e['robot'], e['joint'], e['parameter']) for e in standing['apart']] == [(FAULTY, JOINT, 'Fc_3')]
    entry = standing['apart'][0]
    # +60 % on a fleet of 5 % spread: the size is the fault's, within the robots' own draws (±3 spreads)
    assert 60 - 3 * 5 * 1.6 < entry['relative_percent'] < 60 + 3 * 5 * 1.6
    assert entry['value'] == pytest.approx(entry['centre'] * (1 + entry['relative_percent'] / 100))
    assert entry['z'] == pytest.approx((entry['value'] - entry['centre']) / entry['spread'])
    assert abs(entry['z_own']) <= abs(entry['z']) and abs(entry['z_own']) > entry['threshold']
    assert entry['others'] == ROBOTS - 1 and entry['kind'] == 'friction'
    robots = {r['robot']: r for r in data['robots']}
    assert robots[FAULTY]['fleet']['state'] == 'warn' and robots[FAULTY]['state'] == 'warn'
    assert all(r['fleet']['state'] == 'ok' and not r['fleet']['apart'] for name, r in robots.items() if name != FAULTY)
    page = (out / 'index.html').read_text()
    section = page[page.index('Robots standing apart from their fleet'):page.index('<h2>Robots</h2>')]
    assert FAULTY in section and 'Fc_3 (friction)' in section and JOINT in section
    assert f'{entry["relative_percent"]:+.1f} %' in section and f'{entry["z_own"]:+.1f}' in section
    assert not any(f'>cell-{r:02d}<' in section for r in range(ROBOTS) if r != FAULT[0])
    own = (out / robots[FAULTY]['page']).read_text()
    assert 'Against its fleet' in own and 'Stands apart from its fleet in 1 parameter' in own and 'Fc_3' in own
    assert 'no parameter stands apart' in (out / robots['cell-00']['page']).read_text()


def test_the_record_keeps_the_judgement_and_the_next_page_reads_it(faulty, tmp_path, capsys):
    folder, _, paths = faulty
    record = tmp_path / 'health.sqlite3'
    record.write_bytes((folder / 'health.sqlite3').read_bytes())
    assert main(['health', '--db', str(record), '--fleet-json', '--fleet-results', *paths,
                 '--store-judgements']) == 0
    capsys.readouterr()
    health = judge_robots(record).healths  # no results given: the record's stored places
    place = health[FAULTY].fleet
    assert place is not None and place.state == 'warn' and health[FAULTY].state == 'warn'
    assert [(e['joint'], e['parameter']) for e in place.apart] == [(JOINT, 'Fc_3')]
    text = place.text
    assert text.startswith('stands apart from its fleet in 1 parameter: Fc_3 (friction, elbow_joint)')
    assert f'against those of the {ROBOTS - 1} other ur5e robots' in text
    assert 'spread and of that spread with its own σ' in text
    assert all(h.fleet is not None and not h.fleet.apart for name, h in health.items() if name != FAULTY)
    assert main(['health', '--db', str(record), '--robot', FAULTY, '--json']) == 0
    judged = json.loads(capsys.readouterr().out)['robots'][0]
    assert judged['fleet']['apart'][0]['parameter'] == 'Fc_3' and judged['state'] == 'warn'
    data = fleet_json(judge_fleet(record))
    assert data['standing']['source'] == 'the record'
    assert [(e['robot'], e['parameter']) for e in data['standing']['apart']] == [(FAULTY, 'Fc_3')]


def test_the_batch_judges_each_robots_newest_result_and_stores_it(faulty, tmp_path):
    folder, _, paths = faulty
    record = tmp_path / 'health.sqlite3'
    record.write_bytes((folder / 'health.sqlite3').read_bytes())
    # an older healthy result of the faulty robot, then its newest: the newest is judged
    older = Outcome('old-bag', FAULTY, 'skipped', result=paths[0], started_utc=1.0)
    outcomes = [older] + [Outcome(f'bag-{r}', Path(p).stem, 'identified', result=p, started_utc=2.0)
                          for r, p in enumerate(paths)] + [Outcome('bad', 'cell-99', 'failed')]
    (group,) = fleet_places(outcomes)
    assert group.model == 'ur5e' and len(group.robots) == ROBOTS and not group.why_not
    assert [(e.robot, e.name) for e in group.apart] == [(FAULTY, 'Fc_3')]
    with HealthRecord(record) as opened:
        assert len(opened.store_standings(group.places())) == ROBOTS
        stored = opened.standings()
    newest = next(m for m in group.members if m.name == FAULTY)
    assert newest.path == paths[FAULT[0]]  # its newest result, not the older one
    assert stored[FAULTY].apart[0]['parameter'] == 'Fc_3' and stored[FAULTY].result_sha256 == newest.sha256


def test_a_healthy_fleet_has_none_named(tmp_path, ur5e, capsys):
    record, paths = _fleet(tmp_path, ur5e, ROBOTS)
    out = tmp_path / 'page'
    assert main(['health', '--db', str(record), '--fleet-report', str(out), '--fleet-json',
                 '--fleet-results', *paths]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data['standing']['apart'] == [] and data['standing']['why_not'] is None
    assert all(r['fleet']['state'] == 'ok' for r in data['robots'])
    assert 'No robot stands apart from its fleet.' in (out / 'index.html').read_text()


def test_a_fleet_under_three_robots_is_not_judged_and_the_page_says_why(tmp_path, ur5e, capsys):
    record, paths = _fleet(tmp_path, ur5e, 2, faults=((1, 'Fc_3', 1.6),))
    out = tmp_path / 'page'
    assert main(['health', '--db', str(record), '--fleet-report', str(out), '--fleet-json',
                 '--fleet-results', *paths]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data['standing']['apart'] == [] and all(r['fleet'] is None for r in data['robots'])
    why = data['standing']['why_not']
    assert why.startswith('Not judged: 2 robots of ur5e: each robot is judged against the others')
    page = (out / 'index.html').read_text()
    assert 'Not judged: 2 robots of ur5e' in page and 'No robot stands apart' not in page
    assert main(['health', '--db', str(record), '--fleet-json']) == 0  # no results at hand: said so too
    assert "no robot's identification results at hand" in json.loads(capsys.readouterr().out)['standing']['why_not']


def test_fleet_prior_json_holds_the_prior_and_the_standings_whole_or_not_at_all(faulty, tmp_path):
    _, _, paths = faulty
    done = run_dynid('fleet', 'prior', *paths, '-o', str(tmp_path / 'prior.yaml'), '--json', '-')
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)  # the text went to the standard error
    assert 'stand apart' in done.stderr and f'wrote {tmp_path / "prior.yaml"}' in done.stderr
    assert data['prior']['robots'] == ROBOTS and data['prior']['pooled']['friction'] == 18
    assert [(s['robot'], [e['parameter'] for e in s['apart']]) for s in data['standing']['standings']
            if s['apart']] == [(FAULTY, ['Fc_3'])]
    target = tmp_path / 'fleet.json'
    done = run_dynid('fleet', 'prior', *paths, '-o', str(tmp_path / 'prior2.yaml'), '--json', str(target))
    assert done.returncode == 0, done.stderr
    written = json.loads(target.read_text())
    assert written['standing'] == data['standing'] and written['prior']['file'] == str(tmp_path / 'prior2.yaml')
    assert written['prior']['parameters'] == data['prior']['parameters']
    again = run_dynid('fleet', 'prior', *paths, '-o', str(tmp_path / 'prior3.yaml'), '--json', str(target))
    assert again.returncode == 2 and 'refusing to overwrite' in again.stderr
    assert not (tmp_path / 'prior3.yaml').exists()
    missing = run_dynid('fleet', 'prior', *paths[:3], str(tmp_path / 'none.yaml'), '-o', str(tmp_path / 'p4.yaml'),
                        '--json', str(tmp_path / 'other.json'))
    assert missing.returncode == 2 and not (tmp_path / 'other.json').exists() and not (tmp_path / 'p4.yaml').exists()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith('.')]


def test_a_robot_off_by_its_own_understated_sigma_is_not_named(ur5e):
    """A robot whose mx_6 lies 1.2 thresholds from the fleet by its own σ is named while its residual rows are white;
    where they are correlated at 0.5 (its σ understate its errors by √3) the same value is not, and its entry's σ is
    the widened one."""
    results = fleet_results(ur5e, ROBOTS, seed=5)
    robot = results[7]
    k = robot.parameter_names.index('mx_6')
    others = np.array([r.values[k] for i, r in enumerate(results) if i != 7])
    spread = 1.4826 * np.median(np.abs(others - np.median(others)))
    robot.std[k] = 8.0 * spread
    first = standings_by_model(members_of(results))[0].standings[7]
    threshold = next(e.threshold for e in first.entries if e.name == 'mx_6')
    robot.values[k] = np.median(others) + 1.2 * threshold * np.hypot(spread, robot.std[k])
    white = standings_by_model(members_of(results))[0].standings[7]
    assert [e.name for e in white.apart] == ['mx_6']
    robot.metrics = {'train': {'residual_lag1_autocorrelation': dict.fromkeys(ur5e.joint_names, 0.5)}}
    correlated = standings_by_model(members_of(results))[0].standings[7]
    assert not correlated.apart
    entry = next(e for e in correlated.entries if e.name == 'mx_6')
    assert entry.own_std == pytest.approx(np.sqrt(3.0) * robot.std[k])
