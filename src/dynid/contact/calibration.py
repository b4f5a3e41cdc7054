"""Thresholds from contact-free motion, to a stated false-alarm rate.

On contact-free recordings (motion and rests, never the runs that are scored) the detector runs without alarms and
gives each joint's statistic z = |d|/σ (:mod:`dynid.contact.detection`), held for the persistence the alarm needs
(the smallest z of the last ``persistence_s``, at least two samples). Per joint:

1. σ₀ is measured: 1.4826 × the median absolute τ̂_ext in steady motion (ω̃ above three times the stiction
   velocity), where there are at least :data:`MIN_STEADY` such samples; else the result's figure stays.
2. The excursions of z above u = :data:`TAIL_START` (stretches, each counted once by its peak) have excesses
   whose tail is taken as exponential (peaks over threshold with a generalized Pareto shape of 0; Coles 2001,
   §4.3): the rate above k is λ_u·exp(−(k − u)/β), β the mean excess, λ_u the excursions per hour. The threshold
   k_j gives the joint its share ``rate/n`` of the stated false-alarm rate per hour.
3. Where the recordings are shorter than the time in which that share expects one alarm, k_j is also at least
   :data:`MARGIN` above the largest z they hold (no alarm on the recordings the thresholds come from); with
   fewer than :data:`MIN_EXCURSIONS` excursions, k_j is that margin above the largest z, and at least the level a
   Gaussian z passes at the joint's share of the rate at the recordings' sample rate (:func:`gaussian_threshold`;
   it spreads the share over every sample of an hour, though the arm spends only part of it in motion or at rest,
   and so errs high).
4. Where the recordings give the controller's reference position, the tracking error's threshold at rest θ_j [rad]
   and the speed's θ̇_j [rad/s] are :data:`TRACK_MARGIN` times the largest departure s and speed |ω| the rests hold
   (held as an alarm needs it; :mod:`dynid.contact.detection`): on the benchmark's plants that margin left no false
   alarm in 2.3 hours of other contact-free runs, 1.05 left 20 (the tracking error alone). θ_j is at least
   :data:`TRACK_STEPS` times the position's resolution, the smallest change of the joint's tracking error from one
   sample to the next with every reference held: the departure from a smooth forecast is read in steps of the
   encoder, and a threshold of one or two of them is passed by a slow drift's next step.
5. Contact-free by its own evidence: a recording in which a joint's z (on the measured σ₀) stays above a level
   for a hold of :data:`CONTACT_LIKE` (a sharp excursion, or a lower one held as long as a push is) holds a
   contact-like excursion; calibration refuses it, naming the recording, the joint and the time. Refused rather
   than cut out: a push's onset and release leave residuals below any cut level that would then calibrate the
   tail, and the user knows what the recording held.
6. Enough free motion for the rate asked: a joint's share ``rate/(2n)`` per hour is extrapolated from the recorded
   tail (Coles 2001, §4.4: return levels far beyond the record are unreliable); the recordings need
   :func:`minutes_needed` = 60/(:data:`EXTRAPOLATION` × share) minutes. A shorter calibration is kept and flagged
   (``short``, the minutes needed and had), and every alarm summary that uses it says so.
7. What the thresholds do, said (:meth:`Calibration.cautions`): a joint whose alarm level k_j·σ₀ [N·m] (in motion or at
   rest) is above its effort limit cannot raise a contact on a torque the joint holds; and the recordings are replayed
   through the detector with the new thresholds, the contacts it raises on them counted (each a false alarm on
   contact-free motion) and said where the stated rate makes as many unlikely (a Poisson count of mean rate × hours
   reaches it with probability below :data:`OWN_CONTACTS_LEVEL`): the thresholds do not hold the rate on the data
   they come from.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np
from scipy.special import ndtri
from scipy.stats import poisson

from dynid.contact.detection import ContactDetector, DetectorSettings

TAIL_START = 3.0
MIN_EXCURSIONS = 5
MIN_STEADY = 200
MARGIN = 0.05
#: The tracking error's threshold at rest over the largest change the contact-free rests hold (module docstring).
TRACK_MARGIN = 1.25
#: The tracking error's threshold at rest in steps of the position's resolution, at least (module docstring): on the
#: benchmark's plants (encoders of 2^20 counts a turn) thresholds of 1–2 steps raised 1 false alarm in each plant's
#: contact-free runs, 3 steps none.
TRACK_STEPS = 3.0
#: Contact-like: z held above a level [σ] for a hold [s], either rule (module docstring, step 5), the second with the
#: arm at rest only: a sharp excursion, or a push on a still arm (in motion a result whose friction is off holds z
#: that high at each start); the levels measured on pushes and contact-free runs: docs/methods/contact.md, "What
#: calibration checks of what it is given". (level, hold, at rest only)
CONTACT_LIKE = ((30.0, 0.1, False), (10.0, 0.3, True))
#: The thresholds are extrapolated from the recorded tail at most this far: the recordings must last at least
#: 1/(EXTRAPOLATION × a joint's share of the rate) (module docstring, step 6).
EXTRAPOLATION = 100.0
#: The thresholds' contacts on their own recordings are said where a Poisson count at the stated rate reaches as many
#: with a probability below this (module docstring, step 7).
OWN_CONTACTS_LEVEL = 0.01


class CalibrationRun(NamedTuple):
    """One contact-free recording as the observer gave it: t (N,) [s], τ̂_ext (N, n) [N·m], the friction velocity ω
    (N, n) [rad/s], σ_θ (N, n) [N·m] or None, and the controller's reference velocity (N, n) [rad/s] or None (where it
    is given, the rest threshold comes from the samples the detector takes as at rest with it: the arm still and not
    commanded to move)."""

    t: np.ndarray
    external: np.ndarray
    velocity: np.ndarray
    theta: np.ndarray | None = None
    commanded: np.ndarray | None = None
    tracking: np.ndarray | None = None


@dataclass
class Calibration:
    """What calibration found per joint: σ₀ [N·m], threshold k [σ] in motion, the excursions above u and their mean
    excess, the largest held z, the hours of recordings it saw; the threshold, excursions and largest z at rest;
    whether the recordings' reference velocity told the rest (a detector without it then sees breakaways at rest
    that these rest thresholds never saw)."""

    sigma0: np.ndarray
    threshold: np.ndarray
    excursions: np.ndarray
    mean_excess: np.ndarray
    largest_z: np.ndarray
    hours: float
    rate_per_hour: float
    notes: list[str] = field(default_factory=list)
    threshold_rest: np.ndarray | None = None
    excursions_rest: np.ndarray | None = None
    largest_z_rest: np.ndarray | None = None
    with_reference: bool = False
    threshold_track: np.ndarray | None = None
    threshold_speed: np.ndarray | None = None
    #: the contact-like excursions the recordings hold: (run index, time [s], joint index, peak z) (step 5)
    contact_like: list = field(default_factory=list)
    #: the contacts the detector with these thresholds raises on each recording, replayed (step 7)
    own_contacts: list = field(default_factory=list)
    #: :meth:`cautions` in words, as said when calibrated (and kept in the calibration file)
    warnings: list = field(default_factory=list)

    @property
    def minutes_needed(self) -> float:
        """The minutes of free motion the stated rate needs (module docstring, step 6)."""
        return minutes_needed(self.rate_per_hour, len(self.sigma0))

    @property
    def short(self) -> bool:
        """The recordings are shorter than :attr:`minutes_needed`."""
        return 60.0 * self.hours < self.minutes_needed

    def shortness(self) -> str:
        """'' or the flag every alarm summary using a short calibration carries."""
        if not self.short:
            return ''
        return (f'calibration too short for {self.rate_per_hour:g} false alarms per hour: {60.0 * self.hours:.1f} of '
                f'the {self.minutes_needed:.1f} minutes of free motion it needs (more false alarms are to be expected)')

    @property
    def own_contacts_unlikely(self) -> bool:
        """The thresholds raise more contacts on their own recordings than the stated rate makes likely (module
        docstring, step 7)."""
        count = sum(self.own_contacts)
        return count > 0 and poisson.sf(count - 1, self.rate_per_hour * self.hours) < OWN_CONTACTS_LEVEL

    def cautions(self, joint_names, effort_limits: np.ndarray, run_names, quieter: float | None = None) -> list[str]:
        """What the thresholds cannot do, or do on their own recordings, in words (module docstring, step 7):
        per joint whose alarm level k·σ₀ passes its effort limit [N·m] (a limit of 0 or none is not compared), and the
        contacts raised on the recordings named ``run_names``, beside the count the stated rate expects, and
        ``quieter``, a rate [1/h] whose thresholds raise none on them (``{false_alarm_rate}``), where one is known."""
        words = []
        rest = self.threshold if self.threshold_rest is None else self.threshold_rest
        for j, name in enumerate(joint_names):
            limit = float(effort_limits[j])
            above = [(label, k[j] * self.sigma0[j]) for label, k in (('in motion', self.threshold), ('at rest', rest))
                     if np.isfinite(limit) and 0.0 < limit < k[j] * self.sigma0[j]]
            if above:
                levels = ', '.join(f'{level:.3g} N·m {label}' for label, level in above)
                words.append(f'{name}: its alarm level k·σ₀ ({levels}; σ₀ {self.sigma0[j]:.3g} N·m) is above its '
                             f'effort limit {limit:g} N·m: no torque the joint holds raises a contact on it'
                             + ('' if len(above) == 2 else f' {above[0][0]}'))
        raised = [(name, count) for name, count in zip(run_names, self.own_contacts, strict=True) if count]
        expected = self.rate_per_hour * self.hours
        if self.own_contacts_unlikely:
            words.append(f'the thresholds raise {sum(c for _, c in raised)} contact(s) on their own contact-free '
                         f'recordings (' + ', '.join(f'{name}: {count}' for name, count in raised) + f'), where '
                         f'{self.rate_per_hour:g} false alarms per hour expect {expected:.3g} over their '
                         f'{60.0 * self.hours:.1f} min' + ('' if quieter is None else
                         f'; {{false_alarm_rate}} {quieter:g} raises none on them'))
        return words

    def to_dict(self, joint_names) -> dict:
        def per_joint(values):
            return {name: float(v) for name, v in zip(joint_names, values, strict=True)}

        return {'hours': self.hours, 'false_alarm_rate_per_hour': self.rate_per_hour,
                'minutes_needed': self.minutes_needed, 'short': self.short,
                'sigma0_nm': per_joint(self.sigma0), 'threshold_sigma': per_joint(self.threshold),
                'threshold_rest_sigma': per_joint(self.threshold if self.threshold_rest is None
                                                  else self.threshold_rest),
                'excursions': per_joint(self.excursions), 'mean_excess': per_joint(self.mean_excess),
                'largest_z': per_joint(self.largest_z), 'with_reference': self.with_reference,
                **{key: per_joint(values) for key, values in (('threshold_track_rad', self.threshold_track),
                                                              ('threshold_speed_rad_s', self.threshold_speed))
                   if values is not None},
                'notes': list(self.notes), 'warnings': list(self.warnings)}


def gaussian_threshold(share_per_hour: float, rate_hz: float) -> float:
    """k [σ] at which a Gaussian z passes at ``share_per_hour`` [1/h] with samples at ``rate_hz`` [Hz] taken as
    independent (either sign), at least 3."""
    per_sample = share_per_hour / (3600.0 * rate_hz)
    return float(max(-ndtri(per_sample / 2.0), 3.0))


def minutes_needed(rate_per_hour: float, joints: int) -> float:
    """Minutes of contact-free motion the thresholds for ``rate_per_hour`` (the whole arm's) need: 60/(EXTRAPOLATION ×
    rate/(2·joints)) (module docstring, step 6)."""
    return 60.0 / (EXTRAPOLATION * rate_per_hour / (2.0 * joints))


def contact_like(t: np.ndarray, z: np.ndarray, still: np.ndarray | None = None) -> list[tuple[float, int, float]]:
    """(time [s], joint index, peak z) of each stretch where z (N, n) stays above a level of :data:`CONTACT_LIKE`
    for its hold (``still`` (N,): the samples with the arm at rest, for the rules that hold there only; None: none),
    in time order; a stretch of one joint that another rule's overlaps is counted once."""
    if len(t) < 2:
        return []
    period = float(np.median(np.diff(t)))
    found, spans = [], []
    for level, hold_s, at_rest in CONTACT_LIKE:
        if at_rest and still is None:
            continue
        samples = max(2, int(np.ceil(hold_s / period - 1e-9)))
        hold = held(np.where(still[:, None], z, 0.0) if at_rest else z, samples)
        for j in range(z.shape[1]):
            above = np.concatenate([[False], hold[:, j] > level, [False]])
            edges = np.flatnonzero(np.diff(above.astype(np.int8)))
            for a, b in zip(edges[0::2], edges[1::2], strict=True):
                start = max(a - samples + 1, 0)
                if not any(k == j and start < end and begin < b for k, begin, end in spans):
                    spans.append((j, start, b))
                    found.append((float(t[start]), j, float(z[start:b, j].max())))
    return sorted(found)


