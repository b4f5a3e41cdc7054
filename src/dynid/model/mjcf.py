"""A robot's URDF as a MuJoCo model, through MuJoCo's own URDF compiler (optional dependency ``mujoco``).

MuJoCo reads URDF (``mujoco.MjSpec.from_string``) when the file carries a ``<mujoco><compiler/></mujoco>``
block; dynid gives it one that keeps every link a body of its own (``fusestatic="false"``), takes the
inertials as written (``inertiafromgeom="false"``, ``balanceinertia="false"``) and drops visuals. What the
URDF gives is changed before compiling so that MuJoCo's model is dynid's:

- ``<visual>`` and ``<collision>`` are removed: the dynamics do not depend on them and their meshes
  (``package://`` paths) are not found outside a ROS workspace. The MuJoCo model has no contacts.
- Movable joints that are not the robot's joints (a Panda's fingers, which dynid locks) become fixed,
  at position 0 as pinocchio locks them.
- Joint ``armature`` (reflected rotor inertia, link side [kg·m²]), ``damping`` (viscous friction
  [N·m·s/rad]) and ``frictionloss`` (Coulomb friction [N·m]) are set per joint by the caller
  (:func:`set_joint_dynamics`); the URDF's ``<dynamics>`` are replaced.

Gravity is MuJoCo's default (0, 0, −9.81) m/s², as the URDF (which has none) and pinocchio assume.
"""

from __future__ import annotations

import xml.etree.ElementTree as ElementTree
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from dynid.errors import InputError

#: What to install when MuJoCo is absent (the version requirements.txt pins).
MUJOCO_INSTALL = 'pip install mujoco==4.0.0'


def require_mujoco():
    """The ``mujoco`` module, or an InputError saying how to install it."""
    try:
        import mujoco
    except ImportError:
        raise InputError(f'MuJoCo is not installed (optional dependency): {MUJOCO_INSTALL}') from None
    return mujoco


def robot_urdf_text(robot) -> str:
    """The URDF text of a :class:`~dynid.model.robot.RobotModel`: its URDF, or the one dynid writes for a
    robot given by a DH table (:func:`dynid.model.dh_urdf.robot_urdf`)."""
    if robot.urdf is not None:
        text = robot.urdf
        if not text.lstrip().startswith('<'):
            try:
                text = Path(text).read_text()
            except OSError as error:
                raise InputError(f'cannot read URDF {robot.urdf}: {error.strerror}') from None
        return text
    from dynid.model.dh_urdf import robot_urdf

    spec = robot.builtin or robot.source
    if not spec:
        raise InputError(f'robot {robot.name!r} has no URDF to build a MuJoCo model from')
    return robot_urdf(spec)


def mujoco_urdf(urdf_text: str, joints: Sequence[str], balance_inertia: bool = False) -> str:
    """``urdf_text`` made ready for MuJoCo's URDF compiler (module docstring): visuals and collisions removed,
    joints other than ``joints`` fixed, the ``<mujoco><compiler/>`` block added; ``balance_inertia``: let MuJoCo
    raise inertias that violate the triangle inequality (A + B ≥ C; some vendor descriptions' do) instead of
    refusing them."""
    try:
        root = ElementTree.fromstring(urdf_text)
    except ElementTree.ParseError as error:
        raise InputError(f'the URDF is not valid XML: {error}') from None
    for link in root.findall('link'):
        for tag in ('visual', 'collision'):
            for element in link.findall(tag):
                link.remove(element)
    names = set(joints)
    present = {joint.get('name') for joint in root.findall('joint')}
    missing = [name for name in joints if name not in present]
    if missing:
        raise InputError(f'the URDF has no joints {missing}')
    for joint in root.findall('joint'):
        if joint.get('name') not in names and joint.get('type') != 'fixed':
            joint.set('type', 'fixed')
        if joint.get('name') in names:
            for old in joint.findall('dynamics'):
                joint.remove(old)
    for old in root.findall('mujoco'):
        root.remove(old)
    block = ElementTree.SubElement(root, 'mujoco')
    ElementTree.SubElement(block, 'compiler', discardvisual='true', fusestatic='false',
                           balanceinertia='true' if balance_inertia else 'false', inertiafromgeom='false',
                           angle='radian')
    return ElementTree.tostring(root, encoding='unicode')


def robot_spec(urdf_text: str, joints: Sequence[str], balance_inertia: bool = False):
    """An ``mujoco.MjSpec`` of the URDF with ``joints`` movable (module docstring; ``balance_inertia`` as for
    :func:`mujoco_urdf`)."""
    mujoco = require_mujoco()
    try:
        return mujoco.MjSpec.from_string(mujoco_urdf(urdf_text, joints, balance_inertia))
    except ValueError as error:
        raise InputError(f'MuJoCo cannot read the URDF: {str(error).strip().splitlines()[0]}') from None


