"""Joint trajectories: finite Fourier series, sampled point lists, and the dynid trajectory file.

A trajectory maps time t [s] (from its start) to link-side positions q [rad], velocities [rad/s]
and accelerations [rad/s²], each (N, n) for N query times, joints in ``joint_names`` order.

**Fourier series** (Swevers et al. 1997; Li et al. 2024 eq. (20)), ω_f = 2π·base_frequency_hz:

    q_j(t) = q_j0 + Σ_{k=1..H} (a_jk·sin(k·ω_f·t) + b_jk·cos(k·ω_f·t))

**Points** (the semantics of ros2_control's joint_trajectory_controller with spline interpolation):
quintic Hermite segments where positions, velocities and accelerations are given, cubic Hermite
with positions and velocities, linear with positions only; before the first point the first point
is held, after the last point the last position is held at rest.

**File** (YAML, versioned)::

    dynid_trajectory: 1
    joint_names: [shoulder_pan_joint, ...]
    duration_s: 10.0                      # optional for fourier (default: one period)
    fourier:                              # either this ...
      base_frequency_hz: 0.1
      offset: [q10, q20, ...]             # rad
      sine: [[a11, a12, ...], ...]        # rad, one row per joint, one column per harmonic
      cosine: [[b11, ...], ...]           # rad
    points:                               # ... or this
      time_s: [0.0, 0.5, ...]             # strictly increasing
      positions: [[...], ...]             # rad, one row per point
      velocities: [[...], ...]            # optional
      accelerations: [[...], ...]         # optional
    experiment: {name: ..., ...}          # optional: how it was made (excitation report, settings)
    payload_schedule:                     # optional: payload changes, applied by `dynid simulate`
      - {start_s: 0.0, mass_kg: 0.0, com: [0, 0, 0.05]}
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import yaml

from dynid.errors import InputError
from dynid.files import read_yaml, write_text
from dynid.schema import ANY, Fields, Items, Number, OneOf, Text, check, vector

TRAJECTORY_FILE_VERSION = 1
DURATION_LIMIT_S = 1.0e6  # the longest trajectory a file may describe [s]
ANGLE_LIMIT_RAD = 1.0e3  # what a position, velocity or acceleration may be at all [rad, rad/s, rad/s²]

_ANGLES = Number('rad', low=-ANGLE_LIMIT_RAD, high=ANGLE_LIMIT_RAD)
_FOURIER = Fields(required={'base_frequency_hz': Number('Hz', above=0.0, high=1.0e3),
                            'offset': Items(_ANGLES, length='joints'),
                            'sine': Items(Items(_ANGLES, least=1), length='joints'),
                            'cosine': Items(Items(_ANGLES, least=1), length='joints')})
_POINTS = Fields(required={'time_s': Items(Number('s', low=0.0, high=DURATION_LIMIT_S), least=1),
                           'positions': Items(Items(_ANGLES, length='joints'), least=1)},
                 optional={name: Items(Items(Number(unit, low=-ANGLE_LIMIT_RAD, high=ANGLE_LIMIT_RAD),
                                             length='joints'), null=True)
                           for name, unit in (('velocities', 'rad/s'), ('accelerations', 'rad/s²'))})
#: one payload change of a trajectory file's ``payload_schedule`` (applied by ``dynid simulate``)
PAYLOAD_CHANGE = Fields(required={'start_s': Number('s', low=0.0, high=DURATION_LIMIT_S),
                                  'mass_kg': Number('kg', low=0.0, high=1.0e4)},
                        optional={'com': vector(3, 'm')}, name='a {start_s, mass_kg, com} entry')
#: a dynid trajectory file (module docstring); ``experiment`` describes how it was made, for people, but the
#: experiment's name and joint, which the friction identification reads
TRAJECTORY_FILE = Fields(
    required={'dynid_trajectory': Number(low=TRAJECTORY_FILE_VERSION, high=TRAJECTORY_FILE_VERSION, integer=True),
              'joint_names': Items(Text(empty=False), least=1, name='a list of joint names')},
    optional={'duration_s': Number('s', above=0.0, high=DURATION_LIMIT_S, null=True), 'fourier': _FOURIER,
              'points': _POINTS, 'payload_schedule': Items(PAYLOAD_CHANGE, null=True),
              'joint_changes': Items(Fields(others=ANY), null=True),  # dynid.sim.changes checks each
              'experiment': Fields(optional={'name': Text(), 'joint': OneOf((Text(), Number(low=0, integer=True)),
                                                                            'a joint name or index')},
                                   others=ANY, null=True)})


def _matrix(values, rows: int | None, columns: int | None, what: str) -> np.ndarray:
    try:
        a = np.array(values, dtype=float)
    except (TypeError, ValueError):
        raise InputError(f'{what} must be numbers') from None
    a = a.reshape(1, -1) if a.ndim == 1 and rows == 1 else a
    if a.ndim != 2 or (rows is not None and a.shape[0] != rows) or (columns is not None and a.shape[1] != columns):
        raise InputError(f'{what} has shape {a.shape}; expected ({rows or "N"}, {columns or "M"})')
    if not np.all(np.isfinite(a)):
        raise InputError(f'{what} holds NaN or infinite values')
    return a


@dataclass(frozen=True, eq=False)
class FourierTrajectory:
    """Finite Fourier series per joint (module docstring); analytic derivatives of any order.

    Attributes:
        joint_names: n joint names.
        base_frequency_hz: f_f [Hz] > 0; the period is 1/f_f.
        offset: (n,) q_j0 [rad]. sine, cosine: (n, H) a_jk, b_jk [rad].
        duration_s: length [s]; default one period.
    """

    joint_names: tuple[str, ...]
    base_frequency_hz: float
    offset: np.ndarray
    sine: np.ndarray
    cosine: np.ndarray
    duration_s: float | None = None

    def __post_init__(self) -> None:
        names = tuple(self.joint_names)
        n = len(names)
        if n == 0 or len(set(names)) != n:
            raise InputError(f'joint names must be unique and non-empty, got {names!r}')
        if not np.isfinite(self.base_frequency_hz) or self.base_frequency_hz <= 0:
            raise InputError(f'base_frequency_hz must be > 0, got {self.base_frequency_hz!r}')
        sine = _matrix(self.sine, n, None, 'fourier sine amplitudes')
        cosine = _matrix(self.cosine, n, sine.shape[1], 'fourier cosine amplitudes')
        offset = _matrix(self.offset, 1, n, 'fourier offset')[0]
        duration = 1.0 / self.base_frequency_hz if self.duration_s is None else float(self.duration_s)
        if not np.isfinite(duration) or duration <= 0:
            raise InputError(f'duration_s must be > 0, got {self.duration_s!r}')
        for name, value in (('joint_names', names), ('offset', offset), ('sine', sine), ('cosine', cosine),
                            ('duration_s', duration), ('base_frequency_hz', float(self.base_frequency_hz)),
                            ('_amplitudes', np.hstack([sine, cosine]))):
            object.__setattr__(self, name, value)

    @property
    def harmonics(self) -> int:
        """H, the number of harmonics."""
        return self.sine.shape[1]

    def derivative(self, t: np.ndarray, order: int) -> np.ndarray:
        """d^order q / dt^order at times t (N,) [s]; returns (N, n)."""
        t = np.atleast_1d(np.asarray(t, dtype=float))
        w = 2.0 * np.pi * self.base_frequency_hz * np.arange(1, self.harmonics + 1)  # (H,)
        phase = np.outer(t, w)                                                       # (N, H)
        # d^m/dt^m sin(wt) = w^m sin(wt + mπ/2), likewise for cos.
        scale = w**order
        sin_m = np.sin(phase + order * np.pi / 2) * scale
        cos_m = np.cos(phase + order * np.pi / 2) * scale
        value = sin_m @ self.sine.T + cos_m @ self.cosine.T
        return value + self.offset if order == 0 else value

    def evaluate(self, t: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(q, q̇, q̈) at times t (N,) [s], each (N, n), from one evaluation of the sines and cosines."""
        t = np.atleast_1d(np.asarray(t, dtype=float))
        w = 2.0 * np.pi * self.base_frequency_hz * np.arange(1, self.harmonics + 1)
        phase = np.outer(t, w)
        sin, cos = np.sin(phase), np.cos(phase)
        # One product with [a | b] (n, 2H) for each order: [sin, cos], w·[cos, −sin], −w²·[sin, cos].
        basis = np.stack([np.hstack([sin, cos]), np.hstack([cos * w, -sin * w]),
                          -np.hstack([sin * w**2, cos * w**2])])
        q, dq, ddq = basis @ self._amplitudes.T
        return q + self.offset, dq, ddq

    def to_dict(self) -> dict:
        return {'dynid_trajectory': TRAJECTORY_FILE_VERSION, 'joint_names': list(self.joint_names),
                'duration_s': self.duration_s,
                'fourier': {'base_frequency_hz': self.base_frequency_hz, 'offset': self.offset.tolist(),
                            'sine': self.sine.tolist(), 'cosine': self.cosine.tolist()}}


