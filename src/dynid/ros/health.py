"""A node's health record: its ``health_*`` parameters, the session timer and the low-rate ``/diagnostics``.

Wires :class:`dynid.health.online.SessionRecorder` (the core) into a node: the parameters come from
:class:`dynid.health.settings.HealthSettings` with the prefix ``health_``; a snapshot is taken every
second and a session written every ``health_session_s``; the record's judgement goes to ``/diagnostics``
every ``health_diagnostics_period_s`` (one status per joint and quantity: OK, WARN "limit in N days" or a
change, ERROR past the limit). With ``health_record`` false nothing is written or published.
"""

from __future__ import annotations

from rclpy.node import Node

from dynid.health.online import SessionRecorder
from dynid.health.settings import HealthSettings
from dynid.ros.diagnostics import DiagnosticsPublisher, status
from dynid.ros.parameters import declare_settings
from dynid.settings import from_values

SNAPSHOT_PERIOD_S = 1.0


class HealthReporting:
    """The health record of ``node``'s running ``estimation`` (module docstring); ``log`` takes (level, text)."""

    def __init__(self, node: Node, estimation, result_file: str, log) -> None:
        self.node, self.log = node, log
        declare_settings(node, HealthSettings)
        self.settings = from_values(HealthSettings, lambda name: node.get_parameter(name).value)
        self.recorder = None
        if not self.settings.record:
            return
        self.recorder = SessionRecorder(estimation, self.settings, result_file, input=node.get_fully_qualified_name())
        node.create_timer(SNAPSHOT_PERIOD_S, lambda: self.log(self.recorder.tick() if self.recorder else []))
        self.diagnostics = DiagnosticsPublisher(node, self.statuses, self.settings.diagnostics_period_s)
        node.get_logger().info(f'health record: {self.recorder.path} (robot {self.recorder.name})')

    def statuses(self) -> list:
        name = self.node.get_fully_qualified_name()
        return [status(f'{name}: health {s.joint} {s.quantity}'.replace('  ', ' '), s.level, s.text, s.values)
                for s in (self.recorder.statuses() if self.recorder else [])]

    def event(self, kind: str) -> None:
        """Close the session and record ``kind`` (reset, set_baseline)."""
        if self.recorder is not None:
            self.log(self.recorder.event(kind))

    def close(self) -> None:
        """Write the session in progress (at shutdown)."""
        if self.recorder is not None:
            self.log(self.recorder.close())
            self.recorder = None
