"""Physics of the digital twin (issue 4): energy, statics, stiffness, rotor equation, tracking, heating."""

from dataclasses import replace

import numpy as np
import pytest

from dynid.errors import InputError
from dynid.excite.trajectory import PointTrajectory
from dynid.model import Payload, load_robot
from dynid.sim.parameters import PlantParameters, SensorParameters
from dynid.sim.plant import FlexibleJointPlant
from dynid.sim.twin import DigitalTwin, gentle_motion


@pytest.fixture(scope='module')
def ur5e_plant():
    return PlantParameters.defaults(load_robot('ur5e'))


def _frictionless(params: PlantParameters) -> PlantParameters:
    zero = np.zeros(params.robot.n)
    joints = replace(params.joints, damping=zero, coulomb=zero, static=zero, viscous1=zero, viscous2=zero,
                     viscous3=zero, load_coefficient=zero, temperature_linear=zero,
                     temperature_cubic=zero).validated(params.robot.n)
    return replace(params, joints=joints)


def test_free_swing_without_friction_or_damping_conserves_energy(ur5e_plant):
    # Released from a pose away from equilibrium, zero motor current, 3 s at h = 1 ms: the arm falls
    # through about 3 rad. Tolerance: energy within 1e-4 of its initial value (measured 3.5e-5).
    plant = FlexibleJointPlant(_frictionless(ur5e_plant))
    q0 = np.array([0.0, -1.0, 1.2, -1.0, -1.2, 0.3])
    plant.reset(q0)
    start = plant.energy()
    energies = []
    for _ in range(3000):
        plant.advance(np.zeros(6), 1e-3)
        energies.append(plant.energy())
    assert np.abs(plant.state.q - q0).max() > 1.0  # it did swing
    assert np.abs(np.array(energies) - start).max() <= 1e-4 * abs(start)


def test_at_rest_the_joint_torque_equals_gravity_and_deflection_is_small(ur5e_plant):
    twin = DigitalTwin(ur5e_plant, rate_hz=1000)
    record = twin.run(1.0)
    truth = record.truth
    q, tau = truth['q'][-1], truth['joint_torque'][-1]
    assert np.abs(truth['dq'][-1]).max() < 1e-4
    np.testing.assert_allclose(tau, twin.plant.gravity_torque(q), atol=5e-3)  # N·m
    phi = truth['theta'][-1] - q
    assert np.abs(phi).max() < 1e-3  # stiff joints: below 1 mrad under the UR5e's own weight
    # φ = τ_j/α1 up to the cubic term (α3·φ²/α1 < 1 %), and exactly the cubic's inverse.
    linear = tau / ur5e_plant.joints.alpha1
    assert np.all(np.abs(phi - linear) <= 0.01 * np.abs(linear) + 1e-9)
    np.testing.assert_allclose(phi, twin.plant.stiffness.deflection(tau), atol=1e-8)


def test_linear_springs_give_phi_equal_to_torque_over_alpha1(ur5e_plant):
    params = replace(ur5e_plant, joints=replace(ur5e_plant.joints, alpha3=np.zeros(6)))
    twin = DigitalTwin(params)
    truth = twin.run(0.5).truth
    phi = truth['theta'][-1] - truth['q'][-1]
    np.testing.assert_allclose(phi, truth['joint_torque'][-1] / params.joints.alpha1, rtol=1e-6, atol=1e-10)


@pytest.fixture(scope='module')
def gentle_record(ur5e_plant):
    robot = ur5e_plant.robot
    twin = DigitalTwin(ur5e_plant, rate_hz=1000)
    twin.follow(gentle_motion(robot))
    return twin.run(10.0)


def test_currents_obey_the_rotor_equation(ur5e_plant, gentle_record):
    # i = (τ_j + f + B·θ̈)/K_τ with the true drive gains, θ̈ by central differences of the true rotor
    # velocity (centred on the samples, like the recorded current): RMS error below 1 % of the RMS
    # current per joint and never above 0.05 A.
    truth = gentle_record.truth
    drives = ur5e_plant.drives
    acceleration = np.gradient(truth['dtheta'], gentle_record.time, axis=0)
    predicted = (truth['joint_torque'] + truth['friction'] + drives.rotor_inertia * acceleration) \
        / drives.drive_gain
    error = (predicted - truth['current'])[1:-1]
    rms_error = np.sqrt(np.mean(error**2, axis=0))
    assert np.all(rms_error <= 0.01 * np.sqrt(np.mean(truth['current'] ** 2, axis=0))), rms_error
    assert np.abs(error).max() <= 0.05


