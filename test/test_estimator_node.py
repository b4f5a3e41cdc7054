"""estimator_node over real DDS (issue 9): stiffness estimates from sim_node's topics, services, refusals.

sim_node and estimator_node run as their own processes on an isolated domain; a probe node reads
``~/stiffness`` and ``/diagnostics`` and calls the services. Waits end on conditions with deadlines
generous enough for a loaded machine.
"""

import re
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import rclpy
import yaml
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
from rclpy.executors import SingleThreadedExecutor
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from std_msgs.msg import Float64MultiArray, String
from std_srvs.srv import Trigger

from dds_helpers import call, environment, node_executable, parameters, spinning, start_node, stop, wait_until
from dynid.health.record import HealthRecord

JOINTS = ['shoulder_pan_joint', 'shoulder_lift_joint', 'elbow_joint', 'wrist_1_joint', 'wrist_2_joint',
          'wrist_3_joint']


def test_estimates_stiffness_from_the_twin_and_stores_a_baseline(tmp_path, ros_domain):
    domain = ros_domain
    baseline, record = tmp_path / 'baseline.yaml', tmp_path / 'health.sqlite3'
    processes = [start_node('sim_node', domain, *parameters('rate:=500.0')),
                 # The twin rests: learning from rest is allowed here (min_velocity 0) to see the static deflection.
                 start_node('estimator_node', domain, *parameters(f'baseline_file:={baseline}', 'publish_rate:=20.0',
                                                                  'min_velocity:=0.0', f'health_db:={record}',
                                                                  'health_diagnostics_period_s:=1.0'))]
    context = rclpy.Context()
    rclpy.init(context=context, domain_id=domain)
    node = rclpy.create_node('estimator_probe', context=context)
    estimates, statuses = [], {}
    node.create_subscription(Float64MultiArray, '/estimator_node/stiffness', estimates.append, 10)
    node.create_subscription(DiagnosticArray, '/diagnostics', lambda m: statuses.update({s.name: s for s in m.status}),
                             10)
    clients = {name: node.create_client(Trigger, f'/estimator_node/{name}') for name in ('reset', 'set_baseline')}
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(node)
    try:
        with spinning(executor, context):
            assert wait_until(lambda: len(estimates) >= 5, 120.0), 'no stiffness estimates'
            message = estimates[-1]
            assert [d.size for d in message.layout.dim] == [6, 6]
            assert message.layout.dim[0].label == 'joint:' + ','.join(JOINTS)
            assert message.layout.dim[1].label == 'quantity:alpha1,alpha3,k0,relative_to_baseline,fit,relative_std'
            table = np.array(message.data).reshape(6, 6)
            # Joints 2 and 3 hold the arm against gravity: their static deflection is estimated (k0 > 0).
            assert wait_until(lambda: np.all(np.array(estimates[-1].data).reshape(6, 6)[1:3, 2] > 1e3), 60.0), table
            name = '/estimator_node: stiffness shoulder_lift_joint'
            assert wait_until(lambda: name in statuses, 30.0), sorted(statuses)
            assert '/estimator_node: intake' in statuses
            stored = call(clients['set_baseline'])
            if not stored.success:  # a joint may not have left the dead zone yet: nothing estimated there
                assert 'nothing estimated' in stored.message
            else:
                document = yaml.safe_load(baseline.read_text())
                assert set(document['k0']) == set(JOINTS)
            assert wait_until(lambda: '/estimator_node: health record' in statuses, 30.0)  # at its own rate
            reset = call(clients['reset'])
            assert reset.success
        with HealthRecord(record, readonly=True) as health:  # the reset (and a stored baseline) are events
            kinds = [e.kind for e in health.history('ur5e').events]
        assert kinds == ['set_baseline', 'reset'] if stored.success else kinds == ['reset']
    finally:
        node.destroy_node()
        rclpy.shutdown(context=context)
        stop(processes)


