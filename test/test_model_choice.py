"""The model chosen by blocked cross-validation where the caller did not choose (issue 32 items 1 and 3): the
friction law per joint (the twin's load-dependent friction found where it has it, not where it does not), the
method, what was tried stored in the result, a given friction or method kept as given."""

import dataclasses
import re

import numpy as np
import pytest
import yaml

from builders import random_motion, twin_run
from dynid.cli import main
from dynid.identify.equations.request import ModelSpec, RecordingInput
from dynid.identify.steps.run import IdentifyOptions, identify
from dynid.model import load_robot
from dynid.sim.parameters import PlantParameters

ROBOT = load_robot('ur5e')
AUTO = ModelSpec(friction='auto')


def _record(params, seed=3, seconds=12.0):
    return twin_run(params, random_motion(ROBOT, seed), seconds, seed, rate_hz=500.0)


@pytest.fixture(scope='module')
def loaded_shoulders():
    """The twin's full friction with a strong load-dependent Coulomb term on the shoulders (×4)."""
    params = PlantParameters.defaults(ROBOT)
    params.joints.load_coefficient = params.joints.load_coefficient * np.array([4.0, 4.0, 1, 1, 1, 1])
    return _record(params)


def _plain():
    params = PlantParameters.defaults(ROBOT)
    params.joints.friction_model = 'coulomb_viscous'
    return params


@pytest.fixture(scope='module')
def plain_friction():
    """The twin with Coulomb + viscous friction only (the identification's default law)."""
    return _record(_plain())


def test_the_load_dependent_law_is_chosen_where_the_twin_has_it(loaded_shoulders):
    result = identify(ROBOT, [RecordingInput(loaded_shoulders)], AUTO, options=IdentifyOptions('auto'))
    choice = result.model['choice']
    assert 'load' in choice['friction_terms']['shoulder_lift_joint']
    assert result.model['friction'] == 'load_squared'
    scores = choice['tried']['friction']['shoulder_lift_joint']
    assert scores['coulomb+viscous+load'] < scores['coulomb+viscous'] and len(scores) >= 4  # what was tried
    assert choice['tried']['method'].keys() == {'wls', 'irls', 'chosen'} and choice['lines']
    assert choice['tried']['method']['chosen'] == result.method
    # the joints without the load term hold its column at 0 and say nothing more of it
    for joint, terms in choice['friction_terms'].items():
        k = result.parameter_names.index(f'Fl_{ROBOT.joint_names.index(joint) + 1}')
        assert ('load' in terms) == (result.values[k] != 0.0)
    assert not any('held, not identified' in w and 'Fl_' in w for w in result.warnings)
    assert not any('model misfit' in w and 'shoulder_lift_joint' in w for w in result.warnings)


def test_no_load_dependent_law_where_the_twin_has_none(plain_friction):
    result = identify(ROBOT, [RecordingInput(plain_friction)], AUTO, options=IdentifyOptions('auto'))
    terms = result.model['choice']['friction_terms']
    assert not any('load' in terms[joint] for joint in ('shoulder_pan_joint', 'shoulder_lift_joint', 'elbow_joint'))


def test_a_given_friction_and_method_are_kept_as_given(loaded_shoulders):
    given = identify(ROBOT, [RecordingInput(loaded_shoulders)], ModelSpec(friction='viscous_coulomb'),
                     options=IdentifyOptions('wls'))
    assert 'choice' not in given.model and given.model['friction'] == 'viscous_coulomb' and given.method == 'wls'
    method_given = identify(ROBOT, [RecordingInput(loaded_shoulders)], AUTO, options=IdentifyOptions('irls'))
    assert method_given.method == 'irls' and 'method' not in method_given.model['choice']['tried']
    friction_given = identify(ROBOT, [RecordingInput(loaded_shoulders)], ModelSpec(friction='viscous_coulomb'),
                              options=IdentifyOptions('auto'))
    assert friction_given.model['friction'] == 'viscous_coulomb'
    assert 'friction' not in friction_given.model['choice']['tried']
    assert not any(w.startswith('friction:') for w in friction_given.warnings)


