"""``dynid simulate``: the digital twin on a trajectory, written as a rosbag2 (MCAP) recording."""

from __future__ import annotations

import argparse

from dynid.cli.shared import EXIT_OK, add_joints_argument, float_list, output_folder
from dynid.errors import InputError
from dynid.io import EFFORT_MEANINGS

SUMMARY = 'run the digital twin (or MuJoCo) on a trajectory and write a rosbag2 (MCAP) recording'


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument('--robot', default='ur5e', help='robot (as for dynid model; default ur5e)')
    add_joints_argument(parser)
    parser.add_argument('--trajectory', default=None,
                        help='dynid trajectory file (YAML); default: a built-in gentle Fourier motion')
    parser.add_argument('--duration', type=float, default=None,
                        help='seconds to simulate (default: the trajectory\'s duration)')
    parser.add_argument('--rate', type=float, default=1000.0, help='output rate [Hz] (default 1000)')
    parser.add_argument('--payload', type=float, default=0.0,
                        help='payload mass [kg] at the flange, centre of mass 5 cm out (default 0)')
    parser.add_argument('--payload-com', type=float_list, default=None, metavar='X,Y,Z',
                        help='payload centre of mass [m] in the flange frame (default 0,0,0.05: on the flange axis, '
                             'which loads the last joint not at all); off-axis, e.g. 0.08,0,0.05, loads every joint')
    parser.add_argument('--drive-gain-error', type=float, default=0.0,
                        help='true drive gains differ from nominal by up to this fraction (default 0)')
    parser.add_argument('--temperature', type=float, default=25.0,
                        help='initial and ambient temperature [°C] (default 25)')
    parser.add_argument('--seed', type=int, default=0, help='seed of noise and perturbations (default 0)')
    parser.add_argument('--change', action='append', default=[], metavar='SPEC',
                        help='change the true joints during the run (repeatable), e.g. '
                             "'time=10,stiffness_scale=0.5,joints=shoulder_pan_joint': comma-separated "
                             'KEY=VALUE with time=SECONDS (applied at the first sample at or after it) and '
                             'any of stiffness_scale=S (alpha1 and alpha3 times S > 0), coulomb_scale=C '
                             '(Coulomb level Fc0 + Fc1·τ_j² times C > 0, Stribeck excess kept), '
                             'viscous_excess=V (N·m·s/rad added to Fv1); joints=NAME[,NAME...] (default all). '
                             'Scales are relative to the original values. A trajectory file\'s joint_changes '
                             'list adds to these; truth.yaml records them with the parameters before and after')
    parser.add_argument('--joint-states-effort', choices=EFFORT_MEANINGS, default='torque',
                        help="what the bag's joint_states effort holds, as a driver publishes it: torque (the "
                             'default: the contract\'s bag with motor states, currents and temperatures), or as '
                             'the UR driver does (only joint_states): current, current_as_torque (K·i [N·m]) or '
                             "gravity_compensated_torque (UR's actual_current_as_torque: K·i less the gravity with "
                             'the payload set on the robot); the bag records which')
    parser.add_argument('--robot-payload', type=float, default=None, metavar='KG',
                        help='payload set on the robot [kg] (at --payload-com) that a gravity_compensated_torque '
                             'effort leaves out (default: the one carried, --payload)')
    parser.add_argument('-o', '--output', required=True,
                        help='new directory for the rosbag2 (MCAP) recording and truth.yaml')
    parser.add_argument('--quiet', action='store_true', help='no progress output')
    log = parser.add_argument_group('real-log recording (what a lab\'s logger keeps of the run; the bag and log.csv '
                                    'beside it hold that; truth.yaml lists every glitch)')
    log.add_argument('--log-rate', type=float, default=None,
                     help='log at about this rate [Hz] (e.g. 100 or 125; at most --rate/4), on jittery stamps')
    log.add_argument('--log-jitter', type=float, default=0.25,
                     help='each step is the period times 1 + U(-J, J) (default 0.25: 7.5–12.5 ms at 100 Hz)')
    log.add_argument('--log-gap-rate', type=float, default=0.2,
                     help='single steps of 3 periods per second, on average (default 0.2)')
    log.add_argument('--log-rounding', type=float, default=1e-4, help='position rounding [rad] (default 1e-4)')
    log.add_argument('--log-glitches', type=int, default=2,
                     help='rows of each glitch kind: position jump, absurd current (or torque), garbage CSV line '
                          '(default 2)')
    log.add_argument('--log-format', choices=('ur_rtde', 'franka'), default='ur_rtde',
                     help='CSV column names: UR RTDE (currents, no torque) or libfranka (joint torque, no current)')
    log.add_argument('--log-stamps', choices=('controller', 'logger'), default='controller',
                     help='controller: the stamps are the controller\'s sample times (default); logger: every control '
                          'tick is logged (--log-rate is the control rate, --rate a whole multiple of it), stamped by '
                          'the logger\'s clock U(0, J) periods after its tick (J: --log-jitter), steps (1 ± J) '
                          'periods; '
                          'gaps are stalls of 2 … --log-gap-periods ticks')
    log.add_argument('--log-repeats', type=float, default=0.0,
                     help='with --log-stamps logger: this share of the rows repeats the state before it (the logger '
                          'read a sample not yet replaced; the next row catches up by two ticks), e.g. 0.05')
    log.add_argument('--log-gap-periods', type=float, default=3.0,
                     help='length of a gap in periods (default 3; with --log-stamps logger the longest stall)')
    log.add_argument('--log-no-time', action='store_true',
                     help='leave the time column out of log.csv (import it with --columns and --rate)')
    parser.add_argument('--engine', choices=('twin', 'mujoco'), default='twin',
                        help='the plant: twin (dynid\'s flexible-joint twin, default) or mujoco (the robot\'s URDF in '
                             'MuJoCo: rigid joints, armature, damping and friction loss from the drive and friction '
                             'data; needs pip install mujoco)')
    parser.add_argument('--mjcf', default=None, metavar='FILE',
                        help='with --engine mujoco: simulate this MJCF instead of the robot\'s URDF (joints named as '
                             'the robot\'s; its own armature, damping, friction loss)')
    parser.add_argument('--storage', choices=('mcap', 'sqlite3'), default='mcap',
                        help='storage of the written bag (default mcap; sqlite3 writes a .db3 bag, as ROS 2 before '
                             'Iron recorded)')


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from dynid.model import load_robot
    from dynid.sim.changes import parse_joint_change
    from dynid.sim.real_log import CSV_FILE, RealLogSettings
    from dynid.sim.recording import SimulationSettings, simulate_recording

    output_folder(args.output, '-o', new=True)
    if args.mjcf is not None and args.engine != 'mujoco':
        raise InputError('--mjcf is simulated by MuJoCo: add --engine mujoco')
    if args.mjcf is not None and not Path(args.mjcf).is_file():
        raise InputError(f'MJCF file {args.mjcf} does not exist')
    if args.engine == 'mujoco':
        from dynid.model.mjcf import require_mujoco

        require_mujoco()
    changes = [parse_joint_change(text) for text in args.change]  # bad syntax fails before the robot loads
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
                                  joint_states_effort=args.joint_states_effort, robot_payload_kg=args.robot_payload)
    output = simulate_recording(robot, args.output, args.trajectory, settings, quiet=args.quiet)
    extra = f', {output / CSV_FILE}' if real_log is not None else ''
    print(f'wrote {output} (rosbag2, {"MCAP" if args.storage == "mcap" else "sqlite3"}){extra} and '
          f'{output / "truth.yaml"}')
    return EXIT_OK
