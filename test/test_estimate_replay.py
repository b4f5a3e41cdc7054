"""`dynid estimate`: the offline replay of the online estimators (dynid.estimate.replay).

One short twin recording (UR5e, 4 s at 500 Hz, the true stiffness of shoulder_lift_joint halved at
1.5 s) made through ``dynid simulate``; the identification result is the twin's truth (base
parameters, Coulomb, viscous and load coefficients), so that the replay is judged on the estimators
and not on an identification of a few seconds.
"""

import dataclasses

import numpy as np
import pytest
import yaml

from builders import truth_result
from dynid.cli import main
from dynid.errors import InputError
from dynid.estimate import EstimationSettings, StiffnessEstimator, build_estimators, estimate
from dynid.estimate.projection import projection_bounds
from dynid.estimate.report import summary_lines
from dynid.identify.friction_fit.identified import joint_friction_of
from dynid.identify.result.result import IdentificationResult
from dynid.io.bag import read_bag, write_bag
from dynid.io.dataset import Dataset
from dynid.model import load_robot
from dynid.model.drives import JointDrives

RATE = 500.0
CHANGE_S = 1.5
JOINT = 'shoulder_lift_joint'  # holds the arm against gravity: deflected all the time, so it learns


@pytest.fixture(scope='module')
def twin(tmp_path_factory):
    folder = tmp_path_factory.mktemp('replay')
    bag = folder / 'rec'
    code = main(['simulate', '--quiet', '--duration', '4', '--rate', str(RATE), '--change',
                 f'time={CHANGE_S},stiffness_scale=0.5,joints={JOINT}', '-o', str(bag)])
    assert code == 0
    truth = yaml.safe_load((bag / 'truth.yaml').read_text())
    result = truth_result(truth)
    params = result.save(folder / 'result.yaml')
    robot = load_robot('ur5e')
    return {'bag': bag, 'params': params, 'result': result, 'robot': robot, 'truth': truth,
            'dataset': read_bag(bag, joint_names=robot.joint_names), 'folder': folder}


def _step_by_step(estimators, dataset: Dataset) -> dict:
    """The estimators fed one sample per update; rows from ``delay`` on (the described samples)."""
    outputs = {'stiffness': [], 'friction': []}
    for k in range(dataset.n_samples):
        sample = (dataset.q[k:k + 1], dataset.theta[k:k + 1], dataset.current[k:k + 1],
                  dataset.temperature[k:k + 1])
        outputs['stiffness'].append(estimators.stiffness.update(*sample))
        outputs['friction'].append(estimators.friction.update(*sample))
    d = estimators.delay
    return {'stiffness_alpha': np.concatenate([o.alpha for o in outputs['stiffness']])[d:],
            'fit': np.concatenate([o.fit for o in outputs['stiffness']])[d:],
            'learning': np.concatenate([o.learning for o in outputs['stiffness']])[d:],
            'friction_alpha': np.concatenate([o.alpha for o in outputs['friction']])[d:],
            'friction_active': np.concatenate([o.active for o in outputs['friction']])[d:]}


def test_replay_equals_sample_by_sample_and_any_batch_size(twin):
    dataset = twin['dataset'].sliced(0, 400)  # 0.8 s: start-up, learning and adaptation
    settings = EstimationSettings(damping=10.0)
    history = estimate(dataset, twin['result'], settings, twin['robot'])
    other = estimate(dataset, twin['result'], dataclasses.replace(settings, batch=7), twin['robot'])
    manual = _step_by_step(build_estimators(twin['robot'], twin['result'], settings, dataset.rate_hz), dataset)

    assert history.delay == 26  # 500 Hz: Savitzky–Golay window 51 → 25, central difference 1
    np.testing.assert_array_equal(history.time, dataset.t[:400 - history.delay])
    for field, expected in manual.items():
        for replay in (history, other):  # tolerance: 1e-9 relative (the estimators split exactly)
            np.testing.assert_allclose(getattr(replay, field), expected, rtol=1e-9, atol=1e-9, err_msg=field)
    assert history.learning[:, 1].any() and history.friction_active.any()  # the comparison saw learning
    assert np.ptp(history.friction_alpha[:, :, 0]) > 1e-4 and np.ptp(history.k0[:, 1]) > 1e3


