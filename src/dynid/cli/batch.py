"""``dynid batch``: identify every recording of a manifest or a tree (robot/date/bag) on a Dask cluster.

    dynid batch ROOT|MANIFEST [--robot MODEL] [--identify-args '...'] [--workers N | --scheduler ADDRESS]
                [--db FILE|URL] [--force] [--json]
"""

from __future__ import annotations

import argparse
import json
import sys

from dynid.cli.options import add_option
from dynid.cli.shared import EXIT_BAD_INPUT, EXIT_OK
from dynid.errors import InputError

SUMMARY = 'identify a fleet\'s recordings (a manifest or a robot/date/bag tree) on Dask; results beside them'


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from dynid.fleet.settings import BatchSettings

    parser.description += ('. Each recording is one task running dynid identify on it alone; its result is written '
                           'beside it (<bag>.result.yaml, with <bag>.result.json: the inputs\' sha256, robot, options, '
                           'dynid version), so a second run skips what is done. A recording that fails is reported '
                           'and the others go on.')
    parser.add_argument('source', metavar='ROOT|MANIFEST',
                        help='a folder of recordings ROOT/<robot>/<date>/<bag>, or a YAML manifest '
                             '"recordings: [{bag, robot, model}]"')
    add_option(parser, BatchSettings, 'robot', '--robot')
    add_option(parser, BatchSettings, 'identify_args', '--identify-args', metavar='ARGS')
    add_option(parser, BatchSettings, 'workers', '--workers')
    parser.add_argument('--scheduler', default=None, metavar='ADDRESS',
                        help='a running Dask scheduler (tcp://host:8786) instead of a local cluster')
    parser.add_argument('--db', default=None, help='health record (an SQLite file or a postgresql:// URL) to add '
                        'each identified recording\'s friction to as a session of its robot')
    parser.add_argument('--force', action='store_true', help='identify again recordings whose results are up to date')
    parser.add_argument('--json', action='store_true', help='print the outcomes as JSON instead of the table')


def run(args: argparse.Namespace) -> int:
    from dynid.fleet.batch import outcomes_json, reidentify, summary_table

    if args.workers < 1:
        raise InputError(f'--workers must be at least 1, got {args.workers}')

    def progress(outcome, done: int, total: int) -> None:
        text = f'[{done}/{total}] {outcome.robot} {outcome.bag}: {outcome.status}'
        print(text + (f' ({outcome.error})' if outcome.error else ''), file=sys.stderr, flush=True)

    outcomes = reidentify(args.source, args.robot, args.identify_args, command=identify_command,
                          workers=args.workers, scheduler=args.scheduler, db=args.db, force=args.force,
                          progress=progress)
    if args.json:
        print(json.dumps(outcomes_json(outcomes), indent=1))
    else:
        print(summary_table(outcomes))
    return EXIT_BAD_INPUT if any(o.status == 'failed' for o in outcomes) else EXIT_OK


def identify_command(argv: list[str]) -> int:
    """``dynid identify`` run in this process on ``argv`` (``['identify', BAG, ...]``): a fleet's task
    (:func:`dynid.fleet.batch.run_job`, on a Dask worker). Its exit code; argparse refuses bad options with
    SystemExit, the identification bad input with InputError (the task reports either)."""
    from dynid.cli import identify

    parser = argparse.ArgumentParser(prog='dynid identify', description=identify.SUMMARY)
    identify.add_arguments(parser)
    return identify.run(parser.parse_args(argv[1:]))
