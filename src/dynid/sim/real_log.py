""""Real-log" recordings of the twin: what a lab's logger writes, with known truth.

From a twin run at a fine rate (``dynid simulate --rate``, default 1 kHz) the logger keeps samples at
jittery stamps, as a client polling a controller does (UR's RTDE client at ~100 Hz):

- steps of the nominal period times 1 + U(−jitter, +jitter), on the twin's own sample grid (so a
  stamp is the true time of its sample: at 1 kHz stamps have 1 ms resolution, as the controller's
  clock has);
- now and then (``gap_rate_hz`` per second on average) one step of ``gap_periods`` periods: a lost
  sample or two;
- positions rounded to ``position_rounding_rad`` (a logger printing 4 decimals);
- ``glitches`` rows of each kind: a position jump (one joint 0.5 rad off for one row), an absurd
  current (250 A; for a torque log an absurd joint torque of 5000 N·m), and, in the CSV only, a
  garbage line (alternately a truncated row and a line of text).

With ``stamps='logger'`` the logger writes every control tick instead, on its own clock, as a ROS
subscriber or a logging thread beside a 1 kHz controller does (:mod:`dynid.io.retiming` undoes it):

- the log's rate is the control rate (``rate_hz``, the twin's ``--rate`` a whole multiple of it);
  each row is stamped by the logger U(0, jitter) periods after the tick of its sample, so that steps
  are (1 ± jitter) periods;
- ``repeats``: that share of the rows repeats the state of the row before (every signal equal: the
  logger read a sample that was not yet replaced); the tick it stood for is never logged, so the
  next row catches up with a double step;
- ``gap_rate_hz`` stalls per second on average, each of 2 … ``gap_periods`` ticks (uniformly), the
  ticks within a stall lost: steps of up to ``gap_periods`` + jitter periods;
- stamps written with microseconds and values with 9 significant digits (the controller-stamped
  log keeps its 4 decimals of seconds and 6 digits).

``time_column`` False leaves the time column out of the CSV (as KUKA FRI logs and NumPy exports
often do; ``dynid import --rate`` takes such rows at the control rate). The bag beside it holds the
same rows at their stamps, repeated states included: what a ``/joint_states`` recording of a driver
on its own clock holds.

The CSV goes beside the bag as ``log.csv``, in the column names of UR's RTDE client
(``ur_rtde``: timestamp, actual_q_*, actual_qd_*, actual_current_*, target_current_*,
target_moment_*, joint_temperatures_*; space-separated as that client writes) or of libfranka's CSV
log (``franka``: time [ms], success_rate, state.q[*], state.dq[*], state.tau_J[*], cmd.tau_J_d[*];
comma-separated). target_moment and cmd.tau_J_d are the controller's model torque, target_current
that over the drive gain. Stamps start at ``time_offset_s`` (controller time, not 0). A ``ur_rtde``
log has no joint torque (current-only), a ``franka`` log no current.
"""

from __future__ import annotations

import io
from dataclasses import asdict, dataclass, field

import numpy as np

from dynid.errors import InputError
from dynid.io.dataset import Dataset
from dynid.sim.settings import RealLogSettings

CSV_FILE = 'log.csv'
POSITION_JUMP_RAD = 0.5
ABSURD_CURRENT_A = 250.0
ABSURD_TORQUE_NM = 5000.0


@dataclass
class RealLog:
    """The logged samples as a dataset (stamps from 0; ``start_ns`` the first one), the CSV text and the
    glitches made (kind, row of the dataset or None, CSV line, time [s], joint, value)."""

    dataset: Dataset
    start_ns: int
    csv_text: str
    glitches: list[dict] = field(default_factory=list)
    rows: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=int))
    repeated: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=int))


def sample_rows(n_samples: int, twin_rate_hz: float, settings: RealLogSettings, rng: np.random.Generator
                ) -> np.ndarray:
    """Indices of the twin's samples the logger keeps (module docstring)."""
    base = twin_rate_hz / settings.rate_hz
    count = int(n_samples / base * 1.2) + 2
    steps = np.maximum(1, np.rint(base * (1.0 + rng.uniform(-settings.jitter, settings.jitter, count))))
    gaps = rng.random(count) < settings.gap_rate_hz / settings.rate_hz
    steps[gaps] += np.rint((settings.gap_periods - 1.0) * base)
    rows = np.concatenate([[0], np.cumsum(steps)]).astype(int)
    return rows[rows < n_samples]


