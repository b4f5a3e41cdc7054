"""Scheduled changes of the twin's true joints (dynid.sim.changes): stiffness loss and wear during a run,
their physics, their timing whatever the split into advance calls, and `dynid simulate --change`."""

from dataclasses import replace

import numpy as np
import pytest
import yaml

from cli_run import run_dynid
from dynid.cli import main
from dynid.errors import InputError
from dynid.excite.trajectory import FourierTrajectory, PointTrajectory, save_trajectory
from dynid.friction.stiffness import OddPolynomialStiffness
from dynid.model import load_robot
from dynid.sim.changes import JointChange, parse_joint_change
from dynid.sim.parameters import PlantParameters, SensorParameters
from dynid.sim.plant import FlexibleJointPlant
from dynid.sim.twin import DigitalTwin, home_configuration

LIFT = 1  # shoulder_lift_joint: carries the upper arm and forearm
#: Upper arm near horizontal: the shoulder lift holds about 60 N·m, φ ≈ 1.5 mrad, α3·φ³ ≈ 6 % of the torque.
LOADED_POSE = np.array([0.0, -0.3, 0.3, -1.5708, -1.5708, 0.0])


@pytest.fixture(scope='module')
def ur5e_plant():
    params = PlantParameters.defaults(load_robot('ur5e'))
    return replace(params, sensors=SensorParameters.noiseless())


@pytest.mark.parametrize('cubic', [False, True], ids=['alpha3=0', 'alpha3>0'])
def test_halved_stiffness_at_rest_doubles_the_deflection_and_keeps_the_torque(ur5e_plant, cubic):
    # Holding gravity, the shoulder lift's τ_E(φ) is halved at t = 0.5 s (Madsen 2019's test, scaled
    # down in time). The motor side stays where the controller holds it and the link sags until the
    # softer joint carries the same torque: with α3 = 0, φ = τ_j/α1 doubles; with α3 > 0, φ is the
    # inverse of the halved polynomial at that torque (between 2^(1/3) and 2 times the old one).
    params = ur5e_plant if cubic else replace(ur5e_plant, joints=replace(ur5e_plant.joints, alpha3=np.zeros(6)))
    change = JointChange(0.5, ('shoulder_lift_joint',), stiffness_scale=0.5)
    twin = DigitalTwin(params, initial_q=LOADED_POSE, joint_changes=[change])
    truth = twin.run(4.0).truth
    phi = truth['theta'][:, LIFT] - truth['q'][:, LIFT]
    tau = truth['joint_torque'][:, LIFT]
    [applied] = twin.applied_joint_changes
    assert applied.sample == 500 and applied.applied_s == 0.5
    assert applied.after['shoulder_lift_joint']['alpha1'] == 0.5 * params.joints.alpha1[LIFT]
    # At the change (sample 500, index 499) the state is continuous and the spring torque halves at once
    # (the joint is at rest: the damper's share D·φ̇ is below 1e-3 N·m).
    assert abs(phi[499] - phi[498]) < 1e-8
    assert tau[499] == pytest.approx(0.5 * tau[498], abs=2e-3)
    before, after = slice(300, 499), slice(3000, 4000)  # at rest before; settled (transient decays in ~1 s)
    phi0, phi1 = phi[before].mean(), phi[after].mean()
    tau0, tau1 = tau[before].mean(), tau[after].mean()
    assert abs(tau0) > 50.0
    # The joint torque stays: the link moved by ~1.5 mrad, g(q) changed by < 0.1 % (tolerance 0.5 %).
    assert tau1 == pytest.approx(tau0, rel=5e-3)
    halved = OddPolynomialStiffness(np.array([0.5 * params.joints.alpha1[LIFT], 0.5 * params.joints.alpha3[LIFT]]))
    assert phi1 == pytest.approx(float(halved.deflection(tau1)), rel=1e-3)  # the new law at the held torque
    ratio = phi1 / phi0
    if not cubic:
        assert ratio == pytest.approx(2.0, rel=5e-3)
    else:  # the cubic stiffens: less than double, by the amount the polynomial gives
        original = OddPolynomialStiffness(np.array([params.joints.alpha1[LIFT], params.joints.alpha3[LIFT]]))
        expected = float(halved.deflection(tau0) / original.deflection(tau0))
        assert 1.5 < expected < 1.95
        assert ratio == pytest.approx(expected, rel=5e-3)
    # The controller is not told (its set-point keeps the old φ(τ)): the rotor stays where it was held
    # and the link sags by the extra deflection (tolerance 5 % of it).
    theta, q = truth['theta'][:, LIFT], truth['q'][:, LIFT]
    assert abs(theta[after].mean() - theta[before].mean()) < 0.05 * abs(phi1 - phi0)
    assert q[after].mean() - q[before].mean() == pytest.approx(-(phi1 - phi0), rel=0.05)
    # Other joints keep their stiffness: the elbow's deflection is unchanged (1 %).
    elbow = truth['theta'][:, 2] - truth['q'][:, 2]
    assert elbow[after].mean() == pytest.approx(elbow[before].mean(), rel=1e-2)


