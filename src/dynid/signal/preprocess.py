"""IDIM data pipeline: zero-phase filtering, central differences, parallel filtering and decimation.

Thesis ch.5 §3.5, Gautier & Briot §II:

1. Positions (link q and, when present, rotor θ) pass a Butterworth low-pass of order ``order``
   run forward and backward (zero phase) at ``position_cutoff_hz`` (thesis: 5·f_dyn = 50 Hz);
   velocities and accelerations come from central differences of the filtered positions.
2. The measured torque and every regressor column pass the same zero-phase Butterworth at
   ``decimation_cutoff_hz`` (thesis: 2·f_dyn = 20 Hz) and are kept every ``decimation``-th sample
   (thesis: 0.8·f_s/(4·f_dyn) = 20 at 1 kHz) — the "parallel filtering" that keeps Y and W consistent.
3. ``trim_s`` seconds at both ends are dropped (filter edge transients, about 3/f_c). A piece of a
   recording too short for that trim (split off by a gap longer than ``bridge_s``; shorter gaps are
   bridged, :mod:`dynid.identify.equations.bridging`) is trimmed ``short_trim_s`` (1.5/f_c) instead, so that
   short pieces stay usable: the decimation low-pass's edge transient there is below ~1.5 % of the
   filtered torque's RMS (measured on twin recordings at 1 kHz), under the residual of a good fit.

Defaults follow the recording's sample rate f_s and a stated motion bandwidth f_dyn
(``motion_bandwidth_hz``, default 10 Hz as in the thesis):

- decimation cut-off  min(2·f_dyn, max(f_s/25, min(4 Hz, f_s/8)))
- position cut-off  min(5·f_dyn, max(f_s/10, decimation cut-off))
- decimation  round(0.8·f_s/(2·decimation cut-off))
- trim  max(0.15 s, 3/decimation cut-off); a short piece's trim min(trim, 1.5/decimation cut-off)
- bridge  decimation/f_s (the spacing of the kept samples: 20 ms at 1 kHz, 100 ms at 100 Hz)

From 500 Hz up they are the thesis values (50 Hz, 20 Hz; decimation 20 and trim 0.15 s at 1 kHz).
Below, the cut-offs fall with the rate: a sensor's noise per sample does not shrink with the rate,
so the filters pass at most the same share of its band, f_s/25 (at 100 Hz: 10 Hz and 4 Hz,
decimation 10, trim 0.75 s). Below 100 Hz that share would cut into the motion itself and leave too
few rows (at 30 Hz: 1.2 Hz, a trim of 2.5 s at each end and one row in 10, 45 rows per joint from a
20 s log, fewer than the ~45 parameters acting on a 7-joint arm's first joints), so the decimation
cut-off stays at 4 Hz (the 100 Hz value) where f_s/8 allows it and the position cut-off does not fall
below it: at 50 Hz 4 and 5 Hz, decimation 5, trim 0.75 s; at 30 Hz 3.75 Hz for both, decimation 3,
trim 0.8 s; at 20 Hz 2.5 Hz, decimation 3, trim 1.2 s: a 7-joint arm's 20 s log at 30 Hz stays
identifiable (benchmarks/README.md, "The figures behind the defaults").
A motion faster than the default assumes needs a higher ``decimation_cutoff_hz``.
Any cut-off at or above 0.45·f_s, given or derived, is refused: a Butterworth that close to
Nyquist barely filters (at f_s/2 it is an identity filter).

Validation fits depend on the filters too (the measured torque they compare against is filtered
like the regressor), so fits of results made with different settings are not comparable.

The filters are :class:`dynid.signal.zero_phase.ZeroPhaseLowPass`: what ``scipy.signal.sosfiltfilt`` of
``scipy.signal.butter(..., output='sos')`` computes, to rounding, evaluated only at the kept samples
and without importing scipy.signal (0.5–1 s of CPU in scipy 1.17).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from typing import TYPE_CHECKING

import numpy as np

from dynid.errors import InputError
from dynid.settings import setting
from dynid.signal.zero_phase import ZeroPhaseLowPass

if TYPE_CHECKING:  # only named in annotations: the signal layer sits below the recordings (dynid.io)
    from dynid.io.dataset import Dataset

MOTION_BANDWIDTH_HZ = 10.0  # thesis f_dyn
LOW_RATE_CUTOFF_HZ = 4.0  # the decimation cut-off does not fall below this where f_s/8 allows (module docstring)
NYQUIST_MARGIN = 0.45  # cut-offs must stay below this fraction of the sample rate
_DERIVABLE = ('position_cutoff_hz', 'decimation_cutoff_hz', 'decimation', 'trim_s', 'bridge_s', 'short_trim_s')
SHORT_TRIM_PERIODS = 1.5  # a short piece's trim, in periods of the decimation cut-off
CUTOFF_RANGE_HZ = (0.01, 1.0e5)  # what a cut-off or a motion bandwidth may be at all [Hz]; the rate bounds it further
RATE_RANGE_HZ = (1.0e-3, 1.0e7)  # sample rates a result may record [Hz]
DURATION_LIMIT_S = 86400.0  # the longest trim or bridge [s]


def default_cutoffs(rate_hz: float, motion_bandwidth_hz: float = MOTION_BANDWIDTH_HZ) -> tuple[float, float]:
    """(position, decimation) cut-offs [Hz] for data at ``rate_hz`` (module docstring), to 6 digits (a rate
    read off stamps is 249.99999… Hz, not 250)."""
    decimation = min(2.0 * motion_bandwidth_hz, max(rate_hz / 25.0, min(LOW_RATE_CUTOFF_HZ, rate_hz / 8.0)))
    position = min(5.0 * motion_bandwidth_hz, max(rate_hz / 10.0, decimation))
    return float(f'{position:.6g}'), float(f'{decimation:.6g}')


@dataclass
class FilterSettings:
    """Filter and decimation settings (module docstring); recorded in every result.

    None (the default of the cut-offs, ``decimation`` and ``trim_s``) derives the value from the
    sample rate and ``motion_bandwidth_hz`` [Hz] (module docstring); :meth:`validated` fills them in
    and lists them in ``derived``. ``stiction_velocity`` [rad/s]: a joint's row is dropped unless its
    friction velocity exceeds this throughout the decimation window around the kept sample — in the
    stiction zone sgn(ω) is noise and the static friction models do not hold (0 keeps every row).
    ``rate_hz``: the sample rate the settings were resolved for (None before). ``bridge_s`` [s]: gaps
    whose missing samples span at most this are filled before filtering (:mod:`dynid.identify.equations.bridging`;
    0 splits at every gap); ``short_trim_s`` [s]: the trim of a piece too short for ``trim_s``.
    """

    position_cutoff_hz: float | None = setting(
        None, 'position low-pass; none: min(5·f_dyn, max(fs/10, the decimation cut-off)), 50 at 500 Hz and up, 10 at '
              '100 Hz, 3.75 at 30 Hz; refused at or above 0.45·fs', unit='Hz', low=CUTOFF_RANGE_HZ[0],
        high=CUTOFF_RANGE_HZ[1])
    decimation_cutoff_hz: float | None = setting(
        None, 'parallel low-pass of torques and columns; none: min(2·f_dyn, max(fs/25, min(4, fs/8))), 20 at 500 Hz '
              'and up, 4 from 32 to 100 Hz, 3.75 at 30 Hz; refused at or above 0.45·fs', unit='Hz',
        low=CUTOFF_RANGE_HZ[0], high=CUTOFF_RANGE_HZ[1])
    order: int = setting(4, 'Butterworth order of the low-passes', low=1, high=10)
    decimation: int | None = setting(None, 'keep every k-th sample; none: 0.8·fs/(2·decimation cut-off)', low=1,
                                     high=100000)
    trim_s: float | None = setting(None, 'dropped at both ends of each recording (filter edges); none: max(0.15, '
                                         '3/decimation cut-off), 0.15 at 1 kHz, 0.75 at 100 Hz, 0.8 at 30 Hz', unit='s',
                                   low=0.0, high=DURATION_LIMIT_S)
    stiction_velocity: float = setting(0.02, 'drop rows with |ω| below this around them', unit='rad/s', low=0.0,
                                       high=100.0)
    motion_bandwidth_hz: float = setting(MOTION_BANDWIDTH_HZ, 'bandwidth f_dyn of the motion: the default '
                                                              'cut-offs are 5·f_dyn and 2·f_dyn where the rate '
                                                              'allows', unit='Hz', low=CUTOFF_RANGE_HZ[0],
                                     high=CUTOFF_RANGE_HZ[1])
    bridge_s: float | None = setting(None, 'fill gaps whose missing samples span at most this before filtering, '
                                           'where the stretch around them kept at least half of its samples; longer '
                                           'gaps split the recording (none: the spacing of the decimated samples, 20 '
                                           'ms at 1 kHz; 0 splits at every gap)', unit='s', low=0.0,
                                     high=DURATION_LIMIT_S)
    short_trim_s: float | None = setting(None, 'the trim of a piece too short for trim_s', unit='s', low=0.0,
                                         high=DURATION_LIMIT_S)
    rate_hz: float | None = setting(None, 'the sample rate the settings were resolved for (none before)', unit='Hz',
                                    low=RATE_RANGE_HZ[0], high=RATE_RANGE_HZ[1])
    derived: tuple[str, ...] = setting((), 'the settings derived from the rate', items=str, choices=_DERIVABLE)

    def validated(self, rate_hz: float) -> FilterSettings:
        """The settings for data at ``rate_hz`` [Hz]: derived values filled in, all checked."""
        if not self.motion_bandwidth_hz > 0:
            raise InputError(f'the motion bandwidth must be > 0 Hz, got {self.motion_bandwidth_hz:g}')
        position, decimation_cutoff = default_cutoffs(rate_hz, self.motion_bandwidth_hz)
        position = position if self.position_cutoff_hz is None else self.position_cutoff_hz
        decimation_cutoff = decimation_cutoff if self.decimation_cutoff_hz is None else self.decimation_cutoff_hz
        limit = NYQUIST_MARGIN * float(f'{rate_hz:.6g}')  # a rate read off stamps: 99.9999… or 100.000…1 Hz
        for label, value, given in (('position', position, self.position_cutoff_hz),
                                    ('decimation', decimation_cutoff, self.decimation_cutoff_hz)):
            if not 0 < value < limit:
                default = default_cutoffs(rate_hz, self.motion_bandwidth_hz)[label == 'decimation']
                raise InputError(f'{label} cut-off {value:g} Hz is not within (0, {limit:.4g}) Hz, i.e. below '
                                 f'{NYQUIST_MARGIN:g}·fs for data at {rate_hz:.4g} Hz (near Nyquist the Butterworth '
                                 f'barely filters); ' + (f'give a lower {{{label}_cutoff}} or leave it out for the '
                                                         f'default {default:.3g} Hz' if given is not None else
                                                         'lower {motion_bandwidth}'),
                                 fields=(f'{label}_cutoff', 'motion_bandwidth'))
        if self.order < 1 or self.order > 10:
            raise InputError(f'filter order must be within 1–10, got {self.order}')
        if (self.trim_s is not None and self.trim_s < 0) or self.stiction_velocity < 0:
            raise InputError('trim_s and stiction_velocity must be >= 0')
        decimation = self.decimation or max(1, int(round(0.8 * rate_hz / (2 * decimation_cutoff))))
        if decimation < 1:
            raise InputError(f'decimation must be >= 1, got {decimation}')
        trim = max(0.15, 3.0 / decimation_cutoff) if self.trim_s is None else self.trim_s
        for name in ('bridge_s', 'short_trim_s'):
            if getattr(self, name) is not None and not getattr(self, name) >= 0:
                raise InputError(f'{name} must be >= 0 s, got {getattr(self, name)!r}')
        bridge = decimation / rate_hz if self.bridge_s is None else self.bridge_s
        short_trim = min(trim, SHORT_TRIM_PERIODS / decimation_cutoff) if self.short_trim_s is None \
            else min(trim, self.short_trim_s)
        derived = tuple(dict.fromkeys(self.derived + tuple(n for n in _DERIVABLE if getattr(self, n) is None)))
        return replace(self, position_cutoff_hz=float(position), decimation_cutoff_hz=float(decimation_cutoff),
                       decimation=decimation, trim_s=float(trim), bridge_s=float(bridge),
                       short_trim_s=float(short_trim), rate_hz=float(rate_hz), derived=derived)

    def to_dict(self) -> dict:
        return {**asdict(self), 'derived': list(self.derived)}

    @classmethod
    def from_dict(cls, data: dict) -> FilterSettings:
        """Settings as a result records them, to apply to other data: what was derived from the rate
        is derived again (from that data's rate); results without ``derived`` keep every value."""
        derived = set(data.get('derived') or ())
        values = {k: v for k, v in data.items()
                  if k in cls.__dataclass_fields__ and k not in ('rate_hz', 'derived') and k not in derived}
        return cls(**values)


def describe_filters(filters: dict) -> str:
    """One line for people: the settings a result used (``FilterSettings.to_dict`` of the validated ones)."""
    if not filters:
        return 'filters: not recorded'
    rate = filters.get('rate_hz')
    text = (f'filters{f" at {rate:.4g} Hz" if rate else ""}: position low-pass {filters["position_cutoff_hz"]:.3g} Hz, '
            f'torque and column low-pass {filters["decimation_cutoff_hz"]:.3g} Hz (Butterworth order '
            f'{filters["order"]}, zero phase), decimation {filters["decimation"]}, trim {filters["trim_s"]:.3g} s, '
            f'stiction velocity {filters["stiction_velocity"]:g} rad/s')
    if filters.get('bridge_s') is not None:
        text += (f', gaps of up to {1e3 * filters["bridge_s"]:.3g} ms bridged, short pieces trimmed '
                 f'{filters["short_trim_s"]:.3g} s')
    labels = {'position_cutoff_hz': 'position cut-off', 'decimation_cutoff_hz': 'decimation cut-off',
              'decimation': 'decimation', 'trim_s': 'trim', 'bridge_s': 'bridge', 'short_trim_s': 'short trim'}
    derived = [labels.get(name, name) for name in filters.get('derived') or ()]
    if derived:
        text += (f'; derived from the rate and a motion bandwidth of {filters.get("motion_bandwidth_hz", 10):g} Hz: '
                 + ', '.join(derived))
    return text


class TooShortError(InputError):
    """A recording (or a contiguous piece of one) too short for trimming, filtering and decimation.

    ``samples``: what it holds; ``needed``: the fewest it would need.
    """

    def __init__(self, message: str, samples: int, needed: int) -> None:
        super().__init__(message)
        self.samples, self.needed = samples, needed


def minimum_samples(settings: FilterSettings, rate_hz: float, short: bool = False) -> int:
    """The fewest samples the pipeline takes with validated ``settings`` at ``rate_hz``: both trimmed
    ends (as :class:`Decimator` trims them), ten decimated samples, and more than the zero-phase
    filters' edge padding. ``short``: of a piece trimmed ``short_trim_s``, with three decimated samples."""
    padding = 3 * (2 * ((settings.order + 1) // 2) + 1)  # at least ZeroPhaseLowPass.padlen (sosfiltfilt's)
    trim, kept = (settings.short_trim_s, 3) if short else (settings.trim_s, 10)
    return max(2 * int(round(trim * rate_hz)) + kept * (settings.decimation or 1), padding + 1)


def too_short_text(samples: int, minimum: int, settings: FilterSettings) -> str:
    """Why ``samples`` at the validated ``settings``' rate are too few, naming the rate and the settings that
    decide it (and whether they were derived from the rate), e.g. '219 samples at 30 Hz (7.3 s) are too few for
    the filters: trim 2.5 s at each end, one sample in 10 kept below 1.2 Hz (derived from the rate) need 250'."""
    rate = settings.rate_hz
    derived = [name for name in ('trim_s', 'decimation_cutoff_hz', 'decimation') if name in settings.derived]
    return (f'{samples} samples at {rate:.4g} Hz ({samples / rate:.3g} s) are too few for the filters: trim '
            f'{settings.short_trim_s:.3g} s at each end (trim_s {settings.trim_s:.3g} s) and one sample in '
            f'{settings.decimation} kept below {settings.decimation_cutoff_hz:.3g} Hz need at least {minimum} '
            f'({minimum / rate:.3g} s)' + (f'; {", ".join(derived)} derived from the rate' if derived else '')
            + '; give a shorter trim or a higher decimation cut-off (dynid identify --trim, --decimation-cutoff)')


def piece_trim_s(settings: FilterSettings, n_samples: int, rate_hz: float) -> float:
    """The trim [s] at each end of a piece of ``n_samples``: ``trim_s``, or ``short_trim_s`` for a piece too
    short for it (module docstring, step 3)."""
    return settings.trim_s if n_samples >= minimum_samples(settings, rate_hz) else settings.short_trim_s


@dataclass
class Signals:
    """Filtered full-rate signals of one recording, (N, n) arrays in model joint order.

    q, dq, ddq: link side [rad, rad/s, rad/s²] (dq and ddq None where :func:`differentiate` left them to
    :meth:`link_rows`). theta, dtheta, ddtheta: rotor (link units) or None. current [A], tau [N·m],
    temperature [°C]: as recorded (unfiltered; they are filtered in parallel with the regressor).
    """

    t: np.ndarray
    q: np.ndarray
    dq: np.ndarray | None
    ddq: np.ndarray | None
    theta: np.ndarray | None
    dtheta: np.ndarray | None
    ddtheta: np.ndarray | None
    current: np.ndarray | None
    tau: np.ndarray | None
    temperature: np.ndarray | None
    rate_hz: float

    def link_rows_at(self, rows: slice) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(q, q̇, q̈) of the samples ``rows`` (a slice with a step: the samples a :class:`Decimator` runs its filter
        on, :meth:`Decimator.samples`), each from :meth:`link_rows` of the contiguous samples around them."""
        return tuple(x[::rows.step or 1] for x in self.link_rows(rows.start, rows.stop))

    def link_rows(self, start: int, stop: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(q, q̇, q̈) of samples start..stop−1: slices of the arrays, or, where :func:`differentiate` left q̇
        and q̈ out, their central differences of q around those samples (two samples more on each side
        give the same numbers as over the whole signal)."""
        if self.dq is not None:
            return self.q[start:stop], self.dq[start:stop], self.ddq[start:stop]
        low, high = max(start - 2, 0), min(stop + 2, len(self.q))
        dt = 1.0 / self.rate_hz
        velocity = central_difference(self.q[low:high], dt)
        acceleration = central_difference(velocity, dt)
        return self.q[start:stop], velocity[start - low:stop - low], acceleration[start - low:stop - low]


class NonUniformSamplesError(InputError):
    """A recording whose samples are not on a uniform grid (a raw logger's or driver's stamps): the filters need
    one; ``dynid import`` resamples it (:meth:`IdentificationProblem` names the command for the recording)."""


def _uniform_rate(dataset: Dataset) -> float:
    steps = np.diff(dataset.t)
    rate = 1.0 / float(np.median(steps))
    if np.abs(steps * rate - 1.0).max() > 0.05:
        name = dataset.source.get('bag', 'dataset')
        raise NonUniformSamplesError(f'{name}: samples are not uniformly spaced (steps from {steps.min() * 1e3:.3g} to '
                                     f'{steps.max() * 1e3:.3g} ms); resample them onto a uniform grid with dynid '
                                     f'import')
    return rate


def central_difference(x: np.ndarray, dt: float) -> np.ndarray:
    """(x[k+1] − x[k−1])/(2·dt) along axis 0, one-sided at the ends: ``np.gradient(x, dt, axis=0)``, the same
    operations, computed into the result (np.gradient holds two more arrays of x's size on the way)."""
    out = np.empty(x.shape)
    np.subtract(x[2:], x[:-2], out=out[1:-1])
    out[1:-1] /= 2.0 * dt
    out[0] = (x[1] - x[0]) / dt
    out[-1] = (x[-1] - x[-2]) / dt
    return out


def position_lowpass(settings: FilterSettings) -> ZeroPhaseLowPass:
    """The zero-phase low-pass of positions (step 1), of settings validated for the recording's rate."""
    return ZeroPhaseLowPass(settings.order, settings.position_cutoff_hz, settings.rate_hz)


def filtered_derivatives(x: np.ndarray, settings: FilterSettings) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Positions ``x`` (N, ...) low-passed at the position cut-off, and their first and second central
    differences (step 1), with settings validated for x's rate."""
    smooth = position_lowpass(settings)(x)
    dt = 1.0 / settings.rate_hz
    velocity = central_difference(smooth, dt)
    return smooth, velocity, central_difference(velocity, dt)


def differentiate(dataset: Dataset, settings: FilterSettings, rotor: bool = True,
                  derivatives: bool = True) -> tuple[Signals, FilterSettings]:
    """Filtered positions and their central-difference derivatives (step 1), with validated settings.

    For callers that use the signals a piece at a time (a 10-minute 1 kHz recording's two chains are
    ~170 MB): ``rotor`` False leaves theta, dtheta and ddtheta None, to derive later
    (:func:`filtered_derivatives` of ``dataset.theta``); ``derivatives`` False leaves dq and ddq None,
    derived piece by piece by :meth:`Signals.link_rows`.
    """
    rate = _uniform_rate(dataset)
    settings = settings.validated(rate)
    minimum = minimum_samples(settings, rate, short=True)
    if dataset.n_samples < minimum:
        name = dataset.source.get('bag', 'dataset')
        raise TooShortError(f'{name}: {too_short_text(dataset.n_samples, minimum, settings)}', dataset.n_samples,
                            minimum)
    if derivatives:
        q, dq, ddq = filtered_derivatives(dataset.q, settings)
    else:
        q, dq, ddq = position_lowpass(settings)(dataset.q), None, None
    theta = dtheta = ddtheta = None
    if dataset.theta is not None and rotor:
        theta, dtheta, ddtheta = filtered_derivatives(dataset.theta, settings)
    return Signals(dataset.t, q, dq, ddq, theta, dtheta, ddtheta, dataset.current, dataset.tau,
                   dataset.temperature, rate), settings


#: The regressor is evaluated at an intermediate rate at least this many times the position cut-off, and at least
#: :data:`SUB_RATE_MIN_HZ` (:func:`regressor_stride`): the filtered positions hold nothing above about twice their
#: cut-off, so products of them (the regressor's columns) alias nothing into the decimation band there. Below 500 Hz
#: the regressor is cheap and its filters' designs at two rates would differ by more than rounding: every sample.
SUB_RATE_POSITION_MULTIPLE = 5.0
SUB_RATE_MIN_HZ = 250.0
#: The anti-aliasing low-pass of the signals brought to that rate, as a fraction of its Nyquist frequency.
ANTIALIAS_FRACTION = 0.8


def regressor_stride(settings: FilterSettings, rate_hz: float) -> int:
    """The largest divisor k of the decimation with rate/k at least :data:`SUB_RATE_MIN_HZ` and
    :data:`SUB_RATE_POSITION_MULTIPLE` × the position cut-off (validated ``settings``): the regressor is evaluated on
    every k-th sample (4 at 1 kHz and 2 at 500 Hz: 250 Hz for a 50 Hz position cut-off; 1 below 500 Hz)."""
    decimation, rate = int(settings.decimation), float(f'{rate_hz:.6g}')  # a rate read off stamps: 999.9999… Hz
    floor = max(SUB_RATE_MIN_HZ, SUB_RATE_POSITION_MULTIPLE * settings.position_cutoff_hz)
    return max([1] + [d for d in range(2, decimation + 1) if decimation % d == 0 and rate / d >= floor])


class Decimator:
    """Parallel zero-phase low-pass and decimation (step 2) along axis 0, with edge trimming (step 3).

    ``stride`` k > 1 (:func:`regressor_stride`): the low-pass runs at rate/k, on every k-th sample. Signals given at
    the full rate (:meth:`__call__`) first pass a zero-phase anti-aliasing low-pass at :data:`ANTIALIAS_FRACTION` of
    that rate's Nyquist frequency (1 − 3·10⁻⁶ of gain at 20 Hz for 1 kHz, k = 4); the regressor's columns are made at
    that rate from the filtered positions (:meth:`chunked`, :meth:`sub`), which hold nothing to alias. Every signal
    then passes the same low-pass at the decimation cut-off, so the parallel filtering stays exact. The samples at
    that rate are the recording's :attr:`offset`, offset + k, …, chosen so that the kept samples (:attr:`keep`,
    full-rate indices) are among them and are the same as with every sample."""

    def __init__(self, settings: FilterSettings, rate_hz: float, n_samples: int, stride: int = 1) -> None:
        if stride < 1 or settings.decimation % stride:
            raise ValueError(f'stride {stride} does not divide the decimation {settings.decimation}')
        self.stride = stride
        self.lowpass = ZeroPhaseLowPass(settings.order, settings.decimation_cutoff_hz, rate_hz / stride)
        self.antialias = None if stride == 1 else ZeroPhaseLowPass(
            settings.order, ANTIALIAS_FRACTION * rate_hz / (2 * stride), rate_hz)
        self.trim = int(round(piece_trim_s(settings, n_samples, rate_hz) * rate_hz))
        self.keep = np.arange(self.trim, n_samples - self.trim, settings.decimation)
        self.decimation = settings.decimation
        self.n_samples = n_samples
        #: the first of the samples the filter runs on (every ``stride``-th from it: the kept samples among them)
        self.offset = self.trim % stride
        #: samples at the filter's rate
        self.sub_samples = (n_samples - 1 - self.offset) // stride + 1
        # Samples after which the filter's slowest pole has decayed below double precision, plus the
        # edge padding: a chunk's outputs that far from its cut edges equal the whole run's.
        self.margin = self.lowpass.settle + 3 * (2 * len(self.lowpass.sos) + 1)

    def samples(self, first: int, last: int) -> slice:
        """The recording's samples (a slice) of the filter-rate samples first..last−1 (:meth:`chunked`)."""
        return slice(self.offset + first * self.stride, self.offset + (last - 1) * self.stride + 1, self.stride)

    def __call__(self, x: np.ndarray) -> np.ndarray:
        """The kept samples (:attr:`keep`) of ``x`` (N, ...) at the full rate, filtered at the decimation cut-off."""
        if self.antialias is not None:
            x = self.antialias(x, self.offset, self.n_samples, self.stride)
        return self.sub(x)

    def sub(self, x: np.ndarray) -> np.ndarray:
        """The kept samples of ``x`` (:attr:`sub_samples`, ...) given at the filter's rate (the recording's samples
        :attr:`offset`, offset + stride, …)."""
        k, start = self.stride, (self.trim - self.offset) // self.stride
        stop = max(self.trim, self.n_samples - self.trim)
        return self.lowpass(x, start, (stop - 1 - self.offset) // k + 1 if stop > self.trim else start,
                            self.decimation // k)

    def chunked(self, columns: Callable[[int, int], np.ndarray], chunk_samples: int = 8192) -> np.ndarray:
        """``self.sub(columns(0, sub_samples))`` without holding all of ``columns`` at once.

        ``columns(a, b)`` gives the filter-rate samples a..b−1 (first axis; the recording's samples
        :meth:`samples` (a, b): o + a·k, o + (a+1)·k, … with k the stride and o the :attr:`offset`). Pieces of
        ``chunk_samples`` are filtered with :attr:`margin` samples of context on each side, so every kept output
        equals the one-piece result to rounding (the filter's memory of a cut edge has decayed below 1 ulp); each
        sample's columns are computed once (the overlap is carried to the next piece). Memory: O(chunk_samples +
        margin).
        """
        n, margin, k = self.sub_samples, self.margin, self.stride
        keep, step = (self.keep - self.offset) // k, self.decimation // k
        if n <= chunk_samples + 2 * margin:
            return self.sub(columns(0, n))
        out, filled, carried, carried_from = None, 0, None, 0
        for begin in range(0, n, chunk_samples):
            end = min(n, begin + chunk_samples)
            low, high = max(0, begin - margin), min(n, end + margin)
            computed_to = carried_from + (0 if carried is None else carried.shape[0])
            start = max(low, computed_to)
            if carried is None:
                piece = columns(start, high)
            elif start < high:
                piece = np.concatenate([carried[low - carried_from:], columns(start, high)])
            else:  # a last piece shorter than the margin: the previous one already computed all of it
                piece = carried[low - carried_from:high - carried_from]
            kept = keep[(keep >= begin) & (keep < end)]
            if kept.size:
                rows = self.lowpass(piece, kept[0] - low, kept[-1] - low + 1, step)
                if out is None:  # filled in place: pieces gathered and concatenated would be held twice
                    out = np.empty((len(keep),) + rows.shape[1:])
                out[filled:filled + len(rows)] = rows
                filled += len(rows)
            # A copy of the overlap, so that the piece is freed before the next one's columns are computed.
            carried, carried_from = piece[max(0, end - margin) - low:].copy(), max(0, end - margin)
            piece = rows = None
        return out

    def window_all(self, mask: np.ndarray) -> np.ndarray:
        """Kept samples whose whole decimation window (±decimation/2 around them) satisfies ``mask`` (N, ...)."""
        half = max(1, self.decimation // 2)
        failed = np.zeros((mask.shape[0] + 1,) + mask.shape[1:], dtype=np.int64)  # failures before each sample
        np.cumsum(~mask, axis=0, out=failed[1:])
        low = np.clip(self.keep - half, 0, None)
        high = np.clip(self.keep + half + 1, None, mask.shape[0])
        return failed[high] == failed[low]
