"""``dynid fleet``: what the robots of one model know together.

    dynid fleet prior RESULT... -o FLEET_PRIOR.yaml [--force] [--false-flag-rate RATE] [--json FILE|-]
    dynid fleet prior --db URL [--model NAME] -o FLEET_PRIOR.yaml [...]
"""

from __future__ import annotations

import argparse
import json
import sys

from dynid.cli.options import add_option
from dynid.cli.shared import EXIT_OK, output_file
from dynid.errors import InputError

SUMMARY = "what a fleet of one robot model knows: its results pooled into a prior, each robot's place in the fleet"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from dynid.fleet.settings import FleetPriorSettings

    parser.description += ('. dynid identify --prior FLEET_PRIOR.yaml pulls a robot\'s identification toward its '
                           'fleet\'s parameters, weighted by the same cross-validation as the robot file\'s.')
    actions = parser.add_subparsers(dest='fleet_action', metavar='ACTION', required=True)
    prior = actions.add_parser(
        'prior', help='pool the results of robots of one model into a fleet prior; name the robots standing apart',
        description='Pool the identification results of robots of one model (the same joints, friction law, torque '
                    'source and base grouping) into a fleet prior: per base parameter, friction parameter and '
                    'identified drive gain, the median over the robots and a robust spread (1.4826·MAD, at least the '
                    'median of their own σ). Each robot is then judged against the others (leave-one-out): the '
                    'parameters that stand apart beyond what its fleet and its own σ explain are named. At least 3 '
                    'robots. The results are files, or each robot\'s newest result kept in a health record (--db).')
    prior.add_argument('results', nargs='*', metavar='RESULT', help='result files of dynid identify, one per robot '
                       '(each named by its file\'s stem); or --db')
    prior.add_argument('--db', default=None, metavar='URL', help='pool each robot\'s newest identification result '
                       'kept in this health record (an SQLite file or a postgresql:// URL; dynid batch --db keeps '
                       'them) instead of result files')
    prior.add_argument('--model', default=None, metavar='NAME', help='with --db: the robot model whose results are '
                       'pooled (the results\' robot, e.g. ur5e); needed where the record holds several')
    prior.add_argument('-o', '--out', '--output', dest='output', required=True, metavar='FILE',
                       help='fleet prior file to write (YAML; for dynid identify --prior)')
    prior.add_argument('--force', action='store_true', help='overwrite an existing fleet prior file')
    add_option(prior, FleetPriorSettings, 'false_flag_rate', '--false-flag-rate', metavar='RATE')
    prior.add_argument('--json', default=None, metavar='FILE', help='also write the prior\'s summary and every '
                       'robot\'s standing as JSON to FILE (written whole or not at all; --force overwrites), or to '
                       'the standard output with "-" (the text then goes to the standard error)')


def run(args: argparse.Namespace) -> int:
    from dynid.files import write_text
    from dynid.fleet.prior import FleetTable, fleet_prior
    from dynid.fleet.settings import FleetPriorSettings
    from dynid.fleet.standing import standings_by_model

    settings = FleetPriorSettings(false_flag_rate=args.false_flag_rate)
    output = output_file(args.output, '-o', args.force)
    to_stdout = args.json == '-'
    report = output_file(args.json, '--json', args.force) if args.json and not to_stdout else None
    if report is not None and report.resolve() == output.resolve():
        raise InputError(f'--json {args.json} is the fleet prior file -o writes: name another file')
    say = (lambda text: print(text, file=sys.stderr)) if to_stdout else print  # noqa: E731
    members = _members(args)
    if args.db is not None:
        from dynid.health.record import HealthRecord

        say(f"{len(members)} robots' newest results read from {HealthRecord.display(args.db)}")
    table = FleetTable.of(members)
    prior = fleet_prior(table)
    kinds = [p.kind for p in prior.parameters]
    counts = {kind: kinds.count(kind) for kind in ('base', 'friction', 'drive_gain')}
    model = prior.model
    say(f'fleet prior of {prior.robots} robots of {prior.robot} (friction {model.get("friction")}, torque '
        f'{model.get("torque_source")}): {counts["base"]} base parameters, {counts["friction"]} friction '
        f'parameters, {counts["drive_gain"]} drive gains pooled')
    for entry in prior.left_out:
        say(f'left out: {entry["name"]} ({entry["reason"]})')
    (group,) = standings_by_model(members, settings.false_flag_rate)  # one model: the table pooled them
    apart = group.apart
    if group.why_not:
        say(f'each robot against the others: not judged ({group.why_not})')
    else:
        say(f'each robot against the other {prior.robots - 1} (leave-one-out; at most '
            f'{100 * settings.false_flag_rate:g} healthy robots in 100 named): '
            + (f'{len(apart)} parameters of {sum(bool(s.apart) for s in group.standings)} robots stand apart'
               if apart else 'no robot stands apart'))
    for entry in apart:
        say(f'  {entry.line()}')
    document = {'prior': {**prior.to_dict(), 'file': str(output), 'pooled': counts}, 'standing': group.to_dict()}
    text = json.dumps(document, indent=1, allow_nan=False)
    prior.save(output)
    say(f'wrote {output}')
    if to_stdout:
        print(text)
    elif report is not None:
        write_text(report, text + '\n')
        say(f'wrote {report}')
    return EXIT_OK


def _members(args: argparse.Namespace) -> list:
    """The results pooled: the files given, or each robot's newest in the record ``--db``."""
    from dynid.fleet.prior import read_members, record_members

    if args.db is not None and args.results:
        raise InputError('give either result files (RESULT) or --db, not both')
    if args.db is None and args.model is not None:
        raise InputError('--model chooses among the results of --db: give --db')
    if args.db is None and not args.results:
        raise InputError('no results to pool: give result files (RESULT...) or --db')
    return record_members(args.db, args.model) if args.db is not None else read_members(args.results)