def test_refuses_a_missing_result_file_and_a_bad_baseline(tmp_path, ros_domain):
    command = node_executable('estimator_node')
    run = subprocess.run(command + ['--ros-args', '-p', f'result_file:={tmp_path / "missing.yaml"}'],
                         env=environment(ros_domain), capture_output=True, text=True, timeout=60)
    assert run.returncode == 2 and 'missing.yaml' in run.stderr and 'Traceback' not in run.stderr
    bad = tmp_path / 'baseline.yaml'
    bad.write_text('k0: {shoulder_pan_joint: 1.0}\n')
    run = subprocess.run(command + ['--ros-args', '-p', f'baseline_file:={bad}'], env=environment(ros_domain),
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 2 and 'baseline_file' in run.stderr, run.stderr


def test_adapts_friction_with_an_identification_result(tmp_path, ros_domain):
    """A result identified on the twin, received on ``result_topic`` after a malformed one (refused and
    reported): ~/friction carries α̂ per joint (nominal (1, 0), frozen at rest) and /diagnostics a
    friction status per joint, with the projection box of the node's friction_change and bound_sigmas."""
    import dataclasses

    from dynid.excite.trajectory import builtin_excitation_path, load_trajectory
    from dynid.identify.equations.request import ModelSpec, RecordingInput
    from dynid.identify.steps.run import IdentifyOptions, identify
    from dynid.model import load_robot
    from dynid.sim.parameters import PlantParameters
    from dynid.sim.recording import record_to_dataset
    from dynid.sim.twin import DigitalTwin

    robot = load_robot('ur5e')
    trajectory = load_trajectory(builtin_excitation_path('ur5e'))
    twin = DigitalTwin(PlantParameters.defaults(robot), rate_hz=500.0, seed=1,
                       initial_q=trajectory.evaluate(np.array([0.0]))[0][0])
    twin.follow(dataclasses.replace(trajectory, duration_s=12.0))
    dataset = record_to_dataset(twin.run(12.0), None, {})
    result = identify(robot, [RecordingInput(dataset)], ModelSpec(friction='load_squared'),
                      options=IdentifyOptions('wls'))
    document = yaml.safe_dump(result.to_dict(), sort_keys=False, allow_unicode=True)

    domain = ros_domain
    processes = [start_node('sim_node', domain, *parameters('rate:=500.0')),
                 start_node('estimator_node', domain, *parameters('result_topic:=/probe/result', 'publish_rate:=20.0',
                                                                  f'baseline_file:={tmp_path / "b.yaml"}',
                                                                  'friction_change:=2.0', 'bound_sigmas:=0.0'))]
    context = rclpy.Context()
    rclpy.init(context=context, domain_id=domain)
    node = rclpy.create_node('friction_probe', context=context)
    estimates, statuses = [], {}
    node.create_subscription(Float64MultiArray, '/estimator_node/friction', estimates.append, 10)
    node.create_subscription(DiagnosticArray, '/diagnostics', lambda m: statuses.update({s.name: s for s in m.status}),
                             10)
    latched = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL)
    results = node.create_publisher(String, '/probe/result', latched)
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(node)
    try:
        with spinning(executor, context):
            results.publish(String(data='robot: [not, a, result'))  # refused, counted, the node goes on
            status = '/estimator_node: result'
            assert wait_until(lambda: status in statuses and statuses[status].level == DiagnosticStatus.WARN, 120.0), \
                statuses.get(status)
            assert 'no identification result' in statuses[status].message
            results.publish(String(data=document))
            assert wait_until(lambda: len(estimates) >= 3, 120.0), 'no friction estimates'
            assert wait_until(lambda: 'result from /probe/result' in statuses[status].message, 30.0), \
                statuses[status].message
            assert wait_until(lambda: '/estimator_node: friction wrist_3_joint' in statuses, 30.0), sorted(statuses)
            friction = _values(statuses['/estimator_node: friction wrist_3_joint'])
            # the box of friction_change 2, bound_sigmas 0: α1 within 1 ± 2, not capped at the nominal start
            assert friction['alpha1_bounds'] == '0 3' and friction['alpha1_capped'] == 'False', friction
    finally:
        node.destroy_node()
        rclpy.shutdown(context=context)
        stop(processes)
    message = estimates[-1]
    assert [d.size for d in message.layout.dim] == [6, 3]
    assert message.layout.dim[1].label == 'quantity:alpha1,alpha2,active'
    table = np.array(message.data).reshape(6, 3)
    np.testing.assert_allclose(table[:, :2], [[1.0, 0.0]] * 6)  # at rest nothing adapts (excitation switch)
    assert np.all(table[:, 2] == 0.0)


def _values(status) -> dict:
    return {} if status is None else {item.key: item.value for item in status.values}


def _reported_change(status) -> float:
    """The k0 change [%] a stiffness status reports ('stiffness changed 2.1 s ago: k0 -50 % since ...'), NaN if none."""
    found = re.search(r'changed .* k0 ([+-]\d+) %', status.message) if status is not None else None
    return float(found.group(1)) if found else float('nan')


