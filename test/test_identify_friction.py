"""Joint friction identification (dynid identify-friction) on twin recordings of the friction experiments.

The twin's truth is ``PlantParameters.joints`` (Madsen 2020 ch.6 model: Stribeck map, Fc0 + Fc1·τ_j²,
reference-form temperature term, E-GMS with a backlash varying ±20 % over the output revolution). Its
E-GMS laws are set away from the thesis values the search starts from (r_Δ = 3, r_k = 1, B = 1.5 mrad),
so that recovering them means something. Recordings are short (20–40 s) and simulated with coarse
internal steps (4 ms; 2 ms for the hysteresis) to keep the module within a minute.
"""

import dataclasses

import numpy as np
import pytest
import yaml

from dynid.cli import main
from dynid.errors import InputError
from dynid.excite import experiments
from dynid.excite.trajectory import save_trajectory
from dynid.friction.static import StribeckMap
from dynid.friction.temperature import ReferenceTemperatureFriction
from dynid.identify.friction_fit.identified import joint_friction_of, write_joint_friction
from dynid.identify.friction_fit.identify import FrictionSettings, identify_joint_friction
from dynid.identify.friction_fit.recordings import FrictionRecording, classify_motion, friction_drives, parse_experiment
from dynid.identify.result.result import IdentificationResult
from dynid.io.dataset import Dataset
from dynid.model.drives import JointDrives
from dynid.model.inertial import Payload
from dynid.sim.parameters import PlantParameters
from dynid.sim.recording import record_to_dataset
from dynid.sim.twin import DigitalTwin, home_configuration, trajectory_start

TWIN_EGMS = {'egms_r_delta': 3.0, 'egms_r_k': 1.0}
TWIN_BACKLASH = 1.5e-3
PAYLOAD = Payload(5.0, [0.0, 0.0, 0.05])
PAN, LIFT = 0, 1


def rigid_body_result(robot) -> IdentificationResult:
    """A result holding the robot's true base parameters (the friction identification takes τ_j from it)."""
    base = robot.base
    values = base.from_standard(robot.standard_parameters)
    return IdentificationResult(
        robot=robot.name, joint_names=robot.joint_names, method='wls',
        model={'friction': 'viscous_coulomb', 'friction_symbols': []}, parameter_names=list(base.names),
        values=values, std=np.zeros(values.size), base_expressions=dict(zip(base.names, base.expressions, strict=True)))


def simulate(robot, trajectory, payload=None, rate=250.0, step=4e-3, temperature=20.0, **joints):
    """(dataset, true joint parameters) of the twin following ``trajectory`` at ambient 20 °C."""
    params = PlantParameters.defaults(robot, payload=payload)
    changed = dataclasses.replace(params.joints, backlash=np.full(robot.n, TWIN_BACKLASH), **TWIN_EGMS, **joints)
    params = dataclasses.replace(params, joints=changed.validated(robot.n))
    params.ambient_c, params.initial_temperature_c = 20.0, temperature
    twin = DigitalTwin(params, rate_hz=rate, max_step_s=step, initial_q=trajectory_start(trajectory, robot.joint_names))
    twin.follow(trajectory, start_time=0.0)
    record = twin.run(trajectory.duration_s + 0.5)
    return record_to_dataset(record, payload, {'simulation': 'test'}), params.joints