def test_gaps_restart_the_front_end_and_keep_what_was_learned(twin):
    full = twin['dataset'].sliced(0, 700)
    keep = np.r_[0:300, 320:700]  # 20 samples (40 ms) lost
    dataset = Dataset(full.joint_names, full.t[keep], full.q[keep], full.dq[keep], current=full.current[keep],
                      theta=full.theta[keep], temperature=full.temperature[keep], source={'bag': 'gappy'})
    history = estimate(dataset, twin['result'], EstimationSettings(), twin['robot'])
    d = history.delay
    assert history.pieces == 2 and history.gaps.lost == 20
    assert history.time.size == (300 - d) + (380 - d)
    assert not np.any((history.time > full.t[299]) & (history.time < full.t[320]))  # nothing described in the gap
    end_of_first = 300 - d - 1
    # The second piece's front end starts again (its first rows learn nothing) from the learned state:
    np.testing.assert_array_equal(history.stiffness_alpha[end_of_first + 1], history.stiffness_alpha[end_of_first])
    np.testing.assert_array_equal(history.friction_alpha[end_of_first + 1], history.friction_alpha[end_of_first])
    assert history.k0[end_of_first, 1] > 1e4  # learned before the gap, not reset
    first = estimate(dataset.sliced(0, 300), twin['result'], EstimationSettings(), twin['robot'])
    np.testing.assert_allclose(history.stiffness_alpha[:end_of_first + 1], first.stiffness_alpha, rtol=1e-12)


def test_settings_are_validated_with_one_line_reasons():
    cases = [({'batch': 0}, 'batch must be an integer >= 1'), ({'batch': 2.5}, 'batch must be an integer'),
             ({'stiffness': False, 'friction': False}, 'nothing to estimate'),
             ({'damping': -1.0}, 'damping'), ({'damping': ()}, 'damping needs'),
             ({'forgetting': 1.5}, 'forgetting must be within'), ({'forgetting': float('nan')}, 'forgetting'),
             ({'freeze_s': -1}, 'freeze_s'), ({'window': 50}, 'window must be odd'), ({'order': 0}, 'order'),
             ({'fit_window_s': 0.0}, 'fit_window_s'), ({'friction': 'yes'}, 'friction must be true or false')]
    for options, message in cases:
        with pytest.raises(InputError, match=message):
            EstimationSettings(**options)
    assert EstimationSettings(damping=[1, 2, 3, 4, 5, 6]).damping == (1.0, 2.0, 3.0, 4.0, 5.0, 6.0)


def test_estimate_cli_tracks_the_halved_stiffness_and_writes_a_report(twin, capsys):
    out, report = twin['folder'] / 'estimate.yaml', twin['folder'] / 'report'
    damping = ','.join(str(d) for d in twin['truth']['plant']['joints']['damping'])
    code = main(['estimate', str(twin['bag']), '--params', str(twin['params']), '-o', str(out), '--report',
                 str(report), '--order', '1', '--forgetting', '0.999', '--damping', damping, '--batch', '100',
                 '--quiet'])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert JOINT in captured.out and captured.err == ''

    document = yaml.safe_load(out.read_text())
    assert document['dynid_estimate'] == 1 and document['settings']['order'] == 1
    final = document['summary']['joints'][JOINT]
    header = out.with_suffix('.csv').read_text().splitlines()[0].split(',')
    table = np.loadtxt(out.with_suffix('.csv'), delimiter=',', skiprows=1)
    assert header == document['history']['columns'] and header[0] == 'time_s'
    assert np.all(np.diff(table[:, 0]) > 0) and np.median(np.diff(table[:, 0])) == pytest.approx(0.01)
    alpha1 = table[:, header.index(f'{JOINT}/alpha1')]
    true_before = twin['truth']['plant']['joints']['alpha1'][1]  # 4e4 N·m/rad, halved at 1.5 s
    before = alpha1[np.searchsorted(table[:, 0], CHANGE_S) - 1]
    assert before == pytest.approx(true_before, rel=0.05)  # measured 1 %
    assert final['alpha1'] == pytest.approx(0.5 * true_before, rel=0.2)  # measured 9 %, 2.5 s after the change
    assert alpha1[-1] == pytest.approx(final['alpha1'])

    page = (report / 'index.html').read_text()
    assert all(name in page for name in twin['robot'].joint_names) and 'truth.yaml' in page
    assert (report / 'stiffness.png').stat().st_size > 10_000 and (report / 'friction.png').exists()

    code = main(['estimate', str(twin['bag']), '--params', str(twin['params']), '-o', str(out), '--quiet'])
    assert code == 2 and 'refusing to overwrite' in capsys.readouterr().err