def test_a_changed_plant_steps_like_a_plant_made_with_the_new_parameters(ur5e_plant):
    # The plant caches per-step quantities (the start-of-step torque, stiffness and friction slopes,
    # the friction value, parameter arrays): after set_joint_parameters mid-motion it must step exactly
    # like a plant made with the new parameters and handed the same state (its caches computed anew).
    # Tolerance: 1e-9 of each quantity's scale (the two compute the start terms by different
    # arrangements of the same formulas; any stale cache is off by 1e-3 or more).
    changed = JointChange(0.0, stiffness_scale=0.6, coulomb_scale=1.4, viscous_excess=0.3).applied_to(
        ur5e_plant.joints, ur5e_plant.joints, ur5e_plant.robot.joint_names)
    a = FlexibleJointPlant(ur5e_plant)
    a.reset(LOADED_POSE)
    currents = np.array([2.0, -4.0, 1.5, 0.5, -0.3, 0.2]) * np.linspace(0.5, 1.5, 6)
    for _ in range(40):
        a.advance(currents, 1e-3)
    a.set_joint_parameters(changed)
    b = FlexibleJointPlant(replace(ur5e_plant, joints=changed))
    b.reset(LOADED_POSE)
    b.state = a.state.copy()
    egms_a, egms_b = a.friction.egms, b.friction.egms
    egms_b.state, egms_b.theta, egms_b.last_backlash = egms_a.state.copy(), b.state.theta, egms_a.last_backlash
    b.friction_torque, b.link_acceleration = a.friction_torque.copy(), a.link_acceleration.copy()
    np.testing.assert_allclose(a.joint_torque, b.stiffness.torque(b.state.theta - b.state.q)
                               + changed.damping * (b.state.dtheta - b.state.dq), rtol=1e-12, atol=1e-9)
    for _ in range(30):
        a.advance(currents, 1e-3)
        b.advance(currents, 1e-3)
    for name in ('q', 'dq', 'theta', 'dtheta'):
        value = getattr(b.state, name)
        np.testing.assert_allclose(getattr(a.state, name), value, rtol=0, atol=1e-9 * np.abs(value).max(), err_msg=name)
    for name in ('joint_torque', 'friction_torque'):
        value = getattr(b, name)
        np.testing.assert_allclose(getattr(a, name), value, rtol=0, atol=1e-9 * np.abs(value).max(), err_msg=name)
    assert np.abs(a.state.q - LOADED_POSE).max() > 1e-3  # it moved
    with pytest.raises(InputError, match='backlash'):
        a.set_joint_parameters(replace(changed, backlash=2 * changed.backlash))


def _constant_velocity(robot, velocities, start_s=0.5, end_s=4.0) -> PointTrajectory:
    """From rest at LOADED_POSE, up to constant joint velocities [rad/s] by start_s, held until end_s."""
    times = np.array([0.0, start_s, end_s])
    velocity = np.array([np.zeros(robot.n), velocities, velocities])
    positions = LOADED_POSE + np.array([np.zeros(robot.n), 0.5 * start_s * velocity[1],
                                        0.5 * start_s * velocity[1] + (end_s - start_s) * velocity[1]])
    return PointTrajectory(robot.joint_names, times, positions, velocity)


