"""E-GMS friction feedforward: hysteresis × load-dependent Coulomb, and its adaptive form.

**friction_egms** — the complete joint friction of Madsen 2020, ch.6 eqs. (3), (5), (11), (20), on the
desired signals:

    f = F(τ_J,d)·H(q_d) + F_V(q̇_d, T),   F(τ) = Fc0 + Fc1·τ² (or Fc0 + Fc1·|τ|)

H is the E-GMS hysteresis (eqs. (14)–(15), :class:`dynid.friction.egms.EGMS`) driven by the **desired
position** q_d (decision: §6.4 only says the feedforward copy runs on desired signals; the rotor's
θ_d = q_d + φ_d would need the stiffness), τ_J,d the nominal joint torque M(q_d)q̈_d + C q̇_d + g(q_d)
with payload (decision: eq. (29) names a "nominal joint torque" without defining it), clipped to the
effort limits before it enters F (F(τ) is unbounded in τ; the BIBO argument of §6.5 needs a bounded
τ_J,d). F_V is everything of the identified friction that is not the Coulomb level: viscous Fv·ω,
offset tau0, and the temperature term (or, for the ``comprehensive`` model, sgn(ω)·fv·|ω|^a + fo); all
continuous in ω, so unlike the static term nothing needs smoothing: H replaces the jump of sgn(ω). Where the model
choice kept a Stribeck excess (the result's ``stribeck`` section), F_V holds it too, Fs·tanh(ω/band)·exp(−(|ω|/Vs)^μ)
(Madsen 2020 ch.6 eq. (11) puts it in F_V), its sign smoothed over friction_static's default band as the section's
excess is.

**Joint friction (schema 2).** Where the result has a ``joint_friction`` section (the model identified
from the dedicated experiments, :func:`dynid.identify.friction_fit.identified.joint_friction_of`), the joints with an
identified Fc0 take F(τ) = Fc0 + Fc1·τ² from it, F_V = its remainder (Stribeck excess, Fv1–Fv3 and the
reference-temperature term; the excess's sgn(ω) smoothed as tanh(ω/band), option ``band``, default the
section's ``excess_band`` where the reciprocating sweep identified one, else friction_static's default
band, plus the IDIM result's offset tau0, as friction_static keeps it) and its E-GMS laws and backlash; the
other joints keep the IDIM model. Without the section (the IDIM result has no E-GMS parameters; they come
from a dedicated experiment, ch.6 §5.2) the term uses the landed defaults M = 4, r_Δ = 4, r_k = 2, B = 1 mrad.
Options ``elements``, ``r_delta``, ``r_k``, ``backlash`` the user sets override both on every joint.

Since H is normalized to [−1, 1] (eq. (16)), multiplying it by F(τ) scales it to the identified Coulomb
level: in sliding the term equals the identified static friction (eq. (9)). Coulomb levels Fc0 < 0 or
load coefficients Fc1 < 0 (unphysical: eq. (7) needs F > 0) are taken as 0 and listed in ``notes``. The
Hamon model has no single Coulomb level and is refused (use friction_static).

**friction_adaptive** — the adaptive friction feedforward of eq. (29): f̂ = Yᵀ(τ_J,d, q̇_d)·α̂ =
α̂1·F(τ_J,d)·H(q_d) + α̂2·q̇_d, the regressor of :class:`dynid.estimate.AdaptiveFrictionEstimator` on
desired signals, with the latest α̂ (context ``alpha``, else the estimator's, else the option ``alpha``,
default the nominal (1, 0)). F and the E-GMS laws are the estimator's (option ``estimator``), else built
from the result the way ``dynid estimate`` builds the estimator (Fc0 = Fc > 0 required, Fc1 = max(Fl, 0);
on the joints the ``joint_friction`` section covers its Fc0, max(Fc1, 0) and E-GMS laws).
In eq. (30) the static part u_FF holds F_V only: with both terms configured, the Feedforward builds
friction_egms without its Coulomb part (option ``coulomb: false``), so F·H is not counted twice.

**Standstill fade** (both terms; decision, not in the paper). Once the desired motion has stopped, H(q_d)
stays at ±1 (q_d no longer moves) and the term keeps pushing α̂1·F·H, while the real friction settles
wherever the feedback leaves it (stiction, anywhere in [−F, F]). With option ``standstill_fade`` [s] the
term scales H by a factor s ∈ [0, 1]: once q_d has been at rest for ``standstill_window`` (0.05 s) —
|q̇_d| < ``standstill_speed`` (0.01 rad/s), the values of the estimator's excitation switch (ch.6 eq. (28)),
and |q̈_d| < ``standstill_acceleration`` (0.01 rad/s²) — s falls linearly from 1 to 0 over
``standstill_fade`` seconds; the first sample not at rest takes s back to 1 at once. The acceleration
condition tells a stop (q̈_d = 0) from a reversal, where q̇_d passes through 0 while q̈_d keeps its sign:
however slow the reversal (0.05 rad/s² in the thesis' sweep, eq. (21), spends 0.4 s below 0.01 rad/s), H
is the paper's there. The operators themselves run on unchanged, so H is where the paper has it when the
motion resumes. Default 0.3 s, chosen on the twin with B2 of ``benchmarks/bench_feedforward.py``: without the
fade the feedback does the friction's work at every stop; B2's headline, the estimation block's torque
prediction, hardly depends on it. The fade once cut into B1's reversals, which the acceleration condition
ended: B1's reversals are not at rest, so B1 runs the paper's term (the figures: benchmarks/README.md,
"The figures behind the defaults"). ``standstill_fade: null`` gives the paper's term.

Both terms have memory (the E-GMS operators, the standstill counter): ``step`` advances the term's own;
``evaluate`` runs a batch on fresh ones, undeformed at the batch's first sample, exactly as ``step`` does
from a ``reset``.
"""

