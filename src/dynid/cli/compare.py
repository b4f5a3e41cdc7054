"""``dynid compare``: two identification results side by side, parameter changes in σ and held-out fit."""

from __future__ import annotations

import argparse
import sys

from dynid.cli.options import add_option
from dynid.cli.reading import add_effort_argument, drives_from_file, read_bag
from dynid.cli.shared import EXIT_OK, float_list, output_file, output_folder
from dynid.errors import InputError
from dynid.files import write_text

SUMMARY = 'two results side by side: parameter changes in σ, held-out fit of both, an HTML page'


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from dynid.identify.settings import ComparisonSettings, ValidationSettings

    parser.description += ('. Each parameter both results have: its change B − A in standard deviations '
                            'σ = √(σ_A² + σ_B²) (independent identifications), ranked; |z| > 3 is a change their '
                            'uncertainties do not explain. With --bag, the NRMSE fit of both on recordings neither '
                            'was identified on')
    parser.add_argument('result_a', metavar='RESULT_A', help='result file of dynid identify (the reference)')
    parser.add_argument('result_b', metavar='RESULT_B', help='result file of dynid identify (compared with A)')
    parser.add_argument('--bag', action='append', default=None, metavar='HELDOUT',
                        help='held-out recording both results predict (repeatable)')
    parser.add_argument('--payload-mass', type=float_list, default=None,
                        help='known point-mass payload [kg] per --bag (with --payload-com)')
    add_option(parser, ValidationSettings, 'payload_com', '--payload-com', type=float_list)
    parser.add_argument('--robot', default=None,
                        help='robot of both (default: each result\'s own, refused if its file moved or changed)')
    parser.add_argument('--drives', default=None, metavar='FILE',
                        help='drives file (as for dynid identify) for results that recorded none')
    add_option(parser, ComparisonSettings, 'top', '--top')
    parser.add_argument('--report', default=None, metavar='DIR', help='folder for index.html and its plots')
    parser.add_argument('--json', default=None, metavar='FILE', help='write the comparison as JSON')
    parser.add_argument('--force', action='store_true', help='overwrite an existing --json file')
    add_effort_argument(parser)


def _payload_masses(args: argparse.Namespace) -> list[float]:
    """The payload mass of each held-out --bag (none given: no bags), checked with --payload-com."""
    args.bag = args.bag or []
    masses = args.payload_mass or [0.0] * len(args.bag)
    if len(masses) != len(args.bag):
        raise InputError(f'--payload-mass needs one mass per --bag ({len(args.bag)}), got {len(masses)}')
    if len(args.payload_com) != 3:
        raise InputError('--payload-com needs three values x,y,z [m]')
    return masses


def _print_heldout(comparison, bag: str, metrics: list[dict]) -> None:
    """Both results' held-out fit per joint on ``bag``; a result whose prediction fails on the motion (its metrics'
    ``failed``: :func:`dynid.identify.result.metrics.failed_model`) named as such instead of its fits."""
    from dynid.identify import failed_text
    from dynid.text import format_number

    print(f'held-out fit on {bag} [%]:')
    print(f'  {"joint":<22} {"A":>8} {"B":>8} {"B − A":>8}')
    failed = {label: block.get('failed') for label, block in zip('AB', metrics, strict=True)}
    for _, joint, fit_a, fit_b in (row for row in comparison.heldout_rows() if row[0] == bag):
        gap = None if fit_a is None or fit_b is None or any(failed.values()) else fit_b - fit_a
        fits = ['failed' if failed[label] else format_number(fit, '.2f')
                for label, fit in zip('AB', (fit_a, fit_b), strict=True)]
        print(f'  {joint:<22} {fits[0]:>8} {fits[1]:>8} {format_number(gap, "+.2f"):>8}')
    for label, found in failed.items():
        if found:
            print(f'{label} {failed_text(found)}')


def run(args: argparse.Namespace) -> int:
    import json
    from pathlib import Path

    from dynid.identify import (
        SIGNIFICANT_Z,
        IdentificationResult,
        compare_results,
        format_z,
        predict_series,
        recorded_joints,
        robot_spec_of,
        validate,
    )
    from dynid.model import Payload, load_robot
    from dynid.text import format_number

    if args.json is not None:
        output_file(args.json, '--json', args.force)
    if args.report:
        output_folder(args.report, '--report')
    if args.top < 0:
        raise InputError(f'--top must be >= 0, got {args.top}')
    masses = _payload_masses(args)
    results = [IdentificationResult.load(path) for path in (args.result_a, args.result_b)]
    comparison = compare_results(*results, label_a=str(args.result_a), label_b=str(args.result_b))
    for label, result in zip('AB', results, strict=True):
        print(f'{label}: {args.result_a if label == "A" else args.result_b} ({result.method.upper()}, friction '
              f'{result.model.get("friction")}, {len(result.parameter_names)} parameters)')
    significant = comparison.significant()
    print(f'{len(comparison.changes)} parameters compared; {len(significant)} changed by more than '
          f'{SIGNIFICANT_Z:g} σ (σ = √(σ_A² + σ_B²))')
    shown = comparison.ranked()[:max(args.top, len(significant))]
    if shown:
        print(f'  {"name":<12} {"A":>12} {"σ A":>9} {"B":>12} {"σ B":>9} {"B − A":>11} {"[%]":>8} {"z":>8}')
    for c in shown:
        print(f'  {c.name:<12} {c.a:>12.6g} {c.std_a:>9.3g} {c.b:>12.6g} {c.std_b:>9.3g} {c.change:>+11.4g} '
              f'{format_number(c.relative_percent, "+.3g"):>8} {format_z(c.z):>8}' + ('  *' if c.significant else ''))
    for label, names in (('only in A', comparison.only_a), ('only in B', comparison.only_b),
                         ('regrouped differently, not compared', comparison.regrouped)):
        if names:
            print(f'{label}: {", ".join(names)}')
    for note in comparison.notes:
        print(f'note: {note}')

    robots = {}  # spec → RobotModel: each result on the robot it was identified on
    specs = [robot_spec_of(result.provenance, result.robot, args.robot,
                           warn=lambda text: print(f'warning: {text}', file=sys.stderr)) for result in results]
    for spec, result in zip(specs, results, strict=True):
        if spec not in robots:
            robots[spec] = load_robot(spec, joints=recorded_joints(result.provenance))
    drives = drives_from_file(args.drives, robots[specs[0]])
    series = {}
    for bag, mass in zip(args.bag, masses, strict=True):
        payload = Payload(mass, args.payload_com) if mass > 0 else None
        predicted, metrics = [], []
        for result, spec in zip(results, specs, strict=True):
            robot = robots[spec]
            dataset = read_bag(bag, robot, args.joint_states_effort, args.joint_map)
            metrics.append(validate(result, robot, dataset, payload, name=bag, drives=drives))
            if args.report:
                predicted.append(predict_series(result, robot, dataset, payload, name=bag, drives=drives))
        comparison.add_heldout(bag, *metrics)
        if predicted:
            (times, measured, predicted_a, keep), (_, _, predicted_b, _) = predicted
            if predicted_a.shape == predicted_b.shape:
                series[bag] = (times, measured, predicted_a, predicted_b, keep)
        _print_heldout(comparison, bag, metrics)
    if args.json is not None:
        path = Path(args.json)
        write_text(path, json.dumps(comparison.to_dict(), indent=2, allow_nan=False) + '\n')
        print(f'wrote {path}')
    if args.report:
        from dynid.identify import write_comparison_report

        print(f'wrote {write_comparison_report(args.report, comparison, series)}')
    return EXIT_OK
