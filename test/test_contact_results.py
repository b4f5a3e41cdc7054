"""Every result dynid identify writes is one the contact observer takes: each --torque, --physical, a payload, coupled
drives, the advice identify prints and the ways out of a refusal, on short twin recordings (8 s at 250 Hz)."""

import dataclasses
import re

import numpy as np
import pytest
import yaml

from builders import coupled_wrist_twin
from cli_run import run_dynid
from dynid.contact.dynamics import ObserverModel
from dynid.identify.result.result import IdentificationResult
from dynid.identify.result.torque import RigidBodyTorque
from dynid.model import load_robot
from dynid.model.inertial import Payload

SIM = ('--duration', '8', '--rate', '250', '--quiet')


@pytest.fixture(scope='module')
def bags(tmp_path_factory):
    folder = tmp_path_factory.mktemp('contact_results')
    for name, extra in (('contract', ('--seed', '1')),  # joint torque, currents and motor encoders (the contract's)
                        ('ur', ('--seed', '2', '--joint-states-effort', 'current_as_torque')),  # UR: K·i as effort
                        ('payload', ('--seed', '3', '--payload', '2'))):
        assert run_dynid('simulate', *SIM, *extra, '-o', folder / name).returncode == 0
    return folder


def _accepted(folder, bag, result, identify_args=(), contact_args=()):
    """``dynid identify`` then ``dynid contact`` on its result: both exit 0, and the observer's inverse dynamics
    reproduces the result's own torque (relative error within the check's tolerance)."""
    identified = run_dynid('identify', folder / bag, '-o', result, '--quiet', *identify_args)
    assert identified.returncode == 0, identified.stderr
    contact = run_dynid('contact', folder / bag, '--params', result, *contact_args)
    assert contact.returncode == 0, contact.stderr
    loaded = IdentificationResult.load(result)
    payload = None
    if '--payload' in contact_args:
        payload = Payload(float(contact_args[contact_args.index('--payload') + 1]), [0.0, 0.0, 0.05])
    model = ObserverModel(loaded, load_robot('ur5e'), payload)
    assert model.inverse_dynamics_error <= model.inverse_dynamics_tolerance
    return loaded, identified


@pytest.mark.parametrize('bag, identify_args, contact_args, source, physical', [
    ('contract', (), (), 'current', None),  # the default: auto-chosen prior and physical consistency
    ('contract', ('--torque', 'current', '--no-prior', '--force'), (), 'current', False),
    ('ur', ('--joint-states-effort', 'current_as_torque'), ('--joint-states-effort', 'current_as_torque'), 'current',
     None),
    ('ur', ('--joint-states-effort', 'torque', '--torque', 'motor_torque', '--physical'),
     ('--joint-states-effort', 'torque'), 'motor_torque', True),
    ('ur', ('--joint-states-effort', 'torque', '--torque', 'motor_torque', '--no-prior', '--force'),
     ('--joint-states-effort', 'torque'), 'motor_torque', False),
    ('payload', ('--payload-mass', '2', '--payload-com', '0,0,0.05', '--physical'), ('--payload', '2'), 'current',
     True),
])
def test_each_torque_reading_physical_and_payload_is_accepted(bags, tmp_path, bag, identify_args, contact_args,
                                                                source, physical):
    result, _ = _accepted(bags, bag, tmp_path / 'result.yaml', identify_args, contact_args)
    assert result.model['torque_source'] == source
    if physical is not None:
        assert (result.physical_section is not None) == physical


def test_a_load_term_whose_friction_would_exceed_its_load_is_left_out_and_the_result_accepted(bags, tmp_path):
    """With --physical --method wls the folds keep a load term on wrist_3, whose output torque stays near 0.01 N·m:
    Fl_6 ~ 3e3, ~6e3 N·m of friction on the measured torque the observer once evaluated it on. Its first fit's
    friction at the recording's largest output torque exceeds that torque, so the load term is left out there, the
    laws chosen again, and the result is the observer's. The twin's own coefficients stay inside that bound at every
    load up to the effort limits."""
    from dynid.identify.selection.choice import LOAD_FRICTION_OVER_LOAD_MAX
    from dynid.sim.parameters import PlantParameters

    result, _ = _accepted(bags, 'contract', tmp_path / 'result.yaml', ('--physical', '--method', 'wls'))
    assert result.model['torque_source'] == 'current' and result.physical_section is not None
    choice = result.model['choice']
    assert choice['tried']['load_not_tried']['wrist_3_joint'] == 'beyond the load'
    assert 'load' not in choice['friction_terms']['wrist_3_joint'] and result.value('Fl_6') == 0.0
    assert choice['tried']['load_kept_on'] == ['wrist_3_joint']
    assert any(line.startswith('load-dependent friction left out on wrist_3_joint and the laws chosen again without '
                               'it, the folds having kept it on wrist_3_joint') for line in choice['lines'])
    robot = load_robot('ur5e')
    truth = PlantParameters.defaults(robot).joints.load_coefficient
    assert np.all(truth * robot.effort_limits < LOAD_FRICTION_OVER_LOAD_MAX)


