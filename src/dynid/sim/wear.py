"""Wear over many sessions: the twin's joints changing slowly (or suddenly) from one session to the next.

:mod:`dynid.sim.changes` changes the true joints within one run; here a robot's life is a sequence
of sessions (a 30 s test motion once a day, say), each its own twin run, and the truth moves between
them. A :class:`WearChange` acts on some joints from ``onset_day`` on, as a step (a collision, a
damaged gear: the stiffness scaled by 1 + ``stiffness_step``, the Coulomb level by
1 + ``coulomb_step``) and/or a linear drift per week (wear: friction rising a few per cent a week,
stiffness falling). Changes on one joint multiply. Each session runs with its own ambient and start
temperature, so that temperature varies between sessions as in a real cell (±15 °C around 25 °C by
default, uniform, seeded).

Inside a session the twin is given the session's factors as :class:`JointChange` at t = 0 (scales of
the values when the twin was made, so the Coulomb scale moves Fc0 and Fc1 and keeps the Stribeck
excess, as :mod:`dynid.sim.changes` says).

    >>> schedule = SessionSchedule.regular(60, changes=[WearChange(20.0, ('elbow_joint',),
    ...                                                            coulomb_per_week=0.04)])  # doctest: +SKIP
    >>> for session in simulate_sessions(params, schedule, trajectory, 30.0): ...     # doctest: +SKIP
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

import numpy as np

from dynid.checks import finite
from dynid.errors import InputError
from dynid.sim.changes import AppliedJointChange, JointChange, joint_mask
from dynid.sim.parameters import PlantParameters
from dynid.sim.twin import DigitalTwin, SimulationRecord

DAYS_PER_WEEK = 7.0
#: the smallest factor a change may bring a joint to (a stiffness or Coulomb level must stay > 0)
MIN_FACTOR = 0.05


@dataclass(frozen=True)
class WearChange:
    """A change of the true joints from ``onset_day`` [days] on (module docstring).

    Args:
        onset_day: when it starts [days since the first session].
        joints: joint names, or None for every joint.
        stiffness_step, coulomb_step: relative step at the onset [-] (−0.1: 10 % lower).
        stiffness_per_week, coulomb_per_week: relative change per week after the onset [-/week]
            (linear in time: factor 1 + rate·(day − onset_day)/7).
    """

    onset_day: float
    joints: tuple[str, ...] | None = None
    stiffness_step: float = 0.0
    coulomb_step: float = 0.0
    stiffness_per_week: float = 0.0
    coulomb_per_week: float = 0.0

    def __post_init__(self) -> None:
        for name in ('onset_day', 'stiffness_step', 'coulomb_step', 'stiffness_per_week', 'coulomb_per_week'):
            object.__setattr__(self, name, finite(getattr(self, name), f'wear change {name}'))
        if self.joints is not None:
            joints = (self.joints,) if isinstance(self.joints, str) else tuple(self.joints)
            if not joints or not all(isinstance(j, str) and j for j in joints):
                raise InputError(f'wear change joints must be joint names, got {self.joints!r}')
            object.__setattr__(self, 'joints', joints)

    def factors(self, day: float) -> tuple[float, float]:
        """(stiffness factor, Coulomb factor) [-] of this change alone on ``day``."""
        if day < self.onset_day:
            return 1.0, 1.0
        weeks = (day - self.onset_day) / DAYS_PER_WEEK
        return (1.0 + self.stiffness_step + self.stiffness_per_week * weeks,
                1.0 + self.coulomb_step + self.coulomb_per_week * weeks)

    def mask(self, joint_names: Sequence[str]) -> np.ndarray:
        """(n,) bool: the joints of ``joint_names`` this change acts on; InputError for unknown names."""
        return joint_mask(self.joints, joint_names, f'wear change at day {self.onset_day:g}')


@dataclass(frozen=True)
class SessionSchedule:
    """When the sessions run, at which temperature, and how the joints wear (module docstring).

    Attributes:
        days: (S,) session times [days since the first session], increasing.
        temperature_c: (S,) ambient and start temperature of each session [°C].
        changes: the :class:`WearChange` s.
    """

    days: np.ndarray
    temperature_c: np.ndarray
    changes: tuple[WearChange, ...] = field(default_factory=tuple)

    def __post_init__(self) -> None:
        days = np.asarray(self.days, dtype=float).reshape(-1)
        temperature = np.broadcast_to(np.asarray(self.temperature_c, dtype=float), days.shape).copy()
        if days.size == 0 or not np.all(np.isfinite(days)) or np.any(np.diff(days) <= 0):
            raise InputError('session days must be finite and increasing (at least one session)')
        if not np.all(np.isfinite(temperature)) or np.any(temperature < -20) or np.any(temperature > 80):
            raise InputError('session temperatures must be within −20–80 °C')
        object.__setattr__(self, 'days', days)
        object.__setattr__(self, 'temperature_c', temperature)
        object.__setattr__(self, 'changes', tuple(self.changes))

    @classmethod
    def regular(cls, sessions: int, interval_days: float = 1.0, temperature_c: float = 25.0,
                temperature_spread_c: float = 15.0, changes: Sequence[WearChange] = (), seed: int = 0
                ) -> SessionSchedule:
        """``sessions`` sessions every ``interval_days``, temperature uniform in temperature_c ± spread."""
        if isinstance(sessions, bool) or not isinstance(sessions, int) or sessions < 1:
            raise InputError(f'sessions must be an integer >= 1, got {sessions!r}')
        if not finite(interval_days, 'interval_days') > 0:
            raise InputError(f'interval_days must be > 0, got {interval_days!r}')
        spread = abs(finite(temperature_spread_c, 'temperature_spread_c'))
        temperature = finite(temperature_c, 'temperature_c') + np.random.default_rng(seed).uniform(
            -spread, spread, sessions)
        return cls(np.arange(sessions) * float(interval_days), temperature, tuple(changes))

    def __len__(self) -> int:
        return int(self.days.size)

    def factors(self, joint_names: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """(stiffness, Coulomb) factors [-], each (S, n): the truth of every session."""
        stiffness = np.ones((len(self), len(joint_names)))
        coulomb = np.ones_like(stiffness)
        for change in self.changes:
            mask = change.mask(joint_names)
            for k, day in enumerate(self.days):
                s, c = change.factors(day)
                stiffness[k, mask] *= s
                coulomb[k, mask] *= c
        if np.any(stiffness < MIN_FACTOR) or np.any(coulomb < MIN_FACTOR):
            raise InputError(f'the wear changes bring a joint below {MIN_FACTOR} of its stiffness or Coulomb level')
        return stiffness, coulomb

    def joint_changes(self, k: int, joint_names: Sequence[str]) -> list[JointChange]:
        """The changes that give session ``k``'s truth at t = 0 of its twin run (one per changed joint)."""
        stiffness, coulomb = (f[k] for f in self.factors(joint_names))
        changes = []
        for j, name in enumerate(joint_names):
            values = {}
            if stiffness[j] != 1.0:
                values['stiffness_scale'] = float(stiffness[j])
            if coulomb[j] != 1.0:
                values['coulomb_scale'] = float(coulomb[j])
            if values:
                changes.append(JointChange(0.0, (name,), **values))
        return changes


