"""Where the prior comes from: the robot file, or a previous identification's result, behind one interface.

A source (:class:`PriorSource`) gives the prior's rows over the unknowns x = [π | payload | Ia | friction] of
:class:`dynid.identify.solve.prior.PhysicalLayout` at relative σ s = 1 (its parameters and their spread), whether it
pulls on anything, the links whose pseudo-inertias scale the consistency constraint, and where it came from
(:meth:`PriorSource.provenance`). The weight s is cross-validated the same way for every source
(:func:`dynid.identify.solve.prior.cross_validated_prior_std`).

- :class:`RobotFilePrior`: the robot file's link inertias, each spread relative to its own pseudo-inertia
  (:mod:`dynid.identify.solve.prior`); the rotor inertias the drive data's
  (:func:`dynid.identify.solve.prior.rotor_prior`).
- :class:`ResultPrior`: a previous result's base rigid-body parameters χ̄_b, each spread by its own σ_b (the result's
  std, else its prior section's posterior σ): Σ_b ((K·π)_b − χ̄_b)² / (σ_b·s)², so that at s = 1 the earlier
  estimate's posterior is the next identification's prior (a sequential Bayesian update). The rotor inertias keep
  the drive data's prior (a result's may be the excess over B or the whole inertia). A result of another robot or
  joint order, or without a σ for every base parameter of the model, is refused by name.
- :class:`FleetPrior`: a fleet prior file's base rigid-body parameters (:mod:`dynid.identify.solve.fleet_prior_file`:
  the median over many robots of one model, spread by their robust spread): Σ_b ((K·π)_b − centre_b)² / (spread_b·s)²,
  the rotor inertias as for a result. A file of another model or joint order, or pooled from fewer than 3 robots, is
  refused by name.

A file given as the prior is one of the registered kinds (:class:`PriorSourceKind`, the Python entry-point group
``dynid.prior_sources``, as for identification methods, friction laws and feedforward terms): dynid's ``result`` (a
file with ``dynid_result``) and ``fleet`` (``kind: fleet prior``), those of installed packages, and those
:func:`register_prior_source` made known; :func:`prior_source` asks each whether it recognizes the file.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar, Protocol

import numpy as np

from dynid.entry_points import Registry
from dynid.errors import InputError
from dynid.files import file_sha256, read_yaml, yaml_header
from dynid.identify.result.result import IdentificationResult
from dynid.identify.solve.file_links import RobotFileLink, robot_file_links
from dynid.identify.solve.fleet_prior_file import KIND as FLEET_PRIOR_KIND
from dynid.identify.solve.fleet_prior_file import FleetPriorFile, is_fleet_prior
from dynid.identify.solve.prior import (
    CROSS_VALIDATION_BLOCKS,
    CROSS_VALIDATION_FOLDS,
    PriorRows,
    rotor_prior,
    rotor_rows,
)

_CROSS_VALIDATED = (f's from {CROSS_VALIDATION_FOLDS} folds of {CROSS_VALIDATION_BLOCKS} contiguous blocks in time: '
                    'the least sum of the held-out weighted chi2 and the held-out per-joint relative squared residual, '
                    'each divided by its least total')


class PriorSource(Protocol):
    """What a prior gives the identification (module docstring)."""

    kind: ClassVar[str]
    #: the relative σ s the source's spread is measured at, used where none is given (None: cross-validated)
    calibrated_std: ClassVar[float | None]
    #: whether the data release the rows they contradict (:meth:`dynid.identify.solve.prior.PhysicalLayout.released`):
    #: a fleet's spread says how far its robots differ, so a robot beyond it (a tool, a repaired joint) is its own
    releases: ClassVar[bool]
    #: the robot file's links checked one by one: the scale of the consistency constraint, the file's own model
    links: list[RobotFileLink]

    @property
    def label(self) -> str:
        """What the result's ``prior.source`` names: the robot spec or the file."""

    @property
    def rule(self) -> str:
        """The MAP problem and how s is chosen, in words (the result's ``prior.rule``)."""

    def left_out(self) -> list[RobotFileLink]:
        """The links the prior does not pull on because the source's inertia is impossible."""

    def pulls(self) -> bool:
        """Whether the prior pulls on any link (else it is not used)."""

    def rows(self, problem, layout, free_names: list[str]) -> PriorRows:
        """The prior's rows at s = 1 over ``layout``'s unknowns; ``free_names``: the names of its free columns."""

    def parameter_spread(self, problem) -> dict[str, float]:
        """{parameter: σ_b at s = 1} of the parameters it pulls on one by one in ``problem`` ({} where it pulls on
        links)."""

    def link_values(self) -> list[list[float] | None]:
        """Per link the 10 standard parameters the prior holds (None: it holds no link's own)."""

    def provenance(self) -> dict:
        """Where the prior came from: kind, path, sha256 (of a file), robot, date."""

    # Optional: ``pulls_toward``, what the prior pulls toward in words (``dynid identify``'s prior line); where a
    # source has none, the line says 'the KIND LABEL' (:func:`pulls_toward`).


