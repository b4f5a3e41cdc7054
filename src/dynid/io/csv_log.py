"""Logs of robot drivers: column maps (presets and a generic spec) applied to log tables.

A :class:`ColumnMap` says which CSV column holds the time and which columns hold each joint signal
of a :class:`~dynid.io.dataset.Dataset` (``q``, ``dq``, ``tau``, ``current``, ``temperature``).
A signal's columns are given by a pattern with ``{i}`` (joint index from 0), ``{n}`` (index from 1)
or ``{name}`` (joint name), e.g. ``actual_q_{i}``; an index may carry an offset, ``{i+7}``, ``{n-1}``. A column
may also be named by its position in the table, ``#K`` (from 0): ``q=#{n},dq=#{i+7}`` reads the columns 1–6 and
7–12, whatever the header calls them (or the file's name, for a file without one). A name the header holds is
that column, even if it starts with ``#``. A preset may list alternative patterns (the first whose columns are all
present is used).

Presets:

- ``ur_rtde``: the column names of Universal Robots' RTDE client (``rtde/csv_writer.py`` of the RTDE
  Python client library: vector fields become ``<field>_0`` … ``<field>_5``; space-separated by
  default): ``timestamp`` [s, controller time], ``actual_q_*`` [rad], ``actual_qd_*`` [rad/s],
  ``actual_current_*`` [A], ``joint_temperatures_*`` [°C]; the controller's targets ``target_q_*``,
  ``target_qd_*``, ``target_qdd_*``, ``target_moment_*`` [N·m] and ``target_current_*`` [A] as the reference.
  There is no measured joint torque: the recording is current-only.
- ``franka``: the robot-state CSV of libfranka's log writers (``franka::logToCSV``): ``time`` [ms]
  (``duration`` in older releases), ``state.q[*]`` or ``q[*]`` [rad], ``state.dq[*]`` / ``dq[*]``
  [rad/s] and ``state.tau_J[*]`` / ``tau_J[*]`` [N·m, the link-side joint torque sensors]; the desired state
  ``state.q_d[*]``, ``state.dq_d[*]``, ``state.ddq_d[*]`` and ``state.tau_J_d[*]`` (or ``cmd.tau_J_d[*]``, the
  commanded torque without the gravity the robot adds) as the reference. franka_ros2
  has no CSV log format of its own; a lab's own CSV is read with a ``--columns`` spec.

The generic spec (``dynid import --columns``) is comma-separated KEY=VALUE: optional ``time=COLUMN``
(a log without one is taken at a given rate, ``dynid import --rate``), optional
``time_unit=s|ms|us|ns`` or seconds per count (default s; a column that counts samples at 500 Hz is
``time_unit=0.002``) and SIGNAL=PATTERN for any of q (required, or motor_q), dq, tau, current,
temperature, motor_q, motor_dq, and the controller's reference q_r, dq_r, ddq_r, tau_r, current_r
(:data:`dynid.io.dataset.REFERENCE_KEYS`; kept where q_r and dq_r are finite in every row, else named as not
imported: a reference never costs the log a row), e.g.
``time=stamp,time_unit=ms,q=pos{i},dq=vel{i},current=cur_{name}``, or by position
``time=#0,q=#{n},dq=#{i+7},current=#{i+13}``.
``motor_q``/``motor_dq`` are the motors' encoder positions [rad] and velocities [rad/s] on their shafts, one per
drive in the joints' order: the drives' gear ratios, motor offsets and coupling turn them into q and q̇ (a log
logged on the motor side needs no converter; :func:`dynid.io.motor_side.motor_side_signals`).

The files are read as tables of named columns (:mod:`dynid.io.log_tables`: CSV and other text with or
without a header, ``.npz``; several files as consecutive parts or one file per signal);
:func:`apply_column_map` keeps every row it can read and names the others: a line with a field count
other than the header's, or a field that is not a finite number in a column the map uses.
"""

from __future__ import annotations