def test_estimate_cli_without_motor_states_adapts_the_friction_alone(twin, capsys):
    """A bag without motor_states: the stiffness is refused with the reason; --no-stiffness adapts the friction
    with the drives of --drives (recorded in the output with their sha256) and the box of the options."""
    dataset = dataclasses.replace(twin['dataset'].sliced(0, 600), theta=None, dtheta=None)
    bag = write_bag(twin['folder'] / 'no_motor', dataset)
    code = main(['estimate', str(bag), '--params', str(twin['params']), '--quiet'])
    err = capsys.readouterr().err
    assert code == 2 and 'motor_states' in err and len(err.strip().splitlines()) == 1
    drives = twin['folder'] / 'drives.yaml'
    drives.write_text(yaml.safe_dump({'drives': twin['robot'].drives.to_dict()}))
    out = twin['folder'] / 'friction_only.yaml'
    code = main(['estimate', str(bag), '--params', str(twin['params']), '--no-stiffness', '--drives', str(drives),
                 '--alpha1-bounds', '0.9,1.1', '--bound-sigmas', '2', '-o', str(out), '--quiet'])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert 'no motor encoders' in captured.out and 'friction α1' in captured.out
    document = yaml.safe_load(out.read_text())
    assert document['settings']['alpha1_bounds'] == [0.9, 1.1] and document['settings']['bound_sigmas'] == 2.0
    assert len(document['inputs']['drives']['sha256']) == 64 and not document['settings']['stiffness']
    assert all(entry['friction_alpha1_bounds'] == [0.9, 1.1] for entry in document['summary']['joints'].values())
    code = main(['estimate', str(bag), '--params', str(twin['params']), '--no-stiffness', '--alpha2-bounds',
                 '0.1,0.2', '--quiet'])
    err = capsys.readouterr().err
    assert code == 2 and 'alpha2_bounds must contain 0' in err


def test_the_friction_estimator_takes_the_joint_friction_section_where_it_covers_the_joint(twin):
    """With a joint_friction section the adaptive friction estimator's Fc0, Fc1 (negative taken as 0), E-GMS
    laws and F_V(ω, T) are the section's JointFriction on the joints with an identified Fc0 (F_V at 20 °C
    where the recording has no temperature) plus the result's τ0 (an offset of its rigid-body fit, kept on every
    joint), the result's Fc, Fl and Fv·ω + τ0 on the others."""
    robot, result = twin['robot'], twin['result']
    offsets = [result.parameter_names.index(f'tau0_{j + 1}') for j in range(robot.n)]
    values = result.values.copy()
    values[offsets] = 0.02 * np.arange(1, robot.n + 1)  # the truth has none; an IDIM fit has some
    result = dataclasses.replace(result, values=values)
    section = {'model': {'egms_elements': 5}, 'joints': {
        'shoulder_pan_joint': {'parameters': {'Fc0': 2.0, 'Fs': 2.6, 'Vs': 0.05, 'mu': 1.5, 'Fv1': 4.0, 'Fv3': 0.2,
                                              'Fc1': -1e-4, 'Ft1': 0.02, 'backlash': 0.004, 'r_delta': 3.0}},
        'wrist_2_joint': {'parameters': {'Fc0': 0.7, 'Fv1': 1.5, 'Fc1': 2e-4}}}}
    covered = IdentificationResult.from_dict({**result.to_dict(), 'dynid_result': 2, 'joint_friction': section})
    model, mask = joint_friction_of(covered, robot)
    friction = build_estimators(robot, covered, EstimationSettings(stiffness=False), RATE).friction
    table = result.friction()
    idim = {s: np.array([table[name][s] for name in robot.joint_names]) for s in ('Fc', 'Fv', 'tau0', 'Fl')}
    np.testing.assert_array_equal(friction.coulomb, np.where(mask, [2.0, 0, 0, 0, 0.7, 0], idim['Fc']))
    np.testing.assert_array_equal(friction.load_coefficient, np.where(mask, [0, 0, 0, 0, 2e-4, 0], idim['Fl']))
    egms = friction.egms
    assert egms.elements == 5 and egms.r_delta.tolist() == [3.0, 4.0, 4.0, 4.0, 4.0, 4.0]
    assert egms.backlash_table[:, 0].tolist() == [0.004] + [0.001] * 5
    omega = np.linspace(-1.0, 1.0, 201)[:, None] * np.ones(robot.n)
    warm = np.full_like(omega, 35.0)
    np.testing.assert_allclose(friction.velocity_friction(omega, warm),
                               np.where(mask, model.remainder(omega, warm), idim['Fv'] * omega) + idim['tau0'])
    np.testing.assert_allclose(friction.velocity_friction(omega, np.full_like(omega, np.nan)),
                               np.where(mask, model.remainder(omega, np.full_like(omega, 20.0)),
                                        idim['Fv'] * omega) + idim['tau0'])


