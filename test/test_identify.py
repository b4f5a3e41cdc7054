"""Identification (issue 6): solvers on synthetic systems, the IDIM pipeline on the twin, results."""

import dataclasses

import numpy as np
import pytest

from dynid.errors import InputError
from dynid.excite.fourier import FourierDesign, default_limits, random_design
from dynid.excite.trajectory import builtin_excitation_path, load_trajectory
from dynid.identify.model import ModelSpec, RecordingInput
from dynid.identify.result import IdentificationResult
from dynid.identify.run import IdentifyOptions, identify
from dynid.identify.solvers import check_identifiable, irls, ols, tls, wls
from dynid.identify.validate import predict, predict_series, validate
from dynid.model import load_robot
from dynid.sim.parameters import PlantParameters
from dynid.sim.recording import record_to_dataset
from dynid.sim.twin import DigitalTwin, home_configuration


# ------------------------------------------------------------------------------ solvers, synthetic
def _linear_problem(rows=3000, parameters=8, joints=3, seed=0):
    rng = np.random.default_rng(seed)
    w = rng.normal(size=(rows, parameters))
    truth = rng.normal(size=parameters)
    joint = np.arange(rows) % joints
    sigma = np.array([0.05, 0.2, 1.0])[joint]
    return w, truth, joint, sigma, rng


def test_ols_and_wls_statistics_are_consistent():
    w, truth, joint, sigma, rng = _linear_problem()
    y = w @ truth + sigma * rng.normal(size=len(joint))
    names = [f'p{i}' for i in range(w.shape[1])]
    o, weighted = ols(w, y, joint, names), wls(w, y, joint, names)
    np.testing.assert_allclose(weighted.joint_sigma, [0.05, 0.2, 1.0], rtol=0.1)  # per-joint σ from joint OLS
    for estimate in (o, weighted):
        assert np.all(np.abs(estimate.values - truth) < 4 * estimate.std)
    assert np.all(weighted.std < o.std)  # weighting by 1/σ_j uses the precise joints better


def test_irls_resists_outliers():
    w, truth, joint, sigma, rng = _linear_problem(seed=1)
    y = w @ truth + 0.1 * rng.normal(size=len(joint))
    outliers = rng.choice(len(y), size=60, replace=False)
    y[outliers] += rng.normal(0.0, 20.0, size=60)
    names = [f'p{i}' for i in range(w.shape[1])]
    error_ols = np.abs(ols(w, y, joint, names).values - truth).max()
    error_irls = np.abs(irls(w, y, joint, names, 'tukey').values - truth).max()
    assert error_irls < error_ols / 5


