"""dynid.signal.zero_phase computes what scipy.signal's butter + sosfiltfilt compute, at the rows asked for,
and the identification path runs without importing scipy.signal (issue 15: its import is a third of the
time allowed for ``dynid identify`` on a 60 s recording)."""

import subprocess
import sys
import tracemalloc

import numpy as np
import pytest
import scipy.signal

from dynid.signal import zero_phase
from dynid.signal.zero_phase import ZeroPhaseLowPass, butterworth_sos

# Block products and the sections' recursion round in a different order; with poles near z = 1
# (2 Hz at 1 kHz) the recursion itself amplifies rounding to ~1e-12 of the signal scale.
RELATIVE = 1e-10
# (cut-off, rate) [Hz]: the thesis' 20 and 50 Hz at 1 kHz, a slow 2 Hz, 100 Hz data, and beyond fs/4 up to
# the 0.45·fs that FilterSettings allows (there an odd order's extra zero moves to another section).
CUTOFFS = [(20.0, 1000.0), (50.0, 1000.0), (2.0, 1000.0), (4.0, 100.0), (300.0, 1000.0), (449.0, 1000.0)]


@pytest.mark.parametrize('order', range(1, 11))
@pytest.mark.parametrize('cutoff_hz, rate_hz', CUTOFFS)
def test_sections_are_scipys(order, cutoff_hz, rate_hz):
    expected = scipy.signal.butter(order, cutoff_hz, fs=rate_hz, output='sos')
    got = butterworth_sos(order, cutoff_hz, rate_hz)
    assert got.shape == expected.shape
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12 * np.abs(expected).max())
    lowpass = ZeroPhaseLowPass(order, cutoff_hz, rate_hz)
    np.testing.assert_allclose(lowpass.zi, scipy.signal.sosfilt_zi(expected).ravel(), rtol=1e-9, atol=1e-15)
    poles = np.concatenate([np.roots(section[3:]) for section in expected])
    np.testing.assert_allclose(np.sort_complex(lowpass.poles), np.sort_complex(poles), atol=1e-12)


@pytest.mark.parametrize('order', [1, 2, 3, 4, 7, 10])
@pytest.mark.parametrize('cutoff_hz, rate_hz', CUTOFFS)
def test_rows_are_scipys_sosfiltfilt(order, cutoff_hz, rate_hz):
    lowpass = ZeroPhaseLowPass(order, cutoff_hz, rate_hz)
    sos = scipy.signal.butter(order, cutoff_hz, fs=rate_hz, output='sos')
    rng = np.random.default_rng(order)
    for samples in (lowpass.padlen + 1, lowpass.padlen + 9, 257, 3001):
        x = rng.normal(size=(samples, 3, 2)).cumsum(axis=0) + 4.0  # a drifting signal with an offset
        expected = scipy.signal.sosfiltfilt(sos, x, axis=0)
        scale = np.abs(expected).max()
        for start, stop, step in ((0, samples, 1), (150 % samples, samples - 150 % samples, 20), (3, samples, 7),
                                  (samples // 3, samples, 40), (samples - 1, samples, 1), (5, 5, 3)):
            got = lowpass(x, start, stop, step)
            assert got.shape == expected[start:stop:step].shape
            np.testing.assert_allclose(got, expected[start:stop:step], rtol=0, atol=RELATIVE * scale)
    np.testing.assert_allclose(lowpass(x[:, 0, 0]), scipy.signal.sosfiltfilt(sos, x[:, 0, 0]), rtol=0,
                               atol=RELATIVE * np.abs(x[:, 0, 0]).max())


def test_a_too_short_signal_or_rows_outside_it_are_refused():
    lowpass = ZeroPhaseLowPass(4, 20.0, 1000.0)
    with pytest.raises(ValueError, match='too few'):
        lowpass(np.ones((lowpass.padlen, 2)))
    with pytest.raises(ValueError, match='not within'):
        lowpass(np.ones((100, 2)), 0, 101)
    with pytest.raises(ValueError, match='cut-off'):
        ZeroPhaseLowPass(4, 500.0, 1000.0)


# (cut-off [Hz], row step, bound on the traced peak beside the input's size): at step 1 the padded input, the
# forward products (1.2×) and the output, 3.7× in all (6.6× when the backward pass and the kept rows were
# computed over all blocks at once); 1.2× and 1.4× at steps 20 and 7 (1.3× and 1.9× then).
@pytest.mark.parametrize('cutoff_hz, step, bound', [(50.0, 1, 4.0), (20.0, 20, 1.3), (2.0, 7, 1.6)])
def test_the_backward_pass_in_pieces_changes_no_bit_and_holds_little(monkeypatch, cutoff_hz, step, bound):
    lowpass = ZeroPhaseLowPass(4, cutoff_hz, 1000.0)
    x = np.random.default_rng(3).normal(size=(100000, 6)).cumsum(axis=0)
    whole = lowpass(x, 150, 99850, step)  # the default pieces hold 8192 samples: thirteen here
    for samples in (1, 300, 10**6):  # a block a piece, a few blocks, all at once
        monkeypatch.setattr(zero_phase, '_BACKWARD_SAMPLES', samples)
        assert np.array_equal(lowpass(x, 150, 99850, step), whole)
    monkeypatch.undo()
    tracemalloc.start()
    lowpass(x, 0, len(x), step)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < bound * x.nbytes, peak / x.nbytes


def test_settle_is_where_the_slowest_pole_has_decayed_below_one_ulp():
    lowpass = ZeroPhaseLowPass(4, 20.0, 1000.0)
    impulse = np.zeros(4 * lowpass.settle)
    impulse[0] = 1.0
    response = np.abs(scipy.signal.sosfilt(lowpass.sos, impulse))
    assert response[lowpass.settle:].max() < 1e-15 * response.max() < response[lowpass.settle // 2:].max()


@pytest.mark.parametrize('code, absent', [
    ('import dynid.cli, dynid.identify.steps.run, dynid.identify.outputs.report, dynid.identify.validation.validate, '
     'dynid.io.recorder',
     ('scipy.signal', 'scipy.optimize', 'scipy.stats')),
    ('from dynid.cli import main; main(["identify", "--help"])', ('scipy', 'pinocchio')),
    ('from dynid.cli import main; main(["--help"])', ('scipy', 'pinocchio')),
])
def test_identification_and_its_help_do_not_import_what_they_do_not_use(code, absent):
    check = (f'import sys\ntry:\n    {code}\nexcept SystemExit:\n    pass\n'
             f'print([name for name in {absent!r} if name in sys.modules])')
    done = subprocess.run([sys.executable, '-c', check], capture_output=True, text=True, check=True)
    assert done.stdout.strip().splitlines()[-1] == '[]'
