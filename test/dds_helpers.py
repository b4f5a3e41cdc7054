"""Helpers of the tests that talk to dynid's nodes over real DDS (isolated domain, localhost only).

Domains. Several test runs share one machine (developers' worktrees, CI jobs on one runner), and nodes of
two runs on one ROS domain see each other: the same namespaces, services and ``/diagnostics``. A run
therefore takes its domain ids with :func:`claim_domain`, which holds an exclusive ``flock`` on a lock
file per id (``<tmp>/dynid-ros-domain-<id>.lock``) and skips ids another process holds. The kernel drops
the lock when the process ends, however it ends, so nothing goes stale; the file itself stays (empty).
Tests take one with the ``ros_domain`` fixture (conftest.py: claimed for the test, released after it);
launch test modules, whose launch descriptions read a module constant, claim theirs at import for the
whole run. Claims go round the ids in :data:`DOMAINS`, so the next test gets another id than the last
(endpoints of a test's stopped processes are still announced for a while). Runs that do not take their
domain here (an older checkout, a user's ``dynid demo``) are not seen.
"""

import fcntl
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from contextlib import contextmanager
from pathlib import Path

from std_srvs.srv import Trigger

#: the ROS domain ids test runs take (above the small ids users run robots on; at most 232, DDS's port limit)
DOMAINS = range(100, 230)
_held: dict[int, int] = {}  # domain id -> file descriptor holding its lock
_next = [os.getpid() % len(DOMAINS)]  # where the next claim starts looking: runs start apart


def claim_domain() -> int:
    """A ROS domain id that no other process on this machine holds through this function; held until
    :func:`release_domain` or the end of the process (module docstring). RuntimeError if every id of
    :data:`DOMAINS` is held."""
    for k in range(len(DOMAINS)):
        index = (_next[0] + k) % len(DOMAINS)
        domain = DOMAINS[index]
        if domain in _held:
            continue
        path = Path(tempfile.gettempdir()) / f'dynid-ros-domain-{domain}.lock'
        try:  # read-only: enough for flock, and opens another user's file (O_CREAT may not, in sticky /tmp)
            descriptor = os.open(path, os.O_RDONLY | (0 if path.exists() else os.O_CREAT), 0o644)
        except OSError:
            continue
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:  # another run holds it
            os.close(descriptor)
            continue
        _held[domain] = descriptor
        _next[0] = index + 1
        return domain
    raise RuntimeError(f'every ROS domain id {DOMAINS.start}–{DOMAINS.stop - 1} is held by other test runs')


def release_domain(domain: int) -> None:
    """Give ``domain`` back (no-op if not held here)."""
    descriptor = _held.pop(domain, None)
    if descriptor is not None:
        os.close(descriptor)


def environment(domain: int) -> dict:
    """The environment of a node process on ``domain``, localhost-only discovery, unbuffered output."""
    env = dict(os.environ, ROS_DOMAIN_ID=str(domain), ROS_AUTOMATIC_DISCOVERY_RANGE='LOCALHOST', PYTHONUNBUFFERED='1')
    env.setdefault('AMENT_PREFIX_PATH', sys.prefix)
    return env


def executable(name: str, module: str) -> list[str]:
    """The installed console script ``name``, or ``python -m module`` where it is not on PATH."""
    found = shutil.which(name)
    return [found] if found else [sys.executable, '-m', module]


#: The ``dynid`` command as tests run it: the installed console script, else ``python -m dynid.cli``.
DYNID: list[str] = executable('dynid', 'dynid.cli')


def node_executable(name: str) -> list[str]:
    """Node executable ``name`` as the product runs it: its console script (``ros2 run``) where on PATH, else
    ``python -m dynid.nodes <name>`` (what ``dynid bringup`` starts); both go through
    ``dynid.ros.runner.run_executable`` (quiet early Ctrl-C, checked ROS_DOMAIN_ID)."""
    found = shutil.which(name)
    return [found] if found else [sys.executable, '-m', 'dynid.nodes', name]


def start_node(name: str, domain: int, *ros_arguments: str) -> subprocess.Popen:
    """Start node executable ``name`` (:func:`node_executable`) with ``--ros-args <ros_arguments>``."""
    return subprocess.Popen(node_executable(name) + ['--ros-args', *ros_arguments],
                            env=environment(domain), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def parameters(*assignments: str) -> list[str]:
    """``-p name:=value`` arguments."""
    return [item for assignment in assignments for item in ('-p', assignment)]


def excitation_start(robot: str = 'ur5e') -> str:
    """``initial_position:=[...]`` for sim_node: the first point of ``robot``'s built-in excitation, so that the
    twin starts where the excitation does and excitation_node's approach takes no time (3.6 s at 0.5 rad/s from
    home for the UR5e): for tests that need the excitation's data, not its approach."""
    import numpy as np

    from dynid.excite.trajectory import builtin_excitation_path, load_trajectory

    start = load_trajectory(builtin_excitation_path(robot)).evaluate(np.array([0.0]))[0][0]
    return 'initial_position:=[' + ','.join(f'{value:.17g}' for value in start) + ']'


def stop(processes) -> None:
    """SIGTERM to every process at once, then wait for each (10 s at most, then SIGKILL): they end together."""
    for process in processes:
        process.terminate()
    end = time.monotonic() + 10.0
    for process in processes:
        try:
            process.wait(timeout=max(0.1, end - time.monotonic()))
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


#: Deadline [s] for node processes to start: each imports rclpy, pinocchio, scipy and numba (2–3 s of CPU),
#: and on a shared 2-core machine at load 15–18 the five processes of ``dynid bringup --estimator`` took
#: 40–65 s to log that they run.
STARTUP_S = 300.0
#: Deadline [s] for node processes to end after Ctrl-C before they are sent SIGTERM: six nodes stopping at once
#: took 0.8–1.6 s each at load 2 on this 2-core machine, so at load 10–14 they can pass the 10 s a user's
#: ``dynid bringup`` waits (:data:`dynid.ros.runner.INTERRUPT_WAIT_S`); a SIGTERM then ends a node with -2 or -15,
#: a failure of the machine's load, not of the nodes.
STOP_S = 60.0


class ProcessOutput:
    """The output of ``process`` (stdout, text, stderr merged into it), read on a thread as it comes, so
    that a test can wait for a line while the process runs and its pipe never fills."""

    def __init__(self, process: subprocess.Popen) -> None:
        self.process, self.lines = process, []
        self.thread = threading.Thread(target=lambda: self.lines.extend(iter(process.stdout.readline, '')),
                                       daemon=True)
        self.thread.start()

    @property
    def text(self) -> str:
        return ''.join(self.lines)

    def finish(self, timeout: float = 60.0) -> str:
        """Wait for the process to end (at most ``timeout`` [s]) and return everything it wrote."""
        self.process.wait(timeout=timeout)
        self.thread.join(timeout=5)
        return self.text


def wait_until(condition, timeout: float) -> bool:
    """Poll ``condition`` every 0.1 s until it holds or ``timeout`` [s] has passed; its last value."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if condition():
            return True
        time.sleep(0.1)
    return condition()
