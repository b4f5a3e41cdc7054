"""The contact job over batches of samples: observer, σ, detector and flange wrench, state kept between batches.

:class:`ContactMonitor` is what ``dynid contact`` replays and contact_node runs live (one core for both): it takes
the joint signals of a :class:`dynid.io.dataset.Dataset` or of the intake's :class:`dynid.io.stream.StateBatch`,
runs the momentum observer (:mod:`dynid.contact.observer`) on the identified model (:mod:`dynid.contact.dynamics`),
the detector with its σ and thresholds (:mod:`dynid.contact.detection`, from a :class:`Calibration` or the result's
figures), and on arms of six joints or more the flange wrench (:mod:`dynid.contact.wrench`).

Without calibration the thresholds are those a Gaussian z with the result's σ₀ would need for the stated rate
(:func:`uncalibrated_threshold`); the residual of a real arm is not Gaussian, so calibrate on contact-free runs
(:func:`dynid.contact.calibration.calibrate`, ``dynid contact --calibrate``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import yaml

from dynid.contact.calibration import Calibration, CalibrationRun, calibrate, contact_rules, gaussian_threshold
from dynid.contact.detection import Contact, ContactDetector
from dynid.contact.dynamics import ObserverModel
from dynid.contact.observer import MomentumObserver
from dynid.contact.settings import ContactSettings
from dynid.contact.uncertainty import FrictionParameterSigma, result_sigma
from dynid.contact.wrench import FlangeWrench
from dynid.errors import InputError
from dynid.files import file_sha256, read_yaml, write_text
from dynid.identify import IdentificationResult
from dynid.model.inertial import Payload
from dynid.model.robot import RobotModel

CALIBRATION_VERSION = 1
#: |τ̂_ext| above a joint's effort limit [N·m] over most of a recording is no force the arm felt but a misread input (a
#: result of another arm, currents read with another arm's gains or in mA): refused. A hard impact can pass the limit
#: for a moment (the drive is back-driven; a simulated rigid obstacle drove a shoulder to 202 N·m against its 150), so
#: the check asks for more than :data:`MISREAD_SHARE` of the samples of a batch of at least :data:`MISREAD_MIN_S`, and
#: says nothing on shorter batches (a node's).
EFFORT_LIMIT_SHARE = 1.0
MISREAD_SHARE = 0.5
MISREAD_MIN_S = 1.0


def tracking_error(reference_position, q) -> np.ndarray | None:
    """e = q_r − q [rad] (N, n) where the controller's reference position is known (NaN where it is not), or None."""
    if reference_position is None:
        return None
    return np.asarray(reference_position, dtype=float) - np.asarray(q, dtype=float)


def uncalibrated_threshold(rate_per_hour: float, rate_hz: float, n: int) -> float:
    """k [σ] at which a Gaussian z passes at the stated rate per hour shared by n joints
    (:func:`~dynid.contact.calibration.gaussian_threshold`)."""
    return gaussian_threshold(rate_per_hour / n, rate_hz)


@dataclass
class ContactSamples:
    """A batch's outputs, each (N, n) but ``t`` (N,), ``wrench`` and ``wrench_sigma`` (N, 6) or None: τ̂_ext as the
    observer gives it and the detector's estimate d (less the rest baseline) [N·m], its σ [N·m], the alarms; ``level``:
    the |d| that raises an alarm at each sample [N·m] (the joint's threshold k_j, in motion or with the arm at rest,
    times σ; at rest static friction holds the first part of a push before d sees it)."""

    t: np.ndarray
    external: np.ndarray
    estimate: np.ndarray
    sigma: np.ndarray
    alarm: np.ndarray
    speed: np.ndarray
    level: np.ndarray | None = None
    wrench: np.ndarray | None = None
    wrench_sigma: np.ndarray | None = None
    wrench_singular: np.ndarray | None = None
    contacts: list[Contact] = field(default_factory=list)