@pytest.fixture(scope='module')
def constant_velocity_runs(ur5e_plant):
    # The base (no load) and the shoulder lift (≈ 60 N·m of gravity) at constant velocity; the same
    # run without a change, with the Coulomb level ×1.5 and with a viscous excess, from t = 1 s.
    velocities = np.array([0.5, 0.1, 0.0, 0.0, 0.0, 0.0])
    trajectory = _constant_velocity(ur5e_plant.robot, velocities)
    changes = {'none': [], 'coulomb': [JointChange(1.0, coulomb_scale=1.5)],
               'viscous': [JointChange(1.0, ('shoulder_pan_joint', 'shoulder_lift_joint'), viscous_excess=0.05)]}
    runs = {}
    for name, change in changes.items():
        twin = DigitalTwin(ur5e_plant, initial_q=LOADED_POSE, joint_changes=change)
        twin.follow(trajectory, start_time=0.0)
        runs[name] = twin.run(3.0).truth
    return runs


def test_coulomb_scale_multiplies_the_load_dependent_coulomb_level(ur5e_plant, constant_velocity_runs):
    # Sliding (H = sgn ω = 1), f = F(τ_j) + F_V(ω, T) with F = Fc0 + Fc1·τ_j²: ×1.5 on F makes the
    # friction grow by 1.5·F(τ_j after) − F(τ_j before); on the shoulder lift the load term Fc1·τ_j²
    # is ≈ 0.47 N·m, so scaling Fc0 alone would miss by ≈ 0.23 N·m. Tolerance 0.01 N·m (the
    # velocity and temperature of the two runs differ slightly; measured < 1e-3 N·m).
    a, b = constant_velocity_runs['none'], constant_velocity_runs['coulomb']
    np.testing.assert_array_equal(a['friction'][:999], b['friction'][:999])  # identical before t = 1 s
    j = ur5e_plant.joints
    window = slice(1500, 3000)
    for joint in (0, LIFT):
        assert np.all(a['dtheta'][window, joint] > 0.05)  # sliding forward
        level_a = j.coulomb[joint] + j.load_coefficient[joint] * a['joint_torque'][window, joint] ** 2
        level_b = j.coulomb[joint] + j.load_coefficient[joint] * b['joint_torque'][window, joint] ** 2
        growth = b['friction'][window, joint] - a['friction'][window, joint]
        np.testing.assert_allclose(growth, 1.5 * level_b - level_a, atol=1e-2, err_msg=f'joint {joint}')
    assert np.mean(j.load_coefficient[LIFT] * a['joint_torque'][window, LIFT] ** 2) > 0.3  # the load term counts
    # At the change (t = 1 s, sample 1000) the friction jumps at once by 0.5·F.
    level = j.coulomb[0] + j.load_coefficient[0] * a['joint_torque'][999, 0] ** 2
    assert b['friction'][999, 0] - a['friction'][999, 0] == pytest.approx(0.5 * level, abs=1e-6)


def test_viscous_excess_adds_fv_times_omega(constant_velocity_runs):
    # f grows by Fv·ω on the two changed joints (ω: 0.5 and 0.1 rad/s, Fv = 0.05 N·m·s/rad), nothing on
    # the others. Tolerance 1e-3 N·m (measured < 2e-5 N·m).
    a, c = constant_velocity_runs['none'], constant_velocity_runs['viscous']
    window = slice(1500, 3000)
    growth = c['friction'][window] - a['friction'][window]
    np.testing.assert_allclose(growth[:, :2], 0.05 * c['dtheta'][window, :2], atol=1e-3)
    assert np.abs(growth[:, :2]).min() > 4e-3
    assert np.abs(growth[:, 2:]).max() < 1e-3


def _split_run(twin, sizes, total):
    records, done, k = [], 0, 0
    while done < total:
        records.append(twin.advance(min(sizes[k % len(sizes)], total - done)))
        done += records[-1].time.size
        k += 1
    return records


