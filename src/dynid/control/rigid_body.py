"""Model-based terms: the rigid-body torque M(q)q̈ + C(q, q̇)q̇ + g(q) and the rotor inertia B·q̈.

**rigid_body** — τ_J = M(q)q̈ + C(q, q̇)q̇ + g(q) [N·m, link side] of the identified model (Madsen 2020,
ch.6 eq. (30), u_FF without friction; thesis ch.2 eq. (2.63)), payload included. The identification
result holds base parameters χ̂_b; the torque W_b(q, q̇, q̈)·χ̂_b is what
:class:`dynid.identify.result.torque.RigidBodyTorque` computes through the regressor. Any standard parameter
vector χ with K·χ = χ̂_b (K the regrouping matrix) gives the same torque W·χ = W_b·K·χ at every state,
so the term takes the robot's nominal standard parameters and puts the difference χ̂_b − K·χ_nominal
into each base parameter's own base column, then runs pinocchio's RNEA with them (several times faster
than the regressor). This is used "where consistent": every link mass must stay > 0 (pinocchio stores a
body by its centre of mass) and RNEA must reproduce the regressor torque on random states to 1e-9 of
the torque scale; otherwise the term falls back to the regressor (``method`` says which). Without a
result the term uses the robot model's own (URDF or built-in) parameters. A physically consistent result
(``dynid identify --physical``) carries its standard parameters, realizable bodies with K·χ = χ̂_b; the term
runs RNEA on those (same torque, and every mass is positive, so no fallback is needed).

**rotor_inertia** — B·q̈ [N·m, link side], B the rotor inertia reflected to the link side (the motor
side of the rotor equation B·θ̈ + f + τ_j = K_τ·i with θ̈ = q̈ for a rigid joint; thesis ch.2 eq. (2.63);
Madsen 2020 ch.6 eq. (30) leaves it out, so it is a term of its own). B is the identified Ia_j where the result holds it
as a base parameter; zero where the identification regrouped Ia_j into a link parameter (its B·q̈ is
then already in the rigid-body torque); the drive data's B (``robot.drives``) where the result did not
identify rotor inertia (the torque was compensated with it, or measured on the link side). With coupled joints
(the drives' coupling C of the result, θ = C·q) each motor's rotor turns with θ̈ = C·q̈: the term is Cᵀ·(B·C·q̈).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pinocchio as pin

from dynid.control.context import FeedforwardContext
from dynid.control.plugins import TermPlugin
from dynid.control.term import FeedforwardTerm, per_joint, term_options
from dynid.errors import InputError
from dynid.identify import IdentificationResult, RigidBodyTorque, result_drives, rotor_inertia
from dynid.model.inertial import Payload, to_pinocchio_inertia
from dynid.model.robot import RobotModel

#: Random states on which the RNEA form is checked against the regressor, and the relative tolerance.
CHECK_SAMPLES = 8
CHECK_TOLERANCE = 1e-9


def consistent_standard_parameters(robot: RobotModel, torque: RigidBodyTorque) -> np.ndarray:
    """Standard parameters χ (10·n) with K·χ = χ̂_b for the arm's identified base parameters (module docstring)."""
    arm = torque.arm_columns
    rows = np.flatnonzero(torque.base.indices < arm)
    regrouping = torque.base.regrouping[rows][:, :arm]
    standard = robot.standard_parameters.copy()
    standard[torque.base.indices[rows]] += torque.values[rows] - regrouping @ standard
    return standard


def payload_of(value) -> Payload | None:
    """A payload from a :class:`Payload`, a mapping {mass [kg], com [m], inertia [kg·m²]} or None."""
    if value is None or isinstance(value, Payload):
        return value
    if isinstance(value, Mapping) and set(value) <= {'mass', 'com', 'inertia'} and 'mass' in value:
        return Payload(**value)
    raise InputError(f'payload must be {{mass, com, inertia}} (kg, m in the flange frame, kg·m² about the '
                     f'centre of mass) or None, got {value!r}')