def test_the_projection_box_follows_the_identification():
    """Madsen 2020 ch.6 eq. (27) with the box of dynid.estimate.projection: α1 within 1 ± (c + k·σ(Fc)/Fc), α2 within
    ±(c·|Fv| + k·σ(Fv)), never narrower than the thesis' [0.4, 1.5] × [−0.05, 0.05]; given bounds replace the rule."""
    box = projection_bounds([3.0, 0.5, 2.0], [4.0, 0.01, 1.0], [0.3, np.nan, 0.0], [0.1, 0.0, np.nan],
                            friction_change=0.3, bound_sigmas=2.0)
    np.testing.assert_allclose(box[0], [[0.4, 1.5], [-1.4, 1.4]])  # w1 = 0.3 + 2·0.1 = 0.5: inside the thesis'
    np.testing.assert_allclose(box[1], [[0.4, 1.5], [-0.05, 0.05]])  # σ NaN counts 0; w2 = 0.003 < 0.05
    np.testing.assert_allclose(box[2], [[0.4, 1.5], [-0.3, 0.3]])
    wide = projection_bounds([3.0], [4.0], [0.3], [0.1])  # defaults c = 1, k = 3
    np.testing.assert_allclose(wide[0], [[0.0, 2.3], [-4.3, 4.3]])
    given = projection_bounds([3.0], [4.0], alpha1_bounds=(0.4, 1.5), alpha2_bounds=(-0.05, 0.05))
    np.testing.assert_array_equal(given[0], [[0.4, 1.5], [-0.05, 0.05]])
    for options, message in (({'alpha1_bounds': (1.2, 2.0)}, 'must contain 1'),
                             ({'alpha2_bounds': (0.5, 0.1)}, 'min < max'), ({'alpha1_bounds': 'wide'}, 'two numbers'),
                             ({'friction_change': -0.1}, 'friction_change'),
                             ({'bound_sigmas': np.inf}, 'bound_sigmas')):
        with pytest.raises(InputError, match=message):
            EstimationSettings(**options)


def test_friction_alone_on_a_recording_without_motor_states(twin):
    """No motor_states: with the stiffness off the friction is adapted on rigid joints (θ = q), in the box the
    result's values give, each estimate on an edge reported as capped; the stiffness is refused with the reason."""
    dataset = dataclasses.replace(twin['dataset'].sliced(0, 1000), theta=None, dtheta=None)
    robot, result = twin['robot'], twin['result']
    settings = EstimationSettings(stiffness=False)
    history = estimate(dataset, result, settings, robot)
    assert history.stiffness_alpha is None and history.friction_alpha.shape == (1000 - history.delay, robot.n, 2)
    assert any('no motor encoders' in note for note in history.notes) and history.friction_active.any()
    table = result.friction()
    fc, fv = (np.array([table[name][symbol] for name in robot.joint_names]) for symbol in ('Fc', 'Fv'))
    np.testing.assert_allclose(history.friction_bounds, projection_bounds(fc, fv))  # the truth result: σ = 0
    tight = estimate(dataset, result, dataclasses.replace(settings, alpha1_bounds=(0.99, 1.01)), robot)
    np.testing.assert_array_equal(tight.friction_capped, (tight.friction_alpha <= tight.friction_bounds[:, :, 0])
                                  | (tight.friction_alpha >= tight.friction_bounds[:, :, 1]))
    assert tight.friction_capped[..., 0].any()
    summary = tight.summary()['joints']
    capped = [name for name, entry in summary.items() if entry['friction_alpha1_capped']]
    lines = summary_lines(tight)
    assert capped and 'warning: friction estimates capped on ' + ', '.join(capped) in '\n'.join(lines)
    with pytest.raises(InputError, match='no motor_states .* the stiffness estimation needs both encoders'):
        estimate(dataset, result, EstimationSettings(), robot)


