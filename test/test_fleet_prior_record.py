"""A fleet prior from the health record (``dynid fleet prior --db URL [--model NAME]``,
:func:`dynid.fleet.prior.record_members`): the results the record keeps (:mod:`dynid.health.results`, schema 6) give
the same prior, bit for bit, and the same standings as the same results given as files, and the same refusals by name
(the robot in place of the file, the field ``db``); on SQLite and on a real PostgreSQL server (testing/pg_server.py)."""

import dataclasses
import json
import math
import sqlite3
from pathlib import Path

import numpy as np
import pytest

from builders import UNPOOLABLE, fleet_results
from cli_run import run_dynid
from dynid.errors import InputError
from dynid.fleet.prior import FleetTable, fleet_prior, read_members, record_members
from dynid.fleet.standing import fleet_standing
from dynid.health.record import HealthRecord
from dynid.health.results import StoredResult, made_utc, store_results
from dynid.health.schema import APPLICATION_ID, MIGRATIONS, SCHEMA_VERSION
from dynid.identify.result.result import IdentificationResult
from dynid.identify.solve.fleet_prior_file import FleetPriorFile
from dynid.model import load_robot

START_UTC = 1.7e9


@pytest.fixture(scope='module')
def ur5e_model():
    return load_robot('ur5e')


def saved_as_robots(folder: Path, results, first: int = 0) -> list[str]:
    """Each result saved as ``cell-NN.yaml`` (the file's stem is the robot's name, as the record names it)."""
    return [str(result.save(folder / f'cell-{first + r:02d}.yaml')) for r, result in enumerate(results)]


def keep(db, paths, day: float = 0.0, model: str = 'ur5e') -> None:
    """Keep each result file in the record as its robot's (named by the file's stem), identified on ``day``."""
    with HealthRecord(db) as record:
        for path in paths:
            result = IdentificationResult.load(path)
            record.store_result(Path(path).stem, model, result.joint_names,
                                StoredResult.of(result, path, identified_utc=START_UTC + 86400.0 * day))


# ------------------------------------------------------------------------------------------ the same prior
def test_the_prior_from_the_record_is_the_prior_from_the_files_bit_for_bit(ur5e_model, tmp_path, target):
    results = fleet_results(ur5e_model, 12, seed=1, faults=((3, 'Fc_3', 1.6),))
    results[5] = dataclasses.replace(results[5], model={**results[5].model, 'held': ['Fv_2']})  # a term held
    for r, result in enumerate(results):  # residuals correlated as a real identification's: each its σ inflation
        result.metrics = {'train': {'residual_lag1_autocorrelation': dict.fromkeys(result.joint_names, 0.05 * r)}}
    paths = saved_as_robots(tmp_path, results)
    keep(target, paths)
    from_files, from_record = read_members(paths), record_members(target)
    assert [m.name for m in from_record] == [m.name for m in from_files] and all(m.origin == 'db' for m in from_record)
    assert [(m.path, m.sha256) for m in from_record] == [(m.path, m.sha256) for m in from_files]
    prior = fleet_prior(from_record)
    assert prior == fleet_prior(from_files)  # every centre, spread, count, the members, the model: == on floats
    assert prior.of_kind('friction')['Fv_2'].count == 11 and prior.robots == 12
    files_table, record_table = FleetTable.of(from_files), FleetTable.of(from_record)
    np.testing.assert_array_equal(record_table.values, files_table.values)
    np.testing.assert_array_equal(record_table.sigma, files_table.sigma)
    np.testing.assert_array_equal(record_table.inflation, files_table.inflation)
    assert files_table.inflation[0] == 1.0 and files_table.inflation[-1] > 1.5
    assert fleet_standing(record_table) == fleet_standing(files_table)  # robot-03's Fc_3 named from both
    assert [s.robot for s in fleet_standing(record_table) if s.apart] == ['cell-03']
    row = StoredResult.of(results[-1], paths[-1], identified_utc=START_UTC)  # stored before it kept the inflation:
    pooling = json.loads(row.pooling)  # from the result kept whole
    del pooling['std_inflation']
    old = dataclasses.replace(row, pooling=json.dumps(pooling))
    assert old.parameters().std_inflation == row.parameters().std_inflation == files_table.inflation[-1]


def test_each_robot_pools_its_newest_result_and_a_model_is_chosen(ur5e_model, tmp_path, target):
    (tmp_path / 'old').mkdir()
    older = saved_as_robots(tmp_path / 'old', fleet_results(ur5e_model, 4, seed=2))
    newer = saved_as_robots(tmp_path, fleet_results(ur5e_model, 4, seed=3))
    keep(target, older, day=0.0)
    keep(target, newer, day=5.0)
    keep(target, older, day=1.0)  # stored again: the record holds each result of a robot once
    assert fleet_prior(record_members(target)) == fleet_prior(read_members(newer))
    panda = load_robot('panda')
    pandas = saved_as_robots(tmp_path / 'old', fleet_results(panda, 3, seed=4), first=10)
    keep(target, pandas, model='panda')
    with pytest.raises(InputError, match=r"holds results of 2 robot models \(ur5e: 4 robots, panda: 3 robots\): "
                                         'choose one with model') as caught:
        record_members(target)
    assert caught.value.field == 'model'
    assert fleet_prior(record_members(target, model='ur5e')) == fleet_prior(read_members(newer))
    assert fleet_prior(record_members(target, model='panda')).robot == 'panda'
    with pytest.raises(InputError, match=r"holds no identification results of robot model 'ur10e' \(it holds ur5e: 4 "
                                         r'robots, panda: 3 robots\)'):
        record_members(target, model='ur10e')


