"""The ``dynid`` command. Each subcommand documents itself: ``dynid <subcommand> --help``.

Exit codes (DESIGN.md §6): 0 success, 2 bad input (one-line reason on stderr), 1 internal error.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence

import numpy as np

from dynid import __version__
from dynid.errors import InputError

EXIT_OK, EXIT_INTERNAL, EXIT_BAD_INPUT = 0, 1, 2


def _joint_list(text: str) -> list[str]:
    names = [name.strip() for name in text.split(',') if name.strip()]
    if not names:
        raise argparse.ArgumentTypeError('expected comma-separated joint names')
    return names


# ------------------------------------------------------------------------------------ dynid model
def _add_model_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument('--robot', default='ur5e',
                        help='built-in name (ur5e, ur5, panda), a .urdf file, or a dynid robot '
                             '.yaml (default: ur5e)')
    parser.add_argument('--joints', type=_joint_list, default=None,
                        help='URDF only: comma-separated joints to keep, in chain order; '
                             'the others are locked')
    parser.add_argument('--json', action='store_true', help='print one JSON document')


def _format_limit(value: float | None, scale: float = 1.0) -> str:
    return '-' if value is None else f'{value * scale:.4g}'


def _run_model(args: argparse.Namespace) -> int:
    from dynid.model import load_robot  # pinocchio loads here, not for --help

    robot = load_robot(args.robot, joints=args.joints)
    summary = robot.summary()
    if args.json:
        print(json.dumps(summary, indent=2))
        return EXIT_OK
    print(f'robot: {summary["robot"]}  ({summary["source"]})')
    print(f'gravity [m/s²]: {np.round(summary["gravity"], 6).tolist()}   flange frame: {summary["flange"]}')
    print(f'joints: {robot.n}')
    print(f'  {"#":>2}  {"name":<22} {"type":<10} {"lower":>9} {"upper":>9} {"velocity":>9} {"effort":>8}')
    print(f'  {"":>2}  {"":<22} {"":<10} {"[deg]":>9} {"[deg]":>9} {"[deg/s]":>9} {"[N·m]":>8}')
    for i, joint in enumerate(summary['joints'], start=1):
        scale = 1.0 if joint['type'] == 'prismatic' else 180.0 / np.pi
        print(f'  {i:>2}  {joint["name"]:<22} {joint["type"]:<10} '
              f'{_format_limit(joint["lower"], scale):>9} {_format_limit(joint["upper"], scale):>9} '
              f'{_format_limit(joint["velocity"], scale):>9} {_format_limit(joint["effort"]):>8}')
    if summary['drives']:
        print('drives: gear ratio, drive gain [N·m/A, link side], rotor inertia [kg·m², link side]')
        for name, drive in summary['drives'].items():
            print(f'  {name:<22} {drive["gear_ratio"]:>8.4g} {drive["drive_gain"]:>8.4g} '
                  f'{drive["rotor_inertia"]:>8.4g}')
    base = summary['base_parameters']
    print(f'standard inertial parameters: {summary["standard_parameters"]}')
    print(f'base parameters: {base["count"]}  (QR rank tolerance {base["tolerance"]:g})')
    for i, parameter in enumerate(base['parameters'], start=1):
        print(f'  {i:>3}  {parameter["name"]:<10} = {parameter["expression"]}')
    if base['unidentifiable']:
        print(f'no effect on the torques: {", ".join(base["unidentifiable"])}')
    return EXIT_OK


# --------------------------------------------------------------------------------- dynid simulate
def _add_simulate_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument('--robot', default='ur5e', help='robot (as for dynid model; default ur5e)')
    parser.add_argument('--trajectory', default=None,
                        help='dynid trajectory file (YAML); default: a built-in gentle Fourier motion')
    parser.add_argument('--duration', type=float, default=None,
                        help='seconds to simulate (default: the trajectory\'s duration)')
    parser.add_argument('--rate', type=float, default=1000.0, help='output rate [Hz] (default 1000)')
    parser.add_argument('--payload', type=float, default=0.0,
                        help='payload mass [kg] at the flange, centre of mass 5 cm out (default 0)')
    parser.add_argument('--drive-gain-error', type=float, default=0.0,
                        help='true drive gains differ from nominal by up to this fraction (default 0)')
    parser.add_argument('--temperature', type=float, default=25.0,
                        help='initial and ambient temperature [°C] (default 25)')
    parser.add_argument('--seed', type=int, default=0, help='seed of noise and perturbations (default 0)')
    parser.add_argument('-o', '--output', required=True,
                        help='new directory for the rosbag2 (MCAP) recording and truth.yaml')
    parser.add_argument('--quiet', action='store_true', help='no progress output')


def _run_simulate(args: argparse.Namespace) -> int:
    from dynid.model import load_robot
    from dynid.sim.recording import SimulationSettings, simulate_recording

    robot = load_robot(args.robot)
    settings = SimulationSettings(duration_s=args.duration, rate_hz=args.rate, seed=args.seed,
                                  payload_kg=args.payload, drive_gain_error=args.drive_gain_error,
                                  temperature_c=args.temperature)
    output = simulate_recording(robot, args.output, args.trajectory, settings, quiet=args.quiet)
    print(f'wrote {output} (rosbag2, MCAP) and {output / "truth.yaml"}')
    return EXIT_OK


# ------------------------------------------------------------------------------------ dispatcher
_SUBCOMMANDS: dict[str, tuple[str, Callable, Callable]] = {
    'model': ('print joints, limits and the base parameters of a robot model',
              _add_model_arguments, _run_model),
    'simulate': ('run the digital twin on a trajectory and write a rosbag2 (MCAP) recording',
                 _add_simulate_arguments, _run_simulate),
}


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``dynid`` command."""
    parser = argparse.ArgumentParser(
        prog='dynid', description='Dynamics of robot arms: identify, estimate, feed forward.')
    parser.add_argument('--version', action='version', version=f'dynid {__version__}')
    subparsers = parser.add_subparsers(dest='command', metavar='SUBCOMMAND', required=True)
    for name, (summary, add_arguments, run) in _SUBCOMMANDS.items():
        sub = subparsers.add_parser(name, help=summary, description=summary)
        add_arguments(sub)
        sub.set_defaults(run=run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``dynid``; returns the exit code."""
    args = build_parser().parse_args(argv)
    try:
        return args.run(args)
    except InputError as error:
        print(f'dynid {args.command}: error: {error}', file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        return 130


if __name__ == '__main__':
    sys.exit(main())