def test_drives_given_replace_the_robots_and_the_results(twin):
    """A robot without drive data (a bare URDF) estimates with the drives given; without any it is refused. Drives
    given win over those the result recorded (its drive gains, part of the identified model, over both)."""
    robot, result = twin['robot'], twin['result']
    bare, settings = robot.with_drives(None), EstimationSettings(stiffness=False)
    with pytest.raises(InputError, match='needs drive data'):
        build_estimators(bare, result, settings, RATE)
    given = JointDrives(robot.joint_names, 101.0, np.linspace(5.0, 10.0, robot.n), 0.3)
    assert build_estimators(bare, result, settings, RATE, drives=given).friction.drive_gain.tolist() == \
        given.drive_gain.tolist()
    recorded = dataclasses.replace(result, provenance={'drives': {'joints': robot.drives.to_dict()}})
    np.testing.assert_array_equal(build_estimators(bare, recorded, settings, RATE).friction.drive_gain,
                                  robot.drives.drive_gain)
    np.testing.assert_array_equal(build_estimators(bare, recorded, settings, RATE, drives=given).friction.rotor_inertia,
                                  given.rotor_inertia)
    gains = dataclasses.replace(recorded, drive_gains=np.full(robot.n, 7.0))
    assert build_estimators(bare, gains, settings, RATE, drives=given).friction.drive_gain.tolist() == [7.0] * robot.n


# ------------------------------------------------------------------------ rotor inertia and missing deflection
def _identified_rotor_inertia(result, robot, inertia):
    """``result`` as if it had identified the rotor inertias (``--torque motor_torque``): Ia_j of its own base
    parameter where the base model keeps one (Ia_3..Ia_6 on the UR5e; Ia_1, Ia_2 regroup with Izz_1, Izz_2)."""
    from dynid.identify.result.torque import structural_base

    rigid = list(structural_base(robot, [[]], 0, True).names)
    friction = [name for name in result.parameter_names if name not in rigid]
    values = [inertia[int(name[3:]) - 1] if name.startswith('Ia_') else result.value(name) for name in rigid]
    names, values = rigid + friction, np.array(values + [result.value(name) for name in friction])
    return dataclasses.replace(result, parameter_names=names, values=values, std=np.zeros(len(names)),
                               model={**result.model, 'rotor_inertia_identified': True})


def test_identified_rotor_inertia_replaces_the_drive_datas(twin):
    """B of the joints the result identified is the identified Ia_j in both estimators; where Ia_j regrouped with
    the link, the stiffness keeps the drive data's B and the friction 0 (its τ̂_j holds B·q̈ there): never twice."""
    robot = twin['robot']
    inertia = np.array([9.0, 9.0, 0.31, 0.12, 0.13, 0.14])  # Ia_1, Ia_2 are not base parameters: unused
    result = _identified_rotor_inertia(twin['result'], robot, inertia)
    built = build_estimators(robot, result, EstimationSettings(), RATE)
    drives = robot.drives.rotor_inertia
    np.testing.assert_array_equal(built.stiffness.rotor_inertia, [drives[0], drives[1], *inertia[2:]])
    np.testing.assert_array_equal(built.friction.rotor_inertia, [0.0, 0.0, *inertia[2:]])
    assert any('rotor inertia B from the result' in note and 'regrouped' in note for note in built.notes)
    plain = build_estimators(robot, twin['result'], EstimationSettings(), RATE)  # not identified: the drive data's
    np.testing.assert_array_equal(plain.friction.rotor_inertia, drives)


def test_an_identified_rotor_inertia_that_is_not_positive_is_refused(twin):
    robot = twin['robot']
    result = _identified_rotor_inertia(twin['result'], robot, [0.0, 0.0, 0.3, -0.02, 0.1, 0.1])
    with pytest.raises(InputError, match=r'not positive \(wrist_1_joint -0.02 kg·m²\)'):
        build_estimators(robot, result, EstimationSettings(), RATE)


