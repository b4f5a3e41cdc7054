"""What several subcommands share: exit codes, argument types, the robot, joints and data-pipeline argument
groups, settings classes as arguments, the printing of validation metrics, and the checks of where outputs go
(before any work is done). Reading recordings as the user told is :mod:`dynid.cli.reading`."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from dynid.errors import InputError

EXIT_OK, EXIT_INTERNAL, EXIT_BAD_INPUT = 0, 1, 2
EXIT_FAILED = 1  # a verdict's threshold failed (dynid validate --require-fit), as DESIGN's exit codes say


def _writable_folder(folder: Path, option: str, path: Path) -> None:
    """The nearest existing folder at or above ``folder`` is a folder this process may write into."""
    existing = folder
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        raise InputError(f'{option} {path}: {existing} is not a folder')
    if not os.access(existing, os.W_OK | os.X_OK):
        raise InputError(f'{option} {path}: cannot write into {existing}')


def output_file(path: str | Path, option: str, force: bool = False) -> Path:
    """Where ``option`` (e.g. ``-o``) writes a file, checked before any work: not a folder, not an existing
    file unless ``force``, in a folder that exists (or can be made) and may be written; InputError naming
    ``option`` otherwise."""
    path = Path(path)
    if path.is_dir():
        raise InputError(f'{option} {path} is a folder: name the file to write')
    if path.exists() and not force:
        raise InputError(f'{path} exists; refusing to overwrite (use --force)')
    _writable_folder(path.parent, option, path)
    return path


def output_folder(path: str | Path, option: str, new: bool = False) -> Path:
    """Where ``option`` writes a folder (a report, a recording), checked before any work: not a file, a
    folder that does not exist yet where ``new`` says so, and writable (or creatable); InputError naming
    ``option`` otherwise."""
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise InputError(f'{option} {path} is a file, not a folder')
    if new and path.exists():
        raise InputError(f'{path} exists; refusing to overwrite (choose a new output directory)')
    _writable_folder(path, option, path)
    return path


def joint_list(text: str) -> list[str]:
    names = [name.strip() for name in text.split(',') if name.strip()]
    if not names:
        raise argparse.ArgumentTypeError('expected comma-separated joint names')
    return names


def float_list(text: str) -> list[float]:
    try:
        return [float(x) for x in text.split(',') if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f'expected comma-separated numbers, got {text!r}') from None


def add_robot_argument(parser, more: str = ' (as for dynid model)', **kwargs) -> None:
    """--robot: the robot every job runs on (:class:`dynid.settings.RobotSettings`); ``kwargs`` for
    ``add_argument`` (``default=None`` where a result names the robot)."""
    from dynid.cli.options import add_option
    from dynid.settings import RobotSettings

    add_option(parser, RobotSettings, 'robot', '--robot', more=more, **kwargs)


def robot_said(robot):
    """``robot``, its :attr:`~dynid.model.RobotModel.range_note` printed (joints the checks take as unbounded)."""
    if robot.range_note:
        import sys

        print(f'note: {robot.range_note}', file=sys.stderr)
    return robot


def add_joints_argument(parser: argparse.ArgumentParser, from_result: bool = False) -> None:
    """--joints: the serial chain of a description that branches (or a part of one), the others locked."""
    parser.add_argument('--joints', type=joint_list, default=None, metavar='J1,J2,...',
                        help='URDF only: the joints to model (one serial chain of a description that branches, e.g. '
                             'the arm of a mobile manipulator; any order), the others locked at zero or mid-range'
                             + ('; default: those of the identification' if from_result else ''))


def result_joints(args: argparse.Namespace, result) -> list[str] | None:
    """--joints where given, else the serial chain the result's robot was selected to (None: all joints)."""
    from dynid.identify import recorded_joints

    return getattr(args, 'joints', None) or recorded_joints(result.provenance)


def add_filter_arguments(parser: argparse.ArgumentParser) -> None:
    from dynid.cli.options import add_option
    from dynid.signal.preprocess import FilterSettings as Filters

    group = parser.add_argument_group('data pipeline')
    add_option(group, Filters, 'position_cutoff_hz', '--position-cutoff')
    add_option(group, Filters, 'decimation_cutoff_hz', '--decimation-cutoff')
    add_option(group, Filters, 'motion_bandwidth_hz', '--motion-bandwidth')
    add_option(group, Filters, 'decimation', '--decimation')
    add_option(group, Filters, 'trim_s', '--trim')
    add_option(group, Filters, 'stiction_velocity', '--stiction-velocity')
    group.add_argument('--bridge-ms', type=float, default=None,
                       help='fill gaps whose missing samples span at most this [ms] before filtering, where the '
                            'stretch around them kept at least half of its samples; longer gaps split the recording '
                            '(default: the spacing of the decimated samples, 20 ms at 1 kHz; 0 splits at every gap)')