class RigidBodyTerm(FeedforwardTerm):
    """τ_J = M(q)q̈ + C(q, q̇)q̇ + g(q) [N·m] of the identified model (module docstring).

    Args:
        robot: the robot model. result: its identification, or None for the model's own parameters.
        payload: payload at the flange, used when the context gives none.
        threads: threads of pinocchio's batch RNEA.

    Attributes:
        method: ``'rnea'`` or ``'regressor'`` (fallback). standard_parameters: χ of the RNEA form, or None.
    """

    name = 'rigid_body'
    provides_joint_torque = True

    def __init__(self, robot: RobotModel, result: IdentificationResult | None = None,
                 payload: Payload | None = None, threads: int = 1) -> None:
        self.robot, self.payload, self.threads, self._result = robot, payload, int(threads), result
        self._regressor_torque = None if result is None else RigidBodyTorque(result, robot)
        self._models: dict = {}  # payload parameters -> (model, data, pool) or RigidBodyTorque
        self._last: tuple = (object(), None)  # (payload, model) of the last call
        self._continuous = 'continuous' in robot.joint_types  # configuration vector (cos, sin) differs from q
        physical = None if result is None else result.standard_parameters()
        self.standard_parameters = robot.standard_parameters if result is None else physical if physical is not None \
            else consistent_standard_parameters(robot, self._regressor_torque)
        self.method = 'rnea' if result is None or self._rnea_is_exact() else 'regressor'
        if self.method == 'regressor':
            self.standard_parameters = None
            self._models.clear()
            self._last = (object(), None)

    @classmethod
    def from_result(cls, robot: RobotModel, result: IdentificationResult | None, options=None) -> RigidBodyTerm:
        """Factory. Options: ``payload`` ({mass, com, inertia} or None), ``threads`` (>= 1, default 1)."""
        o = term_options(cls.name, options, {'payload': None, 'threads': 1})
        if not isinstance(o['threads'], (int, np.integer)) or o['threads'] < 1:
            raise InputError(f'rigid_body: threads must be an integer >= 1, got {o["threads"]!r}')
        return cls(robot, result, payload_of(o['payload']), int(o['threads']))

    def _rnea_is_exact(self) -> bool:
        masses = self.standard_parameters[0::10]
        if np.any(masses <= 0):
            return False
        q, dq, ddq = self.robot.random_states(CHECK_SAMPLES, seed=11)
        expected = self._regressor_torque(q, dq, ddq)
        error = np.abs(self._batch(q, dq, ddq, None) - expected).max()
        return bool(error <= CHECK_TOLERANCE * (1.0 + np.abs(expected).max()))

    def _model(self, payload: Payload | None):
        """The RNEA model (model, data, pool) or regressor torque for a payload, cached per payload."""
        if payload is self._last[0]:  # the common case: the same payload object as last time
            return self._last[1]
        key = None if payload is None else tuple(payload.parameters())
        found = self._models.get(key)
        if found is not None:
            self._last = (payload, found)
            return found
        if len(self._models) > 8:  # payloads change rarely; keep the cache small
            self._models.clear()
        if self.standard_parameters is None:
            found = RigidBodyTorque(self._result, self.robot, payload) if payload is not None \
                else self._regressor_torque
        else:
            model = pin.Model(self.robot.pinocchio_model)
            for j in range(self.robot.n):
                model.inertias[j + 1] = to_pinocchio_inertia(self.standard_parameters[10 * j:10 * j + 10])
            if payload is not None:
                model.inertias[self.robot.n] = model.inertias[self.robot.n] + self.robot.flange_placement.act(
                    to_pinocchio_inertia(payload.parameters()))
            found = (model, model.createData(), pin.ModelPool(model, self.threads))
        self._models[key] = found
        self._last = (payload, found)
        return found

    def _batch(self, q, dq, ddq, payload) -> np.ndarray:
        model = self._model(payload)
        if not isinstance(model, tuple):
            return model(q, dq, ddq)
        _, _, pool = model
        tau = np.empty((self.robot.n, q.shape[0]), order='F')
        if q.shape[0]:
            pin.rneaInParallel(self.threads, pool, np.asfortranarray(self.robot.configuration(q).T),
                               np.asfortranarray(dq.T), np.asfortranarray(ddq.T), tau)
        return tau.T

    def evaluate(self, q, dq, ddq, context: FeedforwardContext) -> np.ndarray:
        """τ_J (N, n) [N·m] for (N, n) states."""
        return self._batch(q, dq, ddq, context.payload or self.payload)

    def step(self, q, dq, ddq, context: FeedforwardContext) -> np.ndarray:
        """τ_J (n,) [N·m] for one state (n,)."""
        model = self._model(context.payload or self.payload)
        if not isinstance(model, tuple):
            return model(q, dq, ddq)
        return pin.rnea(model[0], model[1], self.robot.configuration_vector(q) if self._continuous else q, dq, ddq)

    def gravity(self, q, context: FeedforwardContext) -> np.ndarray:
        """g(q) [N·m] of the same model, (N, n) or (n,) like q."""
        zeros = np.zeros_like(q)
        if q.ndim == 1:
            return self.step(q, zeros, zeros, context)
        return self.evaluate(q, zeros, zeros, context)


class RotorInertiaTerm(FeedforwardTerm):
    """B·q̈ [N·m, link side] (module docstring). ``inertia``: B (n,) [kg·m²], per motor. ``coupling``: the drives'
    C (θ = C·q) of a result identified with coupled joints, or None: then the term is Cᵀ·(B·C·q̈), each motor's
    rotor turning with θ̈ = C·q̈ and reaching the joints it drives by virtual work."""

    name = 'rotor_inertia'

    def __init__(self, inertia: np.ndarray, coupling: np.ndarray | None = None) -> None:
        self.inertia = np.asarray(inertia, dtype=float)
        self.coupling = None if coupling is None else np.asarray(coupling, dtype=float)

    @classmethod
    def from_result(cls, robot: RobotModel, result: IdentificationResult | None, options=None) -> RotorInertiaTerm:
        """Factory. Option ``rotor_inertia`` [kg·m², link side]: a value, one per joint or {joint: value}."""
        o = term_options(cls.name, options, {'rotor_inertia': None})
        drives = None if result is None else result_drives(result, robot)
        coupling = None if drives is None else drives.coupling
        if o['rotor_inertia'] is not None:
            return cls(per_joint(o['rotor_inertia'], robot.joint_names, 'rotor_inertia: rotor_inertia', 0.0),
                       coupling)
        return cls(rotor_inertia(robot, result, regrouped_as_zero=True), coupling)

    def evaluate(self, q, dq, ddq, context: FeedforwardContext) -> np.ndarray:
        if self.coupling is None:
            return ddq * self.inertia
        return ((ddq @ self.coupling.T) * self.inertia) @ self.coupling

    def step(self, q, dq, ddq, context: FeedforwardContext) -> np.ndarray:
        return self.evaluate(q, dq, ddq, context)


RIGID_BODY = TermPlugin('rigid_body', 'M(q)q̈ + C(q, q̇)q̇ + g(q) of the identified model, payload included',
                        RigidBodyTerm.from_result)
ROTOR_INERTIA = TermPlugin('rotor_inertia', 'B·q̈ of the rotor inertias reflected to the link side',
                           RotorInertiaTerm.from_result)
