"""A robot's joint health from its record: every joint's stiffness and friction judged (:mod:`dynid.health.trend`).

The quantities: ``stiffness`` is α̂1 [N·m/rad] of the session; ``friction`` is the Coulomb level the
adaptive friction estimated, α̂1·Fc [N·m] (α̂1 alone where the result had no Fc). Events apply from
the first session at or after their time, to their joint or (joint None) to every joint. Beside the joints' own
trends, a robot may carry its place in its fleet (:class:`dynid.health.fleet_place.FleetPlace`): the parameters of
its identified model that stand apart from the other robots', judged without waiting for a trend.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from dynid.health.fleet_place import FleetPlace
from dynid.health.record import RobotHistory
from dynid.health.settings import HealthSettings
from dynid.health.trend import DAY_S, QuantityHealth, analyze_quantity

QUANTITIES = ('stiffness', 'friction')
STATE_ORDER = ('unknown', 'ok', 'warn', 'error')


def quantity_values(history: RobotHistory, quantity: str) -> tuple[np.ndarray, np.ndarray]:
    """(S, J) values of ``quantity`` (module docstring) and each session's standard deviation of them."""
    v = history.values
    if quantity == 'stiffness':
        return v['stiffness'], v['stiffness_std']
    scale = np.where(np.isfinite(v['coulomb_nm']), v['coulomb_nm'], 1.0)
    return v['friction_scale'] * scale, v['friction_scale_std'] * scale


@dataclass
class RobotHealth:
    """Every joint's :class:`QuantityHealth` of a robot, judged at ``now_utc`` [s since 1970 UTC]."""

    robot: str
    model: str
    joint_names: tuple[str, ...]
    sessions: int
    first_utc: float
    now_utc: float
    joints: dict[str, dict[str, QuantityHealth]] = field(default_factory=dict)
    fleet: FleetPlace | None = None  # its place in its fleet, where the record holds one

    @property
    def state(self) -> str:
        """The worst state of any joint and quantity, and of its place in its fleet ('warn' where it stands apart)."""
        states = [q.state for joint in self.joints.values() for q in joint.values()]
        if self.fleet is not None and self.fleet.apart:
            states.append(self.fleet.state)
        return max(states, key=STATE_ORDER.index) if states else 'unknown'

    def to_dict(self) -> dict:
        """Plain values for ``dynid health --json``."""
        return {'robot': self.robot, 'model': self.model, 'sessions': self.sessions, 'state': self.state,
                'first_utc': self.first_utc if math.isfinite(self.first_utc) else None, 'now_utc': self.now_utc,
                'joints': {joint: {q: h.to_dict() for q, h in quantities.items()}
                           for joint, quantities in self.joints.items()},
                'fleet': None if self.fleet is None else self.fleet.to_dict()}


def assess(history: RobotHistory, settings: HealthSettings | None = None, now_utc: float | None = None,
           quantities=QUANTITIES) -> RobotHealth:
    """Judge every joint and quantity of ``history`` (module docstring); ``now_utc`` defaults to the last session's
    start. Joints without any value of a quantity are left out of it."""
    settings = settings or HealthSettings()
    count = len(history)
    first = float(history.started_utc[0]) if count else math.nan
    now = now_utc if now_utc is not None else (float(history.started_utc[-1]) if count else math.nan)
    health = RobotHealth(history.robot, history.model, history.joint_names, count, first, now)
    if not count:
        return health
    t_days = (history.started_utc - first) / DAY_S
    now_days = (now - first) / DAY_S
    temperature = history.values['temperature_c']
    for j, joint in enumerate(history.joint_names):
        events = [(int(np.searchsorted(history.started_utc, e.time_utc, side='left')), e.kind)
                  for e in history.events if e.joint is None or e.joint == joint]
        judged = {}
        for quantity in quantities:
            values, spread = (a[:, j] for a in quantity_values(history, quantity))
            if not np.isfinite(values).any():
                continue
            column = temperature[:, j]
            load = history.values['load_rms_nm'][:, j] if 'load_rms_nm' in history.values else None
            judged[quantity] = analyze_quantity(joint, quantity, t_days, values,
                                                column if np.isfinite(column).any() else None, events, settings,
                                                now_days, spread, load)
        if judged:
            health.joints[joint] = judged
    return health
