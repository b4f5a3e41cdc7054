"""The controller's reference (joint position and velocity) at the state's stamps, from the trajectories sent to it.

The contact detector takes the arm as at rest only while no joint is commanded to move
(:mod:`dynid.contact.detection`): as a motion starts the motor breaks each joint away before it moves, which the
currents alone can not tell from a push. Where the trajectories sent to the joint_trajectory_controller are seen (the
``<controller>/joint_trajectory`` topic dynid's excitation and feedforward send, or a recording of it),
:class:`CommandedVelocity` follows them with the controller's semantics
(:class:`dynid.excite.reference.ReferenceGenerator`: a trajectory replaces the reference from its start on, the last
point is held after the end) and samples q_r and q̇_r at the state's times (q_r gives the tracking error at rest,
:mod:`dynid.contact.detection`). Before the first trajectory it knows nothing (None: the detector goes by the
measured speeds alone).
"""

from __future__ import annotations

import numpy as np

from dynid.excite.trajectory import PointTrajectory
from dynid.excite.reference import ReferenceGenerator


class CommandedVelocity:
    """q_r [rad] and q̇_r [rad/s] of the joints ``joint_names`` over time [s, the state stamps' clock] (module
    docstring)."""

    def __init__(self, joint_names) -> None:
        self.joint_names = tuple(joint_names)
        self.reference = ReferenceGenerator(self.joint_names)
        self.trajectories = 0

    def follow(self, trajectory: PointTrajectory | None, start_s: float, now_s: float, q_now: np.ndarray) -> None:
        """A trajectory sent to the controller at ``now_s`` starting at ``start_s`` (None: stop and hold at
        ``q_now``, the controller's answer to an empty trajectory). The first one starts from ``q_now`` [rad] held:
        a first point after the start is reached from where the arm is, as the controller does."""
        if self.trajectories == 0 or trajectory is None:
            self.reference.hold(np.asarray(q_now, dtype=float), now_s)
        if trajectory is not None:
            self.reference.follow(trajectory, start_s, now_s)
        self.trajectories += 1

    def at(self, t: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
        """(q_r [rad], q̇_r [rad/s]), each (N, n), at the times ``t`` (N,) [s], or None before the first trajectory."""
        if self.trajectories == 0:
            return None
        return self.reference.sample_many(np.asarray(t, dtype=float))[:2]


def recorded_reference(t: np.ndarray, q: np.ndarray, start_ns: int, trajectories: list,
                       joint_names) -> tuple[np.ndarray, np.ndarray] | None:
    """(q_r, q̇_r) (N, n) at a recording's samples (times ``t`` (N,) [s] from ``start_ns``, positions ``q`` (N, n)
    [rad]) from the trajectories it recorded (:func:`dynid.io.trajectories.read_trajectories`), as a detector running
    along would have had them: the samples before a trajectory was recorded from the ones before it, each followed
    from where the arm was then (the samples before the first: q_r = q, q̇_r = 0); None where it holds none."""
    if not trajectories:
        return None
    commanded = CommandedVelocity(joint_names)
    t = np.asarray(t, dtype=float)
    position, velocity = np.array(q, dtype=float), np.zeros((t.size, len(commanded.joint_names)))
    done = 0
    for start, recorded, trajectory in trajectories:
        now = (recorded - start_ns) * 1e-9
        k = int(np.searchsorted(t, now))
        if k > done and commanded.trajectories:
            position[done:k], velocity[done:k] = commanded.at(t[done:k])
        done = max(done, k)
        commanded.follow(trajectory, (start - start_ns) * 1e-9, now, q[min(k, len(t) - 1)])
    if done < t.size:
        position[done:], velocity[done:] = commanded.at(t[done:])
    return position, velocity
