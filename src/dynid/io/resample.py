"""Resampling of jittery stamps onto a uniform grid (``dynid import``).

Grid: period T (given, or read off the stamps: the mean step over the steps of at most 1.5 times
the median step, so that gaps do not lengthen it), phase of the first stamp, t_k = t_0 + k·T.

Segments: the stamps are cut where a step is longer than (``bridge`` + 1)·T (more than ``bridge``
samples missing) and at the given breaks (e.g. a position jump that does not come back). Grid
points inside a segment are interpolated; grid points between segments are left out, so that the
written recording shows the gap (and identification splits it into contiguous pieces,
:mod:`dynid.io.gaps`). Shorter gaps are bridged by the interpolation. Segments with fewer than
``MIN_SEGMENT`` stamps are dropped.

Interpolation: positions (link q and rotor θ) by a not-a-knot cubic spline through the stamps of the segment (error
O(Δt⁴·q⁗), negligible next to the rounding of logged positions; a segment of fewer than 4 stamps:
linear); velocity, current, torque and temperature linearly (a convex combination of neighbouring
samples: noise is not amplified and nothing overshoots). A log without velocities gets the
derivative of the position spline, and one with rotor positions but no rotor velocities (motor encoders alone) the
derivative of the rotor position's. A segment starting at a break (not at a long gap) leaves its
first grid point out, so that the written recording has a gap there as well.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.interpolate import CubicSpline

MIN_SEGMENT = 4
POSITIONS = ('q', 'theta', 'q_r')  # interpolated by spline; every other signal linearly


def grid_period(t: np.ndarray) -> float:
    """The grid period [s] read off stamps t (module docstring)."""
    steps = np.diff(t)
    regular = steps[steps <= 1.5 * np.median(steps)]
    return float(np.mean(regular))


@dataclass
class Resampled:
    """Signals on the uniform grid: ``t`` (M,) [s], ``signals`` (M, n) by name; ``segments`` the
    (start, stop) stamp times of each segment used; ``bridged`` steps interpolated over; ``dropped_segments``
    stamps of segments too short to keep."""

    t: np.ndarray
    signals: dict[str, np.ndarray]
    period_s: float
    segments: list[tuple[float, float]]
    bridged: int
    longest_bridged_s: float
    dropped_stamps: int


def resample(t: np.ndarray, signals: dict[str, np.ndarray], period_s: float, bridge: int = 3,
             breaks: np.ndarray | None = None) -> Resampled:
    """Interpolate ``signals`` (N, n) at stamps ``t`` (N,) [s] onto the grid (module docstring).

    ``breaks``: indices into ``t`` before which a new segment starts regardless of the step (its first
    grid point is left out, module docstring).
    """
    steps = np.diff(t)
    cut = steps > (bridge + 1) * period_s
    if breaks is not None and len(breaks):
        cut[np.asarray(breaks, dtype=int) - 1] = True
    edges = [0, *(np.flatnonzero(cut) + 1).tolist(), t.size]
    # A segment that starts at a break after a short step leaves its first grid point out, so that the
    # written recording shows a gap there too.
    given = () if breaks is None else breaks
    after_break = {int(i) for i in given if steps[int(i) - 1] <= (bridge + 1) * period_s}
    start = t[0]
    times, parts, segments, dropped = [], {name: [] for name in signals}, [], 0
    bridged_steps = np.zeros(0)
    for a, b in zip(edges[:-1], edges[1:], strict=True):
        if b - a < MIN_SEGMENT:
            dropped += b - a
            continue
        ts = t[a:b]
        first = int(np.ceil((ts[0] - start) / period_s - 1e-9)) + (a in after_break)
        last = int(np.floor((ts[-1] - start) / period_s + 1e-9))
        if last < first:
            dropped += b - a
            continue
        grid = start + period_s * np.arange(first, last + 1)
        grid = np.clip(grid, ts[0], ts[-1])
        times.append(grid)
        segments.append((float(ts[0]), float(ts[-1])))
        seg_steps = np.diff(ts)
        bridged_steps = np.concatenate([bridged_steps, seg_steps[seg_steps > 1.5 * period_s]])
        splines = {name: CubicSpline(ts, signals[name][a:b], axis=0) for name in POSITIONS
                   if name in signals and b - a >= 4}
        for name, values in signals.items():
            if name in splines:
                parts[name].append(splines[name](grid))
            else:
                parts[name].append(np.column_stack([np.interp(grid, ts, column) for column in values[a:b].T]))
        for position, velocity in (('q', 'dq'), ('theta', 'dtheta')):  # a velocity not logged: the spline's
            if position in signals and velocity not in signals:
                parts.setdefault(velocity, []).append(splines[position](grid, 1) if position in splines else
                                                      np.gradient(parts[position][-1], period_s, axis=0))
    if not times:
        return Resampled(np.zeros(0), {}, period_s, [], 0, 0.0, dropped)
    return Resampled(np.concatenate(times), {name: np.concatenate(p) for name, p in parts.items()}, period_s,
                     segments, int(bridged_steps.size), float(bridged_steps.max(initial=0.0)), dropped)
