"""Friction laws as registered strategies (dynid.friction.laws): the built-ins in the entry-point group, each law's
torque the sum of its features, and a law written outside dynid used by name by ``dynid identify --friction``,
``dynid validate`` and the feedforward's friction_static with no edit to dynid."""

import sys

import numpy as np
import pytest
import yaml

from builders import SYNTHETIC_FC, install_user_package, synthetic_recording
from cli_run import run_dynid
from dynid.control.friction_static import StaticFrictionTerm
from dynid.errors import InputError
from dynid.friction.law import ONE, SIGN, VELOCITY, Feature, FrictionLaw, LawContext
from dynid.friction.laws import GROUP, friction_law, law_names, register_law, unregister_law
from dynid.identify.choices import FRICTION_MODELS
from dynid.identify.equations.request import ModelSpec, RecordingInput, friction_symbols
from dynid.identify.result.result import IdentificationResult
from dynid.identify.selection.whole_laws import PER_JOINT
from dynid.identify.settings import CHOICES
from dynid.identify.steps.run import identify

BUILT_INS = ('none', 'viscous_coulomb', 'load_squared', 'load_absolute', 'hamon', 'comprehensive')

#: a law of another package: Coulomb friction smoothed by tanh(ω/5 mrad/s) under its own symbol, viscous and offset
USER_LAW = """\
    import numpy as np

    from dynid.friction.law import ONE, VELOCITY, Feature, FrictionLaw

    LAW = FrictionLaw('tanh_coulomb', 'tanh-smoothed Coulomb + viscous + offset', ('Ft', 'Fv', 'tau0'),
                      {'Ft': Feature('tanh', lambda w, s: np.tanh(w / 0.005)), 'Fv': VELOCITY, 'tau0': ONE},
                      physical=False, roles={'tau0': 'tau0'})
    """


@pytest.fixture(scope='module')
def bag(excited_ur5e_bag):
    return excited_ur5e_bag


@pytest.fixture
def user_law(tmp_path, monkeypatch):
    """The package of :data:`USER_LAW` installed (on sys.path with its entry point) for the test."""
    source = install_user_package(tmp_path / 'law', 'dynid_tanh_law', USER_LAW,
                                  {'tanh_coulomb': 'dynid_tanh_law:LAW'}, GROUP)
    monkeypatch.syspath_prepend(str(source))
    yield 'tanh_coulomb'
    monkeypatch.undo()
    sys.modules.pop('dynid_tanh_law', None)


def test_built_in_laws_are_registered_and_each_torque_is_the_sum_of_its_features():
    assert law_names() == BUILT_INS and tuple(FRICTION_MODELS) == BUILT_INS
    assert tuple(CHOICES['friction']) == ('auto', *BUILT_INS)
    rng = np.random.default_rng(3)
    w, tau = rng.normal(size=(50, 6)), 20 * rng.normal(size=(50, 6))
    context = LawContext(0.03, rng.uniform(0.3, 1.0, 6), 0.02)
    for name in BUILT_INS:
        law = friction_law(name)
        assert friction_symbols(name, False) == law.symbols
        parameters = {symbol: rng.normal(size=6) for symbol in law.symbols}
        features = law.features(w, np.sign(w), tau, context)
        assert set(features) == set(law.symbols)
        expected = sum((features[symbol] * parameters[symbol] for symbol in law.symbols), np.zeros_like(w))
        np.testing.assert_allclose(law.torque(parameters, w, np.sign(w), tau, context), expected, rtol=1e-12)
        without_load = law.features(w, np.sign(w), None, context)
        assert set(without_load) == set(law.symbols) - set(law.load_symbols)
    # the load laws read the output torque, the others do not
    assert [name for name in BUILT_INS if friction_law(name).load_symbols] == \
        ['load_squared', 'load_absolute', 'hamon', 'comprehensive']
    assert [name for name in BUILT_INS if not friction_law(name).physical] == ['hamon']
    with pytest.raises(InputError, match=r"unknown friction law 'coulomb'; installed: none, viscous_coulomb"):
        friction_law('coulomb')


def test_a_law_whose_symbols_are_not_each_made_once_is_refused():
    with pytest.raises(ValueError, match="symbols .* are not made once each"):
        FrictionLaw('twice', 'Fc made twice', ('Fc', 'Fv'), {'Fc': SIGN, 'Fv': VELOCITY},
                    loaded=lambda w, s, tau, c: {'Fc': s * tau}, load_symbols=('Fc',))


def test_a_law_of_another_package_is_identified_validated_and_fed_forward_by_name(ur5e, bag, tmp_path, user_law):
    """``tanh_coulomb``, a law no module of dynid names, is a choice of the settings, identified by ``dynid identify
    --friction tanh_coulomb`` (its columns in the equations, its parameters in the result), validated by ``dynid
    validate``, and evaluated by the feedforward's friction_static from the result as its own features say."""
    assert user_law in FRICTION_MODELS and user_law in CHOICES['friction']
    path = tmp_path / 'result.yaml'
    done = run_dynid('identify', bag, '--friction', user_law, '--method', 'wls', '-o', path, '--quiet')
    assert done.returncode == 0, done.stderr
    written = yaml.safe_load(path.read_text())
    assert written['model']['friction'] == user_law
    assert written['model']['friction_symbols'][:3] == ['Ft', 'Fv', 'tau0']
    friction = {row['name']: row['value'] for row in written['friction']}
    assert all(f'Ft_{j}' in friction for j in range(1, 7))
    assert sum(friction[f'Ft_{j}'] > 0 for j in range(1, 7)) >= 5  # the twin's Coulomb friction, found by its columns
    checked = run_dynid('validate', bag, '--params', path, '--json', tmp_path / 'validation.json')
    assert checked.returncode == 0, checked.stderr
    result = IdentificationResult.load(path)
    term = StaticFrictionTerm.from_result(ur5e, result)
    w = np.linspace(-1.0, 1.0, 41)[:, None] * np.ones(6)
    table = result.friction()
    p = {s: np.array([table[joint][s] for joint in ur5e.joint_names]) for s in ('Ft', 'Fv', 'tau0')}
    np.testing.assert_allclose(term.friction_torque(w, None, 20.0),
                               p['Ft'] * np.tanh(w / 0.005) + p['Fv'] * w + p['tau0'], rtol=1e-12, atol=1e-12)


