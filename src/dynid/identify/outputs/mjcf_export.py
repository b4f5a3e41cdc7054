"""An MJCF (MuJoCo model) with identified dynamics: inertials, armature, damping and friction loss.

Input: a physically consistent identification (the ``physical`` section of a result;
:mod:`dynid.identify.solve.physical`) and the robot it was identified for. A result without one is refused
(identify with ``--physical``): the standard parameters of an unconstrained identification are not
bodies a simulator can hold (negative masses, inertias that violate the triangle inequality), and
taking the robot file's inertials for the links the data could not identify would give a model
whose torques are not the result's.

The file is built by MuJoCo itself: :func:`dynid.identify.outputs.urdf_export.export_urdf` writes the
identified inertials into the robot's URDF, MuJoCo's URDF compiler reads it
(:mod:`dynid.model.mjcf`), and the joint properties are set on its spec before ``to_xml``:

================ ================================================= ====================
MJCF joint       identified                                        unit
================ ================================================= ====================
``armature``     rotor inertia reflected to the link side:         kg·m² (N·m·s²/rad)
                 the physical section's ``Ia`` where the result
                 identified it (plus the drive data's B where the
                 currents were rotor-compensated first: ``Ia`` is
                 then the excess), the drive data otherwise
``damping``      viscous friction ``Fv`` (the law's roles)         N·m·s/rad
``frictionloss`` Coulomb friction ``Fc`` (the law's roles)         N·m
================ ================================================= ====================

What MuJoCo's joint cannot express is left out and named (:attr:`MjcfExport.not_expressed`): the friction of a
motor that turns several joints (coupled drives; a joint's own friction and a motor's that turns one joint are the
joint's: :func:`dynid.identify.outputs.urdf_export.joint_friction_table`), the torque offset ``tau0`` (a sensor's, not
the joint's), load-dependent friction (``Fl``, ``fL``), temperature-dependent friction (Hamon's coefficients, ``beta``),
the Stribeck effect (``Fs``, the excess the model choice may keep), the viscous power term of Li et al.'s
comprehensive law where a joint's exponent is not 1 (``fv``; its Fc and, where the exponent is 1, Fv are the joint's:
:func:`dynid.identify.outputs.urdf_export.joint_friction_table`) and the smooth sign of dynid's Coulomb term
(MuJoCo's friction loss is a dry-friction constraint, at most ``frictionloss`` in magnitude, with the solver's
softness).

Check (:func:`mjcf_torque_error`): MuJoCo's ``mj_inverse`` of the written model, friction loss
disabled, against dynid's prediction from the same result, τ = W_b·χ̂_b + B·q̈ + Fv·q̇
(:class:`dynid.identify.result.torque.RigidBodyTorque`, :func:`dynid.identify.result.torque.rotor_inertia`). Friction
loss is not part of it: it is a constraint force, solved with the forward dynamics; the file holds
``Fc`` exactly (tested).
"""

from __future__ import annotations

import io
from dataclasses import dataclass, field

import numpy as np

from dynid.errors import InputError
from dynid.identify.outputs.urdf_export import export_urdf, friction_not_held, joint_friction_table, physical_section
from dynid.identify.result.result import IdentificationResult
from dynid.identify.result.torque import RigidBodyTorque, compensated_rotor, rotor_inertia
from dynid.model import mjcf
from dynid.model.robot import RobotModel


@dataclass
class MjcfExport:
    """The written model: MJCF text, per joint armature, damping, friction loss, and what was left out.

    Attributes:
        text: the MJCF.
        joints: the result's joints.
        armature: [kg·m²] (n,) in ``joints`` order.
        damping: [N·m·s/rad] (n,) in ``joints`` order.
        frictionloss: [N·m] (n,) in ``joints`` order.
        armature_source: per joint, where the armature comes from.
        not_expressed: the result's friction symbols MuJoCo has no joint field for, with a value.
        friction_note: the sentence naming the friction law whose roles give a joint with friction no level
            (:func:`dynid.identify.outputs.urdf_export.friction_not_held`), '' where there is none.
    """

    text: str
    joints: list[str]
    armature: np.ndarray
    damping: np.ndarray
    frictionloss: np.ndarray
    armature_source: list[str]
    not_expressed: list[str] = field(default_factory=list)
    friction_note: str = ''


