"""``dynid estimate``: a recording replayed through the online stiffness and friction estimators."""

from __future__ import annotations

import argparse
import sys

from dynid.cli.flags import message
from dynid.cli.options import add_option
from dynid.cli.reading import add_effort_argument, drives_from_file, read_bag, result_torque_signs
from dynid.cli.shared import EXIT_OK, add_joints_argument, float_list, output_file, output_folder, result_joints
from dynid.errors import InputError
from dynid.progress import Progress

SUMMARY = 'replay a recording through the online stiffness and friction estimators'


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from dynid.estimate.replay import EstimationSettings
    from dynid.health.settings import HealthSettings

    parser.add_argument('bag', help='rosbag2 recording with joint_states, joint_currents and (for the stiffness) '
                                    'motor_states; without motor_states give --no-stiffness: the friction is then '
                                    'adapted on rigid joints (θ = q)')
    parser.add_argument('--params', required=True, help='result file of dynid identify (friction map, drive gains)')
    parser.add_argument('--robot', default=None, help='robot (default: the one of the result)')
    parser.add_argument('--drives', default=None, metavar='FILE',
                        help='drives file (as for dynid identify: gear_ratio, drive_gain, rotor_inertia per joint) '
                             'replacing those the result recorded and the robot\'s; the result\'s drive gains are '
                             'kept')
    add_joints_argument(parser, from_result=True)
    parser.add_argument('-o', '--output', default=None,
                        help='estimates file (YAML: settings, final values); the history goes to a CSV beside it')
    parser.add_argument('--force', action='store_true', help='overwrite existing output files')
    parser.add_argument('--report', default=None, help='folder for index.html and convergence plots')
    defaults = EstimationSettings()
    parser.add_argument('--batch', type=int, default=defaults.batch,
                        help='samples per estimator update (default %(default)s; the numbers do not depend on it)')
    parser.add_argument('--no-stiffness', action='store_true', help='do not estimate the joint stiffness')
    parser.add_argument('--no-friction', action='store_true', help='do not adapt the E-GMS friction')
    parser.add_argument('--damping', type=float_list, default=[defaults.damping],
                        help='transmission damping [N·m·s/rad]: one value, or one per joint '
                             f'(default {defaults.damping:g})')
    parser.add_argument('--order', type=int, default=defaults.order,
                        help='odd powers of the stiffness polynomial (default %(default)s)')
    parser.add_argument('--forgetting', type=float, default=defaults.forgetting,
                        help='RLS forgetting factor (default %(default)s)')
    parser.add_argument('--freeze', type=float, default=defaults.freeze_s,
                        help='no friction adaptation for the first S seconds')
    parser.add_argument('--min-velocity', type=float, default=defaults.min_velocity,
                        help='the stiffness learns only while |rotor velocity| reaches this [rad/s] (default '
                             '%(default)s)')
    parser.add_argument('--quiet', action='store_true', help='no progress output')
    box = parser.add_argument_group(
        'friction projection box (Madsen 2020 ch.6 eq. (27)); an estimate on its edge is reported as capped',
        'per joint α1 within 1 ± (C + K·σ(Fc)/Fc) and α2 within ±(C·|Fv| + K·σ(Fv)) [N·m·s/rad] with the result\'s '
        'Fc, Fv and their σ, never narrower than the thesis\' [0.4, 1.5] × [-0.05, 0.05]')
    change, sigmas = EstimationSettings.friction_change, EstimationSettings.bound_sigmas
    box.add_argument('--friction-change', type=float, default=change, metavar='C',
                     help=f'relative change of the identified friction the box admits (default {change:g}: from none '
                          'to twice the identified)')
    box.add_argument('--bound-sigmas', type=float, default=sigmas, metavar='K',
                     help=f'standard deviations of the identified Fc, Fv added (default {sigmas:g})')
    box.add_argument('--alpha1-bounds', type=float_list, default=None, metavar='MIN,MAX',
                     help='α1 box on every joint instead (the thesis: 0.4,1.5)')
    box.add_argument('--alpha2-bounds', type=float_list, default=None, metavar='MIN,MAX',
                     help='α2 box [N·m·s/rad] on every joint instead (the thesis: -0.05,0.05)')
    add_option(parser, HealthSettings, 'db', '--db', help='health record the session is appended to: an SQLite '
               'file or a postgresql:// URL; empty: $XDG_DATA_HOME/dynid/health.sqlite3 (dynid health reads it)')
    add_option(parser, HealthSettings, 'robot', '--health-robot')
    parser.add_argument('--no-record', action='store_true', help='do not append the session to the health record')
    add_effort_argument(parser)


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from dynid.estimate.replay import EstimationSettings, estimate
    from dynid.estimate.report import load_truth, save_estimation, summary_lines, write_estimation_report
    from dynid.files import file_sha256
    from dynid.identify import IdentificationResult, robot_spec_of
    from dynid.model import load_robot

    settings = EstimationSettings(batch=args.batch, stiffness=not args.no_stiffness, friction=not args.no_friction,
                                  damping=args.damping[0] if len(args.damping) == 1 else tuple(args.damping),
                                  order=args.order, forgetting=args.forgetting, freeze_s=args.freeze,
                                  min_velocity=args.min_velocity, friction_change=args.friction_change,
                                  bound_sigmas=args.bound_sigmas, alpha1_bounds=args.alpha1_bounds,
                                  alpha2_bounds=args.alpha2_bounds)
    output = None if args.output is None else Path(args.output)
    if output is not None and output.suffix.lower() == '.csv':
        raise InputError(f'-o {output}: name the YAML file; the history CSV goes beside it')
    for path in () if output is None else (output, output.with_suffix('.csv')):
        output_file(path, '-o', args.force)
    if args.report:
        output_folder(args.report, '--report')
    result = IdentificationResult.load(args.params)
    robot_spec = robot_spec_of(result.provenance, result.robot, args.robot,
                               warn=lambda text: print(f'warning: {text}', file=sys.stderr))
    robot = load_robot(robot_spec, joints=result_joints(args, result))
    drives = drives_from_file(args.drives, robot)
    dataset = read_bag(args.bag, robot, args.joint_states_effort, args.joint_map,
                       result_torque_signs(args, result, robot.joint_names), diagnosis=result.diagnosis_section)
    progress = None if args.quiet else Progress(f'replaying {args.bag}')
    history = estimate(dataset, result, settings, robot, drives=drives,
                       progress=None if progress is None else lambda done, total: progress(done / total))
    if progress is not None:
        progress.close()
    try:
        truth = load_truth(args.bag, robot.joint_names, dataset.source.get('start_ns', 0) / 1e9)
    except InputError as error:
        print(f'warning: {message(error)}; no truth shown', file=sys.stderr)
        truth = None
    print('\n'.join(summary_lines(history, truth)))
    if not args.no_record:
        from dynid.health.job import record_replay

        session, path, note = record_replay(args.db, history, dataset, args.bag, result, args.params, robot.name,
                                            args.health_robot, robot_model=robot, robot_file=str(robot_spec))
        print(f'recorded session {session} of {args.health_robot or robot.name} in {path}' +
              (f' ({note})' if note else ''))
    if output is not None:
        inputs = {'bag': str(args.bag), 'params': str(args.params), 'robot_spec': robot_spec}
        if args.drives is not None:
            inputs['drives'] = {'file': str(Path(args.drives).resolve()), 'sha256': file_sha256(args.drives)}
        print('wrote ' + ' and '.join(map(str, save_estimation(output, history, robot.name, inputs))))
    if args.report:
        print(f'wrote {write_estimation_report(args.report, history, truth, str(args.bag))}')
    return EXIT_OK
