"""An excitation run streamed to a joint_trajectory_controller (excitation_node's core): trajectory, timeline, chunks.

- :func:`excitation_trajectory`: a trajectory file, the robot's shipped one (``'builtin'``; a robot
  without one gets a design, with a warning), or a Fourier design around the robot's home as ``dynid
  excite`` makes it (:mod:`dynid.excite.design`): random coefficients shrunk into the limits and the
  clearance, or optimized.
- :func:`excitation_timeline`: from the current position, a rest-to-rest approach to the trajectory's
  start, then ``repeat`` periods, sampled at the point rate, robot joint order.
- :class:`ChunkSchedule`: that timeline cut into chunks (:func:`~dynid.excite.trajectory.chunk_timeline`)
  with absolute start times in integer nanoseconds (the ROS clock's unit: a float of ~1.8e9 s resolves
  only ~0.24 µs, which made a chunk's first point and the repeated last point of the chunk before land
  apart); each chunk is due ``lead_s`` before its start (the first at once), and the run is done once
  the last is sent and its end has passed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

import numpy as np

from dynid.excite.design import design_excitation
from dynid.excite.home import default_home
from dynid.excite.trajectory import (
    BUILTIN_EXCITATIONS,
    PointTrajectory,
    approach_segment,
    builtin_excitation_path,
    chunk_timeline,
    load_trajectory,
    reorder_trajectory_output,
)
from dynid.model.naming import match_joint_names


def excitation_trajectory(robot, trajectory_file: str = '', harmonics: int = 5, period_s: float = 10.0, seed: int = 0,
                          optimize: bool = False, progress: Callable[[str], None] | None = None,
                          warn: Callable[[str], None] | None = None):
    """The trajectory of ``trajectory_file`` ('builtin': the robot's shipped one, by the built-in the robot is,
    whatever its description calls it), or, when empty or when the robot has no shipped one, a Fourier design of
    ``harmonics`` over ``period_s`` [s] around the default home as ``dynid excite`` makes it with its other
    defaults (:func:`~dynid.excite.design.design_excitation`: within the robot's limits, no link below the base
    plane). ``progress`` gets what the clearance checks and the optimizer's news, ``warn`` links below the floor
    at home and a design made in place of a missing shipped one.
    """
    if trajectory_file == 'builtin':
        name = robot.builtin or robot.name
        if name in BUILTIN_EXCITATIONS:
            trajectory_file = str(builtin_excitation_path(name))
        else:
            trajectory_file = ''
            if warn is not None:
                warn(f'no shipped excitation for {name} ({", ".join(BUILTIN_EXCITATIONS)} have one): designing '
                     f'{harmonics} harmonics over {period_s:g} s within its limits instead')
    if trajectory_file:
        trajectory = load_trajectory(trajectory_file)
        if set(trajectory.joint_names) <= set(robot.joint_names):
            return trajectory
        # the same joints as a vendor names them (a tf_prefix, fer_ for panda_): renamed to the robot's
        return replace(trajectory, joint_names=match_joint_names(trajectory.joint_names, robot.joint_names, None,
                                                                 f'robot {robot.name}'))
    if optimize and progress is not None:
        progress('optimizing the excitation (this can take a minute)')
    return design_excitation(robot, default_home(robot)[0], harmonics=harmonics, period_s=period_s, seed=seed,
                             optimize=optimize, progress=progress, notice=progress, warn=warn).trajectory


def excitation_timeline(trajectory, joint_names: Sequence[str], current: np.ndarray, rate_hz: float, repeat: int,
                        approach_velocity: float):
    """(times [s], q, q̇, q̈ (N, n)) of the approach from ``current`` [rad] (peak ``approach_velocity``
    [rad/s]) and ``repeat`` periods of ``trajectory``, at ``rate_hz``, in ``joint_names`` order."""
    duration = trajectory.duration_s * repeat
    t = np.arange(0.0, duration, 1.0 / rate_hz)
    t = np.append(t, duration) if duration - t[-1] > 1e-9 else t
    q, dq, ddq = (reorder_trajectory_output(v, trajectory.joint_names, joint_names)
                  for v in trajectory.evaluate(np.mod(t, trajectory.duration_s + 1e-12)))
    t_a, q_a, dq_a, ddq_a = approach_segment(current, q[0], approach_velocity, rate_hz)
    return (np.concatenate([t_a, t_a[-1] + 1.0 / rate_hz + t]), np.vstack([q_a, q]), np.vstack([dq_a, dq]),
            np.vstack([ddq_a, ddq]))


def _ns(seconds: float) -> int:
    return int(round(seconds * 1e9))


class ChunkSchedule:
    """The chunks of a timeline with absolute start times [ns] on the caller's clock (module docstring).

    Attributes:
        chunks: [(start [ns], piece)], pieces with times [s] from 0. next_chunk: index of the next to send.
        end_ns: when the timeline ends [ns]. lead_s: how early a chunk is due [s].
    """

    def __init__(self, joint_names: Sequence[str], timeline, chunk_s: float, start_ns: int, lead_s: float) -> None:
        times = timeline[0]
        self.chunks: list[tuple[int, PointTrajectory]] = [
            (start_ns + _ns(first), piece) for first, piece in chunk_timeline(joint_names, *timeline, chunk_s)]
        self.end_ns, self.lead_s, self.next_chunk = start_ns + _ns(float(times[-1])), lead_s, 0

    @property
    def pending(self) -> bool:
        """Whether chunks remain to be sent."""
        return self.next_chunk < len(self.chunks)

    def due(self, now_ns: int) -> list[tuple[int, PointTrajectory]]:
        """The chunks to send at ``now_ns`` [ns] (the first at once, each next ``lead_s`` before its
        start), marked sent."""
        first = self.next_chunk
        while self.next_chunk < len(self.chunks):
            if self.next_chunk > 0 and self.chunks[self.next_chunk][0] - _ns(self.lead_s) > now_ns:
                break
            self.next_chunk += 1
        return self.chunks[first:self.next_chunk]

    def done(self, now_ns: int) -> bool:
        """Every chunk sent and the timeline's end passed."""
        return not self.pending and now_ns > self.end_ns
