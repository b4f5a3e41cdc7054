"""Every output of the CLI written whole or not at all: a write that fails half-way (a full disk, injected by
making Path.write_text write half its text and raise) leaves nothing behind, and the same command run again
succeeds (issue 31, item 5)."""

import pathlib

import pytest

from dynid.cli import main
from dynid.files import STAGING_SUFFIX


@pytest.fixture(scope='module')
def run(tmp_path_factory):
    """A 250 Hz twin recording of the built-in excitation, its physically consistent identification (what
    export-urdf takes: the defaults choose consistency on this weakly exciting log only where the folds find it
    ahead of the robot file's own model, and here the two tie) and the UR5e's URDF."""
    folder = tmp_path_factory.mktemp('whole')
    assert main(['simulate', '--rate', '250', '--duration', '10', '--quiet', '-o', str(folder / 'bag')]) == 0
    assert main(['model', '--robot', 'ur5e', '--urdf', str(folder / 'ur5e.urdf')]) == 0
    assert main(['identify', str(folder / 'bag'), '--robot', str(folder / 'ur5e.urdf'), '--physical', '-o',
                 str(folder / 'result.yaml'), '--quiet']) == 0
    return folder


@pytest.fixture
def disk_full(monkeypatch):
    """``disk_full(name)``: the next write of a file called ``name`` writes half its text, then raises ENOSPC."""
    original = pathlib.Path.write_text
    failing = set()

    def write_text(self, data, *args, **kwargs):
        if self.name in failing:
            failing.discard(self.name)
            original(self, data[:len(data) // 2], *args, **kwargs)
            raise OSError(28, 'No space left on device', str(self))
        return original(self, data, *args, **kwargs)

    monkeypatch.setattr(pathlib.Path, 'write_text', write_text)
    return failing.add


def _nothing_left(folder, *names):
    """None of ``names`` and no staging folder in ``folder``."""
    entries = {p.name for p in folder.iterdir()}
    assert not [n for n in entries if n.endswith(STAGING_SUFFIX)], entries
    for name in names:
        assert name not in entries, f'{name} was left behind'


def _fails_then_works(capsys, args, fail_name, folder, *outputs, disk_full):
    disk_full(fail_name)
    assert main(args) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and 'No space left on device' in err[0], err
    _nothing_left(folder, *outputs)
    assert main(args) == 0  # the re-run: nothing in its way
    capsys.readouterr()
    for name in outputs:
        assert (folder / name).exists()


def test_import_leaves_no_bag_when_import_yaml_fails(run, tmp_path, capsys, disk_full):
    out = tmp_path / 'imported'
    args = ['import', str(run / 'bag'), '--robot', 'ur5e', '-o', str(out)]
    _fails_then_works(capsys, args, 'import.yaml', tmp_path, 'imported', disk_full=disk_full)
    assert sorted(p.name for p in out.iterdir()) == ['import.yaml', 'imported.mcap', 'metadata.yaml']


def test_simulate_leaves_no_recording_when_truth_fails(tmp_path, capsys, disk_full):
    args = ['simulate', '--rate', '100', '--duration', '2', '--quiet', '-o', str(tmp_path / 'sim')]
    _fails_then_works(capsys, args, 'truth.yaml', tmp_path, 'sim', disk_full=disk_full)


def test_identify_result_and_report(run, tmp_path, capsys, disk_full):
    args = ['identify', str(run / 'bag'), '-o', str(tmp_path / 'r.yaml'), '--quiet']
    _fails_then_works(capsys, args, 'r.yaml', tmp_path, 'r.yaml', disk_full=disk_full)
    args = ['identify', str(run / 'bag'), '-o', str(tmp_path / 's.yaml'), '--report', str(tmp_path / 'report'),
            '--quiet']
    disk_full('index.html')
    assert main(args) == 2
    capsys.readouterr()
    _nothing_left(tmp_path, 'report')  # no page without its plots, no plots without their page
    (tmp_path / 's.yaml').unlink()
    assert main(args) == 0 and (tmp_path / 'report' / 'index.html').exists()


def test_validate_verdict_and_compare_json(run, tmp_path, capsys, disk_full):
    args = ['validate', str(run / 'bag'), '--params', str(run / 'result.yaml'), '--json', str(tmp_path / 'v.json')]
    _fails_then_works(capsys, args, 'v.json', tmp_path, 'v.json', disk_full=disk_full)
    args = ['compare', str(run / 'result.yaml'), str(run / 'result.yaml'), '--json', str(tmp_path / 'c.json')]
    _fails_then_works(capsys, args, 'c.json', tmp_path, 'c.json', disk_full=disk_full)


def test_excitation_robot_file_and_urdf_export(run, tmp_path, capsys, disk_full):
    args = ['excite', '--robot', 'ur5e', '-o', str(tmp_path / 'exc.yaml')]
    _fails_then_works(capsys, args, 'exc.yaml', tmp_path, 'exc.yaml', disk_full=disk_full)
    args = ['model', '--robot', 'ur5e', '--urdf', str(tmp_path / 'm.urdf')]
    _fails_then_works(capsys, args, 'm.urdf', tmp_path, 'm.urdf', disk_full=disk_full)
    args = ['export-urdf', str(run / 'result.yaml'), '--robot', str(run / 'ur5e.urdf'), '-o', str(tmp_path / 'x.urdf')]
    _fails_then_works(capsys, args, 'x.urdf', tmp_path, 'x.urdf', disk_full=disk_full)
