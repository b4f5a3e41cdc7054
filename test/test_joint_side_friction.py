"""Friction on a coupled joint's own velocity (dynid.identify.equations.joint_side): a stage that turns with the
wrist's last joint (q̇6 = θ̇5 + θ̇6 here), which no motor's friction can express. Identified where the data hold it and
left out where they do not, and evaluated by every consumer of a result: prediction, the feedforward, the exports."""

import dataclasses

import numpy as np
import pytest

from builders import coupled_wrist_twin
from dynid.control.context import FeedforwardContext
from dynid.control.feedforward import Feedforward
from dynid.control.friction_static import StaticFrictionTerm
from dynid.control.ur_direct_torque import identified_friction
from dynid.errors import InputError
from dynid.identify.equations.joint_side import JOINT_SIDE_SYMBOLS, joint_side_columns
from dynid.identify.equations.request import ModelSpec, RecordingInput
from dynid.identify.outputs.urdf_export import joint_friction_table
from dynid.identify.result.result import IdentificationResult
from dynid.identify.steps.run import identify
from dynid.identify.validation.validate import predict, validate
from dynid.model import load_robot
from dynid.model.drives import JointDrives
from dynid.sim.recording import record_to_dataset

ROBOT = load_robot('ur5e')
COUPLING = np.eye(6)
COUPLING[4, 4], COUPLING[5, 4] = -1.0, 1.0  # motor 5 turns against q5; motor 6 with q5 + q6: q6 = θ5 + θ6
DRIVES = dataclasses.replace(ROBOT.drives, coupling=COUPLING)
ARM = ROBOT.with_drives(DRIVES)
CONTEXT = FeedforwardContext()
OWN = (1.5, 0.8)  # the wrist_3 stage's Coulomb [N·m] and viscous [N·m·s/rad] friction on q̇6


def _recording(seed: int, coulomb: float, viscous: float):
    """The coupled-wrist twin's recording with a friction f = Fc·sgn(q̇6) + Fv·q̇6 on joint 6 that the drives
    overcome: C⁻ᵀ·e6·f more of each motor's torque, in its current."""
    dataset = record_to_dataset(coupled_wrist_twin(ROBOT, COUPLING, seed), None, {'simulation': f'seed {seed}'})
    friction = coulomb * np.sign(dataset.dq[:, 5]) + viscous * dataset.dq[:, 5]
    share = np.linalg.solve(COUPLING.T, np.eye(6)[5])
    return dataclasses.replace(dataset, current=dataset.current + friction[:, None] * share / DRIVES.drive_gain)


@pytest.fixture(scope='module')
def recordings():
    return {label: (_recording(3, *own), _recording(4, *own)) for label, own in (('own', OWN), ('none', (0.0, 0.0)))}


@pytest.fixture(scope='module')
def identified(recordings):
    train, _ = recordings['own']
    return identify(ARM, [RecordingInput(train, name='train')], ModelSpec(friction='auto'), drives=DRIVES)


def test_the_joints_several_motors_make():
    tx40 = np.eye(6)
    tx40[3, 3], tx40[5, 4] = -1.0, 1.0  # the Stäubli TX40: motor 4 against its joint, motor 6 with q5 + q6
    assert dataclasses.replace(DRIVES, coupling=tx40).shared_joints() == (5,)
    assert DRIVES.shared_joints() == (5,)
    assert dataclasses.replace(DRIVES, coupling=np.diag([1.0, 1, 1, -1, 1, 1])).shared_joints() == ()  # one each
    assert ROBOT.drives.shared_joints() == ()
    # its columns: the feature of q̇6 times row 6 of C⁻¹ over the motors (−1·… on motor 5 here: q6 = θ5 + θ6)
    features = {'joint_sign': np.array([[0, 0, 0, 0, 0, -1.0]]), 'joint_velocity': np.array([[0, 0, 0, 0, 0, 2.0]])}
    columns = joint_side_columns(features, (5,), COUPLING)
    np.testing.assert_allclose(columns[0, :, 0], [0, 0, 0, 0, -1.0, -1.0])
    np.testing.assert_allclose(columns[0, :, 1], [0, 0, 0, 0, 2.0, 2.0])


