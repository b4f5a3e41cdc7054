"""The ``main`` of every node executable: spin one node, exit cleanly on Ctrl-C, 2 on bad input.

Also :func:`interrupt_processes`, how node processes are stopped from outside (``dynid bringup``, the
tests and benchmarks that start them): Ctrl-C, as a user would, then kill what does not end.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterable

import rclpy
from rclpy.executors import ExternalShutdownException
from rclpy.node import Node

from dynid.errors import InputError


def run_node(make_node: Callable[[], Node], name: str, args=None) -> None:
    """Create the node with ``make_node`` and spin it until shut down.

    Bad input (unknown robot, refused parameter) exits with code 2 and a one-line reason; Ctrl-C
    ends quietly. The node is destroyed on the way out (identifier_node closes its recording then).
    A node started by ``dynid bringup`` or ``dynid demo`` (environment ``DYNID_PARENT_PID``) also
    stops when that process is gone, however it ended.
    """
    try:
        with rclpy.init(args=args):
            node = make_node()
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
        print(f'{name}: error: {error}', file=sys.stderr)
        raise SystemExit(2) from None


PARENT_VARIABLE = 'DYNID_PARENT_PID'


def interrupt_processes(processes: Iterable[subprocess.Popen], timeout_s: float = 10.0) -> list[int]:
    """SIGINT (Ctrl-C) every process still running, wait for them all (at most ``timeout_s`` [s]
    together), kill those still running then; returns their exit codes (negative: the signal that ended them)."""
    processes = list(processes)
    for process in processes:
        if process.poll() is None:
            process.send_signal(signal.SIGINT)
    end = time.monotonic() + timeout_s
    for process in processes:
        try:
            process.wait(timeout=max(end - time.monotonic(), 0.1))
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    return [process.returncode for process in processes]


def _stop_with_parent(node: Node) -> None:
    parent = os.environ.get(PARENT_VARIABLE)
    if not parent:
        return

    def check() -> None:
        if os.getppid() != int(parent):  # re-parented: the launching process died
            node.context.try_shutdown()

    node.create_timer(1.0, check)