@pytest.mark.parametrize('law, symbol', [('load_squared', 'Fl'), ('load_absolute', 'Fl'), ('comprehensive', 'fL')])
def test_a_load_law_given_holds_the_load_term_where_its_fit_is_no_friction_and_the_result_is_accepted(
        bags, tmp_path, law, symbol):
    """A load-dependent law given (not chosen) on the 8 s recording: wrist_3's output torque stays near 0.01 N·m and
    its fitted load coefficient comes out at about −1e6 /(N·m) (−158 for the absolute load): friction falling with the
    load, ~1e6 N·m on the measured torque the observer once took as its load, refusing the result. The term is held at
    0 there and on every joint whose fit falls with the load, the law fitted again, the warning says so, and the
    observer takes the result; the other joints keep their load terms, none falling."""
    result, _ = _accepted(bags, 'contract', tmp_path / 'result.yaml', ('--friction', law, '--force'))
    held = result.model['held']
    assert f'{symbol}_6' in held and result.value(f'{symbol}_6') == 0.0
    reason = ('the law given; its fit on the recording had friction falling with the load (the load laws model '
              'friction that grows with it)')
    assert held[f'{symbol}_6']['reason'] == reason
    line = next(line for line in result.warnings if line.startswith('held, not identified'))
    assert f'{symbol}_6 = 0' in line and reason in line, result.warnings
    free = [j for j in range(1, 7) if f'{symbol}_{j}' not in held]
    assert free and all(result.value(f'{symbol}_{j}') >= 0.0 for j in free)


def test_the_observer_evaluates_a_load_law_on_the_gears_load_as_identify_fits_it(bags, tmp_path):
    """A load law's friction f(ω, τ_out) is fitted on the output torque τ_out, the rigid-body torque. A motion without
    contact measures τ_m = τ_out + f; the observer's friction there (ObserverModel.friction_at, its load τ_m less the
    law's friction at zero load) is the law at τ_out but for the load term's own share of that load: off by
    (2·x + x²) times the term Fl·τ_out², x = Fl·|τ_out| (wrist 2 here: x up to 0.30). The law evaluated on τ_m
    itself, as the observer did before, is off by 2·Fl·τ_out·f, ten times more."""
    result, _ = _accepted(bags, 'contract', tmp_path / 'result.yaml', ('--friction', 'load_squared', '--force'))
    robot = load_robot('ur5e')
    model = ObserverModel(result, robot)
    t = np.linspace(0.0, 4.0, 400)[:, None]
    q = 0.6 * np.sin(2.0 * t + np.arange(6))
    dq, ddq = 1.2 * np.cos(2.0 * t + np.arange(6)), -2.4 * np.sin(2.0 * t + np.arange(6))
    output = RigidBodyTorque(result, robot)(q, dq, ddq)
    law = model.friction_torque(dq, output, 25.0)
    measured = output + law
    loaded = [j for j in range(6) if result.value(f'Fl_{j + 1}') > 0.0]
    assert loaded, 'no joint keeps a load term'
    ours = model.friction_at(dq, measured, 25.0)
    before = model.friction_torque(dq, measured, 25.0)
    term = np.abs(law - model.friction_torque(dq, np.zeros_like(output), 25.0))[:, loaded]  # Fl·τ_out²
    coefficient = np.array([result.value(f'Fl_{j + 1}') for j in loaded])
    assert np.abs(before - law)[:, loaded].max() > 10.0 * np.abs(ours - law)[:, loaded].max()
    x = coefficient * np.abs(output[:, loaded])
    assert np.all(np.abs(ours - law)[:, loaded] <= (2.0 * x + x * x) * term * 1.01 + 1e-9)


