"""A synthetic two-encoder log for the stiffness estimator (Madsen et al. 2019's kind of check): smooth motion
and deflection with τ_E = K1·φ + K3·φ³ and no friction, its motor currents through given drives
(test_stiffness_estimator.py, test_online_estimation.py)."""

import numpy as np

RATE = 1000.0  # Hz
K1, K3 = 2.0e4, 5.0e9  # N·m/rad, N·m/rad³


def deflection_log(drives, seconds=12.0, current_noise=0.0, seed=0):
    """Smooth motion and deformation (|φ| ≤ 1.5 mrad, ≤ 1.3 Hz) with τ_E = K1·φ + K3·φ³, no friction."""
    t = np.arange(int(seconds * RATE)) / RATE
    n = len(drives.joint_names)
    w_q, w1, w2 = 2 * np.pi * 0.2, 2 * np.pi * 0.5, 2 * np.pi * 1.3
    shift = np.arange(n)[None, :]
    q = 0.5 * np.sin(w_q * t[:, None] + shift)
    phi = 1.5e-3 * (0.6 * np.sin(w1 * t[:, None] + shift) + 0.4 * np.sin(w2 * t[:, None] + 2 * shift))
    ddtheta = (-0.5 * w_q**2 * np.sin(w_q * t[:, None] + shift)
               - 1.5e-3 * (0.6 * w1**2 * np.sin(w1 * t[:, None] + shift)
                           + 0.4 * w2**2 * np.sin(w2 * t[:, None] + 2 * shift)))
    tau_e = K1 * phi + K3 * phi**3
    current = (tau_e + drives.rotor_inertia * ddtheta) / drives.drive_gain
    current = current + np.random.default_rng(seed).normal(0.0, current_noise, current.shape)
    return q, q + phi, current