class ContactMonitor:
    """Observer, detector and wrench for one robot and result (module docstring).

    Args:
        result, robot: the identification and the robot it identifies.
        settings: :class:`ContactSettings`.
        rate_hz: the sample rate [Hz] (the observer's default gain and stages and the uncalibrated thresholds depend on
            it).
        payload: the payload declared at the flange, or None.
        calibration: thresholds and σ₀ from contact-free runs, or None (module docstring).
        wrench: estimate the flange wrench (arms of six joints or more; None: where the arm has them).
    """

    def __init__(self, result: IdentificationResult, robot: RobotModel, settings: ContactSettings | None = None,
                 rate_hz: float = 1000.0, payload: Payload | None = None, calibration: Calibration | None = None,
                 wrench: bool | None = None) -> None:
        self.settings = (settings or ContactSettings()).validated()
        self.result, self.robot, self.rate_hz = result, robot, float(rate_hz)
        s = self.settings
        self.model = ObserverModel(result, robot, payload, s.friction_band, s.temperature_c)
        self.gain = np.full(robot.n, s.gain(self.rate_hz))
        self.bandwidth = np.full(robot.n, s.bandwidth(self.rate_hz))
        self.observer = MomentumObserver(self.model, self.gain, max_gap_s=max(0.1, 10.0 / self.rate_hz),
                                         stages=s.stages(self.rate_hz))
        self.parameter_sigma = FrictionParameterSigma(result, robot, s.friction_band)
        self.stiction = s.stiction_scale * self.model.coulomb_level
        self.result_sigma = result_sigma(result, robot)
        self.wrench = FlangeWrench(robot) if (wrench or (wrench is None and robot.n >= 6)) else None
        self.set_calibration(calibration)

    def set_calibration(self, calibration: Calibration | None) -> None:
        """Use ``calibration`` (None: the result's σ₀ and the Gaussian threshold); the detector starts again."""
        self.calibration = calibration
        if calibration is None:
            sigma0 = self.result_sigma
            threshold = np.full(self.robot.n, uncalibrated_threshold(self.settings.false_alarm_rate, self.rate_hz,
                                                                      self.robot.n))
        else:
            sigma0, threshold = calibration.sigma0, calibration.threshold
        rest = None if calibration is None else calibration.threshold_rest
        track = None if calibration is None else calibration.threshold_track
        speed = None if calibration is None else calibration.threshold_speed
        self.detector = ContactDetector(sigma0, self.stiction, threshold, self.bandwidth, self.settings.detector(),
                                        rest, track, speed)

    def reset(self) -> None:
        self.observer.reset()
        self.detector.reset()

    def observe(self, t, q, dq, current=None, tau=None, dtheta=None, temperature=None, friction=None,
                what: str = 'the recording'):
        """The observer alone over a batch: (observer samples, σ_θ)."""
        samples = self.observer.run(t, q, dq, current, tau, dtheta, temperature, friction, what)
        self._within_limits(samples, what)
        return samples, self.parameter_sigma(samples.velocity)

    def _within_limits(self, samples, what: str) -> None:
        """InputError where τ̂_ext passes a joint's effort limit (:data:`EFFORT_LIMIT_SHARE`) over most of the batch
        (:data:`MISREAD_SHARE`, :data:`MISREAD_MIN_S`): a misread input; or, where the measured torque stays within
        the limit and the result's own friction passes it, a friction law that does not hold at the measured torques
        (a load-dependent term fitted where the joint's output torque stayed small)."""
        limit = EFFORT_LIMIT_SHARE * self.robot.effort_limits
        t = np.asarray(samples.t)
        if t.size == 0 or t[-1] - t[0] < MISREAD_MIN_S:
            return
        share = np.mean(np.abs(samples.external) > limit, axis=0)
        joints = np.flatnonzero(share > MISREAD_SHARE)
        if not joints.size:
            return
        peaks = ', '.join(f'{self.robot.joint_names[j]} {np.abs(samples.external[:, j]).max():.0f} N·m (limit '
                          f'{self.robot.effort_limits[j]:g}) on {100 * share[j]:.0f} % of it' for j in joints)
        friction, measured = getattr(samples, 'friction', None), getattr(samples, 'measured', None)
        own = [] if friction is None or measured is None else \
            [j for j in joints if np.mean(np.abs(friction[:, j]) > limit[j]) > MISREAD_SHARE
             and np.mean(np.abs(measured[:, j]) > limit[j]) <= MISREAD_SHARE]
        if own:  # the measured torque within the limits and the result's friction beyond them: its law, not the input
            loaded = any(self._load_term(j) for j in own)
            raise InputError(f'{what}: external torque beyond the joints\' effort limits over most of the recording '
                             f'({peaks}), where the result\'s own friction passes them too ('
                             + ', '.join(self._friction_text(j, np.abs(friction[:, j]).max()) for j in own)
                             + '): its friction law does not hold at the torques measured here, not a contact'
                             + (' — identify again with the friction law left to the model choice, which leaves out '
                                'a load term whose friction would exceed its load ({friction} auto)' if loaded else ''),
                             fields=('friction',) if loaded else ())
        raise InputError(f'{what}: external torque beyond the joints\' effort limits over most of the recording '
                         f'({peaks}): a misread input, not a contact — is the effort read as it was identified '
                         f'(the result reads {self.model.torque_source.replace("_", " ")}), and is the result this '
                         f'robot\'s ({self.robot.name})?')

    def _load_term(self, joint: int) -> tuple[str, float] | None:
        """(symbol, value [1/(N·m)]) of the result's load-dependent friction coefficient of ``joint`` (its law's
        ``load_symbols``: load_squared's Fl, Li's fL), None where the law has none or it is 0."""
        friction = self.model.friction
        symbols = () if friction is None or friction.law is None else friction.law.load_symbols
        found = [(symbol, float(friction.parameters[symbol][joint])) for symbol in symbols
                 if symbol in friction.parameters and friction.parameters[symbol][joint] != 0.0]
        return found[0] if found else None

    def _friction_text(self, joint: int, peak: float) -> str:
        """'wrist_3_joint up to 6387 N·m (its load-dependent term Fl_6 = 3316 /(N·m), on the gear's load)'."""
        text = f'{self.robot.joint_names[joint]} up to {peak:.0f} N·m'
        load = self._load_term(joint)
        if load:
            text += f' (its load-dependent term {load[0]}_{joint + 1} = {load[1]:.4g} /(N·m), on the gear\'s load)'
        return text

    def run(self, t, q, dq, current=None, tau=None, dtheta=None, temperature=None, friction=None,
            what: str = 'the recording', reference_velocity=None, reference_position=None) -> ContactSamples:
        """Everything over a batch of samples (units of :meth:`MomentumObserver.run`), continuing from the state;
        ``reference_velocity``: the controller's commanded joint velocity at the samples [rad/s] (N, n), NaN or None
        where it is not known (:class:`ContactSettings` ``command_velocity``)."""
        observed, theta = self.observe(t, q, dq, current, tau, dtheta, temperature, friction, what)
        reference = self.settings.reference
        detected, contacts = self.detector.run(observed.t, observed.external, observed.velocity, theta,
                                               reference_velocity if reference else None,
                                               tracking_error(reference_position, q) if reference else None)
        threshold = self.detector.threshold_in_force(detected.still)
        out = ContactSamples(observed.t, observed.external, detected.estimate, detected.sigma, detected.alarm,
                             detected.speed, threshold * detected.sigma, contacts=contacts)
        if self.wrench is not None:
            out.wrench, out.wrench_sigma, out.wrench_singular = self.wrench.estimate(np.asarray(q), detected.estimate,
                                                                                     detected.sigma)
        return out

    def calibrate(self, runs: list[dict]) -> Calibration:
        """Calibrate on contact-free runs, each a mapping of :meth:`run`'s keyword arguments (t, q, dq, current,
        ...), and use the calibration."""
        observed, names = [], []
        for run in runs:
            names.append(run.get('what', f'recording {len(names) + 1}'))
            self.observer.reset()
            run = dict(run)
            reference = run.pop('reference_velocity', None)
            position = run.pop('reference_position', None)
            samples, theta = self.observe(**run)
            given = self.settings.reference
            observed.append(CalibrationRun(samples.t, samples.external, samples.velocity, theta,
                                           reference if given else None,
                                           tracking_error(position, run['q']) if given else None))
        calibration = calibrate(observed, self.result_sigma, self.stiction, self.bandwidth,
                                self.settings.false_alarm_rate, self.settings.detector())
        if calibration.contact_like:
            found = '; '.join(f'{names[k]} at {t - observed[k].t[0]:.2f} s ({self.robot.joint_names[j]}, {z:.0f} σ)'
                              for k, t, j, z in calibration.contact_like[:5])
            raise InputError(f'calibration recordings are not contact-free: the residual holds contact-like '
                             f'excursions ({contact_rules()}) in {found}'
                             f'{" …" if len(calibration.contact_like) > 5 else ""}; calibrate on recordings without '
                             'contact (or cut the contacts out)')
        quieter = self._quieter_rate(observed) if calibration.own_contacts_unlikely else None
        calibration.warnings = calibration.cautions(self.robot.joint_names, self.robot.effort_limits, names, quieter)
        self.reset()
        self.set_calibration(calibration)
        return calibration

    def _quieter_rate(self, observed: list[CalibrationRun]) -> float | None:
        """The first of the stated false-alarm rate / 10, / 100, / 1000 [1/h] whose thresholds raise no contact on
        the ``observed`` calibration runs, or None."""
        for tenths in (1, 2, 3):
            rate = self.settings.false_alarm_rate / 10.0**tenths
            trial = calibrate(observed, self.result_sigma, self.stiction, self.bandwidth, rate,
                              self.settings.detector())
            if not any(trial.own_contacts):
                return rate
        return None


