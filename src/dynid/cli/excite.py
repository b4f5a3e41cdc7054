"""``dynid excite``: an excitation trajectory (Fourier, optionally optimized) or a special experiment."""

from __future__ import annotations

import argparse
import os
import sys

from dynid.cli.options import add_option, shown
from dynid.cli.shared import EXIT_OK, add_joints_argument, add_robot_argument, float_list, joint_list, output_file
from dynid.errors import InputError

#: Options whose default differs with --payload-only: ExcitationSettings' field and PayloadMotionSettings' field
_MODE_DEFAULTS = ('position_range', 'acceleration', 'starts', 'iterations')

SUMMARY = 'design (and optionally optimize) an excitation trajectory, or a special experiment'


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from dynid.excite.experiments import EXPERIMENTS
    from dynid.excite.payload_motion import PayloadMotionSettings as Motion
    from dynid.excite.settings import ExcitationSettings as Fourier

    add_robot_argument(parser)
    add_joints_argument(parser)
    parser.add_argument('-o', '--output', required=True, help='trajectory file to write (YAML)')
    parser.add_argument('--force', action='store_true', help='overwrite an existing output file')
    parser.add_argument('--plot', default=None, help='also write a PNG plot of q, q̇, q̈')
    add_option(parser, Fourier, 'seed', '--seed')
    parser.add_argument('--home', default=None, metavar='Q1,...',
                        help='centre of the excitation [rad], one value per joint in model order (default: '
                             'the UR home or the Franka ready pose for those arms, else the middle of the '
                             'joint ranges where finite, else 0)')
    fourier = parser.add_argument_group('Fourier excitation (default)')
    add_option(fourier, Fourier, 'harmonics', '--harmonics')
    add_option(fourier, Fourier, 'period_s', '--period')
    fourier.add_argument('--optimize', action='store_true', help='optimize the coefficients (else random)')
    add_option(fourier, Fourier, 'criterion', '--criterion')
    def per_mode(name: str, flag: str) -> None:  # another default with --payload-only
        defaults = f'{shown(getattr(Fourier, name))}; {shown(getattr(Motion, name))} with --payload-only'
        add_option(fourier, Fourier, name, flag, default=None, show_default=False, more=f' (default {defaults})')

    per_mode('starts', '--starts')
    per_mode('iterations', '--iterations')
    fourier.add_argument('--workers', type=int, default=None,
                         help='processes running the starts in parallel (default: one per core, at most --starts)')
    per_mode('position_range', '--position-range')
    add_option(fourier, Fourier, 'velocity_fraction', '--velocity-fraction')
    per_mode('acceleration', '--acceleration')
    fourier.add_argument('--torque-fraction', type=float, default=None,
                         help='bound the model torque to this fraction of the effort limits')
    add_option(fourier, Fourier, 'floor', '--floor', type=_floor)
    special = parser.add_argument_group('special experiments')
    special.add_argument('--experiment', default=None, choices=EXPERIMENTS)
    add_option(special, Fourier, 'joint', '--joint')
    add_option(special, Fourier, 'payloads', '--payloads', type=float_list)
    payload = parser.add_argument_group('payload motion (for dynid payload)')
    payload.add_argument('--payload-only', action='store_true',
                         help='a short motion of the wrist and the elbow (the others rest at home) optimized for a '
                              'flange payload\'s ten parameters (D-optimal); prints cond and the expected σ. Takes '
                              '--harmonics, --position-range, --velocity-fraction, --acceleration, --floor, --starts, '
                              '--iterations, --seed and --home')
    payload.add_argument('--params', default=None, metavar='RESULT',
                         help='the arm\'s identification result: its RMSE per joint sets the expected σ')
    payload.add_argument('--duration', type=float, default=None,
                         help=f'length of the motion [s], one period (default {Motion.duration_s:g}, at most 15)')
    payload.add_argument('--payload-joints', type=joint_list, default=None,
                         help='joints that move (default: the wrist and the elbow, the last four joints)')
    payload.add_argument('--torque-noise', type=float, default=None,
                         help=f'σ of a decimated torque row [N·m] per joint without --params (default '
                              f'{Motion.torque_noise_nm:g})')


