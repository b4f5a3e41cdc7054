"""A result's gravity against the robot file's (:func:`gravity_scale_check`): the identified model's gravity torque
at the recorded poses, per joint, by a least-squares scale; a scale outside
:attr:`dynid.diagnosis.effort.EffortCheckSettings.gravity_band` (or negative) means masses an order of magnitude
off (or of the wrong sign). What a recording holds before anything is fitted is :mod:`dynid.diagnosis`'s.

The scale is claimed only on joints whose gravity torque the recordings can measure: where the joint's law has an
offset, its constant part is the offset's as much (a motion about one pose, a wrist whose gravity hardly changes), so
only the gravity torque's variation over the recorded poses is compared, and that variation must stand out of the
joint's residual: at least :data:`GRAVITY_SPREAD_NOISE` times the identification's training RMSE there. Elsewhere
the figure says nothing of the units (a UR10e's wrist 3, whose gravity torque is zero by geometry, came out at
−0.000175× the file's, claimed as "a torque in other units").

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

#: A joint's gravity scale is judged where its file gravity torque varies over the recorded poses (its standard
#: deviation; its RMS where the law has no offset) by at least this many times the training RMSE of the joint [-].
GRAVITY_SPREAD_NOISE = 3.0


def gravity_scale_check(result, robot: RobotModel, q: np.ndarray, settings: EffortCheckSettings | None = None,
                        base=None) -> tuple[dict[str, float], str | None]:
    """({joint: scale}, warning or None): the identified gravity torque against the robot file's at poses
    ``q`` (N, n) (module docstring). Joints whose file gravity torque at those poses is below 1 % of the
    largest joint's are left out (a vertical first joint, a wrist roll), and so are those whose gravity torque the
    recordings cannot measure (module docstring). ``base``: the identification's base
    parameters (:class:`dynid.identify.result.torque.RigidBodyTorque`), found again where not given."""
    from dynid.identify.result.torque import RigidBodyTorque

    settings = settings or EffortCheckSettings()
    zeros = np.zeros_like(q)
    file_gravity = robot.inverse_dynamics(q, zeros, zeros)
    identified = RigidBodyTorque(result, robot, base=base)(q, zeros, zeros)
    if _load_placed_by_data(result):  # the file's side takes the flange first moment that fits best
        columns = robot.payload_regressor(q, zeros, zeros)[:, 1:4]  # m·cx, m·cy, m·cz of a flange load
        moment = np.linalg.lstsq(columns, (identified - file_gravity).reshape(-1), rcond=None)[0]
        file_gravity = file_gravity + (columns @ moment).reshape(file_gravity.shape)
    size = np.sqrt(np.mean(file_gravity**2, axis=0))
    offsets = _offset_joints(result, robot.n)  # their gravity's constant part is the offset's as much
    file_gravity = np.where(offsets, file_gravity - file_gravity.mean(axis=0), file_gravity)
    identified = np.where(offsets, identified - identified.mean(axis=0), identified)
    spread = np.sqrt(np.mean(file_gravity**2, axis=0))
    noise = _training_rmse(result, robot.joint_names)
    scales = {}
    for j, joint in enumerate(robot.joint_names):
        if size[j] > 0.01 * size.max() and spread[j] > 0 and spread[j] >= GRAVITY_SPREAD_NOISE * noise[j]:
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


def offset_gravity_split(result, robot: RobotModel, q: np.ndarray, base=None) -> tuple[dict[str, dict], str | None]:
    """({joint: split}, warning or None): the joints whose identified offset and gravity torque the recordings at
    poses ``q`` (N, n) cannot tell apart, and what decided between them.

    An offset (``tau0_j``, ``fo_j``) is a constant torque; over poses where a joint's gravity torque hardly varies
    (a motion about one pose) the gravity torque is nearly one too, and the two columns nearly collinear: the data
    alone can put the joint's gravity into its offset (a UR5e moved by multi-sines of 0.08 rad about its home pose,
    fitted without the prior: shoulder and elbow gravity 0.67–0.80× the truth's on other poses). Such a joint is one
    whose gravity the recordings cannot measure apart from a constant, by the rule :func:`gravity_scale_check` uses:
    its robot-file gravity torque varies over the poses (its standard deviation) by less than
    :data:`GRAVITY_SPREAD_NOISE` times the joint's training RMSE, and is not negligible (1 % of the largest joint's
    RMS). Each split gives that spread [% of the gravity torque's RMS] and the identified gravity's mean over the
    poses against the file's (``gravity_ratio``: what the offset left to gravity) and ``decided_by``: the robot
    file's prior where the result used one (its weight chosen by cross-validation), else the data. The warning
    is given where the data decided, or where the split leaves gravity outside ``[0.5, 2]`` times the file's; its
    remedy names the prior by its field, ``{prior}``, which the front end spells
    (:data:`dynid.identify.job.workflow.ADVISED_FIELDS`)."""
    from dynid.identify.result.torque import RigidBodyTorque

    offsets = _offset_joints(result, robot.n)
    if not offsets.any():
        return {}, None
    zeros = np.zeros_like(q)
    file_gravity = robot.inverse_dynamics(q, zeros, zeros)
    identified = RigidBodyTorque(result, robot, base=base)(q, zeros, zeros)
    rms = np.sqrt(np.mean(file_gravity ** 2, axis=0))
    spread = np.std(file_gravity, axis=0)
    noise = _training_rmse(result, robot.joint_names)
    decided_by = "the robot file's prior" if result.prior_used else 'the data'
    splits = {}
    for j, joint in enumerate(robot.joint_names):
        if offsets[j] and rms[j] > 0.01 * rms.max() and spread[j] < GRAVITY_SPREAD_NOISE * noise[j]:
            mean = float(np.mean(file_gravity[:, j]))
            splits[joint] = {'gravity_spread_percent': float(100.0 * spread[j] / rms[j]),
                             'gravity_ratio': float(np.mean(identified[:, j]) / mean), 'decided_by': decided_by}
    off = {joint: split for joint, split in splits.items()
           if not result.prior_used or not 0.5 <= split['gravity_ratio'] <= 2.0}
    if not off:
        return splits, None
    remedy = ('identify with the robot file\'s prior ({prior}) to decide it, or record poses farther apart'
              if not result.prior_used else 'record poses farther apart (dynid excite --optimize)')
    return splits, (f'these recordings cannot tell the offset from gravity on {", ".join(off)} (gravity torque '
                    'varies by ' + ', '.join(f'{split["gravity_spread_percent"]:.2g} %' for split in off.values())
                    + ' of its RMS over the recorded poses): the identified gravity torque there is '
                    + ', '.join(f'{split["gravity_ratio"]:.3g}×' for split in off.values())
                    + f' the robot file\'s, the offset holding the rest; {remedy}')


def offset_gravity_line(splits: dict[str, dict]) -> str | None:
    """One line for people on the joints of :func:`offset_gravity_split` (None without any)."""
    if not splits:
        return None
    by = {split['decided_by'] for split in splits.values()}
    return (f'offset and gravity alike on {", ".join(splits)} (gravity torque varies by '
            + ', '.join(f'{split["gravity_spread_percent"]:.2g} %' for split in splits.values())
            + f' of its RMS over the recorded poses): {" and ".join(sorted(by))} decided the split, gravity '
            + ', '.join(f'{split["gravity_ratio"]:.3g}×' for split in splits.values()) + " the robot file's there")


def _load_placed_by_data(result) -> bool:
    """Whether a recording of ``result`` carried a load given by its mass alone (its centre of mass fitted)."""
    inputs = (result.provenance or {}).get('inputs') or []
    return any(entry.get('payload_mass_known') and not entry.get('payload_known') for entry in inputs)


def _offset_joints(result, n: int) -> np.ndarray:
    """(n,) whether each joint's law has an offset identified (tau0_j or fo_j, not held)."""
    names, held = set(result.parameter_names), set((result.model or {}).get('held') or {})
    return np.array([any(f'{symbol}_{j + 1}' in names and f'{symbol}_{j + 1}' not in held for symbol in ('tau0', 'fo'))
                     for j in range(n)])


def _training_rmse(result, joint_names) -> np.ndarray:
    """(n,) each joint's training RMSE [N·m] (0 where the result has none)."""
    joints = ((result.metrics or {}).get('train') or {}).get('joints') or {}
    return np.array([float((joints.get(name) or {}).get('rmse') or 0.0) for name in joint_names])
