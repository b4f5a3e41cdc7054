"""``dynid identify``: the dynamic model from recordings, written as a result file and a report."""

from __future__ import annotations

import argparse
import sys

from dynid.cli.flags import ADVICE, flag
from dynid.cli.options import add_option
from dynid.cli.reading import (
    add_effort_argument,
    drives_from_file,
    effort_told,
    read_bag,
    recording_inputs,
    torque_signs,
)
from dynid.cli.shared import (
    EXIT_OK,
    add_filter_arguments,
    add_joints_argument,
    add_robot_argument,
    filter_settings,
    float_list,
    output_file,
    output_folder,
    print_metrics,
    robot_said,
)
from dynid.errors import InputError
from dynid.identify.registry import flag_entries, flagged_options

SUMMARY = 'identify the dynamic model from recordings (IDIM: OLS, WLS, IRLS, I-IRLS, TLS)'


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from dynid.identify.settings import IdentifierSettings as Identifier

    parser.add_argument('bags', nargs='+',
                        help='rosbag2 recordings (directories, MCAP or sqlite3) or bare .mcap or .db3 files')
    add_robot_argument(parser)
    add_joints_argument(parser)
    add_option(parser, Identifier, 'exclude_joints', '--exclude-joint', action='append', metavar='JOINT',
               show_default=False, help="leave this joint's equations out of the fit, keeping its motion in the "
                                        "others' (repeatable or comma-separated): a joint whose torque is missing or "
                                        "not to be trusted; its friction is held at 0 and what only its equations "
                                        "hold at the robot file's values")
    parser.add_argument('--drives', default=None, metavar='FILE',
                        help='drives file (YAML: per joint gear_ratio, drive_gain [N·m/A] and rotor_inertia [kg·m²], '
                             'link side; optional motor_offset and coupling) replacing the robot\'s; needed for '
                             'currents on a robot without drive data (TLS and MLS identify the gains and need none). '
                             'A coupling (a wrist whose motor turns q5 + q6: coupling: {wrist_2: 1, wrist_3: 1} under '
                             'that motor\'s joint; a row of C, θ = C·q) makes the equations the motors\', one per '
                             'drive, each with its own friction and rotor inertia on θ̇ = C·q̇ (and a joint several '
                             'motors make may keep friction on its own velocity, Fcq_j and Fvq_j); the held-out fit is '
                             'then printed for the motors and for the joints\' torques τ = Cᵀ·(K_τ·i). dynid model '
                             '--drives FILE shows what a file means; docs/contract.md, "Drives file", has a worked '
                             'example')
    add_option(parser, Identifier, 'method', '--method', more=' (docs/methods/identification.md); give one to fix it')
    add_option(parser, Identifier, 'friction', '--friction', more='; give one to fix it')
    parser.add_argument('--temperature', action='store_true', help='add the temperature friction term')
    add_option(parser, Identifier, 'torque_source', '--torque')
    parser.add_argument('--no-rotor-compensation', action='store_true',
                        help='with currents: do not subtract B·θ̈, identify rotor inertias instead (motor_torque always '
                             'identifies them; refused with joint_torque)')
    parser.add_argument('--payload-mass', type=float_list, default=None,
                        help='payload mass [kg] per bag, comma-separated (0: none)')
    parser.add_argument('--payload-com', type=float_list, default=None,
                        help='payload centre of mass x,y,z [m] in the flange frame: payloads become fully known '
                             'point masses (else only their mass is known)')
    add_option(parser, Identifier, 'method_option', '--method-option', action='append', metavar='NAME=VALUE',
               show_default=False, more=' (repeatable; docs/methods/identification.md lists each method\'s)')
    add_method_flags(parser)
    physical = parser.add_argument_group(
        'the robot file as a prior', 'by default (every method but tls and mls) the estimate is pulled toward the '
        'robot file\'s link inertias with a weight chosen by cross-validation over stretches of the recording, and '
        '(methods ols, wls, irls; friction none or viscous_coulomb) made physically consistent where that costs little')
    physical.add_argument('--physical', action='store_true',
                          help='always physically consistent: every link\'s pseudo-inertia positive definite, rotor '
                               'inertia and Coulomb/viscous friction >= 0, whatever it costs (refused for methods '
                               'and friction models it cannot take)')
    physical.add_argument('--prior-std', type=float, default=None,
                          help='relative standard deviation s of the prior (default: chosen by cross-validation '
                               'over stretches of the recording)')
    physical.add_argument('--no-prior', action='store_true',
                          help='no pull toward the robot file: the plain linear solution (with --physical: '
                               'consistent without a prior)')
    add_option(physical, Identifier, 'prior_source', '--prior', dest='prior_source', metavar='FILE',
               show_default=False, help="pull toward this earlier result file's base parameters instead of the robot "
                                        "file's link inertias, each spread by its σ, or toward a fleet prior's (dynid "
                                        "fleet prior: the median of many robots of this model, spread by their "
                                        "spread), or toward a file of a kind another package registers (entry "
                                        "points dynid.prior_sources), with the weight chosen the same way (refused "
                                        "when it is another robot's or has another joint order)")
    add_option(physical, Identifier, 'physical_solver', '--physical-solver')
    parser.add_argument('--validate', nargs='*', default=None, help='recordings to validate on')
    parser.add_argument('--holdout', type=float, default=None, metavar='FRACTION',
                        help='identify on the first part of each recording and validate on its last FRACTION of '
                             'the time (e.g. 0.25); dynid validate --holdout FRACTION scores the same samples')
    add_effort_argument(parser)
    parser.add_argument('-o', '--output', required=True, help='result file (YAML)')
    parser.add_argument('--force', action='store_true',
                        help='overwrite an existing result file, and keep a result the data cannot support (cond of '
                             'the column-scaled regressor above 1000, or more than half the parameters above 50 %% '
                             'relative σ), which is otherwise refused')
    parser.add_argument('--report', default=None, help='folder for index.html and plots')
    parser.add_argument('--quiet', action='store_true')
    add_filter_arguments(parser)


