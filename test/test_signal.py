"""Causal filters of dynid.signal: streaming = batch, stated delays, derivative accuracy, noise, arguments.

The front end follows Madsen 2020, ch.6 §6.1: Savitzky–Golay n_LP = 101 at 1 kHz, central difference
n_CD = 3, total delay (n_LP − 1)/2 + (n_CD − 1)/2 = 51 samples.
"""

import numpy as np
import pytest

from dynid.errors import InputError
from dynid.signal import (
    AlignedStateEstimator,
    CausalFIR,
    CentralDifference,
    DelayLine,
    SavitzkyGolay,
    savitzky_golay_window,
)

DT = 1e-3  # s, 1 kHz

FILTERS = {
    'savgol-101-3': lambda: SavitzkyGolay(101, 3, 12),
    'savgol-7-2': lambda: SavitzkyGolay(7, 2, 3),
    'velocity': lambda: CentralDifference(DT, 4, order=1),
    'acceleration': lambda: CentralDifference(DT, 4, order=2),
    'delay-5': lambda: DelayLine(5, 3),
    'delay-0': lambda: DelayLine(0, 2),
    'fir-asymmetric': lambda: CausalFIR([0.5, -0.25, 2.0, 0.125], 3, delay=2),
}


def random_splits(n, rng, largest=50):
    """Batch boundaries like a live node's: 0 to ``largest`` samples per batch."""
    edges = [0]
    while edges[-1] < n:
        edges.append(min(n, edges[-1] + int(rng.integers(0, largest + 1))))
    return list(zip(edges[:-1], edges[1:], strict=True))


def chain_inputs(rng, n, joints=3):
    q = np.cumsum(rng.normal(0.0, 1e-3, (n, joints)), axis=0) + rng.normal(0.0, 1.0, joints)
    theta = q + rng.normal(0.0, 1e-4, (n, joints))
    others = {'current': rng.normal(0.0, 2.0, (n, joints)), 'temperature': 30.0 + rng.normal(0.0, 0.1, (n, joints))}
    return q, theta, others


# --- streaming equals batch ---------------------------------------------------------------------------------------

@pytest.mark.parametrize('name', sorted(FILTERS))
def test_filter_streaming_equals_batch_for_any_split(name):
    rng = np.random.default_rng(1)
    streaming, batched = FILTERS[name](), FILTERS[name]()
    x = rng.normal(0.0, 1.0, (600, streaming.channels)) + 3.0
    expected = np.array([streaming.update(sample) for sample in x])
    got = np.concatenate([batched.run(x[a:b]) for a, b in random_splits(len(x), rng)])
    scale = np.abs(expected).max()
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12 * scale)
    np.testing.assert_allclose(batched.history, streaming.history, rtol=0, atol=1e-12 * np.abs(x).max())
    assert batched.samples_seen == streaming.samples_seen == len(x)


def test_chain_streaming_equals_batch_for_any_split():
    rng = np.random.default_rng(2)
    q, theta, others = chain_inputs(rng, 400)
    streaming, batched = AlignedStateEstimator(3), AlignedStateEstimator(3)
    steps = [streaming.update(q[k], theta[k], {name: x[k] for name, x in others.items()}) for k in range(len(q))]
    batches = [batched.run(q[a:b], theta[a:b], {name: x[a:b] for name, x in others.items()})
               for a, b in random_splits(len(q), rng)]
    for field in ('q', 'dq', 'ddq', 'theta', 'dtheta', 'ddtheta'):
        expected = np.array([getattr(s, field) for s in steps])
        got = np.concatenate([getattr(b, field) for b in batches])
        np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12 * max(1.0, np.abs(expected).max()), err_msg=field)
    for name in others:
        expected = np.array([s.delayed[name] for s in steps])
        np.testing.assert_array_equal(np.concatenate([b.delayed[name] for b in batches]), expected)
    np.testing.assert_array_equal(np.concatenate([b.valid for b in batches]), [s.valid for s in steps])


# --- delays -------------------------------------------------------------------------------------------------------

