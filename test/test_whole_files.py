"""Outputs written whole or not at all (dynid.files.written), and stamps before 0 that never reach the bag writer."""

import numpy as np
import pytest
import yaml

from dynid.cli import main
from dynid.errors import InputError
from dynid.files import STAGING_SUFFIX, write_text, written
from dynid.io.bag import read_bag, write_bag
from dynid.io.dataset import Dataset


def _zero_clock_csv(path, n=400, period=0.008, seed=0):
    """A logger's CSV whose clock starts at 0 at its first stamp, which lags its tick more than the others do:
    re-timed onto the grid through the earliest stamps, its tick lies before 0."""
    rng = np.random.default_rng(seed)
    lag = rng.uniform(0.0, 0.3 * period, n)
    lag[0] = 0.3 * period
    t = np.arange(n) * period + lag
    t -= t[0]
    q = 0.3 * np.sin(2 * np.pi * 0.5 * np.arange(n) * period)[:, None] * np.linspace(0.5, 1.0, 6)
    header = 'time,' + ','.join(f'q{j}' for j in range(6))
    np.savetxt(path, np.column_stack([t, q]), delimiter=',', header=header, comments='', fmt='%.6f')
    return path


def _leftovers(folder):
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(STAGING_SUFFIX))


def test_log_whose_clock_starts_at_zero_imports(tmp_path, capsys):
    """Re-timing put the first tick before 0: write_bag died with OverflowError and left a 43-byte .mcap."""
    log = _zero_clock_csv(tmp_path / 'log.csv')
    output = tmp_path / 'bag'
    assert main(['import', str(log), '--columns', 'time=time,q=q{i}', '--robot', 'ur5e', '-o', str(output)]) == 0
    assert 'before 0' in capsys.readouterr().out
    report = yaml.safe_load((output / 'import.yaml').read_text())
    assert report['timing']['method'] == 'control grid' and 0 < report['timing']['start_shift_s'] < 0.008
    data = read_bag(output)
    assert data.n_samples > 390 and data.source['start_ns'] == 0
    assert np.allclose(np.diff(data.t), np.diff(data.t)[0], rtol=1e-6)
    assert _leftovers(tmp_path) == []


def test_write_bag_refuses_stamps_before_1970_and_leaves_nothing(tmp_path):
    data = Dataset(('a',), np.arange(5) * 0.01, np.zeros((5, 1)), np.zeros((5, 1)), tau=np.zeros((5, 1)))
    for start_ns, words in ((-5_000_000, 'before 1970'), (2 ** 63 - 10, 'beyond 2262')):
        with pytest.raises(InputError, match=words):
            write_bag(tmp_path / 'bag', data, start_ns=start_ns)
        assert list(tmp_path.iterdir()) == []
    data.t[2] = np.nan
    with pytest.raises(InputError, match='not all finite'):
        write_bag(tmp_path / 'bag', data)
    assert list(tmp_path.iterdir()) == []


def test_written_replaces_a_file_whole_or_keeps_the_old_one(tmp_path):
    path = tmp_path / 'out.yaml'
    write_text(path, 'old\n')
    with pytest.raises(RuntimeError), written(path) as target:
        target.write_text('half')
        raise RuntimeError('disk full')
    assert path.read_text() == 'old\n' and _leftovers(tmp_path) == []
    write_text(path, 'new\n')
    assert path.read_text() == 'new\n' and sorted(p.name for p in tmp_path.iterdir()) == ['out.yaml']


def test_written_folder_merges_into_an_existing_one(tmp_path):
    folder = tmp_path / 'report'
    folder.mkdir()
    (folder / 'mine.txt').write_text('the user\'s')
    with written(folder) as target:
        target.mkdir()
        (target / 'index.html').write_text('page')
    assert sorted(p.name for p in folder.iterdir()) == ['index.html', 'mine.txt'] and _leftovers(tmp_path) == []


def test_a_failed_write_leaves_no_folders_it_made(tmp_path):
    with pytest.raises(RuntimeError), written(tmp_path / 'a' / 'b' / 'out.yaml') as target:
        target.write_text('half')
        raise RuntimeError('interrupted')
    assert list(tmp_path.iterdir()) == []