def filter_settings(args):
    from dynid.signal.preprocess import FilterSettings

    return FilterSettings(position_cutoff_hz=args.position_cutoff, decimation_cutoff_hz=args.decimation_cutoff,
                          decimation=args.decimation, trim_s=args.trim, stiction_velocity=args.stiction_velocity,
                          motion_bandwidth_hz=args.motion_bandwidth,
                          bridge_s=None if args.bridge_ms is None else args.bridge_ms / 1e3)


def print_metrics(label: str, metrics: dict) -> None:
    """The metrics of one recording (beside the robot file's own model where the result holds one), then its one
    line about the share used (a warning if it lost samples). With coupled drives the equations are the motors'
    (named after the joint each drive is declared under): the joints' torques follow (``joint_space``)."""
    if metrics.get('joint_space') is not None:
        _print_rows(f'{label}, the motors\' equations', metrics)
        _print_rows(f'{label}, the joints\' torques τ = Cᵀ·(the motors\')', metrics['joint_space'])
    else:
        _print_rows(label, metrics)
    gaps = metrics.get('gaps') or {}
    if gaps.get('summary'):  # a warning only where some of the recording is not used
        print(('warning: ' if gaps.get('lost_any', True) else '') + gaps['summary'])
    elif metrics.get('usage'):
        print(metrics['usage'])


def _print_rows(label: str, metrics: dict) -> None:
    """print_metrics' table and warnings of one space; a model that fails on the motion (its ``failed``:
    :func:`dynid.identify.result.metrics.failed_model`) is named with its failure instead of its figures."""
    from dynid.text import format_number as number

    joints = metrics['joints']
    scored = metrics.get('scored_joints', len(joints))
    reference = metrics.get('robot_file')
    other = metrics.get('compare_robot')
    print(f'{label}: ' + _summary(metrics, 'the model identified', 'relative residual {}, RMSE {} N·m'.format(
        number(metrics['relative_residual'], '.4g'), number(metrics['rmse'], '.4g')))
          + f' ({metrics["rows"]} equations; {scored} of {len(joints)} joints scored)'
          + ('' if reference is None else '; ' + _summary(reference, 'the robot file\'s own model'))
          + ('' if other is None else '; ' + _summary(other, other['robot'])))
    for name, m in joints.items():
        if m.get('left_out'):
            print(f'  {name:<22} left out of the identification (exclude_joints): not scored')
            continue
        line = f'  {name:<22} ' + ('failed (above)' if metrics.get('failed') else
                                   f'RMSE {number(m["rmse"], ".4g"):>8} N·m   NRMSE fit '
                                   f'{number(m["nrmse_fit_percent"], ".2f"):>7} %') \
            + (f'   ({m["rows"]} rows)' if 'rows' in m else '')
        for title, block in (('robot file', reference), ('other', other)):
            if block is not None:
                theirs = block['joints'][name]
                line += f'   {title}: ' + ('failed (above)' if block.get('failed') else
                                           f'RMSE {number(theirs["rmse"], ".4g"):>8} N·m, fit '
                                           f'{number(theirs["nrmse_fit_percent"], ".2f"):>7} %')
        print(line)
    for note in metrics.get('notes', []):
        print(f'note: {label}: {note}')
    for warning in metrics.get('warnings', []):
        print(f'warning: {label}: {warning}')


def _summary(block: dict, model: str, figures: str | None = None) -> str:
    """One model's figures on the header line (``figures``; default its relative residual), or its failure named."""
    from dynid.identify import failed_text
    from dynid.text import format_number

    if block.get('failed'):
        return f'{model} {failed_text(block["failed"])}'
    if figures is None:
        return f'{model}: relative residual {format_number(block["relative_residual"], ".4g")}'
    return figures


def add_settings_arguments(parser: argparse.ArgumentParser, settings_class, title: str,
                           skip: tuple[str, ...] = ()) -> None:
    """One ``--flag`` per field of a frozen settings dataclass (fields carry 'description', 'unit' and
    'range' metadata); the defaults stay in the dataclass (a flag not given leaves its field alone)."""
    from dataclasses import MISSING, fields

    group = parser.add_argument_group(title)
    for f in fields(settings_class):
        if f.name in skip:
            continue
        unit = f.metadata.get('unit')
        default = f.default if f.default is not MISSING else None
        text = (f.metadata.get('description', '') + (f' [{unit}]' if unit else '') +
                (f' (default {default!r})' if default not in ('', None) else '')).replace('%', '%%')
        flag = '--' + f.name.replace('_', '-')
        if isinstance(default, bool):
            group.add_argument(flag, dest=f.name, action=argparse.BooleanOptionalAction, default=None, help=text)
        else:
            kind = str if isinstance(default, str) else (int if isinstance(default, int) else float)
            group.add_argument(flag, dest=f.name, type=kind, default=None, help=text)


def settings_from_args(args: argparse.Namespace, settings_class, **values):
    """The settings object with the fields the user gave as flags (others at their defaults) and ``values``."""
    from dataclasses import fields

    given = {f.name: getattr(args, f.name) for f in fields(settings_class)
             if getattr(args, f.name, None) is not None}
    return settings_class(**{**given, **values})
