"""Logger stamps back onto the robot's control grid: repeated states, republished logs, re-timing.

A logger that runs on its own clock (a ROS subscriber stamping on receipt, a script polling the
controller) writes each controller sample with the time *it* read it, a little after the control
tick that produced it, and now and then reads a sample that is not yet replaced:

- **Repeated state** (:func:`repeated_states`): a row whose every logged joint signal (positions,
  velocities and, where logged, torques and currents; temperatures are slow and not compared) equals
  the previous row's. It is the previous sample read again, not a sample at its own stamp: it is
  dropped, and the tick it stood for becomes a one-sample gap that resampling bridges. The row after
  it "catches up" with a double step, which is then a step over two ticks, not a position jump.
  (A standstill logged with exactly constant values in every signal cannot be told from stale reads
  and is treated the same way.)
- **Republished log**: a state republished faster than it changes (a 100 Hz state republished at
  400 Hz repeats each sample three times). When at least a third of the rows are repeats and the
  distinct states come at least 1.5 times slower than the rows, the log is brought back to the rate
  of its distinct states, and the import says so (:attr:`Retiming.republished`).
- **Re-timing** (:func:`retime`): the stamps of the distinct states are matched to the ticks
  t_k = t_0 + k·T of one control grid. T starts from the rate when it is known (``rate_hz``), else
  from the median step; each step counts round(step/T) ticks; then T and t_0 are fitted to the
  stamps by least squares and every stamp is given the tick nearest to it (relative to the middle of
  the stamps' lag window), until the ticks no longer change. The grid is **evident** when every
  stamp then lies within a window of less than ``GRID_WINDOW`` (0.8) periods after its tick and
  the ticks increase strictly: the samples are re-timed onto their ticks (the grid placed through
  the earliest stamps: a constant latency is not knowable and does not matter). Otherwise (stamps
  that wander over a whole period, as those of a client polling at its own rate, or a latency that
  drifts) the stamps are kept and the samples interpolated onto a uniform grid, as before.

Stamps on the control grid already (a driver's own clock, the twin) are left where they are (to
rounding); a log without a time column is on its grid by construction (row k at k/rate).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

#: Stamps within a window of less than this many periods after their ticks are re-timed onto them.
GRID_WINDOW = 0.8
#: Share of repeated rows from which a log with slower distinct states is taken as republished.
REPUBLISHED_REPEATS = 1.0 / 3.0
#: ... when its distinct states come at least this many times slower than its rows.
REPUBLISHED_FACTOR = 1.5
#: Signals compared to find a repeated state (temperature is slow and not compared).
COMPARED_SIGNALS = ('q', 'dq', 'tau', 'current', 'theta', 'dtheta')
_ITERATIONS = 8


def repeated_states(signals: dict[str, np.ndarray]) -> np.ndarray:
    """(N,) True for each row whose every logged joint signal (:data:`COMPARED_SIGNALS`) equals the row
    before it (module docstring); the first row is never a repeat."""
    compared = [signals[name] for name in COMPARED_SIGNALS if signals.get(name) is not None]
    n = compared[0].shape[0]
    same = np.ones(max(n - 1, 0), dtype=bool)
    for values in compared:
        same &= np.all(values[1:] == values[:-1], axis=1)
    return np.concatenate([[False], same]) if n else np.zeros(0, dtype=bool)


@dataclass
class Retiming:
    """How the stamps of the distinct states were placed in time (module docstring).

    Attributes:
        times: (N,) the samples' times [s]: their ticks on the grid (``on_grid``), else the stamps.
        period_s: the grid period [s] (the fitted control period when ``on_grid``).
        on_grid: the grid was evident and the samples were re-timed onto it.
        window_s: the stamps' spread after their ticks [s] (their lag window), when fitted.
        shift_s: (N,) stamp minus re-timed time [s] (zeros when not ``on_grid``).
        missing_ticks: ticks between the first and last sample without a sample (on the grid).
        republished: None, or {'rows_rate_hz', 'state_rate_hz', 'factor'} for a republished log.
        reason: one line for people: why the samples were or were not re-timed.
    """

    times: np.ndarray
    period_s: float
    on_grid: bool
    window_s: float | None
    shift_s: np.ndarray
    missing_ticks: int
    republished: dict | None
    reason: str

    @property
    def retimed_rows(self) -> int:
        """Rows moved by more than a thousandth of a period."""
        return int(np.count_nonzero(np.abs(self.shift_s) > 1e-3 * self.period_s)) if self.on_grid else 0


def fit_ticks(t: np.ndarray, period_s: float, fit_period: bool = True) -> tuple[np.ndarray, float, float, bool]:
    """Integer ticks of strictly increasing stamps ``t`` [s] on a grid of period about ``period_s`` [s].

    Returns (ticks (N,) from 0, period [s], the grid's time of tick 0 [s] (through the earliest stamp
    after its tick), and whether the ticks increase strictly). ``fit_period`` False keeps the period.
    """
    t = np.asarray(t, dtype=float)
    period = float(period_s)
    ticks = np.concatenate([[0], np.cumsum(np.maximum(1, np.rint(np.diff(t) / period)))]).astype(np.int64)
    increasing = True
    for _ in range(_ITERATIONS):
        if fit_period and ticks[-1] > 0:
            k = ticks - ticks.mean()
            period = float(np.dot(k, t - t.mean()) / np.dot(k, k))
        offset = t - period * ticks
        middle = 0.5 * (offset.min() + offset.max())
        new = np.rint((offset - middle) / period).astype(np.int64)
        new = ticks + new - new[0]
        increasing = bool(np.all(np.diff(new) >= 1))
        if not increasing or np.array_equal(new, ticks):
            break
        ticks = new
    origin = float(np.min(t - period * ticks))
    return ticks, period, origin, increasing


def retime(t: np.ndarray, rate_hz: float | None = None, rows_period_s: float | None = None,
           repeated_share: float = 0.0) -> Retiming:
    """Re-time the distinct states' stamps ``t`` [s] onto the control grid where it is evident (module docstring).

    Args:
        t: (N,) strictly increasing stamps of the distinct states (repeats dropped).
        rate_hz: the robot's control rate when known; None: from the stamps.
        rows_period_s: the period of the log's rows before repeats were dropped (for republished logs).
        repeated_share: the share of the log's rows that were repeats.
    """
    t = np.asarray(t, dtype=float)
    steps = np.diff(t)
    period0 = 1.0 / rate_hz if rate_hz is not None else float(np.median(steps))
    ticks, period, origin, increasing = fit_ticks(t, period0)
    republished = None
    increments = np.diff(ticks)
    if repeated_share >= REPUBLISHED_REPEATS and increments.size:
        factor = int(np.median(increments))
        rows_period = rows_period_s if rows_period_s is not None else period
        if factor >= 2 or period / rows_period >= REPUBLISHED_FACTOR:
            if factor >= 2:
                ticks, period, origin, increasing = fit_ticks(t, factor * period)
            republished = {'rows_rate_hz': float(1.0 / rows_period), 'state_rate_hz': float(1.0 / period),
                           'factor': float(period / rows_period)}
    offsets = t - (origin + period * ticks)
    window = float(offsets.max()) if t.size > 1 else 0.0
    if increasing and window < GRID_WINDOW * period:
        times = origin + period * ticks
        missing = int(ticks[-1] - ticks[0] + 1 - ticks.size)
        reason = (f'stamps lie within {1e3 * window:.3g} ms after the ticks of a {1.0 / period:.6g} Hz control grid: '
                  f're-timed onto their ticks')
        return Retiming(times, period, True, window, t - times, missing, republished, reason)
    what = 'the ticks would not increase' if not increasing else \
        f'they spread over {window / period:.2g} periods after the ticks'
    reason = (f'no control grid evident in the stamps ({what}; re-timing needs a window of less than {GRID_WINDOW:g}): '
              f'samples kept at their stamps and interpolated')
    return Retiming(t.copy(), period, False, window, np.zeros(t.size), 0, republished, reason)