def test_tls_recovers_scaled_gains():
    rng = np.random.default_rng(2)
    rows, joints = 4000, 3
    joint = np.arange(rows) % joints
    w = rng.normal(size=(rows, 5))
    chi = rng.normal(size=5)
    known = rng.normal(size=rows) * (np.arange(rows) >= rows // 2)  # a known load on half the rows
    gains = np.array([12.0, 9.0, 4.0])
    torque = w @ chi + known
    current = (torque + 0.01 * rng.normal(size=rows)) / gains[joint]
    v = np.zeros((rows, joints))
    v[np.arange(rows), joint] = current
    estimate = tls(np.hstack([v, -w, -known[:, None]]), joint, [f'g{j}' for j in range(3)] + list('abcde'))
    np.testing.assert_allclose(estimate.values[:3], gains, rtol=2e-3)
    np.testing.assert_allclose(estimate.values[3:], chi, atol=5e-3)


def test_rank_deficiency_names_the_parameters():
    w = np.random.default_rng(3).normal(size=(100, 3))
    w = np.column_stack([w, w[:, 0] + w[:, 1]])
    with pytest.raises(InputError, match="cannot separate the parameters"):
        check_identifiable(w, ['a', 'b', 'c', 'd'])
    with pytest.raises(InputError, match=r"\['z'\]"):
        check_identifiable(np.column_stack([w[:, :3], np.zeros(100)]), ['a', 'b', 'c', 'z'])


# --------------------------------------------------------------------------------- on the twin
@pytest.fixture(scope='module')
def twin_data():
    """20 s of the shipped UR5e excitation and 10 s of a random one, matched friction, 500 Hz."""
    robot = load_robot('ur5e')
    params = PlantParameters.defaults(robot)
    params.joints.friction_model = 'coulomb_viscous'
    excitation = load_trajectory(builtin_excitation_path('ur5e'))
    home = home_configuration(robot)
    design = FourierDesign(robot.joint_names, 5, 10.0)
    other = design.trajectory(random_design(design, home, default_limits(robot, home), np.random.default_rng(7),
                                            np.linspace(0, 10, 4000, endpoint=False)))

    def record(trajectory, seconds, seed):
        trajectory = dataclasses.replace(trajectory, duration_s=seconds)
        twin = DigitalTwin(params, rate_hz=500.0, seed=seed, initial_q=trajectory.evaluate(np.array([0.0]))[0][0])
        twin.follow(trajectory)
        return record_to_dataset(twin.run(seconds), None, {})

    return robot, params, record(excitation, 20.0, 1), record(other, 10.0, 2)


def test_wls_recovers_the_matched_twin(twin_data):
    # Tolerances: ≥ 90 % of the 36 base parameters within 3σ of the truth on this 20 s, 500 Hz
    # recording (the benchmark asks ≥ 95 % on 60 s at 1 kHz), Coulomb and viscous friction within
    # 3 %, and a validation NRMSE fit above 95 % on every joint.
    robot, params, train, test = twin_data
    result = identify(robot, [RecordingInput(train)], ModelSpec(), options=IdentifyOptions('wls'))
    truth = dict(zip(robot.base.names, robot.base.from_standard(robot.standard_parameters), strict=True))
    z = [(result.value(n) - v) / result.std[result.parameter_names.index(n)] for n, v in truth.items()]
    assert np.mean(np.abs(z) < 3) >= 0.9
    for j in range(6):
        assert result.value(f'Fc_{j + 1}') == pytest.approx(params.joints.coulomb[j], rel=0.03)
        assert result.value(f'Fv_{j + 1}') == pytest.approx(params.joints.viscous1[j], rel=0.03)
    metrics = validate(result, robot, test)
    assert min(m['nrmse_fit_percent'] for m in metrics['joints'].values()) > 95.0
    assert result.model['torque_source'] == 'current' and result.model['rotor_compensation']


def test_result_file_round_trip_predicts_the_same(twin_data, tmp_path):
    robot, _, train, test = twin_data
    result = identify(robot, [RecordingInput(train)], ModelSpec(friction='load_squared'),
                      options=IdentifyOptions('ols'))
    path = result.save(tmp_path / 'result.yaml')
    loaded = IdentificationResult.load(path)
    assert loaded.parameter_names == result.parameter_names
    np.testing.assert_allclose(loaded.values, result.values)
    np.testing.assert_allclose(predict(loaded, robot, test).predicted, predict(result, robot, test).predicted)
    assert loaded.friction()['shoulder_pan_joint'].keys() >= {'Fc', 'Fv', 'tau0', 'Fl'}
    with pytest.raises(InputError, match='not a dynid result'):
        IdentificationResult.from_dict({'dynid_result': 9})


def test_methods_and_bad_requests(twin_data):
    robot, _, train, _ = twin_data
    for method in ('ols', 'irls'):
        assert identify(robot, [RecordingInput(train)], options=IdentifyOptions(method)).method == method
    with pytest.raises(InputError, match='known payload mass'):
        identify(robot, [RecordingInput(train)], options=IdentifyOptions('tls'))
    with pytest.raises(InputError, match='method must be one of'):
        identify(robot, [RecordingInput(train)], options=IdentifyOptions('magic'))
    with pytest.raises(InputError, match='temperature'):
        stripped = dataclasses.replace(train, temperature=None)
        identify(robot, [RecordingInput(stripped)], ModelSpec(temperature=True))


def test_lost_samples_split_the_recording_instead_of_corrupting_derivatives(twin_data):
    robot, params, train, test = twin_data
    holed = train.sliced(0, 4000)
    second = train.sliced(4100, train.n_samples)
    values = {name: None if getattr(holed, name) is None else np.concatenate([getattr(holed, name),
                                                                             getattr(second, name)])
              for name in ('t', 'q', 'dq', 'tau', 'current', 'theta', 'dtheta', 'temperature')}
    holed = dataclasses.replace(holed, **values)
    result = identify(robot, [RecordingInput(holed, name='holed')], ModelSpec(), options=IdentifyOptions('wls'))
    assert any('holed: samples missing; used 2 contiguous pieces' in w for w in result.warnings)
    for j in range(6):
        assert result.value(f'Fc_{j + 1}') == pytest.approx(params.joints.coulomb[j], rel=0.03)
    assert min(m['nrmse_fit_percent'] for m in validate(result, robot, test)['joints'].values()) > 95.0
    times, measured, predicted, used = predict_series(result, robot, holed)  # the report's plot: both pieces
    assert np.count_nonzero(np.isnan(times)) == 1 and np.nanmax(times) > 0.9 * holed.t[-1]
    assert measured.shape == predicted.shape == used.shape == (times.size, 6)
