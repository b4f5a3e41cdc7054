"""`dynid demo` without ROS (dynid.demo): the settings' checks, the suite it plans, and what it reports.

The end-to-end run over DDS is test_bringup_and_demo.py::test_demo_runs_end_to_end; these check the
pieces on synthetic data where a wrong pairing (runs, joints, quantities) would show.
"""

import dataclasses

import numpy as np
import pytest

from builders import identified
from dynid.cli.flags import flag
from dynid.demo.plan import (
    HOLDOUT_PERIOD_S,
    DemoError,
    DemoSettings,
    check_settings,
    excitation_progress,
    suite_plan,
)
from dynid.demo.summary import (
    FRICTION_TOLERANCE,
    STIFFNESS_TOLERANCE,
    coverage,
    estimate_history,
    identification_table,
    loop_summary,
)
from dynid.errors import InputError
from dynid.estimate.stiffness import CONVERGED_RELATIVE_STD
from dynid.excite.trajectory import PointTrajectory
from dynid.io.dataset import Dataset
from dynid.sim.parameters import PlantParameters

POSE = np.array([0.2, -1.2, 1.0, -1.5, -1.5, 0.3])
START_NS = 1_700_000_000 * 10**9


def _dataset(robot, offset, rate_hz=100.0, duration_s=3.0, lost=()) -> Dataset:
    """Held at POSE + ``offset`` [rad] (link side), ``rate_hz`` samples from START_NS, samples ``lost`` left out."""
    t = np.delete(np.arange(0.0, duration_s, 1.0 / rate_hz), list(lost))
    q = np.tile(POSE + offset, (t.size, 1))
    return Dataset(tuple(robot.joint_names), t, q, np.zeros_like(q), source={'start_ns': START_NS})


def _table(joint_names, quantities, values) -> tuple[list[str], list[int], list[float]]:
    """A labelled table's layout and data, as estimator_node publishes it."""
    values = np.asarray(values, dtype=float)
    return (['joint:' + ','.join(joint_names), 'quantity:' + ','.join(quantities)], list(values.shape),
            values.ravel().tolist())


# ------------------------------------------------------------------------------------------- plan
def test_settings_out_of_range_are_refused_with_the_option():
    assert check_settings(DemoSettings()) == DemoSettings(namespace=DemoSettings().namespace)
    for changes, reason in (({'rate': 5.0}, '^rate must be within 50–2000 Hz, got 5'),
                            ({'periods': 0}, '^periods must be within 1–30, got 0'),
                            ({'holdout_seed': -1}, '^holdout_seed must be ≥ 0'),
                            ({'robot': 'panda'}, 'no built-in excitation')):
        with pytest.raises(InputError, match=reason) as refused:
            check_settings(dataclasses.replace(DemoSettings(), **changes))
        field = refused.value.field  # the command line says the option: --rate, --periods, --holdout-seed
        assert field is None or refused.value.spelled(flag).startswith(flag(field) + ' must be')


def test_the_suite_records_into_the_output_and_runs_the_held_out_trajectory_twice(tmp_path):
    settings = DemoSettings(output=tmp_path / 'out', rate=500.0, periods=2, holdout_seed=11, method='irls',
                            friction='load_squared', seed=3)
    parameters, excitations, suite = suite_plan(settings)
    assert parameters['sim_node'] == {'rate': 500.0, 'seed': 3, 'engine': 'twin'}
    assert 'stiffness' not in parameters['estimator_node']
    assert parameters['identifier_node'] == {'output_directory': str(tmp_path / 'out' / 'recordings'),
                                             'method': 'irls', 'friction': 'load_squared', 'report': False}
    assert parameters['feedforward_node']['autostart'] is False  # configured once a result exists
    assert excitations['excitation_node'] == {'trajectory_file': 'builtin', 'repeat': 2, 'approach_velocity': 0.5,
                                              'lead_time': 2.0}  # the feedforward run passes through one node more
    assert excitations['holdout_excitation'] == excitations['feedforward_excitation'] == {
        'seed': 11, 'approach_velocity': 0.5, 'period': HOLDOUT_PERIOD_S, 'lead_time': 2.0}
    assert suite == {'estimator': True, 'feedforward': 'trajectory', 'feedforward_from': ['feedforward_excitation']}


