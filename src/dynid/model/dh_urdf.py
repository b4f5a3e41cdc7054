"""A URDF of a robot given by its DH table (a built-in such as ``ur5e``, or a dynid robot file).

The file describes the same arm as :func:`dynid.model.dh.build_dh_model`: the same joints (names,
order, limits), the same rigid-body dynamics, the same flange. Its links:

- ``base_link`` is DH frame 0.
- ``<joint>_link`` is **DH frame i** of the row of ``<joint>`` and holds link i's inertial: mass [kg],
  ``<origin xyz>`` the centre of mass [m] and ``<inertia>`` about the centre of mass [kg·m²], both in
  DH frame i (``rpy`` 0), i.e. the robot file's numbers.
- **Standard DH** (distal; UR's tables: frame i-1 → i is Rz(θ_i)·Tz(d_i)·Tx(a_i)·Rx(α_i)): joint i turns
  about z_{i-1}, and the origin of DH frame i is generally not on that axis, while a URDF joint turns
  its child link about an axis through the child's origin. So joint i moves ``<joint>_axis`` (DH frame
  i-1 turned by θ_i about z_{i-1}: origin ``rpy="0 0 θ_offset"`` in DH frame i-1, axis z), and a fixed
  joint ``<joint>_dh`` (``xyz="a 0 d" rpy="α 0 0"``) carries ``<joint>_link``. The ``_axis`` links have no
  inertial; URDF readers (pinocchio, KDL, Gazebo) add a fixed child's inertial to its parent body.
- **Modified DH** (proximal, Craig: Rx(α_i)·Tx(a_i)·Rz(θ_i)·Tz(d_i)): joint i turns about z_i through the
  origin of DH frame i, so joint i moves ``<joint>_link`` directly.
- The flange frame of the robot file (``tool0`` for the UR built-ins) is DH frame n (or the file's
  ``flange_origin`` in it), a fixed child of the last link.

Joints are ``revolute`` with ``<limit lower upper velocity effort>`` [rad, rad/s, N·m]
(``continuous`` when the file gives no position limits; a velocity or effort limit it does not give is
written as 1e10, which dynid reads back as none); ``<dynamics damping friction>`` (viscous
[N·m·s/rad], Coulomb [N·m]) where the robot file gives a nominal ``friction``. Visuals are plain
cylinders (joint housings and the segments between joint origins) for RViz; there is no collision
geometry. URDF has no gravity: a robot file's gravity other than (0, 0, -9.81) is noted in a comment.
"""

from __future__ import annotations

import xml.etree.ElementTree as ElementTree

import numpy as np
import pinocchio as pin

from dynid.errors import InputError
from dynid.model.dh import DHJoint, joint_placements
from dynid.model.inertial import describe_link
from dynid.model.robot import UNLIMITED, RobotModel
from dynid.model.robot_file import DHRobotFile
from dynid.model.robots import builtin_robot_file

BASE_LINK = 'base_link'
_MATERIAL = 'dynid_grey'


def _number(value: float) -> str:
    return repr(float(value) + 0.0)  # shortest text that reads back as the same double; no '-0.0'


def _numbers(values) -> str:
    return ' '.join(_number(v) for v in values)


def _origin(parent: ElementTree.Element, placement: pin.SE3) -> None:
    ElementTree.SubElement(parent, 'origin', xyz=_numbers(placement.translation),
                           rpy=_numbers(pin.rpy.matrixToRpy(placement.rotation)))


def _link(root: ElementTree.Element, name: str) -> ElementTree.Element:
    return ElementTree.SubElement(root, 'link', name=name)


def _joint(root: ElementTree.Element, name: str, kind: str, parent: str, child: str,
           placement: pin.SE3) -> ElementTree.Element:
    joint = ElementTree.SubElement(root, 'joint', name=name, type=kind)
    _origin(joint, placement)
    ElementTree.SubElement(joint, 'parent', link=parent)
    ElementTree.SubElement(joint, 'child', link=child)
    return joint


def _inertial(link: ElementTree.Element, parameters: tuple[float, ...]) -> None:
    body = describe_link(np.asarray(parameters, dtype=float))
    if body['mass'] == 0.0:
        return
    inertial = ElementTree.SubElement(link, 'inertial')
    ElementTree.SubElement(inertial, 'origin', xyz=_numbers(body['com']), rpy='0 0 0')
    ElementTree.SubElement(inertial, 'mass', value=_number(body['mass']))
    i = body['inertia_com']
    ElementTree.SubElement(inertial, 'inertia', ixx=_number(i[0, 0]), ixy=_number(i[0, 1]), ixz=_number(i[0, 2]),
                           iyy=_number(i[1, 1]), iyz=_number(i[1, 2]), izz=_number(i[2, 2]))


def _visual(link: ElementTree.Element, placement: pin.SE3, radius: float, length: float) -> None:
    visual = ElementTree.SubElement(link, 'visual')
    _origin(visual, placement)
    geometry = ElementTree.SubElement(visual, 'geometry')
    ElementTree.SubElement(geometry, 'cylinder', radius=_number(radius), length=_number(length))
    ElementTree.SubElement(visual, 'material', name=_MATERIAL)


