"""The direct dynamics of an identified rigid model under its joint controller, at a recording's samples
(Gautier, Janot & Vandanjon 2013, eqs. (9)–(11): the simulation of DIDIM; Janot, Vandanjon & Gautier 2014, §III:
the instruments of IDIM-IV are the regressor of its states).

    (M(q) + diag(Ia))·q̈ = τ_cmd − c(q, q̇)·q̇ − g(q) − τ_f(q̇)

with τ_cmd the controller's (:mod:`dynid.identify.closed_loop.controller`).

M and c·q̇ + g come from pinocchio (CRBA and the non-linear effects) on standard parameters that give the identified
base parameters exactly (:func:`plant_of`), τ_f from the identified friction law. The integrator is the explicit
midpoint rule (second order, two evaluations a step) at a fixed step, the sample period divided into the fewest equal
substeps of at most ``max_step_s`` (1 ms: the controllers of industrial arms close their loops at 1–8 kHz, a
closed-loop bandwidth of tens of Hz leaves ω·h ≤ 0.3, well inside the method's stability), so that every sample is a
step boundary and the reference (given at the samples) is interpolated between them: q_r by cubic Hermite
interpolation with q̇_r, q̇_r and the feedforward (the reference's effort and the controller's model-based term,
:meth:`ControllerGains.feedforward_torque`) linearly. The loop starts on its reference, its integrator holding
what the start asks of the model (at rest: gravity), as a controller that has been holding position does.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pinocchio as pin

from dynid.errors import InputError
from dynid.identify.closed_loop.controller import ControllerGains
from dynid.io.dataset import Reference
from dynid.model.robot import RobotModel

#: the longest integration step [s] (module docstring)
MAX_STEP_S = 1e-3


@dataclass(frozen=True)
class RigidPlant:
    """The identified model as a plant: ``standard`` (10·n) link parameters in pinocchio's order, ``rotor_inertia``
    (n) [kg·m²] on q̈_j, ``friction(q̇) -> τ_f`` [N·m] (..., n) the identified law."""

    robot: RobotModel
    standard: np.ndarray
    rotor_inertia: np.ndarray
    friction: Callable[[np.ndarray], np.ndarray]


@dataclass(frozen=True)
class ClosedLoopRun:
    """The simulated states at the samples (N, n): q_s [rad], q̇_s [rad/s], q̈_s [rad/s²] and the controller's
    torque τ_s [N·m] (= the model's torque at those states)."""

    q: np.ndarray
    dq: np.ndarray
    ddq: np.ndarray
    torque: np.ndarray


class _Dynamics:
    """q̈ and τ_cmd of one state (pinocchio on the plant's own copy of the model, the rotor inertia as its armature:
    ABA solves (M + diag(Ia))·q̈ = τ − c·q̇ − g in O(n))."""

    def __init__(self, plant: RigidPlant, gains: ControllerGains) -> None:
        robot = plant.robot
        self.model = pin.Model(robot.pinocchio_model)
        for j in range(1, self.model.njoints):
            self.model.inertias[j] = pin.Inertia.FromDynamicParameters(plant.standard[10 * (j - 1):10 * j])
        self.model.armature = np.asarray(plant.rotor_inertia, dtype=float).copy()
        self.data = self.model.createData()
        self.configuration = robot.configuration_vector if self.model.nq != robot.n else np.asarray
        self.friction, self.gains = plant.friction, gains

    def bias(self, q: np.ndarray, dq: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(M + diag(Ia), c·q̇ + g + τ_f) at (q, q̇)."""
        config = self.configuration(q)
        mass = pin.crba(self.model, self.data, config)  # the armature on its diagonal
        mass = np.triu(mass) + np.triu(mass, 1).T
        return mass, pin.nonLinearEffects(self.model, self.data, config, dq) + self.friction(dq)

    def __call__(self, q, dq, integral, q_r, dq_r, feedforward) -> tuple[np.ndarray, np.ndarray]:
        """(q̈, τ_cmd) of the state and the reference (its feedforward) at that instant."""
        torque = self.gains.torque(q_r - q, dq_r - dq, integral, feedforward)
        return pin.aba(self.model, self.data, self.configuration(q), dq, torque - self.friction(dq)), torque


def simulate(plant: RigidPlant, gains: ControllerGains, t: np.ndarray, reference: Reference,
             max_step_s: float = MAX_STEP_S) -> ClosedLoopRun:
    """The closed loop of ``plant`` under ``gains`` following ``reference`` (its q, q̇, optional q̈ and effort at
    the uniform sample times ``t`` [s]), at the samples (module docstring). InputError where the loop diverges."""
    period = float(np.median(np.diff(t)))
    substeps = max(1, int(np.ceil(period / max_step_s - 1e-9)))
    h = period / substeps
    feedforward = gains.feedforward_torque(reference)
    q_r, dq_r, effort = _interpolated(reference, feedforward, substeps, period)
    dynamics = _Dynamics(plant, gains)
    n = q_r.shape[1]
    q, dq = reference.q[0].copy(), reference.dq[0].copy()
    integral = _held_integral(dynamics, gains, reference, feedforward[0])
    out = np.empty((4, len(t), n))
    for k in range(len(t)):
        m = 2 * k * substeps
        out[2, k], out[3, k] = dynamics(q, dq, integral, q_r[m], dq_r[m], effort[m])
        out[0, k], out[1, k] = q, dq
        if k == len(t) - 1:
            break
        for step in range(substeps):
            m = 2 * (k * substeps + step)
            ddq, _ = dynamics(q, dq, integral, q_r[m], dq_r[m], effort[m])
            q_half, dq_half, i_half = q + 0.5 * h * dq, dq + 0.5 * h * ddq, integral + 0.5 * h * (q_r[m] - q)
            ddq, _ = dynamics(q_half, dq_half, i_half, q_r[m + 1], dq_r[m + 1], effort[m + 1])
            q, dq, integral = q + h * dq_half, dq + h * ddq, integral + h * (q_r[m + 1] - q_half)
        if not np.all(np.isfinite(dq)) or np.abs(q - reference.q[k + 1]).max() > np.pi:
            raise InputError(f'the closed-loop simulation diverged at {t[k + 1] - t[0]:.3g} s (tracking error above '
                             f'π rad): the controller gains ({gains.source or "given"}) or the model do not hold '
                             f'the recording\'s loop; check {{controller_gains}}', fields=('controller_gains',))
    return ClosedLoopRun(*out)


def _held_integral(dynamics: _Dynamics, gains: ControllerGains, reference: Reference, feedforward: np.ndarray
                   ) -> np.ndarray:
    """∫(q_r − q) at the start that makes τ_cmd (its ``feedforward`` there) what the model needs to follow the
    reference there (0 where K_i is 0)."""
    ddq = np.zeros_like(reference.q[0]) if reference.ddq is None else reference.ddq[0]
    mass, bias = dynamics.bias(reference.q[0], reference.dq[0])
    needed = mass @ ddq + bias - feedforward
    return np.divide(needed, gains.ki, out=np.zeros_like(needed), where=gains.ki != 0)


def _interpolated(reference: Reference, effort: np.ndarray, substeps: int, period: float):
    """(q_r, q̇_r, the feedforward ``effort``) at every half step (2·substeps per period): q_r cubic Hermite on q̇_r,
    the others linear."""
    fraction = np.arange(2 * substeps) / (2 * substeps)
    q0, q1, v0, v1 = reference.q[:-1], reference.q[1:], reference.dq[:-1], reference.dq[1:]
    s = fraction[None, :, None]
    h00, h10, h01, h11 = 2 * s**3 - 3 * s**2 + 1, s**3 - 2 * s**2 + s, -2 * s**3 + 3 * s**2, s**3 - s**2
    q = h00 * q0[:, None] + h10 * period * v0[:, None] + h01 * q1[:, None] + h11 * period * v1[:, None]
    dq = v0[:, None] + s * (v1 - v0)[:, None]
    ff = effort[:-1, None] + s * (effort[1:] - effort[:-1])[:, None]
    n = reference.q.shape[1]
    return tuple(np.concatenate([a.reshape(-1, n), b[-1:]])
                 for a, b in zip((q, dq, ff), (reference.q, reference.dq, effort), strict=True))