def logger_rows(n_samples: int, twin_rate_hz: float, settings: RealLogSettings, rng: np.random.Generator
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A logger on its own clock (module docstring): (twin sample of each row, the row's stamp [s] from the
    first tick, rows that repeat the state before them)."""
    base = int(round(twin_rate_hz / settings.rate_hz))
    period = 1.0 / settings.rate_hz
    ticks = np.arange((n_samples - 1) // base + 1)
    lost = np.zeros(ticks.size, dtype=bool)
    starts = np.flatnonzero(rng.random(ticks.size) < settings.gap_rate_hz / settings.rate_hz)
    lengths = rng.integers(2, max(2, int(settings.gap_periods)) + 1, starts.size)
    for start, length in zip(starts, lengths, strict=True):  # a stall of `length` ticks loses length − 1 of them
        lost[start + 1:start + length] = True
    lost[0] = False
    logged = ticks[~lost]
    repeated = np.flatnonzero(rng.random(logged.size) < settings.repeats)
    repeated = repeated[repeated > 0]
    sample_tick = logged.copy()
    for row in repeated:  # a repeat shows the state of the row before it (itself possibly a repeat)
        sample_tick[row] = sample_tick[row - 1]
    stamps = logged * period + rng.uniform(0.0, settings.jitter * period, logged.size)
    return sample_tick * base, stamps, repeated


def _csv_lines(fmt: str, t: np.ndarray, q, dq, effort, target_moment, target_current, temperature, n: int,
               precise: bool = False, time_column: bool = True) -> tuple[str, list[str]]:
    buffer = io.StringIO()
    values = '%.9g' if precise else '%.6g'
    if fmt == 'ur_rtde':
        names = ['timestamp'] + [f'{field}_{j}' for field in ('actual_q', 'actual_qd', 'actual_current',
                                                              'target_current', 'target_moment',
                                                              'joint_temperatures') for j in range(n)]
        table = np.column_stack([t, q, dq, effort, target_current, target_moment, temperature])
        formats = ['%.6f' if precise else '%.4f'] + [values] * (table.shape[1] - 1)
        delimiter = ' '
    else:
        names = ['time', 'success_rate'] + [f'{field}[{j}]' for field in ('state.q', 'state.dq', 'state.tau_J',
                                                                          'cmd.tau_J_d') for j in range(n)]
        table = np.column_stack([t * 1e3 if precise else np.rint(t * 1e3), np.ones(t.size), q, dq, effort,
                                 target_moment])
        formats = ['%.3f' if precise else '%d', '%g'] + [values] * (table.shape[1] - 2)
        delimiter = ','
    if not time_column:
        names, table, formats = names[1:], table[:, 1:], formats[1:]
    np.savetxt(buffer, table, fmt=formats, delimiter=delimiter)
    return delimiter.join(names), buffer.getvalue().splitlines()


def make_real_log(record, drive_gain: np.ndarray, settings: RealLogSettings, seed: int) -> RealLog:
    """The real log of a :class:`~dynid.sim.twin.SimulationRecord` (module docstring)."""
    rng = np.random.default_rng([seed, 13])
    logger = settings.stamps == 'logger'
    if logger:
        rows, stamps, repeated = logger_rows(record.time.size, record.rate_hz, settings, rng)
        t = record.time[0] + stamps + settings.time_offset_s
    else:
        rows, repeated = sample_rows(record.time.size, record.rate_hz, settings, rng), np.zeros(0, dtype=int)
        t = record.time[rows] + settings.time_offset_s
    m, n = record.measured, len(record.joint_names)
    step = settings.position_rounding_rad
    q = np.rint(m['q'][rows] / step) * step if step > 0 else m['q'][rows].copy()
    dq = m['dq'][rows].copy()
    ur = settings.csv_format == 'ur_rtde'
    effort = (m['current'] if ur else m['joint_torque'])[rows].copy()
    target_moment = record.reference['effort'][rows]
    glitches: list[dict] = []
    count = settings.glitches
    if 3 * count > rows.size // 2:
        raise InputError(f'{count} glitches of each kind do not fit in {rows.size} logged rows')
    candidates = np.arange(rows.size // 10, rows.size - rows.size // 10)
    # Not a repeated row nor the row it repeats: a glitch there would hide the repeat.
    candidates = np.setdiff1d(candidates, np.concatenate([repeated, repeated - 1]))
    chosen = rng.choice(candidates, size=3 * count, replace=False)
    for k, row in enumerate(chosen):
        joint = int(rng.integers(n))
        sign = 1.0 if rng.random() < 0.5 else -1.0
        kind = ('position_jump', 'absurd_current' if ur else 'absurd_torque', 'garbage_line')[k // count]
        if kind == 'position_jump':
            q[row, joint] += sign * POSITION_JUMP_RAD
            value = float(q[row, joint])
        elif kind == 'garbage_line':
            joint, value = None, None
        else:
            effort[row, joint] = value = sign * (ABSURD_CURRENT_A if ur else ABSURD_TORQUE_NM)
        glitches.append({'kind': kind, 'row': int(row), 'time_s': float(t[row]), 'joint': None if joint is None
                         else record.joint_names[joint], 'value': value})
    header, lines = _csv_lines(settings.csv_format, t, q, dq, effort, target_moment,
                               target_moment / drive_gain, m['temperature'][rows], n, logger, settings.time_column)
    garbage = sorted((g for g in glitches if g['kind'] == 'garbage_line'), key=lambda g: g['row'])
    out, previous = [header], 0
    for k, g in enumerate(garbage):  # a garbage line goes after the row it names
        out += lines[previous:g['row'] + 1]
        previous = g['row'] + 1
        junk = lines[g['row']][:len(lines[g['row']]) // 2] if k % 2 == 0 else 'rtde: lost 1 package, reconnecting'
        out.append(junk)
        g['line'], g['row'], g['text'] = len(out), None, junk
    out += lines[previous:]
    for g in glitches:  # CSV line of a spoiled row: the header, the rows and garbage lines before it
        if g['kind'] != 'garbage_line':
            g['line'] = int(g['row'] + 2 + sum(1 for x in garbage if x['time_s'] < g['time_s']))
    start_ns = int(round(t[0] * 1e9))
    dataset = Dataset(record.joint_names, t - t[0], q, dq, tau=None if ur else effort, current=effort if ur else None,
                      temperature=m['temperature'][rows] if ur else None,
                      source={'simulation': 'real log', 'real_log': asdict(settings)})
    return RealLog(dataset, start_ns, '\n'.join(out) + '\n', glitches, rows, repeated)
