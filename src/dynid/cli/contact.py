"""``dynid contact``: the external torque, contacts and flange wrench of recordings, replayed through the observer."""

from __future__ import annotations

import argparse
import json
import sys

from dynid.cli.reading import add_effort_argument, drives_from_file, read_bag, result_torque_signs
from dynid.cli.shared import EXIT_OK, add_joints_argument, add_settings_arguments, output_folder, result_joints
from dynid.errors import InputError

SUMMARY = 'external torque, contacts and the flange wrench of recordings, from an identification result'


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from dynid.cli.options import add_option
    from dynid.cli.shared import float_list
    from dynid.contact.settings import ContactNodeSettings, ContactSettings

    parser.add_argument('bags', nargs='+', help='rosbag2 recordings (MCAP or sqlite3) to replay, with the '
                                               'controller\'s reference where they hold one')
    parser.add_argument('--params', required=True, help='result file of dynid identify')
    parser.add_argument('--robot', default=None, help='robot (default: the one of the result)')
    add_joints_argument(parser, from_result=True)
    parser.add_argument('--drives', default=None, metavar='FILE', help='drives file, for results that recorded none')
    add_option(parser, ContactNodeSettings, 'payload_mass', '--payload', type=float, metavar='KG')
    add_option(parser, ContactNodeSettings, 'payload_com', '--payload-com', type=float_list, metavar='X,Y,Z')
    parser.add_argument('--calibrate', nargs='+', default=None, metavar='BAG',
                        help='contact-free recordings (motion and rests) to calibrate the thresholds on, at the '
                             'stated false-alarm rate; without it or --calibration the thresholds are those of a '
                             'Gaussian residual of the result\'s σ, which a real arm\'s is not')
    parser.add_argument('--calibration', default=None, metavar='FILE', help='a calibration file to use')
    parser.add_argument('--save-calibration', default=None, metavar='FILE',
                        help='write the calibration of --calibrate to FILE')
    parser.add_argument('--wrench', action=argparse.BooleanOptionalAction, default=None,
                        help='estimate the flange wrench (default: on arms of six joints or more)')
    parser.add_argument('--report', default=None, metavar='DIR',
                        help='write a page: τ̂_ext and its alarm level per joint over time, the contacts')
    parser.add_argument('--json', action='store_true', help='print the contacts as JSON instead of text')
    add_effort_argument(parser)
    add_settings_arguments(parser, ContactSettings, 'observer and detection (docs/methods/contact.md)')


def _signals(dataset, bag, reference: bool, calibration=None) -> dict:
    """The monitor's inputs from a recording, the controller's reference (q_r, q̇_r) where ``reference`` and the
    recording holds one (:attr:`dynid.io.dataset.Dataset.reference`: its trajectory topic, controller state, RTDE
    targets, an imported log's); a warning where ``calibration`` was made with one and the recording has none."""
    recorded = dataset.reference if reference else None
    if recorded is None and calibration is not None and calibration.with_reference:
        unread = dataset.source.get('reference_unread')
        print(f'warning: {bag}: no commanded velocity, but the thresholds were calibrated with one: a motion\'s '
              'breakaway at rest can pass the rest threshold here' + (f' (its reference: {unread})' if unread else ''),
              file=sys.stderr)
    return {'t': dataset.t, 'q': dataset.q, 'dq': dataset.dq, 'current': dataset.current, 'tau': dataset.tau,
            'dtheta': dataset.dtheta, 'temperature': dataset.temperature,
            'reference_velocity': None if recorded is None else recorded.dq,
            'reference_position': None if recorded is None else recorded.q}


def _monitored(monitor, dataset, bag, settings, calibration, joint_names) -> dict:
    """One recording through the monitor: its samples and contacts, each with the flange wrench at its peak force."""
    import numpy as np

    monitor.reset()
    signals = _signals(dataset, bag, settings.reference, calibration)
    samples = monitor.run(**signals, what=bag)
    contacts = [c.to_dict(joint_names) for c in samples.contacts]
    for c, contact in zip(samples.contacts, contacts, strict=True):
        if samples.wrench is not None:
            rows = np.flatnonzero((samples.t >= c.start_s) & (samples.t <= (c.end_s or samples.t[-1])))
            force = np.linalg.norm(np.nan_to_num(samples.wrench[rows, :3]), axis=1)
            k = rows[int(np.argmax(force))] if rows.size else None
            contact['flange_wrench_at_peak'] = None if k is None or samples.wrench_singular[k] else \
                [round(float(v), 3) for v in samples.wrench[k]]
    return {'name': str(bag), 'samples': samples, 'contacts': contacts,
            'reference': signals['reference_velocity'] is not None}


