"""The home configuration an excitation is centred on: given by the user, or a default per robot.

Default (:func:`default_home`), in this order:

1. **Known arm families, recognized by their joint names** (so a UR or Franka URDF of any origin
   gets it, not only the built-ins; behind any one prefix: :func:`dynid.model.naming.family`):

   - UR arms (``shoulder_pan_joint`` … ``wrist_3_joint``): q = (0, −π/2, π/2, −π/2, −π/2, 0) rad,
     UR's own home: upper arm vertical, forearm horizontal, tool pointing down, the whole arm above
     its base. The middle of a UR's ±360° ranges is q = 0, the arm stretched out horizontally at
     shoulder height: from there a ±1 rad shoulder motion swings the 0.8 m (UR5e) arm far below the
     mounting plane, which is why the rule below is not used for UR arms.
   - Franka Panda/FR3 (``panda_joint1`` … ``panda_joint7``, ``fer_``, ``fr3_``): Franka's
     "ready" pose q = (0, −π/4, 0, −3π/4, 0, π/2, π/4) rad.

2. **Any other arm**: the middle of each joint's range where both limits are finite, else 0.

Whatever the source, the excitation's clearance checks (:mod:`dynid.excite.clearance`) then hold
the motion about this home above the floor.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from dynid.errors import InputError
from dynid.model.naming import family
from dynid.model.robot import RobotModel

# Rounded as the twin has always used them (recordings and stored trajectories start there).
_UR_HOME = (0.0, -1.5708, 1.5708, -1.5708, -1.5708, 0.0)
_FRANKA_HOME = (0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785)

#: family (:func:`dynid.model.naming.family`): (home [rad], what it is) of the known arm families.
KNOWN_HOMES = {
    'ur': (_UR_HOME, 'UR home: upper arm vertical, forearm horizontal, tool down'),
    'franka': (_FRANKA_HOME, 'Franka ready pose'),
}


def default_home(robot: RobotModel) -> tuple[np.ndarray, str]:
    """(home [rad or m] per joint, a phrase saying where it comes from) by the rules of the module docstring."""
    known = KNOWN_HOMES.get(family(robot.joint_names) or '')
    if known is not None:
        q = np.array(known[0])
        if np.all(q >= robot.lower_limits) and np.all(q <= robot.upper_limits):
            return q, known[1]
    finite = np.isfinite(robot.lower_limits) & np.isfinite(robot.upper_limits)
    q = np.where(finite, 0.5 * (np.where(finite, robot.lower_limits, 0.0) + np.where(finite, robot.upper_limits, 0.0)),
                 0.0)
    return q, 'middle of the joint ranges (0 where a joint is unlimited)'


def home_configuration(robot: RobotModel) -> np.ndarray:
    """The default home of ``robot`` (:func:`default_home`) [rad or m per joint]."""
    return default_home(robot)[0]


def parse_home(text: str | Sequence[float], robot: RobotModel) -> np.ndarray:
    """A home given by the user (comma-separated text or numbers, rad or m, model joint order), checked
    against the joint count and the position limits."""
    try:
        values = [float(v) for v in text.split(',') if v.strip()] if isinstance(text, str) else [float(v) for v in text]
    except ValueError:
        raise InputError(f'{{home}} must be {robot.n} comma-separated numbers [rad], got {text!r}',
                         fields=('home',)) from None
    q = np.array(values)
    if q.shape != (robot.n,) or not np.all(np.isfinite(q)):
        raise InputError(f'{{home}} needs {robot.n} finite values [rad] for {", ".join(robot.joint_names)}; '
                         f'got {len(values)}', fields=('home',))
    outside = [f'{name} = {value:.4g} outside [{low:.4g}, {high:.4g}]'
               for name, value, low, high in zip(robot.joint_names, q, robot.lower_limits, robot.upper_limits,
                                                 strict=True) if not low <= value <= high]
    if outside:
        raise InputError(f'{{home}} is outside the joint limits: {"; ".join(outside)}', fields=('home',))
    return q
