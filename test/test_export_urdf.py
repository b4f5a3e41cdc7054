"""dynid export-urdf (issue 11): identified inertials and friction into a URDF, round trip through pinocchio."""

import xml.etree.ElementTree as ElementTree

import numpy as np
import pytest

from builders import SYNTHETIC_FC, synthetic_recording
from dynid.cli import main
from dynid.errors import InputError
from dynid.identify.equations.request import ModelSpec, RecordingInput
from dynid.identify.outputs.urdf_export import export_urdf
from dynid.identify.result.torque import RigidBodyTorque, round_trip_error
from dynid.identify.solve.physical import PhysicalSettings
from dynid.identify.steps.run import IdentifyOptions, identify
from dynid.model import load_robot
from dynid.model.robot import RobotModel
from dynid.model.robots import EXAMPLE_ROBOTS, example_robot_path


@pytest.fixture(scope='module', params=['ur5', 'panda'])
def physical_result(request):
    robot = load_robot(request.param)
    result = identify(robot, [RecordingInput(synthetic_recording(robot))], ModelSpec(torque_source='joint_torque'),
                      options=IdentifyOptions('wls', physical=PhysicalSettings(consistency='always')))
    return robot, result, example_robot_path(EXAMPLE_ROBOTS[request.param][0])


def test_export_round_trip_gives_the_identified_torques(physical_result, tmp_path):
    # Tolerance 1e-9 of the torque scale: the exported inertials are the identified bodies (merged fixed
    # links folded in), so pinocchio's RNEA on the file equals W_b·χ̂_b up to round-off.
    robot, result, urdf = physical_result
    text = export_urdf(result, urdf)
    assert round_trip_error(result, urdf, text) < 1e-9
    loaded = RobotModel.from_urdf(text, joints=list(result.joint_names), name=result.robot)
    q, dq, ddq = robot.random_states(50, seed=9)
    np.testing.assert_allclose(loaded.inverse_dynamics(q, dq, ddq), RigidBodyTorque(result, robot)(q, dq, ddq),
                               atol=1e-9 * 100)
    root = ElementTree.fromstring(text)
    friction = result.friction()
    for joint in root.findall('joint'):
        name = joint.get('name')
        if name in friction:
            dynamics = joint.find('dynamics')
            assert float(dynamics.get('friction')) == pytest.approx(friction[name]['Fc'], rel=1e-9)
            assert float(dynamics.get('damping')) == pytest.approx(friction[name]['Fv'], rel=1e-9)
            assert friction[name]['Fc'] == pytest.approx(SYNTHETIC_FC, rel=0.1)  # the synthetic friction is recovered


def test_cli_exports_and_refuses_a_urdf_of_another_robot(physical_result, tmp_path, capsys):
    robot, result, urdf = physical_result
    result_path = result.save(tmp_path / 'result.yaml')
    out = tmp_path / 'identified.urdf'
    assert main(['export-urdf', str(result_path), '--robot', str(urdf), '-o', str(out)]) == 0
    assert 'reproduces the identified torques' in capsys.readouterr().out
    assert main(['export-urdf', str(result_path), '--robot', str(urdf), '-o', str(out)]) == 2  # no overwrite
    assert 'refusing to overwrite' in capsys.readouterr().err

    text = urdf.read_text()
    renamed_joint = tmp_path / 'renamed_joint.urdf'
    joint = result.joint_names[1]
    renamed_joint.write_text(text.replace(f'"{joint}"', '"elbow_x"'))
    assert main(['export-urdf', str(result_path), '--robot', str(renamed_joint), '-o', str(tmp_path / 'a.urdf')]) == 2
    error = capsys.readouterr().err
    assert f"has no joints ['{joint}']" in error and error.count('\n') == 1 and 'Traceback' not in error

    link = result.physical_section['links'][2]['link']
    renamed_link = tmp_path / 'renamed_link.urdf'
    renamed_link.write_text(text.replace(f'"{link}"', '"other_link"'))
    assert main(['export-urdf', str(result_path), '--robot', str(renamed_link), '-o', str(tmp_path / 'b.urdf')]) == 2
    assert f"moves link 'other_link', the result identified '{link}'" in capsys.readouterr().err
    assert not (tmp_path / 'a.urdf').exists() and not (tmp_path / 'b.urdf').exists()


def test_a_result_without_standard_parameters_is_refused(tmp_path):
    robot = load_robot('ur5')
    result = identify(robot, [RecordingInput(synthetic_recording(robot, seconds=4.0))],
                      ModelSpec(torque_source='joint_torque'), options=IdentifyOptions(physical=None))
    with pytest.raises(InputError, match='identify with physical'):
        export_urdf(result, example_robot_path(EXAMPLE_ROBOTS['ur5'][0]))


@pytest.mark.parametrize('form', ['shifted', 'plain'])
def test_the_comprehensive_law_goes_to_a_joint_as_its_coulomb_level_and_viscous_coefficient(form):
    """Li et al.'s comprehensive law in the joints' friction (what URDF's dynamics and MuJoCo's frictionloss and damping
    hold): the Coulomb level at ω → 0, fc − fv·v_s where the power term is written from v_s and the exponent is 1, fc
    itself in Li's form or at another exponent; fv as the damping only where the exponent is 1, else kept under its
    own name (left out and named by the exports)."""
    from builders import identified
    from dynid.identify.outputs.urdf_export import joint_friction_table

    robot = load_robot('ur5e')
    exponents = np.array([1.0, 0.5, 1.0, 0.2, 1.0, 1.0])
    model = {'power_form': 'shifted', 'power_velocity': 0.02} if form == 'shifted' else {}
    result = identified(robot, 'comprehensive', {'fc': 2.0, 'fv': 5.0, 'fo': 0.1}, exponents=exponents, model=model)
    table, left = joint_friction_table(result)
    assert left == []
    shift = 0.02 if form == 'shifted' else 0.0
    for k, joint in enumerate(robot.joint_names):
        if exponents[k] == 1.0:
            assert table[joint]['Fc'] == pytest.approx(2.0 - 5.0 * shift) and table[joint]['Fv'] == 5.0, joint
            assert 'fv' not in table[joint] and 'fc' not in table[joint]
        else:
            assert table[joint]['Fc'] == 2.0 and 'Fv' not in table[joint] and table[joint]['fv'] == 5.0, joint
        assert table[joint]['fo'] == 0.1  # an offset: no joint holds it (the exports name it)
