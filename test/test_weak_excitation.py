"""The regularized default of a weakly exciting log (dynid.identify.steps.diagnose and dynid.identify.steps.choose,
docs/methods/identification.md "Weakly exciting logs"): where cond(W) of the data alone is above the refusal's limit
and the method and physical consistency were left open, OLS with the robot file's prior and physical consistency, kept
where the prior completes the data and the folds find it ahead of the robot file's own model; a well-excited log and a
given option untouched."""

import dataclasses

import numpy as np
import pytest

from builders import random_motion, twin_run
from dynid.identify.equations.request import ModelSpec, RecordingInput
from dynid.identify.result.quality import COND_SCALED_MAX
from dynid.identify.solve.solvers import excitation_condition
from dynid.identify.steps.run import IdentifyOptions, identify
from dynid.model import load_robot
from dynid.sim.parameters import PlantParameters

TRUTH = load_robot('ur5e')
#: the robot file the user has: every link's inertial parameters 30 % off the twin's (the truth)
ROBOT_FILE = TRUTH.with_parameters(TRUTH.standard_parameters * 1.3).with_drives(TRUTH.drives)
AUTO = ModelSpec(friction='auto')


def _record(position_range: float, acceleration: float, seconds: float = 6.0):
    """Joint torques (no currents) of a Fourier motion within ±position_range [rad] of home at 200 Hz."""
    params = PlantParameters.defaults(TRUTH)
    params.joints.friction_model = 'coulomb_viscous'
    motion = random_motion(TRUTH, 3, position_range=position_range, acceleration=acceleration)
    return dataclasses.replace(twin_run(params, motion, seconds, 3, rate_hz=200.0), current=None, theta=None)


@pytest.fixture(scope='module')
def weak_log():
    """±0.1 rad around home: cond(W) of the data alone far above the refusal's limit."""
    return _record(0.1, 0.5)


def test_a_weakly_exciting_log_gets_the_regularized_default(weak_log):
    result = identify(ROBOT_FILE, [RecordingInput(weak_log)], AUTO, options=IdentifyOptions('auto'))
    weak = result.model['choice']['tried']['regularized']
    assert weak['condition_scaled'] > COND_SCALED_MAX and weak['threshold'] == COND_SCALED_MAX
    assert weak['kept'] and weak['condition_with_prior'] <= COND_SCALED_MAX
    assert weak['score'] < weak['robot_file_score']
    assert result.method == 'ols' and result.model['friction'] == 'viscous_coulomb'
    consistency = result.prior_section['consistency']
    assert consistency['mode'] == 'always' and consistency['physically_consistent']
    assert any(line.startswith('weakly exciting log') and line.endswith('kept')
               for line in result.model['choice']['lines'])
    assert not any('weakly exciting' in warning for warning in result.warnings)  # a decision, said once, no warning


def test_a_given_method_or_consistency_is_kept_on_a_weakly_exciting_log(weak_log):
    from dynid.identify.solve.physical import PhysicalSettings

    given = identify(ROBOT_FILE, [RecordingInput(weak_log)], AUTO, options=IdentifyOptions('wls'))
    assert given.method == 'wls' and 'regularized' not in given.model['choice']['tried']
    never = identify(ROBOT_FILE, [RecordingInput(weak_log)], AUTO,
                     options=IdentifyOptions('auto', physical=PhysicalSettings(consistency='never')))
    assert 'regularized' not in never.model['choice']['tried']
    assert never.prior_section['consistency']['mode'] == 'never'


def test_the_regularized_default_is_not_kept_where_the_robot_file_predicts_the_folds_better(weak_log, monkeypatch):
    """The robot file's own model made perfect on every fold: the regularized default loses the folds, the ordinary
    defaults run, and the model choice records why."""
    import dynid.identify.selection.folds as folds_module

    monkeypatch.setattr(folds_module.Folds, 'robot_file_fold_scores',
                        lambda self, free: np.zeros((len(self.folds), self.n)))
    result = identify(ROBOT_FILE, [RecordingInput(weak_log)], AUTO, options=IdentifyOptions('auto'))
    weak = result.model['choice']['tried']['regularized']
    assert weak['kept'] is False and weak['robot_file_score'] == 0.0 and 'robot file' in weak['reason']
    assert 'method' in result.model['choice']['tried']  # the ordinary defaults: the folds chose the method
    assert any(line.startswith('weakly exciting log') and 'not kept' in line
               for line in result.model['choice']['lines'])


def test_a_well_excited_log_keeps_the_ordinary_defaults():
    log = _record(1.0, 2.5)
    result = identify(ROBOT_FILE, [RecordingInput(log)], AUTO, options=IdentifyOptions('auto'))
    assert 'regularized' not in result.model['choice']['tried']
    assert result.method in ('wls', 'irls')


def test_the_gate_figure_is_the_scaled_condition_number_of_the_shared_columns():
    rng = np.random.default_rng(0)
    w = rng.normal(size=(200, 4))
    w[:, 3] = w[:, 2] + 1e-4 * rng.normal(size=200)  # tau0_1 nearly Fc_1: the figure sees it
    names = ['a', 'Fc_1', 'Fv_1', 'tau0_1']
    assert excitation_condition(w, names, 1) > 1e3
    assert excitation_condition(w, names, 1, frozenset({'tau0_1'})) < 10  # held: left out
    w[:, 1] *= 1e6  # unit-norm columns: the columns' scales do not count
    assert excitation_condition(w, names, 1, frozenset({'tau0_1'})) < 10
    extra = np.column_stack([w, w[:, 2]])
    assert excitation_condition(extra, [*names, 'Fl_1'], 1, frozenset({'tau0_1'})) < 10  # an optional term: left out
