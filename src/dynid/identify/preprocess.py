"""IDIM data pipeline: zero-phase filtering, central differences, parallel filtering and decimation.

Thesis ch.5 §3.5 (thesis_ch4-5.md), Gautier & Briot §II:

1. Positions (link q and, when present, rotor θ) pass a Butterworth low-pass of order ``order``
   run forward and backward (zero phase) at ``position_cutoff_hz`` (thesis: 5·f_dyn = 50 Hz);
   velocities and accelerations come from central differences of the filtered positions.
2. The measured torque and every regressor column pass the same zero-phase Butterworth at
   ``decimation_cutoff_hz`` (thesis: 2·f_dyn = 20 Hz) and are kept every ``decimation``-th sample
   (thesis: 0.8·f_s/(4·f_dyn) = 20 at 1 kHz) — the "parallel filtering" that keeps Y and W consistent.
3. ``trim_s`` seconds at both ends are dropped (filter edge transients, about 3/f_c).

Filters come from scipy.signal (``butter(..., output='sos')`` and ``sosfiltfilt``).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np
import scipy.signal

from dynid.errors import InputError
from dynid.io.dataset import Dataset


@dataclass
class FilterSettings:
    """Filter and decimation settings (module docstring); recorded in every result.

    ``decimation`` None chooses round(0.8·f_s/(2·decimation_cutoff_hz)) (= 20 at 1 kHz and 20 Hz).
    ``stiction_velocity`` [rad/s]: a joint's row is dropped unless its friction velocity exceeds this
    throughout the decimation window around the kept sample — in the stiction zone sgn(ω) is noise
    and the static friction models do not hold (0 keeps every row).
    """

    position_cutoff_hz: float = 50.0
    decimation_cutoff_hz: float = 20.0
    order: int = 4
    decimation: int | None = None
    trim_s: float = 0.15
    stiction_velocity: float = 0.02

    def validated(self, rate_hz: float) -> FilterSettings:
        nyquist = rate_hz / 2
        if not 0 < self.position_cutoff_hz < nyquist or not 0 < self.decimation_cutoff_hz < nyquist:
            raise InputError(f'filter cutoffs must be within (0, {nyquist:g}) Hz for data at {rate_hz:g} Hz; '
                             f'got {self.position_cutoff_hz:g} and {self.decimation_cutoff_hz:g} Hz')
        if self.order < 1 or self.order > 10:
            raise InputError(f'filter order must be within 1–10, got {self.order}')
        if self.trim_s < 0 or self.stiction_velocity < 0:
            raise InputError('trim_s and stiction_velocity must be >= 0')
        decimation = self.decimation or max(1, int(round(0.8 * rate_hz / (2 * self.decimation_cutoff_hz))))
        if decimation < 1:
            raise InputError(f'decimation must be >= 1, got {decimation}')
        return FilterSettings(self.position_cutoff_hz, self.decimation_cutoff_hz, self.order, decimation,
                              self.trim_s, self.stiction_velocity)

    def to_dict(self) -> dict:
        return asdict(self)


class TooShortError(InputError):
    """A recording (or a contiguous piece of one) too short for trimming, filtering and decimation.

    ``samples``: what it holds; ``needed``: the fewest it would need.
    """

    def __init__(self, message: str, samples: int, needed: int) -> None:
        super().__init__(message)
        self.samples, self.needed = samples, needed


def minimum_samples(settings: FilterSettings, rate_hz: float) -> int:
    """The fewest samples the pipeline takes with validated ``settings`` at ``rate_hz``: both trimmed
    ends (as :class:`Decimator` trims them), ten decimated samples, and more than the zero-phase
    filters' edge padding."""
    padding = 3 * (2 * ((settings.order + 1) // 2) + 1)  # scipy.signal.sosfiltfilt's default padlen
    return max(2 * int(round(settings.trim_s * rate_hz)) + 10 * (settings.decimation or 1), padding + 1)


@dataclass
class Signals:
    """Filtered full-rate signals of one recording, (N, n) arrays in model joint order.

    q, dq, ddq: link side. theta, dtheta, ddtheta: rotor (link units) or None. current [A], tau
    [N·m], temperature [°C]: as recorded (unfiltered; they are filtered in parallel with the regressor).
    """

    t: np.ndarray
    q: np.ndarray
    dq: np.ndarray
    ddq: np.ndarray
    theta: np.ndarray | None
    dtheta: np.ndarray | None
    ddtheta: np.ndarray | None
    current: np.ndarray | None
    tau: np.ndarray | None
    temperature: np.ndarray | None
    rate_hz: float


def _uniform_rate(dataset: Dataset) -> float:
    steps = np.diff(dataset.t)
    rate = 1.0 / float(np.median(steps))
    if np.abs(steps * rate - 1.0).max() > 0.05:
        raise InputError(f'{dataset.source.get("bag", "dataset")}: samples are not uniformly spaced '
                         f'(steps from {steps.min() * 1e3:.3g} to {steps.max() * 1e3:.3g} ms); resample first')
    return rate


def central_difference(x: np.ndarray, dt: float) -> np.ndarray:
    """(x[k+1] − x[k−1])/(2·dt) along axis 0, one-sided at the ends."""
    return np.gradient(x, dt, axis=0)


def differentiate(dataset: Dataset, settings: FilterSettings) -> tuple[Signals, FilterSettings]:
    """Filtered positions and their central-difference derivatives (step 1), with validated settings."""
    rate = _uniform_rate(dataset)
    settings = settings.validated(rate)
    minimum = minimum_samples(settings, rate)
    if dataset.n_samples < minimum:
        raise TooShortError(f'{dataset.source.get("bag", "dataset")}: {dataset.n_samples} samples are too few '
                            f'for trimming and decimation (need at least {minimum})', dataset.n_samples, minimum)
    sos = scipy.signal.butter(settings.order, settings.position_cutoff_hz, fs=rate, output='sos')
    dt = 1.0 / rate

    def derivatives(x):
        smooth = scipy.signal.sosfiltfilt(sos, x, axis=0)
        velocity = central_difference(smooth, dt)
        return smooth, velocity, central_difference(velocity, dt)

    q, dq, ddq = derivatives(dataset.q)
    theta = dtheta = ddtheta = None
    if dataset.theta is not None:
        theta, dtheta, ddtheta = derivatives(dataset.theta)
    return Signals(dataset.t, q, dq, ddq, theta, dtheta, ddtheta, dataset.current, dataset.tau,
                   dataset.temperature, rate), settings


class Decimator:
    """Parallel zero-phase low-pass and decimation (step 2) along axis 0, with edge trimming (step 3)."""

    def __init__(self, settings: FilterSettings, rate_hz: float, n_samples: int) -> None:
        self.sos = scipy.signal.butter(settings.order, settings.decimation_cutoff_hz, fs=rate_hz, output='sos')
        trim = int(round(settings.trim_s * rate_hz))
        self.keep = np.arange(trim, n_samples - trim, settings.decimation)
        self.decimation = settings.decimation

    def __call__(self, x: np.ndarray) -> np.ndarray:
        return scipy.signal.sosfiltfilt(self.sos, x, axis=0)[self.keep]

    def window_all(self, mask: np.ndarray) -> np.ndarray:
        """Kept samples whose whole decimation window (±decimation/2 around them) satisfies ``mask`` (N, ...)."""
        half = max(1, self.decimation // 2)
        kernel = np.ones((2 * half + 1,) + (1,) * (mask.ndim - 1))
        bad = scipy.signal.convolve((~mask).astype(float), kernel, mode='same')
        return bad[self.keep] < 0.5