import math
import re
import string
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from dynid.errors import InputError
from dynid.io.dataset import REFERENCE_KEYS
from dynid.io.log_tables import LogTable

SIGNALS = ('q', 'dq', 'tau', 'current', 'temperature', 'motor_q', 'motor_dq', 'motor_torque', *REFERENCE_KEYS)
#: Motor-side signals [rad, rad/s, N·m on the motor shaft], turned into joint signals by the drives' transmission
#: (:func:`dynid.io.motor_side.motor_side_signals`).
MOTOR_SIGNALS = ('motor_q', 'motor_dq', 'motor_torque')
TIME_UNITS = {'s': 1.0, 'ms': 1e-3, 'us': 1e-6, 'ns': 1e-9}


@dataclass(frozen=True)
class ColumnMap:
    """Where the time and the joint signals are in a CSV (module docstring).

    Attributes:
        time: candidate names of the time column (the first present is used); empty: the log has none
            (its rows are then taken at a given rate).
        time_unit_s: seconds per unit of the time column.
        signals: signal name → candidate column patterns.
        ignored: column patterns known not to be imported (named in the report).
        robot: the robot a preset is for (the default of ``dynid import --robot``), or None.
    """

    time: tuple[str, ...]
    time_unit_s: float = 1.0
    signals: dict[str, tuple[str, ...]] = field(default_factory=dict)
    ignored: tuple[str, ...] = ()
    robot: str | None = None

    def columns(self, header: list[str], joint_names, source,
                aliases: dict[str, str] | None = None) -> tuple[str | None, dict[str, list[str]]]:
        """The time column (None for a map without one) and, per signal present, its n column names, checked
        against ``header`` (``aliases``: other names of its columns, :attr:`dynid.io.log_tables.LogTable.aliases`).
        A column named for two signals is refused (:class:`SharedColumnsError`): it holds one of them."""
        present = set(header)
        aliases = aliases or {}

        def named(name: str) -> str:
            """``name``, or the header's name of the column at position K for '#K' (module docstring)."""
            if name in aliases:
                return aliases[name]
            position = _POSITION.fullmatch(name)
            if name in present or position is None or int(position.group(1)) >= len(header):
                return name
            return header[int(position.group(1))]

        time = next((named(name) for name in self.time if named(name) in present), None)
        if time is None and self.time:
            raise InputError(f'{source}: no time column {" or ".join(map(repr, self.time))} in the header '
                             f'(columns: {_shorten(header)})')
        found = {}
        for signal, patterns in self.signals.items():
            for pattern in patterns:
                names = [named(name) for name in expand(pattern, joint_names)]
                several = [name for name, got in zip(expand(pattern, joint_names), names, strict=True) if got == '']
                if several:
                    raise InputError(f'{{columns}}: {signal}={pattern}: {_shorten(several, 3)} are columns of several '
                                     f'of the files, with other values in each: name the file, {signal}=FILE:'
                                     f'{pattern} (FILE: the file\'s name or stem)', fields=('columns',))
                if all(name in present for name in names):
                    found[signal] = names
                    break
            else:
                if signal in ('q', 'motor_q'):
                    wanted = expand(patterns[0], joint_names)
                    missing = [name for name in wanted if named(name) not in present]
                    raise InputError(f'{source}: no position columns {_shorten(missing)} for the '
                                     f'{len(joint_names)} joints (columns: {_shorten(header)})')
        _refuse_shared(found, time, source)
        return time, found

    def time_column(self, header: list[str], aliases: dict[str, str] | None = None) -> str | None:
        """The name in ``header`` of the map's time column, or None (no time column in the map or the header)."""
        aliases, present = aliases or {}, set(header)
        for name in self.time:
            name = aliases.get(name, name)
            position = _POSITION.fullmatch(name)
            if name not in present and position is not None and int(position.group(1)) < len(header):
                name = header[int(position.group(1))]
            if name in present:
                return name
        return None

    def file_of(self, pattern: str, files: list[str]) -> str | None:
        """The file a pattern names its columns in (``FILE:COLUMN``, FILE one of ``files``' names or stems), or
        None."""
        prefix, sep, _ = pattern.partition(':')
        return prefix if sep and prefix in files else None

    def names_files(self, files: list[str]) -> bool:
        """Whether any column of the map is named in one of ``files`` (``FILE:COLUMN``)."""
        return any(self.file_of(pattern, files) for patterns in self.signals.values() for pattern in patterns) or \
            any(self.file_of(name, files) for name in self.time)

    def spec(self, files: dict[str, str] | None = None) -> str:
        """The map as the generic spec (module docstring), the columns of each signal in ``files`` named in that
        file (``SIGNAL=FILE:PATTERN``)."""
        files = files or {}
        items = [f'time={self.time[0]}'] if self.time else []
        unit = next((name for name, seconds in TIME_UNITS.items() if seconds == self.time_unit_s),
                    f'{self.time_unit_s:g}')
        items += [f'time_unit={unit}'] if self.time and unit != 's' else []
        items += [f'{signal}={files[signal] + ":" if signal in files else ""}{patterns[0]}'
                  for signal, patterns in self.signals.items()]
        return ','.join(items)