@dataclass(frozen=True)
class RobotFilePrior:
    """The robot file's link inertias as the prior (:mod:`dynid.identify.solve.prior`)."""

    links: list[RobotFileLink]
    spec: str
    robot: str
    kind: ClassVar[str] = 'robot file'
    calibrated_std: ClassVar[float | None] = None
    releases: ClassVar[bool] = False

    @classmethod
    def of(cls, robot) -> RobotFilePrior:
        return cls(robot_file_links(robot), robot.source or robot.name, robot.name)

    @property
    def label(self) -> str:
        return self.spec

    @property
    def pulls_toward(self) -> str:
        return f'the robot file\'s link inertias ({self.spec})'

    @property
    def rule(self) -> str:
        return ('MAP: weighted residual chi2 + sum_i |J_prior^-1/2 (J_i - J_prior) J_prior^-1/2|_F^2 / s^2; '
                + _CROSS_VALIDATED)

    def left_out(self) -> list[RobotFileLink]:
        return [link for link in self.links if not link.in_prior]

    def pulls(self) -> bool:
        return any(link.in_prior for link in self.links)

    def rows(self, problem, layout, free_names: list[str]) -> PriorRows:
        prior_rotor, rotor_scale = rotor_prior(problem)
        return PriorRows.of(self.links, layout.to_base.shape[1], prior_rotor, layout.rotor_start, rotor_scale)

    def parameter_spread(self, problem) -> dict[str, float]:
        """None of its own: the robot file pulls on links, not on parameters one by one."""
        return {}

    def link_values(self) -> list[list[float] | None]:
        return [link.parameters.tolist() for link in self.links]

    def provenance(self) -> dict:
        path = Path(self.spec)
        return {'kind': self.kind, 'path': self.spec, 'sha256': file_sha256(path) if path.is_file() else None,
                'robot': self.robot, 'created': None}


def rigid_link_name(name: str) -> bool:
    """A base parameter of the arm's links alone: not a rotor inertia (Ia_j), not a payload's (…_Pb)."""
    return not name.startswith('Ia_') and '_P' not in name


def result_std(result: IdentificationResult) -> np.ndarray:
    """σ of each of the result's parameters (``parameter_names`` order): its std where finite and > 0, else its prior
    section's posterior σ (the MAP's, where consistency moved the estimate), else NaN."""
    sigma = np.array(result.std, dtype=float)
    posterior = (result.prior_section or {}).get('posterior_std')
    if posterior is not None and len(posterior) == len(sigma):
        kept = np.isfinite(sigma) & (sigma > 0)
        other = np.array([np.nan if p is None else float(p) for p in posterior])
        sigma = np.where(kept, sigma, other)
    return sigma