def test_the_cli_chooses_by_default_and_prints_what_it_tried(loaded_shoulders, tmp_path, capsys):
    from dynid.io.bag import write_bag

    bag = tmp_path / 'rec'
    write_bag(bag, loaded_shoulders)
    assert main(['identify', str(bag), '-o', str(tmp_path / 'r.yaml'), '--quiet']) == 0
    out = capsys.readouterr().out
    assert 'friction per joint, cross-validated' in out and 'method, cross-validated' in out
    document = yaml.safe_load((tmp_path / 'r.yaml').read_text())
    assert document['model']['choice']['friction_terms']['shoulder_lift_joint']
    assert main(['identify', str(bag), '-o', str(tmp_path / 'f.yaml'), '--quiet', '--friction', 'viscous_coulomb',
                 '--method', 'wls']) == 0
    assert 'cross-validated' not in capsys.readouterr().out


def test_the_rotor_inertias_excess_is_chosen_where_the_drive_data_is_off():
    # The twin's rotors 3× the drive data's: B·θ̈ is subtracted with the drive data's B, and the choice keeps the
    # excess on the joints where it matters; it predicts another motion better than the same model without it.
    from dynid.identify.validation.validate import validate

    params = PlantParameters.defaults(ROBOT)
    params.drives = dataclasses.replace(params.drives, rotor_inertia=params.drives.rotor_inertia * 3.0)
    train, held = _record(params, seed=3), _record(params, seed=4)
    result = identify(ROBOT, [RecordingInput(train)], AUTO, options=IdentifyOptions('auto'))
    terms = result.model['choice']['friction_terms']
    assert result.model['rotor_compensation'] and result.model['rotor_inertia_identified']
    assert sum('rotor' in terms[joint] for joint in ROBOT.joint_names) >= 3, terms
    kept = [j for j, joint in enumerate(ROBOT.joint_names) if f'Ia_{j + 1}' in result.parameter_names
            and 'rotor' in terms[joint]]
    for j in kept:  # the excess over the drive data's B: about 2× that B
        excess = result.value(f'Ia_{j + 1}') / ROBOT.drives.rotor_inertia[j]
        assert 1.2 < excess < 2.8, (ROBOT.joint_names[j], excess)
    plain = identify(ROBOT, [RecordingInput(train)], ModelSpec(friction='viscous_coulomb'),
                     options=IdentifyOptions('wls'))
    assert validate(result, ROBOT, held)['relative_residual'] < 0.7 * validate(plain, ROBOT, held)['relative_residual']


def test_the_robot_file_is_named_wherever_ahead_and_claimed_only_where_clearly_ahead():
    from dynid.identify.result.lead import judge

    rng = np.random.default_rng(1)
    chosen = 1.0 + 0.2 * rng.random((5, 4))
    theirs = chosen.copy()
    theirs[:, 0] -= 0.2  # ahead on every fold, RMSE ~10 % lower: clear
    theirs[:, 1] += np.array([-0.05, 0.05, -0.05, 0.04, -0.03])  # ahead on the sum by 0.002 (noise): alike
    theirs[:, 2] += 0.05  # behind
    theirs[:, 3] -= np.array([0.5, 0.5, 0.5, 0.5, -0.1])  # far ahead on four folds, behind on one: not clear
    leads = judge(chosen, theirs)
    assert [lead.ahead for lead in leads] == [True, True, False, True]
    assert [lead.clear for lead in leads] == [True, False, False, False]
    assert leads[1].alike and not leads[3].alike and leads[3].lower_on == 4
    assert leads[2].alike and leads[2].named  # behind by ~2 % of the RMSE: alike too, said with both figures
    assert "the model identified's RMSE" in leads[2].line('j3', 'this recording', 1.02, 1.0)
    line = leads[1].line('j2', "the recording's held-out folds", leads[1].theirs, leads[1].mine, 'score', '')
    assert 'alike' in line and 'better' not in line and "robot file's own model" in line
    assert 'lower on 4 of 5' in leads[3].line('j4', 'this recording', 1.0, 2.0)
    assert not judge(chosen[:2], theirs[:2])[0].clear  # two folds say too little
    assert 'too few to claim' in judge(chosen[:2], theirs[:2])[0].line('j1', 'this recording', 1.0, 1.2)
    from dynid.identify.result.lead import summary_line

    line = summary_line({f'j{k + 1}': leads[k] for k in (1, 2, 3)}, 'held-out folds', 'score')
    assert "robot file's own model" in line and all(f'j{k}' in line for k in (2, 3, 4)) and 'j1' not in line
    assert 'alike (within 5 %) on j2' in line and 'ahead on j4' in line and 'lower on 4 of 5 held-out folds' in line