from __future__ import annotations

import numba
import numpy as np

from dynid.checks import positive
from dynid.control.context import FeedforwardContext
from dynid.control.friction_static import (
    DEFAULT_TEMPERATURE_C,
    bounded_load,
    default_band,
    friction_parameters,
    idim_offset,
    temperature_or_fallback,
)
from dynid.control.joint_torque import JointTorqueInput
from dynid.control.plugins import TermPlugin
from dynid.control.term import (
    DEFAULT_RATE_HZ,
    FeedforwardTerm,
    finite,
    flag,
    per_joint,
    term_options,
)
from dynid.errors import InputError
from dynid.friction.egms import EGMS
from dynid.friction.joint_friction import JointFriction
from dynid.friction.laws import friction_law, law_names
from dynid.friction.load import LoadDependentCoulomb
from dynid.friction.power_law import power_term
from dynid.friction.temperature import TemperatureFriction
from dynid.identify import IdentificationResult, joint_friction_of
from dynid.identify import velocity_friction as joint_velocity_friction
from dynid.model.robot import RobotModel


def egms_laws() -> list[str]:
    """The registered laws the E-GMS term scales: a single Coulomb level (:attr:`FrictionLaw.coulomb_viscous`)."""
    return [name for name in law_names() if friction_law(name).coulomb_viscous]


def adapted_laws() -> list[str]:
    """The laws the adaptive feedforward term takes: a Coulomb level, a linear viscous term and no load term or a
    squared one (the online estimator, dynid.estimate.replay, also adapts the comprehensive law's Coulomb level; this
    term does not yet)."""
    return [name for name in egms_laws() if friction_law(name).load_shape in (None, 'squared')
            and not friction_law(name).power_viscous]
