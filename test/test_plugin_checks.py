"""The plug-in checks (dynid.testing): every built-in method, friction law, feedforward term and prior source passes
the check of its kind, and a plug-in broken in one way fails its check by an AssertionError naming the check, the
plug-in and what is wrong."""

import dataclasses

import numpy as np
import pytest

from builders import fleet_results, members_of
from dynid.control import TermPlugin, term_names
from dynid.fleet.prior import fleet_prior
from dynid.friction.law import ONE, VELOCITY, Feature
from dynid.friction.laws import VISCOUS_COULOMB, register_law, unregister_law
from dynid.identify import register_prior_source, unregister_prior_source
from dynid.identify.methods import ols, wls
from dynid.identify.registry import method_names, register_method, unregister_method
from dynid.identify.solve.prior_source import FLEET_PRIOR, RESULT_PRIOR, ResultPrior
from dynid.testing import (
    all_checks,
    check_feedforward_term,
    check_friction_law,
    check_id,
    check_method,
    check_prior_source,
    plugin_checks,
)
from dynid.testing.twin import fit, twin

PRIOR_KINDS = {'result': RESULT_PRIOR, 'fleet': FLEET_PRIOR}  # dynid's own, the entry points of setup.py


@pytest.fixture(scope='module')
def prior_files():
    """A file of each built-in prior source for the twin's robot: its identification's result, and the prior of a
    synthetic fleet of 6 robots of its model."""
    robot, (_, result) = twin().robot, fit()
    fleet = fleet_prior(members_of(fleet_results(robot, 6, seed=0))).save(twin().folder / 'fleet_prior.yaml')
    return {'result': result, 'fleet': fleet}


@pytest.mark.parametrize('plugin, check', list(all_checks()), ids=check_id)
def test_every_built_in_plugin_passes_its_check(plugin, check):
    check(plugin)


def test_the_checks_go_through_every_registered_plugin_of_each_kind():
    names = {kind: [check_id(plugin) for plugin, _ in plugin_checks(kind)]
             for kind in ('method', 'friction_law', 'feedforward_term')}
    assert names['method'] == list(method_names())
    assert set(names['method']) == {'ols', 'wls', 'irls', 'iirls', 'tls', 'mls', 'didim', 'idim_iv'}
    assert names['friction_law'] == ['none', 'viscous_coulomb', 'load_squared', 'load_absolute', 'hamon',
                                     'comprehensive']
    assert names['feedforward_term'] == list(term_names())
    with pytest.raises(ValueError, match='kind must be one of method, friction_law'):
        list(plugin_checks('controller'))


def test_every_built_in_prior_source_passes_its_check(prior_files):
    """Each registered kind of prior file on a file of its kind (plugin_checks); without a file for one, refused."""
    pairs = list(plugin_checks('prior_source', prior_files))
    assert [kind for kind, _ in pairs] == [PRIOR_KINDS['result'], PRIOR_KINDS['fleet']]
    for kind, check in pairs:
        check(kind)
    with pytest.raises(ValueError, match=r"prior_files gives no file of the prior sources \['fleet'\]"):
        list(plugin_checks('prior_source', {'result': prior_files['result']}))


def test_a_prior_source_is_checked_on_a_file_of_its_kind(prior_files):
    """The fleet kind does not recognize a result file: its check on that file fails, naming it."""
    with pytest.raises(AssertionError, match=r"check_prior_source: prior source 'fleet': recognizes\(.*\) is not True"):
        check_prior_source(PRIOR_KINDS['fleet'], prior_files['result'])


@pytest.fixture
def registered():
    """Registers methods and laws for one test, forgetting them after."""
    made = []

    def register(plugin):
        (register_method if hasattr(plugin, 'solve') else register_law)(plugin)
        made.append(plugin)
        return plugin

    yield register
    for plugin in made:
        (unregister_method if hasattr(plugin, 'solve') else unregister_law)(plugin.name)


def _law(name: str, **changes):
    return dataclasses.replace(VISCOUS_COULOMB, name=name, description=f'viscous_coulomb as {name}', **changes)


@pytest.mark.parametrize('law, found', [
    (_law('roles_astray', roles={'Fc': 'Fq', 'Fv': 'Fv', 'tau0': 'tau0'}),
     r"roles maps \{'Fc': 'Fq'\} to symbols the law lacks"),
    (_law('unbounded_sign', non_negative=('Fc', 'Fs')), r"non_negative names \['Fs'\], not symbols of the law"),
    (_law('nan_feature', prepared={'Fc': Feature('nan', lambda w, s: np.full_like(w, np.nan)), 'Fv': VELOCITY,
                                   'tau0': ONE}), 'feature Fc is not finite'),
    (_law('short_feature', prepared={'Fc': Feature('short', lambda w, s: s[:, :1]), 'Fv': VELOCITY, 'tau0': ONE}),
     r'feature Fc has shape \(50, 1\)'),
], ids=lambda value: getattr(value, 'name', 'message'))
def test_a_broken_law_fails_its_check_by_name(registered, law, found):
    with pytest.raises(AssertionError, match=rf"^check_friction_law: friction law '{law.name}': .*{found}"):
        check_friction_law(registered(law))


