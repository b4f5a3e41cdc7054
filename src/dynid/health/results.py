"""The identification results of a fleet's robots in the health record (the ``results`` table, schema version 6), so
that a fleet prior is pooled from the record without the result files.

A row holds one robot's result: the robot model it is of (the result's ``robot``), when it was identified
(``identified_utc``: the recording's start where known, else when the result was made) [s since 1970 UTC], the
recording, the result file and its sha256, dynid's version, and what a fleet pools of it:

- ``pooling``: JSON of the joint order, the model keys the robots must share (:data:`POOLED_MODEL_KEYS`: friction law,
  torque source, base grouping) with the terms the identification held, the parameter names, the base parameters'
  expressions, whether the drive gains were identified and how much the σ understate the errors for the residual's
  autocorrelation (``std_inflation``; a row stored without it takes it from ``document``);
- ``parameter_values``, ``parameter_std``: the values and their σ in ``pooling``'s name order (σ as
  :func:`dynid.identify.solve.prior_source.result_std` gives it: the std, else the prior's posterior σ), and the
  identified ``drive_gains`` [N·m/A] with their σ (NULL where none), each as little-endian float64 bytes, read back
  bit for bit;
- ``document``: the whole result file, zlib-compressed (the record keeps the result, not only its path).

:meth:`StoredResult.parameters` gives a :class:`ResultParameters`, which holds the attributes of an
:class:`~dynid.identify.result.result.IdentificationResult` that :mod:`dynid.fleet.prior` reads, so that a prior from
the record is computed by the same code as from the files. Units are the result's (docs/fleet.md).

    >>> with HealthRecord(db) as record:                                                   # doctest: +SKIP
    ...     record.store_result('cell-3', 'ur5e', StoredResult.of(result, path, identified_utc=t))
"""

from __future__ import annotations

import datetime
import json
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import yaml

from dynid import __version__
from dynid.files import file_sha256

if TYPE_CHECKING:  # the record reads its rows without loading the identification (and the robot model under it)
    from dynid.identify import IdentificationResult

#: what the results of one prior must share: the friction law and its terms, the torque's source and the grouping
#: of the base parameters (rotor inertias folded in or identified)
POOLED_MODEL_KEYS = ('friction', 'friction_symbols', 'temperature', 'torque_source', 'rotor_compensation',
                     'rotor_inertia_identified', 'friction_velocity', 'power_form')


@dataclass(frozen=True)
class ResultParameters:
    """What a fleet pools of one result (module docstring), with the attribute names of an IdentificationResult:
    ``robot`` (the robot model), ``joint_names``, ``model`` (:data:`POOLED_MODEL_KEYS` and ``held``),
    ``parameter_names``, ``values``, ``std`` (σ, NaN where unknown), ``base_expressions``, ``drive_gains`` and
    ``drive_gains_std`` [N·m/A] (None where not identified), ``drive_gains_identified``."""

    robot: str
    joint_names: tuple[str, ...]
    model: dict
    parameter_names: list[str]
    values: np.ndarray
    std: np.ndarray
    base_expressions: dict[str, str]
    drive_gains: np.ndarray | None
    drive_gains_std: np.ndarray | None
    drive_gains_identified: bool
    prior_section: None = None  # ``std`` is already the σ result_std gives
    #: how much ``std`` understates the errors for the residual's autocorrelation
    #: (:func:`dynid.identify.result.quality.std_inflation`)
    std_inflation: float = 1.0

    @classmethod
    def of(cls, result: IdentificationResult) -> ResultParameters:
        from dynid.identify import (
            result_std,
            result_std_inflation,  # only where a result is kept: see the imports
        )

        names = list(result.parameter_names)
        model = {key: result.model[key] for key in (*POOLED_MODEL_KEYS, 'held') if key in (result.model or {})}
        gains = None if result.drive_gains is None else np.asarray(result.drive_gains, dtype=float)
        gains_std = None if result.drive_gains_std is None else np.asarray(result.drive_gains_std, dtype=float)
        return cls(result.robot, tuple(result.joint_names), model, names, np.asarray(result.values, dtype=float),
                   np.asarray(result_std(result), dtype=float),
                   {name: result.base_expressions[name] for name in names if name in result.base_expressions},
                   gains, gains_std, bool(result.drive_gains_identified), None,
                   result_std_inflation(result.metrics))

    def pooling(self) -> str:
        """The ``pooling`` column (module docstring)."""
        return json.dumps({'robot': self.robot, 'joint_names': list(self.joint_names), 'model': self.model,
                           'parameter_names': self.parameter_names, 'base_expressions': self.base_expressions,
                           'drive_gains_identified': self.drive_gains_identified,
                           'std_inflation': self.std_inflation}, sort_keys=True)


