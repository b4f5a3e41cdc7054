"""Friction and stiffness models: the seeds' properties as tests (issue 3)."""

import numpy as np
import pytest

from dynid.errors import InputError
from dynid.friction.egms import EGMS, element_laws, periodic_lookup
from dynid.friction.gms import GMS
from dynid.friction.joint_friction import JointFriction
from dynid.friction.laws import HAMON
from dynid.friction.load import LoadDependentCoulomb
from dynid.friction.static import AsymmetricCoulombViscous, CoulombViscous, PowerLawViscous, StribeckMap
from dynid.friction.stiffness import OddPolynomialStiffness, newton_step_scalar, torque_and_stiffness_scalar
from dynid.friction.temperature import ReferenceTemperatureFriction, TemperatureFriction

STRIBECK = StribeckMap(Fc=2.0, Fs=3.0, Fv1=1.5, Fv2=-0.3, Fv3=0.05, Vs=0.02, mu=1.2)


# ----------------------------------------------------------------------------------- E-GMS
def test_element_laws_reproduce_the_thesis_table():
    # Madsen 2020, ch.6 §4.5: M = 4, r_Δ = 4, r_k = 2.
    delta, k = element_laws(4, 4.0, 2.0)
    np.testing.assert_allclose(delta, [0.00390625, 0.0625, 0.31640625, 1.0], rtol=1e-12)
    np.testing.assert_allclose(k, [136.5333, 4.8, 0.4214, 0.03333], rtol=2e-4)
    np.testing.assert_allclose(k * delta, [16 / 30, 9 / 30, 4 / 30, 1 / 30], rtol=1e-12)
    assert np.sum(k * delta) == pytest.approx(1.0, abs=1e-12)


def _random_walk(n_samples, n_joints, step, seed):
    rng = np.random.default_rng(seed)
    return np.cumsum(rng.normal(0.0, step, size=(n_samples, n_joints)), axis=0)


def test_egms_output_stays_in_unit_band_with_position_dependent_backlash():
    table = 1e-3 * (1.0 + 0.6 * np.sin(np.linspace(0, 2 * np.pi, 100, endpoint=False)))[None, :]
    backlash = np.vstack([table, 2e-3 * np.ones((1, 100)), table[:, ::-1]])
    model = EGMS(3, backlash=backlash)
    h = model.run(_random_walk(20000, 3, 2e-4, seed=1))
    assert np.all(np.abs(h) <= 1.0 + 1e-12)
    assert h.max() > 0.999 and h.min() < -0.999  # the walk does slide both ways


def test_egms_reaches_plus_and_minus_one_in_sustained_sliding():
    model = EGMS(2, backlash=[1e-3, 5e-4])
    forward = model.run(np.linspace(0.0, 0.01, 200)[:, None] * [1.0, 1.0])
    np.testing.assert_allclose(forward[-1], [1.0, 1.0], atol=1e-12)
    backward = model.run(np.linspace(0.01, -0.01, 400)[:, None] * [1.0, 1.0])
    np.testing.assert_allclose(backward[-1], [-1.0, -1.0], atol=1e-12)


def test_egms_is_rate_independent():
    # The same triangular path sampled 1× and 7× as densely (reversal points in both) gives the
    # same output at the shared samples: the output depends on the path, not on its timing.
    vertices = np.array([0.0, 2e-3, 5e-4, 3e-3, -1e-3, 4e-4, 1e-2])
    segments = list(zip(vertices[:-1], vertices[1:], strict=True))
    coarse = np.concatenate([np.linspace(a, b, 20, endpoint=False) for a, b in segments])
    fine = np.concatenate([np.linspace(a, b, 140, endpoint=False) for a, b in segments])
    h_coarse = EGMS(1).run(coarse[:, None])[:, 0]
    h_fine = EGMS(1).run(fine[:, None])[:, 0]
    np.testing.assert_allclose(h_fine[::7], h_coarse, atol=1e-12)


