"""MuJoCo as the twin's plant (issue 36): the physics it gives, `dynid simulate --engine mujoco`, and sim_node with
engine:=mujoco over DDS (same topics and stamps as the twin)."""

import xml.etree.ElementTree as ElementTree

import numpy as np
import pytest
import yaml

from cli_run import run_dynid
from dynid.errors import InputError
from dynid.io.bag import read_bag
from dynid.model import Payload, load_robot
from dynid.model import mjcf as mjcf_model
from dynid.sim.mujoco_twin import MujocoTwin, make_twin
from dynid.sim.parameters import PlantParameters, SensorParameters
from dynid.sim.twin import gentle_motion, trajectory_start

mujoco = pytest.importorskip('mujoco')

PAYLOAD = Payload(2.0, [0.08, 0.0, 0.05])


def _twin(name, payload=PAYLOAD, **kwargs):
    robot = load_robot(name)
    params = PlantParameters.of_twin(robot, payload)
    params.sensors = SensorParameters.noiseless()
    motion = gentle_motion(robot, amplitude=0.5, base_frequency_hz=0.3)
    twin = MujocoTwin(params, rate_hz=500.0, initial_q=trajectory_start(motion, robot.joint_names), **kwargs)
    twin.follow(motion, start_time=0.0)
    return robot, params, twin


@pytest.mark.parametrize('name', ['ur5e', 'panda'])
def test_the_samples_hold_the_rigid_body_the_drive_and_the_friction(name):
    robot, params, twin = _twin(name)
    record = twin.run(4.0)
    truth = record.truth
    # MuJoCo's joint dynamics are the plant's drive and friction data.
    np.testing.assert_allclose(twin.armature, params.drives.rotor_inertia)
    np.testing.assert_allclose(twin.damping, params.joints.viscous1)
    np.testing.assert_allclose(twin.frictionloss, params.joints.coulomb)
    # τ_j is the links' inverse dynamics with the payload at the flange (pinocchio, independent of MuJoCo) ...
    tau = robot.inverse_dynamics(truth['q'], truth['dq'], truth['link_acceleration'], payload=PAYLOAD)
    np.testing.assert_allclose(truth['joint_torque'], tau, atol=1e-9 * np.abs(tau).max())
    # ... and the drive torque K_τ·i holds it, the armature's B·q̈ and a friction of damping and at most Fc.
    drive = params.drives.drive_gain * truth['current']
    friction = drive - tau - params.drives.rotor_inertia * truth['link_acceleration']
    np.testing.assert_allclose(friction, truth['friction'], atol=1e-6 * np.abs(drive).max())
    dry = friction - params.joints.viscous1 * truth['dq']
    assert np.all(np.abs(dry) <= params.joints.coulomb * (1 + 1e-6) + 1e-9)
    moving = np.abs(truth['dq']) > 0.01  # sliding: the friction loss is Fc (its constraint resolved in 2 steps)
    assert np.all(np.abs(dry[moving] - (params.joints.coulomb * np.sign(truth['dq']))[moving])
                  < 1e-3 * np.broadcast_to(params.joints.coulomb, dry.shape)[moving])
    # The controller follows the reference (the payload it does not know costs it a few mrad), the rotor is the link.
    assert np.abs(truth['q'] - record.reference['q']).max() < 2e-2
    np.testing.assert_array_equal(truth['theta'], truth['q'])


def test_payload_and_effort_commands_act_on_the_plant():
    robot, params, twin = _twin('ur5e', payload=None)
    q = twin.data.qpos[twin._qpos].copy()
    heavy = Payload(5.0, [0.0, 0.0, 0.1])
    without = twin.gravity_torque(q)
    twin.set_payload(heavy)
    rest = np.zeros(robot.n)
    expected = robot.inverse_dynamics(q, rest, rest, payload=heavy) - robot.inverse_dynamics(q, rest, rest)
    np.testing.assert_allclose(twin.gravity_torque(q) - without, expected.reshape(-1), atol=1e-9)
    np.testing.assert_allclose(twin.data.qpos[twin._qpos], q)  # the state is kept
    # An effort command (forward_effort_controller) adds to the controller's output: the same run with a push of
    # 20 N·m on the first joint moves it ahead of the run without, until the PID takes the push over.
    _, _, other = _twin('ur5e', payload=None)
    other.set_effort_command(np.r_[20.0, np.zeros(5)])
    other.set_payload(heavy)
    base, pushed = twin.run(0.1), other.run(0.1)
    ahead = pushed.truth['q'][:, 0] - base.truth['q'][:, 0]
    assert ahead[-1] > 1e-4 and np.all(ahead >= -1e-9)
    assert np.abs(pushed.truth['q'][-1, 1:] - base.truth['q'][-1, 1:]).max() < ahead[-1]