def test_a_lead_on_few_rows_is_judged_on_as_many_stretches_as_they_make():
    from dynid.identify.result.lead import LEAD_STRETCHES, judge, stretch_errors

    joints = np.repeat([0, 1, 2], [12, 6, 1])  # rows per joint: 12, 6, 1; joint 3 has none
    measured, mine = np.zeros(joints.size), np.ones(joints.size)  # the identified model's error: 1 on every row
    theirs = np.full(joints.size, 1.1)
    theirs[joints == 1] = [0.5, 0.5, 2.0, 0.1, 0.1, 0.1]  # stretches 0.5, 4.01, 0.02 against 2 each: 4.53 < 6
    errors = stretch_errors(measured, mine, joints, 4)
    assert np.isfinite(errors).sum(axis=0).tolist() == [LEAD_STRETCHES, 3, 1, 0]
    assert np.nansum(errors, axis=0)[:3] == pytest.approx([12.0, 6.0, 1.0])  # every row in one stretch
    leads = judge(errors, stretch_errors(measured, theirs, joints, 4))
    assert leads[1].ahead and leads[1].pieces == 3 and leads[1].lower_on == 2
    assert 'lower on 2 of 3 stretches of it' in leads[1].line('j2', 'this recording', 0.87, 1.0)
    assert not leads[0].ahead and not leads[2].ahead and leads[2].pieces == 1 and not leads[3].pieces
    one = judge(errors, stretch_errors(measured, 0.5 * mine, joints, 4))[2]
    assert 'on 1 stretch of it only: too few to claim a lead' in one.line('j3', 'this recording', 0.5, 1.0)


def _with_friction(dataset, joint: int, torque):
    """The recording with ``torque(dataset)`` [N·m] more friction on ``joint``'s motor current (through its gain)."""
    current = dataset.current.copy()
    current[:, joint] += torque(dataset) / ROBOT.drives.drive_gain[joint]
    return dataclasses.replace(dataset, current=current)


def _sublinear(dataset):
    """3 N·m·sgn(q̇)·|q̇|^0.3 [rad/s]: viscous friction that saturates with the speed."""
    velocity = dataset.dq[:, 0]
    return 3.0 * np.sign(velocity) * np.abs(velocity) ** 0.3


def test_a_viscous_exponent_is_kept_where_the_friction_saturates_with_the_speed(plain_friction):
    """Li et al. 2024's sgn(ω)·|ω|^α on the joint that has it: the comprehensive law with α on that joint and the
    exponent 1 where the choice kept the linear term; a new motion is predicted better than with linear viscous
    friction fixed."""
    from dynid.identify.validation.validate import validate

    train = _with_friction(plain_friction, 0, _sublinear)
    held = _with_friction(_record(_plain(), seed=8), 0, _sublinear)
    result = identify(ROBOT, [RecordingInput(train)], AUTO, options=IdentifyOptions('auto'))
    choice = result.model['choice']
    assert 'power' in choice['friction_terms']['shoulder_pan_joint']
    assert result.model['friction'] == 'comprehensive'
    alpha = dict(zip(ROBOT.joint_names, result.exponents, strict=True))
    assert 0.2 <= alpha['shoulder_pan_joint'] < 0.9  # sub-linear (the linear term and the power share the fit)
    assert all(alpha[joint] == 1.0 for joint, terms in choice['friction_terms'].items() if 'power' not in terms)
    assert any('viscous exponent' in line for line in choice['lines'])
    linear = identify(ROBOT, [RecordingInput(train)], ModelSpec(friction='viscous_coulomb'),
                      options=IdentifyOptions(choice['method']))
    mine, theirs = (validate(r, ROBOT, held)['joints']['shoulder_pan_joint']['rmse'] for r in (result, linear))
    assert mine < 0.8 * theirs


