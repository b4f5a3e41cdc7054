"""The robot file as a prior for every method and whatever is held (issue 32 item 2, issue 31 item 4): I-IRLS and
friction on the output torque take it, a held parameter or a payload known by its mass does not switch it off."""

import dataclasses

import numpy as np
import pytest

from dynid.excite.fourier import FourierDesign, default_limits, random_design
from dynid.identify.equations.request import ModelSpec, RecordingInput
from dynid.identify.steps.run import IdentifyOptions, identify
from dynid.identify.validation.validate import validate
from dynid.model import load_robot
from dynid.model.inertial import parameters_from_com, split_parameters
from dynid.sim.parameters import PlantParameters
from dynid.sim.recording import record_to_dataset
from dynid.sim.twin import DigitalTwin, home_configuration


def _cad_file(robot, seed=11):
    """The twin's links off as a CAD model is: mass and inertia ±20–40 %, centre of mass moved by ~2 cm."""
    rng = np.random.default_rng(seed)
    standard = robot.standard_parameters.copy()
    for i in range(robot.n):
        mass, h, inertia = split_parameters(standard[10 * i:10 * i + 10])
        com = h / mass
        about_com = inertia - mass * (com @ com * np.eye(3) - np.outer(com, com))
        factor = 1 + rng.choice([-1, 1]) * rng.uniform(0.2, 0.4)
        standard[10 * i:10 * i + 10] = parameters_from_com(mass * factor, com + rng.normal(0, 0.02, 3),
                                                           about_com * factor)
    return robot.with_parameters(standard)


@pytest.fixture(scope='module')
def twin_runs():
    """8 s of a small random motion (poorly exciting, the twin's full friction) and 10 s of another, 500 Hz."""
    robot = load_robot('ur5e')
    params = PlantParameters.defaults(robot)
    home = home_configuration(robot)

    def record(seed, harmonics, seconds, amplitude):
        design = FourierDesign(robot.joint_names, harmonics, seconds)
        trajectory = design.trajectory(random_design(design, home, default_limits(robot, home),
                                                     np.random.default_rng(seed),
                                                     np.linspace(0, seconds, 4000, endpoint=False)))
        trajectory = dataclasses.replace(trajectory, sine=trajectory.sine * amplitude,
                                         cosine=trajectory.cosine * amplitude)
        twin = DigitalTwin(params, rate_hz=500.0, seed=seed, initial_q=trajectory.evaluate(np.array([0.0]))[0][0])
        twin.follow(trajectory)
        return record_to_dataset(twin.run(seconds), None, {})

    return robot, _cad_file(robot), record(100, 3, 8.0, 0.4), record(7, 5, 10.0, 1.0)


def test_iirls_takes_the_prior_and_predicts_a_new_motion_better(twin_runs):
    robot, cad, train, held = twin_runs
    spec = ModelSpec(friction='comprehensive')
    with_prior = identify(cad, [RecordingInput(train)], spec, drives=robot.drives, options=IdentifyOptions('iirls'))
    without = identify(cad, [RecordingInput(train)], spec, drives=robot.drives,
                       options=IdentifyOptions('iirls', physical=None))
    assert with_prior.prior_used and not without.prior_used
    assert 'not checked' in with_prior.prior_section['consistency']['decision']
    mine, theirs = (validate(r, cad, held)['relative_residual'] for r in (with_prior, without))
    assert mine < 0.9 * theirs


def test_friction_on_the_output_torque_keeps_the_prior(twin_runs):
    robot, cad, train, _ = twin_runs
    result = identify(cad, [RecordingInput(train)], ModelSpec(friction='load_squared'), drives=robot.drives)
    assert result.prior_used and result.prior_section['relative_std'] is not None


def test_a_held_parameter_keeps_the_prior(twin_runs):
    robot, cad, train, held = twin_runs
    spec = ModelSpec(exclude_joints=('wrist_3_joint',))
    result = identify(cad, [RecordingInput(train)], spec, drives=robot.drives)
    plain = identify(cad, [RecordingInput(train)], spec, drives=robot.drives, options=IdentifyOptions(physical=None))
    assert result.model['held'] and result.prior_used
    for name, entry in result.model['held'].items():  # held values stay as held, with σ 0
        k = result.parameter_names.index(name)
        assert result.values[k] == entry['value'] and result.std[k] == 0.0
    assert validate(result, cad, held)['relative_residual'] < validate(plain, cad, held)['relative_residual']


def test_a_payload_known_by_its_mass_keeps_the_prior_and_refuses_nothing_not_asked(twin_runs):
    robot, cad, train, _ = twin_runs
    result = identify(cad, [RecordingInput(train), RecordingInput(train, payload_mass=0.5)], drives=robot.drives)
    assert result.prior_used
    consistency = result.prior_section['consistency']
    assert consistency['decision'] == 'not checked' and 'payload' in consistency['note']


def test_a_left_out_joint_holds_its_rotor_inertia_where_it_is_identified(twin_runs):
    """Currents without motor encoders identify the rotor inertias; a left-out joint's (only its equations hold it)
    was a zero column, and the identification refused ('the data do not excite Ia_6')."""
    robot, cad, train, held = twin_runs
    assert train.current is not None
    no_encoders = dataclasses.replace(train, theta=None)
    result = identify(cad, [RecordingInput(no_encoders)], ModelSpec(exclude_joints=('wrist_3_joint',)),
                      drives=robot.drives)
    assert result.model['rotor_inertia_identified']
    entry = result.model['held']['Ia_6']
    assert entry['value'] == pytest.approx(robot.drives.rotor_inertia[5]) and 'left out' in entry['reason']
    assert 'Ia_5' not in result.model['held']
    metrics = validate(result, cad, dataclasses.replace(held, theta=None))
    assert metrics['joints']['wrist_3_joint']['rmse'] is None and metrics['relative_residual'] < 0.2


def test_a_rotor_inertia_not_known_is_identified_from_the_data_not_pinned_at_zero(twin_runs):
    """A drives file with rotor_inertia 0 (the gains known, the rotors not) and currents without motor encoders:
    the rotor inertias are identified, with no prior row (a spread of 0 pinned them at 0 and cost the fit)."""
    robot, cad, train, held = twin_runs
    unknown = dataclasses.replace(robot.drives, rotor_inertia=np.zeros(robot.n))
    no_encoders = [dataclasses.replace(d, theta=None) for d in (train, held)]
    result = identify(cad, [RecordingInput(no_encoders[0])], ModelSpec(friction='viscous_coulomb'), drives=unknown)
    assert result.prior_used and result.model['rotor_inertia_identified']
    truth = robot.drives.rotor_inertia
    for j in (2, 3):  # the elbow's and wrist_1's reflected rotor inertias (Ia_1, Ia_2 are regrouped with links)
        value = result.value(f'Ia_{j + 1}')
        assert abs(value - truth[j]) < 0.3 * truth[j], (j, value, truth[j])
    assert validate(result, cad, no_encoders[1], drives=unknown)['relative_residual'] < 0.05