def test_a_users_mjcf_with_its_own_joint_dynamics(tmp_path):
    robot = load_robot('ur5e')
    spec = mjcf_model.robot_spec(mjcf_model.robot_urdf_text(robot), robot.joint_names)
    mjcf_model.set_joint_dynamics(spec, robot.joint_names, np.full(6, 0.3), np.full(6, 2.5), np.full(6, 0.7))
    path = tmp_path / 'ur5e.xml'
    path.write_text(spec.to_xml())
    _, _, twin = _twin('ur5e', mjcf_path=str(path))
    np.testing.assert_allclose(twin.armature, 0.3)
    np.testing.assert_allclose(twin.damping, 2.5)
    np.testing.assert_allclose(twin.frictionloss, 0.7)
    record = twin.run(1.0)
    assert np.abs(record.truth['q'] - record.reference['q']).max() < 5e-3

    root = ElementTree.fromstring(path.read_text())
    next(root.iter('joint')).set('name', 'other')
    path.write_text(ElementTree.tostring(root, encoding='unicode'))
    with pytest.raises(InputError, match="has no joints \\['shoulder_pan_joint'\\]"):
        _twin('ur5e', mjcf_path=str(path))


def test_flexible_joints_are_a_joint_spring_between_rotor_and_link(tmp_path):
    """Issue 36: with ``flexible`` the robot's joint is the rotor θ, an elastic hinge beside it the deflection: the
    joint torque is the spring's α1·(θ − q) + D·(θ̇ − q̇), the links' inverse dynamics at q, and K_τ·i less B·θ̈ and
    the friction; an MJCF with its own elastic joints keeps their stiffness."""
    robot, params, twin = _twin('ur5e', flexible=True)
    np.testing.assert_allclose(twin.stiffness, params.joints.alpha1)
    np.testing.assert_allclose(twin.transmission_damping, params.joints.damping)
    assert twin.step_s <= 1e-4
    record = twin.run(1.0)
    truth = record.truth
    phi, dphi = truth['theta'] - truth['q'], truth['dtheta'] - truth['dq']
    assert np.abs(phi).max(axis=0)[:3].min() > 1e-5  # the loaded joints deflect
    tau = truth['joint_torque']
    scale = np.abs(tau).max()
    np.testing.assert_allclose(tau, twin.stiffness * phi + twin.transmission_damping * dphi, atol=1e-6 * scale)
    links = robot.inverse_dynamics(truth['q'], truth['dq'], truth['link_acceleration'], payload=PAYLOAD)
    np.testing.assert_allclose(tau, links, atol=1e-6 * scale)
    drive = params.drives.drive_gain * truth['current']
    np.testing.assert_allclose(drive - params.drives.rotor_inertia * truth['rotor_acceleration'] - truth['friction'],
                               tau, atol=1e-6 * np.abs(drive).max())
    assert np.abs(truth['q'] - record.reference['q']).max() < 2e-2
    assert 'flexible' in twin.describe()['joints']

    root = ElementTree.fromstring(twin.to_xml())
    for joint in root.iter('joint'):
        if joint.get('name', '').endswith('_elastic'):
            joint.set('stiffness', '1000')
    path = tmp_path / 'flexible.xml'
    path.write_text(ElementTree.tostring(root, encoding='unicode'))
    _, _, own = _twin('ur5e', flexible=True, mjcf_path=str(path))
    np.testing.assert_allclose(own.stiffness, 1000.0)
    soft = own.run(0.2).truth
    assert np.abs(soft['theta'] - soft['q']).max() > 10 * np.abs(phi).max()  # 40x softer springs deflect further


def test_refusals():
    robot = load_robot('ur5e')
    params = PlantParameters.of_twin(robot)
    with pytest.raises(InputError, match='engine'):
        make_twin(params, 'bullet')
    with pytest.raises(InputError, match='mujoco engine'):
        make_twin(params, 'twin', 'model.xml')
    from dynid.sim.changes import parse_joint_change
    with pytest.raises(InputError, match='not simulated on the MuJoCo plant'):
        make_twin(params, 'mujoco', joint_changes=[parse_joint_change('time=1,stiffness_scale=0.5')])


def _simulate(*args):
    return run_dynid('simulate', '--quiet', *args)


