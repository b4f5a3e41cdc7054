"""Identification in standard parameters: pseudo-inertia algebra, the robot file as a prior (its weight by
cross-validation over stretches of the recording, impossible links), constraints on the twin, solver statuses."""


import numpy as np
import pytest

from builders import random_motion, twin_run
from dynid.errors import InputError
from dynid.identify.equations.request import ModelSpec, RecordingInput
from dynid.identify.outputs.report import write_report
from dynid.identify.result.lead import LEAD_MARGIN
from dynid.identify.result.quality import result_identifiability_problems
from dynid.identify.result.result import IdentificationResult
from dynid.identify.solve import constrained
from dynid.identify.solve.file_links import link_names, robot_file_links
from dynid.identify.solve.physical import PhysicalSettings
from dynid.identify.solve.prior import (
    PRIOR_STD_GRID,
    ReducedRows,
    combined_scores,
    time_folds,
)
from dynid.identify.steps.check import mass_matrix_check
from dynid.identify.steps.run import IdentifyOptions, identify
from dynid.identify.validation.validate import predict, validate
from dynid.model import load_robot
from dynid.model.inertial import (
    cylinder_inertia,
    describe_link,
    parameters_from_com,
    parameters_of_pseudo_inertia,
    pseudo_inertia,
)
from dynid.sim.parameters import PlantParameters


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


def test_prior_rule_weighs_the_fit_as_a_whole_and_every_joint():
    # (grid, folds, 2): the weighted χ² and the per-joint relative score of each fold. Each is divided by its
    # least total over the grid, so that neither dominates by its units; s has the least sum.
    scores = np.zeros((3, 2, 2))
    scores[:, :, 0] = [[500.0, 500.0], [400.0, 420.0], [410.0, 400.0]]  # χ²: least total at index 2 (810)
    scores[:, :, 1] = [[0.2, 0.2], [0.1, 0.1], [0.3, 0.3]]             # relative: least at index 1 (0.2)
    combined = combined_scores(scores)
    np.testing.assert_allclose(combined[1], [400 / 810 + 0.5, 420 / 810 + 0.5])
    assert int(np.argmin(combined.sum(axis=1))) == 1  # 820/810 + 1 beats 810/810 + 3


def test_prior_rule_leaves_out_a_score_that_cannot_tell_the_grid_apart():
    # A relative score of 0 at some s (nothing left to predict) or not finite says nothing: the χ² decides, and
    # no 0/0 turns the whole column into NaN (which argmin would read as the first point of the grid).
    scores = np.zeros((3, 2, 2))
    scores[:, :, 0] = [[500.0, 500.0], [400.0, 420.0], [410.0, 400.0]]
    for relative in (0.0, np.inf):
        scores[:, :, 1] = relative
        combined = combined_scores(scores)
        assert np.all(np.isfinite(combined))
        assert int(np.argmin(combined.sum(axis=1))) == 2


