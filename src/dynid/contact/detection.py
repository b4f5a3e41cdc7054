"""Contact detection on the observer's estimate: a state-dependent σ, thresholds with hysteresis, a rest baseline.

Per joint j and sample (a compiled loop, state carried between batches):

- **Motion.** ω̃ = |ω| through a first-order low-pass of time constant ``velocity_filter_s``; the joint is at rest
  while ω̃ < ``rest_velocity`` (``rest_time``: how long). The arm is at rest while every joint is, and, where the
  controller's reference velocity q̇_r is given, no joint's |q̇_r| exceeds ``command_velocity``: as a motion starts
  the motor breaks each joint away before it moves (its current passes static friction's level while the joint is
  still), which only the command tells from a push. Without a reference (None or NaN) the measured speeds decide.
  A joint whose reference moves has not stopped however slowly it creeps: its ``rest_time`` counts from its
  reference's stop, and its stop is snapped from then (the friction static friction holds settles there, not when
  the speed fell below ``rest_velocity``).
- **σ** (the standard deviation of τ̂_ext without contact)::

      σ² = σ₀² + σ_f² + σ_θ²

  σ₀ the residual of the identified model in steady motion (the result's held-out or training RMSE, or measured on
  contact-free runs by :func:`dynid.contact.calibration.calibrate`); σ_θ the friction parameters' standard
  deviations on their features (Fc: |s|, Fv: |ω|); σ_f the friction the model cannot know near zero velocity: an
  envelope that jumps to E and decays with the observer's e^(−K·t) (an error that stops enters τ̂_ext through the
  observer's low-pass and leaves it as fast), with

      E = F_s·exp(−(ω̃/v_s)²)                       moving, ω̃ above v_s/2 within ``recent_motion_s`` (slowing down,
                                                  reversing, stopping: stick-slip)
      E = F_s·(d + (1 − d)·exp(−rest_time/T_b))    at rest, and creeping off a rest (breaking away or pushed: the
                                                  friction then opposes the motion, its sign known); with the stop
                                                  snapped (T_s > 0, below) F_s for T_s, then
                                                  F_s·(d + (1 − d)·exp(−(rest_time − T_s)/T_s))
      E = F_s                                      at rest while the arm is not (another joint moves or a motion is
                                                  commanded: the motor may be breaking it away before it moves, or
                                                  the others' motion loads it: its static friction takes anything
                                                  up to F_s)

  F_s = ``stiction_scale`` × the result's Coulomb level plus Stribeck excess (what static friction may hold), v_s the
  ``stiction_velocity``, T_b the ``rest_baseline_s`` and d the ``rest_drift`` (the share of F_s static friction
  still moves by at rest as the controller settles).
- **Rest baseline** b: at rest, b follows τ̂_ext with time constant T_b (the friction static friction holds after
  the joint stopped, unknowable from the currents, becomes the baseline); while any joint is in alarm (a contact
  acts on every joint's torque) it is held; moving, it decays with e^(−K·t) as the observer forgets the stick.
  With ``rest_snap_s`` = T_s > 0, for T_s after the joint stops b follows τ̂_ext with the observer's 1/K: the
  friction static friction holds at the stop is a step in τ̂_ext (the model's friction falls to zero with the
  velocity, the joint's does not), which becomes the baseline at once instead of over T_b, and the envelope falls
  after T_s instead of over T_b. A contact within T_s of a stop is taken into the baseline; the envelope is F_s
  there, so it was not seen before either. The
  detector's estimate is d = τ̂_ext − b.
- **Tracking error and speed at rest** (where the controller's reference position q_r is given): e = q_r − q, and
  its departure s = |e − ê| from its forecast ê: a level and a trend of e by double exponential smoothing (Brown's,
  time constant :data:`TRACK_TREND_S`; a constant or a ramp is forecast exactly), started at e when the reading
  starts (a stop, an alarm's end, the detector's start) and held while any joint is in alarm. A controller settling
  a joint after a stop moves it smoothly (on the benchmark's simulated plants by hundreds of µrad over seconds, below
  1 mrad/s), which the forecast follows; a push changes the joint's motion within milliseconds, which it does not.
  s and the joint's speed |ω| are read :data:`TRACK_SETTLE_S` after the forecast started, with the arm at rest,
  every joint's reference held (q̇_r = 0: a reference that starts moving, however slowly, moves e with it) and not
  within :data:`TRACK_RECOVERY_S` of a contact's end (the controller then brings the displaced joints back: they
  move). A push at rest moves the joint against its controller before the current carries it, static friction
  holding the torque or not (on the benchmark's simulated plants: its speed at once, its position by tens of µrad
  soon after). s ≥ θ_j or |ω| ≥ θ̇_j (the joint's thresholds [rad], [rad/s],
  :func:`dynid.contact.calibration.calibrate`) raises the alarm as z ≥ k_j does, and the alarm ends on z's hysteresis
  or the settling below (a joint left displaced counts as stopped then, its forecast started again).
- **Alarm** (hysteresis): on when z = |d|/σ ≥ k_j (the joint's threshold in motion, or with the whole arm at rest:
  the tails differ, and a joint at rest still feels the model's errors on the others' motion) for
  ``persistence_s`` (at least two samples: a single sample is a sampling artefact, e.g. the velocity of an abrupt
  stop); off when z < ``hysteresis`` × k_j for ``release_s`` (at least two samples), or, with the arm at rest, when
  on every joint still in alarm d has stayed within ``settle_band`` σ of itself for ``settle_s`` and |d| ≤ 2·F_s: a
  push has gone and static friction holds what is left (an offset that can not be told from a steady push of that
  size; static friction held anything within ±F_s before the push and after it, so the change is within 2·F_s),
  which becomes the baseline. A contact at rest thus ends within ``settle_s`` plus the observer's settling
  after the force goes away. A joint at rest whose alarm ends counts as just stopped (``rest_time`` 0): after a push
  static friction holds a new offset, which the snapped baseline takes as it takes a stop's.

A contact is a stretch in which some joint is in alarm: its start and end, each joint's peak |d| [N·m] and the
most distal joint that responded (the contact is on that joint's link or beyond it: τ_ext = Jᵀ·F is zero on the
joints after the contact's link; Haddadin et al. 2017, §4 isolation).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numba
import numpy as np

#: Rows of the detector's per-joint state (:class:`ContactDetector`).
STATE_ROWS = ('speed', 'rest_time', 'baseline', 'envelope', 'alarm', 'above_s', 'below_s', 'steady_s', 'steady_ref',
              'above_n', 'below_n', 'since_moving', 'track_level', 'track_slow', 'track_time', 'since_contact')
(SPEED, REST_TIME, BASELINE, ENVELOPE, ALARM, ABOVE_S, BELOW_S, STEADY_S, STEADY_REF, ABOVE_N,
 BELOW_N, SINCE_MOVING, TRACK_LEVEL, TRACK_SLOW, TRACK_TIME, SINCE_CONTACT) = range(len(STATE_ROWS))
#: Per-joint constants of the kernel.
JOINT_ROWS = ('sigma0', 'stiction', 'threshold', 'gain', 'threshold_rest', 'threshold_track', 'threshold_speed')
#: The tracking error's and the speed's statistics start this long after the forecast of the tracking error started
#: [s] (a stop's, an alarm's end, the detector's start, the end of :data:`TRACK_RECOVERY_S` after a contact): its
#: level and trend have converged.
TRACK_SETTLE_S = 0.5
#: Time constant of the tracking error's forecast at rest [s] (module docstring): short enough to follow a controller
#: settling a joint (a swing of seconds), long enough to leave most of a push's first 15 ms out of it (0.1 s and 0.2 s
#: measured beside it in benchmarks/README.md).
TRACK_TREND_S = 0.05
#: After a contact (every alarm ended) the tracking error and the speed at rest wait this long before the forecast
#: starts again [s]: the controller is bringing the joints the push displaced back to their reference.
TRACK_RECOVERY_S = 1.0
#: What can raise an alarm (:attr:`Contact.raised_by`): the torque estimate's z, and at rest the tracking error's
#: change and the joint's speed.
STATISTICS = ('torque', 'position', 'speed')
#: Scalar settings of the kernel, in order.
SCALARS = ('velocity_filter_s', 'rest_velocity', 'stiction_velocity', 'rest_baseline_s', 'rest_drift',
           'persistence_s', 'hysteresis', 'release_s', 'settle_s', 'settle_band', 'recent_motion_s',
           'rest_snap_s', 'command_velocity')


@numba.njit(cache=True)
def _resting(stiction, rest_time, drift, t_b, snap):
    """The envelope E at rest (module docstring)."""
    if snap > 0.0:  # the baseline took the stop's friction within T_s: the envelope falls from then
        return stiction * (drift + (1.0 - drift) * np.exp(-max(rest_time - snap, 0.0) / snap))
    return stiction * (drift + (1.0 - drift) * np.exp(-rest_time / t_b))


@numba.njit(cache=True)
def _tracking(state, j, error, velocity, quiet, contact, snap, dt):
    """Joint j's tracking error departure s [rad] from its forecast and speed |ω| [rad/s] at rest (module
    docstring), the forecast's smoothed values carried in ``state``; NaN where they are not read (no reference, not
    ``quiet``: the arm not at rest or a reference moving, during a contact and TRACK_RECOVERY_S after it, or within
    TRACK_SETTLE_S of the forecast's start)."""
    state[SINCE_CONTACT, j] = 0.0 if contact else state[SINCE_CONTACT, j] + dt
    known = not np.isnan(error)
    if not known or not quiet or state[REST_TIME, j] < snap or state[SINCE_CONTACT, j] < TRACK_RECOVERY_S:
        state[TRACK_TIME, j] = 0.0
    else:
        state[TRACK_TIME, j] += dt
    level, slow = state[TRACK_LEVEL, j], state[TRACK_SLOW, j]
    change = abs(error - (2.0 * level - slow + (level - slow) * dt / TRACK_TREND_S))  # Brown's forecast, one step on
    if state[TRACK_TIME, j] <= 0.0 or np.isnan(level):
        if not contact or not quiet or np.isnan(level):  # held while any joint is in alarm
            state[TRACK_LEVEL, j] = error if known else np.nan
            state[TRACK_SLOW, j] = state[TRACK_LEVEL, j]
    elif not contact:
        a = 1.0 - np.exp(-dt / TRACK_TREND_S)
        state[TRACK_LEVEL, j] += a * (error - level)
        state[TRACK_SLOW, j] += a * (state[TRACK_LEVEL, j] - slow)
    if known and state[TRACK_TIME, j] >= TRACK_SETTLE_S:
        return change, abs(velocity)
    return np.nan, np.nan