def _hermite_coefficients(p0, v0, a0, p1, v1, a1, h):
    """Quintic coefficients c0..c5 of p(s) = Σ c_i s^i on [0, h] matching both ends' p, v, a."""
    c0, c1, c2 = p0, v0, a0 / 2.0
    d = p1 - (c0 + c1 * h + c2 * h**2)
    e = v1 - (c1 + 2 * c2 * h)
    f = a1 - 2 * c2
    c3 = (10 * d - 4 * e * h + f * h**2 / 2) / h**3
    c4 = (-15 * d + 7 * e * h - f * h**2) / h**4
    c5 = (6 * d - 3 * e * h + f * h**2 / 2) / h**5
    return np.stack([c0, c1, c2, c3, c4, c5])


@dataclass(frozen=True, eq=False)
class PointTrajectory:
    """Waypoints with spline interpolation like joint_trajectory_controller (module docstring).

    Attributes:
        joint_names: n names. time_s: (P,) strictly increasing [s] from the trajectory start.
        positions: (P, n) [rad]. velocities, accelerations: (P, n) or None.
    """

    joint_names: tuple[str, ...]
    time_s: np.ndarray
    positions: np.ndarray
    velocities: np.ndarray | None = None
    accelerations: np.ndarray | None = None

    def __post_init__(self) -> None:
        names = tuple(self.joint_names)
        if not names or len(set(names)) != len(names):
            raise InputError(f'joint names must be unique and non-empty, got {names!r}')
        time = _matrix(self.time_s, 1, None, 'point times')[0]
        if time.size == 0 or np.any(np.diff(time) <= 0) or time[0] < 0:
            raise InputError('point times must be >= 0 and strictly increasing')
        positions = _matrix(self.positions, time.size, len(names), 'positions')
        velocities = None if self.velocities is None else _matrix(
            self.velocities, time.size, len(names), 'velocities')
        accelerations = None if self.accelerations is None else _matrix(
            self.accelerations, time.size, len(names), 'accelerations')
        if accelerations is not None and velocities is None:
            raise InputError('accelerations need velocities too')
        for name, value in (('joint_names', names), ('time_s', time), ('positions', positions),
                            ('velocities', velocities), ('accelerations', accelerations)):
            object.__setattr__(self, name, value)
        object.__setattr__(self, '_coefficients', self._segment_coefficients())

    @property
    def duration_s(self) -> float:
        """Time of the last point [s]."""
        return float(self.time_s[-1])

    def _segment_coefficients(self) -> np.ndarray:
        """(segments, 6, n) quintic coefficients (lower orders are quintics with zero top terms)."""
        p = self.positions
        if p.shape[0] == 1:
            return np.zeros((0, 6, p.shape[1]))
        h = np.diff(self.time_s)[:, None]
        if self.velocities is None:  # linear
            slope = np.diff(p, axis=0) / h
            coefficients = np.zeros((h.shape[0], 6, p.shape[1]))
            coefficients[:, 0], coefficients[:, 1] = p[:-1], slope
            return coefficients
        v = self.velocities
        a = np.zeros_like(p) if self.accelerations is None else self.accelerations
        if self.accelerations is None:  # cubic Hermite: quintic with the cubic's own end accelerations
            d = p[1:] - p[:-1]
            c2 = (3 * d / h - 2 * v[:-1] - v[1:]) / h
            c3 = (v[:-1] + v[1:] - 2 * d / h) / h**2
            coefficients = np.zeros((h.shape[0], 6, p.shape[1]))
            coefficients[:, 0], coefficients[:, 1], coefficients[:, 2], coefficients[:, 3] = p[:-1], v[:-1], c2, c3
            return coefficients
        return np.moveaxis(_hermite_coefficients(p[:-1], v[:-1], a[:-1], p[1:], v[1:], a[1:], h), 0, 1)

    def evaluate(self, t: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(q, q̇, q̈) at times t (N,) [s]; holds the first point before it and the last after."""
        t = np.atleast_1d(np.asarray(t, dtype=float))
        if t.size == 1:  # the simulator's per-step call: plain indexing, twice as fast as the masks below
            return self._evaluate_one(float(t[0]))
        n = self.positions.shape[1]
        q = np.empty((t.size, n))
        dq = np.zeros((t.size, n))
        ddq = np.zeros((t.size, n))
        before, after = t <= self.time_s[0], t >= self.time_s[-1]
        q[before], q[after] = self.positions[0], self.positions[-1]
        inside = ~(before | after)
        if np.any(inside):
            segment = np.searchsorted(self.time_s, t[inside], side='right') - 1
            s = (t[inside] - self.time_s[segment])[:, None]
            c = self._coefficients[segment]  # (M, 6, n)
            q[inside] = c[:, 0] + s * (c[:, 1] + s * (c[:, 2] + s * (c[:, 3] + s * (c[:, 4] + s * c[:, 5]))))
            dq[inside] = c[:, 1] + s * (2 * c[:, 2] + s * (3 * c[:, 3] + s * (4 * c[:, 4] + s * 5 * c[:, 5])))
            ddq[inside] = 2 * c[:, 2] + s * (6 * c[:, 3] + s * (12 * c[:, 4] + s * 20 * c[:, 5]))
        return q, dq, ddq

    def _evaluate_one(self, t: float):
        n = self.positions.shape[1]
        zero = np.zeros((1, n))
        if t <= self.time_s[0] or t >= self.time_s[-1]:
            q = self.positions[0] if t <= self.time_s[0] else self.positions[-1]
            return q[None, :].copy(), zero, zero.copy()
        k = int(np.searchsorted(self.time_s, t, side='right')) - 1
        s = t - self.time_s[k]
        c0, c1, c2, c3, c4, c5 = self._coefficients[k]
        q = c0 + s * (c1 + s * (c2 + s * (c3 + s * (c4 + s * c5))))
        dq = c1 + s * (2 * c2 + s * (3 * c3 + s * (4 * c4 + s * 5 * c5)))
        ddq = 2 * c2 + s * (6 * c3 + s * (12 * c4 + s * 20 * c5))
        return q[None, :], dq[None, :], ddq[None, :]

    def to_dict(self) -> dict:
        points = {'time_s': self.time_s.tolist(), 'positions': self.positions.tolist()}
        if self.velocities is not None:
            points['velocities'] = self.velocities.tolist()
        if self.accelerations is not None:
            points['accelerations'] = self.accelerations.tolist()
        return {'dynid_trajectory': TRAJECTORY_FILE_VERSION, 'joint_names': list(self.joint_names),
                'duration_s': self.duration_s, 'points': points}


Trajectory = FourierTrajectory | PointTrajectory


def approach_segment(start: np.ndarray, goal: np.ndarray, velocity: float, rate_hz: float,
                     minimum_s: float = 1.0):
    """Quintic rest-to-rest move (times, q, q̇, q̈) from start to goal; peak speed ≤ velocity [rad/s], points
    1/rate_hz [s] apart (the duration rounded up to whole periods)."""
    start, goal = np.asarray(start, dtype=float), np.asarray(goal, dtype=float)
    if not np.isfinite(velocity) or velocity <= 0:
        raise InputError(f'approach velocity must be > 0 rad/s, got {velocity!r}')
    distance = np.abs(goal - start).max()
    duration = max(minimum_s, 1.875 * distance / velocity)  # a quintic's peak speed is 1.875·d/T
    steps = max(1, int(np.ceil(duration * rate_hz - 1e-9)))
    duration = steps / rate_hz  # a whole number of periods: the points are 1/rate_hz apart, as the rest
    t = np.arange(steps + 1) / rate_hz
    s = t / duration
    shape = 10 * s**3 - 15 * s**4 + 6 * s**5
    rate = (30 * s**2 - 60 * s**3 + 30 * s**4) / duration
    curve = (60 * s - 180 * s**2 + 120 * s**3) / duration**2
    delta = goal - start
    return t, start + np.outer(shape, delta), np.outer(rate, delta), np.outer(curve, delta)


def approach_trajectory(joint_names, start: np.ndarray, goal: np.ndarray, velocity: float = 0.3,
                        rate_hz: float = 100.0) -> PointTrajectory:
    """:func:`approach_segment` as a point trajectory."""
    return PointTrajectory(tuple(joint_names), *approach_segment(start, goal, velocity, rate_hz))


def chunk_timeline(joint_names, times: np.ndarray, q: np.ndarray, dq: np.ndarray, ddq: np.ndarray,
                   chunk_s: float) -> list[tuple[float, PointTrajectory]]:
    """A sampled trajectory cut into pieces of ``chunk_s`` seconds for streaming to a controller.

    Returns [(start [s] from ``times[0]``'s origin, piece with times from 0)]; every piece after
    the first begins with the last point of the piece before, so each starts exactly where the
    previous one ended (a joint_trajectory_controller replaces the active trajectory at the start
    of the next one).
    """
    times = np.asarray(times, dtype=float)
    edges = np.arange(0.0, times[-1] + chunk_s, chunk_s)
    chunks = []
    for begin in edges:
        inside = np.flatnonzero((times >= begin - 1e-9) & (times < begin + chunk_s - 1e-9))
        if inside.size == 0:
            continue
        if chunks:
            inside = np.concatenate([[inside[0] - 1], inside])
        first = times[inside[0]]
        chunks.append((float(first), PointTrajectory(tuple(joint_names), times[inside] - first, q[inside],
                                                     dq[inside], ddq[inside])))
    return chunks


def trajectory_from_dict(data, source: str = 'trajectory') -> Trajectory:
    """A trajectory from the parsed content of a dynid trajectory file (module docstring)."""
    if not isinstance(data, dict) or data.get('dynid_trajectory') != TRAJECTORY_FILE_VERSION:
        raise InputError(f'{source} is not a dynid trajectory file (needs "dynid_trajectory: '
                         f'{TRAJECTORY_FILE_VERSION}")')
    names = check(data.get('joint_names'), TRAJECTORY_FILE.required['joint_names'], f'{source}: joint_names')
    check(data, TRAJECTORY_FILE, source, joints=names)
    if ('fourier' in data) == ('points' in data):
        raise InputError(f'{source}: give exactly one of "fourier" or "points"')
    try:
        if 'fourier' in data:
            f = data['fourier']
            return FourierTrajectory(tuple(names), float(f['base_frequency_hz']), f['offset'], f['sine'],
                                     f['cosine'], data.get('duration_s'))
        p = data['points']
        return PointTrajectory(tuple(names), p['time_s'], p['positions'], p.get('velocities'),
                               p.get('accelerations'))
    except (KeyError, TypeError) as error:
        raise InputError(f'{source}: missing or malformed field {error}') from None
    except InputError as error:
        raise InputError(f'{source}: {error}') from None


#: Ready-made excitations shipped with dynid (optimized with ``dynid excite --optimize``).
BUILTIN_EXCITATIONS = {'ur5e': 'ur5e_excitation.yaml'}


def builtin_excitation_path(robot_name: str) -> Path:
    """Path of the shipped optimized excitation of a robot (UR5e: 5 harmonics, 10 s, cond(W_b) ≈ 32)."""
    if robot_name not in BUILTIN_EXCITATIONS:
        raise InputError(f'no built-in excitation for {robot_name!r}; design and optimize one with dynid excite')
    from importlib import resources

    return Path(str(resources.files('dynid.excite').joinpath('data', BUILTIN_EXCITATIONS[robot_name])))


def load_trajectory(path: str | os.PathLike) -> Trajectory:
    """Read a dynid trajectory file."""
    return trajectory_from_dict(read_yaml(path, 'trajectory file'), str(path))


def save_trajectory(trajectory: Trajectory, path: str | os.PathLike, metadata: dict | None = None) -> None:
    """Write a dynid trajectory file; ``metadata`` adds the optional ``experiment`` and
    ``payload_schedule`` sections."""
    document = trajectory.to_dict()
    for key, value in (metadata or {}).items():
        if key not in ('experiment', 'payload_schedule'):
            raise InputError(f'unknown trajectory file section {key!r}')
        document[key] = value
    write_text(path, yaml.safe_dump(document, sort_keys=False))


def load_trajectory_metadata(path: str | os.PathLike) -> dict:
    """The optional sections of a trajectory file: ``experiment`` and a validated ``payload_schedule``."""
    data = read_yaml(path, 'trajectory file')
    if isinstance(data, dict):
        check(data, TRAJECTORY_FILE, str(path))
    metadata = {key: data[key] for key in ('experiment', 'payload_schedule') if isinstance(data, dict) and key in data}
    schedule = metadata.get('payload_schedule')
    if schedule is not None:
        entries = [{'start_s': float(e['start_s']), 'mass_kg': float(e['mass_kg']),
                    'com': [float(c) for c in e.get('com', [0.0, 0.0, 0.0])]} for e in schedule]
        starts = [e['start_s'] for e in entries]
        if any(b <= a for a, b in zip(starts, starts[1:], strict=False)) or any(e['mass_kg'] < 0 for e in entries):
            raise InputError(f'{path}: payload_schedule needs increasing start_s and masses >= 0')
        metadata['payload_schedule'] = entries
    return metadata


def reorder_trajectory_output(values: np.ndarray, source_names: Sequence[str],
                              target_names: Sequence[str]) -> np.ndarray:
    """Columns of (N, n) values taken by joint name from ``source_names`` into ``target_names`` order."""
    missing = [name for name in target_names if name not in source_names]
    if missing:
        raise InputError(f'trajectory has no joints {missing}; it has {list(source_names)}')
    index = [list(source_names).index(name) for name in target_names]
    return values[:, index]
