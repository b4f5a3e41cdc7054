"""Torque sources of dynid identify: motor-side torque with rotor inertias identified, an ``auto`` that
picks what works, and rotor options refused where they mean nothing (issue 13, item 8)."""

import dataclasses

import numpy as np
import pytest
import yaml

from dynid.cli import main
from dynid.excite.trajectory import builtin_excitation_path, load_trajectory
from dynid.io.bag import write_bag
from dynid.model import load_robot
from dynid.sim.parameters import PlantParameters
from dynid.sim.recording import record_to_dataset
from dynid.sim.twin import DigitalTwin


@pytest.fixture(scope='module')
def motor_torque_bag(tmp_path_factory):
    """A 12 s, 250 Hz twin recording whose joint_states effort is the motor's torque K_τ·i (link side, N·m:
    rotor inertia B·θ̈ and friction inside it), as drivers that report a target or actual moment do; no
    currents. The twin's friction is Coulomb + viscous, the model identified. Returns (bag, true B)."""
    robot = load_robot('ur5e')
    params = PlantParameters.defaults(robot)
    params.joints.friction_model = 'coulomb_viscous'
    trajectory = dataclasses.replace(load_trajectory(builtin_excitation_path('ur5e')), duration_s=12.0)
    twin = DigitalTwin(params, rate_hz=250.0, seed=1, initial_q=trajectory.evaluate(np.array([0.0]))[0][0])
    twin.follow(trajectory)
    dataset = record_to_dataset(twin.run(12.0), None, {'simulation': 'motor torque'})
    dataset = dataclasses.replace(dataset, tau=dataset.current * params.drives.drive_gain, current=None)
    bag = tmp_path_factory.mktemp('motor_torque') / 'rec'
    write_bag(bag, dataset)
    return bag, dict(zip(robot.joint_names, params.drives.rotor_inertia, strict=True))


def test_motor_torque_identifies_rotor_inertias_within_5_percent(motor_torque_bag, tmp_path):
    bag, truth = motor_torque_bag
    out = tmp_path / 'r.yaml'
    assert main(['identify', str(bag), '--torque', 'motor_torque', '--quiet', '-o', str(out)]) == 0
    document = yaml.safe_load(out.read_text())
    assert document['model']['torque_source'] == 'motor_torque'
    assert document['model']['rotor_inertia_identified'] and not document['model']['rotor_compensation']
    inertias = {row['name']: row['value'] for row in document['base_parameters']
                if row['name'].startswith('Ia_') and row['expression'] == row['name']}
    assert len(inertias) >= 3  # the others regroup with link inertias
    joints = list(truth)
    for name, value in inertias.items():
        assert value == pytest.approx(truth[joints[int(name[3:]) - 1]], rel=0.05), name


def test_rotor_options_are_refused_for_the_joint_torque(motor_torque_bag, tmp_path, capsys):
    bag, _ = motor_torque_bag
    out = tmp_path / 'r.yaml'
    assert main(['identify', str(bag), '--torque', 'joint_torque', '--no-rotor-compensation', '--quiet',
                 '-o', str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and '--no-rotor-compensation' in err[0] and 'motor_torque' in err[0], err
    assert main(['identify', str(bag), '--torque', 'current', '--quiet', '-o', str(out)]) == 2
    assert 'no motor currents' in capsys.readouterr().err
    assert not out.exists()
    assert main(['identify', str(bag), '--torque', 'motor_torque', '--payload-com', '0,0,0.05', '--quiet',
                 '-o', str(out)]) == 2
    assert '--payload-mass' in capsys.readouterr().err
    assert not out.exists()
