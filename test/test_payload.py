"""Payload identification (dynid.payload): a payload recovered on the twin from torque and from currents, the
refusals, physical consistency, the robots' payload settings and the payload file.

The twin runs are short (an 8 s wrist-and-elbow motion at 250 Hz, a 20 s arm excitation) so the tolerances are
wider than the benchmark's targets (bench_payload.py: 15 s at 500 Hz, 1 % / 10 g and 5 mm).
"""

import numpy as np
import pytest

from builders import MOTION_S, twin_run, ur_style, wrist_motion
from dynid.errors import InputError
from dynid.excite.trajectory import builtin_excitation_path, load_trajectory
from dynid.identify.equations.request import ModelSpec, RecordingInput
from dynid.identify.steps.run import IdentifyOptions, identify
from dynid.model import Payload, load_robot
from dynid.model.inertial import cylinder_inertia, pseudo_inertia, transform_parameters
from dynid.payload import PayloadSettings, identify_payload
from dynid.payload.document import load_payload, payload_document, payload_yaml
from dynid.payload.estimate import _consistent, check_payload_free
from dynid.payload.robot_calls import franka_set_load, payload_in_frame, robot_family, ur_set_payload
from dynid.sim.parameters import PlantParameters

PAYLOAD = Payload(2.0, [0.04, -0.03, 0.06], cylinder_inertia(2.0, 0.05, 0.12))


@pytest.fixture(scope='module')
def setting(ur5e):
    params = PlantParameters.defaults(ur5e)
    motion = wrist_motion(ur5e)
    arm = twin_run(params, load_trajectory(builtin_excitation_path('ur5e')), 20.0, 1)
    tare = twin_run(params, motion, MOTION_S, 2)
    loaded = twin_run(params, motion, MOTION_S, 3, PAYLOAD)
    results = {}
    for source, convert in (('joint_torque', lambda d: d), ('current', ur_style)):
        results[source] = identify(ur5e, [RecordingInput(convert(arm)), RecordingInput(convert(tare))],
                                   ModelSpec(torque_source=source), options=IdentifyOptions('wls'))
    return {'robot': ur5e, 'params': params, 'motion': motion, 'loaded': loaded, 'results': results}


@pytest.mark.parametrize('source', ['joint_torque', 'current'])
def test_payload_recovered_from_torque_and_from_current(setting, source):
    robot, result = setting['robot'], setting['results'][source]
    dataset = setting['loaded'] if source == 'joint_torque' else ur_style(setting['loaded'])
    estimate = identify_payload(result, robot, dataset)
    assert abs(estimate.mass - PAYLOAD.mass) <= 0.02 * PAYLOAD.mass  # 2 %: twice the benchmark's target
    assert np.linalg.norm(estimate.com - PAYLOAD.com) <= 0.008       # 8 mm
    assert estimate.mass_std > 0 and np.all(estimate.com_std > 0)
    # The payload explains the torques: the fit with it is far better than without.
    assert estimate.validation['with_payload']['rmse'] < 0.3 * estimate.validation['without_payload']['rmse']
    if estimate.inertia is None:
        assert 'not identifiable' in estimate.inertia_note
        assert estimate.min_pseudo_eigenvalue >= -1e-9  # a point mass's J: rank one, positive semidefinite
    else:
        assert np.linalg.eigvalsh(pseudo_inertia(estimate.parameters))[0] > 0
    assert set(estimate.joints) == set(robot.joint_names[2:])  # the resting joints' rows are left out


