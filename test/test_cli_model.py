"""The `dynid model` subcommand: in this process (cli_run.run_dynid), and as users run it (the installed
console script, a process of its own) where the process's whole error output is the point: urdfdom, under
pinocchio, writes its parse errors itself, past Python's sys.stderr."""

import json
import subprocess

import pytest

from cli_run import run_dynid
from dds_helpers import DYNID


def _run(*args):
    return run_dynid(*args)


def _process(*args):
    return subprocess.run(list(DYNID) + list(args), capture_output=True, text=True, timeout=120)


def test_model_json_reports_36_base_parameters_for_ur5e():
    result = _run('model', '--robot', 'ur5e', '--json')
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    assert summary['base_parameters']['count'] == 36
    assert summary['standard_parameters'] == 60
    assert [j['name'] for j in summary['joints']][0] == 'shoulder_pan_joint'
    assert summary['base_parameters']['parameters'][0]['name'] == 'Izz_1R'


def test_model_text_lists_joints_limits_and_base_names():
    result = _run('model', '--robot', 'panda')
    assert result.returncode == 0, result.stderr
    assert 'panda_joint7' in result.stdout and 'base parameters: 43' in result.stdout


@pytest.mark.parametrize('robot, reason', [
    ('nonexistent_robot', "unknown robot 'nonexistent_robot'"),
    ('missing.urdf', 'does not exist'),
])
def test_bad_robot_exits_2_with_one_line(robot, reason):
    result = _run('model', '--robot', robot)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith('dynid model: error:') and reason in lines[0]


def test_broken_urdf_exits_2_with_one_line(tmp_path):
    broken = tmp_path / 'broken.urdf'
    broken.write_text('<robot name="r"><link name="a"/><joint name="j" type="revolute">')
    result = _process('model', '--robot', str(broken))
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert 'cannot read URDF' in lines[0] and str(broken) in lines[0]
    assert result.stdout == ''


MALFORMED_INERTIA_URDF = """<robot name="one_link">
  <link name="base"/>
  <link name="arm"><inertial><mass value="2.0"/><origin xyz="0.3 0 0"/>
    <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.1O" iyz="0" izz="0.1"/></inertial></link>
  <joint name="j1" type="revolute"><parent link="base"/><child link="arm"/><axis xyz="0 0 1"/>
    <limit lower="-2" upper="2" effort="50" velocity="2"/></joint>
</robot>"""


@pytest.mark.parametrize('subcommand', ['model', 'excite'])
def test_urdf_the_parser_cannot_read_exactly_exits_2_with_its_message(tmp_path, subcommand):
    # urdfdom reads iyy="0.1O" (letter O) as a parse error and goes on with zero rotational inertia.
    urdf = tmp_path / 'malformed.urdf'
    urdf.write_text(MALFORMED_INERTIA_URDF)
    output = ('-o', str(tmp_path / 'never.yaml')) if subcommand == 'excite' else ()
    result = _process(subcommand, *output, '--robot', str(urdf))
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert str(urdf) in lines[0] and 'inertia element iyy is not a valid double' in lines[0]
    assert 'Link [arm]' in lines[0]
    assert not (tmp_path / 'never.yaml').exists()


def test_help_and_version():
    assert _process('model', '--help').returncode == 0
    result = _process('--version')
    assert result.returncode == 0 and result.stdout.startswith('dynid ')
    assert _process().returncode == 2  # a subcommand is required
