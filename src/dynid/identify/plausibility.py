"""A result's gravity against the robot file's (:func:`gravity_scale_check`): the identified model's gravity torque
at the recorded poses, per joint, by a least-squares scale; a scale outside
:attr:`dynid.diagnosis.effort.EffortCheckSettings.gravity_band` (or negative) means masses an order of magnitude
off (or of the wrong sign). What a recording holds before anything is fitted is :mod:`dynid.diagnosis`'s.

A load given by its mass alone is placed by the data: its first moment m·c at the flange cannot be told from the
last link's (the same columns), so the identified links hold whatever split of the two fits the recording. The
robot file's side is then given the flange first moment that brings it closest to the identified torque over all
joints (three numbers by least squares: the placement the file does not know), and only what that cannot explain
is judged. Without it a light wrist beside a load of a few kilograms reads as masses an order of magnitude off
(a UR3e's wrist 1 at 0.05× with a 2.9 kg load on a fault-free log)."""

from __future__ import annotations

import numpy as np

from dynid.diagnosis.effort import EffortCheckSettings
from dynid.model.robot import RobotModel


def gravity_scale_check(result, robot: RobotModel, q: np.ndarray, settings: EffortCheckSettings | None = None,
                        base=None) -> tuple[dict[str, float], str | None]:
    """({joint: scale}, warning or None): the identified gravity torque against the robot file's at poses
    ``q`` (N, n) (module docstring). Joints whose file gravity torque at those poses is below 1 % of the
    largest joint's are left out (a vertical first joint, a wrist roll). ``base``: the identification's base
    parameters (:class:`dynid.identify.torque.RigidBodyTorque`), found again where not given."""
    from dynid.identify.torque import RigidBodyTorque

    settings = settings or EffortCheckSettings()
    zeros = np.zeros_like(q)
    file_gravity = robot.inverse_dynamics(q, zeros, zeros)
    identified = RigidBodyTorque(result, robot, base=base)(q, zeros, zeros)
    if _load_placed_by_data(result):  # the file's side takes the flange first moment that fits best
        columns = robot.payload_regressor(q, zeros, zeros)[:, 1:4]  # m·cx, m·cy, m·cz of a flange load
        moment = np.linalg.lstsq(columns, (identified - file_gravity).reshape(-1), rcond=None)[0]
        file_gravity = file_gravity + (columns @ moment).reshape(file_gravity.shape)
    size = np.sqrt(np.mean(file_gravity**2, axis=0))
    scales = {}
    for j, joint in enumerate(robot.joint_names):
        if size[j] > 0.01 * size.max():
            scales[joint] = float(file_gravity[:, j] @ identified[:, j] / (file_gravity[:, j] @ file_gravity[:, j]))
    low, high = settings.gravity_band
    off = {joint: s for joint, s in scales.items() if not low <= s <= high}
    if not off:
        return scales, None
    return scales, ('the identified gravity torque is ' + ', '.join(f'{s:.3g}×' for s in off.values())
                    + f' the robot file\'s on {", ".join(off)} (at the recorded poses): masses an order of magnitude '
                    'off' + (' or of the wrong sign' if any(s < 0 for s in off.values()) else '')
                    + ' — a torque in other units (motor current?), of the wrong sign, or a robot file that does not '
                    'belong to the recording')


def _load_placed_by_data(result) -> bool:
    """Whether a recording of ``result`` carried a load given by its mass alone (its centre of mass fitted)."""
    inputs = (result.provenance or {}).get('inputs') or []
    return any(entry.get('payload_mass_known') and not entry.get('payload_known') for entry in inputs)
