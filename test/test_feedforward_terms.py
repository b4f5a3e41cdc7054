"""Feedforward terms (dynid.control): each against an independent computation, and the plugin group.

References: pinocchio's RNEA through ``RobotModel.inverse_dynamics`` for the rigid body (a model with
the identified parameters), ``JointDrives`` for B·q̈, the landed friction models (dynid.friction) for
the friction terms, the adaptive estimator's own prediction for eq. (29), and fine finite differences
of the joint torque along an analytic trajectory for the flexible-joint correction. The trajectory is a
sinusoid per joint (1 kHz), so every derivative is known in closed form.
"""

import dataclasses
import sys

import numpy as np
import pytest

from builders import RATE, identified, install_user_package, landed_static, motion, trajectory
from dynid.control import (
    Feedforward,
    FeedforwardContext,
    RigidBodyTerm,
    TermPlugin,
    build_term,
    register_term,
    term_names,
    unregister_term,
)
from dynid.control.configuration import FeedforwardSettings
from dynid.control.plugins import GROUP, REGISTRY
from dynid.errors import InputError
from dynid.estimate import AdaptiveFrictionEstimator
from dynid.friction.egms import EGMS
from dynid.friction.joint_friction import JointFriction
from dynid.friction.load import LoadDependentCoulomb
from dynid.friction.static import PowerLawViscous, StribeckMap
from dynid.friction.stiffness import OddPolynomialStiffness
from dynid.friction.temperature import TemperatureFriction
from dynid.identify.friction_fit.identified import joint_friction_of
from dynid.identify.result.result import IdentificationResult
from dynid.model import Payload

BUILT_INS = ('rigid_body', 'rotor_inertia', 'friction_static', 'friction_egms', 'friction_adaptive', 'flexible_joint')


@pytest.fixture(scope='module')
def perturbed(ur5e):
    """Standard parameters 20 % off the built-in ones (so the identified model is not the nominal one)."""
    rng = np.random.default_rng(7)
    return ur5e.standard_parameters * (1 + 0.2 * rng.uniform(-1, 1, 10 * ur5e.n))


CONTEXT = FeedforwardContext()


# ------------------------------------------------------------------------------------------ rigid body
def test_rigid_body_is_the_rnea_of_the_identified_model_with_payload(ur5e, perturbed):
    """τ_J of the term = RobotModel.inverse_dynamics of a model with the identified parameters (1e-9 of
    the torque scale), with the configured payload or the context's; gravity(q) = τ(q, 0, 0)."""
    q, dq, ddq = trajectory(ur5e)
    truth = ur5e.with_parameters(perturbed)
    payload = Payload(3.0, [0.0, 0.02, 0.08], np.diag([0.01, 0.01, 0.005]))
    term = build_term('rigid_body', ur5e, identified(ur5e, standard=perturbed), {'payload': {'mass': 3.0,
                      'com': [0.0, 0.02, 0.08], 'inertia': np.diag([0.01, 0.01, 0.005])}})
    assert term.method == 'rnea' and term.provides_joint_torque
    expected = truth.inverse_dynamics(q, dq, ddq, payload=payload)
    scale = np.abs(expected).max()
    np.testing.assert_allclose(term.evaluate(q, dq, ddq, CONTEXT), expected, rtol=0, atol=1e-9 * scale)
    bare = build_term('rigid_body', ur5e, identified(ur5e, standard=perturbed))
    np.testing.assert_allclose(bare.evaluate(q, dq, ddq, FeedforwardContext(payload=payload)), expected,
                               rtol=0, atol=1e-9 * scale)
    np.testing.assert_allclose(bare.evaluate(q, dq, ddq, CONTEXT), truth.inverse_dynamics(q, dq, ddq),
                               rtol=0, atol=1e-9 * scale)
    for k in (0, 777):
        np.testing.assert_allclose(term.step(q[k], dq[k], ddq[k], CONTEXT), expected[k], rtol=0, atol=1e-9 * scale)
    zeros = np.zeros_like(q)
    np.testing.assert_allclose(term.gravity(q, CONTEXT), truth.inverse_dynamics(q, zeros, zeros, payload=payload),
                               rtol=0, atol=1e-9 * scale)


def test_rigid_body_falls_back_to_the_regressor_where_rnea_cannot_hold_the_parameters(ur5e, perturbed, monkeypatch):
    """A standard vector with a massless link cannot go into pinocchio: the term uses the regressor form,
    same torque; without a result the term is the robot model's own inverse dynamics."""
    import dynid.control.rigid_body as rigid_body

    def massless(robot, torque):
        standard = perturbed.copy()
        standard[10] = 0.0
        return standard

    monkeypatch.setattr(rigid_body, 'consistent_standard_parameters', massless)
    q, dq, ddq = trajectory(ur5e, 0.2)
    term = RigidBodyTerm(ur5e, identified(ur5e, standard=perturbed))
    assert term.method == 'regressor'
    expected = ur5e.with_parameters(perturbed).inverse_dynamics(q, dq, ddq)
    np.testing.assert_allclose(term.evaluate(q, dq, ddq, CONTEXT), expected, rtol=0, atol=1e-8)
    nominal = RigidBodyTerm(ur5e, None)
    np.testing.assert_allclose(nominal.evaluate(q, dq, ddq, CONTEXT), ur5e.inverse_dynamics(q, dq, ddq), atol=1e-9)