def test_identification_finds_a_joints_own_friction(identified, recordings):
    assert identified.model['joint_side_joints'] == ['wrist_3_joint']
    assert set(JOINT_SIDE_SYMBOLS) <= set(identified.model['friction_symbols'])
    assert identified.value('Fcq_6') == pytest.approx(OWN[0], rel=0.05)  # recovered from the motors' equations
    assert identified.value('Fvq_6') == pytest.approx(OWN[1], rel=0.1)
    assert identified.friction()['wrist_3_joint']['Fcq'] == identified.value('Fcq_6')
    assert identified.model['choice']['tried']['joint_side']['wrist_3_joint']['kept']
    assert any('own velocity' in line for line in identified.model['choice']['lines'])
    # held out on another motion: the motors' friction alone cannot take it (wrist_2's and wrist_3's equations)
    train, held = recordings['own']
    without = identify(ARM, [RecordingInput(train, name='train')],
                       ModelSpec(friction='auto', joint_side_friction=False), drives=DRIVES)
    assert 'Fcq_6' not in without.parameter_names and without.model['joint_side_joints'] == []
    mine, theirs = (validate(r, ARM, held, drives=DRIVES) for r in (identified, without))
    assert mine['relative_residual'] < 0.1 * theirs['relative_residual']
    for space in (mine, mine['joint_space']):
        assert space['joints']['wrist_3_joint']['nrmse_fit_percent'] > 95.0


def test_the_choice_leaves_it_out_where_the_data_hold_none(recordings):
    train, held = recordings['none']
    result = identify(ARM, [RecordingInput(train, name='train')], ModelSpec(friction='auto'), drives=DRIVES)
    tried = result.model['choice']['tried']['joint_side']['wrist_3_joint']
    assert not tried['kept'] and tried['with'] > tried['without'] / 1.05  # within the margin: not earned
    assert result.model['joint_side_joints'] == [] and 'Fcq_6' not in result.parameter_names
    # a law given keeps the columns as given (here with nothing to find: near 0)
    given = identify(ARM, [RecordingInput(train, name='train')], ModelSpec(friction='viscous_coulomb'),
                     drives=DRIVES)
    assert given.model['joint_side_joints'] == ['wrist_3_joint'] and abs(given.value('Fcq_6')) < 0.1


def test_a_result_with_it_is_read_back_and_predicted_with_it(identified, recordings, tmp_path):
    path = identified.save(tmp_path / 'result.yaml')
    loaded = IdentificationResult.load(path)
    assert loaded.joint_side_joints == (5,)
    _, held = recordings['own']
    np.testing.assert_allclose(predict(loaded, ARM, held, drives=DRIVES).predicted,
                               predict(identified, ARM, held, drives=DRIVES).predicted, rtol=1e-9, atol=1e-9)
    with pytest.raises(InputError, match='own velocity of wrist_3_joint'):  # drives that make it of one motor
        predict(loaded, ARM, held, drives=ROBOT.drives)
    text = path.read_text()
    assert '  joint_side_joints:\n  - wrist_3_joint\n' in text
    (tmp_path / 'bad.yaml').write_text(text.replace('  joint_side_joints:\n  - wrist_3_joint\n',
                                                    '  joint_side_joints:\n  - wrist_9_joint\n'))
    with pytest.raises(InputError, match="joint_side_joints names \\['wrist_9_joint'\\]"):
        IdentificationResult.load(tmp_path / 'bad.yaml')


