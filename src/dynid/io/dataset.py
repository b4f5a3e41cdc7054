"""Dataset: one time-aligned recording of a robot, joints in model order (docs/contract.md).

Shapes are (N,) for time and (N, n) for joint signals; optional signals may be None. Units: time
[s], positions [rad], velocities [rad/s], joint torque [N·m] (link side), motor current [A], rotor
position/velocity in link units (θ = θ_motor / gear ratio) [rad, rad/s], temperature [°C].
Validation (shapes, NaN, monotonic time, unique joint names) happens here, once.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields

import numpy as np

from dynid.errors import InputError
from dynid.io.gaps import GAP_TOLERANCE, GapSummary, find_gaps, nominal_period
from dynid.model.inertial import Payload

JOINT_SIGNALS = ('q', 'dq', 'tau', 'current', 'theta', 'dtheta', 'temperature')


@dataclass(eq=False)
class Dataset:
    """A recording (module docstring).

    Attributes:
        joint_names: n names, the column order of every joint signal.
        t: (N,) strictly increasing time [s].
        q, dq: link positions and velocities; required.
        tau: measured joint torque or None; current: motor current or None; theta, dtheta: rotor
        position and velocity (link units) or None; temperature: joint temperature or None.
        payload: the payload during the recording, if known.
        source: where it came from (file, topics, simulation settings).
    """

    joint_names: tuple[str, ...]
    t: np.ndarray
    q: np.ndarray
    dq: np.ndarray
    tau: np.ndarray | None = None
    current: np.ndarray | None = None
    theta: np.ndarray | None = None
    dtheta: np.ndarray | None = None
    temperature: np.ndarray | None = None
    payload: Payload | None = None
    source: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        names = tuple(self.joint_names)
        if not names or len(set(names)) != len(names):
            raise InputError(f'dataset joint names must be unique and non-empty, got {names!r}')
        self.joint_names = names
        t = np.asarray(self.t, dtype=float).reshape(-1)
        if t.size < 2:
            raise InputError(f'a dataset needs at least 2 samples, got {t.size}')
        if not np.all(np.isfinite(t)) or np.any(np.diff(t) <= 0):
            raise InputError('dataset time must be finite and strictly increasing')
        self.t = t
        for name in JOINT_SIGNALS:
            value = getattr(self, name)
            if value is None:
                if name in ('q', 'dq'):
                    raise InputError(f'dataset signal {name} is required')
                continue
            a = np.asarray(value, dtype=float)
            if a.shape != (t.size, len(names)):
                raise InputError(f'dataset signal {name} has shape {a.shape}, expected {(t.size, len(names))}')
            if not np.all(np.isfinite(a)):
                bad = int(np.count_nonzero(~np.isfinite(a)))
                raise InputError(f'dataset signal {name} holds {bad} NaN or infinite values')
            setattr(self, name, a)

    @property
    def n_samples(self) -> int:
        return self.t.size

    @property
    def n_joints(self) -> int:
        return len(self.joint_names)

    @property
    def rate_hz(self) -> float:
        """Sample rate [Hz]: one over the nominal period, which lost samples do not bias (:meth:`gaps`)."""
        return float(1.0 / nominal_period(np.diff(self.t)))

    def signals(self) -> dict[str, np.ndarray]:
        """The joint signals present, by name."""
        return {name: getattr(self, name) for name in JOINT_SIGNALS if getattr(self, name) is not None}

    def reordered(self, joint_names) -> Dataset:
        """The same recording with joints in another order, matched by name."""
        names = list(joint_names)
        missing = [name for name in names if name not in self.joint_names]
        if missing or len(names) != len(self.joint_names):
            raise InputError(f'dataset joints {list(self.joint_names)} do not match {names}')
        index = [self.joint_names.index(name) for name in names]
        values = {f.name: getattr(self, f.name) for f in fields(self)}
        values.update({name: value[:, index] for name, value in self.signals().items()})
        values['joint_names'] = tuple(names)
        return Dataset(**values)

    def gaps(self, period_s: float | None = None, tolerance: float = GAP_TOLERANCE) -> GapSummary:
        """The lost samples of the recording: steps longer than (1 + tolerance) nominal periods.

        ``period_s`` is the publisher's period when known; by default it is read off the stamps, robust
        to any share of gaps (:func:`dynid.io.gaps.nominal_period`).
        """
        return find_gaps(self.t, period_s, tolerance)

    def contiguous_pieces(self, tolerance: float = GAP_TOLERANCE, period_s: float | None = None) -> list[Dataset]:
        """The recording split at its gaps (:meth:`gaps`); pieces of a single sample are left out."""
        edges = self.gaps(period_s, tolerance).edges
        return [self.sliced(a, b) for a, b in zip(edges[:-1], edges[1:], strict=True) if b - a >= 2]

    def sliced(self, start: int, stop: int) -> Dataset:
        """Samples start..stop−1."""
        values = {f.name: getattr(self, f.name) for f in fields(self)}
        values.update({name: value[start:stop] for name, value in self.signals().items()})
        values['t'] = self.t[start:stop]
        return Dataset(**values)