def test_simulate_engine_mujoco_writes_the_twins_files(tmp_path):
    out = tmp_path / 'rec'
    result = _simulate('--engine', 'mujoco', '--duration', '2', '--rate', '500', '--payload', '2.0', '-o', str(out))
    assert result.returncode == 0, result.stderr
    dataset = read_bag(out)
    assert dataset.n_samples == 1000 and dataset.current is not None and dataset.temperature is not None
    np.testing.assert_allclose(np.diff(dataset.t), 0.002, atol=1e-9)
    truth = yaml.safe_load((out / 'truth.yaml').read_text())
    assert truth['simulation']['engine'] == 'mujoco' and truth['plant']['payload']['mass'] == 2.0
    assert truth['mujoco']['armature'] == pytest.approx([d['rotor_inertia'] for d in truth['plant']['drives'].values()])
    result = _simulate('--mjcf', str(tmp_path / 'x.xml'), '-o', str(tmp_path / 'b'))
    assert result.returncode == 2 and '--engine mujoco' in result.stderr and not (tmp_path / 'b').exists()


def test_sim_node_engine_mujoco_publishes_and_follows(module_ros_domain):
    import os

    from builtin_interfaces.msg import Duration
    from std_msgs.msg import Float64MultiArray
    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

    from dds_helpers import parameters, start_node, stop
    from sim_probe import JOINTS, RATE, TOPICS, Probe

    domain = module_ros_domain
    process = start_node('sim_node', domain, *parameters(f'rate:={RATE}', 'engine:=mujoco', 'payload_mass:=1.0'))
    os.environ['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'
    probe = Probe(domain, reliability='reliable')  # every sample checked: of the plant, not of the transport
    try:
        assert probe.wait_for(lambda: all(len(s) > 3 * RATE for s in probe.stamps.values()), 180.0), \
            'sim_node (mujoco) did not publish'
        with probe.lock:
            stamps = {topic: np.array(values) for topic, values in probe.stamps.items()}
            start = probe.position.copy()
        first = max(s[0] for s in stamps.values())
        last = min(s[-1] for s in stamps.values())
        common = stamps['joint_states'][(stamps['joint_states'] >= first) & (stamps['joint_states'] <= last)]
        assert np.all(np.abs(np.diff(common) - 1e9 / RATE) <= 1)
        for topic in TOPICS[1:]:
            assert np.array_equal(stamps[topic][(stamps[topic] >= first) & (stamps[topic] <= last)], common), topic
        target = start.copy()
        target[0] += 0.3
        message = JointTrajectory(joint_names=JOINTS)
        message.points.append(JointTrajectoryPoint(positions=target.tolist(), velocities=[0.0] * 6,
                                                   time_from_start=Duration(sec=2, nanosec=0)))
        probe.send(probe.trajectory, message)
        assert probe.wait_for(lambda: abs(probe.position[0] - target[0]) < 5e-3 and abs(probe.velocity[0]) < 0.05,
                              60.0), f'joint 1 at {probe.position[0]:.4f}, target {target[0]:.4f}'
        position = probe.node.create_publisher(Float64MultiArray, 'forward_position_controller/commands', 10)
        target[1] -= 0.1
        probe.send(position, Float64MultiArray(data=target.tolist()))  # a forward position controller's command
        assert probe.wait_for(lambda: abs(probe.position[1] - target[1]) < 5e-3, 60.0), probe.position
        assert process.poll() is None
    finally:
        probe.close()
        stop([process])


@pytest.mark.parametrize('engine', ['twin', 'mujoco'])
def test_position_and_velocity_commands_move_the_arm_on_either_plant(engine):
    # ros2_control's forward position and velocity controllers, as sim_node takes them on both plants.
    robot = load_robot('ur5e')
    params = PlantParameters.of_twin(robot)
    params.sensors = SensorParameters.noiseless()
    twin = make_twin(params, engine, rate_hz=500.0)
    start = twin.advance(1).truth['q'][-1]
    target = start + np.r_[0.05, -0.05, 0.0, 0.0, 0.0, 0.1]
    twin.command_position(target)
    assert np.abs(twin.run(3.0).truth['q'][-1] - target).max() < 2e-3
    velocity = np.r_[0.0, 0.0, 0.2, 0.0, 0.0, 0.0]
    twin.command_velocity(velocity)
    moving = twin.run(0.4).truth['dq']
    assert moving[-1, 2] == pytest.approx(0.2, abs=0.02) and np.abs(moving[-1, [0, 1, 3, 4, 5]]).max() < 0.02
    stopped = twin.run(1.5).truth  # not renewed: the reference holds after the horizon
    assert np.abs(stopped['dq'][-1]).max() < 0.01
    assert stopped['q'][-1, 2] == pytest.approx(target[2] + 0.2 * twin.VELOCITY_HORIZON_S, abs=2e-3)
    for command, values, reason in ((twin.command_position, np.full(6, 10.0), 'position limits'),
                                    (twin.command_velocity, np.r_[np.nan, np.zeros(5)], 'finite'),
                                    (twin.command_velocity, np.full(6, 100.0), 'position limits'),
                                    (twin.command_position, np.zeros(3), '6 finite values')):
        with pytest.raises(InputError, match=reason):
            command(values)