def contact_rules() -> str:
    """The rules of :data:`CONTACT_LIKE` in words: 'above 30 σ for 100 ms or 10 σ for 300 ms at rest'."""
    return 'above ' + ' or '.join(f'{level:g} σ for {1e3 * hold_s:g} ms{" at rest" if at_rest else ""}'
                                  for level, hold_s, at_rest in CONTACT_LIKE)


def held(z: np.ndarray, samples: int) -> np.ndarray:
    """The smallest z of the last ``samples`` samples (N, n): what an alarm needing that persistence sees."""
    out = z.copy()
    for lag in range(1, samples):
        out[lag:] = np.minimum(out[lag:], z[:-lag])
        out[:lag] = 0.0
    return out


def _excursion_peaks(z: np.ndarray, level: float) -> list[np.ndarray]:
    """Per joint the peak of each stretch where z > level."""
    peaks = []
    for j in range(z.shape[1]):
        above = np.concatenate([[False], z[:, j] > level, [False]])
        edges = np.flatnonzero(np.diff(above.astype(np.int8)))
        peaks.append(np.array([z[a:b, j].max() for a, b in zip(edges[0::2], edges[1::2], strict=True)]))
    return peaks


def steady_sigma(external: list[np.ndarray], speed: list[np.ndarray], stiction_velocity: float,
                 fallback: np.ndarray) -> np.ndarray:
    """σ₀ per joint (module docstring, step 1)."""
    values = np.concatenate(external)
    moving = np.concatenate(speed) > 3.0 * stiction_velocity
    out = np.array(fallback, dtype=float)
    for j in range(values.shape[1]):
        rows = values[moving[:, j], j]
        if rows.size >= MIN_STEADY:
            out[j] = max(1.4826 * float(np.median(np.abs(rows - np.median(rows)))), 1e-6)
    return out


