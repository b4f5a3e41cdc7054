"""The closed loop on the twin that every part of ``bench_feedforward.py`` runs: the terms compared, the settle
hold with the feedforward ramped in, a run that follows a sampled motion point by point, and its errors.

The decisions behind them (twin, start, tracking and torque-prediction errors) are in the docstring of
``bench_feedforward.py`` (common set-up); B1 (``feedforward_b1.py``) and the script's other parts import them
from here. Units: rad, rad/s, rad/s², N·m, samples at RATE [Hz].
"""

from __future__ import annotations

import dataclasses

import numpy as np

from benchmarks.bench_estimation import PAYLOAD
from dynid.control import Feedforward
from dynid.excite.trajectory import PointTrajectory
from dynid.sim.parameters import ControllerParameters, PlantParameters
from dynid.sim.twin import DigitalTwin, SimulationRecord

RATE = 1000.0
SETTLE_S, RAMP_S = 3.0, 2.0
RIGID = ['rigid_body', 'rotor_inertia']
BASELINE = (RIGID + ['friction_static'], None)
EGMS = (RIGID + ['friction_egms'], None)
DISCONTINUOUS = (RIGID + ['friction_static'], {'friction_static': {'band': 1e-9}})


def closed_loop_plant(robot) -> PlantParameters:
    """The twin of the closed-loop runs: 7.5 kg payload, the controller's own feedforward off."""
    params = PlantParameters.defaults(robot, payload=PAYLOAD)
    return dataclasses.replace(params, controller=ControllerParameters(internal_feedforward='none'))


def sampled(trajectory, seconds: float):
    """(q, q̇, q̈) of a trajectory at RATE over [0, seconds], (N, n) each, robot joint order."""
    return trajectory.evaluate(np.arange(int(round(seconds * RATE)) + 1) / RATE)


def with_settle(motion):
    """The motion behind a SETTLE_S hold at its start; (q, q̇, q̈, ramp (N,), index of the motion start)."""
    settle = int(round(SETTLE_S * RATE))
    held = [np.vstack([np.tile(x[0] if k == 0 else 0.0 * x[0], (settle, 1)), x]) for k, x in enumerate(motion)]
    ramp = np.ones(held[0].shape[0])
    ramp[:settle] = np.minimum(np.arange(settle) / (RAMP_S * RATE), 1.0)
    return (*held, ramp, settle)


def applied(effort: np.ndarray) -> np.ndarray:
    """Effort across each simulated sample k = 1 … N−1: the mean of the efforts at k − 1 and k."""
    return 0.5 * (effort[:-1] + effort[1:])


def errors(record: SimulationRecord, effort: np.ndarray, gains: np.ndarray, shift: np.ndarray | None = None) -> dict:
    """Torque-prediction, rotor-side and link-side tracking errors (N−1, n) of a run (bench_feedforward's
    docstring, common set-up). ``shift``: the motor-side correction φ_d added to the reference sent (N, n); the
    rotor error is then θ − θ_d (the controller's own error) and the link error q − q_d."""
    m = record.measured
    desired = record.reference['q'] if shift is None else record.reference['q'] - shift[1:]
    return {'torque': gains * m['current'] - applied(effort), 'rotor': m['theta'] - record.reference['q'],
            'link': m['q'] - desired}


def follow_run(params, motion, effort, seed: int) -> SimulationRecord:
    """The twin following (q, q̇, q̈) point by point with the effort field ``effort`` (None: none)."""
    q, dq, ddq = motion
    twin = DigitalTwin(params, rate_hz=RATE, seed=seed, initial_q=q[0])
    # One point past the end, so that the last sample is not the trajectory's end (held at rest, no effort).
    last = np.arange(len(q) + 1).clip(max=len(q) - 1)
    twin.follow(PointTrajectory(params.robot.joint_names, np.arange(len(q) + 1) / RATE, q[last], dq[last], ddq[last]),
                effort=None if effort is None else effort[last])
    return twin.run((len(q) - 1) / RATE)


def feedforward_run(robot, result, params, config, motion, seed: int, correct: bool = False):
    """(record, effort, start, shift) of a run with the feedforward ``config`` (terms, options) evaluated on the
    motion (with its settle hold), or without feedforward (config None). ``correct``: the reference sent is
    q_d + φ_d (q̇_d + φ̇_d, q̈_d + φ̈_d) of :meth:`Feedforward.reference_correction`, ramped in with the
    feedforward (``shift`` the φ_d added, else None)."""
    q, dq, ddq, ramp, start = with_settle(motion)
    feedforward = None if config is None else Feedforward(robot, result, *config, rate_hz=RATE)
    effort = np.zeros_like(q) if config is None else ramp[:, None] * feedforward.evaluate(q, dq, ddq)
    shift = None
    reference = (q, dq, ddq)
    if correct:
        phi, dphi, ddphi = (ramp[:, None] * x for x in feedforward.reference_correction(q, dq, ddq))
        shift, reference = phi, (q + phi, dq + dphi, ddq + ddphi)
    record = follow_run(params, reference, None if config is None else effort, seed)
    return record, effort, start, shift


def mse(error: np.ndarray, rows) -> np.ndarray:
    return np.mean(error[rows] ** 2, axis=0)


def row(label: str, ours: str, reference: str) -> None:
    """One row of the table: what is measured, our figure, the paper's or the target."""
    print(f'{label:<66}{ours:>16}{reference:>28}')