ALPHA_NOMINAL = (1.0, 0.0)
#: Samples per block of the E-GMS batch run (positions relative to each block's start, EGMS.run). Chosen for
#: the speed of an earlier vectorized scan; kept so that evaluate's values stay what they were (any block
#: gives the values of stepping to ~1e-11).
EGMS_BLOCK = 512
EGMS_DEFAULTS = {'elements': 4, 'r_delta': 4.0, 'r_k': 2.0, 'backlash': 0.001}
#: Option defaults of the E-GMS laws: None takes the joint friction section's, else EGMS_DEFAULTS.
EGMS_OPTIONS = dict.fromkeys(EGMS_DEFAULTS)
#: Standstill fade (module docstring): fade time [s] (None: off), and when the desired motion counts as
#: stopped: |q̇_d| below the speed [rad/s] for the window [s] (the estimator's eq. (28) switch values).
STANDSTILL_FADE_S = 0.3
STANDSTILL_SPEED = 0.01
STANDSTILL_WINDOW_S = 0.05
#: |q̈_d| [rad/s²] below which a slow sample counts as stopped: a reversal passes through q̇_d = 0 with
#: |q̈_d| > 0 (0.05 rad/s² in the thesis' hysteresis sweep, ch.6 eq. (21)), a stop holds q̈_d = 0.
STANDSTILL_ACCELERATION = 0.01
STANDSTILL_OPTIONS = {'standstill_fade': STANDSTILL_FADE_S, 'standstill_speed': STANDSTILL_SPEED,
                      'standstill_acceleration': STANDSTILL_ACCELERATION,
                      'standstill_window': STANDSTILL_WINDOW_S, 'rate_hz': DEFAULT_RATE_HZ}


def identified_friction(result: IdentificationResult | None,
                        robot: RobotModel) -> tuple[JointFriction, np.ndarray] | None:
    """The result's joint friction section as (model, mask), None without it or without a joint it covers."""
    identified = None if result is None else joint_friction_of(result, robot)
    return identified if identified is not None and identified[1].any() else None


def _egms_laws(o: dict, robot: RobotModel, identified: tuple[JointFriction, np.ndarray] | None = None) -> dict:
    """Checked E-GMS laws (per joint where given so): an option the user set, else the section's on the
    joints it covers (``identified``) and EGMS_DEFAULTS on the others."""
    o = dict(o)
    if identified is not None:
        mask, section = identified[1], identified[0].egms
        laws = {'elements': section.elements, 'r_delta': section.r_delta, 'r_k': section.r_k,
                'backlash': section.backlash_table[:, 0]}
        for name, value in laws.items():
            if o[name] is None:
                o[name] = value if name == 'elements' else np.where(mask, value, EGMS_DEFAULTS[name])
    o = {name: EGMS_DEFAULTS[name] if o[name] is None else o[name] for name in EGMS_DEFAULTS}
    if not isinstance(o['elements'], (int, float, np.integer)) or int(o['elements']) != o['elements'] \
            or o['elements'] < 1:
        raise InputError(f'E-GMS elements must be a positive integer, got {o["elements"]!r}')
    return {'elements': int(o['elements']),
            'r_delta': per_joint(o['r_delta'], robot.joint_names, 'E-GMS r_delta', 0.0, strict=True),
            'r_k': per_joint(o['r_k'], robot.joint_names, 'E-GMS r_k'),
            'backlash': per_joint(o['backlash'], robot.joint_names, 'E-GMS backlash [rad]', 0.0, strict=True)}


