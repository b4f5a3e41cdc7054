"""Dataset: one time-aligned recording of a robot, joints in model order (docs/contract.md).

Shapes are (N,) for time and (N, n) for joint signals; optional signals may be None. Units: time
[s], positions [rad], velocities [rad/s], joint torque [N·m] (link side), motor current [A], rotor
position/velocity in link units (θ = θ_motor / gear ratio) [rad, rad/s], temperature [°C].
Validation (shapes, NaN, monotonic time, unique joint names) happens here, once.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace

import numpy as np

from dynid.errors import InputError
from dynid.io.gaps import GAP_TOLERANCE, GapSummary, find_gaps, nominal_period
from dynid.model.inertial import Payload

JOINT_SIGNALS = ('q', 'dq', 'tau', 'current', 'theta', 'dtheta', 'temperature')
#: The signals of a :class:`Reference`, each (N, n) or None (q and dq required).
REFERENCE_SIGNALS = ('q', 'dq', 'ddq', 'effort', 'current')
#: The names of a reference's signals beside a recording's own (a column map's keys, an import's signals):
#: the reference signal each holds.
REFERENCE_KEYS = {'q_r': 'q', 'dq_r': 'dq', 'ddq_r': 'ddq', 'tau_r': 'effort', 'current_r': 'current'}
_SPOKEN = {'q': 'q_r', 'dq': 'q̇_r', 'ddq': 'q̈_r', 'effort': 'commanded torque', 'current': 'commanded current'}


@dataclass(eq=False)
class Reference:
    """The joint controller's reference at a recording's samples, joints in the recording's order.

    Attributes:
        q, dq: reference positions [rad] and velocities [rad/s] q_r, q̇_r; required.
        ddq: reference accelerations q̈_r [rad/s²] or None.
        effort: commanded joint torque [N·m] (a trajectory's effort, a target moment) or None.
        current: commanded motor current [A] or None.
        source: where it was read (a topic, a logger's columns, a simulator).
    """

    q: np.ndarray
    dq: np.ndarray
    ddq: np.ndarray | None = None
    effort: np.ndarray | None = None
    current: np.ndarray | None = None
    source: str = ''

    def signals(self) -> dict[str, np.ndarray]:
        """The signals present, by name."""
        return {name: getattr(self, name) for name in REFERENCE_SIGNALS if getattr(self, name) is not None}

    @classmethod
    def of_keys(cls, signals: dict, source: str = '') -> Reference | None:
        """The reference held in ``signals`` under :data:`REFERENCE_KEYS` (``q_r``, ``dq_r``, …), or None where they
        lack q_r or dq_r."""
        if signals.get('q_r') is None or signals.get('dq_r') is None:
            return None
        return cls(**{name: signals.get(key) for key, name in REFERENCE_KEYS.items()}, source=source)

    def keyed(self) -> dict[str, np.ndarray]:
        """The signals present under :data:`REFERENCE_KEYS` (the inverse of :meth:`of_keys`)."""
        return {key: getattr(self, name) for key, name in REFERENCE_KEYS.items() if getattr(self, name) is not None}

    def describe(self) -> str:
        """One line for people: the signals present and where they were read, e.g. 'q_r, q̇_r, q̈_r, commanded
        torque from RTDE target_*'."""
        return ', '.join(_SPOKEN[name] for name in self.signals()) + (f' from {self.source}' if self.source else '')

    def checked(self, shape: tuple[int, int]) -> Reference:
        """The reference with its signals as float arrays of ``shape`` (N, n); InputError naming the signal
        otherwise."""
        values = {}
        for name in REFERENCE_SIGNALS:
            value = getattr(self, name)
            if value is None:
                if name in ('q', 'dq'):
                    raise InputError(f'reference signal {name} is required')
                values[name] = None
                continue
            a = np.asarray(value, dtype=float)
            if a.shape != shape:
                raise InputError(f'reference signal {name} has shape {a.shape}, expected {shape}')
            if not np.all(np.isfinite(a)):
                bad = int(np.count_nonzero(~np.isfinite(a)))
                raise InputError(f'reference signal {name} holds {bad} NaN or infinite values')
            values[name] = a
        return Reference(**values, source=self.source)

    def taken(self, index) -> Reference:
        """The samples (first axis) or joints (``(slice(None), columns)``) ``index`` of every signal."""
        return replace(self, **{name: value[index] for name, value in self.signals().items()})


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
        reference: the controller's reference at the samples (:class:`Reference`) or None.
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
    reference: Reference | None = None
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
        if self.reference is not None:
            self.reference = self.reference.checked((t.size, len(names)))

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
        if self.reference is not None:
            values['reference'] = self.reference.taken((slice(None), index))
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

    def with_torque_signs(self, signs) -> Dataset:
        """The same recording with joint_states' effort of some joints negated, for a driver whose sign
        convention differs from the robot file's: ``tau``, or ``current`` where it was read from the effort
        (``source['joint_states_effort']``; a joint_currents topic is left alone). ``signs`` maps joint names
        to +1 or −1; ``source['torque_sign']`` keeps the joints negated."""
        unknown = [name for name in signs if name not in self.joint_names]
        if unknown:
            raise InputError(f'torque_sign names joints {unknown} the recording does not have: '
                             f'{list(self.joint_names)}')
        bad = {name: value for name, value in signs.items() if value not in (1, -1)}
        if bad:
            raise InputError(f'torque_sign must be +1 or -1 per joint, got {bad}')
        factor = np.array([signs.get(name, 1) for name in self.joint_names], dtype=float)
        if np.all(factor == 1):
            return self
        values = {f.name: getattr(self, f.name) for f in fields(self)}
        effort = 'current' if self.source.get('joint_states_effort') == 'current' else 'tau'
        if values[effort] is not None:
            values[effort] = values[effort] * factor
        flipped = [name for name, f in zip(self.joint_names, factor, strict=True) if f < 0]
        values['source'] = {**self.source, 'torque_sign': {name: -1 for name in flipped}}
        return Dataset(**values)

    def sliced(self, start: int, stop: int) -> Dataset:
        """Samples start..stop−1."""
        return self.taken(slice(start, stop))

    def taken(self, index) -> Dataset:
        """The samples ``index`` (a slice, a boolean mask, or indices in time order) of the time, every joint signal
        and the reference: e.g. a recording without the samples it lost on the way."""
        values = {f.name: getattr(self, f.name) for f in fields(self)}
        values.update({name: value[index] for name, value in self.signals().items()})
        if self.reference is not None:
            values['reference'] = self.reference.taken(index)
        values['t'] = self.t[index]
        return Dataset(**values)

    def split_holdout(self, fraction: float) -> tuple[Dataset, Dataset]:
        """(the first part, the last ``fraction`` of the recording's time span): the samples before and from
        t₀ + (1 − fraction)·(t_end − t₀). The same recording and fraction always give the same split, so that an
        identification and a validation with the same ``holdout`` score the same samples; each part is
        filtered on its own, so no held-out sample enters the training filters."""
        if not (np.isfinite(fraction) and 0.0 < fraction < 1.0):
            raise InputError(f'holdout must be a fraction between 0 and 1, got {fraction!r}')
        cut = int(np.searchsorted(self.t, self.t[0] + (1.0 - fraction) * (self.t[-1] - self.t[0]), side='left'))
        if cut < 2 or len(self.t) - cut < 2:
            raise InputError(f'holdout {fraction:g} leaves fewer than 2 samples on one side of the split')
        source = dict(self.source)
        return (replace(self.sliced(0, cut), source={**source, 'holdout': f'first {1 - fraction:g} of the time'}),
                replace(self.sliced(cut, len(self.t)), source={**source, 'holdout': f'last {fraction:g} of the time'}))


def parse_torque_signs(items, joint_names, name: str = 'torque_sign') -> dict[str, int]:
    """{joint: ±1} from items 'JOINT=-1' (or 'JOINT=1', 'all=-1' for every joint of ``joint_names``), each item
    possibly a comma-separated list; errors name ``name`` (the option or parameter they came from)."""
    signs: dict[str, int] = {}
    for item in (part.strip() for text in items or () for part in str(text).split(',')):
        if not item:
            continue
        joint, _, value = item.rpartition('=')
        try:
            sign = float(value)
        except ValueError:
            sign = 0.0
        if not joint or sign not in (1.0, -1.0):
            raise InputError(f'{name} takes JOINT=-1 (or JOINT=1, all=-1), got {item!r}')
        for joint_name in joint_names if joint == 'all' else [joint]:
            signs[joint_name] = int(sign)
    return signs
