"""A ROS parameter file checked against what each dynid node declares (dynid.ros.parameter_file): the shipped config
files pass for every node; a misspelt parameter in a node's own section, a value of another type or outside the
declared range, a section of another shape are refused naming the file, section and parameter; a node process given
such a file exits 2 with that one line (a value of the wrong type ended it in rclpy's traceback, a misspelt one was
ignored); generated parameter files are read or refused in one line."""

import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dds_helpers import environment
from dynid.errors import InputError
from dynid.ros.parameter_file import check_parameter_file, sections
from testing.fuzz_inputs import RAW_TEXT, dump, mutated, mutations, node_declarations, run_parameter_file

CONFIG = Path(__file__).resolve().parents[1] / 'config'


@pytest.fixture(scope='module')
def declarations(module_ros_domain):
    return node_declarations(module_ros_domain)


@pytest.mark.parametrize('path', sorted(CONFIG.glob('*.yaml')), ids=lambda path: path.name)
def test_every_shipped_config_file_passes_for_every_node(declarations, path):
    for node, declared in declarations.items():
        check_parameter_file(path, node, declared)


def _file(tmp_path, document) -> Path:
    path = tmp_path / 'parameters.yaml'
    path.write_text(yaml.safe_dump(document))
    return path


@pytest.mark.parametrize('document, said', [
    ({'/**/sim_node': {'ros__parameters': {'ratte': 3.0}}},
     r"sim_node has no parameter 'ratte' \(did you mean 'rate'\?\)"),
    ({'sim_node': {'ros__parameters': {'rate': 'fast'}}},
     r"sim_node: rate must be a number in \[1, 2000\] for sim_node, got 'fast'"),
    ({'/sim_node': {'ros__parameters': {'rate': 1e9}}}, r'rate must be a number in \[1, 2000\]'),
    ({'/**': {'ros__parameters': {'noise': 'yes'}}}, r'/\*\*: noise must be true or false for sim_node'),
    ({'/**/sim_node': {'rate': 3.0}}, r"/\*\*/sim_node/rate must be a mapping \{ros__parameters"),
    ({'sim_node': 5}, r'sim_node must be a mapping'),
])
def test_a_parameter_file_that_does_not_fit_is_refused_naming_the_parameter(declarations, tmp_path, document, said):
    with pytest.raises(InputError, match=said):
        check_parameter_file(_file(tmp_path, document), '/sim_node', declarations['/sim_node'])


def test_sections_apply_as_rcl_applies_them():
    document = {'/**': {}, '/arm/sim_node': {}, 'sim_node': {}, '/*/sim_node': {}, '/**/other': {}}
    assert [(key, own) for key, _, own in sections(document, '/arm/sim_node')] == [
        ('/**', False), ('/arm/sim_node', True), ('/*/sim_node', True)]
    assert [key for key, _, _ in sections(document, '/sim_node')] == ['/**', 'sim_node']
    # a key for every node may set what only some declare: the others are not refused for it
    assert [(key, own) for key, _, own in sections({'/**': {'x': 1}}, '/a/b/c')] == [('/**', False)]


def test_nested_namespaces_and_parameter_names_read_as_rcl_reads_them(tmp_path):
    from dynid.ros.parameter_file import read_parameter_file

    path = _file(tmp_path, {'/**': {'controller_manager': {'ros__parameters': {'update_rate': 1000, 'overruns': {
        'manage': False}}}}, 'arm': {'sim_node': {'ros__parameters': {'rate': 250.0}}}})
    assert read_parameter_file(path) == {'/**/controller_manager': {'update_rate': 1000, 'overruns.manage': False},
                                         'arm/sim_node': {'rate': 250.0}}


@pytest.mark.parametrize('document, said', [
    ({'/**/sim_node': {'ros__parameters': {'ratte': 3.0}}}, "sim_node has no parameter 'ratte'"),
    ({'/**/sim_node': {'ros__parameters': {'rate': 'fast'}}}, "Trying to set parameter 'rate' to 'fast'"),
])
def test_a_node_process_refuses_the_file_in_one_line(tmp_path, ros_domain, document, said):
    path = _file(tmp_path, document)
    run = subprocess.run([sys.executable, '-m', 'dynid.nodes', 'sim_node', '--ros-args', '--params-file', str(path)],
                         env=environment(ros_domain), capture_output=True, text=True, timeout=120)
    errors = [line for line in run.stderr.splitlines() if not line.startswith('[INFO]')]
    assert run.returncode == 2 and len(errors) == 1 and errors[0].startswith('sim_node: error: ') and said in errors[0]
    assert 'Traceback' not in run.stderr


@settings(max_examples=40, deadline=None, database=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_generated_parameter_files_are_read_or_refused_in_one_line(declarations, tmp_path_factory, data):
    document = yaml.safe_load((CONFIG / 'suite.yaml').read_text())
    path = tmp_path_factory.mktemp('parameters') / 'parameters.yaml'
    path.write_text(dump(mutated(document, data.draw(mutations(document)))) if data.draw(st.integers(0, 9))
                    else data.draw(RAW_TEXT))
    outcome = run_parameter_file(path, declarations)
    assert not outcome.bad, outcome