LEAD = 300  # zeros before the impulse, so the start-up priming holds 0


def impulse_response(filt, length=600, channel=0):
    x = np.zeros((length, filt.channels))
    x[LEAD, channel] = 1.0
    return filt.run(x)[:, channel]


@pytest.mark.parametrize('name', ['savgol-101-3', 'savgol-7-2', 'acceleration'])
def test_symmetric_filter_peaks_exactly_delay_samples_after_impulse(name):
    filt = FILTERS[name]()
    h = impulse_response(filt)
    centre = LEAD + filt.delay
    assert np.argmax(np.abs(h)) == centre
    half = filt.length // 2
    window = h[centre - half:centre + half + 1]
    np.testing.assert_allclose(window, window[::-1], atol=1e-15 / DT**2)
    assert np.all(h[:LEAD] == 0) and np.all(h[centre + half + 1:] == 0)


def test_central_difference_impulse_is_antisymmetric_about_its_delay():
    filt = CentralDifference(DT, 1, order=1)
    h = impulse_response(filt)
    centre = LEAD + filt.delay
    assert filt.delay == 1
    assert h[centre] == 0
    assert h[centre - 1] == pytest.approx(1 / (2 * DT)) and h[centre + 1] == pytest.approx(-1 / (2 * DT))


@pytest.mark.parametrize('delay', [0, 1, 5, 51])
def test_delay_line_returns_the_impulse_exactly_delay_samples_later(delay):
    h = impulse_response(DelayLine(delay, 2), channel=1)
    assert np.flatnonzero(h).tolist() == [LEAD + delay] and h[LEAD + delay] == 1.0


def test_chain_aligns_every_output_to_the_same_delay():
    joints = 4
    chain = AlignedStateEstimator(joints, 1000.0)
    assert chain.delay == 51 == chain.smoother.delay + chain.velocity.delay
    n = 600
    zeros = np.zeros((n, joints))
    q, theta, current, temperature = zeros.copy(), zeros.copy(), zeros.copy(), zeros.copy()
    q[LEAD, 0] = theta[LEAD, 1] = current[LEAD, 2] = temperature[LEAD, 3] = 1.0
    out = chain.run(q, theta, {'current': current, 'temperature': temperature})
    centre = LEAD + chain.delay
    offsets = np.arange(-60, 61)
    for position, velocity, acceleration, j in ((out.q, out.dq, out.ddq, 0), (out.theta, out.dtheta, out.ddtheta, 1)):
        p, v, a = position[centre + offsets, j], velocity[centre + offsets, j], acceleration[centre + offsets, j]
        assert np.argmax(position[:, j]) == centre
        np.testing.assert_allclose(p, p[::-1], atol=1e-15)            # even about the centre
        np.testing.assert_allclose(v, -v[::-1], atol=1e-12)           # odd about the centre
        np.testing.assert_allclose(a, a[::-1], atol=1e-9)             # even about the centre
        assert abs(v[60]) < 1e-12 and np.abs(v).max() > 1.0
    for name, j in (('current', 2), ('temperature', 3)):
        assert np.flatnonzero(out.delayed[name][:, j]).tolist() == [centre]


# --- start-up and reset -------------------------------------------------------------------------------------------

def test_start_up_holds_the_first_sample_and_flags_validity():
    sg = SavitzkyGolay(101, 3, 2)
    first = np.array([0.7, -1.2])
    np.testing.assert_allclose(sg.update(first), first, rtol=1e-12)  # savgol_coeffs' taps sum to 1 within ~1e-13
    assert not sg.valid
    sg.run(np.ones((99, 2)))
    assert not sg.valid and sg.samples_seen == 100
    sg.update(np.ones(2))
    assert sg.valid

    cd = CentralDifference(DT, 2, order=2)
    np.testing.assert_array_equal(cd.update(first), [0.0, 0.0])

    chain = AlignedStateEstimator(2, rotor=False, delayed=('current',))
    out = chain.run(np.tile(first, (200, 1)), delayed={'current': np.tile([1.5, 2.5], (200, 1))})
    np.testing.assert_allclose(out.q, np.tile(first, (200, 1)), rtol=1e-12)
    np.testing.assert_allclose(out.dq, 0.0, atol=1e-9)               # rounding of Σ taps = 1, amplified by 1/dt
    np.testing.assert_allclose(out.ddq, 0.0, atol=1e-6)              # ... and by 1/dt²
    assert chain.span == 103 and np.flatnonzero(out.valid)[0] == chain.span - 1


