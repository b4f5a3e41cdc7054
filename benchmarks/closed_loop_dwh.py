"""How often the Durbin–Wu–Hausman test (dynid.identify.steps.diagnose.least_squares_bias) calls IDIM-LS biased where
it is and where it is not, on the twin in closed loop.

Each case: the UR5e twin follows a random 5-harmonic motion for 20 s (seed = case) twice with the same reference,
once with the sensors of the scenario and once noiseless; W and y of the first run with the identification's default
filters, the instruments Z the regressor of the noiseless run's states (testing.closed_loop). WLS weights (1/σ̂_j per
joint, dynid.identify.solve.noise.joint_noise). A case is biased where LS lies outside its own 99 % interval around
the truth (the robot's base parameters): (θ_LS − θ)'·V_LS⁻¹·(θ_LS − θ) > χ²_p(0.99), V_LS = σ̂²(W'W)⁻¹ widened for the
residual's autocorrelation as the test widens it. The test at 1 %: flagged where it rejects and LS lies outside its
own interval around the IV estimate (HausmanTest.biased); ``rejects`` (p < 1 % alone) beside it. ``identify``: the
same case through what ``dynid identify`` runs (dynid.identify.job.bias: the recording with its reference, the
instruments from the loop it simulates with IDIM-IV's estimate, the controller identified from the recording, the
torque source identify's default reads), flagged or not, against the same label.

    python -m benchmarks.closed_loop_dwh [--seeds 20] [--seconds 20]

Ends with one JSON line: dwh_flags_biased, dwh_flags_unbiased (fractions) and the counts.
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

from dynid.diagnosis.effort import chi2_quantile
from dynid.identify.equations.request import ModelSpec, RecordingInput
from dynid.identify.job.bias import least_squares_bias
from dynid.identify.solve.hausman import BIAS_LEVEL, durbin_wu_hausman
from dynid.identify.solve.noise import joint_noise
from dynid.model.robots import load_robot
from dynid.signal.preprocess import FilterSettings
from dynid.sim.parameters import SensorParameters
from testing.closed_loop import closed_loop_rows

#: (name, rate [Hz], sensors): quantized encoders (10 and 12 bits a turn at 100 Hz, 14 at 1 kHz; 0.5 N·m torque
#: noise) and the twin's default sensors at 1 kHz (20 bits, 0.2 N·m).
SCENARIOS = (
    ('100 Hz, 10-bit encoders', 100.0, SensorParameters(link_resolution=2 * np.pi / 2**10, velocity_noise=0.01,
                                                        torque_noise=0.5)),
    ('100 Hz, 12-bit encoders', 100.0, SensorParameters(link_resolution=2 * np.pi / 2**12, velocity_noise=0.01,
                                                        torque_noise=0.5)),
    ('1 kHz, 14-bit encoders', 1000.0, SensorParameters(link_resolution=2 * np.pi / 2**14, velocity_noise=0.01,
                                                       torque_noise=0.5)),
    ('1 kHz, default sensors', 1000.0, SensorParameters()),
)


def _identify_flags(robot, recording) -> bool | None:
    """Whether dynid identify's bias test (dynid.identify.job.bias) flags the recording (None: it did not run)."""
    _, figures = least_squares_bias(robot, [RecordingInput(recording, name='case')],
                                    ModelSpec(friction='viscous_coulomb'),
                                    FilterSettings(), 'wls')
    return figures['biased'] if figures['run'] else None


