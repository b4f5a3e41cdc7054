"""Two identification results side by side: each parameter's change in standard deviations, and how both
predict held-out recordings.

For a parameter p identified as a ± σ_a in result A and b ± σ_b in result B (identifications of the same
robot on different recordings, so independent estimates), the change is

    Δ = b − a,   σ_Δ = √(σ_a² + σ_b²),   z = Δ / σ_Δ

|z| > 3 is a change the two identifications' own uncertainties do not explain (a worn joint, a payload,
another model of the robot). z is null where a σ is not known (a physically consistent result has none)
or both are 0. Base parameters are compared only where both results regroup them alike (the same
expression in standard parameters); the drive gains where both identified them. Parameters one result
has and the other not (another friction model) are listed, not compared.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from dynid.errors import InputError
from dynid.identify.result.result import IdentificationResult, plain_data

#: |z| above this is a significant change.
SIGNIFICANT_Z = 3.0


@dataclass(frozen=True)
class ParameterChange:
    """One parameter in both results: values, σ, Δ = b − a, σ_Δ, z = Δ/σ_Δ (None where undefined).

    >>> round(ParameterChange('Fc_1', 3.0, 0.03, 3.5, 0.04).z, 3)
    10.0
    """

    name: str
    a: float
    std_a: float
    b: float
    std_b: float

    @property
    def change(self) -> float:
        return self.b - self.a

    @property
    def std(self) -> float:
        return math.hypot(self.std_a, self.std_b)

    @property
    def z(self) -> float | None:
        std = self.std
        return self.change / std if math.isfinite(std) and std > 0 and math.isfinite(self.change) else None

    @property
    def relative_percent(self) -> float | None:
        """Δ relative to |a| [%], None for a = 0."""
        return 100.0 * self.change / abs(self.a) if self.a != 0 and math.isfinite(self.a) else None

    @property
    def significant(self) -> bool:
        return self.z is not None and abs(self.z) > SIGNIFICANT_Z

    def to_dict(self) -> dict:
        return {'name': self.name, 'a': self.a, 'std_a': self.std_a, 'b': self.b, 'std_b': self.std_b,
                'change': self.change, 'std': self.std, 'z': self.z, 'relative_percent': self.relative_percent,
                'significant': self.significant}


@dataclass
class Comparison:
    """Result A against result B (module docstring); ``heldout`` holds {recording: {'a': metrics, 'b': metrics}}."""

    label_a: str
    label_b: str
    joint_names: tuple[str, ...]
    changes: list[ParameterChange]
    only_a: list[str] = field(default_factory=list)
    only_b: list[str] = field(default_factory=list)
    regrouped: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    heldout: dict[str, dict[str, dict]] = field(default_factory=dict)

    def ranked(self) -> list[ParameterChange]:
        """The changes by |z|, largest first (those without z last, in order)."""
        known = sorted((c for c in self.changes if c.z is not None), key=lambda c: -abs(c.z))
        return known + [c for c in self.changes if c.z is None]

    def significant(self) -> list[ParameterChange]:
        return [c for c in self.ranked() if c.significant]

    def add_heldout(self, recording: str, metrics_a: Mapping, metrics_b: Mapping) -> None:
        """The validation metrics of both results on ``recording`` (as
        :func:`dynid.identify.validation.validate.validate`)."""
        self.heldout[recording] = {'a': dict(metrics_a), 'b': dict(metrics_b)}

    def heldout_rows(self) -> list[tuple[str, str, float | None, float | None]]:
        """(recording, joint, fit A [%], fit B [%]) of every held-out recording and joint."""
        return [(recording, joint, both['a']['joints'][joint].get('nrmse_fit_percent'),
                 both['b']['joints'][joint].get('nrmse_fit_percent'))
                for recording, both in self.heldout.items() for joint in self.joint_names]

    def to_dict(self) -> dict:
        return plain_data({
            'dynid_comparison': 1, 'a': self.label_a, 'b': self.label_b, 'joint_names': list(self.joint_names),
            'significant_z': SIGNIFICANT_Z, 'parameters': [c.to_dict() for c in self.ranked()],
            'only_a': self.only_a, 'only_b': self.only_b, 'regrouped_differently': self.regrouped,
            'notes': self.notes,
            'heldout': {recording: {'a': _fits(both['a']), 'b': _fits(both['b'])}
                        for recording, both in self.heldout.items()}})


def _fits(metrics: Mapping) -> dict:
    return {'relative_residual': metrics.get('relative_residual'), 'rmse': metrics.get('rmse'),
            'joints': {joint: {'rmse': m.get('rmse'), 'nrmse_fit_percent': m.get('nrmse_fit_percent')}
                       for joint, m in metrics['joints'].items()}}


def compare_results(a: IdentificationResult, b: IdentificationResult, label_a: str = 'A',
                    label_b: str = 'B') -> Comparison:
    """The parameter changes from ``a`` to ``b`` (module docstring); InputError when the joints differ.
    ``label_a``, ``label_b`` name the results in messages (e.g. their files)."""
    if tuple(a.joint_names) != tuple(b.joint_names):
        raise InputError(f'{label_a} and {label_b} are results of different joints ({list(a.joint_names)} and '
                         f'{list(b.joint_names)})')
    notes = []
    if a.robot != b.robot:
        notes.append(f'the results name different robots ({a.robot!r} and {b.robot!r})')
    if a.model.get('friction') != b.model.get('friction'):
        notes.append(f'friction models differ ({a.model.get("friction")} and {b.model.get("friction")})')
    index_b = {name: i for i, name in enumerate(b.parameter_names)}
    changes, regrouped = [], []
    for i, name in enumerate(a.parameter_names):
        if name not in index_b:
            continue
        if a.base_expressions.get(name) != b.base_expressions.get(name):
            regrouped.append(name)
            continue
        j = index_b[name]
        changes.append(ParameterChange(name, float(a.values[i]), float(a.std[i]), float(b.values[j]),
                                       float(b.std[j])))
    if a.drive_gains_identified and b.drive_gains_identified:
        std_a = a.drive_gains_std if a.drive_gains_std is not None else np.full(len(a.joint_names), np.nan)
        std_b = b.drive_gains_std if b.drive_gains_std is not None else np.full(len(b.joint_names), np.nan)
        changes += [ParameterChange(f'K_tau_{k + 1}', float(a.drive_gains[k]), float(std_a[k]),
                                    float(b.drive_gains[k]), float(std_b[k])) for k in range(len(a.joint_names))]
    return Comparison(label_a, label_b, tuple(a.joint_names), changes,
                      only_a=[n for n in a.parameter_names if n not in index_b],
                      only_b=[n for n in b.parameter_names if n not in set(a.parameter_names)],
                      regrouped=regrouped, notes=notes)


def format_z(value: float | None) -> str:
    return 'n/a' if value is None else f'{value:+.1f}'