def test_a_result_whose_friction_passes_the_limits_is_refused_by_its_friction_and_the_advice_works(bags, tmp_path):
    """The same result with wrist_3's load coefficient as the folds once kept it (Fl_6 = 3316 /(N·m)): the observer
    refuses it naming the result's friction, not the input; identify again as the refusal says, and it is accepted."""
    args = ('--physical', '--method', 'wls')
    _accepted(bags, 'contract', tmp_path / 'result.yaml', args)
    document = yaml.safe_load((tmp_path / 'result.yaml').read_text())
    entry = next(row for row in document['friction'] if row['name'] == 'Fl_6')
    entry['value'] = 3316.0
    (tmp_path / 'kept.yaml').write_text(yaml.safe_dump(document, sort_keys=False))
    refused = run_dynid('contact', bags / 'contract', '--params', tmp_path / 'kept.yaml')
    assert refused.returncode == 2, refused.stderr
    assert 'the result\'s own friction passes them too (wrist_3_joint up to' in refused.stderr, refused.stderr
    assert 'Fl_6 = 3316 /(N·m)' in refused.stderr and 'misread input' not in refused.stderr
    advice = re.findall(r'\((--friction \S+)\)$', refused.stderr.strip())
    assert advice == ['--friction auto'], refused.stderr
    followed, _ = _accepted(bags, 'contract', tmp_path / 'followed.yaml', (*args, *advice[0].split()))
    assert followed.value('Fl_6') == 0.0


def test_the_result_of_the_advice_identify_gives_is_accepted(bags, tmp_path):
    # UR's K·i read as joint torque: identify says it carries the drive's friction and advises --torque motor_torque;
    # followed, the result (rotor inertias regrouped with links 1 and 2, a physical section) is the observer's
    effort = ('--joint-states-effort', 'torque')
    _, first = _accepted(bags, 'ur', tmp_path / 'first.yaml', effort, effort)
    advice = re.findall(r'give (--torque \S+)', first.stdout + first.stderr)
    assert advice == ['--torque motor_torque'], first.stdout + first.stderr
    followed, _ = _accepted(bags, 'ur', tmp_path / 'followed.yaml', (*effort, *advice[0].split()), effort)
    assert followed.model['torque_source'] == 'motor_torque' and followed.physical_section is not None
    rotors = set(followed.physical_section['rotor_inertia'])
    assert rotors == set(load_robot('ur5e').joint_names)
    assert 'Ia_1' not in followed.parameter_names  # regrouped with a link's: held by the base parameters


def test_the_result_of_each_way_out_of_a_refusal_is_accepted(bags, tmp_path):
    refused_args = ('--torque', 'current', '--no-prior')
    refused = run_dynid('identify', bags / 'contract', '-o', tmp_path / 'refused.yaml', '--quiet', *refused_args,
                        '--method', 'ols')
    assert refused.returncode != 0
    ways = re.findall(r'(without --no-prior|--decimation-cutoff \d+(?:\.\d+)?|--method \w+|--force)\b', refused.stderr)
    assert '--force' in ways and len(set(ways)) >= 2, refused.stderr
    for k, way in enumerate(dict.fromkeys(ways)):  # each as the advice spells it; kept with --force where refused
        given = tuple(a for a in refused_args if a != '--no-prior') if way == 'without --no-prior' else \
            (*refused_args, *way.split())
        options = (*given, *(() if way.startswith('--method') else ('--method', 'ols')))
        _accepted(bags, 'contract', tmp_path / f'way{k}.yaml', (*options, *(() if way == '--force' else ('--force',))))