def test_term_factories_refuse_bad_options_with_clear_messages(ur5e, panda, bare_arm):
    result = identified(ur5e, 'load_squared', {'Fc': 3.0})
    cases = [('rigid_body', ur5e, result, {'payload_kg': 2}, r"rigid_body: unknown option\(s\) \['payload_kg'\]"),
             ('rigid_body', ur5e, result, {'threads': 0}, 'threads must be an integer >= 1'),
             ('rigid_body', ur5e, result, {'payload': 3.0}, 'payload must be'),
             ('rigid_body', panda, result, {}, 'identifies robot'),
             ('rotor_inertia', bare_arm, None, {}, 'rotor inertia of'),  # no drive data
             ('rotor_inertia', ur5e, None, {'rotor_inertia': [1, 2]}, 'one per joint'),
             ('friction_static', ur5e, None, {}, 'needs an identification result'),
             ('friction_static', ur5e, identified(ur5e, 'none'), {}, "friction model is 'none'"),
             ('friction_static', ur5e, result, {'band': 0}, 'band'),
             ('friction_static', ur5e, result, {'load': 'sensor'}, 'load must be one of'),
             ('friction_egms', ur5e, identified(ur5e, 'hamon'), {}, 'single Coulomb level'),
             ('friction_egms', ur5e, result, {'backlash': -1e-3}, 'backlash'),
             ('friction_egms', ur5e, result, {'coulomb': 'yes'}, 'coulomb must be true or false'),
             ('friction_adaptive', ur5e, identified(ur5e, 'load_squared', {'Fc': 0.0}), {}, 'Fc is <= 0'),
             ('friction_adaptive', ur5e, identified(ur5e, 'comprehensive'), {}, 'adaptive friction takes'),
             ('friction_adaptive', ur5e, result, {'alpha': [1, 2, 3]}, 'alpha must be'),
             ('friction_adaptive', ur5e, result, {'standstill_fade': -0.1}, r'standstill_fade \[s\] must be'),
             ('friction_egms', ur5e, result, {'standstill_window': 0}, r'standstill_window \[s\] must be'),
             ('flexible_joint', ur5e, result, {}, 'needs the joint stiffness'),
             ('flexible_joint', ur5e, result, {'stiffness': [[-1e4, 0]] * 6}, 'alpha1 > 0'),
             ('flexible_joint', ur5e, result, {'stiffness': {'shoulder_pan_joint': 1e4}}, 'stiffness missing')]
    for name, robot, res, options, message in cases:
        with pytest.raises(InputError, match=message):
            build_term(name, robot, res, options)


# ----------------------------------------------------------------------------------------- rotor inertia
def test_rotor_inertia_is_the_drives_or_the_identified_one(ur5e):
    """B·q̈: the drive data's B when the result did not identify it; the identified Ia_j where it is a base
    parameter, 0 where it was regrouped into the link parameters (already in the rigid-body torque)."""
    q, dq, ddq = trajectory(ur5e, 0.3)
    term = build_term('rotor_inertia', ur5e, identified(ur5e))
    np.testing.assert_allclose(term.evaluate(q, dq, ddq, CONTEXT), ur5e.drives.rotor_inertia_torque(ddq))
    ia = [(f'Ia_{j + 1}', 0.1 * (j + 1)) for j in range(1, ur5e.n)]  # Ia_1 regrouped with Izz_1
    term = build_term('rotor_inertia', ur5e, identified(ur5e, model={'rotor_inertia_identified': True}, extra=ia))
    np.testing.assert_allclose(term.inertia, [0.0, 0.2, 0.3, 0.4, 0.5, 0.6])
    np.testing.assert_allclose(term.step(q[5], dq[5], ddq[5], CONTEXT), term.inertia * ddq[5])
    by_name = dict(zip(ur5e.joint_names, range(6), strict=True))
    given = build_term('rotor_inertia', ur5e, None, {'rotor_inertia': by_name})
    np.testing.assert_allclose(given.inertia, np.arange(6.0))


# ------------------------------------------------------------------------------------------ static friction
STATIC_CASES = {
    'viscous_coulomb': {'Fc': [3.0, 4.0, 2.5, 1.0, 1.2, 0.8], 'Fv': 6.0, 'tau0': -0.2},
    'load_squared': {'Fc': 3.0, 'Fv': 6.0, 'tau0': 0.1, 'Fl': 2e-4},
    'load_absolute': {'Fc': 3.0, 'Fv': 6.0, 'tau0': 0.1, 'Fl': 0.01},
    'hamon': {'am1': 0.02, 'bm': 0.01, 'ag1': -0.03, 'bg': 0.02, 'cm': 2.0, 'dm': 0.5, 'cg': 2.5, 'dg': 0.4,
              'Fv': 5.0, 'tau0': 0.05},
    'comprehensive': {'fc': 2.5, 'fv': 4.0, 'fo': 0.1, 'fL': 1e-4},
}


@pytest.mark.parametrize('kind', sorted(STATIC_CASES))
def test_static_friction_is_the_identified_model_outside_the_band(ur5e, kind):
    """Outside |ω| < band the term equals the landed friction model on the nominal joint torque
    (RobotModel.inverse_dynamics), temperature term included; inside, it is continuous; step = evaluate."""
    q, dq, ddq = trajectory(ur5e)
    p = STATIC_CASES[kind]
    exponents = np.full(ur5e.n, 0.7) if kind == 'comprehensive' else None
    betas = {'beta1': 0.5, 'beta2': -0.004, 'beta3': 20.0}
    result = identified(ur5e, kind, {**p, **betas}, temperature=True, exponents=exponents,
                        provenance={'filters': {'stiction_velocity': 0.03}})
    assert build_term('friction_static', ur5e, result).band == 5e-3  # the default, not the stiction velocity
    # A band wide enough for this motion's 4.9 rad/s² to cross it in 12 samples (continuity below).
    term = build_term('friction_static', ur5e, result, {'band': 0.03})
    assert term.needs_joint_torque == (kind != 'viscous_coulomb')
    temperature = np.linspace(25.0, 45.0, len(q))[:, None] * np.ones(ur5e.n)
    tau = ur5e.inverse_dynamics(q, dq, ddq)
    assert np.all(np.abs(tau) < ur5e.effort_limits)  # no clipping of the load on this motion
    context = FeedforwardContext(temperature=temperature)
    f = term.evaluate(q, dq, ddq, context)
    expected = landed_static(kind, p, dq, tau, exponents) + TemperatureFriction(**betas).evaluate(dq, temperature)
    outside = np.abs(dq) >= term.band
    np.testing.assert_allclose(f[outside], expected[outside], rtol=1e-12, atol=1e-12)
    # Continuous: the largest change per sample is a fifth of the landed model's jump of 2·Fc at reversals.
    assert np.abs(np.diff(f, axis=0)).max() < 0.2 * np.abs(np.diff(expected, axis=0)).max()
    for k in (0, 901):
        np.testing.assert_allclose(term.step(q[k], dq[k], ddq[k], FeedforwardContext(temperature=temperature[k])),
                                   f[k], rtol=1e-12, atol=1e-12)


