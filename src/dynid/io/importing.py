"""Logs to a contract recording: read, check, re-time, resample, write (``dynid import``).

1. The log is read: text or ``.npz`` files with a column map (:mod:`dynid.io.csv_log`,
   :mod:`dynid.io.log_tables`; several files are consecutive parts, or one signal per file:
   :mod:`dynid.io.log_files` says when each, and refuses a file set it cannot tell apart), or a
   rosbag2 recording (MCAP or sqlite3) of the contract topics (:func:`dynid.io.bag.read_bag`).
   Unreadable lines are left out. A log without a time column takes its rows at the given rate. Motor-side
   columns become joint signals through the drives (:mod:`dynid.io.motor_side`). ``start_s``/``end_s`` cut the
   log: the rows before and after are left out, counted from its first row.
2. Rows with a stamp not after the previous one, rows that repeat the state before them, and rows
   with out-of-range values are dropped (:func:`dynid.io.log_checks.check_rows`).
3. The distinct states are re-timed onto the robot's control grid where it is evident, or kept at
   their stamps (:mod:`dynid.io.retiming`, whose docstring says how this is decided); a republished
   log is brought back to the rate of its distinct states.
4. Position spikes are dropped and a step with no return splits the log, judged on the re-timed
   times (:func:`dynid.io.log_checks.check_jumps`).
5. The rest is interpolated onto a uniform grid; short gaps are bridged, long ones split the
   recording (:mod:`dynid.io.resample`). Samples re-timed onto their ticks lie on that grid.
6. The bag's stamps start at the first sample's time (a wall clock's, or the log's own clock). A log
   whose clock starts at 0 may have its first tick a fraction of a period before 0 once re-timed
   (the grid goes through the earliest stamps, after their ticks), and a log may count its time from
   a negative value: rosbag2 stamps cannot lie before 0, so such a recording starts at 0 instead,
   every stamp shifted by the same amount (``timing.start_shift_s``, and a note).
7. :func:`import_logs` (or :func:`import_bag`) returns the :class:`~dynid.io.dataset.Dataset` and an
   :class:`ImportReport` of every row dropped or re-timed and why; ``dynid import`` writes the dataset
   with :func:`dynid.io.bag.write_bag` and the report as ``import.yaml`` in the bag directory.
"""

from __future__ import annotations

import math
import shlex
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import yaml

from dynid.errors import InputError, checked_choice
from dynid.files import write_text
from dynid.io import STORAGES
from dynid.io.csv_log import ColumnMap, apply_column_map, read_at
from dynid.io.dataset import REFERENCE_KEYS, Dataset, Reference
from dynid.io.log_checks import (
    REPEATED_STATE,
    TIME_FACTOR,
    TIME_MOVING_RAD,
    LogLimits,
    check_jumps,
    check_rows,
    velocity_time_ratio,
)
from dynid.io.log_files import FileSetError, join_logs
from dynid.io.log_tables import read_table
from dynid.io.motor_side import motor_side_notes, motor_side_signals
from dynid.io.resample import grid_period, resample
from dynid.io.retiming import Retiming, retime
from dynid.model.drives import JointDrives, load_drives
from dynid.settings import setting

IMPORT_REPORT_FILE = 'import.yaml'
TIMINGS = ('auto', 'stamps')
_SHOWN = 5  # line numbers shown per reason
#: The shortest sample period imported [s]: 100 kHz, ten times the fastest joint control loops.
MIN_PERIOD_S = 1e-5