def test_a_coupled_wrist_result_is_accepted_and_its_contact_free_residual_is_small():
    from dynid.contact.observer import MomentumObserver
    from dynid.identify.equations.request import ModelSpec, RecordingInput
    from dynid.identify.steps.run import identify
    from dynid.sim.recording import record_to_dataset

    robot = load_robot('ur5e')
    coupling = np.eye(6)
    coupling[4, 4], coupling[5, 4] = -1.0, 1.0  # motor 5 turns against q5; motor 6 with q5 + q6
    drives = dataclasses.replace(robot.drives, coupling=coupling)
    train, free = (record_to_dataset(coupled_wrist_twin(robot, coupling, seed, 8.0, 250.0), None, {})
                   for seed in (3, 4))
    result = identify(robot, [RecordingInput(train)], ModelSpec(friction='viscous_coulomb'), drives=drives)
    assert result.recorded_coupling() is not None

    def residual(result):
        model = ObserverModel(result, robot)
        assert model.inverse_dynamics_error <= model.inverse_dynamics_tolerance
        samples = MomentumObserver(model, 50.0).run(free.t, free.q, free.dq, free.current, free.tau, free.dtheta)
        return np.sqrt(np.mean(samples.external[free.t > 1.0] ** 2, axis=0))

    coupled = residual(result)
    # the same model read as if each motor drove its own joint: q5's τ̂_ext then holds motor 6's torque (τ = Cᵀ·τ_m);
    # q6's torque is motor 6's alone either way (C's last column), so only its friction velocity differs
    ignored = dataclasses.replace(result, provenance={**result.provenance, 'drives': {
        'joints': dataclasses.replace(drives, coupling=None).to_dict()}})
    plain = residual(ignored)
    assert coupled[4] < 0.5 * plain[4], (coupled, plain)
    assert np.all(coupled < 0.05 * robot.effort_limits), coupled


@pytest.fixture(scope='module')
def rounded_panda(tmp_path_factory):
    """example-robot-data's Panda with its right angles written 1.5706 (a vendor's rounding): the base decomposition's
    regrouping then holds only to its rank tolerance (Y·χ − W_b·K·χ of ~1e-10 of the torque); a twin recording of it,
    the result identify writes (--physical), and the same URDF with link 4's offset 1 % longer."""
    from dynid.model.robots import example_robot_path

    folder = tmp_path_factory.mktemp('rounded_panda')
    text = example_robot_path('panda_description/urdf/panda.urdf').read_text()
    urdf, longer = folder / 'panda.urdf', folder / 'longer.urdf'
    urdf.write_text(text.replace('1.5707963267948966', '1.5706'))
    longer.write_text(text.replace('1.5707963267948966', '1.5706').replace('xyz="0.0825 0 0"', 'xyz="0.083325 0 0"'))
    assert run_dynid('simulate', '--robot', urdf, *SIM, '-o', folder / 'bag').returncode == 0
    identified = run_dynid('identify', folder / 'bag', '--robot', urdf, '-o', folder / 'result.yaml', '--quiet',
                           '--physical')
    assert identified.returncode == 0, identified.stderr
    return folder


def test_a_result_on_a_rounded_urdf_is_checked_at_round_off_beside_its_base_decomposition(rounded_panda):
    """The check takes off what the base decomposition itself leaves (Y·χ − W_b·K·χ on the check's states, 1e-10 of
    the torque here; 1.6e-8 to 1.5e-7 reported on a vendor's URDF): what is left is round-off, within 64·ε·S."""
    from dynid.model.robot import RobotModel

    result = IdentificationResult.load(rounded_panda / 'result.yaml')
    robot = RobotModel.from_urdf(str(rounded_panda / 'panda.urdf'), joints=list(result.joint_names))
    q, dq, ddq = robot.random_states(8, seed=11)
    arm = 10 * robot.n
    chi = result.standard_parameters()
    regressor = robot.regressor(q, dq, ddq)[:, :arm]
    residual = regressor @ chi - regressor[:, robot.base.indices] @ (robot.base.regrouping[:, :arm] @ chi)
    torque = np.abs(regressor @ chi).max()
    assert np.abs(residual).max() > 1e-11 * (1.0 + torque)  # the decomposition's own, seen by the old check
    model = ObserverModel(result, robot)
    assert model.inverse_dynamics_error < 1e-13
    assert model.inverse_dynamics_error <= model.inverse_dynamics_tolerance < 1e-12
    contact = run_dynid('contact', rounded_panda / 'bag', '--robot', rounded_panda / 'panda.urdf', '--params',
                        rounded_panda / 'result.yaml')
    assert contact.returncode == 0, contact.stderr


def test_a_result_read_on_a_urdf_with_a_link_one_percent_longer_is_refused(rounded_panda):
    """The physical section's χ on the longer link's K is not the result's χ̂_b: 1e-3 of the torque, 1e12 round-offs."""
    contact = run_dynid('contact', rounded_panda / 'bag', '--robot', rounded_panda / 'longer.urdf', '--params',
                        rounded_panda / 'result.yaml')
    assert contact.returncode == 2
    found = re.search(r'relative error (\S+), round-off allows (\S+)\): identified for another robot model\?',
                      contact.stderr)
    assert found, contact.stderr
    assert float(found[1]) > 1e-4 and float(found[2]) < 1e-12
