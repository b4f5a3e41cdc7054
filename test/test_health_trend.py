"""Trends, sudden changes and forecasts on synthetic session series with a known truth (dynid.health.trend)."""

import math

import numpy as np
import pytest

from dynid.errors import InputError
from dynid.health.assessment import assess
from dynid.health.record import Event, RobotHistory
from dynid.health.schema import JOINT_COLUMNS
from dynid.health.settings import HealthSettings
from dynid.health.trend import Trend, analyze_quantity, temperature_features

SETTINGS = HealthSettings()
DAYS = np.arange(60, dtype=float)
TEMPERATURE = 25.0 + np.random.default_rng(3).uniform(-15.0, 15.0, DAYS.size)
NOISE = 0.003  # relative session-to-session noise


def friction_series(seed: int, truth=None) -> np.ndarray:
    """A Coulomb level [N·m]: the true factor plus the friction law's temperature term (−0.7 %/°C around
    25 °C and a T⁻³ bend, as the twin's estimates show; additive: the law's torque does not wear), with noise."""
    features = temperature_features('friction', TEMPERATURE, 20.0)
    factor = np.ones(DAYS.size) if truth is None else truth
    return 5.0 * (factor + features @ np.array([-0.07, 0.03])
                  + NOISE * np.random.default_rng(seed).standard_normal(DAYS.size))


def stiffness_series(seed: int, truth=None) -> np.ndarray:
    factor = np.ones(DAYS.size) if truth is None else truth
    return 4e4 * (factor + 0.001 * (TEMPERATURE - 20) + NOISE * np.random.default_rng(seed).standard_normal(DAYS.size))


def judged_after_each(quantity, values, events=(), settings=SETTINGS):
    return [analyze_quantity('j', quantity, DAYS[:k + 1], values[:k + 1], TEMPERATURE[:k + 1], list(events),
                             settings) for k in range(DAYS.size)]


def first_flag(judged, after: int = 0):
    for k, h in enumerate(judged):
        if k >= after and (any(c.alarm_session == k for c in h.changes) or h.state in ('warn', 'error')):
            return k
    return None


@pytest.mark.parametrize('seed', [1, 2, 3])
def test_healthy_sessions_raise_nothing_and_the_temperature_law_is_taken_out(seed):
    judged = judged_after_each('friction', friction_series(seed))
    assert first_flag(judged) is None, judged[-1].text
    final = judged[-1]
    assert final.state == 'ok'
    # compensated to 20 °C, the series is flat within a few noise widths (uncompensated it spans ±13 %)
    assert np.nanstd(final.relative) < 2.5 * NOISE
    assert len(final.temperature_coefficients) == 2
    assert abs(final.level) < 0.01


def test_compensation_is_what_makes_a_small_step_visible():
    series = friction_series(1, np.where(DAYS >= 30, 1.08, 1.0))  # +8 %: less than the temperature's ±13 %
    compensated = judged_after_each('friction', series)
    uncompensated = judged_after_each('friction', series, settings=HealthSettings(temperature_compensation=False))
    assert first_flag(compensated) == 30
    assert first_flag(uncompensated, after=30) is None or first_flag(uncompensated, after=30) > 33
    assert uncompensated[-1].noise > 5 * compensated[-1].noise


@pytest.mark.parametrize('quantity, size', [('stiffness', -0.10), ('friction', 0.30)])
def test_a_step_is_flagged_at_once_and_placed_where_it_happened(quantity, size):
    truth = np.where(DAYS >= 30, 1.0 + size, 1.0)
    series = (stiffness_series if quantity == 'stiffness' else friction_series)(4, truth)
    judged = judged_after_each(quantity, series)
    assert first_flag(judged) == 30
    final = judged[-1]
    detected = [c for c in final.changes if c.kind == 'detected']
    assert [c.session for c in detected] == [30]
    assert detected[0].size == pytest.approx(size, abs=0.01)  # relative to the baseline, ±1 point
    assert final.level == pytest.approx(size, abs=0.01)


def test_a_linear_drift_is_forecast_to_its_limit():
    rate = -0.03 / 7.0  # stiffness −3 %/week from day 20: −15 % on day 55
    truth = 1.0 + rate * np.clip(DAYS - 20.0, 0.0, None)
    judged = judged_after_each('stiffness', stiffness_series(5, truth))
    for k in (32, 40, 48):
        f = judged[k].forecast
        true_days = 55.0 - DAYS[k]
        assert f is not None and not f.reached
        assert abs(f.days - true_days) < 0.15 * true_days, (k, f)
        assert f.low <= true_days <= f.high, (k, f)
    assert judged[56].state == 'error' and judged[56].forecast.reached
    assert judged[45].state == 'warn' and 'limit in' in judged[45].text


