"""Where the prior comes from, behind one interface: the robot file (other sources to come).

A source (:class:`PriorSource`) gives the prior's rows over the unknowns x = [π | payload | Ia | friction] of
:class:`dynid.identify.prior.PhysicalLayout` at relative σ s = 1 (its parameters and their spread), whether it pulls on
anything, the links whose pseudo-inertias scale the consistency constraint, and where it came from
(:meth:`PriorSource.provenance`). The weight s is cross-validated the same way for every source
(:func:`dynid.identify.prior.cross_validated_prior_std`).

- :class:`RobotFilePrior`: the robot file's link inertias, each spread relative to its own pseudo-inertia
  (:mod:`dynid.identify.prior`); the rotor inertias the drive data's (:func:`dynid.identify.prior.rotor_prior`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar, Protocol

from dynid.files import file_sha256
from dynid.identify.file_links import RobotFileLink, robot_file_links
from dynid.identify.prior import CROSS_VALIDATION_BLOCKS, CROSS_VALIDATION_FOLDS, PriorRows, rotor_prior

_CROSS_VALIDATED = (f's from {CROSS_VALIDATION_FOLDS} folds of {CROSS_VALIDATION_BLOCKS} contiguous blocks in time: '
                    'the least sum of the held-out weighted chi2 and the held-out per-joint relative squared residual, '
                    'each divided by its least total')


class PriorSource(Protocol):
    """What a prior gives the identification (module docstring)."""

    kind: ClassVar[str]
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

    def link_values(self) -> list[list[float] | None]:
        """Per link the 10 standard parameters the prior holds (None: it holds no link's own)."""

    def provenance(self) -> dict:
        """Where the prior came from: kind, path, sha256 (of a file), robot, date."""


@dataclass(frozen=True)
class RobotFilePrior:
    """The robot file's link inertias as the prior (:mod:`dynid.identify.prior`)."""

    links: list[RobotFileLink]
    spec: str
    robot: str
    kind: ClassVar[str] = 'robot file'

    @classmethod
    def of(cls, robot) -> RobotFilePrior:
        return cls(robot_file_links(robot), robot.source or robot.name, robot.name)

    @property
    def label(self) -> str:
        return self.spec

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

    def link_values(self) -> list[list[float] | None]:
        return [link.parameters.tolist() for link in self.links]

    def provenance(self) -> dict:
        path = Path(self.spec)
        return {'kind': self.kind, 'path': self.spec, 'sha256': file_sha256(path) if path.is_file() else None,
                'robot': self.robot, 'created': None}