def test_the_comprehensive_law_adds_no_load_term_the_choice_left_out(plain_friction):
    """Li's comprehensive law has a load column fL_j on every joint: where the choice keeps a viscous exponent and no
    joint's law has the load term, the winner holds every fL_j at 0 (the law the folds scored), not free, and nothing
    in it depends on the output torque."""
    from dynid.identify.equations.prepare import prepare
    from dynid.identify.equations.problem import IdentificationProblem
    from dynid.identify.equations.read import read
    from dynid.identify.equations.request import IdentifyOptions as Options
    from dynid.identify.equations.request import settle
    from dynid.identify.solve.physical_rules import consistency_not_checked
    from dynid.identify.steps.choose import choose, narrowed
    from dynid.identify.steps.diagnose import diagnose_equations
    from dynid.identify.steps.fit import load_loop
    from dynid.signal.preprocess import FilterSettings

    recordings = [RecordingInput(_with_friction(plain_friction, 0, _sublinear))]
    request = settle(recordings, AUTO, Options('auto'), ROBOT.drives is not None)
    equations = prepare(ROBOT, read(ROBOT, recordings, FilterSettings()), request.spec, None, None,
                        request.drive_gains_unknown, keep_full_velocity=request.friction)
    findings = diagnose_equations(equations, request, lambda text: None)
    choice = choose(equations, findings, request, lambda text: None)
    assert choice.exponents is not None
    route = findings.ordinary
    without_load = dataclasses.replace(choice, terms={joint: tuple(t for t in law if t != 'load')
                                                      for joint, law in choice.terms.items()})
    problem = IdentificationProblem.of(equations, route.candidate)
    winner, _ = narrowed(problem, without_load, route.terms, True, route.first.values[:len(problem.rigid_names)])
    assert winner.friction == 'comprehensive'
    held = {entry.name: entry.value for entry in winner.held}
    assert all(held.get(f'fL_{j + 1}') == 0.0 for j in range(ROBOT.n))
    # no column left depends on the output torque: the auto rule checks the links' consistency, as for Coulomb +
    # viscous, where a load term kept on a joint leaves it unchecked and says why
    kept, _ = narrowed(problem, choice, route.terms, True, route.first.values[:len(problem.rigid_names)])
    assert any(f'fL_{j + 1}' not in {entry.name for entry in kept.held} for j in range(ROBOT.n))
    options = Options('irls')
    assert consistency_not_checked(IdentificationProblem.of(equations, winner), options) is None
    assert 'output torque' in consistency_not_checked(IdentificationProblem.of(equations, kept), options)
    # and the load loop makes one pass where no free column depends on τ_out, its passes where one does
    for candidate, passes in ((winner, 0), (kept, 1)):
        said = []
        load_loop(IdentificationProblem.of(equations, candidate), 'ols', IdentifyOptions('ols'), choice.exponents,
                  said.append)
        assert (len([text for text in said if text.startswith('load loop')]) >= 1) == passes



def test_no_viscous_exponent_where_the_viscous_friction_is_linear(plain_friction):
    result = identify(ROBOT, [RecordingInput(plain_friction)], AUTO, options=IdentifyOptions('auto'))
    assert result.model['friction'] != 'comprehensive' and result.model['choice']['exponents'] is None


def test_the_viscous_exponents_candidate_bound_does_not_hang_on_how_the_grid_is_rounded(tmp_path, monkeypatch):
    """The grid's exponents are their decimals and the candidate bound one of them: on a 250 Hz twin (the twin's
    friction: its Stribeck and load terms, linear viscous) shoulder_pan's α̂ is 0.9, above the bound, whichever way
    the grid is built (0.9 of np.linspace(0.2, 1, 17) is 0.9000000000000001, of np.linspace(0.05, 1, 20) exactly
    0.9: a candidate on the second grid only, which won the folds and lost held out on a slower motion)."""
    from dynid.excite.trajectory import builtin_excitation_path
    from dynid.identify.selection import candidates
    from dynid.io.bag import read_bag

    grid = candidates.EXPONENT_GRID
    np.testing.assert_array_equal(grid, [float(f'{alpha:.2f}') for alpha in grid])
    assert candidates.EXPONENT_CANDIDATE_MAX in grid
    assert main(['simulate', '--rate', '250', '--duration', '12', '--quiet', '-o', str(tmp_path / 'train'),
                 '--trajectory', str(builtin_excitation_path('ur5e'))]) == 0
    recording = RecordingInput(read_bag(tmp_path / 'train'))
    for built in (grid, np.linspace(0.05, 1.0, 20)):
        monkeypatch.setattr(candidates, 'EXPONENT_GRID', built)
        choice = identify(ROBOT, [recording], AUTO, options=IdentifyOptions('auto')).model['choice']
        assert 'power' not in choice['friction_terms']['shoulder_pan_joint'], built


