"""Online adaptation of the E-GMS joint friction: gradient law with projection and excitation switch.

Madsen 2020, ch.6 §6 (eqs. (23)–(28)). Per joint j and sample k, on signals aligned by
:class:`dynid.signal.AlignedStateEstimator` (all describing the sample ``delay`` samples back):

    f   = K_τ·i − B·θ̈ − τ̂_j − F_V(ω, T)                 virtual friction measurement [N·m], eq. (23)
    τ̂_j = M(q̂)·q̂̈ + C(q̂, q̂̇)·q̂̇ + g(q̂)                 rigid-body joint torque (injected callable)
    Y   = [F(τ̂_j)·H(θ̂), ω],  F(τ) = Fc0 + Fc1·τ²          regressor, eqs. (24), (20)
    f̂   = Yᵀα̂,  f̃ = f − f̂                               prediction and its error, eq. (25)
    α̂  ← Π(α̂ + T_s·Γ·Y·f̃)                              gradient law (26), forward Euler; Π: box (27)
    α̂ frozen while max |ω| over the last t* < ω_min        excitation switch (28)

θ̂ is the smoothed rotor position in link units, ω = θ̂̇ and θ̈ its central differences, i the motor
current [A], T the joint temperature [°C] (both delayed to the same sample). K_τ [N·m/A] and B
[kg·m²] are link-side (``JointDrives``). Without motor encoders (``rotor=False``) the joint is taken
as rigid, θ = q: ω, θ̈ and the hysteresis input are the link's (the deflection, a few mrad under
load, is what the E-GMS operators then do not see). α1 [-] scales the E-GMS Coulomb term (nominal 1: wear
raises it), α2 [N·m·s/rad] is an excess viscous coefficient (nominal 0: it absorbs e.g. the lag of
the temperature compensation). Madsen's nominal start is α̂ = (1, 0); his validation starts from
(0.47, 0.04) with the parameters frozen for the first 30 s (``freeze_s``).

Decisions on what the paper leaves open:

- Eq. (23): the printed equation is garbled; it is read as f = K_τ·i − B·θ̈ − τ̂_j − F_V with
  τ̂_j = M·q̈ + C·q̇ + g (the printed "− C … − g" contradicts the link equation) and B·θ̈ the rotor
  acceleration of the rotor equation. τ̂_j comes from an injected ``joint_torque(q, dq, ddq)``
  (the identified rigid-body model, or ``robot.inverse_dynamics``); F_V from an injected
  ``velocity_friction(omega, temperature)`` (Stribeck excess, viscous and temperature terms; default
  zero). Clamping the temperature (Madsen 2020, ch.6 §6.4) is the callable's business.
- Current (Madsen 2020, ch.6 §6.1 does not say which signals are smoothed): the current is only
  delayed, so f keeps the drive's fast current ripple (the controller's response to joint vibration,
  which the smoothed B·θ̈ and τ̂_j no longer carry). Smoothing the current alone biases α̂ (f is then
  blurred around reversals where Y is not; α2 runs to its bound). Instead, with ``prefilter`` (the
  default) the gradient law runs on f and both regressor columns passed through one and the same
  Savitzky–Golay filter (the front end's window, used causally): a linear filter keeps f = Yᵀα for
  constant α, and removes the ripple. The update then lags the reported sample by the filter's delay
  (50 samples at 1 kHz); the switch and freeze flags are delayed with it, and a sample only adapts if
  the filtered pair is finite. ``friction``, ``friction_hat`` and ``error`` are the unfiltered values.
- Eq. (24) prints F(τ_j)·Σ k_i·δ_i without the 1/B(θ) of the E-GMS output (15); the text calls it
  the E-GMS output, and only F(τ_j)·H keeps α1 = 1 nominal, so the regressor is F(τ̂_j)·H, |H| ≤ 1.
  H is driven by the measured rotor position θ delayed to the described sample (not by the smoothed
  θ̂: the smoothing rounds off the micro-radian motions that deform the small operators at standstill,
  where nearly all the prediction error left after adaptation lies: on the twin's B2 cycle of
  ``benchmarks/bench_estimation.py`` θ gives the larger MSE reduction; benchmarks/README.md, "The figures
  behind the defaults"). Its operators start undeformed (δ_i = 0) at
  the first sample. The backlash map is that of the :class:`dynid.friction.egms.EGMS` given (default: the
  thesis' M = 4, r_Δ = 4, r_k = 2, constant B = 1 mrad).
- Eq. (26) is discretized by forward Euler with the sample period T_s and the box projection (27)
  applied after each step (for a box the projection is the clip). With ``normalized`` the step is
  divided by 1 + T_s·YᵀΓY (normalized gradient): the discrete update then never overshoots along Y,
  whatever Γ; the paper uses the plain law, which is stable for T_s·YᵀΓY < 2.
- Gains (not reported by the paper): γ_p = 1 / (T_a·s_p²), with the adaptation time constant
  T_a = ``adaptation_time_s`` (default 2 s) and the regressor scales s_1 = Fc0 (|Y1| in sliding
  without load, a lower bound of F(τ)) and s_2 = ``velocity_scale`` (default 1 rad/s). On the UR5e
  twin's waypoint cycle this gives time constants of a few seconds (|Y1| ≥ Fc0 while moving, the
  joints move about half of the time). ``gains`` overrides the rule.
- Bounds (27): by default the paper's α1 ∈ [0.4, 1.5] and α2 ∈ [−0.05, 0.05] N·m·s/rad (its ±5
  "cN ms", read as cN·m·s/rad with ω in rad/s); :mod:`dynid.estimate.projection` derives wider ones
  from an identification. The start value must lie inside. ``capped`` says where α̂ sits on a bound:
  there the projection, not the data, sets the estimate, and the true value may lie beyond.
- Switch (28): |ω̂| (the aligned rotor velocity) over the last round(t*·rate) samples, this one
  included (50 at 1 kHz for t* = 0.05 s); before a window has been seen the missing samples count as
  rest. Samples of the front end's start-up (not ``valid``) and samples with a non-finite f or Y
  never adapt. The freeze time counts input samples from construction or :meth:`reset`.

The gradient recursion is a loop over the samples of a batch compiled by numba; everything else is
computed for the whole batch, and any split of a record gives the same result.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numba
import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from dynid.checks import batch, per_joint, positive
from dynid.errors import InputError
from dynid.friction.egms import EGMS
from dynid.model.drives import JointDrives
from dynid.signal.aligned import AlignedStateEstimator
from dynid.signal.causal import DelayLine, SavitzkyGolay

ALPHA_NOMINAL = (1.0, 0.0)  # α1 [-], α2 [N·m·s/rad]: the identified model unchanged
ALPHA_BOUNDS = ((0.4, 1.5), (-0.05, 0.05))  # Madsen 2020, ch.6 eq. (27)
OMEGA_MIN = 0.01  # rad/s, eq. (28)
EXCITATION_WINDOW_S = 0.05  # t* [s], eq. (28)


@dataclass(frozen=True)
class AdaptiveFrictionEstimate:
    """History of one :meth:`AdaptiveFrictionEstimator.update` batch; arrays (N, J), ``alpha`` (N, J, 2).

    Every row describes the sample ``delay`` samples before the corresponding input row.

    Attributes:
        alpha: α̂ = (α1 [-], α2 [N·m·s/rad]) after the sample.
        friction: virtual friction measurement f, eq. (23) [N·m].
        friction_hat: prediction f̂ = Yᵀα̂ with α̂ before the sample, eq. (24) [N·m].
        error: f̃ = f − f̂, eq. (25) [N·m].
        active: the sample adapted α̂ (excited, past the freeze time, front end valid, finite).
        capped: (N, J, 2) α̂1, α̂2 after the sample sit on a bound of the projection (27).
        regressor: Y = [F(τ̂_j)·H, ω] (N, J, 2) [N·m, rad/s].
        hysteresis: the E-GMS output H [-]. joint_torque: τ̂_j [N·m]. velocity: ω [rad/s].
        temperature: the temperature delayed to the same sample [°C] (NaN if not given).
        delay: samples between the newest input and the sample described.
    """

    alpha: np.ndarray
    friction: np.ndarray
    friction_hat: np.ndarray
    error: np.ndarray
    active: np.ndarray
    capped: np.ndarray
    regressor: np.ndarray
    hysteresis: np.ndarray
    joint_torque: np.ndarray
    velocity: np.ndarray
    temperature: np.ndarray
    delay: int


class AdaptiveFrictionEstimator:
    """Gradient adaptation of α = (α1, α2) in f = α1·F(τ_j)·H + α2·ω for J joints (module docstring).

    Args:
        drives: link-side drive gain K_τ [N·m/A] and rotor inertia B [kg·m²] per joint
            (``robot.drives``); None is refused.
        joint_torque: τ̂_j = joint_torque(q, dq, ddq) for (N, J) arrays in model joint order → (N, J)
            [N·m] (e.g. ``robot.inverse_dynamics``).
        coulomb: Fc0 [N·m] > 0, the no-load Coulomb level of F(τ) = Fc0 + Fc1·τ², scalar or (J,).
        load_coefficient: Fc1 [1/(N·m)] >= 0, scalar or (J,).
        velocity_friction: F_V(omega, temperature) for (N, J) arrays → (N, J) [N·m]; None: zero.
        rate_hz: sample rate [Hz]; T_s = 1/rate_hz.
        egms: the E-GMS operators (owned and advanced by the estimator); None: thesis defaults.
        alpha0: start value α̂(0), (2,) or (J, 2); default (1, 0).
        bounds: ((α1_min, α1_max), (α2_min, α2_max)), or per joint (J, 2, 2); default eq. (27).
        gains: Γ diagonal, (2,) or (J, 2), > 0; None: the rule of the module docstring.
        adaptation_time_s: T_a of the gain rule [s]. velocity_scale: s_2 of the gain rule [rad/s].
        normalized: divide each step by 1 + T_s·YᵀΓY.
        omega_min: ω_min of the switch [rad/s]; 0 disables it. excitation_window_s: t* [s].
        freeze_s: no adaptation for input samples before this time [s] (validation: 30 s).
        prefilter: adapt on f and Y passed through the same Savitzky–Golay low-pass (module docstring);
            False: the paper's plain law on the unfiltered pair.
        window: Savitzky–Golay window of the front end (default 101 samples at 1 kHz, scaled).
        rotor: the recording has motor encoders (θ); False: a rigid joint, θ = q (module docstring).

    Attributes:
        alpha, capped (J, 2); friction, friction_hat, error, active (J,) of the last sample; gains (J, 2);
        lower, upper (J, 2) bounds; egms; front_end.
    """

    def __init__(self, drives: JointDrives | None, joint_torque: Callable, coulomb, load_coefficient=0.0, *,
                 velocity_friction: Callable | None = None, rate_hz: float = 1000.0, egms: EGMS | None = None,
                 alpha0=ALPHA_NOMINAL, bounds=ALPHA_BOUNDS, gains=None, adaptation_time_s: float = 2.0,
                 velocity_scale: float = 1.0, normalized: bool = False, omega_min: float = OMEGA_MIN,
                 excitation_window_s: float = EXCITATION_WINDOW_S, freeze_s: float = 0.0,
                 prefilter: bool = True, window: int | None = None, rotor: bool = True) -> None:
        if drives is None:
            raise InputError('adaptive friction estimation needs drive data (drive gain and rotor inertia per '
                             'joint); the robot model has none')
        if not callable(joint_torque):
            raise InputError('joint_torque must be a callable (q, dq, ddq) -> (N, J) joint torques, e.g. '
                             'robot.inverse_dynamics')
        if velocity_friction is not None and not callable(velocity_friction):
            raise InputError('velocity_friction must be a callable (omega, temperature) -> (N, J) or None')
        self.joint_names = tuple(drives.joint_names)
        J = self.n_joints = len(self.joint_names)
        self.rate_hz = positive(rate_hz, 'rate_hz')
        self.period_s = 1.0 / self.rate_hz
        self.drive_gain = drives.drive_gain.copy()
        self.rotor_inertia = drives.rotor_inertia.copy()
        self.joint_torque_model = joint_torque
        self.velocity_friction = velocity_friction
        self.coulomb = per_joint(coulomb, J, 'coulomb')
        if np.any(self.coulomb <= 0):
            raise InputError(f'coulomb (Fc0) must be > 0 N·m, got {self.coulomb.tolist()}')
        self.load_coefficient = per_joint(load_coefficient, J, 'load_coefficient')
        if np.any(self.load_coefficient < 0):
            raise InputError(f'load_coefficient (Fc1) must be >= 0, got {self.load_coefficient.tolist()}')

        b = np.asarray(bounds, dtype=float) if _numeric(bounds) else None
        if b is None or b.shape not in ((2, 2), (J, 2, 2)) or not np.all(np.isfinite(b)):
            raise InputError(f'bounds must be ((α1_min, α1_max), (α2_min, α2_max)) or ({J}, 2, 2), got {bounds!r}')
        b = np.broadcast_to(b, (J, 2, 2))
        self.lower, self.upper = b[:, :, 0].copy(), b[:, :, 1].copy()
        if np.any(self.lower >= self.upper):
            raise InputError(f'bounds must have min < max, got {bounds!r}')
        self.alpha0 = _pair(alpha0, J, 'alpha0')
        if np.any(self.alpha0 < self.lower) or np.any(self.alpha0 > self.upper):
            raise InputError(f'alpha0 {self.alpha0.tolist()} lies outside the bounds {b.tolist()}')

        self.adaptation_time_s = positive(adaptation_time_s, 'adaptation_time_s')
        self.velocity_scale = positive(velocity_scale, 'velocity_scale')
        if gains is None:
            scales = np.stack((self.coulomb, np.full(J, self.velocity_scale)), axis=1)
            gains = 1.0 / (self.adaptation_time_s * scales**2)
        self.gains = _pair(gains, J, 'gains')
        if np.any(self.gains <= 0):
            raise InputError(f'gains must be > 0, got {self.gains.tolist()}')
        self.normalized = bool(normalized)
        if not (math.isfinite(omega_min) and omega_min >= 0):
            raise InputError(f'omega_min must be >= 0 rad/s, got {omega_min!r}')
        self.omega_min = float(omega_min)
        self.excitation_window_s = positive(excitation_window_s, 'excitation_window_s')
        self.excitation_samples = max(1, int(round(self.excitation_window_s * self.rate_hz)))
        if not (math.isfinite(freeze_s) and freeze_s >= 0):
            raise InputError(f'freeze_s must be >= 0 s, got {freeze_s!r}')
        self.freeze_s = float(freeze_s)
        self._freeze_samples = int(math.ceil(self.freeze_s * self.rate_hz - 1e-9))

        if egms is None:
            egms = EGMS(J)
        elif not isinstance(egms, EGMS) or egms.n != J:
            raise InputError(f'egms must be an EGMS for {J} joints')
        self.egms = egms
        self.rotor = bool(rotor)
        self.front_end = AlignedStateEstimator(J, self.rate_hz, rotor=self.rotor,
                                               delayed=('current', 'temperature'), window=window)
        self.prefilter = bool(prefilter)
        smoother = self.front_end.smoother
        self.learning_filter = SavitzkyGolay(smoother.window, smoother.polyorder, 3 * J)
        self.learning_delay = DelayLine(self.learning_filter.delay, J)
        self.rotor_delay = DelayLine(self.front_end.delay, J)  # θ (or q) to the described sample, for H
        self.reset()

    @classmethod
    def from_joint_friction(cls, drives: JointDrives | None, joint_torque: Callable, friction, **options):
        """An estimator whose nominal model is a :class:`dynid.friction.joint_friction.JointFriction` (α = (1, 0)
        reproduces it).

        F(τ) takes the friction's Fc0 (its Stribeck map's Fc) and Fc1 (``squared`` law only), F_V its
        :meth:`~dynid.friction.joint_friction.JointFriction.remainder`, and the E-GMS its element laws and backlash map
        (fresh operators, so the friction object's own state is left alone).
        """
        if friction.load_law != 'squared':
            raise InputError(f"the adaptive estimator uses F(τ) = Fc0 + Fc1·τ²; the friction has the "
                             f"{friction.load_law!r} law")
        source = friction.egms
        if source is None:
            raise InputError('the friction has no E-GMS (static Coulomb): the regressor needs the E-GMS output')
        table = source.backlash_table
        egms = EGMS(source.n, source.elements, source.r_delta, source.r_k,
                    backlash=table[:, 0] if table.shape[1] == 1 else table)
        stribeck = friction.stribeck
        coulomb = np.broadcast_to(np.asarray(stribeck.Fc, dtype=float), (source.n,))
        options.setdefault('velocity_friction', friction.remainder)
        return cls(drives, joint_torque, coulomb, friction.load_coefficient, egms=egms, **options)

    def reset(self) -> None:
        """Back to α̂(0), an empty front end, undeformed E-GMS operators and a restarted freeze time."""
        J = self.n_joints
        self.front_end.reset()
        self.learning_filter.reset()
        self.learning_delay.reset()
        self.rotor_delay.reset()
        self.egms.reset()
        self._alpha = self.alpha0.copy()
        self._recent_speed = np.zeros((self.excitation_samples - 1, J))
        self._samples = 0
        nan = np.full(J, np.nan)
        self.friction, self.friction_hat, self.error = nan.copy(), nan.copy(), nan.copy()
        self.active = np.zeros(J, dtype=bool)
        self.residual_sums = np.zeros((2, J))  # adapting samples and Σ(f − f̂)² since the reset (residual_rms)

    @property
    def residual_rms(self) -> np.ndarray:
        """RMS of the prediction error f − f̂ over the samples that adapted since the reset (J,) [N·m]; NaN
        for a joint that has not adapted."""
        count, squares = self.residual_sums
        with np.errstate(divide='ignore', invalid='ignore'):
            return np.where(count > 0, np.sqrt(squares / count), np.nan)

    @property
    def alpha(self) -> np.ndarray:
        """α̂ (J, 2): α1 [-], α2 [N·m·s/rad]."""
        return self._alpha.copy()

    @property
    def capped(self) -> np.ndarray:
        """(J, 2) α̂1, α̂2 sit on a bound of the projection (27)."""
        return _at_bound(self._alpha, self.lower, self.upper)

    @property
    def delay(self) -> int:
        """Samples between the newest input and the sample the outputs describe."""
        return self.front_end.delay

    def coulomb_level(self, joint_torque) -> np.ndarray:
        """F(τ_j) = Fc0 + Fc1·τ_j² [N·m], eq. (20), for τ_j (…, J)."""
        tau = np.asarray(joint_torque, dtype=float)
        return self.coulomb + self.load_coefficient * tau * tau

    def regressor(self, joint_torque, hysteresis, velocity) -> np.ndarray:
        """Y = [F(τ_j)·H, ω] (…, J, 2), eq. (24)."""
        return np.stack((self.coulomb_level(joint_torque) * np.asarray(hysteresis, dtype=float),
                         np.asarray(velocity, dtype=float)), axis=-1)

    def predict(self, joint_torque, hysteresis, velocity, alpha=None) -> np.ndarray:
        """f̂ = Yᵀα [N·m] (…, J), eqs. (24)/(29); α default α̂. For feedforward pass desired signals."""
        alpha = self._alpha if alpha is None else np.asarray(alpha, dtype=float)
        return np.einsum('...jp,...jp->...j', self.regressor(joint_torque, hysteresis, velocity), alpha)

    def update(self, q, theta, current, temperature=None) -> AdaptiveFrictionEstimate:
        """Advance by a batch of N samples in model joint order; any split of a record gives the same result.

        Args:
            q: link positions (N, J) [rad].
            theta: rotor positions in link units (N, J) [rad]; None is refused unless the estimator was
                built with ``rotor=False``, which does not read it.
            current: motor currents (N, J) [A].
            temperature: joint temperatures (N, J) [°C], optional (passed to ``velocity_friction``,
                NaN if not given).
        """
        J = self.n_joints
        if theta is None and self.rotor:
            raise InputError('adaptive friction estimation needs the motor encoder positions (theta); '
                             'none were given (without motor encoders, build the estimator with rotor=False)')
        q = batch(q, 'q', J)
        n = q.shape[0]
        theta = batch(theta, 'theta', J, n) if self.rotor else q  # rigid joint: θ = q
        current = batch(current, 'current', J, n)
        temperature = np.full((n, J), np.nan) if temperature is None else batch(temperature, 'temperature', J, n)
        state = self.front_end.run(q, theta if self.rotor else None, {'current': current, 'temperature': temperature})
        temperature = state.delayed['temperature']
        omega, ddtheta = (state.dtheta, state.ddtheta) if self.rotor else (state.dq, state.ddq)

        tau_j = _model_output(self.joint_torque_model(state.q, state.dq, state.ddq), 'joint_torque', n, J)
        friction = self.drive_gain * state.delayed['current'] - self.rotor_inertia * ddtheta - tau_j
        if self.velocity_friction is not None:
            friction = friction - _model_output(self.velocity_friction(omega, temperature), 'velocity_friction',
                                                n, J)
        hysteresis = self.egms.run(self.rotor_delay.run(theta)) if n else np.zeros((0, J))
        regressor = self.regressor(tau_j, hysteresis, omega)

        active = self._excited(np.abs(omega))
        active &= np.asarray(state.valid, dtype=bool).reshape(-1, 1)
        active &= (self._samples + np.arange(n) >= self._freeze_samples)[:, None]
        active &= np.isfinite(friction) & np.all(np.isfinite(regressor), axis=-1)
        self._samples += n

        if self.prefilter:
            learn_y, learn_f, learn_active = self._filtered(regressor, friction, active)
        else:
            learn_y, learn_f, learn_active = regressor, friction, active
        start = self._alpha.copy()
        alphas = self._gradient(learn_y, learn_f, learn_active)
        previous = np.concatenate((start[None], alphas[:-1]), axis=0)
        friction_hat = np.einsum('njp,njp->nj', regressor, previous)
        error = friction - friction_hat
        used = active & np.isfinite(error)
        self.residual_sums += np.stack((used.sum(axis=0), (np.where(used, error, 0.0) ** 2).sum(axis=0)))
        if n:
            self.friction, self.friction_hat, self.error = friction[-1], friction_hat[-1], error[-1]
            self.active = active[-1].copy()
        return AdaptiveFrictionEstimate(alpha=alphas, friction=friction, friction_hat=friction_hat, error=error,
                                        active=active, capped=_at_bound(alphas, self.lower, self.upper),
                                        regressor=regressor, hysteresis=hysteresis,
                                        joint_torque=tau_j, velocity=omega, temperature=temperature,
                                        delay=state.delay)

    def _excited(self, speed: np.ndarray) -> np.ndarray:
        """Eq. (28): max |ω| over the last ``excitation_samples`` samples (this one included) >= ω_min."""
        m = self.excitation_samples
        if self.omega_min == 0.0:
            return np.ones(speed.shape, dtype=bool)
        if speed.shape[0] == 0:
            return np.zeros(speed.shape, dtype=bool)
        history = np.concatenate((self._recent_speed, np.where(np.isfinite(speed), speed, 0.0)), axis=0)
        self._recent_speed = history[history.shape[0] - (m - 1):].copy() if m > 1 else history[:0].copy()
        peak = sliding_window_view(history, m, axis=0).max(axis=-1)
        return peak >= self.omega_min

    def _gradient(self, regressor: np.ndarray, friction: np.ndarray, active: np.ndarray):
        """Eqs. (25)–(27), forward Euler + clip, sample by sample; returns α̂ after each sample."""
        n, J = friction.shape
        step = self.period_s * self.gains * regressor  # T_s·Γ·Y (N, J, 2)
        if self.normalized:
            step /= 1.0 + np.einsum('njp,njp->nj', step, regressor)[:, :, None]
        alphas = np.empty((n, J, 2))
        _gradient_steps(self._alpha, self.lower, self.upper, np.ascontiguousarray(step),
                        np.ascontiguousarray(regressor), np.ascontiguousarray(friction),
                        np.ascontiguousarray(active), alphas)
        return alphas

    def _filtered(self, regressor: np.ndarray, friction: np.ndarray, active: np.ndarray):
        """(Y, f) through one Savitzky–Golay filter, the flags delayed to the filter's centre sample."""
        n, J = friction.shape
        stacked = np.concatenate((friction, regressor[..., 0], regressor[..., 1]), axis=1)
        seen = self.learning_filter.samples_seen
        out = self.learning_filter.run(stacked)
        valid = (seen + np.arange(1, n + 1) >= self.learning_filter.length)[:, None]
        flags = self.learning_delay.run(active.astype(float)) > 0.5
        f, y = out[:, :J], np.stack((out[:, J:2 * J], out[:, 2 * J:]), axis=-1)
        ok = flags & valid & np.isfinite(f) & np.all(np.isfinite(y), axis=-1)
        return y, f, ok


@numba.njit(cache=True)
def _gradient_steps(alpha, lower, upper, step, regressor, friction, active, out):  # pragma: no cover - compiled
    """Eqs. (25)–(27) sample by sample for each joint: α̂ ← clip(α̂ + step·(f − Yᵀα̂)) on active samples
    (an inactive sample leaves α̂ as it is); α̂ (J, 2) updated in place, α̂ after each sample into ``out``."""
    for j in range(alpha.shape[0]):
        a1, a2 = alpha[j, 0], alpha[j, 1]
        for k in range(friction.shape[0]):
            if active[k, j]:
                e = friction[k, j] - regressor[k, j, 0] * a1 - regressor[k, j, 1] * a2
                a1 = min(max(a1 + step[k, j, 0] * e, lower[j, 0]), upper[j, 0])
                a2 = min(max(a2 + step[k, j, 1] * e, lower[j, 1]), upper[j, 1])
            out[k, j, 0] = a1
            out[k, j, 1] = a2
        alpha[j, 0], alpha[j, 1] = a1, a2


def _at_bound(alpha: np.ndarray, lower: np.ndarray, upper: np.ndarray) -> np.ndarray:
    """α̂ (…, J, 2) on a bound (J, 2): the clip of the projection sets the bound's value exactly."""
    return (alpha <= lower) | (alpha >= upper)


def _numeric(value) -> bool:
    try:
        np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        return False
    return True


def _pair(value, n: int, name: str) -> np.ndarray:
    """(2,) or (n, 2) finite values as (n, 2)."""
    try:
        array = np.asarray(value, dtype=float)
        out = np.broadcast_to(array, (n, 2)).copy() if array.shape in ((2,), (n, 2)) else None
    except (TypeError, ValueError):
        out = None
    if out is None or not np.all(np.isfinite(out)):
        raise InputError(f'{name} must be two finite values (α1, α2) or ({n}, 2), got {value!r}')
    return out


def _model_output(value, name: str, n: int, width: int) -> np.ndarray:
    x = np.asarray(value, dtype=float)
    if x.shape != (n, width):
        raise InputError(f'{name} returned shape {x.shape}, expected ({n}, {width})')
    return x