@pytest.fixture(scope='module')
def twin_runs(ur5e):
    """The five experiments: plateaus and a warm-up of the base joint (no load), plateaus and a gravity sweep of
    the shoulder with a 5 kg payload, a reciprocating sweep of the base joint; and the truth."""
    home = home_configuration(ur5e)
    shoulder = home.copy()
    shoulder[LIFT] = -1.2
    n = ur5e.n
    fast_heating = {'thermal_capacity': np.r_[2.5, np.full(n - 1, 400.0)],
                    'thermal_resistance': np.r_[100.0, np.full(n - 1, 2.0)],
                    'sensor_lag': np.r_[0.3, np.full(n - 1, 10.0)]}
    runs = {
        'plateaus_pan': simulate(ur5e, experiments.constant_velocity_plateaus(
            ur5e, PAN, home, speeds=(0.01, 0.02, 0.04, 0.08, 0.2, 0.5, 1.0, 1.6), hold_s=1.2)),
        'warm_up_pan': simulate(ur5e, experiments.constant_velocity_plateaus(
            ur5e, PAN, home, speeds=(0.1, 0.5, 1.2) * 2, hold_s=1.0), temperature=9.0, **fast_heating),
        'plateaus_lift': simulate(ur5e, experiments.constant_velocity_plateaus(
            ur5e, LIFT, shoulder, speeds=(0.01, 0.02, 0.04, 0.08, 0.2, 0.4, 0.7, 1.0), hold_s=1.2), PAYLOAD),
        'sweep_lift': simulate(ur5e, experiments.gravity_sweep(ur5e, LIFT, shoulder, speed=0.1, amplitude=0.5),
                               PAYLOAD),
        'reciprocating_pan': simulate(ur5e, experiments.reciprocating_sweep(ur5e, PAN, home, acceleration=0.2,
                                                                            cycles=8), rate=500.0, step=2e-3),
    }
    return {name: dataset for name, (dataset, _) in runs.items()}, runs['plateaus_pan'][1]


@pytest.fixture(scope='module')
def identified(ur5e, twin_runs):
    datasets, _ = twin_runs
    recordings = [FrictionRecording(dataset, name) for name, dataset in datasets.items()]
    return identify_joint_friction(recordings, rigid_body_result(ur5e), ur5e)


def true_map(truth, j) -> StribeckMap:
    return StribeckMap(Fc=truth.coulomb[j], Fs=truth.static[j], Fv1=truth.viscous1[j], Fv2=truth.viscous2[j],
                       Fv3=truth.viscous3[j], Vs=truth.stribeck_velocity[j], mu=truth.stribeck_shape[j])


def test_each_recording_is_told_by_its_motion(identified):
    found = {s.recording: (s.experiment, s.joint, s.found_by) for s in identified.signals}
    assert found == {'plateaus_pan': ('plateaus', 'shoulder_pan_joint', 'motion'),
                     'warm_up_pan': ('warm_up', 'shoulder_pan_joint', 'motion'),
                     'plateaus_lift': ('plateaus', 'shoulder_lift_joint', 'motion'),
                     'sweep_lift': ('gravity_sweep', 'shoulder_lift_joint', 'motion'),
                     'reciprocating_pan': ('reciprocating', 'shoulder_pan_joint', 'motion')}
    assert set(identified.joints) == {'shoulder_pan_joint', 'shoulder_lift_joint'}
    assert identified.torque_sources == ['current']


def test_every_parameter_has_sigma_and_every_fit_a_fit_percent(identified):
    for fit in identified.joints.values():
        assert set(fit.std) == set(fit.parameters)
        assert all(np.isfinite(fit.std[name]) and fit.std[name] > 0 for name in fit.parameters)
        for entry in fit.fits.values():
            assert np.isfinite(entry.result.nrmse_fit) and entry.experiments
        assert all(percent > 80.0 for percent in fit.model_fit_percent.values())  # noise 0.27 N·m per sample


