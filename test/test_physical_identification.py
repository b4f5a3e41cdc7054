"""Physically consistent identification (issue 11): pseudo-inertia algebra, constraints on the twin, refusals."""

import dataclasses

import numpy as np
import pytest

from dynid.errors import InputError
from dynid.excite.fourier import FourierDesign, default_limits, random_design
from dynid.identify.model import ModelSpec, RecordingInput
from dynid.identify.physical import (
    PRIOR_STD_GRID,
    PhysicalSettings,
    ReducedRows,
    link_names,
    mass_matrix_check,
    row_folds,
    weakest_indistinguishable,
)
from dynid.identify.quality import result_identifiability_problems
from dynid.identify.report import write_report
from dynid.identify.result import IdentificationResult
from dynid.identify.run import IdentifyOptions, identify
from dynid.identify.validate import validate
from dynid.model import load_robot
from dynid.model.inertial import (
    cylinder_inertia,
    describe_link,
    parameters_from_com,
    parameters_of_pseudo_inertia,
    pseudo_inertia,
)
from dynid.sim.parameters import PlantParameters
from dynid.sim.recording import record_to_dataset
from dynid.sim.twin import DigitalTwin, home_configuration


# ------------------------------------------------------------------------------ algebra
def test_pseudo_inertia_round_trip_and_physical_meaning():
    body = parameters_from_com(2.0, [0.1, -0.05, 0.2], cylinder_inertia(2.0, 0.05, 0.3))
    j = pseudo_inertia(body)
    np.testing.assert_allclose(parameters_of_pseudo_inertia(j), body, atol=1e-15)
    assert np.linalg.eigvalsh(j).min() > 0  # a solid cylinder is a physical body
    assert j[3, 3] == 2.0 and np.allclose(j[:3, 3], 2.0 * np.array([0.1, -0.05, 0.2]))
    # Violating a triangle inequality (Izz > Ixx + Iyy about the CoM) makes J indefinite.
    bad = parameters_from_com(2.0, [0.1, -0.05, 0.2], np.diag([0.01, 0.01, 0.05]))
    assert np.linalg.eigvalsh(pseudo_inertia(bad)).min() < 0
    assert not describe_link(bad)['triangle_inequalities'] and describe_link(body)['triangle_inequalities']
    negative = body.copy()
    negative[0] = -1.0
    assert np.linalg.eigvalsh(pseudo_inertia(negative)).min() < 0


def test_reduced_rows_keep_the_weighted_cost_of_every_parameter_vector():
    # ‖G·(y − W·v)‖² = ‖p − R·v‖² + c for any v, and stacking parts equals reducing them together.
    rng = np.random.default_rng(1)
    w, y, g = rng.normal(size=(300, 8)), rng.normal(size=300), rng.uniform(0.5, 2.0, 300)
    whole = ReducedRows.of(w, y, g)
    stacked = ReducedRows.stack([ReducedRows.of(w[k::3], y[k::3], g[k::3]) for k in range(3)])
    for v in rng.normal(size=(4, 8)):
        expected = float(np.sum((g * (y - w @ v)) ** 2))
        assert whole.cost(v) == pytest.approx(expected, rel=1e-10)
        assert stacked.cost(v) == pytest.approx(expected, rel=1e-10)


def test_prior_rule_takes_the_weakest_prior_the_folds_cannot_tell_from_the_best():
    # Rows: s in increasing order; columns: folds. Row 1 has the least total; row 2 exceeds it by 0.2 per
    # fold on average with fold-to-fold scatter (standard error 0.47): indistinguishable, so the rule takes
    # it; row 3 exceeds it by 1.0 on every fold (standard error 0): distinguishable, not taken.
    scores = np.array([[12.0, 12.0, 12.0, 12.0],
                       [10.0, 10.0, 10.0, 10.0],
                       [11.0, 9.6, 11.0, 9.2],
                       [11.0, 11.0, 11.0, 11.0]])
    chosen, best, mean, error = weakest_indistinguishable(scores)
    assert best == 1 and chosen == 2
    np.testing.assert_allclose(mean, [2.0, 0.0, 0.2, 1.0])
    assert error[2] == pytest.approx(np.std([1.0, -0.4, 1.0, -0.8], ddof=1) / 2) and error[3] == 0.0
    # The same excess without scatter is distinguishable: the least total stands.
    scores[2] = 10.2
    assert weakest_indistinguishable(scores)[0] == 1
    # A weaker prior past a distinguishably worse one is not taken, however much its folds scatter.
    scores[3] = [16.0, 4.0, 16.0, 4.0]
    chosen, best, mean, error = weakest_indistinguishable(scores)
    assert mean[3] == 0.0 < error[3] and chosen == 1


