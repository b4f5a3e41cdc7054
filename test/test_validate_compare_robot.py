"""dynid validate --compare-robot: another robot file's prediction beside the result's on the same rows; joints
left out of the identification are not scored (issue 31, item 6)."""

import json
from xml.etree import ElementTree

import pytest
import yaml

from dynid.cli import main
from dynid.excite.trajectory import builtin_excitation_path


@pytest.fixture(scope='module')
def runs(tmp_path_factory):
    """250 Hz twin UR5e: a training run of the built-in excitation, a held-out run, two identifications (one
    with wrist 3 left out), the UR5e's URDF and a copy whose upper arm weighs three times as much."""
    folder = tmp_path_factory.mktemp('compare_robot')
    excitation = str(builtin_excitation_path('ur5e'))
    assert main(['simulate', '--rate', '250', '--duration', '12', '--quiet', '-o', str(folder / 'train'),
                 '--trajectory', excitation]) == 0
    assert main(['simulate', '--rate', '250', '--duration', '12', '--seed', '4', '--quiet', '-o',
                 str(folder / 'heldout')]) == 0
    assert main(['identify', str(folder / 'train'), '-o', str(folder / 'result.yaml'), '--quiet']) == 0
    assert main(['identify', str(folder / 'train'), '-o', str(folder / 'excluded.yaml'), '--quiet',
                 '--exclude-joint', 'wrist_3_joint']) == 0
    assert main(['model', '--robot', 'ur5e', '--urdf', str(folder / 'ur5e.urdf')]) == 0
    tree = ElementTree.parse(folder / 'ur5e.urdf')
    links = [link for link in tree.getroot().findall('link') if link.find('inertial') is not None]
    heavy = max(links, key=lambda link: float(link.find('inertial/mass').get('value')))  # the upper arm
    inertial = heavy.find('inertial')
    inertial.find('mass').set('value', str(3 * float(inertial.find('mass').get('value'))))
    inertia = inertial.find('inertia')
    for key, value in inertia.attrib.items():
        inertia.set(key, str(3 * float(value)))
    tree.write(folder / 'heavy.urdf')
    return folder


def _joint_lines(out):
    return {line.split()[0]: line for line in out.splitlines() if line.startswith('  ')}


def _load_terms_kept(result):
    """The joints whose friction keeps a load term free: Fl_j (the load-squared law) or fL_j (Li's comprehensive
    law), in the result's friction and not held."""
    held = result['model']['held']
    names = {entry['name'] for entry in result['friction']} - set(held)
    return {joint for j, joint in enumerate(result['joint_names'], start=1) if {f'Fl_{j}', f'fL_{j}'} & names}


def test_another_robot_file_is_scored_beside_the_result(runs, capsys):
    json_path = runs / 'same.json'
    args = ['validate', str(runs / 'heldout'), '--params', str(runs / 'result.yaml'), '--json', str(json_path)]
    assert main([*args, '--compare-robot', str(runs / 'ur5e.urdf')]) == 0
    out = capsys.readouterr().out
    assert all('robot file: RMSE' in line and 'other: RMSE' in line for line in _joint_lines(out).values())
    recording = json.loads(json_path.read_text())['recordings'][0]['predictions']
    same, own = recording['compare_robot'], recording['robot_file']
    assert not same['judged'] and recording['result']['judged']
    # the result's own robot file, compared: its links with the result's friction, where validate's robot-file model is
    # those links with Coulomb + viscous friction and an offset fitted whatever law the result chose; the two agree
    # where the law is that one, and a load term the law keeps (held nowhere) may only help the compared file
    result = yaml.safe_load((runs / 'result.yaml').read_text())
    loaded = _load_terms_kept(result)
    for joint, entry in same['joints'].items():
        if joint not in loaded:
            assert entry['rmse'] == pytest.approx(own['joints'][joint]['rmse'], rel=0.2), joint
        assert entry['rmse'] < 1.2 * own['joints'][joint]['rmse'], joint
    assert 0 < len(loaded) < len(result['joint_names'])  # the law keeps a load term on some joints: both cases met
    heavy_json = runs / 'heavy.json'
    assert main(['validate', str(runs / 'heldout'), '--params', str(runs / 'result.yaml'), '--json',
                 str(heavy_json), '--compare-robot', str(runs / 'heavy.urdf')]) == 0
    capsys.readouterr()
    heavy = json.loads(heavy_json.read_text())['recordings'][0]['predictions']
    lift = 'shoulder_lift_joint'
    assert heavy['compare_robot']['joints'][lift]['rmse'] > 5 * heavy['result']['joints'][lift]['rmse']


