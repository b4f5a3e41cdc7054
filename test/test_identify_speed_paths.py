"""The identification's fast and lean paths (issue 15) give the results of the plain ones: chunked regressor
filtering equals one-piece filtering, the R-only QR solve equals a textbook least squares and, accumulated
over pieces of W, one QR; the identified parameters do not move when the recording is processed in pieces,
and the link derivatives taken piece by piece are the whole signal's."""

import dataclasses

import numpy as np
import pytest
import scipy.signal

from dynid.excite.trajectory import builtin_excitation_path, load_trajectory
from dynid.identify.equations.request import ModelSpec, RecordingInput
from dynid.identify.solve.solvers import _solve
from dynid.identify.steps.run import IdentifyOptions, identify
from dynid.model import load_robot
from dynid.signal import preprocess
from dynid.signal.preprocess import Decimator, FilterSettings
from dynid.sim.parameters import PlantParameters
from dynid.sim.recording import record_to_dataset
from dynid.sim.twin import DigitalTwin

# Chunk edges are filtered with a margin after which the filter's memory is below 1 ulp: agreement
# to 1e-12 of the signal scale leaves room for summation order only.
RELATIVE = 1e-12


@pytest.mark.parametrize('rate_hz', [1000.0, 100.0])
def test_chunked_decimation_equals_one_piece(rate_hz):
    settings = FilterSettings().validated(rate_hz)
    samples = 9000
    decimator = Decimator(settings, rate_hz, samples)
    signal = np.random.default_rng(0).normal(size=(samples, 3, 4)).cumsum(axis=0)
    calls = []

    def columns(a, b):
        calls.append((a, b))
        return signal[a:b]

    whole = decimator(signal)
    pieces = decimator.chunked(columns, chunk_samples=1000)
    assert len(calls) > 5 and sum(b - a for a, b in calls) == samples  # every sample computed once
    assert pieces.shape == whole.shape
    assert np.abs(pieces - whole).max() <= RELATIVE * np.abs(whole).max()
    # The margin is what the filter needs: a tenth of it leaves visible edge errors.
    short = Decimator(settings, rate_hz, samples)
    short.margin //= 10
    assert np.abs(short.chunked(columns, chunk_samples=1000) - whole).max() > 1e3 * RELATIVE * np.abs(whole).max()
    assert decimator.margin > 3 * (2 * len(scipy.signal.butter(4, 0.1, output='sos')) + 1)


@pytest.mark.parametrize('rate_hz', [1000.0, 100.0])
def test_decimation_is_scipys_zero_phase_butterworth_at_the_kept_samples(rate_hz):
    settings = FilterSettings().validated(rate_hz)
    signal = np.random.default_rng(2).normal(size=(5000, 2, 3)).cumsum(axis=0)
    decimator = Decimator(settings, rate_hz, len(signal))
    sos = scipy.signal.butter(settings.order, settings.decimation_cutoff_hz, fs=rate_hz, output='sos')
    expected = scipy.signal.sosfiltfilt(sos, signal, axis=0)[decimator.keep]
    assert np.abs(decimator(signal) - expected).max() <= 1e-10 * np.abs(expected).max()


def test_window_all_keeps_samples_whose_whole_window_passes():
    settings = FilterSettings().validated(1000.0)
    mask = np.random.default_rng(3).random((4000, 3)) > 0.002
    decimator = Decimator(settings, 1000.0, len(mask))
    half = settings.decimation // 2
    expected = np.array([[mask[max(0, k - half):k + half + 1, j].all() for j in range(3)] for k in decimator.keep])
    got = decimator.window_all(mask)
    assert np.array_equal(got, expected) and 0 < got.sum() < got.size


def test_chunked_decimation_with_a_last_piece_shorter_than_the_margin():
    # The piece before it already computed every sample up to the end: no empty columns(a, a) call.
    settings = FilterSettings().validated(1000.0)
    probe = Decimator(settings, 1000.0, 10_000)
    samples = 3 * 1000 + probe.margin // 2
    decimator = Decimator(settings, 1000.0, samples)
    signal = np.random.default_rng(1).normal(size=(samples, 2, 3)).cumsum(axis=0)
    calls = []

    def columns(a, b):
        assert b > a, (a, b)
        calls.append((a, b))
        return signal[a:b]

    pieces = decimator.chunked(columns, chunk_samples=1000)
    whole = decimator(signal)
    assert sum(b - a for a, b in calls) == samples
    assert pieces.shape == whole.shape and np.abs(pieces - whole).max() <= RELATIVE * np.abs(whole).max()


def test_r_only_qr_solve_equals_least_squares():
    rng = np.random.default_rng(1)
    w = rng.normal(size=(500, 7)) * np.logspace(0, 3, 7)
    y = w @ rng.normal(size=7) + rng.normal(size=500)
    weights = rng.uniform(0.5, 2.0, size=500)
    values, inverse_normal, (raw, scaled) = _solve(w, y, weights)
    a, b = w * weights[:, None], y * weights
    np.testing.assert_allclose(values, np.linalg.lstsq(a, b, rcond=None)[0], rtol=1e-10)
    np.testing.assert_allclose(inverse_normal, np.linalg.inv(a.T @ a), rtol=1e-8)
    assert raw == pytest.approx(np.linalg.cond(a), rel=1e-10)
    assert scaled < raw


