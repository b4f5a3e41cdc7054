"""Inputs of the feedforward from other sources: the estimator's friction table, the measured acceleration.

**α̂ from a labelled table.** The estimator publishes its adaptive friction estimate as a table with a
labelled layout (std_msgs/Float64MultiArray): dimension 0 labelled ``joint:<name>,<name>,...``, dimension 1
labelled ``quantity:alpha1,alpha2,active``, data row by row. :func:`friction_alpha` turns it into α̂
(n, 2) in the robot's joint order (joints by name), the ``context.alpha`` of the friction_adaptive term.

**q̈ of the measured motion.** :class:`MeasuredAcceleration` estimates q̈ at the newest sample as the
slope at that sample of a least-squares parabola through the measured velocities of the last
``window_s`` seconds (Savitzky & Golay 1964, evaluated at the window's end rather than its centre: no
delay, at the price of about 4× the noise (standard deviation) of the centred fit's slope: 3.9× over
the default 0.05 s at 1 kHz). Stamps, not an assumed rate, give the times, so irregular or dropped
samples do not bias it.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from dynid.errors import InputError

FRICTION_QUANTITIES = ('alpha1', 'alpha2', 'active')


def labelled_table(labels: Sequence[str], sizes: Sequence[int], data: Sequence[float]):
    """(row names, column names, (rows, columns) values) of a two-dimensional labelled layout."""
    if len(labels) != 2 or len(sizes) != 2:
        raise InputError(f'a labelled table has 2 dimensions, got {len(labels)}')
    names = []
    for label, size, prefix in zip(labels, sizes, ('joint:', 'quantity:'), strict=True):
        if not label.startswith(prefix):
            raise InputError(f'dimension label {label!r} does not start with {prefix!r}')
        entries = label[len(prefix):].split(',') if label[len(prefix):] else []
        if len(entries) != size:
            raise InputError(f'dimension {label!r} names {len(entries)} entries, its size is {size}')
        names.append(entries)
    values = np.asarray(data, dtype=float)
    if values.size != sizes[0] * sizes[1]:
        raise InputError(f'{values.size} values for a {sizes[0]} × {sizes[1]} table')
    return names[0], names[1], values.reshape(sizes[0], sizes[1])


def friction_alpha(labels: Sequence[str], sizes: Sequence[int], data: Sequence[float],
                   joint_names: Sequence[str]) -> np.ndarray:
    """α̂ (n, 2) [α1 [-], α2 [N·m·s/rad]] in ``joint_names`` order from the estimator's friction table."""
    joints, quantities, table = labelled_table(labels, sizes, data)
    missing = [name for name in joint_names if name not in joints]
    if missing:
        raise InputError(f'the friction table has no joints {missing}')
    if 'alpha1' not in quantities or 'alpha2' not in quantities:
        raise InputError(f'the friction table has quantities {quantities}, not alpha1 and alpha2')
    rows = [joints.index(name) for name in joint_names]
    alpha = table[np.ix_(rows, [quantities.index('alpha1'), quantities.index('alpha2')])]
    if not np.all(np.isfinite(alpha)):
        raise InputError('the friction table holds non-finite alpha values')
    return alpha


class MeasuredAcceleration:
    """q̈ at the newest measured sample from the velocities of the last ``window_s`` s (module docstring).

    ``update(stamps_ns, dq)`` takes a batch (N,), (N, n) in stamp order and returns q̈ (n,) [rad/s²]
    at its last sample; 0 until three samples span the window's first stamps. Non-finite velocities
    are skipped.
    """

    def __init__(self, n: int, window_s: float = 0.05) -> None:
        if not (np.isfinite(window_s) and window_s > 0):
            raise InputError(f'acceleration window must be > 0 s, got {window_s!r}')
        self.n, self.window_ns = int(n), int(window_s * 1e9)
        self.reset()

    def reset(self) -> None:
        self.stamps = np.zeros(0, dtype=np.int64)
        self.velocities = np.zeros((0, self.n))
        self.value = np.zeros(self.n)

    def update(self, stamps_ns: np.ndarray, dq: np.ndarray) -> np.ndarray:
        stamps = np.asarray(stamps_ns, dtype=np.int64).reshape(-1)
        dq = np.asarray(dq, dtype=float).reshape(stamps.size, self.n)
        good = np.all(np.isfinite(dq), axis=1)
        self.stamps = np.concatenate([self.stamps, stamps[good]])
        self.velocities = np.vstack([self.velocities, dq[good]])
        if self.stamps.size == 0:
            return self.value
        recent = self.stamps >= self.stamps[-1] - self.window_ns
        self.stamps, self.velocities = self.stamps[recent], self.velocities[recent]
        if self.stamps.size >= 3:
            t = (self.stamps - self.stamps[-1]) * 1e-9  # the newest sample at t = 0
            if np.ptp(t) > 0:
                coefficients = np.polyfit(t, self.velocities, 2)  # (3, n): a·t² + b·t + c
                self.value = coefficients[1]  # d/dt at t = 0
        return self.value