class SharedColumnsError(InputError):
    """A column map that names one column for two signals (:meth:`ColumnMap.columns`).

    Attributes:
        signals: the signals that share columns, in the map's order.
        columns: the columns they share.
    """

    def __init__(self, message: str, signals: tuple[str, ...], columns: list[str]):
        super().__init__(message, fields=('columns',))
        self.signals, self.columns = signals, columns


def _refuse_shared(found: dict[str, list[str]], time: str | None, source) -> None:
    """SharedColumnsError where two signals (or a signal and the time) are given the same column."""
    owner: dict[str, str] = {} if time is None else {time: 'time'}
    for signal, names in found.items():
        for name in names:
            other = owner.setdefault(name, signal)
            if other != signal:
                sharing = tuple(s for s in ('time', *found) if s in (other, signal))
                shared = [n for n in names if owner.get(n) == other] if other != 'time' else [name]
                raise SharedColumnsError(
                    f'{{columns}}: {" and ".join(sharing)} both name the column{"s" if len(shared) > 1 else ""} '
                    f'{_shorten(shared, 3)} of {source}: a column holds one signal', sharing, shared)


_FIELD = re.compile(r'(i|n)(?:([+-])(\d+))?|name')
_POSITION = re.compile(r'#(\d+)')


def pattern_fields_valid(pattern: str) -> bool:
    """Whether ``pattern`` names each joint's column (module docstring): at least one field, each {i}, {n} (with an
    optional offset, ``{i+7}``) or {name}."""
    try:
        fields = [name for _, name, _, _ in string.Formatter().parse(pattern) if name is not None]
    except ValueError:  # an unmatched brace
        return False
    return bool(fields) and all(_FIELD.fullmatch(name) for name in fields)


def expand(pattern: str, joint_names) -> list[str]:
    """The column names of a pattern for each joint (module docstring)."""
    parts = list(string.Formatter().parse(pattern))

    def value(field: str, spec: str, i: int, name: str) -> str:
        match = _FIELD.fullmatch(field)
        if match is None:
            raise InputError(f'column pattern {pattern!r}: unknown field {{{field}}} (fields: {{i}}, {{n}}, '
                             f'{{name}}, an index with an offset such as {{i+7}})', fields=('columns',))
        if match.group(0) == 'name':
            return format(name, spec)
        index = i + (match.group(1) == 'n')
        if match.group(2):
            index += int(match.group(3)) * (1 if match.group(2) == '+' else -1)
        return format(index, spec)

    return [''.join(literal + ('' if field is None else value(field, spec or '', i, name))
                    for literal, field, spec, _ in parts) for i, name in enumerate(joint_names)]


