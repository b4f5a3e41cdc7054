"""``dynid validate``: the torques of recordings predicted with an identification result."""

from __future__ import annotations

import argparse
import sys

from dynid.cli.options import add_option
from dynid.cli.reading import add_effort_argument, drives_from_file, read_bag, result_torque_signs
from dynid.cli.shared import (
    EXIT_FAILED,
    EXIT_OK,
    add_joints_argument,
    float_list,
    output_file,
    print_metrics,
    result_joints,
)
from dynid.errors import InputError

SUMMARY = 'predict the torques of recordings with an identification result'


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from dynid.identify.settings import ValidationSettings as Validation

    parser.add_argument('bags', nargs='+',
                        help='rosbag2 recordings (MCAP or sqlite3, or bare .mcap or .db3 files) to predict')
    parser.add_argument('--params', required=True, help='result file of dynid identify')
    parser.add_argument('--robot', default=None,
                        help='robot (default: the one of the result, refused if its file moved or changed)')
    parser.add_argument('--compare-robot', default=None, metavar='ROBOT',
                        help='another robot file (a vendor\'s or a colleague\'s URDF, a built-in name) scored beside '
                             'the result on the same rows: its links\' inertias by its own inverse dynamics, with the '
                             'identification\'s friction; shown, not judged')
    add_joints_argument(parser, from_result=True)
    parser.add_argument('--drives', default=None, metavar='FILE',
                        help='drives file (as for dynid identify) for results that recorded none; the result\'s '
                             'drive gains are kept')
    parser.add_argument('--payload-mass', type=float_list, default=None,
                        help='known point-mass payload [kg] per bag (with --payload-com; alone: a load of the mass '
                             'the identification placed from the data, placed as there)')
    add_option(parser, Validation, 'payload_com', '--payload-com', type=float_list)
    parser.add_argument('--recover-payload', action='store_true',
                        help='estimate an unknown payload on each bag from the model\'s residual')
    parser.add_argument('--holdout', type=float, default=None, metavar='FRACTION',
                        help='score only the last FRACTION of each recording\'s time (as dynid identify --holdout '
                             'FRACTION held it out)')
    verdict = parser.add_argument_group(
        'verdict (for CI)', 'a threshold that fails makes the command exit 1 (after printing and writing everything)')
    add_option(verdict, Validation, 'require_fit', '--require-fit', action='append', metavar='PERCENT|JOINT=PERCENT',
               show_default=False, more=' (repeatable)')
    verdict.add_argument('--json', default=None, metavar='FILE',
                         help='write the verdict as JSON: per joint RMSE, NRMSE fit, threshold and pass/fail per bag, '
                              'and the sha256 of every input file (each file of each bag, the result, the robot and '
                              'drives files)')
    verdict.add_argument('--force', action='store_true', help='overwrite an existing --json file')
    add_effort_argument(parser)