def test_a_law_registered_by_a_call_is_a_choice_until_it_is_forgotten():
    law = FrictionLaw('coulomb_only', 'Coulomb alone', ('Fc',), {'Fc': SIGN})
    register_law(law)
    try:
        assert law_names()[-1] == 'coulomb_only' and 'coulomb_only' in CHOICES['friction']
        assert ModelSpec(friction='coulomb_only').validated().friction == 'coulomb_only'
        with pytest.raises(InputError, match='installed already'):
            register_law(FrictionLaw('hamon', 'another hamon', ('tau0',), {'tau0': ONE}))
    finally:
        unregister_law('coulomb_only')
    assert 'coulomb_only' not in FRICTION_MODELS
    with pytest.raises(InputError, match="friction model must be one of auto, none, viscous_coulomb"):
        ModelSpec(friction='coulomb_only').validated()


def test_a_broken_law_package_is_refused_by_name(tmp_path, monkeypatch):
    source = install_user_package(tmp_path / 'broken', 'dynid_broken_law', 'LAW = 3\n',
                                  {'broken': 'dynid_broken_law:LAW'}, GROUP)
    monkeypatch.syspath_prepend(str(source))
    with pytest.raises(InputError, match=r"friction law 'broken' \(dynid_broken_law:LAW\) is not a FrictionLaw"):
        friction_law('broken')
    assert Feature('x', lambda w, s: w).kind == 'x'


def _whole_law_record(written: dict) -> dict:
    record = written['model']['choice']['tried']['laws']
    assert set(record) == {'scores', 'not_scored', 'margin', 'chosen'}
    return record


def test_the_choice_tries_a_registered_law_whole_and_keeps_it_only_by_the_margin(ur5e, bag, tmp_path, user_law):
    """With the law left open, ``tanh_coulomb`` (another package's) is scored whole beside the per-joint laws on the
    same folds, and the result says so; it replaces them only where it lowers the summed held-out score by the margin.
    The result, whichever law won, is validated."""
    path = tmp_path / 'auto.yaml'
    done = run_dynid('identify', bag, '--method', 'wls', '-o', path, '--quiet')
    assert done.returncode == 0, done.stderr
    written = yaml.safe_load(path.read_text())
    record = _whole_law_record(written)
    scores = record['scores']
    assert set(scores) == {PER_JOINT, user_law} and all(np.isfinite(list(scores.values())))
    won = scores[user_law] < (1 - record['margin']) * scores[PER_JOINT]
    assert record['chosen'] == (user_law if won else PER_JOINT)
    assert (written['model']['friction'] == user_law) == won
    lines = written['model']['choice']['lines']
    assert any(line.startswith("friction laws registered beside dynid's") for line in lines)
    checked = run_dynid('validate', bag, '--params', path, '--json', tmp_path / 'validation.json')
    assert checked.returncode == 0, checked.stderr


def test_a_registered_law_that_is_the_data_s_own_wins_the_choice_and_a_poor_one_loses():
    """The recording's Coulomb friction smoothed over 0.3 rad/s, which none of dynid's laws has: the law of exactly
    that shape, registered by a call, wins the choice by far and is identified (its Ft near the truth on every
    joint); a law of an offset alone scores worse than the per-joint laws and is not taken."""
    width = 0.3
    wide = FrictionLaw('wide_tanh', 'Coulomb smoothed over 0.3 rad/s + viscous + offset', ('Ft', 'Fv', 'tau0'),
                       {'Ft': Feature('wide_tanh', lambda w, s: np.tanh(w / width)), 'Fv': VELOCITY, 'tau0': ONE},
                       roles={'tau0': 'tau0'})
    offset = FrictionLaw('offset_only', 'an offset alone', ('tau0',), {'tau0': ONE}, roles={'tau0': 'tau0'})
    register_law(wide)
    register_law(offset)
    try:
        from dynid.model import load_robot

        robot = load_robot('ur5e')
        recording = synthetic_recording(robot, seconds=12.0, rate_hz=250.0, coulomb_width=width)
        result = identify(robot, [RecordingInput(recording)], ModelSpec(friction='auto'))
    finally:
        unregister_law('wide_tanh')
        unregister_law('offset_only')
    record = result.model['choice']['tried']['laws']
    scores = record['scores']
    assert record['chosen'] == 'wide_tanh' and result.model['friction'] == 'wide_tanh'
    assert scores['wide_tanh'] < 0.2 * scores[PER_JOINT] < 0.2 * scores['offset_only']
    table = result.friction()
    np.testing.assert_allclose([table[joint]['Ft'] for joint in robot.joint_names], SYNTHETIC_FC, rtol=0.1)
