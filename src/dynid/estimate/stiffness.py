"""Online joint-stiffness estimation from the two joint encoders and the motor current (RLS-DF*).

Madsen, Rosenlund, Brandt and Zhang 2019 (ICRA). Per joint j and sample k:

    φ = θ − q                                            deformation [rad, link side]
    τ_E = K_τ·i − B·θ̈ − F(θ̇) − D·φ̇                     virtual flexibility torque [N·m], eq. (17)/(19)
    ψ = [φ, φ³, …, φ^(2P−1)]                              eqs. (7)–(8)
    α̂ ← RLS-DF*(ψ, τ_E)                                  eq. (18), :class:`DirectionalForgettingRLS`
    k(φ) = Σ_p (2p − 1)·α_p·φ^(2p−2),  k(0) = α1          eqs. (9)–(10); k(0) is the wear indicator

θ is the rotor position in link units (motor encoder angle / gear ratio), q the link position, i
the motor current [A]; K_τ [N·m/A] and B [kg·m²] are link-side (``JointDrives``). The motor side
(17) is used as in the paper: it needs no rigid-body model and no payload.

Alignment. q and θ go through :class:`dynid.signal.AlignedStateEstimator` (causal Savitzky–Golay
smoothing plus central differences, Madsen 2020, ch.6 §6.1); the current and temperature are
delayed by the same ``delay`` samples, so every term of τ_E and ψ describes the same past sample.
The paper uses plain backward differences without filtering; with them B·θ̈ of a 2^14-count motor
encoder at 1 kHz is dominated by quantization noise (hundreds of N·m on the UR5e base joint).

Friction. F is the static map of an identification result (``viscous_coulomb`` model):
F(θ̇) = Fc·sgn(θ̇) + Fv·θ̇ + τ0, on the rotor velocity; a ``load_squared`` result adds Fl·τ²·sgn(θ̇)
with τ = K_τ·i − B·θ̈, the joint torque up to the friction itself. The paper uses the generalized Maxwell-slip
model (GMS, eqs. (11)–(14)) instead: the static map jumps by 2·Fc at every velocity reversal, where
the real friction passes through pre-sliding over a small rotor angle, so for the few milliseconds
around a reversal τ_E is wrong by up to Fc (a few N·m on the UR5e base joint) and at rest by
whatever the stiction holds (up to Fc). Most such samples have small |φ| and fall in the dead zone
(below); those that do not bias α̂ slightly. With ``hysteresis`` (an :class:`dynid.friction.egms.EGMS`)
sgn(θ̇) is replaced by the E-GMS output H(θ) ∈ [−1, 1] (Madsen 2020, ch.6 eqs. (14)–(15), as the
adaptive friction estimator uses it), driven by the measured rotor position delayed to the
described sample: pre-sliding at reversals and stiction at rest are then modelled instead of
jumping. It needs the joint's operators (element laws, backlash) to be known: with the thesis'
default operators where the true ones differ it fits about as well as the static map on the twin's
base-joint experiment of ``benchmarks/bench_estimation.py`` (benchmarks/README.md, "The figures behind the
defaults"). A result identified with friction on the link velocity
(``model['friction_velocity'] == 'link'``) is used on θ̇ all the same: in link units θ̇ and q̇
differ only by φ̇.

Dead zone. A joint at rest still shows a deformation of a few encoder quanta (and a friction
error), and directional forgetting keeps forgetting along that noise direction: α̂1 drifts over
minutes (see :mod:`dynid.estimate.rls`). Samples with |φ| ≤ ``deadzone`` therefore enter the RLS
with ψ = 0 (no gain, no forgetting, only δI). Default: twice the sum of the two encoder quanta, i.e.
four times the worst-case rounding error of φ = θ − q: 2·(2π/(2^14·r) + 2π/2^20) = 1.96e-5 rad for
the default 14-bit motor and 20-bit link encoders with r = 101 (0.8 N·m at α1 = 4e4 N·m/rad).
Samples before the front end is ``valid`` (its start-up transient) get ψ = 0 as well.

Rest. The static map F(θ̇) holds for a sliding joint only. Near θ̇ = 0 the real friction is anywhere
between −Fs and Fs (stiction, pre-sliding, the Stribeck rise), while Fc·sgn(θ̇) of a noisy velocity
estimate flips between ±Fc: a joint resting under load (φ well outside the dead zone) would learn
from τ_E errors of up to Fs + Fc. Samples with |θ̇| < ``min_velocity`` (0.05 rad/s by default, link
units) therefore get ψ = 0 too. Measured on a ``dynid demo`` recording of the UR5e twin (held-out
and tracking runs, 41 s, with its rests between runs; friction map identified by the demo): without
this gate k0 of the elbow settled at 43 % of the twin's α1 and the other deflected joints within
1–8 %; with it all five deflected joints are within 2 % (0.02 and 0.1 rad/s give the same within
0.2 %; with the twin's true friction fed in instead of the map, within 0.4 %).

Fit. ``fit`` is a running NRMSE fit (Madsen et al. 2019, eq. (15)), 100·(1 − ‖y − ŷ‖/‖y − ȳ‖),
of the prediction ŷ = ψᵀα̂(k−1) made before each sample is used (one-step-ahead, not the a posteriori
fit), against y = τ_E, over the learning samples only (outside the dead zone, moving, front end valid),
exponentially weighted with time constant ``fit_window_s`` (10 s by default, half the RLS memory of
1/(1 − μ) = 20 000 samples): the norms are sums λ^(age)·(·)² with λ = exp(−1/(rate·window)).
NaN until a joint has had a learning sample.

Convergence. The fit measures how much of τ_E's spread the model explains, which on a joint the motion
hardly deflects (|φ| a few dead zones) stays low however well α̂1 is determined: the one-step error is
then mostly sensor noise. ``relative_std`` is the least-squares standard deviation of α̂1 instead,
sqrt(P11·σ̂²)/|α̂1|, with σ̂² the mean squared one-step error of the same running sums; a joint counts
as converged when it is at most ``CONVERGED_RELATIVE_STD``. It assumes white errors, and the friction
map's errors are not: on the ``dynid demo`` recording of the "Rest" paragraph it read 0.03–0.8 % where
the error against the twin's α1 was 0.0–1.7 % (fit 44–99 %).

Changes. Directional forgetting with the paper's μ = 0.99995 remembers about 20 s of excitation: a
stiffness that halves is followed only over tens of seconds (on the twin's base-joint experiment the
curve fit against the new stiffness is 83 % 5 s after a halving, 87 % after 10 s; paper: 95.2 %
after 10 s). A smaller μ follows faster but makes the settled estimate noisier. Instead, the
estimator watches for a change and then restarts the joint's covariance at P(0), keeping α̂, so it
learns again at the speed of the start (covariance resetting, as in Goodwin and Sin 1984). The
statistic is the relative stiffness error the recent prediction errors ε = τ_E − ψᵀα̂ point to,
g = |Σ ε·φ / Σ φ²| / α̂1, sums exponentially weighted over ``change_window_s`` (0.25 s) of
learning samples: the least-squares correction of α1 over the window, relative. A change is
declared when g exceeds ``change_threshold`` (0.2: a change of the small-deformation stiffness by
20 %) on a joint whose g had stayed below half the threshold for ``change_holdoff_s`` (2 s) up to
three windows before. That last condition keeps an estimate that has not settled, or wanders with
its model's errors (friction at reversals, unmodelled load dependence), from raising alarms; such
a joint is followed by forgetting alone. On the twin's base-joint experiment g stays below 0.075
without a change and reaches 0.53 within 0.35 s of a halving (detected then; curve fit 99.8 % 5 s
after). Checks happen every ``CHECK_PERIOD_S`` of samples at fixed sample counts, so any batching
gives the same result. ``changes`` counts them, ``last_change_s`` tells when; the running fit
restarts with the covariance.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
from scipy.signal import lfilter

from dynid.checks import batch, per_joint, positive
from dynid.errors import InputError
from dynid.estimate.rls import FORGETTING, REGULARIZATION, DirectionalForgettingRLS
from dynid.friction.egms import EGMS
from dynid.friction.laws import friction_law, law_names
from dynid.friction.power_law import power_term
from dynid.model.drives import JointDrives
from dynid.signal.aligned import AlignedStateEstimator
from dynid.signal.causal import DelayLine

MOTOR_COUNTS = 2**14  # counts per motor revolution of the default motor encoder
LINK_COUNTS = 2**20  # counts per link revolution of the default link encoder
CURVE_POINTS = 201  # points of the φ grid of :func:`stiffness_curve_fit`
CHECK_PERIOD_S = 0.02  # a change is looked for every this many seconds of samples
CONVERGED_RELATIVE_STD = 0.02  # relative standard deviation of α̂1 at or below which a joint counts as converged
CALM_LAG_WINDOWS = 3  # a change is declared against the calm of this many error windows before
#: what a joint's stiffness is where |φ| = |θ − q| never left the dead zone (the encoders' resolution): no
#: deflection to estimate from, e.g. motor_states that are the link positions again (one encoder per joint)
NO_DEFLECTION = 'no deflection measured'


@dataclass(frozen=True)
class StiffnessEstimate:
    """History of one :meth:`StiffnessEstimator.update` batch; all arrays (N, J), ``alpha`` (N, J, P).

    Every row describes the sample ``delay`` samples before the corresponding input row.

    Attributes:
        alpha: α̂ after the sample [N·m/rad, N·m/rad³, …].
        stiffness: k(φ) at the sample's deformation [N·m/rad]; stiffness_at_zero: k(0) = α̂1.
        phi: deformation φ = θ − q [rad]. tau_e: virtual measurement τ_E, eq. (17) [N·m].
        tau_e_hat: predicted ψ(φ)ᵀα̂ before the sample [N·m] (for every sample, in the dead zone too).
        learning: the sample entered the RLS (outside the dead zone, moving, front end valid).
        fit: running NRMSE fit [%] of tau_e_hat against tau_e (module docstring).
        temperature: the temperature delayed to the same sample [°C] (NaN if not given).
        changed: a change of the stiffness was detected at the sample (covariance restarted).
        delay: samples between the newest input and the sample described.
    """

    alpha: np.ndarray
    stiffness: np.ndarray
    stiffness_at_zero: np.ndarray
    phi: np.ndarray
    tau_e: np.ndarray
    tau_e_hat: np.ndarray
    learning: np.ndarray
    fit: np.ndarray
    temperature: np.ndarray
    changed: np.ndarray
    delay: int


class StiffnessEstimator:
    """RLS-DF* estimate of the joint stiffness τ_E(φ) of J joints at once (module docstring).

    Args:
        drives: link-side drive gain K_τ [N·m/A], rotor inertia B [kg·m²] and gear ratio of each
            joint (``robot.drives``); None is refused.
        friction: the static friction map: an ``IdentificationResult`` (its ``friction()`` per joint
            and, if present, its ``drive_gains`` replacing K_τ), a mapping joint name →
            {'Fc' [N·m], 'Fv' [N·m·s/rad], 'tau0' [N·m]} (missing symbols 0), or None (no friction).
        rate_hz: sample rate [Hz].
        order: P, number of odd powers in ψ (2: [φ, φ³], the paper's choice).
        damping: transmission damping D [N·m·s/rad], scalar or (J,); the paper gives no value.
        forgetting, regularization: μ and δ of eq. (18) (paper: 0.99995, 0.1).
        p0: initial covariance diagonal, (P,) or (J, P); default 1e9^p for p = 1..P, the paper's
            diag(1e9, 1e18) for P = 2 (φ in rad, τ in N·m).
        deadzone: |φ| [rad] at or below which ψ = 0, scalar or (J,); default from the encoder
            resolutions (module docstring).
        min_velocity: |θ̇| [rad/s, link units] below which ψ = 0 (module docstring, "Rest"); 0: learn at rest too.
        motor_counts, link_counts: encoder counts per motor / link revolution, for the default dead zone.
        fit_window_s: time constant of the running fit [s].
        window: Savitzky–Golay window of the front end (default 101 samples at 1 kHz, scaled).
        change_threshold: relative stiffness error |Σεφ/Σφ²|/α̂1 over ``change_window_s`` above
            which a joint's stiffness is taken to have changed and its covariance restarts (module
            docstring, "Changes"); None: never.
        change_window_s: time constant of those sums [s].
        hysteresis: E-GMS operators (J joints) whose output replaces sgn(θ̇) in the Coulomb term
            (module docstring, "Friction"); None: the static map.
        change_holdoff_s: how long [s of learning] the relative error must have stayed below half
            the threshold before a change can be declared: an estimate that has not settled (after
            the start, a restart, or on a joint whose model errors move it) cannot tell a change
            from its own wandering.

    Attributes:
        alpha (J, P), stiffness (J,) k(φ) at the last φ, stiffness_at_zero (J,), phi, tau_e,
        tau_e_hat, fit (J,) of the last sample; phi_max (J,): largest |φ| learned from [rad];
        deflection_max (J,): largest |φ| of any valid sample [rad] (:attr:`deflected`);
        changes (J,): stiffness changes detected since the last reset; last_change_s (J,): when
        the last one was detected [s of described samples since the reset; NaN: none];
        before_change (J,): α̂1 when it was detected [N·m/rad]; time_s: described samples since
        the reset [s];
        rls: the :class:`DirectionalForgettingRLS`; front_end: the :class:`AlignedStateEstimator`.
    """

    def __init__(self, drives: JointDrives | None, friction=None, *, rate_hz: float = 1000.0, order: int = 2,
                 damping=0.0, forgetting: float = FORGETTING, regularization: float = REGULARIZATION, p0=None,
                 deadzone=None,
                 motor_counts: int = MOTOR_COUNTS, link_counts: int = LINK_COUNTS, fit_window_s: float = 10.0,
                 window: int | None = None, change_threshold: float | None = 0.2, change_window_s: float = 0.25,
                 change_holdoff_s: float = 2.0, hysteresis: EGMS | None = None, min_velocity: float = 0.05) -> None:
        if drives is None:
            raise InputError('stiffness estimation needs drive data (drive gain and rotor inertia per joint); '
                             'the robot model has none')
        self.joint_names = tuple(drives.joint_names)
        J = self.n_joints = len(self.joint_names)
        if isinstance(order, bool) or not isinstance(order, int | np.integer) or order < 1:
            raise InputError(f'order must be a positive integer, got {order!r}')
        self.order = int(order)
        self.rate_hz = float(rate_hz)
        self.drive_gain = drives.drive_gain.copy()
        self.rotor_inertia = drives.rotor_inertia.copy()
        self.Fc, self.Fv, self.tau0, self.Fl = np.zeros(J), np.zeros(J), np.zeros(J), np.zeros(J)
        self.Fs, self.stribeck = np.zeros(J), None  # the result's Stribeck excess (friction_torque), or none
        self.exponent = np.ones(J)  # α of the viscous term Fv·sgn(θ̇)·|θ̇|^α (the comprehensive law's; else 1)
        self.power_velocity = None  # v_s of the comprehensive law's shifted power term (dynid.friction.power_law)
        self._set_friction(friction)
        self.damping = per_joint(damping, J, 'damping')
        if np.any(self.damping < 0):
            raise InputError(f'damping must be >= 0, got {self.damping.tolist()}')
        if deadzone is None:
            for name, value in (('motor_counts', motor_counts), ('link_counts', link_counts)):
                if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 1:
                    raise InputError(f'{name} must be a positive integer, got {value!r}')
            deadzone = 2.0 * (2 * np.pi / (motor_counts * drives.gear_ratio) + 2 * np.pi / link_counts)
        self.deadzone = per_joint(deadzone, J, 'deadzone')
        if np.any(self.deadzone < 0):
            raise InputError(f'deadzone must be >= 0, got {self.deadzone.tolist()}')
        if isinstance(min_velocity, bool) or not isinstance(min_velocity, int | float | np.floating) \
                or not (math.isfinite(min_velocity) and min_velocity >= 0):
            raise InputError(f'min_velocity must be a number >= 0 [rad/s], got {min_velocity!r}')
        self.min_velocity = float(min_velocity)
        if not (math.isfinite(fit_window_s) and fit_window_s > 0):
            raise InputError(f'fit_window_s must be > 0, got {fit_window_s!r}')
        self.fit_window_s = float(fit_window_s)
        self._fit_decay = math.exp(-1.0 / (self.rate_hz * self.fit_window_s))
        self.change_threshold = None if change_threshold is None else positive(change_threshold, 'change_threshold')
        change_window_s = positive(change_window_s, 'change_window_s')
        self._change_decay = math.exp(-1.0 / (self.rate_hz * change_window_s))
        self._change_samples = self.rate_hz * change_window_s  # the error window's weight when full
        self._holdoff = self.rate_hz * positive(change_holdoff_s, 'change_holdoff_s')
        self._check_every = max(1, round(CHECK_PERIOD_S * self.rate_hz))
        if p0 is None:
            p0 = [1e9 ** p for p in range(1, self.order + 1)]
        self.rls = DirectionalForgettingRLS(self.order, J, forgetting=forgetting, regularization=regularization,
                                            p0=p0)
        if hysteresis is not None and (not isinstance(hysteresis, EGMS) or hysteresis.n != J):
            raise InputError(f'hysteresis must be an EGMS for {J} joints or None')
        self.hysteresis = hysteresis
        self.front_end = AlignedStateEstimator(J, self.rate_hz, rotor=True, delayed=('current', 'temperature'),
                                               window=window)
        self._powers = 2 * np.arange(self.order) + 1  # 1, 3, 5, ...
        self.rotor_delay = DelayLine(self.front_end.delay, J)  # θ to the described sample, for H
        self.reset()

    @classmethod
    def from_robot(cls, robot, result=None, **options) -> StiffnessEstimator:
        """An estimator for all joints of ``robot`` with ``robot.drives``, friction from ``result``."""
        if robot.drives is None:
            raise InputError(f'stiffness estimation needs drive data; robot {robot.name!r} has none')
        return cls(robot.drives, result, **options)

    def _set_friction(self, friction) -> None:
        if friction is None:
            return
        if hasattr(friction, 'friction') and callable(friction.friction):  # an IdentificationResult
            if tuple(friction.joint_names) != self.joint_names:
                raise InputError(f'the identification result is for joints {list(friction.joint_names)}, '
                                 f'the drives for {list(self.joint_names)}')
            kind = friction.model.get('friction', 'viscous_coulomb')
            law = friction_law(kind) if kind in law_names() else None
            if law is None or not (law.coulomb_viscous and law.load_shape in (None, 'squared') or not law.symbols):
                raise InputError(f"the stiffness estimator uses the 'viscous_coulomb', 'load_squared' or "
                                 f"'comprehensive' friction map; the result has {kind!r}")
            if friction.drive_gains is not None:
                self.drive_gain = np.asarray(friction.drive_gains, dtype=float).copy()
            self.stribeck = friction.stribeck  # the Stribeck excess Fs·sgn(θ̇)·exp(−(|θ̇|/Vs)^μ) where kept
            if law.power_viscous:  # Li et al. 2024 eq. (3): fc, fv·sgn(ω)·|ω|^α, fo, fL
                self.exponent, self.power_velocity = friction.power_exponents(), friction.power_velocity
            rename = {symbol: part for part, symbol in law.roles.items()}  # the law's symbols as Fc, Fv, tau0, Fl
            friction = {joint: {rename.get(symbol, symbol): value for symbol, value in values.items()}
                        for joint, values in friction.friction().items()}
        if not isinstance(friction, Mapping):
            raise InputError(f'friction must be an identification result, a mapping joint -> '
                             f"{{'Fc', 'Fv', 'tau0'}} or None, got {type(friction).__name__}")
        missing = [name for name in self.joint_names if name not in friction]
        if missing:
            raise InputError(f'friction parameters missing for joints {missing}')
        try:
            for j, name in enumerate(self.joint_names):
                values = friction[name]
                self.Fc[j] = float(values.get('Fc', 0.0))
                self.Fv[j] = float(values.get('Fv', 0.0))
                self.tau0[j] = float(values.get('tau0', 0.0))
                self.Fl[j] = float(values.get('Fl', 0.0))
                self.Fs[j] = float(values.get('Fs', 0.0))
        except (AttributeError, TypeError, ValueError):
            raise InputError("friction parameters must be numbers under 'Fc', 'Fv', 'tau0' per joint") from None
        if not np.all(np.isfinite(np.concatenate((self.Fc, self.Fv, self.tau0, self.Fl, self.Fs)))):
            raise InputError('friction parameters must be finite')

    def reset(self) -> None:
        """Back to α̂(0), P(0) and an empty front end (the next sample primes it again)."""
        J = self.n_joints
        self.rls.reset()
        self.front_end.reset()
        self.rotor_delay.reset()
        if self.hysteresis is not None:
            self.hysteresis.reset()
        self._fit_sums = np.zeros((4, J))  # exponentially weighted Σw, Σy, Σy², Σ(y − ŷ)²
        self.residual_sums = np.zeros((2, J))  # learning samples and Σ(y − ŷ)² since the reset (residual_rms)
        self._change_sums = np.zeros((3, J))  # exponentially weighted over change_window_s: Σw, Σφ², Σεφ
        # Learning samples the relative error has stayed below half the threshold, at the last checks.
        self._calm = deque(maxlen=max(2, math.ceil(CALM_LAG_WINDOWS * self._change_samples / self._check_every)))
        self._count = 0  # samples described since the reset
        self.changes = np.zeros(J, dtype=np.int64)
        self.last_change_s = np.full(J, np.nan)
        self.before_change = np.full(J, np.nan)
        self.phi_max = np.zeros(J)
        self.deflection_max = np.zeros(J)
        nan = np.full(J, np.nan)
        self.phi, self.tau_e, self.tau_e_hat, self.fit, self.stiffness = (nan.copy() for _ in range(5))

    @property
    def deflected(self) -> np.ndarray:
        """(J,) whether a deflection beyond the dead zone was measured since the reset (else :data:`NO_DEFLECTION`:
        α̂ stays at its start and the fit undefined)."""
        return self.deflection_max > self.deadzone

    @property
    def alpha(self) -> np.ndarray:
        """α̂ (J, P) [N·m/rad, N·m/rad³, …]."""
        return self.rls.theta.copy()

    @property
    def time_s(self) -> float:
        """Time of the last described sample since the reset [s]."""
        return (self._count - 1 - self.delay) / self.rate_hz

    @property
    def stiffness_at_zero(self) -> np.ndarray:
        """k(0) = α̂1 (J,) [N·m/rad], the small-deformation stiffness (wear indicator)."""
        return self.rls.theta[:, 0].copy()

    @property
    def relative_std(self) -> np.ndarray:
        """Standard deviation of α̂1 relative to |α̂1| (J,) [-] (module docstring, "Convergence"); NaN
        before a joint's first learning sample."""
        count, _, _, errors = self._fit_sums
        with np.errstate(divide='ignore', invalid='ignore'):
            variance = np.where(count > 0, errors / count, np.nan)
            return np.sqrt(self.rls.P[:, 0, 0] * variance) / np.abs(self.rls.theta[:, 0])

    @property
    def residual_rms(self) -> np.ndarray:
        """RMS of the one-step prediction error τ_E − ψᵀα̂ over the learning samples since the reset (J,) [N·m];
        NaN for a joint that has not learned."""
        count, squares = self.residual_sums
        with np.errstate(divide='ignore', invalid='ignore'):
            return np.where(count > 0, np.sqrt(squares / count), np.nan)

    @property
    def converged(self) -> np.ndarray:
        """Per joint (J,): ``relative_std`` ≤ CONVERGED_RELATIVE_STD."""
        relative = self.relative_std
        return np.isfinite(relative) & (relative <= CONVERGED_RELATIVE_STD)

    @property
    def delay(self) -> int:
        """Samples between the newest input and the sample the outputs describe."""
        return self.front_end.delay

    def regressor(self, phi) -> np.ndarray:
        """ψ(φ) = [φ, φ³, …] (…, P), eq. (8)."""
        return np.asarray(phi, dtype=float)[..., None] ** self._powers

    def stiffness_of(self, phi, alpha=None) -> np.ndarray:
        """k(φ) = Σ (2p − 1)·α_p·φ^(2p−2), eq. (9)–(10), for φ (…, J) and α (…, J, P) (default α̂)."""
        alpha = self.rls.theta if alpha is None else alpha
        phi = np.asarray(phi, dtype=float)[..., None]
        return (alpha * self._powers * phi ** (self._powers - 1)).sum(axis=-1)

    def friction_torque(self, rotor_velocity, load_torque=0.0, hysteresis=None) -> np.ndarray:
        """F = (Fc + Fl·τ²)·s + Fv·sgn(θ̇)·|θ̇|^α + τ0 [N·m] for θ̇ (…, J) [rad/s, link units], s = sgn(θ̇)
        (static map) or the E-GMS output H ∈ [−1, 1] given as ``hysteresis``; α = 1 but for a result in the
        comprehensive law (Li et al. 2024 eq. (3)), whose exponents it is, its power term written about v_s
        (:func:`dynid.friction.power_law.power_term`) where the result says so; + Fs·sgn(θ̇)·exp(−(|θ̇|/Vs)^μ) where the
        result's model choice kept a Stribeck excess (:class:`dynid.identify.result.stribeck.StribeckExcess`).

        τ [N·m] is the joint (load) torque of the load-dependent Coulomb term (``load_squared`` and
        ``comprehensive`` results; Fl = 0 otherwise)."""
        w = np.asarray(rotor_velocity, dtype=float)
        shape = np.sign(w) if hysteresis is None else hysteresis
        viscous = self.Fv * power_term(w, self.exponent, self.power_velocity)
        friction = (self.Fc + self.Fl * np.square(load_torque)) * shape + viscous + self.tau0
        return friction if self.stribeck is None else friction + self.stribeck.torque(w, self.Fs)

    def update(self, q, theta, current, temperature=None) -> StiffnessEstimate:
        """Advance by a batch of N samples in model joint order; any split of a record gives the same result.

        Args:
            q: link positions (N, J) [rad].
            theta: rotor positions in link units (N, J) [rad] (motor encoder angle / gear ratio);
                None is refused.
            current: motor currents (N, J) [A].
            temperature: joint temperatures (N, J) [°C], optional (only delayed and passed on).
        """
        J = self.n_joints
        if theta is None:
            raise InputError('stiffness estimation needs the motor encoder positions (theta); none were given')
        q = batch(q, 'q', J)
        n = q.shape[0]
        theta = batch(theta, 'theta', J, n)
        current = batch(current, 'current', J, n)
        temperature = np.full((n, J), np.nan) if temperature is None else batch(temperature, 'temperature', J, n)
        state = self.front_end.run(q, theta, {'current': current, 'temperature': temperature})

        phi = state.theta - state.q
        drive = self.drive_gain * state.delayed['current'] - self.rotor_inertia * state.ddtheta
        # The load of the Coulomb term: the joint torque up to friction (K_τ·i − B·θ̈).
        hysteresis = None if self.hysteresis is None or n == 0 else self.hysteresis.run(self.rotor_delay.run(theta))
        tau_e = drive - self.friction_torque(state.dtheta, drive, hysteresis) - self.damping * (state.dtheta - state.dq)
        psi = self.regressor(phi)
        valid = np.broadcast_to(np.asarray(state.valid, dtype=bool).reshape(-1, 1), (n, J))
        learning = valid & (np.abs(phi) > self.deadzone) & (np.abs(state.dtheta) >= self.min_velocity) \
            & np.isfinite(tau_e)
        alpha_before = self.rls.theta.copy()
        alphas, changed = self._learn(np.where(learning[:, :, None], psi, 0.0), np.where(learning, tau_e, 0.0),
                                      phi, tau_e, psi, learning)
        previous = np.concatenate((alpha_before[None], alphas[:-1]), axis=0)
        tau_e_hat = np.einsum('njp,njp->nj', psi, previous)
        fit = np.empty((n, J))
        fit_start = 0
        for row in np.flatnonzero(changed.any(axis=1)):  # the fit up to a restart, then that of the new model
            span = slice(fit_start, row + 1)
            fit[span] = self._running_fit(tau_e[span], tau_e_hat[span], learning[span])
            self._fit_sums[:, changed[row]] = 0.0
            fit_start = row + 1
        span = slice(fit_start, n)
        fit[span] = self._running_fit(tau_e[span], tau_e_hat[span], learning[span])
        stiffness = self.stiffness_of(phi, alphas)

        if n:
            self.phi, self.tau_e, self.tau_e_hat, self.fit = phi[-1], tau_e[-1], tau_e_hat[-1], fit[-1]
            self.stiffness = stiffness[-1]
            self.phi_max = np.maximum(self.phi_max, np.where(learning, np.abs(phi), 0.0).max(axis=0))
            self.deflection_max = np.maximum(self.deflection_max, np.where(valid, np.abs(phi), 0.0).max(axis=0))
        return StiffnessEstimate(alpha=alphas, stiffness=stiffness, stiffness_at_zero=alphas[:, :, 0].copy(),
                                 phi=phi, tau_e=tau_e, tau_e_hat=tau_e_hat, learning=learning, fit=fit,
                                 temperature=state.delayed['temperature'], changed=changed, delay=state.delay)

    def _learn(self, psi_learned, tau_learned, phi, tau_e, psi, learning):
        """The RLS over the batch with change detection: (α̂ after each sample (N, J, P), restarts (N, J)).

        The RLS runs over the rest of the batch at once; the checks are then made on its prediction
        errors, and where one declares a change the RLS goes back, runs up to that sample and restarts
        the covariance there (module docstring, "Changes")."""
        n, J = tau_e.shape
        alphas, changed = np.empty(psi.shape), np.zeros((n, J), dtype=bool)
        start = 0
        while start < n:
            before = self.rls.snapshot()
            part = slice(start, n)
            alphas[part] = self.rls.run(psi_learned[part], tau_learned[part])
            if self.change_threshold is None:
                self._count += n
                break
            previous = np.concatenate((before[0][None], alphas[start:n - 1]), axis=0)
            error = tau_e[part] - np.einsum('njp,njp->nj', psi[part], previous)
            hit = self._scan(phi[part], error, learning[part], alphas[part, :, 0])
            if hit is None:
                break
            row, joints = hit
            self.rls.restore(before)
            end = start + row + 1
            alphas[start:end] = self.rls.run(psi_learned[start:end], tau_learned[start:end])
            self.rls.restart_covariance(joints)
            changed[end - 1] = joints
            start = end
        return alphas, changed

    def _scan(self, phi: np.ndarray, error: np.ndarray, learning: np.ndarray, alpha1: np.ndarray):
        """Advance the change watch over m samples: (row, joints) of the first check that declares a
        change (the watch then stands just after that row), or None (it stands after the last row)."""
        m = phi.shape[0]
        phi = np.where(learning, phi, 0.0)
        terms = np.stack((learning.astype(float), phi * phi, np.where(learning, error, 0.0) * phi))  # (3, m, J)
        decay = self._change_decay
        sums = lfilter([1.0], [1.0, -decay], terms, axis=1, zi=decay * self._change_sums[:, None, :])[0]
        first = self._check_every - 1 - self._count % self._check_every  # the row of the next check
        for row in range(first, m, self._check_every):
            count, squares, products = sums[:, row]
            with np.errstate(divide='ignore', invalid='ignore'):
                relative = np.abs(products / squares / alpha1[row])
            informed = count >= 0.5 * self._change_samples
            # Calm as it was a few windows ago: a change raises the error over several checks.
            settled = self._calm[0] >= self._holdoff if len(self._calm) == self._calm.maxlen else \
                np.zeros_like(informed)
            joints = informed & settled & (relative > self.change_threshold)
            calm = informed & (relative < 0.5 * self.change_threshold)
            last = self._calm[-1] if self._calm else np.zeros(self.n_joints)
            self._calm.append(np.where(calm, last + self._check_every, np.where(informed, 0.0, last)))
            if joints.any():
                for history in self._calm:
                    history[joints] = 0.0
                self._count += row + 1
                self._change_sums = sums[:, row].copy()
                self.changes += joints
                self.last_change_s[joints] = (self._count - 1 - self.delay) / self.rate_hz
                self.before_change[joints] = alpha1[row, joints]
                return row, joints
        self._count += m
        if m:
            self._change_sums = sums[:, -1].copy()
        return None

    def _running_fit(self, y: np.ndarray, y_hat: np.ndarray, learning: np.ndarray) -> np.ndarray:
        """Exponentially weighted NRMSE fit after each sample (N, J) (module docstring)."""
        w = learning.astype(float)
        y = np.where(learning, y, 0.0)
        e = np.where(learning, y - y_hat, 0.0)
        lam = self._fit_decay
        terms = np.stack((w, y, y * y, e * e))  # (4, N, J)
        sums = lfilter([1.0], [1.0, -lam], terms, axis=1, zi=lam * self._fit_sums[:, None, :])[0]
        if sums.shape[1]:
            self._fit_sums = sums[:, -1].copy()
            self.residual_sums += np.stack((w.sum(axis=0), (e * e).sum(axis=0)))
        count, total, squares, errors = sums
        with np.errstate(divide='ignore', invalid='ignore'):
            spread = squares - np.where(count > 0, total * total / count, 0.0)
            fit = 100.0 * (1.0 - np.sqrt(errors / np.maximum(spread, 0.0)))
        return np.where(count > 0, fit, np.nan)