def test_egms_sliding_output_is_invariant_to_the_backlash_map():
    # Proposition 1: in sliding, any positive periodic B(θ) gives the output of constant B.
    periodic = 1e-3 * (1.0 + 0.5 * np.sin(np.linspace(0, 2 * np.pi, 360, endpoint=False)))[None, :]
    theta = np.concatenate([np.linspace(0, 0.5, 2000), np.linspace(0.5, 0.2, 1200)])[:, None]
    constant = EGMS(1, backlash=1e-3).run(theta)[:, 0]
    mapped = EGMS(1, backlash=periodic).run(theta)[:, 0]
    sliding = np.r_[100:2000, 2100:3200]
    np.testing.assert_allclose(mapped[sliding], constant[sliding], atol=1e-12)
    assert np.abs(mapped - constant).max() > 1e-3  # pre-sliding after the reversal does differ


def test_egms_reset_condition_co_and_bad_backlash():
    model = EGMS(2, backlash=1e-3)
    model.reset(theta=[0.0, 1.0], direction=[1, -1])
    np.testing.assert_allclose(model.step([0.0, 1.0]), [1.0, -1.0], atol=1e-12)
    for bad in (0.0, -1e-3, np.full((2, 1), 1e-3), np.full((3, 5), 1e-3)):
        with pytest.raises(InputError, match='backlash'):
            EGMS(2, backlash=bad)


# ----------------------------------------------------------------------------------- GMS
@pytest.mark.parametrize('velocity', [-1.0, -0.05, 0.01, 0.3])
def test_gms_converges_to_the_static_map_at_constant_velocity(velocity):
    gms = GMS(STRIBECK, stiffness=[400.0, 1500.0, 6000.0, 20000.0], fractions=[0.4, 0.3, 0.2, 0.1],
              attraction=30.0)
    out = gms.run(np.full((4000, 1), velocity), dt=1e-3)[:, 0]
    assert out[-1] == pytest.approx(float(STRIBECK.evaluate(velocity)), rel=1e-6)


def test_gms_presliding_is_a_spring_and_bad_fractions_are_refused():
    gms = GMS(STRIBECK, stiffness=[1000.0, 1000.0], fractions=[0.5, 0.5], attraction=30.0)
    out = gms.step([1e-3], dt=1e-3)  # 1 µrad: far below the slip force
    assert out[0] == pytest.approx(2000.0 * 1e-6)
    with pytest.raises(InputError, match='summing to 1'):
        GMS(STRIBECK, stiffness=[1.0, 1.0], fractions=[0.5, 0.6])


# ------------------------------------------------------------------- load dependence, reversals
def test_static_load_coulomb_jumps_at_reversals_but_egms_does_not():
    # Reciprocating sweep of thesis ch.6 eq. (21): a = 0.05 rad/s², 1 kHz, under 150 N·m of load.
    dt, a = 1e-3, 0.05
    t = np.arange(0.0, 4.0, dt)
    velocity = a * (t - 1.0) * (t < 2.0) + a * (3.0 - t) * (t >= 2.0)  # reversals at 1 s and 3 s
    theta = np.concatenate([[0.0], np.cumsum(velocity[:-1]) * dt])
    load = np.full_like(t, 150.0)
    stribeck = StribeckMap(Fc=2.0, Fs=2.0, Vs=0.01, mu=1.0)
    static = JointFriction(stribeck, load_coefficient=2e-4)
    dynamic = JointFriction(stribeck, load_coefficient=2e-4, egms=EGMS(1))
    level = 2.0 + 2e-4 * 150.0**2  # F(τ) = 6.5 N·m
    f_static = static.run(theta[:, None], velocity[:, None], load[:, None])[:, 0]
    f_dynamic = dynamic.run(theta[:, None], velocity[:, None], load[:, None])[:, 0]
    assert np.abs(np.diff(f_static)).max() >= 0.99 * level  # a jump of F(τ) at each zero crossing
    assert np.abs(np.diff(f_dynamic[10:])).max() <= 0.1 * 2 * level
    assert np.abs(f_dynamic[1500:1900]).max() == pytest.approx(level, rel=1e-9)  # sliding: ±F(τ)


