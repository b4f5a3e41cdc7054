"""Physics of the digital twin (issue 4): energy, statics, stiffness, rotor equation, tracking, heating;
batch stepping (advance) against step, run and the committed integrator."""

from dataclasses import replace

import numpy as np
import pytest

from dynid.errors import InputError
from dynid.excite.trajectory import PointTrajectory
from dynid.model import Payload, load_robot
from dynid.sim.parameters import PlantParameters, SensorParameters
from dynid.sim.plant import FlexibleJointPlant
from dynid.sim.sensors import Sensors
from dynid.sim.twin import MEASURED_FIELDS, DigitalTwin, SimulationRecord, gentle_motion


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



def test_coupled_wrist_plant_conserves_energy_and_moves_the_links_as_the_motors(ur5e_plant):
    # The same free swing with the wrist's motors coupled (motor 6 turns with q5 + q6, motor 5 against q5): the
    # plant runs in the motors' coordinates p = C·q, the links' energy taken at q = C⁻¹·p; a wrong transform of
    # M or of c·q̇ + g breaks the balance. Tolerance as the uncoupled test's.
    coupling = np.eye(6)
    coupling[4, 4], coupling[5, 4] = -1.0, 1.0
    params = _frictionless(ur5e_plant)
    params = replace(params, drives=replace(params.drives, coupling=coupling))
    plant = FlexibleJointPlant(params)
    q0 = np.array([0.0, -1.0, 1.2, -1.0, -1.2, 0.3])
    plant.reset(coupling @ q0)
    start = plant.energy()
    energies = []
    for _ in range(2000):
        plant.advance(np.zeros(6), 1e-3)
        energies.append(plant.energy())
    assert np.max(np.abs(np.array(energies) - start)) / abs(start) < 1e-4
    assert np.linalg.norm(np.linalg.solve(coupling, plant.state.q) - q0) > 0.5  # it did swing

def test_the_steps_linear_solve_takes_the_upper_triangle_of_a_symmetric_system():
    # The step's system is symmetric positive definite (Cholesky); an indefinite one, which only bad
    # parameters could make, is solved by elimination instead of failing. Both against numpy, to 1e-12.
    from dynid.sim.integrator import _solve

    rng = np.random.default_rng(4)
    a = rng.normal(size=(12, 12))
    for matrix in (a @ a.T + 12 * np.eye(12), a + a.T):
        rhs = rng.normal(size=12)
        given = np.triu(matrix) + np.tril(rng.normal(size=(12, 12)), -1)  # below the diagonal is never read
        np.testing.assert_allclose(_solve(given, rhs), np.linalg.solve(matrix, rhs), rtol=1e-12, atol=1e-12)


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


# ------------------------------------------------------------------------------ batch stepping
HOME = np.array([0.0, -1.5708, 1.5708, -1.5708, -1.5708, 0.0])


def _scripted(robot, twin: DigitalTwin, go, times_s=(2.0, 3.0, 3.5, 5.0)) -> SimulationRecord:
    """A faster gentle motion; at times_s[0] an effort command, at [1] a 3 kg payload, at [2] a point
    trajectory interpolated from the current reference; until [3]. ``go(count)`` advances count samples."""
    samples = [round(t * twin.rate_hz) for t in times_s]
    twin.follow(gentle_motion(robot, amplitude=0.5, base_frequency_hz=0.3))
    records = [go(samples[0])]
    twin.set_effort_command(np.linspace(-2.0, 2.0, robot.n))
    records.append(go(samples[1] - samples[0]))
    twin.set_payload(Payload(3.0, [0.0, 0.0, 0.05]))
    records.append(go(samples[2] - samples[1]))
    offsets = np.array([[0.1], [0.2], [0.0]]) * np.where(np.arange(robot.n) % 2 == 0, 1.0, -1.0)
    twin.follow(PointTrajectory(robot.joint_names, [0.5, 1.0, 1.5], HOME + offsets))
    records.append(go(samples[3] - samples[2]))
    return SimulationRecord.concatenate(records)


def _stepped(twin: DigitalTwin, count: int) -> SimulationRecord:
    samples = [twin.step() for _ in range(count)]
    return SimulationRecord(
        twin.robot.joint_names, np.array([s.time for s in samples]),
        {k: np.array([getattr(s.measured, k) for s in samples]) for k in MEASURED_FIELDS},
        {k: np.array([s.truth[k] for s in samples]) for k in samples[0].truth},
        {k: np.array([s.reference[k] for s in samples]) for k in samples[0].reference}, twin.rate_hz)


def _in_small_calls(twin: DigitalTwin, count: int, sizes=(1, 3, 5, 7, 2, 20)) -> SimulationRecord:
    records, done, k = [], 0, 0
    while done < count:
        records.append(twin.advance(min(sizes[k % len(sizes)], count - done)))
        done += records[-1].time.size
        k += 1
    return SimulationRecord.concatenate(records)