def test_an_unregistered_plugin_fails_its_check():
    with pytest.raises(AssertionError, match="friction law 'nowhere': finding it by name in the registry raised "
                                             "InputError: unknown friction law 'nowhere'"):
        check_friction_law(_law('nowhere'))


def _short_solve(w, y, joints, names, **kwargs):
    estimate = ols.solve(w, y, joints, names, **kwargs)
    return dataclasses.replace(estimate, values=estimate.values[:-1])


def _zero_solve(w, y, joints, names, **kwargs):
    estimate = ols.solve(w, y, joints, names, **kwargs)
    return dataclasses.replace(estimate, values=np.zeros_like(estimate.values))


@pytest.mark.parametrize('method, found', [
    (dataclasses.replace(ols.METHOD, name='short_values', solve=_short_solve, reduced_rows=False),
     'identifying the twin with friction viscous_coulomb, its own solution raised'),
    (dataclasses.replace(ols.METHOD, name='zero_values', solve=_zero_solve, way_out=False),
     r'predicts the held-out torque with a relative residual of 1\.0'),
    (dataclasses.replace(wls.METHOD, name='lost_law', friction=('viscous_coulomb', 'coulomb_only')),
     r"friction names laws that are not registered: \['coulomb_only'\]"),
    (dataclasses.replace(wls.METHOD, name='two words'), 'its name must be one word'),
], ids=lambda value: getattr(value, 'name', 'message'))
def test_a_broken_method_fails_its_check_by_name(registered, method, found):
    """A solve giving fewer values than columns breaks the fit; one giving zeros fits nothing of the held-out torque
    (the bound is 5 %); a declaration naming a law not registered, or a name a front end cannot take, is refused."""
    with pytest.raises(AssertionError, match=rf"^check_method: identification method '{method.name}': .*{found}"):
        check_method(registered(method))


class _Constant:
    def __init__(self, torque):
        self.torque = torque

    def evaluate(self, q, dq, ddq, context):
        return np.broadcast_to(self.torque, np.shape(q)) if np.ndim(self.torque) else np.full(np.shape(q)[-1:],
                                                                                              self.torque)


class _Wobbly(_Constant):
    def gravity(self, q, context):
        return np.zeros(np.shape(q))


@pytest.mark.parametrize('plugin, found', [
    (TermPlugin('nan_torque', 'NaN', lambda robot, result, options: _Constant(np.full(6, np.nan))),
     'evaluate gives non-finite torques'),
    (TermPlugin('one_row', 'a row', lambda robot, result, options: _Constant(1.0)),
     r'evaluate gives torques of shape \(6,\)'),
    (TermPlugin('no_evaluate', 'nothing', lambda robot, result, options: object()), 'without evaluate'),
    (TermPlugin('gravity_astray', 'gravity declared 0', lambda robot, result, options: _Wobbly(np.ones(6))),
     'its torque at rest is not the gravity part it declares'),
    (TermPlugin('needs_option', 'an option', lambda robot, result, options: _Constant(options['gain'])),
     "building it on the twin's robot and result raised KeyError"),
], ids=lambda value: getattr(value, 'name', 'message'))
def test_a_broken_term_fails_its_check_by_name(plugin, found):
    with pytest.raises(AssertionError, match=rf"^check_feedforward_term: feedforward term '{plugin.name}': .*{found}"):
        check_feedforward_term(plugin)


def test_a_prior_source_missing_a_member_fails_its_check_by_name(prior_files):
    @dataclasses.dataclass(frozen=True)
    class Unsourced:
        source: object

        def __getattr__(self, name):
            if name == 'provenance':
                raise AttributeError(name)
            return getattr(self.source, name)

    kind = dataclasses.replace(RESULT_PRIOR, name='unsourced',
                               load=lambda path, robot: Unsourced(ResultPrior.load(path, robot)))
    with pytest.raises(AssertionError, match=r"^check_prior_source: prior source 'unsourced': the loaded source lacks "
                                             r"the PriorSource members \['provenance'\]"):
        check_prior_source(kind, prior_files['result'])


def test_a_prior_source_recognizing_another_kinds_file_fails_its_check_by_name(prior_files):
    """A kind that takes every file for its own: dynid identify --prior refuses a result file two kinds recognize."""
    greedy = dataclasses.replace(RESULT_PRIOR, name='greedy', recognizes=lambda path: True)
    register_prior_source(greedy)
    try:
        with pytest.raises(AssertionError, match=r"^check_prior_source: prior source 'greedy': giving .* as the prior "
                                                 r".* raised InputError: .* is recognized by the prior source kinds "
                                                 r"result and greedy"):
            check_prior_source(greedy, prior_files['result'])
    finally:
        unregister_prior_source('greedy')
