"""``dynid demo``: the main job end to end on the digital twin, over DDS."""

from __future__ import annotations

import argparse
import os
import sys

from dynid.cli.shared import EXIT_INTERNAL, EXIT_OK, output_folder

SUMMARY = 'the main job end to end on the digital twin, over DDS'


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description += (': the twin runs the optimized excitation while identifier_node records it, identifies '
                           'the model and a held-out random trajectory validates it; prints a summary table and '
                           'writes the result and an HTML report. About 1.5 minutes on a quiet machine.')
    parser.add_argument('-o', '--output', default='dynid_demo', help='output folder (default dynid_demo)')
    parser.add_argument('--robot', default='ur5e', help='robot with a shipped excitation (default ur5e)')
    parser.add_argument('--namespace', default=f'dynid_demo_{os.getpid()}',
                        help='namespace of the suite (default dynid_demo_<process id>)')
    parser.add_argument('--rate', type=float, default=1000.0, help='twin rate [Hz] (default 1000)')
    parser.add_argument('--periods', type=int, default=3, help='periods of the 10 s excitation (default 3)')
    parser.add_argument('--holdout-seed', type=int, default=7, help='seed of the held-out trajectory (default 7)')
    parser.add_argument('--method', default='auto', choices=('auto', 'ols', 'wls', 'irls', 'iirls'),
                        help='default auto: chosen by blocked cross-validation, as dynid identify does')
    parser.add_argument('--friction', default='auto',
                        choices=('auto', 'viscous_coulomb', 'load_squared', 'load_absolute', 'comprehensive'),
                        help='default auto: per joint by blocked cross-validation, as dynid identify does')
    parser.add_argument('--processes', action=argparse.BooleanOptionalAction, default=True,
                        help='one process per node (default); --no-processes runs them in this process '
                             '(use --rate 500 or less then)')
    parser.add_argument('--engine', choices=('twin', 'mujoco'), default='twin',
                        help='the plant sim_node simulates: twin (default) or mujoco (the robot in MuJoCo: rigid '
                             'joints, so no stiffness estimate; needs pip install mujoco)')
    parser.add_argument('--quiet', action='store_true', help='no progress output')


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from dynid.ros.runner import check_domain_id

    check_domain_id()
    output_folder(args.output, '-o')
    from dynid.demo.plan import DemoError, DemoSettings, check_settings
    from dynid.suite.demo import run_demo

    settings = check_settings(DemoSettings(Path(args.output), args.robot, args.namespace, args.rate, args.periods,
                                           args.holdout_seed, args.method, args.friction,
                                           processes=args.processes, engine=args.engine))
    try:
        run_demo(settings, quiet=args.quiet)
    except DemoError as error:
        print(f'dynid demo: failed: {error}', file=sys.stderr)
        return EXIT_INTERNAL
    return EXIT_OK