def test_the_mujoco_suite_simulates_in_mujoco_and_estimates_the_friction_alone(tmp_path):
    pytest.importorskip('mujoco')
    settings = check_settings(DemoSettings(output=tmp_path / 'out', engine='mujoco'))
    parameters, _, _ = suite_plan(settings)
    assert parameters['sim_node']['engine'] == 'mujoco'
    assert parameters['estimator_node']['stiffness'] is False  # rigid joints: θ = q, no deflection to read
    with pytest.raises(InputError, match='engine must be one of'):
        check_settings(DemoSettings(engine='bullet'))


# ---------------------------------------------------------------------------------------- summary
def test_coverage_counts_the_samples_lost_against_the_rate(ur5e):
    assert coverage(_dataset(ur5e, 0.0), 100.0) == '300 samples, none lost'
    assert coverage(_dataset(ur5e, 0.0, lost=(10, 11, 12, 200)), 100.0) == '296 samples, 4 lost in 2 gap(s)'


def test_identification_table_lists_friction_and_fits_per_joint(ur5e):
    result = identified(ur5e, 'viscous_coulomb', {'Fc': np.arange(1.0, 7.0), 'Fv': 5.0})
    joints = {name: {'nrmse_fit_percent': 90.0 + j, 'rmse': 0.01 * (j + 1)} for j, name in enumerate(ur5e.joint_names)}
    joints['wrist_3_joint'] = {'nrmse_fit_percent': None, 'rmse': None}  # nothing scored
    result = dataclasses.replace(result, condition_number=12.5, metrics={
        'train': {'relative_residual': 0.0123, 'joints': joints}, 'validation': {'relative_residual': 0.0456,
                                                                                  'joints': joints}})
    settings = DemoSettings(rate=100.0, holdout_seed=9)
    text = identification_table(result, settings, _dataset(ur5e, 0.0), _dataset(ur5e, 0.0, lost=(5,)))
    lines = text.splitlines()
    assert lines[0] == 'dynid demo: ur5e digital twin at 100 Hz, WLS, viscous_coulomb friction'
    assert '(300 samples, none lost)' in lines[1] and 'seed 9), 3.0 s (299 samples, 1 lost in 1 gap(s))' in lines[1]
    assert 'cond(W) = 12.5; relative residual: training 0.0123, held-out 0.0456' in lines[2]
    elbow = next(line for line in lines if line.startswith('elbow_joint')).split()
    assert elbow[1:] == ['3', '5', '92.00', '92.00', '0.03']  # Fc of the third joint, its fits and RMSE
    assert next(line for line in lines if line.startswith('wrist_3_joint')).split()[3:] == ['n/a'] * 3
    # Li's comprehensive law, its power term written from v_s: the Coulomb level at ω → 0 (fc − fv·v_s) and fv where
    # the exponent is 1; no viscous coefficient where it is not
    comprehensive = dataclasses.replace(result, model={
        **identified(ur5e, 'comprehensive').model, 'power_form': 'shifted', 'power_velocity': 0.02},
        parameter_names=[name.replace('Fc_', 'fc_').replace('Fv_', 'fv_').replace('tau0_', 'fo_').replace('Fl_', 'fL_')
                         for name in result.parameter_names], exponents=np.array([1.0, 1.0, 1.0, 1.0, 1.0, 0.5]))
    lines = identification_table(comprehensive, settings, _dataset(ur5e, 0.0), _dataset(ur5e, 0.0)).splitlines()
    assert next(line for line in lines if line.startswith('elbow_joint')).split()[1:3] == ['2.9', '5']
    assert next(line for line in lines if line.startswith('wrist_3_joint')).split()[1:3] == ['6', 'nan']


def test_estimate_history_orders_joints_by_name_and_skips_what_does_not_read(ur5e):
    names = list(ur5e.joint_names)
    table = np.column_stack([np.arange(6.0), 10 + np.arange(6.0)])
    tables = [(5.0, *_table(names[::-1], ('k0', 'fit'), table[::-1])),
              (5.5, ['joint:a'], [1], [1.0]),  # malformed: left out
              (6.0, *_table(names[::-1], ('alpha1', 'alpha2'), table)),  # other quantities: left out
              (7.0, *_table(names, ('k0', 'fit'), 2 * table))]
    history = estimate_history(tables, names)
    np.testing.assert_array_equal(history.time_s, [0.0, 2.0])
    np.testing.assert_array_equal(history.series('k0'), [table[:, 0], 2 * table[:, 0]])
    np.testing.assert_array_equal(history.latest('fit'), 2 * table[:, 1])
    assert estimate_history(tables[1:2], names) is None and estimate_history([], names) is None


