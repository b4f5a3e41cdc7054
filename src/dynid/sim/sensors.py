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
    """Round to multiples of step (no change where step is 0); halves round to even."""
    if isinstance(step, float):  # the common case first
        return np.rint(values / step) * step if step > 0 else np.array(values, dtype=float)
    if np.ndim(step) == 0:
        return np.rint(values / step) * step if step > 0 else np.array(values, dtype=float)
    step = np.asarray(step, dtype=float)
    if step.min() > 0:
        return np.rint(values / step) * step
    safe = np.where(step > 0, step, 1.0)
    return np.where(step > 0, np.rint(values / safe) * safe, values)


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
    """Turns the true state into a :class:`Measurement` (module docstring).

    The noise comes from one seeded stream, drawn in blocks of :attr:`NOISE_BLOCK` samples and used
    in order: the noise of a sample depends only on its position in the recording, not on how the
    samples were split into calls of :meth:`measure` and :meth:`measure_many`.
    """

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
        self._noise = np.zeros((4, 0, self.n))  # the current block, channel first: link velocity,
        self._noise_used = 0                    # rotor velocity, joint torque, current
        self._scale = np.array([params.velocity_noise, params.velocity_noise, params.torque_noise,
                                params.current_noise])[:, None]
        # measure_many stacks the channels as dq, dtheta, joint_torque, current, q, theta, temperature:
        # the first four take the noise channels in order, the last four are quantized (current after
        # its noise), each group a slice.
        steps = [np.full(self.n, params.current_resolution), np.full(self.n, params.link_resolution),
                 self.motor_resolution, np.full(self.n, params.temperature_resolution)]
        self._steps = np.array(steps)[:, None, :]
        self._steps_positive = bool(np.all(self._steps > 0))

    def _take_noise(self, count: int) -> np.ndarray:
        """(4, count, n) white noise, the next ``count`` samples of the stream: link velocity, rotor
        velocity, joint torque, current."""
        used = self._noise_used
        if used + count <= self._noise.shape[1]:  # the usual case: within the current block
            self._noise_used = used + count
            return self._noise[:, used:used + count]
        parts = []
        while count > 0:
            if self._noise_used == self._noise.shape[1]:
                block = self.rng.standard_normal((self.NOISE_BLOCK, 4, self.n)) * self._scale
                self._noise = np.ascontiguousarray(block.transpose(1, 0, 2))
                self._noise_used = 0
            take = min(count, self._noise.shape[1] - self._noise_used)
            parts.append(self._noise[:, self._noise_used:self._noise_used + take])
            self._noise_used += take
            count -= take
        return parts[0] if len(parts) == 1 else np.concatenate(parts, axis=1)

    def measure_many(self, q, dq, joint_torque, theta, dtheta, current, temperature) -> Measurement:
        """Like :meth:`measure` for (N, n) arrays of true values, vectorized over samples and channels."""
        values = np.array([dq, dtheta, joint_torque, current, q, theta, temperature], dtype=float)
        values[:4] += self._take_noise(values.shape[1])
        quantized = values[3:]
        if self._steps_positive:
            np.multiply(np.rint(quantized / self._steps), self._steps, out=quantized)
        else:
            for channel, step in zip(quantized, self._steps[:, 0], strict=True):
                channel[...] = quantize(channel, step)
        return Measurement(q=values[4], dq=values[0], joint_torque=values[2], theta=values[5], dtheta=values[1],
                           current=values[3], temperature=values[6])

    def measure(self, q, dq, joint_torque, theta, dtheta, current, temperature) -> Measurement:
        """One sample of true values (n,) to what the driver reports."""
        m = self.measure_many(*(np.reshape(a, (1, -1)) for a in (q, dq, joint_torque, theta, dtheta, current,
                                                                  temperature)))
        return Measurement(**{k: v[0] for k, v in vars(m).items()})