class StandstillFade:
    """The factor s ∈ [0, 1] that scales H at standstill (module docstring), for n joints.

    A sample is at rest when |q̇_d| < ``speed`` and |q̈_d| < ``acceleration`` (a reversal, where q̇_d only
    passes through 0 while q̈_d holds its sign, is not); c_k counts the samples at rest in a row (this one
    included, from 0 at a reset); s_k = clip((W + F − c_k)/F, 0, 1) with W = round(window_s·rate) >= 1
    samples and F = fade_s·rate.

    Args:
        n: joints. fade_s: fade time [s] > 0. speed: threshold [rad/s] > 0. window_s: hold time [s] > 0.
        rate_hz: sample rate [Hz]. acceleration: threshold [rad/s²] > 0.
    """

    def __init__(self, n: int, fade_s: float, speed: float = STANDSTILL_SPEED, window_s: float = STANDSTILL_WINDOW_S,
                 rate_hz: float = DEFAULT_RATE_HZ, acceleration: float = STANDSTILL_ACCELERATION) -> None:
        self.n, self.fade_s, self.speed, self.window_s = n, fade_s, speed, window_s
        self.acceleration = acceleration
        self.window = max(1, int(round(window_s * rate_hz)))
        self.fade = fade_s * rate_hz
        self.reset()

    @classmethod
    def from_options(cls, o: dict, n: int, term: str) -> StandstillFade | None:
        """From the options ``standstill_fade`` (None or false: off), ``standstill_speed``,
        ``standstill_acceleration``, ``standstill_window`` and ``rate_hz``."""
        fade = o['standstill_fade']
        if fade is None or fade is False:
            return None
        return cls(n, positive(fade, f'{term}: standstill_fade [s]'),
                   positive(o['standstill_speed'], f'{term}: standstill_speed [rad/s]'),
                   positive(o['standstill_window'], f'{term}: standstill_window [s]'),
                   positive(o['rate_hz'], f'{term}: rate_hz'),
                   positive(o['standstill_acceleration'], f'{term}: standstill_acceleration [rad/s²]'))

    def reset(self) -> None:
        self.count = np.zeros(self.n, dtype=np.int64)

    def factor(self, count: np.ndarray) -> np.ndarray:
        return np.minimum(np.maximum((self.window + self.fade - count) / self.fade, 0.0), 1.0)

    def step(self, dq: np.ndarray, ddq: np.ndarray) -> np.ndarray:
        """s (n,) for one sample of q̇_d, q̈_d (n,); advances the counter."""
        return _standstill_step(dq, ddq, self.count, self.speed, self.acceleration, self.window, self.fade)

    def run(self, dq: np.ndarray, ddq: np.ndarray) -> np.ndarray:
        """s (N, n) for q̇_d, q̈_d (N, n) from a reset (the counter is not touched): the rows of :meth:`step`."""
        k = np.arange(dq.shape[0])[:, None]
        at_rest = (np.abs(dq) < self.speed) & (np.abs(ddq) < self.acceleration)
        last_moving = np.maximum.accumulate(np.where(at_rest, -1, k), axis=0)
        return self.factor(k - last_moving)


@numba.njit(cache=True)
def _standstill_step(dq, ddq, count, speed, acceleration, window, fade):
    """:meth:`StandstillFade.step` in one call (the same arithmetic as :meth:`StandstillFade.factor`);
    ``count`` is advanced in place."""
    factor = np.empty(dq.shape[0])
    for j in range(dq.shape[0]):
        count[j] = count[j] + 1 if abs(dq[j]) < speed and abs(ddq[j]) < acceleration else 0
        factor[j] = min(max((window + fade - count[j]) / fade, 0.0), 1.0)
    return factor


def velocity_friction(result: IdentificationResult, p: dict, joint_names):
    """F_V(ω, T) [N·m] of the identified model: all of it but the Coulomb level (module docstring); ``p`` and ω in
    ``joint_names``' order."""
    temperature = TemperatureFriction(p['beta1'], p['beta2'], p['beta3']) if result.model.get('temperature') else None
    remainder = _velocity_remainder(result, p, joint_names, temperature)
    stribeck, band = result.stribeck, default_band(result)
    if stribeck is None:
        return remainder
    return lambda w, t: remainder(w, t) + stribeck.torque(w, p['Fs'], np.tanh(np.asarray(w, dtype=float) / band))


def _velocity_remainder(result: IdentificationResult, p: dict, joint_names, temperature):
    """F_V(ω, T) of :func:`velocity_friction` without the Stribeck excess."""
    law, zero = friction_law(result.model.get('friction')), np.zeros(len(joint_names))
    viscous, offset = (p.get(law.roles.get(part), zero) for part in ('Fv', 'tau0'))  # by the law's roles
    if law.power_viscous:
        exponents, shift = result.power_exponents(joint_names), result.power_velocity

        def remainder(w, t):
            value = viscous * power_term(w, exponents, shift) + offset
            return value if temperature is None else value + temperature.evaluate(w, t)
    else:

        def remainder(w, t):
            value = viscous * w + offset
            return value if temperature is None else value + temperature.evaluate(w, t)
    return remainder


