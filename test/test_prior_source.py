"""A previous result as the prior (``dynid identify --prior RESULT``): it pulls a weaker recording's estimate toward
its own base parameters, the result names the file it came from, and a result of another robot, another joint order
or without σ is refused by name. The kinds of prior file are plug-ins: one registered in the process or installed by
another package is told by its header and used like dynid's own; a file no kind or two kinds recognize is refused."""

import dataclasses
import hashlib
import sys
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import pytest
import yaml

from builders import install_user_package
from cli_run import run_dynid
from dynid.errors import InputError
from dynid.excite.trajectory import builtin_excitation_path
from dynid.files import yaml_header
from dynid.identify.result.result import IdentificationResult
from dynid.identify.solve.prior_source import (
    GROUP,
    REGISTRY,
    FleetPrior,
    PriorSourceKind,
    ResultPrior,
    RobotFilePrior,
    prior_source,
    pulls_toward,
    register_prior_source,
    unregister_prior_source,
)
from dynid.model import load_robot


@pytest.fixture(scope='module')
def first(tmp_path_factory):
    """The twin's optimized excitation (12 s, 250 Hz) identified, and a short random motion (4 s) to identify next."""
    folder = tmp_path_factory.mktemp('prior_source')
    for name, args in (('first', ['--trajectory', str(builtin_excitation_path('ur5e')), '--duration', '12']),
                       ('second', ['--duration', '4', '--seed', '4'])):
        done = run_dynid('simulate', '--rate', '250', '--quiet', '-o', str(folder / name), *args)
        assert done.returncode == 0, done.stderr
    done = run_dynid('identify', str(folder / 'first'), '-o', str(folder / 'first.yaml'), '--quiet')
    assert done.returncode == 0, done.stderr
    return folder


def _distance(result: IdentificationResult, prior: IdentificationResult) -> float:
    """RMS over the arm's base parameters of (value − prior's) / prior's σ."""
    names = [name for name in prior.base_expressions if not name.startswith('Ia_')]
    return float(np.sqrt(np.mean([((result.value(name) - prior.value(name))
                                   / prior.std[prior.parameter_names.index(name)]) ** 2 for name in names])))


def test_a_result_as_the_prior_pulls_toward_it_and_names_its_file(first):
    prior_file = first / 'first.yaml'
    done = run_dynid('identify', str(first / 'second'), '-o', str(first / 'pulled.yaml'), '--prior', str(prior_file),
                     '--quiet')
    assert done.returncode == 0, done.stderr
    assert f'the base parameters of the result {prior_file}' in done.stdout
    done = run_dynid('identify', str(first / 'second'), '-o', str(first / 'file.yaml'), '--quiet')
    assert done.returncode == 0, done.stderr
    earlier = IdentificationResult.load(prior_file)
    pulled, robot_file = (IdentificationResult.load(first / name) for name in ('pulled.yaml', 'file.yaml'))
    section = pulled.prior_section
    assert section['used'] and section['source'] == str(prior_file)
    assert section['provenance'] == {'kind': 'result', 'path': str(prior_file), 'robot': 'ur5e',
                                     'sha256': hashlib.sha256(prior_file.read_bytes()).hexdigest(),
                                     'created': earlier.provenance['created'], 'method': earlier.method}
    assert 'provenance' not in robot_file.prior_section  # the robot file's section is as it always was
    # the 4 s random motion alone leaves directions to its prior: the earlier result's pulls them to its values
    # (measured: 2.3 σ against 4.8 σ with the robot file's prior)
    assert _distance(pulled, earlier) < 0.7 * _distance(robot_file, earlier)


def test_another_robots_result_is_refused_by_name(first, tmp_path):
    data = yaml.safe_load((first / 'first.yaml').read_text())
    data['robot'] = 'panda'
    other = tmp_path / 'panda.yaml'
    other.write_text(yaml.safe_dump(data))
    done = run_dynid('identify', str(first / 'second'), '-o', str(tmp_path / 'out.yaml'), '--prior', str(other))
    assert done.returncode == 2 and 'Traceback' not in done.stderr
    line = done.stderr.strip().splitlines()[-1]
    assert f"--prior '{other}' is a result of robot 'panda', not 'ur5e'" in line, line
    assert not (tmp_path / 'out.yaml').exists()
    both = run_dynid('identify', str(first / 'second'), '-o', str(tmp_path / 'out.yaml'), '--prior',
                     str(first / 'first.yaml'), '--no-prior')
    assert both.returncode == 2 and 'exclude each other' in both.stderr
    # rotor inertias identified beside the links fold into Izz_1R and Izz_2R (Izz_1R + Ia_1): the earlier result
    # pulls on their link part; a grouping that differs otherwise is refused (test_fleet_prior's rows)
    rotor = run_dynid('identify', str(first / 'second'), '-o', str(tmp_path / 'out.yaml'), '--torque', 'current',
                      '--no-rotor-compensation', '--prior', str(first / 'first.yaml'), '--quiet')
    assert rotor.returncode == 0, rotor.stderr
    written = yaml.safe_load((tmp_path / 'out.yaml').read_text())
    assert written['model']['rotor_inertia_identified'] and written['prior']['provenance']['kind'] == 'result'


