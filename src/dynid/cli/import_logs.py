"""``dynid import``: logs (UR RTDE, libfranka, a column map; text, .npz or a driver's bag) into a contract bag."""

from __future__ import annotations

import argparse

from dynid.cli.options import add_option
from dynid.cli.shared import EXIT_OK, add_joints_argument, output_folder
from dynid.errors import InputError, spell

SUMMARY = ('turn logs (CSV/text/.npz with UR RTDE, libfranka or any column map; a driver\'s rosbag2) into a contract '
           'bag, checked, re-timed and resampled')


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description += (': rows that cannot be parsed, step back in time, repeat the state before them, are out of '
                           'range or jump further than the joint can move are dropped (each reported with its line); '
                           'stamps a logger wrote around the robot\'s control ticks are re-timed onto them where the '
                           'grid is evident; the rest is interpolated onto a uniform grid (positions by cubic spline, '
                           'the other signals linearly); gaps of up to --bridge missing samples are bridged, longer '
                           'ones stay gaps. import.yaml in the bag counts every row dropped or re-timed, with its '
                           'reason')
    from dynid.io.importing import ImportSettings

    parser.add_argument('csv', nargs='+', metavar='LOG',
                        help='the log: CSV or other text files (with or without a header line), .npz files, as '
                             'consecutive parts (the same columns, their time columns continuing each other) or one '
                             'signal per file (different columns, or a map that names each signal\'s file: '
                             'SIGNAL=FILE:COLUMN; joined by time, else row by row); or one rosbag2 recording (MCAP '
                             'or sqlite3 .db3) of a driver\'s joint_states')
    parser.add_argument('-o', '--output', required=True, help='new rosbag2 directory to write')
    columns = parser.add_mutually_exclusive_group()
    columns.add_argument('--preset', choices=('ur_rtde', 'franka'),
                         help='column names of UR\'s RTDE client (timestamp, actual_q_0…, actual_qd_*, '
                              'actual_current_*, joint_temperatures_*) or of libfranka\'s CSV logs (time [ms], '
                              'state.q[0]…, state.dq[*], state.tau_J[*])')
    columns.add_argument('--columns', metavar='SPEC',
                         help="generic column map, e.g. 'time=stamp,time_unit=ms,q=pos{i},dq=vel{i},current=cur{i}'"
                              ' ({i}: joint index from 0, {n}: from 1, either with an offset such as {i+7}; {name}: '
                              'joint name; #K: the column at position K from 0, e.g. q=#{n},dq=#{i+7}; signals q '
                              '(required, or '
                              'motor_q), dq, tau, current, temperature, motor_q and motor_dq (motor encoders [rad, '
                              'rad/s on the shaft]) and motor_torque (the motors\' torque [N·m on the shaft]), turned '
                              'into the joints\' by --drives (gear ratios, coupling); without time=, give --rate). '
                              'Columns of a file without a header are named <file stem>_0, _1, …; the arrays of an '
                              '.npz file are columns NAME (1-D) or NAME_0, NAME_1, … (2-D). FILE:COLUMN names the '
                              'column of one file (its name or stem), for files with the same header that hold one '
                              'signal each: \'motor_q=pos.csv:Joint_{n},motor_torque=torque.csv:Joint_{n}\'')
    add_joints_argument(parser)
    parser.add_argument('--robot', default=None,
                        help='robot whose joints the columns hold, in order (names and limits for the checks; '
                             'default: ur5e for ur_rtde, panda for franka; required with --columns and for a bag)')
    add_option(parser, ImportSettings, 'rate_hz', '--rate')
    add_option(parser, ImportSettings, 'timing', '--timing')
    add_option(parser, ImportSettings, 'start_s', '--start', metavar='SECONDS')
    add_option(parser, ImportSettings, 'end_s', '--end', metavar='SECONDS')
    add_option(parser, ImportSettings, 'bridge', '--bridge', more='; dynid identify bridges what its filters can')
    add_option(parser, ImportSettings, 'current_limit_a', '--current-limit')
    add_option(parser, ImportSettings, 'drives', '--drives', metavar='FILE')
    add_option(parser, ImportSettings, 'storage', '--storage')
    add_option(parser, ImportSettings, 'joint_states_effort', '--joint-states-effort')


def _is_bag(path: str) -> bool:
    from pathlib import Path

    path = Path(path)
    return path.is_dir() or path.suffix.lower() in ('.mcap', '.db3')