def test_no_load_static_map_of_the_base_joint(identified, twin_runs):
    _, truth = twin_runs
    fit = identified.joints['shoulder_pan_joint']
    p = fit.parameters
    assert fit.sources['Fc0'] == 'static' and fit.fits['static'].result.nrmse_fit > 99.0
    assert p['Fc0'] == pytest.approx(truth.coulomb[PAN], rel=0.03)
    assert p['Fs'] == pytest.approx(truth.static[PAN], rel=0.08)
    assert p['Vs'] == pytest.approx(truth.stribeck_velocity[PAN], rel=0.3)
    assert p['Fv1'] == pytest.approx(truth.viscous1[PAN], rel=0.05)
    # Fv1–Fv3 trade off against each other; the map they make is what the plateaus determine: within
    # 0.05 N·m (1 % of the level) from 0.01 to 1.6 rad/s.
    w = np.r_[-np.geomspace(0.01, 1.6, 30), np.geomspace(0.01, 1.6, 30)]
    fitted = StribeckMap(p['Fc0'], p['Fs'], p['Fv1'], p['Fv2'], p['Fv3'], p['Vs'], p['mu'])
    np.testing.assert_allclose(fitted.evaluate(w), true_map(truth, PAN).evaluate(w), atol=0.05)
    direction = fit.fits['direction'].result.parameters  # the same level both ways, as the twin has
    assert direction['Fcp'] == pytest.approx(direction['Fcn'], rel=0.03)


def test_temperature_terms_from_the_warm_up(identified, twin_runs):
    _, truth = twin_runs
    p = identified.joints['shoulder_pan_joint'].parameters
    assert identified.joints['shoulder_pan_joint'].sources['Ft1'] == 'temperature'
    assert p['Ft1'] == pytest.approx(truth.temperature_linear[PAN], rel=0.1)
    # Ft2 weighs T⁻³, which only the first seconds near 9 °C see; the term it makes is what counts:
    # within 0.1 N·m at 1 rad/s over 10–45 °C (the twin's term spans 1.3 N·m there).
    temperatures = np.linspace(10.0, 45.0, 8)
    fitted = ReferenceTemperatureFriction(p['Ft1'], p['Ft2']).evaluate(np.ones(8), temperatures)
    true = ReferenceTemperatureFriction(truth.temperature_linear[PAN], truth.temperature_cubic[PAN])
    np.testing.assert_allclose(fitted, true.evaluate(np.ones(8), temperatures), atol=0.1)


def test_load_dependent_coulomb_of_the_shoulder(identified, twin_runs):
    _, truth = twin_runs
    fit = identified.joints['shoulder_lift_joint']
    p = fit.parameters
    assert fit.sources['Fc1'] == 'load' and fit.fits['load'].experiments == ['sweep_lift']
    assert p['Fc1'] == pytest.approx(truth.load_coefficient[LIFT], rel=0.05)
    # The shoulder's plateaus run under 40–75 N·m of gravity load: its no-load level needs Fc1 from the sweep.
    assert p['Fc0'] == pytest.approx(truth.coulomb[LIFT], rel=0.05)
    assert p['Fs'] == pytest.approx(truth.static[LIFT], rel=0.1)


def test_egms_laws_and_backlash_from_the_reciprocating_sweep(identified, twin_runs):
    datasets, truth = twin_runs
    fit = identified.joints['shoulder_pan_joint']
    p = fit.parameters
    assert fit.sources['backlash'] == 'egms' and fit.fits['egms'].result.nrmse_fit > 90.0
    # The twin's backlash is B·(1 + 0.2·sin θ); the sweep covers θ in [0, 0.55] rad: 1.5–1.66 mrad.
    theta = datasets['reciprocating_pan'].theta[:, PAN]
    seen = TWIN_BACKLASH * (1 + truth.backlash_variation[PAN] * np.sin([theta.min(), theta.max()]))
    assert 0.95 * seen.min() <= p['backlash'] <= 1.05 * seen.max()
    assert p['r_delta'] == pytest.approx(truth.egms_r_delta, rel=0.1)
    assert p['r_k'] == pytest.approx(truth.egms_r_k, abs=0.15)