def run(args: argparse.Namespace) -> int:
    import numpy as np

    from dynid.cli.flags import flag
    from dynid.cli.shared import settings_from_args
    from dynid.contact.monitor import ContactMonitor, load_calibration, save_calibration
    from dynid.contact.report import write_report
    from dynid.contact.settings import ContactSettings
    from dynid.errors import spell
    from dynid.identify import IdentificationResult, robot_spec_of
    from dynid.model import Payload, load_robot

    if args.report is not None:
        output_folder(args.report, '--report')
    if args.calibrate and args.calibration:
        raise InputError('give --calibrate (recordings) or --calibration (a file), not both')
    settings = settings_from_args(args, ContactSettings).validated()
    result = IdentificationResult.load(args.params)
    spec = robot_spec_of(result.provenance, result.robot, args.robot, warn=lambda text: print(f'warning: {text}'))
    robot = load_robot(spec, joints=result_joints(args, result))
    drives = drives_from_file(args.drives, robot)
    robot = robot if drives is None else robot.with_drives(drives)
    payload = Payload(args.payload, list(args.payload_com)) if args.payload > 0 else None
    signs = result_torque_signs(args, result, robot.joint_names)

    def read(bag):
        return read_bag(bag, robot, args.joint_states_effort, args.joint_map, signs, check=False)

    datasets = {bag: read(bag) for bag in args.bags}
    rate = 1.0 / float(np.median(np.diff(next(iter(datasets.values())).t)))
    monitor = ContactMonitor(result, robot, settings, rate, payload, wrench=args.wrench)
    effort = args.joint_states_effort or 'torque'
    calibration = load_calibration(args.calibration, robot, args.params, effort) if args.calibration else None
    monitor.set_calibration(calibration)
    if args.calibrate:
        calibration = monitor.calibrate([{**_signals(read(bag), bag, settings.reference), 'what': bag}
                                         for bag in args.calibrate])
        calibration.warnings = [spell(line, ('false_alarm_rate',), flag) for line in calibration.warnings]
        if args.save_calibration:
            save_calibration(calibration, args.save_calibration, robot, settings, args.params, effort)
    short = '' if calibration is None else calibration.shortness()
    for line in ([short] if short else []) + ([] if calibration is None else calibration.warnings):
        print(f'warning: {line}', file=sys.stderr)
    recordings = [_monitored(monitor, dataset, bag, settings, calibration, robot.joint_names)
                  for bag, dataset in datasets.items()]
    stages = monitor.observer.stages
    header = [f'{result.robot}: observer K = {monitor.gain[0]:g} 1/s × {stages} stages at {rate:.4g} Hz; thresholds '
              + ('from ' + (args.calibration or ', '.join(args.calibrate)) if calibration is not None
                 else 'uncalibrated (Gaussian at the result\'s σ)') + (f' ({short})' if short else '')]
    if args.json:
        print(json.dumps({'recordings': [{'name': r['name'], 'contacts': r['contacts'], 'reference': r['reference']}
                                         for r in recordings],
                          'calibration': None if calibration is None else calibration.to_dict(robot.joint_names),
                          'calibration_short': short or None,
                          'observer_gain': float(monitor.gain[0]), 'observer_stages': stages,
                          'rate_hz': rate}, default=float))
    else:
        print(header[0])
        for recording in recordings:
            print(f'{recording["name"]}: {len(recording["contacts"])} contact(s)'
                  + ('' if recording['reference'] else ' (no commanded velocity: the measured speeds alone)'))
            for c in recording['contacts']:
                end = 'open' if c['end_s'] is None else f'{c["end_s"]:.3f} s'
                peaks = ', '.join(f'{j} {v:+.2f}' for j, v in c['peak_nm'].items())
                wrench = c.get('flange_wrench_at_peak')
                print(f'  {c["start_s"]:.3f} s – {end}: joints {", ".join(c["joints"])} (most distal '
                      f'{c["distal_joint"]}; raised by {", ".join(c["raised_by"])}); peak τ̂_ext [N·m] {peaks}'
                      + (f'; flange wrench [N, N·m] {wrench}' if wrench else ''))
    if args.report is not None:
        page = write_report(args.report, recordings, robot.joint_names, header)
        if not args.json:
            print(f'wrote {page}')
    return EXIT_OK
