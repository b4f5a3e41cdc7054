"""The ``dynid`` command. Each subcommand documents itself: ``dynid <subcommand> --help``.

Exit codes (docs/contract.md): 0 success, 2 bad input (one-line reason on stderr), 1 internal error.
"""

from __future__ import annotations

import argparse
import json
import os
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
                        help='built-in name (ur3e, ur5e, ur10e, ur16e, ur5, panda), a .urdf file, or a dynid robot '
                             '.yaml (default: ur5e)')
    parser.add_argument('--joints', type=_joint_list, default=None,
                        help='URDF only: comma-separated joints to keep, in chain order; '
                             'the others are locked')
    parser.add_argument('--json', action='store_true', help='print one JSON document')
    parser.add_argument('--urdf', default=None, metavar='OUT.urdf',
                        help='also write a URDF of a DH robot (built-in ur3e, ur5e, ur10e, ur16e or a dynid robot '
                             '.yaml): the same joints, limits, inertials and flange, DH frames as links')
    parser.add_argument('--force', action='store_true', help='overwrite an existing --urdf file')


def _write_robot_urdf(spec: str, output: str, force: bool) -> str:
    """Write the URDF of DH robot ``spec`` to ``output``; returns the line that says so."""
    from pathlib import Path

    from dynid.model import RobotModel, load_robot
    from dynid.model.dh_urdf import robot_urdf, torque_agreement

    path = Path(output)
    if path.exists() and not force:
        raise InputError(f'{path} exists; refusing to overwrite (use --force)')
    text = robot_urdf(spec)
    error = torque_agreement(load_robot(spec), RobotModel.from_urdf(text))
    try:
        path.write_text(text)
    except OSError as caught:
        raise InputError(f'cannot write {path}: {caught.strerror or caught}') from None
    return f'wrote {path}: pinocchio on it reproduces the DH model\'s torques to {error:.1e} of their scale'


def _format_limit(value: float | None, scale: float = 1.0) -> str:
    return '-' if value is None else f'{value * scale:.4g}'


