"""The ``main`` of every node executable: spin one node, exit cleanly on Ctrl-C, 2 on bad input."""

from __future__ import annotations

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
    """
    try:
        with rclpy.init(args=args):
            node = make_node()
            try:
                rclpy.spin(node)
            finally:
                node.destroy_node()
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    except InputError as error:
        print(f'{name}: error: {error}', file=sys.stderr)
        raise SystemExit(2) from None