def _same_robot(path: Path, what: str, robot_name: str, joint_names, robot) -> None:
    """InputError naming the file ``path`` (``what``: 'a result', 'a fleet prior') where it is of another robot than
    ``robot`` or has its joints in another order: it cannot be the prior."""
    if robot_name != robot.name:
        raise InputError(f'{{prior_source}} {str(path)!r} is {what} of robot {robot_name!r}, not {robot.name!r}: it '
                         'cannot be the prior', fields=('prior_source',))
    if tuple(joint_names) != tuple(robot.joint_names):
        raise InputError(f'{{prior_source}} {str(path)!r} has the joints {list(joint_names)}, not '
                         f'{list(robot.joint_names)} in this order: it cannot be the prior', fields=('prior_source',))


@dataclass(frozen=True)
class ResultPrior:
    """A previous identification's base rigid-body parameters, each spread by its σ, as the prior (module docstring).

    ``spread``: {base parameter: (value, σ)} of every arm base parameter with a finite σ > 0 (those held at a value
    have σ 0 and no row)."""

    path: str
    sha256: str
    result: IdentificationResult
    links: list[RobotFileLink]
    spread: dict[str, tuple[float, float]]
    kind: ClassVar[str] = 'result'
    calibrated_std: ClassVar[float | None] = None
    releases: ClassVar[bool] = False

    @classmethod
    def load(cls, path: str | Path, robot) -> ResultPrior:
        """The result file ``path`` as the prior of an identification of ``robot``; InputError naming the file when
        it is another robot's, has another joint order, or holds no σ of its base parameters."""
        path = Path(path)
        if not path.is_file():
            raise InputError(f'{{prior_source}} {str(path)!r}: no such result file', fields=('prior_source',))
        result = IdentificationResult.load(path)
        _same_robot(path, 'a result', result.robot, result.joint_names, robot)
        spread = {}
        for i, (name, sigma) in enumerate(zip(result.parameter_names, result_std(result), strict=True)):
            if name in result.base_expressions and rigid_link_name(name) and np.isfinite(result.values[i]) \
                    and np.isfinite(sigma) and sigma > 0:
                spread[name] = (float(result.values[i]), float(sigma))
        if not spread:
            raise InputError(f'{{prior_source}} {str(path)!r} holds no standard deviation of its base parameters: '
                             'it cannot be the prior', fields=('prior_source',))
        return cls(str(path), file_sha256(path), result, robot_file_links(robot), spread)

    @property
    def label(self) -> str:
        return self.path

    @property
    def pulls_toward(self) -> str:
        return f'the base parameters of the result {self.path} (spread by its σ)'

    @property
    def rule(self) -> str:
        return f'MAP: weighted residual chi2 + sum_b ((K pi)_b - prior_b)^2 / (sigma_b s)^2; {_CROSS_VALIDATED}'

    def left_out(self) -> list[RobotFileLink]:
        return []

    def pulls(self) -> bool:
        return True

    def parameter_spread(self, problem) -> dict[str, float]:
        """{base parameter: σ_b at s = 1} of every parameter the earlier result pulls on its own."""
        return {name: sigma for name, (_, sigma) in self.spread.items()}

    def rows(self, problem, layout, free_names: list[str]) -> PriorRows:
        """One row per arm base parameter: ((K·π)_b − χ̄_b)/σ_b; the rotor inertias' rows the drive data's. InputError
        naming the file where the model has a base parameter the result does not hold with a σ."""
        return spread_rows(self.path, self.spread, self.result.base_expressions, self.links, problem, layout,
                           free_names)

    def link_values(self) -> list[list[float] | None]:
        physical = self.result.physical_section
        if physical is None:
            return [None] * len(self.links)
        return [list(map(float, link['parameters'])) for link in physical['links']]

    def provenance(self) -> dict:
        created = self.result.provenance.get('created')
        return {'kind': self.kind, 'path': self.path, 'sha256': self.sha256, 'robot': self.result.robot,
                'created': created, 'method': self.result.method}


_ROTOR_TERM = re.compile(r'\s*\+\s*(?:[0-9.eE+-]+\*)?Ia_\d+\b')


