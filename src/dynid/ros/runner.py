"""How node executables run and stop: spin one node, exit quietly on Ctrl-C, 2 on bad input.

- :func:`run_executable`: a node executable (console scripts ``sim_node`` ..., ``python -m dynid.nodes
  <node>``, what ``dynid bringup`` starts): imports the node's module, then runs its ``main``; a Ctrl-C
  at any moment, even while the modules still load, ends it quietly.
- :func:`check_domain_id`: refuse a ``ROS_DOMAIN_ID`` that rcl or DDS would mishandle, before anything loads.
- :func:`run_node`: the ``main`` of a node: create it, spin it until shut down, destroy it.
- :func:`ros_initialized`: rclpy's default context for a ``with`` block, on every distribution dynid runs on.
- :func:`interrupt_processes`: how node processes are stopped from outside (``dynid bringup``, the
  tests and benchmarks that start them): Ctrl-C, as a user would; SIGTERM to what has not ended
  :data:`INTERRUPT_WAIT_S` later; SIGKILL to what has not ended :data:`TERMINATE_WAIT_S` after that.
- :func:`restore_ctrl_c`: Ctrl-C ends the process even when it was started with SIGINT ignored (``nohup``,
  ``cmd &`` in a script, some supervisors), which a child would otherwise inherit.

This module imports rclpy only when a node runs, so that an executable's first imports are quick.
"""

from __future__ import annotations

import faulthandler
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager, suppress
from importlib import import_module
from typing import TYPE_CHECKING

from dynid.errors import InputError

if TYPE_CHECKING:
    from rclpy.node import Node

#: the node executables, each a module of dynid.nodes with a ``main(args=None)``
NODES = ('sim_node', 'excitation_node', 'identifier_node', 'estimator_node', 'feedforward_node', 'contact_node')


#: the highest ROS domain id: DDS takes its UDP ports from it, 7400 + 250·id + offsets (the DDS-RTPS
#: specification's default port mapping), and above 232 they pass 65535
MAX_DOMAIN_ID = 232


def check_domain_id(environment: Mapping[str, str] = os.environ) -> None:
    """Raise InputError (one line) unless ``ROS_DOMAIN_ID`` is unset, empty or a decimal integer 0–232.

    What rcl and Fast DDS do otherwise: an id above 232 passes ``rclpy.init`` and ends the process with
    exit code 1 and Fast DDS's "Calculated port number is too high" when the first node is created;
    rcl reads the variable with C's ``strtoul`` (base 0), so ``-1`` silently means domain 0, ``010`` is
    octal 8, ``0x10`` is 16 and ``12abc`` is 12, and ``abc`` fails with an RCLError traceback. Ids
    102–214 are accepted, though on Linux their ports can collide with ephemeral ones (0–101 and
    215–232 do not).
    """
    text = environment.get('ROS_DOMAIN_ID', '').strip()
    if not text:
        return
    if not re.fullmatch(r'0|[1-9][0-9]*', text):
        raise InputError(f'ROS_DOMAIN_ID={text!r} is not a ROS domain id: expected a decimal integer 0–'
                         f'{MAX_DOMAIN_ID} without sign or leading zeros')
    if int(text) > MAX_DOMAIN_ID:
        raise InputError(f'ROS_DOMAIN_ID={text} is above {MAX_DOMAIN_ID}, the highest ROS domain id (DDS ports '
                         f'would pass 65535); use 0–101 or 215–{MAX_DOMAIN_ID}')


#: how long a stop waits for processes to end after Ctrl-C (SIGINT) [s]: identifier_node closes its
#: recording, feedforward_node commands zeros and waits for them to be acknowledged
INTERRUPT_WAIT_S = 10.0
#: then how long after SIGTERM [s] (rclpy shuts a running node's context down at once) before SIGKILL
TERMINATE_WAIT_S = 5.0
#: how long after its Ctrl-C a node executable still running prints where each of its threads is and ends [s]
STUCK_DUMP_S = INTERRUPT_WAIT_S - 1.0


#: whether run_executable's Ctrl-C was dropped by native code that had called back into Python (a KeyboardInterrupt
#: cannot leave a ctypes callback); run_node then does not start the node
_ctrl_c_dropped = False


def restore_ctrl_c() -> None:
    """SIGINT raises KeyboardInterrupt again (Python's default handler) where the process was started with
    it ignored: a process inherits an ignored SIGINT from its parent and Python keeps it ignored."""
    if signal.getsignal(signal.SIGINT) in (signal.SIG_IGN, signal.SIG_DFL, None):
        signal.signal(signal.SIGINT, signal.default_int_handler)


