"""The twin in real time: which samples are due on a wall (ROS) clock, and their stamps.

Sample k of the twin (twin time k/rate) carries the stamp ``start_ns + round(k·10⁹/rate)``, and a
JointTrajectory stamped S starts at twin time ``(S − start_ns)/10⁹``. That mapping is fixed from
the start (or a reset) on, whatever the machine does: a twin that falls behind runs late and
catches up, at most ``max_batch`` samples per call, and never skips ahead. Skipping would move the
mapping, so that the next trajectory chunk, stamped in wall time, would start at another twin time
than the chunk before it ended: a jump of the reference at every chunk hand-over, and torque far
beyond the effort limits (what an earlier version of the twin did on a loaded machine).

A trajectory that arrives after its start (its sender's lead time was shorter than the delivery took) can
only start late; :meth:`RealTimeSchedule.arrived` counts such arrivals and :meth:`~RealTimeSchedule.health`
reports them, since the motion then runs behind its stamps and a tracking score against them counts the delay.
"""

from __future__ import annotations

import numpy as np

from dynid.errors import InputError


class RealTimeSchedule:
    """Sample clock of a twin running at ``rate_hz`` from ``start_ns`` (module docstring).

    Args:
        rate_hz: output rate [Hz].
        start_ns: stamp of twin time 0 [ns] (the clock at start).
        max_batch: most samples one call to :meth:`due` hands out (keeps the caller's turns short).
    """

    def __init__(self, rate_hz: float, start_ns: int, max_batch: int) -> None:
        if not np.isfinite(rate_hz) or rate_hz <= 0 or max_batch < 1:
            raise InputError(f'rate must be > 0 Hz and max_batch >= 1, got {rate_hz!r}, {max_batch!r}')
        self.rate_hz = float(rate_hz)
        self.start_ns = int(start_ns)
        self.max_batch = int(max_batch)
        self.late = 0  # commands that arrived after their start
        self.late_max_s = 0.0  # the latest of them [s]
        self._late_reported = 0

    def restart(self, start_ns: int) -> None:
        """Twin time 0 is now ``start_ns`` (after a reset of the twin)."""
        self.start_ns = int(start_ns)

    def samples_until(self, now_ns: int) -> int:
        """How many samples a twin on time would have produced by ``now_ns``."""
        return max(int((now_ns - self.start_ns) * self.rate_hz // 1e9), 0)

    def due(self, now_ns: int, produced: int) -> int:
        """Samples to produce now, having produced ``produced`` (0 ≤ result ≤ max_batch)."""
        return min(max(self.samples_until(now_ns) - produced, 0), self.max_batch)

    def behind_s(self, now_ns: int, produced: int) -> float:
        """How far the twin lags the clock [s] (0 when on time)."""
        return max(self.samples_until(now_ns) - produced, 0) / self.rate_hz

    def stamps(self, first: int, count: int) -> np.ndarray:
        """Stamps [ns] of samples first .. first + count − 1 (sample k is at twin time k/rate)."""
        k = np.arange(first, first + count, dtype=np.int64)
        return self.start_ns + np.round(k * (1e9 / self.rate_hz)).astype(np.int64)

    def twin_time(self, stamp_ns: int) -> float:
        """Twin time [s] of a stamp [ns]."""
        return (int(stamp_ns) - self.start_ns) / 1e9

    def arrived(self, start_s: float, twin_s: float) -> float:
        """A command due at twin time ``start_s`` [s] arrived at twin time ``twin_s``: how late it is [s], 0 when
        in time; late ones are counted for :meth:`health`."""
        late = max(float(twin_s) - float(start_s), 0.0)
        if late > 0.0:
            self.late += 1
            self.late_max_s = max(self.late_max_s, late)
        return late

    def health(self, now_ns: int, produced: int, counters: dict, late_s: float) -> tuple[str, str, dict]:
        """(level 'ok' or 'warn', message, values) of a running twin for diagnostics: 'warn' when it lags
        the clock by more than ``late_s`` [s] or ``counters`` (rejected_trajectories,
        rejected_effort_commands, ...) counted malformed commands, or a trajectory arrived after its start
        (:meth:`arrived`) since the last report."""
        behind = self.behind_s(now_ns, produced)
        rejected = counters.get('rejected_trajectories', 0) + counters.get('rejected_effort_commands', 0)
        values = {**counters, 'behind_s': f'{behind:.4f}', 'rate_hz': self.rate_hz,
                  'last_stamp_ns': int(self.stamps(produced, 1)[0]), 'late_trajectories': self.late,
                  'late_max_s': f'{self.late_max_s:.4f}'}
        new_late, self._late_reported = self.late - self._late_reported, self.late
        if behind > late_s:
            return 'warn', f'{behind:.2f} s behind the clock, catching up', values
        if new_late:
            return 'warn', (f'{new_late} trajectories arrived after their start (up to {self.late_max_s:.3f} s '
                            'late) and started late: their sender needs a longer lead time'), values
        if rejected:
            return 'warn', f'{rejected} malformed commands ignored', values
        return 'ok', 'running', values