def test_cross_validation_folds_interleave_blocks_of_the_record():
    # 20 contiguous blocks, block b in fold b mod 10: the folds partition the rows, and every fold holds
    # two stretches half the record apart (each fold's complement spans the whole record).
    rng = np.random.default_rng(2)
    w, y, g = rng.normal(size=(400, 5)), rng.normal(size=400), rng.uniform(0.5, 2.0, 400)
    folds = row_folds(w, y, g, count=10, blocks=20)
    assert len(folds) == 10
    v = rng.normal(size=5)
    assert sum(f.cost(v) for f in folds) == pytest.approx(float(np.sum((g * (y - w @ v)) ** 2)), rel=1e-10)
    first = ReducedRows.of(np.vstack([w[0:20], w[200:220]]), np.concatenate([y[0:20], y[200:220]]),
                           np.concatenate([g[0:20], g[200:220]]))
    assert folds[0].cost(v) == pytest.approx(first.cost(v), rel=1e-10)


# --------------------------------------------------------------------------------- on the twin
@pytest.fixture(scope='module')
def short_twin():
    """10 s of a random Fourier motion (poorly exciting) and 6 s of another, matched friction, 500 Hz."""
    robot = load_robot('ur5e')
    params = PlantParameters.defaults(robot)
    params.joints.friction_model = 'coulomb_viscous'
    home = home_configuration(robot)
    design = FourierDesign(robot.joint_names, 5, 10.0)

    def record(seed, seconds):
        trajectory = design.trajectory(random_design(design, home, default_limits(robot, home),
                                                     np.random.default_rng(seed),
                                                     np.linspace(0, 10, 4000, endpoint=False)))
        trajectory = dataclasses.replace(trajectory, duration_s=seconds)
        twin = DigitalTwin(params, rate_hz=500.0, seed=seed, initial_q=trajectory.evaluate(np.array([0.0]))[0][0])
        twin.follow(trajectory)
        return record_to_dataset(twin.run(seconds), None, {})

    train, test = record(3, 10.0), record(7, 6.0)
    wls = identify(robot, [RecordingInput(train)], ModelSpec(), options=IdentifyOptions('wls'))
    physical = identify(robot, [RecordingInput(train)], ModelSpec(),
                        options=IdentifyOptions('wls', physical=PhysicalSettings()))
    return robot, train, test, wls, physical


def test_physical_result_satisfies_its_constraints(short_twin):
    robot, _, _, wls, result = short_twin
    standard = result.standard_parameters()
    assert standard.shape == (60,)
    for i in range(robot.n):
        link = describe_link(standard[10 * i:10 * i + 10])
        assert link['min_pseudo_eigenvalue'] > 0  # J ⪰ 1e-4·J_prior ≻ 0
        assert link['mass'] > 0 and link['triangle_inequalities'] and link['principal_moments'].min() > 0
    for joint in result.friction().values():
        assert joint['Fc'] >= 0 and joint['Fv'] >= 0
    # The file's base parameters are exactly the ones the standard parameters imply (K·π).
    base = [result.value(name) for name in robot.base.names]
    np.testing.assert_allclose(base, robot.base.from_standard(standard), rtol=1e-12, atol=1e-12)
    assert [link['link'] for link in result.physical_section['links']] == link_names(robot)


def test_prior_weight_is_cross_validated_and_a_wrong_prior_gets_less(short_twin):
    # The default s comes from the recording's own folds and is reported with the numbers behind it: the
    # weakest prior whose held-out χ² the folds cannot tell from the least one (module docstring, "Rule").
    # A robot file with every mass and inertia doubled is trusted less (larger s) than the twin's own
    # model, which is the truth here.
    robot, train, _, _, result = short_twin
    prior = result.physical_section['prior']
    s = prior['relative_std']
    assert s in PRIOR_STD_GRID
    cv = prior['cross_validation']
    totals, mean, error = (np.array(cv[k]) for k in ('held_out_weighted_chi2', 'excess_over_least_per_fold',
                                                     'excess_standard_error'))
    assert len(totals) == len(PRIOR_STD_GRID) and cv['folds'] == 10 and cv['blocks'] == 20
    assert totals.min() == totals[PRIOR_STD_GRID.index(cv['least_chi2_relative_std'])]
    assert s >= cv['least_chi2_relative_std']
    chosen = PRIOR_STD_GRID.index(s)
    assert mean[chosen] <= error[chosen] and np.all(mean[chosen + 1:] > error[chosen + 1:])
    wrong = robot.with_parameters(2.0 * robot.standard_parameters)
    other = identify(wrong, [RecordingInput(train)], ModelSpec(),
                     options=IdentifyOptions('wls', physical=PhysicalSettings()))
    assert other.physical_section['prior']['relative_std'] > s
    given = identify(robot, [RecordingInput(train)], ModelSpec(),
                     options=IdentifyOptions('wls', physical=PhysicalSettings(prior_relative_std=0.3)))
    assert given.physical_section['prior']['relative_std'] == 0.3
    assert given.physical_section['prior']['cross_validation'] is None


def test_mass_matrix_positive_definite_where_wls_is_not(short_twin):
    # The unconstrained WLS of this short recording gives an M(q) that is indefinite on some states
    # (measured: on all of them), the physical result on none of 2000.
    robot, _, _, wls, result = short_twin
    assert mass_matrix_check(result, robot, states=2000)['positive_definite_percent'] == 100.0
    assert mass_matrix_check(wls, robot, states=2000)['positive_definite_percent'] < 100.0
    assert result.physical_section['mass_matrix']['positive_definite_percent'] == 100.0


