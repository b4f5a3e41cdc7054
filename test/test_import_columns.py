"""dynid import --columns: an index with an offset ({i+7}) and columns named by their position (#K), so that a log
without a header (as the dynamic_calibration UR10e CSVs: time, 6 positions, 6 velocities, 6 currents, ...) is read
with one map whatever its file is called (issue 32)."""

import numpy as np
import pytest

from dynid.cli import main
from dynid.io.bag import read_bag
from dynid.io.csv_log import expand, parse_column_spec
from dynid.io.importing import import_logs
from dynid.io.log_checks import LogLimits

SPEC = 'time=#0,q=#{n},dq=#{i+7},current=#{i+13}'


def _headerless(path, seconds=3.0, rate=500.0):
    """A UR10e-like log without a header: t, q (6), dq (6), current (6), then 12 columns the map does not use."""
    t = 798.467 + np.arange(0.0, seconds, 1.0 / rate)
    phase = np.outer(t - t[0], np.linspace(0.5, 1.0, 6))
    q, dq, current = 0.3 * np.sin(phase), 0.3 * np.cos(phase) * np.linspace(0.5, 1.0, 6), 0.1 * np.cos(phase) + 1.0
    np.savetxt(path, np.column_stack([t, q, dq, current, np.zeros((t.size, 12))]), delimiter=',', fmt='%.9f')
    return t, q, dq, current


def test_offsets_and_positions_expand_per_joint():
    assert expand('#{i+7}', 'abc') == ['#7', '#8', '#9']
    assert expand('p{n-1}_{name}', 'ab') == ['p0_a', 'p1_b']
    assert expand('pos{i:02d}', 'ab') == ['pos00', 'pos01']  # a format spec still applies


def test_a_headerless_log_is_read_by_position(ur5e, tmp_path):
    t, q, dq, current = _headerless(tmp_path / 'ur-20_02_10-30sec_12harm.csv')
    dataset, report, _ = import_logs([tmp_path / 'ur-20_02_10-30sec_12harm.csv'], parse_column_spec(SPEC),
                                     ur5e.joint_names, LogLimits.of_robot(ur5e))
    assert not report.dropped
    start = np.searchsorted(t - t[0], dataset.t[0] + 0.5)
    k = np.searchsorted(dataset.t, t[start] - t[0])
    np.testing.assert_allclose(dataset.q[k], q[start], atol=1e-6)
    np.testing.assert_allclose(dataset.dq[k], dq[start], atol=1e-6)
    np.testing.assert_allclose(dataset.current[k], current[start], atol=1e-6)


def test_the_same_map_reads_another_file_and_the_cli_writes_the_bag(ur5e, tmp_path):
    _, q, _, current = _headerless(tmp_path / 'other_run.csv')
    code = main(['import', str(tmp_path / 'other_run.csv'), '--columns', SPEC, '--robot', 'ur5e', '-o',
                 str(tmp_path / 'bag')])
    assert code == 0
    back = read_bag(tmp_path / 'bag', ur5e.joint_names)
    assert np.allclose(back.q[0], q[0], atol=1e-6) and back.current is not None
    assert np.allclose(back.current.mean(axis=0), current.mean(axis=0), atol=0.01)


def test_a_header_name_starting_with_hash_is_that_column(ur5e, tmp_path):
    header = ['t', *(f'#{j}' for j in range(6)), *(f'v{j}' for j in range(6))]
    t = np.arange(0.0, 2.0, 0.008)
    q = 0.2 * np.sin(np.outer(t, np.linspace(0.5, 1.0, 6)))
    np.savetxt(tmp_path / 'hash.csv', np.column_stack([t, q, np.gradient(q, t, axis=0)]), delimiter=',',
               header=','.join(header), comments='')
    dataset, _, _ = import_logs([tmp_path / 'hash.csv'], parse_column_spec('time=t,q=#{i},dq=v{i}'),
                                ur5e.joint_names, LogLimits.of_robot(ur5e))
    assert np.allclose(dataset.q[0], q[0], atol=1e-6)  # the header's '#0'…'#5', not the columns at 0…5


@pytest.mark.parametrize('spec', ['time=#0,q=#{i*2}', 'time=#0,q=#{k}', 'time=#0,q=#{i+}', 'time=#0,q=p{i'])
def test_a_bad_field_is_refused_naming_the_columns(spec):
    with pytest.raises(Exception, match='columns'):
        parse_column_spec(spec)


def test_a_position_beyond_the_table_is_named_missing(ur5e, tmp_path, capsys):
    _headerless(tmp_path / 'short.csv')
    code = main(['import', str(tmp_path / 'short.csv'), '--columns', 'time=#0,q=#{i+40}', '--robot', 'ur5e', '-o',
                 str(tmp_path / 'bag')])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and '#40' in err[0], err
