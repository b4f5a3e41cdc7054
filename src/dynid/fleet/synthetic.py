"""A fleet's sessions without running the twin: the wear model's truth (:mod:`dynid.sim.wear`) plus the
session-to-session noise, temperature and load effects the estimators show, as the health record keeps them.

The true stiffness and Coulomb factors of each session come from :meth:`SessionSchedule.factors`; the
recorded estimates are

    stiffness = k0·(s + 0.001·(T − 20 °C) + ε),  friction α̂1 = c + f_T(T) + 0.1·((L/L0)² − 1) + ε

with the friction temperature law's columns f_T (Madsen 2020 ch.6 eq. (11), coefficients as the twin's
estimates show), the session's RMS joint torque L around L0, and ε ~ N(0, σ²) with σ = ``noise``. For tests and
bench_fleet: thousands of sessions in seconds, with a known truth.
"""

from __future__ import annotations

import numpy as np

from dynid import __version__
from dynid.health.record import JointSession, Session
from dynid.health.trend import temperature_features
from dynid.sim.wear import SessionSchedule

DAY_S = 86400.0
START_UTC = 1.7e9
JOINTS = ('shoulder_pan_joint', 'shoulder_lift_joint', 'elbow_joint', 'wrist_1_joint', 'wrist_2_joint',
          'wrist_3_joint')


def wear_sessions(robot: str, schedule: SessionSchedule, *, joint_names=JOINTS, model: str = 'ur5e',
                  seed: int = 0, noise: float = 0.004, stiffness_nm_rad: float = 4e4, coulomb_nm: float = 3.0,
                  load_nm: float = 30.0, start_utc: float = START_UTC) -> list[Session]:
    """The sessions of ``robot`` over ``schedule`` (module docstring), oldest first."""
    rng = np.random.default_rng(seed)
    stiffness, coulomb = schedule.factors(joint_names)
    count, n = stiffness.shape
    temperature = schedule.temperature_c
    law = temperature_features('friction', temperature, 20.0) @ np.array([-0.07, 0.03])
    load = load_nm * rng.uniform(0.7, 1.3, (count, n))
    k = stiffness_nm_rad * (stiffness + 0.001 * (temperature[:, None] - 20.0) + noise * rng.standard_normal((count, n)))
    friction = coulomb + law[:, None] + 0.1 * ((load / load_nm) ** 2 - 1.0) + noise * rng.standard_normal((count, n))
    sessions = []
    for s in range(count):
        joints = tuple(JointSession(name, temperature_c=float(temperature[s]), stiffness=float(k[s, j]),
                                    stiffness_std=noise * stiffness_nm_rad, friction_scale=float(friction[s, j]),
                                    friction_scale_std=noise, coulomb_nm=coulomb_nm, samples=30000,
                                    load_rms_nm=float(load[s, j]))
                       for j, name in enumerate(joint_names))
        sessions.append(Session(robot, model, tuple(joint_names), start_utc + float(schedule.days[s]) * DAY_S, joints,
                                duration_s=30.0, source='twin', input=f'{robot}/session-{s}',
                                software=f'dynid {__version__}', payload_kg=2.0, mounting='0 0 -9.81',
                                effort_meaning='torque'))
    return sessions
