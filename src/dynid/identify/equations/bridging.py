"""Short gaps bridged before filtering, and the contiguous pieces a recording is split into at the others.

A recording that lost samples (:meth:`dynid.io.dataset.Dataset.gaps`) cannot be filtered across its
gaps as it stands. A gap is filled on the recording's grid before filtering when its missing samples
span at most ``bridge_s`` (the filter settings' ``bridge_s``: by default the spacing of the decimated
samples, ``decimation / rate``, 20 ms at 1 kHz and 100 ms at 100 Hz) and the stretch from ``bridge_s``
before it to ``bridge_s`` after it kept at least half of its samples: the filters then run over it and
every decimated row keeps its place, so that a short gap, a dropped repeated state or a logger's stall
costs nothing but the interpolation error of a few samples, which the decimation low-pass (whose kept
samples are that far apart) mostly removes. Longer gaps, and gaps in a stretch that lost most of its
samples (where filled samples would outnumber measured ones), split the recording into contiguous
pieces, each filtered on its own.

Filling: positions (q, θ) by the cubic through two samples on each side of the gap, the outer ones as
far from the gap as it is long (where the recording has them; else linearly), every other signal
(velocities, torques, currents, temperatures) linearly between the gap's neighbours; the controller's reference
(:class:`dynid.io.dataset.Reference`) likewise, q_r as a position.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace

import numpy as np

from dynid.io.dataset import JOINT_SIGNALS, Dataset
from dynid.io.gaps import GapSummary, find_gaps

POSITIONS = ('q', 'theta')


@dataclass
class BridgedRecording:
    """A recording with its short gaps filled (module docstring).

    Attributes:
        dataset: the recording, filled samples included.
        pieces: (start, stop) sample ranges of ``dataset`` between the gaps left (pieces of one sample left out).
        summary: the gaps of the recording as given.
        bridged_gaps, bridged_samples: the gaps filled and the samples they got.
        longest_bridged_s: the longest step filled across [s] (0 without).
        limit_s: the longest span of missing samples filled [s].
    """

    dataset: Dataset
    pieces: list[tuple[int, int]]
    summary: GapSummary
    bridged_gaps: int = 0
    bridged_samples: int = 0
    longest_bridged_s: float = 0.0
    limit_s: float = 0.0

    @property
    def split_gaps(self) -> int:
        """Gaps left as splits."""
        return len(self.summary.gaps) - self.bridged_gaps


def _cubic(t: np.ndarray, nodes_t: np.ndarray, nodes_y: np.ndarray) -> np.ndarray:
    """Lagrange cubic through 4 nodes per row: ``nodes_t`` (M, 4), ``nodes_y`` (M, 4, n), at ``t`` (M,)."""
    out = np.zeros(nodes_y.shape[:1] + nodes_y.shape[2:])
    for j in range(4):
        weight = np.ones(t.size)
        for m in range(4):
            if m != j:
                weight *= (t - nodes_t[:, m]) / (nodes_t[:, j] - nodes_t[:, m])
        out += weight[:, None] * nodes_y[:, j]
    return out


def bridge_gaps(dataset: Dataset, limit_s: float, period_s: float | None = None) -> BridgedRecording:
    """Fill the gaps of ``dataset`` whose missing samples span at most ``limit_s`` [s] (module docstring).

    ``period_s``: the recording's period when known (default: read off its stamps).
    """
    summary = dataset.gaps(period_s)
    period = summary.period_s
    t = dataset.t
    short = [g for g in summary.gaps if g.lost * period <= limit_s * (1.0 + 1e-9)]
    if short:  # ... in a stretch that kept at least half of its samples (within limit_s around the gap)
        before, after = np.array([t[g.index - 1] for g in short]), np.array([t[g.index] for g in short])
        low, high = before - limit_s - 0.5 * period, after + limit_s + 0.5 * period
        measured = np.searchsorted(t, high) - np.searchsorted(t, low)
        span = np.rint((high - low) / period).astype(int)
        short = [g for g, m, n in zip(short, measured, span, strict=True) if 2 * m >= n]
    if not short:
        return BridgedRecording(dataset, _pieces(summary), summary, limit_s=limit_s)
    after = np.array([g.index for g in short])  # first sample after each gap
    lost = np.array([g.lost for g in short])
    at = np.repeat(after, lost)  # insertion index of each filled sample
    step = np.arange(lost.sum()) - np.repeat(np.cumsum(lost) - lost, lost) + 1
    fraction = step / np.repeat(lost + 1, lost)
    n_samples = dataset.n_samples
    t0, t1 = t[at - 1], t[at]
    times = t0 + fraction * (t1 - t0)
    # Cubic nodes: two on each side, the outer ones as far out as the gap is long (or as the recording allows).
    reach = np.minimum(np.repeat(lost, lost), np.minimum(at - 1, n_samples - 1 - at))
    nodes = np.column_stack([at - 1 - reach, at - 1, at, at + reach])
    cubic = reach >= 1

    def bridged_signal(signal: np.ndarray, position: bool) -> np.ndarray:
        y0, y1 = signal[at - 1], signal[at]
        filled = y0 + fraction[:, None] * (y1 - y0)
        if position and cubic.any():
            filled[cubic] = _cubic(times[cubic], t[nodes[cubic]], signal[nodes[cubic]])
        return np.insert(signal, at, filled, axis=0)

    values = {name: bridged_signal(getattr(dataset, name), name in POSITIONS) for name in JOINT_SIGNALS
              if getattr(dataset, name) is not None}
    if dataset.reference is not None:  # the controller's reference, filled as the signals it mirrors
        values['reference'] = replace(dataset.reference, **{
            name: bridged_signal(signal, name == 'q') for name, signal in dataset.reference.signals().items()})
    others = {f.name: getattr(dataset, f.name) for f in fields(dataset) if f.name not in values}
    bridged = Dataset(**{**others, **values, 't': np.insert(t, at, times)})
    steps = np.array([g.duration_s for g in short])
    return BridgedRecording(bridged, _pieces(find_gaps(bridged.t, period)), summary, len(short), int(lost.sum()),
                            float(steps.max()), limit_s)


def _pieces(gaps: GapSummary) -> list[tuple[int, int]]:
    edges = gaps.edges
    return [(a, b) for a, b in zip(edges[:-1], edges[1:], strict=True) if b - a >= 2]
