"""The shared intake over real DDS (issue 12): identifier_node records every sample of a 1 kHz driver.

A stand-in driver (``stamp_publisher.py``) publishes the four state topics at 1 kHz for 10 s from
its own process, with a gap of 20 samples it never sends; identifier_node records them in another
process. The recording must hold every published sample on every topic, the node must answer a
service call while the intake runs, and the gap must be counted and reported (service answer and
``/diagnostics``). Every wait ends on a condition, with a deadline generous enough for a loaded
machine: nothing here measures speed (``benchmarks/bench_intake.py`` does).
"""

import subprocess
import sys
from pathlib import Path

import numpy as np
import rclpy
from diagnostic_msgs.msg import DiagnosticArray
from rclpy.executors import SingleThreadedExecutor
from rosbags.highlevel import AnyReader
from std_srvs.srv import Trigger

from dds_helpers import call, environment, parameters, spinning, start_node, stop, wait_until
from dynid.io.cdr import typestore

RATE, DURATION, SKIP = 1000.0, 10.0, (4000, 20)
TOPICS = ('joint_states', 'motor_states', 'joint_currents', 'joint_temperatures')


def test_identifier_records_every_sample_of_a_1khz_driver(tmp_path, ros_domain):
    domain = ros_domain
    identifier = start_node('identifier_node', domain, *parameters(f'output_directory:={tmp_path}',
                                                                    'segment_duration:=2.0', 'data_wait:=60.0'))
    context = rclpy.Context()
    rclpy.init(context=context, domain_id=domain)
    node = rclpy.create_node('intake_probe', context=context)
    statuses = {}
    node.create_subscription(DiagnosticArray, '/diagnostics',
                             lambda m: statuses.update({s.name: s for s in m.status}), 10)
    clients = {name: node.create_client(Trigger, f'/identifier_node/{name}')
               for name in ('start_recording', 'stop_recording', 'identify')}
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(node)
    publisher = None
    try:
        with spinning(executor, context):
            assert clients['start_recording'].wait_for_service(timeout_sec=60.0)
            starting = clients['start_recording'].call_async(Trigger.Request())  # answers once data arrive
            publisher = subprocess.Popen(
                [sys.executable, str(Path(__file__).with_name('stamp_publisher.py')), '--rate', str(RATE),
                 '--duration', str(DURATION), '--skip', f'{SKIP[0]}:{SKIP[1]}'],
                env=environment(domain), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            assert wait_until(starting.done, 120.0) and starting.result().success, starting.result()
            intake = '/identifier_node: intake'
            assert wait_until(lambda: int(_values(statuses.get(intake)).get('joint_states.received', 0)) > 0,
                              120.0), 'no samples reached the intake'
            during = call(clients['identify'], timeout=30.0)  # the node serves while the intake runs
            assert not during.success and 'stop the recording first' in during.message
            output, _ = publisher.communicate(timeout=300)
            assert publisher.returncode == 0, output
            published = int(output.split('published ')[1].split()[0])
            start_ns = int(output.split(' from ')[1].split()[0])
            stopped = call(clients['stop_recording'])
            assert stopped.success, stopped.message
            assert stopped.message.endswith(f'; {SKIP[1]} samples lost'), stopped.message
            assert wait_until(lambda: _values(statuses.get(intake)).get('joint_states.lost') == str(SKIP[1]), 30.0), \
                _values(statuses.get(intake))
    finally:
        if publisher is not None and publisher.poll() is None:
            publisher.kill()
        node.destroy_node()
        rclpy.shutdown(context=context)
        stop([identifier])

    total = int(RATE * DURATION)
    index = np.arange(total)
    index = index[(index < SKIP[0]) | (index >= SKIP[0] + SKIP[1])]
    expected = start_ns + np.round(index * 1e9 / RATE).astype(np.int64)
    assert published == expected.size
    segments = sorted(next(tmp_path.glob('recording_*')).glob('segment_*'))
    stamps = {topic: [] for topic in TOPICS}
    with AnyReader(segments, default_typestore=typestore()) as reader:
        for connection, timestamp, _ in reader.messages():
            stamps[connection.topic.rsplit('/', 1)[-1]].append(timestamp)
    for topic in TOPICS:
        assert np.array_equal(np.sort(stamps[topic]), expected), f'{topic}: {len(stamps[topic])} of {expected.size}'


def _values(status) -> dict:
    return {} if status is None else {v.key: v.value for v in status.values}
