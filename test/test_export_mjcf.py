"""dynid export-mjcf (issue 36): identified inertials, armature, damping and friction loss into a MuJoCo model;
MuJoCo's own inverse dynamics of the written file against dynid's torque on held-out states."""

import xml.etree.ElementTree as ElementTree

import numpy as np
import pytest

from builders import SYNTHETIC_FC, SYNTHETIC_FV, synthetic_recording
from dynid.cli import main
from dynid.errors import InputError
from dynid.identify.equations.request import ModelSpec, RecordingInput
from dynid.identify.outputs.mjcf_export import dynid_torque, export_mjcf, mjcf_torque_error
from dynid.identify.solve.physical import PhysicalSettings
from dynid.identify.steps.run import IdentifyOptions, identify
from dynid.model import load_robot
from dynid.model.mjcf import inverse_dynamics

mujoco = pytest.importorskip('mujoco')


@pytest.fixture(scope='module', params=['ur5e', 'panda'])
def physical_result(request):
    robot = load_robot(request.param)
    result = identify(robot, [RecordingInput(synthetic_recording(robot))], ModelSpec(torque_source='joint_torque'),
                      options=IdentifyOptions('wls', physical=PhysicalSettings(consistency='always')))
    return robot, result


def test_mj_inverse_of_the_export_gives_dynids_torque(physical_result):
    # Held-out states (random, not the recording's). MJCF numbers carry 6 significant digits, so the
    # agreement is ~1e-6, far inside the 1 %; the check is that armature, damping and inertials
    # each land where MuJoCo uses them (a missing armature is ~10 % of the torque at these accelerations).
    robot, result = physical_result
    export = export_mjcf(result, robot)
    assert mjcf_torque_error(export, result, robot) < 1e-4
    model = mujoco.MjModel.from_xml_string(export.text)
    q, dq, ddq = robot.random_states(40, seed=5)
    expected = dynid_torque(result, robot, q, dq, ddq)
    np.testing.assert_allclose(inverse_dynamics(model, robot.joint_names, q, dq, ddq), expected,
                               atol=1e-4 * np.abs(expected).max())
    without_armature = expected - robot.drives.rotor_inertia * ddq
    assert np.abs(without_armature - expected).max() > 1e-2 * np.abs(expected).max()
    joints = {joint.get('name'): joint for joint in ElementTree.fromstring(export.text).iter('joint')}
    friction = result.friction()
    for j, name in enumerate(robot.joint_names):
        assert float(joints[name].get('armature')) == pytest.approx(robot.drives.rotor_inertia[j], rel=1e-5)
        assert float(joints[name].get('damping')) == pytest.approx(friction[name]['Fv'], rel=1e-5)
        assert float(joints[name].get('frictionloss')) == pytest.approx(friction[name]['Fc'], rel=1e-5)
        assert friction[name]['Fc'] == pytest.approx(SYNTHETIC_FC, rel=0.1)
        assert friction[name]['Fv'] == pytest.approx(SYNTHETIC_FV, rel=0.1)
    assert set(joints) == set(robot.joint_names)  # the Panda's fingers are fixed, as dynid locks them
    assert export.not_expressed == sorted(f'tau0_{j + 1}' for j in range(robot.n) if result.value(f'tau0_{j + 1}'))


def test_frictionloss_holds_the_joint_below_it_and_lets_it_go_above(physical_result):
    # Friction loss is what the inverse check leaves out: in MuJoCo's forward dynamics it holds a joint
    # whose applied torque (beside gravity) is below Fc and lets it move above.
    robot, result = physical_result
    export = export_mjcf(result, robot)
    model = mujoco.MjModel.from_xml_string(export.text)
    data = mujoco.MjData(model)
    last = model.joint(robot.joint_names[-1]).dofadr[0]
    moved = []
    for push in (0.5, 2.0):  # × Fc
        mujoco.mj_resetData(model, data)
        mujoco.mj_forward(model, data)
        data.qfrc_applied[:] = data.qfrc_bias
        data.qfrc_applied[last] += push * export.frictionloss[-1]
        for _ in range(200):
            mujoco.mj_step(model, data)
            data.qfrc_applied[:] = data.qfrc_bias
            data.qfrc_applied[last] += push * export.frictionloss[-1]
        moved.append(abs(data.qvel[last]))
    assert moved[0] < 0.05 * moved[1]


