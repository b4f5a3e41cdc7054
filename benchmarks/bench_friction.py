"""Cost of the friction models: per-sample steps for a 1 kHz loop, batch throughput for identification.

Run: ``make bench`` or ``.venv/bin/python -m benchmarks.bench_friction [--samples N]``.

Reference: a 1 kHz control loop (the thesis' sample rate) leaves 1000 µs per sample for everything;
the thesis' E-GMS runs inside the UR controller at that rate. We print the per-sample cost of one
6-joint step (E-GMS alone and the complete joint friction), the batch cost per 6-joint sample of
``run`` (no per-sample Python loop) and the throughput of the static maps. The last line is JSON.
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

from dynid.friction.egms import EGMS
from dynid.friction.gms import GMS
from dynid.friction.joint_friction import JointFriction
from dynid.friction.static import StribeckMap
from dynid.friction.temperature import ReferenceTemperatureFriction

BUDGET_1KHZ_US = 1000.0
JOINTS = 6


def _best(function, repeats: int) -> float:
    function()  # warm-up
    best = np.inf
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--samples', type=int, default=60000, help='batch length (default 60 s at 1 kHz)')
    parser.add_argument('--steps', type=int, default=5000, help='steps timed per repeat (default 5000)')
    parser.add_argument('--repeats', type=int, default=5)
    args = parser.parse_args()

    rng = np.random.default_rng(0)
    theta = np.cumsum(rng.normal(0.0, 2e-4, size=(args.samples, JOINTS)), axis=0)
    velocity = np.gradient(theta, 1e-3, axis=0)
    torque = rng.uniform(-150, 150, size=(args.samples, JOINTS))
    temperature = rng.uniform(20, 40, size=(args.samples, JOINTS))
    stribeck = StribeckMap(Fc=2.0, Fs=3.0, Fv1=1.5, Fv2=-0.3, Fv3=0.05, Vs=0.02, mu=1.2)
    table = 1e-3 * (1 + 0.3 * np.sin(np.linspace(0, 2 * np.pi, 1000, endpoint=False)))
    egms = EGMS(JOINTS, backlash=np.tile(table, (JOINTS, 1)))
    friction = JointFriction(stribeck, load_coefficient=2e-4,
                             temperature=ReferenceTemperatureFriction(Ft1=-0.01, Ft2=300.0),
                             egms=EGMS(JOINTS, backlash=np.tile(table, (JOINTS, 1))))
    gms = GMS(stribeck, stiffness=[400.0, 1500.0, 6000.0, 20000.0], fractions=[0.4, 0.3, 0.2, 0.1],
              attraction=30.0, n_joints=JOINTS)
    steps = args.steps

    def egms_steps():
        for k in range(steps):
            egms.step(theta[k])

    def friction_steps():
        for k in range(steps):
            friction.step(theta[k], velocity[k], torque[k], temperature[k])

    def gms_steps():
        for k in range(steps):
            gms.step(velocity[k], 1e-3)

    results = {
        'egms_step_us': _best(egms_steps, args.repeats) / steps * 1e6,
        'joint_friction_step_us': _best(friction_steps, args.repeats) / steps * 1e6,
        'gms_step_us': _best(gms_steps, args.repeats) / steps * 1e6,
        'egms_run_us_per_sample': _best(lambda: EGMS(JOINTS, backlash=np.tile(table, (JOINTS, 1))).run(theta),
                                        args.repeats) / args.samples * 1e6,
        'joint_friction_run_us_per_sample': _best(
            lambda: (friction.reset(), friction.run(theta, velocity, torque, temperature)),
            args.repeats) / args.samples * 1e6,
        'stribeck_map_samples_per_s': args.samples * JOINTS / _best(lambda: stribeck.evaluate(velocity),
                                                                     args.repeats),
    }
    print(f'dynid friction benchmark: {JOINTS} joints; steps best of {args.repeats}×{steps}, '
          f'batches of {args.samples} samples')
    rows = [
        ('E-GMS step (6 joints)', results['egms_step_us'], 'µs'),
        ('complete joint friction step (6 joints)', results['joint_friction_step_us'], 'µs'),
        ('GMS step (6 joints, 4 elements)', results['gms_step_us'], 'µs'),
        ('E-GMS batch run, per 6-joint sample', results['egms_run_us_per_sample'], 'µs'),
        ('joint friction batch run, per 6-joint sample', results['joint_friction_run_us_per_sample'], 'µs'),
        ('Stribeck map, joint-samples per second', results['stribeck_map_samples_per_s'] / 1e6, 'M/s'),
    ]
    print(f'{"measure":<46} {"ours":>10}   reference')
    for label, value, unit in rows:
        reference = f'{BUDGET_1KHZ_US:.0f} µs budget at 1 kHz' if unit == 'µs' else '-'
        print(f'{label:<46} {value:>8.2f} {unit:<3} {reference}')
    margin = BUDGET_1KHZ_US / results['joint_friction_step_us']
    print(f'margin of the complete 6-joint friction step in a 1 kHz loop: {margin:.0f}×')
    print(json.dumps({'benchmark': 'friction', 'joints': JOINTS, 'budget_1khz_us': BUDGET_1KHZ_US,
                      'margin_1khz': margin, **results}))


if __name__ == '__main__':
    main()
