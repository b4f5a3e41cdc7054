"""The package of test/plugin_package, one plug-in of each kind written outside src/ as another project would write
it (a method, a law with its own symbol names, a prior source kind, a feedforward term) and registered by the entry
points of its .dist-info: each passes its check (dynid.testing)."""

import sys
from pathlib import Path

import pytest
import yaml

from dynid.control.plugins import REGISTRY as TERMS
from dynid.friction.laws import friction_law
from dynid.identify.registry import identification_method
from dynid.identify.solve.prior_source import REGISTRY as PRIOR_SOURCES
from dynid.testing import check_feedforward_term, check_friction_law, check_method, check_prior_source, plugin_checks
from dynid.testing.twin import twin

PACKAGE = Path(__file__).parent / 'plugin_package'


@pytest.fixture
def example_package(monkeypatch):
    """test/plugin_package on sys.path: its .dist-info's entry points registered."""
    monkeypatch.syspath_prepend(str(PACKAGE))
    yield
    monkeypatch.undo()
    for module in [name for name in sys.modules if name.startswith('dynid_example_plugins')]:
        del sys.modules[module]


def _names(kind: str) -> list[str]:
    return [plugin.name for plugin, _ in plugin_checks(kind)]


def test_the_packages_method_is_found_by_its_entry_point_and_passes_its_check(example_package):
    assert _names('method')[-1] == 'ridge'
    check_method(identification_method('ridge'))


def test_the_packages_law_with_its_own_symbols_is_found_by_its_entry_point_and_passes_its_check(example_package):
    """Its symbols Ct, Cv, Co play the parts Fc, Fv, tau0: the E-GMS feedforward and the stiffness estimator read them
    by role."""
    assert _names('friction_law')[-1] == 'tanh_viscous'
    law = friction_law('tanh_viscous')
    assert law.symbols == ('Ct', 'Cv', 'Co') and law.coulomb_viscous
    check_friction_law(law)


def test_the_packages_term_is_found_by_its_entry_point_and_passes_its_check(example_package):
    assert _names('feedforward_term')[-1] == 'cable_spring'
    check_feedforward_term(TERMS.get('cable_spring'), {'stiffness': 2.0, 'rest': 0.1})


def test_the_packages_prior_source_is_found_by_its_entry_point_and_passes_its_check(example_package, tmp_path):
    """On a table of the twin's base parameters, each spread by 10 % of its value and 0.01: dynid identify --prior
    loads it through the package's kind, found by its entry point."""
    robot = twin().robot
    values = robot.base.from_standard(robot.standard_parameters)
    table = tmp_path / 'base_table.yaml'
    table.write_text(yaml.safe_dump({
        'dynid_prior': 'base parameter table', 'robot': robot.name, 'joint_names': list(robot.joint_names),
        'parameters': {name: {'expression': expression, 'value': float(value), 'std': 0.1 * abs(float(value)) + 0.01}
                       for name, expression, value in zip(robot.base.names, robot.base.expressions, values,
                                                          strict=True)}}))
    check_prior_source(PRIOR_SOURCES.get('base_table'), table)
