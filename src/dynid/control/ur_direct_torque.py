"""UR direct torque: what dynid sets and sends next to ``forward_effort_controller`` (docs/backends/ur.md).

UR applies a direct-torque command as τ_drive = τ_c + g_R(q; P_set) + s_v·F_v·q̇ + s_c·F_c·sgn(q̇) (the driver's
``doc/usage/force_torque_control.rst``; :mod:`dynid.sim.ur_modes` eq. (2)): gravity is the robot's, friction is
the robot's own model scaled per joint by the FrictionModelController's factors s_v, s_c ∈ [0, 1]. So dynid's
feedforward leaves gravity out and handles friction one of two ways, chosen per identification result
(:func:`ur_friction_plan`):

- ``ur``: UR's model, scaled to dynid's identified friction: s = F̂ / F_UR per joint and coefficient, clamped
  to [0, 1]; chosen where the clamp loses at most :data:`CLAMP_LOSS_MAX` of the identified friction on every
  joint (F̂ ≤ F_UR, or nearly), and dynid's feedforward then has no friction term;
- ``dynid``: UR's scales set to 0, dynid's identified friction in the feedforward (where UR's model is unknown
  or below what was identified).

F_UR, UR's own coefficients, are not published by UR; they are the robot file's (``ur_viscous``, ``ur_coulomb``
given by the caller, e.g. the twin's nominal friction). Without them the plan is ``dynid``.

The requests of UR's services are built for whichever ``ur_msgs`` is installed (it is not on PyPI): the
request classes are passed in, fields set only where the class has them (:func:`friction_model_request`,
:func:`set_payload_request`, :func:`gravity_request`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dynid.errors import InputError

#: Largest share of the identified friction the clamp to [0, 1] may drop on a joint for the ``ur`` plan.
CLAMP_LOSS_MAX = 0.1
FRICTION_SERVICE = '/friction_model_controller/set_friction_model_parameters'
FRICTION_TYPE = 'ur_msgs/srv/SetFrictionModelParameters'
GRAVITY_SERVICE = '/gravity_update_controller/set_gravity'
GRAVITY_TYPE = 'ur_msgs/srv/SetGravity'
INERTIA_FIELDS = ('ixx', 'iyy', 'izz', 'ixy', 'ixz', 'iyz')


@dataclass(frozen=True)
class FrictionPlan:
    """What dynid sets on a UR for friction and whether its feedforward carries friction (module docstring)."""

    mode: str  # 'ur' or 'dynid'
    viscous_scale: np.ndarray
    coulomb_scale: np.ndarray
    reason: str

    @property
    def feedforward_friction(self) -> bool:
        """Whether dynid's feedforward compensates friction (``compensate_friction``)."""
        return self.mode == 'dynid'

    def request_values(self) -> dict:
        """{'viscous_scale': [6], 'coulomb_scale': [6]} as the service takes them."""
        return {'viscous_scale': [float(v) for v in self.viscous_scale],
                'coulomb_scale': [float(c) for c in self.coulomb_scale]}

    def command(self) -> str:
        """The ``ros2 service call`` line that sets these scales."""
        v = ', '.join(f'{x:.4g}' for x in self.viscous_scale)
        c = ', '.join(f'{x:.4g}' for x in self.coulomb_scale)
        return (f'ros2 service call {FRICTION_SERVICE} {FRICTION_TYPE} "{{parameters: {{viscous_scale: [{v}], '
                f'coulomb_scale: [{c}]}}}}"')


def clamped_scales(identified, ur_model) -> np.ndarray:
    """s = F̂ / F_UR per joint, clamped to [0, 1] (0 where F_UR ≤ 0 or F̂ is not finite)."""
    identified, ur_model = (np.asarray(a, dtype=float) for a in (identified, ur_model))
    with np.errstate(divide='ignore', invalid='ignore'):
        scale = np.where(ur_model > 0, identified / ur_model, 0.0)
    return np.clip(np.nan_to_num(scale, nan=0.0, posinf=1.0, neginf=0.0), 0.0, 1.0)


def identified_friction(result, joint_names) -> tuple[np.ndarray, np.ndarray]:
    """(F_v [N·m·s/rad], F_c [N·m]) per joint of a viscous + Coulomb identification result (InputError without)."""
    names = set(result.parameter_names)
    n = len(joint_names)
    if result.recorded_coupling() is not None:
        raise InputError('the identification result was identified with coupled drives: its friction is the motors\' '
                         '(and a joint\'s own), not the per-joint friction UR\'s friction model takes')
    if not all(f'Fv_{j + 1}' in names and f'Fc_{j + 1}' in names for j in range(n)):
        raise InputError('the identification result has no viscous + Coulomb friction (Fv_j, Fc_j) per joint')
    return (np.array([result.value(f'Fv_{j + 1}') for j in range(n)]),
            np.array([result.value(f'Fc_{j + 1}') for j in range(n)]))