@numba.njit(cache=True)
def _end_alarm(state, j, resting):
    """Joint j's alarm ends; at rest the push's end counts as a stop (static friction holds a new offset)."""
    state[ALARM, j] = 0.0
    state[ABOVE_S, j], state[ABOVE_N, j] = 0.0, 0.0
    if resting:
        state[REST_TIME, j] = 0.0


@numba.njit(cache=True)
def _detect(t, last_t, external, velocity, commanded, tracking, parameter_sigma, joint, scalars, state, estimate, sigma,
            alarm, speeds, stills, tracked, rest_speeds):
    """The loop of the module docstring over samples (N, n); returns the last sample's time."""
    tau_v, v_rest, v_s, t_b, drift, persist, hyst, release, settle, band, recent, snap, v_cmd = scalars
    n = external.shape[1]
    ready = np.zeros(n, dtype=np.bool_)
    for k in range(t.size):
        dt = 0.0 if np.isnan(last_t) else max(t[k] - last_t, 0.0)
        a = 1.0 if np.isnan(last_t) else 1.0 - np.exp(-dt / tau_v)
        last_t = t[k]
        still, contact, held = True, False, True  # held: every joint's reference (the tracking error is read)
        for j in range(n):
            state[SPEED, j] += a * (abs(velocity[k, j]) - state[SPEED, j])
            still = still and state[SPEED, j] < v_rest and not abs(commanded[k, j]) > v_cmd
            contact, held = contact or state[ALARM, j] != 0.0, held and commanded[k, j] == 0.0
        stills[k] = still
        for j in range(n):
            ready[j] = False
            sigma0, stiction, gain, speed = joint[0, j], joint[1, j], joint[3, j], state[SPEED, j]
            decay = np.exp(-gain * dt)
            state[SINCE_MOVING, j] = 0.0 if speed >= 0.5 * v_s else state[SINCE_MOVING, j] + dt
            moving = abs(commanded[k, j]) > v_cmd  # its reference moves: it has not stopped, however slow
            state[REST_TIME, j] = 0.0 if moving else state[REST_TIME, j] + dt * (speed < v_rest)
            resting = _resting(stiction, state[REST_TIME, j], drift, t_b, snap)
            if speed < v_rest:  # while others move, it may be breaking away or loaded by them: F_s
                e = resting if still else stiction
                if not contact:  # just stopped (snap): what static friction holds at the stop is the baseline at once
                    rate = decay if state[REST_TIME, j] < snap and not moving else np.exp(-dt / t_b)
                    state[BASELINE, j] += (1.0 - rate) * (external[k, j] - state[BASELINE, j])
            elif state[SINCE_MOVING, j] < recent:  # slowing down, reversing or stopping: the friction is unsure
                state[REST_TIME, j] = 0.0
                e = stiction * np.exp(-(speed / v_s) ** 2)
                state[BASELINE, j] *= decay
            else:  # creeping off a rest (breaking away, or pushed): the friction's sign is known
                e = resting
                state[BASELINE, j] *= decay
            state[ENVELOPE, j] = max(e, state[ENVELOPE, j] * decay)
            track, shaken = _tracking(state, j, tracking[k, j], velocity[k, j], still and held, contact, snap, dt)
            tracked[k, j], rest_speeds[k, j] = track, shaken
            s = np.sqrt(sigma0 * sigma0 + state[ENVELOPE, j] ** 2 + parameter_sigma[k, j] ** 2)
            d = external[k, j] - state[BASELINE, j]
            z = abs(d) / s
            threshold = joint[4, j] if still else joint[2, j]
            if state[ALARM, j] == 0.0:
                if z >= threshold or track >= joint[5, j] or shaken >= joint[6, j]:
                    state[ABOVE_S, j] += dt
                    state[ABOVE_N, j] += 1.0
                    if state[ABOVE_N, j] >= 2.0 and state[ABOVE_S, j] >= persist:
                        state[ALARM, j] = 1.0
                        state[BELOW_S, j], state[BELOW_N, j] = 0.0, 0.0
                        state[STEADY_S, j], state[STEADY_REF, j] = 0.0, d
                else:
                    state[ABOVE_S, j], state[ABOVE_N, j] = 0.0, 0.0
            else:
                if z < hyst * threshold:
                    state[BELOW_S, j] += dt
                    state[BELOW_N, j] += 1.0
                else:
                    state[BELOW_S, j], state[BELOW_N, j] = 0.0, 0.0
                if abs(d - state[STEADY_REF, j]) <= band * s:
                    state[STEADY_S, j] += dt
                else:
                    state[STEADY_S, j], state[STEADY_REF, j] = 0.0, d
                ready[j] = state[STEADY_S, j] >= settle and abs(d) <= 2.0 * stiction
                if state[BELOW_N, j] >= 2.0 and state[BELOW_S, j] >= release:
                    _end_alarm(state, j, speed < v_rest)
            estimate[k, j], sigma[k, j], speeds[k, j] = d, s, speed
        # at rest, a contact whose every joint in alarm has settled within the static friction level ends: what is
        # left becomes the baseline
        settled, on = still, False
        for j in range(n):
            if state[ALARM, j] != 0.0:
                on = True
                settled = settled and ready[j]
        for j in range(n):
            if on and settled and state[ALARM, j] != 0.0:
                _end_alarm(state, j, True)
                state[BASELINE, j] = external[k, j]
            alarm[k, j] = state[ALARM, j] != 0.0
    return last_t