def _run_model(args: argparse.Namespace) -> int:
    from dynid.model import load_robot  # pinocchio loads here, not for --help

    robot = load_robot(args.robot, joints=args.joints)
    written = None if args.urdf is None else _write_robot_urdf(args.robot, args.urdf, args.force)
    summary = robot.summary()
    if args.json:
        print(json.dumps(summary, indent=2))
        if written:
            print(written, file=sys.stderr)
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
    if written:
        print(written)
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
    parser.add_argument('--payload-com', type=_float_list, default=None, metavar='X,Y,Z',
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


def _run_simulate(args: argparse.Namespace) -> int:
    from dynid.model import load_robot
    from dynid.sim.changes import parse_joint_change
    from dynid.sim.real_log import CSV_FILE, RealLogSettings
    from dynid.sim.recording import SimulationSettings, simulate_recording

    changes = [parse_joint_change(text) for text in args.change]  # bad syntax fails before the robot loads
    if args.payload_com is not None and len(args.payload_com) != 3:
        raise InputError('--payload-com needs three values x,y,z [m]')
    real_log = None if args.log_rate is None else RealLogSettings(
        rate_hz=args.log_rate, jitter=args.log_jitter, gap_rate_hz=args.log_gap_rate,
        position_rounding_rad=args.log_rounding, glitches=args.log_glitches, csv_format=args.log_format)
    if real_log is not None:
        real_log.check(args.rate)
    robot = load_robot(args.robot)
    payload_com = SimulationSettings.payload_com if args.payload_com is None else tuple(args.payload_com)
    settings = SimulationSettings(duration_s=args.duration, rate_hz=args.rate, seed=args.seed,
                                  payload_kg=args.payload, payload_com=payload_com,
                                  drive_gain_error=args.drive_gain_error, temperature_c=args.temperature,
                                  joint_changes=changes, real_log=real_log)
    output = simulate_recording(robot, args.output, args.trajectory, settings, quiet=args.quiet)
    extra = f', {output / CSV_FILE}' if real_log is not None else ''
    print(f'wrote {output} (rosbag2, MCAP){extra} and {output / "truth.yaml"}')
    return EXIT_OK


# ----------------------------------------------------------------------------------- dynid import
def _add_import_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description += (': rows that cannot be parsed, repeat or step back in time, are out of range or jump '
                           'further than the joint can move are dropped (each reported with its line); the rest is '
                           'interpolated onto a uniform grid (positions by cubic spline, the other signals '
                           'linearly); gaps of up to --bridge missing samples are bridged, longer ones stay gaps')
    parser.add_argument('csv', nargs='+', help='CSV log(s), consecutive parts of one recording in order')
    parser.add_argument('-o', '--output', required=True, help='new rosbag2 (MCAP) directory to write')
    columns = parser.add_mutually_exclusive_group(required=True)
    columns.add_argument('--preset', choices=('ur_rtde', 'franka'),
                         help='column names of UR\'s RTDE client (timestamp, actual_q_0…, actual_qd_*, '
                              'actual_current_*, joint_temperatures_*) or of libfranka\'s CSV logs (time [ms], '
                              'state.q[0]…, state.dq[*], state.tau_J[*])')
    columns.add_argument('--columns', metavar='SPEC',
                         help="generic column map, e.g. 'time=stamp,time_unit=ms,q=pos{i},dq=vel{i},current=cur{i}'"
                              ' ({i}: joint index from 0, {n}: from 1, {name}: joint name; signals q (required), dq, '
                              'tau, current, temperature)')
    parser.add_argument('--robot', default=None,
                        help='robot whose joints the columns hold, in order (names and limits for the checks; '
                             'default: ur5e for ur_rtde, panda for franka; required with --columns)')
    parser.add_argument('--rate', type=float, default=None,
                        help='rate of the uniform grid [Hz] (default: the logged rate, from the stamps)')
    parser.add_argument('--bridge', type=int, default=3,
                        help='interpolate over gaps of up to this many missing samples; longer gaps stay '
                             'gaps (default 3)')
    parser.add_argument('--current-limit', type=float, default=None,
                        help='drop rows with |current| above this [A] (default: 3 × effort limit / drive gain)')


def _run_import(args: argparse.Namespace) -> int:
    from pathlib import Path

    from dynid.io.bag import write_bag
    from dynid.io.csv_log import PRESETS, parse_column_spec
    from dynid.io.importing import import_logs, write_import_report
    from dynid.io.log_checks import LogLimits
    from dynid.model import load_robot

    output = Path(args.output)
    if output.exists():
        raise InputError(f'{output} exists; refusing to overwrite (choose a new output directory)')
    column_map = PRESETS[args.preset] if args.preset else parse_column_spec(args.columns)
    if args.robot is None and column_map.robot is None:
        raise InputError('--columns needs --robot (the joints the columns hold, in order)')
    if args.current_limit is not None and not args.current_limit > 0:
        raise InputError(f'--current-limit must be > 0 A, got {args.current_limit:g}')
    robot = load_robot(args.robot or column_map.robot)
    limits = LogLimits.of_robot(robot, args.current_limit)
    dataset, report, start_ns = import_logs(args.csv, column_map, robot.joint_names, limits, args.rate, args.bridge)
    for line in report.lines():
        print(line)
    write_bag(output, dataset, start_ns=start_ns)
    write_import_report(output, report)
    topics = ['joint_states'] + [topic for topic, signal in (('joint_currents', dataset.current),
                                                            ('joint_temperatures', dataset.temperature))
                                 if signal is not None]
    print(f'wrote {output} (rosbag2, MCAP: {", ".join(topics)}; joint_states effort '
          f'{"= joint torque" if dataset.tau is not None else "empty"}) and {output / "import.yaml"}')
    return EXIT_OK


# ----------------------------------------------------------------------------------- dynid excite
def _add_excite_arguments(parser: argparse.ArgumentParser) -> None:
    from dynid.excite.experiments import EXPERIMENTS

    parser.add_argument('--robot', default='ur5e', help='robot (as for dynid model; default ur5e)')
    parser.add_argument('-o', '--output', required=True, help='trajectory file to write (YAML)')
    parser.add_argument('--force', action='store_true', help='overwrite an existing output file')
    parser.add_argument('--plot', default=None, help='also write a PNG plot of q, q̇, q̈')
    parser.add_argument('--seed', type=int, default=0, help='seed of the random designs (default 0)')
    parser.add_argument('--home', default=None, metavar='Q1,...',
                        help='centre of the excitation [rad], one value per joint in model order (default: '
                             'the UR home or the Franka ready pose for those arms, else the middle of the '
                             'joint ranges where finite, else 0)')
    fourier = parser.add_argument_group('Fourier excitation (default)')
    fourier.add_argument('--harmonics', type=int, default=5, help='harmonics per joint (default 5)')
    fourier.add_argument('--period', type=float, default=10.0, help='period [s] (default 10)')
    fourier.add_argument('--optimize', action='store_true', help='optimize the coefficients (else random)')
    fourier.add_argument('--criterion', default='cond', choices=('cond', 'weighted', 'd_optimal'))
    fourier.add_argument('--starts', type=int, default=4, help='optimizer starts (default 4)')
    fourier.add_argument('--iterations', type=int, default=150, help='iterations per start (default 150)')
    fourier.add_argument('--workers', type=int, default=None,
                         help='processes running the starts in parallel (default: one per core, at most --starts)')
    fourier.add_argument('--position-range', type=float, default=1.0,
                         help='± motion about home [rad] (default 1.0)')
    fourier.add_argument('--velocity-fraction', type=float, default=0.5,
                         help='fraction of the velocity limits (default 0.5)')
    fourier.add_argument('--acceleration', type=float, default=2.5, help='acceleration bound [rad/s²] (default 2.5)')
    fourier.add_argument('--torque-fraction', type=float, default=None,
                         help='bound the model torque to this fraction of the effort limits')
    fourier.add_argument('--floor', type=_floor, default=0.0,
                         help='height z [m] in the base frame that no link may go below (collision geometry '
                              'where the URDF has it, else link frames); "none" to switch off (default 0: the '
                              'mounting plane). Links against each other are checked where geometry exists')
    special = parser.add_argument_group('special experiments')
    special.add_argument('--experiment', default=None, choices=EXPERIMENTS)
    special.add_argument('--joint', default='0', help='joint name or index for single-joint experiments')
    special.add_argument('--payloads', default='0,3.5,7.5', help='masses [kg] for payload_schedule')


def _floor(text: str) -> float | None:
    if text.strip().lower() == 'none':
        return None
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f'expected a height [m] or "none", got {text!r}') from None


def _run_excite(args: argparse.Namespace) -> int:
    from pathlib import Path

    from dynid.excite import experiments
    from dynid.excite.design import design_excitation
    from dynid.excite.home import default_home, parse_home
    from dynid.excite.plot import plot_trajectory
    from dynid.excite.trajectory import save_trajectory
    from dynid.model import load_robot

    output = Path(args.output)
    if output.exists() and not args.force:
        raise InputError(f'{output} exists; refusing to overwrite (use --force)')
    robot = load_robot(args.robot)
    home, home_source = (parse_home(args.home, robot), '--home') if args.home else default_home(robot)
    print(f'home [rad]: {np.round(home, 4).tolist()} ({home_source})')
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
        print(f'cond(W_b) = {result.condition_number:.4g} ({args.criterion} = {result.value:.4g}); '
              f'peak velocity {max(result.peaks["velocity"]):.3g} rad/s, peak acceleration '
              f'{max(result.peaks["acceleration"]):.3g} rad/s²'
              + (f'; optimized in {result.wall_time_s:.1f} s' if args.optimize else ''))
    if args.experiment == 'payload_schedule':
        masses = [float(m) for m in args.payloads.split(',') if m.strip()]
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