def test_loop_summary_pairs_each_run_with_its_tracking_and_the_estimates_with_the_truth(ur5e):
    """The held-out run without feedforward misses by 2 mrad, the feedforward run by 1 mrad (ratio 0.5 on
    every joint); k0 5 % above the twin's α1 where converged, one joint never excited."""
    names = list(ur5e.joint_names)
    hold = PointTrajectory(tuple(names), [0.0, 1.0], np.tile(POSE, (2, 1)))
    sent = {'holdout_excitation': [(START_NS + 5 * 10**8, hold)],
            'feedforward_excitation': [(START_NS + 5 * 10**8, hold)]}
    recorded = {'holdout_excitation': _dataset(ur5e, 2e-3), 'feedforward_excitation': _dataset(ur5e, -1e-3)}
    alpha1 = PlantParameters.defaults(ur5e).joints.alpha1
    spread = np.full(6, CONVERGED_RELATIVE_STD / 2)
    spread[4], spread[5] = 10 * CONVERGED_RELATIVE_STD, np.nan  # not converged; never learned
    stiffness = [(1.0, *_table(names, ('k0', 'fit', 'relative_std'), np.column_stack([1.05 * alpha1,
                                                                                     np.full(6, 95.0), spread])))]
    friction = [(1.0, *_table(names, ('alpha1', 'alpha2', 'active'), np.column_stack([np.full(6, 1.1), np.zeros(6),
                                                                                      np.ones(6)])))]
    summary = loop_summary(ur5e, recorded, sent, {'stiffness': stiffness, 'friction': friction})
    np.testing.assert_allclose(summary.without.rms, 2e-3, rtol=1e-9)
    np.testing.assert_allclose(summary.tracking_ratio(), 0.5, rtol=1e-9)
    assert summary.without.window_s == pytest.approx((0.5, 1.5))
    np.testing.assert_allclose(summary.stiffness_error(), 0.05, rtol=1e-9)
    assert summary.stiffness_status() == ['converged'] * 4 + ['not converged', 'not excited']
    np.testing.assert_allclose(summary.friction_error(), 0.1, rtol=1e-9)
    figures = summary.as_dict()
    assert figures['stiffness']['converged']['wrist_1_joint'] and not figures['stiffness']['converged']['wrist_2_joint']
    assert (figures['stiffness']['tolerance'], figures['friction']['tolerance']) == (STIFFNESS_TOLERANCE,
                                                                                     FRICTION_TOLERANCE)
    wrist_3 = next(line for line in summary.table().splitlines() if line.startswith('wrist_3_joint'))
    assert 'not excited' in wrist_3 and '—' in wrist_3  # no estimate, no error
    assert figures['tracking']['late_trajectories'] == {} and 'warning' not in summary.table()
    late = loop_summary(ur5e, recorded, sent, {'stiffness': stiffness, 'friction': friction},
                        {'holdout_excitation': 0, 'feedforward_excitation': 1})
    assert late.as_dict()['tracking']['late_trajectories'] == {'holdout_excitation': 0, 'feedforward_excitation': 1}
    assert late.table().splitlines()[-1].startswith('warning: the twin received 1 trajectory message(s) of the '
                                                    'feedforward excitation after their start')
    with pytest.raises(DemoError, match='holdout_excitation: cannot score the tracking: no trajectory was sent'):
        loop_summary(ur5e, recorded, {**sent, 'holdout_excitation': []}, {'stiffness': [], 'friction': []})


@pytest.mark.parametrize('total_s', [34.49, 34.5, 34.51, 35.5, 10.0, 0.4])
def test_an_excitations_progress_never_counts_past_its_total(total_s):
    """The demo said 'excitation_node: 35 of 34 s': 35.0 s of wall time since the start of a 34.49 s trajectory,
    which the node ends a lead time after its last point. Every 0.05 s up to twice the total, the seconds said stay
    at most the total said, and past the total the line says that the demo waits for the node."""
    for elapsed_s in np.arange(0.0, 2 * total_s + 5.0, 0.05):
        line = excitation_progress('excitation_node', elapsed_s, total_s)
        said, total = (int(word) for word in line.split(': ')[1].split(' s')[0].split(' of '))
        assert said <= total == round(total_s), line
        assert line.endswith('waiting for it to report done') == (elapsed_s >= total_s), line
    assert excitation_progress('excitation_node', 35.0, 34.49) == \
        'excitation_node: 34 of 34 s, waiting for it to report done'
    assert excitation_progress('excitation_node', 20.7, 34.49) == 'excitation_node: 20 of 34 s'
