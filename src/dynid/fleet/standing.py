"""Each robot's place in its fleet: how far each of its identified parameters stands from the other robots'.

Leave-one-out: robot r is judged against the population of the others (:func:`dynid.fleet.prior.robust_population`
over every robot but r), so that a faulty robot does not widen its own yardstick. Per parameter p it holds::

    z     = (v_rp − centre_p) / spread_p
    z_own = (v_rp − centre_p) / sqrt(spread_p² + (c_r·σ_rp)²)   (σ_rp: the robot's own σ; 0 where unknown)

with c_r the robot's σ inflation for its residual's autocorrelation (:class:`dynid.fleet.prior.FleetTable`,
:func:`dynid.identify.result.quality.std_inflation`): a least-squares σ takes the rows as independent, and a robot
whose estimate is off by six of its own σ where its residual's rows are correlated at 0.5 is off by about 3.5 of its
errors' σ (on the benchmark's twin fleet the only healthy robot named, a weak prior's base inertias, was such a
case: docs/fleet.md).

The null hypothesis: robot r is a healthy member of the fleet, its value drawn from the (normal) population the
others show. z is then about Student-t distributed: the spread is estimated from the n_p other robots holding p, by
the MAD (as the fleet prior's) below :data:`SN_FROM_OTHERS` of them and by Rousseeuw and Croux's (1993) Sn from
there on (:func:`standing_population`); each's variance is that of a standard deviation of e·n_p values, e its
asymptotic efficiency at the normal (0.37 and 0.58), so ν = e·(n_p − 1) degrees of freedom (at least 1). With K
parameters judged per robot, p is named when::

    |z_own| > t_ν⁻¹(1 − α / (2K)) · √(1 + π / (2·n_p))

(a two-sided Bonferroni bound, the root for the centre's own variance: the median's is π/(2·n_p) of the
population's): a healthy robot then has any parameter named with probability about α, the ``false_flag_rate`` (0.01:
one healthy robot in 100). Measured on simulated normal fleets (K = 60, 2 000–6 000 fleets each): 0.85–0.96 % named
with Sn from 20 robots up; with the MAD 0.2–0.4 % at 6–15 robots; Sn there would name 1.2–2.9 %, hence the switch
(docs/fleet.md).
abs(z_own) ≤ abs(z), so a parameter the robot itself identified poorly (a large σ_rp) is not named for a difference
its own noise explains. Fewer than 3 other robots holding p: p is not judged.

    >>> standings = fleet_standing(FleetTable.of(read_members(paths)))  # doctest: +SKIP
    >>> [entry.line() for s in standings for entry in s.apart]  # doctest: +SKIP
    ["cell-03: Fc_3 (friction, elbow_joint) 4.537 against the fleet's 3.014 (spread 0.16, 32 other robots): ..."]
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats

from dynid.errors import InputError
from dynid.fleet.prior import FleetMember, FleetTable, own_sigma_floor, robust_population
from dynid.health.fleet_place import FleetPlace
from dynid.identify import MIN_ROBOTS

#: the default chance that a healthy robot has any parameter named (:class:`dynid.fleet.settings.FleetPriorSettings`)
FALSE_FLAG_RATE = 0.01


#: the asymptotic efficiency of the MAD as an estimate of a normal population's σ (Rousseeuw and Croux 1993)
MAD_EFFICIENCY = 0.37
#: the asymptotic efficiency of Rousseeuw and Croux's (1993) Sn, and its consistency constant at the normal
SN_EFFICIENCY, SN_CONSTANT = 0.58, 1.1926
#: Sn's finite-sample factors c_n for n ≤ 9 other robots (Rousseeuw and Croux 1993; above: n/(n − 0.9) for odd n, 1
#: for even n)
_SN_SMALL = (np.nan, np.nan, 0.743, 1.851, 0.954, 1.351, 0.993, 1.198, 1.005, 1.131)
#: the fewest other robots whose spread the standing takes from Sn instead of the MAD (module docstring)
SN_FROM_OTHERS = 19


def sn_scale(values: np.ndarray) -> np.ndarray:
    """Rousseeuw and Croux's (1993) Sn of each column of ``values`` (robots × parameters; NaN: not held), an estimate
    of a normal population's σ: c_n·1.1926·lomed_i himed_j |v_i − v_j|; NaN for fewer than 2 values. O(n²) per
    column: fleets of tens of robots."""
    values = np.asarray(values, dtype=float)
    robots, columns = values.shape
    n = np.isfinite(values).sum(axis=0)
    distances = np.sort(np.abs(values[:, None, :] - values[None, :, :]), axis=1)  # a robot without the value: NaN, last
    himed = np.take_along_axis(distances, np.broadcast_to((n // 2)[None, None, :], (robots, 1, columns)), axis=1)[:, 0]
    lomed = np.take_along_axis(np.sort(himed, axis=0), np.maximum((n + 1) // 2 - 1, 0)[None, :], axis=0)[0]
    factor = np.where(n <= 9, np.asarray(_SN_SMALL)[np.clip(n, 0, 9)],
                      np.where(n % 2 == 1, n / np.maximum(n - 0.9, 1e-9), 1.0))
    return np.where(n >= 2, SN_CONSTANT * factor * lomed, np.nan)


def standing_population(values: np.ndarray, sigma: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(centre, spread, count) of the robots a robot is judged against (module docstring): as
    :func:`dynid.fleet.prior.robust_population` gives them, the spread of a parameter that at least
    :data:`SN_FROM_OTHERS` of them hold estimated by :func:`sn_scale` instead of the MAD (floored at their median own
    σ alike)."""
    centre, spread, count = robust_population(values, sigma)
    many = count >= SN_FROM_OTHERS
    if many.any():
        spread = spread.copy()
        spread[many] = np.fmax(sn_scale(values[:, many]), own_sigma_floor(values[:, many], sigma[:, many]))
    return centre, spread, count