def _armature(result: IdentificationResult, robot: RobotModel) -> tuple[np.ndarray, list[str]]:
    identified = result.physical_section.get('rotor_inertia') or {}
    compensated = compensated_rotor(result, robot)
    values, sources = np.zeros(robot.n), []
    for j, joint in enumerate(robot.joint_names):
        if joint in identified:
            values[j] = identified[joint] + compensated[j]
            source = 'identified' if compensated[j] == 0 else 'drive data + identified excess'
        elif robot.drives is not None:
            values[j], source = robot.drives.rotor_inertia[j], 'drive data'
        else:
            source = 'none (no drive data, not identified): 0'
        sources.append(source)
    return values, sources


def export_mjcf(result: IdentificationResult, robot: RobotModel) -> MjcfExport:
    """The MJCF of ``robot`` with the identified dynamics of ``result`` (module docstring)."""
    physical_section(result)
    if tuple(result.joint_names) != tuple(robot.joint_names):
        raise InputError(f'the result is for joints {list(result.joint_names)}, the robot {robot.name!r} has '
                         f'{list(robot.joint_names)}')
    urdf = mjcf.robot_urdf_text(robot)
    identified = export_urdf(result, io.StringIO(urdf), label=f'the URDF of {robot.name}')
    friction, motors_left = joint_friction_table(result)
    damping = np.array([friction[j].get('Fv', 0.0) for j in robot.joint_names])
    coulomb = np.array([friction[j].get('Fc', 0.0) for j in robot.joint_names])
    if np.any(damping < 0) or np.any(coulomb < 0):
        raise InputError('the result has negative viscous or Coulomb friction, which MuJoCo cannot hold')
    armature, sources = _armature(result, robot)
    spec = mjcf.robot_spec(identified, robot.joint_names)
    mjcf.set_joint_dynamics(spec, robot.joint_names, armature, damping, coulomb)
    spec.modelname = robot.name
    spec.compile()
    header = (f' dynid: robot {result.robot}, {result.method} identification (physically consistent). joint '
              f'armature = reflected rotor inertia [kg m^2], damping = viscous friction [N m s/rad], frictionloss '
              f'= Coulomb friction [N m]. ')
    left = sorted({f'{symbol}_{j + 1}' for j, joint in enumerate(robot.joint_names)
                   for symbol, value in friction[joint].items()
                   if symbol not in ('Fc', 'Fv') and value != 0.0} | set(motors_left))
    note = friction_not_held(result)
    text = spec.to_xml()
    text = text.replace('<mujoco', f'<!--{header}-->\n<mujoco', 1)
    if note:
        text = text.replace('<mujoco', f'<!-- dynid: {note} -->\n<mujoco', 1)
    if left:
        text = text.replace('<mujoco', f'<!-- dynid: not expressible in MuJoCo, left out: {", ".join(left)} -->\n'
                            '<mujoco', 1)
    return MjcfExport(text, list(robot.joint_names), armature, damping, coulomb, sources, left, note)


def dynid_torque(result: IdentificationResult, robot: RobotModel, q: np.ndarray, dq: np.ndarray,
                 ddq: np.ndarray) -> np.ndarray:
    """dynid's joint torque (N, n) [N·m] without Coulomb friction and offset: W_b·χ̂_b + B·q̈ + Fv·q̇ (the viscous
    friction the joints hold: :func:`dynid.identify.outputs.urdf_export.joint_friction_table`)."""
    friction = joint_friction_table(result)[0]
    viscous = np.array([friction[j].get('Fv', 0.0) for j in robot.joint_names])
    # with rotor compensation, B (the drive data's) + the identified excess
    # (dynid.identify.result.torque.compensated_rotor)
    rotor = rotor_inertia(robot, result, regrouped_as_zero=True) if _rotor_known(result, robot) else np.zeros(robot.n)
    return RigidBodyTorque(result, robot)(q, dq, ddq) + rotor * ddq + viscous * dq


def _rotor_known(result: IdentificationResult, robot: RobotModel) -> bool:
    return bool(result.model.get('rotor_inertia_identified', False)) or robot.drives is not None


def mjcf_torque_error(export: MjcfExport, result: IdentificationResult, robot: RobotModel,
                      samples: int = 200, seed: int = 11) -> float:
    """RMS of (mj_inverse − dynid) over all joints and random states of ``robot``, relative to the RMS of dynid's
    torque (module docstring: friction loss disabled). The written text is read back by MuJoCo."""
    mujoco = mjcf.require_mujoco()
    model = mujoco.MjModel.from_xml_string(export.text)
    q, dq, ddq = robot.random_states(samples, seed=seed)
    expected = dynid_torque(result, robot, q, dq, ddq)
    got = mjcf.inverse_dynamics(model, export.joints, q, dq, ddq)
    return float(np.sqrt(np.mean((got - expected) ** 2)) / max(np.sqrt(np.mean(expected ** 2)), 1e-12))
