"""``/diagnostics`` of a node: a DiagnosticArray once per period, from the statuses the node collects."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from rclpy.node import Node

LEVELS = {'ok': DiagnosticStatus.OK, 'warn': DiagnosticStatus.WARN, 'error': DiagnosticStatus.ERROR,
          'stale': DiagnosticStatus.STALE}


def status(name: str, level: str, message: str, values: Mapping[str, object] = (), hardware_id: str = 'dynid'):
    """A DiagnosticStatus; ``level`` is 'ok', 'warn', 'error' or 'stale'; values become strings."""
    return DiagnosticStatus(level=LEVELS[level], name=name, message=message, hardware_id=hardware_id,
                            values=[KeyValue(key=str(k), value=str(v)) for k, v in dict(values).items()])


class DiagnosticsPublisher:
    """Publishes ``collect()`` (a list of DiagnosticStatus) on ``/diagnostics`` every ``period_s``."""

    def __init__(self, node: Node, collect: Callable[[], list], period_s: float = 1.0) -> None:
        self.node = node
        self.collect = collect
        self.publisher = node.create_publisher(DiagnosticArray, '/diagnostics', 10)
        self.timer = node.create_timer(period_s, self.publish)

    def publish(self) -> None:
        array = DiagnosticArray(status=list(self.collect()))
        array.header.stamp = self.node.get_clock().now().to_msg()
        self.publisher.publish(array)