def test_slow_reference_is_tracked(gentle_record):
    # The default gentle motion (0.1 Hz, 0.3 rad): link position within 2 mrad of the reference.
    error = gentle_record.truth['q'] - gentle_record.reference['q']
    assert np.abs(error).max() < 2e-3
    assert np.ptp(gentle_record.reference['q'], axis=0).min() > 0.3  # every joint moved


def test_friction_falls_as_the_joint_warms(ur5e_plant):
    # Joint 1 turns at a constant 1 rad/s with a small thermal capacity so it warms within seconds;
    # the viscous temperature term (Ft1 < 0) makes the friction at the same speed smaller.
    joints = replace(ur5e_plant.joints, thermal_capacity=np.full(6, 2.0), sensor_lag=np.full(6, 0.5))
    params = replace(ur5e_plant, joints=joints, ambient_c=10.0, initial_temperature_c=10.0)
    robot = params.robot
    home = np.array([0.0, -1.5708, 1.5708, -1.5708, -1.5708, 0.0])
    times = np.linspace(0.0, 40.0, 401)
    positions = np.tile(home, (times.size, 1))
    positions[:, 0] = times  # 1 rad/s on the base joint
    velocities = np.zeros_like(positions)
    velocities[:, 0] = 1.0
    twin = DigitalTwin(params, initial_q=home)
    twin.follow(PointTrajectory(robot.joint_names, times, positions, velocities))
    record = twin.run(30.0)
    friction, temperature = record.truth['friction'][:, 0], record.truth['temperature'][:, 0]
    early, late = slice(1500, 2500), slice(-1000, None)
    assert temperature[late].mean() > temperature[early].mean() + 5.0
    assert friction[late].mean() < friction[early].mean() - 0.05  # N·m
    assert np.abs(record.measured['temperature'][-1, 0] - temperature[-1]) < 5.0  # sensor lags, follows


def test_payload_changes_the_held_torque_and_drive_gains_can_differ(ur5e_plant):
    robot = ur5e_plant.robot
    twin = DigitalTwin(ur5e_plant)
    before = twin.run(0.3).truth['joint_torque'][-1]
    twin.set_payload(Payload(5.0, com=[0.0, 0.0, 0.05]))  # at run time: the arm sags, then holds it
    truth = twin.run(1.5).truth
    after = truth['joint_torque'][-1]
    np.testing.assert_allclose(after, twin.plant.gravity_torque(truth['q'][-1]), atol=5e-3)
    assert after[1] - before[1] < -15.0  # 5 kg about 0.5 m from the shoulder axis at home
    perturbed = PlantParameters.defaults(robot, drive_gain_error=0.1, seed=3)
    ratio = perturbed.drives.drive_gain / perturbed.nominal_drives.drive_gain
    assert np.all(np.abs(ratio - 1) <= 0.1) and np.abs(ratio - 1).max() > 0.01


def test_sensors_quantize_and_add_noise(ur5e_plant, gentle_record):
    m, truth = gentle_record.measured, gentle_record.truth
    resolution = ur5e_plant.sensors.link_resolution
    np.testing.assert_allclose(m['q'] / resolution, np.round(m['q'] / resolution), atol=1e-6)
    assert np.abs(m['q'] - truth['q']).max() <= resolution / 2 + 1e-12
    noise = m['current'] - truth['current']
    assert 0.5 * 0.02 < noise.std() < 2 * 0.02  # A
    quiet = DigitalTwin(replace(ur5e_plant, sensors=SensorParameters.noiseless()))
    record = quiet.run(0.2)
    np.testing.assert_array_equal(record.measured['current'], record.truth['current'])


def test_bad_settings_are_refused(ur5e_plant):
    with pytest.raises(InputError, match='rate'):
        DigitalTwin(ur5e_plant, rate_hz=0.0)
    with pytest.raises(InputError, match='outside the limits'):
        DigitalTwin(ur5e_plant, initial_q=[0.0, 0.0, 4.0, 0.0, 0.0, 0.0])
    with pytest.raises(InputError, match='alpha1'):
        replace(ur5e_plant.joints, alpha1=np.full(6, -1.0)).validated(6)
