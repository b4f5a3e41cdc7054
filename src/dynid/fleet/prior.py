"""A fleet prior: the identification results of many robots of one model pooled, parameter by parameter.

Per arm base parameter (the same names and the same ``base_expressions`` in every result), per joint friction
parameter and per drive gain where identified, over the robots r that identified it (a value v_r their
identification did not hold: a term the model choice left out on a joint is held at 0 there, the choice's value and
not a measurement, which pooled would put the centre at 0 with a spread of nothing)::

    centre = median_r v_r
    spread = max(1.4826 · median_r |v_r − centre|,  median_r σ_r)

1.4826·MAD is the standard deviation of a normal population, estimated so that a few bad robots (fewer than half)
move neither figure far (Rousseeuw and Croux 1993); the floor, the median of the robots' own σ_r (their std, else
their prior section's posterior σ), keeps a parameter every robot agrees on from a spread of 0 (a prior that would
pin it). A parameter held by fewer than 3 robots, or with no spread at all (every robot the same value, none a σ),
is left out, with the reason. The results must be of one robot model, in one joint order, with one friction law,
torque source and base grouping: pooling N·m with A, or Izz_1R with and without the rotor inertia folded in, is
refused by name. :func:`fleet_prior` gives the file (:class:`dynid.identify.solve.fleet_prior_file.FleetPriorFile`).
The results are files (:func:`read_members`) or the health record's (:func:`record_members`: each robot's newest
result, read in one query; :mod:`dynid.health.results`), pooled by the same code.

    >>> prior = fleet_prior(read_members(['cell-1.yaml', 'cell-2.yaml', 'cell-3.yaml']))  # doctest: +SKIP
    >>> prior.save('fleet_prior.yaml')  # doctest: +SKIP
    >>> prior = fleet_prior(record_members('postgresql://dynid@fleet-db/health', model='ur5e'))  # doctest: +SKIP
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from dynid.errors import InputError
from dynid.files import file_sha256
from dynid.health.record import HealthRecord
from dynid.health.results import POOLED_MODEL_KEYS, ResultParameters, parameters_of
from dynid.identify import (
    MIN_ROBOTS,
    FleetPriorFile,
    IdentificationResult,
    PooledParameter,
    result_std,
    result_std_inflation,
    rigid_link_name,
)

#: 1.4826·MAD estimates the standard deviation of a normal population (1 / Φ⁻¹(3/4))
MAD_TO_SIGMA = 1.4826
SPREAD_RULE = ('centre: the median over the robots; spread: max(1.4826 * median |value - centre|, the median of '
               "the robots' own sigma); a parameter held by fewer than 3 robots, or with no spread, left out")
#: what the results of one prior must share: the friction law and its terms, the torque's source and the grouping
#: of the base parameters (rotor inertias folded in or identified)
SHARED_MODEL_KEYS = POOLED_MODEL_KEYS
_LINK_INDEX = re.compile(r'_(\d+)R?$')


@dataclass(frozen=True)
class FleetMember:
    """One robot's result: its ``name`` in the fleet, the file and its sha256; ``origin`` the field the results came
    from, by which a refusal names it: ``results`` (files, named by path) or ``db`` (the health record, by robot)."""

    name: str
    path: str
    sha256: str
    result: IdentificationResult | ResultParameters
    origin: str = 'results'

    @property
    def called(self) -> str:
        """How a message names this result: its file, or its robot's in the record."""
        return repr(self.path) if self.origin == 'results' else f'the result of robot {self.name!r}'

    @property
    def where(self) -> str:
        """:attr:`called` with the field it came from, as a refusal opens."""
        return f'{{{self.origin}}} {self.called}'