@dataclass(frozen=True)
class DetectorSettings:
    """The detector's constants (module docstring); units in the names. Made by
    :meth:`dynid.contact.settings.ContactSettings.detector`, where their defaults, ranges and descriptions are."""

    velocity_filter_s: float
    rest_velocity: float
    stiction_velocity: float
    rest_baseline_s: float
    rest_drift: float
    persistence_s: float
    hysteresis: float
    release_s: float
    settle_s: float
    settle_band: float
    recent_motion_s: float
    rest_snap_s: float
    command_velocity: float

    def scalars(self) -> np.ndarray:
        return np.array([float(getattr(self, name)) for name in SCALARS])


@dataclass
class DetectorSamples:
    """What the detector gave for a batch, (N, n): the estimate d = τ̂_ext − b [N·m], its σ [N·m], the alarm and
    the filtered speed ω̃ [rad/s]; (N,): whether the arm was at rest (module docstring, Motion); (N, n) or None: the
    tracking error's change s [rad] and the speed |ω| [rad/s] at rest, NaN where they are not read."""

    t: np.ndarray
    estimate: np.ndarray
    sigma: np.ndarray
    alarm: np.ndarray
    speed: np.ndarray
    still: np.ndarray
    track: np.ndarray | None = None
    rest_speed: np.ndarray | None = None

    @property
    def z(self) -> np.ndarray:
        return np.abs(self.estimate) / self.sigma


