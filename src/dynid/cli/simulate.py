"""``dynid simulate``: the digital twin on a trajectory, written as a rosbag2 (MCAP) recording."""

from __future__ import annotations

import argparse

from dynid.cli.options import add_option, shown
from dynid.cli.shared import EXIT_OK, add_joints_argument, add_robot_argument, float_list, output_folder
from dynid.errors import InputError

SUMMARY = 'run the digital twin (or MuJoCo) on a trajectory and write a rosbag2 (MCAP) recording'


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from dynid.sim.settings import RealLogSettings as Log
    from dynid.sim.settings import SimulationSettings as Sim

    add_robot_argument(parser)
    add_joints_argument(parser)
    parser.add_argument('--trajectory', default=None,
                        help='dynid trajectory file (YAML); default: a built-in gentle Fourier motion')
    add_option(parser, Sim, 'duration_s', '--duration')
    add_option(parser, Sim, 'rate_hz', '--rate')
    add_option(parser, Sim, 'payload_kg', '--payload')
    add_option(parser, Sim, 'payload_com', '--payload-com', type=float_list, default=None, metavar='X,Y,Z',
               more=f' (default {shown(Sim.payload_com)})', show_default=False)
    add_option(parser, Sim, 'drive_gain_error', '--drive-gain-error')
    add_option(parser, Sim, 'temperature_c', '--temperature')
    add_option(parser, Sim, 'seed', '--seed')
    add_option(parser, Sim, 'joint_changes', '--change', action='append', metavar='SPEC',
               help='change the true joints during the run (repeatable), e.g. '
                    "'time=10,stiffness_scale=0.5,joints=shoulder_pan_joint': comma-separated "
                    'KEY=VALUE with time=SECONDS (applied at the first sample at or after it) and '
                    'any of stiffness_scale=S (alpha1 and alpha3 times S > 0), coulomb_scale=C '
                    '(Coulomb level Fc0 + Fc1·τ_j² times C > 0, Stribeck excess kept), '
                    'viscous_excess=V (N·m·s/rad added to Fv1); joints=NAME[,NAME...] (default all). '
                    'Scales are relative to the original values. A trajectory file\'s joint_changes '
                    'list adds to these; truth.yaml records them with the parameters before and after')
    add_option(parser, Sim, 'joint_states_effort', '--joint-states-effort')
    add_option(parser, Sim, 'robot_payload_kg', '--robot-payload', metavar='KG', more=' (at --payload-com)')
    parser.add_argument('-o', '--output', required=True,
                        help='new directory for the rosbag2 (MCAP) recording and truth.yaml')
    parser.add_argument('--quiet', action='store_true', help='no progress output')
    log = parser.add_argument_group('real-log recording (what a lab\'s logger keeps of the run; the bag and log.csv '
                                    'beside it hold that; truth.yaml lists every glitch)')
    add_option(log, Log, 'rate_hz', '--log-rate', default=None, show_default=False,
               more=' (e.g. 100 or 125; at most --rate/4); given: write a real-log recording')
    add_option(log, Log, 'jitter', '--log-jitter')
    add_option(log, Log, 'gap_rate_hz', '--log-gap-rate')
    add_option(log, Log, 'position_rounding_rad', '--log-rounding')
    add_option(log, Log, 'glitches', '--log-glitches')
    add_option(log, Log, 'csv_format', '--log-format')
    add_option(log, Log, 'stamps', '--log-stamps')
    add_option(log, Log, 'repeats', '--log-repeats')
    add_option(log, Log, 'gap_periods', '--log-gap-periods')
    log.add_argument('--log-no-time', action='store_true',
                     help='leave the time column out of log.csv (import it with --columns and --rate)')
    add_option(parser, Sim, 'engine', '--engine')
    add_option(parser, Sim, 'mjcf', '--mjcf', metavar='FILE')
    add_option(parser, Sim, 'storage', '--storage')
    parser.add_argument('--contacts', default=None, metavar='FILE',
                        help='contacts to put on the robot: a YAML file with a list "contacts" of {link, point [m], '
                             'force [N], moment [N·m], start_s, duration_s, shape: step|ramp|half_sine} (a link of the '
                             'robot or flange; point in its frame, force and moment in the world frame, their peaks); '
                             'a trajectory file\'s "contacts" list adds to these. The truth goes beside the bag: '
                             'truth.yaml and contact_truth.csv (each joint\'s τ_ext and the flange wrench per sample)')
    add_option(parser, Sim, 'obstacles', '--obstacle', action='append', type=str, metavar='CX,CY,CZ,HX,HY,HZ',
               show_default=False,
               help='with --engine mujoco: a box in the world (centre and half sizes [m]) that a sphere of 3 cm at the '
                    'tool runs into (repeatable; --obstacle=... where a value starts with a minus sign); its contact '
                    'torque is in contact_truth.csv')


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from dynid.model import load_robot
    from dynid.sim.changes import parse_joint_change
    from dynid.sim.real_log import CSV_FILE
    from dynid.sim.recording import simulate_recording
    from dynid.sim.settings import RealLogSettings, SimulationSettings

    output_folder(args.output, '-o', new=True)
    if args.mjcf is not None and args.engine != 'mujoco':
        raise InputError('--mjcf is simulated by MuJoCo: add --engine mujoco')
    if args.mjcf is not None and not Path(args.mjcf).is_file():
        raise InputError(f'MJCF file {args.mjcf} does not exist')
    if args.engine == 'mujoco':
        from dynid.model.mjcf import require_mujoco

        require_mujoco()
    changes = [parse_joint_change(text) for text in args.change]  # bad syntax fails before the robot loads
    loads = []
    if args.contacts is not None:
        from dynid.files import read_yaml
        from dynid.sim.contacts import loads_from_list

        document = read_yaml(args.contacts, 'contacts file')
        if not isinstance(document, dict) or 'contacts' not in document:
            raise InputError(f'{args.contacts}: needs a list "contacts"')
        loads = loads_from_list(document['contacts'], f'{args.contacts}: contacts')
    obstacles = []
    for text in args.obstacle:
        values = float_list(text)
        if len(values) != 6 or min(values[3:]) <= 0:
            raise InputError(f'--obstacle takes CX,CY,CZ,HX,HY,HZ [m] with half sizes > 0, got {text!r}')
        obstacles.append(tuple(values))
    if args.payload_com is not None and len(args.payload_com) != 3:
        raise InputError('--payload-com needs three values x,y,z [m]')
    real_log = None if args.log_rate is None else RealLogSettings(
        rate_hz=args.log_rate, jitter=args.log_jitter, gap_rate_hz=args.log_gap_rate, gap_periods=args.log_gap_periods,
        position_rounding_rad=args.log_rounding, glitches=args.log_glitches, csv_format=args.log_format,
        stamps=args.log_stamps, repeats=args.log_repeats, time_column=not args.log_no_time)
    if real_log is not None:
        real_log.check(args.rate)
        if args.joint_states_effort != 'torque':
            raise InputError('--joint-states-effort other than torque writes a driver\'s bag: not with --log-rate')
    if args.robot_payload is not None and not 0.0 <= args.robot_payload <= 100.0:
        raise InputError(f'--robot-payload must be within 0–100 kg, got {args.robot_payload}')
    robot = load_robot(args.robot, joints=args.joints)
    payload_com = SimulationSettings.payload_com if args.payload_com is None else tuple(args.payload_com)
    settings = SimulationSettings(duration_s=args.duration, rate_hz=args.rate, seed=args.seed,
                                  payload_kg=args.payload, payload_com=payload_com,
                                  drive_gain_error=args.drive_gain_error, temperature_c=args.temperature,
                                  joint_changes=changes, real_log=real_log, storage=args.storage,
                                  engine=args.engine, mjcf=args.mjcf,
                                  joint_states_effort=args.joint_states_effort, robot_payload_kg=args.robot_payload,
                                  contacts=loads, obstacles=obstacles)
    output = simulate_recording(robot, args.output, args.trajectory, settings, quiet=args.quiet)
    extra = f', {output / CSV_FILE}' if real_log is not None else ''
    print(f'wrote {output} (rosbag2, {"MCAP" if args.storage == "mcap" else "sqlite3"}){extra} and '
          f'{output / "truth.yaml"}')
    return EXIT_OK