def test_identified_parameters_do_not_depend_on_the_pieces(monkeypatch):
    robot = load_robot('ur5e')
    params = PlantParameters.defaults(robot)
    trajectory = dataclasses.replace(load_trajectory(builtin_excitation_path('ur5e')), duration_s=12.0)
    twin = DigitalTwin(params, rate_hz=500.0, seed=3, initial_q=trajectory.evaluate(np.array([0.0]))[0][0])
    twin.follow(trajectory)
    dataset = record_to_dataset(twin.run(12.0), None, {})
    results = {}
    original = preprocess.Decimator.chunked
    for label, chunk in (('one piece', 10**9), ('pieces', 1500)):
        monkeypatch.setattr(preprocess.Decimator, 'chunked',
                            lambda self, columns, chunk_samples=chunk: original(self, columns, chunk_samples))
        results[label] = identify(robot, [RecordingInput(dataset)], ModelSpec(),
                                  options=IdentifyOptions(method='irls'))
    one, pieces = results['one piece'].values, results['pieces'].values
    assert np.abs(pieces - one).max() <= 1e-9 * np.abs(one).max()


def test_irls_iterations_on_normal_equations_end_where_qr_ends(monkeypatch):
    from dynid.identify.solve import solvers

    rng = np.random.default_rng(2)
    joints = np.tile(np.arange(3), 400)
    w = rng.normal(size=(1200, 6)) * np.logspace(0, 4, 6)
    y = w @ rng.normal(size=6) + rng.standard_t(2, size=1200)  # heavy tails: the robust weights work
    names = [f'p{i}' for i in range(6)]
    fast = solvers.irls(w, y, joints, names)
    monkeypatch.setattr(solvers, '_solve_normal_equations', lambda *args: None)
    plain = solvers.irls(w, y, joints, names)
    assert fast.iterations == plain.iterations > 2
    np.testing.assert_allclose(fast.values, plain.values, rtol=1e-10)


def test_qr_accumulated_over_pieces_equals_one_qr(monkeypatch):
    # The solve and the identifiability check take R from pieces of W (TSQR): R of [R so far; next piece].
    from dynid.identify.solve import solvers

    rng = np.random.default_rng(4)
    w = rng.normal(size=(3000, 7)) * np.logspace(0, 3, 7)
    y = w @ rng.normal(size=7) + rng.normal(size=3000)
    weights = rng.uniform(0.5, 2.0, size=3000)
    values, inverse_normal, condition = _solve(w, y, weights)  # 3000 rows: one piece
    monkeypatch.setattr(solvers, '_QR_ROWS', 128)
    piecewise = _solve(w, y, weights)
    np.testing.assert_allclose(piecewise[0], values, rtol=1e-12)
    np.testing.assert_allclose(piecewise[1], inverse_normal, rtol=1e-12)
    np.testing.assert_allclose(piecewise[2], condition, rtol=1e-12)


@pytest.mark.parametrize('rows', [128, 10**6])
def test_identifiability_check_from_r_names_what_pivoted_qr_of_w_names(monkeypatch, rows):
    from dynid.errors import InputError
    from dynid.identify.solve import solvers

    monkeypatch.setattr(solvers, '_QR_ROWS', rows)
    rng = np.random.default_rng(5)
    w = rng.normal(size=(2000, 6)) * np.logspace(0, 2, 6)
    w[:, 4] = 2.0 * w[:, 1] - 0.5 * w[:, 3]  # p4 depends on p1 and p3
    names = [f'p{i}' for i in range(6)]
    scaled = w / np.linalg.norm(w, axis=0)  # the check as a pivoted QR of W itself
    r, pivots = scipy.linalg.qr(scaled, mode='r', pivoting=True)
    groups = solvers.dependent_groups(r[:6], pivots, 5, names)
    with pytest.raises(InputError) as raised:
        solvers.check_identifiable(w, names)
    assert 'rank 5 of 6' in str(raised.value)
    assert f'dependent groups: {"; ".join(map(", ".join, groups))})' in str(raised.value)
    assert sorted(groups[0]) == ['p1', 'p3', 'p4']
    w[:, 2] = 0.0
    with pytest.raises(InputError, match=r"\['p2'\] at all \(zero columns\)"):
        solvers.check_identifiable(w, names)
    solvers.check_identifiable(w[:, [0, 1, 3, 5]], [names[i] for i in (0, 1, 3, 5)])  # independent: no error


def test_link_derivatives_by_pieces_are_the_whole_signals_to_the_bit():
    x = np.random.default_rng(6).normal(size=(500, 3)).cumsum(axis=0)
    dt = 1e-3
    assert np.array_equal(preprocess.central_difference(x, dt), np.gradient(x, dt, axis=0))
    velocity = np.gradient(x, dt, axis=0)
    acceleration = np.gradient(velocity, dt, axis=0)
    signals = preprocess.Signals(np.arange(500) * dt, x, None, None, None, None, None, None, None, None, 1 / dt)
    for start, stop in ((0, 500), (0, 1), (0, 7), (1, 2), (3, 250), (250, 499), (497, 500), (499, 500)):
        q, dq, ddq = signals.link_rows(start, stop)
        assert np.array_equal(q, x[start:stop])
        assert np.array_equal(dq, velocity[start:stop]) and np.array_equal(ddq, acceleration[start:stop])