def test_reset_makes_the_chain_behave_like_a_new_one():
    rng = np.random.default_rng(3)
    q, theta, others = chain_inputs(rng, 250)
    used = AlignedStateEstimator(3)
    used.run(q[::-1] + 5.0, theta[::-1], {name: x[::-1] for name, x in others.items()})
    used.reset()
    a = used.run(q, theta, others)
    b = AlignedStateEstimator(3).run(q, theta, others)
    for field in ('q', 'dq', 'ddq', 'theta', 'dtheta', 'ddtheta'):
        np.testing.assert_array_equal(getattr(a, field), getattr(b, field))
    np.testing.assert_array_equal(a.valid, b.valid)


# --- derivative accuracy ------------------------------------------------------------------------------------------

@pytest.mark.parametrize('rate_hz', [1000.0, 500.0])
@pytest.mark.parametrize('cubic', [0.0, 2.0])
def test_chain_reproduces_polynomials_at_the_delayed_sample(rate_hz, cubic):
    """SG of order 3 reproduces polynomials of degree ≤ 3; the central difference is exact for degree 2.

    For p = c0 + c1·t + c2·t² + c3·t³ the central velocity (p(t+dt) − p(t−dt))/(2dt) = p'(t) + c3·dt²
    exactly (Taylor: dt²/6·p''' with p''' = 6·c3), and the second difference is exact for a cubic.
    """
    dt = 1.0 / rate_hz
    t = np.arange(int(0.8 * rate_hz)) * dt
    c0, c1, c2 = np.array([0.3, -1.1, 2.0]), np.array([-0.8, 0.5, 1.7]), np.array([1.5, -2.5, 0.4])
    c3 = cubic * np.array([1.0, -0.5, 0.25])
    T = t[:, None]

    def p(s):
        return c0 + c1 * s + c2 * s**2 + c3 * s**3

    chain = AlignedStateEstimator(3, rate_hz, rotor=True, delayed={'stamp': 1})
    out = chain.run(p(T), 2.0 * p(T), {'stamp': T})
    valid = out.valid
    np.testing.assert_array_equal(out.delayed['stamp'][valid], T[np.flatnonzero(valid) - chain.delay])
    ts = T[valid] - chain.delay * dt
    position, velocity = p(ts), c1 + 2 * c2 * ts + 3 * c3 * ts**2
    acceleration = 2 * c2 + 6 * c3 * ts
    central_difference_error = c3 * dt**2                            # rad/s; 0 for a quadratic
    tolerance = 1e-8                                                 # relative to each quantity's largest value
    for got, exact in ((out.q, position), (out.dq, velocity + central_difference_error), (out.ddq, acceleration),
                       (out.theta, 2 * position), (out.dtheta, 2 * (velocity + central_difference_error)),
                       (out.ddtheta, 2 * acceleration)):
        np.testing.assert_allclose(got[valid], exact, rtol=0, atol=tolerance * np.abs(exact).max())
    if cubic:
        # the O(dt²) term is there and is what the Taylor expansion says (2e-6 rad/s at 1 kHz, 8e-6 at 500 Hz)
        np.testing.assert_allclose(out.dq[valid] - velocity, np.broadcast_to(central_difference_error, velocity.shape),
                                   rtol=1e-3)


# --- noise --------------------------------------------------------------------------------------------------------

