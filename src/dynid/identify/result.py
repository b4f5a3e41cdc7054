"""IdentificationResult: what an identification found, as the result YAML of DESIGN.md §7.

The file has a top-level ``dynid_result: 1`` version key, the robot and joint names, the method and
the model (friction model, torque source, options), the base parameters (names, expressions in
standard parameters, values, standard deviations, relative %), friction parameters per joint, drive
gains, metrics on training and validation data, warnings and provenance (inputs, filter settings,
software version). The feedforward and estimator nodes load it with :meth:`IdentificationResult.load`.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import yaml

from dynid import __version__
from dynid.errors import InputError
from dynid.files import read_yaml

RESULT_VERSION = 1


def _plain(value):
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, np.ndarray):
        return _plain(value.tolist())
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, float) and not np.isfinite(value):
        return str(value)
    return value


@dataclass
class IdentificationResult:
    """An identified model (module docstring). Parameter arrays are in ``parameter_names`` order."""

    robot: str
    joint_names: tuple[str, ...]
    method: str
    model: dict
    parameter_names: list[str]
    values: np.ndarray
    std: np.ndarray
    base_expressions: dict[str, str]
    drive_gains: np.ndarray | None = None
    drive_gains_std: np.ndarray | None = None
    drive_gains_identified: bool = False
    exponents: np.ndarray | None = None
    condition_number: float = float('nan')
    metrics: dict = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    provenance: dict = field(default_factory=dict)

    @property
    def relative_std(self) -> np.ndarray:
        with np.errstate(divide='ignore', invalid='ignore'):
            return np.where(self.values != 0, 100.0 * self.std / np.abs(self.values), np.inf)

    def value(self, name: str) -> float:
        try:
            return float(self.values[self.parameter_names.index(name)])
        except ValueError:
            raise InputError(f'the result has no parameter {name!r}') from None

    def friction(self) -> dict[str, dict[str, float]]:
        """Friction parameters per joint: {joint: {symbol: value}}."""
        out: dict[str, dict[str, float]] = {name: {} for name in self.joint_names}
        for name, value in zip(self.parameter_names, self.values, strict=True):
            symbol, _, index = name.rpartition('_')
            if symbol in self.model.get('friction_symbols', []) and index.isdigit():
                out[self.joint_names[int(index) - 1]][symbol] = float(value)
        return out

    def to_dict(self) -> dict:
        rigid = [n for n in self.parameter_names if n in self.base_expressions]
        index = {n: i for i, n in enumerate(self.parameter_names)}
        relative = self.relative_std
        return _plain({
            'dynid_result': RESULT_VERSION,
            'robot': self.robot,
            'joint_names': list(self.joint_names),
            'method': self.method,
            'model': self.model,
            'condition_number': self.condition_number,
            'base_parameters': [
                {'name': n, 'expression': self.base_expressions[n], 'value': self.values[index[n]],
                 'std': self.std[index[n]], 'relative_std_percent': relative[index[n]]} for n in rigid],
            'friction': [
                {'name': n, 'value': self.values[index[n]], 'std': self.std[index[n]],
                 'relative_std_percent': relative[index[n]]} for n in self.parameter_names if n not in rigid],
            'drive_gains': None if self.drive_gains is None else {
                'identified': self.drive_gains_identified,
                'values': dict(zip(self.joint_names, self.drive_gains, strict=True)),
                'std': None if self.drive_gains_std is None else dict(zip(self.joint_names, self.drive_gains_std,
                                                                           strict=True))},
            'exponents': None if self.exponents is None else dict(zip(self.joint_names, self.exponents, strict=True)),
            'metrics': self.metrics,
            'warnings': self.warnings,
            'provenance': {**self.provenance, 'software': {'dynid': __version__},
                           'created': self.provenance.get('created') or datetime.datetime.now(
                               datetime.UTC).isoformat(timespec='seconds')},
        })

    def save(self, path: str | Path) -> Path:
        path = Path(path)
        path.write_text(yaml.safe_dump(self.to_dict(), sort_keys=False, allow_unicode=True))
        return path

    @classmethod
    def from_dict(cls, data: dict, source: str = 'result') -> IdentificationResult:
        if not isinstance(data, dict) or data.get('dynid_result') != RESULT_VERSION:
            raise InputError(f'{source} is not a dynid result file (needs "dynid_result: {RESULT_VERSION}")')
        try:
            rows = data['base_parameters'] + data['friction']
            names = [r['name'] for r in rows]
            values = np.array([float(r['value']) for r in rows])
            std = np.array([float(r['std']) for r in rows])
            joints = tuple(data['joint_names'])
            gains = data.get('drive_gains')
            exponents = data.get('exponents')
            return cls(
                robot=data['robot'], joint_names=joints, method=data['method'], model=data['model'],
                parameter_names=names, values=values, std=std,
                base_expressions={r['name']: r['expression'] for r in data['base_parameters']},
                drive_gains=None if gains is None else np.array([float(gains['values'][j]) for j in joints]),
                drive_gains_std=None if gains is None or gains.get('std') is None else np.array(
                    [float(gains['std'][j]) for j in joints]),
                drive_gains_identified=bool(gains and gains.get('identified')),
                exponents=None if exponents is None else np.array([float(exponents[j]) for j in joints]),
                condition_number=float(data.get('condition_number', 'nan')), metrics=data.get('metrics', {}),
                warnings=list(data.get('warnings', [])), provenance=data.get('provenance', {}))
        except (KeyError, TypeError, ValueError) as error:
            raise InputError(f'{source}: malformed result file ({error})') from None

    @classmethod
    def load(cls, path: str | Path) -> IdentificationResult:
        return cls.from_dict(read_yaml(path, 'result file'), str(path))