@dataclass(frozen=True)
class ImportSettings:
    """How ``dynid import`` turns a log into a recording (module docstring); the one source of its defaults."""

    rate_hz: float | None = setting(None, "the robot's control rate: the rate of the rows of a log without a time "
                                          'column; for a log with stamps, the grid they are re-timed or resampled '
                                          'onto (default: from the stamps)', unit='Hz', low=0.0, high=math.inf)
    bridge: int = setting(3, 'gaps of up to this many missing samples are interpolated over; longer ones stay gaps',
                          unit='samples', low=0, high=1000)
    timing: str = setting('auto', 'auto: re-time the samples onto the control grid where the stamps show one (stamps '
                                  'within 0.8 of a period after their ticks); stamps: keep the stamps and interpolate',
                          choices=TIMINGS)
    current_limit_a: float | None = setting(None, 'drop rows with |current| above this (default: 3 × effort limit / '
                                                  'drive gain)', unit='A', low=0.0, high=math.inf)
    drives: str | None = setting(None, 'drives file (gear ratios, motor offsets, coupling, drive gains) that turns '
                                       'motor-side columns (motor_q, motor_dq, motor_torque) into joint positions, '
                                       "velocities and torques (default: the robot's drive data)")
    start_s: float = setting(0.0, 'leave out the rows before this time, counted from the log\'s first row',
                             unit='s', low=0.0, high=math.inf)
    end_s: float | None = setting(None, 'leave out the rows after this time, counted from the log\'s first row '
                                        '(default: to its end)', unit='s', low=0.0, high=math.inf)
    storage: str = setting('mcap', 'storage of the written bag (sqlite3 writes a .db3 bag)', choices=STORAGES)
    joint_states_effort: str = setting('torque', "for a bag: what joint_states' effort holds (current for the UR "
                                                 'driver)', choices=('torque', 'current'))

    def validated(self) -> ImportSettings:
        """The settings, checked (InputError naming the field)."""
        if self.rate_hz is not None and not (np.isfinite(self.rate_hz) and self.rate_hz > 0):
            raise InputError(f'rate must be > 0 Hz, got {self.rate_hz:g}')
        if self.bridge < 0:
            raise InputError(f'bridge must be >= 0 samples, got {self.bridge}')
        if self.current_limit_a is not None and not self.current_limit_a > 0:
            raise InputError(f'current limit must be > 0 A, got {self.current_limit_a:g}')
        checked_choice('timing', self.timing, TIMINGS)
        if not (np.isfinite(self.start_s) and self.start_s >= 0):
            raise InputError(f'{{start}} must be >= 0 s, got {self.start_s:g}', fields=('start',))
        if self.end_s is not None and not (np.isfinite(self.end_s) and self.end_s > self.start_s):
            raise InputError(f'{{end}} must be after {{start}} ({self.start_s:g} s), got {self.end_s:g} s',
                             fields=('end', 'start'))
        if self.drives is not None and not Path(self.drives).is_file():
            raise InputError(f'{{drives}}: no drives file {self.drives}', fields=('drives',))
        return self


class TimeBaseError(InputError):
    """Rows whose stamps disagree with their motion by more than ``TIME_FACTOR`` (:mod:`dynid.io.log_checks`):
    ``ratio`` r of Δq/Δt to the logged q̇, ``period_s`` the stamps' median step; the motion's is r·period_s."""

    def __init__(self, name: str, ratio: float, period_s: float):
        implied = ratio * period_s
        super().__init__(f'{name}: its rows lie {period_s:.4g} s apart by its time, {implied:.4g} s '
                         f'({1.0 / implied:.4g} Hz) by its motion: the positions change {ratio:.3g}× as fast over the '
                         f'time as the logged velocity says (Δq/Δt against q̇ over all joints)')
        self.ratio, self.period_s = ratio, period_s


def nice_period(seconds: float) -> float:
    """``seconds`` [s] rounded to the nearest {1, 1.25, 2, 2.5, 4, 5, 8}·10^k where one lies within 10 % (the periods
    of the usual control rates: 1 kHz, 125 Hz, 8 kHz …), else to two significant digits."""
    exponent = math.floor(math.log10(seconds))
    candidates = [m * 10.0 ** e for e in (exponent, exponent + 1) for m in (1, 1.25, 2, 2.5, 4, 5, 8)]
    best = min(candidates, key=lambda c: abs(math.log(c / seconds)))
    return best if abs(best / seconds - 1.0) <= 0.1 else float(f'{seconds:.2g}')


