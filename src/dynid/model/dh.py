"""Serial arms from Denavit–Hartenberg tables, built as pinocchio models.

Two conventions:

- ``standard`` (distal, UR's tables): frame i-1 → i is Rz(θ_i)·Tz(d_i)·Tx(a_i)·Rx(α_i); joint i
  turns about z_{i-1}; link i's inertial data is given in frame i.
- ``modified`` (proximal, Craig; the PA-10 report, Table 2.1): frame i-1 → i is
  Rx(α_i)·Tx(a_i)·Rz(θ_i)·Tz(d_i), with (α_i, a_i) the row-i values (Khalil's indexing, as the
  digest recommends for the PA-10 table); joint i turns about z_i; link i's data is in frame i.

In both cases θ_i = q_i + θ_offset,i. Pinocchio places each joint frame on its joint axis (z along
the axis), so a body's standard inertial parameters are always taken about a point of its own joint
axis — the frame the identification literature uses. The flange frame is DH frame n, or a fixed
placement in it (Franka's flange sits 0.107 m along z_7).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pinocchio as pin

from dynid.errors import InputError, checked_choice
from dynid.model.inertial import to_pinocchio_inertia

CONVENTIONS = ('standard', 'modified')


@dataclass(frozen=True)
class DHJoint:
    """One revolute joint of a DH table and the link it moves.

    Attributes:
        name: joint name.
        a: link length [m]. alpha: link twist [rad]. d: link offset [m].
        theta_offset: θ_i − q_i [rad].
        lower, upper: position limits [rad]; velocity [rad/s] and effort [N·m] limits (> 0, may be inf).
        inertial: 10 standard inertial parameters of link i in DH frame i (see :mod:`.inertial`).
    """

    name: str
    a: float
    alpha: float
    d: float
    theta_offset: float = 0.0
    lower: float = -np.inf
    upper: float = np.inf
    velocity: float = np.inf
    effort: float = np.inf
    inertial: tuple[float, ...] = (0.0,) * 10


def _rot_x(angle: float) -> np.ndarray:
    c, s = np.cos(angle), np.sin(angle)
    return np.array([[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]])


def _rot_z(angle: float) -> np.ndarray:
    c, s = np.cos(angle), np.sin(angle)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def joint_placements(joint: DHJoint, convention: str) -> tuple[pin.SE3, pin.SE3]:
    """(placement of joint i in DH frame i-1 before its motion, DH frame i in joint frame i).

    For ``standard`` the first element is only the θ offset (the transform from the previous joint
    frame to DH frame i-1 belongs to the previous row); for ``modified`` the second is the identity.
    """
    offset = pin.SE3(_rot_z(joint.theta_offset), np.zeros(3))
    if convention == 'standard':
        link_frame = pin.SE3(_rot_x(joint.alpha), np.array([joint.a, 0.0, joint.d]))
        return offset, link_frame
    before = pin.SE3(_rot_x(joint.alpha), np.array([joint.a, 0.0, 0.0]))
    along = pin.SE3(np.eye(3), np.array([0.0, 0.0, joint.d]))
    return before * offset * along, pin.SE3.Identity()


def build_dh_model(
    joints: Sequence[DHJoint],
    convention: str = 'standard',
    name: str = 'dh_robot',
    gravity: Sequence[float] = (0.0, 0.0, -9.81),
    flange: str = 'flange',
    flange_placement: pin.SE3 | None = None,
) -> pin.Model:
    """Pinocchio model of a serial arm of revolute joints described by a DH table.

    Args:
        joints: rows of the table, base to tip.
        convention: ``'standard'`` or ``'modified'`` (module docstring).
        name: model name.
        gravity: gravity vector [m/s²] in the base frame.
        flange: name of the frame added at DH frame n (the payload frame).
        flange_placement: the flange in DH frame n; default DH frame n itself.
    """
    checked_choice('DH convention', convention, CONVENTIONS)
    if not joints:
        raise InputError('a DH table needs at least one joint')
    model = pin.Model()
    model.name = name
    model.gravity = pin.Motion(np.asarray(gravity, dtype=float), np.zeros(3))
    parent = 0
    previous_link_frame = pin.SE3.Identity()  # standard: DH frame i-1 in joint frame i-1
    link_frame = pin.SE3.Identity()
    for joint in joints:
        placement, link_frame = joint_placements(joint, convention)
        if convention == 'standard':
            placement = previous_link_frame * placement
        parent = model.addJoint(
            parent, pin.JointModelRZ(), placement, joint.name,
            np.array([joint.effort]), np.array([joint.velocity]),
            np.array([joint.lower]), np.array([joint.upper]),
        )
        inertia = to_pinocchio_inertia(joint.inertial)
        model.appendBodyToJoint(parent, link_frame.act(inertia), pin.SE3.Identity())
        joint_frame = model.addJointFrame(parent, -1)
        model.addBodyFrame(f'{joint.name}_link', parent, link_frame, joint_frame)
        previous_link_frame = link_frame
    offset = pin.SE3.Identity() if flange_placement is None else flange_placement
    model.addFrame(pin.Frame(flange, parent, model.getFrameId(joints[-1].name), link_frame * offset,
                             pin.FrameType.OP_FRAME))
    return model
