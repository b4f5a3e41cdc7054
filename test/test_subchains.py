"""Sub-chains and left-out joints: one serial chain of a description that branches (--joints, on every command),
a vertical prismatic joint's gravity held apart from its offset, and a joint's equations left out (--exclude-joint).

The robot is test/data/torso_arm.urdf: a vertical prismatic torso carrying a six-joint arm and a two-joint head.
"""

from pathlib import Path

import numpy as np
import pytest
import yaml

from dynid.cli import main
from dynid.errors import InputError
from dynid.excite.fourier import FourierDesign, default_limits, random_design
from dynid.excite.home import home_configuration
from dynid.excite.trajectory import save_trajectory
from dynid.identify.result.result import IdentificationResult
from dynid.model import load_robot
from dynid.sim.recording import SimulationSettings, simulate_recording

URDF = str(Path(__file__).parent / 'data' / 'torso_arm.urdf')
ARM = [f'arm_{i}_joint' for i in range(1, 7)]
TORSO_ARM = ['torso_lift_joint', *ARM]


def test_a_chain_is_taken_in_chain_order_and_a_branching_choice_is_refused_with_the_chains():
    with pytest.raises(InputError, match=r"not a serial chain .* select one chain with joints; its "
                                         r"chains: \[torso_lift_joint, arm_1_joint … arm_6_joint\]; "
                                         r"\[torso_lift_joint, head_1_joint, head_2_joint\]"):
        load_robot(URDF)
    robot = load_robot(URDF, joints=list(reversed(ARM)))  # any order: the chain's
    assert robot.joint_names == tuple(ARM) and robot.flange == 'tool0'
    assert load_robot(URDF, joints=TORSO_ARM).joint_types[0] == 'prismatic'
    with pytest.raises(InputError, match=r"joints \['arm_2_joint', 'head_1_joint'\] are not on one serial chain"):
        load_robot(URDF, joints=['arm_2_joint', 'head_1_joint'])


def _recording(folder: Path, joints: list[str], seed: int) -> tuple[Path, Path]:
    """12 s of a random Fourier excitation of ``joints`` at 100 Hz, the twin's drive data beside it."""
    robot = load_robot(URDF, joints=joints)
    home = home_configuration(robot)
    design = FourierDesign(robot.joint_names, 5, 6.0)
    trajectory = design.trajectory(random_design(design, home, default_limits(robot, home),
                                                 np.random.default_rng(seed), np.linspace(0, 6, 2400, endpoint=False)))
    save_trajectory(trajectory, folder / 'trajectory.yaml', {})
    bag = simulate_recording(robot, folder / 'bag', str(folder / 'trajectory.yaml'),
                             SimulationSettings(duration_s=12.0, rate_hz=100.0, seed=seed), quiet=True)
    drives = folder / 'drives.yaml'  # a URDF has no drive data: the twin's nominal ones, as a user would give them
    drives.write_text(yaml.safe_dump({'drives': yaml.safe_load((bag / 'truth.yaml').read_text())['plant'][
        'nominal_drives']}))
    return bag, drives


@pytest.fixture(scope='module')
def arm_bag(tmp_path_factory):
    return _recording(tmp_path_factory.mktemp('arm'), ARM, 1)


def test_the_arm_of_a_branched_description_identifies_with_joints_alone(arm_bag, tmp_path, capsys):
    bag, drives = arm_bag
    output = tmp_path / 'arm.yaml'
    assert main(['identify', str(bag), '--robot', URDF, '--drives', str(drives), '-o', str(output), '--quiet']) == 2
    assert 'select one chain with --joints; its chains' in capsys.readouterr().err
    assert main(['identify', str(bag), '--robot', URDF, '--joints', ','.join(ARM), '--drives', str(drives), '-o',
                 str(output), '--quiet', '--force']) == 0
    result = IdentificationResult.load(output)
    assert list(result.joint_names) == ARM and result.provenance['robot_source']['joints'] == ARM
    capsys.readouterr()
    # validate loads the same chain from the result (the URDF alone would be refused as branching)
    assert main(['validate', str(bag), '--params', str(output)]) == 0
    printed = capsys.readouterr().out
    assert all(joint in printed for joint in ARM) and 'head_1_joint' not in printed
    fits = [float(line.split('NRMSE fit')[1].split('%')[0]) for line in printed.splitlines() if 'NRMSE fit' in line]
    assert min(fits) > 90.0


