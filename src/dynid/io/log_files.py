"""Several log files as one log (``dynid import``): consecutive parts, or one signal per file side by side.

A file set is read one way only where the files and the column map tell it apart (:func:`join_logs`):

- **One signal per file** (its columns side by side): files with different columns, or a map that names a
  signal's columns in a file, ``SIGNAL=FILE:PATTERN`` (FILE the file's name or stem: ``motor_q=pos.csv:Joint_{n},
  motor_torque=torque.csv:Joint_{n}`` reads two files with the same header ``Joint_1 … Joint_6``). The rows are
  joined by time: where each file has the map's time column and their stamps differ, by equal stamps (the rows of
  a stamp another file lacks are left out and counted); else row by row (the same number of rows in each). A
  column several files hold with the same values (a shared time column) is named as it is; one they hold with
  different values only as ``FILE:COLUMN``.
- **Consecutive parts of one log**: files with the same columns that the map reads alike, only where their time
  columns continue each other (each file's first stamp after the previous file's last). Files with the same
  columns whose times overlap, or without a time column, are refused: they may as well hold one signal each.

A map that names one column for two signals (``motor_q=Joint_{n},current=Joint_{n}``) is refused; where as many
files with the same columns are given as signals share them, the refusal gives the map that names each signal's
file (the first signal in the first file, in the order given): :class:`FileSetError` holds it.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from dynid.errors import InputError
from dynid.io.csv_log import ColumnMap, SharedColumnsError, _shorten
from dynid.io.log_tables import LogTable


class FileSetError(InputError):
    """A file set or column map the import cannot read one way: ``reason`` says why; ``columns`` is the column map
    (generic spec) that reads it, where there is one, which the message gives after the reason (a front end may
    give the whole command instead)."""

    def __init__(self, reason: str, columns: str | None = None):
        super().__init__(reason + ('' if columns is None else f': {{columns}} {columns!r}'), fields=('columns',))
        self.reason, self.columns = reason, columns


def file_labels(path: Path) -> tuple[str, str]:
    """The names a column map may give a file by: its name and its stem."""
    return path.name, path.stem


def with_aliases(table: LogTable) -> LogTable:
    """``table`` (one file) with its columns also named ``FILE:COLUMN`` and ``FILE:#K``."""
    for label in dict.fromkeys(file_labels(table.path)):
        for k, name in enumerate(table.header):
            table.aliases.setdefault(f'{label}:{name}', name)
            table.aliases.setdefault(f'{label}:#{k}', name)
    return table


def join_logs(tables: list[LogTable], column_map: ColumnMap, joint_names) -> LogTable:
    """One table of the files of a log (module docstring); InputError (:class:`FileSetError` with the map that
    reads them, where there is one) for a file set or map it cannot tell apart."""
    if len(tables) == 1:
        return with_aliases(tables[0])
    labels = [label for table in tables for label in file_labels(table.path)]
    first = tables[0]
    if all(t.header == first.header for t in tables) and not column_map.names_files(labels):
        return _parts(tables, column_map, joint_names)
    return _side_by_side(tables, column_map)


def _parts(tables: list[LogTable], column_map: ColumnMap, joint_names) -> LogTable:
    """Files with the same columns, read alike by the map: consecutive parts where their times continue."""
    first = tables[0]
    names = ', '.join(t.path.name for t in tables)
    try:
        column_map.columns(first.header, list(joint_names), first.path)
    except SharedColumnsError as error:
        suggestion = None
        signals = [s for s in error.signals if s != 'time']
        if len(signals) == len(tables) and 'time' not in error.signals:
            suggestion = column_map.spec({s: t.path.name for s, t in zip(signals, tables, strict=True)})
        raise FileSetError(
            f'{{columns}}: {" and ".join(error.signals)} both name the columns {_shorten(error.columns, 3)}, which '
            f'{" and ".join(t.path.name for t in tables)} each hold: a column holds one signal'
            + ('; where each file holds one signal, name its file (the first signal in the first file)'
               if suggestion else '; give each signal its own columns'), suggestion) from None
    time = column_map.time_column(first.header)
    one_each = column_map.spec({s: t.path.name for s, t in zip(column_map.signals, tables, strict=False)}) \
        if len(column_map.signals) >= len(tables) else None
    per_file = (f'; if each file holds other signals of one recording, name each signal\'s file '
                f'(SIGNAL=FILE:COLUMN, e.g. {{columns}} {one_each!r})' if one_each else
                '; if each file holds other signals, name each signal\'s file (SIGNAL=FILE:COLUMN)')
    if time is None:
        raise FileSetError(f'{names} have the same columns and no time column: consecutive parts of one log '
                           f'cannot be told from one signal per file; parts: give the time column ({{columns}} '
                           f'time=COLUMN) so that their continuity is checked, or import each on its own{per_file}',
                           None)
    index = first.header.index(time)
    scale = column_map.time_unit_s
    for before, after in zip(tables, tables[1:], strict=False):
        end, start = _finite(before.values[:, index]), _finite(after.values[:, index])
        if end.size and start.size and not start[0] > end[-1]:
            raise FileSetError(
                f'{before.path.name} and {after.path.name} have the same columns, but {after.path.name}\'s time '
                f'{time!r} starts at {start[0] * scale:.6g} s, not after {before.path.name}\'s last '
                f'({end[-1] * scale:.6g} s): not consecutive parts of one log (import each recording on its own)'
                f'{per_file}', None)
    return LogTable(first.path, first.header, np.vstack([t.values for t in tables]),
                    np.concatenate([t.where for t in tables]), np.concatenate([t.broken for t in tables]),
                    [], [f for t in tables for f in t.files], 'consecutive parts')


