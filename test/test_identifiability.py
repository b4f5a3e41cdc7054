"""Identification that says why the data cannot identify the model (issue 13, items 6 and 11)."""

import numpy as np
import pytest

from dynid.cli import main
from dynid.errors import InputError
from dynid.identify.solvers import check_identifiable


def test_a_dependency_names_every_parameter_of_its_group():
    rng = np.random.default_rng(3)
    w = rng.normal(size=(200, 5))
    w = np.column_stack([w, w[:, 1] - 2.0 * w[:, 3]])  # f = b − 2d: the group is b, d, f (a, c, e are free)
    with pytest.raises(InputError) as error:
        check_identifiable(w, list('abcdef'))
    group = str(error.value).split('dependent groups: ')[1].split(')')[0].split(', ')
    assert sorted(group) == ['b', 'd', 'f']
    assert 'dynid excite --optimize' in str(error.value)


@pytest.fixture(scope='module')
def unloaded_run(tmp_path_factory):
    folder = tmp_path_factory.mktemp('hamon')
    assert main(['simulate', '--duration', '4', '--rate', '250', '--quiet', '-o', str(folder / 'run0')]) == 0
    return folder / 'run0'


def test_hamon_without_payload_runs_names_the_structural_dependency_and_the_remedy(unloaded_run, tmp_path, capsys):
    out = tmp_path / 'r.yaml'
    assert main(['identify', str(unloaded_run), '--friction', 'hamon', '--quiet', '-o', str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and 'structural' in err[0] and '--payload-mass' in err[0], err
    assert 'richer excitation' not in err[0]
    assert not out.exists()
