"""Lost samples: gaps in the time stamps of a recording or of a live stream.

Consecutive samples more than ``(1 + tolerance)`` nominal periods T apart (tolerance 0.5 by default)
enclose a gap; a gap of Δ seconds holds ``round(Δ/T) − 1`` lost samples (at least one). T is the
publisher's period when it is known; otherwise it is read off the stamps with :func:`nominal_period`,
which stays right when most steps are long (a recording that lost 40 % of its samples has a median
step of two periods, and the median alone would hide every gap).

:func:`find_gaps` summarizes a finished recording (:class:`GapSummary`, one line of text for
people, a dict for result files); :class:`StampGapCounter` counts as stamps arrive (the nodes'
intake), in integer nanoseconds so that long runs accumulate no rounding.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

#: Steps longer than (1 + GAP_TOLERANCE)·T are gaps.
GAP_TOLERANCE = 0.5


def nominal_period(steps: np.ndarray) -> float:
    """The sampling period [s or any unit] of positive steps that may include gaps.

    The shortest typical step (the 1st percentile, robust to a stray short step) bounds the period
    from below; the median of the steps within 1.5 times that bound is the period. Uniform steps
    with gaps give the period exactly, whatever the share of gaps.
    """
    steps = np.asarray(steps, dtype=float)
    steps = steps[steps > 0]
    if steps.size == 0:
        raise ValueError('no positive step to take a period from')
    shortest = float(np.percentile(steps, 1.0))
    return float(np.median(steps[steps <= (1.0 + GAP_TOLERANCE) * shortest]))


@dataclass(frozen=True)
class Gap:
    """One gap: ``start_s`` the time of the last sample before it, ``duration_s`` the step across it [s],
    ``index`` the index of the first sample after it."""

    start_s: float
    duration_s: float
    lost: int
    index: int


@dataclass(frozen=True)
class GapSummary:
    """The gaps of one recording (or stream) and what they cost."""

    period_s: float
    samples: int
    gaps: tuple[Gap, ...] = ()

    @property
    def lost(self) -> int:
        """Samples missing in the gaps."""
        return sum(g.lost for g in self.gaps)

    @property
    def expected(self) -> int:
        """Samples a lossless recording of the same span would hold."""
        return self.samples + self.lost

    @property
    def pieces(self) -> int:
        """Contiguous pieces the gaps split the recording into."""
        return len(self.gaps) + 1

    @property
    def longest_s(self) -> float:
        """The longest step across a gap [s] (0 without gaps)."""
        return max((g.duration_s for g in self.gaps), default=0.0)

    @property
    def edges(self) -> list[int]:
        """Sample indices [0, i1, ..., N] splitting the recording at its gaps (piece k: edges[k]:edges[k+1])."""
        return [0, *(g.index for g in self.gaps), self.samples]

    def line(self, name: str) -> str:
        """One line for people, e.g. 'rec: 12 of 5012 samples lost (0.24 %) in 3 gaps, longest 8 ms'."""
        if not self.gaps:
            return f'{name}: {self.samples} samples, none lost'
        return (f'{name}: {self.lost} of {self.expected} samples lost ({100.0 * self.lost / self.expected:.2g} %) '
                f'in {len(self.gaps)} gap{"s" if len(self.gaps) > 1 else ""}, longest '
                f'{self.longest_s * 1e3:.3g} ms')

    def to_dict(self) -> dict:
        """Plain values for result files."""
        return {'period_s': self.period_s, 'samples': self.samples, 'lost': self.lost, 'gaps': len(self.gaps),
                'longest_gap_s': self.longest_s}


def find_gaps(t: np.ndarray, period_s: float | None = None, tolerance: float = GAP_TOLERANCE) -> GapSummary:
    """The gaps of strictly increasing times ``t`` [s] (N,), against ``period_s`` (default: from ``t``)."""
    t = np.asarray(t, dtype=float).reshape(-1)
    steps = np.diff(t)
    if steps.size == 0:
        return GapSummary(float(period_s or 0.0), int(t.size))
    period = nominal_period(steps) if period_s is None else float(period_s)
    where = np.flatnonzero(steps > (1.0 + tolerance) * period)
    lost = np.maximum(np.round(steps[where] / period).astype(int) - 1, 1)
    gaps = tuple(Gap(float(t[i]), float(steps[i]), int(k), int(i) + 1) for i, k in zip(where, lost, strict=True))
    return GapSummary(period, int(t.size), gaps)


class StampGapCounter:
    """Counts samples lost in a live stream of stamps [ns] (module docstring).

    Args:
        period_ns: the publisher's period; 0 reads it off the first ``learn`` steps.
        learn: steps to collect before the period is estimated.

    Stamps go in batches, each sorted here; a stamp not newer than the newest one counted is ``late``
    (out of order or repeated) and changes nothing else. ``received``, ``lost``, ``gaps``, ``late``
    and ``longest_gap_ns`` are plain attributes.
    """

    def __init__(self, period_ns: int = 0, learn: int = 100) -> None:
        if period_ns < 0 or learn < 2:
            raise ValueError('period_ns must be >= 0 and learn >= 2')
        self.period_ns = int(period_ns)
        self.learn = int(learn)
        self.received = self.lost = self.gaps = self.late = self.longest_gap_ns = 0
        self.newest: int | None = None
        self._pending: list[np.ndarray] = []  # steps seen before the period is known

    def update(self, stamps_ns) -> int:
        """Count a batch of stamps; returns the samples newly found lost."""
        given = np.asarray(stamps_ns, dtype=np.int64).reshape(-1)
        # Sorted, a stamp repeated within the batch counted late (a batch in order needs no sort).
        stamps = given if np.all(given[1:] > given[:-1]) else np.unique(given)
        late = given.size - stamps.size
        if self.newest is not None:
            old = stamps <= self.newest
            late += int(np.count_nonzero(old))
            stamps = stamps[~old]
        self.late += late
        if stamps.size == 0:
            return 0
        chain = stamps if self.newest is None else np.concatenate([[self.newest], stamps])
        self.received += int(stamps.size)
        self.newest = int(stamps[-1])
        steps = np.diff(chain)
        if self.period_ns == 0:
            self._pending.append(steps)
            collected = np.concatenate(self._pending)
            if collected.size < self.learn:
                return 0
            self.period_ns = int(round(nominal_period(collected)))
            self._pending = []
            steps = collected
        long = steps[steps > (1.0 + GAP_TOLERANCE) * self.period_ns]
        if long.size == 0:
            return 0
        lost = int(np.maximum(np.round(long / self.period_ns).astype(np.int64) - 1, 1).sum())
        self.lost += lost
        self.gaps += int(long.size)
        self.longest_gap_ns = max(self.longest_gap_ns, int(long.max()))
        return lost