def test_changes_apply_at_the_same_sample_whatever_the_calls(ur5e):
    # The node's pattern (advance(5) every 5 ms), irregular splits, step() and run() give the same
    # samples bit for bit (noisy sensors, a moving reference); a change at 12.5 ms applies at sample
    # 13, one at exactly 20 ms at sample 20; scale 0.5 then 1.0 restores the original stiffness.
    params = PlantParameters.defaults(ur5e)
    changes = [JointChange(0.0125, ('shoulder_lift_joint', 'elbow_joint'), stiffness_scale=0.5),
               JointChange(0.02, coulomb_scale=1.5, viscous_excess=0.1),
               JointChange(0.045, ('shoulder_lift_joint', 'elbow_joint'), stiffness_scale=1.0)]
    trajectory = FourierTrajectory(ur5e.joint_names, 2.0, home_configuration(ur5e), np.full((6, 1), 0.05),
                                   np.zeros((6, 1)))
    count = 60

    def make(with_changes=True):
        twin = DigitalTwin(params, rate_hz=1000.0, seed=4, joint_changes=changes if with_changes else ())
        twin.follow(trajectory, start_time=0.0)
        return twin

    runs = {}
    twin = make()
    runs['run'] = twin.run(count / 1000.0)
    assert [(a.sample, a.applied_s) for a in twin.applied_joint_changes] == [(13, 0.013), (20, 0.02), (45, 0.045)]
    for name in ('alpha1', 'alpha3', 'coulomb', 'viscous1'):
        expected = getattr(params.joints, name) * (1.5 if name == 'coulomb' else 1.0) + (0.1 if name == 'viscous1'
                                                                                          else 0.0)
        np.testing.assert_allclose(getattr(twin.plant.params.joints, name), expected, rtol=1e-15, err_msg=name)
    twin.reset()  # back to the original joints, every change pending again
    assert twin.applied_joint_changes == [] and twin.pending_joint_changes == changes
    assert twin.plant.params.joints.alpha1[LIFT] == params.joints.alpha1[LIFT]
    twin.follow(trajectory, start_time=0.0)
    runs['run after reset'] = twin.run(count / 1000.0)
    runs['advance(5)'] = _split_run(make(), (5,), count)
    runs['irregular'] = _split_run(make(), (1, 11, 1, 6, 7, 33), count)
    stepped = make()
    runs['step'] = [stepped.advance(1) for _ in range(count)]
    live = make(with_changes=False)  # a node scheduling while it runs
    first = live.advance(5)
    for change in changes:
        live.schedule_joint_change(change)
    runs['scheduled live'] = [first, *_split_run(live, (5,), count - 5)]
    with pytest.raises(InputError, match='in the past'):
        live.schedule_joint_change(JointChange(0.01, stiffness_scale=0.9))
    reference = runs.pop('run')
    for mode, records in runs.items():
        joined = records if not isinstance(records, list) else type(reference).concatenate(records)
        np.testing.assert_array_equal(joined.time, reference.time)
        for part in ('truth',) if mode == 'run after reset' else ('measured', 'truth'):  # the noise goes on
            for name, value in getattr(reference, part).items():
                np.testing.assert_array_equal(getattr(joined, part)[name], value, err_msg=f'{mode} {part} {name}')
    # Without the changes every sample before the first is the same, and sample 13 is not.
    unchanged = make(with_changes=False).run(count / 1000.0).truth['joint_torque']
    np.testing.assert_array_equal(unchanged[:12], reference.truth['joint_torque'][:12])
    assert np.all(np.abs(unchanged[12, 1:3] - reference.truth['joint_torque'][12, 1:3]) > 1.0)


def test_change_descriptions_are_validated(ur5e):
    change = parse_joint_change('time=10, stiffness_scale=0.5, joints=shoulder_pan_joint, elbow_joint')
    assert change == JointChange(10.0, ('shoulder_pan_joint', 'elbow_joint'), stiffness_scale=0.5)
    assert parse_joint_change('time_s=1,coulomb_scale=1.5,joints=all').joints is None
    for bad, reason in (('time=1', 'changes nothing'), ('stiffness_scale=0.5', 'time'),
                        ('time=1,stiffness_scale=0', '> 0'), ('time=1,coulomb_scale=inf', 'finite'),
                        ('time=1,scale=2', 'unknown key'), ('time=-2,coulomb_scale=2', '>= 0'),
                        ('time=1,coulomb_scale=2,elbow_joint', 'KEY=VALUE')):
        with pytest.raises(InputError, match=reason):
            parse_joint_change(bad)
    params = PlantParameters.defaults(ur5e)
    with pytest.raises(InputError, match=r"unknown joints \['wrist_4_joint'\]"):
        DigitalTwin(params, joint_changes=[JointChange(1.0, ('wrist_4_joint',), stiffness_scale=0.5)])
    with pytest.raises(InputError, match='Fv1'):
        DigitalTwin(params, joint_changes=[JointChange(1.0, viscous_excess=-100.0)])