def test_another_joint_order_or_no_sigma_is_refused(first, tmp_path):
    robot = load_robot('ur5e')
    earlier = IdentificationResult.load(first / 'first.yaml')
    turned = dataclasses.replace(earlier, joint_names=tuple(reversed(earlier.joint_names)), physical_section=None)
    turned.save(tmp_path / 'turned.yaml')
    with pytest.raises(InputError, match='turned.yaml.*has the joints'):
        ResultPrior.load(tmp_path / 'turned.yaml', robot)
    blind = dataclasses.replace(earlier, std=np.full(len(earlier.std), np.nan), prior_section=None)
    blind.save(tmp_path / 'blind.yaml')
    with pytest.raises(InputError, match='blind.yaml.*no standard deviation'):
        ResultPrior.load(tmp_path / 'blind.yaml', robot)
    with pytest.raises(InputError, match='missing.yaml.*no such result file'):
        ResultPrior.load(tmp_path / 'missing.yaml', robot)


def test_the_robot_file_is_the_prior_without_a_path():
    robot = load_robot('ur5e')
    source = prior_source('', robot)
    assert isinstance(source, RobotFilePrior) and source.pulls() and source.label == (robot.source or robot.name)
    assert source.provenance()['kind'] == 'robot file'


def test_the_option_and_the_node_parameter_are_one_setting():
    from dynid.cli import build_parser
    from dynid.cli.flags import message
    from dynid.identify.settings import IdentifierSettings
    from dynid.ros.runner import node_message

    args = build_parser('identify').parse_args(['identify', 'bag', '-o', 'result.yaml'])
    assert args.prior_source == IdentifierSettings().prior_source == ''
    error = InputError("{prior_source} 'old.yaml' is a result of robot 'panda'", fields=('prior_source',))
    assert message(error).startswith("--prior 'old.yaml'")
    assert node_message(error).startswith("prior_source:= 'old.yaml'")


# ------------------------------------------------------------------------------------------------ kinds of prior file
@dataclass(frozen=True)
class CadPrior(RobotFilePrior):
    """Another robot file's link inertias (a CAD export's) as the prior, named as such."""

    kind: ClassVar[str] = 'cad model'

    @property
    def pulls_toward(self) -> str:
        return f"the CAD model's link inertias ({self.spec})"


def _is_cad(path) -> bool:
    return 'cad_prior' in yaml_header(path)


def _load_cad(path, robot) -> CadPrior:
    cad = load_robot(yaml_header(path)['robot_file'])
    if tuple(cad.joint_names) != tuple(robot.joint_names):
        raise InputError(f'{path}: the CAD model has other joints')
    return CadPrior.of(cad)


CAD = PriorSourceKind('cad', 'a CAD export of the link inertias (cad_prior: 1, robot_file)', _is_cad, _load_cad)


def test_the_built_in_kinds_are_registered_in_the_entry_point_group():
    assert REGISTRY.group == GROUP == 'dynid.prior_sources'
    assert REGISTRY.names()[:2] == ('result', 'fleet')
    assert [kind.load for kind in REGISTRY.all()[:2]] == [ResultPrior.load, FleetPrior.load]


