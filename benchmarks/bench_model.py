"""Cost of the batch regressor and inverse dynamics against pinocchio's raw per-sample calls.

Run: ``make bench`` or ``.venv/bin/python -m benchmarks.bench_model [--samples N]``.

For each robot it times, per sample (best of several repeats):
- ``RobotModel.regressor`` on a batch (our stacking over pinocchio's computeJointTorqueRegressor),
- pinocchio's computeJointTorqueRegressor called in a bare loop (the floor for our regressor),
- pinocchio's rnea in a bare loop, and ``RobotModel.inverse_dynamics`` on a batch (which runs
  the batch inside pinocchio with rneaInParallel on one thread),
- the base-parameter computation (once per robot; cached afterwards).

Reference: the developers' brief measured ~7 µs per sample for pinocchio's regressor on a UR5 on
this machine class. The last line is one JSON object for scripts.
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np
import pinocchio as pin

from dynid.model import load_robot

REFERENCE_REGRESSOR_US = 7.0


def _best_per_sample(function, n_samples: int, repeats: int) -> float:
    function()  # warm-up: first-call allocations and caches are not what we measure
    best = np.inf
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        best = min(best, time.perf_counter() - start)
    return best / n_samples * 1e6


def bench_robot(name: str, n_samples: int, repeats: int) -> dict:
    start = time.perf_counter()
    robot = load_robot(name)
    base = robot.base
    base_seconds = time.perf_counter() - start
    q, dq, ddq = robot.random_states(n_samples, seed=1)
    config = robot.configuration(q)
    model, data = robot.pinocchio_model, robot.pinocchio_model.createData()

    def raw_regressor():
        for k in range(n_samples):
            pin.computeJointTorqueRegressor(model, data, config[k], dq[k], ddq[k])

    def raw_rnea():
        for k in range(n_samples):
            pin.rnea(model, data, config[k], dq[k], ddq[k])

    result = {
        'robot': name,
        'joints': robot.n,
        'base_parameters': base.rank,
        'regressor_us_per_sample': _best_per_sample(lambda: robot.regressor(q, dq, ddq), n_samples, repeats),
        'pinocchio_regressor_us_per_sample': _best_per_sample(raw_regressor, n_samples, repeats),
        'pinocchio_rnea_us_per_sample': _best_per_sample(raw_rnea, n_samples, repeats),
        'inverse_dynamics_us_per_sample': _best_per_sample(
            lambda: robot.inverse_dynamics(q, dq, ddq), n_samples, repeats),
        'base_parameter_seconds': base_seconds,
    }
    result['regressor_over_pinocchio_regressor'] = (
        result['regressor_us_per_sample'] / result['pinocchio_regressor_us_per_sample'])
    result['regressor_over_rnea'] = result['regressor_us_per_sample'] / result['pinocchio_rnea_us_per_sample']
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--samples', type=int, default=5000, help='samples per batch (default 5000)')
    parser.add_argument('--repeats', type=int, default=5, help='repeats, best taken (default 5)')
    parser.add_argument('--robots', default='ur5e,ur5,panda', help='comma-separated robot names')
    args = parser.parse_args()

    results = [bench_robot(name, args.samples, args.repeats) for name in args.robots.split(',')]
    print(f'dynid model benchmark: {args.samples} random samples, best of {args.repeats}; µs per sample')
    header = (f'{"robot":<7} {"n":>2} {"base":>4} {"regressor":>10} {"pin reg.":>9} {"ratio":>6} '
              f'{"pin rnea":>9} {"inv. dyn.":>9} {"reg/rnea":>8} {"base [s]":>8} {"ref. reg.":>9}')
    print(header)
    print('-' * len(header))
    for r in results:
        print(f'{r["robot"]:<7} {r["joints"]:>2} {r["base_parameters"]:>4} '
              f'{r["regressor_us_per_sample"]:>10.2f} {r["pinocchio_regressor_us_per_sample"]:>9.2f} '
              f'{r["regressor_over_pinocchio_regressor"]:>6.2f} {r["pinocchio_rnea_us_per_sample"]:>9.2f} '
              f'{r["inverse_dynamics_us_per_sample"]:>9.2f} {r["regressor_over_rnea"]:>8.2f} '
              f'{r["base_parameter_seconds"]:>8.3f} {"~" + str(REFERENCE_REGRESSOR_US):>9}')
    print('ref. reg.: pinocchio regressor cost per sample for a UR5 quoted in the developers\' brief')
    print(json.dumps({'benchmark': 'model_regressor', 'samples': args.samples, 'repeats': args.repeats,
                      'reference_regressor_us_per_sample': REFERENCE_REGRESSOR_US, 'robots': results}))


if __name__ == '__main__':
    main()
