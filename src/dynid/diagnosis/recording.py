"""What a recording's time and positions say before any torque is read: time stamps in other units than seconds,
positions in degrees.

- **Time** (:func:`time_scale`): the recorded velocity q̇ against the velocity of the recorded positions over the
  stamps, Δq/Δt, by least squares over all joints; the ratio r is 1 where the stamps are in seconds. Time in
  milliseconds read as seconds gives r ≈ 10⁻³ (the motion looks a thousand times slower than its velocity).
- **Positions** (:func:`degree_joints`): a joint whose positions leave its limits by more than a turn while the
  same numbers read in degrees (×π/180) lie within them holds degrees.
"""

from __future__ import annotations

import numpy as np

from dynid.io.dataset import Dataset
from dynid.io.log_checks import velocity_time_ratio
from dynid.model.robot import RobotModel

#: a time ratio r outside [1/TIME_BAND, TIME_BAND] is named (module docstring)
TIME_BAND = 3.0


def time_scale(dataset: Dataset) -> float:
    """The ratio r of Δq/Δt to the recorded q̇ over all joints (module docstring; :func:`velocity_time_ratio`); NaN
    where it cannot be told (fewer than 3 samples, no motion)."""
    return velocity_time_ratio(dataset.t, dataset.q, dataset.dq)


def degree_joints(dataset: Dataset, robot: RobotModel) -> list[str]:
    """The joints whose positions look like degrees (module docstring)."""
    low, high = np.min(dataset.q, axis=0), np.max(dataset.q, axis=0)
    lower, upper = np.asarray(robot.lower_limits, float), np.asarray(robot.upper_limits, float)
    outside = (low < lower - 2 * np.pi) | (high > upper + 2 * np.pi)
    inside = (np.radians(low) >= lower - 1e-6) & (np.radians(high) <= upper + 1e-6)
    return [name for name, o, i in zip(robot.joint_names, outside, inside, strict=True) if o and i]