def _visuals(link: ElementTree.Element, to_next: np.ndarray, radius: float) -> None:
    """A housing along the joint axis (z of ``link``) and a segment to the next joint's origin ``to_next``."""
    _visual(link, pin.SE3.Identity(), radius, 2.0 * radius)
    length = float(np.linalg.norm(to_next))
    if length > 1e-9:
        turn = pin.Quaternion.FromTwoVectors(np.array([0.0, 0.0, 1.0]), to_next / length).matrix()
        _visual(link, pin.SE3(turn, 0.5 * to_next), round(0.7 * radius, 4), length)


def _kind_and_limits(joint: DHJoint) -> tuple[str, dict[str, str] | None]:
    bounded = np.isfinite([joint.lower, joint.upper])
    if bounded.any() and not bounded.all():
        raise InputError(f'joint {joint.name!r}: URDF has no one-sided position limit '
                         f'(lower {joint.lower:g}, upper {joint.upper:g} rad)')
    rates = {'velocity': _number(min(joint.velocity, UNLIMITED)), 'effort': _number(min(joint.effort, UNLIMITED))}
    if bounded.all():
        return 'revolute', {'lower': _number(joint.lower), 'upper': _number(joint.upper), **rates}
    return 'continuous', rates if np.isfinite([joint.velocity, joint.effort]).any() else None


def dh_urdf(table: DHRobotFile, source: str = '') -> str:
    """URDF text of the arm of a dynid robot file (module docstring for its links and frames).

    Args:
        table: the robot file's content (:func:`dynid.model.robot_file.read_robot_file_data`).
        source: where it came from, for the file's leading comment.
    """
    joints = table.joints
    reach = sum(abs(j.a) + abs(j.d) for j in joints)
    radius = round(float(np.clip(0.04 * reach, 0.02, 0.08)), 3)  # visual only: a housing a few cm across
    root = ElementTree.Element('robot', name=table.name)
    root.append(ElementTree.Comment(
        f' written by dynid from {source or table.name}: {table.convention} DH; base_link is DH frame 0, '
        f'<joint>_link is DH frame i and holds link i\'s inertial, {table.flange} is DH frame n '))
    gravity = None if table.gravity is None else np.asarray(table.gravity, dtype=float)
    if gravity is not None and not np.allclose(gravity, [0.0, 0.0, -9.81]):
        root.append(ElementTree.Comment(f' gravity of the robot file [m/s^2]: {_numbers(gravity)} '
                                        f'(URDF has none; readers assume 0 0 -9.81) '))
    material = ElementTree.SubElement(root, 'material', name=_MATERIAL)
    ElementTree.SubElement(material, 'color', rgba='0.7 0.7 0.72 1')
    _link(root, BASE_LINK)
    parent = BASE_LINK
    placements = [joint_placements(joint, table.convention) for joint in joints]
    for i, (joint, (placement, dh_frame)) in enumerate(zip(joints, placements, strict=True)):
        frame_name = f'{joint.name}_link'
        moving = f'{joint.name}_axis' if table.convention == 'standard' else frame_name
        kind, limits = _kind_and_limits(joint)
        element = _joint(root, joint.name, kind, parent, moving, placement)
        ElementTree.SubElement(element, 'axis', xyz='0 0 1')
        if limits is not None:
            ElementTree.SubElement(element, 'limit', **limits)
        friction = table.friction.get(joint.name)
        if friction is not None:
            ElementTree.SubElement(element, 'dynamics', damping=_number(friction['viscous']),
                                   friction=_number(friction['coulomb']))
        next_joint = placements[i + 1][0] if i + 1 < len(joints) else pin.SE3.Identity()
        moving_link = _link(root, moving)
        _visuals(moving_link, (dh_frame * next_joint).translation, radius)
        if moving != frame_name:
            _joint(root, f'{joint.name}_dh', 'fixed', moving, frame_name, dh_frame)
            _inertial(_link(root, frame_name), joint.inertial)
        else:
            _inertial(moving_link, joint.inertial)
        parent = frame_name
    _joint(root, f'{table.flange}_fixed_joint', 'fixed', parent, table.flange, table.flange_placement)
    _link(root, table.flange)
    ElementTree.indent(root)
    return ElementTree.tostring(root, encoding='unicode') + '\n'


def robot_urdf(spec: str) -> str:
    """URDF text of a built-in DH robot (any but ``ur5`` and ``panda``) or a dynid robot ``.yaml``.

    Raises:
        InputError: ``spec`` is already a URDF (``ur5``, ``panda``, a ``.urdf``: copy that file) or unknown.
    """
    table = builtin_robot_file(spec)
    return dh_urdf(table, spec if spec.endswith(('.yaml', '.yml')) else f'built-in {spec}')


def torque_agreement(reference: RobotModel, other: RobotModel, samples: int = 50, seed: int = 1) -> float:
    """max |τ_other − τ_reference| / max |τ_reference| of inverse dynamics on random states of ``reference``.

    The check that a written URDF is the DH model (joint order must match).
    """
    if other.joint_names != reference.joint_names:
        raise InputError(f'the URDF has joints {list(other.joint_names)}, the DH model {list(reference.joint_names)}')
    q, dq, ddq = reference.random_states(samples, seed=seed)
    tau = reference.inverse_dynamics(q, dq, ddq)
    return float(np.abs(other.inverse_dynamics(q, dq, ddq) - tau).max() / np.abs(tau).max())
