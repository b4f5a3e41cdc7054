"""A stand-in robot driver for intake tests: the four state topics at a fixed rate, from its own process.

    python stamp_publisher.py --rate 1000 --duration 10 [--skip FIRST:COUNT] [--start-ns NS]

Waits until every topic has a subscriber, then publishes sample k with the stamp start + k/rate on
all four topics (a thread that sleeps between samples and catches up when late, so every sample is
published even on a loaded machine), leaves out samples FIRST .. FIRST+COUNT−1 entirely (a gap in
the stamps), and prints one line ``published N samples`` at the end.
"""

import argparse
import sys
import time

import numpy as np
import rclpy
from rclpy.qos import QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState

from dynid.io.cdr import JointStateEncoder

NAMES = ['shoulder_pan_joint', 'shoulder_lift_joint', 'elbow_joint', 'wrist_1_joint', 'wrist_2_joint',
         'wrist_3_joint']
FIELDS = {'joint_states': ('position', 'velocity', 'effort'), 'motor_states': ('position', 'velocity'),
          'joint_currents': ('effort',), 'joint_temperatures': ('effort',)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument('--rate', type=float, default=1000.0)
    parser.add_argument('--duration', type=float, default=10.0)
    parser.add_argument('--skip', default='0:0')
    parser.add_argument('--start-ns', type=int, default=0)
    args = parser.parse_args()
    skip_first, skip_count = (int(v) for v in args.skip.split(':'))
    rclpy.init()
    node = rclpy.create_node('stamp_publisher')
    qos = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE)
    publishers = {topic: node.create_publisher(JointState, topic, qos) for topic in FIELDS}
    encoders = {topic: JointStateEncoder(NAMES, fields) for topic, fields in FIELDS.items()}
    end = time.monotonic() + 120.0
    while any(p.get_subscription_count() == 0 for p in publishers.values()):
        if time.monotonic() > end:
            sys.exit('no subscriber came')
        time.sleep(0.05)
    time.sleep(0.5)  # let the other side finish matching every topic
    total = int(round(args.rate * args.duration))
    start_ns = args.start_ns or time.time_ns()
    begin = time.monotonic()
    published = 0
    k = 0
    while k < total:
        due = min(int((time.monotonic() - begin) * args.rate) + 1, total)
        if due <= k:
            time.sleep(0.2 / args.rate)
            continue
        index = np.arange(k, due)
        index = index[(index < skip_first) | (index >= skip_first + skip_count)]
        if index.size:
            stamps = start_ns + np.round(index * 1e9 / args.rate).astype(np.int64)
            values = np.tile(index[:, None] * 1e-3, (1, len(NAMES)))
            for topic, fields in FIELDS.items():
                for data in encoders[topic].encode(stamps, **{f: values for f in fields}):
                    publishers[topic].publish(data)
            published += index.size
        k = due
    print(f'published {published} samples from {start_ns}', flush=True)
    time.sleep(1.0)
    node.destroy_node()
    rclpy.shutdown()


if __name__ == '__main__':
    main()