def run_executable(node: str, args=None) -> None:
    """Run node executable ``node`` (:data:`NODES`): import its module, call its ``main(args)``.

    The import takes seconds (rclpy, pinocchio, scipy, numba); a Ctrl-C during it (``dynid bringup``
    interrupted right after its start) ends the process quietly, as a Ctrl-C does once the node runs
    (:func:`run_node`). Native code interrupted by Ctrl-C may report it as its own error (an extension
    module's initialization: ``ImportError: initialization failed``); after a Ctrl-C such an error is one
    line on stderr, not a traceback. A Ctrl-C that lands in Python called back from native code (llvmlite's
    callbacks while numba compiles) is dropped there, which Python reports with a traceback: it is not
    printed, and it still stops the process: the node does not start (:data:`_ctrl_c_dropped`), or rclpy,
    whose own Ctrl-C handler has shut its context down, stops it. Only the first Ctrl-C
    interrupts: ``dynid bringup`` passes one on to nodes that had one from the terminal already, and the
    second must not cut short the way out (identifier_node closing its recording).

    An invalid ``ROS_DOMAIN_ID`` (:func:`check_domain_id`) ends it with exit code 2 and one line, before
    the imports. Ctrl-C works also where the process was started with SIGINT ignored (:func:`restore_ctrl_c`).
    A process stopped by Ctrl-C ends with exit code 0 (:func:`forget_caught_ctrl_c`); one still running
    :data:`STUCK_DUMP_S` after it prints every thread's stack on stderr and ends with exit code 1
    (:func:`faulthandler.dump_traceback_later`).
    """
    global _ctrl_c_dropped
    restore_ctrl_c()
    try:
        check_domain_id()
    except InputError as error:
        print(f'{node}: error: {node_message(error)}', file=sys.stderr)
        raise SystemExit(2) from None
    interrupted = False

    def interrupt(signum, frame) -> None:
        nonlocal interrupted
        if not interrupted:
            interrupted = True
            # Where every thread is, on stderr, if the process is still there just before a stopper's SIGTERM, and
            # then its end (exit code 1): a way out that hangs (rare, on a busy machine; seen in rclpy's
            # Node.destroy_node, which holds the interpreter, so no Python handler could run) says where and ends.
            with suppress(AttributeError, OSError, ValueError):  # a stderr without a file descriptor: no dump
                faulthandler.dump_traceback_later(STUCK_DUMP_S, exit=True, file=sys.__stderr__)
            raise KeyboardInterrupt

    def dropped(unraisable) -> None:
        global _ctrl_c_dropped
        if interrupted and isinstance(unraisable.exc_value, KeyboardInterrupt):
            _ctrl_c_dropped = True
        else:
            previous_hook(unraisable)

    previous = signal.signal(signal.SIGINT, interrupt)
    previous_hook, sys.unraisablehook = sys.unraisablehook, dropped
    try:
        module = import_module(f'dynid.nodes.{node}')
        if not _ctrl_c_dropped:
            module.main(args)
    except KeyboardInterrupt:
        pass
    except Exception as error:
        if not interrupted:
            raise
        first = next(iter(str(error).strip().splitlines()), '')  # numpy's ImportError explains in 30 lines
        print(f'{node}: stopped by Ctrl-C ({type(error).__name__}: {first})', file=sys.stderr)
    finally:
        signal.signal(signal.SIGINT, previous)
        sys.unraisablehook = previous_hook
        _ctrl_c_dropped = False
        if interrupted:
            faulthandler.cancel_dump_traceback_later()
            forget_caught_ctrl_c()


def forget_caught_ctrl_c() -> None:
    """Let a process whose Ctrl-C was caught end with its own exit code.

    CPython (3.8 and later) marks the process as ended by an uncaught Ctrl-C whenever a KeyboardInterrupt leaves
    code run by ``exec()`` of a string, even if an outer ``try`` catches it; the standard library builds methods so
    (dataclasses, namedtuple), which a node's first imports and construction do. Run as ``python -m`` (``python -m
    dynid.nodes``, what ``dynid bringup`` starts; ``python -m dynid.cli``) the process then kills itself with SIGINT
    after a clean stop (exit code -2, no message; a console script's ``sys.exit`` ends before the mark is read). An
    ``exec()`` that ends without a KeyboardInterrupt clears the mark.
    """
    exec('')  # runs nothing; clears the mark (docstring)


def sim_node() -> None:
    """Console script ``sim_node``."""
    run_executable('sim_node')


def excitation_node() -> None:
    """Console script ``excitation_node``."""
    run_executable('excitation_node')


def identifier_node() -> None:
    """Console script ``identifier_node``."""
    run_executable('identifier_node')


def estimator_node() -> None:
    """Console script ``estimator_node``."""
    run_executable('estimator_node')


def feedforward_node() -> None:
    """Console script ``feedforward_node``."""
    run_executable('feedforward_node')


def contact_node() -> None:
    """Console script ``contact_node``."""
    run_executable('contact_node')