def run(args: argparse.Namespace) -> int:

    from dynid.cli.flags import flag
    from dynid.errors import spell
    from dynid.identify import (
        OTHER_ESTIMATE_FIELDS,
        FitThresholds,
        IdentificationResult,
        Verdict,
        recover_payload,
        robot_spec_of,
        validate,
        validation_warnings,
    )
    from dynid.model import Payload, load_robot

    if args.json is not None:
        output_file(args.json, '--json', args.force)
    result = IdentificationResult.load(args.params)
    spec = robot_spec_of(result.provenance, result.robot, args.robot, warn=lambda text: print(f'warning: {text}'))
    robot = load_robot(spec, joints=result_joints(args, result))
    drives = drives_from_file(args.drives, robot)
    other = None if args.compare_robot is None else load_robot(args.compare_robot, joints=list(robot.joint_names))
    thresholds = FitThresholds.parse(args.require_fit, robot.joint_names)
    verdict = Verdict.start(args.params, spec, thresholds, args.drives)
    masses = args.payload_mass or [0.0] * len(args.bags)
    if len(masses) != len(args.bags):
        raise InputError(f'--payload-mass needs one mass per bag ({len(args.bags)}), got {len(masses)}')
    inputs = result.provenance.get('inputs') or []
    trained = {float(entry.get('payload_mass_known') or entry.get('payload_known') or 0.0) for entry in inputs}
    placed = {float(entry['payload_mass_known']) for entry in inputs if entry.get('payload_mass_known')}
    signs = result_torque_signs(args, result, robot.joint_names)
    unscored = []
    for bag, mass in zip(args.bags, masses, strict=True):
        dataset = read_bag(bag, robot, args.joint_states_effort, args.joint_map, signs,
                           diagnosis=result.diagnosis_section)
        if args.holdout is not None:
            dataset = dataset.split_holdout(args.holdout)[1]
        # a load of the mass the identification placed from the data, given by its mass alone: placed as there
        as_placed = mass > 0 and args.payload_com is None and float(mass) in placed
        payload = Payload(mass, args.payload_com) if mass > 0 and not as_placed else None
        metrics = validate(result, robot, dataset, payload, name=bag, drives=drives, other=other,
                           payload_mass=float(mass) if as_placed else None)
        metrics.setdefault('warnings', []).extend(validation_warnings(metrics, result.metrics.get('train')))
        metrics['warnings'] = [spell(line, OTHER_ESTIMATE_FIELDS, flag) for line in metrics['warnings']]
        if trained and float(mass) not in trained:
            declared = ', '.join(f'{m:g}' for m in sorted(trained))
            loads = ', '.join(f'{m:g}' for m in sorted(placed))
            carried = (f'the first moment and inertia of the load the identification placed from the data ({loads} '
                       'kg) are part of the last link\'s parameters and are predicted here too, its mass is not') \
                if placed else \
                'a payload carried but not declared there is part of the last link\'s parameters'
            metrics['warnings'].append(
                f'payload {mass:g} kg differs from those of the identification ({declared} kg declared): {carried}')
        print_metrics(f'{bag}', metrics)
        verdict.recordings.append(_recording_verdict(bag, mass, metrics, thresholds))
        if metrics['scored_joints'] == 0:
            unscored.append(bag)
            continue
        if args.recover_payload:
            recovered = recover_payload(result, robot, dataset, name=bag, drives=drives)
            print(f'  recovered payload mass {recovered["mass"]:.4f} ± {recovered["mass_std"]:.2g} kg')
    if thresholds.any:
        print(verdict.summary_line())
    if args.json is not None:
        print(f'wrote {verdict.write(args.json)}')
    if unscored:
        raise InputError(f'nothing could be scored on {", ".join(map(str, unscored))}: no joint has rows with a '
                         f'varying measured torque (a recording at rest?)')
    if verdict.passed is False:
        failures = verdict.failures()
        print(f'dynid validate: failed: {failures[0]}' + (f' (and {len(failures) - 1} more)' if len(failures) > 1
                                                          else ''), file=sys.stderr)
        return EXIT_FAILED
    return EXIT_OK


def _recording_verdict(bag: str, mass: float, metrics: dict, thresholds):
    """One recording's verdict (:class:`dynid.identify.validation.verdict.RecordingVerdict`): the result judged against
    ``thresholds``, the other predictions its metrics hold shown beside it, not judged."""
    from dynid.identify import RecordingVerdict

    recording = RecordingVerdict.of(bag, mass)
    recording.add_prediction('result', metrics, thresholds)
    if metrics.get('robot_file') is not None:  # shown beside the result, not judged
        recording.add_prediction('robot_file', metrics['robot_file'], thresholds, judged=False)
    if metrics.get('compare_robot') is not None:
        recording.add_prediction('compare_robot', metrics['compare_robot'], thresholds, judged=False)
    if metrics.get('other_estimate') is not None:  # the other consistency decision's estimate, not judged
        recording.add_prediction('other_estimate', metrics['other_estimate'], thresholds, judged=False)
    if metrics.get('joint_space') is not None:  # coupled drives: the joints' torques, shown beside the motors'
        recording.add_prediction('joint_space', metrics['joint_space'], thresholds, judged=False)
    return recording
