"""Motion that never reverses a joint: Coulomb friction and the offset held and said; no absurd figure printed.

On a joint whose velocity keeps one sign, the Coulomb column Fc·sgn(ω) is a constant and duplicates the offset's
(Gautier & Briot 2014): the identification holds the offset at 0 and says so, the robot file's reference does the same
(else its two opposite constants of any size predict 1e4 N·m on a motion that reverses), and a model predicting far
beyond a joint's effort limit is named failed instead of printing its figures.
"""

import numpy as np
import pytest

from builders import SYNTHETIC_FC, SYNTHETIC_FV, SYNTHETIC_OFFSET, one_way_recording, synthetic_recording
from dynid.cli.shared import print_metrics
from dynid.identify.equations.request import ModelSpec, RecordingInput
from dynid.identify.result.metrics import FAILED_MODEL_FACTOR, equation_metrics, failed_model
from dynid.identify.steps.run import IdentifyOptions, identify
from dynid.identify.validation.validate import validate
from dynid.model import load_robot


@pytest.fixture(scope='module')
def ur5e_robot():
    return load_robot('ur5e')


def _identify(robot, dataset, friction='viscous_coulomb'):
    spec = ModelSpec(torque_source='joint_torque', **({'friction': friction} if friction else {}))
    return identify(robot, [RecordingInput(dataset, name='log')], spec, options=IdentifyOptions('wls', physical=None))


@pytest.mark.parametrize('friction', ['viscous_coulomb', None])  # the law given, and the law left to the folds
def test_a_joint_that_never_reverses_holds_its_offset_and_says_why(ur5e_robot, friction):
    robot = ur5e_robot
    result = _identify(robot, one_way_recording(robot, one_way=[1]), friction)
    held = result.model['held']
    assert 'never reverses in these recordings' in held['tau0_2']['reason']
    assert held['tau0_2']['value'] == 0.0
    assert all('never reverse' not in held.get(f'tau0_{j + 1}', {}).get('reason', '') for j in (0, 2, 3, 4, 5))
    warning = next(w for w in result.warnings if 'never reverses' in w)
    assert warning.startswith('held, not identified: tau0_2 = 0 (shoulder_lift_joint never reverses')
    assert 'Coulomb friction and the torque offset cannot be told apart' in warning
    # Coulomb holds both: the joint moves backward, so Fc·sgn(ω) + τ0 = −(Fc − τ0) (builders: Fc 1.5, τ0 0.7 N·m);
    # 0.15 N·m: what the ripple's short range leaves of the rigid-body terms that trade with a constant
    assert result.value('Fc_2') == pytest.approx(SYNTHETIC_FC - SYNTHETIC_OFFSET, abs=0.15)
    # the joints that reverse keep both, as identified (1 % noise: within 0.05 N·m)
    for j in (0, 2, 3, 4, 5):
        assert result.value(f'Fc_{j + 1}') == pytest.approx(SYNTHETIC_FC, abs=0.05)


def test_every_joint_one_way_is_identified_not_refused_nor_split_into_opposite_constants(ur5e_robot):
    robot = ur5e_robot
    result = _identify(robot, one_way_recording(robot, one_way=range(robot.n)))
    assert all(result.value(f'tau0_{j + 1}') == 0.0 for j in range(robot.n))
    # before, the least squares split each joint's constant into Fc and τ0 of any size and opposite signs
    assert all(abs(result.value(f'Fc_{j + 1}')) < 10.0 for j in range(robot.n))
    assert sum('never reverse' in w for w in result.warnings) == 1  # one line naming every joint


def test_a_one_way_joint_at_a_steady_speed_holds_its_viscous_friction_too(ur5e_robot):
    robot = ur5e_robot
    result = _identify(robot, one_way_recording(robot, one_way=[1], ripple=0.0))
    held = result.model['held']
    assert held['Fv_2']['value'] == 0.0 and 'at a steady speed' in held['Fv_2']['reason']
    assert held['tau0_2']['value'] == 0.0 and 'Fv_1' not in held
    # Coulomb holds the constant: backward at 0.15 rad/s, −Fc + Fv·(−0.15) + τ0 (builders: 1.5, 0.8, 0.7 N·m) = −0.92;
    # before, Fc_2 and Fv_2 split it into +7.4e4 and −5.0e5 (measured). 0.3 N·m: the shoulder's 1 % noise (~1.5 N·m)
    # over its 385 rows leaves σ ≈ 0.08 N·m on a constant, and the rigid-body terms take some (measured 0.18 off)
    assert result.value('Fc_2') == pytest.approx(SYNTHETIC_FC + 0.15 * SYNTHETIC_FV - SYNTHETIC_OFFSET, abs=0.3)
    reference = result.robot_file_reference()
    assert reference['Fv_2'] == 0.0 and reference['tau0_2'] == 0.0 and abs(reference['Fc_2']) < 10.0
    # the ripple of the other tests (speed ±60 %) keeps the viscous friction
    assert 'Fv_2' not in _identify(robot, one_way_recording(robot, one_way=[1])).model['held']