def test_import_takes_the_chain_of_joints_out_of_a_whole_robot_bag(arm_bag, tmp_path, capsys):
    from dynid.io.bag import read_bag, write_bag
    from dynid.io.dataset import Dataset

    arm = read_bag(arm_bag[0], ARM)
    others = ['head_2_joint', 'torso_lift_joint', 'head_1_joint']  # the rest of the robot, standing still
    names = others + list(reversed(ARM))  # as a driver of the whole robot publishes them
    still = np.zeros((arm.n_samples, len(others)))

    def whole(signal):
        return np.column_stack([still, signal[:, ::-1]])

    robot_bag = write_bag(tmp_path / 'whole', Dataset(names, arm.t, whole(arm.q), whole(arm.dq), tau=whole(arm.tau)))
    output = tmp_path / 'imported'
    assert main(['import', str(robot_bag), '--robot', URDF, '-o', str(output)]) == 2
    assert 'select one chain with --joints; its chains' in capsys.readouterr().err
    assert main(['import', str(robot_bag), '--robot', URDF, '--joints', ','.join(reversed(ARM)), '-o',
                 str(output)]) == 0
    imported = read_bag(output)
    assert imported.joint_names == tuple(ARM)  # the chain alone, in chain order
    np.testing.assert_allclose(imported.q, arm.q, atol=1e-9)
    np.testing.assert_allclose(imported.tau, arm.tau, atol=1e-9)


def test_a_left_out_joint_keeps_its_motion_and_holds_what_only_it_holds(arm_bag, tmp_path, capsys):
    bag, drives = arm_bag
    output = tmp_path / 'without_3.yaml'
    assert main(['identify', str(bag), '--robot', URDF, '--joints', ','.join(ARM), '--drives', str(drives),
                 '--exclude-joint', 'arm_3_joint', '-o', str(output), '--quiet', '--force', '--method', 'wls',
                 '--friction', 'viscous_coulomb']) == 0  # the law fixed: its held friction is named below
    out = capsys.readouterr().out
    assert 'held, not identified: Fc_3 = 0, Fv_3 = 0, tau0_3 = 0 (the equations of arm_3_joint are left out)' in out
    result = IdentificationResult.load(output)
    assert result.model['exclude_joints'] == ['arm_3_joint'] and set(result.model['held']) == {'Fc_3', 'Fv_3', 'tau0_3'}
    train = result.metrics['train']['joints']
    assert train['arm_3_joint']['rows'] == 0 and all(train[j]['rows'] > 0 for j in ARM if j != 'arm_3_joint')
    assert train['arm_3_joint']['left_out'] and 'left_out' not in train['arm_2_joint']
    assert '  arm_3_joint' in out and 'left out of the identification (exclude_joints): not scored' in out
    assert 'warning: train: arm_3_joint' not in out  # the user's choice, not a fault of the data
    assert 'every row was dropped' not in out
    assert result.std[result.parameter_names.index('Fc_3')] == 0.0
    assert main(['identify', str(bag), '--robot', URDF, '--joints', ','.join(ARM), '--exclude-joint', 'elbow',
                 '-o', str(output), '--quiet', '--force']) == 2
    assert "exclude_joints names ['elbow']" in capsys.readouterr().err


def test_a_vertical_prismatic_torso_holds_its_offset_apart_from_its_lifted_mass(tmp_path, capsys):
    bag, drives = _recording(tmp_path, TORSO_ARM, 2)
    output = tmp_path / 'torso.yaml'
    assert main(['identify', str(bag), '--robot', URDF, '--joints', ','.join(TORSO_ARM), '--drives', str(drives),
                 '-o', str(output), '--quiet', '--force']) == 0
    out = capsys.readouterr().out
    assert 'held, not identified: tau0_1 = 0 (structural: the gravity term of m_1R on torso_lift_joint is the same ' \
           'constant torque at every pose' in out
    assert 'richer excitation' not in out
    result = IdentificationResult.load(output)
    truth = yaml.safe_load((bag / 'truth.yaml').read_text())['inertial']
    lifted = dict(zip(truth['base_names'], truth['base_values'], strict=True))['m_1R']  # everything the torso lifts
    assert result.value('m_1R') == pytest.approx(lifted, rel=0.01)
