"""dynid simulate --contacts (the truth beside the bag) and dynid contact (replay, calibration, page, refusals)."""

import json

import numpy as np
import pytest

from builders import own_model_result
from cli_run import run_dynid

CONTACTS = """contacts:
  - {link: flange, point: [0, 0, 0.05], force: [40, 0, 20], start_s: 1.5, duration_s: 0.4, shape: step}
"""


@pytest.fixture(scope='module')
def recordings(tmp_path_factory):
    folder = tmp_path_factory.mktemp('contact_cli')
    (folder / 'contacts.yaml').write_text(CONTACTS)
    for args in (('-o', folder / 'free', '--duration', '6', '--seed', '3'),
                 ('-o', folder / 'hit', '--duration', '3', '--seed', '4', '--contacts', folder / 'contacts.yaml')):
        assert run_dynid('simulate', '--quiet', *args).returncode == 0
    return folder


def test_the_truth_is_beside_the_bag_and_the_contact_is_found_on_the_flange(recordings, ur5e):
    table = np.loadtxt(recordings / 'hit' / 'contact_truth.csv', delimiter=',', skiprows=1)
    acting = table[(table[:, 0] > 1.5) & (table[:, 0] < 1.9)]
    assert np.abs(acting[:, 1:7]).max() > 5.0  # τ_ext [N·m] per joint; the flange wrench is the force in its frame
    assert np.allclose(np.linalg.norm(acting[:, 7:10], axis=1), np.hypot(40.0, 20.0))
    result = recordings / 'result.yaml'
    own_model_result(ur5e, coulomb=3.0, viscous=4.0).save(result)
    run = run_dynid('contact', recordings / 'hit', '--params', result, '--calibrate', recordings / 'free', '--json',
                    '--save-calibration', recordings / 'calibration.yaml', '--report', recordings / 'page')
    assert run.returncode == 0, run.stderr
    contacts = json.loads(run.stdout)['recordings'][0]['contacts']
    assert any(1.5 <= c['start_s'] <= 1.6 for c in contacts), contacts
    assert all(c['raised_by'] and set(c['raised_by']) <= {'torque', 'position', 'speed'} for c in contacts)
    assert (recordings / 'page' / 'index.html').is_file() and (recordings / 'calibration.yaml').is_file()
    assert json.loads(run.stdout)['recordings'][0]['reference'] is True
    assert json.loads(run.stdout)['calibration']['with_reference'] is True
    again = run_dynid('contact', recordings / 'hit', '--params', result, '--calibration',
                      recordings / 'calibration.yaml')
    assert again.returncode == 0 and 'most distal' in again.stdout and 'calibrated with one' not in again.stderr
    # 6 s of free motion for 0.5 false alarms per hour: flagged in the calibration file and the summary using it
    assert 'calibration too short' in again.stdout and 'calibration too short' in again.stderr
    assert 'raised by' in again.stdout and 'raised by' in (recordings / 'page' / 'index.html').read_text()
    blind = run_dynid('contact', recordings / 'hit', '--params', result, '--calibration',
                      recordings / 'calibration.yaml', '--no-reference')
    assert blind.returncode == 0 and 'no commanded velocity' in blind.stdout
    assert 'calibrated with one' in blind.stderr


def test_the_commanded_velocity_of_a_recording_is_the_trajectories_it_recorded(recordings, ur5e):
    """dynid simulate records the twin's reference on the controller's topic: read with the recording
    (Dataset.reference) it follows the measured velocity (the controller tracks it) and is zero where the arm rests at
    the end."""
    from dynid.cli.reading import read_bag

    dataset = read_bag(recordings / 'free', ur5e, None, check=False)
    assert dataset.reference is not None and 'joint_trajectory' in dataset.reference.source
    position, commanded = dataset.reference.q, dataset.reference.dq
    assert commanded.shape == dataset.dq.shape and np.abs(commanded).max() > 0.05
    error = np.sqrt(np.mean((commanded - dataset.dq) ** 2, axis=0))
    assert np.all(error < 0.2 * np.sqrt(np.mean(dataset.dq ** 2, axis=0)) + 1e-3), error
    # the reference position beside it: the controller tracks it within a few mrad
    assert np.abs(position - dataset.q).max() < 0.01, np.abs(position - dataset.q).max(axis=0)


