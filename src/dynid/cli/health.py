"""``dynid health``: the joint health record: trends, forecasts to a limit and events, as a page, JSON or text.

    dynid health [--db FILE|URL] [--robot NAME] [--report DIR] [--json]
    dynid health [--db FILE|URL] --fleet-report DIR [--fleet-json] [--store-judgements] [--fleet-results RESULT...]
    dynid health import BAG... --params RESULT [--db FILE] [--robot NAME]
    dynid health event KIND [--joint NAME] [--note TEXT] [--time ISO] [--db FILE] [--robot NAME]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from datetime import timezone

from dynid.cli.flags import message
from dynid.cli.options import add_option
from dynid.cli.reading import add_effort_argument, read_bag
from dynid.cli.shared import EXIT_BAD_INPUT, EXIT_OK, add_settings_arguments, output_folder, settings_from_args
from dynid.errors import InputError

SUMMARY = 'the joint health record: trends, forecasts to a limit, events; HTML page and JSON'
RECORD_FIELDS = ('db', 'robot', 'record', 'session_s', 'diagnostics_period_s')


def _add_record_arguments(parser: argparse.ArgumentParser, default) -> None:
    parser.add_argument('--db', default=default, help='health record: an SQLite file or a postgresql:// URL '
                        '(default: $XDG_DATA_HOME/dynid/health.sqlite3, i.e. ~/.local/share/dynid/health.sqlite3)')
    parser.add_argument('--robot', default=default,
                        help='the robot\'s name in the record (default: every robot; import: the model\'s name)')


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from dynid.fleet.settings import FleetPriorSettings
    from dynid.health.schema import EVENT_KINDS
    from dynid.health.settings import HealthSettings

    parser.description += ('. Every estimator session (estimator_node, dynid estimate, dynid health import) appends '
                           'its per-joint estimates to the record; this judges them: sudden changes, trends with '
                           'their uncertainty, and the forecast time to the limits.')
    _add_record_arguments(parser, None)
    parser.add_argument('--report', default=None, help='folder to write index.html into (a page per record)')
    parser.add_argument('--json', action='store_true', help='print the judgement as JSON (for tools)')
    parser.add_argument('--fleet-report', default=None, metavar='DIR',
                        help='write the fleet\'s page: every robot\'s joints ranked by the forecast time to a limit '
                        'and by recent changes, each robot\'s own page one click away, and fleet.json')
    parser.add_argument('--fleet-json', action='store_true', help='print the fleet\'s rankings as JSON (for tools)')
    parser.add_argument('--store-judgements', action='store_true',
                        help='with --fleet-report/--fleet-json: store the judgements made for the page in the record, '
                        'so that the next page reads them (robots whose writers did not store theirs; docs/fleet.md)')
    parser.add_argument('--fleet-results', nargs='+', default=None, metavar='RESULT',
                        help='with --fleet-report/--fleet-json: the robots\' identification results (dynid identify; '
                        'each named by its file\'s stem, as the record names the robot): each robot\'s parameters '
                        'judged against the other robots\' of its model, the ones standing apart named on the page, '
                        'in fleet.json and (with --store-judgements) in the record')
    add_option(parser, FleetPriorSettings, 'false_flag_rate', '--false-flag-rate', metavar='RATE')
    add_settings_arguments(parser, HealthSettings, 'judgement', skip=RECORD_FIELDS)
    actions = parser.add_subparsers(dest='health_action', metavar='ACTION')
    importing = actions.add_parser('import', help='add sessions from recorded bags in bulk',
                                   description='Replay each bag through the online estimators against RESULT and '
                                               'append one session per bag to the record (bags already in it are '
                                               'skipped).')
    importing.add_argument('bags', nargs='+', metavar='BAG', help='rosbag2 recordings with joint_states, '
                           'motor_states and joint_currents (joint_temperatures when there)')
    importing.add_argument('--params', required=True, help='identification result the estimators start from')
    importing.add_argument('--model', default=None, help='robot model (default: the one of the result)')
    _add_record_arguments(importing, argparse.SUPPRESS)
    add_effort_argument(importing)
    event = actions.add_parser('event', help='mark an event: a new baseline, a gearbox swap, a collision',
                               description='Record an event for a robot already in the record. reset, set_baseline, '
                                           'gearbox_swap and maintenance start a new baseline; collision marks a '
                                           'sudden change.')
    event.add_argument('kind', choices=EVENT_KINDS)
    event.add_argument('--joint', default=None, help='the joint (default: every joint)')
    event.add_argument('--note', default=None, help='free text')
    event.add_argument('--time', default=None, help='when, ISO 8601 UTC (2026-03-01T14:00); default now')
    _add_record_arguments(event, argparse.SUPPRESS)


def run(args: argparse.Namespace) -> int:
    action = getattr(args, 'health_action', None)
    if action == 'import':
        return _import(args)
    if action == 'event':
        return _event(args)
    return _judge(args)


def _judge(args) -> int:
    from dynid.health.job import judge_robots
    from dynid.health.page import write_page
    from dynid.health.record import HealthRecord, default_record_path
    from dynid.health.settings import HealthSettings

    for option, folder in (('--report', args.report), ('--fleet-report', args.fleet_report)):
        if folder:
            output_folder(folder, option)
    settings = settings_from_args(args, HealthSettings, **({'db': args.db} if args.db else {}))
    path = settings.db or default_record_path()
    if args.fleet_report or args.fleet_json:
        return _fleet(args, path, settings)
    if args.store_judgements:
        raise InputError('--store-judgements stores the fleet page\'s judgements: give --fleet-report or --fleet-json')
    if args.fleet_results:
        raise InputError('--fleet-results judges each robot\'s place in its fleet for the fleet\'s page: give '
                         '--fleet-report or --fleet-json')
    # the stored judgements where current, as the fleet's page reads them; the other robots judged here
    found = judge_robots(path, settings, robots=[args.robot] if args.robot else None)
    if args.robot and found.unjudged:
        raise InputError(f'{HealthRecord.display(path)}: robot {args.robot!r} cannot be judged: '
                         f'{found.unjudged[args.robot]}')
    healths = list(found.healths.values())
    if args.report:
        written = write_page(args.report, healths, found.events, source=found.source)
        print(f'wrote {written}', file=sys.stderr)
    if args.json:
        print(json.dumps({'record': str(HealthRecord.display(path)), 'robots': [h.to_dict() for h in healths],
                          'not_judged': [{'robot': robot, 'reason': why} for robot, why in found.unjudged.items()]},
                         indent=1))
    elif not args.report:
        for health in healths:
            print(f'{health.robot} ({health.model}, {health.sessions} sessions): {health.state.upper()}')
            for joint, quantities in health.joints.items():
                for quantity, q in quantities.items():
                    print(f'  {joint:<24}{quantity:<10}{q.state.upper():<8}{q.text}')
    for robot, why in found.unjudged.items():
        print(f'{robot}: NOT JUDGED: {why}', file=sys.stderr if args.json or args.report else sys.stdout)
    return EXIT_OK


def _fleet(args, path, settings) -> int:
    from dynid.fleet.report import fleet_json, judge_fleet, write_fleet_report
    from dynid.health.record import HealthRecord

    fleet = judge_fleet(path, settings, robots=[args.robot] if args.robot else None, store=args.store_judgements,
                        results=args.fleet_results, false_flag_rate=args.false_flag_rate)
    if args.robot and fleet.unjudged:
        raise InputError(f'{HealthRecord.display(path)}: robot {args.robot!r} cannot be judged: '
                         f'{fleet.unjudged[args.robot]}')
    if args.fleet_report:
        print(f'wrote {write_fleet_report(fleet, args.fleet_report) / "index.html"} ({len(fleet.robots)} robots, '
              f'{len(fleet.robots) - len(fleet.judged)} of them from their stored judgements)', file=sys.stderr)
    for robot, why in fleet.unjudged.items():
        print(f'{robot}: NOT JUDGED: {why}', file=sys.stderr)
    if args.fleet_json:
        print(json.dumps(fleet_json(fleet), indent=1))
    return EXIT_OK


def _event(args) -> int:
    from datetime import datetime

    from dynid.health.record import Event, HealthRecord

    if args.time is None:
        when = time.time()
    else:
        try:
            moment = datetime.fromisoformat(args.time)
        except ValueError:
            raise InputError(f'--time {args.time!r} is not an ISO 8601 time (e.g. 2026-03-01T14:00)') from None
        when = (moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)).timestamp()
    with HealthRecord(args.db, create=False) as record:
        if not args.robot:
            robots = record.robots()
            if len(robots) != 1:
                raise InputError(f'--robot is needed: {record.path} holds {robots or "no robots"}')
            args.robot = robots[0]
        record.add_event(args.robot, Event(args.kind, when, args.joint, args.note or ''))
    print(f'recorded {args.kind} for {args.robot}{" " + args.joint if args.joint else ""} in {record.path}')
    return EXIT_OK


def _import(args) -> int:
    from dynid.estimate.replay import EstimationSettings, estimate
    from dynid.health.job import record_replay
    from dynid.health.record import HealthRecord
    from dynid.identify import IdentificationResult, recorded_joints, robot_spec_of
    from dynid.model import load_robot

    result = IdentificationResult.load(args.params)
    spec = robot_spec_of(result.provenance, result.robot, args.model,
                         warn=lambda text: print(f'warning: {text}', file=sys.stderr))
    robot = load_robot(spec, joints=recorded_joints(result.provenance))
    name = args.robot or robot.name
    with HealthRecord(args.db) as record:  # refused here, before any replay, when it is not a record
        known = record.inputs(name) if name in record.robots() else set()
        path = record.path
    target = args.db or path
    failed = 0
    for bag in args.bags:
        if str(bag) in known:
            print(f'{bag}: already in the record, skipped')
            continue
        try:
            dataset = read_bag(bag, robot, args.joint_states_effort)
            history = estimate(dataset, result, EstimationSettings(), robot)
            session, _, note = record_replay(target, history, dataset, bag, result, args.params, robot.name, name,
                                             source='import', robot_model=robot, robot_file=str(spec))
        except InputError as error:
            print(f'dynid health import: error: {bag}: {message(error)}', file=sys.stderr)
            failed += 1
            continue
        print(f'{bag}: session {session} of {name}' + (f' ({note})' if note else ''))
    print(f'{len(args.bags) - failed} of {len(args.bags)} bags recorded in {path}')
    return EXIT_BAD_INPUT if failed else EXIT_OK