def test_physical_fit_stays_close_to_unconstrained(short_twin):
    # Consistency costs little on a matched model: training χ² within 5 % of WLS's (measured 1.0 %),
    # validation NRMSE fit within 1 point on every joint (measured: better on 5 of 6).
    robot, _, test, wls, result = short_twin
    consistency = result.physical_section['consistency']
    assert 0 <= consistency['cost_percent'] < 5.0  # the constrained optimum cannot beat the free one
    free = validate(wls, robot, test)['joints']
    constrained = validate(result, robot, test)['joints']
    for joint in robot.joint_names:
        assert constrained[joint]['nrmse_fit_percent'] > free[joint]['nrmse_fit_percent'] - 1.0
    assert np.all(np.isnan(result.std))  # no LS covariance for a constrained estimate
    np.testing.assert_allclose(result.physical_section['unconstrained']['values'], wls.values)


def test_log_cholesky_solver_reaches_the_same_optimum(short_twin):
    # Both solvers minimize the same convex cost; the log-Cholesky descent ends within 1 % of Clarabel's
    # objective (it is a local method on a non-convex parametrization).
    robot, train, _, _, result = short_twin
    other = identify(robot, [RecordingInput(train)], ModelSpec(),
                     options=IdentifyOptions('wls', physical=PhysicalSettings(solver='log_cholesky')))
    assert other.physical_section['objective'] == pytest.approx(result.physical_section['objective'], rel=0.01)
    assert other.physical_section['mass_matrix']['positive_definite_percent'] == 100.0


def test_result_file_keeps_the_physical_section(short_twin, tmp_path):
    robot, _, test, _, result = short_twin
    loaded = IdentificationResult.load(result.save(tmp_path / 'physical.yaml'))
    np.testing.assert_allclose(loaded.standard_parameters(), result.standard_parameters())
    assert loaded.to_dict()['dynid_result'] == 1  # additive section: readers of version 1 read it
    data = result.to_dict()
    data['physical']['links'] = data['physical']['links'][:3]
    with pytest.raises(InputError, match='one per joint'):
        IdentificationResult.from_dict(data)
    data.pop('physical')
    assert IdentificationResult.from_dict(data).standard_parameters() is None


def test_the_data_are_judged_by_the_unconstrained_fit(short_twin):
    # The constrained estimate has no σ (NaN): judged by it, every parameter looked unidentified and dynid
    # identify --physical refused any recording. The WLS fit it started from judges the data, as for WLS.
    _, _, _, wls, result = short_twin
    assert np.isnan(result.std).all()
    assert result_identifiability_problems(result) == result_identifiability_problems(wls)
    assert not result_identifiability_problems(result)[0].startswith('54 of 54')  # 28 of 54 on this short motion


def test_refusals(short_twin):
    robot, train, _, _, _ = short_twin
    with pytest.raises(InputError, match='friction models'):
        identify(robot, [RecordingInput(train)], ModelSpec(friction='load_squared'),
                 options=IdentifyOptions('wls', physical=PhysicalSettings()))
    with pytest.raises(InputError, match='builds on OLS, WLS or IRLS'):
        identify(robot, [RecordingInput(train)], options=IdentifyOptions('tls', physical=PhysicalSettings()))
    with pytest.raises(InputError, match='solver must be one of'):
        identify(robot, [RecordingInput(train)], options=IdentifyOptions('wls', physical=PhysicalSettings(solver='x')))


def test_report_has_the_physical_consistency_section(short_twin, tmp_path):
    robot, train, _, wls, result = short_twin
    page = write_report(tmp_path / 'physical', result, robot, [train]).read_text()
    assert 'Physical consistency' in page and 'M(q) positive definite on 100.0 %' in page
    assert all(link in page for link in link_names(robot)) and '<b>no</b>' not in page  # triangles hold
    page = write_report(tmp_path / 'wls', wls, robot, [train]).read_text()
    assert 'Not identified with <code>--physical</code>' in page and 'M(q) positive definite on' in page


def test_feedforward_rigid_body_runs_on_the_standard_parameters(short_twin):
    # The term takes the result's realizable bodies for its RNEA (no regressor fallback) and gives the
    # identified torque W_b·χ̂_b to 1e-9 of the torque scale.
    from dynid.control.context import FeedforwardContext
    from dynid.control.rigid_body import RigidBodyTerm
    from dynid.identify.torque import RigidBodyTorque

    robot, _, _, _, result = short_twin
    term = RigidBodyTerm(robot, result)
    assert term.method == 'rnea'
    np.testing.assert_array_equal(term.standard_parameters, result.standard_parameters())
    q, dq, ddq = robot.random_states(20, seed=4)
    expected = RigidBodyTorque(result, robot)(q, dq, ddq)
    np.testing.assert_allclose(term.evaluate(q, dq, ddq, FeedforwardContext()), expected,
                               atol=1e-9 * np.abs(expected).max())