def test_schema_round_trip_and_old_files(identified, ur5e, tmp_path):
    old = tmp_path / 'old.yaml'
    rigid_body_result(ur5e).save(old)
    document = yaml.safe_load(old.read_text())
    assert document['dynid_result'] == 1 and 'joint_friction' not in document  # no section: still version 1
    assert IdentificationResult.load(old).joint_friction() is None

    new = tmp_path / 'new.yaml'
    write_joint_friction(old, identified.section(), new)
    assert yaml.safe_load(old.read_text()) == document  # the source is left as it was
    loaded = IdentificationResult.load(new)
    assert yaml.safe_load(new.read_text())['dynid_result'] == 2
    table = loaded.joint_friction()
    assert set(table) == set(identified.joints)
    for joint, fit in identified.joints.items():
        assert table[joint] == pytest.approx(fit.parameters, rel=1e-12)
        section = loaded.joint_friction_section['joints'][joint]
        assert section['std'] == pytest.approx(fit.std, rel=1e-12)
        assert set(section['fits']) == set(fit.fits)
        assert all('nrmse_fit_percent' in entry and entry['experiments'] for entry in section['fits'].values())
    again = tmp_path / 'again.yaml'
    loaded.save(again)  # through the object: the section and version survive
    assert IdentificationResult.load(again).joint_friction() == table
    assert yaml.safe_load(again.read_text())['dynid_result'] == 2

    model, mask = joint_friction_of(loaded, ur5e)
    assert mask.tolist() == [True, True, False, False, False, False]
    theta, w = np.full((1, ur5e.n), 1.0), np.full((1, ur5e.n), 0.5)
    model.reset(theta[0], np.ones(ur5e.n))  # sliding forward at T0 without load: H = 1, the static map
    p = table['shoulder_pan_joint']
    expected = StribeckMap(p['Fc0'], p['Fs'], p['Fv1'], p['Fv2'], p['Fv3'], p['Vs'], p['mu']).evaluate(0.5)
    assert model.run(theta, w, np.zeros_like(w), np.full_like(w, 20.0))[0, PAN] == pytest.approx(expected, rel=1e-9)
    assert np.all(model.run(theta, w, np.zeros_like(w), np.full_like(w, 20.0))[0, ~mask] == 0.0)


def test_a_result_of_the_shifted_power_term_stays_version_3_with_the_section(identified, ur5e, tmp_path):
    """Version 3 (the comprehensive law's power term written from v_s) holds version 2's section: adding the section
    keeps 3, so that a reader of versions 1 and 2 still refuses the file."""
    from builders import identified as result_of

    old = result_of(ur5e, 'comprehensive', {'fc': 1.0, 'fv': 2.0}, exponents=np.full(ur5e.n, 0.5),
                    model={'power_form': 'shifted', 'power_velocity': 0.02}).save(tmp_path / 'old.yaml')
    assert yaml.safe_load(old.read_text())['dynid_result'] == 3
    new = write_joint_friction(old, identified.section(), tmp_path / 'new.yaml')
    assert yaml.safe_load(new.read_text())['dynid_result'] == 3
    loaded = IdentificationResult.load(new)
    assert loaded.power_velocity == 0.02 and set(loaded.joint_friction()) == set(identified.joints)


def test_malformed_sections_and_versions_are_refused(ur5e):
    data = rigid_body_result(ur5e).to_dict()
    for section in ({'joints': {'elbow': {'parameters': {'Fc0': 1.0}}}}, {'joints': {'elbow_joint': {}}},
                    {'joints': {'elbow_joint': {'parameters': {'Fc0': 'high'}}}}, ['x']):
        with pytest.raises(InputError, match='joint_friction'):
            IdentificationResult.from_dict({**data, 'dynid_result': 2, 'joint_friction': section})
    with pytest.raises(InputError, match='not a dynid result file'):
        IdentificationResult.from_dict({**data, 'dynid_result': 4})
    old = {**data, 'condition_number': 'nan'}  # files before numbers became null
    assert np.isnan(IdentificationResult.from_dict(old).condition_number)


