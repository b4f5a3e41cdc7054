"""Torque channels that carry nothing: a joint whose logged joint torque, or motor current read through the drive
gains, barely moves while the robot file says the joint's torque does (a dead sensor, an unwired channel).

The null hypothesis is "the channel measures the joint's torque": then its spread is at least the spread of the
robot file's rigid-body torque τ_f = M(q)q̈ + c(q, q̇) + g(q) at the logged motion, give or take the file's error
(friction and noise only add to it). The statistic is the ratio of the two spreads (RMS about each recording's
mean, over the decimated rows :func:`dynid.diagnosis.effort.decimated_rows` gives), pooled over the recordings; a
channel is named when it is below :data:`DEAD_SHARE`, on a joint whose file torque spreads at least
:data:`MIN_FILE_SPREAD_NM` (below, a live channel may be that small: an unloaded wrist, whose torque is its
sensor's noise, is not judged). A channel that keeps one value exactly is
:func:`dynid.io.stream_checks.effort_problem`'s.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from dynid.diagnosis.effort import Recording, decimated_rows
from dynid.io.stream_checks import constant_while_moving
from dynid.model.drives import JointDrives
from dynid.model.robot import RobotModel

#: a channel whose spread is below this share of the robot file's torque spread carries nothing
DEAD_SHARE = 0.02
#: the smallest spread of the robot file's torque [N·m] on which a channel is judged
MIN_FILE_SPREAD_NM = 0.05
#: how each source is said
SOURCE_WORDS = {'joint_torque': 'joint torque', 'current': 'motor current'}


@dataclass(frozen=True)
class DeadChannel:
    """One channel that carries nothing: the joint, the source ('joint_torque' or 'current'), the channel's spread
    and the robot file's [N·m, link side; a current read through the drive gains]."""

    joint: str
    source: str
    spread_nm: float
    file_spread_nm: float

    def line(self) -> str:
        """"joint_7's joint torque channel carries nothing (spread 0.002 N·m against 3.1 N·m the robot file
        predicts): a dead sensor?"."""
        return (f"{self.joint}'s {SOURCE_WORDS[self.source]} channel carries nothing (spread {self.spread_nm:.2g} N·m "
                f'against {self.file_spread_nm:.2g} N·m the robot file predicts): a dead '
                f'{"sensor" if self.source == "joint_torque" else "current channel"}?')


def channel_signals(recording: Recording, drives: JointDrives | None) -> dict[str, np.ndarray]:
    """{source: (N, n) torque [N·m, link side]} of the sources a recording holds: its joint torque, and its motor
    current through ``drives``' gains where there are drives."""
    dataset = recording.dataset
    signals = {}
    if dataset.tau is not None:
        signals['joint_torque'] = np.asarray(dataset.tau, dtype=float)
    if dataset.current is not None and drives is not None:
        signals['current'] = drives.current_to_joint_torque(dataset.current)
    return signals


def dead_channels(recordings: Sequence[Recording], robot: RobotModel, drives: JointDrives | None = None,
                  skip: Sequence[str] = ()) -> list[DeadChannel]:
    """The channels of every source the recordings all hold that carry nothing (module docstring), joints in
    ``skip`` left out; ``drives``: the drive gains a current is read through (default: the robot's)."""
    drives = drives if drives is not None else robot.drives
    found = []
    for source in ('joint_torque', 'current'):
        spreads = _spreads(recordings, robot, drives, source)
        if spreads is None:
            continue
        signal, file = spreads
        held = np.all([constant_while_moving(channel_signals(r, drives)[source], r.dataset.q) for r in recordings],
                      axis=0)  # one value exactly: effort_problem's, with the driver's likely cause
        for j, name in enumerate(robot.joint_names):
            if name not in skip and not held[j] and file[j] >= MIN_FILE_SPREAD_NM and signal[j] < DEAD_SHARE * file[j]:
                found.append(DeadChannel(name, source, float(signal[j]), float(file[j])))
    return found


def channel_notes(recordings: Sequence[Recording], robot: RobotModel, drives: JointDrives | None = None) -> list[str]:
    """One line per channel that carries nothing (:func:`dead_channels`), naming the other source where the
    recordings hold it and it carries torque on that joint (``{torque_source}``: the setting that reads it)."""
    drives = drives if drives is not None else robot.drives
    dead = dead_channels(recordings, robot, drives)
    held = [source for source in SOURCE_WORDS
            if all(source in channel_signals(recording, drives) for recording in recordings)]
    lines = []
    for channel in dead:
        others = [source for source in held if source != channel.source
                  and not any(c.joint == channel.joint and c.source == source for c in dead)]
        lines.append(channel.line() + ''.join(f' (its {SOURCE_WORDS[o]} channel is live: {{torque_source}} {o})'
                                              for o in others))
    return lines


def _spreads(recordings: Sequence[Recording], robot: RobotModel, drives, source: str):
    """((n,) spread of the channel, (n,) spread of the robot file's torque) [N·m], pooled over the recordings, or
    None where one recording lacks the source or every recording is too short to differentiate."""
    sums, count = np.zeros((2, robot.n)), 0
    for recording in recordings:
        signal = channel_signals(recording, drives).get(source)
        if signal is None:
            return None
        rows = decimated_rows(recording.dataset, signal)
        if rows is None:
            continue
        q, dq, ddq, measured = rows
        payload = recording.payload if recording.payload is not None else recording.dataset.payload
        file = robot.inverse_dynamics(q, dq, ddq, payload)
        for k, values in enumerate((measured, file)):
            sums[k] += np.nansum((values - np.nanmean(values, axis=0)) ** 2, axis=0)
        count += len(q)
    return None if count == 0 else tuple(np.sqrt(sums / count))