def _bytes(array: np.ndarray | None) -> bytes | None:
    return None if array is None else np.ascontiguousarray(array, dtype='<f8').tobytes()


def _array(blob) -> np.ndarray | None:
    return None if blob is None else np.frombuffer(bytes(blob), dtype='<f8').astype(float)


@dataclass(frozen=True)
class StoredResult:
    """One row of the ``results`` table (module docstring): ``model`` the robot model the result is of,
    ``identified_utc`` [s since 1970 UTC], the rest as the columns hold them."""

    model: str
    identified_utc: float
    input: str
    result_file: str
    result_sha256: str
    software: str
    pooling: str
    parameter_values: bytes
    parameter_std: bytes
    drive_gains: bytes | None
    drive_gains_std: bytes | None
    document: bytes

    @classmethod
    def of(cls, result: IdentificationResult, path: str | Path, *, identified_utc: float,
           recording: str = '') -> StoredResult:
        """The row of ``result``, read from its file ``path`` (kept whole, with its sha256), identified at
        ``identified_utc`` [s since 1970 UTC] from ``recording`` (the ``input`` column)."""
        parameters = ResultParameters.of(result)
        document = Path(path).read_bytes()
        return cls(result.robot, float(identified_utc), str(recording), str(path), file_sha256(path),
                   f'dynid {__version__}', parameters.pooling(), _bytes(parameters.values), _bytes(parameters.std),
                   _bytes(parameters.drive_gains), _bytes(parameters.drive_gains_std), zlib.compress(document, 6))

    def parameters(self, pooling: dict | None = None) -> ResultParameters:
        """What a fleet pools of this result; ``pooling``: its column already parsed (many rows share one text)."""
        p = json.loads(self.pooling) if pooling is None else pooling
        inflation = p.get('std_inflation')
        if inflation is None:  # a row stored before the column held it: from the result kept whole
            from dynid.identify import result_std_inflation

            inflation = result_std_inflation(yaml.safe_load(self.result_text()).get('metrics'))
        return ResultParameters(p['robot'], tuple(p['joint_names']), p['model'], p['parameter_names'],
                                _array(self.parameter_values), _array(self.parameter_std), p['base_expressions'],
                                _array(self.drive_gains), _array(self.drive_gains_std), p['drive_gains_identified'],
                                None, float(inflation))

    def result_text(self) -> str:
        """The result file as it was stored (YAML)."""
        return zlib.decompress(self.document).decode()


def parameters_of(rows: list[StoredResult]) -> list[ResultParameters]:
    """Each row's :class:`ResultParameters`, parsing each distinct ``pooling`` text once."""
    parsed: dict[str, dict] = {}
    found = []
    for row in rows:
        if row.pooling not in parsed:
            parsed[row.pooling] = json.loads(row.pooling)
        found.append(row.parameters(parsed[row.pooling]))
    return found


def made_utc(result: IdentificationResult, path: str | Path) -> float:
    """When ``result`` was made [s since 1970 UTC]: its provenance's ``created``, else its file's modification time
    (for a result whose recording's start is not at hand)."""
    created = (result.provenance or {}).get('created')
    try:
        made = datetime.datetime.fromisoformat(str(created))
    except ValueError:
        return Path(path).stat().st_mtime
    return (made if made.tzinfo else made.replace(tzinfo=datetime.timezone.utc)).timestamp()


def store_results(record, members, robot_model: str | None = None) -> list[str]:
    """Keep the results of ``members`` (:class:`dynid.fleet.prior.FleetMember` of result files, each named as the
    record names its robot) in ``record`` (opened for writing), dated by :func:`made_utc`, for the robots the record
    holds (others are left out, as their places are); the robots whose result was new, in order. ``robot_model``:
    the robots table's model of a robot registered here (default the result's)."""
    known = set(record.robots())
    done = []
    for member in members:
        result = member.result
        if member.name in known and not isinstance(result, ResultParameters) and record.store_result(
                member.name, robot_model or result.robot, result.joint_names,
                StoredResult.of(result, member.path, identified_utc=made_utc(result, member.path))):
            done.append(member.name)
    return done