def calibrate(runs: Sequence[CalibrationRun], sigma0: np.ndarray, stiction: np.ndarray, gain: np.ndarray,
              rate_per_hour: float, settings: DetectorSettings) -> Calibration:
    """Per-joint σ₀ and thresholds from contact-free ``runs`` (module docstring).

    Args:
        runs: the contact-free recordings (:class:`CalibrationRun`).
        sigma0: the result's σ₀ per joint [N·m] (kept where steady motion is too short to measure it).
        stiction: F_s per joint [N·m]. gain: the estimate's bandwidth [1/s] (the observer's K over its stages).
        rate_per_hour: the stated false-alarm rate of the whole arm [1/h].
    """
    n = len(sigma0)
    speeds, externals, hours = [], [], 0.0
    for t, external, velocity, theta, commanded, _ in runs:
        samples, _ = ContactDetector(sigma0, stiction, np.inf, gain, settings).run(t, external, velocity, theta,
                                                                                   commanded)
        externals.append(external)
        speeds.append(samples.speed)
        hours += float(t[-1] - t[0]) / 3600.0
    sigma = steady_sigma(externals, speeds, settings.stiction_velocity, sigma0)
    zs, rests, track, speed, step = [], [], np.full(n, np.nan), np.full(n, np.nan), np.full(n, np.inf)
    excursions = []
    for k, (t, external, velocity, theta, commanded, tracking) in enumerate(runs):
        samples, _ = ContactDetector(sigma, stiction, np.inf, gain, settings).run(t, external, velocity, theta,
                                                                                  commanded, tracking)
        excursions += [(k, *found) for found in contact_like(t, samples.z, samples.still)]
        period = float(np.median(np.diff(t))) if len(t) > 1 else 1.0
        persistence = max(2, int(np.ceil(settings.persistence_s / period - 1e-9)))
        zs.append(held(samples.z, persistence))
        rests.append(np.repeat(samples.still[:, None], n, axis=1))
        if tracking is not None and len(t):  # the largest change of the tracking error and speed at rest, held
            track = np.fmax(track, held(np.nan_to_num(samples.track, nan=0.0), persistence).max(axis=0))
            speed = np.fmax(speed, held(np.nan_to_num(samples.rest_speed, nan=0.0), persistence).max(axis=0))
            step = np.fmin(step, resolution(tracking, commanded))
    z = np.concatenate(zs) if zs else np.zeros((0, n))
    rest = np.concatenate(rests) if rests else np.zeros((0, n), dtype=bool)
    share = rate_per_hour / n / 2.0  # a joint's share, half in motion and half at rest
    periods = [float(np.median(np.diff(run.t))) for run in runs if len(run.t) > 1]
    gaussian = gaussian_threshold(share, 1.0 / float(np.median(periods))) if periods else 3.0
    moving, still = (_thresholds(np.where(part, z, 0.0), share, hours, gaussian) for part in (~rest, rest))
    notes = []
    for j in range(n):
        for label, part in (('in motion', moving), ('at rest', still)):
            if part[1][j] < MIN_EXCURSIONS:
                notes.append(f'joint {j + 1} {label}: {int(part[1][j])} excursions above {TAIL_START:g} σ, too few for '
                             f'a tail: {part[0][j]:.2f} σ')
    track, speed = (TRACK_MARGIN * v if (np.isfinite(v) & (v > 0)).all() else None for v in (track, speed))
    if track is not None:
        track = np.maximum(track, TRACK_STEPS * np.where(np.isfinite(step), step, 0.0))
    calibration = Calibration(sigma, moving[0], moving[1], moving[2], moving[3], hours, rate_per_hour, notes,
                              still[0], still[1], still[3], any(run.commanded is not None for run in runs), track,
                              speed, excursions)
    calibration.own_contacts = [len(ContactDetector(sigma, stiction, calibration.threshold, gain, settings,
                                                    calibration.threshold_rest, track, speed).run(*run)[1])
                                for run in runs]
    return calibration