# ------------------------------------------------------------------------------------------ refusals by name
@pytest.mark.parametrize('change, named', [UNPOOLABLE[k] for k in UNPOOLABLE if k != 'robot'],
                         ids=[k for k in UNPOOLABLE if k != 'robot'])
def test_results_in_the_record_that_cannot_be_pooled_are_refused_by_robot_and_field(ur5e_model, tmp_path, target,
                                                                                      change, named):
    results = fleet_results(ur5e_model, 4, seed=6)
    results[2] = change(results[2])
    paths = saved_as_robots(tmp_path, results)
    with HealthRecord(target) as record:  # each robot registered with its result's joints
        for path in paths:
            result = IdentificationResult.load(path)
            record.store_result(Path(path).stem, 'ur5e', result.joint_names,
                                StoredResult.of(result, path, identified_utc=START_UTC))
    with pytest.raises(InputError, match=f"{named}") as from_files:
        fleet_prior(read_members(paths))
    with pytest.raises(InputError, match=f"^db the result of robot 'cell-02'.*{named}") as from_record:
        fleet_prior(record_members(target))
    assert from_record.value.field == 'db' and from_files.value.field == 'results'
    assert str(from_record.value).split("robot 'cell-02'", 1)[1].replace("the result of robot 'cell-00'", 'FIRST') == \
        str(from_files.value).split("cell-02.yaml'", 1)[1].replace(f"{paths[0]!r}", 'FIRST')


def test_too_few_robots_no_results_and_one_result_for_two_robots_are_refused(ur5e_model, tmp_path, target):
    with HealthRecord(target):
        pass  # an empty record
    with pytest.raises(InputError, match=r'^db .* holds no identification results$'):
        record_members(target)
    paths = saved_as_robots(tmp_path, fleet_results(ur5e_model, 2, seed=5))
    keep(target, paths)
    with pytest.raises(InputError, match=r'^a prior of 2 robots \(db\): at least 3 needed$') as caught:
        fleet_prior(record_members(target))
    assert caught.value.field == 'db'
    result = IdentificationResult.load(paths[0])
    with HealthRecord(target) as record:
        record.store_result('cell-07', 'ur5e', result.joint_names,
                            StoredResult.of(result, paths[0], identified_utc=START_UTC))
    with pytest.raises(InputError, match=r"robots 'cell-00' and 'cell-07' hold the same result \(sha256 [0-9a-f]{12}\)"
                                         ': each robot once'):
        record_members(target)


# ------------------------------------------------------------------------------------------ the command
def test_dynid_fleet_prior_from_the_record_writes_the_prior_of_the_files(ur5e_model, tmp_path, target):
    paths = saved_as_robots(tmp_path, fleet_results(ur5e_model, 5, seed=8))
    keep(target, paths)
    done = run_dynid('fleet', 'prior', '--db', target, '--model', 'ur5e', '-o', str(tmp_path / 'db.yaml'))
    assert done.returncode == 0, done.stderr
    assert "5 robots' newest results read from" in done.stdout and 'fleet prior of 5 robots of ur5e' in done.stdout
    files = run_dynid('fleet', 'prior', *paths, '-o', str(tmp_path / 'files.yaml'))
    assert files.returncode == 0, files.stderr
    from_db, from_files = FleetPriorFile.load(tmp_path / 'db.yaml'), FleetPriorFile.load(tmp_path / 'files.yaml')
    assert from_db.parameters == from_files.parameters and from_db.members == from_files.members
    wrong = run_dynid('fleet', 'prior', '--db', target, '--model', 'panda', '-o', str(tmp_path / 'none.yaml'))
    assert wrong.returncode == 2 and 'Traceback' not in wrong.stderr and not (tmp_path / 'none.yaml').exists()
    assert wrong.stderr.strip().splitlines()[-1].startswith('dynid fleet: error: --db ')
    both = run_dynid('fleet', 'prior', paths[0], '--db', target, '-o', str(tmp_path / 'both.yaml'))
    assert both.returncode == 2 and 'either result files (RESULT) or --db, not both' in both.stderr


# ------------------------------------------------------------------------------------------ writing and migrating
def test_results_given_to_the_fleet_page_are_kept_and_a_version_5_record_migrates(ur5e_model, tmp_path):
    path = tmp_path / 'v5.sqlite3'
    connection = sqlite3.connect(path)
    for step in MIGRATIONS[:5]:  # the schema as version 5 of dynid wrote it
        connection.executescript(step)
    connection.execute(f'PRAGMA application_id = {APPLICATION_ID}')
    connection.execute('PRAGMA user_version = 5')
    connection.commit()
    connection.close()
    paths = saved_as_robots(tmp_path, fleet_results(ur5e_model, 4, seed=9))
    with HealthRecord(path) as record:
        assert record.schema_version == SCHEMA_VERSION == 6 and 'results' in record.columns()
        record.store_result('cell-00', 'ur5e', ur5e_model.joint_names,
                            StoredResult.of(IdentificationResult.load(paths[0]), paths[0], identified_utc=START_UTC))
        # as dynid health --fleet-results ... --store-judgements keeps them: for the robots the record holds
        assert store_results(record, read_members(paths)) == []  # cell-00's is there already, the others unknown
        for name in ('cell-01', 'cell-02'):
            record.store_result(name, 'ur5e', ur5e_model.joint_names,
                                StoredResult.of(IdentificationResult.load(paths[0]), paths[0], identified_utc=0.0))
        assert store_results(record, read_members(paths)) == ['cell-01', 'cell-02']
        newest = dict(record.newest_results(document=True))
    made = made_utc(IdentificationResult.load(paths[1]), paths[1])
    assert math.isfinite(made) and newest['cell-01'].identified_utc == made > 0.0
    assert newest['cell-01'].result_text() == Path(paths[1]).read_text()