@dataclass
class Contact:
    """One contact (module docstring): start and end [s] (end None while it lasts), each joint's peak |d| [N·m]
    (NaN on the joints that did not respond), the joints that responded, in joint order, and the most distal of
    them; ``raised_by``: the statistics past their thresholds on the joints whose alarm started it, of
    :data:`STATISTICS` ('torque': z ≥ k_j; at rest 'position': s ≥ θ_j, 'speed': |ω| ≥ θ̇_j)."""

    start_s: float
    end_s: float | None
    peak_nm: np.ndarray
    joints: tuple[int, ...]
    peak_signed_nm: np.ndarray = field(default_factory=lambda: np.zeros(0))
    raised_by: tuple[str, ...] = ()

    @property
    def distal_joint(self) -> int:
        return max(self.joints)

    def to_dict(self, joint_names) -> dict:
        return {'start_s': self.start_s, 'end_s': self.end_s,
                'duration_s': None if self.end_s is None else self.end_s - self.start_s,
                'joints': [joint_names[j] for j in self.joints], 'distal_joint': joint_names[self.distal_joint],
                'peak_nm': {joint_names[j]: float(self.peak_signed_nm[j]) for j in self.joints},
                'raised_by': list(self.raised_by)}


class ContactDetector:
    """Per-joint alarms with hysteresis over the observer's estimate (module docstring), and the contacts they make.

    Args:
        sigma0: σ₀ per joint [N·m] (> 0). stiction: F_s per joint [N·m] (>= 0). threshold: k per joint [σ] in
        motion; threshold_rest: at rest (None: the same). gain: the estimate's bandwidth per joint [1/s] (the
        observer's K over its stages). threshold_track, threshold_speed: θ_j [rad] and θ̇_j [rad/s] at rest (None:
        not read).
        settings: :class:`DetectorSettings`.
    """

    def __init__(self, sigma0, stiction, threshold, gain, settings: DetectorSettings, threshold_rest=None,
                 threshold_track=None, threshold_speed=None) -> None:
        self.settings = settings
        rest = threshold if threshold_rest is None else threshold_rest
        track = np.inf if threshold_track is None else threshold_track
        speed = np.inf if threshold_speed is None else threshold_speed
        self.joint = np.array([np.asarray(v, dtype=float) * np.ones(len(np.atleast_1d(sigma0)))
                               for v in (sigma0, stiction, threshold, gain, rest, track, speed)])
        self.n = self.joint.shape[1]
        self._scalars = self.settings.scalars()
        self.reset()

    @property
    def threshold(self) -> np.ndarray:
        """k per joint in motion [σ]."""
        return self.joint[2]

    @property
    def threshold_rest(self) -> np.ndarray:
        """k per joint at rest [σ]."""
        return self.joint[4]

    def threshold_in_force(self, still) -> np.ndarray:
        """k per joint [σ] with the arm at rest where ``still`` (a sample's flag, or (N,) of them) and in motion
        elsewhere: (n,) or (N, n)."""
        return np.where(np.asarray(still)[..., None], self.threshold_rest, self.threshold)

    @property
    def threshold_track(self) -> np.ndarray:
        """the tracking error's threshold per joint at rest [rad] (inf: none)."""
        return self.joint[5]

    @property
    def threshold_speed(self) -> np.ndarray:
        """the speed's threshold per joint at rest [rad/s] (inf: none)."""
        return self.joint[6]

    def reset(self) -> None:
        """Start again. The first sample anchors the observer's estimate at zero, so a joint at rest there counts as
        long at rest (what static friction holds then is in the anchor)."""
        self.state = np.zeros((len(STATE_ROWS), self.n))
        self.state[REST_TIME] = 1e9
        self.state[TRACK_LEVEL] = np.nan  # the first sample's tracking error starts the forecast
        self.state[SINCE_CONTACT] = 1e9
        self.last_t = np.nan
        self._open: Contact | None = None
        self._was_on = np.zeros(self.n, dtype=bool)

    def run(self, t: np.ndarray, external: np.ndarray, velocity: np.ndarray,
            parameter_sigma: np.ndarray | None = None,
            commanded: np.ndarray | None = None, tracking: np.ndarray | None = None
            ) -> tuple[DetectorSamples, list[Contact]]:
        """The detector over a batch: its samples, and the contacts that ended in it or are still open (the open one
        last, its ``end_s`` None; it is the same object the next batch ends). ``commanded``: the reference velocity
        per joint at the samples [rad/s] where the controller's command is known (NaN or None: not known)."""
        t = np.ascontiguousarray(t, dtype=float)
        shape = external.shape
        estimate, sigma, speed = np.empty(shape), np.empty(shape), np.empty(shape)
        alarm = np.zeros(shape, dtype=np.bool_)
        still = np.zeros(shape[0], dtype=np.bool_)
        theta = np.zeros(shape) if parameter_sigma is None else np.ascontiguousarray(parameter_sigma)
        command = np.zeros(shape) if commanded is None else np.ascontiguousarray(commanded, dtype=float)
        if command.shape != shape:
            raise ValueError(f'commanded velocity {command.shape} does not match the estimate {shape}')
        error = np.full(shape, np.nan) if tracking is None else np.ascontiguousarray(tracking, dtype=float)
        if error.shape != shape:
            raise ValueError(f'tracking error {error.shape} does not match the estimate {shape}')
        tracked, rest_speed = np.empty(shape), np.empty(shape)
        self.last_t = _detect(t, self.last_t, np.ascontiguousarray(external), np.ascontiguousarray(velocity), command,
                              error, theta, self.joint, self._scalars, self.state, estimate, sigma, alarm, speed, still,
                              tracked, rest_speed)
        samples = DetectorSamples(t, estimate, sigma, alarm, speed, still, tracked, rest_speed)
        return samples, self._contacts(samples)

    def _contacts(self, samples: DetectorSamples) -> list[Contact]:
        """Contacts from the per-joint alarms: stretches where any joint is in alarm."""
        out = []
        on = samples.alarm.any(axis=1)
        previous = self._open is not None
        edges = np.flatnonzero(np.diff(np.concatenate([[previous], on]).astype(np.int8)))
        bounds = list(edges)
        first = 0
        if previous:
            stop = bounds.pop(0) if bounds else len(on)
            self._extend(self._open, samples, 0, stop)
            if stop < len(on):
                self._open.end_s = float(samples.t[stop])
                out.append(self._open)
                self._open = None
            first = stop
        for start, stop in zip(bounds[0::2], list(bounds[1::2]) + [len(on)], strict=False):
            if start < first:
                continue
            contact = Contact(float(samples.t[start]), None, np.full(self.n, np.nan), (),
                              np.full(self.n, np.nan), self._raised_by(samples, start))
            self._extend(contact, samples, start, stop)
            if stop < len(on):
                contact.end_s = float(samples.t[stop])
                out.append(contact)
            else:
                self._open = contact
        if self._open is not None:
            out.append(self._open)
        return out

    def _raised_by(self, samples: DetectorSamples, k: int) -> tuple[str, ...]:
        """The statistics past their thresholds at sample k on the joints in alarm there (:class:`Contact`)."""
        on = samples.alarm[k]
        past = {'torque': samples.z[k] >= self.threshold_in_force(samples.still[k])}
        if samples.track is not None and samples.rest_speed is not None:
            past['position'] = samples.track[k] >= self.threshold_track
            past['speed'] = samples.rest_speed[k] >= self.threshold_speed
        return tuple(name for name in STATISTICS if name in past and bool(np.any(past[name] & on)))

    def _extend(self, contact: Contact, samples: DetectorSamples, a: int, b: int) -> None:
        """Add samples a..b−1 (all in the contact) to its peaks and joints."""
        if b <= a:
            return
        alarm = samples.alarm[a:b]
        joints = set(contact.joints) | set(np.flatnonzero(alarm.any(axis=0)).tolist())
        contact.joints = tuple(sorted(joints))
        values = samples.estimate[a:b]
        index = np.argmax(np.abs(values), axis=0)
        peaks = values[index, np.arange(self.n)]
        better = ~(np.abs(peaks) <= np.nan_to_num(contact.peak_nm, nan=-1.0))
        contact.peak_nm = np.where(better, np.abs(peaks), contact.peak_nm)
        contact.peak_signed_nm = np.where(better, peaks, contact.peak_signed_nm)