def coulomb_level(level: LoadDependentCoulomb, load: np.ndarray) -> np.ndarray:
    """F(τ) = Fc0 + Fc1·τ² (or |τ|) [N·m]: :meth:`LoadDependentCoulomb.level` without its conversions."""
    return level.Fc0 + level.Fc1 * (load * load if level.law == 'squared' else np.abs(load))


class _HysteresisCopies:
    """An E-GMS for stepping plus fresh copies for batches (same laws and backlash map), and the standstill
    fade of H (None: off)."""

    standstill: StandstillFade | None = None

    def _use_egms(self, n: int, elements: int, r_delta, r_k, backlash) -> None:
        self._egms_laws = (n, elements, r_delta, r_k, backlash)
        self.egms = self._fresh_egms()

    def _hysteresis_run(self, q, dq, ddq) -> np.ndarray:
        """H(q_d) (N, n) of a batch on fresh operators, faded at standstill."""
        h = self._fresh_egms().run(q)
        return h if self.standstill is None else h * self.standstill.run(dq, ddq)

    def _hysteresis_step(self, q, dq, ddq) -> np.ndarray:
        """H(q_d) (n,) of one sample on the term's operators, faded at standstill."""
        h = self.egms.step(q)
        return h if self.standstill is None else h * self.standstill.step(dq, ddq)

    def _fresh_egms(self) -> EGMS:
        n, elements, r_delta, r_k, backlash = self._egms_laws
        egms = EGMS(n, elements, r_delta, r_k, backlash=backlash)
        egms.RUN_BLOCK = EGMS_BLOCK
        return egms

    def reset(self) -> None:
        """Undeformed operators, standstill counter at 0; the next step starts the history."""
        self.egms.reset()
        if self.standstill is not None:
            self.standstill.reset()