def test_load_friction_that_falls_with_the_load_is_not_tried(plain_friction):
    """A friction coefficient that falls with the output torque (here −2e-3·sgn(q̇)·τ², shoulder_lift) is no law:
    the load term is not tried on that joint, and the choice says so."""
    def falling(dataset):
        ddq = np.gradient(dataset.dq, dataset.t, axis=0)
        tau = ROBOT.inverse_dynamics(dataset.q, dataset.dq, ddq)[:, 1]
        return -2e-3 * np.sign(dataset.dq[:, 1]) * tau**2

    result = identify(ROBOT, [RecordingInput(_with_friction(plain_friction, 1, falling))], AUTO,
                      options=IdentifyOptions('auto'))
    choice = result.model['choice']
    assert 'shoulder_lift_joint' in choice['tried']['load_not_tried']
    assert 'load' not in choice['friction_terms']['shoulder_lift_joint']
    assert not any('load' in law for law in choice['tried']['friction']['shoulder_lift_joint'])
    assert any('friction falling with the load' in line for line in choice['lines'])


def test_physical_consistency_always_keeps_the_law_chosen(plain_friction):
    """--physical constrains the links, not the friction: the viscous exponent the defaults keep is kept, fitted on
    the consistent links, with the friction at the slowest speed kept non-negative (fc ≥ 0, fv ≥ 0: the shifted power
    term's fc is the friction at v_s, the stiction velocity below which rows are dropped)."""
    from dynid.identify.solve.physical import PhysicalSettings

    train = _with_friction(plain_friction, 0, _sublinear)
    result = identify(ROBOT, [RecordingInput(train)], AUTO,
                      options=IdentifyOptions('auto', physical=PhysicalSettings(consistency='always')))
    assert result.model['friction'] == 'comprehensive' and 'power' in \
        result.model['choice']['friction_terms']['shoulder_pan_joint']
    assert result.prior_section['consistency']['physically_consistent'] and result.physical_section is not None
    assert result.power_velocity == result.provenance['filters']['stiction_velocity']
    for j in range(ROBOT.n):
        fc, fv = result.value(f'fc_{j + 1}'), result.value(f'fv_{j + 1}')
        assert fv >= 0.0 and fc >= -1e-9


@pytest.fixture(scope='module')
def short_torque_log():
    """6 s of the plain twin read from its joint torques alone (no currents: no rotor candidate; 4 s are weakly
    exciting and get the regularized default instead, test_weak_excitation.py)."""
    return dataclasses.replace(_record(_plain(), seconds=6.0), current=None, theta=None)


def test_physical_consistency_is_judged_by_the_folds_where_the_auto_rule_would_decline_it(short_torque_log):
    from dynid.identify.solve.physical import PhysicalSettings

    def run(physical):
        return identify(ROBOT, [RecordingInput(short_torque_log)], AUTO, options=IdentifyOptions('auto',
                                                                                                 physical=physical))

    # the auto rule keeps consistency at its default limit here: the folds are not asked (and cost nothing more)
    kept = run(PhysicalSettings())
    gate = kept.model['choice']['tried']['consistency']
    assert 'scores' not in gate and gate['cost_percent'] <= 1.0
    assert kept.prior_section['consistency']['decision'] == 'enforced'
    # a limit below what it costs: the rule would decline it, so the folds decide among the four candidates
    strict = run(PhysicalSettings(consistency_cost_max_percent=0.1))
    tried = strict.model['choice']['tried']['consistency']
    assert tried['cost_percent'] > 0.1
    assert set(tried['scores']) == {'wls', 'wls+physical', 'ols', 'ols+physical'} or \
        set(tried['scores']) == {'irls', 'irls+physical', 'ols', 'ols+physical'}
    finite = {key: value for key, value in tried['scores'].items() if value is not None}
    best = min(finite, key=finite.get)
    assert tried['chosen'] in (best, next(iter(tried['scores'])))  # the least, or the model chosen before it
    assert strict.method == tried['chosen'].split('+')[0]
    consistency = strict.prior_section['consistency']
    if tried['chosen'].endswith('+physical'):
        assert consistency['mode'] == 'always' and consistency['physically_consistent'] and consistency['chosen_by']
        assert strict.model['friction'] == 'viscous_coulomb' and strict.model['choice']['exponents'] is None
    else:
        assert consistency['mode'] == 'auto' and 'chosen_by' not in consistency
    assert any(line.startswith('physical consistency, cross-validated') for line in strict.model['choice']['lines'])
    # a law given that consistency cannot solve: kept, consistency not tried
    load = identify(ROBOT, [RecordingInput(short_torque_log)], ModelSpec(friction='load_squared'),
                    options=IdentifyOptions('auto', physical=PhysicalSettings(consistency_cost_max_percent=0.1)))
    assert load.model['friction'] == 'load_squared' and 'consistency' not in load.model['choice']['tried']
    # consistency given (never, always): as given, not chosen
    for mode in ('never', 'always'):
        given = run(PhysicalSettings(consistency=mode, consistency_cost_max_percent=0.1))
        assert 'consistency' not in given.model['choice']['tried']
        assert given.prior_section['consistency']['mode'] == mode


