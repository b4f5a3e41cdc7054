"""``dynid fleet``: what the robots of one model know together.

    dynid fleet prior RESULT... -o FLEET_PRIOR.yaml [--force] [--false-flag-rate RATE]
"""

from __future__ import annotations

import argparse

from dynid.cli.options import add_option
from dynid.cli.shared import EXIT_OK, output_file

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
                    'robots.')
    prior.add_argument('results', nargs='+', metavar='RESULT', help='result files of dynid identify, one per robot '
                       '(each named by its file\'s stem)')
    prior.add_argument('-o', '--out', '--output', dest='output', required=True, metavar='FILE',
                       help='fleet prior file to write (YAML; for dynid identify --prior)')
    prior.add_argument('--force', action='store_true', help='overwrite an existing fleet prior file')
    add_option(prior, FleetPriorSettings, 'false_flag_rate', '--false-flag-rate', metavar='RATE')


def run(args: argparse.Namespace) -> int:
    from dynid.fleet.prior import FleetTable, fleet_prior, read_members
    from dynid.fleet.settings import FleetPriorSettings
    from dynid.fleet.standing import fleet_standing

    settings = FleetPriorSettings(false_flag_rate=args.false_flag_rate)
    output = output_file(args.output, '-o', args.force)
    members = read_members(args.results)
    table = FleetTable.of(members)
    prior = fleet_prior(table)
    kinds = [p.kind for p in prior.parameters]
    model = prior.model
    print(f'fleet prior of {prior.robots} robots of {prior.robot} (friction {model.get("friction")}, torque '
          f'{model.get("torque_source")}): {kinds.count("base")} base parameters, {kinds.count("friction")} friction '
          f'parameters, {kinds.count("drive_gain")} drive gains pooled')
    for entry in prior.left_out:
        print(f'left out: {entry["name"]} ({entry["reason"]})')
    standings = fleet_standing(table, settings.false_flag_rate)
    apart = [entry for standing in standings for entry in standing.apart]
    print(f'each robot against the other {prior.robots - 1} (leave-one-out; at most {100 * settings.false_flag_rate:g} '
          f'healthy robots in 100 named): ' + (f'{len(apart)} parameters of '
                                               f'{sum(bool(s.apart) for s in standings)} robots stand apart'
                                               if apart else 'no robot stands apart'))
    for entry in apart:
        print(f'  {entry.line()}')
    prior.save(output)
    print(f'wrote {output}')
    return EXIT_OK