def _floor(text: str) -> float | None:
    if text.strip().lower() == 'none':
        return None
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f'expected a height [m] or "none", got {text!r}') from None


def run(args: argparse.Namespace) -> int:

    from dynid.excite import experiments
    from dynid.excite.design import design_excitation
    from dynid.excite.home import default_home, parse_home
    from dynid.excite.plot import plot_trajectory
    from dynid.excite.trajectory import save_trajectory
    from dynid.model import load_robot

    output = output_file(args.output, '-o', args.force)
    if args.plot:
        output_file(args.plot, '--plot', force=True)
    if args.payload_only and args.experiment is not None:
        raise InputError('--payload-only is a motion of its own: give it without --experiment')
    if not args.payload_only and any(v is not None for v in (args.params, args.duration, args.payload_joints,
                                                              args.torque_noise)):
        raise InputError('--params, --duration, --payload-joints and --torque-noise belong to --payload-only')
    robot = load_robot(args.robot, joints=args.joints)
    home, home_source = (parse_home(args.home, robot), '--home') if args.home else default_home(robot)
    print(f'home [rad]: {[round(float(value), 4) for value in home]} ({home_source})')
    if args.payload_only:
        return _run_payload_motion(args, robot, home, output)
    from dynid.excite.settings import ExcitationSettings

    for name in _MODE_DEFAULTS:
        if getattr(args, name) is None:
            setattr(args, name, getattr(ExcitationSettings, name))
    metadata: dict = {}
    if args.experiment is None or args.experiment == 'payload_schedule':
        result = design_excitation(
            robot, home, harmonics=args.harmonics, period_s=args.period, seed=args.seed, optimize=args.optimize,
            criterion=args.criterion, starts=args.starts, iterations=args.iterations,
            workers=args.workers or min(args.starts, os.cpu_count() or 1), position_range=args.position_range,
            velocity_fraction=args.velocity_fraction, acceleration=args.acceleration,
            torque_fraction=args.torque_fraction, floor=args.floor,
            progress=lambda text: print(text, file=sys.stderr, flush=True), notice=print,
            warn=lambda text: print(f'warning: {text}', file=sys.stderr))
        trajectory = result.trajectory
        metadata['experiment'] = {'name': 'fourier', 'optimized': bool(args.optimize), 'seed': args.seed,
                                  'harmonics': args.harmonics, 'period_s': args.period,
                                  **_plain(result.summary())}
        criterion = '' if args.criterion == 'cond' else f' ({args.criterion} = {result.value:.4g})'
        print(f'cond(W_b) = {result.condition_number:.4g}{criterion}; '
              f'peak velocity {max(result.peaks["velocity"]):.3g} rad/s, peak acceleration '
              f'{max(result.peaks["acceleration"]):.3g} rad/s²'
              + (f'; optimized in {result.wall_time_s:.1f} s' if args.optimize else ''))
    if args.experiment == 'payload_schedule':
        masses = list(args.payloads)
        trajectory, schedule = experiments.payload_schedule(robot, trajectory, masses)
        metadata['payload_schedule'] = schedule
        metadata['experiment']['name'] = 'payload_schedule'
    elif args.experiment is not None:
        generators = {
            'plateaus': lambda: experiments.constant_velocity_plateaus(robot, args.joint, home),
            'gravity_sweep': lambda: experiments.gravity_sweep(robot, args.joint, home),
            'reciprocating': lambda: experiments.reciprocating_sweep(robot, args.joint, home),
            'bang_coast_bang': lambda: experiments.bang_coast_bang(robot, [args.joint], home, seed=args.seed),
            'waypoints': lambda: experiments.waypoint_cycle(robot),
        }
        trajectory = generators[args.experiment]()
        metadata['experiment'] = {'name': args.experiment, 'joint': args.joint, 'seed': args.seed}
    save_trajectory(trajectory, output, metadata)
    print(f'wrote {output} ({trajectory.duration_s:.2f} s, {len(trajectory.joint_names)} joints)')
    if args.plot:
        print(f'wrote {plot_trajectory(trajectory, args.plot, title=str(output.name))}')
    return EXIT_OK