@dataclass
class ImportReport:
    """What an import read, dropped, re-timed and interpolated (plain values; :meth:`lines` for people)."""

    files: list[dict] = field(default_factory=list)
    dropped: dict[str, dict] = field(default_factory=dict)
    breaks: list[float] = field(default_factory=list)
    cut: dict = field(default_factory=dict)
    timing: dict = field(default_factory=dict)
    resampling: dict = field(default_factory=dict)
    ignored_columns: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    reference: str | None = None

    @property
    def rows_dropped(self) -> int:
        return sum(entry['rows'] for entry in self.dropped.values())

    def lines(self) -> list[str]:
        out = []
        for f in self.files:
            text = f'{f["file"]}: {f["rows"]} rows read'
            if f.get('unparsable'):
                shown = ', '.join(f'line {n} ({reason})' for n, reason in f['unparsable'][:_SHOWN])
                more = len(f['unparsable']) - _SHOWN
                text += f'; {len(f["unparsable"])} unparsable line(s) left out: {shown}' + (
                    f' and {more} more' if more > 0 else '')
            out.append(text)
        if self.cut:
            c = self.cut
            out.append(f'cut to {c["start_s"]:g}–' + ('the end' if c['end_s'] is None else f'{c["end_s"]:g} s')
                       + f' of the log (from its first row): {c["rows_before"]} row(s) before and {c["rows_after"]} '
                         f'after left out')
        for reason, entry in self.dropped.items():
            where = ', '.join(entry['where'][:_SHOWN]) + (' …' if entry['rows'] > _SHOWN else '')
            out.append(f'dropped {entry["rows"]} row(s): {reason}: {where}')
        timing = self.timing
        if timing.get('republished'):
            r = timing['republished']
            rate = f'{r["state_rate_hz"]:.4g} Hz'
            out.append(f'republished log: the rows come at {r["rows_rate_hz"]:.4g} Hz, their states change at {rate} '
                       f'({r["factor"]:.3g}× slower): imported at {rate}')
        missing = f'{timing.get("missing_ticks")} tick(s) without a sample (repeated states, lost samples)'
        if timing.get('method') == 'control grid' and timing['rows_retimed']:
            out.append(f're-timed {timing["rows_retimed"]} of {timing["rows"]} rows onto the ticks of a '
                       f'{timing["rate_hz"]:.6g} Hz control grid (stamps {timing["shift_ms"][0]:.3g}–'
                       f'{timing["shift_ms"][1]:.3g} ms after their ticks); {missing}')
        elif timing.get('method') == 'control grid':
            out.append(f'the {timing["rows"]} rows lie on the ticks of a {timing["rate_hz"]:.6g} Hz control grid '
                       f'({timing.get("time")}): none re-timed; {missing}')
        elif timing.get('reason'):
            out.append(f'timing: {timing["reason"]}')
        if self.breaks:  # what happens to them, not a warning: a one-sample gap identification bridges
            out.append(f'{len(self.breaks)} position step(s) with no return (t = '
                       + ', '.join(f'{b:.3f}' for b in self.breaks[:_SHOWN]) + (' …' if len(self.breaks) > _SHOWN
                                                                                   else '')
                       + ' s): a sample left out before each, so the recording holds a gap there; dynid identify and '
                         'validate interpolate over a gap that short (a longer one splits the recording)')
        r = self.resampling
        if r:
            out.append(f'resampled {r["stamps"]} samples (steps {r["step_min_ms"]:.3g}–{r["step_max_ms"]:.3g} ms) '
                       f'onto {r["samples"]} samples at {r["rate_hz"]:.6g} Hz: positions by cubic spline, other '
                       f'signals linearly; {r["bridged_gaps"]} gap(s) of up to {r["bridge"]} missing samples bridged '
                       f'(longest {1e3 * r["longest_bridged_s"]:.3g} ms), {r["segments"]} segment(s)'
                       + (f', {r["dropped_stamps"]} samples in segments too short to keep' if r['dropped_stamps']
                          else ''))
        out.append(f'reference: {self.reference}' if self.reference else
                   "reference: none in the log (no controller's q_r and q̇_r)")
        if self.ignored_columns:
            out.append(f'not imported: {len(self.ignored_columns)} column(s) of controller targets '
                       f'({", ".join(self.ignored_columns[:3])}, …)')
        out += [f'note: {note}' for note in self.notes]
        return out

    def to_dict(self) -> dict:
        return {'dynid_import': 1, 'files': self.files, 'cut': self.cut, 'dropped': self.dropped,
                'breaks_s': self.breaks, 'timing': self.timing, 'resampling': self.resampling,
                'ignored_columns': self.ignored_columns, 'reference': self.reference, 'notes': self.notes}