def spread_rows(path: str, spread: dict[str, tuple[float, float]], expressions: dict[str, str],
                links: list[RobotFileLink], problem, layout, free_names: list[str]) -> PriorRows:
    """The rows of a prior that holds each arm base parameter b as a value and a spread, ``spread`` {b: (χ̄_b, σ_b)}
    with the expressions it groups them by: ((K·π)_b − χ̄_b)/σ_b for every free arm base parameter of the model, and
    the rotor inertias' rows from the drive data (:func:`dynid.identify.solve.prior.rotor_prior`). InputError naming the
    file ``path`` where the model has a base parameter it does not hold, or groups one otherwise."""
    rigid = set(problem.rigid_names)
    wanted = [k for k, name in enumerate(free_names) if name in rigid and rigid_link_name(name)]
    missing = [free_names[k] for k in wanted if free_names[k] not in spread]
    if missing:
        raise InputError(f'{{prior_source}} {path!r} holds no value with a standard deviation for the base '
                         f'parameters {missing}: it cannot be the prior of this model', fields=('prior_source',))
    ours = dict(zip(problem.base.names, problem.base.expressions, strict=True))
    differ = [k for k in wanted if free_names[k] in ours and expressions.get(free_names[k]) != ours[free_names[k]]]
    # a model that identifies the rotor inertias' excess folds Ia_j into the link parameters it is collinear with
    # (Izz_1R + Ia_1): the prior then pulls their link part, the rotor columns of those rows left out
    folded = [k for k in differ if problem.identify_rotor_inertia
              and _ROTOR_TERM.sub('', ours[free_names[k]]) == expressions.get(free_names[k])]
    other = [free_names[k] for k in differ if k not in folded]
    if other:
        raise InputError(f'{{prior_source}} {path!r} groups the base parameters {other} otherwise (rotor '
                         'inertias identified in one model and not in the other?): it cannot be the prior of this '
                         'model', fields=('prior_source',))
    unknowns = layout.to_base.shape[1]
    names = [free_names[k] for k in wanted]
    sigma = np.array([spread[free_names[k]][1] for k in wanted])
    a_rows = [layout.to_base[wanted] / sigma[:, None]]
    if folded:
        rotor = range(layout.rotor_start, layout.rotor_start + layout.n_rotor)
        a_rows[0][np.ix_([wanted.index(k) for k in folded], rotor)] = 0.0
    b_rows = [np.array([spread[free_names[k]][0] for k in wanted]) / sigma]
    prior_rotor, rotor_scale = rotor_prior(problem)
    if prior_rotor is not None:
        rows, b = rotor_rows(unknowns, prior_rotor, layout.rotor_start, rotor_scale)
        a_rows.append(rows)
        b_rows.append(b)
        names += [f'Ia_{j + 1}' for j in np.flatnonzero(np.abs(rotor_scale if rotor_scale is not None else
                                                                prior_rotor) > 0)]
    return PriorRows(np.vstack(a_rows), np.concatenate(b_rows), [link.reference for link in links], tuple(names))