def test_velocity_noise_far_below_a_backward_difference():
    """1 Hz sine of 1 rad with white noise σ = 1e-4 rad at 1 kHz, 10 s.

    Measured: chain velocity error RMS ≈ 1.6e-3 rad/s (noise gain ‖conv(SG taps, CD taps)‖ = 15.8 s⁻¹),
    backward difference ≈ 0.14 rad/s (σ·√2/dt): a factor ≈ 89. The test asks for more than 50.
    """
    rng = np.random.default_rng(4)
    t = np.arange(10000) * DT
    omega = 2 * np.pi
    q = (np.sin(omega * t) + rng.normal(0.0, 1e-4, t.size))[:, None]
    chain = AlignedStateEstimator(1, 1000.0, rotor=False, delayed=())
    out = chain.run(q)
    ts = t[out.valid] - chain.delay * DT
    chain_rms = np.sqrt(np.mean((out.dq[out.valid, 0] - omega * np.cos(omega * ts)) ** 2))
    backward = np.diff(q[:, 0]) / DT                                  # describes t_k − dt/2
    backward_rms = np.sqrt(np.mean((backward - omega * np.cos(omega * (t[1:] - DT / 2))) ** 2))
    assert chain_rms == pytest.approx(1e-4 * 15.78, rel=0.15)
    assert backward_rms == pytest.approx(1e-4 * np.sqrt(2) / DT, rel=0.05)
    assert backward_rms / chain_rms > 50.0


# --- window scaling and arguments ---------------------------------------------------------------------------------

def test_window_scales_with_the_rate():
    assert savitzky_golay_window(1000.0) == 101
    assert savitzky_golay_window(500.0) == 51
    assert savitzky_golay_window(2000.0) == 201                      # same span: 200 intervals of 0.5 ms
    assert savitzky_golay_window(200.0) == 21
    assert savitzky_golay_window(250.0) == 27                        # half window 12.5 → 13 (ties go up)
    assert savitzky_golay_window(10.0) == 5                          # at least polyorder + 2, odd
    assert savitzky_golay_window(10.0, polyorder=2) == 5
    chain = AlignedStateEstimator(2, 500.0)
    assert chain.smoother.window == 51 and chain.delay == 26 and chain.delay_s == pytest.approx(0.052)


@pytest.mark.parametrize(('make', 'argument'), [
    (lambda: SavitzkyGolay(100, 3, 1), 'window'),
    (lambda: SavitzkyGolay(7, 7, 1), 'polyorder'),
    (lambda: SavitzkyGolay(7, 9, 1), 'polyorder'),
    (lambda: SavitzkyGolay(7, 3, 0), 'channels'),
    (lambda: savitzky_golay_window(0.0), 'rate_hz'),
    (lambda: savitzky_golay_window(-500.0), 'rate_hz'),
    (lambda: savitzky_golay_window(float('nan')), 'rate_hz'),
    (lambda: savitzky_golay_window(1000.0, window_at_1khz=100), 'window_at_1khz'),
    (lambda: AlignedStateEstimator(6, 0.0), 'rate_hz'),
    (lambda: AlignedStateEstimator(6, 1000.0, window=100), 'window'),
    (lambda: CentralDifference(0.0, 1), 'dt'),
    (lambda: CentralDifference(DT, 1, order=3), 'order'),
    (lambda: DelayLine(-1, 1), 'delay'),
    (lambda: CausalFIR([1.0, 2.0], 1, delay=2), 'delay'),
    (lambda: SavitzkyGolay(7, 3, 2).update(np.zeros(3)), 'sample'),
    (lambda: SavitzkyGolay(7, 3, 2).run(np.zeros((4, 3))), 'samples'),
    (lambda: AlignedStateEstimator(2).update(np.zeros(2), np.zeros(2), {'current': np.zeros(2)}), 'temperature'),
    (lambda: AlignedStateEstimator(2, delayed=()).run(np.zeros((3, 2)), np.zeros((4, 2))), 'theta'),
    (lambda: AlignedStateEstimator(2, delayed=()).run(np.zeros((3, 2))), 'theta'),
])
def test_bad_arguments_are_refused_naming_the_argument(make, argument):
    with pytest.raises(InputError) as error:
        make()
    message = str(error.value)
    assert argument in message and '\n' not in message