def import_logs(paths, column_map: ColumnMap, joint_names, limits: LogLimits,
                settings: ImportSettings | None = None,
                drives: JointDrives | None = None) -> tuple[Dataset, ImportReport, int]:
    """Read, check, re-time and resample a log of text or ``.npz`` files (module docstring).

    Args:
        paths: the log's files: consecutive parts (the same columns) or one file per signal.
        column_map: where the columns are.
        joint_names: the n joints, in the order of the column patterns' indices.
        limits: bounds of the checks.
        settings: rate, bridging and timing (:class:`ImportSettings`).
        drives: the robot's drive data, for motor-side columns where ``settings.drives`` names no drives file.

    Returns:
        The dataset (t from 0), the report, and the first grid time [ns] (the bag's start stamp).
    """
    settings = (settings or ImportSettings()).validated()
    report = ImportReport()
    tables = [read_table(path) for path in paths]
    for table in tables:
        report.files.append({'file': str(table.path), 'rows': int(table.rows), 'columns': None,
                             'unparsable': [[int(n), reason] for n, reason in table.unparsable]})
    joined = join_logs(tables, column_map, joint_names)
    report.notes += joined.notes
    log = apply_column_map(joined, column_map, joint_names)
    for entry in report.files:
        entry['columns'] = log.columns
        entry['layout'] = log.layout
    _add_unparsable(report, log.unparsable)
    report.ignored_columns = sorted(log.ignored)
    t = log.t
    if t is None:
        if settings.rate_hz is None:
            raise InputError(f'{paths[0]}: the log has no time column: give the rate of its rows ({{rate}})',
                             fields=('rate',))
        t = np.arange(log.where.size) / settings.rate_hz
        report.timing['time'] = f'no time column: rows at the given {settings.rate_hz:g} Hz'
    else:
        report.timing['time'] = f'column {log.columns["time"]}'
    source = {'csv': [str(p) for p in paths]}
    report.reference = _reference_columns(log.columns)
    if settings.drives is not None:
        drives = load_drives(settings.drives, joint_names)
    signals = motor_side_signals(log.signals, drives, paths[0])
    by = f'the drives file {settings.drives}' if settings.drives else "the robot's drive data"
    report.notes += motor_side_notes(log.signals, drives, by)
    t, signals, where = _cut(t, signals, log.where, settings, report, str(paths[0]))
    try:
        dataset, report, start_ns = _import_rows(t, signals, where, joint_names, limits, settings, report,
                                                 str(paths[0]), source)
    except TimeBaseError as error:
        raise _time_base_fix(error, column_map, joined.header, joint_names, settings) from None
    return dataset, report, _start_stamp(start_ns, report)


def _time_base_fix(error: TimeBaseError, column_map: ColumnMap, header, joint_names,
                   settings: ImportSettings) -> InputError:
    """The refusal of a log whose time disagrees with its motion, with the reading that makes them agree: the rate
    the motion implies for rows without a time column, else the time column in the unit it implies."""
    if not column_map.time:
        rate = 1.0 / nice_period(error.ratio / settings.rate_hz)
        return InputError(f'{error}: give the rate of its rows, {{rate}} {rate:g} (the robot\'s control rate)',
                          fields=('rate',))
    unit = nice_period(error.ratio * column_map.time_unit_s)
    return FileSetError(f'{error}; a time column that counts samples, or in another unit, reads right at {unit:g} s '
                        f'per count',
                        read_at(column_map, header, joint_names, unit).spec())


