"""``dynid model``: joints, limits and base parameters of a robot model; its URDF for DH robots."""

from __future__ import annotations

import argparse
import json
import math
import sys

from dynid.cli.shared import EXIT_OK, add_robot_argument, joint_list, output_file
from dynid.errors import InputError

SUMMARY = 'print joints, limits and the base parameters of a robot model'


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_robot_argument(parser, more='',
                       help='built-in name (dynid model --list: ur3, ur5, ur10, ur3e, ur5e, ur10e, ur16e, ur20, '
                            'ur30, panda (also fer), fr3), a .urdf file (its arm is recognized by its joints and '
                            'kinematics), or a dynid robot .yaml')
    parser.add_argument('--list', action='store_true',
                        help='list the built-in robots with the sources of their models and drive data')
    parser.add_argument('--joints', type=joint_list, default=None,
                        help='URDF only: comma-separated joints to keep, in chain order; '
                             'the others are locked')
    parser.add_argument('--drives', default=None, metavar='FILE',
                        help='a drives file (as dynid import, identify and validate take it): show what it means, '
                             'motor by motor (gear ratio, drive gain and torque constant, rotor inertia on either '
                             'side of the gear, encoder offset, the joints each motor turns) and the transmission: '
                             'the coupling matrix C, the motors\' shaft angles from the joints\', the joints\' angles '
                             'from the motors\' and the joints\' torques from the motors\' (τ = Cᵀ·(r·τ_m))')
    parser.add_argument('--json', action='store_true', help='print one JSON document')
    parser.add_argument('--urdf', default=None, metavar='OUT.urdf',
                        help='also write a URDF of a DH robot (a built-in other than ur5 and panda, or a dynid robot '
                             '.yaml): the same joints, limits, inertials and flange, DH frames as links')
    parser.add_argument('--force', action='store_true', help='overwrite an existing --urdf file')


def _write_robot_urdf(spec: str, output: str, force: bool) -> str:
    """Write the URDF of DH robot ``spec`` to ``output``; returns the line that says so."""

    from dynid.files import write_text
    from dynid.model import RobotModel, load_robot
    from dynid.model.dh_urdf import robot_urdf, torque_agreement

    path = output_file(output, '--urdf', force)
    text = robot_urdf(spec)
    error = torque_agreement(load_robot(spec), RobotModel.from_urdf(text))
    try:
        write_text(path, text)
    except OSError as caught:
        raise InputError(f'cannot write {path}: {caught.strerror or caught}') from None
    return f'wrote {path}: pinocchio on it reproduces the DH model\'s torques to {error:.1e} of their scale'


def _format_limit(value: float | None, scale: float = 1.0) -> str:
    return '-' if value is None else f'{value * scale:.4g}'


def _list_robots(as_json: bool) -> int:
    """``dynid model --list``: the built-ins, their joints and the sources of their data."""
    from dynid.model.robots import ALIASES, BUILTINS, builtin_model

    rows = [{'robot': name, 'title': robot.title, 'family': robot.family, 'joints': builtin_model(name).n,
             'rate_hz': robot.rate_hz, 'model_source': robot.model, 'drives_source': robot.drives,
             'aliases': sorted(alias for alias, target in ALIASES.items() if target == name)}
            for name, robot in BUILTINS.items()]
    if as_json:
        print(json.dumps(rows, indent=2))
        return EXIT_OK
    print(f'{"robot":<7} {"joints":>6} {"rate":>6}  what; model from; drive data from')
    for row in rows:
        aliases = f' (also {", ".join(row["aliases"])})' if row['aliases'] else ''
        print(f'{row["robot"]:<7} {row["joints"]:>6} {row["rate_hz"]:>4g}Hz  {row["title"]}{aliases}; '
              f'{row["model_source"]}; {row["drives_source"]}')
    return EXIT_OK


