"""Identification methods as registered strategies (dynid.identify.methods): the built-ins in the entry-point group, a
method written outside dynid used by name by ``dynid identify``, by identifier_node's core and by the automatic choice,
and names listed without importing a method."""

import dataclasses
import subprocess
import sys

import numpy as np
import pytest
import yaml

from builders import install_user_package
from cli_run import run_dynid
from dynid.errors import InputError
from dynid.identify.choices import FIX_DRIVE_GAIN, METHODS
from dynid.identify.equations.request import IdentifyOptions, ModelSpec, settle
from dynid.identify.job.session import IdentificationSession
from dynid.identify.job.ways_out import way_out_methods
from dynid.identify.methods import ols as ols_method
from dynid.identify.registry import (
    GROUP,
    IdentificationMethod,
    MethodOption,
    identification_method,
    method_names,
    parse_method_options,
    register_method,
    unregister_method,
)
from dynid.identify.settings import CHOICES, IdentifierSettings
from dynid.settings import check_settings

#: dynid's own, in the registry's order: its ordered ones, then the closed-loop methods (named by no dynid module) by
#: the metadata's order
BUILT_INS = ('ols', 'wls', 'irls', 'iirls', 'tls', 'mls', 'didim', 'idim_iv')

#: a method of another package: WLS's solve under another name, a candidate of the automatic choice with equal row
#: weights (it must then give WLS's numbers wherever it is asked for by name)
USER_METHOD = """\
    import dataclasses

    import numpy as np

    from dynid.identify.methods import wls


    def equal_weights(w, y, joints, columns, weight_function):
        return np.ones(len(y))


    METHOD = dataclasses.replace(wls.METHOD, name='wls_twin', description='WLS under another name',
                                 choice_weights=equal_weights, way_out=False)
    """


@pytest.fixture(scope='module')
def bag(excited_ur5e_bag):
    return excited_ur5e_bag


@pytest.fixture
def user_method(tmp_path, monkeypatch):
    """The package of :data:`USER_METHOD` installed (on sys.path with its entry point) for the test."""
    source = install_user_package(tmp_path / 'twin', 'dynid_wls_twin', USER_METHOD,
                                  {'wls_twin': 'dynid_wls_twin:METHOD'}, GROUP)
    monkeypatch.syspath_prepend(str(source))
    yield 'wls_twin'
    monkeypatch.undo()
    sys.modules.pop('dynid_wls_twin', None)


def _identified(bag, folder, *options) -> dict:
    path = folder / 'result.yaml'
    done = run_dynid('identify', bag, '--friction', 'viscous_coulomb', '-o', path, '--quiet', *options)
    assert done.returncode == 0, done.stderr
    return yaml.safe_load(path.read_text())


def _values(result: dict) -> dict[str, float]:
    return {row['name']: row['value'] for row in result['base_parameters'] + result['friction']}


def test_built_in_methods_are_registered_in_the_entry_point_group():
    assert tuple(METHODS) == method_names() == BUILT_INS
    assert tuple(CHOICES['method']) == ('auto', *BUILT_INS)
    for name in BUILT_INS:
        method = identification_method(name)
        assert isinstance(method, IdentificationMethod) and method.name == name and method.description
    assert [name for name in BUILT_INS if identification_method(name).physical] == ['ols', 'wls', 'irls']
    assert [name for name in BUILT_INS if identification_method(name).drive_gains] == ['tls', 'mls']
    with pytest.raises(InputError, match=r"unknown identification method 'wlss'; installed: ols, wls"):
        identification_method('wlss')


def test_the_names_are_listed_without_importing_a_method_or_the_pipeline():
    """``dynid identify --help`` lists the methods from the metadata alone (no pinocchio, no scipy)."""
    code = ('import sys\nfrom dynid.identify.settings import CHOICES\nassert "wls" in CHOICES["method"]\n'
            'print(sorted(m for m in sys.modules if m.startswith(("scipy", "pinocchio", "dynid.identify.methods"))))')
    done = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == '[]'


