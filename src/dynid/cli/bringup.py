"""``dynid bringup``: the node suite, in processes or in this one."""

from __future__ import annotations

import argparse
import signal

from dynid.cli.options import add_option
from dynid.cli.shared import EXIT_OK
from dynid.errors import InputError
from dynid.ros.runner import INTERRUPT_WAIT_S, TERMINATE_WAIT_S
from dynid.suite.settings import BringupSettings

SUMMARY = ('run the node suite (sim_node, excitation_node, identifier_node; estimator_node with --estimator, '
           'feedforward_node with --feedforward)')


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description += ('. Each node runs in its own process, as ros2 launch runs them (--no-processes: all in '
                           'this one, sharing one executor); they talk over DDS. Parameters come from the nodes\' '
                           'defaults, then --params-file, then the options here. Ctrl-C (or SIGTERM) stops: Ctrl-C '
                           f'to every node, SIGTERM to those still running {INTERRUPT_WAIT_S:g} s later, SIGKILL '
                           f'{TERMINATE_WAIT_S:g} s after that; exit code 0 once all have ended, 1 if one was killed.')
    add_option(parser, BringupSettings, 'processes', '--processes', action=argparse.BooleanOptionalAction,
               show_default=False, help='one process per node (default); --no-processes composes them in this '
                                        'process, which keeps up with a twin of a few hundred hertz')
    add_option(parser, BringupSettings, 'robot', '--robot')
    add_option(parser, BringupSettings, 'namespace', '--namespace')
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


def run(args: argparse.Namespace) -> int:
    """Ctrl-C (or SIGTERM) stops the suite; at any moment, even before it runs, that is a clean stop."""
    previous = signal.signal(signal.SIGTERM, signal.default_int_handler)
    try:
        return _run(args)
    except KeyboardInterrupt:  # before the nodes were started: nothing to stop
        print('dynid bringup: stopped', flush=True)
        return EXIT_OK
    finally:
        signal.signal(signal.SIGTERM, previous)


def _run(args: argparse.Namespace) -> int:
    from dynid.ros.runner import check_domain_id

    check_domain_id()  # before rclpy loads: DDS would end the process at the first node
    from dynid.suite.bringup import run_bringup, run_processes

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
