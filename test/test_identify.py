"""Identification (issue 6): solvers on synthetic systems, the IDIM pipeline on the twin, results."""

import dataclasses
import re

import numpy as np
import pytest

from dynid.errors import InputError
from dynid.excite.fourier import FourierDesign, default_limits, random_design
from dynid.excite.trajectory import builtin_excitation_path, load_trajectory
from dynid.identify.equations.request import ModelSpec, RecordingInput
from dynid.identify.outputs.report import write_report
from dynid.identify.result.result import IdentificationResult
from dynid.identify.solve.solvers import check_identifiable, irls, ols, tls, wls
from dynid.identify.steps.run import IdentifyOptions, identify
from dynid.identify.validation.validate import predict, predict_series, recover_payload, validate
from dynid.model import load_robot
from dynid.sim.parameters import PlantParameters
from dynid.sim.recording import record_to_dataset
from dynid.sim.twin import DigitalTwin, home_configuration
from loss_patterns import bursty_losses


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
    with pytest.raises(InputError, match='known payload'):
        identify(robot, [RecordingInput(train)], options=IdentifyOptions('tls'))
    with pytest.raises(InputError, match='method must be one of'):
        identify(robot, [RecordingInput(train)], options=IdentifyOptions('magic'))
    with pytest.raises(InputError, match='temperature'):
        stripped = dataclasses.replace(train, temperature=None)
        identify(robot, [RecordingInput(stripped)], ModelSpec(temperature=True))


def test_lost_samples_split_the_recording_instead_of_corrupting_derivatives(twin_data):
    robot, params, train, test = twin_data
    holed = train.taken(np.r_[0:4000, 4100:train.n_samples])
    result = identify(robot, [RecordingInput(holed, name='holed')], ModelSpec(), options=IdentifyOptions('wls'))
    assert [w for w in result.warnings if 'lost' in w] == [
        'holed: used 99 % of the recording (9900 of its 9900 samples); 100 of 10000 samples lost (1 %) in 1 gap, '
        'longest 202 ms: 0 bridged (up to 20 ms), 1 kept as split; used 2 of 2 contiguous pieces']
    for j in range(6):
        assert result.value(f'Fc_{j + 1}') == pytest.approx(params.joints.coulomb[j], rel=0.03)
    assert min(m['nrmse_fit_percent'] for m in validate(result, robot, test)['joints'].values()) > 95.0
    times, measured, predicted, used = predict_series(result, robot, holed)  # the report's plot: both pieces
    assert np.count_nonzero(np.isnan(times)) == 1 and np.nanmax(times) > 0.9 * holed.t[-1]
    assert measured.shape == predicted.shape == used.shape == (times.size, 6)


# ------------------------------------------------------------------------------ lost samples
def _lose(dataset, keep):
    """The recording without the samples where ``keep`` is False (lost on the way to the recorder)."""
    return dataset.taken(keep)


def _bursty_losses(count, seed):
    """About 40 % lost in hundreds of gaps. At 500 Hz a piece needs more than 250 samples (0.3 s of
    trimmed ends and ten decimated samples), so the lossy stretches and about a third of the runs
    are too short."""
    return bursty_losses(count, seed, run=(100, 500), stretch=(150, 300))