def test_payload_recovered_where_the_regressor_runs_below_the_recording_rate(ur5e):
    """At 1 kHz the regressor and the payload's columns are made on every fourth sample (250 Hz,
    dynid.signal.preprocess.regressor_stride), the measured torque brought there by an anti-aliasing low-pass: the
    payload's columns must be made on the same samples as the arm's."""
    from dynid.signal.preprocess import FilterSettings, regressor_stride

    assert regressor_stride(FilterSettings().validated(1000.0), 1000.0) == 4
    params, motion = PlantParameters.defaults(ur5e), wrist_motion(ur5e)
    arm = twin_run(params, load_trajectory(builtin_excitation_path('ur5e')), 20.0, 1, rate_hz=1000.0)
    tare = twin_run(params, motion, MOTION_S, 2, rate_hz=1000.0)
    result = identify(ur5e, [RecordingInput(arm), RecordingInput(tare)], ModelSpec(torque_source='joint_torque'),
                      options=IdentifyOptions('wls'))
    estimate = identify_payload(result, ur5e, twin_run(params, motion, MOTION_S, 3, PAYLOAD, rate_hz=1000.0))
    assert abs(estimate.mass - PAYLOAD.mass) <= 0.02 * PAYLOAD.mass  # 2 %, as at 250 Hz above
    assert np.linalg.norm(estimate.com - PAYLOAD.com) <= 0.008       # 8 mm


def test_inertia_never_and_always(setting):
    robot, result = setting['robot'], setting['results']['joint_torque']
    never = identify_payload(result, robot, setting['loaded'], PayloadSettings(inertia='never'))
    always = identify_payload(result, robot, setting['loaded'], PayloadSettings(inertia='always'))
    assert never.inertia is None and 'never' in never.inertia_note
    assert always.inertia is not None and always.inertia_std.shape == (3, 3)
    assert np.linalg.eigvalsh(pseudo_inertia(always.parameters))[0] > 0  # projected if it had to be


def test_no_payload_is_refused(setting):
    robot, params = setting['robot'], setting['params']
    empty = twin_run(params, setting['motion'], MOTION_S, 4)
    with pytest.raises(InputError, match='does not determine a payload'):
        identify_payload(setting['results']['joint_torque'], robot, empty)


def test_wrists_at_rest_are_refused(setting):
    robot, params = setting['robot'], setting['params']
    still = wrist_motion(robot, scale=0.0)
    with pytest.raises(InputError, match='wrists are not excited'):
        identify_payload(setting['results']['joint_torque'], robot, twin_run(params, still, 3.0, 5, PAYLOAD))


def test_result_with_a_payload_in_its_arm_parameters_is_refused(setting):
    robot = setting['robot']
    loaded = twin_run(setting['params'], load_trajectory(builtin_excitation_path('ur5e')), 10.0, 7, PAYLOAD)
    # Runs that all carry one payload of known mass only: its other parameters regroup into the arm's.
    mixed = identify(robot, [RecordingInput(loaded, payload_mass=PAYLOAD.mass)],
                     ModelSpec(torque_source='joint_torque'), options=IdentifyOptions('wls'))
    with pytest.raises(InputError, match='not payload-free'):
        check_payload_free(mixed)
    check_payload_free(setting['results']['joint_torque'])  # identified without a payload: accepted


def test_recording_of_another_robot_is_refused(setting):
    other = load_robot('ur10e')  # same joint names, other links
    run = twin_run(PlantParameters.defaults(other), setting['motion'], MOTION_S, 6, Payload(1.0, [0.0, 0.0, 0.05]))
    with pytest.raises(InputError, match='does not fit the result'):
        identify_payload(setting['results']['joint_torque'], setting['robot'], run)


def test_consistent_projection_gives_a_physical_body_no_better_than_the_unconstrained_fit():
    rng = np.random.default_rng(0)
    a = rng.normal(size=(200, 10))
    phi = Payload(1.5, [0.02, 0.01, 0.05], np.diag([0.01, 0.012, 0.002])).parameters()
    phi[4] -= 0.03  # Ixx about the origin too small for any body
    assert np.linalg.eigvalsh(pseudo_inertia(phi))[0] < 0
    r = a @ phi
    projected = _consistent(phi, a, r)
    assert np.linalg.eigvalsh(pseudo_inertia(projected))[0] > 0
    assert np.linalg.norm(a @ projected - r) > 0  # the constraint costs fit: the data's φ is not physical


