"""Re-identification of a fleet's recordings on a local Dask cluster (dynid.fleet.batch, dynid batch): the
results are those of dynid identify run one by one, a broken recording is reported while the others go on,
a second run skips what is done, and each identified recording adds a session of its robot to the record and keeps
its result there."""

import json
import sqlite3

import numpy as np
import pytest

pytest.importorskip('dask.distributed', reason='dask[distributed] is not installed (pip install -r requirements.txt)')

from dynid.cli import main  # noqa: E402
from dynid.cli.batch import identify_command  # noqa: E402
from dynid.fleet.batch import discover, reidentify, summary_table  # noqa: E402
from dynid.health.record import HealthRecord  # noqa: E402
from dynid.identify.result.result import IdentificationResult  # noqa: E402


@pytest.fixture(scope='module')
def tree(tmp_path_factory):
    root = tmp_path_factory.mktemp('recordings')
    bags = []
    for k, (robot, day) in enumerate((('cell-1', '2026-11-01'), ('cell-1', '2026-11-02'), ('cell-2', '2026-11-01'))):
        bag = root / robot / day / f'bag{k}'
        assert main(['simulate', '--quiet', '--duration', '12', '--rate', '250', '--seed', str(k), '-o', str(bag)]) == 0
        bags.append(bag)
    broken = root / 'cell-3' / '2026-11-01' / 'bag9'
    broken.mkdir(parents=True)
    (broken / 'metadata.yaml').write_text('rosbag2_bagfile_information: {version: 5, storage_identifier: mcap}\n')
    (broken / 'bag9_0.mcap').write_bytes(b'\x89MCAP0\r\n' + b'\x00' * 64)  # a recording cut off at its start
    return root, bags, broken


def test_a_tree_is_identified_as_one_by_one_and_the_broken_recording_reported(tree, tmp_path):
    root, bags, broken = tree
    db = tmp_path / 'health.sqlite3'
    seen = []
    outcomes = reidentify(root, 'ur5e', command=identify_command, workers=2, db=db,
                          progress=lambda o, done, total: seen.append((done, total)))
    assert [o.robot for o in outcomes] == ['cell-1', 'cell-1', 'cell-2', 'cell-3']
    assert [o.status for o in outcomes] == ['identified'] * 3 + ['failed']
    assert str(broken) in outcomes[3].bag and outcomes[3].error and seen[-1] == (4, 4)
    assert all(0 < o.cpu_s for o in outcomes[:3])  # the worker's CPU time of each identification
    assert not (broken.parent / 'bag9.result.yaml').exists()
    for bag in bags:  # the same as dynid identify on that recording alone
        assert main(['identify', str(bag), '-o', str(tmp_path / f'{bag.name}.yaml'), '--quiet']) == 0
        alone = IdentificationResult.load(tmp_path / f'{bag.name}.yaml')
        batch = IdentificationResult.load(bag.with_name(bag.name + '.result.yaml'))
        assert batch.parameter_names == alone.parameter_names
        np.testing.assert_array_equal(batch.values, alone.values)
        np.testing.assert_array_equal(batch.std, alone.std)
    with HealthRecord(db, readonly=True) as record:
        assert record.robots() == ['cell-1', 'cell-2'] and record.session_count() == 3
        history = record.history('cell-2')
        fc = IdentificationResult.load(bags[2].with_name(bags[2].name + '.result.yaml')).friction()
        assert history.values['coulomb_nm'][0] == pytest.approx([fc[j]['Fc'] for j in history.joint_names])
        stored = {r.robot: r.basis for r in record.stored_judgements()}  # judged once each, for the fleet page
        assert stored['cell-1'].sessions == 2 and stored['cell-2'].sessions == 1
        newest = dict(record.newest_results(document=True))  # every result kept, each robot's newest read back
    files = {bag.name: bag.with_name(bag.name + '.result.yaml') for bag in bags}
    assert sorted(newest) == ['cell-1', 'cell-2'] and newest['cell-2'].result_file == str(files['bag2'])
    assert newest['cell-2'].result_text() == files['bag2'].read_text()
    assert newest['cell-1'].result_file in (str(files['bag0']), str(files['bag1']))
    with sqlite3.connect(db) as connection:
        assert connection.execute('SELECT count(*) FROM results').fetchone()[0] == 3
    table = summary_table(outcomes)
    assert '3 identified, 0 skipped, 1 failed of 4 recordings' in table and 'bag9' in table

    # done before: skipped, and no second session
    again = reidentify(root, 'ur5e', command=identify_command, workers=1, db=db)
    assert [o.status for o in again] == ['skipped'] * 3 + ['failed']
    with HealthRecord(db, readonly=True) as record:
        assert record.session_count() == 3 and len(record.newest_results()) == 2
    with sqlite3.connect(db) as connection:  # the results found done are in the record once
        assert connection.execute('SELECT count(*) FROM results').fetchone()[0] == 3
    meta = bags[0].with_name(bags[0].name + '.result.json')
    data = json.loads(meta.read_text())
    data['fingerprint']['inputs'][0]['sha256'] = '0' * 64  # as if the recording had changed since
    meta.write_text(json.dumps(data))
    assert reidentify(root, 'ur5e', command=identify_command, workers=1)[0].status == 'identified'


def test_the_command_reads_a_manifest_and_exits_2_naming_the_failures(tree, tmp_path, capsys):
    root, bags, broken = tree
    manifest = tmp_path / 'manifest.yaml'
    manifest.write_text('recordings:\n' + ''.join(f'  - {{bag: {b}, robot: unit-{k}, model: ur5e}}\n'
                                                  for k, b in enumerate([bags[0], broken])))
    assert [(j.robot, j.model) for j in discover(manifest)] == [('unit-0', 'ur5e'), ('unit-1', 'ur5e')]
    assert main(['batch', str(manifest), '--workers', '1', '--json']) == 2
    captured = capsys.readouterr()
    outcomes = json.loads(captured.out)
    assert [o['status'] for o in outcomes] == ['skipped', 'failed'] and '[2/2]' in captured.err
    assert main(['batch', str(manifest), '--workers', '1', '--identify-args=--no-such-option', '--json']) == 2
    assert all('bad identify options' in o['error'] for o in json.loads(capsys.readouterr().out))
    assert main(['batch', str(tmp_path / 'nothing')]) == 2
    assert 'no such manifest or recordings folder' in capsys.readouterr().err
