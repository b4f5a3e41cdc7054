"""Feedforward (dynid.control.Feedforward): the sum of the terms with the backends' effort semantics.

The UR5e with a load_squared identification (its nominal base parameters) on the 1 kHz sinusoids of
test_feedforward_terms. References: the terms evaluated one by one, RobotModel.inverse_dynamics for
gravity, the landed friction models, and a plain per-sample loop for the rate limit.
"""

import numpy as np
import pytest

from builders import identified, landed_static, trajectory
from dynid.control import Feedforward, FeedforwardContext, FeedforwardTerm, build_term, limit_rate
from dynid.errors import InputError

FRICTION = {'Fc': [3.0, 4.0, 2.5, 1.0, 1.2, 0.8], 'Fv': 6.0, 'tau0': 0.1, 'Fl': 2e-4}
ALL_TERMS = ['rigid_body', 'rotor_inertia', 'friction_egms', 'friction_adaptive', 'flexible_joint']


@pytest.fixture(scope='module')
def result(ur5e):
    return identified(ur5e, 'load_squared', FRICTION, drive_gains=np.array([12.0, 12.5, 13.0, 8.5, 8.8, 9.1]))


def test_the_feedforward_is_the_sum_of_its_terms_and_steps_as_it_evaluates(ur5e, result):
    """Σ of the terms evaluated on their own with τ_J,d = the rigid-body torque; with friction_adaptive
    the E-GMS term gives F_V only (eq. (30)); stepping from a reset gives the rows of evaluate."""
    q, dq, ddq = trajectory(ur5e, 1.0)
    options = {'flexible_joint': {'stiffness': 3e4}, 'friction_adaptive': {'alpha': (0.9, 0.01)}}
    feedforward = Feedforward(ur5e, result, ALL_TERMS, options)
    assert feedforward.terms['friction_egms'].coulomb is False
    tau = ur5e.inverse_dynamics(q, dq, ddq)
    context = FeedforwardContext(desired_joint_torque=tau)
    parts = {name: build_term(name, ur5e, result, {**options.get(name, {}), 'coulomb': False}
                              if name == 'friction_egms' else options.get(name, {})).evaluate(q, dq, ddq, context)
             for name in ALL_TERMS}
    np.testing.assert_allclose(parts['rigid_body'], tau, atol=1e-9)
    out = feedforward.evaluate(q, dq, ddq)
    np.testing.assert_allclose(out, sum(parts.values()), rtol=0, atol=1e-9)
    stepped = np.array([feedforward.step(q[k], dq[k], ddq[k]) for k in range(400)])
    np.testing.assert_allclose(stepped, out[:400], rtol=0, atol=1e-9)
    assert feedforward.errors == 0


def test_gravity_is_left_out_but_the_friction_load_keeps_it(ur5e, result):
    """compensate_gravity false (UR, Franka): rigid body minus g(q) = RNEA(q, 0, 0); the load-dependent
    friction still sees the full joint torque (the gear carries gravity whoever compensates it)."""
    q, dq, ddq = trajectory(ur5e, 1.0)
    feedforward = Feedforward(ur5e, result, ['rigid_body', 'friction_static'], compensate_gravity=False)
    tau = ur5e.inverse_dynamics(q, dq, ddq)
    gravity = ur5e.inverse_dynamics(q, np.zeros_like(q), np.zeros_like(q))
    friction = build_term('friction_static', ur5e, result)
    expected = tau - gravity + friction.evaluate(q, dq, ddq, FeedforwardContext(desired_joint_torque=tau))
    out = feedforward.evaluate(q, dq, ddq)
    np.testing.assert_allclose(out, expected, rtol=0, atol=1e-9)
    moving = np.abs(dq) >= friction.band
    landed = landed_static('load_squared', FRICTION, dq, tau, None)
    np.testing.assert_allclose((out - tau + gravity)[moving], landed[moving], rtol=0, atol=1e-9)
    np.testing.assert_allclose(feedforward.step(q[9], dq[9], ddq[9]), expected[9], atol=1e-9)


def test_friction_is_left_out_where_the_backend_compensates_it(ur5e, result):
    q, dq, ddq = trajectory(ur5e, 0.5)
    feedforward = Feedforward(ur5e, result, ['rigid_body', 'friction_egms', 'friction_adaptive'],
                              compensate_friction=False, compensate_gravity=False)
    assert list(feedforward.terms) == ['rigid_body'] and set(feedforward.left_out) == {'friction_egms',
                                                                                       'friction_adaptive'}
    expected = ur5e.inverse_dynamics(q, dq, ddq) - ur5e.inverse_dynamics(q, 0 * q, 0 * q)
    np.testing.assert_allclose(feedforward.evaluate(q, dq, ddq), expected, atol=1e-9)


