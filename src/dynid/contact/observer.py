"""The generalized momentum observer: the external joint torque τ̂_ext from the identified model, without
acceleration.

De Luca and Mattone 2003 (eq. (10)), 2005; Haddadin, De Luca and Albu-Schäffer 2017 (eq. (28)): with the momentum p
and its drive u = τ_m − f + Cᵀ·q̇ − g of :class:`dynid.contact.dynamics.ObserverModel`,

    r(t) = K·( p(t) − p(0) − ∫₀ᵗ (u + r) ds ),        so that   ṙ = K·(τ_ext − r)

per joint: r is τ_ext through a first-order low-pass of bandwidth K [1/s] (time constant 1/K). The integral is
taken by the trapezoidal rule on the samples' own times, so r_k is solved from

    r_k·(1 + K·Δt/2) = K·( p_k − I_{k−1} − Δt/2·(u_{k−1} + r_{k−1} + u_k) ),   I_k = I_{k−1} + Δt/2·(u_{k−1} + r_{k−1}
                                                                                               + u_k + r_k)

(a compiled loop over samples, state carried between calls: any split of a recording into batches gives the same
numbers). A gap longer than ``max_gap_s`` re-anchors the integral at the new momentum, r kept (the integral of an
unseen stretch is unknown). The first sample anchors p(0): the estimate starts at zero, whatever acts then.

With ``stages`` = 2 the estimate is r through a second first-order stage of the same K, ẏ = K·(r − y) (trapezoidal,
like the integral), so that y is τ_ext through (K/(s + K))²: the noise of the measured velocity enters r through the
momentum as K·M·δq̇ high-passed, flat up to the Nyquist frequency, and the second stage cuts it above K. Two stages of
2K lag a ramp as one stage of K does (1/K) and pass about 0.4 of that stage's velocity noise (its standard
deviation, white noise at 1 kHz); sensor noise that enters through the drive u is low-passed alike by both. A gap
keeps y as it keeps r.
"""

from __future__ import annotations

from dataclasses import dataclass

import numba
import numpy as np

from dynid.checks import positive
from dynid.contact.dynamics import ObserverModel
from dynid.errors import InputError


@numba.njit(cache=True)
def _observe(t, momentum, drive, gain, max_gap, stages, state, out):
    """The recursion of the module docstring over samples (N, n); ``state`` [t, u, r, I, y] (5, n) in and out
    (t NaN: not started; y the second stage's output, used with ``stages`` 2)."""
    n = momentum.shape[1]
    for k in range(t.size):
        started = not np.isnan(state[0, 0])
        dt = t[k] - state[0, 0] if started else 0.0
        for j in range(n):
            if not started:
                state[3, j] = momentum[k, j]
                state[2, j] = 0.0
                state[4, j] = 0.0
            elif dt > max_gap or dt <= 0.0:
                state[3, j] = momentum[k, j] - state[2, j] / gain[j]
            else:
                half = 0.5 * dt
                rest = momentum[k, j] - state[3, j] - half * (state[1, j] + state[2, j] + drive[k, j])
                r = gain[j] * rest / (1.0 + gain[j] * half)
                state[3, j] += half * (state[1, j] + state[2, j] + drive[k, j] + r)
                step = gain[j] * half
                state[4, j] = (state[4, j] * (1.0 - step) + step * (state[2, j] + r)) / (1.0 + step)
                state[2, j] = r
            state[1, j] = drive[k, j]
            out[k, j] = state[4, j] if stages == 2 else state[2, j]
        state[0, 0] = t[k]


@dataclass
class ObserverSamples:
    """What the observer took and gave for a batch, each (N, n) but ``t`` (N,): τ̂_ext [N·m]; the friction
    velocity ω [rad/s] and the torque τ_m [N·m] it read; the model's friction f and gravity-and-velocity torque
    |Cᵀ·q̇ − g| [N·m] (for the σ of :mod:`dynid.contact.uncertainty`)."""

    t: np.ndarray
    external: np.ndarray
    velocity: np.ndarray
    measured: np.ndarray
    friction: np.ndarray
    bias: np.ndarray


class MomentumObserver:
    """τ̂_ext of every joint from batches of samples (module docstring).

    Args:
        model: the identified model (:class:`ObserverModel`).
        gain: K [1/s], one value or one per joint (> 0): each stage's bandwidth.
        max_gap_s: a step between samples longer than this [s] re-anchors the integral.
        stages: 1, the observer's own first-order response; 2, through a second stage of the same K (module
            docstring).

    State: ``state`` (5, n): the last sample's time (NaN before the first), drive u, observer output r, integral I
    and the second stage's output y.
    """

    def __init__(self, model: ObserverModel, gain=100.0, max_gap_s: float = 0.1, stages: int = 1) -> None:
        self.model, self.n = model, model.n
        gain = np.broadcast_to(np.asarray(gain, dtype=float), (self.n,)).copy()
        if not np.all(np.isfinite(gain)) or np.any(gain <= 0):
            raise InputError(f'observer gain must be > 0 1/s per joint, got {gain.tolist()}')
        self.gain = gain
        self.max_gap_s = positive(max_gap_s, 'max_gap_s')
        if stages not in (1, 2):
            raise InputError(f'observer stages must be 1 or 2, got {stages!r}')
        self.stages = int(stages)
        self.reset()

    def reset(self) -> None:
        """Start again: the next sample anchors the momentum."""
        self.state = np.zeros((5, self.n))
        self.state[0, 0] = np.nan

    def run(self, t: np.ndarray, q: np.ndarray, dq: np.ndarray, current: np.ndarray | None = None,
            tau: np.ndarray | None = None, dtheta: np.ndarray | None = None, temperature: np.ndarray | None = None,
            friction: np.ndarray | None = None, what: str = 'the recording') -> ObserverSamples:
        """τ̂_ext for samples at times ``t`` (N,) [s] continuing from the state.

        Args:
            q, dq: (N, n) link positions [rad] and velocities [rad/s].
            current: motor currents [A] (N, n) where the result reads currents; tau: the effort [N·m] where it
                reads a torque. dtheta: rotor velocities [rad/s, link units] or None. temperature: [°C] or None.
            friction: f [N·m] (N, n) to take instead of the model's (a simulation's true friction), or None.
        """
        model = self.model
        t = np.ascontiguousarray(t, dtype=float)
        measured = model.measured_torque(current, tau, what)
        rotor = dtheta if dtheta is not None else None
        momentum, bias = model.momentum_terms(q, dq, rotor)
        velocity = model.joint_velocity(dtheta) if (model.friction_on_rotor and dtheta is not None) else dq
        if friction is None:
            friction = model.friction_at(velocity, measured, temperature)
        drive = np.ascontiguousarray(measured - friction + bias)
        out = np.empty_like(drive)
        _observe(t, np.ascontiguousarray(momentum), drive, self.gain, self.max_gap_s, self.stages, self.state,
                 out)
        return ObserverSamples(t, out, velocity, measured, friction, np.abs(bias))
