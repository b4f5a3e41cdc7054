"""Contacts put on the simulated robot: their joint torque, shapes, checks and what the twin feels."""

import numpy as np
import pinocchio as pin
import pytest

from dynid.errors import InputError
from dynid.sim.contacts import ContactLoad, ContactSchedule, loads_from_list


def _point(robot, link, point, q):
    model = robot.pinocchio_model
    data = model.createData()
    pin.framesForwardKinematics(model, data, robot.configuration_vector(q))
    frame = robot.flange if link == 'flange' else link
    pose = data.oMf[model.getFrameId(frame)]
    return pose.act(np.asarray(point, dtype=float))


@pytest.mark.parametrize('link', ['elbow_joint_link', 'flange'])
def test_the_joint_torque_is_the_virtual_work_of_the_force(ur5e, link):
    """τ_j = Fᵀ·∂p/∂q_j (central differences of the point's position, 1e-6 rad) to 1e-6 N·m."""
    load = ContactLoad(link, (0.1, -0.02, 0.05), (3.0, -7.0, 11.0), 0.0, 1.0)
    schedule = ContactSchedule(ur5e, [load])
    q = ur5e.random_states(1, seed=2)[0][0]
    tau = schedule.torque(0.5, q)
    numeric = [np.dot(load.force, _point(ur5e, link, load.point, q + 1e-6 * e)
                      - _point(ur5e, link, load.point, q - 1e-6 * e)) / 2e-6 for e in np.eye(ur5e.n)]
    np.testing.assert_allclose(tau, numeric, atol=1e-6)


def test_a_pure_moment_on_the_flange_reaches_the_wrist_and_the_flange_wrench_holds_it(ur5e):
    load = ContactLoad('flange', (0.0, 0.0, 0.1), (0.0, 0.0, 0.0), 0.0, 1.0, moment=(0.0, 0.0, 2.0))
    schedule = ContactSchedule(ur5e, [load])
    q = ur5e.random_states(1, seed=4)[0]
    wrench = schedule.flange_wrench(np.array([0.5]), q)[0]
    assert np.linalg.norm(wrench[3:]) == pytest.approx(2.0) and np.allclose(wrench[:3], 0.0)


def test_shapes_scale_the_peak_within_the_load_time_only():
    times = np.array([0.99, 1.0, 1.05, 1.1, 1.15, 1.2])
    step, ramp, sine = (ContactLoad('flange', (0, 0, 0), (1, 0, 0), 1.0, 0.2, shape).scale(times)
                        for shape in ('step', 'ramp', 'half_sine'))
    np.testing.assert_allclose(step, [0, 1, 1, 1, 1, 0])
    np.testing.assert_allclose(ramp, [0, 0, 0.25, 0.5, 0.75, 0])
    np.testing.assert_allclose(sine, [0, 0, np.sin(np.pi / 4), 1, np.sin(3 * np.pi / 4), 0], atol=1e-12)


def test_bad_loads_are_refused_naming_the_field(ur5e):
    with pytest.raises(InputError, match="'forearm' is not a link of 'ur5e'.*elbow_joint_link"):
        ContactSchedule(ur5e, [ContactLoad('forearm', (0, 0, 0), (1, 0, 0), 0.0, 1.0)])
    with pytest.raises(InputError, match='contacts\\[0\\]: missing duration_s'):
        loads_from_list([{'link': 'flange', 'force': [1, 0, 0], 'start_s': 1.0}])
    with pytest.raises(InputError, match='contact force must be three'):
        ContactLoad('flange', (0, 0, 0), (1, 0), 0.0, 1.0)
    with pytest.raises(InputError, match='contact shape'):
        ContactLoad('flange', (0, 0, 0), (1, 0, 0), 0.0, 1.0, 'square')


def test_on_the_mujoco_plant_a_load_is_felt_as_on_the_twin_and_kept_out_of_the_friction(ur5e):
    """A step on the forearm at rest: MuJoCo's truth is the same τ_ext as the twin's schedule gives, and the joint
    torque (what a link-side sensor reads) moves by −τ_ext once the arm has settled (to 2 % of the step)."""
    pytest.importorskip('mujoco')
    from dynid.sim.mujoco_twin import MujocoTwin
    from dynid.sim.parameters import PlantParameters

    twin = MujocoTwin(PlantParameters.of_twin(ur5e, None, 0.0, 1, 25.0, noise=False), rate_hz=1000.0)
    load = ContactLoad('elbow_joint_link', (0.2, 0.0, 0.05), (0.0, 0.0, -30.0), 0.3, 1.2)
    twin.apply_contact(load)
    record = twin.run(1.4)
    before, during = record.truth['joint_torque'][250], record.truth['joint_torque'][1400 - 200]
    expected = ContactSchedule(ur5e, [load]).torque(1.2, record.truth['q'][1199])
    np.testing.assert_allclose(record.truth['external_torque'][1199], expected, atol=1e-9)
    np.testing.assert_allclose(during - before, -expected, atol=0.02 * np.abs(expected).max())


def test_an_obstacle_in_the_tools_way_is_a_contact_the_truth_holds(ur5e):
    """The tool sphere driven into a box: the truth's τ_ext is the contact forces' Jᵀ·f (large), and the friction
    stays the joints' own (the contact forces are not in it)."""
    pytest.importorskip('mujoco')
    import pinocchio as pin

    from dynid.excite.trajectory import PointTrajectory
    from dynid.sim.mujoco_twin import TOOL_RADIUS_M, MujocoTwin
    from dynid.sim.parameters import PlantParameters

    twin = MujocoTwin(PlantParameters.of_twin(ur5e, None, 0.0, 1, 25.0, noise=False), rate_hz=1000.0)
    q0 = twin.reference.sample(0.0)[0]
    goal = q0 + np.array([0.4, 0.0, 0.0, 0.0, 0.0, 0.0])
    model, data = ur5e.pinocchio_model, ur5e.pinocchio_model.createData()
    flange = model.getFrameId(ur5e.flange)
    points = []
    for q in (q0, q0 + 0.01 * (goal - q0)):
        pin.framesForwardKinematics(model, data, q)
        points.append(data.oMf[flange].translation.copy())
    direction = (points[1] - points[0]) / np.linalg.norm(points[1] - points[0])
    twin.add_obstacle(points[0] + direction * (0.04 + TOOL_RADIUS_M + 0.02), np.full(3, 0.04))
    twin.follow(PointTrajectory(ur5e.joint_names, np.array([0.0, 2.0]), np.array([q0, goal])))
    record = twin.run(2.0)
    external = record.truth['external_torque']
    assert np.abs(external[:, 0]).max() > 20.0  # the pan joint pushes the tool into the box
    assert np.abs(record.truth['friction']).max() < 1.1 * np.abs(twin.frictionloss).max() + 1e-6 + \
        np.abs(twin.damping * record.truth['dq']).max()