def test_cli_writes_whole_or_not_at_all_and_refuses_another_robot(physical_result, tmp_path, capsys):
    robot, result = physical_result
    result_path = result.save(tmp_path / 'result.yaml')
    out = tmp_path / 'model.xml'
    assert main(['export-mjcf', str(result_path), '-o', str(out)]) == 0
    printed = capsys.readouterr().out
    assert 'reproduces dynid\'s torque' in printed and 'armature from: drive data' in printed
    mujoco.MjModel.from_xml_path(str(out))
    assert main(['export-mjcf', str(result_path), '-o', str(out)]) == 2
    assert 'refusing to overwrite' in capsys.readouterr().err
    other = 'panda' if robot.name == 'ur5e' else 'ur5e'
    assert main(['export-mjcf', str(result_path), '--robot', other, '-o', str(tmp_path / 'a.xml')]) == 2
    error = capsys.readouterr().err
    assert error.count('\n') == 1 and 'Traceback' not in error
    assert not (tmp_path / 'a.xml').exists() and [p.name for p in tmp_path.iterdir() if p.suffix == '.tmp'] == []


def test_a_result_without_standard_parameters_is_refused():
    robot = load_robot('ur5e')
    result = identify(robot, [RecordingInput(synthetic_recording(robot, seconds=4.0))],
                      ModelSpec(torque_source='joint_torque'),
                      options=IdentifyOptions(physical=None))
    with pytest.raises(InputError, match='identify with physical') as refused:
        export_mjcf(result, robot)
    assert refused.value.field == 'physical'  # the command line says --physical (dynid.cli.flags)


@pytest.mark.parametrize('compensation', [True, False])
def test_armature_from_currents_is_mujocos_own_with_or_without_rotor_compensation(compensation, tmp_path):
    # A round trip through MuJoCo: a plant whose armature is 1.5x the drive data's, identified from its motor
    # currents with the rotor inertia a parameter. With rotor compensation the identified Ia is the excess over
    # the drive data's B, and the export adds B back; without, Ia is the whole. Either way the armature
    # written is MuJoCo's (10 % on the shipped 10 s excitation with sensor noise; without B added back the
    # compensated case would be 1/3 of it).
    from dynid.excite.trajectory import builtin_excitation_path, load_trajectory
    from dynid.model import mjcf as mjcf_model
    from dynid.sim.mujoco_twin import MujocoTwin
    from dynid.sim.parameters import PlantParameters
    from dynid.sim.recording import record_to_dataset
    from dynid.sim.twin import trajectory_start

    robot = load_robot('ur5e')
    params = PlantParameters.of_twin(robot)
    armature = 1.5 * params.drives.rotor_inertia
    spec = mjcf_model.robot_spec(mjcf_model.robot_urdf_text(robot), robot.joint_names)
    mjcf_model.set_joint_dynamics(spec, robot.joint_names, armature, params.joints.viscous1, params.joints.coulomb)
    plant = tmp_path / 'plant.xml'
    plant.write_text(spec.to_xml())
    motion = load_trajectory(builtin_excitation_path('ur5e'))
    twin = MujocoTwin(params, rate_hz=500.0, seed=1, initial_q=trajectory_start(motion, robot.joint_names),
                      mjcf_path=str(plant))
    twin.follow(motion, start_time=0.0)
    dataset = record_to_dataset(twin.run(10.0), None, {'simulation': 'mujoco'})
    result = identify(robot, [RecordingInput(dataset)],
                      ModelSpec(torque_source='current', rotor_compensation=compensation, rotor_inertia=True),
                      options=IdentifyOptions('wls', physical=PhysicalSettings(consistency='always')))
    assert bool(result.model['rotor_compensation']) == compensation
    export = export_mjcf(result, robot)
    np.testing.assert_allclose(export.armature, armature, rtol=0.1)
    assert mjcf_torque_error(export, result, robot) < 1e-4
