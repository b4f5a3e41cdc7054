"""Helpers of the tests that talk to dynid's nodes over real DDS (isolated domain, localhost only)."""

import os
import shutil
import subprocess
import sys
import threading
import time
from contextlib import contextmanager

from std_srvs.srv import Trigger


def environment(domain: int) -> dict:
    """The environment of a node process on ``domain``, localhost-only discovery, unbuffered output."""
    env = dict(os.environ, ROS_DOMAIN_ID=str(domain), ROS_AUTOMATIC_DISCOVERY_RANGE='LOCALHOST', PYTHONUNBUFFERED='1')
    env.setdefault('AMENT_PREFIX_PATH', sys.prefix)
    return env


def executable(name: str, module: str) -> list[str]:
    """The installed console script ``name``, or ``python -m module`` where it is not on PATH."""
    found = shutil.which(name)
    return [found] if found else [sys.executable, '-m', module]


def node_executable(name: str) -> list[str]:
    """Node executable ``name`` as the product runs it: its console script (``ros2 run``) where on PATH, else
    ``python -m dynid.nodes <name>`` (what ``dynid bringup`` starts); both go through
    ``dynid.nodes.runner.run_executable`` (quiet early Ctrl-C, checked ROS_DOMAIN_ID)."""
    found = shutil.which(name)
    return [found] if found else [sys.executable, '-m', 'dynid.nodes', name]


def start_node(name: str, domain: int, *ros_arguments: str) -> subprocess.Popen:
    """Start node executable ``name`` (:func:`node_executable`) with ``--ros-args <ros_arguments>``."""
    return subprocess.Popen(node_executable(name) + ['--ros-args', *ros_arguments],
                            env=environment(domain), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def parameters(*assignments: str) -> list[str]:
    """``-p name:=value`` arguments."""
    return [item for assignment in assignments for item in ('-p', assignment)]


def stop(processes) -> None:
    for process in processes:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()


@contextmanager
def spinning(executor, context):
    """Spin ``executor`` on a background thread for the duration of the block."""
    running = [True]

    def spin() -> None:
        while running[0] and context.ok():
            executor.spin_once(timeout_sec=0.05)

    thread = threading.Thread(target=spin, daemon=True)
    thread.start()
    try:
        yield
    finally:
        running[0] = False
        thread.join(timeout=2)


def call(client, timeout: float = 60.0, wait: float = 30.0):
    """Call a std_srvs/Trigger service (executor spun elsewhere) and return its response."""
    assert client.wait_for_service(timeout_sec=wait), f'{client.srv_name} not available'
    future = client.call_async(Trigger.Request())
    end = time.monotonic() + timeout
    while not future.done() and time.monotonic() < end:
        time.sleep(0.05)
    assert future.done(), f'{client.srv_name} did not answer'
    return future.result()


def wait_until(condition, timeout: float) -> bool:
    """Poll ``condition`` every 0.1 s until it holds or ``timeout`` [s] has passed; its last value."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if condition():
            return True
        time.sleep(0.1)
    return condition()