def test_a_given_method_labels_the_consistency_candidates(short_torque_log):
    """The method given, the friction open: the folds' consistency candidates are the given method's, labelled so."""
    from dynid.identify.solve.physical import PhysicalSettings

    given = identify(ROBOT, [RecordingInput(short_torque_log)], AUTO,
                     options=IdentifyOptions('irls', physical=PhysicalSettings(consistency_cost_max_percent=0.1)))
    tried = given.model['choice']['tried']
    assert set(tried['consistency']['scores']) == {'irls', 'irls+physical'} and 'method' not in tried
    assert given.method == 'irls' and tried['consistency']['chosen'].split('+')[0] == 'irls'


def test_consistency_chosen_by_the_folds_falls_back_to_the_auto_rule_where_its_solver_fails(short_torque_log,
                                                                                            monkeypatch):
    """The folds chose consistency but the constrained solve of all the rows misses its optimum: the identification
    is not refused (consistency was not asked for); the auto rule decides and a warning says so."""
    import dynid.identify.solve.constrained as constrained
    import dynid.identify.steps.choose as choice_module
    from dynid.identify.solve.physical import PhysicalSettings

    original, failing = choice_module._choose_consistency, {'on': False}

    def chosen_then_failing(*args, **kwargs):
        method, terms, per_fold, _, tried = original(*args, **kwargs)
        failing['on'] = True
        plain = {j: tuple(t for t in law if t not in choice_module.INCONSISTENT_TERMS) for j, law in terms.items()}
        return method, plain, per_fold, 'always', tried

    real = constrained._SOLVE['clarabel']
    monkeypatch.setattr(choice_module, '_choose_consistency', chosen_then_failing)
    monkeypatch.setitem(constrained._SOLVE, 'clarabel', lambda problem, careful: (
        np.full(problem.a.shape[1], np.nan), 'failed') if failing['on'] else real(problem, careful))
    result = identify(ROBOT, [RecordingInput(short_torque_log)], AUTO,
                      options=IdentifyOptions('auto', physical=PhysicalSettings(consistency_cost_max_percent=0.1)))
    assert failing['on']
    assert result.prior_section['consistency']['mode'] == 'auto'
    assert any('chosen by cross-validation, was not reached' in w for w in result.warnings)