@dataclass(frozen=True)
class FleetPrior:
    """A fleet's base rigid-body parameters, each centred on the robots' median and spread by their robust spread,
    as the prior (module docstring; the file: :mod:`dynid.identify.solve.fleet_prior_file`), and its friction
    parameters the same way where the identification's friction law is the fleet's (the same symbols then mean the
    same terms): what a short or weakly exciting log leaves open of a robot's friction, its siblings' hold.

    ``spread``: {base parameter: (centre, spread)} of every arm base parameter the fleet prior pools."""

    path: str
    sha256: str
    fleet: FleetPriorFile
    links: list[RobotFileLink]
    spread: dict[str, tuple[float, float]]
    kind: ClassVar[str] = FLEET_PRIOR_KIND
    #: s = 1: the spread is the fleet's own, measured over its robots; each prior row weighs as one row of the data (a
    #: unit-variance row with WLS's weights, one N·m unweighted: there it holds parameters to σ̂·spread, σ̂ a data
    #: row's σ, docs/fleet.md; set against rows of unit variance instead it held healthy robots worse). Cross-validated
    #: on a short production log (folds of one repeated motion, which cannot tell a model that holds on another motion
    #: from one that fits this one), s came out 50-100 on most robots of bench_fleet_prior, a prior far weaker, and the
    #: held-out residual 3.2x the full excitation's in the median; at s = 1, 1.2x (benchmarks/README.md). --prior-std
    #: still sets s, and a weight given is never overridden.
    calibrated_std: ClassVar[float | None] = 1.0
    releases: ClassVar[bool] = True

    @classmethod
    def load(cls, path: str | Path, robot, data: dict | None = None) -> FleetPrior:
        """The fleet prior file ``path`` (``data``: its parsed content where read already) as the prior of an
        identification of ``robot``; InputError naming the file when it is another model's, has another joint
        order, pools fewer than 3 robots or no base parameter."""
        path = Path(path)
        if not path.is_file():
            raise InputError(f'{{prior_source}} {str(path)!r}: no such fleet prior file', fields=('prior_source',))
        try:
            fleet = FleetPriorFile.from_dict(read_yaml(path, 'fleet prior file') if data is None else data,
                                             str(path))
        except InputError as error:  # the file's own fault, named as the setting that gave it
            raise InputError(f'{{prior_source}} {error}', fields=('prior_source',)) from None
        _same_robot(path, 'a fleet prior', fleet.robot, fleet.joint_names, robot)
        spread = {name: (p.centre, p.spread) for name, p in fleet.of_kind('base').items() if rigid_link_name(name)}
        if not spread:
            raise InputError(f'{{prior_source}} {str(path)!r} pools no base parameter: it cannot be the prior',
                             fields=('prior_source',))
        return cls(str(path), file_sha256(path), fleet, robot_file_links(robot), spread)

    @property
    def label(self) -> str:
        return self.path

    @property
    def pulls_toward(self) -> str:
        return (f'the base parameters of the fleet prior {self.path} ({self.fleet.robots} robots\' median, spread by '
                'their spread)')

    @property
    def rule(self) -> str:
        return (f'MAP: weighted residual chi2 + sum_b ((K pi)_b - centre_b)^2 / (spread_b s)^2 over the fleet of '
                f'{self.fleet.robots} robots, each prior row weighing as one data row (data_row_std); s = 1 where not '
                f'given (the spread is the fleet\'s own, measured)')

    def left_out(self) -> list[RobotFileLink]:
        return []

    def pulls(self) -> bool:
        return True

    def _friction(self, problem) -> dict:
        """The friction parameters the fleet pools, where ``problem``'s law is the fleet's (the same symbols then mean
        the same terms); else none."""
        return self.fleet.of_kind('friction') if problem.candidate.friction == self.fleet.model.get('friction') else {}

    def parameter_spread(self, problem) -> dict[str, float]:
        """{parameter: σ_b at s = 1} of every parameter the fleet prior pulls on its own in ``problem``: the base
        parameters, and the friction where the law is the fleet's (:meth:`rows`)."""
        friction = self._friction(problem)
        return {**{name: sigma for name, (_, sigma) in self.spread.items()},
                **{name: p.spread for name, p in friction.items()}}

    def rows(self, problem, layout, free_names: list[str]) -> PriorRows:
        """One row per arm base parameter: ((K·π)_b − centre_b)/spread_b; one per free friction parameter the fleet
        pools, (f − centre_f)/spread_f, where the law is the fleet's; the rotor inertias' rows the drive data's."""
        expressions = {name: p.expression for name, p in self.fleet.of_kind('base').items()}
        rows = spread_rows(self.path, self.spread, expressions, self.links, problem, layout, free_names)
        friction = self._friction(problem)
        wanted = [k for k, name in enumerate(free_names) if name in friction]
        if not wanted:
            return rows
        sigma = np.array([friction[free_names[k]].spread for k in wanted])
        a = layout.to_base[wanted] / sigma[:, None]
        b = np.array([friction[free_names[k]].centre for k in wanted]) / sigma
        return PriorRows(np.vstack([rows.a, a]), np.concatenate([rows.b, b]), rows.references,
                         (*rows.names, *(free_names[k] for k in wanted)))

    def link_values(self) -> list[list[float] | None]:
        return [None] * len(self.links)

    def provenance(self) -> dict:
        return {'kind': self.kind, 'path': self.path, 'sha256': self.sha256, 'robot': self.fleet.robot,
                'created': self.fleet.provenance.get('created'), 'robots': self.fleet.robots,
                'members': [member['name'] for member in self.fleet.members]}