def resolution(tracking: np.ndarray, commanded: np.ndarray | None) -> np.ndarray:
    """Per joint the smallest non-zero change of the tracking error (N, n) [rad] from one sample to the next with
    every joint's reference velocity (N, n) held at zero (None: all samples): the position's resolution where the
    encoder's steps show (inf where no change is seen)."""
    change = np.abs(np.diff(tracking, axis=0))
    if commanded is not None:
        still = (commanded == 0.0).all(axis=1)  # not the module's held(): a sample whose every reference is held
        change = change[still[1:] & still[:-1]]
    change = np.where(np.isfinite(change) & (change > 1e-12), change, np.inf)
    return change.min(axis=0) if len(change) else np.full(tracking.shape[1], np.inf)


def _thresholds(z: np.ndarray, share: float, hours: float, gaussian: float) -> tuple[np.ndarray, ...]:
    """(k, excursions, mean excess, largest z) per joint of held z (N, n) (module docstring, steps 2 and 3);
    ``gaussian``: k [σ] where the tail is too thin to fit (:func:`gaussian_threshold`)."""
    n = z.shape[1]
    threshold, count, excess, largest = (np.zeros(n) for _ in range(4))
    for j, peaks in enumerate(_excursion_peaks(z, TAIL_START)):
        largest[j] = float(z[:, j].max()) if z.size else 0.0
        count[j] = peaks.size
        floor = (1.0 + MARGIN) * largest[j]
        if peaks.size < MIN_EXCURSIONS:
            threshold[j], excess[j] = max(floor, gaussian), np.nan
            continue
        excess[j] = float(np.mean(peaks - TAIL_START))
        rate = peaks.size / max(hours, 1e-9)
        threshold[j] = TAIL_START + excess[j] * max(np.log(rate / share), 0.0)
        if share * hours < 1.0:
            threshold[j] = max(threshold[j], floor)
    return threshold, count, excess, largest