def test_joints_that_reverse_hold_nothing(ur5e_robot):
    result = _identify(ur5e_robot, synthetic_recording(ur5e_robot))
    assert not any('never reverse' in entry['reason'] for entry in (result.model.get('held') or {}).values())
    assert not any('never reverse' in w for w in result.warnings)


def test_the_robot_files_reference_on_a_one_way_log_predicts_a_motion_that_reverses(ur5e_robot):
    robot = ur5e_robot
    result = _identify(robot, one_way_recording(robot, one_way=range(robot.n)))
    reference = result.robot_file_reference()
    assert all(reference[f'tau0_{j + 1}'] == 0.0 for j in range(robot.n))
    metrics = validate(result, robot, synthetic_recording(robot, seed=3))
    assert 'failed' not in metrics['robot_file']
    # the robot file's own links on a torque made of them: its RMSE is the noise and friction's error, not 1e4 N·m
    assert metrics['robot_file']['rmse'] < 5.0


def test_a_prediction_far_beyond_the_effort_limit_fails_and_a_good_one_does_not():
    joints = np.repeat([0, 1], 50)
    measured = np.concatenate([np.linspace(-30, 30, 50), np.linspace(-5, 5, 50)])
    limits = np.array([150.0, 28.0])
    assert failed_model(1.3 * measured, joints, ['a', 'b'], limits, measured) is None
    wild = measured.copy()
    wild[60] = 9.7e9
    failed = failed_model(wild, joints, ['a', 'b'], limits, measured)
    assert failed == {'joint': 'b', 'peak': 9.7e9, 'bound': 28.0, 'bound_of': 'effort limit'}
    # just above the factor fails, just below does not
    edge = measured.copy()
    edge[60] = 1.01 * FAILED_MODEL_FACTOR * 28.0
    assert failed_model(edge, joints, ['a', 'b'], limits, measured)['joint'] == 'b'
    edge[60] = 0.99 * FAILED_MODEL_FACTOR * 28.0
    assert failed_model(edge, joints, ['a', 'b'], limits, measured) is None
    # without an effort limit: against the largest torque measured on any joint (30 N·m)
    unlimited = np.array([np.inf, 0.0])
    assert failed_model(wild, joints, ['a', 'b'], unlimited, measured)['bound_of'] == 'largest measured torque'
    edge[60] = 0.99 * FAILED_MODEL_FACTOR * 30.0
    assert failed_model(edge, joints, ['a', 'b'], unlimited, measured) is None
    wild[10] = np.nan
    assert failed_model(wild, joints, ['a', 'b'], limits, measured)['joint'] == 'a'


def test_print_metrics_names_a_failed_model_instead_of_its_figures(capsys):
    joints = np.repeat([0, 1], 50)
    measured = np.concatenate([np.linspace(-30, 30, 50), np.linspace(-5, 5, 50)])
    wild = measured.copy()
    wild[60] = 9.7e9
    metrics = equation_metrics(measured, measured + 0.1, joints, ['a', 'b'])
    reference = equation_metrics(measured, wild, joints, ['a', 'b'])
    metrics['robot_file'] = {key: reference[key] for key in ('relative_residual', 'rmse', 'joints')}
    metrics['robot_file']['failed'] = failed_model(wild, joints, ['a', 'b'], np.array([150.0, 28.0]), measured)
    print_metrics('held out', metrics)
    out = capsys.readouterr().out
    assert ("the robot file's own model fails on this motion: predicts up to 9.7e+09 N·m on b, its effort limit "
            "28 N·m") in out
    assert f'{reference["rmse"]:.4g}' not in out and f'{reference["relative_residual"]:.4g}' not in out
    assert out.count('robot file: failed') == 2
    assert 'RMSE      0.1 N·m' in out  # the model identified keeps its figures


def test_a_result_predicting_far_beyond_the_limits_is_failed_in_validation_and_its_warning(ur5e_robot):
    import dataclasses

    from dynid.identify.result.quality import validation_warnings

    robot = ur5e_robot
    result = _identify(robot, synthetic_recording(robot))
    values = np.asarray(result.values).copy()
    values[result.parameter_names.index('Fc_2')] = 1.0e4  # the one-way split's size, now on a motion that reverses
    metrics = validate(dataclasses.replace(result, values=values), robot, synthetic_recording(robot, seed=3))
    assert metrics['failed']['joint'] == 'shoulder_lift_joint' and metrics['failed']['peak'] > 1.0e4
    assert metrics['failed']['bound'] == robot.effort_limits[1]
    warning, = validation_warnings(metrics, result.metrics.get('train'))
    assert warning.startswith('absurd fit: the model fails on this motion: predicts up to ')
    assert 'N·m on shoulder_lift_joint, its effort limit 150 N·m (more than 10 times)' in warning
    assert 'NRMSE fit' not in warning  # not the fit of a model that is none of the arm
    assert 'failed' not in validate(result, robot, synthetic_recording(robot, seed=3))