def stiffness_curve_fit(alpha_hat, alpha_true, phi_range, points: int = CURVE_POINTS):
    """NRMSE fit [%] of the estimated flexibility torque curve τ_E(φ) = ψ(φ)ᵀα̂ against the true one.

    The figure of merit of Madsen, Rosenlund, Brandt and Zhang 2019 (eq. (15) applied to the curves
    of their Fig. 8: 96.6 % online after 35 s, 96.9 % for the offline fit). The paper compares over
    its force-gauge deformations, which it does not list; here the curves are compared on a uniform
    grid of ``points`` deformations over ``phi_range``: a scalar φ_max [rad] means [−φ_max, φ_max]
    (τ_E is odd, so the grid mean of the truth is 0), a pair (lo, hi) that interval.

    Args:
        alpha_hat: estimated [α1, α3, …] (P,) or (J, P).
        alpha_true: true coefficients, the same layout (a shorter or longer P is padded with zeros).
        phi_range: φ_max, or (lo, hi) [rad]; per joint: (J,) or (J, 2) (a pair is always (lo, hi)).

    Returns:
        fit [%], a float for (P,) input, else (J,).
    """
    a = np.asarray(alpha_hat, dtype=float)
    b = np.asarray(alpha_true, dtype=float)
    single = a.ndim == 1 and b.ndim == 1
    a, b = np.atleast_2d(a), np.atleast_2d(b)
    if a.ndim != 2 or b.ndim != 2:
        raise InputError(f'alpha_hat and alpha_true must be (P,) or (J, P), got {a.shape} and {b.shape}')
    width = max(a.shape[1], b.shape[1])
    a = np.pad(a, ((0, 0), (0, width - a.shape[1])))
    b = np.pad(b, ((0, 0), (0, width - b.shape[1])))
    try:
        a, b = np.broadcast_arrays(a, b)
    except ValueError:
        raise InputError(f'alpha_hat and alpha_true have different joint counts: {a.shape} and {b.shape}') from None
    J = a.shape[0]
    r = np.asarray(phi_range, dtype=float)
    bounds = None
    if r.ndim == 0 or (r.ndim == 1 and r.shape[0] == J and r.shape[0] != 2):  # φ_max or (J,)
        bounds = np.broadcast_to(np.stack((-np.abs(r), np.abs(r)), axis=-1), (J, 2))
    elif r.shape == (2,) or (r.ndim == 2 and r.shape[1] == 2 and r.shape[0] in (1, J)):  # (lo, hi) or (J, 2)
        bounds = np.broadcast_to(r, (J, 2))
    if bounds is None:
        raise InputError(f'phi_range must be φ_max, (lo, hi), (J,) or (J, 2); got shape {r.shape}')
    lo, hi = bounds[..., 0], bounds[..., 1]
    if not (np.all(np.isfinite(lo)) and np.all(np.isfinite(hi)) and np.all(hi > lo)):
        raise InputError(f'phi_range must be a finite, non-empty interval, got {phi_range!r}')
    if isinstance(points, bool) or not isinstance(points, int | np.integer) or points < 3:
        raise InputError(f'points must be an integer >= 3, got {points!r}')
    grid = lo[:, None] + (hi - lo)[:, None] * np.linspace(0.0, 1.0, points)[None, :]  # (J, G)
    psi = grid[:, :, None] ** (2 * np.arange(width) + 1)
    y = np.einsum('jgp,jp->jg', psi, b)
    y_hat = np.einsum('jgp,jp->jg', psi, a)
    spread = np.linalg.norm(y - y.mean(axis=1, keepdims=True), axis=1)
    with np.errstate(divide='ignore', invalid='ignore'):
        fit = 100.0 * (1.0 - np.linalg.norm(y - y_hat, axis=1) / spread)
    return float(fit[0]) if single else fit