def test_load_dependent_coulomb_laws_and_regressor():
    squared = LoadDependentCoulomb(Fc0=2.0, Fc1=1e-4, law='squared')
    absolute = LoadDependentCoulomb(Fc0=2.0, Fc1=0.01, law='absolute')
    w, tau = np.array([0.5, -0.5, 0.0]), np.array([100.0, -100.0, 50.0])
    np.testing.assert_allclose(squared.evaluate(w, tau), [3.0, -3.0, 0.0])
    np.testing.assert_allclose(absolute.evaluate(w, tau), [3.0, -3.0, 0.0])
    np.testing.assert_allclose(squared.level(tau), squared.level(-tau))  # even in τ (ch.6 eq. (7))
    with pytest.raises(InputError, match='load law'):
        LoadDependentCoulomb(law='cubic')


def _hamon(**given):
    return {symbol: given.get(symbol, 0.0) for symbol in HAMON.symbols}


def test_hamon_quadrants():
    w = np.array([0.5, 0.5, -0.5, -0.5])
    tau_out = np.array([10.0, -10.0, 10.0, -10.0])
    usual = HAMON.torque(_hamon(cm=2.0, cg=2.0, Fv=0.5, tau0=0.1), w, np.sign(w), tau_out)
    np.testing.assert_allclose(usual, 2.0 * np.sign(w) + 0.5 * w + 0.1)
    f = HAMON.torque(_hamon(am1=0.1, ag1=-0.05, cm=2.0, cg=1.5, dm=0.5, Fv=0.5), w, np.sign(w), tau_out)
    # motor quadrants (P > 0): the load adds 10 % of τ_out; generator (P < 0): 5 % is returned.
    e = np.exp(-0.5 / 0.03)
    np.testing.assert_allclose(f[[0, 3]], [1.0 + 2.5 * e + 2.0 + 0.25, -1.0 - 2.5 * e - 2.0 - 0.25])
    np.testing.assert_allclose(f[[1, 2]], [0.5 + 1.5 + 0.25, -0.5 - 1.5 - 0.25])


# ------------------------------------------------------------------------------- static maps
def test_stribeck_map_limits_and_symmetry():
    small, large = 1e-7, 2.0
    assert STRIBECK.evaluate(0.0) == 0.0
    assert STRIBECK.evaluate(small) == pytest.approx(3.0, rel=1e-4)  # breakaway level Fs
    assert STRIBECK.evaluate(large) == pytest.approx(2.0 + 1.5 * 2 - 0.3 * 4 + 0.05 * 8, rel=1e-9)
    w = np.linspace(-2, 2, 41)
    np.testing.assert_allclose(STRIBECK.evaluate(-w), -STRIBECK.evaluate(w))
    smooth = StribeckMap(Fc=2.0, Fs=3.0, Vs=0.02, mu=1.2, smoothing=1e-3)
    assert abs(smooth.evaluate(1e-6)) < 0.01  # continuous through zero when smoothed


@pytest.mark.parametrize('term, signals', [
    (CoulombViscous(Fc=[2.0, 1.0], Fv=[0.5, 0.2], tau0=[0.1, -0.1]), 1),
    (AsymmetricCoulombViscous(Fcp=[14.26, 3.27], Fvp=[3.57, 1.64], Fcn=[18.25, 4.15], Fvn=[7.64, 1.70]), 1),
    (StribeckMap(Fc=[2.0, 1.0], Fs=[3.0, 1.5], Fv1=[1.0, 0.5], Fv2=[0.1, 0.0], Fv3=[0.0, 0.1]), 1),
    (PowerLawViscous(fc=[2.0, 1.0], fv=[1.0, 0.5], fo=[0.1, 0.0], alpha=[0.7, 1.3]), 1),
    (LoadDependentCoulomb(Fc0=[2.0, 1.0], Fc1=[1e-4, 2e-4]), 2),
    (TemperatureFriction(beta1=[0.8, 0.5], beta2=[-0.01, -0.02], beta3=[300.0, 100.0]), 2),
    (ReferenceTemperatureFriction(Ft1=[-0.01, -0.02], Ft2=[300.0, 100.0]), 2),
])
def test_linear_terms_regressor_reproduces_evaluation(term, signals):
    rng = np.random.default_rng(2)
    inputs = [rng.uniform(-1.5, 1.5, size=(50, 2))]
    if signals == 2:
        inputs.append(rng.uniform(10.0, 45.0, size=(50, 2)))
    y = term.regressor(*inputs)
    names = term.parameter_names(2)
    assert y.shape == (100, len(names)) and names[0] == f'{term.symbols[0]}_1'
    parameters = np.concatenate([np.broadcast_to(p, (2,)) for p in term.parameters()])
    np.testing.assert_allclose(y @ parameters, term.evaluate(*inputs).reshape(-1), atol=1e-12)