class EGMSFrictionTerm(_HysteresisCopies, JointTorqueInput, FeedforwardTerm):
    """f = F(τ_J,d)·H(q_d) + F_V(q̇_d, T) [N·m] (module docstring).

    Args:
        robot, result: the robot and its identification (τ_J,d when the context lacks it).
        level: the load-dependent Coulomb level F(τ) (Fc0 [N·m], Fc1, law).
        remainder: F_V(ω, T) [N·m] for arrays of the shape of ω.
        egms: (elements, r_delta, r_k, backlash) of the operators.
        coulomb: include F·H (False: F_V only, eq. (30)'s u_FF beside friction_adaptive).
        temperature_c: fallback temperature [°C]. load: ``'desired'`` or ``'measured'``.
        squared_joints: (n,) mask of joints whose F(τ) is Fc0 + Fc1·τ² although ``level``'s law is
            ``absolute`` (the joint friction section's joints under a load_absolute result), or None.
        standstill: the standstill fade of H, or None (off).
    """

    name = 'friction_egms'
    friction = True

    def __init__(self, robot: RobotModel, result: IdentificationResult | None, level: LoadDependentCoulomb,
                 remainder, egms: dict, coulomb: bool = True, temperature_c: float = DEFAULT_TEMPERATURE_C,
                 load: str = 'desired', notes: tuple[str, ...] = (), squared_joints: np.ndarray | None = None,
                 standstill: StandstillFade | None = None) -> None:
        self._use_joint_torque(robot, result, load)
        self.standstill = standstill
        self.level, self.remainder, self.coulomb = level, remainder, bool(coulomb)
        self.squared_joints = squared_joints
        self.needs_joint_torque = self.coulomb
        self.temperature_c, self.notes = float(temperature_c), tuple(notes)
        self.load_limit = (-robot.effort_limits, robot.effort_limits)
        self._use_egms(robot.n, **egms)

    @classmethod
    def from_result(cls, robot: RobotModel, result: IdentificationResult | None, options=None) -> EGMSFrictionTerm:
        """Factory. Options: ``elements``, ``r_delta``, ``r_k``, ``backlash`` [rad] (E-GMS laws, default the
        joint friction section's, else 4, 4, 2, 0.001), ``band`` [rad/s] (smoothing of the section's Stribeck
        excess, default the section's excess_band, else friction_static's band), ``coulomb`` (include F·H,
        default true), ``temperature_c`` (fallback [°C], default 20), ``load`` (``desired`` or ``measured``),
        ``standstill_fade`` [s] (fade of H at standstill, module docstring; default STANDSTILL_FADE_S, None:
        off), ``standstill_speed`` [rad/s], ``standstill_acceleration`` [rad/s²] and ``standstill_window`` [s]
        (when q̇_d counts as stopped; default 0.01, 0.01 and 0.05)."""
        o = term_options(cls.name, options, {**EGMS_OPTIONS, **STANDSTILL_OPTIONS, 'band': None, 'coulomb': True,
                                             'temperature_c': DEFAULT_TEMPERATURE_C, 'load': 'desired'})
        if result is None:
            raise InputError('friction_egms needs an identification result (its Coulomb level and viscous terms)')
        kind = result.model.get('friction')
        if kind not in egms_laws():
            raise InputError(f'friction_egms: the result\'s friction model is {kind!r}; the E-GMS term takes '
                             f'{egms_laws()} (a single Coulomb level to scale the hysteresis)')
        p, roles = friction_parameters(result, robot), friction_law(kind).roles
        coulomb, load = p[roles['Fc']], p[roles['Fl']] if 'Fl' in roles else np.zeros(robot.n)
        temperature_c = finite(o['temperature_c'], 'friction_egms: temperature_c [°C]')
        remainder = velocity_friction(result, p, robot.joint_names)
        identified = identified_friction(result, robot)
        law = friction_law(kind).load_shape or 'squared'
        squared_joints = None
        if identified is not None:  # the section's joints: its F(τ) (squared law) and F_V (module docstring)
            model, mask = identified
            coulomb = np.where(mask, model.stribeck.Fc, coulomb)
            load = np.where(mask, model.load_coefficient, load)
            if o['band'] is None:  # the band identified with the E-GMS, else friction_static's default
                smoothing = np.broadcast_to(model.stribeck.smoothing, mask.shape)
                band = np.where(smoothing > 0, smoothing, default_band(result))
            else:
                band = positive(o['band'], 'friction_egms: band [rad/s]')
            section = joint_velocity_friction(model, band, temperature_c)
            offset = idim_offset(result, p, robot.n)
            remainder = _per_joint(mask, lambda w, t: section(w, t) + offset, remainder)
            squared_joints = mask if law == 'absolute' else None
        notes = []
        for symbol, values in (('Coulomb level', coulomb), ('load coefficient', load)):
            if np.any(values < 0):
                notes.append(f'negative {symbol} on {np.array(robot.joint_names)[values < 0].tolist()} taken as 0')
        level = LoadDependentCoulomb(np.maximum(coulomb, 0.0), np.maximum(load, 0.0), law)
        return cls(robot, result, level, remainder, _egms_laws(o, robot, identified),
                   flag(o['coulomb'], 'friction_egms: coulomb'), temperature_c, o['load'], tuple(notes),
                   squared_joints, StandstillFade.from_options(o, robot.n, cls.name))

    def _coulomb(self, q, dq, ddq, context, hysteresis) -> np.ndarray:
        load = bounded_load(self.joint_torque(q, dq, ddq, context, q.ndim == 1), self.load_limit)
        level = coulomb_level(self.level, load)
        if self.squared_joints is not None:
            level = np.where(self.squared_joints, self.level.Fc0 + self.level.Fc1 * load * load, level)
        return level * hysteresis

    def evaluate(self, q, dq, ddq, context: FeedforwardContext) -> np.ndarray:
        f = self.remainder(dq, temperature_or_fallback(context, self.temperature_c))
        if self.coulomb:
            f = f + self._coulomb(q, dq, ddq, context, self._hysteresis_run(q, dq, ddq))
        return f

    def step(self, q, dq, ddq, context: FeedforwardContext) -> np.ndarray:
        f = self.remainder(dq, temperature_or_fallback(context, self.temperature_c))
        if self.coulomb:
            f = f + self._coulomb(q, dq, ddq, context, self._hysteresis_step(q, dq, ddq))
        return f


