"""The check step of an identification: what a fit says of itself and whether its model is a physical robot.

- :func:`fit_warnings`: the parameters held at a value (by reason), the WLS noise estimates floored, the parameters
  poorly identified, and a misfit the residual's autocorrelation shows.
- :func:`check`: the identified mass matrix over random states (with a physical step) and the identified gravity
  torque against the robot file's at (up to ~2000 of) the recorded poses, and the joints whose offset and gravity
  torque those poses cannot tell apart with what decided the split; a new result with these.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from dynid.identify.equations.problem import IdentificationProblem
from dynid.identify.result.quality import (
    NEGLIGIBLE_TORQUE_FRACTION,
    POORLY_IDENTIFIED_PERCENT,
    misfit_warning,
    negligible_mask,
)
from dynid.identify.result.result import IdentificationResult
from dynid.identify.steps.fit import Fit
from dynid.identify.steps.plausibility import gravity_scale_check, offset_gravity_split


def fit_warnings(problem: IdentificationProblem, solved: Fit, autocorrelation: np.ndarray,
                     sizes: tuple[np.ndarray, float] | None) -> list[str]:
    """The parameters held at a value (by reason), the noise estimates floored, the parameters poorly identified and a
    misfit the residual's autocorrelation shows. ``sizes``: the columns' RMS and the torque's (:func:`_result`), or
    None."""
    reasons: dict[str, list[str]] = {}
    order = {name: k for k, name in enumerate(problem.parameter_names())}  # said in the parameters' order
    for name, entry in sorted(problem.held.items(), key=lambda item: order.get(item[0], len(order))):
        if not entry['reason'].startswith('model choice'):  # the choice's own lines say what it left out
            reasons.setdefault(entry['reason'], []).append(f'{name} = {entry["value"]:.4g}')
    warnings = [f'held, not identified: {", ".join(held)} ({reason})' for reason, held in reasons.items()]
    noise = solved.estimate.extra.get('noise')
    floored = None if noise is None else noise.floored_text(problem.robot.joint_names)
    if floored:
        warnings.append(floored)
    relative = 100.0 * solved.std / np.where(solved.values != 0, np.abs(solved.values), np.inf)
    # A parameter the data put at ~0 with a σ that moves the torque by less than 1 % of its RMS is determined: its
    # relative σ is large only because its value is small, and there is nothing to excite better.
    negligible = negligible_mask(solved.std, *(sizes or (None, None)))  # all False where the sizes do not match
    poor = [n for n, r, tiny in zip(solved.names, relative, negligible, strict=True)
            if r > POORLY_IDENTIFIED_PERCENT and not tiny]
    if poor:
        warnings.append(f'{len(poor)} parameters are poorly excited (a relative standard deviation above '
                        f'{POORLY_IDENTIFIED_PERCENT:g} % and a σ that moves the torque by at least '
                        f'{100 * NEGLIGIBLE_TORQUE_FRACTION:g} % of its RMS): {", ".join(poor)}')
    misfit = misfit_warning(autocorrelation, problem.robot.joint_names)
    if misfit:
        warnings.append(misfit)
    return warnings


def mass_matrices(result, robot, q: np.ndarray) -> np.ndarray:
    """M(q) (N, n, n) [kg·m²] of a result's base parameters, rotor inertias on the diagonal where identified.

    M(q)·e_k = τ(q, 0, e_k) − τ(q, 0, 0): exact for any base parameter set, consistent or not. A physical
    result's standard parameters give the same torques (K·π is its base parameters), so its M(q) comes from
    them directly, without rebuilding the base model.
    """
    standard = result.standard_parameters()
    if standard is not None:
        model = robot.with_parameters(standard)
        torque = model.inverse_dynamics
        rotor = result.physical_section.get('rotor_inertia') or {}
        added = np.array([rotor.get(joint, 0.0) for joint in robot.joint_names])
    else:
        from dynid.identify.result.torque import RigidBodyTorque

        torque = RigidBodyTorque(result, robot)
        added = np.array([result.value(f'Ia_{j + 1}') if f'Ia_{j + 1}' in torque.left_out else 0.0
                          for j in range(robot.n)])
    from dynid.identify.result.torque import compensated_rotor

    added = added + compensated_rotor(result, robot)  # B subtracted before the excess was identified
    count, n = q.shape
    zeros = np.zeros_like(q)
    gravity = torque(q, zeros, zeros)
    columns = []
    for k in range(n):
        unit = zeros.copy()
        unit[:, k] = 1.0
        columns.append(torque(q, zeros, unit) - gravity)
    matrices = np.stack(columns, axis=2) + np.diag(added)
    return 0.5 * (matrices + matrices.transpose(0, 2, 1))


def mass_matrix_check(result, robot, states: int = 10000, seed: int = 5) -> dict:
    """Share [%] of ``states`` random configurations where M(q) is positive definite, and the least eigenvalue."""
    q = robot.random_states(states, seed=seed)[0]
    smallest = np.linalg.eigvalsh(mass_matrices(result, robot, q))[:, 0]
    return {'states': int(states), 'positive_definite_percent': 100.0 * float(np.mean(smallest > 0)),
            'min_eigenvalue': float(smallest.min())}



def check(result: IdentificationResult, problem: IdentificationProblem, fitted: Fit) -> IdentificationResult:
    """``result`` with its physics checked (module docstring): the mass matrix in its physical section, the gravity
    scale in its model, and a warning where the gravity torque is off the robot file's scale."""
    robot = problem.robot
    if result.physical_section is not None:
        result = dataclasses.replace(result, physical_section={
            **result.physical_section, 'mass_matrix': mass_matrix_check(result, robot, states=1000)})
    poses = np.concatenate([r.dataset.q[::max(1, r.dataset.n_samples * len(problem.recordings) // 2000)]
                            for r in problem.recordings])
    scale, off_scale = gravity_scale_check(result, robot, poses, base=problem.base)
    splits, unsplit = offset_gravity_split(result, robot, poses, base=problem.base)
    return dataclasses.replace(result, model={**result.model, 'gravity_scale': scale,
                                              **({'offset_gravity': splits} if splits else {})},
                               warnings=result.warnings + [w for w in (off_scale, unsplit) if w])
