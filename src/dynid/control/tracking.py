"""Tracking error of a recorded run, against the trajectories its joint controller was sent.

The reference is rebuilt exactly as the controller builds it (:class:`dynid.excite.reference.ReferenceGenerator`:
joint_trajectory_controller semantics, each message from its header stamp on), at the recording's
stamps, so that a run over DDS is scored without any signal from inside the controller. The error is
taken on the rotor side (θ − q_d, the motor encoders the joint controller closes its loop on) when the
recording has motor positions, on the link side (q − q_d) otherwise.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from dynid.errors import InputError
from dynid.excite.reference import ReferenceGenerator
from dynid.excite.trajectory import Trajectory
from dynid.io.dataset import Dataset


@dataclass(frozen=True)
class Tracking:
    """Per-joint tracking error of one run over its scored window.

    ``rms`` (n,) [rad], ``peak`` (n,) [rad]; ``side`` 'rotor' or 'link'; ``window_s`` (start, end) on the
    dataset clock [s]; ``time_s`` (M,) and ``error`` (M, n) [rad] the error over the window.
    """

    rms: np.ndarray
    peak: np.ndarray
    side: str
    window_s: tuple[float, float]
    time_s: np.ndarray
    error: np.ndarray


def tracking_error(dataset: Dataset, trajectories: Sequence[tuple[int, Trajectory]],
                   last_s: float | None = None) -> Tracking:
    """The tracking error of ``dataset`` against ``trajectories`` [(header stamp [ns], trajectory)], in the
    order the controller received them.

    The scored window runs from the first trajectory's start to the end of the last one, or covers only
    its last ``last_s`` seconds (e.g. the trajectory proper, without the approach before it). The dataset
    must carry ``source['start_ns']`` (the stamp of its first sample, as :func:`dynid.io.bag.read_bag`
    gives). InputError when nothing of the window was recorded.
    """
    if not trajectories:
        raise InputError('no trajectory was sent during the run')
    start_ns = dataset.source.get('start_ns')
    if start_ns is None:
        raise InputError('the recording has no start stamp (source start_ns)')
    reference = ReferenceGenerator(dataset.joint_names)
    actual = dataset.theta if dataset.theta is not None else dataset.q
    reference.hold(actual[0], float(dataset.t[0]))
    starts = []
    for stamp_ns, trajectory in trajectories:
        start = (int(stamp_ns) - int(start_ns)) * 1e-9
        reference.follow(trajectory, start, -np.inf)  # as received ahead of its start: nothing dropped
        starts.append((start, start + trajectory.duration_s))
    end = max(stop for _, stop in starts)
    begin = starts[0][0] if last_s is None else max(starts[0][0], end - last_s)
    inside = (dataset.t >= begin) & (dataset.t <= end)
    if np.count_nonzero(inside) < 2:
        raise InputError(f'the recording ({dataset.t[0]:.2f}–{dataset.t[-1]:.2f} s) does not cover the '
                         f'trajectory ({begin:.2f}–{end:.2f} s)')
    desired = reference.sample_many(dataset.t[inside])[0]
    error = actual[inside] - desired
    return Tracking(rms=np.sqrt(np.mean(error**2, axis=0)), peak=np.max(np.abs(error), axis=0),
                    side='rotor' if dataset.theta is not None else 'link', window_s=(begin, end),
                    time_s=dataset.t[inside], error=error)
