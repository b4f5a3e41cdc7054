"""The ``dynid`` command. Each subcommand documents itself: ``dynid <subcommand> --help``.

Exit codes (docs/contract.md): 0 success, 2 bad input (one-line reason on stderr), 1 internal error or a failed
verdict (`dynid validate --require-fit`).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from dynid import __version__
from dynid.cli import (
    batch,
    bringup,
    compare,
    contact,
    demo,
    estimate,
    excite,
    export_mjcf,
    export_urdf,
    fleet,
    health,
    identify,
    identify_friction,
    import_logs,
    model,
    payload,
    simulate,
    validate,
)
from dynid.cli.flags import message
from dynid.cli.library_warnings import said_or_dropped
from dynid.cli.shared import EXIT_BAD_INPUT
from dynid.errors import InputError
from dynid.ros.runner import forget_caught_ctrl_c, restore_ctrl_c

_SUBCOMMANDS = {'model': model, 'simulate': simulate, 'import': import_logs, 'excite': excite, 'identify': identify,
                'export-urdf': export_urdf,
                'export-mjcf': export_mjcf, 'validate': validate, 'compare': compare,
                'identify-friction': identify_friction, 'estimate': estimate, 'contact': contact, 'health': health,
                'payload': payload,
                'batch': batch, 'fleet': fleet, 'bringup': bringup, 'demo': demo}
"""The subcommands in the order of ``dynid --help``; each module has ``SUMMARY``, ``add_arguments(parser)``
and ``run(args) -> exit code``."""


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The argument parser of the ``dynid`` command; with ``only``, the arguments of that subcommand alone
    (a subcommand's arguments import the modules their choices come from, seconds for all of them)."""
    parser = argparse.ArgumentParser(
        prog='dynid', description='Dynamics of robot arms: identify, estimate, feed forward.')
    parser.add_argument('--version', action='version', version=f'dynid {__version__}')
    subparsers = parser.add_subparsers(dest='command', metavar='SUBCOMMAND', required=True)
    for name, module in _SUBCOMMANDS.items():
        sub = subparsers.add_parser(name, help=module.SUMMARY, description=module.SUMMARY)
        if only is None or name == only:
            module.add_arguments(sub)
        sub.set_defaults(run=module.run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``dynid``; returns the exit code."""
    restore_ctrl_c()  # also when started with SIGINT ignored: a Ctrl-C ends dynid (and the nodes it starts)
    argv = sys.argv[1:] if argv is None else list(argv)
    command = next((word for word in argv if not word.startswith('-')), '')  # options before it take no value
    args = build_parser(only=command).parse_args(argv)
    try:
        with said_or_dropped():  # a library's warning is no sentence of dynid's (dynid.cli.library_warnings)
            return args.run(args)
    except InputError as error:
        print(f'dynid {args.command}: error: {message(error)}', file=sys.stderr)  # fields as --flags
        return EXIT_BAD_INPUT
    except OSError as error:  # a file that cannot be read or written (no space left, no permission): one line
        where = f'{error.filename}: ' if error.filename else ''
        print(f'dynid {args.command}: error: {where}{error.strerror or error}', file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        return 130
    finally:
        forget_caught_ctrl_c()  # the exit code is dynid's also after a Ctrl-C it caught (bringup's clean stop)


