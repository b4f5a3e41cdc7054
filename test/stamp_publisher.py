"""A stand-in robot driver for intake tests: the four state topics at a fixed rate, from its own process.

    python stamp_publisher.py --rate 1000 --duration 10 [--skip FIRST:COUNT] [--start-ns NS]
                              [--stiffness-drop-at SECONDS] [--without TOPIC]

Waits until every topic has a subscriber, then publishes sample k with the stamp start + k/rate on
all four topics, one sample after the other as a driver's control cycle does (a thread that sleeps
between samples and catches up when late, so every sample is published even on a loaded machine),
leaves out samples FIRST .. FIRST+COUNT−1 entirely (a gap in the stamps), and prints one line
``published N samples`` at the end. Reliable publishers keep every sample of the run until it is
acknowledged: a reliable subscriber gets them all whatever the load (a best-effort one may not). The
values count the samples; with ``--stiffness-drop-at`` they are those of a UR5e whose joints move and
deflect smoothly (:func:`flexible_joints`) and whose shoulder_pan_joint loses half its stiffness at
that time. ``--without motor_states`` leaves that topic out (an arm without motor encoders).
"""

import argparse
import functools
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


K1 = 4.0e4  # N·m/rad, the flexibility torque α1·φ of every joint (no cubic term)


@functools.cache
def _ur5e_drives():
    from dynid.model import load_robot

    return load_robot('ur5e').drives


def flexible_joints(t: np.ndarray, drop_at: float) -> dict[str, dict[str, np.ndarray]]:
    """Values per topic and field at times t [s]: q, θ = q + φ, and the current that gives the
    flexibility torque K1·φ (halved on the first joint from ``drop_at`` s) with the UR5e drives."""
    drives = _ur5e_drives()
    shift = np.arange(len(NAMES))[None, :]
    w_q, w1, w2 = 2 * np.pi * 0.2, 2 * np.pi * 0.5, 2 * np.pi * 1.3
    t = t[:, None]
    q = 0.5 * np.sin(w_q * t + shift)
    phi = 1.0e-4 * (0.6 * np.sin(w1 * t + shift) + 0.4 * np.sin(w2 * t + 2 * shift))
    ddtheta = -0.5 * w_q**2 * np.sin(w_q * t + shift) - 1.0e-4 * (0.6 * w1**2 * np.sin(w1 * t + shift)
                                                                 + 0.4 * w2**2 * np.sin(w2 * t + 2 * shift))
    stiffness = np.where((np.arange(len(NAMES)) == 0) & (t >= drop_at), K1 / 2, K1)
    current = (stiffness * phi + drives.rotor_inertia * ddtheta) / drives.drive_gain
    zero = np.zeros_like(q)
    return {'joint_states': {'position': q, 'velocity': zero, 'effort': zero},
            'motor_states': {'position': q + phi, 'velocity': zero},
            'joint_currents': {'effort': current}, 'joint_temperatures': {'effort': zero + 30.0}}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument('--rate', type=float, default=1000.0)
    parser.add_argument('--duration', type=float, default=10.0)
    parser.add_argument('--skip', default='0:0')
    parser.add_argument('--start-ns', type=int, default=0)
    parser.add_argument('--stiffness-drop-at', type=float, default=None)
    parser.add_argument('--without', action='append', default=[], choices=sorted(FIELDS))
    args = parser.parse_args()
    topics = [topic for topic in FIELDS if topic not in args.without]
    skip_first, skip_count = (int(v) for v in args.skip.split(':'))
    rclpy.init()
    node = rclpy.create_node('stamp_publisher')
    total = int(round(args.rate * args.duration))
    qos = QoSProfile(depth=max(total, 100), reliability=ReliabilityPolicy.RELIABLE)
    publishers = {topic: node.create_publisher(JointState, topic, qos) for topic in topics}
    encoders = {topic: JointStateEncoder(NAMES, fields) for topic, fields in FIELDS.items()}
    end = time.monotonic() + 120.0
    while any(p.get_subscription_count() == 0 for p in publishers.values()):
        if time.monotonic() > end:
            sys.exit('no subscriber came')
        time.sleep(0.05)
    time.sleep(0.5)  # let the other side finish matching every topic
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
            if args.stiffness_drop_at is None:
                values = np.tile(index[:, None] * 1e-3, (1, len(NAMES)))
                values = {topic: {f: values for f in fields} for topic, fields in FIELDS.items()}
            else:
                values = flexible_joints(index / args.rate, args.stiffness_drop_at)
            encoded = [(publishers[topic], encoders[topic].encode(stamps, **values[topic])) for topic in topics]
            for i in range(index.size):  # sample by sample: a burst after a stall comes joined, not topic by topic
                for publisher, messages in encoded:
                    publisher.publish(messages[i])
            published += index.size
        k = due
    print(f'published {published} samples from {start_ns}', flush=True)
    time.sleep(1.0)
    node.destroy_node()
    rclpy.shutdown()


if __name__ == '__main__':
    main()
