"""``dynid payload``: a flange payload's mass, centre of mass and inertia from one short recorded motion, with the
arguments of UR's ``set_payload`` and Franka's ``setLoad``."""

from __future__ import annotations

import argparse
import sys

from dynid.cli.reading import add_effort_argument, drives_from_file, read_bag, result_torque_signs
from dynid.cli.shared import EXIT_OK, output_file
from dynid.files import write_text

SUMMARY = 'payload mass, centre of mass and inertia from a short motion; UR set_payload / Franka setLoad arguments'


def _flag(name: str) -> str:
    return '--' + name.replace('_', '-')


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from dataclasses import fields

    from dynid.payload import PayloadSettings
    from dynid.settings import description

    parser.description += ('. The arm must have been identified without the payload (dynid identify): what its model '
                           'leaves unexplained in BAG is the payload. Record the motion of dynid excite --payload-only '
                           '(best: with a run of it without the payload in the arm\'s identification; see '
                           'docs/methods/payload.md)')
    parser.add_argument('bag', help='rosbag2 recording (or bare .mcap file) of the payload motion')
    parser.add_argument('--params', required=True, help='result file of the arm\'s identification (dynid identify)')
    parser.add_argument('--robot', default=None,
                        help='robot (default: the one of the result, refused if its file moved or changed)')
    parser.add_argument('--drives', default=None, metavar='FILE',
                        help='drives file for results that recorded none; the result\'s drive gains are kept')
    add_effort_argument(parser)
    parser.add_argument('-o', '--output', default=None, help='payload file to write (YAML, dynid_payload: 1)')
    parser.add_argument('--force', action='store_true', help='overwrite an existing output file')
    group = parser.add_argument_group('payload identification')
    for item in fields(PayloadSettings):
        default = item.default
        if isinstance(default, bool):
            group.add_argument(_flag(item.name), action=argparse.BooleanOptionalAction, default=default,
                               help=f'{description(item)} (default {"on" if default else "off"})')
        else:
            group.add_argument(_flag(item.name), type=type(default), default=default,
                               choices=item.metadata.get('choices'), help=f'{description(item)} (default {default})')


def _settings(args: argparse.Namespace):
    from dataclasses import fields

    from dynid.payload import PayloadSettings

    return PayloadSettings(**{item.name: getattr(args, item.name) for item in fields(PayloadSettings)})


def _matrix_rows(matrix, std) -> list[str]:
    """Rows of a (3, 3) matrix with their standard deviations, as text."""
    return ['[' + ', '.join(f'{v:+.5f} ± {s:.1g}' for v, s in zip(row, srow, strict=True)) + ']'
            for row, srow in zip(matrix, std, strict=True)]


def run(args: argparse.Namespace) -> int:

    from dynid.files import file_sha256
    from dynid.identify import IdentificationResult, robot_spec_of
    from dynid.model import load_robot
    from dynid.payload import identify_payload
    from dynid.payload.document import payload_document, payload_yaml
    from dynid.payload.robot_calls import robot_family
    from dynid.text import format_number as number

    settings = _settings(args)
    output = None if args.output is None else output_file(args.output, '-o', args.force)
    result = IdentificationResult.load(args.params)
    robot = load_robot(robot_spec_of(result.provenance, result.robot, args.robot,
                                     warn=lambda text: print(f'warning: {text}', file=sys.stderr)))
    drives = drives_from_file(args.drives, robot)
    # The check of the torque against the robot file is left out: the payload's torque is what it would flag.
    dataset = read_bag(args.bag, robot, args.joint_states_effort, args.joint_map,
                       result_torque_signs(args, result, robot.joint_names), check=False)
    estimate = identify_payload(result, robot, dataset, settings, drives=drives, name=str(args.bag))
    document = payload_document(estimate, robot, settings, {
        'recording': str(args.bag), 'result': str(args.params), 'result_sha256': file_sha256(args.params)})

    print(f'payload at {estimate.flange} of {robot.name}: {estimate.rows} equations of {", ".join(estimate.joints)} '
          f'from {args.bag} ({dataset.n_samples} samples); solved in {estimate.solve_s:.2f} s')
    print(f'  mass            {estimate.mass:.4f} ± {estimate.mass_std:.2g} kg')
    print(f'  centre of mass  {[round(float(c), 5) for c in estimate.com]} m  ± '
          f'{[round(1e3 * float(s), 2) for s in estimate.com_std]} '
          f'mm  (flange frame)')
    if estimate.inertia is not None:
        rows = _matrix_rows(estimate.inertia, estimate.inertia_std)
        print(f'  inertia about the centre of mass [kg·m²] {rows[0]}')
        for row in rows[1:]:
            print(f'  {"":<41}{row}')
    else:
        print(f'  inertia         {estimate.inertia_note}')
    if estimate.inertia is None:
        print('  physically consistent: mass > 0, the inertia of a point mass')
    else:
        print(f'  physically consistent: pseudo-inertia positive definite (smallest eigenvalue '
              f'{estimate.min_pseudo_eigenvalue:.3g} kg·m²)' + ('; the unconstrained estimate was not and was '
                                                               'projected' if estimate.constrained else ''))
    if estimate.offsets:
        print('  torque offsets [N·m]: ' + ', '.join(f'{j} {v:+.3f}' for j, v in estimate.offsets.items()))
    without, with_payload = estimate.validation['without_payload'], estimate.validation['with_payload']
    print(f'torques of {args.bag}: RMSE without the payload {number(without["rmse"], ".4g")} N·m, with it '
          f'{number(with_payload["rmse"], ".4g")} N·m')
    for joint in estimate.joints:
        a, b = without['joints'][joint], with_payload['joints'][joint]
        print(f'  {joint:<22} RMSE {number(a["rmse"], ".4g"):>8} -> {number(b["rmse"], ".4g"):>8} N·m   NRMSE fit '
              f'{number(a["nrmse_fit_percent"], ".2f"):>7} -> {number(b["nrmse_fit_percent"], ".2f"):>7} %')
    family = robot_family(robot)
    calls = document['robot_settings']
    if family in (None, 'ur'):
        ur = calls['ur_set_payload']
        print(f'UR set_payload ({ur["frame"]}; {ur["note"]}):\n  {ur["command"]}')
    if family in (None, 'franka'):
        franka = calls['franka_set_load']
        call = franka['libfranka']
        print(f'Franka setLoad ({franka["frame"]}; {franka["note"]}):\n  robot.setLoad({call["load_mass"]}, '
              f'{call["F_x_Cload"]}, {call["load_inertia"]})\n  {franka["command"]}')
    for warning in estimate.warnings:
        print(f'warning: {warning}')
    if output is not None:
        write_text(output, payload_yaml(document))
        print(f'wrote {output}')
    return EXIT_OK
