"""Twin wear across sessions: steps and drifts of the true joints, per-session temperature (dynid.sim.wear)."""

import numpy as np
import pytest

from dynid.errors import InputError
from dynid.sim.parameters import PlantParameters
from dynid.sim.twin import gentle_motion
from dynid.sim.wear import SessionSchedule, WearChange, simulate_sessions

NAMES = ('a', 'b', 'c')


def test_steps_and_drifts_combine_per_joint():
    changes = [WearChange(2.0, ('a',), stiffness_step=-0.1), WearChange(1.0, ('a', 'b'), coulomb_per_week=0.07),
               WearChange(3.0, None, stiffness_per_week=-0.07)]
    schedule = SessionSchedule(np.arange(5.0), 25.0, changes)
    stiffness, coulomb = schedule.factors(NAMES)
    np.testing.assert_allclose(stiffness[:, 0], [1, 1, 0.9, 0.9, 0.9 * 0.99])
    np.testing.assert_allclose(stiffness[:, 2], [1, 1, 1, 1, 0.99])
    np.testing.assert_allclose(coulomb[:, 1], [1, 1, 1.01, 1.02, 1.03])
    np.testing.assert_allclose(coulomb[:, 2], 1.0)
    (change,) = [c for c in schedule.joint_changes(4, NAMES) if c.joints == ('a',)]
    assert change.time_s == 0.0 and change.stiffness_scale == pytest.approx(0.891)
    assert change.coulomb_scale == pytest.approx(1.03)
    assert schedule.joint_changes(0, NAMES) == []


def test_regular_schedules_spread_the_temperature_and_bad_plans_are_refused():
    schedule = SessionSchedule.regular(200, 0.5, 25.0, 15.0, seed=3)
    assert schedule.days[-1] == pytest.approx(99.5)
    assert 10.0 <= schedule.temperature_c.min() < 12.0 and 38.0 < schedule.temperature_c.max() <= 40.0
    with pytest.raises(InputError, match='increasing'):
        SessionSchedule(np.array([0.0, 0.0]), 25.0)
    with pytest.raises(InputError, match='unknown joints'):
        SessionSchedule(np.arange(2.0), 25.0, [WearChange(0.0, ('z',), coulomb_step=0.1)]).factors(NAMES)
    with pytest.raises(InputError, match='below'):
        SessionSchedule(np.arange(30.0), 25.0, [WearChange(0.0, stiffness_per_week=-0.5)]).factors(NAMES)
    with pytest.raises(InputError, match='onset_day'):
        WearChange(float('nan'))


def test_each_session_runs_the_twin_with_its_truth_and_temperature(ur5e):
    params = PlantParameters.defaults(ur5e)
    joint = ur5e.joint_names[1]
    schedule = SessionSchedule(np.array([0.0, 7.0]), np.array([12.0, 38.0]),
                               [WearChange(1.0, (joint,), stiffness_step=-0.2, coulomb_per_week=0.1)])
    sessions = list(simulate_sessions(params, schedule, gentle_motion(ur5e), 0.05, rate_hz=500.0))
    assert [s.index for s in sessions] == [0, 1] and sessions[0].applied == []
    first, second = sessions
    assert first.record.truth['temperature'][0] == pytest.approx(np.full(ur5e.n, 12.0), abs=0.05)
    assert second.record.truth['temperature'][0] == pytest.approx(np.full(ur5e.n, 38.0), abs=0.05)
    (applied,) = second.applied
    after = applied.after[joint]
    assert after['alpha1'] == pytest.approx(0.8 * params.joints.alpha1[1])
    assert after['coulomb'] == pytest.approx((1.0 + 0.1 * 6 / 7) * params.joints.coulomb[1])
    assert second.stiffness_factor[1] == pytest.approx(0.8) and second.coulomb_factor[0] == 1.0