def _sparse(count, seed, runs=((1000, 1270), (3000, 3270))):
    """One sample in 6 or 7 kept (12–14 ms steps at 500 Hz), except the contiguous ``runs``."""
    rng = np.random.default_rng(seed)
    keep = np.zeros(count, dtype=bool)
    index = np.cumsum(rng.integers(6, 8, size=count // 6)) - 6
    keep[index[index < count]] = True
    for a, b in runs:
        keep[a:b] = True
    return keep


@pytest.fixture(scope='module')
def gapped(twin_data):
    """The twin recordings after heavy losses, and WLS identified from the training one."""
    robot, params, train, test = twin_data
    training = _lose(train, _bursty_losses(train.n_samples, seed=5))
    held_out = _lose(test, _sparse(test.n_samples, seed=6))
    result = identify(robot, [RecordingInput(training, name='gapped')], ModelSpec(), options=IdentifyOptions('wls'))
    return robot, params, training, held_out, result


def test_heavy_losses_give_one_warning_line_and_still_fit(gapped, twin_data, tmp_path):
    robot, params, training, _, result = gapped
    summary = training.gaps()
    assert 0.3 < summary.lost / summary.expected < 0.5 and len(summary.gaps) > 200
    lengths = np.diff(summary.edges)
    assert np.any((lengths >= 100) & (lengths <= 250))  # pieces that reach the filters and are refused there
    about_gaps = [w for w in result.warnings if 'lost' in w or 'piece' in w or 'skipped' in w]
    # Less than 90 % used: the line is a loud warning, with the share used, the gaps and the pieces.
    assert len(about_gaps) == 1 and about_gaps[0].startswith('gapped: only ')
    assert 'of the recording was used' in about_gaps[0] and 'less than 90 %' in about_gaps[0]
    assert summary.line('gapped').removeprefix('gapped: ') in about_gaps[0]
    bridged = int(re.search(r': (\d+) bridged \(up to 20 ms\)', about_gaps[0]).group(1))
    used, pieces, skipped = map(int, re.search(r'used (\d+) of (\d+) contiguous pieces \((\d+) too short',
                                               about_gaps[0]).groups())
    assert pieces == summary.pieces - bridged and used + skipped == pieces and used >= 10 and skipped > 0
    # The result file carries the summary per recording and still loads.
    loaded = IdentificationResult.load(result.save(tmp_path / 'result.yaml'))
    (entry,) = loaded.provenance['inputs']
    assert entry['name'] == 'gapped' and entry['samples'] == training.n_samples
    assert entry['gaps']['lost'] == summary.lost and entry['gaps']['pieces_used'] == used
    assert entry['gaps']['pieces_skipped'] == skipped and entry['gaps']['summary'] == about_gaps[0]
    used_samples = entry['gaps']['used_samples']
    assert entry['gaps']['used_fraction'] == pytest.approx(used_samples / summary.expected)
    assert entry['gaps']['used_fraction'] < 0.9
    # Tolerances as in test_wls_recovers_the_matched_twin: friction within 3 %, held-out fit above 95 %.
    for j in range(6):
        assert result.value(f'Fc_{j + 1}') == pytest.approx(params.joints.coulomb[j], rel=0.03)
        assert result.value(f'Fv_{j + 1}') == pytest.approx(params.joints.viscous1[j], rel=0.03)
    clean = validate(result, robot, twin_data[3])
    assert min(m['nrmse_fit_percent'] for m in clean['joints'].values()) > 95.0 and 'gaps' not in clean


def test_validation_of_a_heavily_gapped_recording_returns_metrics(gapped, twin_data):
    robot, _, training, held_out, result = gapped
    # Most steps are 12–14 ms: the median step is six periods, so a split at 1.5 median steps finds no
    # gap and the pipeline would refuse the recording as non-uniform.
    assert np.median(np.diff(held_out.t)) > 0.0119
    metrics = validate(result, robot, held_out, name='held-out')
    # Two pieces of about 270 samples give 12 or 13 decimated samples each (rows in stiction dropped);
    # the matched model explains them to 2 %.
    assert 12 * 6 < metrics['rows'] <= 2 * 13 * 6 and metrics['relative_residual'] < 0.02
    summary = held_out.gaps()
    assert metrics['gaps']['pieces_used'] == 2 and metrics['gaps']['lost'] == summary.lost
    assert summary.line('held-out').removeprefix('held-out: ') in metrics['gaps']['summary']
    assert '; used 2 of ' in metrics['gaps']['summary'] and ' bridged (up to 20 ms)' in metrics['gaps']['summary']
    times, measured, predicted, used = predict_series(result, robot, held_out)
    assert np.count_nonzero(np.isnan(times)) == 1 and measured.shape == (times.size, 6)
    # No payload on either recording: the recovered mass is zero within 0.05 kg (and 3σ).
    for dataset in (held_out, training):
        recovered = recover_payload(result, robot, dataset)
        assert abs(recovered['mass']) < max(0.05, 3 * recovered['mass_std'])
        assert abs(recovered['mass']) < 0.05
    # A piece of 200 samples is short for the 0.15 s trim but usable with the short pieces' 0.075 s; 60 are not.
    short = validate(result, robot, _lose(twin_data[3], _sparse(twin_data[3].n_samples, seed=6, runs=((1000, 1200),))))
    assert short['gaps']['pieces_used'] == 1 and short['rows'] > 0
    nothing_usable = _lose(twin_data[3], _sparse(twin_data[3].n_samples, seed=6, runs=((1000, 1060),)))
    with pytest.raises(InputError, match=r'^held-out: used 0 % .* samples lost .*used 0 of .*no contiguous piece'):
        validate(result, robot, nothing_usable, name='held-out')


def test_report_shows_each_recordings_gaps_once_behind_a_fold(gapped, tmp_path):
    robot, _, training, held_out, result = gapped
    result = dataclasses.replace(result, metrics=dict(result.metrics))
    result.metrics['validation'] = validate(result, robot, held_out, name='held-out')
    page = write_report(tmp_path / 'report', result, robot, [training], [held_out]).read_text()
    train_line = result.provenance['inputs'][0]['gaps']['summary']
    held_line = result.metrics['validation']['gaps']['summary']
    assert page.count(train_line) == 1 and page.count(held_line) == 1
    assert page.count('<details>') == 2 and 'skipped:' not in page
    fold = page[page.index(f'<summary>{train_line}</summary>'):]
    fold = fold[:fold.index('</details>')]
    assert fold.count('<tr>') == len(training.gaps().gaps) + 1  # header and one row per gap
    # A result written before the gap summaries were kept: the lines come from the stamps.
    older = dataclasses.replace(result, metrics={'train': result.metrics['train']},
                                warnings=['gapped: samples missing; used 377 contiguous pieces'],
                                provenance={**result.provenance, 'inputs': [{'name': 'gapped'}]})
    page = write_report(tmp_path / 'older', older, robot, [training], [held_out]).read_text()
    assert page.count('<details>') == 2 and page.count(training.gaps().line('gapped')) == 1


def test_rigid_body_torque_of_an_identified_model(twin_data):
    """The identified base model predicts M(q)q̈ + C q̇ + g at states it never saw (within 3 % of the
    torque scale per joint on random states) and refuses a robot it was not identified for."""
    from dynid.identify.result.torque import RigidBodyTorque
    from dynid.model import Payload

    robot, _, train, _ = twin_data
    result = identify(robot, [RecordingInput(train)], ModelSpec(), options=IdentifyOptions('wls'))
    torque = RigidBodyTorque(result, robot)
    home = home_configuration(robot)
    rng = np.random.default_rng(3)
    q = home + rng.uniform(-0.8, 0.8, (200, robot.n))
    dq, ddq = rng.uniform(-1, 1, (200, robot.n)), rng.uniform(-2, 2, (200, robot.n))
    true = robot.inverse_dynamics(q, dq, ddq)
    error = torque(q, dq, ddq) - true
    assert np.all(np.sqrt(np.mean(error**2, axis=0)) < 0.03 * np.abs(true).max(axis=0) + 0.05), error.std(axis=0)
    np.testing.assert_allclose(torque(q[0], dq[0], ddq[0]), torque(q[:1], dq[:1], ddq[:1])[0])
    payload = Payload(2.0, [0.0, 0.0, 0.05])
    added = RigidBodyTorque(result, robot, payload)(q, dq, ddq) - torque(q, dq, ddq)
    expected = robot.payload_regressor(q, dq, ddq) @ payload.parameters()
    np.testing.assert_allclose(added, expected.reshape(added.shape), atol=1e-9)
    for other in ('panda', 'ur5'):  # another robot, or the same joints on another geometry
        with pytest.raises(InputError, match='not'):
            RigidBodyTorque(result, load_robot(other))


def test_rigid_body_torque_equals_the_base_regressor_product(twin_data):
    """τ_j runs as τ(π + π₀) − τ(π₀) through pinocchio's batch RNEA; it must equal W_b·χ̂_b (+ the
    payload's regressor columns) to 1e-9 of each joint's torque scale, also at velocities and
    accelerations well beyond the UR5e's (±6 rad/s, ±40 rad/s²), where the offset's torques are largest."""
    from dynid.identify.result.torque import RigidBodyTorque
    from dynid.model import Payload

    robot, _, train, _ = twin_data
    result = identify(robot, [RecordingInput(train)], ModelSpec(), options=IdentifyOptions('wls'))
    rng = np.random.default_rng(11)
    q = rng.uniform(-np.pi, np.pi, (500, robot.n))
    dq, ddq = rng.uniform(-6, 6, (500, robot.n)), rng.uniform(-40, 40, (500, robot.n))
    y = robot.regressor(q, dq, ddq)
    payload = Payload(3.0, [0.02, -0.01, 0.06], np.diag([0.012, 0.01, 0.006]))
    for load in (None, payload):
        torque = RigidBodyTorque(result, robot, load)
        arm = torque.base.indices < 10 * robot.n
        expected = y[:, torque.base.indices[arm]] @ torque.values[arm]
        if load is not None:
            expected += robot.payload_regressor(q, dq, ddq, arm_regressor=y) @ load.parameters()
        expected = expected.reshape(q.shape)
        got = torque(q, dq, ddq)
        scale = np.abs(expected).max(axis=0)
        assert np.all(np.abs(got - expected) <= 1e-9 * scale), np.max(np.abs(got - expected) / scale)
        np.testing.assert_allclose(torque(q[7], dq[7], ddq[7]), got[7], rtol=0, atol=1e-9 * scale.max())
