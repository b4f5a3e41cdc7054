"""``dynid demo``: the main job end to end on the digital twin, over DDS."""

from __future__ import annotations

import argparse
import sys

from dynid.cli.options import add_option
from dynid.cli.shared import EXIT_INTERNAL, EXIT_OK, output_folder

SUMMARY = 'the main job end to end on the digital twin, over DDS'


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from dynid.demo.settings import DemoSettings as Demo

    parser.description += (': the twin runs the optimized excitation while identifier_node records it, identifies '
                           'the model and a held-out random trajectory validates it; prints a summary table and '
                           'writes the result and an HTML report. About 1.5 minutes on a quiet machine.')
    add_option(parser, Demo, 'output', '-o', '--output')
    add_option(parser, Demo, 'robot', '--robot')
    add_option(parser, Demo, 'namespace', '--namespace', show_default=False, more=' (default dynid_demo_<process id>)')
    add_option(parser, Demo, 'rate', '--rate')
    add_option(parser, Demo, 'periods', '--periods')
    add_option(parser, Demo, 'holdout_seed', '--holdout-seed')
    add_option(parser, Demo, 'method', '--method')
    add_option(parser, Demo, 'friction', '--friction')
    add_option(parser, Demo, 'processes', '--processes', action=argparse.BooleanOptionalAction, show_default=False,
               help='one process per node; --no-processes runs them in this process (use --rate 500 or less then)')
    add_option(parser, Demo, 'engine', '--engine')
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