def test_bad_input_is_one_line_and_exit_2(recordings, ur5e, tmp_path):
    result = own_model_result(ur5e)
    del result.model['torque_source']
    result.save(tmp_path / 'bad.yaml')
    run = run_dynid('contact', recordings / 'hit', '--params', tmp_path / 'bad.yaml')
    assert run.returncode == 2 and 'torque_source' in run.stderr and len(run.stderr.strip().splitlines()) == 1
    five = own_model_result(ur5e)
    five.save(tmp_path / 'good.yaml')
    run = run_dynid('contact', recordings / 'hit', '--params', tmp_path / 'good.yaml', '--calibrate',
                    recordings / 'free', '--calibration', tmp_path / 'x.yaml')
    assert run.returncode == 2 and 'not both' in run.stderr
    (tmp_path / 'elsewhere.yaml').write_text(CONTACTS.replace('link: flange', 'link: forearm_link'))
    run = run_dynid('simulate', '--quiet', '-o', tmp_path / 'x', '--contacts', tmp_path / 'elsewhere.yaml')
    assert run.returncode == 2 and "'forearm_link' is not a link" in run.stderr and not (tmp_path / 'x').exists()


def test_a_recording_without_the_torque_the_result_reads_is_refused(recordings, ur5e, tmp_path):
    torque = own_model_result(ur5e)
    torque.model['torque_source'] = 'motor_torque'
    torque.save(tmp_path / 'torque.yaml')
    log = tmp_path / 'log'
    assert run_dynid('simulate', '--quiet', '-o', log, '--duration', '2', '--log-rate', '100').returncode == 0
    run = run_dynid('contact', log, '--params', tmp_path / 'torque.yaml')
    assert run.returncode == 2 and 'holds no motor torque' in run.stderr, run.stderr


def test_a_wrench_is_refused_below_six_joints(recordings, tmp_path):
    from dynid.model import load_robot

    arm = load_robot('ur5', joints=['shoulder_pan_joint', 'shoulder_lift_joint', 'elbow_joint', 'wrist_1_joint',
                                    'wrist_2_joint'])
    result = own_model_result(arm, torque_source='joint_torque')
    result.provenance.pop('robot_source', None)
    result.save(tmp_path / 'five.yaml')
    bag = tmp_path / 'five'
    assert run_dynid('simulate', '--quiet', '-o', bag, '--duration', '1', '--robot', 'ur5', '--joints',
                     ','.join(arm.joint_names)).returncode == 0
    run = run_dynid('contact', bag, '--params', tmp_path / 'five.yaml', '--robot', 'ur5', '--joints',
                    ','.join(arm.joint_names), '--wrench')
    assert run.returncode == 2 and 'needs six joints' in run.stderr, run.stderr


def test_an_obstacle_is_mujocos_and_its_contact_is_in_the_truth(tmp_path):
    pytest.importorskip('mujoco')
    run = run_dynid('simulate', '--quiet', '-o', tmp_path / 'twin', '--duration', '1', '--obstacle',
                    '0,0,1,0.1,0.1,0.1')
    assert run.returncode == 2 and '--engine mujoco' in run.stderr
    # a box around the tool at the home pose: the tool sphere is in it from the start
    from dynid.model import load_robot
    from dynid.sim.twin import home_configuration

    robot = load_robot('ur5e')
    model = robot.pinocchio_model
    data = model.createData()
    import pinocchio as pin
    pin.framesForwardKinematics(model, data, home_configuration(robot))
    tool = data.oMf[model.getFrameId(robot.flange)].translation
    box = ','.join(f'{v:.4f}' for v in (*tool + [0.0, 0.0, 0.05], 0.05, 0.05, 0.03))
    run = run_dynid('simulate', '--quiet', '-o', tmp_path / 'hit', '--duration', '0.5', '--engine', 'mujoco',
                    f'--obstacle={box}')  # '=': a value may start with a minus sign
    assert run.returncode == 0, run.stderr
    table = np.loadtxt(tmp_path / 'hit' / 'contact_truth.csv', delimiter=',', skiprows=1)
    assert np.abs(table[:, 1:7]).max() > 1.0