def test_effort_as_current_divides_by_the_drive_gains(ur5e, result, bare_arm):
    """i = τ/K_τ with K_τ from the result, else the robot's drives, else the given gains [N·m/A]."""
    q, dq, ddq = trajectory(ur5e, 0.3)
    with pytest.warns(UserWarning, match='feedforward without friction'):  # the result's friction left out: said
        torque = Feedforward(ur5e, result, ['rigid_body']).evaluate(q, dq, ddq)
        current = Feedforward(ur5e, result, ['rigid_body'], effort_is_current=True)
    np.testing.assert_allclose(current.evaluate(q, dq, ddq), torque / result.drive_gains)
    np.testing.assert_allclose(current.step(q[0], dq[0], ddq[0]), torque[0] / result.drive_gains)
    nominal = Feedforward(ur5e, None, ['rigid_body'], effort_is_current=True)
    np.testing.assert_allclose(nominal.evaluate(q, dq, ddq), torque / ur5e.drives.drive_gain, atol=1e-9)
    given = Feedforward(ur5e, None, ['rigid_body'], effort_is_current=True,
                        drive_gains=dict(zip(ur5e.joint_names, range(1, 7), strict=True)))
    np.testing.assert_allclose(given.evaluate(q, dq, ddq), torque / np.arange(1.0, 7.0), atol=1e-9)
    with pytest.raises(InputError, match='effort_is_current needs drive gains'):
        Feedforward(bare_arm, None, ['rigid_body'], effort_is_current=True)  # a URDF arm without drive data


def test_effort_limits_clip_per_joint(ur5e, result):
    q, dq, ddq = trajectory(ur5e, 0.5)
    torque = Feedforward(ur5e, result).evaluate(q, dq, ddq)
    limits = np.array([5.0, 20.0, 8.0, 1.0, 1.0, 0.5])
    clipped = Feedforward(ur5e, result, effort_limits=dict(zip(ur5e.joint_names, limits, strict=True)))
    out = clipped.evaluate(q, dq, ddq)
    np.testing.assert_allclose(out, np.clip(torque, -limits, limits))
    assert np.any(np.abs(torque) > limits) and np.all(np.abs(out) <= limits)
    heavy = Feedforward(ur5e, result, options={'rigid_body': {'payload': {'mass': 400.0}}})
    assert np.all(np.abs(heavy.evaluate(q, dq, ddq)) <= ur5e.effort_limits)  # the robot model's limits
    with pytest.raises(InputError, match='effort_limits'):
        Feedforward(ur5e, result, effort_limits=[1.0, 2.0])


def _rate_limited_loop(target, step):
    out, previous = np.empty_like(target), np.zeros(target.shape[1])
    for k, value in enumerate(target):
        previous = np.clip(value, previous - step, previous + step)
        out[k] = previous
    return out


def test_rate_limit_bounds_the_change_per_sample_from_zero(ur5e, result):
    """|Δτ| <= rate_limit/rate_hz between samples, starting from 0 (an activated controller ramps in);
    the same as a plain per-sample loop, in evaluate and step."""
    q, dq, ddq = trajectory(ur5e, 1.0)
    free = Feedforward(ur5e, result, ['rigid_body', 'friction_egms']).evaluate(q, dq, ddq)
    rate = np.array([2000.0, 2000.0, 2000.0, 200.0, 200.0, 2.0])  # N·m/s; the last one acts all the time
    limited = Feedforward(ur5e, result, ['rigid_body', 'friction_egms'], rate_limit=rate)
    out = limited.evaluate(q, dq, ddq)
    np.testing.assert_allclose(out, _rate_limited_loop(free, rate / 1000.0), rtol=0, atol=1e-9)
    assert np.all(np.abs(np.diff(out, axis=0, prepend=0 * out[:1])) <= rate / 1000.0 + 1e-12)
    stepped = np.array([limited.step(q[k], dq[k], ddq[k]) for k in range(300)])
    np.testing.assert_allclose(stepped, out[:300], rtol=0, atol=1e-9)
    restart = np.zeros(len(free), dtype=bool)
    restart[[50, 51, 400]] = True
    target = np.where(restart[:, None], 0.0, free)
    expected = np.concatenate([_rate_limited_loop(part, rate / 1000.0) for part in
                               np.split(target, [50, 52, 400, 401])])
    expected[restart] = 0.0
    np.testing.assert_allclose(limit_rate(target, np.zeros(6), rate / 1000.0, restart), expected, atol=1e-9)


class _Faulty(FeedforwardTerm):
    """A term that answers NaN on the samples where q of the first joint exceeds a threshold."""

    name = 'faulty'

    def evaluate(self, q, dq, ddq, context):
        return np.where(q[..., :1] > 0.79, np.nan, 0.0) * np.ones(q.shape)