def test_the_feedforward_adds_the_joints_own_friction(identified):
    q, dq = np.zeros((3, 6)), np.zeros((3, 6))
    dq[:, 5] = [0.5, -0.2, 0.001]  # the joint moves, its motors 5 and 6 too (θ̇6 = q̇5 + q̇6)
    term = StaticFrictionTerm(ARM, identified, band=5e-3)
    plain = dataclasses.replace(identified, values=np.where(
        [name.startswith(('Fcq_', 'Fvq_')) for name in identified.parameter_names], 0.0, identified.values))
    own = term.evaluate(q, dq, dq, CONTEXT) - StaticFrictionTerm(ARM, plain, band=5e-3).evaluate(q, dq, dq, CONTEXT)
    ramp = np.clip(dq[:, 5] / 5e-3, -1.0, 1.0)
    expected = identified.value('Fcq_6') * ramp + identified.value('Fvq_6') * dq[:, 5]
    np.testing.assert_allclose(own[:, 5], expected, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(own[:, :5], 0.0, atol=1e-12)  # a torque on joint 6 alone
    assert 'friction_static' in Feedforward(ARM, identified).terms


def test_the_exports_put_it_on_its_joint_and_name_what_no_joint_holds(identified):
    table, left = joint_friction_table(identified)
    law = identified.friction()
    coulomb = 'fc' if 'fc' in law['wrist_2_joint'] else 'Fc'
    # motor 5 turns joint 5 alone (against it): its friction is joint 5's; motor 6 turns q5 + q6: no joint's
    assert table['wrist_2_joint'][coulomb] == law['wrist_2_joint'][coulomb]
    assert table['wrist_3_joint'] == {'Fc': identified.value('Fcq_6'), 'Fv': identified.value('Fvq_6')}
    assert f'{coulomb}_6' in left and not any(name.startswith(('Fcq', 'Fvq')) for name in left)
    with pytest.raises(InputError, match='coupled drives'):
        identified_friction(identified, ARM.joint_names)
    assert JointDrives.from_dict(identified.provenance['drives']['joints'], ARM.joint_names).coupling is not None


def test_motor_torque_with_a_coupling_is_the_drives_torque_in_joint_space(recordings):
    # joint_states holds joint quantities: an effort that is the drives' torque is τ = Cᵀ·(K_τ·i), each motor's
    # equation C⁻ᵀ·τ (a log of each motor's own torque is imported as motor_torque columns, kept as currents)
    def as_effort(dataset):
        return dataclasses.replace(dataset, tau=(dataset.current * DRIVES.drive_gain) @ COUPLING, current=None)

    train, held = (as_effort(d) for d in recordings['own'])
    result = identify(ARM, [RecordingInput(train, name='train')], ModelSpec(friction='auto',
                                                                            torque_source='motor_torque'),
                      drives=DRIVES)
    assert result.model['torque_source'] == 'motor_torque' and result.model['joint_side_joints'] == ['wrist_3_joint']
    prediction = predict(result, ARM, held, drives=DRIVES)
    metrics = prediction.metrics(ARM.joint_names)
    for space in (metrics, metrics['joint_space']):  # read as each motor's torque: wrist_2 52 % and −10 %
        assert min(joint['nrmse_fit_percent'] for joint in space['joints'].values()) > 90.0
    # the joints' torques validate compares are the effort as recorded (τ = Cᵀ·(each motor's C⁻ᵀ·τ))
    joint_rows = prediction.joint_rows[0]
    assert np.abs(joint_rows).max() == pytest.approx(np.abs(prediction.problem.blocks[0].y @ COUPLING).max(),
                                                     rel=1e-9)
    # an import's motor torques are currents: the refusal says so
    with pytest.raises(InputError, match='keeps motor_torque columns .* as the motors\' currents'):
        identify(ARM, [RecordingInput(dataclasses.replace(recordings['own'][0], tau=None), name='train')],
                 ModelSpec(friction='auto', torque_source='motor_torque'), drives=DRIVES)