def test_a_candidate_column_is_scored_on_the_exact_remainder_of_an_ill_conditioned_joint():
    """JointRemainder's explained share and coefficient equal those of an explicit orthonormal basis (the SVD of the
    joint's weighted rows) where the joint's columns span ten decades and two of them nearly coincide: no singular
    value inverted (the LBR Med 7's log moved its choice when they were)."""
    from dynid.identify.selection.candidates import JointRemainder

    rng = np.random.default_rng(4)
    rows_count, n_columns = 9000, 12
    w = rng.standard_normal((rows_count, n_columns)) * np.geomspace(1e-5, 1e5, n_columns)
    w[:, 5] = w[:, 4] * 1e3 + 1e-8 * rng.standard_normal(rows_count)  # nearly dependent on column 4
    w[:, 7] = 0.0  # a column the joint does not have
    features = np.column_stack([np.sin(np.arange(rows_count) * 0.01), w[:, 3] + 0.1 * rng.standard_normal(rows_count)])
    y = w @ rng.standard_normal(n_columns) + features @ np.array([2.0, -1.0]) + 0.01 * rng.standard_normal(rows_count)
    rows = np.ones(rows_count, dtype=bool)
    rows[::3] = False  # another joint's rows
    weights = rng.uniform(0.5, 2.0, rows_count)
    explained, coefficient = JointRemainder(w, y, rows, weights, drop=2).fitted(features[rows])

    used = np.ones(n_columns, dtype=bool)
    used[[2, 7]] = False
    a = w[rows][:, used] * weights[rows, None]
    u, s, _ = np.linalg.svd(a, full_matrices=False)
    u = u[:, s > s.max() * np.finfo(float).eps * a.shape[0]]
    def off(x):
        return x - u @ (u.T @ x)
    f, r = off(features[rows] * weights[rows, None]), off(y[rows] * weights[rows])
    size = np.einsum('ij,ij->j', f, f)
    np.testing.assert_allclose(coefficient, f.T @ r / size, rtol=1e-6)
    np.testing.assert_allclose(explained, (f.T @ r) ** 2 / size, rtol=1e-6)


def test_validate_scores_the_estimate_of_the_other_consistency_decision_on_another_motion(short_torque_log):
    """Where consistency moved the estimate, the result keeps the other decision's estimate and validate scores it on
    another motion beside the model identified, with a warning exactly where it predicts that motion better by more
    than the margin; on the identification's own recording it is not scored (a fit to its own rows tells nothing)."""
    from dynid.identify.validation.validate import OTHER_ESTIMATE_MARGIN, validate

    result = identify(ROBOT, [RecordingInput(short_torque_log)], AUTO)
    assert result.prior_section['consistency']['decision'] == 'enforced'
    consistent, values = result.other_estimate()
    assert not consistent and set(values) == set(result.parameter_names)
    assert max(abs(values[name] - value) for name, value in zip(result.parameter_names, result.values,
                                                                 strict=True)) > 0
    other_motion = dataclasses.replace(_record(_plain(), seed=9, seconds=6.0), current=None, theta=None)
    metrics = validate(result, ROBOT, other_motion)
    theirs, mine = metrics['other_estimate']['relative_residual'], metrics['relative_residual']
    assert np.isfinite(theirs) and theirs != mine
    said = [line for line in metrics.get('warnings', []) if 'prior.consistency.other_estimate' in line]
    assert len(said) == (1 if theirs < (1 - OTHER_ESTIMATE_MARGIN) * mine else 0)
    own = dataclasses.replace(short_torque_log, source={**short_torque_log.source, 'start_ns': 123})
    trained = dataclasses.replace(result, provenance={**result.provenance, 'inputs': [
        {**entry, 'source': {**entry['source'], 'start_ns': 123}} for entry in result.provenance['inputs']]})
    assert 'other_estimate' not in validate(trained, ROBOT, own)


def test_where_the_output_torque_leaves_consistency_unchecked_the_consistent_estimate_is_kept_beside(
        loaded_shoulders):
    """A law with load terms (τ_out) leaves the default's consistency unchecked; the estimate that asking for it
    gives (τ_out iterated) is kept beside for validate to score on other motions, the same to the solver's last
    digits (1e-6 relative here; 1.5e-9 measured)."""
    from dynid.identify.solve.physical import PhysicalSettings

    result = identify(ROBOT, [RecordingInput(loaded_shoulders)], AUTO)
    consistency = result.prior_section['consistency']
    assert consistency['decision'] == 'not checked' and 'output torque' in consistency['note']
    consistent, values = result.other_estimate()
    asked = identify(ROBOT, [RecordingInput(loaded_shoulders)], AUTO,
                     options=IdentifyOptions('auto', physical=PhysicalSettings(consistency='always')))
    assert consistent and asked.parameter_names == result.parameter_names
    np.testing.assert_allclose([values[name] for name in asked.parameter_names], asked.values, rtol=1e-6,
                               atol=1e-9)