def test_a_kind_registered_in_the_process_is_told_by_its_header_and_used_end_to_end(first, tmp_path):
    """register_prior_source makes a kind known: prior_source gives its source for a file it recognizes, and
    dynid identify --prior pulls toward it, says so and records its provenance; unregistered, the file is refused
    naming the kinds installed."""
    cad = tmp_path / 'cad.yaml'
    cad.write_text('cad_prior: 1\nrobot_file: ur5e\n')
    robot = load_robot('ur5e')
    register_prior_source(CAD)
    try:
        assert REGISTRY.names()[-1] == 'cad'
        source = prior_source(str(cad), robot)
        assert isinstance(source, CadPrior) and source.pulls() and source.label == 'built-in ur5e'
        assert isinstance(prior_source(str(first / 'first.yaml'), robot), ResultPrior)  # dynid's own stay theirs
        done = run_dynid('identify', str(first / 'second'), '-o', str(tmp_path / 'cad_prior.yaml'), '--prior',
                         str(cad), '--quiet')
        assert done.returncode == 0, done.stderr
        assert "prior: the CAD model's link inertias (built-in ur5e), relative σ s = " in done.stdout
        section = IdentificationResult.load(tmp_path / 'cad_prior.yaml').prior_section
        assert section['used'] and section['provenance']['kind'] == 'cad model'
    finally:
        unregister_prior_source('cad')
    with pytest.raises(InputError, match=r"'.*cad.yaml' is none of the prior source kinds installed: result \(a "
                                         r"previous identification's result file.*; fleet \(a fleet prior file") as no:
        prior_source(str(cad), robot)
    assert no.value.field == 'prior_source'
    with pytest.raises(InputError, match='register_prior_source takes a PriorSourceKind'):
        register_prior_source(CadPrior)
    with pytest.raises(InputError, match="prior source 'fleet' is installed already"):
        register_prior_source(dataclasses.replace(CAD, name='fleet'))


def test_a_file_two_kinds_recognize_or_none_is_refused_by_name(first, tmp_path):
    robot = load_robot('ur5e')
    greedy = PriorSourceKind('any_yaml', 'every YAML file', lambda path: True, _load_cad)
    register_prior_source(greedy)
    try:
        with pytest.raises(InputError, match=r"'.*first.yaml' is recognized by the prior source kinds result and "
                                             r"any_yaml: it cannot be told which it is") as two:
            prior_source(str(first / 'first.yaml'), robot)
        assert two.value.field == 'prior_source'
    finally:
        unregister_prior_source('any_yaml')
    (tmp_path / 'list.yaml').write_text('[1, 2]\n')
    (tmp_path / 'broken.yaml').write_text('robot: [ur5e\n')
    with pytest.raises(InputError, match=r"'.*list.yaml' is none of the prior source kinds installed: result"):
        prior_source(str(tmp_path / 'list.yaml'), robot)
    with pytest.raises(InputError, match=r'prior file .*broken.yaml is not valid YAML'):
        prior_source(str(tmp_path / 'broken.yaml'), robot)
    with pytest.raises(InputError, match=r"'.*gone.yaml': no such file"):
        prior_source(str(tmp_path / 'gone.yaml'), robot)


CAD_PACKAGE = """\
    from dynid.files import yaml_header
    from dynid.identify.solve.prior_source import PriorSourceKind, RobotFilePrior
    from dynid.model import load_robot

    CAD = PriorSourceKind('cad', 'a CAD export of the link inertias', lambda path: 'cad_prior' in yaml_header(path),
                          lambda path, robot: RobotFilePrior.of(load_robot(yaml_header(path)['robot_file'])))
    """


def test_a_kind_in_another_package_is_found_and_one_without_words_is_named_by_kind_and_label(tmp_path, monkeypatch):
    """An installed package's kind (its entry point in dynid.prior_sources) is asked like dynid's own; a source
    without pulls_toward is said as 'the KIND LABEL'."""
    source = install_user_package(tmp_path / 'cad', 'dynid_cad_prior', CAD_PACKAGE, {'cad': 'dynid_cad_prior:CAD'},
                                  GROUP)
    monkeypatch.syspath_prepend(str(source))
    cad = tmp_path / 'cad.yaml'
    cad.write_text('cad_prior: 1\nrobot_file: ur5e\n')
    assert REGISTRY.names() == ('result', 'fleet', 'cad')
    assert REGISTRY.entry_points()['cad'].dist.name == 'dynid_cad_prior'
    found = prior_source(str(cad), load_robot('ur5e'))
    assert isinstance(found, RobotFilePrior) and found.pulls()
    assert pulls_toward(found) == "the robot file's link inertias (built-in ur5e)"

    class Bare:
        kind, label = 'survey', 'arm.yaml'

    assert pulls_toward(Bare()) == 'the survey arm.yaml'
    monkeypatch.undo()
    sys.modules.pop('dynid_cad_prior', None)
    assert 'cad' not in REGISTRY.names()
