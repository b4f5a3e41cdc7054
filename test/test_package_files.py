"""example-robot-data's files, found by each look-up of dynid.package_files in turn (the installed layouts are run
end to end in test_workspace_layout.py): the package's own ``getModelPath`` first, then the installed distributions,
each ``sys.path`` entry and the ament index; a one-line refusal naming where it looked."""

import sys
import types

import pytest

from dynid.errors import InputError
from dynid.package_files import example_robot_path

UR5 = 'ur_description/urdf/ur5_robot.urdf'


def robots_folder(root):
    folder = root / 'share' / 'example-robot-data' / 'robots'
    (folder / 'ur_description' / 'urdf').mkdir(parents=True)
    (folder / UR5).write_text('<robot name="ur5"/>')
    return folder


@pytest.fixture
def nothing_installed(monkeypatch):
    """No example-robot-data anywhere: no module, no distribution, an empty sys.path and AMENT_PREFIX_PATH."""
    monkeypatch.setattr('dynid.package_files._distribution_folders', list)
    monkeypatch.setattr(sys, 'path', [])
    monkeypatch.setenv('AMENT_PREFIX_PATH', '')
    monkeypatch.setattr('importlib.util.find_spec', lambda name: None)


def test_the_packages_own_look_up_comes_first(tmp_path, monkeypatch, nothing_installed):
    own, ament = robots_folder(tmp_path / 'own'), robots_folder(tmp_path / 'ament')
    module = types.ModuleType('example_robot_data')
    module.getModelPath = lambda subpath, *args: str(own)
    monkeypatch.setitem(sys.modules, 'example_robot_data', module)
    monkeypatch.setattr('importlib.util.find_spec', lambda name: object() if name == 'example_robot_data' else None)
    monkeypatch.setenv('AMENT_PREFIX_PATH', str(ament.parents[2]))
    assert example_robot_path(UR5) == own / UR5

    def not_there(subpath, *args):
        raise OSError(f'{subpath} not found')  # what getModelPath raises

    module.getModelPath = not_there
    assert example_robot_path(UR5) == ament / UR5


def test_a_site_folders_cmeel_prefix_and_a_prefixs_share_folder(tmp_path, monkeypatch, nothing_installed):
    site = tmp_path / 'venv' / 'lib' / 'python3.12' / 'site-packages'
    cmeel = robots_folder(site / 'cmeel.prefix')
    monkeypatch.setattr(sys, 'path', ['', str(site)])
    assert example_robot_path(UR5) == cmeel / UR5
    other_site = tmp_path / 'opt' / 'ros' / 'lib' / 'python3.12' / 'site-packages'
    other_site.mkdir(parents=True)
    shared = robots_folder(tmp_path / 'opt' / 'ros')  # <prefix>/share beside <prefix>/lib/python3.12/site-packages
    monkeypatch.setattr(sys, 'path', [str(other_site)])
    assert example_robot_path(UR5) == shared / UR5


def test_the_ament_index(tmp_path, monkeypatch, nothing_installed):
    folder = robots_folder(tmp_path / 'install')
    monkeypatch.setenv('AMENT_PREFIX_PATH', f'{tmp_path / "elsewhere"}:{tmp_path / "install"}')
    assert example_robot_path(UR5) == folder / UR5


def test_nowhere_is_one_line_naming_where_it_looked(nothing_installed):
    with pytest.raises(InputError) as refused:
        example_robot_path(UR5)
    message = str(refused.value)
    assert '\n' not in message and UR5 in message and 'AMENT_PREFIX_PATH' in message
    assert 'pip install example-robot-data' in message