def test_advance_in_small_calls_equals_step_and_run(ur5e_plant):
    # The node's pattern: advance(k) with small, varying k, commands between calls. Every value of
    # every sample (measured with its noise, truth, reference) equals what step() and run() give:
    # bit for bit, since the reference is evaluated in blocks aligned to the step count and the noise
    # is one stream (the rounding of a batch evaluation would otherwise depend on the batch).
    robot = ur5e_plant.robot
    times = (0.4, 0.7, 0.9, 1.2)
    runs = {}
    for mode, go in (('step', _stepped), ('advance', _in_small_calls),
                     ('run', lambda twin, count: twin.run(count / twin.rate_hz))):
        twin = DigitalTwin(ur5e_plant, rate_hz=1000.0, seed=3)
        runs[mode] = _scripted(robot, twin, lambda count, twin=twin, go=go: go(twin, count), times)
    reference = runs['run']
    assert reference.time.size == 1200 and np.ptp(reference.measured['current'], axis=0).min() > 0
    for mode in ('step', 'advance'):
        np.testing.assert_array_equal(runs[mode].time, reference.time)
        for part in ('measured', 'truth', 'reference'):
            for name, value in getattr(reference, part).items():
                np.testing.assert_array_equal(getattr(runs[mode], part)[name], value, err_msg=f'{mode} {part} {name}')


def test_sensor_noise_is_one_stream_whatever_the_calls(ur5e_plant):
    # Splits that cross the noise block boundary (Sensors.NOISE_BLOCK samples) give the same noise.
    truth = np.zeros((1301, 6))
    whole = Sensors(ur5e_plant.sensors, ur5e_plant.drives.gear_ratio, seed=5).measure_many(*[truth] * 7)
    split = Sensors(ur5e_plant.sensors, ur5e_plant.drives.gear_ratio, seed=5)
    parts = [split.measure_many(*[truth[:k]] * 7) for k in (1, 998, 2, 299)]
    parts.append(split.measure(*[truth[0]] * 7))  # one sample: the 1301st
    for name in ('dq', 'dtheta', 'joint_torque', 'current'):
        joined = np.vstack([getattr(m, name) for m in parts])
        np.testing.assert_array_equal(joined, getattr(whole, name), err_msg=name)
    assert np.std(whole.joint_torque) == pytest.approx(ur5e_plant.sensors.torque_noise, rel=0.05)


#: Last sample (t = 5 s) of the scenario of _scripted, computed by the twin as committed before the
#: batch stepping. The integrator and the friction evaluation have since been rearranged for speed
#: with the same equations and scheme: agreement is at rounding level (measured 3e-13 of each field's
#: largest value), while changing the scheme's β by 1e-7 or the tanh smoothing by 0.01 % moves q, θ,
#: torque, friction and current by 1e-8 to 1e-6. Tolerance: 1e-9 of each field's largest value.
COMMITTED_LAST_SAMPLE = {
    'q': [-9.899206200794381e-05, -1.57031289364416, 1.5709580730868489, -1.570665342234755, -1.5705167450647655,
          0.0001896193810028762],
    'theta': [-0.00010922514151489411, -1.5711663087770502, 1.5701127423031365, -1.571282626581602,
              -1.570524915747644, 0.00018961413479524919],
    'joint_torque': [-0.40906394276335123, -34.76295825989087, -34.41702473766775, -4.652483345692209,
                     -0.06144636817364056, -3.997911566726264e-05],
    'friction': [-4.415645701510302, 4.569750961969453, -4.570127735386221, 1.3777041651315496,
                 -1.3634657617071382, 1.3636355661456045],
    'current': [1.7733126215461017, -5.950705388376632, -0.9873517805807027, -0.7606413802848122,
                0.20391120561236237, -0.19999770496562075],
    'temperature': [25.02831245485366, 25.081062771683808, 25.05074535119237, 25.048549959455425,
                    25.043643829763592, 25.04313042637909],
}


def test_batch_stepping_keeps_the_committed_physics(ur5e_plant):
    robot = ur5e_plant.robot
    twin = DigitalTwin(ur5e_plant, rate_hz=1000.0, seed=0)
    record = _scripted(robot, twin, lambda count: _in_small_calls(twin, count, sizes=(5,)))
    assert record.time[-1] == pytest.approx(5.0)
    for name, expected in COMMITTED_LAST_SAMPLE.items():
        expected = np.array(expected)
        np.testing.assert_allclose(record.truth[name][-1], expected, rtol=0, atol=1e-9 * np.abs(expected).max(),
                                   err_msg=name)


def test_advance_counts(ur5e_plant):
    twin = DigitalTwin(ur5e_plant)
    empty = twin.advance(0)
    assert empty.time.shape == (0,) and empty.measured['q'].shape == (0, 6) and twin.samples == 0
    record = twin.advance(3)
    np.testing.assert_allclose(record.time, [0.001, 0.002, 0.003])
    assert record.truth['q'].shape == (3, 6) and twin.samples == 3 and twin.time == pytest.approx(0.003)
    record.reference['q'][:] = 0.0  # the record is the caller's: the twin's planned reference is untouched
    assert np.abs(twin.advance(1).reference['q'][0] - twin.plant.state.q).max() < 1e-3
    for bad in (-1, 2.5, '3'):
        with pytest.raises(InputError, match='sample count'):
            twin.advance(bad)