class AdaptiveFrictionTerm(_HysteresisCopies, JointTorqueInput, FeedforwardTerm):
    """f̂ = α̂1·F(τ_J,d)·H(q_d) + α̂2·q̇_d [N·m], eq. (29) (module docstring).

    Args:
        robot, result: the robot and its identification (for τ_J,d when the context lacks it).
        coulomb: Fc0 (n,) [N·m]; load_coefficient: Fc1 (n,) [1/(N·m)] of F(τ) = Fc0 + Fc1·τ².
        egms: (elements, r_delta, r_k, backlash) of the operators.
        alpha: α̂ (n, 2) used when neither the context nor the estimator gives one.
        estimator: an AdaptiveFrictionEstimator whose latest α̂ is read, or None.
        standstill: the standstill fade of H, or None (off).
    """

    name = 'friction_adaptive'
    friction = True

    def __init__(self, robot: RobotModel, result: IdentificationResult | None, coulomb, load_coefficient,
                 egms: dict, alpha=ALPHA_NOMINAL, estimator=None, load: str = 'desired',
                 standstill: StandstillFade | None = None) -> None:
        self._use_joint_torque(robot, result, load)
        self.standstill = standstill
        self.level = LoadDependentCoulomb(np.asarray(coulomb, dtype=float), np.asarray(load_coefficient, dtype=float))
        self.alpha = _alpha(alpha, robot.n)
        self.estimator = estimator
        self.load_limit = (-robot.effort_limits, robot.effort_limits)
        self._use_egms(robot.n, **egms)

    @classmethod
    def from_result(cls, robot: RobotModel, result: IdentificationResult | None, options=None) -> AdaptiveFrictionTerm:
        """Factory. Options: ``estimator`` (an AdaptiveFrictionEstimator: its F(τ), E-GMS laws and α̂),
        ``alpha`` ((2,) or (n, 2), default (1, 0)), ``elements``, ``r_delta``, ``r_k``, ``backlash`` (E-GMS
        laws without an estimator; default the joint friction section's, else 4, 4, 2, 0.001), ``load``
        (``desired`` or ``measured``), ``standstill_fade``, ``standstill_speed``, ``standstill_acceleration``,
        ``standstill_window`` (as friction_egms's)."""
        o = term_options(cls.name, options, {**EGMS_OPTIONS, **STANDSTILL_OPTIONS, 'estimator': None,
                                             'alpha': ALPHA_NOMINAL, 'load': 'desired'})
        estimator, standstill = o['estimator'], StandstillFade.from_options(o, robot.n, cls.name)
        if estimator is not None:
            if not all(hasattr(estimator, name) for name in ('coulomb', 'load_coefficient', 'egms', 'alpha')):
                raise InputError('friction_adaptive: estimator must be a dynid.estimate.AdaptiveFrictionEstimator')
            if tuple(estimator.joint_names) != tuple(robot.joint_names):
                raise InputError(f'friction_adaptive: the estimator is for joints {list(estimator.joint_names)}, '
                                 f'the robot has {list(robot.joint_names)}')
            source = estimator.egms
            table = source.backlash_table
            laws = {'elements': source.elements, 'r_delta': source.r_delta, 'r_k': source.r_k,
                    'backlash': table[:, 0] if table.shape[1] == 1 else table}
            return cls(robot, result, estimator.coulomb, estimator.load_coefficient, laws, o['alpha'], estimator,
                       o['load'], standstill)
        if result is None:
            raise InputError('friction_adaptive needs an identification result or an estimator (option estimator)')
        kind = result.model.get('friction')
        if kind not in adapted_laws():
            raise InputError(f'friction_adaptive: the result\'s friction model is {kind!r}, the adaptive friction '
                             f'takes {adapted_laws()} (identify with the friction law viscous_coulomb or '
                             f'load_squared for it)')
        p, roles = friction_parameters(result, robot), friction_law(kind).roles
        coulomb, load = p[roles['Fc']], p.get(roles.get('Fl'), np.zeros(robot.n))
        identified = identified_friction(result, robot)
        if identified is not None:  # the section's Fc0 and Fc1 where it covers the joint
            model, mask = identified
            coulomb, load = np.where(mask, model.stribeck.Fc, coulomb), np.where(mask, model.load_coefficient, load)
        if np.any(coulomb <= 0):
            raise InputError(f'friction_adaptive: the Coulomb level Fc is <= 0 on '
                             f'{np.array(robot.joint_names)[coulomb <= 0].tolist()} (α1 scales it)')
        return cls(robot, result, coulomb, np.maximum(load, 0.0), _egms_laws(o, robot, identified), o['alpha'], None,
                   o['load'], standstill)

    def current_alpha(self, context: FeedforwardContext) -> np.ndarray:
        """α̂ (n, 2): the context's, else the estimator's latest, else the term's own."""
        alpha = context.alpha
        if alpha is not None:  # a checked context's α̂ is (n, 2) already (the Feedforward checks it)
            return alpha if type(alpha) is np.ndarray and alpha.shape == self.alpha.shape \
                else np.broadcast_to(alpha, self.alpha.shape)
        return self.estimator.alpha if self.estimator is not None else self.alpha

    def regressor(self, q, dq, ddq, context, hysteresis) -> tuple[np.ndarray, np.ndarray]:
        """Y = (F(τ_J,d)·H, q̇_d), eq. (24) on desired signals, as two arrays of the shape of q."""
        load = bounded_load(self.joint_torque(q, dq, ddq, context, q.ndim == 1), self.load_limit)
        return coulomb_level(self.level, load) * hysteresis, dq

    def _torque(self, q, dq, ddq, context, hysteresis) -> np.ndarray:
        alpha = self.current_alpha(context)
        coulomb, velocity = self.regressor(q, dq, ddq, context, hysteresis)
        return alpha[:, 0] * coulomb + alpha[:, 1] * velocity

    def evaluate(self, q, dq, ddq, context: FeedforwardContext) -> np.ndarray:
        return self._torque(q, dq, ddq, context, self._hysteresis_run(q, dq, ddq))

    def step(self, q, dq, ddq, context: FeedforwardContext) -> np.ndarray:
        return self._torque(q, dq, ddq, context, self._hysteresis_step(q, dq, ddq))


def _per_joint(mask: np.ndarray, covered, other):
    """F_V(ω, T) = covered(ω, T) on the joints of ``mask``, other(ω, T) elsewhere."""
    def remainder(w, t):
        return np.where(mask, covered(w, t), other(w, t))
    return remainder


def _alpha(value, n: int) -> np.ndarray:
    try:
        array = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        array = np.full(1, np.nan)
    if array.shape not in ((2,), (n, 2)) or not np.all(np.isfinite(array)):
        raise InputError(f'friction_adaptive: alpha must be (α1, α2) or ({n}, 2) finite values, got {value!r}')
    return np.broadcast_to(array, (n, 2)).copy()


FRICTION_EGMS = TermPlugin('friction_egms', 'E-GMS friction with presliding hysteresis', EGMSFrictionTerm.from_result)
FRICTION_ADAPTIVE = TermPlugin('friction_adaptive', "E-GMS friction scaled by the estimator's α̂",
                               AdaptiveFrictionTerm.from_result)