def import_bag(path, joint_names, limits: LogLimits, settings: ImportSettings | None = None,
               joint_states_effort: str = 'torque') -> tuple[Dataset, ImportReport, int]:
    """Read a rosbag2 recording (MCAP or sqlite3; :func:`dynid.io.bag.read_bag`) and check, re-time and resample
    it like a log (module docstring): a driver's joint_states on its own clock becomes a contract recording."""
    from dynid.io.bag import read_bag

    settings = (settings or ImportSettings()).validated()
    report = ImportReport()
    dataset = read_bag(path, joint_names, namespace=None, joint_states_effort=joint_states_effort)
    name = Path(path).name
    duplicates = int(dataset.source.get('duplicate_stamps', 0))
    report.files.append({'file': str(path), 'rows': int(dataset.n_samples + duplicates),
                         'topics': dataset.source.get('topics', []), 'unparsable': []})
    if duplicates:
        report.dropped['stamp not after the previous one (messages with an earlier message\'s stamp)'] = {
            'rows': duplicates, 'where': []}
    for key, count in (dataset.source.get('skipped') or {}).items():
        report.notes.append(f'{count} message(s) skipped by the bag reader ({key.replace("_", " ")})')
    if dataset.source.get('dropped_unmatched'):
        report.notes.append(f'{dataset.source["dropped_unmatched"]} joint_states sample(s) without matching '
                            f'motor_states/joint_currents stamps left out')
    report.timing['time'] = 'joint_states header stamps'
    signals = {key: value for key, value in dataset.signals().items()}
    if dataset.reference is not None:
        signals.update(dataset.reference.keyed())
        report.reference = dataset.reference.source
    elif dataset.source.get('reference_unread'):
        report.notes.append(f'the controller\'s reference not read: {dataset.source["reference_unread"]}')
    where = np.array([f'{name}:{i}' for i in range(dataset.n_samples)], dtype=object)
    start_s = dataset.source.get('start_ns', 0) / 1e9
    t, signals, where = _cut(dataset.t, signals, where, settings, report, str(path))
    data, report, start_ns = _import_rows(t, signals, where, joint_names, limits, settings, report,
                                          str(path), {'bag': str(path)})
    return data, report, _start_stamp(start_ns + int(round(start_s * 1e9)), report)


def _cut(t: np.ndarray, signals: dict[str, np.ndarray], where: np.ndarray, settings: ImportSettings,
         report: ImportReport, name: str) -> tuple[np.ndarray, dict[str, np.ndarray], np.ndarray]:
    """The rows between ``start_s`` and ``end_s`` after the log's first row (all of them when neither is set)."""
    if settings.start_s == 0 and settings.end_s is None:
        return t, signals, where
    since = t - t[0]
    keep = (since >= settings.start_s - 1e-9) & (since <= (math.inf if settings.end_s is None else
                                                          settings.end_s + 1e-9))
    if np.count_nonzero(keep) < 2:
        raise InputError(f'{name}: {{start}} and {{end}} leave fewer than 2 rows (the log spans 0–'
                         f'{np.nanmax(since):.6g} s from its first row)', fields=('start', 'end'))
    before = int(np.count_nonzero(since < settings.start_s - 1e-9))
    end = None if settings.end_s is None else float(settings.end_s)
    report.cut = {'start_s': float(settings.start_s), 'end_s': end, 'rows_before': before,
                  'rows_after': int(np.count_nonzero(~keep)) - before}
    return t[keep], {key: values[keep] for key, values in signals.items()}, where[keep]


def _start_stamp(start_ns: int, report: ImportReport) -> int:
    """The bag's first stamp [ns]: the first sample's time, or 0 where that lies before 0 (module docstring)."""
    if start_ns >= 0:
        return start_ns
    report.timing['start_shift_s'] = float(-start_ns / 1e9)
    report.notes.append(f'the first sample lies at {start_ns / 1e9:.6g} s, before 0, where a rosbag2 stamp cannot '
                        f'lie: every stamp moved {-start_ns / 1e9:.6g} s later (spacing unchanged)')
    return 0


