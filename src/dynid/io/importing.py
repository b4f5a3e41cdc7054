"""CSV logs to a contract recording: parse, check, resample, write (``dynid import``).

1. Each CSV is parsed with a column map (:mod:`dynid.io.csv_log`); unreadable lines are left out.
   Several files are the consecutive parts of one log, in the order given.
2. Rows with a repeated or backward stamp, out-of-range values or a position spike are dropped;
   a position step with no return splits the log (:mod:`dynid.io.log_checks`).
3. The rest is interpolated onto a uniform grid; short gaps are bridged, long ones split the
   recording (:mod:`dynid.io.resample`).
4. :func:`import_logs` returns the :class:`~dynid.io.dataset.Dataset` and an :class:`ImportReport`
   of everything dropped and why; ``dynid import`` writes the dataset with
   :func:`dynid.io.bag.write_bag` (a log without joint torque gives joint_states with empty effort
   and its currents on joint_currents) and the report as ``import.yaml`` in the bag directory.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import yaml

from dynid.errors import InputError
from dynid.io.csv_log import ColumnMap, read_csv_log
from dynid.io.dataset import Dataset
from dynid.io.log_checks import LogLimits, check_log
from dynid.io.resample import grid_period, resample

IMPORT_REPORT_FILE = 'import.yaml'
_SHOWN = 5  # line numbers shown per reason


@dataclass
class ImportReport:
    """What an import read, dropped and interpolated (plain values; :meth:`lines` for people)."""

    files: list[dict] = field(default_factory=list)
    dropped: dict[str, dict] = field(default_factory=dict)
    breaks: list[float] = field(default_factory=list)
    resampling: dict = field(default_factory=dict)
    ignored_columns: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def rows_dropped(self) -> int:
        return sum(entry['rows'] for entry in self.dropped.values())

    def lines(self) -> list[str]:
        out = []
        for f in self.files:
            text = f'{f["file"]}: {f["rows"]} rows read'
            if f['unparsable']:
                shown = ', '.join(f'line {n} ({reason})' for n, reason in f['unparsable'][:_SHOWN])
                more = len(f['unparsable']) - _SHOWN
                text += f'; {len(f["unparsable"])} unparsable line(s) left out: {shown}' + (
                    f' and {more} more' if more > 0 else '')
            out.append(text)
        for reason, entry in self.dropped.items():
            where = ', '.join(entry['where'][:_SHOWN]) + (' …' if entry['rows'] > _SHOWN else '')
            out.append(f'dropped {entry["rows"]} row(s): {reason}: {where}')
        if self.breaks:
            out.append(f'split at {len(self.breaks)} position step(s) with no return (t = '
                       + ', '.join(f'{b:.3f}' for b in self.breaks[:_SHOWN]) + ' s)')
        r = self.resampling
        if r:
            out.append(f'resampled {r["stamps"]} stamps (steps {r["step_min_ms"]:.3g}–{r["step_max_ms"]:.3g} ms) onto '
                       f'{r["samples"]} samples at {r["rate_hz"]:.6g} Hz: positions by cubic spline, other signals '
                       f'linearly; {r["bridged_gaps"]} gap(s) of up to {r["bridge"]} missing samples bridged '
                       f'(longest {1e3 * r["longest_bridged_s"]:.3g} ms), {r["segments"]} segment(s)'
                       + (f', {r["dropped_stamps"]} stamps in segments too short to keep' if r['dropped_stamps']
                          else ''))
        if self.ignored_columns:
            out.append(f'not imported: {len(self.ignored_columns)} column(s) of controller targets '
                       f'({", ".join(self.ignored_columns[:3])}, …)')
        out += [f'note: {note}' for note in self.notes]
        return out

    def to_dict(self) -> dict:
        return {'dynid_import': 1, 'files': self.files, 'dropped': self.dropped, 'breaks_s': self.breaks,
                'resampling': self.resampling, 'ignored_columns': self.ignored_columns, 'notes': self.notes}


def import_logs(paths, column_map: ColumnMap, joint_names, limits: LogLimits, rate_hz: float | None = None,
                bridge: int = 3) -> tuple[Dataset, ImportReport, int]:
    """Read, check and resample CSV logs (module docstring).

    Args:
        paths: CSV files, consecutive parts of one log.
        column_map: where the columns are.
        joint_names: the n joints, in the order of the column patterns' indices.
        limits: bounds of the checks.
        rate_hz: grid rate [Hz]; None: read off the stamps (:func:`dynid.io.resample.grid_period`).
        bridge: gaps of up to this many missing samples are interpolated over; longer ones split.

    Returns:
        The dataset (t from 0), the report, and the first grid time [ns] (the bag's start stamp).
    """
    if bridge < 0:
        raise InputError(f'--bridge must be >= 0 samples, got {bridge}')
    if rate_hz is not None and not (np.isfinite(rate_hz) and rate_hz > 0):
        raise InputError(f'--rate must be > 0 Hz, got {rate_hz:g}')
    report = ImportReport()
    logs = [read_csv_log(path, column_map, joint_names) for path in paths]
    for log in logs:
        report.files.append({'file': str(log.path), 'rows': int(log.t.size), 'columns': log.columns,
                             'unparsable': [[int(n), reason] for n, reason in log.unparsable]})
    report.ignored_columns = sorted({name for log in logs for name in log.ignored})
    present = set(logs[0].signals)
    for log in logs[1:]:
        if set(log.signals) != present:
            raise InputError(f'{log.path} has the signals {sorted(log.signals)}, {logs[0].path} has '
                             f'{sorted(present)}: parts of one log must have the same columns')
    t = np.concatenate([log.t for log in logs])
    signals = {name: np.concatenate([log.signals[name] for log in logs]) for name in logs[0].signals}
    where = np.array([f'{log.path.name}:{n}' for log in logs for n in log.lines])
    checked = check_log(t, signals, limits, joint_names)
    report.notes += checked.notes
    for reason, rows in checked.dropped.items():
        report.dropped[reason] = {'rows': int(rows.size), 'where': where[rows].tolist()}
    keep = checked.keep
    if np.count_nonzero(keep) < 2:
        raise InputError(f'{paths[0]}: fewer than 2 rows passed the checks ({"; ".join(report.lines()[-3:])})')
    kept_index = np.cumsum(keep) - 1  # original row → index among the kept rows
    t, signals = t[keep], {name: values[keep] for name, values in signals.items()}
    breaks = kept_index[checked.breaks]
    report.breaks = [float(t[i] - t[0]) for i in breaks]
    period = 1.0 / rate_hz if rate_hz is not None else grid_period(t)
    resampled = resample(t, signals, period, bridge, breaks)
    if resampled.t.size < 2:
        raise InputError(f'{paths[0]}: no segment of at least 4 consecutive rows to resample')
    steps = np.diff(t)
    report.resampling = {
        'stamps': int(t.size), 'samples': int(resampled.t.size), 'rate_hz': float(1.0 / period),
        'period_s': float(period), 'step_min_ms': float(1e3 * steps.min()), 'step_max_ms': float(1e3 * steps.max()),
        'interpolation': {'q': 'cubic spline (not-a-knot) per segment',
                          'dq': 'linear' if 'dq' in signals else 'derivative of the position spline',
                          'other': 'linear'},
        'bridge': int(bridge), 'bridged_gaps': resampled.bridged, 'longest_bridged_s': resampled.longest_bridged_s,
        'segments': len(resampled.segments), 'dropped_stamps': int(resampled.dropped_stamps)}
    start_ns = int(round(resampled.t[0] * 1e9))
    source = {'csv': [str(p) for p in paths], 'import': report.to_dict()}
    values = resampled.signals
    dataset = Dataset(tuple(joint_names), resampled.t - resampled.t[0], values['q'], values['dq'],
                      tau=values.get('tau'), current=values.get('current'), temperature=values.get('temperature'),
                      source=source)
    return dataset, report, start_ns


def write_import_report(bag: Path, report: ImportReport) -> Path:
    """``import.yaml`` in the bag directory."""
    path = Path(bag) / IMPORT_REPORT_FILE
    path.write_text(yaml.safe_dump(report.to_dict(), sort_keys=False, allow_unicode=True))
    return path
