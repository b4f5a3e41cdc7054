"""Safe excitation of a URDF UR arm: the lowest point of any link, before (issue 13) and now.

Run: ``.venv/bin/python -m benchmarks.bench_excitation_safety [--starts N --iterations K]``.

Setting (issue 13, item 10): example-robot-data's UR5 URDF under another robot name, as a user's
own URDF would be, optimized with the default settings of ``dynid excite --optimize`` (5 harmonics,
10 s period, ±1 rad, half the velocity limits, 2.5 rad/s²). **Before**: what dynid did until now,
reproduced with today's functions: centred on q = 0 (the arm stretched out, the middle of a UR's
ranges), no floor, no self-collision check. **Now**: the UR home (found by joint names), floor at
z = 0 for every link, self-collision checked. Both results are measured the same way: the lowest
point of the URDF's collision meshes over one period (2000 samples) and whether any two links
collide. The issue reported 63 cm below the floor for its UR; the last line is JSON.
"""

from __future__ import annotations

import argparse
import json

import numpy as np

from dynid.excite.clearance import Clearance
from dynid.excite.fourier import FourierDesign, default_limits
from dynid.excite.home import default_home
from dynid.excite.optimize import excitation_violations, optimize_excitation
from dynid.model import load_robot
from dynid.model.robots import example_robot_path

ISSUE_DEPTH_M = -0.63


def _measure(robot, trajectory, home):
    clearance = Clearance.of(robot)
    clearance.prepare(home)
    _, peaks = excitation_violations(robot, trajectory, default_limits(robot, home, floor=-100.0),
                                     clearance=clearance)
    return peaks['lowest_point_m'], peaks['self_collision']


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--starts', type=int, default=2)
    parser.add_argument('--iterations', type=int, default=60)
    parser.add_argument('--seed', type=int, default=0)
    args = parser.parse_args()

    text = example_robot_path('ur_description/urdf/ur5_robot.urdf').read_text()
    robot = load_robot(text.replace('<robot name="ur5"', '<robot name="my_arm"', 1))
    design = FourierDesign(robot.joint_names, 5, 10.0)
    before_home = np.zeros(robot.n)
    before = optimize_excitation(robot, design, before_home, default_limits(robot, before_home), starts=args.starts,
                                 seed=args.seed, max_iterations=args.iterations, clearance=Clearance(robot))
    home, why = default_home(robot)
    now = optimize_excitation(robot, design, home, default_limits(robot, home, floor=0.0), starts=args.starts,
                              seed=args.seed, max_iterations=args.iterations)
    rows = [('before: q = 0, no floor, no self-collision', before, before_home),
            ('now: default home, floor z = 0, self-collision checked', now, home)]
    print(f'dynid excitation safety: UR5 URDF as "my_arm", 5 harmonics, 10 s, {args.starts} starts × '
          f'≤ {args.iterations} iterations, seed {args.seed}')
    print(f'default home: {why}')
    print(f'{"design":<72} {"lowest [m]":>10} {"collide":>8} {"cond(W_b)":>10}')
    measured = []
    for label, result, centre in rows:
        lowest, collide = _measure(robot, result.trajectory, centre)
        measured.append((lowest, collide, result.condition_number))
        print(f'{label:<72} {lowest:>10.3f} {str(collide):>8} {result.condition_number:>10.1f}')
    print(f'{"issue 13 report (its UR, before)":<72} {ISSUE_DEPTH_M:>10.3f}')
    print(json.dumps({'benchmark': 'excitation_safety', 'robot': 'ur5 urdf', 'before_lowest_m': measured[0][0],
                      'before_self_collision': measured[0][1], 'now_lowest_m': measured[1][0],
                      'now_self_collision': measured[1][1], 'before_cond': measured[0][2],
                      'now_cond': measured[1][2], 'issue_lowest_m': ISSUE_DEPTH_M}))


if __name__ == '__main__':
    main()