def test_the_other_estimate_is_named_with_its_figures_only_beyond_the_margin():
    from dynid.identify.validation.validate import _other_estimate

    def joints(rmse):
        return {'joints': {'a': {'rmse': rmse, 'nrmse_fit_percent': 50.0}}, 'relative_residual': rmse, 'rmse': rmse}

    better, close = {'relative_residual': 0.1}, {'relative_residual': 0.1}
    _other_estimate(better, joints(0.06), consistent=True)
    _other_estimate(close, joints(0.0951), consistent=False)
    [line] = better['warnings']
    assert line.startswith('the physically consistent estimate the identification computed and did not keep') and \
        'relative residual 0.06 against the model identified\'s 0.1 (0.60×)' in line and 'a 0.06 N·m' in line
    assert 'warnings' not in close and close['other_estimate']['physically_consistent'] is False
    unconstrained = {'relative_residual': 0.1}
    _other_estimate(unconstrained, joints(0.06), consistent=False)
    [line] = unconstrained['warnings']
    assert 'no setting of the identification gives it' in line and '{physical}' not in line


def test_the_option_the_better_consistent_estimate_names_gives_it_when_pasted(loaded_shoulders, tmp_path):
    """validate's line on a consistent estimate that predicts better names the option that gives a consistent
    estimate, spelled as the command line takes it: that option, pasted into the identify command, gives the estimate
    the line names where the model chosen under consistency is the same (the values the result keeps beside it; 1e-6
    relative, as the core test above)."""
    from dynid.cli.flags import ADVICE
    from dynid.identify.job.workflow import spelled
    from dynid.identify.result.result import IdentificationResult
    from dynid.identify.validation.validate import _other_estimate
    from dynid.io.bag import write_bag

    metrics = {'relative_residual': 0.1, 'rmse': 0.1, 'rows': 10,
               'joints': {'a': {'rmse': 0.1, 'nrmse_fit_percent': 50.0}}}
    _other_estimate(metrics, {'relative_residual': 0.05, 'rmse': 0.05, 'joints': {'a': {'rmse': 0.05}}}, True)
    [line] = spelled(metrics['warnings'], ADVICE)  # as identify_and_save keeps it, with the command line's spelling
    option = re.search(r'; (--[a-z-]+) gives a consistent estimate', line).group(1)
    bag = write_bag(tmp_path / 'log', loaded_shoulders)
    assert main(['identify', str(bag), '--robot', 'ur5e', '-o', str(tmp_path / 'default.yaml'), '--quiet']) == 0
    default = IdentificationResult.load(tmp_path / 'default.yaml')
    consistent, values = default.other_estimate()
    assert consistent
    assert main(['identify', str(bag), '--robot', 'ur5e', option, '-o', str(tmp_path / 'pasted.yaml'),
                 '--quiet']) == 0
    pasted = IdentificationResult.load(tmp_path / 'pasted.yaml')
    assert pasted.parameter_names == default.parameter_names
    np.testing.assert_allclose([values[name] for name in pasted.parameter_names], pasted.values, rtol=1e-6,
                               atol=1e-9)


def test_a_rotor_inertia_held_leaves_the_consistent_estimate_computed_beside():
    """Rotors 3× the drive data's on the last two joints only: the choice leaves the excess out on wrist_1 and the
    elbow, holding Ia_3 and Ia_4 at 0 (the drive data's B). A rotor inertia held is bounded as it is, so the consistent
    estimate (τ_out iterated) is still computed beside the kept one, on the same model, with those rotors held; only
    link parameters held stop it."""
    params = PlantParameters.defaults(ROBOT)
    params.drives = dataclasses.replace(params.drives, rotor_inertia=params.drives.rotor_inertia
                                        * np.array([1.0, 1.0, 1.0, 1.0, 3.0, 3.0]))
    train = _record(params, seed=3)
    result = identify(ROBOT, [RecordingInput(train)], AUTO, options=IdentifyOptions('auto'))
    held = result.model['held']
    assert {'Ia_3', 'Ia_4'} <= set(held) and held['Ia_3']['value'] == 0.0
    consistency = result.prior_section['consistency']
    assert consistency['decision'] == 'not checked' and 'output torque' in consistency['note']
    consistent, values = result.other_estimate()
    assert consistent and set(values) == set(result.parameter_names)
    assert values['Ia_3'] == values['Ia_4'] == 0.0
    assert max(abs(values[name] - value) for name, value in zip(result.parameter_names, result.values,
                                                                 strict=True)) > 0