def apart_threshold(parameters: int, others: np.ndarray | int, false_flag_rate: float = FALSE_FLAG_RATE):
    """abs(z) beyond which a parameter stands apart (module docstring): t_ν⁻¹(1 − α/(2K))·√(1 + π/(2n)) with n =
    ``others`` (the other robots holding it), ν = e·(n − 1) (e the efficiency of the spread's estimator: Sn's 0.58 from
    :data:`SN_FROM_OTHERS` on, else the MAD's 0.37; ν at least 1), K = ``parameters`` judged per robot, α =
    ``false_flag_rate``; the root widens it for the centre's own variance (the median's, π/(2n) of the population's)."""
    n = np.asarray(others, dtype=float)
    efficiency = np.where(n >= SN_FROM_OTHERS, SN_EFFICIENCY, MAD_EFFICIENCY)
    dof = np.maximum(efficiency * (n - 1.0), 1.0)
    return stats.t.isf(false_flag_rate / (2.0 * max(int(parameters), 1)), dof) * \
        np.sqrt(1.0 + np.pi / (2.0 * np.maximum(n, 1.0)))


@dataclass(frozen=True)
class ParameterStanding:
    """Where one parameter of one robot stands (module docstring); units those of the results; ``own_std``: c_r·σ_rp,
    the robot's own σ widened for its residual's autocorrelation."""

    robot: str
    name: str
    kind: str
    joint: str | None
    value: float
    own_std: float
    centre: float
    spread: float
    others: int
    z: float
    z_own: float
    threshold: float

    @property
    def apart(self) -> bool:
        return bool(abs(self.z_own) > self.threshold)

    @property
    def relative_percent(self) -> float:
        """(value − centre) / abs(centre) [%]; NaN for a centre of 0."""
        return 100.0 * (self.value - self.centre) / abs(self.centre) if self.centre != 0 else float('nan')

    def line(self, robot: bool = True) -> str:
        """The standing in one sentence (``robot``: beginning with the robot's name)."""
        where = self.kind.replace('_', ' ') + (f', {self.joint}' if self.joint else '')
        relative = '' if not np.isfinite(self.relative_percent) else f'{self.relative_percent:+.1f} %, '
        return (f'{f"{self.robot}: " if robot else ""}{self.name} ({where}) {self.value:.4g} against the fleet\'s '
                f'{self.centre:.4g} (spread {self.spread:.2g}, {self.others} other robots): {relative}z = '
                f'{self.z:+.1f}, with its own σ {self.z_own:+.1f} (named beyond {self.threshold:.2f})')

    def to_dict(self) -> dict:
        """Plain values (``fleet.json``, the health record's judgement): ``parameter`` its name, ``text`` the
        sentence (:meth:`line`, without the robot's name)."""
        finite = lambda v: float(v) if np.isfinite(v) else None  # noqa: E731
        return {'joint': self.joint, 'parameter': self.name, 'kind': self.kind, 'value': self.value,
                'own_std': finite(self.own_std), 'centre': self.centre, 'spread': self.spread, 'others': self.others,
                'z': self.z, 'z_own': self.z_own, 'threshold': self.threshold,
                'relative_percent': finite(self.relative_percent), 'apart': self.apart, 'text': self.line(False)}


@dataclass(frozen=True)
class RobotStanding:
    """One robot's parameters against the others' (``entries``: those judged)."""

    robot: str
    entries: tuple[ParameterStanding, ...]

    @property
    def apart(self) -> tuple[ParameterStanding, ...]:
        """The parameters that stand apart, farthest first."""
        return tuple(sorted((e for e in self.entries if e.apart), key=lambda e: -abs(e.z_own)))