def save_calibration(calibration: Calibration, path, robot: RobotModel, settings: ContactSettings,
                     result_file: str = '', joint_states_effort: str | None = None) -> None:
    """The calibration as YAML (written whole or not at all), tied to the robot, the result file (its sha256) and
    what the joint_states effort was read as (:func:`load_calibration` refuses another's)."""
    document = {'dynid_contact_calibration': CALIBRATION_VERSION, 'robot': robot.name,
                'joint_names': list(robot.joint_names), 'result': str(result_file),
                'result_sha256': file_sha256(result_file) if result_file else None,
                'joint_states_effort': joint_states_effort, **calibration.to_dict(robot.joint_names)}
    write_text(path, yaml.safe_dump(document, sort_keys=False, allow_unicode=True))


def load_calibration(path, robot: RobotModel, result_file=None, joint_states_effort: str | None = None
                     ) -> Calibration:
    """A calibration file for ``robot``'s joints, made with the result ``result_file`` (its sha256, where given) and
    the joint_states effort read as ``joint_states_effort`` (where both say); InputError naming the field that is
    wrong or what the calibration was made for."""
    data = read_yaml(path, 'calibration file')
    if not isinstance(data, dict) or data.get('dynid_contact_calibration') != CALIBRATION_VERSION:
        raise InputError(f'{path} is not a dynid contact calibration (needs "dynid_contact_calibration: '
                         f'{CALIBRATION_VERSION}")')
    if data.get('robot') != robot.name:
        raise InputError(f'{path} calibrates robot {data.get("robot")!r}, not {robot.name!r}: calibrate this one')
    made_with = data.get('result_sha256')
    if result_file is not None and made_with is not None and made_with != file_sha256(result_file):
        raise InputError(f'{path} was calibrated with another result ({data.get("result") or "sha256 " + made_with}'
                         f', not {result_file}): its σ₀ and thresholds are that model\'s residual; calibrate again')
    if result_file is not None and made_with is None:
        raise InputError(f'{path} names no result_sha256: it cannot show it was made with {result_file}; calibrate '
                         'again')
    said = data.get('joint_states_effort')
    if joint_states_effort is not None and said is not None and said != joint_states_effort:
        raise InputError(f'{path} was calibrated with joint_states effort read as {said}, not {joint_states_effort}')

    def per_joint(key):
        values = data.get(key)
        if not isinstance(values, dict) or set(values) != set(robot.joint_names) or not all(
                isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v) for v in values.values()):
            raise InputError(f'{path}: {key} needs a number for each joint of {list(robot.joint_names)}')
        return np.array([float(values[name]) for name in robot.joint_names])

    sigma0, threshold, rest = per_joint('sigma0_nm'), per_joint('threshold_sigma'), per_joint('threshold_rest_sigma')
    if np.any(sigma0 <= 0) or np.any(threshold <= 0) or np.any(rest <= 0):
        raise InputError(f'{path}: sigma0_nm, threshold_sigma and threshold_rest_sigma must be > 0')
    n = robot.n
    with_reference = data.get('with_reference', False)
    if not isinstance(with_reference, bool):
        raise InputError(f'{path}: with_reference must be true or false')
    at_rest = {}  # the tracking error's and the speed's thresholds, where the calibration had the reference
    for key in ('threshold_track_rad', 'threshold_speed_rad_s'):
        at_rest[key] = per_joint(key) if key in data else None
        if at_rest[key] is not None and np.any(at_rest[key] <= 0):
            raise InputError(f'{path}: {key} must be > 0')
    warnings = data.get('warnings') or []
    if not isinstance(warnings, list) or not all(isinstance(line, str) for line in warnings):
        raise InputError(f'{path}: warnings must be a list of lines')
    return Calibration(sigma0, threshold, np.zeros(n), np.full(n, np.nan), np.zeros(n), float(data.get('hours') or 0),
                       float(data.get('false_alarm_rate_per_hour') or 0), list(data.get('notes') or []), rest,
                       with_reference=with_reference, threshold_track=at_rest['threshold_track_rad'],
                       threshold_speed=at_rest['threshold_speed_rad_s'], warnings=warnings)
