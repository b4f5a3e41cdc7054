"""The fleet prior file: what the identified robots of one model hold in common, parameter by parameter.

:func:`dynid.fleet.prior.fleet_prior` pools the results of many robots of one model into it;
:class:`dynid.identify.solve.prior_source.FleetPrior` reads it as the prior of the next identification. The file is
YAML, its header first so that a reader tells it from a result file::

    kind: fleet prior
    dynid_fleet_prior: 1
    robot: ur5e                                   # the robot model of every result pooled
    joint_names: [...]                            # their joint order
    model: {friction: .., torque_source: .., ...} # what every result pooled shares (units and grouping)
    robots: 12                                    # how many results were pooled (3 at least)
    members: [{name: cell-01, path: .., sha256: ..}, ...]
    rule: ...                                     # how the centre and the spread were taken, in words
    parameters:                                   # one per parameter pooled
      - {name: Izz_1R, kind: base, joint: shoulder_pan_joint, expression: .., centre: .., spread: .., count: 12}
      - {name: Fc_3, kind: friction, joint: elbow_joint, centre: .., spread: .., count: 12}
      - {name: gain_2, kind: drive_gain, joint: shoulder_lift_joint, centre: .., spread: .., count: 5}
    left_out: [{name: .., reason: ..}]            # parameters not pooled, and why
    provenance: {software: {dynid: ..}, created: ..}

Units are those of the results: base parameters in kg, kg·m, kg·m² (their ``expression`` in the standard ones),
friction in the units of its law (N·m, N·m·s/rad), drive gains in N·m/A. ``count`` is the number of robots with a
finite value of that parameter; a parameter is pooled from 3 robots up.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass, field
from pathlib import Path

from dynid import __version__
from dynid.errors import InputError
from dynid.files import dump_yaml, read_yaml, write_text
from dynid.schema import ANY, Fields, Items, Number, Text, check

#: the header that tells a fleet prior file from a result file
KIND = 'fleet prior'
VERSION = 1
#: the fewest robots a prior (and each parameter of it) is pooled from
MIN_ROBOTS = 3
#: the kinds of parameter a fleet prior pools
PARAMETER_KINDS = ('base', 'friction', 'drive_gain')

_PARAMETER = Fields(required={'name': Text(empty=False), 'kind': Text(PARAMETER_KINDS), 'centre': Number(),
                              'spread': Number(above=0.0), 'count': Number(low=MIN_ROBOTS, integer=True)},
                    optional={'joint': Text(null=True), 'expression': Text()},
                    name='a {name, kind, centre, spread, count} entry')
_FILE = Fields(
    required={'kind': Text((KIND,)), 'dynid_fleet_prior': Number(low=VERSION, high=VERSION, integer=True),
              'robot': Text(empty=False), 'joint_names': Items(Text(empty=False), least=1),
              'robots': Number(low=0, integer=True), 'parameters': Items(_PARAMETER)},
    optional={'model': Fields(others=ANY),
              'members': Items(Fields(required={'name': Text()}, optional={'path': Text(), 'sha256': Text()})),
              'rule': Text(), 'left_out': Items(Fields(required={'name': Text(), 'reason': Text()})),
              'provenance': Fields(others=ANY, null=True)})


@dataclass(frozen=True)
class PooledParameter:
    """One parameter of the fleet: its robust ``centre`` and ``spread`` over ``count`` robots (units of the results;
    :data:`PARAMETER_KINDS`); ``joint`` the joint it belongs to (None where no one joint), ``expression`` a base
    parameter's in the standard parameters."""

    name: str
    kind: str
    joint: str | None
    centre: float
    spread: float
    count: int
    expression: str | None = None

    def to_dict(self) -> dict:
        entry = {'name': self.name, 'kind': self.kind, 'joint': self.joint}
        if self.expression is not None:
            entry['expression'] = self.expression
        return {**entry, 'centre': float(self.centre), 'spread': float(self.spread), 'count': int(self.count)}


@dataclass(frozen=True)
class FleetPriorFile:
    """A fleet prior (module docstring): the robot model, its joints, the model every result shares, the robots
    pooled and each parameter's centre and spread."""

    robot: str
    joint_names: tuple[str, ...]
    model: dict
    members: tuple[dict, ...]
    parameters: tuple[PooledParameter, ...]
    rule: str = ''
    left_out: tuple[dict, ...] = ()
    provenance: dict = field(default_factory=dict)

    @property
    def robots(self) -> int:
        return len(self.members)

    def of_kind(self, kind: str) -> dict[str, PooledParameter]:
        """{name: parameter} of the parameters of ``kind`` (:data:`PARAMETER_KINDS`), in file order."""
        return {p.name: p for p in self.parameters if p.kind == kind}

    def to_dict(self) -> dict:
        created = self.provenance.get('created') or datetime.datetime.now(datetime.timezone.utc).isoformat(
            timespec='seconds')
        return {'kind': KIND, 'dynid_fleet_prior': VERSION, 'robot': self.robot, 'joint_names': list(self.joint_names),
                'model': dict(self.model), 'robots': self.robots, 'members': [dict(m) for m in self.members],
                'rule': self.rule, 'parameters': [p.to_dict() for p in self.parameters],
                'left_out': [dict(entry) for entry in self.left_out],
                'provenance': {**self.provenance, 'software': {'dynid': __version__}, 'created': created}}

    def save(self, path: str | Path) -> Path:
        """The file written whole or not at all (:func:`dynid.files.write_text`)."""
        return write_text(path, dump_yaml(self.to_dict()))

    @classmethod
    def from_dict(cls, data, source: str) -> FleetPriorFile:
        """The prior of a parsed file, checked whole first: InputError naming ``source`` and the field that does not
        fit, or saying that it pools fewer than :data:`MIN_ROBOTS` robots (a prior that is never used silently)."""
        if not is_fleet_prior(data):
            raise InputError(f'{source} is not a fleet prior file (needs "kind: {KIND}")')
        check(data, _FILE, source)
        if data['robots'] < MIN_ROBOTS:
            raise InputError(f'{source}: a prior of {data["robots"]} robots: at least {MIN_ROBOTS} needed')
        members = tuple(data.get('members') or ())
        if len(members) != data['robots']:
            raise InputError(f'{source}: robots is {data["robots"]}, but members lists {len(members)}')
        joints = tuple(data['joint_names'])
        strange = [p['name'] for p in data['parameters'] if p.get('joint') is not None and p['joint'] not in joints]
        if strange:
            raise InputError(f'{source}: parameters {strange} name joints that are not among joint_names')
        parameters = tuple(PooledParameter(p['name'], p['kind'], p.get('joint'), float(p['centre']),
                                           float(p['spread']), int(p['count']), p.get('expression'))
                           for p in data['parameters'])
        return cls(data['robot'], joints, dict(data.get('model') or {}), members, parameters, data.get('rule', ''),
                   tuple(data.get('left_out') or ()), dict(data.get('provenance') or {}))

    @classmethod
    def load(cls, path: str | Path) -> FleetPriorFile:
        return cls.from_dict(read_yaml(path, 'fleet prior file'), str(path))


def is_fleet_prior(data) -> bool:
    """Whether parsed YAML ``data`` says it is a fleet prior (its ``kind``), as opposed to a result file."""
    return isinstance(data, dict) and data.get('kind') == KIND
