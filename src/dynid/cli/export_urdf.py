"""``dynid export-urdf``: a physically consistent result as a URDF with the identified inertials."""

from __future__ import annotations

import argparse

from dynid.cli.shared import EXIT_OK, output_file
from dynid.errors import InputError
from dynid.files import write_text

SUMMARY = 'write a URDF with the physically consistent identification in it (inertials, friction)'


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument('result', help='result file of dynid identify --physical')
    parser.add_argument('--robot', required=True, metavar='URDF', help='the URDF of the identified robot')
    parser.add_argument('-o', '--output', required=True, help='URDF to write')
    parser.add_argument('--force', action='store_true', help='overwrite an existing output file')


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from dynid.identify import IdentificationResult, export_urdf, friction_not_held, round_trip_error

    output = output_file(args.output, '-o', args.force)
    if not Path(args.robot).is_file():
        raise InputError(f'URDF file {args.robot} does not exist')
    result = IdentificationResult.load(args.result)
    text = export_urdf(result, args.robot)
    error = round_trip_error(result, args.robot, text)
    if not error < 1e-6:
        raise InputError(f'{args.robot} does not reproduce the result\'s torques after export (relative error '
                         f'{error:.2g}): not the robot model the result was identified on?')
    write_text(output, text)
    print(f'wrote {output}: {len(result.joint_names)} identified links; pinocchio on it reproduces the identified '
          f'torques to {error:.1e} of their scale')
    note = friction_not_held(result)
    if note:
        print(f'  {note}')
    return EXIT_OK