def add_method_flags(parser: argparse.ArgumentParser) -> None:
    """Each registered method's option with a flag (:func:`dynid.identify.registry.flagged_options`) as its long
    option (:func:`dynid.cli.flags.flag`, as errors name it):
    ``--weight-function`` (irls, iirls), ``--fix-drive-gain`` (tls, mls; a list option: once per item), a method of
    another package's likewise; not given: the method's default (:func:`method_options`)."""
    for option, methods in flagged_options():
        unit = f' [{option.unit}]' if option.unit else ''
        shown = f'; default {option.default}' if option.default not in ('', (), None) else ''
        many, value = '; repeatable' if option.type == 'list' else '', option.metavar or 'VALUE'
        parser.add_argument(flag(option.name), dest=option.name, default=None, choices=option.choices or None,
                            action='append' if option.type == 'list' else 'store', metavar=option.metavar or None,
                            help=f'{option.help}{unit} (an option of {", ".join(methods)}: --method-option '
                                 f'{option.name}={value}{many}{shown})'.replace('%', '%%'))


def method_entries(args: argparse.Namespace) -> tuple[str, ...]:
    """The method options given as ``NAME=VALUE`` entries (:func:`dynid.identify.registry.parse_method_options`):
    ``--method-option`` and the flags :func:`add_method_flags` added."""
    flagged = {option.name: getattr(args, option.name, None) for option, _ in flagged_options()}
    return (*(args.method_option or ()), *flag_entries(flagged))


def advice_spelling() -> dict[str, str]:
    """How this command writes the settings the identification's advice names: :data:`dynid.cli.flags.ADVICE` and
    each flagged method option as its flag."""
    return {**ADVICE, **{option.name: flag(option.name) for option, _ in flagged_options()}}


def run(args: argparse.Namespace) -> int:
    from dynid.blas import one_blas_thread

    # One BLAS thread for the whole verb, as the identification itself runs: the products of reading, diagnosing and
    # writing woke a second thread that spun on after each of them, CPU spent for no result (benchmarks/README).
    with one_blas_thread():
        return _run(args)


