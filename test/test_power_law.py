"""The comprehensive law's viscous power term written about v_s (dynid.friction.power_law): its limit at α = 0 and Li's
span above v_s, every evaluator of a result taking the form the result was written in, a file in Li's form read as
such, and a logarithmic friction identified at α = 0 where Li's form runs its coefficients apart."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from builders import RATE, identified, random_motion, twin_run
from dynid.files import read_yaml
from dynid.friction.power_law import power_term
from dynid.identify.equations.request import ModelSpec, RecordingInput
from dynid.identify.result.result import IdentificationResult
from dynid.identify.steps.run import IdentifyOptions, identify
from dynid.model import load_robot
from dynid.sim.parameters import PlantParameters

ROBOT = load_robot('ur5e')
VS = 0.02


def test_the_shifted_term_is_li_s_column_less_the_coulomb_column_with_its_limit_at_zero():
    w = np.concatenate([-np.geomspace(3.0, 1e-4, 40), [0.0], np.geomspace(1e-4, 3.0, 40)])
    above = np.abs(w) >= VS
    for alpha in (0.05, 0.2, 0.5, 1.0):
        shifted, li = power_term(w, alpha, VS), power_term(w, alpha, None)
        np.testing.assert_allclose(shifted[above], (li[above] - VS**alpha * np.sign(w[above])) / alpha,
                                   rtol=1e-12, atol=1e-13)
        assert np.all(shifted[~above] == 0.0)  # below v_s the law is fc·sgn(ω)
        np.testing.assert_array_equal(li, np.sign(w) * np.abs(w) ** alpha)
    log = power_term(w, 0.0, VS)
    np.testing.assert_allclose(log[above], np.sign(w[above]) * np.log(np.abs(w[above]) / VS), rtol=1e-12)
    np.testing.assert_allclose(power_term(w, 1e-9, VS), log, atol=1e-7)  # continuous in α at 0
    both = power_term(np.stack([w, w], axis=1), np.array([0.0, 1.0]), VS)  # per-joint exponents broadcast
    np.testing.assert_array_equal(both[:, 0], log)
    np.testing.assert_array_equal(both[:, 1], power_term(w, 1.0, VS))


EXPONENTS = np.array([0.0, 0.3, 0.5, 0.7, 1.0, 1.0])
VALUES = {'fc': 2.5, 'fv': 4.0, 'fo': 0.1, 'fL': 0.0}


@pytest.mark.parametrize('form', ['shifted', 'plain'])
def test_every_evaluator_of_a_result_takes_the_form_it_was_written_in(tmp_path, form):
    """Feedforward (static, E-GMS's remainder), the friction estimator and the stiffness estimator's friction map
    give fc·sgn(ω) + fv·term(ω) + fo with the result's own term: the shifted one where its model says so (written
    and read back through the file), Li's sgn(ω)·|ω|^α where the file has no ``power_form`` (written before)."""
    from dynid.control import build_term
    from dynid.control.friction_egms import velocity_friction
    from dynid.control.friction_static import friction_parameters
    from dynid.estimate import EstimationSettings, StiffnessEstimator, build_estimators

    model = {'power_form': 'shifted', 'power_velocity': VS} if form == 'shifted' else {}
    exponents = EXPONENTS if form == 'shifted' else np.where(EXPONENTS == 0, 0.2, EXPONENTS)  # Li's: α > 0
    result = identified(ROBOT, 'comprehensive', VALUES, exponents=exponents, model=model)
    path = result.save(tmp_path / 'result.yaml')
    # an older reader (versions 1 and 2) would take the shifted fc, fv in Li's form: the file's version refuses it
    assert read_yaml(path, 'result file')['dynid_result'] == (3 if form == 'shifted' else 1)
    result = IdentificationResult.load(path)
    assert result.power_velocity == (VS if form == 'shifted' else None)
    w = np.linspace(-2.0, 2.0, 401)[:, None] * np.linspace(0.5, 1.0, ROBOT.n)
    w = w[np.all(np.abs(w) > 1e-2, axis=1)]  # outside the feedforward's sign band
    term = power_term(w, exponents, VS if form == 'shifted' else None)
    expected = VALUES['fc'] * np.sign(w) + VALUES['fv'] * term + VALUES['fo']
    static = build_term('friction_static', ROBOT, result, {'band': 1e-3})
    np.testing.assert_allclose(static.friction_torque(w, np.zeros_like(w), 20.0), expected, rtol=1e-12, atol=1e-12)
    remainder = velocity_friction(result, friction_parameters(result, ROBOT), ROBOT.joint_names)
    np.testing.assert_allclose(remainder(w, None), VALUES['fv'] * term + VALUES['fo'], rtol=1e-12, atol=1e-12)
    estimator = build_estimators(ROBOT, result, EstimationSettings(stiffness=False), RATE).friction
    np.testing.assert_allclose(estimator.velocity_friction(w, np.full_like(w, np.nan)),
                               VALUES['fv'] * term + VALUES['fo'], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(StiffnessEstimator(ROBOT.drives, result).friction_torque(w), expected,
                               rtol=1e-12, atol=1e-12)


def test_a_result_names_its_power_term_once_for_every_evaluator():
    """IdentificationResult.power_exponents and power_velocity: the identified α per joint in the order asked for,
    the model's fixed exponent where none was identified, α = 1 and no v_s for every other law (whatever its model
    says of the form)."""
    shifted = {'power_form': 'shifted', 'power_velocity': VS}
    result = identified(ROBOT, 'comprehensive', VALUES, exponents=EXPONENTS, model=shifted)
    np.testing.assert_array_equal(result.power_exponents(), EXPONENTS)
    np.testing.assert_array_equal(result.power_exponents(ROBOT.joint_names[::-1]), EXPONENTS[::-1])
    assert result.power_velocity == VS
    fixed = identified(ROBOT, 'comprehensive', VALUES, model={**shifted, 'exponent': 0.4})
    np.testing.assert_array_equal(fixed.power_exponents(), np.full(ROBOT.n, 0.4))
    other = identified(ROBOT, 'viscous_coulomb', {'Fc': 1.0, 'Fv': 2.0}, exponents=EXPONENTS, model=shifted)
    np.testing.assert_array_equal(other.power_exponents(), np.ones(ROBOT.n))
    assert other.power_velocity is None and other.version == 1


def _plain(log_joint: bool):
    params = PlantParameters.defaults(ROBOT)
    params.joints.friction_model = 'coulomb_viscous'
    if log_joint:  # the shoulder pan's friction all Coulomb + the logarithmic term (_logarithmic)
        params.joints.viscous1 = params.joints.viscous1 * np.array([0.0, 1, 1, 1, 1, 1])
    return params


def _recorded(extra, seed: int, log_joint: bool):
    """12 s of the plain twin at 500 Hz with ``extra(q̇_1)`` [N·m] more friction on the shoulder pan's current."""
    dataset = twin_run(_plain(log_joint), random_motion(ROBOT, seed), 12.0, seed, rate_hz=500.0)
    current = dataset.current.copy()
    current[:, 0] += extra(dataset.dq[:, 0]) / ROBOT.drives.drive_gain[0]
    return dataclasses.replace(dataset, current=current)


def _root(w):
    """2 N·m·sgn(ω)·(max(|ω|, v_s)^0.2 − v_s^0.2)/0.2: with the twin's Coulomb 3 N·m, fc = 3 and fv = 2 of the shifted
    law at the grid's least exponent; in Li's form the same torque is fc = 3 − 10·v_s^0.2 = −1.57, fv = 10."""
    return 2.0 * power_term(w, 0.2, VS)


def test_a_low_exponent_keeps_its_meaning_where_li_s_form_runs_apart():
    """The model choice keeps α = 0.2 (refitted within 0.05 of it) on the joint whose friction has that root, with fc,
    fv at the truth (3, 2 N·m):
    fc the friction at v_s. Li's form (``power_form='plain'``) spans the same torques above v_s but splits the level
    between a negative fc and an fv five times larger; both predict another motion alike."""
    from dynid.identify.validation.validate import validate

    train, held = (_recorded(_root, seed, True) for seed in (3, 8))
    results = {form: identify(ROBOT, [RecordingInput(train)], ModelSpec(friction='auto', power_form=form),
                              options=IdentifyOptions('auto')) for form in ('shifted', 'plain')}
    shifted, plain = results['shifted'], results['plain']
    assert 'shoulder_pan_joint 0.2' in ' '.join(shifted.model['choice']['lines'])
    assert abs(shifted.exponents[0] - 0.2) < 0.05 and shifted.model['power_velocity'] == VS
    assert abs(shifted.value('fc_1') - 3.0) < 0.3 and abs(shifted.value('fv_1') - 2.0) < 0.2
    assert plain.value('fv_1') > 4 * shifted.value('fv_1') and plain.value('fc_1') < 0  # run apart
    rmse = {form: validate(r, ROBOT, held)['joints']['shoulder_pan_joint']['rmse'] for form, r in results.items()}
    assert rmse['shifted'] == pytest.approx(rmse['plain'], rel=0.05), rmse


def _sublinear(w):
    return 3.0 * np.sign(w) * np.abs(w) ** 0.3


def test_a_file_in_li_s_form_is_validated_in_that_form():
    """A result file without ``power_form`` (written before the shifted form) holds Li's fc, fv: the same model as a
    shifted result, its coefficients converted (fc − fv·v_s^α/α, fv/α), is validated to the same figures (within
    what the two forms differ below v_s), and read as shifted it would not be."""
    from dynid.identify.validation.validate import validate

    train, held = (_recorded(_sublinear, seed, False) for seed in (3, 8))
    result = identify(ROBOT, [RecordingInput(train)], ModelSpec(friction='auto'), options=IdentifyOptions('auto'))
    assert result.model['friction'] == 'comprehensive' and 0 < result.exponents[0] < 1
    data = result.to_dict()
    del data['model']['power_form'], data['model']['power_velocity']
    values = result.values.copy()
    for j, alpha in enumerate(result.exponents):
        fc, fv = (result.parameter_names.index(f'{symbol}_{j + 1}') for symbol in ('fc', 'fv'))
        values[fc], values[fv] = result.values[fc] - result.values[fv] * VS**alpha / alpha, result.values[fv] / alpha
    old = dataclasses.replace(IdentificationResult.from_dict(data), values=values)
    assert old.power_velocity is None
    mine, theirs = (validate(r, ROBOT, held)['joints'] for r in (result, old))
    for joint in ROBOT.joint_names:
        assert theirs[joint]['rmse'] == pytest.approx(mine[joint]['rmse'], rel=2e-3), joint
    misread = dataclasses.replace(old, model={**old.model, 'power_form': 'shifted', 'power_velocity': VS})
    assert validate(misread, ROBOT, held)['joints']['shoulder_pan_joint']['rmse'] > 1.5 * \
        mine['shoulder_pan_joint']['rmse']