def test_asymmetric_map_uses_the_pa10_layout():
    joint2 = AsymmetricCoulombViscous(Fcp=14.26, Fvp=3.57, Fcn=18.25, Fvn=7.64)  # Table C.1, J2
    np.testing.assert_allclose(joint2.evaluate(np.array([1.0, -1.0, 0.0])), [17.83, -25.89, 0.0])


# ------------------------------------------------------------------------------ temperature
def test_temperature_terms():
    reference = ReferenceTemperatureFriction(Ft1=-0.02, Ft2=500.0, t0=20.0)
    np.testing.assert_allclose(reference.evaluate(np.array([0.5, -2.0]), np.array([20.0, 20.0])), 0.0,
                               atol=1e-15)
    absolute = TemperatureFriction(beta1=0.8, beta2=-0.01, beta3=300.0, t_min=5.0, t_max=60.0)
    w, t = np.array([0.25]), np.array([10.0])
    expected = np.sqrt(0.25) * (0.8 - 0.1 + 300.0 / 1000.0)
    np.testing.assert_allclose(absolute.evaluate(w, t), expected)
    np.testing.assert_allclose(absolute.evaluate(w, np.array([-30.0])), absolute.evaluate(w, np.array([5.0])))
    with pytest.raises(InputError, match='singular at 0'):
        TemperatureFriction(t_min=0.0)


# -------------------------------------------------------------------------- complete friction
def test_joint_friction_in_sliding_is_the_static_map_plus_load_and_temperature():
    temperature = ReferenceTemperatureFriction(Ft1=-0.02, Ft2=400.0)
    model = JointFriction(STRIBECK, load_coefficient=1e-4, temperature=temperature, egms=EGMS(1))
    theta = np.linspace(0.0, 0.2, 400)[:, None]
    w = np.full_like(theta, 0.4)
    tau = np.full_like(theta, 80.0)
    temp = np.full_like(theta, 35.0)
    f = model.run(theta, w, tau, temp)[-1, 0]
    expected = STRIBECK.evaluate(0.4) + 1e-4 * 80.0**2 + temperature.evaluate(0.4, 35.0)
    assert f == pytest.approx(float(expected), rel=1e-12)
    with pytest.raises(InputError, match='pass the temperature'):
        model.remainder(w)


# ---------------------------------------------------------------------------------- stiffness
def test_odd_polynomial_stiffness():
    model = OddPolynomialStiffness(np.array([[3.0e4, 2.0e9], [1.5e4, 5.0e8]]))
    phi = np.array([[1e-3, -2e-3], [-1e-3, 2e-3]])
    np.testing.assert_allclose(model.torque(phi)[0], -model.torque(phi)[1])  # odd
    np.testing.assert_allclose(model.torque(np.zeros(2)), 0.0)
    h = 1e-8
    numeric = (model.torque(phi + h) - model.torque(phi - h)) / (2 * h)
    np.testing.assert_allclose(model.stiffness(phi), numeric, rtol=1e-6)
    np.testing.assert_allclose(model.deflection(model.torque(phi)), phi, rtol=1e-10)
    assert model.parameter_names(2) == ['alpha1_1', 'alpha1_2', 'alpha3_1', 'alpha3_2']
    y = model.regressor(phi)
    np.testing.assert_allclose(y @ model.alpha.T.reshape(-1), model.torque(phi).reshape(-1))