def test_static_friction_ramps_linearly_through_zero_velocity(ur5e):
    """Inside the band sgn(ω) is ω/band: at ω = band/2 the Coulomb part is Fc/2; the band defaults to
    5e-3 rad/s; without a temperature the fallback one is used."""
    p = {'Fc': 4.0, 'Fv': 10.0, 'tau0': 0.0, 'beta1': 1.0}
    term = build_term('friction_static', ur5e, identified(ur5e, 'viscous_coulomb', p, temperature=True))
    assert term.band == 5e-3
    w = np.full(ur5e.n, 2.5e-3)
    zero = np.zeros(ur5e.n)
    np.testing.assert_allclose(term.step(zero, w, zero, CONTEXT), 2.0 + 0.025 + np.sqrt(2.5e-3))
    np.testing.assert_allclose(term.step(zero, zero, zero, CONTEXT), 0.0)
    warm = build_term('friction_static', ur5e, identified(ur5e, 'viscous_coulomb', {**p, 'beta2': 0.01},
                                                          temperature=True), {'temperature_c': 40.0})
    np.testing.assert_allclose(warm.step(zero, w, zero, CONTEXT),
                               warm.step(zero, w, zero, FeedforwardContext(temperature=np.full(ur5e.n, 40.0))))


# ------------------------------------------------------------------------------------------- E-GMS
def test_egms_friction_is_the_landed_joint_friction_on_desired_signals(ur5e):
    """friction_egms = JointFriction (E-GMS Coulomb with F(τ) = Fc0 + Fc1·τ², viscous) run on
    θ = q_d, ω = q̇_d, τ_j = τ_J,d, plus the offset; H is bounded by 1 and the term does not jump
    where the static form does; step = evaluate; evaluate is pure."""
    q, dq, ddq = trajectory(ur5e)
    p = {'Fc': [3.0, 4.0, 2.5, 1.0, 1.2, 0.8], 'Fv': 6.0, 'tau0': 0.1, 'Fl': 2e-4}
    term = build_term('friction_egms', ur5e, identified(ur5e, 'load_squared', p))
    tau = ur5e.inverse_dynamics(q, dq, ddq)
    landed = JointFriction(StribeckMap(Fc=np.array(p['Fc']), Fs=np.array(p['Fc']), Fv1=6.0), load_coefficient=2e-4,
                           egms=EGMS(ur5e.n))
    expected = landed.run(q, dq, tau) + 0.1
    f = term.evaluate(q, dq, ddq, CONTEXT)
    # 1e-9 N·m: the E-GMS batch scan rounds differently with other block boundaries (~1e-11 here).
    np.testing.assert_allclose(f, expected, rtol=0, atol=1e-9)
    np.testing.assert_allclose(term.evaluate(q, dq, ddq, CONTEXT), f)  # pure: a second batch is the same
    level = landed.coulomb_level(tau)
    assert np.all(np.abs(f - 6.0 * dq - 0.1) <= level * (1 + 1e-12))  # |F·H| <= F
    static = landed_static('load_squared', p, dq, tau, None)
    # No step of 2·F at reversals: the operators slip over micro-radians, so the largest change per sample
    # (from the second sample; the first starts undeformed at full speed) is half the static jump at most.
    assert np.abs(np.diff(f[1:], axis=0)).max() < 0.5 * np.abs(np.diff(static, axis=0)).max()
    term.reset()
    stepped = np.array([term.step(q[k], dq[k], ddq[k], CONTEXT) for k in range(600)])
    np.testing.assert_allclose(stepped, f[:600], rtol=0, atol=1e-9)


def test_egms_friction_options_and_result_forms(ur5e):
    """E-GMS laws from the options; the comprehensive model's level fc + fL·τ² and remainder
    sgn(ω)·fv·|ω|^a + fo; coulomb: false leaves F_V only; negative levels are taken as 0 with a note."""
    q, dq, ddq = trajectory(ur5e, 1.0)
    tau = ur5e.inverse_dynamics(q, dq, ddq)
    result = identified(ur5e, 'comprehensive', {'fc': 2.0, 'fv': 3.0, 'fo': 0.2, 'fL': 1e-4},
                        exponents=np.full(ur5e.n, 0.8))
    term = build_term('friction_egms', ur5e, result, {'elements': 3, 'r_delta': 2.0, 'backlash': 0.002})
    h = EGMS(ur5e.n, 3, 2.0, 2.0, 0.002).run(q)
    expected = (LoadDependentCoulomb(2.0, 1e-4).level(tau) * h
                + PowerLawViscous(0.0, 3.0, 0.2, np.full(ur5e.n, 0.8)).evaluate(dq))
    np.testing.assert_allclose(term.evaluate(q, dq, ddq, CONTEXT), expected, rtol=0, atol=1e-9)
    viscous = build_term('friction_egms', ur5e, result, {'coulomb': False})
    assert not viscous.needs_joint_torque
    np.testing.assert_allclose(viscous.evaluate(q, dq, ddq, CONTEXT),
                               PowerLawViscous(0.0, 3.0, 0.2, np.full(ur5e.n, 0.8)).evaluate(dq))
    odd = build_term('friction_egms', ur5e, identified(ur5e, 'load_squared', {'Fc': 2.0, 'Fl': [-1e-4] + [0] * 5}))
    assert odd.notes == ("negative load coefficient on ['shoulder_pan_joint'] taken as 0",)