def test_a_method_of_another_package_is_used_by_name_everywhere(ur5e, bag, tmp_path, user_method):
    """The package's entry point makes ``wls_twin`` a choice of the settings (the node's ``method`` parameter and
    ``--method``); ``dynid identify --method wls_twin`` and identifier_node's core give WLS's numbers under its name;
    the automatic choice scores it beside WLS and IRLS; nothing of dynid was edited."""
    assert user_method in METHODS and user_method in CHOICES['method']
    check_settings(IdentifierSettings(method=user_method))
    for folder in ('by_wls', 'by_twin', 'by_choice'):
        (tmp_path / folder).mkdir()
    wls = _identified(bag, tmp_path / 'by_wls', '--method', 'wls')
    twin = _identified(bag, tmp_path / 'by_twin', '--method', user_method)
    assert twin['method'] == user_method and wls['method'] == 'wls'
    assert twin['provenance']['software'] == {'dynid_wls_twin': '0.1', 'dynid': wls['provenance']['software']['dynid']}
    assert set(wls['provenance']['software']) == {'dynid'}
    assert _values(twin) == _values(wls)  # the same solve in the same pipeline: the same numbers, to the bit
    chosen = _identified(bag, tmp_path / 'by_choice', '--method', 'auto')
    tried = chosen['model']['choice']['tried']['method']
    assert set(tried) == {'wls', 'irls', user_method, 'chosen'} and np.isfinite(tried[user_method])
    assert any(user_method.upper() in line for line in chosen['model']['choice']['lines'])
    recording = tmp_path / 'node'  # identifier_node's core, on the recording as it was written
    recording.symlink_to(bag, target_is_directory=True)
    node = IdentificationSession(ur5e, 'ur5e').identify(recording, IdentifierSettings(
        method=user_method, friction='viscous_coulomb', report=False))
    assert node.result.method == user_method


def test_a_method_registered_by_a_call_is_a_choice_until_it_is_forgotten(bag, tmp_path):
    twin = dataclasses.replace(ols_method.METHOD, name='ols_twin', description='OLS under another name')
    register_method(twin)
    try:
        assert method_names()[-1] == 'ols_twin' and 'ols_twin' in CHOICES['method']
        assert way_out_methods() == ['wls', 'ols', 'irls', 'ols_twin']  # the start method first
        for folder in ('by_ols', 'by_twin'):
            (tmp_path / folder).mkdir()
        ols = _identified(bag, tmp_path / 'by_ols', '--method', 'ols', '--no-prior')
        registered = _identified(bag, tmp_path / 'by_twin', '--method', 'ols_twin', '--no-prior')
        assert registered['method'] == 'ols_twin' and _values(registered) == _values(ols)
        assert registered['provenance']['software']['method ols_twin'] == 'registered in the process'
        with pytest.raises(InputError, match='installed already'):
            register_method(dataclasses.replace(twin, name='wls'))
    finally:
        unregister_method('ols_twin')
    assert 'ols_twin' not in METHODS
    with pytest.raises(InputError, match=rf"method must be one of auto, {', '.join(BUILT_INS)}, got 'ols_tw"):
        check_settings(IdentifierSettings(method='ols_twin'))


def test_settle_applies_what_a_registered_method_says_of_its_friction_options_and_prior():
    """A method's own law where the law is open, the law it requires (a change said with its reason), the laws it
    takes, the options it reads and physical consistency, all from its IdentificationMethod."""
    own = dataclasses.replace(ols_method.METHOD, name='ols_own_law', friction_default='comprehensive',
                              friction_required=True, friction_reason='it says so', physical=False,
                              method_options=(FIX_DRIVE_GAIN,), way_out=False)
    narrow = dataclasses.replace(ols_method.METHOD, name='ols_narrow', friction=('none',), way_out=False)
    register_method(own), register_method(narrow)
    try:
        request = settle([], ModelSpec(friction='viscous_coulomb'), IdentifyOptions(method='ols_own_law'))
        assert request.spec.friction == 'comprehensive' and request.changes == (
            {'setting': 'friction', 'given': 'viscous_coulomb', 'used': 'comprehensive', 'reason': 'it says so'},)
        IdentifyOptions(method='ols_own_law', method_options={'fix_drive_gain': '1=10'}).validated()  # it reads them
        with pytest.raises(InputError, match=r"builds on OLS, WLS, IRLS or OLS_NARROW, not 'ols_own_law'"):
            IdentifyOptions(method='ols_own_law', physical=dataclasses.replace(
                IdentifyOptions().physical, consistency='always')).validated()
        with pytest.raises(InputError, match=r'method ols_narrow has no option fix_drive_gain \(its options: none; '
                                             r'fix_drive_gain is an option of tls, mls, ols_own_law\)'):
            IdentifyOptions(method='ols_narrow', method_options={'fix_drive_gain': '1=10'}).validated()
        with pytest.raises(InputError, match="identifies the friction models none only, not 'viscous_coulomb'"):
            settle([], ModelSpec(friction='viscous_coulomb'), IdentifyOptions(method='ols_narrow'))
    finally:
        unregister_method('ols_own_law'), unregister_method('ols_narrow')


#: the option of a method registered by a test, offered under its own name: ``--ridge-scale``, identifier_node's
#: ``ridge_scale``
RIDGE = MethodOption('ridge_scale', 'float', 0.0, 'a scale the method reads', low=0.0, high=10.0, flag=True)