def test_cross_validation_folds_are_stretches_of_the_record():
    # 8 contiguous blocks, block b in fold b mod 4: the folds partition the rows, every fold holds two
    # stretches half the record apart, and is trained on the other folds' rows only.
    rng = np.random.default_rng(2)
    rows = 400
    w, y, g = rng.normal(size=(rows, 5)), rng.normal(size=rows), rng.uniform(0.5, 2.0, rows)
    joints = np.tile(np.arange(2), rows // 2)
    folds, whole = time_folds(w, y, g, joints)
    assert len(folds) == 4 and whole.rows == rows
    v = rng.normal(size=5)
    assert sum(f.held_out.cost(v) for f in folds) == pytest.approx(float(np.sum((g * (y - w @ v)) ** 2)), rel=1e-10)
    mine = np.r_[0:50, 200:250]
    first = ReducedRows.of(w[mine], y[mine], g[mine])
    assert folds[0].held_out.cost(v) == pytest.approx(first.cost(v), rel=1e-10)
    others = np.setdiff1d(np.arange(rows), mine)
    assert folds[0].trained_on.cost(v) == pytest.approx(ReducedRows.of(w[others], y[others], g[others]).cost(v),
                                                        rel=1e-10)
    assert folds[0].trained_on.rows == 300
    # The per-joint score of a fold: each joint's squared residual relative to its measured energy.
    chi2, relative = folds[0].scores(v)
    expected = sum(np.sum((y[mine][joints[mine] == j] - w[mine][joints[mine] == j] @ v) ** 2)
                   / np.sum(y[mine][joints[mine] == j] ** 2) for j in range(2))
    assert relative == pytest.approx(expected, rel=1e-10) and chi2 == pytest.approx(first.cost(v), rel=1e-10)


def test_impossible_links_of_the_robot_file_are_named_and_left_out():
    robot = load_robot('ur5e')
    standard = robot.standard_parameters.copy()
    standard[10:20] = parameters_from_com(8.0, [0.2, 0.0, 0.1], np.diag([0.01, 0.01, 0.05]))  # Izz > Ixx + Iyy
    links = robot_file_links(robot.with_parameters(standard))
    assert [link.in_prior for link in links] == [True, False, True, True, True, True]
    assert 'triangle inequality' in links[1].problem and links[1].link == link_names(robot)[1]
    assert np.linalg.eigvalsh(links[1].reference).min() > 0  # the consistency constraint's scale stays definite
    massless = robot.with_parameters(np.r_[np.zeros(10), robot.standard_parameters[10:]])
    assert robot_file_links(massless)[0].problem == 'no inertia (massless)'


# --------------------------------------------------------------------------------- on the twin
@pytest.fixture(scope='module')
def short_twin():
    """10 s of a random Fourier motion (poorly exciting) and 6 s of another, matched friction, 500 Hz."""
    robot = load_robot('ur5e')
    params = PlantParameters.defaults(robot)
    params.joints.friction_model = 'coulomb_viscous'

    def record(seed, seconds):
        return twin_run(params, random_motion(robot, seed), seconds, seed, rate_hz=500.0)

    train, test = record(3, 10.0), record(7, 6.0)
    wls = identify(robot, [RecordingInput(train)], ModelSpec(), options=IdentifyOptions('wls', physical=None))
    consistent = identify(robot, [RecordingInput(train)], ModelSpec(),
                          options=IdentifyOptions('wls', physical=ALWAYS))
    return robot, train, test, wls, consistent


ALWAYS = PhysicalSettings(consistency='always')


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
    # The default s comes from the recording's own folds and is reported with the numbers behind it: the least
    # combined held-out score (dynid.identify.solve.prior, "The weight s"). A robot file with every mass and inertia
    # doubled is trusted less (larger s) than the twin's own model, which is the truth here.
    robot, train, _, _, result = short_twin
    prior = result.prior_section
    s = prior['relative_std']
    assert prior['used'] and s in PRIOR_STD_GRID
    cv = prior['cross_validation']
    totals = np.array(cv['held_out_score'])
    assert len(totals) == len(PRIOR_STD_GRID) and cv['folds'] == 4 and cv['blocks'] == 8
    assert totals.min() == totals[PRIOR_STD_GRID.index(s)]
    wrong = robot.with_parameters(2.0 * robot.standard_parameters)
    other = identify(wrong, [RecordingInput(train)], ModelSpec(), options=IdentifyOptions('wls', physical=ALWAYS))
    assert other.prior_section['relative_std'] > s
    given = identify(robot, [RecordingInput(train)], ModelSpec(),
                     options=IdentifyOptions('wls', physical=PhysicalSettings(prior_relative_std=0.3,
                                                                              consistency='always')))
    assert given.prior_section['relative_std'] == 0.3
    assert given.prior_section['cross_validation'] is None


def test_mass_matrix_positive_definite_where_wls_is_not(short_twin):
    # The unconstrained WLS of this short recording gives an M(q) that is indefinite on some states
    # (measured: on all of them), the physical result on none of 2000.
    robot, _, _, wls, result = short_twin
    assert mass_matrix_check(result, robot, states=2000)['positive_definite_percent'] == 100.0
    assert mass_matrix_check(wls, robot, states=2000)['positive_definite_percent'] < 100.0
    assert result.physical_section['mass_matrix']['positive_definite_percent'] == 100.0


def test_physical_fit_stays_close_to_unconstrained(short_twin):
    # Consistency costs little on a matched model: training χ² within 5 % of the unconstrained MAP estimate's,
    # validation NRMSE fit within 1 point of WLS's on every joint.
    robot, _, test, wls, result = short_twin
    consistency = result.physical_section['consistency']
    assert 0 <= consistency['cost_percent'] < 5.0  # the constrained optimum cannot beat the free one
    free = validate(wls, robot, test)['joints']
    constrained = validate(result, robot, test)['joints']
    for joint in robot.joint_names:
        assert constrained[joint]['nrmse_fit_percent'] > free[joint]['nrmse_fit_percent'] - 1.0
    if result.prior_section['consistency']['decision'] == 'enforced':
        assert np.all(np.isnan(result.std))  # no LS covariance for an estimate the constraints moved
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


def test_the_problem_solved_is_judged_with_its_prior(short_twin):
    # With the robot file as a prior, the identifiability check judges the data and the prior together (the
    # posterior σ, the condition number in base parameters); without a prior, a consistent result is judged by
    # the linear fit it started from (a constrained estimate has no σ).
    robot, train, _, wls, result = short_twin
    assert result.prior_used
    assert result.condition_number_scaled < result.prior_section['data_condition_number_scaled']
    assert len(result.prior_section['posterior_std']) == len(result.parameter_names)
    bare = identify(robot, [RecordingInput(train)], ModelSpec(),
                    options=IdentifyOptions('wls', physical=PhysicalSettings(prior=False, consistency='always')))
    assert np.isnan(bare.std).all() and not bare.prior_used
    assert result_identifiability_problems(bare) == result_identifiability_problems(wls)


def test_a_solver_that_does_not_reach_its_optimum_is_rerun_then_refused(short_twin, monkeypatch):
    # Never kept: 'optimal_inaccurate' is solved again with more iterations; if the second attempt reaches the
    # optimum it is kept (2 attempts), else --physical refuses and the default keeps the MAP estimate.
    robot, train, _, _, reference = short_twin
    real = constrained._SOLVE['clarabel']
    calls = []

    def first_inaccurate(problem, careful):
        calls.append(careful)
        x, status = real(problem, careful)
        return x, status if careful else 'optimal_inaccurate'

    monkeypatch.setitem(constrained._SOLVE, 'clarabel', first_inaccurate)
    options = IdentifyOptions('wls', physical=PhysicalSettings(prior=False, consistency='always'))
    result = identify(robot, [RecordingInput(train)], ModelSpec(), options=options)
    assert calls == [False, True] and result.physical_section['solver_attempts'] == 2
    assert result.physical_section['solver_status'] == 'optimal'
    monkeypatch.setitem(constrained._SOLVE, 'clarabel', lambda problem, careful: (real(problem, careful)[0],
                                                                                'optimal_inaccurate'))
    with pytest.raises(InputError, match='did not reach its optimum .*optimal_inaccurate'):
        identify(robot, [RecordingInput(train)], ModelSpec(), options=options)
    settings = PhysicalSettings(prior_relative_std=100.0, consistency_cost_max_percent=100.0)
    kept = identify(robot, [RecordingInput(train)], ModelSpec(), options=IdentifyOptions('wls', physical=settings))
    decision = kept.prior_section['consistency']['decision']
    assert decision in ('free', 'solver failed')  # the weak prior's MAP estimate may already be consistent
    if decision == 'solver failed':
        assert kept.physical_section is None and any('did not reach its optimum' in w for w in kept.warnings)


def test_refusals(short_twin):
    robot, train, _, _, _ = short_twin
    with pytest.raises(InputError, match='friction models'):  # Hamon's terms trade against the rigid-body scale
        identify(robot, [RecordingInput(train, payload_mass=1.0)], ModelSpec(friction='hamon'),
                 options=IdentifyOptions('wls', physical=ALWAYS))
    with pytest.raises(InputError, match='builds on OLS, WLS or IRLS'):
        identify(robot, [RecordingInput(train)], options=IdentifyOptions('tls', physical=ALWAYS))
    with pytest.raises(InputError, match='solver must be one of'):
        identify(robot, [RecordingInput(train)], options=IdentifyOptions('wls', physical=PhysicalSettings(solver='x')))
    # The default keeps the prior where consistency cannot be checked, and says so (issue 32 item 2).
    plain = identify(robot, [RecordingInput(train)], ModelSpec(friction='load_squared'))
    assert plain.prior_used and 'output torque' in plain.prior_section['consistency']['note']


def test_report_has_the_physical_consistency_section(short_twin, tmp_path):
    robot, train, _, wls, result = short_twin
    page = write_report(tmp_path / 'physical', result, robot, [train]).read_text()
    assert 'Physical consistency' in page and 'M(q) positive definite on 100.0 %' in page
    assert all(link in page for link in link_names(robot)) and '<b>no</b>' not in page  # triangles hold
    page = write_report(tmp_path / 'wls', wls, robot, [train]).read_text()
    assert 'Not physically consistent' in page and 'M(q) positive definite on' in page


def test_feedforward_rigid_body_runs_on_the_standard_parameters(short_twin):
    # The term takes the result's realizable bodies for its RNEA (no regressor fallback) and gives the
    # identified torque W_b·χ̂_b to 1e-9 of the torque scale.
    from dynid.control.context import FeedforwardContext
    from dynid.control.rigid_body import RigidBodyTerm
    from dynid.identify.result.torque import RigidBodyTorque

    robot, _, _, _, result = short_twin
    term = RigidBodyTerm(robot, result)
    assert term.method == 'rnea'
    np.testing.assert_array_equal(term.standard_parameters, result.standard_parameters())
    q, dq, ddq = robot.random_states(20, seed=4)
    expected = RigidBodyTorque(result, robot)(q, dq, ddq)
    np.testing.assert_allclose(term.evaluate(q, dq, ddq, FeedforwardContext()), expected,
                               atol=1e-9 * np.abs(expected).max())


def test_validation_predicts_with_the_robot_files_own_model_beside(short_twin):
    # Every result of the linear methods keeps the robot file's own model (its links exactly, friction fitted to
    # the same rows), also without a prior; validation scores it beside the identified model and warns on every
    # joint the identified model predicts worse on each of five stretches and by 5 % of its RMSE or more.
    robot, _, test, wls, _ = short_twin
    file_values = wls.robot_file_values()
    rigid = [wls.parameter_names.index(name) for name in robot.base.names]
    np.testing.assert_allclose(file_values[rigid], robot.base.from_standard(robot.standard_parameters), rtol=1e-10,
                               atol=1e-12)
    metrics = validate(wls, robot, test)
    reference = metrics['robot_file']['joints']
    worse = [joint for joint in robot.joint_names if metrics['joints'][joint]['rmse'] > reference[joint]['rmse']]
    warned = [w.split(':')[0] for w in metrics.get('warnings', []) if "robot file's own model" in w]
    ahead = predict(wls, robot, test)._robot_file_ahead(robot.n)
    assert warned and warned == [joint for j, joint in enumerate(robot.joint_names) if joint in worse and ahead[j]]
    assert all(metrics['joints'][joint]['rmse'] * (1 - LEAD_MARGIN) > reference[joint]['rmse'] for joint in warned)


def test_a_robot_file_with_an_impossible_link_identifies_and_names_it(short_twin):
    # The second link's inertia violates the triangle inequality: the default and --physical (with and without
    # the prior) identify without an exception, the prior leaves that link out and the warning names it.
    robot, train, _, _, _ = short_twin
    standard = robot.standard_parameters.copy()
    mass, h = standard[10], standard[11:14]
    standard[10:20] = parameters_from_com(mass, h / mass, np.diag([0.0145, 0.0145, 0.1285]))
    bad = robot.with_parameters(standard)
    link = link_names(robot)[1]
    for settings in (PhysicalSettings(), ALWAYS, PhysicalSettings(prior=False, consistency='always')):
        result = identify(bad, [RecordingInput(train)], ModelSpec(), options=IdentifyOptions('wls', physical=settings))
        if settings.prior:
            assert [entry['link'] for entry in result.prior_section['links_left_out']] == [link]
            assert any(f"robot file link '{link}'" in w and 'triangle inequality' in w for w in result.warnings)
        if settings.consistency == 'always':
            assert mass_matrix_check(result, robot, states=500)['positive_definite_percent'] == 100.0
