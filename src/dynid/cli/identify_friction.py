"""``dynid identify-friction``: the joint friction model fitted into a result file."""

from __future__ import annotations

import argparse
import sys

from dynid.cli.options import add_option
from dynid.cli.reading import (
    add_effort_argument,
    check_recording,
    drives_from_file,
    effort_told,
    result_torque_signs,
)
from dynid.cli.shared import EXIT_OK, add_joints_argument, float_list, output_file, result_joints

SUMMARY = 'fit the joint friction model (static map, temperature, load-dependent Coulomb, E-GMS) into a result file'


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from dynid.identify import EXPERIMENTS
    from dynid.identify import FrictionSettings as Friction

    parser.description += (' (Madsen 2020 ch.6: no-load Stribeck map with temperature terms, load-dependent Coulomb '
                           'Fc0 + Fc1·τ_j², E-GMS laws and backlash) from recordings of one joint each in the friction '
                           'experiments of dynid excite (plateaus, gravity_sweep, reciprocating; plateaus while the '
                           'joint warms up are a warm_up), with τ_j from the rigid-body model of --params; adds the '
                           'joint_friction section to the result file')
    parser.add_argument('bags', nargs='+',
                        help='rosbag2 recordings (MCAP or sqlite3, or bare .mcap or .db3 files), one experiment each')
    parser.add_argument('--params', required=True, help='result file of dynid identify (rigid-body model, drive gains)')
    parser.add_argument('--robot', default=None, help='robot (as for dynid model; default: the result\'s robot)')
    add_joints_argument(parser, from_result=True)
    parser.add_argument('--drives', default=None, metavar='FILE',
                        help='drives file (as for dynid identify: gear_ratio, drive_gain, rotor_inertia per joint) '
                             'replacing those the result recorded and the robot\'s; the result\'s drive gains and '
                             'identified rotor inertias are kept')
    parser.add_argument('-o', '--output', default=None,
                        help='result file to write (default: add the section to --params itself)')
    parser.add_argument('--force', action='store_true', help='overwrite an existing --output')
    parser.add_argument('--experiment', action='append', default=None, metavar='NAME[:JOINT]',
                        help=f'experiment of each bag, in order, one of {", ".join(EXPERIMENTS)} or auto (default: '
                             'a twin recording\'s trajectory file names it, else the motion tells); repeat once per '
                             'bag, or give one for all')
    add_option(parser, Friction, 'torque', '--torque')
    parser.add_argument('--payload-mass', type=float_list, default=None, help='payload mass [kg] per bag (0: none)')
    add_option(parser, Friction, 'payload_com', '--payload-com', type=float_list)
    add_option(parser, Friction, 'cutoff_hz', '--cutoff')
    add_option(parser, Friction, 't0_c', '--t0')
    add_option(parser, Friction, 'min_temperature_span_c', '--temperature-span')
    add_option(parser, Friction, 'egms_initial', '--egms-initial', type=float_list)
    parser.add_argument('--quiet', action='store_true', help='no progress output')
    add_effort_argument(parser)


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from dynid.identify import (
        FrictionSettings,
        IdentificationResult,
        identify_joint_friction,
        robot_spec_of,
        summary_lines,
        write_joint_friction,
    )
    from dynid.model import load_robot

    output = Path(args.output) if args.output else Path(args.params)
    output_file(output, '-o' if args.output else '--params',
                args.force or not args.output or output.resolve() == Path(args.params).resolve())
    settings = FrictionSettings(torque=args.torque, cutoff_hz=args.cutoff, min_temperature_span_c=args.temperature_span,
                                t0_c=args.t0, egms_initial=tuple(args.egms_initial),
                                payload_com=tuple(args.payload_com))
    result = IdentificationResult.load(args.params)
    robot = load_robot(robot_spec_of(result.provenance, result.robot, args.robot,
                                     warn=lambda text: print(f'warning: {text}', file=sys.stderr)),
                       joints=result_joints(args, result))
    drives = drives_from_file(args.drives, robot)
    recordings = _recordings(args, robot, result, settings)
    identification = identify_joint_friction(
        recordings, result, robot, settings, progress=None if args.quiet else lambda text: print(text, file=sys.stderr),
        drives=drives)
    print('\n'.join(summary_lines(identification)))
    print(f'wrote {write_joint_friction(args.params, identification.section(), output)}')
    return EXIT_OK


def _recordings(args: argparse.Namespace, robot, result, settings) -> list:
    """The experiments' recordings (:func:`dynid.identify.friction_fit.recordings.friction_recordings`), with the
    result's torque signs, each checked against the robot file where the result holds no diagnosis of its own."""
    from dynid.identify import friction_recordings
    from dynid.model.naming import parse_joint_map

    effort = effort_told(args, ('effort',))
    recordings = friction_recordings(args.bags, robot, args.experiment, args.payload_mass, settings.payload_com,
                                     effort or 'torque', parse_joint_map(args.joint_map))
    signs = result_torque_signs(args, result, robot.joint_names)
    for recording in recordings:
        recording.dataset = recording.dataset.with_torque_signs(signs)
        if result.diagnosis_section is None:  # else the identification's diagnosis holds (not decided again)
            check_recording(recording.dataset, robot, effort, recording.name)
    return recordings
