"""The shared intake at 1 kHz: samples lost and CPU of the consuming node, beside per-message callbacks.

Run: ``make bench`` or ``.venv/bin/python -m benchmarks.bench_intake [--seconds 60]``.

Setting (issue 12): sim_node publishes the four state topics of the UR5e twin at 1 kHz in one
process; the consuming node runs in another and records for ``--seconds`` seconds:

1. identifier_node (the shared intake: its own thread takes the waiting messages in batches every
   20 ms), quiet machine;
2. the same while a CPU-bound process occupies one core;
3. estimator_node (the same intake, joined samples into the online stiffness estimator), quiet
   and with one core busy;
4. a recorder with one executor callback per message (what identifier_node did before the intake:
   canonicalize and write each message in its own callback), quiet machine, for comparison.

Lost = samples published but not recorded, summed over the four topics: the twin stamps sample k
with start + k/rate and never skips (``dynid.sim.realtime``), so a recording must hold every stamp
between its first and last one. estimator_node records nothing: its intake counts the samples
received and those missing from the stamp sequence per topic, and its joiner the samples it could
not join (read from its /diagnostics before and after the window). CPU fraction = CPU seconds of
the consuming process (all its threads, from /proc) per second of data. The last line is JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from dynid.ros.runner import interrupt_processes

TOPICS = ('joint_states', 'motor_states', 'joint_currents', 'joint_temperatures')
RATE = 1000.0
TARGET_CPU = 0.25


def _environment(domain: int) -> dict:
    env = dict(os.environ, ROS_DOMAIN_ID=str(domain), ROS_AUTOMATIC_DISCOVERY_RANGE='LOCALHOST', PYTHONUNBUFFERED='1')
    env.setdefault('AMENT_PREFIX_PATH', sys.prefix)
    return env


def _node(module: str, domain: int, *assignments: str) -> subprocess.Popen:
    command = [sys.executable, '-m', 'dynid.nodes', module, '--ros-args', '--log-level', 'warn']  # as bringup
    for assignment in assignments:
        command += ['-p', assignment]
    return subprocess.Popen(command, env=_environment(domain), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def _cpu_seconds(pid: int) -> float:
    fields = Path(f'/proc/{pid}/stat').read_text().rsplit(')', 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf('SC_CLK_TCK')  # utime + stime


@contextmanager
def _busy_core(busy: bool):
    process = subprocess.Popen([sys.executable, '-c', 'while True: pass']) if busy else None
    try:
        yield
    finally:
        if process is not None:
            process.kill()
            process.wait()


def _recorded(folder: Path) -> dict[str, np.ndarray]:
    from rosbags.highlevel import AnyReader

    from dynid.io.cdr import typestore

    segments = sorted(p for p in folder.glob('segment_*') if (p / 'metadata.yaml').exists())
    stamps = {topic: [] for topic in TOPICS}
    with AnyReader(segments, default_typestore=typestore()) as reader:
        for connection, timestamp, _ in reader.messages():
            stamps[connection.topic.rsplit('/', 1)[-1]].append(timestamp)
    return {topic: np.unique(np.array(values, dtype=np.int64)) for topic, values in stamps.items()}


def _losses(stamps: dict[str, np.ndarray]) -> tuple[int, dict[str, int], float]:
    """(lost over all topics, received per topic, seconds of data) between the common first and last stamp."""
    first = max(s[0] for s in stamps.values())
    last = min(s[-1] for s in stamps.values())
    period = 1e9 / RATE
    expected = int(round((last - first) / period)) + 1
    inside = {topic: int(np.count_nonzero((s >= first) & (s <= last))) for topic, s in stamps.items()}
    return sum(expected - n for n in inside.values()), inside, (last - first) / 1e9


def _service(node, name: str):
    from std_srvs.srv import Trigger

    client = node.create_client(Trigger, name)
    if not client.wait_for_service(timeout_sec=120.0):
        sys.exit(f'{name} did not come up')
    future = client.call_async(Trigger.Request())
    end = time.monotonic() + 120.0
    while not future.done() and time.monotonic() < end:
        time.sleep(0.05)
    if not future.done() or not future.result().success:
        sys.exit(f'{name} failed: {future.result() if future.done() else "no answer"}')
    return future.result().message


def run_intake(seconds: float, busy: bool, domain: int) -> dict:
    """identifier_node recording from sim_node at 1 kHz for ``seconds``."""
    import rclpy
    from rclpy.executors import SingleThreadedExecutor

    with tempfile.TemporaryDirectory() as folder, _busy_core(busy):
        sim = _node('sim_node', domain, f'rate:={RATE}')
        identifier = _node('identifier_node', domain, f'output_directory:={folder}', 'report:=false')
        context = rclpy.Context()
        rclpy.init(context=context, domain_id=domain)
        node = rclpy.create_node('bench_intake', context=context)
        executor = SingleThreadedExecutor(context=context)
        executor.add_node(node)
        spinning = [True]

        def spin() -> None:
            while spinning[0] and context.ok():
                executor.spin_once(timeout_sec=0.05)

        thread = threading.Thread(target=spin, daemon=True)
        thread.start()
        try:
            time.sleep(3.0)  # the twin settles; the identifier's imports are over
            _service(node, '/identifier_node/start_recording')
            cpu_start = _cpu_seconds(identifier.pid)
            time.sleep(seconds)
            cpu = _cpu_seconds(identifier.pid) - cpu_start
            _service(node, '/identifier_node/stop_recording')
        finally:
            spinning[0] = False
            thread.join(timeout=5)
            node.destroy_node()
            rclpy.shutdown(context=context)
            interrupt_processes([identifier, sim], timeout_s=20.0)
        lost, received, data_s = _losses(_recorded(next(Path(folder).glob('recording_*'))))
    return {'lost': lost, 'received': received, 'data_s': data_s, 'cpu_fraction': cpu / data_s}


def run_estimator(seconds: float, busy: bool, domain: int, *parameters: str, name: str = 'estimator_node') -> dict:
    """estimator_node (or another node of the shared intake, ``name``: contact_node) taking sim_node's four topics at
    1 kHz for ``seconds``, counted by its own intake (``parameters``: more ``name:=value`` for it, e.g. a
    result_file)."""
    import rclpy
    from diagnostic_msgs.msg import DiagnosticArray
    from rclpy.executors import SingleThreadedExecutor

    with _busy_core(busy):
        sim = _node('sim_node', domain, f'rate:={RATE}')
        estimator = _node(name, domain, f'expected_rate:={RATE}', *parameters)
        context = rclpy.Context()
        rclpy.init(context=context, domain_id=domain)
        node = rclpy.create_node('bench_estimator', context=context)
        latest: dict[str, str] = {}

        def on_diagnostics(message) -> None:
            for status in message.status:
                if status.name == f'/{name}: intake':
                    latest.clear()
                    latest.update({v.key: v.value for v in status.values})

        node.create_subscription(DiagnosticArray, '/diagnostics', on_diagnostics, 10)
        executor = SingleThreadedExecutor(context=context)
        executor.add_node(node)

        def snapshot() -> dict[str, int]:
            received = int(latest.get('joint_states.received', 0))
            while int(latest.get('joint_states.received', 0)) == received:  # the next report
                executor.spin_once(timeout_sec=0.1)
            return {k: int(float(v)) for k, v in latest.items()}

        try:
            end = time.monotonic() + 120.0
            while int(latest.get('joint_states.received', 0)) < 3 * RATE and time.monotonic() < end:
                executor.spin_once(timeout_sec=0.1)
            before, cpu_start = snapshot(), _cpu_seconds(estimator.pid)
            end = time.monotonic() + seconds
            while time.monotonic() < end:
                executor.spin_once(timeout_sec=0.1)
            after, cpu = snapshot(), _cpu_seconds(estimator.pid) - cpu_start
        finally:
            node.destroy_node()
            rclpy.shutdown(context=context)
            interrupt_processes([estimator, sim], timeout_s=20.0)
    received = {t: after[f'{t}.received'] - before[f'{t}.received'] for t in TOPICS}
    lost = sum(after[f'{t}.lost'] - before[f'{t}.lost'] for t in TOPICS) + after['unmatched'] - before['unmatched']
    data_s = received['joint_states'] / RATE
    return {'lost': lost, 'received': received, 'data_s': data_s, 'cpu_fraction': cpu / data_s}


def per_message_recorder(folder: str) -> None:
    """The comparison consumer (run in its own process): one executor callback per message."""
    import rclpy
    from rclpy.qos import HistoryPolicy, QoSProfile, ReliabilityPolicy
    from sensor_msgs.msg import JointState

    from dynid.io.cdr import JOINT_STATE, normalize_joint_state_cdr
    from dynid.io.recorder import SegmentedRecorder

    rclpy.init()
    node = rclpy.create_node('per_message_recorder')
    recorder = SegmentedRecorder(Path(folder) / 'recording_callbacks', 5.0)
    qos = QoSProfile(depth=2000, reliability=ReliabilityPolicy.BEST_EFFORT, history=HistoryPolicy.KEEP_LAST)

    def record(topic: str, raw: bytes) -> None:
        stamp, data = normalize_joint_state_cdr(raw)
        recorder.write(f'/{topic}', JOINT_STATE, stamp, data)

    for topic in TOPICS:
        node.create_subscription(JointState, topic, lambda m, t=topic: record(t, m), qos, raw=True)
    try:
        rclpy.spin(node)
    except KeyboardInterrupt:
        pass
    finally:
        recorder.close()


def run_callbacks(seconds: float, domain: int) -> dict:
    with tempfile.TemporaryDirectory() as folder:
        sim = _node('sim_node', domain, f'rate:={RATE}')
        recorder = subprocess.Popen([sys.executable, '-m', 'benchmarks.bench_intake', '--per-message-recorder', folder],
                                    cwd=Path(__file__).resolve().parents[1], env=_environment(domain),
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            time.sleep(8.0)  # imports, discovery, first messages
            cpu_start = _cpu_seconds(recorder.pid)
            time.sleep(seconds)
            cpu = _cpu_seconds(recorder.pid) - cpu_start
        finally:
            interrupt_processes([recorder, sim], timeout_s=20.0)
        lost, received, data_s = _losses(_recorded(Path(folder) / 'recording_callbacks'))
        # The CPU window is ``seconds`` of the recording's data (the twin runs on time when quiet).
    return {'lost': lost, 'received': received, 'data_s': data_s, 'cpu_fraction': cpu / seconds}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--seconds', type=float, default=60.0, help='seconds recorded per pass (default 60)')
    parser.add_argument('--per-message-recorder', metavar='FOLDER', help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.per_message_recorder:
        per_message_recorder(args.per_message_recorder)
        return
    domain = 170 + os.getpid() % 20
    quiet = run_intake(args.seconds, False, domain)
    busy = run_intake(args.seconds, True, domain)
    estimator = run_estimator(args.seconds, False, domain)
    estimator_busy = run_estimator(args.seconds, True, domain)
    callbacks = run_callbacks(args.seconds, domain)
    print(f'dynid intake benchmark: sim_node (UR5e twin) at {RATE:g} Hz × 4 topics in one process, the consumer '
          f'in another, {args.seconds:g} s per pass')
    print(f'{"consumer":<58}{"received/published":>22}{"lost":>7}{"CPU of one core":>17}')
    for label, row in (('identifier_node, shared intake, quiet machine', quiet),
                       ('identifier_node, shared intake, one core busy', busy),
                       ('estimator_node, shared intake, quiet machine', estimator),
                       ('estimator_node, shared intake, one core busy', estimator_busy),
                       ('per-message callbacks (previous identifier_node), quiet', callbacks)):
        received = sum(row['received'].values())
        print(f'{label:<58}{received:>12d}/{received + row["lost"]:<9d}{row["lost"]:>7d}'
              f'{100 * row["cpu_fraction"]:>16.1f}%')
    print(f'reference: 0 lost at 1 kHz × 4 topics, quiet and busy; consumer ≤ {100 * TARGET_CPU:.0f} % of one core '
          f'(issue 12)')
    print(json.dumps({'benchmark': 'intake', 'rate_hz': int(RATE), 'seconds': args.seconds,
                      'identifier_lost': quiet['lost'], 'estimator_lost': estimator['lost'],
                      'identifier_lost_busy': busy['lost'], 'estimator_lost_busy': estimator_busy['lost'],
                      'cpu_fraction': quiet['cpu_fraction'], 'cpu_fraction_busy': busy['cpu_fraction'],
                      'estimator_cpu_fraction': estimator['cpu_fraction'],
                      'estimator_cpu_fraction_busy': estimator_busy['cpu_fraction'],
                      'cpu_fraction_per_message_callbacks': callbacks['cpu_fraction'],
                      'per_message_callbacks_lost': callbacks['lost']}))


if __name__ == '__main__':
    main()
