"""The twin's inner loop: per internal step, pinocchio's M(q) and c(q, q̇) of the true model, then one
compiled call that advances the plant (:func:`dynid.sim.integrator.plant_step`), reads the motor encoder
and closes the controller's feedback (:func:`dynid.sim.controller.feedback_law`), and records the
sample at the end of each output period.

Everything else a twin sample needs (reference, the controller's model-based torque and set-points,
sensor noise) depends on time alone and is computed for a call's samples at once by
:class:`dynid.sim.twin.DigitalTwin`.
"""

from __future__ import annotations

import numba
import numpy as np
import pinocchio as pin

from dynid.sim.controller import feedback_law
from dynid.sim.integrator import COMMAND, DQ_HALF, DTHETA, Q_HALF, RECORDED, THETA, plant_step
from dynid.sim.plant import FlexibleJointPlant

#: Rows of a step plan (:func:`run_steps`): rotor set-point θ_r [rad], q̇_r [rad/s], the controller's
#: model-based torque and the external effort [N·m].
PLAN_ROWS = ('theta_r', 'dq_r', 'internal', 'effort')


@numba.njit(cache=True)
def _twin_step(mass, bias, coefficients, alpha, egms_state, egms_laws, backlash_table, work, gains, plan, step, h,
               substeps, table):
    """One internal step: plant, encoder and feedback; the sample into ``table`` at a period's end."""
    plant_step(mass, bias, coefficients, alpha, egms_state, egms_laws, backlash_table, work, h)
    feedback_law(gains, work[THETA], work[DTHETA], plan[0, step], plan[1, step], plan[2, step], plan[3, step], h,
                 work[COMMAND])
    if (step + 1) % substeps == 0:
        sample = step // substeps
        for row in range(RECORDED):
            for j in range(work.shape[1]):
                table[sample, row, j] = work[row, j]


def run_steps(plant: FlexibleJointPlant, gains: np.ndarray, command: np.ndarray, plan: np.ndarray, first: int,
              last: int, h: float, substeps: int, table: np.ndarray, external=None) -> np.ndarray:
    """Steps ``first`` … ``last`` − 1 of a call's plan (``first`` at a sample), of h [s] each; returns the
    controller's command [A] for the step after them.

    Args:
        plant: the plant (its attributes are loaded before and stored after the steps).
        gains: the controller's array (:attr:`dynid.sim.controller.JointController.gains`), advanced in place.
        command: the motor current [A] of step ``first`` (the controller's last output).
        plan: (4, steps, n) set-points of the call's steps (:data:`PLAN_ROWS`).
        table: (samples, RECORDED, n) receives the work rows at each sample (sample k of the call at
            row k; :data:`dynid.sim.integrator.WORK_ROWS`).
        external: ``external(step, q)`` → the external joint torque τ_ext (n,) [N·m] at step ``step`` of the
            call with the links at q (the step's half-step position), or None where none acts; None: no contacts.
            It enters the links' equation (the rigid-body terms less τ_ext: M·q̈ + c + g = τ_j + τ_ext).
    """
    work, egms_state = plant.load(h)
    work[COMMAND] = command
    arrays = plant.step_arrays(egms_state)
    if external is not None:  # contacts: the rigid-body terms less τ_ext, in the plant's coordinates
        inverse = plant.inverse_coupling
        for step in range(first, last):
            mass, bias = plant.rigid_body_terms(work)
            q_half = work[Q_HALF] if inverse is None else inverse @ work[Q_HALF]
            tau = external(step, q_half)
            if tau is not None:
                bias = bias - (tau if inverse is None else inverse.T @ tau)
            _twin_step(mass, bias, *arrays, work, gains, plan, step, h, substeps, table)
    elif plant.needs_configuration:  # continuous joints: pinocchio takes cos/sin pairs
        for step in range(first, last):
            _twin_step(*plant.rigid_body_terms(work), *arrays, work, gains, plan, step, h, substeps, table)
    else:
        model, data = plant.pinocchio
        crba, nonlinear_effects = pin.crba, pin.nonLinearEffects
        q_half, dq_half = work[Q_HALF], work[DQ_HALF]
        for step in range(first, last):
            _twin_step(crba(model, data, q_half), nonlinear_effects(model, data, q_half, dq_half), *arrays, work,
                       gains, plan, step, h, substeps, table)
    plant.store(work, egms_state)
    return work[COMMAND].copy()