def test_ur_and_franka_calls(ur5e, panda):
    payload = Payload(1.2, [0.01, 0.02, 0.08], np.array([[0.004, 0.0001, 0.0], [0.0001, 0.005, 0.0],
                                                         [0.0, 0.0, 0.002]]))
    ur = ur_set_payload(ur5e, payload, inertia_identified=True)
    assert ur['service'] == '/io_and_status_controller/set_payload' and ur['type'] == 'ur_msgs/srv/SetPayload'
    assert ur['frame'] == 'tool0' and ur['request']['mass'] == pytest.approx(1.2)
    assert ur['request']['center_of_gravity'] == pytest.approx({'x': 0.01, 'y': 0.02, 'z': 0.08})
    assert ur['request']['ixy'] == pytest.approx(1e-4)
    assert 'ixx' not in ur_set_payload(ur5e, payload, inertia_identified=False)['request']
    franka = franka_set_load(panda, payload, inertia_identified=True)
    assert franka['frame'] == 'panda_link8' and franka['type'] == 'franka_msgs/srv/SetLoad'
    assert franka['libfranka']['F_x_Cload'] == pytest.approx([0.01, 0.02, 0.08])
    assert np.reshape(franka['libfranka']['load_inertia'], (3, 3)).T == pytest.approx(payload.inertia)
    assert robot_family(ur5e) == 'ur' and robot_family(panda) == 'franka'


def test_payload_in_another_frame_of_the_last_link_is_the_same_body(ur5):
    robot = ur5  # flange tool0; wrist_3_link is the same link's joint frame
    payload = Payload(0.8, [0.03, 0.0, 0.05], np.diag([0.002, 0.003, 0.001]))
    expressed = payload_in_frame(robot, payload, 'wrist_3_link')
    model = robot.pinocchio_model
    to_target = model.frames[model.getFrameId('wrist_3_link')].placement
    # The same body: the link parameters it adds are the same whichever frame describes it.
    about_joint = transform_parameters(expressed.parameters(), to_target.rotation, to_target.translation)
    assert about_joint == pytest.approx(robot.payload_link_parameters(payload), abs=1e-12)


def test_payload_file_round_trip(setting, tmp_path):
    robot = setting['robot']
    estimate = identify_payload(setting['results']['joint_torque'], robot, setting['loaded'])
    document = payload_document(estimate, robot, PayloadSettings(), {'recording': 'loaded'})
    path = tmp_path / 'payload.yaml'
    path.write_text(payload_yaml(document))
    payload = load_payload(path, robot)
    assert payload.mass == pytest.approx(estimate.mass) and payload.com == pytest.approx(estimate.com)
    assert document['robot_settings']['ur_set_payload']['request']['mass'] == pytest.approx(estimate.mass, abs=1e-6)
    with pytest.raises(InputError, match='not a dynid payload file'):
        load_payload('mass: 1', text=True)
    with pytest.raises(InputError, match='not of the robot'):
        load_payload(path, load_robot('panda'))


def test_feedforward_takes_a_payload_update(ur5e):
    from dynid.control.feedforward import Feedforward

    feedforward = Feedforward(ur5e, None, ('rigid_body',))
    q, dq, ddq = ur5e.random_states(5, seed=2)
    before = feedforward.evaluate(q, dq, ddq)
    feedforward.set_payload(PAYLOAD)
    after = feedforward.evaluate(q, dq, ddq)
    expected = ur5e.inverse_dynamics(q, dq, ddq, PAYLOAD) - ur5e.inverse_dynamics(q, dq, ddq)
    assert after - before == pytest.approx(expected, abs=1e-9)
    feedforward.set_payload(None)
    assert feedforward.evaluate(q, dq, ddq) == pytest.approx(before, abs=1e-12)


def test_online_estimation_takes_a_payload_update(setting):
    from dynid.estimate.online import OnlineEstimation

    robot, result = setting['robot'], setting['results']['current']
    online = OnlineEstimation(robot, result, rate_hz=500.0)
    assert online.friction is not None  # viscous + Coulomb friction with Fc > 0: adapted
    q, dq, ddq = robot.random_states(3, seed=4)
    before = online.friction.joint_torque_model(q, dq, ddq)
    online.replace_payload(PAYLOAD, 'test')
    after = online.friction.joint_torque_model(q, dq, ddq)
    assert after - before == pytest.approx(robot.inverse_dynamics(q, dq, ddq, PAYLOAD)
                                           - robot.inverse_dynamics(q, dq, ddq), abs=1e-8)