def _finite(values: np.ndarray) -> np.ndarray:
    return values[np.isfinite(values)]


def _side_by_side(tables: list[LogTable], column_map: ColumnMap) -> LogTable:
    """One signal per file: the columns side by side, the rows joined by time (module docstring)."""
    rows, notes = _joined_rows(tables, column_map)
    values = [t.values[r] for t, r in zip(tables, rows, strict=True)]
    holders: dict[str, list[int]] = {}
    for k, table in enumerate(tables):
        for name in table.header:
            holders.setdefault(name, []).append(k)
    header, blocks, aliases = [], [], {}
    for k, table in enumerate(tables):
        labels = dict.fromkeys(file_labels(table.path))
        for c, name in enumerate(table.header):
            others = holders[name]
            alike = all(np.array_equal(values[o][:, tables[o].header.index(name)], values[k][:, c], equal_nan=True)
                        for o in others)
            if alike and others[0] != k:  # the same column in an earlier file: that one
                column = name
            else:
                column = name if alike else f'{table.path.name}:{name}'
                header.append(column)
                blocks.append(values[k][:, c])
            if not alike:
                aliases[name] = ''  # several files hold it, each its own: named only with its file
            for label in labels:
                aliases.setdefault(f'{label}:{name}', column)
                aliases.setdefault(f'{label}:#{c}', column)
    broken = np.any([t.broken[r] for t, r in zip(tables, rows, strict=True)], axis=0)
    first = tables[0]
    return LogTable(first.path, header, np.column_stack(blocks), first.where[rows[0]], broken, [],
                    [f for t in tables for f in t.files], 'side by side', aliases, notes)


def _joined_rows(tables: list[LogTable], column_map: ColumnMap) -> tuple[list[np.ndarray], list[str]]:
    """The rows of each file that make one row of the log: all of them where the stamps agree (or some file has no
    time column: then the same number in each), else the rows of the stamps every file holds."""
    times = []
    for table in tables:
        with_names = with_aliases(LogTable(table.path, table.header, table.values[:0], table.where[:0],
                                           table.broken[:0]))
        column = column_map.time_column(table.header, with_names.aliases)
        times.append(None if column is None else table.values[:, table.header.index(column)])
    counts = {t.path.name: t.rows for t in tables}
    if any(t is None for t in times) or all(np.array_equal(t, times[0], equal_nan=True) for t in times):
        if len(set(counts.values())) > 1:
            shown = ', '.join(f'{name} {n}' for name, n in counts.items())
            raise InputError(f'columns of unequal length: the files hold different columns (one log split by signal) '
                             f'but not the same number of rows ({shown})' + (
                                 '' if all(t is None for t in times) else '; with a time column in every file they '
                                 'are joined by their stamps'))
        return [np.arange(t.rows) for t in tables], []
    for table, stamps in zip(tables, times, strict=True):
        finite = _finite(stamps)
        if np.any(np.diff(finite) <= 0):
            raise InputError(f'{table.path.name}: its time column steps back or repeats a stamp: files of one '
                             f'signal each are joined by their stamps, which must increase in each')
    common = _finite(times[0])
    for stamps in times[1:]:
        common = np.intersect1d(common, _finite(stamps))
    names = ', '.join(t.path.name for t in tables)
    if common.size < 2:
        raise InputError(f'{names}: the files hold one signal each but their time columns share '
                         f'{"no stamp" if common.size == 0 else "one stamp"}: they are joined by equal stamps (files '
                         f'of one logger, or its parts resampled onto common stamps)')
    rows = []
    for stamps in times:
        where = np.flatnonzero(np.isfinite(stamps))
        rows.append(where[np.searchsorted(stamps[where], common)])
    left = {t.path.name: t.rows - common.size for t in tables if t.rows > common.size}
    notes = [f'{names} joined by their time stamps: {common.size} stamps in every file; left out: '
             + ', '.join(f'{name} {n} row(s)' for name, n in left.items()) + ' (a stamp another file lacks)'] \
        if left else []
    return rows, notes