def _add_unparsable(report: ImportReport, unparsable: list[tuple[str, str]]) -> None:
    """Rows named ``file:line`` added to their file's unparsable lines, each file's in line order."""
    by_name = {Path(entry['file']).name: entry for entry in report.files}
    for where, reason in unparsable:
        file, _, line = where.rpartition(':')
        by_name.get(file, report.files[0])['unparsable'].append([int(line), reason])
    for entry in report.files:
        entry['unparsable'].sort(key=lambda item: item[0])


def _import_rows(t: np.ndarray, signals: dict[str, np.ndarray], where: np.ndarray, joint_names, limits: LogLimits,
                 settings: ImportSettings, report: ImportReport, name: str, source: dict
                 ) -> tuple[Dataset, ImportReport, int]:
    """Steps 2–5 of the module docstring on rows at stamps ``t`` [s] (N,), signals (N, n) by name."""
    checked = check_rows(t, signals, limits, joint_names)
    report.notes += checked.notes
    for reason, rows in checked.dropped.items():
        report.dropped[reason] = {'rows': int(rows.size), 'where': where[rows].tolist()}
    keep = checked.keep
    timed = t > np.maximum.accumulate(np.concatenate([[-np.inf], t[:-1]]))  # rows whose stamps passed
    repeats = checked.dropped.get(REPEATED_STATE, np.zeros(0, dtype=int)).size
    if np.count_nonzero(keep) < 2:
        if repeats and repeats >= np.count_nonzero(timed) - 1:
            raise InputError(f'{name}: all {np.count_nonzero(timed)} rows repeat the first state (every joint signal '
                             f'equal): nothing moves in this log')
        raise InputError(f'{name}: fewer than 2 rows passed the checks ({"; ".join(report.lines()[-3:])})')
    rows_period = float(np.median(np.diff(t[timed]))) if np.count_nonzero(timed) > 1 else None
    t, signals, where = t[keep], {key: values[keep] for key, values in signals.items()}, where[keep]
    ratio = abs(velocity_time_ratio(t, signals['q'], signals.get('dq'), TIME_MOVING_RAD))  # a velocity's sign aside
    if ratio > 0 and not 1.0 / TIME_FACTOR <= ratio <= TIME_FACTOR:
        raise TimeBaseError(name, ratio, float(np.median(np.diff(t))))
    timing = _timing(t, settings, rows_period, repeats / max(1, np.count_nonzero(timed)))
    report.timing.update(_timing_report(timing, t.size, settings))
    times = timing.times
    jumps = check_jumps(times, signals['q'], signals.get('dq'), limits, joint_names)
    report.notes += jumps.notes
    for reason, rows in jumps.dropped.items():
        report.dropped[reason] = {'rows': int(rows.size), 'where': where[rows].tolist()}
    kept_index = np.cumsum(jumps.keep) - 1  # row → index among the rows kept
    times = times[jumps.keep]
    signals = {key: values[jumps.keep] for key, values in signals.items()}
    breaks = kept_index[jumps.breaks]
    report.breaks = [float(times[i] - times[0]) for i in breaks]
    if timing.on_grid or timing.republished:
        period = timing.period_s
    else:  # kept at their stamps: the grid at the given rate, or at the logged one
        period = 1.0 / settings.rate_hz if settings.rate_hz is not None else grid_period(times)
    if not period >= MIN_PERIOD_S:
        raise InputError(f'{name}: the samples come {period:.3g} s apart ({1.0 / period:.3g} Hz): no robot logs that '
                         f'fast; is the time column in another unit (time_unit=ms|us|ns) or {{rate}} wrong?',
                         fields=('rate',))
    resampled = resample(times, signals, period, settings.bridge, breaks)
    if resampled.t.size < 2:
        raise InputError(f'{name}: no segment of at least 4 consecutive rows to resample')
    steps = np.diff(times)
    report.resampling = {
        'stamps': int(times.size), 'samples': int(resampled.t.size), 'rate_hz': float(1.0 / period),
        'period_s': float(period), 'step_min_ms': float(1e3 * steps.min()), 'step_max_ms': float(1e3 * steps.max()),
        'interpolation': {'q': 'cubic spline (not-a-knot) per segment',
                          'dq': 'linear' if 'dq' in signals else 'derivative of the position spline',
                          'other': 'linear'},
        'bridge': int(settings.bridge), 'bridged_gaps': resampled.bridged,
        'longest_bridged_s': resampled.longest_bridged_s, 'segments': len(resampled.segments),
        'dropped_stamps': int(resampled.dropped_stamps)}
    start_ns = int(round(resampled.t[0] * 1e9))
    values = resampled.signals
    reference = Reference.of_keys(values, report.reference or '')
    report.reference = None if reference is None else reference.describe()
    if reference is not None and reference.current is not None:
        report.notes.append('the commanded current is not written to the bag (a JointTrajectory point has no '
                            'current): the dataset has it, the bag the rest of the reference')
    source = {**source, 'import': report.to_dict()}
    dataset = Dataset(tuple(joint_names), resampled.t - resampled.t[0], values['q'], values['dq'],
                      tau=values.get('tau'), current=values.get('current'), theta=values.get('theta'),
                      dtheta=values.get('dtheta'), temperature=values.get('temperature'), reference=reference,
                      source=source)
    return dataset, report, start_ns


