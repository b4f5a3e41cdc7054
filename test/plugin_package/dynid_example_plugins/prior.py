"""A table of base parameters, each a value and a standard deviation (a vendor's data sheet, a CAD export), as the
prior: Σ_b ((K·π)_b − value_b)² / (std_b·s)². The file::

    dynid_prior: base parameter table
    robot: ur5e
    joint_names: [shoulder_pan_joint, ...]
    parameters: {Izz_1R: {expression: Izz_1 + ..., value: 1.2, std: 0.1}, ...}
"""

from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from dynid.errors import InputError
from dynid.files import file_sha256, read_yaml, yaml_header
from dynid.identify import PriorSourceKind, robot_file_links, spread_rows

HEADER = 'base parameter table'


@dataclass(frozen=True)
class BaseTablePrior:
    path: str
    sha256: str
    robot: str
    links: list
    spread: dict
    expressions: dict
    kind: ClassVar[str] = HEADER
    calibrated_std: ClassVar[float | None] = None
    releases: ClassVar[bool] = False

    @property
    def label(self) -> str:
        return self.path

    @property
    def rule(self) -> str:
        return 'MAP: weighted residual chi2 + sum_b ((K pi)_b - value_b)^2 / (std_b s)^2, s cross-validated'

    def left_out(self) -> list:
        return []

    def pulls(self) -> bool:
        return True

    def rows(self, problem, layout, free_names):
        return spread_rows(self.path, self.spread, self.expressions, self.links, problem, layout, free_names)

    def parameter_spread(self, problem) -> dict:
        return {name: std for name, (_, std) in self.spread.items()}

    def link_values(self) -> list:
        return [None] * len(self.links)

    def provenance(self) -> dict:
        return {'kind': self.kind, 'path': self.path, 'sha256': self.sha256, 'robot': self.robot, 'created': None}


def recognizes(path: Path) -> bool:
    return yaml_header(path).get('dynid_prior') == HEADER


def load(path: Path, robot) -> BaseTablePrior:
    data = read_yaml(path, 'base parameter table')
    if data.get('robot') != robot.name or list(data.get('joint_names') or ()) != list(robot.joint_names):
        raise InputError(f'{{prior_source}} {str(path)!r} is a table of robot {data.get("robot")!r}, not '
                         f'{robot.name!r} with its joints', fields=('prior_source',))
    rows = data['parameters']
    return BaseTablePrior(str(path), file_sha256(path), robot.name, robot_file_links(robot),
                          {name: (float(row['value']), float(row['std'])) for name, row in rows.items()},
                          {name: row['expression'] for name, row in rows.items()})


KIND = PriorSourceKind('base_table', 'a table of base parameters, each a value and a standard deviation', recognizes,
                       load)