def test_simulate_records_the_changes_from_options_and_file_in_truth(ur5e, tmp_path):
    home = home_configuration(ur5e)
    path = tmp_path / 'traj.yaml'
    save_trajectory(FourierTrajectory(ur5e.joint_names, 0.5, home, np.zeros((6, 1)), np.full((6, 1), 0.05)), path)
    document = yaml.safe_load(path.read_text())
    document['joint_changes'] = [{'time_s': 0.3, 'joints': ['elbow_joint'], 'coulomb_scale': 1.5,
                                  'viscous_excess': 0.02}]
    path.write_text(yaml.safe_dump(document))
    out = tmp_path / 'rec'
    result = run_dynid('simulate', '--quiet', '--trajectory', str(path), '--duration', '1', '--rate', '250',
                       '--change', 'time=0.61,stiffness_scale=0.5,joints=shoulder_lift_joint,elbow_joint',
                       '--change', 'time=5,stiffness_scale=0.8', '-o', str(out))
    assert result.returncode == 0, result.stderr
    truth = yaml.safe_load((out / 'truth.yaml').read_text())
    joints = truth['plant']['joints']  # the truth at the start
    wear, stiffness, late = truth['simulation']['joint_changes']
    assert wear['time_s'] == 0.3 and wear['applied_s'] == pytest.approx(0.3) and wear['sample'] == 75
    assert list(wear['before']) == ['elbow_joint'] and wear['joints'] == ['elbow_joint']
    elbow, e = wear['after']['elbow_joint'], 2
    assert elbow['coulomb'] == pytest.approx(1.5 * joints['coulomb'][e])
    assert elbow['load_coefficient'] == pytest.approx(1.5 * joints['load_coefficient'][e])
    assert elbow['static'] - elbow['coulomb'] == pytest.approx(joints['static'][e] - joints['coulomb'][e])
    assert elbow['viscous1'] == pytest.approx(joints['viscous1'][e] + 0.02)
    assert wear['before']['elbow_joint']['coulomb'] == joints['coulomb'][e]
    # 0.61 s at 250 Hz is between samples 152 and 153: the first sample at or after it is 153 (0.612 s).
    assert stiffness['sample'] == 153 and stiffness['applied_s'] == pytest.approx(0.612)
    assert set(stiffness['after']) == {'shoulder_lift_joint', 'elbow_joint'}
    for name, before in stiffness['before'].items():
        after = stiffness['after'][name]
        assert after['alpha1'] == pytest.approx(0.5 * before['alpha1'])
        assert after['alpha3'] == pytest.approx(0.5 * before['alpha3'])
    assert stiffness['before']['elbow_joint']['coulomb'] == elbow['coulomb']  # the wear change stays
    assert late['applied_s'] is None and late['joints'] == 'all'  # after the end of the run: not applied


@pytest.mark.parametrize('spec, reason', [
    ('time=10,stiffness_scale=-0.5', 'stiffness_scale must be > 0'),
    ('time=10,stiffness_scale=0.5,joints=shoulder_pan', "unknown joints ['shoulder_pan']"),
    ('time=ten,coulomb_scale=1.5', 'must be a number'),
    ('time=10,wear=2', "unknown key 'wear'"),
    ('time=10', 'changes nothing'),
])
def test_bad_change_strings_exit_2_and_write_nothing(tmp_path, capsys, spec, reason):
    out = tmp_path / 'rec'
    code = main(['simulate', '--quiet', '--duration', '0.5', '--change', spec, '-o', str(out)])
    error = capsys.readouterr().err
    assert code == 2 and reason in error and error.count('\n') == 1, error
    # the field joint_changes as the command line spells it; an unknown joint is found later, at the change's time
    assert f'--change {spec!r}' in error or 'joint change at 10 s' in error, error
    assert not out.exists()


def test_a_bad_joint_changes_list_in_a_trajectory_file_exits_2(ur5e, tmp_path, capsys):
    path = tmp_path / 'traj.yaml'
    save_trajectory(FourierTrajectory(ur5e.joint_names, 0.5, home_configuration(ur5e), np.zeros((6, 1)),
                                      np.full((6, 1), 0.05)), path)
    document = yaml.safe_load(path.read_text())
    document['joint_changes'] = [{'time_s': 1.0, 'coulomb_scale': 0.0}]
    path.write_text(yaml.safe_dump(document))
    out = tmp_path / 'rec'
    assert main(['simulate', '--quiet', '--trajectory', str(path), '-o', str(out)]) == 2
    error = capsys.readouterr().err
    assert 'joint_changes[0]' in error and 'coulomb_scale must be > 0' in error and not out.exists()
