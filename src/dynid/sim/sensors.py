"""Sensor models of the twin: encoder quantization, current and torque noise, temperature steps.

What a driver reports at each sample (seeded, reproducible):

- link position: quantized to the link encoder's resolution [rad]; link velocity: true + white noise;
- rotor position θ (link units): quantized to 2π/(counts·gear ratio); rotor velocity: true + noise;
- joint torque (the ``effort`` of joint_states): true τ_j + white noise [N·m];
- motor current: true + white noise, quantized [A];
- temperature: the lagged sensor value, quantized [°C].
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dynid.sim.parameters import SensorParameters


def quantize(values: np.ndarray, step: float | np.ndarray) -> np.ndarray:
    """Round to multiples of step (no change where step is 0)."""
    if np.ndim(step) == 0:
        return np.round(values / step) * step if step > 0 else np.array(values, dtype=float)
    step = np.asarray(step, dtype=float)
    if step.min() > 0:
        return np.round(values / step) * step
    safe = np.where(step > 0, step, 1.0)
    return np.where(step > 0, np.round(values / safe) * safe, values)


@dataclass
class Measurement:
    """One sample of everything the driver publishes, (n,) arrays."""

    q: np.ndarray
    dq: np.ndarray
    joint_torque: np.ndarray
    theta: np.ndarray
    dtheta: np.ndarray
    current: np.ndarray
    temperature: np.ndarray


class Sensors:
    """Turns the true state into a :class:`Measurement` (module docstring)."""

    #: Samples of noise drawn at once (drawing per sample costs more than the rest of a measurement).
    NOISE_BLOCK = 1000

    def __init__(self, params: SensorParameters, gear_ratio: np.ndarray, seed: int) -> None:
        self.params = params
        gear_ratio = np.asarray(gear_ratio, dtype=float)
        if params.motor_counts_per_revolution > 1:
            self.motor_resolution = 2 * np.pi / (params.motor_counts_per_revolution * gear_ratio)
        else:
            self.motor_resolution = np.zeros_like(gear_ratio)
        self.rng = np.random.default_rng(seed)
        self.n = gear_ratio.size
        self._noise = np.zeros((0, 4, self.n))
        self._scale = np.array([params.velocity_noise, params.velocity_noise, params.torque_noise,
                                params.current_noise])[:, None]

    def _next_noise(self) -> np.ndarray:
        """(4, n) white noise: link velocity, rotor velocity, joint torque, current."""
        if self._noise.shape[0] == 0:
            self._noise = self.rng.standard_normal((self.NOISE_BLOCK, 4, self.n)) * self._scale
        value, self._noise = self._noise[0], self._noise[1:]
        return value

    def measure_many(self, q, dq, joint_torque, theta, dtheta, current, temperature) -> Measurement:
        """Like :meth:`measure` for (N, n) arrays of true values, vectorized over samples."""
        p = self.params
        noise = self.rng.standard_normal((q.shape[0], 4, self.n)) * self._scale
        return Measurement(
            q=quantize(q, p.link_resolution), dq=dq + noise[:, 0], joint_torque=joint_torque + noise[:, 2],
            theta=quantize(theta, self.motor_resolution), dtheta=dtheta + noise[:, 1],
            current=quantize(current + noise[:, 3], p.current_resolution),
            temperature=quantize(temperature, p.temperature_resolution))

    def measure(self, q, dq, joint_torque, theta, dtheta, current, temperature) -> Measurement:
        p = self.params
        noise = self._next_noise()
        return Measurement(
            q=quantize(q, p.link_resolution),
            dq=dq + noise[0],
            joint_torque=joint_torque + noise[2],
            theta=quantize(theta, self.motor_resolution),
            dtheta=dtheta + noise[1],
            current=quantize(current + noise[3], p.current_resolution),
            temperature=quantize(temperature, p.temperature_resolution),
        )