def test_the_forecast_band_meets_the_limit_at_its_ends():
    trend = Trend(slope=-0.004, intercept=0.0, slope_low=-0.005, slope_high=-0.003, scale=0.004, t_mean=10.0,
                  sxx=830.0, n=20, quantile=1.73)
    centre, early, late = trend.reaching(-0.15, now=20.0)
    assert centre == pytest.approx(37.5)
    assert early < centre < late
    for t, edge in ((early, -1.0), (late, 1.0)):  # the lower edge reaches −0.15 first, the upper one last
        assert trend.at(t) + edge * trend.band(t) == pytest.approx(-0.15, abs=1e-12)
    flat = Trend(0.0001, 0.0, -0.001, 0.001, 0.004, 10.0, 830.0, 20, 1.73)
    assert math.isinf(flat.reaching(-0.15, now=20.0)[2])  # no significant slope: open-ended


def test_events_start_segments_and_regimes():
    truth = np.where(DAYS >= 30, 0.9, 1.0)
    series = stiffness_series(6, truth)
    rebased = analyze_quantity('j', 'stiffness', DAYS, series, TEMPERATURE, [(30, 'gearbox_swap')], SETTINGS)
    assert rebased.segments == [0, 30] and rebased.state == 'ok' and not rebased.changes
    assert abs(rebased.level) < 0.01  # measured against the new gear's baseline
    assert rebased.baseline == pytest.approx(0.9 * 4e4, rel=0.01)
    marked = analyze_quantity('j', 'stiffness', DAYS, series, TEMPERATURE, [(30, 'collision')], SETTINGS)
    assert [(c.session, c.kind) for c in marked.changes] == [(30, 'collision')]
    assert marked.regime_start == 30 and marked.level == pytest.approx(-0.1, abs=0.01)


def test_assess_reads_a_history_and_applies_events_per_joint():
    n = DAYS.size
    values = {name: np.full((n, 2), np.nan) for name in JOINT_COLUMNS}
    values['stiffness'][:, 0] = stiffness_series(7, np.where(DAYS >= 40, 0.85, 1.0))
    values['stiffness'][:, 1] = stiffness_series(8)
    values['friction_scale'][:] = 1.0
    values['coulomb_nm'][:, 1] = 3.0
    values['temperature_c'][:] = TEMPERATURE[:, None]
    start = 1.7e9
    history = RobotHistory('r', 'm', ('j1', 'j2'), np.arange(n), start + DAYS * 86400.0, np.full(n, 30.0),
                           np.full(n, np.nan), [''] * n, values, [Event('set_baseline', start + 50 * 86400.0, 'j1')])
    health = assess(history)
    assert health.joints['j1']['stiffness'].segments == [0, 50]
    assert health.joints['j2']['stiffness'].segments == [0]
    assert health.joints['j2']['friction'].baseline == pytest.approx(3.0)
    assert health.joints['j1']['friction'].baseline == pytest.approx(1.0)  # no Fc: the factor itself
    document = health.to_dict()
    assert document['joints']['j1']['stiffness']['segment_start'] == 50
    assert health.joints['j1']['stiffness'].state == 'ok'  # the new baseline took the 15 % drop in


def test_settings_name_the_field_they_refuse():
    with pytest.raises(InputError, match='stiffness_limit'):
        HealthSettings(stiffness_limit=0.2)
    with pytest.raises(InputError, match='baseline_sessions must be an integer'):
        HealthSettings(baseline_sessions=2.5)
    with pytest.raises(InputError, match='temperature_compensation'):
        HealthSettings(temperature_compensation='yes')


def test_friction_is_compensated_for_the_load_before_it_is_trended():
    """A healthy joint whose sessions ran under loads from 0.5 to 1.5 of the usual (its Coulomb level
    Fc0 + Fc1·τ² moves 25 % with them): judged with the load, it is OK with no change and the load's
    coefficient found; judged without it, the load's swings pose as changes. A real 40 % rise is still found."""
    rng = np.random.default_rng(11)
    load = 30.0 * rng.uniform(0.5, 1.5, DAYS.size)
    effect = 0.25 * ((load / np.median(load)) ** 2 - 1.0)
    healthy = friction_series(4) + 5.0 * effect
    judged = analyze_quantity('j', 'friction', DAYS, healthy, TEMPERATURE, [], SETTINGS, load_nm=load)
    assert judged.state == 'ok' and not judged.changes, judged.text
    assert judged.load_coefficient == pytest.approx(0.25, abs=0.03)
    assert np.nanmax(np.abs(judged.relative)) < 0.05
    blind = analyze_quantity('j', 'friction', DAYS, healthy, TEMPERATURE, [], SETTINGS)
    assert np.nanmax(np.abs(blind.relative)) > 0.15 and math.isnan(blind.load_coefficient)
    worn = friction_series(5, np.where(DAYS >= 40, 1.4, 1.0)) + 5.0 * effect
    judged = analyze_quantity('j', 'friction', DAYS, worn, TEMPERATURE, [], SETTINGS, load_nm=load)
    assert judged.changes and 38 <= judged.changes[0].session <= 42
    assert judged.changes[0].size == pytest.approx(0.4, abs=0.08)
