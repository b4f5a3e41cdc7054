"""The ``main`` of every node executable: spin one node, exit cleanly on Ctrl-C, 2 on bad input."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable

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


def _stop_with_parent(node: Node) -> None:
    parent = os.environ.get(PARENT_VARIABLE)
    if not parent:
        return

    def check() -> None:
        if os.getppid() != int(parent):  # re-parented: the launching process died
            node.context.try_shutdown()

    node.create_timer(1.0, check)