def _shorten(names, limit: int = 8) -> str:
    names = list(names)
    return ', '.join(names[:limit]) + (f', … ({len(names)} in all)' if len(names) > limit else '')


PRESETS = {
    'ur_rtde': ColumnMap(
        time=('timestamp',), time_unit_s=1.0,
        signals={'q': ('actual_q_{i}',), 'dq': ('actual_qd_{i}',), 'current': ('actual_current_{i}',),
                 'temperature': ('joint_temperatures_{i}',), 'q_r': ('target_q_{i}',), 'dq_r': ('target_qd_{i}',),
                 'ddq_r': ('target_qdd_{i}',), 'tau_r': ('target_moment_{i}',),
                 'current_r': ('target_current_{i}',)},
        robot='ur5e'),
    'franka': ColumnMap(
        time=('time', 'duration'), time_unit_s=1e-3,
        signals={'q': ('state.q[{i}]', 'q[{i}]'), 'dq': ('state.dq[{i}]', 'dq[{i}]'),
                 'tau': ('state.tau_J[{i}]', 'tau_J[{i}]'), 'q_r': ('state.q_d[{i}]', 'q_d[{i}]'),
                 'dq_r': ('state.dq_d[{i}]', 'dq_d[{i}]'), 'ddq_r': ('state.ddq_d[{i}]', 'ddq_d[{i}]'),
                 'tau_r': ('state.tau_J_d[{i}]', 'cmd.tau_J_d[{i}]', 'tau_J_d[{i}]')},
        robot='panda'),
}


def parse_column_spec(text: str) -> ColumnMap:
    """A :class:`ColumnMap` from the generic spec (module docstring); InputError naming what is wrong."""
    entries = {}
    for item in (part.strip() for part in text.split(',')):
        if not item:
            continue
        key, sep, value = item.partition('=')
        key, value = key.strip(), value.strip()
        if not sep or not value:
            raise InputError(f'{{columns}}: expected KEY=VALUE, got {item!r}', fields=('columns',))
        if key in entries:
            raise InputError(f'{{columns}}: {key} given twice', fields=('columns',))
        if key not in ('time', 'time_unit', *SIGNALS):
            raise InputError(f'{{columns}}: unknown key {key!r} (keys: time, time_unit, {", ".join(SIGNALS)})',
                             fields=('columns',))
        entries[key] = value
    if 'q' not in entries and 'motor_q' not in entries:
        raise InputError('{columns} needs at least q=PATTERN or motor_q=PATTERN (and time=COLUMN, or a rate for a '
                         'log without one)', fields=('columns',))
    if 'time_unit' in entries and 'time' not in entries:
        raise InputError('{columns}: time_unit without time=COLUMN', fields=('columns',))
    unit_s = _time_unit_s(entries.pop('time_unit', 's'))
    signals = {}
    for signal in (key for key in entries if key in SIGNALS):  # in the order given
        if signal in entries:
            pattern = entries[signal]
            if not pattern_fields_valid(pattern):
                raise InputError(f'{{columns}}: {signal}={pattern!r} must name each joint\'s column with {{i}} '
                                 f'(index from 0), {{n}} (from 1), either with an offset ({{i+7}}), or {{name}}',
                                 fields=('columns',))
            signals[signal] = (pattern,)
    return ColumnMap(time=(entries['time'],) if 'time' in entries else (), time_unit_s=unit_s, signals=signals)


def _time_unit_s(unit: str) -> float:
    """Seconds per count of a time unit: a name of ``TIME_UNITS`` or a number of seconds (a column that counts
    samples: the sample period, e.g. 0.002 at 500 Hz)."""
    if unit in TIME_UNITS:
        return TIME_UNITS[unit]
    try:
        seconds = float(unit)
    except ValueError:
        seconds = math.nan
    if not (math.isfinite(seconds) and seconds > 0):
        raise InputError(f'{{columns}}: time_unit must be one of {", ".join(TIME_UNITS)} or seconds per count (> 0), '
                         f'got {unit!r}', fields=('columns',))
    return seconds