@pytest.mark.parametrize('order', [1, 2, 3])
def test_compiled_stiffness_of_one_joint_is_the_models_arithmetic(order):
    # The twin's compiled step evaluates τ_j(φ), k(φ) and the set-point's Newton step per joint: the
    # same values as the model's array methods, bit for bit (same operations in the same order).
    alpha = np.array([[3.0e4, 2.0e9, 7.0e12], [1.5e4, 5.0e8, 1.0e12]])[:, :order]
    model = OddPolynomialStiffness(alpha)
    phi = np.array([1.3e-3, -2.1e-3])
    torque, spring = model.torque_and_stiffness(phi)
    newton = model.newton_step(phi, np.array([25.0, -40.0]))
    for j in range(2):
        assert torque_and_stiffness_scalar(alpha, j, phi[j]) == (torque[j], spring[j])
        assert newton_step_scalar(alpha, j, phi[j], [25.0, -40.0][j]) == newton[j]


def test_egms_batch_run_equals_stepping_across_blocks():
    rng = np.random.default_rng(7)
    theta = 50.0 + np.cumsum(rng.normal(0.0, 3e-4, size=(3000, 2)), axis=0)
    table = 1e-3 * (1.0 + 0.4 * np.cos(np.linspace(0, 2 * np.pi, 64, endpoint=False)))
    backlash = np.vstack([table, table[::-1]])
    batch, stepped = EGMS(2, backlash=backlash), EGMS(2, backlash=backlash)
    batch.RUN_BLOCK = 700  # several blocks, state carried between them
    stepped.run(theta[:1])
    batch.run(theta[:1])
    h_batch = batch.run(theta[1:])
    h_step = np.array([stepped.step(x) for x in theta[1:]])
    np.testing.assert_allclose(h_batch, h_step, atol=1e-10)
    np.testing.assert_allclose(batch.state, stepped.state, atol=1e-15)


def test_egms_step_is_eqs_14_15_written_out():
    """EGMS.step (a compiled kernel) against eqs. (14)–(15) as printed, sgn(t)·min(|t|, B·Δ_i), and B(θ) by
    periodic_lookup, sample by sample: within 1e-12 (rounding of the sum only). Negative and large angles
    cross the table's wrap-around; the slope counts the operators with |δ_i| < B·Δ_i·(1 − 1e-9)."""
    rng = np.random.default_rng(3)
    theta = np.array([-7.0, 40.0]) + np.cumsum(rng.normal(0.0, 4e-4, size=(2000, 2)), axis=0)
    table = 1e-3 * (1.0 + 0.4 * np.cos(np.linspace(0, 2 * np.pi, 16, endpoint=False)))
    backlash = np.vstack([table, table[::-1]])
    model = EGMS(2, elements=5, r_delta=[4.0, 3.0], r_k=2.0, backlash=backlash)
    delta, k = model.delta, model.k
    state, previous = np.zeros((2, 5)), theta[0]
    for x in theta:
        b = periodic_lookup(backlash, x)[:, None]
        t = x[:, None] - previous[:, None] + state
        state, previous = np.sign(t) * np.minimum(np.abs(t), b * delta), x
        h, slope = model.step_with_slope(x)
        np.testing.assert_allclose(h, np.sum(k * state, axis=1) / b[:, 0], rtol=0, atol=1e-12)
        sticking = np.abs(state) < b * delta * (1 - 1e-9)
        np.testing.assert_allclose(slope, np.sum(k * sticking, axis=1) / b[:, 0], rtol=1e-12, atol=0)
        np.testing.assert_allclose(model.state, state, rtol=0, atol=1e-15)
        np.testing.assert_array_equal(model.last_backlash, b[:, 0])