def _print_transmission(transmission: dict, joint_names) -> None:
    """The drives, motor by motor, and their transmission (:func:`dynid.model.drives.transmission`)."""
    source = transmission['file'] or "the robot's drive data"
    print(f'drives ({source}), one motor per joint it is declared under:')
    print(f'  {"motor":<20} {"ratio r":>8} {"K_τ":>9} {"k_t":>9} {"B":>9} {"J":>10} {"offset":>9}  turns')
    print(f'  {"":<20} {"":>8} {"[N·m/A]":>9} {"[N·m/A]":>9} {"[kg·m²]":>9} {"[kg·m²]":>10} {"[rad]":>9}')
    for motor in transmission['motors']:
        turns = ' '.join(f'{c:+g}·{joint}' for joint, c in motor['turns'].items())
        print(f'  {motor["joint"]:<20} {motor["gear_ratio"]:>8.4g} {motor["drive_gain"]:>9.4g} '
              f'{motor["torque_constant"]:>9.4g} {motor["rotor_inertia"]:>9.4g} {motor["rotor_inertia_motor"]:>10.3g} '
              f'{motor["motor_offset"]:>9.4g}  {turns}')
    print('  K_τ, B: link side (K_τ·i is the motor\'s torque in link units, r·τ_m); k_t = K_τ/r, J = B/r²: motor side')
    if transmission['coupling'] is None:
        print('coupling: none (each motor turns its own joint)')
        if transmission['file'] is None:
            return
    else:
        print('coupling C (θ = C·q, the motors\' angles in link units θ = (θ_m − offset)/r; rows: motors, columns: '
              'joints):')
        print('  ' + ' ' * 16 + ''.join(f'{name[-8:]:>9}' for name in joint_names))
        for motor, row in zip(transmission['motors'], transmission['coupling'], strict=True):
            print(f'  {motor["joint"]:<16}' + ''.join(f'{c:>9g}' for c in row))
    print('the motors\' shaft angles from the joints\' (θ_m = r·C·q + offset):')
    for line in transmission['motor_angles']:
        print(f'  {line}')
    print('the joints\' angles from the motors\' (q = C⁻¹·θ):')
    for line in transmission['joint_angles']:
        print(f'  {line}')
    print('the joints\' torques from the motors\' (τ = Cᵀ·(K_τ·i) = Cᵀ·(r·τ_m), virtual work):')
    for line in transmission['joint_torques']:
        print(f'  {line}')


def run(args: argparse.Namespace) -> int:
    from dynid.model import load_robot  # pinocchio loads here, not for --help

    if args.list:
        return _list_robots(args.json)
    robot = load_robot(args.robot, joints=args.joints)
    for note in robot.notes:
        print(f'note: {note}', file=sys.stderr)
    if args.drives is not None:
        from dynid.model.drives import load_drives

        robot = robot.with_drives(load_drives(args.drives, robot.joint_names))
    written = None if args.urdf is None else _write_robot_urdf(args.robot, args.urdf, args.force)
    summary = robot.summary()
    summary['builtin'] = robot.builtin
    if robot.drives is not None:
        from dynid.model.drives import transmission

        summary['transmission'] = transmission(robot.drives)
        summary['transmission']['file'] = args.drives
    if args.json:
        print(json.dumps(summary, indent=2))
        if written:
            print(written, file=sys.stderr)
        return EXIT_OK
    print(f'robot: {summary["robot"]}  ({summary["source"]})')
    if robot.builtin and robot.builtin != summary['robot']:
        print(f'built-in: {robot.builtin} (recognized by its joints and kinematics)')
    print(f'gravity [m/s²]: {[round(float(g), 6) for g in summary["gravity"]]}   flange frame: {summary["flange"]}')
    print(f'joints: {robot.n}')
    print(f'  {"#":>2}  {"name":<22} {"type":<10} {"lower":>9} {"upper":>9} {"velocity":>9} {"effort":>8}')
    print(f'  {"":>2}  {"":<22} {"":<10} {"[deg]":>9} {"[deg]":>9} {"[deg/s]":>9} {"[N·m]":>8}')
    for i, joint in enumerate(summary['joints'], start=1):
        scale = 1.0 if joint['type'] == 'prismatic' else 180.0 / math.pi
        print(f'  {i:>2}  {joint["name"]:<22} {joint["type"]:<10} '
              f'{_format_limit(joint["lower"], scale):>9} {_format_limit(joint["upper"], scale):>9} '
              f'{_format_limit(joint["velocity"], scale):>9} {_format_limit(joint["effort"]):>8}')
    if summary.get('transmission'):
        _print_transmission(summary['transmission'], robot.joint_names)
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