def read_at(column_map: ColumnMap, header: list[str], joint_names, time_unit_s: float) -> ColumnMap:
    """``column_map`` with its time column in ``time_unit_s`` [s per count] and, of each name's candidates, the
    one ``header`` holds (a preset's map written as the generic spec reads the same columns)."""
    present = set(header)

    def held(patterns: tuple[str, ...]) -> str:
        return next((p for p in patterns if all(name in present for name in expand(p, joint_names))), patterns[0])

    time = next((name for name in column_map.time if name in present), column_map.time[0])
    return replace(column_map, time=(time,), time_unit_s=time_unit_s,
                   signals={signal: (held(patterns),) for signal, patterns in column_map.signals.items()})


@dataclass
class CsvLog:
    """The readable rows of one log (one file, its consecutive parts, or its files side by side).

    Attributes:
        path: the (first) file.
        t: (N,) time [s] as logged (not yet sorted or checked), or None for a log without a time column.
        signals: signal → (N, n) values, joints in the order of the names given.
        where: (N,) where each row is (``file:line``), for reports.
        unparsable: (where, reason) of every row left out.
        columns: signal → the column names used; ``time`` the time column (None without one).
        ignored: columns of the map's ``ignored`` patterns present in the file.
        files: the files read; layout: how they were joined (:func:`dynid.io.log_tables.join_tables`).
    """

    path: Path
    t: np.ndarray | None
    signals: dict[str, np.ndarray]
    where: np.ndarray
    unparsable: list[tuple[str, str]]
    columns: dict[str, list[str] | str | None]
    ignored: list[str]
    files: list[Path] = field(default_factory=list)
    layout: str = 'one file'


def apply_column_map(table: LogTable, column_map: ColumnMap, joint_names) -> CsvLog:
    """The signals of a table (:mod:`dynid.io.log_tables`) by a column map. Rows with a field that is not a
    finite number in a column the map uses are left out and named (rows of unsplittable lines were named by
    the reader); InputError when the header lacks the map's columns, when one column is named for two signals or no
    row is readable."""
    time_column, columns = column_map.columns(table.header, list(joint_names), table.path, table.aliases)
    index = {name: k for k, name in enumerate(table.header)}
    reference = {signal: columns.pop(signal) for signal in list(columns) if signal in REFERENCE_KEYS}
    used = ([time_column] if time_column is not None else []) + [name for names in columns.values() for name in names]
    values = table.values[:, [index[name] for name in used]]
    finite = np.isfinite(values)
    bad_rows = ~finite.all(axis=1)
    unparsable = []
    for row in np.flatnonzero(bad_rows & ~table.broken):
        column = used[int(np.flatnonzero(~finite[row])[0])]
        unparsable.append((str(table.where[row]), f'not a finite number in column {column}'))
    good = ~bad_rows
    values = values[good]
    if values.shape[0] == 0:
        raise InputError(f'{table.path}: no readable data row')
    signals, start = {}, 0 if time_column is None else 1
    for signal, names in columns.items():
        signals[signal] = values[:, start:start + len(names)]
        start += len(names)
    ignored = [name for pattern in column_map.ignored for name in expand(pattern, joint_names) if name in index]
    targets = {signal: table.values[good][:, [index[name] for name in names]] for signal, names in reference.items()}
    if {'q_r', 'dq_r'} <= set(targets) and all(np.all(np.isfinite(v)) for v in targets.values()):
        signals.update(targets)
        columns.update(reference)
    else:  # a reference needs q_r and q̇_r in every row; it never costs the log a row
        ignored += [name for names in reference.values() for name in names]
    t = None if time_column is None else values[:, 0] * column_map.time_unit_s
    return CsvLog(table.path, t, signals, table.where[good], unparsable, {'time': time_column, **columns}, ignored,
                  list(table.files), table.layout)