def case(robot, rate_hz: float, sensors: SensorParameters, seed: int, seconds: float) -> dict:
    """One case's truth label and the test's verdict."""
    rows = closed_loop_rows(robot, rate_hz, sensors, seed, seconds)
    weights = 1.0 / joint_noise(rows.w, rows.y, rows.joints).sigma[rows.joints]
    test = durbin_wu_hausman(rows.w, rows.y, rows.z, weights, rows.joints, BIAS_LEVEL)
    w, y = rows.w * weights[:, None], rows.y * weights
    residual = y - w @ test.ls
    variance = test.inflation * float(residual @ residual) / (len(y) - w.shape[1])
    error = test.ls - rows.truth
    outside = float(error @ (w.T @ w) @ error) / variance
    return {'seed': seed, 'ls_distance': outside, 'ls_bound': chi2_quantile(w.shape[1], BIAS_LEVEL),
            'biased': outside > chi2_quantile(w.shape[1], BIAS_LEVEL), 'flagged': test.biased,
            'rejects': test.rejects, 'statistic': test.statistic, 'dof': test.dof, 'p_value': test.p_value,
            'iv_distance': test.distance, 'inflation': test.inflation,
            'identify': _identify_flags(robot, rows.recording),
            'ls_error': float(np.linalg.norm(error) / np.linalg.norm(rows.truth)),
            'iv_error': float(np.linalg.norm(test.iv - rows.truth) / np.linalg.norm(rows.truth))}


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--seeds', type=int, default=20)
    parser.add_argument('--seconds', type=float, default=20.0)
    args = parser.parse_args(argv)
    robot = load_robot('ur5e')
    start, cases = time.time(), []
    print('| scenario | cases LS biased | flagged of biased | flagged of not biased | p < 1 % alone (biased, not) | '
          'median relative error LS, IV |')
    print('|---|---|---|---|---|---|')
    for name, rate, sensors in SCENARIOS:
        mine = [case(robot, rate, sensors, seed, args.seconds) for seed in range(args.seeds)]
        cases += [{'scenario': name, **c} for c in mine]
        biased = [c for c in mine if c['biased']]
        clean = [c for c in mine if not c['biased']]
        print(f'| {name} | {len(biased)} of {len(mine)} | {sum(c["flagged"] for c in biased)} of {len(biased)} | '
              f'{sum(c["flagged"] for c in clean)} of {len(clean)} | {sum(c["rejects"] for c in biased)}, '
              f'{sum(c["rejects"] for c in clean)} | {np.median([c["ls_error"] for c in mine]):.4f}, '
              f'{np.median([c["iv_error"] for c in mine]):.4f} |', flush=True)
    biased = [c for c in cases if c['biased']]
    clean = [c for c in cases if not c['biased']]
    for c in cases:
        if c['biased'] != c['flagged']:
            print(f'{"missed" if c["biased"] else "false alarm"}: {c["scenario"]} seed {c["seed"]}: LS at '
                  f'{c["ls_distance"]:.1f} from the truth (bound {c["ls_bound"]:.1f}), H {c["statistic"]:.1f} on '
                  f'{c["dof"]}, p {c["p_value"]:.3g}, IV at {c["iv_distance"]:.1f} from LS')
    ran = [c for c in cases if c['identify'] is not None]
    print(f'through dynid identify (its own instruments): ran on {len(ran)} of {len(cases)}; flagged '
          f'{sum(c["identify"] for c in ran if c["biased"])} of {sum(c["biased"] for c in ran)} biased, '
          f'{sum(c["identify"] for c in ran if not c["biased"])} of {sum(not c["biased"] for c in ran)} not biased')
    summary = {'dwh_flags_biased': sum(c['flagged'] for c in biased) / max(len(biased), 1),
               'dwh_identify_ran': len(ran),
               'dwh_identify_flags_biased': sum(c['identify'] for c in ran if c['biased'])
               / max(sum(c['biased'] for c in ran), 1),
               'dwh_identify_flags_unbiased': sum(c['identify'] for c in ran if not c['biased'])
               / max(sum(not c['biased'] for c in ran), 1),
               'dwh_flags_unbiased': sum(c['flagged'] for c in clean) / max(len(clean), 1),
               'dwh_biased_cases': len(biased), 'dwh_unbiased_cases': len(clean),
               'dwh_rejects_unbiased': sum(c['rejects'] for c in clean) / max(len(clean), 1),
               'seeds': args.seeds, 'seconds': args.seconds, 'wall_s': round(time.time() - start, 1)}
    print('target: flagged >= 0.90 of the biased cases, <= 0.05 of the others (issue 90)')
    print(json.dumps(summary))
    return summary


if __name__ == '__main__':
    main()