def test_a_robot_file_of_other_joints_is_refused_in_one_line(runs, capsys):
    code = main(['validate', str(runs / 'heldout'), '--params', str(runs / 'result.yaml'), '--compare-robot',
                 'panda'])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1, err


def test_a_joint_left_out_of_the_identification_is_not_scored(runs, capsys):
    """It was scored with the friction it never had: 'absurd fit', and --require-fit failed on it."""
    json_path = runs / 'excluded.json'
    code = main(['validate', str(runs / 'heldout'), '--params', str(runs / 'excluded.yaml'), '--require-fit', '80',
                 '--json', str(json_path)])
    out = capsys.readouterr().out
    assert code == 0, out
    assert 'left out of the identification' in _joint_lines(out)['wrist_3_joint']
    assert 'absurd' not in out and 'warning: ' + str(runs / 'heldout') + ': wrist_3_joint' not in out
    joints = json.loads(json_path.read_text())['recordings'][0]['predictions']['result']['joints']
    assert joints['wrist_3_joint']['passed'] is None and joints['wrist_3_joint']['left_out']
    assert all(entry['passed'] for name, entry in joints.items() if name != 'wrist_3_joint')


def test_a_model_given_as_code_is_scored_on_the_equations_rows(runs):
    """model_rows: a data author's model (a function of q, q̇, q̈) on the rows predict() scores; the robot file's
    rigid-body torque plus the identified friction is its own robot-file prediction, and a model off by a
    constant torque on one joint is off by it on that joint's rows only."""
    import numpy as np

    from dynid.identify.result.result import IdentificationResult
    from dynid.identify.validation.validate import model_rows, predict
    from dynid.io.bag import read_bag
    from dynid.model import load_robot

    robot = load_robot('ur5e')
    result = IdentificationResult.load(runs / 'result.yaml')
    prediction = predict(result, robot, read_bag(runs / 'heldout', robot.joint_names), other=robot)
    rigid = len(prediction.problem.rigid_names)
    names = prediction.problem.parameter_names()
    friction = prediction.design[:, rigid:] @ np.array([result.value(n) for n in names])[rigid:]
    rows = model_rows(prediction.problem, robot.inverse_dynamics)
    assert rows.shape == prediction.measured.shape
    np.testing.assert_allclose(rows + friction, prediction.other, rtol=1e-9, atol=1e-9)
    shifted = model_rows(prediction.problem, lambda q, dq, ddq: robot.inverse_dynamics(q, dq, ddq) + [0, 2.0, 0, 0,
                                                                                                      0, 0])
    difference = shifted - rows
    np.testing.assert_allclose(difference[prediction.joints == 1], 2.0, atol=1e-9)
    np.testing.assert_allclose(difference[prediction.joints != 1], 0.0, atol=1e-9)


def test_the_robot_files_lead_is_claimed_where_it_holds_on_every_stretch_and_matters():
    """validate names a joint the robot file's own model predicts better only where that model is ahead on each
    of five stretches of the joint's rows and by at least 5 % of the result's RMSE (it named any lead before, of
    0.1 % too)."""
    import numpy as np

    from dynid.identify.validation.validate import Prediction

    rng = np.random.default_rng(0)
    rows = 500
    measured = rng.normal(size=(rows, 3)) * 10.0
    noise = rng.normal(size=(rows, 3))
    mine = noise.copy()
    mine[:, 0] *= 1.005  # a hair worse everywhere: not material
    mine[:, 1] *= 1.5  # clearly worse everywhere
    mine[:, 2] *= 1.5
    mine[:rows // 5, 2] = noise[:rows // 5, 2] * 0.5  # clearly worse, but better on the first stretch
    joints = np.repeat(np.arange(3)[None, :], rows, axis=0).reshape(-1)
    prediction = Prediction(measured.reshape(-1), (measured - mine).reshape(-1), joints, problem=None,
                            design=np.zeros((rows * 3, 1)), robot_file=(measured - noise).reshape(-1))
    assert prediction._robot_file_ahead(3).tolist() == [False, True, False]