def test_adaptive_friction_is_the_estimator_regressor_times_the_latest_alpha(ur5e):
    """Eq. (29): α̂1·F(τ_J,d)·H(q_d) + α̂2·q̇_d = AdaptiveFrictionEstimator.predict on desired signals, with
    α̂ from the context, else the estimator's latest, else the option; step = evaluate."""
    q, dq, ddq = trajectory(ur5e)
    result = identified(ur5e, 'load_squared', {'Fc': 3.0, 'Fv': 6.0, 'Fl': 2e-4})
    estimator = AdaptiveFrictionEstimator(ur5e.drives, ur5e.inverse_dynamics, 3.0, 2e-4, alpha0=(0.8, 0.02))
    tau = ur5e.inverse_dynamics(q, dq, ddq)
    h = EGMS(ur5e.n).run(q)
    term = build_term('friction_adaptive', ur5e, result, {'estimator': estimator})
    np.testing.assert_allclose(term.evaluate(q, dq, ddq, CONTEXT), estimator.predict(tau, h, dq), rtol=0, atol=1e-9)
    alpha = np.column_stack([np.linspace(0.5, 1.4, ur5e.n), np.full(ur5e.n, -0.01)])
    own = build_term('friction_adaptive', ur5e, result, {'alpha': (1.1, 0.0)})
    f = own.evaluate(q, dq, ddq, FeedforwardContext(alpha=alpha))
    np.testing.assert_allclose(f, estimator.predict(tau, h, dq, alpha), rtol=0, atol=1e-9)
    nominal = np.broadcast_to([1.1, 0.0], (ur5e.n, 2))
    np.testing.assert_allclose(own.evaluate(q, dq, ddq, CONTEXT), estimator.predict(tau, h, dq, nominal),
                               rtol=0, atol=1e-9)
    stepped = np.array([own.step(q[k], dq[k], ddq[k], FeedforwardContext(alpha=alpha)) for k in range(500)])
    np.testing.assert_allclose(stepped, f[:500], rtol=0, atol=1e-9)


@pytest.mark.parametrize('name', ['friction_static', 'friction_egms', 'friction_adaptive'])
def test_the_friction_terms_read_a_law_with_its_own_symbols_by_its_roles(ur5e, name):
    """load_squared under other names, registered in this process: each friction term gives the torque it gives for
    load_squared with the same values (1e-12 N·m), because it reads the Coulomb level, the viscous term, the offset
    and the load term through the law's roles, not by the names Fc, Fv, tau0, Fl."""
    from dynid.friction.law import ONE, SIGN, VELOCITY, FrictionLaw, load_shape
    from dynid.friction.laws import register_law, unregister_law

    law = FrictionLaw('renamed_load', 'load_squared renamed', ('c0', 'b1', 'off', 'l2'),
                      {'c0': SIGN, 'b1': VELOCITY, 'off': ONE},
                      loaded=lambda w, s, tau, c: {'l2': s * load_shape(tau, 'squared')}, load_symbols=('l2',),
                      non_negative=('c0', 'b1', 'l2'), roles={'Fc': 'c0', 'Fv': 'b1', 'tau0': 'off', 'Fl': 'l2'},
                      load_shape='squared')
    p = {'Fc': [3.0, 4.0, 2.5, 1.0, 1.2, 0.8], 'Fv': 6.0, 'tau0': 0.1, 'Fl': 2e-4}
    q, dq, ddq = trajectory(ur5e, 1.0)
    options = {'alpha': (1.1, 0.01)} if name == 'friction_adaptive' else {}
    register_law(law)
    try:
        renamed = identified(ur5e, 'renamed_load', dict(zip(('c0', 'b1', 'off', 'l2'), p.values(), strict=True)))
        got = build_term(name, ur5e, renamed, options).evaluate(q, dq, ddq, CONTEXT)
    finally:
        unregister_law('renamed_load')
    expected = build_term(name, ur5e, identified(ur5e, 'load_squared', p), options).evaluate(q, dq, ddq, CONTEXT)
    assert np.abs(expected).max() > 1.0
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12)


def stop_and_go(robot, seconds_at_rest=0.6):
    """q, q̇, q̈ (N, n) at 1 kHz: from rest up and back (a reversal at 0.5 s, |q̈| = 0.4π² rad/s²) to rest at
    1 s, held for ``seconds_at_rest``, then down and back to rest; the same on every joint."""
    t = np.arange(1000) / RATE
    w = 2 * np.pi
    up = (0.3 + 0.1 * (1 - np.cos(w * t)), 0.1 * w * np.sin(w * t), 0.1 * w**2 * np.cos(w * t))
    rest = int(seconds_at_rest * RATE)
    parts = [np.concatenate([u, np.full(rest, 0.3 if i == 0 else 0.0), 0.6 - u if i == 0 else -u])
             for i, u in enumerate(up)]
    return tuple(np.tile(x[:, None], (1, robot.n)) for x in parts)