def _reference_columns(columns: dict) -> str | None:
    """Where a log's reference is (its first joint's columns, e.g. 'columns target_q_0, target_qd_0, … of each
    joint'), or None where its column map found none."""
    found = [columns[key][0] for key in REFERENCE_KEYS if columns.get(key)]
    return f'columns {", ".join(found)}, … of each joint' if found else None


def _timing(t: np.ndarray, settings: ImportSettings, rows_period: float | None, repeated_share: float) -> Retiming:
    if settings.timing == 'auto':
        return retime(t, settings.rate_hz, rows_period, repeated_share)
    period = 1.0 / settings.rate_hz if settings.rate_hz is not None else grid_period(t)
    return Retiming(t.copy(), period, False, None, np.zeros(t.size), 0, None, 'stamps kept (timing: stamps)')


def _timing_report(timing: Retiming, rows: int, settings: ImportSettings) -> dict:
    """import.yaml's ``timing``: how the rows were placed in time, and every re-timed row counted."""
    shift_ms = 1e3 * timing.shift_s
    return {'method': 'control grid' if timing.on_grid else 'stamps', 'rows': int(rows),
            'rate_hz': float(1.0 / timing.period_s),
            'rate_from': 'given' if settings.rate_hz is not None and not timing.republished else 'stamps',
            'rows_retimed': timing.retimed_rows,
            'shift_ms': [float(shift_ms.min()), float(shift_ms.max())] if rows else [0.0, 0.0],
            'lag_window_ms': None if timing.window_s is None else float(1e3 * timing.window_s),
            'missing_ticks': int(timing.missing_ticks), 'republished': timing.republished, 'reason': timing.reason}


def import_command(bag, robot, joint_states_effort: str | None = None) -> str:
    """``dynid import BAG --robot ROBOT -o BAG_uniform`` as it works for the recording ``bag`` of ``robot`` (a
    :class:`dynid.model.RobotModel`: its URDF file where it came from one, else its built-in name), for refusals
    of recordings whose samples are not on a uniform grid."""
    bag = str(bag).rstrip('/') or 'BAG'
    source = robot.source or ''
    name = source if source.endswith('.urdf') and Path(source).is_file() else robot.name
    effort = ' --joint-states-effort current' if joint_states_effort == 'current' else ''
    stem = bag[:-len(Path(bag).suffix)] if Path(bag).suffix.lower() in ('.mcap', '.db3') else bag
    return (f'dynid import {shlex.quote(bag)} --robot {shlex.quote(name)}{effort} -o '
            f'{shlex.quote(stem + "_uniform")}')


def write_import_report(bag: Path, report: ImportReport) -> Path:
    """``import.yaml`` in the bag directory."""
    return write_text(Path(bag) / IMPORT_REPORT_FILE, yaml.safe_dump(report.to_dict(), sort_keys=False,
                                                                     allow_unicode=True))
