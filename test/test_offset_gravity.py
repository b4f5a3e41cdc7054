"""An offset and a joint's gravity torque that the recorded poses cannot tell apart: what decided the split is said,
and a split the data alone made is a warning whose remedy works
(dynid.identify.steps.plausibility.offset_gravity_split)."""

import dataclasses

import numpy as np
import pytest

from dynid.cli import main
from dynid.identify.result.result import IdentificationResult
from dynid.model import load_robot


def _multisines(folder, amplitude: float):
    """20 s at 100 Hz of the twin's UR5e moved by multi-sines scaled by ``amplitude`` about its home pose."""
    from dynid.excite.fourier import FourierDesign, default_limits, random_design
    from dynid.io.bag import write_bag
    from dynid.sim.parameters import PlantParameters
    from dynid.sim.recording import record_to_dataset
    from dynid.sim.twin import DigitalTwin, home_configuration, trajectory_start

    robot = load_robot('ur5e')
    home = home_configuration(robot)
    design = FourierDesign(robot.joint_names, 5, 10.0)
    x = random_design(design, home, default_limits(robot, home), np.random.default_rng(31),
                      np.linspace(0.0, 10.0, 2000, endpoint=False)).reshape(robot.n, -1).copy()
    x[:, 1:] *= amplitude
    trajectory = design.trajectory(x.reshape(-1))
    trajectory = dataclasses.replace(trajectory, duration_s=20.0)
    twin = DigitalTwin(PlantParameters.defaults(robot), rate_hz=100.0, seed=31,
                       initial_q=trajectory_start(trajectory, robot.joint_names))
    twin.follow(trajectory, start_time=0.0)
    data = record_to_dataset(twin.run(20.0), None, {'simulation': 'test'})
    data = dataclasses.replace(data, current=None, theta=None, dtheta=None, temperature=None, source={})
    return write_bag(folder / f'multisines_{amplitude:g}', data)


@pytest.fixture(scope='module')
def about_home(tmp_path_factory):
    """Multi-sines of 0.08 rad: the elbow's gravity torque varies by well under 1 % of its RMS there."""
    return _multisines(tmp_path_factory.mktemp('home'), 0.08)


def _identify(bag, out, capsys, *options):
    assert main(['identify', str(bag), '--robot', 'ur5e', '--friction', 'viscous_coulomb', '--method', 'ols',
                 '--force', '-o', str(out), *options]) == 0
    return capsys.readouterr().out, IdentificationResult.load(out)


def test_the_data_alone_deciding_is_a_warning_and_the_prior_decides_when_given(about_home, tmp_path, capsys):
    printed, plain = _identify(about_home, tmp_path / 'plain.yaml', capsys, '--no-prior')
    splits = plain.model['offset_gravity']
    assert 'elbow_joint' in splits and splits['elbow_joint']['decided_by'] == 'the data'
    assert splits['elbow_joint']['gravity_spread_percent'] < 1.0
    [warning] = [w for w in plain.warnings if 'cannot tell the offset from gravity' in w]
    assert 'elbow_joint' in warning and 'without --no-prior' in warning
    # the advice followed: the prior decides, said in a line, and the warning is not given again
    printed, prior = _identify(about_home, tmp_path / 'prior.yaml', capsys)
    assert prior.model['offset_gravity']['elbow_joint']['decided_by'] == "the robot file's prior"
    assert not any('cannot tell the offset from gravity' in w for w in prior.warnings)
    assert "the robot file's prior decided the split" in printed
    # the file is the truth here: the prior's split keeps gravity near it
    assert 0.9 < prior.model['offset_gravity']['elbow_joint']['gravity_ratio'] < 1.1


def test_poses_far_apart_tell_them_apart(tmp_path, capsys):
    printed, result = _identify(_multisines(tmp_path, 1.0), tmp_path / 'r.yaml', capsys)
    assert 'offset_gravity' not in result.model and 'offset and gravity alike' not in printed