@contextmanager
def ros_initialized(args=None, **options) -> Iterator[None]:
    """rclpy's default context initialized (``rclpy.init(args, **options)``) for the block, shut down after it.

    From Kilted on ``rclpy.init`` returns a context manager that does this; on Jazzy it returns None. Calling
    ``init`` and ``try_shutdown`` here works on both without asking which one is installed.
    """
    import rclpy

    rclpy.init(args=args, **options)
    try:
        yield
    finally:
        rclpy.try_shutdown()


def run_node(make_node: Callable[[], Node], name: str, args=None) -> None:
    """Create the node with ``make_node`` and spin it until shut down.

    Bad input (unknown robot, refused parameter) exits with code 2 and a one-line reason; Ctrl-C
    ends quietly. The node is destroyed on the way out (identifier_node closes its recording then).
    A node started by ``dynid bringup`` or ``dynid demo`` (environment ``DYNID_PARENT_PID``) also
    stops when that process is gone, however it ended.
    """
    import rclpy
    from rclpy.exceptions import ParameterException
    from rclpy.executors import ExternalShutdownException

    from dynid.ros.parameter_file import check_parameter_file, declared_parameters, parameter_files

    if _ctrl_c_dropped:
        return  # stopped by Ctrl-C before rclpy, whose handler would have stopped the node, was initialized
    try:
        with ros_initialized(args):
            try:
                node = make_node()
            except ParameterException as error:  # a value of the wrong type or range (parameter file, -p, launch)
                raise InputError(str(error).strip().splitlines()[-1]) from None
            try:
                for path in parameter_files(sys.argv if args is None else args):
                    check_parameter_file(path, node.get_fully_qualified_name(), declared_parameters(node))
            except InputError:
                node.destroy_node()
                raise
            _stop_with_parent(node)
            try:
                rclpy.spin(node)
            except Exception:
                if node.context.ok():
                    raise
                # Ctrl-C shut the context down under a running callback (e.g. a publish): a normal stop.
            finally:
                node.destroy_node()
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    except InputError as error:
        print(f'{name}: error: {node_message(error)}', file=sys.stderr)
        raise SystemExit(2) from None


#: The switches an advice turns on (or, "without", off), spelled with the value that turns them on (``force:=``
#: alone says not what to set).
SWITCHED_ON = {'force': 'force:=true', 'prior': 'prior:=true', 'physical': 'physical:=true'}
#: How a node takes the settings an identification's advice names, ``{}`` for the value (identifier_node's
#: parameters; :class:`dynid.identify.job.workflow.Identification` ``spelling``; the methods' flagged options are
#: added from their declarations: :func:`dynid.ros.parameters.method_option_spelling`).
PARAMETER_ADVICE = {'torque_sign': 'torque_sign:=[{}]', 'joint_states_effort': 'joint_states_effort:={}',
                    'decimation_cutoff_hz': 'decimation_cutoff_hz:={}', **SWITCHED_ON}


def parameter_spelling(field: str) -> str:
    """A node's spelling of a settings field that a core error names: its parameter, ``joints:=``
    (``force:=true`` for a switch to turn on: :data:`SWITCHED_ON`)."""
    return SWITCHED_ON.get(field, f'{field}:=')


def node_message(error: InputError) -> str:
    """The error's one-line message with the fields it names spelled as a node's parameters."""
    return error.spelled(parameter_spelling)


PARENT_VARIABLE = 'DYNID_PARENT_PID'


def interrupt_processes(processes: Iterable[subprocess.Popen], timeout_s: float = INTERRUPT_WAIT_S,
                        terminate_s: float = TERMINATE_WAIT_S) -> list[int]:
    """Stop processes: SIGINT (Ctrl-C) every one still running and wait at most ``timeout_s`` [s] for them all
    together; SIGTERM those still running and wait at most ``terminate_s`` [s]; SIGKILL the rest. Returns
    their exit codes (negative: the signal that ended them; ``-SIGKILL``: killed)."""
    processes = list(processes)
    for sent, wait_s in ((signal.SIGINT, timeout_s), (signal.SIGTERM, terminate_s), (signal.SIGKILL, None)):
        running = [process for process in processes if process.poll() is None]
        for process in running:
            process.send_signal(sent)
        end = None if wait_s is None else time.monotonic() + wait_s
        for process in running:
            try:
                process.wait(timeout=None if end is None else max(end - time.monotonic(), 0.05))
            except subprocess.TimeoutExpired:
                pass
    return [process.returncode for process in processes]


def _stop_with_parent(node: Node) -> None:
    parent = os.environ.get(PARENT_VARIABLE)
    if not parent:
        return

    def check() -> None:
        if os.getppid() != int(parent):  # re-parented: the launching process died
            node.context.try_shutdown()

    node.create_timer(1.0, check)