def test_non_finite_input_or_output_gives_zero_and_counts_an_error(ur5e, result):
    """NaN in q, in a context signal or in a term's output: zero effort on every joint, one error per
    sample, never NaN; the memory terms skip the sample (the other rows equal the run without it)."""
    q, dq, ddq = trajectory(ur5e, 0.5)
    terms = ['rigid_body', 'friction_egms']
    feedforward = Feedforward(ur5e, result, terms)
    bad_q, temperature = q.copy(), np.full(q.shape, 30.0)
    bad_q[[10, 11], 2] = np.nan
    temperature[50, 0] = np.inf
    out = feedforward.evaluate(bad_q, dq, ddq, FeedforwardContext(temperature=temperature))
    bad = np.zeros(len(q), dtype=bool)
    bad[[10, 11, 50]] = True
    assert np.all(out[bad] == 0) and np.all(np.isfinite(out)) and feedforward.errors == 3
    assert 'non-finite' in feedforward.last_error
    clean = Feedforward(ur5e, result, terms).evaluate(q[~bad], dq[~bad], ddq[~bad],
                                                      FeedforwardContext(temperature=temperature[~bad]))
    np.testing.assert_allclose(out[~bad], clean, rtol=0, atol=1e-9)
    feedforward.reset()
    for k in range(60):
        value = feedforward.step(bad_q[k], dq[k], ddq[k], FeedforwardContext(temperature=temperature[k]))
        np.testing.assert_allclose(value, out[k], rtol=0, atol=1e-9)
    assert feedforward.errors == 6
    alpha = Feedforward(ur5e, result, ['rigid_body', 'friction_adaptive'])
    assert np.all(alpha.evaluate(q, dq, ddq, FeedforwardContext(alpha=[np.nan, 0.0])) == 0) and alpha.errors == len(q)
    faulty = Feedforward(ur5e, None, ['rigid_body', _Faulty()])
    out = faulty.evaluate(q, dq, ddq)
    hit = q[:, 0] > 0.79
    assert hit.any() and np.all(out[hit] == 0) and np.all(out[~hit] != 0) and faulty.errors == hit.sum()
    assert np.all(faulty.step(q[hit][0], dq[hit][0], ddq[hit][0]) == 0) and faulty.errors == hit.sum() + 1


def test_configurations_that_count_friction_twice_or_do_not_fit_are_refused(ur5e, result):
    cases = [(['rigid_body', 'friction_static', 'friction_egms'], {}, 'model the same friction'),
             (['friction_egms', 'friction_adaptive'], {'friction_egms': {'coulomb': True}}, 'coulomb: false'),
             (['rigid_body'], {'friction_static': {}}, 'not configured'),
             (['rigid_body', 'rigid_body'], {}, 'repeat'),
             (['rigid_body', 'friction_sticky'], {}, "unknown feedforward term 'friction_sticky'")]
    for terms, options, message in cases:
        with pytest.raises(InputError, match=message):
            Feedforward(ur5e, result, terms, options)
    feedforward = Feedforward(ur5e, result)
    with pytest.raises(InputError, match=r'shape \(N, 6\)'):
        feedforward.evaluate(np.zeros((3, 5)), np.zeros((3, 5)), np.zeros((3, 5)))
    with pytest.raises(InputError, match='context temperature'):
        feedforward.evaluate(np.zeros((3, 6)), np.zeros((3, 6)), np.zeros((3, 6)),
                             FeedforwardContext(temperature=np.zeros((2, 6))))


# --------------------------------------------------------------- default terms and a feedforward without friction
def test_default_terms_run_friction_where_the_result_identified_it(ur5e, result):
    """Feedforward(robot, result): rigid body, rotor inertia and static friction, with nothing to warn about."""
    told = []
    feedforward = Feedforward(ur5e, result, warn=told.append)
    assert list(feedforward.terms) == ['rigid_body', 'rotor_inertia', 'friction_static'] and not told
    q, dq, ddq = trajectory(ur5e, 0.3)
    with pytest.warns(UserWarning, match='feedforward without friction'):
        rigid = Feedforward(ur5e, result, ['rigid_body', 'rotor_inertia']).evaluate(q, dq, ddq)
    assert np.abs(feedforward.evaluate(q, dq, ddq) - rigid).max() > 0.5  # N·m: the friction is in it


@pytest.mark.parametrize('friction', [None, 'none'])
def test_default_terms_without_friction_say_so(ur5e, friction):
    """No result, or a result without a friction model: friction_static is left out and the warning says why."""
    result = None if friction is None else identified(ur5e, 'none')
    with pytest.warns(UserWarning, match='feedforward without friction'):
        feedforward = Feedforward(ur5e, result)
    assert list(feedforward.terms) == ['rigid_body', 'rotor_inertia'] and 'friction_static' in feedforward.left_out
    assert feedforward.warnings and ('no identification result' if result is None else 'no friction model') in \
        feedforward.warnings[0]


def test_named_terms_without_friction_on_a_result_with_friction_warn(ur5e, result):
    told = []
    Feedforward(ur5e, result, ['rigid_body', 'rotor_inertia'], warn=told.append)
    assert len(told) == 1 and 'identified friction (load_squared)' in told[0]
    told.clear()
    Feedforward(ur5e, result, ['rigid_body'], compensate_friction=False, warn=told.append)  # the robot does it
    Feedforward(ur5e, result, ['rigid_body', 'friction_egms'], warn=told.append)
    assert not told
    with pytest.raises(InputError, match='friction_static needs an identification result'):
        Feedforward(ur5e, None, ['rigid_body', 'friction_static'])  # named: refused, not left out