def ur_friction_plan(identified_viscous, identified_coulomb, ur_viscous=None, ur_coulomb=None,
                     mode: str | None = None) -> FrictionPlan:
    """The friction plan of module docstring from identified and UR's coefficients (per joint); ``mode`` 'ur' or
    'dynid' takes that plan whatever the clamp loses (None: chosen as the module docstring says)."""
    fv, fc = np.asarray(identified_viscous, dtype=float), np.asarray(identified_coulomb, dtype=float)
    zeros = np.zeros_like(fv)
    if mode not in (None, 'ur', 'dynid'):
        raise InputError(f"friction plan must be 'ur' or 'dynid', got {mode!r}")
    if mode == 'dynid':
        return FrictionPlan('dynid', zeros, zeros, "UR's compensation set to 0, dynid's identified friction fed "
                                                   'forward (as asked)')
    if ur_viscous is None or ur_coulomb is None:
        return FrictionPlan('dynid', zeros, zeros, "UR's own friction coefficients are not known: its "
                                                   'compensation set to 0, dynid\'s identified friction fed forward')
    uv, uc = np.asarray(ur_viscous, dtype=float), np.asarray(ur_coulomb, dtype=float)
    sv, sc = clamped_scales(fv, uv), clamped_scales(fc, uc)
    lost = np.maximum(np.abs(fv - sv * uv) / np.maximum(np.abs(fv), 1e-9),
                      np.abs(fc - sc * uc) / np.maximum(np.abs(fc), 1e-9))
    if mode == 'ur' or np.all(lost <= CLAMP_LOSS_MAX):
        return FrictionPlan('ur', sv, sc, f"UR's friction model scaled to the identified friction (at most "
                                          f'{100 * lost.max():.0f} % of it lost to the [0, 1] clamp'
                                          + (', as asked)' if mode == 'ur' else ')'))
    return FrictionPlan('dynid', zeros, zeros, f"UR's friction model is below the identified friction on "
                                               f'{int(np.count_nonzero(lost > CLAMP_LOSS_MAX))} joint(s) (a scale '
                                               'above 1 would be needed): set to 0, dynid\'s fed forward')


def friction_model_request(request_type, plan: FrictionPlan):
    """A ``SetFrictionModelParameters.Request`` of ``request_type`` carrying the plan's scales (six each)."""
    if len(plan.viscous_scale) != 6:
        raise InputError(f'the friction model controller takes 6 scales, got {len(plan.viscous_scale)}')
    request = request_type()
    values = plan.request_values()
    request.parameters.viscous_scale = values['viscous_scale']
    request.parameters.coulomb_scale = values['coulomb_scale']
    return request


def set_payload_request(request_type, values: dict, transition_time_s: float = 0.0):
    """A ``SetPayload.Request`` of ``request_type`` from :func:`dynid.payload.robot_calls.ur_set_payload`'s request
    values: the main branch's ur_msgs (``payload``: geometry_msgs/Inertia ``m``, ``com``, ``ixx`` … and
    ``transition_time``) or the Kilted/Jazzy ones (``mass``, ``center_of_gravity``, ``ixx`` …,
    ``transition_time``), each field only where the class has it."""
    if not np.isfinite(transition_time_s) or transition_time_s < 0:
        raise InputError(f'payload transition_time must be >= 0 s, got {transition_time_s}')
    request = request_type()
    com = values['center_of_gravity']
    if hasattr(request, 'payload'):  # main: geometry_msgs/Inertia
        request.payload.m = float(values['mass'])
        for axis in 'xyz':
            setattr(request.payload.com, axis, float(com[axis]))
        target = request.payload
    else:
        request.mass = float(values['mass'])
        for axis in 'xyz':
            setattr(request.center_of_gravity, axis, float(com[axis]))
        target = request
    for name in INERTIA_FIELDS:
        if name in values and hasattr(target, name):
            setattr(target, name, float(values[name]))
    if hasattr(request, 'transition_time'):
        seconds = int(transition_time_s)
        request.transition_time.sec = seconds
        request.transition_time.nanosec = int(round((transition_time_s - seconds) * 1e9))
    return request


def gravity_in_base(robot) -> np.ndarray:
    """The gravity vector [m/s²] of ``robot``'s description in its base frame (towards the Earth), as UR's
    ``~/set_gravity`` takes it: not (0, 0, −9.81) where the mounting is tilted."""
    return np.asarray(robot.gravity, dtype=float)


def gravity_request(request_type, gravity, frame: str = 'base'):
    """A ``SetGravity.Request`` of ``request_type``: ``gravity`` (Vector3Stamped, towards the Earth) in ``frame``."""
    g = np.asarray(gravity, dtype=float).reshape(-1)
    if g.shape != (3,) or not np.all(np.isfinite(g)) or np.linalg.norm(g) == 0:
        raise InputError(f'gravity must be 3 finite numbers, not all 0, got {g.tolist()}')
    request = request_type()
    request.gravity.header.frame_id = frame
    request.gravity.vector.x, request.gravity.vector.y, request.gravity.vector.z = (float(v) for v in g)
    return request