@dataclass
class TwinSession:
    """One simulated session: its index, day [days], temperature [°C], the true factors (n,), the record and
    the changes the twin applied (with the joint parameters before and after)."""

    index: int
    day: float
    temperature_c: float
    stiffness_factor: np.ndarray
    coulomb_factor: np.ndarray
    record: SimulationRecord
    applied: list[AppliedJointChange]


def simulate_sessions(params: PlantParameters, schedule: SessionSchedule, trajectory, duration_s: float,
                      rate_hz: float = 1000.0, seed: int = 0, initial_q: np.ndarray | None = None,
                      sessions: Sequence[int] | None = None) -> Iterator[TwinSession]:
    """Run the twin once per session of ``schedule`` (module docstring), lazily, in order.

    Args:
        params: the plant when new (its joints are the factors' reference).
        schedule: days, temperatures and wear.
        trajectory: the motion of every session (a robot repeating its test), followed from t = 0.
        duration_s: length of each session [s].
        rate_hz: output rate [Hz]; seed: the sensor noise of session k is seeded with seed + k.
        initial_q: start position; default the trajectory's start.
        sessions: indices to run (default all).
    """
    names = params.robot.joint_names
    stiffness, coulomb = schedule.factors(names)  # validates the changes before the first run
    if initial_q is None:
        from dynid.sim.twin import trajectory_start

        initial_q = trajectory_start(trajectory, names)
    for k in range(len(schedule)) if sessions is None else sessions:
        temperature = float(schedule.temperature_c[k])
        plant = dataclasses.replace(params, ambient_c=temperature, initial_temperature_c=temperature)
        twin = DigitalTwin(plant, rate_hz=rate_hz, seed=seed + k, initial_q=initial_q,
                           joint_changes=schedule.joint_changes(k, names))
        twin.follow(trajectory)
        record = twin.run(duration_s)
        yield TwinSession(k, float(schedule.days[k]), temperature, stiffness[k].copy(), coulomb[k].copy(), record,
                          list(twin.applied_joint_changes))
