"""Every output of the dynid command is checked before the work: a folder where a file goes, a file where a
folder goes, or a place that cannot be written ends with exit code 2 and one line naming the option, before
any input is read (the inputs here do not even exist, so a late check would report them instead)."""

import pytest

from dynid.cli import main

MISSING = 'no_such_input'


def _commands(folder, file, blocked):
    """(arguments, the words the one-line error must hold) per output option."""
    return [
        (['identify', MISSING, '-o', folder], ['-o', 'is a folder']),
        (['identify', MISSING, '-o', blocked], ['-o', 'is not a folder']),
        (['identify', MISSING, '-o', f'{folder}/r.yaml', '--report', file], ['--report', 'is a file']),
        (['estimate', MISSING, '--params', MISSING, '-o', folder], ['-o', 'is a folder']),
        (['estimate', MISSING, '--params', MISSING, '--report', file], ['--report', 'is a file']),
        (['identify-friction', MISSING, '--params', MISSING, '-o', folder], ['-o', 'is a folder']),
        (['excite', '-o', folder], ['-o', 'is a folder']),
        (['excite', '-o', f'{folder}/t.yaml', '--plot', folder], ['--plot', 'is a folder']),
        (['export-urdf', MISSING, '--robot', MISSING, '-o', folder], ['-o', 'is a folder']),
        (['export-mjcf', MISSING, '-o', folder], ['-o', 'is a folder']),
        (['model', '--urdf', folder], ['--urdf', 'is a folder']),
        (['simulate', '-o', file], ['-o', 'is a file']),
        (['import', MISSING, '--preset', 'ur_rtde', '-o', blocked], ['-o', 'is not a folder']),
        (['validate', MISSING, '--params', MISSING, '--json', folder], ['--json', 'is a folder']),
        (['compare', MISSING, MISSING, '--json', folder], ['--json', 'is a folder']),
    ]


@pytest.mark.parametrize('index', range(len(_commands('d', 'f', 'b'))))
def test_an_unusable_output_is_refused_before_the_work(tmp_path, capsys, index):
    file = tmp_path / 'a_file'
    file.write_text('x')
    arguments, words = _commands(str(tmp_path), str(file), str(file / 'below' / 'out.yaml'))[index]
    code = main(arguments)
    error = capsys.readouterr().err.strip()
    assert code == 2 and len(error.splitlines()) == 1, error
    assert all(word in error for word in words) and MISSING not in error, error


def test_library_warnings_are_dropped_and_dynid_s_own_said(monkeypatch, capsys):
    """numpy's RuntimeWarning (an intermediate figure's overflow) does not reach the terminal; a UserWarning raised in
    dynid's own code is printed as a dynid warning line."""
    import warnings

    import numpy as np

    import dynid.cli.model
    from dynid.cli import library_warnings

    own_file = library_warnings.__file__

    def run(args):
        np.sum(np.array([1e308, 1e308]))  # RuntimeWarning: overflow encountered in reduce
        warnings.warn_explicit('the feedforward term x is off', UserWarning, own_file, 1)
        return 0

    monkeypatch.setattr(dynid.cli.model, 'run', run)
    monkeypatch.setattr('sys.warnoptions', [])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        assert main(['model', '--robot', 'ur5e']) == 0
    err = capsys.readouterr().err
    assert caught == [] and 'RuntimeWarning' not in err and 'overflow' not in err
    assert 'warning: the feedforward term x is off' in err
