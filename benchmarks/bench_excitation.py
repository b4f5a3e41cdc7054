"""Optimized excitation for the UR5e against random ones and against the thesis' hand-made trajectory.

Run: ``make bench`` or ``.venv/bin/python -m benchmarks.bench_excitation [--starts N --iterations K]``.

Setting (issue 5): UR5e, 5 harmonics, 10 s period, rest-to-rest, ``dynid excite``'s default limits (±1 rad about
home inside 90 % of the joint range, half the velocity limits, 2.5 rad/s², no link below the floor at z = 0). We
print cond(W_b) of the optimized design beside the median of 20 random designs (``dynid excite`` without
``--optimize``, seeds 1000–1019 after ``--seed``: each shrunk into the clearance where it breaks it) and the
thesis' hand-made 31 s trajectory (cond(W) = 66, Madsen 2020, ch.4 §3.7), and the optimization wall
time. cond is evaluated on 1000 samples of one period. The last line is JSON.
"""

from __future__ import annotations

import argparse
import json
import statistics

from dynid.excite.design import design_excitation
from dynid.model import load_robot
from dynid.sim.twin import home_configuration

THESIS_COND = 66.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--starts', type=int, default=4)
    parser.add_argument('--iterations', type=int, default=150)
    parser.add_argument('--random', type=int, default=20, help='random designs for the median (default 20)')
    parser.add_argument('--seed', type=int, default=0)
    args = parser.parse_args()

    robot = load_robot('ur5e')
    home = home_configuration(robot)
    # dynid excite's designs: its limits and floor, a random design shrunk into the clearance, or the optimizer's
    random_conds = []
    for k in range(args.random):
        result = design_excitation(robot, home, seed=args.seed + 1000 + k)
        assert result.feasible
        random_conds.append(result.condition_number)
    optimized = design_excitation(robot, home, seed=args.seed, optimize=True, starts=args.starts,
                                  iterations=args.iterations)
    median = statistics.median(random_conds)
    print(f'dynid excitation benchmark: UR5e, 5 harmonics, 10 s period, {args.starts} starts × '
          f'≤ {args.iterations} iterations (SLSQP), seed {args.seed}')
    print(f'{"trajectory":<46} {"cond(W_b)":>10}')
    print(f'{"optimized (ours)":<46} {optimized.condition_number:>10.1f}')
    print(f'{f"median of {args.random} random feasible (ours)":<46} {median:>10.1f}')
    print(f'{"thesis hand-made 31 s trajectory (reference)":<46} {THESIS_COND:>10.1f}')
    print(f'optimization wall time {optimized.wall_time_s:.1f} s, {optimized.iterations} iterations, '
          f'feasible: {optimized.feasible}; improvement over random median ×{median / optimized.condition_number:.1f}')
    print(json.dumps({'benchmark': 'excitation', 'robot': 'ur5e', 'harmonics': 5, 'period_s': 10.0,
                      'optimized_cond': optimized.condition_number, 'random_median_cond': median,
                      'random_conds': random_conds, 'thesis_cond': THESIS_COND,
                      'beats_thesis': optimized.condition_number < THESIS_COND,
                      'wall_time_s': optimized.wall_time_s, 'iterations': optimized.iterations,
                      'starts': args.starts, 'feasible': optimized.feasible}))


if __name__ == '__main__':
    main()