def _plain(value):
    """Numbers and containers as plain Python (for YAML)."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, np.generic):
        return value.item()
    return value


# --------------------------------------------------------------------------------- dynid identify
def _float_list(text: str) -> list[float]:
    try:
        return [float(x) for x in text.split(',') if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f'expected comma-separated numbers, got {text!r}') from None


def _add_filter_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group('data pipeline')
    group.add_argument('--position-cutoff', type=float, default=None,
                       help='position low-pass [Hz] (default min(5·f_dyn, fs/10): 50 at 500 Hz and up, '
                            '10 at 100 Hz); refused at or above 0.45·fs')
    group.add_argument('--decimation-cutoff', type=float, default=None,
                       help='parallel low-pass of torques and columns [Hz] (default min(2·f_dyn, fs/25): '
                            '20 at 500 Hz and up, 4 at 100 Hz); refused at or above 0.45·fs')
    group.add_argument('--motion-bandwidth', type=float, default=10.0,
                       help='bandwidth f_dyn of the motion [Hz]: the default cut-offs are 5·f_dyn and 2·f_dyn where '
                            'the rate allows (default 10)')
    group.add_argument('--decimation', type=int, default=None,
                       help='keep every k-th sample (default 0.8·fs/(2·cutoff))')
    group.add_argument('--stiction-velocity', type=float, default=0.02,
                       help='drop rows with |ω| below this [rad/s] around them (default 0.02)')


def _filter_settings(args):
    from dynid.identify.preprocess import FilterSettings

    return FilterSettings(position_cutoff_hz=args.position_cutoff, decimation_cutoff_hz=args.decimation_cutoff,
                          decimation=args.decimation, stiction_velocity=args.stiction_velocity,
                          motion_bandwidth_hz=args.motion_bandwidth)


def _add_effort_argument(parser: argparse.ArgumentParser) -> None:
    from dynid.io import EFFORT_MEANINGS

    parser.add_argument('--joint-states-effort', choices=EFFORT_MEANINGS, default=None,
                        help="what joint_states' effort holds in the recordings: torque (joint torque [N·m]; the "
                             'default) or current (motor current [A], then used as a joint_currents topic is: through '
                             'the drive gains). The UR driver (ur_robot_driver) publishes motor current there: give '
                             'current for a UR recording of /joint_states. With current, a recording that also has a '
                             'joint_currents topic (as dynid simulate and identifier_node write) is refused')


def _effort_told(args: argparse.Namespace, torque_sources=()) -> str | None:
    """What the user said joint_states' effort holds: --joint-states-effort, else torque where --torque names
    the effort as a torque (``torque_sources``), else None (not said: torque, with the UR warning)."""
    if args.joint_states_effort is None and getattr(args, 'torque', None) in torque_sources:
        return 'torque'
    return args.joint_states_effort


def _read(bag, robot, joint_states_effort: str | None):
    """The recording ``bag`` in ``robot``'s joint order, joint_states' effort read as ``joint_states_effort``
    says (None: not given, torque); see :func:`_warn_about_effort`."""
    from dynid.io.recorder import read_recording

    dataset = read_recording(bag, robot.joint_names, None, joint_states_effort or 'torque')
    _warn_about_effort(dataset, robot, joint_states_effort, bag)
    return dataset


def _warn_about_effort(dataset, robot, joint_states_effort: str | None, bag) -> None:
    """Warn on stderr where a UR arm's recording of joint_states with effort and without joint_currents
    (what ``ros2 bag record /joint_states`` keeps of the UR driver, whose effort is motor current) is read as
    joint torque only because the user did not say what the effort is (:func:`_effort_told`)."""
    from dynid.model.robots import is_universal_robot

    topics = dataset.source.get('topics', ())
    if joint_states_effort is None and dataset.tau is not None and is_universal_robot(robot.joint_names) \
            and not any(topic.endswith('/joint_currents') for topic in topics):
        print(f'warning: {bag}: joint_states effort is read as joint torque [N·m], but the UR driver publishes motor '
              f'current [A] there: for a recording of a UR, give --joint-states-effort current '
              f'(--joint-states-effort torque says it is torque)', file=sys.stderr)


def _recordings(bags, robot, masses, com, label, joint_states_effort=None):
    from dynid.identify.model import RecordingInput
    from dynid.model import Payload

    if masses and len(masses) != len(bags):
        raise InputError(f'--{label} needs one mass per bag ({len(bags)}), got {len(masses)}')
    recordings = []
    for i, bag in enumerate(bags):
        dataset = _read(bag, robot, joint_states_effort)
        mass = masses[i] if masses else 0.0
        if mass < 0:
            raise InputError(f'payload mass of {bag} must be >= 0 kg, got {mass}')
        if mass == 0:
            recordings.append(RecordingInput(dataset, name=str(bag)))
        elif com is not None:
            recordings.append(RecordingInput(dataset, payload=Payload(mass, com), name=str(bag)))
        else:
            recordings.append(RecordingInput(dataset, payload_mass=mass, name=str(bag)))
    return recordings


def _drives(path, robot):
    """The drives of a --drives file for ``robot``, or None without one."""
    from dynid.model.drives import load_drives

    return None if path is None else load_drives(path, robot.joint_names)


def _print_metrics(label: str, metrics: dict) -> None:
    """The metrics of one recording, then its one line about lost samples if it lost any."""
    from dynid.identify.metrics import format_number as number

    joints = metrics['joints']
    scored = metrics.get('scored_joints', len(joints))
    print(f'{label}: relative residual {number(metrics["relative_residual"], ".4g")}, RMSE '
          f'{number(metrics["rmse"], ".4g")} N·m ({metrics["rows"]} equations; {scored} of {len(joints)} joints '
          f'scored)')
    for name, m in joints.items():
        print(f'  {name:<22} RMSE {number(m["rmse"], ".4g"):>8} N·m   NRMSE fit '
              f'{number(m["nrmse_fit_percent"], ".2f"):>7} %' + (f'   ({m["rows"]} rows)' if 'rows' in m else ''))
    for warning in metrics.get('warnings', []):
        print(f'warning: {label}: {warning}')
    if (metrics.get('gaps') or {}).get('summary'):
        print(f'warning: {metrics["gaps"]["summary"]}')


def _add_identify_arguments(parser: argparse.ArgumentParser) -> None:
    from dynid.identify.choices import FRICTION_MODELS, METHODS, TORQUE_SOURCES

    parser.add_argument('bags', nargs='+', help='rosbag2 recordings (directories, MCAP or sqlite3) or bare .mcap files')
    parser.add_argument('--robot', default='ur5e', help='robot (as for dynid model; default ur5e)')
    parser.add_argument('--drives', default=None, metavar='FILE',
                        help='drives file (YAML: per joint gear_ratio, drive_gain [N·m/A] and rotor_inertia [kg·m²], '
                             'link side) replacing the robot\'s; needed for currents on a robot without drive data '
                             '(TLS and MLS identify the gains and need none)')
    parser.add_argument('--method', default='wls', choices=METHODS)
    parser.add_argument('--friction', default='viscous_coulomb', choices=FRICTION_MODELS)
    parser.add_argument('--temperature', action='store_true', help='add the temperature friction term')
    parser.add_argument('--torque', default='auto', choices=TORQUE_SOURCES,
                        help='measured torque: current = K_τ·i from joint_currents (or joint_states effort with '
                             '--joint-states-effort current) and the drive gains (minus B·θ̈ '
                             'with motor encoders); motor_torque = joint_states effort that is already the motor\'s '
                             'torque in N·m at the link side (rotor inertias identified, no drive data needed); '
                             'joint_torque = joint_states effort from a torque sensor after the gear. Default auto: '
                             'currents when the drive gains are known or identified (TLS, MLS), else the joint torque')
    parser.add_argument('--no-rotor-compensation', action='store_true',
                        help='with currents: do not subtract B·θ̈, identify rotor inertias instead (motor_torque always '
                             'identifies them; refused with joint_torque)')
    parser.add_argument('--payload-mass', type=_float_list, default=None,
                        help='payload mass [kg] per bag, comma-separated (0: none)')
    parser.add_argument('--payload-com', type=_float_list, default=None,
                        help='payload centre of mass x,y,z [m] in the flange frame: payloads become fully known '
                             'point masses (else only their mass is known)')
    parser.add_argument('--weight-function', default='huber', choices=('huber', 'tukey', 'cauchy'))
    parser.add_argument('--fix-drive-gain', action='append', default=[], metavar='JOINT=VALUE',
                        help='tls/mls: hold this joint\'s drive gain [N·m/A] and identify the others (repeatable); '
                             'for joints the known payload does not load')
    physical = parser.add_argument_group('physically consistent identification')
    physical.add_argument('--physical', action='store_true',
                          help='standard parameters with every link\'s pseudo-inertia positive semidefinite, rotor '
                               'inertia and Coulomb/viscous friction >= 0 (with --method ols, wls or irls)')
    physical.add_argument('--prior-std', type=float, default=None,
                          help='relative standard deviation s of the prior (the robot file\'s own inertias); '
                               'default: chosen by 10-fold cross-validation on the recordings\' own rows (the '
                               'weakest prior within one standard error of the best)')
    physical.add_argument('--no-prior', action='store_true', help='do not pull toward the robot file\'s inertias')
    physical.add_argument('--physical-solver', default='clarabel', choices=('clarabel', 'scs', 'log_cholesky'))
    parser.add_argument('--validate', nargs='*', default=[], help='recordings to validate on')
    _add_effort_argument(parser)
    parser.add_argument('-o', '--output', required=True, help='result file (YAML)')
    parser.add_argument('--force', action='store_true',
                        help='overwrite an existing result file, and keep a result the data cannot support (cond of '
                             'the column-scaled regressor above 1000, or more than half the parameters above 50 %% '
                             'relative σ), which is otherwise refused')
    parser.add_argument('--report', default=None, help='folder for index.html and plots')
    parser.add_argument('--quiet', action='store_true')
    _add_filter_arguments(parser)


def _run_identify(args: argparse.Namespace) -> int:
    import time
    from pathlib import Path

    from dynid.identify.model import ModelSpec
    from dynid.identify.preprocess import describe_filters
    from dynid.identify.quality import identifiability_refusal, validation_warnings
    from dynid.identify.report import write_report
    from dynid.identify.robot_source import file_sha256, record_robot
    from dynid.identify.run import IdentifyOptions, identify
    from dynid.identify.validate import validate
    from dynid.model import load_robot

    start = time.perf_counter()
    output = Path(args.output)
    if output.exists() and not args.force:
        raise InputError(f'{output} exists; refusing to overwrite (use --force)')
    if args.payload_com is not None and len(args.payload_com) != 3:
        raise InputError('--payload-com needs three values x,y,z [m]')
    if args.payload_com is not None and not args.payload_mass:
        raise InputError('--payload-com places the payloads of --payload-mass: give their masses too')

    def say(text: str) -> None:
        if not args.quiet:
            print(f'[{time.perf_counter() - start:6.1f} s] {text}', file=sys.stderr, flush=True)

    robot = load_robot(args.robot)
    drives = _drives(args.drives, robot)
    say(f'reading {len(args.bags)} recording(s)')
    effort = _effort_told(args, ('joint_torque', 'motor_torque'))
    recordings = _recordings(args.bags, robot, args.payload_mass, args.payload_com, 'payload-mass', effort)
    spec = ModelSpec(friction=args.friction, temperature=args.temperature, torque_source=args.torque,
                     rotor_compensation=not args.no_rotor_compensation, rotor_inertia=args.no_rotor_compensation)
    from dynid.identify.drive_gains import parse_fixed_gains

    options = IdentifyOptions(method=args.method, weight_function=args.weight_function,
                              fixed_drive_gains=parse_fixed_gains(args.fix_drive_gain, robot.joint_names))
    if args.physical:
        from dynid.identify.physical import PhysicalSettings

        options.physical = PhysicalSettings(prior=not args.no_prior, prior_relative_std=args.prior_std,
                                            solver=args.physical_solver)
    result = identify(robot, recordings, spec, _filter_settings(args), options, drives=drives, progress=say)
    refusal = identifiability_refusal(result)
    if refusal and not args.force:
        raise InputError(f'{refusal} (--force keeps the result anyway)')
    if refusal:
        result.warnings.insert(0, f'kept with --force although {refusal}')
    record_robot(result.provenance, args.robot)
    if drives is not None:
        result.provenance['drives'].update(file=str(Path(args.drives).resolve()), sha256=file_sha256(args.drives))
    validation = [_read(bag, robot, effort) for bag in args.validate]
    for i, dataset in enumerate(validation):
        say(f'validating on {args.validate[i]}')
        metrics = validate(result, robot, dataset, name=args.validate[i])
        metrics.setdefault('warnings', []).extend(validation_warnings(metrics))
        result.metrics['validation' if i == 0 else f'validation_{i + 1}'] = metrics
    result.save(output)
    print(f'{result.method.upper()} identification of {robot.name}: {len(result.parameter_names)} parameters '
          f'({sum(n in result.base_expressions for n in result.parameter_names)} base), {result.condition_text()}')
    print(describe_filters(result.provenance.get('filters') or {}))
    if result.drive_gains_identified:
        from dynid.identify.drive_gains import diagnostics_lines

        fixed = (result.drive_gain_diagnostics or {}).get('fixed', {})
        print('drive gains [N·m/A]: ' + ', '.join(
            f'{g:.5g} (fixed)' if j in fixed else f'{g:.5g} (±{s:.2g})'
            for j, g, s in zip(result.joint_names, result.drive_gains, result.drive_gains_std, strict=True)))
        for line in diagnostics_lines(result.drive_gain_diagnostics or {}):
            print(f'  {line}')
    for label, metrics in result.metrics.items():
        _print_metrics(label, metrics)
    if result.physical_section is not None:
        section = result.physical_section
        print(f'physical ({section["solver"]}, {section["solve_s"]:.2f} s): consistency cost '
              f'{section["consistency"]["cost_percent"]:+.3f} % of the weighted χ², M(q) positive definite on '
              f'{section["mass_matrix"]["positive_definite_percent"]:.1f} % of {section["mass_matrix"]["states"]} '
              f'random states; prior {_prior_text(section["prior"])}')
        if section.get('solver_status', 'optimal') != 'optimal':
            print(f'warning: the physical solve ended {section["solver_status"]} ({section["solver"]}): check the '
                  'consistency cost, or try --physical-solver log_cholesky')
    for warning in result.warnings:
        print(f'warning: {warning}')
    print(f'wrote {output}')
    if args.report:
        say('writing the report')
        print(f'wrote {write_report(args.report, result, robot, [r.dataset for r in recordings], validation)}')
    say('done')
    return EXIT_OK


def _add_validate_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument('bags', nargs='+', help='rosbag2 recordings (or bare .mcap files) to predict')
    parser.add_argument('--params', required=True, help='result file of dynid identify')
    parser.add_argument('--robot', default=None,
                        help='robot (default: the one of the result, refused if its file moved or changed)')
    parser.add_argument('--drives', default=None, metavar='FILE',
                        help='drives file (as for dynid identify) for results that recorded none; the result\'s '
                             'drive gains are kept')
    parser.add_argument('--payload-mass', type=_float_list, default=None,
                        help='known point-mass payload [kg] per bag (with --payload-com)')
    parser.add_argument('--payload-com', type=_float_list, default=[0.0, 0.0, 0.0],
                        help='payload centre of mass x,y,z [m] in the flange frame (default 0,0,0)')
    parser.add_argument('--recover-payload', action='store_true',
                        help='estimate an unknown payload on each bag from the model\'s residual')
    _add_effort_argument(parser)


def _run_validate(args: argparse.Namespace) -> int:
    from dynid.identify.quality import validation_warnings
    from dynid.identify.result import IdentificationResult
    from dynid.identify.robot_source import robot_spec_of
    from dynid.identify.validate import recover_payload, validate
    from dynid.model import Payload, load_robot

    result = IdentificationResult.load(args.params)
    robot = load_robot(robot_spec_of(result.provenance, result.robot, args.robot,
                                     warn=lambda text: print(f'warning: {text}')))
    drives = _drives(args.drives, robot)
    masses = args.payload_mass or [0.0] * len(args.bags)
    if len(masses) != len(args.bags):
        raise InputError(f'--payload-mass needs one mass per bag ({len(args.bags)}), got {len(masses)}')
    trained = {float(entry.get('payload_mass_known') or entry.get('payload_known') or 0.0)
               for entry in result.provenance.get('inputs') or []}
    unscored = []
    for bag, mass in zip(args.bags, masses, strict=True):
        dataset = _read(bag, robot, args.joint_states_effort)
        payload = Payload(mass, args.payload_com) if mass > 0 else None
        metrics = validate(result, robot, dataset, payload, name=bag, drives=drives)
        metrics.setdefault('warnings', []).extend(validation_warnings(metrics))
        if trained and float(mass) not in trained:
            declared = ', '.join(f'{m:g}' for m in sorted(trained))
            metrics['warnings'].append(
                f'payload {mass:g} kg differs from those of the identification ({declared} kg declared): a payload '
                f'carried but not declared there is part of the last link\'s parameters')
        _print_metrics(f'{bag}', metrics)
        if metrics['scored_joints'] == 0:
            unscored.append(bag)
            continue
        if args.recover_payload:
            recovered = recover_payload(result, robot, dataset, name=bag, drives=drives)
            print(f'  recovered payload mass {recovered["mass"]:.4f} ± {recovered["mass_std"]:.2g} kg')
    if unscored:
        raise InputError(f'nothing could be scored on {", ".join(map(str, unscored))}: no joint has rows with a '
                         f'varying measured torque (a recording at rest?)')
    return EXIT_OK


# ------------------------------------------------------------------------ dynid identify-friction
def _add_identify_friction_arguments(parser: argparse.ArgumentParser) -> None:
    from dynid.friction.recordings import EXPERIMENTS, TORQUE_SOURCES

    parser.description += (' (Madsen 2020 ch.6: no-load Stribeck map with temperature terms, load-dependent Coulomb '
                           'Fc0 + Fc1·τ_j², E-GMS laws and backlash) from recordings of one joint each in the friction '
                           'experiments of dynid excite (plateaus, gravity_sweep, reciprocating; plateaus while the '
                           'joint warms up are a warm_up), with τ_j from the rigid-body model of --params; adds the '
                           'joint_friction section to the result file')
    parser.add_argument('bags', nargs='+', help='rosbag2 recordings (or bare .mcap files), one experiment each')
    parser.add_argument('--params', required=True, help='result file of dynid identify (rigid-body model, drive gains)')
    parser.add_argument('--robot', default=None, help='robot (as for dynid model; default: the result\'s robot)')
    parser.add_argument('-o', '--output', default=None,
                        help='result file to write (default: add the section to --params itself)')
    parser.add_argument('--force', action='store_true', help='overwrite an existing --output')
    parser.add_argument('--experiment', action='append', default=None, metavar='NAME[:JOINT]',
                        help=f'experiment of each bag, in order, one of {", ".join(EXPERIMENTS)} or auto (default: '
                             'a twin recording\'s trajectory file names it, else the motion tells); repeat once per '
                             'bag, or give one for all')
    parser.add_argument('--torque', default='auto', choices=TORQUE_SOURCES,
                        help='motor torque: currents × drive gains, or the joint_states effort where the driver '
                             'reports motor torque there (default: currents where recorded)')
    parser.add_argument('--payload-mass', type=_float_list, default=None, help='payload mass [kg] per bag (0: none)')
    parser.add_argument('--payload-com', type=_float_list, default=[0.0, 0.0, 0.0],
                        help='payload centre of mass x,y,z [m] in the flange frame (default 0,0,0)')
    parser.add_argument('--cutoff', type=float, default=30.0,
                        help='zero-phase low-pass of positions and motor torque [Hz] (default 30; at most fs/10)')
    parser.add_argument('--t0', type=float, default=20.0, help='reference temperature T0 [°C] (default 20)')
    parser.add_argument('--temperature-span', type=float, default=3.0,
                        help='a plateau run whose temperature spans this [°C] is a warm-up (default 3)')
    parser.add_argument('--egms-initial', type=_float_list, default=[1e-3, 4.0, 2.0],
                        help='backlash [rad], r_delta, r_k to start the E-GMS search from (default 0.001,4,2)')
    parser.add_argument('--quiet', action='store_true', help='no progress output')
    _add_effort_argument(parser)


def _run_identify_friction(args: argparse.Namespace) -> int:
    from pathlib import Path

    from dynid.friction.identified import summary_lines, write_joint_friction
    from dynid.friction.identify import FrictionSettings, identify_joint_friction
    from dynid.friction.recordings import friction_recordings
    from dynid.identify.result import IdentificationResult
    from dynid.model import load_robot

    output = Path(args.output) if args.output else Path(args.params)
    if args.output and output.exists() and not args.force and output.resolve() != Path(args.params).resolve():
        raise InputError(f'{output} exists; refusing to overwrite (use --force)')
    if len(args.payload_com) != 3:
        raise InputError('--payload-com needs three values x,y,z [m]')
    settings = FrictionSettings(torque=args.torque, cutoff_hz=args.cutoff, min_temperature_span_c=args.temperature_span,
                                t0_c=args.t0, egms_initial=tuple(args.egms_initial))
    result = IdentificationResult.load(args.params)
    robot = load_robot(args.robot or result.robot)
    effort = _effort_told(args, ('effort',))
    recordings = friction_recordings(args.bags, robot, args.experiment, args.payload_mass, args.payload_com,
                                     effort or 'torque')
    for recording in recordings:
        _warn_about_effort(recording.dataset, robot, effort, recording.name)
    identification = identify_joint_friction(
        recordings, result, robot, settings, progress=None if args.quiet else lambda text: print(text, file=sys.stderr))
    print('\n'.join(summary_lines(identification)))
    print(f'wrote {write_joint_friction(args.params, identification.section(), output)}')
    return EXIT_OK


# --------------------------------------------------------------------------------- dynid estimate
def _add_estimate_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument('bag', help='rosbag2 recording with joint_states, motor_states and joint_currents')
    parser.add_argument('--params', required=True, help='result file of dynid identify (friction map, drive gains)')
    parser.add_argument('--robot', default=None, help='robot (default: the one of the result)')
    parser.add_argument('-o', '--output', default=None,
                        help='estimates file (YAML: settings, final values); the history goes to a CSV beside it')
    parser.add_argument('--force', action='store_true', help='overwrite existing output files')
    parser.add_argument('--report', default=None, help='folder for index.html and convergence plots')
    parser.add_argument('--batch', type=int, default=1000,
                        help='samples per estimator update (default 1000; the numbers do not depend on it)')
    parser.add_argument('--no-stiffness', action='store_true', help='do not estimate the joint stiffness')
    parser.add_argument('--no-friction', action='store_true', help='do not adapt the E-GMS friction')
    parser.add_argument('--damping', type=_float_list, default=[0.0],
                        help='transmission damping [N·m·s/rad]: one value, or one per joint (default 0)')
    parser.add_argument('--order', type=int, default=2, help='odd powers of the stiffness polynomial (default 2)')
    parser.add_argument('--forgetting', type=float, default=0.99995, help='RLS forgetting factor (default 0.99995)')
    parser.add_argument('--freeze', type=float, default=0.0, help='no friction adaptation for the first S seconds')
    parser.add_argument('--min-velocity', type=float, default=0.05,
                        help='the stiffness learns only while |rotor velocity| reaches this [rad/s] (default 0.05)')
    parser.add_argument('--quiet', action='store_true', help='no progress output')
    _add_effort_argument(parser)


def _run_estimate(args: argparse.Namespace) -> int:
    import time
    from pathlib import Path

    from dynid.estimate.replay import EstimationSettings, estimate
    from dynid.estimate.report import load_truth, save_estimation, summary_lines, write_estimation_report
    from dynid.identify.result import IdentificationResult
    from dynid.identify.robot_source import robot_spec_of
    from dynid.model import load_robot

    settings = EstimationSettings(batch=args.batch, stiffness=not args.no_stiffness, friction=not args.no_friction,
                                  damping=args.damping[0] if len(args.damping) == 1 else tuple(args.damping),
                                  order=args.order, forgetting=args.forgetting, freeze_s=args.freeze,
                                  min_velocity=args.min_velocity)
    output = None if args.output is None else Path(args.output)
    if output is not None and output.suffix.lower() == '.csv':
        raise InputError(f'-o {output}: name the YAML file; the history CSV goes beside it')
    for path in () if output is None or args.force else (output, output.with_suffix('.csv')):
        if path.exists():
            raise InputError(f'{path} exists; refusing to overwrite (use --force)')
    result = IdentificationResult.load(args.params)
    robot_spec = robot_spec_of(result.provenance, result.robot, args.robot,
                               warn=lambda text: print(f'warning: {text}', file=sys.stderr))
    robot = load_robot(robot_spec)
    dataset = _read(args.bag, robot, args.joint_states_effort)
    start, shown = time.perf_counter(), [time.perf_counter()]

    def progress(done: int, total: int) -> None:
        if not args.quiet and time.perf_counter() - shown[0] >= 2.0:
            shown[0] = time.perf_counter()
            print(f'[{shown[0] - start:6.1f} s] replayed {done} of {total} samples', file=sys.stderr, flush=True)

    history = estimate(dataset, result, settings, robot, progress=progress)
    print('\n'.join(summary_lines(history)))
    if output is not None:
        inputs = {'bag': str(args.bag), 'params': str(args.params), 'robot_spec': robot_spec}
        print('wrote ' + ' and '.join(map(str, save_estimation(output, history, robot.name, inputs))))
    if args.report:
        try:
            truth = load_truth(args.bag, robot.joint_names, dataset.source.get('start_ns', 0) / 1e9)
        except InputError as error:
            print(f'warning: {error}; the report shows no truth', file=sys.stderr)
            truth = None
        print(f'wrote {write_estimation_report(args.report, history, truth, str(args.bag))}')
    return EXIT_OK


# ------------------------------------------------------------------------------------ dispatcher
def _add_bringup_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description += ('. Each node runs in its own process, as ros2 launch runs them (--no-processes: all in '
                           'this one, sharing one executor); they talk over DDS. Parameters come from the nodes\' '
                           'defaults, then --params-file, then the options here.')
    parser.add_argument('--processes', action=argparse.BooleanOptionalAction, default=True,
                        help='one process per node (default); --no-processes composes them in this process, '
                             'which keeps up with a twin of a few hundred hertz')
    parser.add_argument('--robot', default='ur5e', help='robot of every node (as for dynid model; default ur5e)')
    parser.add_argument('--namespace', default='', help='namespace of the nodes and topics (default: root)')
    parser.add_argument('--no-sim', action='store_true',
                        help='leave out sim_node: a real robot driver publishes the joint topics')
    parser.add_argument('--params-file', default=None, help='ROS 2 parameter file (node names as keys)')
    parser.add_argument('--rate', type=float, default=None, help='sim_node rate [Hz]')
    parser.add_argument('--trajectory', default=None, help='excitation_node trajectory file')
    parser.add_argument('--output-directory', default=None, help='identifier_node recordings and results')
    parser.add_argument('--estimator', action='store_true',
                        help='also start estimator_node (online joint stiffness and friction; needs motor_states)')
    parser.add_argument('--feedforward', nargs='?', const='trajectory', default=None,
                        choices=('trajectory', 'streaming', 'measured'), metavar='MODE',
                        help='also start feedforward_node, configured and activated, in MODE (trajectory: '
                             'default; streaming; measured); the twin\'s own model feedforward is then off')
    parser.add_argument('--result', default=None, metavar='FILE',
                        help='identification result for estimator_node (friction map, E-GMS adaptation) and '
                             'feedforward_node (model and friction); needs --estimator or --feedforward')


def _run_bringup(args: argparse.Namespace) -> int:
    from dynid.nodes.runner import check_domain_id

    check_domain_id()  # before rclpy loads: DDS would end the process at the first node
    from dynid.nodes.bringup import run_bringup, run_processes

    overrides = {'sim_node': {'rate': args.rate}, 'excitation_node': {'trajectory_file': args.trajectory},
                 'identifier_node': {'output_directory': args.output_directory},
                 'estimator_node': {'result_file': args.result if args.estimator else None},
                 'feedforward_node': {'result_file': args.result if args.feedforward else None}}
    overrides = {node: {k: v for k, v in values.items() if v is not None} for node, values in overrides.items()}
    if args.rate is not None and not 1.0 <= args.rate <= 2000.0:
        raise InputError(f'--rate must be within 1–2000 Hz, got {args.rate:g}')
    if args.result is not None and not (args.estimator or args.feedforward):
        raise InputError('--result is the result file of estimator_node and feedforward_node: add --estimator '
                         'or --feedforward')
    if args.processes:
        return run_processes(args.robot, args.namespace, not args.no_sim, args.params_file, overrides,
                             estimator=args.estimator, feedforward=args.feedforward)
    run_bringup(args.robot, args.namespace, not args.no_sim, args.params_file, overrides, estimator=args.estimator,
                feedforward=args.feedforward)
    return EXIT_OK


def _add_demo_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description += (': the twin runs the optimized excitation while identifier_node records it, identifies '
                           'the model and a held-out random trajectory validates it; prints a summary table and '
                           'writes the result and an HTML report. About 1.5 minutes on a quiet machine.')
    parser.add_argument('-o', '--output', default='dynid_demo', help='output folder (default dynid_demo)')
    parser.add_argument('--robot', default='ur5e', help='robot with a shipped excitation (default ur5e)')
    parser.add_argument('--namespace', default=f'dynid_demo_{os.getpid()}',
                        help='namespace of the suite (default dynid_demo_<process id>)')
    parser.add_argument('--rate', type=float, default=1000.0, help='twin rate [Hz] (default 1000)')
    parser.add_argument('--periods', type=int, default=3, help='periods of the 10 s excitation (default 3)')
    parser.add_argument('--holdout-seed', type=int, default=7, help='seed of the held-out trajectory (default 7)')
    parser.add_argument('--method', default='wls', choices=('ols', 'wls', 'irls', 'iirls'))
    parser.add_argument('--friction', default='viscous_coulomb',
                        choices=('viscous_coulomb', 'load_squared', 'load_absolute', 'comprehensive'))
    parser.add_argument('--processes', action=argparse.BooleanOptionalAction, default=True,
                        help='one process per node (default); --no-processes runs them in this process '
                             '(use --rate 500 or less then)')
    parser.add_argument('--quiet', action='store_true', help='no progress output')


def _run_demo(args: argparse.Namespace) -> int:
    from pathlib import Path

    from dynid.nodes.runner import check_domain_id

    check_domain_id()
    from dynid.demo.plan import DemoError, DemoSettings, check_settings
    from dynid.nodes.demo import run_demo

    settings = check_settings(DemoSettings(Path(args.output), args.robot, args.namespace, args.rate, args.periods,
                                           args.holdout_seed, args.method, args.friction,
                                           processes=args.processes))
    try:
        run_demo(settings, quiet=args.quiet)
    except DemoError as error:
        print(f'dynid demo: failed: {error}', file=sys.stderr)
        return EXIT_INTERNAL
    return EXIT_OK


def _prior_text(prior: dict) -> str:
    if not prior['used']:
        return 'off'
    return f's = {prior["relative_std"]:g}' + (' (cross-validated)' if prior.get('cross_validation') else '')


# ----------------------------------------------------------------------------- dynid export-urdf
def _add_export_urdf_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument('result', help='result file of dynid identify --physical')
    parser.add_argument('--robot', required=True, metavar='URDF', help='the URDF of the identified robot')
    parser.add_argument('-o', '--output', required=True, help='URDF to write')
    parser.add_argument('--force', action='store_true', help='overwrite an existing output file')


def _run_export_urdf(args: argparse.Namespace) -> int:
    from pathlib import Path

    from dynid.identify.result import IdentificationResult
    from dynid.identify.torque import round_trip_error
    from dynid.model.urdf_export import export_urdf

    output = Path(args.output)
    if output.exists() and not args.force:
        raise InputError(f'{output} exists; refusing to overwrite (use --force)')
    if not Path(args.robot).is_file():
        raise InputError(f'URDF file {args.robot} does not exist')
    result = IdentificationResult.load(args.result)
    text = export_urdf(result, args.robot)
    error = round_trip_error(result, args.robot, text)
    if not error < 1e-6:
        raise InputError(f'{args.robot} does not reproduce the result\'s torques after export (relative error '
                         f'{error:.2g}): not the robot model the result was identified on?')
    output.write_text(text)
    print(f'wrote {output}: {len(result.joint_names)} identified links; pinocchio on it reproduces the identified '
          f'torques to {error:.1e} of their scale')
    return EXIT_OK


_SUBCOMMANDS: dict[str, tuple[str, Callable, Callable]] = {
    'model': ('print joints, limits and the base parameters of a robot model',
              _add_model_arguments, _run_model),
    'simulate': ('run the digital twin on a trajectory and write a rosbag2 (MCAP) recording',
                 _add_simulate_arguments, _run_simulate),
    'import': ('turn CSV logs (UR RTDE, libfranka, any column map) into a contract bag, checked and resampled',
               _add_import_arguments, _run_import),
    'excite': ('design (and optionally optimize) an excitation trajectory, or a special experiment',
               _add_excite_arguments, _run_excite),
    'identify': ('identify the dynamic model from recordings (IDIM: OLS, WLS, IRLS, I-IRLS, TLS)',
                 _add_identify_arguments, _run_identify),
    'export-urdf': ('write a URDF with the physically consistent identification in it (inertials, friction)',
                    _add_export_urdf_arguments, _run_export_urdf),
    'validate': ('predict the torques of recordings with an identification result',
                 _add_validate_arguments, _run_validate),
    'identify-friction': ('fit the joint friction model (static map, temperature, load-dependent Coulomb, E-GMS) '
                          'into a result file', _add_identify_friction_arguments, _run_identify_friction),
    'estimate': ('replay a recording through the online stiffness and friction estimators',
                 _add_estimate_arguments, _run_estimate),
    'bringup': ('run the node suite (sim_node, excitation_node, identifier_node; estimator_node with '
                '--estimator, feedforward_node with --feedforward)',
                _add_bringup_arguments, _run_bringup),
    'demo': ('the main job end to end on the digital twin, over DDS', _add_demo_arguments, _run_demo),
}


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The argument parser of the ``dynid`` command; with ``only``, the arguments of that subcommand alone
    (a subcommand's arguments import the modules their choices come from, seconds for all of them)."""
    parser = argparse.ArgumentParser(
        prog='dynid', description='Dynamics of robot arms: identify, estimate, feed forward.')
    parser.add_argument('--version', action='version', version=f'dynid {__version__}')
    subparsers = parser.add_subparsers(dest='command', metavar='SUBCOMMAND', required=True)
    for name, (summary, add_arguments, run) in _SUBCOMMANDS.items():
        sub = subparsers.add_parser(name, help=summary, description=summary)
        if only is None or name == only:
            add_arguments(sub)
        sub.set_defaults(run=run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``dynid``; returns the exit code."""
    argv = sys.argv[1:] if argv is None else list(argv)
    command = next((word for word in argv if not word.startswith('-')), '')  # options before it take no value
    args = build_parser(only=command).parse_args(argv)
    try:
        return args.run(args)
    except InputError as error:
        print(f'dynid {args.command}: error: {error}', file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        return 130


if __name__ == '__main__':
    sys.exit(main())
