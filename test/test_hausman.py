"""The Durbin–Wu–Hausman test of IDIM-LS against instruments (dynid.identify.solve.hausman): equal to linearmodels'
implementation of the same test (IV2SLS(...).fit(cov_type='unadjusted'): durbin() for Hausman's χ² form,
wu_hausman() for Wu's F form) on synthetic IV data, its two forms equal to each other, its level and power, and the
identify diagnosis's finding (dynid.identify.steps.diagnose.least_squares_bias), on synthetic data and on the twin in
closed loop with instruments from its noiseless run (testing.closed_loop)."""

import numpy as np
import pytest
from linearmodels.iv import IV2SLS

from dynid.errors import InputError
from dynid.identify.solve.hausman import durbin_wu_hausman
from dynid.identify.solve.noise import joint_noise
from dynid.identify.steps.diagnose import least_squares_bias
from testing.closed_loop import CLEAN, NOISY, closed_loop_rows

ROWS = 400
TRUE = np.array([0.5, 1.0, 2.0])  # intercept, an exogenous regressor, a possibly endogenous one


def iv_data(seed: int, endogeneity: float, rows: int = ROWS):
    """y = W·TRUE + u with W = [1, x, e]: x exogenous, e = Z·π + endogeneity·u + v, instrumented by Z = [1, x, z1..z3]
    (the exogenous columns instrument themselves, so V_IV − V_LS has rank 1 of 3)."""
    rng = np.random.default_rng(seed)
    z, u, x = rng.normal(size=(rows, 3)), rng.normal(size=rows), rng.normal(size=rows)
    e = z @ [1.0, 0.5, -0.3] + endogeneity * u + 0.3 * rng.normal(size=rows)
    w = np.column_stack([np.ones(rows), x, e])
    return w, w @ TRUE + u, np.column_stack([np.ones(rows), x, z])


def library(w, y, z, weights=None):
    """linearmodels' fit of the same system: exogenous columns 0-1, endogenous column 2, excluded instruments z[:, 2:];
    its weights are inverse variances (our row weights squared)."""
    return IV2SLS(y, w[:, :2], w[:, 2:], z[:, 2:], weights=None if weights is None else weights**2).fit(
        cov_type='unadjusted')


@pytest.mark.parametrize('endogeneity', [0.8, 0.0], ids=['endogenous', 'exogenous'])
@pytest.mark.parametrize('weighted', [False, True], ids=['ols', 'wls'])
def test_equals_linearmodels(endogeneity, weighted):
    w, y, z = iv_data(3, endogeneity)
    weights = np.random.default_rng(9).uniform(0.5, 2.0, ROWS) if weighted else None
    ours, theirs = durbin_wu_hausman(w, y, z, weights), library(w, y, z, weights)
    durbin, wu = theirs.durbin(), theirs.wu_hausman()
    assert ours.statistic == pytest.approx(durbin.stat, rel=1e-10)
    assert ours.dof == durbin.df == 1  # the rank of V_IV − V_LS: x and the intercept instrument themselves
    assert ours.p_value == pytest.approx(durbin.pval, rel=1e-8, abs=1e-300)
    assert ours.f_statistic == pytest.approx(wu.stat, rel=1e-10)
    assert ours.f_dof == (wu.df, wu.df_denom)
    assert ours.f_p_value == pytest.approx(wu.pval, rel=1e-8, abs=1e-300)
    np.testing.assert_allclose(ours.iv, theirs.params.to_numpy(), rtol=1e-10)
    assert ours.biased == (endogeneity > 0)


def test_forms_agree():
    """H = δ/σ̂² with σ̂² = ‖e_LS‖²/r, so F = (H/q)/((r − H)/(r − p − q)) (module docstring), to rounding."""
    for seed in range(5):
        test = durbin_wu_hausman(*iv_data(seed, 0.3))
        q, rest = test.f_dof
        assert test.f_statistic == pytest.approx((test.statistic / q) / ((ROWS - test.statistic) / rest), rel=1e-9)


def test_level_and_power():
    """At the 5 % level the exogenous data are flagged 5 % of the time (1000 draws: 50 ± 3σ of the binomial, 30-72;
    measured 52 of 1000 on seeds 0-999, 104 of 2000) and the endogenous ones every time."""
    false = sum(durbin_wu_hausman(*iv_data(seed, 0.0), level=0.05).rejects for seed in range(1000))
    assert 30 <= false <= 72, false
    assert all(durbin_wu_hausman(*iv_data(seed, 0.8)).biased for seed in range(20))


def test_just_identified_full_rank():
    """Every column instrumented by another (Z = W of noise-free states, as IDIM-IV builds it): q = p."""
    rng = np.random.default_rng(0)
    clean = rng.normal(size=(600, 4))
    noisy = clean + 0.2 * rng.normal(size=clean.shape)
    test = durbin_wu_hausman(noisy, clean @ [1.0, -1.0, 0.5, 2.0] + 0.1 * rng.normal(size=600), clean)
    assert test.dof == 4 and test.f_dof == (4, 600 - 8)
    assert test.biased  # errors in the variables: LS attenuated, IV not
    np.testing.assert_allclose(test.iv, [1.0, -1.0, 0.5, 2.0], atol=0.05)