def test_a_registered_methods_flagged_option_is_a_flag_of_dynid_identify_read_by_the_method(bag, tmp_path):
    """A method's option declared with a flag becomes ``dynid identify``'s ``--ridge-scale`` (from the declaration:
    no front end names it), reaches the method's solve as given, and is refused by name for a method that does not
    declare it; gone with the method."""
    from dynid.cli import build_parser
    from dynid.cli.identify import method_entries
    from dynid.identify.registry import parse_method_options

    seen = []

    def solve(w, y, joints, names, *, options, **kwargs):
        seen.append(RIDGE.value_in(options.method_options))
        return ols_method.solve(w, y, joints, names, options=options, **kwargs)

    register_method(dataclasses.replace(ols_method.METHOD, name='ols_ridged', solve=solve, way_out=False,
                                        method_options=(RIDGE,)))
    try:
        args = build_parser('identify').parse_args(['identify', 'bag', '-o', 'r.yaml', '--ridge-scale', '0.5',
                                                    '--weight-function', 'tukey'])
        assert parse_method_options(method_entries(args)) == {'ridge_scale': '0.5', 'weight_function': 'tukey'}
        assert '--ridge-scale RIDGE_SCALE' in run_dynid('identify', '--help').stdout
        ridged = _identified(bag, tmp_path, '--method', 'ols_ridged', '--no-prior', '--ridge-scale', '0.5')
        assert seen and set(seen) == {0.5} and ridged['method'] == 'ols_ridged'
        assert ridged['provenance']['options']['weight_function'] == 'huber'  # IRLS's default, recorded as before
        refused = run_dynid('identify', bag, '--method', 'wls', '--ridge-scale', '0.5', '--quiet',
                            '-o', tmp_path / 'wls.yaml')
        assert refused.returncode == 2 and not (tmp_path / 'wls.yaml').exists()
        assert refused.stderr.strip().splitlines() == [
            'dynid identify: error: method wls has no option ridge_scale (its options: none; ridge_scale is an option '
            'of ols_ridged)']
    finally:
        unregister_method('ols_ridged')
    assert '--ridge-scale' not in run_dynid('identify', '--help').stdout


def test_a_method_option_is_refused_by_name_for_a_method_that_does_not_declare_it():
    """IRLS's weight function and TLS's held gains are the methods' own options: given for another method they are
    refused naming the methods that take them; left to dynid (auto), those of the methods it may end with (IRLS's
    weight function scores IRLS in the choice) are taken; a value given twice for an option of one value is refused."""
    with pytest.raises(InputError, match=r'^method wls has no option weight_function \(its options: none; '
                                         r'weight_function is an option of irls, iirls\)$'):
        IdentifyOptions(method='wls', method_options={'weight_function': 'cauchy'}).validated()
    with pytest.raises(InputError, match=r'^method auto \(ols, wls or irls\) has no option fix_drive_gain \(its '
                                         r'options: weight_function; fix_drive_gain is an option of tls, mls\)$'):
        IdentifyOptions(method='auto', method_options={'fix_drive_gain': 'elbow_joint=10'}).validated()
    IdentifyOptions(method='auto', method_options={'weight_function': 'cauchy'}).validated()
    IdentifyOptions(method='mls', method_options={'fix_drive_gain': 'elbow_joint=10'}).validated()
    with pytest.raises(InputError, match='method option weight_function must be one of huber, tukey, cauchy'):
        IdentifyOptions(method='auto', method_options={'weight_function': 'l1'}).validated()
    twice = parse_method_options(['weight_function=tukey', 'weight_function=cauchy'])
    with pytest.raises(InputError, match='method option weight_function takes one value, got 2: tukey, cauchy'):
        IdentifyOptions(method='irls', method_options=twice).validated()
    held = parse_method_options(['fix_drive_gain=elbow_joint=10', 'fix_drive_gain=wrist_1_joint=9'])
    assert identification_method('tls').option_values(held) == {'fix_drive_gain': ('elbow_joint=10',
                                                                                   'wrist_1_joint=9')}


def test_a_broken_or_ambiguous_method_is_refused_by_name(tmp_path, monkeypatch):
    broken = install_user_package(tmp_path / 'broken', 'dynid_broken_method', 'import not_a_module\n',
                                  {'broken': 'dynid_broken_method:METHOD'}, GROUP)
    twin = install_user_package(tmp_path / 'twin', 'dynid_wls_again', 'from dynid.identify.methods.ols import METHOD\n',
                                {'wls': 'dynid_wls_again:METHOD'}, GROUP)
    monkeypatch.syspath_prepend(str(broken))
    with pytest.raises(InputError, match=r"'broken' \(dynid_broken_method:METHOD\) cannot be loaded: "
                                         r"ModuleNotFoundError"):
        identification_method('broken')
    monkeypatch.syspath_prepend(str(twin))
    with pytest.raises(InputError, match="'wls' is registered twice"):
        identification_method('wls')