def _run_payload_motion(args: argparse.Namespace, robot, home, output) -> int:
    from dataclasses import fields

    from dynid.excite.payload_motion import (
        PAYLOAD_PARAMETERS,
        PayloadMotionSettings,
        design_payload_motion,
        result_noise,
    )
    from dynid.excite.plot import plot_trajectory
    from dynid.excite.trajectory import save_trajectory
    from dynid.identify import IdentificationResult

    given = {'harmonics': args.harmonics, 'velocity_fraction': args.velocity_fraction, 'floor': args.floor,
             'seed': args.seed, 'duration_s': args.duration, 'torque_noise_nm': args.torque_noise,
             'joints': None if args.payload_joints is None else tuple(args.payload_joints),
             **{name: getattr(args, name) for name in _MODE_DEFAULTS}}
    known = {item.name for item in fields(PayloadMotionSettings)}
    settings = PayloadMotionSettings(**{k: v for k, v in given.items() if v is not None and k in known})
    noise, source = None, ''
    if args.params:
        result = IdentificationResult.load(args.params)
        if tuple(result.joint_names) != tuple(robot.joint_names):
            raise InputError(f'{args.params} is a result for joints {list(result.joint_names)}, not those of '
                             f'{robot.name!r} ({list(robot.joint_names)})')
        noise, source = result_noise(result), f'the RMSE per joint of {args.params}'
    motion = design_payload_motion(robot, home, settings, noise, source,
                                   progress=lambda text: print(text, file=sys.stderr, flush=True))
    std = motion.expected_std
    print(f'payload motion of {", ".join(motion.joints)}: {motion.trajectory.duration_s:g} s, peak velocity '
          f'{max(motion.peaks["velocity"]):.3g} rad/s, peak acceleration {max(motion.peaks["acceleration"]):.3g} '
          f'rad/s²; designed in {motion.wall_time_s:.1f} s')
    print(f'cond(W_P) = {motion.condition_number:.4g} (weighted, unit-norm columns)')
    print(f'expected σ (noise: {motion.noise_source}): mass {1e3 * std[0]:.3g} g; first moments '
          f'{[round(1e3 * float(value), 3) for value in std[1:4]]} g·m, i.e. centre of mass '
          f'{1e3 * motion.com_std_m(1.0):.3g} mm at 1 kg, {1e3 * motion.com_std_m(0.5):.3g} mm at 0.5 kg; '
          'inertia ' + ', '.join(
              f'{name} {value:.2g}' for name, value in zip(PAYLOAD_PARAMETERS[4:], std[4:], strict=True))
          + ' kg·m² (about the flange)')
    print('the σ are what the noise leaves; a bias of the arm\'s model adds to them (docs/methods/payload.md: a run '
          'of this motion without the payload in the arm\'s identification removes most of it)')
    save_trajectory(motion.trajectory, output, {'experiment': {'name': 'payload', 'seed': settings.seed,
                                                               **_plain(motion.summary())}})
    print(f'wrote {output} ({motion.trajectory.duration_s:.2f} s, {len(motion.trajectory.joint_names)} joints)')
    if args.plot:
        print(f'wrote {plot_trajectory(motion.trajectory, args.plot, title=str(output.name))}')
    return EXIT_OK


def _plain(value):
    """Numbers and containers as plain Python (for YAML): numpy's scalars as their values."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if getattr(value, 'ndim', None) == 0 and hasattr(value, 'item'):  # a numpy scalar
        return value.item()
    return value