def read_members(paths: Sequence[str | Path]) -> list[FleetMember]:
    """The result files ``paths`` as members of one fleet, each named by its file's stem (by its path where two
    stems are the same); InputError naming the file that is missing, given twice or a copy of another."""
    paths = [Path(p) for p in paths]
    missing = [str(p) for p in paths if not p.is_file()]
    if missing:
        raise InputError(f'{{results}} {missing[0]!r}: no such result file', fields=('results',))
    stems = [p.stem for p in paths]
    members, seen = [], {}
    for path, stem in zip(paths, stems, strict=True):
        digest = file_sha256(path)
        if digest in seen:
            raise InputError(f'{{results}} {str(path)!r} is the same result as {seen[digest]!r}: each robot once',
                             fields=('results',))
        seen[digest] = str(path)
        name = stem if stems.count(stem) == 1 else str(path)
        members.append(FleetMember(name, str(path), digest, IdentificationResult.load(path)))
    return members


def record_members(db, model: str | None = None) -> list[FleetMember]:
    """Each robot's newest identification result in the health record ``db`` (a file or a PostgreSQL URL, opened
    read-only) as members of one fleet, named by robot, in one query (:meth:`HealthRecord.newest_results`); of the
    robot ``model`` (the results' ``robot``), which may be left out when the record holds results of one model only.
    InputError naming the field: no results (of that model), results of several models and none chosen, or one result
    stored for two robots."""
    with HealthRecord(db, readonly=True) as record:
        rows = record.newest_results(model)
        held = {} if rows or model is None else _models(record.newest_results())
    where = f'{{db}} {HealthRecord.display(db)}'
    if not rows:
        of = '' if model is None else f' of robot model {model!r}'
        others = f' (it holds {", ".join(held.values())})' if held else ''
        raise InputError(f'{where} holds no identification results{of}{others}', fields=('db', 'model'))
    models = _models(rows)
    if len(models) > 1:
        raise InputError(f'{where} holds results of {len(models)} robot models ({", ".join(models.values())}): '
                         'choose one with {model}', fields=('model', 'db'))
    seen: dict[str, str] = {}
    members = []
    for (robot, stored), parameters in zip(rows, parameters_of([stored for _, stored in rows]), strict=True):
        if stored.result_sha256 in seen:
            raise InputError(f'{where}: robots {seen[stored.result_sha256]!r} and {robot!r} hold the same result '
                             f'(sha256 {stored.result_sha256[:12]}): each robot once', fields=('db',))
        seen[stored.result_sha256] = robot
        members.append(FleetMember(robot, stored.result_file, stored.result_sha256, parameters, origin='db'))
    return members


def _models(rows) -> dict[str, str]:
    """{robot model: 'model: N robots'} of (robot, StoredResult) rows, most robots first."""
    counts: dict[str, int] = {}
    for _, stored in rows:
        counts[stored.model] = counts.get(stored.model, 0) + 1
    return {m: f'{m}: {n} robot{"s" if n != 1 else ""}' for m, n in sorted(counts.items(), key=lambda i: (-i[1], i[0]))}


def _joint_of(name: str, joints: tuple[str, ...]) -> str | None:
    """The joint a parameter belongs to: a friction parameter's or drive gain's by its index (Fc_3), a base
    parameter's by the link of its name (Izz_2R, my_3: the joint that moves that link); None where it names none."""
    found = _LINK_INDEX.search(name)
    if found is None or not 1 <= int(found.group(1)) <= len(joints):
        return None
    return joints[int(found.group(1)) - 1]