def pulls_toward(source: PriorSource) -> str:
    """What ``source`` pulls toward, in words: its ``pulls_toward``, else 'the KIND LABEL'."""
    return getattr(source, 'pulls_toward', None) or f'the {source.kind} {source.label}'


@dataclass(frozen=True)
class PriorSourceKind:
    """A kind of file given as the prior (``--prior FILE``, identifier_node's ``prior_source``).

    ``recognizes(path)``: whether the file is of this kind, read cheaply (its header: :func:`dynid.files.yaml_header`);
    ``load(path, robot)``: the :class:`PriorSource` it gives an identification of ``robot`` (InputError naming the file
    where it cannot be the prior)."""

    name: str
    description: str
    recognizes: Callable[[Path], bool]
    load: Callable[[Path, object], PriorSource]


def _is_result_file(path: Path) -> bool:
    return 'dynid_result' in yaml_header(path)


def _is_fleet_prior_file(path: Path) -> bool:
    return is_fleet_prior(yaml_header(path))


RESULT_PRIOR = PriorSourceKind('result', "a previous identification's result file (dynid_result): its base "
                                         'parameters, each spread by its σ', _is_result_file, ResultPrior.load)
FLEET_PRIOR = PriorSourceKind('fleet', f'a fleet prior file (kind: {FLEET_PRIOR_KIND}): many robots\' median, spread '
                                       'by their spread', _is_fleet_prior_file, FleetPrior.load)

GROUP = 'dynid.prior_sources'
#: the order dynid's own kinds are listed and asked in
OWN_ORDER = ('result', 'fleet')
REGISTRY = Registry(GROUP, 'prior source', PriorSourceKind, OWN_ORDER, 'register_prior_source')


def register_prior_source(kind: PriorSourceKind) -> None:
    """Make ``kind`` known in this process beside the installed ones (:func:`unregister_prior_source` forgets it)."""
    REGISTRY.register(kind)


def unregister_prior_source(name: str) -> None:
    """Forget a kind :func:`register_prior_source` made known."""
    REGISTRY.unregister(name)


def prior_source_kinds() -> tuple[PriorSourceKind, ...]:
    """Every registered kind of prior file, loaded: the installed ones (dynid's first), then those registered in this
    process."""
    return REGISTRY.all()


def prior_source(path: str, robot) -> PriorSource:
    """The prior a front end asks for: ``path`` empty, the robot file's (:class:`RobotFilePrior`); else the file as
    the one registered kind (:data:`REGISTRY`, dynid's first) that recognizes it. InputError naming the file where it
    does not exist, no kind recognizes it (with the kinds installed), or two do (naming both)."""
    if not path:
        return RobotFilePrior.of(robot)
    file = Path(path)
    if not file.is_file():
        raise InputError(f'{{prior_source}} {str(path)!r}: no such file', fields=('prior_source',))
    kinds = REGISTRY.all()
    found = [kind for kind in kinds if kind.recognizes(file)]
    if len(found) > 1:
        raise InputError(f'{{prior_source}} {str(path)!r} is recognized by the prior source kinds '
                         f'{" and ".join(kind.name for kind in found)}: it cannot be told which it is',
                         fields=('prior_source',))
    if not found:
        read_yaml(file, 'prior file')  # a file that is not YAML says so
        raise InputError(f'{{prior_source}} {str(path)!r} is none of the prior source kinds installed: '
                         + '; '.join(f'{kind.name} ({kind.description})' for kind in kinds), fields=('prior_source',))
    return found[0].load(file, robot)