def test_a_joint_whose_motor_states_are_its_link_positions_says_no_deflection_measured(twin):
    """θ = q on one joint (a robot with one encoder there): that joint's stiffness is 'no deflection measured', not
    k0 0 N·m/rad and a NaN fit; the other joints estimate as before."""
    dataset, j = twin['dataset'], 4
    theta = dataset.theta.copy()
    theta[:, j] = dataset.q[:, j]
    history = estimate(dataclasses.replace(dataset, theta=theta), twin['result'], EstimationSettings(friction=False),
                       twin['robot'])
    summary = history.summary()['joints']
    name = twin['robot'].joint_names[j]
    assert summary[name]['stiffness'] == 'no deflection measured' and summary[name]['k0'] is None
    assert summary[JOINT]['k0'] > 0 and 'stiffness' not in summary[JOINT]
    assert any(name in line and 'no deflection measured' in line for line in summary_lines(history))


def test_a_joint_deflected_only_at_rest_gives_no_numbers(twin):
    """A joint whose deflection left the dead zone only while it stood still learned from no sample: its α̂ never
    left the start, and the summary said k0 0 N·m/rad with a NaN fit (the demo's twin UR5e shoulder_pan in dynid
    estimate). It says 'deflected only at rest' and gives no numbers; the health record takes none either."""
    from dynid.estimate.replay import NOT_LEARNED

    fast = 1e3  # |rotor velocity| no joint reaches: nothing learns, while the joints deflect
    history = estimate(twin['dataset'], twin['result'], EstimationSettings(friction=False, min_velocity=fast),
                       twin['robot'])
    summary = history.summary()['joints']
    deflected = [name for name, moved in zip(twin['robot'].joint_names, history.deflected, strict=True) if moved]
    assert len(deflected) >= 4, history.deflected
    assert all(summary[name]['stiffness'] == NOT_LEARNED for name in deflected), summary
    assert all(entry['k0'] is None and entry['fit_percent'] is None for entry in summary.values()), summary
    assert any(NOT_LEARNED in line for line in summary_lines(history))


def test_the_friction_estimator_takes_the_comprehensive_law(twin):
    """A result in Li et al. 2024's comprehensive law (what the model choice gives where a joint keeps a viscous
    exponent): its fc, fL are the estimator's Coulomb level and load coefficient, its velocity friction
    fv·sgn(ω)·|ω|^α + fo; it was refused ('friction not adapted')."""
    robot, result = twin['robot'], twin['result']
    rename = {'Fc': 'fc', 'Fv': 'fv', 'tau0': 'fo', 'Fl': 'fL'}
    names = [f'{rename.get(symbol, symbol)}_{index}' if symbol in rename else name
             for name, (symbol, _, index) in ((name, name.rpartition('_')) for name in result.parameter_names)]
    alpha = np.linspace(0.3, 1.0, robot.n)
    data = result.to_dict()
    model = {**result.model, 'friction': 'comprehensive',
             'friction_symbols': [rename.get(s, s) for s in result.model['friction_symbols']]}
    comprehensive = dataclasses.replace(result, parameter_names=names, model=model, exponents=alpha)
    assert data['model']['friction'] != 'comprehensive'
    friction = build_estimators(robot, comprehensive, EstimationSettings(stiffness=False), RATE).friction
    assert friction is not None
    table = result.friction()
    idim = {s: np.array([table[name].get(s, 0.0) for name in robot.joint_names]) for s in ('Fc', 'Fv', 'tau0', 'Fl')}
    np.testing.assert_array_equal(friction.coulomb, idim['Fc'])
    omega = np.linspace(-1.0, 1.0, 201)[:, None] * np.ones(robot.n)
    np.testing.assert_allclose(friction.velocity_friction(omega, np.full_like(omega, np.nan)),
                               idim['Fv'] * np.sign(omega) * np.abs(omega) ** alpha + idim['tau0'])
    from dynid.health.session import identified_levels

    coulomb, viscous = identified_levels(comprehensive, robot.joint_names)  # the health record's levels
    np.testing.assert_array_equal(coulomb, idim['Fc'])
    np.testing.assert_array_equal(viscous, np.where(alpha == 1.0, idim['Fv'], np.nan))  # fv·|ω|^α: no Fv
    stiffness = StiffnessEstimator(robot.drives, comprehensive)  # its friction map too (it refused the law)
    np.testing.assert_allclose(stiffness.friction_torque(omega),
                               idim['Fc'] * np.sign(omega) + idim['Fv'] * np.sign(omega) * np.abs(omega) ** alpha
                               + idim['tau0'])