def test_bad_input_names_the_array():
    w, y, z = iv_data(0, 0.5)
    with pytest.raises(InputError, match='z must have at least as many columns'):
        durbin_wu_hausman(w, y, z[:, :2])
    with pytest.raises(InputError, match='same rows'):
        durbin_wu_hausman(w, y[:-1], z)
    with pytest.raises(InputError, match='weights'):
        durbin_wu_hausman(w, y, z, weights=np.zeros(ROWS))
    with pytest.raises(InputError, match='instruments z do not identify'):
        durbin_wu_hausman(w, y, np.column_stack([z[:, :1], np.zeros((ROWS, 4))]))
    y[3] = np.nan
    with pytest.raises(InputError, match='y must be finite'):
        durbin_wu_hausman(w, y, z)


def test_finding_offers_iv_only_where_ls_is_biased():
    biased = least_squares_bias(*iv_data(1, 0.8), way_out='method idim_iv')
    assert biased.kind == 'ls_bias' and biased.advice == 'method idim_iv'
    assert 'biased' in biased.text and 'p = ' in biased.text and 'H = ' in biased.text
    clean = least_squares_bias(*iv_data(1, 0.0))
    assert clean.kind == 'ls_bias' and clean.advice == ''
    assert 'no bias' in clean.text and 'p = ' in clean.text


def tiny_bias(seed: int = 0, rows: int = 20000):
    """Instruments close to W (W = Z + 0.005·u + noise): LS attenuated by ~1e-4, far inside its own σ, yet
    detected."""
    rng = np.random.default_rng(seed)
    z, u = rng.normal(size=(rows, 3)), rng.normal(size=rows)
    w = z + 0.005 * u[:, None] + 0.02 * rng.normal(size=(rows, 3))
    return w, w @ [1.0, 2.0, 3.0] + u, z


def test_a_bias_inside_ls_uncertainty_is_not_called_biased():
    """The test rejects (H ~ 3000) but the IV estimate lies at D ~ 1.4 from LS in LS's covariance, inside χ²_3's
    99 % point 11.3: no bias that matters, no way out offered."""
    test = durbin_wu_hausman(*tiny_bias())
    assert test.rejects and test.p_value < 1e-100
    assert test.distance < 3.0 < test.bound and not test.biased
    finding = least_squares_bias(*tiny_bias())
    assert finding.advice == '' and 'less than its own uncertainty' in finding.text


def test_correlated_rows_widen_the_variance():
    """Given each row's joint, σ̂² is widened by (1 + ρ)/(1 − ρ) of the residual's lag-1 autocorrelation: ~3 for
    AR(1) equation errors of ρ = 0.5 on two joints' interleaved rows; H and F shrink by that factor, D with them."""
    rng = np.random.default_rng(4)
    w, _, z = iv_data(5, 0.0, rows=4000)
    noise = np.zeros(4000)
    white = rng.normal(size=4000)
    for k in range(2, 4000):  # each joint's rows (every other row) an AR(1) of ρ = 0.5
        noise[k] = 0.5 * noise[k - 2] + white[k]
    y, joints = w @ TRUE + noise, np.arange(4000) % 2
    plain, widened = durbin_wu_hausman(w, y, z), durbin_wu_hausman(w, y, z, joints=joints)
    assert 2.5 < widened.inflation < 3.5 and plain.inflation == 1.0
    assert widened.statistic == pytest.approx(plain.statistic / widened.inflation, rel=1e-9)
    assert widened.f_statistic < plain.f_statistic / 2.5
    np.testing.assert_allclose(widened.ls, plain.ls)


def ls_outside_its_interval(rows, weights, test) -> float:
    """(θ_LS − θ)'·V_LS⁻¹·(θ_LS − θ) of WLS against the truth, V_LS widened as the test widens it."""
    w, y = rows.w * weights[:, None], rows.y * weights
    residual = y - w @ test.ls
    error = test.ls - rows.truth
    return float(error @ (w.T @ w) @ error) / (test.inflation * float(residual @ residual) / (len(y) - w.shape[1]))


@pytest.mark.parametrize('rate_hz, sensors, biased', [(100.0, NOISY, True), (1000.0, CLEAN, False)],
                         ids=['100hz-10bit', '1khz-default'])
def test_twin_closed_loop(ur5e, rate_hz, sensors, biased):
    """The UR5e twin in closed loop, 20 s, WLS weights: at 100 Hz with 10-bit encoders LS lies outside its own 99 %
    interval around the truth (χ²_36's 58.6; measured 154 on seed 0) and the finding offers IDIM-IV; at 1 kHz with the
    default sensors LS lies inside it (34) and the finding offers nothing (p 0.67). The rates over 20 seeds:
    benchmarks/closed_loop_dwh.py."""
    rows = closed_loop_rows(ur5e, rate_hz, sensors, seed=0)
    weights = 1.0 / joint_noise(rows.w, rows.y, rows.joints).sigma[rows.joints]
    test = durbin_wu_hausman(rows.w, rows.y, rows.z, weights, rows.joints)
    assert (ls_outside_its_interval(rows, weights, test) > 58.6) == biased
    assert test.biased == biased
    finding = least_squares_bias(rows.w, rows.y, rows.z, weights, rows.joints, way_out='method idim_iv')
    assert finding.advice == ('method idim_iv' if biased else '')
    if biased:  # the IV estimate nearer the truth than LS
        assert np.linalg.norm(test.iv - rows.truth) < 0.7 * np.linalg.norm(test.ls - rows.truth)