def test_reports_a_stiffness_drop_and_survives_malformed_messages(tmp_path, ros_domain):
    """A stand-in driver (``stamp_publisher.py``) publishes a UR5e whose shoulder_pan_joint loses half
    its stiffness at 8 s; the probe adds garbage, a message lacking joints and a stale one. The node
    keeps running, counts the bad messages, warns about the drop and still answers ~/reset.

    The node subscribes reliably with room for the whole run: on a busy machine the stand-in, starved
    for seconds, catches up in a burst that best-effort delivery and a 1000-message queue lose most of
    (measured at load 15: 3258 of 7000 samples lost, gaps up to 5.9 s, the drop unseen). What a node
    does with lost samples is tested without DDS (test_online_estimation)."""
    from sensor_msgs.msg import JointState

    from dynid.io.cdr import joint_state_cdr

    domain = ros_domain
    estimator = start_node('estimator_node', domain, *parameters(f'baseline_file:={tmp_path / "b.yaml"}',
                                                                 'intake_reliability:=reliable', 'intake_depth:=20000'))
    context = rclpy.Context()
    rclpy.init(context=context, domain_id=domain)
    node = rclpy.create_node('drop_probe', context=context)
    statuses = {}
    node.create_subscription(DiagnosticArray, '/diagnostics', lambda m: statuses.update({s.name: s for s in m.status}),
                             10)
    bad = node.create_publisher(JointState, '/joint_states', 10)
    reset = node.create_client(Trigger, '/estimator_node/reset')
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(node)
    publisher = None
    try:
        with spinning(executor, context):
            publisher = subprocess.Popen(
                [sys.executable, str(Path(__file__).with_name('stamp_publisher.py')), '--rate', '500',
                 '--duration', '14', '--stiffness-drop-at', '8'],
                env=environment(domain), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            intake, pan = '/estimator_node: intake', '/estimator_node: stiffness shoulder_pan_joint'
            assert wait_until(lambda: int(_values(statuses.get(intake)).get('joint_states.received', 0)) > 500,
                              120.0), 'no samples reached the intake'
            bad.publish(b'\x00\x01\x00\x00 not a JointState at all')
            bad.publish(joint_state_cdr(time.time_ns(), ['elbow_joint'], [0.1], [], []))
            bad.publish(joint_state_cdr(10**9, JOINTS, np.zeros(6), [], []))  # far older than the rest
            output, _ = publisher.communicate(timeout=300)
            assert publisher.returncode == 0, output
            # The estimate keeps converging after the change is declared, and on a busy machine the intake drops
            # late samples, so the 6 s after the drop give -47 to -50 %: wait for a report of a halving within
            # 5 points, then check it.
            assert wait_until(lambda: -55 <= _reported_change(statuses.get(pan)) <= -45, 30.0), \
                getattr(statuses.get(pan), 'message', 'no stiffness report')
            assert statuses[pan].level == DiagnosticStatus.WARN, statuses[pan].message
            assert _values(statuses[pan])['changes'] == '1'
            assert int(_values(statuses[intake])['joint_states.malformed']) == 2, _values(statuses[intake])
            assert int(_values(statuses[intake])['joint_states.late']) >= 1, _values(statuses[intake])
            other = statuses['/estimator_node: stiffness elbow_joint']
            assert 'changed' not in other.message and _values(other)['changes'] == '0'
            assert call(reset).success
    finally:
        if publisher is not None and publisher.poll() is None:
            publisher.kill()
        node.destroy_node()
        rclpy.shutdown(context=context)
        stop([estimator])


def test_without_motor_states_the_friction_alone_is_adapted_on_rigid_joints(tmp_path, ros_domain):
    """A stand-in driver of an arm without motor encoders (no motor_states): once joint_states have come for
    2 s without them, the node adapts the friction on rigid joints (θ = q) and says so on /diagnostics
    (mode, the stiffness left out with the reason); ~/friction is published, ~/stiffness never."""
    from builders import identified
    from dynid.model import load_robot

    result = identified(load_robot('ur5e'), 'viscous_coulomb', {'Fc': 2.0, 'Fv': 3.0}).save(tmp_path / 'r.yaml')
    estimator = start_node('estimator_node', ros_domain, *parameters(
        f'result_file:={result}', 'publish_rate:=20.0', f'baseline_file:={tmp_path / "b.yaml"}',
        'intake_reliability:=reliable', 'intake_depth:=20000'))
    context = rclpy.Context()
    rclpy.init(context=context, domain_id=ros_domain)
    node = rclpy.create_node('rigid_probe', context=context)
    statuses, friction, stiffness = {}, [], []
    node.create_subscription(DiagnosticArray, '/diagnostics', lambda m: statuses.update({s.name: s for s in m.status}),
                             10)
    node.create_subscription(Float64MultiArray, '/estimator_node/friction', friction.append, 10)
    node.create_subscription(Float64MultiArray, '/estimator_node/stiffness', stiffness.append, 10)
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(node)
    publisher = None
    try:
        with spinning(executor, context):
            publisher = subprocess.Popen(
                [sys.executable, str(Path(__file__).with_name('stamp_publisher.py')), '--rate', '250',
                 '--duration', '5', '--stiffness-drop-at', '100', '--without', 'motor_states'],
                env=environment(ros_domain), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            mode, left_out = '/estimator_node: mode', '/estimator_node: left out'
            assert wait_until(lambda: 'on rigid joints' in getattr(statuses.get(mode), 'message', ''), 120.0), \
                getattr(statuses.get(mode), 'message', sorted(statuses))
            assert statuses[mode].message == 'friction only (no motor_states), on rigid joints (θ = q)'
            assert 'needs the motor encoders' in statuses[left_out].message
            assert wait_until(lambda: len(friction) >= 3, 60.0), 'no friction estimates'
            output, _ = publisher.communicate(timeout=300)
            assert publisher.returncode == 0, output
    finally:
        if publisher is not None and publisher.poll() is None:
            publisher.kill()
        node.destroy_node()
        rclpy.shutdown(context=context)
        stop([estimator])
    assert [d.size for d in friction[-1].layout.dim] == [6, 3] and not stiffness
