"""Causal FIR filters over several channels, with their state in plain attributes and a stated delay.

Every filter here is a finite impulse response y[k] = Σ_j taps[j]·x[k − L + 1 + j] over the last L
input samples (taps in time order, oldest first; scipy's ``lfilter`` coefficient vector is
``taps[::-1]``). Its state is ``history``, the last L − 1 input samples (the circular buffer of raw
measurements of Madsen 2020, ch.6 §6.1), and ``samples_seen``. ``delay`` is the number of samples by
which the output lags: the output at sample k describes the input at sample k − delay.

``update(sample)`` advances by one sample and ``run(samples)`` by a batch, continuing from the state;
both go through one code path, so streaming and any batch split give the same numbers. The output
is one matrix product of the taps with a strided view of [history; batch] (no copy of the windows), about
ten times cheaper than ``scipy.signal.lfilter`` with a ``zi`` state, per batch and per single sample
(benchmarks/README.md, "The figures behind the defaults").

Start-up: the first sample primes the history, as if it had been held forever, so a smoother starts
at the first value and a differentiator at 0 (up to rounding). ``valid`` becomes true once the
window holds only measured samples (``samples_seen >= length``).
"""

from __future__ import annotations

import math

import numpy as np

from dynid.errors import InputError


def _positive_int(value, name: str, minimum: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise InputError(f'{name} must be an integer >= {minimum}, got {value!r}')
    return int(value)


def _positive_finite(value, name: str, unit: str) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise InputError(f'{name} must be a positive finite number in {unit}, got {value!r}') from None
    if not math.isfinite(number) or number <= 0:
        raise InputError(f'{name} must be a positive finite number in {unit}, got {value!r}')
    return number


class CausalFIR:
    """Causal FIR filter over ``channels`` channels: y[k] = Σ_j taps[j]·x[k − L + 1 + j].

    Args:
        taps: L coefficients in time order (oldest sample first).
        channels: number of channels C, filtered independently with the same taps.
        delay: the sample, counted back from the newest, that the output describes (0 ≤ delay ≤ L − 1);
            (L − 1)/2 for a centred linear-phase filter.

    State: ``history`` (L − 1, C), the last L − 1 inputs, oldest first (meaningless while
    ``samples_seen`` is 0: the first sample fills it); ``samples_seen``, the samples taken since the
    last :meth:`reset`. Units: output units are input units times taps units.
    """

    def __init__(self, taps, channels: int, delay: int):
        taps = np.array(taps, dtype=float)
        if taps.ndim != 1 or taps.size == 0 or not np.all(np.isfinite(taps)):
            raise InputError(f'taps must be a non-empty 1-D array of finite numbers, got shape {taps.shape}')
        self.channels = _positive_int(channels, 'channels')
        delay = _positive_int(delay, 'delay', minimum=0)
        if delay > taps.size - 1:
            raise InputError(f'delay must be at most len(taps) - 1 = {taps.size - 1}, got {delay}')
        taps.setflags(write=False)
        self.taps = taps
        self._delay = delay
        self.history = np.zeros((taps.size - 1, self.channels))
        self.samples_seen = 0

    @property
    def length(self) -> int:
        """Window length L in samples: the number of input samples one output depends on."""
        return self.taps.size

    @property
    def delay(self) -> int:
        """Delay in samples: the output at sample k describes the input at sample k − delay."""
        return self._delay

    @property
    def valid(self) -> bool:
        """True once the window holds only measured samples, none from the start-up priming."""
        return self.samples_seen >= self.length

    def reset(self) -> None:
        """Forget all samples; the next one primes the history again."""
        self.history = np.zeros_like(self.history)
        self.samples_seen = 0

    def update(self, sample) -> np.ndarray:
        """Advance by one sample (C,); return the output (C,) for that step."""
        x = np.asarray(sample, dtype=float)
        if x.shape != (self.channels,):
            raise InputError(f'sample must have shape ({self.channels},), got {x.shape}')
        return self._advance(x[None, :])[0]

    def run(self, samples) -> np.ndarray:
        """Advance by a batch (N, C), continuing from the state; return the outputs (N, C)."""
        x = np.asarray(samples, dtype=float)
        if x.ndim != 2 or x.shape[1] != self.channels:
            raise InputError(f'samples must have shape (N, {self.channels}), got {x.shape}')
        if x.shape[0] == 0:
            return np.empty((0, self.channels))
        return self._advance(x)

    def _advance(self, x: np.ndarray) -> np.ndarray:
        if self.samples_seen == 0:
            self.history[:] = x[0]
        window = np.concatenate((self.history, x))
        y = self._output(window, x.shape[0])
        self.history = window[x.shape[0]:].copy()
        self.samples_seen += x.shape[0]
        return y

    def _output(self, window: np.ndarray, n: int) -> np.ndarray:
        # frames[k] = window[k:k + L], built from strides: no copy, and far cheaper per call than
        # numpy's sliding_window_view for the 1-50 sample batches of a live node.
        row, column = window.strides
        frames = np.ndarray((n, self.length, self.channels), window.dtype, window, 0, (row, row, column))
        return self.taps @ frames


def savitzky_golay_window(rate_hz: float, window_at_1khz: int = 101, polyorder: int = 3) -> int:
    """Savitzky–Golay window length at ``rate_hz`` spanning the same time as ``window_at_1khz`` at 1 kHz.

    The half window m = (window − 1)/2, which is also the delay, is scaled with the rate and rounded
    to the nearest integer (ties go up), and the window is 2m + 1: so the span (window − 1)/rate_hz
    and the delay m/rate_hz stay those at 1 kHz (0.1 s and 0.05 s for n_LP = 101, Madsen 2020,
    ch.6 §6.1). 101 at 1 kHz, 51 at 500 Hz, 201 at 2 kHz. Scaling the window itself
    (101·rate/1000) would give the same except at ties such as 202 at 2 kHz. The result is at least
    the smallest odd number ≥ polyorder + 2, so that the fit still smooths.
    """
    rate = _positive_finite(rate_hz, 'rate_hz', 'Hz')
    base = _positive_int(window_at_1khz, 'window_at_1khz')
    if base % 2 == 0:
        raise InputError(f'window_at_1khz must be odd, got {base}')
    order = _positive_int(polyorder, 'polyorder', minimum=0)
    half = math.floor((base - 1) / 2 * rate / 1000.0 + 0.5)
    window = 2 * half + 1
    shortest = order + 2 + (order + 1) % 2
    return max(window, shortest)


class SavitzkyGolay(CausalFIR):
    """Savitzky–Golay smoother (Savitzky & Golay 1964) used causally: delay (window − 1)/2 samples.

    The output is the value at the centre of a least-squares polynomial fit of degree ``polyorder``
    to the last ``window`` samples, so it describes the sample (window − 1)/2 steps back and
    reproduces polynomials of degree ≤ polyorder exactly (Madsen 2020, ch.6 §6.1: n_LP = 101 at
    1 kHz). Taps from ``scipy.signal.savgol_coeffs``; output in input units.
    """

    def __init__(self, window: int, polyorder: int, channels: int):
        window = _positive_int(window, 'window')
        if window % 2 == 0:
            raise InputError(f'window must be odd (a centred fit), got {window}')
        polyorder = _positive_int(polyorder, 'polyorder', minimum=0)
        if polyorder >= window:
            raise InputError(f'polyorder must be less than window = {window}, got {polyorder}')
        self.window = window
        self.polyorder = polyorder
        import scipy.signal  # here: importing it costs about a second, and the package's other users need none

        super().__init__(scipy.signal.savgol_coeffs(window, polyorder, use='dot'), channels, (window - 1) // 2)


class CentralDifference(CausalFIR):
    """Three-point central difference used causally: delay 1 sample (Madsen 2020, ch.6 §6.1, n_CD = 3).

    order 1: x'[k − 1] = (x[k] − x[k − 2])/(2·dt), exact for polynomials of degree ≤ 2 (error dt²/6·x''');
    order 2: x''[k − 1] = (x[k] − 2·x[k − 1] + x[k − 2])/dt², exact for degree ≤ 3 (error dt²/12·x'''').
    ``dt`` is the sample period in s; output in input units per s (order 1) or per s² (order 2).
    """

    def __init__(self, dt: float, channels: int, order: int = 1):
        self.dt = _positive_finite(dt, 'dt', 's')
        if order not in (1, 2) or isinstance(order, bool):
            raise InputError(f'order must be 1 (velocity) or 2 (acceleration), got {order!r}')
        self.order = int(order)
        if self.order == 1:
            taps = np.array([-1.0, 0.0, 1.0]) / (2.0 * self.dt)
        else:
            taps = np.array([1.0, -2.0, 1.0]) / self.dt**2
        super().__init__(taps, channels, 1)

    def _output(self, window: np.ndarray, n: int) -> np.ndarray:
        # Differences of the samples, not the taps' dot product: a held (constant) input gives exactly zero
        # whatever the BLAS kernel (a fused multiply-add left ~1e-10 rad/s² of a held sample at start-up).
        step = np.diff(window, axis=0)  # x[i + 1] − x[i]
        if self.order == 1:
            return (step[1:n + 1] + step[:n]) / (2.0 * self.dt)
        return (step[1:n + 1] - step[:n]) / self.dt**2


class DelayLine(CausalFIR):
    """Pure delay: y[k] = x[k − delay], exactly (a copy, no arithmetic, so NaNs and stamps pass intact).

    Its taps are the unit impulse at the oldest position. Output in input units.
    """

    def __init__(self, delay: int, channels: int):
        delay = _positive_int(delay, 'delay', minimum=0)
        taps = np.zeros(delay + 1)
        taps[0] = 1.0
        super().__init__(taps, channels, delay)

    def _output(self, window: np.ndarray, n: int) -> np.ndarray:
        return window[:n].copy()
