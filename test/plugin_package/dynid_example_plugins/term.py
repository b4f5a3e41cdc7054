"""A cable carrier's spring on each joint: τ = −k·(q − q₀) [N·m], k [N·m/rad] and q₀ [rad] per joint."""

import numpy as np

from dynid.control import TermPlugin
from dynid.control.term import FeedforwardTerm, per_joint, term_options


class CableSpringTerm(FeedforwardTerm):
    name = 'cable_spring'

    def __init__(self, stiffness: np.ndarray, rest: np.ndarray) -> None:
        self.stiffness, self.rest = stiffness, rest

    def evaluate(self, q, dq, ddq, context) -> np.ndarray:
        return -self.stiffness * (np.asarray(q, dtype=float) - self.rest)


def cable_spring(robot, result, options) -> CableSpringTerm:
    """Options: ``stiffness`` [N·m/rad] (default 0.5), ``rest`` [rad] (default 0): a value, one per joint or
    {joint: value}."""
    o = term_options('cable_spring', options, {'stiffness': 0.5, 'rest': 0.0})
    return CableSpringTerm(per_joint(o['stiffness'], robot.joint_names, 'cable_spring: stiffness', 0.0),
                           per_joint(o['rest'], robot.joint_names, 'cable_spring: rest'))


CABLE_SPRING = TermPlugin('cable_spring', "a cable carrier's spring on each joint", cable_spring)
