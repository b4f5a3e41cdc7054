"""A torque channel that carries nothing (:mod:`dynid.diagnosis.channels`): how often it is named on fault-free twin
logs, and how often a dead channel injected into them is.

The logs are ``bench_diagnostics.base_logs``' (five arms, 30 Hz–1 kHz, 8 s and 20 s, a payload declared fully, by
its mass alone or none), each with both its joint torque and its motor currents (read through the drive gains).
False alarms: channels named on them as they are. Hits: each channel the check judges (the robot file's torque
spreads at least ``MIN_FILE_SPREAD_NM`` there), replaced in turn by noise of ``DEAD_NOISE_NM`` of torque, named as
that joint's and that source's. Beside them, the least ratio of a live channel's spread to the file's on a judged
joint (the check names a channel below ``DEAD_SHARE``).

Run: ``.venv/bin/python -m benchmarks.dead_channels [--logs 20]``. Ends with one JSON line
``{"benchmark": "dead_channels", "logs": N, "false_alarms": 0, "injected": M, "named": M, "least_live_ratio": x}``.
"""

from __future__ import annotations

import argparse
import dataclasses
import json

import numpy as np

from dynid.diagnosis.channels import DEAD_SHARE, MIN_FILE_SPREAD_NM, channel_signals, dead_channels
from dynid.diagnosis.effort import Recording, decimated_rows

#: the noise of an injected dead channel [N·m of torque]
DEAD_NOISE_NM = 0.002


def _ratios(recording: Recording, robot, source: str) -> tuple[np.ndarray, np.ndarray]:
    """((n,) the channel's spread over the file's, (n,) the file's spread [N·m]) of one recording."""
    signal = channel_signals(recording, robot.drives)[source]
    q, dq, ddq, measured = decimated_rows(recording.dataset, signal)
    file = robot.inverse_dynamics(q, dq, ddq, recording.dataset.payload)
    spread = [np.std(values, axis=0) for values in (measured, file)]
    return spread[0] / spread[1], spread[1]


def _injected(dataset, robot, source: str, joint: int):
    """``dataset`` with ``joint``'s ``source`` channel replaced by DEAD_NOISE_NM of noise."""
    noise = DEAD_NOISE_NM * np.random.default_rng(joint).normal(size=dataset.n_samples)
    if source == 'joint_torque':
        values = dataset.tau.copy()
        values[:, joint] = noise
        return dataclasses.replace(dataset, tau=values)
    values = dataset.current.copy()
    values[:, joint] = noise / abs(robot.drives.drive_gain[joint])
    return dataclasses.replace(dataset, current=values)


def measure(count: int) -> dict:
    """The figures of the module docstring on ``count`` logs."""
    from benchmarks import bench_diagnostics  # noqa: PLC0415
    from dynid.model import load_robot

    false = injected = named = 0
    least = np.inf
    for log in bench_diagnostics.base_logs(count):
        robot = load_robot(log.robot)
        false += len(dead_channels([Recording(log.dataset)], robot))
        for source in ('joint_torque', 'current'):
            ratio, file = _ratios(Recording(log.dataset), robot, source)
            judged = np.flatnonzero(file >= MIN_FILE_SPREAD_NM)
            least = min(least, float(ratio[judged].min()))
            for joint in judged:
                injected += 1
                found = dead_channels([Recording(_injected(log.dataset, robot, source, joint))], robot)
                named += any(c.joint == robot.joint_names[joint] and c.source == source for c in found)
    return {'benchmark': 'dead_channels', 'logs': count, 'false_alarms': false, 'injected': injected,
            'named': named, 'least_live_ratio': round(least, 3), 'threshold': DEAD_SHARE}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--logs', type=int, default=20, help='fault-free twin logs (default 20)')
    print(json.dumps(measure(parser.parse_args().logs)))


if __name__ == '__main__':
    main()
