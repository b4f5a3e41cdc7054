"""A probe node for launch tests: its own rclpy context and executor, spun until a condition holds.

The launch tests start dynid's nodes as processes and watch them from the test through this probe;
:meth:`Probe.close` shuts the executor, the node and the context down (nothing left for interpreter exit).
"""

from __future__ import annotations

import time

import rclpy
from rclpy.executors import SingleThreadedExecutor
from std_srvs.srv import Trigger


class Probe:
    """An rclpy node in its own context on ``domain``; :meth:`spin_until`, :meth:`trigger`, :meth:`close`."""

    def __init__(self, domain: int, name: str = 'launch_probe'):
        self.context = rclpy.Context()
        rclpy.init(context=self.context, domain_id=domain)
        self.node = rclpy.create_node(name, context=self.context)
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)

    def spin_until(self, condition, timeout: float) -> bool:
        """Spin until ``condition()`` is true or ``timeout`` [s] has passed; returns ``condition()``."""
        end = time.monotonic() + timeout
        while not condition() and time.monotonic() < end:
            self.executor.spin_once(timeout_sec=0.1)
        return bool(condition())

    def call(self, client, request, timeout: float):
        """The response of ``client`` to ``request`` within ``timeout`` [s], or None."""
        future = client.call_async(request)
        return future.result() if self.spin_until(future.done, timeout) else None

    def trigger(self, service: str, timeout: float = 30.0) -> Trigger.Response:
        """Call the std_srvs/Trigger ``service``; fails the test when it is missing or does not answer."""
        client = self.node.create_client(Trigger, service)
        try:
            assert client.wait_for_service(timeout_sec=timeout), f'no service {service}'
            response = self.call(client, Trigger.Request(), timeout)
            assert response is not None, f'{service} did not answer within {timeout:g} s'
            return response
        finally:
            self.node.destroy_client(client)

    def close(self) -> None:
        self.executor.shutdown()
        self.node.destroy_node()
        rclpy.try_shutdown(context=self.context)