def _run(args: argparse.Namespace) -> int:
    import time

    from dynid.identify import identify_with_settings
    from dynid.identify.settings import IdentifierSettings
    from dynid.model import load_robot
    from dynid.signal.preprocess import describe_filters

    start = time.perf_counter()
    output = output_file(args.output, '-o', args.force)
    if args.report:
        output_folder(args.report, '--report')
    if args.payload_com is not None and len(args.payload_com) != 3:
        raise InputError('--payload-com needs three values x,y,z [m]')
    if args.payload_com is not None and not args.payload_mass:
        raise InputError('--payload-com places the payloads of --payload-mass: give their masses too')

    def say(text: str) -> None:
        if not args.quiet:
            print(f'[{time.perf_counter() - start:6.1f} s] {text}', file=sys.stderr, flush=True)

    robot = robot_said(load_robot(args.robot, joints=args.joints))
    drives_from_file(args.drives, robot)  # a bad drives file is refused before any work
    source = _prior_source(args, robot)  # and so is a bad prior
    say(f'reading {len(args.bags)} recording(s)')
    effort = effort_told(args, ('joint_torque', 'motor_torque'))
    signs = torque_signs(args, robot.joint_names)
    recordings = recording_inputs(args.bags, robot, args.payload_mass, args.payload_com, 'payload-mass', effort,
                                  args.joint_map, signs)
    settings = IdentifierSettings(
        method=args.method, friction=args.friction, temperature=args.temperature, torque_source=args.torque,
        method_option=method_entries(args), prior=not args.no_prior, prior_source=args.prior_source or '',
        physical=args.physical, physical_solver=args.physical_solver, exclude_joints=tuple(args.exclude_joint or ()),
        report=bool(args.report), force=args.force)
    validation = [(bag, read_bag(bag, robot, effort, args.joint_map, signs)) for bag in args.validate or ()]
    result, report = identify_with_settings(
        robot, recordings, settings, output, args.robot, filters=filter_settings(args), prior_source=source,
        prior_relative_std=args.prior_std, rotor_compensation=not args.no_rotor_compensation, drives_file=args.drives,
        holdout=args.holdout, validation=validation, report=args.report, spelling=advice_spelling(), progress=say)
    print(f'{result.method.upper()} identification of {robot.name}: {len(result.parameter_names)} parameters '
          f'({sum(n in result.base_expressions for n in result.parameter_names)} base), {result.condition_text()}')
    print(describe_filters(result.provenance.get('filters') or {}))
    for entry in result.provenance.get('inputs') or []:  # the share used; recordings with gaps are warned about
        gaps = entry.get('gaps') or {}
        if gaps.get('summary') and gaps['summary'] not in result.warnings:
            print(gaps['summary'])
    if result.drive_gains_identified:
        from dynid.identify import diagnostics_lines

        fixed = (result.drive_gain_diagnostics or {}).get('fixed', {})
        print('drive gains [N·m/A]: ' + ', '.join(
            f'{g:.5g} (fixed)' if j in fixed else f'{g:.5g} (±{s:.2g})'
            for j, g, s in zip(result.joint_names, result.drive_gains, result.drive_gains_std, strict=True)))
        for line in diagnostics_lines(result.drive_gain_diagnostics or {}):
            print(f'  {line}')
    for line in (result.model.get('choice') or {}).get('lines', []):
        print(line)
    for label, metrics in result.metrics.items():
        print_metrics(label, metrics)
    for line in [*_prior_lines(result, source), *_source_lines(result)]:
        print(line)
    if result.physical_section is not None:
        section = result.physical_section
        print(f'physically consistent ({section["solver"]}, {section["solve_s"]:.2f} s): consistency cost '
              f'{section["consistency"]["cost_percent"]:+.3f} % of the weighted χ², M(q) positive definite on '
              f'{section["mass_matrix"]["positive_definite_percent"]:.1f} % of {section["mass_matrix"]["states"]} '
              f'random states')
    for warning in result.warnings:
        print(f'warning: {warning}')
    print(f'wrote {output}')
    if report is not None:
        print(f'wrote {report}')
    say('done')
    return EXIT_OK


def _prior_source(args: argparse.Namespace, robot):
    """The earlier result or the fleet prior given as the prior
    (:func:`dynid.identify.solve.prior_source.prior_source`); None: the robot file's."""
    if not args.prior_source:
        return None
    if args.no_prior:
        raise InputError('--prior FILE and --no-prior exclude each other')
    from dynid.identify import prior_source

    return prior_source(args.prior_source, robot)


def _source_lines(result) -> list[str]:
    """Which torque source predicts the held-out rows better, where the log holds two and the source was left to
    dynid (:func:`dynid.identify.job.torque_sources.comparison_line`)."""
    from dynid.identify import comparison_line

    sources = result.provenance.get('torque_sources')
    return [comparison_line(sources, ADVICE)] if sources else []


def _prior_lines(result, source) -> list[str]:
    """The prior's line (:func:`_prior_text`) and the joints whose offset and gravity the poses could not tell apart,
    with what decided between them."""
    from dynid.identify import offset_gravity_line

    lines = [] if result.prior_section is None else [_prior_text(result.prior_section, source)]
    alike = offset_gravity_line(result.model.get('offset_gravity') or {})
    return lines + ([alike] if alike else [])


def _prior_text(prior: dict, source) -> str:
    """One line on the prior (``source``, the file given as the prior; None: the robot file): its weight and how it
    was chosen, or why it was not used."""
    from dynid.identify import pulls_toward

    if not prior['used']:
        return f'prior: none ({prior.get("reason") or "not used"})'
    cross_validation = prior.get('cross_validation')
    how = (f'by {cross_validation["folds"]}-fold cross-validation over stretches of the recording'
           if cross_validation else 'at the spread measured over the fleet' if prior.get('weight') == 'measured spread'
           else 'given')
    note = (prior.get('consistency') or {}).get('note')
    toward = f'the robot file\'s link inertias ({prior["source"]})' if source is None else pulls_toward(source)
    informed = prior.get('informed')
    decided = '' if not informed else (
        f'\nof the {informed["pulled"]} parameters it pulls on one by one, the data decided '
        f'{len(informed["decided_by_data"])} (posterior σ below half the prior\'s) and left '
        f'{len(informed["held_at_prior"])} at its values (above 0.9 of it)'
        + (f': {", ".join(informed["held_at_prior"][:8])}' + (', ...' if len(informed['held_at_prior']) > 8 else '')
           if informed['held_at_prior'] else ''))
    return (f'prior: {toward}, relative σ s = {prior["relative_std"]:g} '
            f'{how}; training χ² {prior["prior_cost_percent"]:+.2f} % against the plain fit (--no-prior)'
            + decided + (f'\n{note}' if note else ''))
