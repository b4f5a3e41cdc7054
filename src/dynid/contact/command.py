"""The controller's reference (joint position and velocity) at the state's stamps, from the trajectories sent to it.

The contact detector takes the arm as at rest only while no joint is commanded to move
(:mod:`dynid.contact.detection`): as a motion starts the motor breaks each joint away before it moves, which the
currents alone can not tell from a push. Where the trajectories sent to the joint_trajectory_controller are seen (the
``<controller>/joint_trajectory`` topic dynid's excitation and feedforward send, or a recording of it),
:class:`CommandedVelocity` follows them with the controller's semantics
(:class:`dynid.excite.reference.ReferenceGenerator`: a trajectory replaces the reference from its start on, the last
point is held after the end) and samples q_r and q̇_r at the state's times (q_r gives the tracking error at rest,
:mod:`dynid.contact.detection`). Before the first trajectory it knows nothing (None: the detector goes by the
measured speeds alone). A recording's reference is rebuilt the same way when it is read
(:mod:`dynid.io.trajectories`).
"""

from __future__ import annotations

import numpy as np

from dynid.excite.reference import ReferenceGenerator
from dynid.excite.trajectory import PointTrajectory


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
