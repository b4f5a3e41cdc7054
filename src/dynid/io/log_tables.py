"""Log files as tables of named numeric columns (``dynid import``), before any column map is applied.

What is read:

- **Text with a header line** (CSV, TSV, semicolon- or whitespace-separated): the header names the
  columns. The delimiter is found from the header line (comma, tab, semicolon, else whitespace);
  fields are stripped of surrounding spaces; blank lines and lines starting with ``#`` are skipped.
- **Text without a header** (the first line is all numbers, as ``numpy.savetxt`` writes it): the
  columns are named after the file, ``<stem>_0``, ``<stem>_1``, … (``positions.txt`` gives
  ``positions_0`` …).
- **NumPy ``.npz``**: each array is a column or a block of them: a 1-D array ``t`` is the column
  ``t``, a 2-D array ``q`` of shape (N, n) the columns ``q_0`` … ``q_{n-1}``. All arrays must have
  the same length N. A ``.npy`` file holds one such array, named after the file.

Every data line stays a row, so that files joined side by side keep their rows aligned: a line with
a field count other than the header's is a row of NaN, recorded in :attr:`LogTable.unparsable` with
its reason; a field that is not a number is NaN (reported later, by the column that uses it).

:func:`dynid.io.log_files.join_logs` makes one table of several files: consecutive parts of one log, or
one log split by file (one signal per file, its columns side by side).
"""

from __future__ import annotations

import os
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from dynid.errors import InputError

ARRAY_SUFFIXES = ('.npz', '.npy')


@dataclass
class LogTable:
    """Named columns of one log (module docstring).

    Attributes:
        path: the (first) file.
        header: column names.
        values: (N, C) numbers, NaN where a field is not a number or its line could not be split.
        where: (N,) where each row is, for people: ``file:line`` (text, lines from 1) or ``file:row``
            (arrays, rows from 0); rows joined side by side are named by the first file.
        broken: (N,) rows from lines that could not be split into the header's fields (all NaN).
        unparsable: (line, reason) of those lines, of this file (empty for a joined table).
        files: every file read, in order.
        layout: 'one file', 'consecutive parts' or 'side by side' (:func:`dynid.io.log_files.join_logs`).
        aliases: other names of columns → their name in ``header``: ``FILE:COLUMN`` and ``FILE:#K`` (FILE the
            file's name or stem, #K its column at position K from 0), so that a column map can name a file's column.
        notes: what joining the files did to the rows, for the import's report.
    """

    path: Path
    header: list[str]
    values: np.ndarray
    where: np.ndarray
    broken: np.ndarray
    unparsable: list[tuple[int, str]] = field(default_factory=list)
    files: list[Path] = field(default_factory=list)
    layout: str = 'one file'
    aliases: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    @property
    def rows(self) -> int:
        return self.values.shape[0]


def _delimiter(header: str) -> str | None:
    for candidate in (',', '\t', ';'):
        if candidate in header:
            return candidate
    return None  # whitespace


def _numbers(tokens: np.ndarray) -> np.ndarray:
    """Floats of string tokens; NaN where a token is not a number."""
    try:
        return np.asarray(tokens, dtype=float)
    except ValueError:
        values = np.empty(tokens.shape)
        for index, token in np.ndenumerate(tokens):
            try:
                values[index] = float(token)
            except ValueError:
                values[index] = np.nan
        return values


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _check_file(path: Path) -> None:
    if not path.is_file():
        raise InputError(f'log {path} does not exist' if not path.exists() else f'{path} is not a file')


def read_text_table(path: str | os.PathLike) -> LogTable:
    """A text log, with or without a header line (module docstring)."""
    path = Path(path)
    _check_file(path)
    try:
        text = path.read_text(encoding='utf-8')
    except UnicodeDecodeError:
        raise InputError(f'{path} is not a text (CSV) file') from None
    except OSError as error:
        raise InputError(f'cannot read {path}: {error.strerror}') from None
    numbered = [(k + 1, line) for k, line in enumerate(text.splitlines())
                if line.strip() and not line.lstrip().startswith('#')]
    if not numbered:
        raise InputError(f'{path} is empty: no header line')
    first = numbered[0][1]
    delimiter = _delimiter(first)
    fields = [name.strip() for name in first.split(delimiter)]
    if all(_is_number(f) for f in fields):  # no header: columns named after the file
        header, data = [f'{path.stem}_{i}' for i in range(len(fields))], numbered
    else:
        header, data = fields, numbered[1:]
    unparsable: list[tuple[int, str]] = []
    rows, broken = [], np.zeros(len(data), dtype=bool)
    nan_row = ['nan'] * len(header)
    for k, (number, line) in enumerate(data):
        split = [f.strip() for f in line.split(delimiter)]
        if len(split) != len(header):
            unparsable.append((number, f'{len(split)} fields, the header has {len(header)}'))
            split, broken[k] = nan_row, True
        rows.append(split)
    values = _numbers(np.array(rows, dtype=str)) if rows else np.empty((0, len(header)))
    where = np.array([f'{path.name}:{number}' for number, _ in data], dtype=object)
    return LogTable(path, header, values.reshape(len(rows), len(header)), where, broken, unparsable, [path])


def read_array_table(path: str | os.PathLike) -> LogTable:
    """A ``.npz`` (or ``.npy``) log (module docstring)."""
    path = Path(path)
    _check_file(path)
    try:
        if path.suffix.lower() == '.npy':
            arrays = {path.stem: np.load(path, allow_pickle=False)}
        else:
            with np.load(path, allow_pickle=False) as archive:
                arrays = {name: archive[name] for name in archive.files}
    except (ValueError, OSError, zipfile.BadZipFile) as error:
        raise InputError(f'cannot read {path} as a NumPy file: {" ".join(str(error).split())}') from None
    if not arrays:
        raise InputError(f'{path} holds no arrays')
    header, columns, lengths = [], [], {}
    for name, array in arrays.items():
        if array.ndim not in (1, 2) or not np.issubdtype(array.dtype, np.number):
            raise InputError(f'{path}: array {name!r} of shape {array.shape} and type {array.dtype} is not a '
                             f'column or a block of columns of numbers (1-D or 2-D)')
        lengths[name] = array.shape[0]
        block = array.reshape(array.shape[0], -1).astype(float)
        header += [name] if array.ndim == 1 else [f'{name}_{i}' for i in range(block.shape[1])]
        columns.append(block)
    if len(set(lengths.values())) > 1:
        shown = ', '.join(f'{name} {n}' for name, n in lengths.items())
        raise InputError(f'{path}: columns of unequal length ({shown} rows)')
    values = np.hstack(columns)
    where = np.array([f'{path.name}:{i}' for i in range(values.shape[0])], dtype=object)
    return LogTable(path, header, values, where, np.zeros(values.shape[0], dtype=bool), [], [path])


def read_table(path: str | os.PathLike) -> LogTable:
    """A log file as a table: ``.npz``/``.npy`` arrays, else text (module docstring)."""
    path = Path(path)
    return read_array_table(path) if path.suffix.lower() in ARRAY_SUFFIXES else read_text_table(path)