def set_joint_dynamics(spec, joints: Sequence[str], armature: np.ndarray, damping: np.ndarray,
                       frictionloss: np.ndarray) -> None:
    """Per joint of ``joints`` (n,): armature [kg·m²], damping [N·m·s/rad], frictionloss [N·m] into ``spec``."""
    for j, name in enumerate(joints):
        joint = spec.joint(name)
        if joint is None:
            raise InputError(f'the MuJoCo model has no joint {name!r}')
        joint.armature = float(armature[j])
        joint.damping = [float(damping[j]), 0.0, 0.0]  # linear damping; no polynomial terms
        joint.frictionloss = float(frictionloss[j])


def joint_addresses(model, joints: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """The MuJoCo qpos and dof addresses of each of ``joints`` (hinge or slide), in their order."""
    mujoco = require_mujoco()
    qpos, out = [], []
    for name in joints:
        index = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_JOINT, name)
        if index < 0:
            raise InputError(f'the MuJoCo model has no joint {name!r}')
        if int(model.jnt_type[index]) not in (int(mujoco.mjtJoint.mjJNT_HINGE), int(mujoco.mjtJoint.mjJNT_SLIDE)):
            raise InputError(f'joint {name!r} of the MuJoCo model is not a hinge or slide joint')
        qpos.append(model.jnt_qposadr[index])
        out.append(model.jnt_dofadr[index])
    return np.asarray(qpos, dtype=int), np.asarray(out, dtype=int)


def inverse_dynamics(model, joints: Sequence[str], q: np.ndarray, dq: np.ndarray, ddq: np.ndarray,
                     frictionloss: bool = False) -> np.ndarray:
    """MuJoCo's ``mj_inverse`` joint force (N, n) [N·m] at states (N, n) [rad, rad/s, rad/s²] of ``joints``.

    It holds M(q)·q̈ (armature included) + bias − passive forces (damping: +D·q̇). ``frictionloss`` False
    disables friction loss (a constraint: its force at a given acceleration depends on the solver's
    softness), so the result is the rigid body, armature and damping only. Other dofs stay at the model's
    reference pose, at rest.
    """
    mujoco = require_mujoco()
    qpos, dofs = joint_addresses(model, joints)
    data = mujoco.MjData(model)
    saved = model.opt.disableflags
    if not frictionloss:
        model.opt.disableflags = saved | mujoco.mjtDisableBit.mjDSBL_FRICTIONLOSS
    try:
        out = np.empty(np.shape(q))
        for k in range(len(q)):
            mujoco.mj_resetData(model, data)
            data.qpos[qpos], data.qvel[dofs], data.qacc[dofs] = q[k], dq[k], ddq[k]
            mujoco.mj_inverse(model, data)
            out[k] = data.qfrc_inverse[dofs]
    finally:
        model.opt.disableflags = saved
    return out


def actuated_mjcf(urdf_text: str, joints: Sequence[str], armature: np.ndarray, damping: np.ndarray,
                  frictionloss: np.ndarray, effort_limits: np.ndarray, timestep: float = 0.001,
                  balance_inertia: bool = False) -> str:
    """The MJCF of the URDF (module docstring) with a ``motor`` actuator per joint of ``joints`` for
    mujoco_ros2_control's effort command interface: named as the joint, gear 1 (the control is the joint torque
    [N·m]), control limited to ± the effort limit where the URDF gives one; per-joint armature [kg·m²], damping
    [N·m·s/rad] and friction loss [N·m]; the simulation step ``timestep`` [s]; ``balance_inertia`` as for
    :func:`mujoco_urdf`."""
    mujoco = require_mujoco()
    spec = robot_spec(urdf_text, joints, balance_inertia)
    set_joint_dynamics(spec, joints, armature, damping, frictionloss)
    spec.option.timestep = float(timestep)
    for j, name in enumerate(joints):
        actuator = spec.add_actuator(name=name, target=name, trntype=mujoco.mjtTrn.mjTRN_JOINT)
        actuator.gear = [1.0, 0.0, 0.0, 0.0, 0.0, 0.0]
        limit = float(effort_limits[j])
        if np.isfinite(limit) and limit > 0:
            actuator.ctrllimited = int(mujoco.mjtLimited.mjLIMITED_TRUE)
            actuator.ctrlrange = [-limit, limit]
    try:
        spec.compile()
    except ValueError as error:
        raise InputError(f'MuJoCo cannot compile the model: {str(error).strip().splitlines()[0]}') from None
    return spec.to_xml()