def _command(args: argparse.Namespace, columns: str) -> str:
    """``dynid import`` as given, with the column map ``columns``."""
    import shlex

    from dynid.io.csv_log import PRESETS
    from dynid.io.importing import ImportSettings

    words = ['dynid', 'import', *args.csv, '--columns', columns]
    robot = args.robot or (PRESETS[args.preset].robot if args.preset else None)  # --columns needs it named
    for flag, value in (('--robot', robot), ('--joints', ','.join(args.joints) if args.joints else None),
                        ('--rate', args.rate), ('--start', args.start or None), ('--end', args.end),
                        ('--timing', None if args.timing == 'auto' else args.timing),
                        ('--current-limit', args.current_limit), ('--drives', args.drives),
                        ('--storage', None if args.storage == 'mcap' else args.storage), ('-o', args.output)):
        if value is not None:
            words += [flag, f'{value:g}' if isinstance(value, float) else str(value)]
    if args.bridge != ImportSettings().bridge:
        words += ['--bridge', str(args.bridge)]
    return ' '.join(shlex.quote(word) for word in words)


def run(args: argparse.Namespace) -> int:

    from dynid.cli.flags import message
    from dynid.diagnosis.channels import channel_notes
    from dynid.diagnosis.effort import Recording
    from dynid.files import written
    from dynid.io.bag import write_bag
    from dynid.io.csv_log import PRESETS, parse_column_spec
    from dynid.io.importing import ImportSettings, import_bag, import_logs, write_import_report
    from dynid.io.log_checks import LogLimits
    from dynid.io.log_files import FileSetError
    from dynid.model import load_robot
    from dynid.model.drives import load_drives

    output = output_folder(args.output, '-o', new=True)
    settings = ImportSettings(rate_hz=args.rate, bridge=args.bridge, timing=args.timing,
                              current_limit_a=args.current_limit, drives=args.drives, start_s=args.start,
                              end_s=args.end).validated()
    bags = [path for path in args.csv if _is_bag(path)]
    if bags:
        if len(args.csv) > 1:
            raise InputError(f'{bags[0]} is a bag: give one bag, or text/.npz files only')
        if args.preset or args.columns:
            raise InputError(f'{bags[0]} is a bag: its topics name the signals (no --preset or --columns)')
        if args.robot is None:
            raise InputError(f'{bags[0]}: give --robot (the joints, by name, and their limits for the checks)')
        robot = load_robot(args.robot, joints=args.joints)
        dataset, report, start_ns = import_bag(bags[0], robot.joint_names, LogLimits.of_robot(robot,
                                               args.current_limit), settings, args.joint_states_effort)
    else:
        if not (args.preset or args.columns):
            raise InputError('give the columns of the log: --preset ur_rtde|franka or --columns SPEC')
        column_map = PRESETS[args.preset] if args.preset else parse_column_spec(args.columns)
        if args.robot is None and column_map.robot is None:
            raise InputError('--columns needs --robot (the joints the columns hold, in order)')
        robot = load_robot(args.robot or column_map.robot, joints=args.joints)
        if args.drives is not None:  # its drive gains bound the currents too
            robot = robot.with_drives(load_drives(args.drives, robot.joint_names))
        limits = LogLimits.of_robot(robot, args.current_limit)
        try:
            dataset, report, start_ns = import_logs(args.csv, column_map, robot.joint_names, limits, settings,
                                                    robot.drives)
        except FileSetError as error:
            if error.columns is None:
                raise
            reason = InputError(error.reason, fields=error.fields)
            raise InputError(f'{message(reason)}: {_command(args, error.columns)}') from None
    if robot.range_note:  # the checks took these joints as unbounded
        report.notes.append(robot.range_note)
    report.notes += [spell(line, ('torque_source',), lambda _: 'dynid identify --torque')
                     for line in channel_notes([Recording(dataset)], robot)]
    for line in report.lines():
        print(line)
    with written(output) as target:  # the bag and its import.yaml whole, or nothing
        write_bag(target, dataset, start_ns=start_ns, storage=args.storage)
        write_import_report(target, report)
    topics = ['joint_states'] + [topic for topic, signal in (('motor_states', dataset.theta),
                                                            ('joint_currents', dataset.current),
                                                            ('joint_temperatures', dataset.temperature))
                                 if signal is not None]
    topics += ['joint_trajectory_controller/joint_trajectory (the reference)'] if dataset.reference is not None else []
    print(f'wrote {output} (rosbag2, {"MCAP" if args.storage == "mcap" else "sqlite3"}: {", ".join(topics)}; '
          f'joint_states effort {"= joint torque" if dataset.tau is not None else "empty"}) and '
          f'{output / "import.yaml"}')
    return EXIT_OK