def fleet_standing(table: FleetTable, false_flag_rate: float = FALSE_FLAG_RATE) -> list[RobotStanding]:
    """Every robot of ``table`` against the others (module docstring), in the table's order."""
    standings = []
    robots = len(table.members)
    for r in range(robots):
        others = np.arange(robots) != r
        centre, spread, count = standing_population(table.values[others], table.sigma[others])
        value, own = table.values[r], table.sigma[r] * table.inflation[r]  # c_r·σ_rp
        judged = np.flatnonzero(np.isfinite(value) & (count >= MIN_ROBOTS) & (spread > 0))
        own_std = np.where(np.isfinite(own) & (own > 0), own, 0.0)
        z = (value - centre) / np.where(spread > 0, spread, np.nan)
        z_own = (value - centre) / np.sqrt(np.where(spread > 0, spread, np.nan) ** 2 + own_std ** 2)
        bound = apart_threshold(len(judged), count, false_flag_rate)
        entries = tuple(ParameterStanding(table.members[r].name, table.names[k], table.kinds[k], table.joints[k],
                                          float(value[k]), float(own[k]), float(centre[k]), float(spread[k]),
                                          int(count[k]), float(z[k]), float(z_own[k]), float(bound[k]))
                        for k in judged)
        standings.append(RobotStanding(table.members[r].name, entries))
    return standings


#: the fewest robots of one model whose places are judged: each against at least :data:`MIN_ROBOTS` others
MIN_FLEET = MIN_ROBOTS + 1


@dataclass(frozen=True)
class FleetStandings:
    """The places of the robots of one ``model`` in their fleet (``standings``, in the members' order), or why there
    are none (``why_not``: fewer than :data:`MIN_FLEET` robots, results that cannot be pooled)."""

    model: str
    members: tuple[FleetMember, ...]
    standings: tuple[RobotStanding, ...]
    why_not: str
    false_flag_rate: float

    @property
    def robots(self) -> tuple[str, ...]:
        return tuple(m.name for m in self.members)

    @property
    def apart(self) -> tuple[ParameterStanding, ...]:
        """Every parameter standing apart, robot by robot (each robot's farthest first)."""
        return tuple(entry for standing in self.standings for entry in standing.apart)

    def places(self, judged_utc: float | None = None) -> list[FleetPlace]:
        """Each robot's place as its health record keeps it (:class:`dynid.health.fleet_place.FleetPlace`)."""
        judged_utc = time.time() if judged_utc is None else judged_utc
        members = {m.name: m for m in self.members}
        return [FleetPlace(s.robot, judged_utc, members[s.robot].sha256, {
            'model': self.model, 'robots': len(self.members), 'result_file': members[s.robot].path,
            'false_flag_rate': self.false_flag_rate, 'judged': len(s.entries),
            'apart': [entry.to_dict() for entry in s.apart]}) for s in self.standings]

    def to_dict(self) -> dict:
        """Plain values: the fleet compared, why nothing was judged, and per robot the parameters standing apart."""
        members = {m.name: m for m in self.members}
        return {'model': self.model, 'robots': len(self.members), 'judged': not self.why_not,
                'why_not': self.why_not or None, 'false_flag_rate': self.false_flag_rate,
                'standings': [{'robot': s.robot, 'result_file': members[s.robot].path,
                               'result_sha256': members[s.robot].sha256, 'judged': len(s.entries),
                               'apart': [entry.to_dict() for entry in s.apart]} for s in self.standings]}


def standings_by_model(members: Sequence[FleetMember], false_flag_rate: float = FALSE_FLAG_RATE) \
        -> list[FleetStandings]:
    """The robots of ``members`` grouped by their results' robot model, each group judged (:func:`fleet_standing`)
    where it can be, else with the reason; never raises for a fleet too small or results that cannot be pooled."""
    groups: dict[str, list[FleetMember]] = {}
    for member in members:
        groups.setdefault(member.result.robot, []).append(member)
    found = []
    for model, group in groups.items():
        why = ''
        if len(group) < MIN_FLEET:
            why = (f'{len(group)} robot{"s" if len(group) != 1 else ""} of {model}: each robot is judged against the '
                   f'others, and a parameter needs at least {MIN_ROBOTS} others holding it ({MIN_FLEET} robots)')
        else:
            try:
                table = FleetTable.of(group)
            except InputError as error:
                why = error.spelled(lambda field: 'result')
        standings = () if why else tuple(fleet_standing(table, false_flag_rate))
        found.append(FleetStandings(model, tuple(group), standings, why, false_flag_rate))
    return found