@pytest.mark.parametrize('name', ['friction_egms', 'friction_adaptive'])
def test_standstill_fade_takes_h_to_zero_after_the_motion_stops_and_not_at_a_reversal(ur5e, name):
    """Option standstill_fade: the term's F·H equals the paper's (fade off) while q_d moves, reversals
    included; once |q̇_d| < 0.01 rad/s with |q̈_d| < 0.01 rad/s² has held for 0.05 s, H falls linearly to 0
    over the fade time (0.1 s: −1/100 per 1 kHz sample) and stays 0; the first sample that moves again has
    it back whole. step = evaluate (1e-9 N·m: the E-GMS batch scan)."""
    q, dq, ddq = stop_and_go(ur5e)
    result = identified(ur5e, 'load_squared', {'Fc': 3.0, 'Fv': 6.0, 'Fl': 2e-4})
    options = {'alpha': (1.0, 0.0)} if name == 'friction_adaptive' else {}
    plain = build_term(name, ur5e, result, {**options, 'standstill_fade': None})
    faded = build_term(name, ur5e, result, {**options, 'standstill_fade': 0.1})
    remainder = build_term('friction_egms', ur5e, result, {'coulomb': False}).evaluate(q, dq, ddq, CONTEXT) \
        if name == 'friction_egms' else 0.0
    coulomb, faded_coulomb = (term.evaluate(q, dq, ddq, CONTEXT) - remainder for term in (plain, faded))
    slow = np.flatnonzero(np.abs(dq[:, 0]) < 0.01)
    at_rest = np.flatnonzero((np.abs(dq[:, 0]) < 0.01) & (np.abs(ddq[:, 0]) < 0.01))
    stop = at_rest[np.searchsorted(at_rest, 900)]         # the first sample of the hold's rest
    assert stop == 1000                                   # the hold starts at rest
    moves = stop + np.flatnonzero((np.abs(dq[stop:, 0]) >= 0.01) | (np.abs(ddq[stop:, 0]) >= 0.01))[0]
    assert moves == 1600                                  # the first that moves again: q̈_d ≠ 0, q̇_d = 0
    assert 495 < slow[np.searchsorted(slow, 400)] < 505   # the reversal passes below the speed threshold
    np.testing.assert_array_equal(faded_coulomb[:stop + 50], coulomb[:stop + 50])  # reversal: no fade
    factor = faded_coulomb[stop:moves] / coulomb[stop:moves]
    assert np.all(np.abs(coulomb[stop:moves]) > 1.0)       # H = ±1 at rest: the ratio is the factor
    np.testing.assert_allclose(factor[:50], 1.0, rtol=0, atol=1e-12)
    np.testing.assert_allclose(np.diff(factor[49:150], axis=0), -0.01, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(faded_coulomb[stop + 149:moves], 0.0)
    np.testing.assert_array_equal(faded_coulomb[moves:], coulomb[moves:])  # back at once, and unchanged
    faded.reset()
    stepped = np.array([faded.step(q[k], dq[k], ddq[k], CONTEXT) for k in range(len(q))])
    np.testing.assert_allclose(stepped, faded.evaluate(q, dq, ddq, CONTEXT), rtol=0, atol=1e-9)



@pytest.mark.parametrize('name', ['friction_egms', 'friction_adaptive'])
def test_standstill_fade_leaves_a_slow_reversal_alone(ur5e, name):
    """A reversal of the thesis' hysteresis sweep (ch.6 eq. (21): |q̈_d| = 0.05 rad/s²) spends 0.4 s below
    q̇_d = 0.01 rad/s, far longer than the 0.05 s window, yet q̈_d keeps its sign through it: not a stop,
    so the faded term equals the paper's (fade off) on every sample; with the acceleration threshold above
    0.05 rad/s² the same reversal is faded (H shrinks in the slow part)."""
    t = np.arange(4000) / RATE
    a = 0.05
    dq1 = 0.1 - a * t                                     # decelerate through zero: a reversal at 2 s
    q1, ddq1 = 0.3 + 0.1 * t - 0.5 * a * t**2, np.full_like(t, -a)
    q, dq, ddq = (np.tile(x[:, None], (1, ur5e.n)) for x in (q1, dq1, ddq1))
    result = identified(ur5e, 'load_squared', {'Fc': 3.0, 'Fv': 6.0, 'Fl': 2e-4})
    options = {'alpha': (1.0, 0.0)} if name == 'friction_adaptive' else {}
    plain = build_term(name, ur5e, result, {**options, 'standstill_fade': None}).evaluate(q, dq, ddq, CONTEXT)
    faded = build_term(name, ur5e, result, {**options, 'standstill_fade': 0.1}).evaluate(q, dq, ddq, CONTEXT)
    np.testing.assert_array_equal(faded, plain)
    blunt = build_term(name, ur5e, result, {**options, 'standstill_fade': 0.1, 'standstill_acceleration': 0.1})
    assert np.max(np.abs(blunt.evaluate(q, dq, ddq, CONTEXT) - plain)) > 1.0  # N·m: most of F·H


# ---------------------------------------------------------------------------- joint friction (schema 2)
#: A joint_friction section: shoulder_pan fully identified, elbow without Fc1 (null) and without the
#: temperature and E-GMS fits, shoulder_lift without Fc0 (not covered: it keeps the IDIM friction).
SECTION = {'model': {'t0_c': 20.0, 'egms_elements': 3}, 'joints': {
    'shoulder_pan_joint': {'parameters': {'Fc0': 2.0, 'Fs': 2.6, 'Vs': 0.05, 'mu': 1.5, 'Fv1': 4.0, 'Fv2': 0.5,
                                          'Fv3': -0.1, 'Fc1': 3e-4, 'Ft1': -0.01, 'Ft2': 3e3, 'backlash': 0.003,
                                          'r_delta': 3.0, 'r_k': 1.5}},
    'elbow_joint': {'parameters': {'Fc0': 1.5, 'Fs': 1.8, 'Vs': 0.02, 'mu': 1.0, 'Fv1': 2.0, 'Fc1': None}},
    'shoulder_lift_joint': {'parameters': {'Fv1': 1.0}}}}
IDIM = {'Fc': [3.0, 4.0, 2.5, 1.0, 1.2, 0.8], 'Fv': 6.0, 'tau0': 0.1, 'Fl': 2e-4}


def with_section(result, section=SECTION):
    """``result`` written with a joint_friction section and read back (schema 2)."""
    return IdentificationResult.from_dict({**result.to_dict(), 'dynid_result': 2, 'joint_friction': section}, 'test')


def test_joint_friction_section_drives_the_friction_terms_on_the_joints_it_covers(ur5e):
    """With a joint_friction section, friction_egms, friction_static and friction_adaptive equal the section's
    JointFriction (joint_friction_of) on the joints with an identified Fc0 and the IDIM friction on the others;
    the IDIM offset tau0 (0.1 N·m) stays on every joint (it belongs to the rigid-body fit)."""
    q, dq, ddq = trajectory(ur5e)
    tau = ur5e.inverse_dynamics(q, dq, ddq)
    assert np.all(np.abs(tau) < ur5e.effort_limits)  # no clipping of the load on this motion
    temperature = np.linspace(25.0, 45.0, len(q))[:, None] * np.ones(ur5e.n)
    result = with_section(identified(ur5e, 'load_squared', IDIM, provenance={'filters': {'stiction_velocity': 0.03}}))
    model, mask = joint_friction_of(result, ur5e)
    assert mask.tolist() == [True, False, True, False, False, False]
    idim = JointFriction(StribeckMap(Fc=np.array(IDIM['Fc']), Fs=np.array(IDIM['Fc']), Fv1=6.0), load_coefficient=2e-4,
                         egms=EGMS(ur5e.n, 3))  # the section's 3 elements on every joint, default laws
    band = 5e-3  # the default band
    smoothed = dataclasses.replace(model, stribeck=dataclasses.replace(model.stribeck, smoothing=band))

    # friction_egms: F(τ)·H + F_V with the section's laws and smoothed remainder; 1e-9 N·m: E-GMS batch scan.
    term = build_term('friction_egms', ur5e, result)
    np.testing.assert_allclose(term.egms.backlash_table[:, 0], [0.003, 0.001, 0.001, 0.001, 0.001, 0.001])
    assert term.egms.elements == 3 and term.egms.r_delta.tolist() == [3.0, 4.0, 4.0, 4.0, 4.0, 4.0]
    f = term.evaluate(q, dq, ddq, FeedforwardContext(temperature=temperature))
    expected = np.where(mask, smoothed.run(q, dq, tau, temperature), idim.run(q, dq, tau)) + 0.1
    np.testing.assert_allclose(f, expected, rtol=0, atol=1e-9)
    # Without a temperature: 20 °C, where the reference-temperature term is zero.
    smoothed.reset(), idim.reset()
    np.testing.assert_allclose(term.evaluate(q, dq, ddq, CONTEXT),
                               np.where(mask, smoothed.run(q, dq, tau, np.full_like(q, 20.0)),
                                        idim.run(q, dq, tau)) + 0.1, rtol=0, atol=1e-9)
    # Options the user sets override the section's laws on every joint.
    overridden = build_term('friction_egms', ur5e, result, {'backlash': 0.002})
    assert overridden.egms.backlash_table[:, 0].tolist() == [0.002] * 6

    # friction_static: outside the band F(τ)·sgn(ω) + remainder of the (unsmoothed) model.
    static = build_term('friction_static', ur5e, result)
    f = static.evaluate(q, dq, ddq, FeedforwardContext(temperature=temperature))
    expected = np.where(mask, dataclasses.replace(model, egms=None).run(q, dq, tau, temperature) + 0.1,
                        landed_static('load_squared', IDIM, dq, tau, None))
    outside = np.abs(dq) >= static.band
    np.testing.assert_allclose(f[outside], expected[outside], rtol=1e-12, atol=1e-12)
    # A result without load terms still needs τ_J,d for the section's Fc1.
    viscous = with_section(identified(ur5e, 'viscous_coulomb', IDIM))
    assert build_term('friction_static', ur5e, viscous).needs_joint_torque

    # friction_adaptive (α = (1, 0)): F(τ)·H with the section's Fc0, Fc1 and laws.
    adaptive = build_term('friction_adaptive', ur5e, result)
    laws = model.egms
    h = EGMS(ur5e.n, 3, laws.r_delta, laws.r_k, laws.backlash_table[:, 0]).run(q)
    level = np.where(mask, model.coulomb_level(tau), np.array(IDIM['Fc']) + 2e-4 * tau**2)
    np.testing.assert_allclose(adaptive.evaluate(q, dq, ddq, CONTEXT), level * h, rtol=0, atol=1e-9)


def test_the_identified_excess_band_smooths_the_stribeck_excess_of_friction_egms(ur5e):
    """A section with excess_band (the band the reciprocating sweep found) gives friction_egms its excess as
    tanh(ω/excess_band) on that joint; the other section joints keep the default 5e-3 rad/s; the option
    ``band`` overrides both."""
    section = {**SECTION, 'joints': {**SECTION['joints'], 'shoulder_pan_joint': {'parameters': {
        **SECTION['joints']['shoulder_pan_joint']['parameters'], 'excess_band': 1e-3}}}}
    result = with_section(identified(ur5e, 'load_squared', IDIM), section)
    model, mask = joint_friction_of(result, ur5e)
    assert model.stribeck.smoothing.tolist() == [1e-3, 0.0, 0.0, 0.0, 0.0, 0.0]
    w = np.linspace(-0.02, 0.02, 81)[:, None] * np.ones(ur5e.n)
    zero = np.zeros_like(w)
    for options, band in ((None, [1e-3, 5e-3, 5e-3]), ({'band': 2e-3}, [2e-3] * 3)):
        term = build_term('friction_egms', ur5e, result, {**(options or {}), 'coulomb': False})
        f = term.evaluate(zero, w, zero, CONTEXT)
        s = model.stribeck
        for j, b in zip((0, 2), (band[0], band[1]), strict=True):
            excess = (s.Fs[j] - s.Fc[j]) * np.tanh(w[:, j] / b) * s.stribeck_decay(w)[:, j]
            np.testing.assert_allclose(f[:, j], excess + s.viscous(w)[:, j] + 0.1, rtol=0, atol=1e-12)


# ------------------------------------------------------------------------------------------ flexible joint
def _fine_second_derivative(function, t, h=2e-4):
    return (function(t + h) - 2 * function(t) + function(t - h)) / h**2


@pytest.mark.parametrize('stiffness', [3e4, [[2.5e4, 4e9]] * 6], ids=['linear', 'cubic'])
def test_flexible_joint_correction_is_B_times_the_deflection_acceleration(ur5e, stiffness):
    """B·φ̈_d with φ_d = τ_E⁻¹(τ_J,d): against a fine central difference (h = 0.2 ms) of φ_d(t) from the
    closed-form motion, at t_{k−1} (the causal stencil is one sample late); 1 % of the correction's
    range. The first two samples give 0; step = evaluate."""
    t = np.arange(1500) / RATE
    q, dq, ddq, q_of = motion(ur5e, t, amplitude=0.4, frequency=1.5)
    spring = OddPolynomialStiffness(np.full((6, 1), stiffness) if np.ndim(stiffness) == 0 else np.array(stiffness))
    term = build_term('flexible_joint', ur5e, None, {'stiffness': stiffness, 'rate_hz': RATE})
    f = term.evaluate(q, dq, ddq, CONTEXT)

    def deflection(times):
        a, b, c, _ = motion(ur5e, times, amplitude=0.4, frequency=1.5)
        return spring.deflection(ur5e.inverse_dynamics(a, b, c))

    expected = ur5e.drives.rotor_inertia * _fine_second_derivative(deflection, t[1:-1])
    assert np.all(f[:2] == 0)
    error = f[2:] - expected
    assert np.abs(error).max() < 0.01 * np.ptp(expected), (np.abs(error).max(), np.ptp(expected))
    term.reset()
    stepped = np.array([term.step(q[k], dq[k], ddq[k], CONTEXT) for k in range(300)])
    np.testing.assert_allclose(stepped, f[:300], rtol=0, atol=1e-9)  # Newton stops per batch: rounding


def test_flexible_joint_drops_the_correction_where_the_trajectory_is_not_smooth(ur5e):
    """An acceleration step (trapezoidal profile) makes the snap estimate exceed max_snap at the two
    samples whose stencil spans it: the correction is 0 there (it would be a 1/T² spike)."""
    q, dq, ddq = trajectory(ur5e, 0.2)
    ddq = ddq.copy()
    ddq[100:] += 0.5  # an acceleration step at sample 100 on a smooth motion
    term = build_term('flexible_joint', ur5e, None, {'stiffness': 3e4})
    f = term.evaluate(q, dq, ddq, CONTEXT)
    assert np.all(f[100:102] == 0) and np.any(f[99] != 0) and np.any(f[102] != 0)
    loose = build_term('flexible_joint', ur5e, None, {'stiffness': 3e4, 'max_snap': 1e9})
    assert np.abs(loose.evaluate(q, dq, ddq, CONTEXT)[100]).max() > 50 * np.abs(f).max()


@pytest.mark.parametrize('stiffness', [3e4, [[2.5e4, 4e9]] * 6], ids=['linear', 'cubic'])
def test_reference_correction_is_the_deflection_the_spring_needs_for_the_joint_torque(ur5e, stiffness):
    """θ_d − q_d = φ_d with τ_E(φ_d) = τ_J,d (the spring evaluated forward, not inverted again), τ_J,d the
    Feedforward's rigid-body torque (gravity included even where the backend compensates it); φ̇_d and φ̈_d
    against fine central differences of φ_d(t) from the closed-form motion (1 % of their range); 0 at the
    ends. The effort is unchanged by it."""
    t = np.arange(1500) / RATE
    q, dq, ddq, _ = motion(ur5e, t, amplitude=0.4, frequency=1.5)
    spring = OddPolynomialStiffness(np.full((6, 1), stiffness) if np.ndim(stiffness) == 0 else np.array(stiffness))
    options = {'flexible_joint': {'stiffness': stiffness}}
    feedforward = Feedforward(ur5e, None, ['rigid_body', 'flexible_joint'], options, compensate_gravity=False)
    phi, dphi, ddphi = feedforward.reference_correction(q, dq, ddq)
    torque = ur5e.inverse_dynamics(q, dq, ddq)
    np.testing.assert_allclose(spring.torque(phi), torque, rtol=1e-9, atol=1e-9)
    assert np.abs(phi).max() > 1e-4  # a deflection worth correcting (rad)

    def deflection(times):
        a, b, c, _ = motion(ur5e, times, amplitude=0.4, frequency=1.5)
        return spring.deflection(ur5e.inverse_dynamics(a, b, c))

    h = 2e-4
    inner = t[1:-1]
    slope = (deflection(inner + h) - deflection(inner - h)) / (2 * h)
    curvature = _fine_second_derivative(deflection, inner)
    assert np.abs(dphi[1:-1] - slope).max() < 0.01 * np.ptp(slope)
    assert np.abs(ddphi[1:-1] - curvature).max() < 0.01 * np.ptp(curvature)
    assert np.all(dphi[[0, -1]] == 0) and np.all(ddphi[[0, -1]] == 0)
    before = feedforward.evaluate(q, dq, ddq)
    np.testing.assert_array_equal(feedforward.evaluate(q, dq, ddq), before)


def test_reference_correction_is_refused_without_the_flexible_joint_term_or_with_bad_input(ur5e):
    q, dq, ddq = trajectory(ur5e, 0.1)
    with pytest.raises(InputError, match='needs the flexible_joint term'):
        Feedforward(ur5e, None, ['rigid_body']).reference_correction(q, dq, ddq)
    feedforward = Feedforward(ur5e, None, ['rigid_body', 'flexible_joint'], {'flexible_joint': {'stiffness': 3e4}})
    q = q.copy()
    q[5, 2] = np.nan
    with pytest.raises(InputError, match='non-finite'):
        feedforward.reference_correction(q, dq, ddq)


def test_reference_correction_derivatives_vanish_where_the_trajectory_is_not_smooth(ur5e):
    """At an acceleration step φ_d steps (the static deflection does) but φ̇_d and φ̈_d are 0 on the
    samples whose central stencil spans it."""
    q, dq, ddq = trajectory(ur5e, 0.2)
    ddq = ddq.copy()
    ddq[100:] += 0.5
    feedforward = Feedforward(ur5e, None, ['flexible_joint'], {'flexible_joint': {'stiffness': 3e4}})
    phi, dphi, ddphi = feedforward.reference_correction(q, dq, ddq)
    assert np.all(dphi[99:101] == 0) and np.all(ddphi[99:101] == 0)
    assert np.any(dphi[98] != 0) and np.any(ddphi[101] != 0)
    np.testing.assert_allclose(phi, ur5e.inverse_dynamics(q, dq, ddq) / 3e4, rtol=1e-12)


# ------------------------------------------------------------------------------------------------ plugins
def test_built_in_terms_are_registered_in_the_entry_point_group(ur5e):
    assert term_names()[:len(BUILT_INS)] == BUILT_INS  # dynid's own first, in their order
    result = identified(ur5e, 'load_squared', {'Fc': 3.0})
    for name in BUILT_INS:
        assert isinstance(REGISTRY.get(name), TermPlugin) and REGISTRY.get(name).name == name
        options = {'stiffness': 3e4} if name == 'flexible_joint' else {}
        assert build_term(name, ur5e, result, options).name == name
    with pytest.raises(InputError, match=r"unknown feedforward term 'rigid_bodies'; installed: rigid_body, "
                                         r"rotor_inertia, friction_static"):
        build_term('rigid_bodies', ur5e, result)


class ConstantDrag:
    """A term of this process: a constant torque per joint against the desired velocity [N·m]."""

    friction = True

    def __init__(self, robot, result, options):
        self.level = float(options.get('level', 0.5))

    def evaluate(self, q, dq, ddq, context):
        return -self.level * np.sign(dq)


def test_a_term_registered_in_the_process_is_found_by_name_and_used_end_to_end(ur5e):
    """register_term makes a term known beside the installed ones: listed, built by name, summed by the Feedforward,
    offered by feedforward_node's terms setting and built from it; unregister_term forgets it."""
    plugin = TermPlugin('constant_drag', 'a constant drag against the velocity', ConstantDrag)
    register_term(plugin)
    try:
        assert term_names()[-1] == 'constant_drag' and REGISTRY.get('constant_drag') is plugin
        q, dq, ddq = trajectory(ur5e, 0.2)
        term = build_term('constant_drag', ur5e, None, {'level': 1.5})
        np.testing.assert_allclose(term.evaluate(q, dq, ddq, CONTEXT), -1.5 * np.sign(dq))
        feedforward = Feedforward(ur5e, None, ['rigid_body', 'constant_drag'], {'constant_drag': {'level': 1.5}})
        np.testing.assert_allclose(feedforward.evaluate(q, dq, ddq),
                                   ur5e.inverse_dynamics(q, dq, ddq) - 1.5 * np.sign(dq), atol=1e-9)
        choices = dataclasses.fields(FeedforwardSettings)[[f.name for f in dataclasses.fields(FeedforwardSettings)]
                                                          .index('terms')].metadata['choices']
        assert 'constant_drag' in choices
        configured = FeedforwardSettings('ur5e', terms=('rigid_body', 'constant_drag')).build(warn=lambda text: None)
        assert list(configured.feedforward.terms) == ['rigid_body', 'constant_drag']
    finally:
        unregister_term('constant_drag')
    assert 'constant_drag' not in term_names() and 'constant_drag' not in choices
    with pytest.raises(InputError, match="unknown feedforward term 'constant_drag'"):
        build_term('constant_drag', ur5e)
    with pytest.raises(InputError, match='register_term takes a TermPlugin, got type'):
        register_term(ConstantDrag)
    with pytest.raises(InputError, match="feedforward term 'rigid_body' is installed already"):
        register_term(TermPlugin('rigid_body', 'another', ConstantDrag))
    broken = TermPlugin('no_evaluate', 'builds something else', lambda robot, result, options: object())
    register_term(broken)
    try:
        with pytest.raises(InputError, match="'no_evaluate' built a object without evaluate"):
            build_term('no_evaluate', ur5e)
    finally:
        unregister_term('no_evaluate')


USER_TERM = """\
    import numpy as np

    class CableDrag:
        '''A user term: a constant drag per joint against the desired velocity [N·m].'''

        friction = True

        def __init__(self, robot, result, options):
            self.level = float(options.get('level', 0.5))

        def evaluate(self, q, dq, ddq, context):
            return -self.level * np.tanh(dq / 0.1)
    """


USER_PLUGIN = USER_TERM + """
    from dynid.control import TermPlugin

    CABLE_DRAG = TermPlugin('cable_drag', 'a constant drag per joint against the desired velocity', CableDrag)
    """


@pytest.mark.parametrize('source, target', [(USER_PLUGIN, 'dynid_cable_terms:CABLE_DRAG'),
                                            (USER_TERM, 'dynid_cable_terms:CableDrag')],
                         ids=['term_plugin', 'bare_factory'])
def test_a_user_term_in_another_package_is_found_by_name(ur5e, tmp_path, monkeypatch, source, target):
    """A tiny package declaring a term in dynid.feedforward_terms is picked up by name, built with its
    options, and joins the Feedforward beside the built-ins (it has no step: one-sample batches). Its entry
    point names a TermPlugin, or (the form before it) the factory itself, wrapped under the entry point's name."""
    source = install_user_package(tmp_path / 'cable', 'dynid_cable_terms', source, {'cable_drag': target}, GROUP)
    monkeypatch.syspath_prepend(str(source))
    assert REGISTRY.entry_points()['cable_drag'].dist.name == 'dynid_cable_terms'
    assert term_names()[-1] == 'cable_drag'
    plugin = REGISTRY.get('cable_drag')
    assert isinstance(plugin, TermPlugin) and plugin.name == 'cable_drag'
    assert plugin.factory is sys.modules['dynid_cable_terms'].CableDrag
    term = build_term('cable_drag', ur5e, None, {'level': 2.0})
    q, dq, ddq = trajectory(ur5e, 0.2)
    np.testing.assert_allclose(term.evaluate(q, dq, ddq, CONTEXT), -2.0 * np.tanh(dq / 0.1))
    feedforward = Feedforward(ur5e, None, ['rigid_body', 'cable_drag'], {'cable_drag': {'level': 2.0}})
    expected = ur5e.inverse_dynamics(q, dq, ddq) - 2.0 * np.tanh(dq / 0.1)
    np.testing.assert_allclose(feedforward.evaluate(q, dq, ddq), expected, atol=1e-9)
    np.testing.assert_allclose(feedforward.step(q[3], dq[3], ddq[3]), expected[3], atol=1e-9)
    assert 'cable_drag' in Feedforward(ur5e, None, ['rigid_body', 'cable_drag'], compensate_friction=False).left_out
    monkeypatch.undo()
    sys.modules.pop('dynid_cable_terms', None)
    assert 'cable_drag' not in term_names()


def test_broken_or_ambiguous_plugins_are_refused_by_name(ur5e, tmp_path, monkeypatch):
    broken = install_user_package(tmp_path / 'broken', 'dynid_broken_terms', 'import not_a_module\n',
                                  {'broken_term': 'dynid_broken_terms:Term'}, GROUP)
    twin = install_user_package(tmp_path / 'twin', 'dynid_twin_terms', USER_TERM,
                                {'rigid_body': 'dynid_twin_terms:CableDrag'}, GROUP)
    monkeypatch.syspath_prepend(str(broken))
    with pytest.raises(InputError, match=r"'broken_term' \(dynid_broken_terms:Term\) cannot be loaded: "
                                         r"ModuleNotFoundError"):
        build_term('broken_term', ur5e)
    monkeypatch.syspath_prepend(str(twin))
    with pytest.raises(InputError, match="'rigid_body' is registered twice"):
        build_term('rigid_body', ur5e)