def _refuse_other(member: FleetMember, first: FleetMember) -> None:
    """InputError naming ``member``'s file (or robot in the record) and field where it cannot be pooled with
    ``first``."""
    a, b = first.result, member.result
    where, other, fields = member.where, first.called, (member.origin,)
    if b.robot != a.robot:
        raise InputError(f'{where} is a result of robot {b.robot!r}, not {a.robot!r} as {other}: a fleet prior '
                         'pools one robot model', fields=fields)
    if tuple(b.joint_names) != tuple(a.joint_names):
        raise InputError(f'{where} has the joints {list(b.joint_names)}, not {list(a.joint_names)} in this order as '
                         f'{other}', fields=fields)
    for key in SHARED_MODEL_KEYS:
        if b.model.get(key) != a.model.get(key):
            raise InputError(f'{where}: model.{key} is {b.model.get(key)!r}, not {a.model.get(key)!r} as in '
                             f'{other}: a fleet prior pools results of one friction law, torque source and '
                             'base grouping (values in one unit)', fields=fields)
    ours, theirs = _base_expressions(a), _base_expressions(b)
    if set(ours) != set(theirs):
        raise InputError(f'{where}: base_parameters {sorted(set(ours) ^ set(theirs))} are in one of it and '
                         f'{other} only: another base grouping', fields=fields)
    grouped = [name for name in ours if ours[name] != theirs[name]]
    if grouped:
        raise InputError(f'{where} groups the base parameters {grouped} otherwise than {other}', fields=fields)
    if _friction_names(a) != _friction_names(b):
        raise InputError(f'{where}: friction parameters {sorted(set(_friction_names(a)) ^ set(_friction_names(b)))} '
                         f'are in one of it and {other} only', fields=fields)


def _base_expressions(result: IdentificationResult) -> dict[str, str]:
    """{name: expression} of the result's arm base parameters, in its order."""
    return {name: result.base_expressions[name] for name in result.parameter_names
            if name in result.base_expressions and rigid_link_name(name)}


def _friction_names(result: IdentificationResult) -> list[str]:
    return [name for name in result.parameter_names if name not in result.base_expressions]


@dataclass(frozen=True)
class FleetTable:
    """The robots' parameters side by side: ``values`` and their own ``sigma`` (robots × parameters, NaN where a
    robot holds none), and per parameter its name, kind (base, friction, drive_gain), joint and expression;
    ``inflation``: per robot how much its σ understate its errors for its residual's autocorrelation
    (:func:`dynid.identify.result.quality.std_inflation`; the standing widens them by it, the prior does not)."""

    members: tuple[FleetMember, ...]
    names: tuple[str, ...]
    kinds: tuple[str, ...]
    joints: tuple[str | None, ...]
    expressions: tuple[str | None, ...]
    values: np.ndarray
    sigma: np.ndarray
    inflation: np.ndarray

    @classmethod
    def of(cls, members: Sequence[FleetMember]) -> FleetTable:
        """The table of ``members``: InputError when they are fewer than 3 or cannot be pooled (module docstring)."""
        members = tuple(members)
        if len(members) < MIN_ROBOTS:
            origin = members[0].origin if members else 'results'
            raise InputError(f'a prior of {len(members)} robots ({{{origin}}}): at least {MIN_ROBOTS} needed',
                             fields=(origin,))
        first = members[0]
        for member in members[1:]:
            _refuse_other(member, first)
        joints = tuple(first.result.joint_names)
        base = _base_expressions(first.result)
        friction = _friction_names(first.result)
        gains = any(m.result.drive_gains_identified for m in members)
        names = [*base, *friction, *(f'drive_gain_{j + 1}' for j in range(len(joints)) if gains)]
        kinds = ['base'] * len(base) + ['friction'] * len(friction) + ['drive_gain'] * (len(joints) if gains else 0)
        rows = [_row(m.result, names, gains) for m in members]
        return cls(members, tuple(names), tuple(kinds), tuple(_joint_of(name, joints) for name in names),
                   tuple(base.get(name) for name in names), np.array([values for values, _ in rows]),
                   np.array([sigma for _, sigma in rows]), np.array([_inflation(m.result) for m in members]))

    @property
    def robots(self) -> tuple[str, ...]:
        return tuple(m.name for m in self.members)


def _inflation(result: IdentificationResult | ResultParameters) -> float:
    """The result's σ inflation for its residual's autocorrelation (:class:`FleetTable`): kept with a stored result,
    from the metrics of a result file."""
    if isinstance(result, ResultParameters):
        return result.std_inflation
    return result_std_inflation(result.metrics)