def test_motion_classification_and_refusals(ur5e):
    t = np.arange(0.0, 20.0, 0.004)
    plateau = np.sign(np.sin(2 * np.pi * t / 4)) * np.repeat([0.1, 0.3, 0.6, 0.9, 0.2], t.size // 5 + 1)[:t.size]
    assert classify_motion(t, plateau, None, 'x', 3.0) == 'plateaus'
    assert classify_motion(t, plateau, np.linspace(10, 30, t.size), 'x', 3.0) == 'warm_up'
    assert classify_motion(t, np.full(t.size, 0.05) * np.sign(np.sin(2 * np.pi * t / 15)), None, 'x', 3.0) == \
        'gravity_sweep'
    triangle = 0.06 * (2 * np.abs(2 * ((t / 2.5) % 1) - 1) - 1)  # constant |q̈|, a reversal every 1.25 s
    assert classify_motion(t, triangle, None, 'x', 3.0) == 'reciprocating'
    with pytest.raises(InputError, match='cannot tell'):
        classify_motion(t, 0.5 * np.sin(0.4 * t), None, 'x', 3.0)  # smooth, one reversal, no plateau
    with pytest.raises(InputError, match='hardly moves'):
        classify_motion(t, 1e-4 * np.sin(t), None, 'x', 3.0)
    assert parse_experiment('plateaus:shoulder_pan_joint') == ('plateaus', 'shoulder_pan_joint')
    assert parse_experiment('auto') == (None, None)
    with pytest.raises(InputError, match='one of'):
        parse_experiment('fourier')

    q = np.zeros((t.size, ur5e.n))
    q[:, :2] = 0.3 * np.sin(t)[:, None]  # two joints move: not a friction experiment
    dataset = Dataset(ur5e.joint_names, t, q, np.gradient(q, t, axis=0), current=np.zeros_like(q))
    with pytest.raises(InputError, match='moves one joint'):
        identify_joint_friction([FrictionRecording(dataset, 'two')], rigid_body_result(ur5e), ur5e)
    with pytest.raises(InputError, match='cutoff_hz'):
        FrictionSettings(cutoff_hz=0.0)


def test_command_line(ur5e, tmp_path, capsys):
    trajectory, bag = tmp_path / 'reciprocating.yaml', tmp_path / 'bag'
    params, output = tmp_path / 'result.yaml', tmp_path / 'friction.yaml'
    rigid_body_result(ur5e).save(params)
    before = params.read_text()
    # What `dynid excite --experiment reciprocating --joint shoulder_pan_joint` writes, shorter (its 40 s at
    # 200 Hz make a 2 MB file that takes seconds to write and read).
    sweep = experiments.reciprocating_sweep(ur5e, PAN, home_configuration(ur5e), acceleration=0.2, cycles=4,
                                            rate_hz=20.0)  # positions, velocities, accelerations: exact at 20 Hz
    save_trajectory(sweep, trajectory, {'experiment': {'name': 'reciprocating', 'joint': 'shoulder_pan_joint'}})
    assert main(['simulate', '--trajectory', str(trajectory), '--rate', '250', '-o', str(bag), '--quiet']) == 0
    capsys.readouterr()
    assert main(['identify-friction', str(bag), '--params', str(params), '-o', str(output), '--quiet']) == 0
    printed = capsys.readouterr().out
    assert 'reciprocating of shoulder_pan_joint (found by trajectory file' in printed and 'backlash' in printed
    assert params.read_text() == before
    section = IdentificationResult.load(output).joint_friction_section
    assert section['recordings'][0]['found_by'] == 'trajectory file'
    egms = section['joints']['shoulder_pan_joint']
    assert set(egms['parameters']) == {'Fc0', 'backlash', 'r_delta', 'r_k'}  # no static map: the E-GMS scale
    assert egms['sources']['Fc0'] == 'egms'
    # --drives reaches the friction: drive gains 20 % higher make the motor torque, and so the Coulomb level, higher
    drives, stronger = tmp_path / 'drives.yaml', tmp_path / 'stronger.yaml'
    gains = ur5e.drives.with_drive_gain(1.2 * ur5e.drives.drive_gain)
    drives.write_text(yaml.safe_dump({'drives': gains.to_dict()}))
    assert main(['identify-friction', str(bag), '--params', str(params), '-o', str(stronger), '--drives', str(drives),
                 '--quiet']) == 0
    capsys.readouterr()
    raised = IdentificationResult.load(stronger).joint_friction_section['joints']['shoulder_pan_joint']
    assert raised['parameters']['Fc0'] > 1.05 * egms['parameters']['Fc0']

    for argv, reason in (
            ([str(bag), '--params', str(params), '-o', str(output)], 'exists'),
            ([str(bag), '--params', str(params), '--experiment', 'bogus'], 'must be one of'),
            ([str(bag), '--params', str(params), '--payload-mass', '1,2'], 'one mass per bag'),
            ([str(tmp_path / 'missing'), '--params', str(params)], 'does not exist'),
            ([str(bag), '--params', str(bag / 'truth.yaml')], 'not a dynid result file')):
        assert main(['identify-friction', *argv, '--quiet']) == 2
        err = capsys.readouterr().err.strip()
        assert err.count('\n') == 0 and reason in err


def test_load_dependence_from_a_reciprocating_sweep_under_load(ur5e):
    # Thesis B1's motion: the shoulder reverses many times while its load grows from 20 to 80 N·m. Without a
    # gravity sweep, its E-GMS fit gives the load law: f = (Fc0 + Fc1·τ_j²)·H(θ) with H of the found laws.
    from dynid.friction.egms import EGMS
    from dynid.identify.friction_fit.identify import fit_joint
    from dynid.identify.friction_fit.recordings import JointSignals

    sweep = experiments.reciprocating_sweep(ur5e, LIFT, home_configuration(ur5e), acceleration=0.2, cycles=8)
    t = np.arange(0.0, sweep.duration_s, 0.002)
    q, dq, _ = (values[:, LIFT] for values in sweep.evaluate(t))
    load = 20.0 + 60.0 * (q - q[0]) / np.ptp(q)
    hysteresis = EGMS(1, 4, 3.0, 1.0, 1.5e-3).run(q[:, None])[:, 0]
    friction = (2.5 + 1.5e-4 * load**2) * hysteresis + np.random.default_rng(0).normal(0.0, 0.2, t.size)
    signals = JointSignals('b1', 'reciprocating', 'shoulder_lift_joint', 'given', t, q, dq, friction, load, None)
    fit = fit_joint('shoulder_lift_joint', [signals])
    p = fit.parameters
    assert fit.sources['Fc1'] == 'load' and fit.fits['load'].experiments == ['b1']
    assert p['Fc0'] == pytest.approx(2.5, rel=0.03) and p['Fc1'] == pytest.approx(1.5e-4, rel=0.03)
    assert p['backlash'] == pytest.approx(1.5e-3, rel=0.05) and p['r_delta'] == pytest.approx(3.0, rel=0.05)
    assert p['r_k'] == pytest.approx(1.0, abs=0.1)
    assert all(np.isfinite(fit.std[name]) for name in p)


def test_drives_given_replace_the_recorded_and_the_robots(ur5e):
    """friction_drives: the drives given, else the result's recorded ones, else the robot's; the result's drive gains
    and identified rotor inertias Ia_j over any of them."""
    result = rigid_body_result(ur5e)
    given = JointDrives(ur5e.joint_names, 50.0, np.linspace(5.0, 10.0, ur5e.n), 0.2)
    assert friction_drives(result, ur5e) is ur5e.drives
    assert friction_drives(result, ur5e.with_drives(None)) is None
    assert friction_drives(result, ur5e, given).drive_gain.tolist() == given.drive_gain.tolist()
    recorded = dataclasses.replace(result, provenance={'drives': {'joints': given.to_dict()}})
    assert friction_drives(recorded, ur5e).gear_ratio.tolist() == [50.0] * ur5e.n
    assert friction_drives(recorded, ur5e, ur5e.drives).gear_ratio.tolist() == ur5e.drives.gear_ratio.tolist()
    gains = dataclasses.replace(recorded, drive_gains=np.full(ur5e.n, 7.0))
    assert friction_drives(gains, ur5e, ur5e.drives).drive_gain.tolist() == [7.0] * ur5e.n
