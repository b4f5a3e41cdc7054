"""contact_node over real DDS: τ̂_ext at the state rate from sim_node's topics, a contact put on the twin through
sim_node's ~/apply_contact detected and recorded as a collision event; a bad result leaves it up saying why."""

import json

import rclpy
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
from rclpy.executors import SingleThreadedExecutor
from rclpy.qos import QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState
from std_msgs.msg import String
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from builders import own_model_result
from dds_helpers import parameters, spinning, start_node, stop, wait_until
from dynid.health.record import HealthRecord


def _probe(domain):
    context = rclpy.Context()
    rclpy.init(context=context, domain_id=domain)
    node = rclpy.create_node('contact_probe', context=context)
    seen = {'torque': [], 'std': [], 'contacts': [], 'statuses': {}, 'state': None}
    node.create_subscription(JointState, '/contact_node/external_torque', seen['torque'].append, 100)
    node.create_subscription(JointState, '/contact_node/external_torque_std', seen['std'].append, 100)
    node.create_subscription(JointState, '/joint_states', lambda m: seen.update(state=m), 100)
    node.create_subscription(String, '/contact_node/contacts',
                             lambda m: seen['contacts'].append(json.loads(m.data)), 10)
    node.create_subscription(DiagnosticArray, '/diagnostics',
                             lambda m: seen['statuses'].update({s.name: s for s in m.status}), 10)
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(node)
    return context, node, executor, seen


def test_a_push_on_the_twin_is_a_contact_and_a_collision_event(tmp_path, ur5e, ros_domain):
    result, record = tmp_path / 'result.yaml', tmp_path / 'health.sqlite3'
    own_model_result(ur5e, coulomb=3.0, viscous=4.0).save(result)
    processes = [start_node('sim_node', ros_domain, *parameters('rate:=500.0')),
                 start_node('contact_node', ros_domain, *parameters(f'result_file:={result}', f'health_db:={record}',
                                                                  'expected_rate:=500.0'))]
    context, node, executor, seen = _probe(ros_domain)
    push = node.create_publisher(String, '/sim_node/apply_contact',
                                 QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE))
    try:
        with spinning(executor, context):
            assert wait_until(lambda: len(seen['torque']) >= 200, 120.0), 'no external torque'
            assert list(seen['torque'][-1].name) == list(ur5e.joint_names) and len(seen['torque'][-1].effort) == 6
            # σ beside the estimate, on its stamps (a busy probe may miss some of either topic's messages): positive
            # and finite on every joint
            assert wait_until(lambda: len(seen['std']) >= 200, 30.0), 'no σ of the external torque'

            def stamps(messages):
                return {(m.header.stamp.sec, m.header.stamp.nanosec) for m in list(messages)}

            assert stamps(seen['std']) & stamps(seen['torque'])
            assert list(seen['std'][-1].name) == list(ur5e.joint_names)
            assert all(0.0 < v < 1e3 for m in list(seen['std']) for v in m.effort)
            # 120 N down on the forearm for 0.6 s: tens of N·m on the shoulder and elbow, far beyond static friction;
            # published once sim_node's subscription is matched (a message sent before discovery is lost)
            assert wait_until(lambda: push.get_subscription_count() > 0, 60.0), 'sim_node does not take contacts'
            push.publish(String(data='{link: elbow_joint_link, point: [0.2, 0, 0], force: [0, 0, -120], '
                                     'start_s: 0.2, duration_s: 0.6}'))
            assert wait_until(lambda: any(c['phase'] == 'end' for c in seen['contacts']), 60.0), seen['contacts']
            ended = next(c for c in seen['contacts'] if c['phase'] == 'end')
            assert 'elbow_joint' in ended['joints'] and abs(ended['peak_nm']['elbow_joint']) > 5.0
            name = '/contact_node: contacts'
            assert wait_until(lambda: name in seen['statuses'] and 'contacts so far' in seen['statuses'][name].message,
                              30.0)
            # the controller's reference: a trajectory holding where the arm is is taken, one naming other joints is
            # refused and said, the node goes on
            trajectories = node.create_publisher(JointTrajectory, '/joint_trajectory_controller/joint_trajectory',
                                                 QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE))
            assert wait_until(lambda: trajectories.get_subscription_count() > 0, 60.0), 'no reference subscription'
            held = JointTrajectoryPoint(positions=list(seen['state'].position))
            held.time_from_start.nanosec = 500_000_000
            trajectories.publish(JointTrajectory(joint_names=list(seen['state'].name), points=[held]))
            trajectories.publish(JointTrajectory(joint_names=['a', 'b', 'c', 'd', 'e', 'f'], points=[held]))

            def values():
                return {v.key: v.value for v in seen['statuses'][name].values}

            assert wait_until(lambda: values().get('reference_trajectories') == '1'
                              and values().get('references_refused') == '1', 30.0), values()
            assert 'reference refused' in seen['statuses'][name].message and processes[1].poll() is None
            levels = json.loads(values()['alarm_level_nm'])
            assert list(levels) == list(ur5e.joint_names) and all(v > 0 for v in levels.values())
            count = len(seen['torque'])
            assert wait_until(lambda: len(seen['torque']) > count + 100, 30.0), 'no external torque after the reference'
        with HealthRecord(record, readonly=True) as health:
            events = health.history('ur5e').events
        assert [e.kind for e in events] and {e.kind for e in events} == {'collision'}
        note = json.loads(events[0].note)
        assert 'peak_nm' in note and note['raised_by'] and set(note['raised_by']) <= {'torque', 'position', 'speed'}
    finally:
        node.destroy_node()
        rclpy.shutdown(context=context)
        stop(processes)


def test_a_result_without_a_torque_source_leaves_the_node_up_saying_why(tmp_path, ur5e, ros_domain):
    result = own_model_result(ur5e)
    del result.model['torque_source']
    path = tmp_path / 'result.yaml'
    result.save(path)
    processes = [start_node('contact_node', ros_domain, *parameters(f'result_file:={path}'))]
    context, node, executor, seen = _probe(ros_domain)
    try:
        with spinning(executor, context):
            name = '/contact_node: contacts'
            assert wait_until(lambda: name in seen['statuses'], 60.0), sorted(seen['statuses'])
            assert seen['statuses'][name].level == DiagnosticStatus.ERROR
            assert 'torque_source' in seen['statuses'][name].message
            assert processes[0].poll() is None
    finally:
        node.destroy_node()
        rclpy.shutdown(context=context)
        stop(processes)