def _row(result: IdentificationResult, names: list[str], gains: bool) -> tuple[np.ndarray, np.ndarray]:
    """One robot's values and σ in ``names``' order; NaN where it did not identify the parameter: a term its
    identification held at a value (``model.held``: the model choice left the term out on that joint, so its value is
    the choice's, not a measurement) and drive gains it did not identify."""
    index = {name: i for i, name in enumerate(result.parameter_names)}
    held = set((result.model or {}).get('held') or ())
    std = result_std(result)
    n = len(result.joint_names)
    identified = gains and result.drive_gains_identified and result.drive_gains is not None
    gain = np.asarray(result.drive_gains, dtype=float) if identified else np.full(n, np.nan)
    gain_std = np.full(n, np.nan) if not identified or result.drive_gains_std is None else \
        np.asarray(result.drive_gains_std, dtype=float)
    rigid = [name for name in names if not name.startswith('drive_gain_')]
    values = np.concatenate([[np.nan if name in held else result.values[index[name]] for name in rigid],
                             gain if gains else []])
    sigma = np.concatenate([[std[index[name]] for name in rigid], gain_std if gains else []])
    return values.astype(float), sigma.astype(float)


def robust_population(values: np.ndarray, sigma: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(centre, spread, count) of each column of ``values`` (robots × parameters; NaN: not held) with the robots' own
    ``sigma`` (NaN or ≤ 0: not known) as the module docstring defines them; NaN centre and spread for a column no
    robot holds, spread 0 for one with no spread at all."""
    values = np.asarray(values, dtype=float)
    held = np.isfinite(values)
    count = held.sum(axis=0)
    with warnings.catch_warnings():  # a column no robot holds is NaN, as documented
        warnings.simplefilter('ignore', RuntimeWarning)
        centre = np.nanmedian(np.where(held, values, np.nan), axis=0)
        mad = np.nanmedian(np.abs(values - centre), axis=0)
    spread = np.fmax(MAD_TO_SIGMA * mad, own_sigma_floor(values, sigma))
    return centre, spread, count


def own_sigma_floor(values: np.ndarray, sigma: np.ndarray) -> np.ndarray:
    """The floor of each column's spread (module docstring): the median of the robots' own ``sigma`` over those holding
    the value (``values`` finite) with a σ (finite, > 0); 0 for a column none has."""
    values = np.asarray(values, dtype=float)
    own = np.where(np.isfinite(sigma) & (sigma > 0) & np.isfinite(values), sigma, np.nan)
    with warnings.catch_warnings():  # a column without any σ: no floor
        warnings.simplefilter('ignore', RuntimeWarning)
        return np.nan_to_num(np.nanmedian(own, axis=0), nan=0.0)


def fleet_prior(members: Sequence[FleetMember] | FleetTable) -> FleetPriorFile:
    """The fleet prior of ``members`` (or of their table, :meth:`FleetTable.of`; module docstring): InputError when
    they are fewer than 3 robots or cannot be pooled, naming the file and the field."""
    table = members if isinstance(members, FleetTable) else FleetTable.of(members)
    centre, spread, count = robust_population(table.values, table.sigma)
    pooled, left_out = [], []
    for k, name in enumerate(table.names):
        if count[k] < MIN_ROBOTS:
            left_out.append({'name': name, 'reason': f'{count[k]} robots identified it (the others held it or have '
                                                     f'none): at least {MIN_ROBOTS} needed'})
        elif not spread[k] > 0:
            left_out.append({'name': name, 'reason': 'no spread: every robot holds the same value and none a σ (a '
                                                     'term the identification held?)'})
        else:
            pooled.append(PooledParameter(name, table.kinds[k], table.joints[k], float(centre[k]), float(spread[k]),
                                          int(count[k]), table.expressions[k]))
    first = table.members[0].result
    model = {key: first.model[key] for key in SHARED_MODEL_KEYS if key in first.model}
    return FleetPriorFile(first.robot, tuple(first.joint_names), model,
                          tuple({'name': m.name, 'path': m.path, 'sha256': m.sha256} for m in table.members),
                          tuple(pooled), SPREAD_RULE, tuple(left_out))
