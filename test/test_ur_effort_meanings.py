"""Recordings in each of today's UR effort modes, read right without flags (docs/backends/ur.md).

A twin recording with a 2 kg tool is rewritten as ``ros2 bag record /joint_states`` keeps a UR driver's
effort in each mode, with dynid's record of what it holds (as a bag of the twin or of identifier_node under
ur.launch.py has): motor current; the drive torque K·i (current as torque); K·i less the robot's gravity with
the payload set on the robot (UR's ``actual_current_as_torque``), set right (2 kg) and set wrong (none).
Each is read back by the commands' reader (:func:`dynid.cli.reading.read_bag`) without being told what the
effort holds: the torque modes are the drive torque K·i (the gravity added back with the payload the robot had),
read as what it is, the motor current through the drive gains; a wrongly set payload is named.
"""

import dataclasses

import numpy as np
import pytest

from dynid.cli.reading import read_bag as read_for_commands
from dynid.excite.trajectory import builtin_excitation_path
from dynid.io.bag import read_bag, write_bag
from dynid.io.gravity_restore import gravity_torque, payload_from_record, payload_record, restore_gravity
from dynid.model import Payload
from dynid.sim.recording import SimulationSettings, simulate_recording
from dynid.sim.ur_modes import as_driver_recording, driver_effort

TOOL = Payload(2.0, [0.0, 0.0, 0.05])


@pytest.fixture(scope='module')
def recording(ur5e, tmp_path_factory):
    folder = tmp_path_factory.mktemp('ur_modes')
    twin = simulate_recording(ur5e, folder / 'twin', builtin_excitation_path('ur5e'),
                              SimulationSettings(duration_s=10.0, rate_hz=250.0, seed=3, payload_kg=2.0), quiet=True)
    return folder, read_bag(twin, ur5e.joint_names)


def _driver_bag(folder, name, dataset, ur5e, meaning, payload_set=None):
    return write_bag(folder / name, as_driver_recording(dataset, ur5e, meaning, payload_set))


def test_each_mode_is_read_by_its_record_without_a_flag(recording, ur5e, capsys):
    folder, dataset = recording
    drive_torque = ur5e.drives.current_to_joint_torque(dataset.current)
    current = read_for_commands(_driver_bag(folder, 'current', dataset, ur5e, 'current'), ur5e, None)
    assert current.tau is None
    np.testing.assert_allclose(current.current, dataset.current)
    as_torque = read_for_commands(_driver_bag(folder, 'as_torque', dataset, ur5e, 'current_as_torque'), ur5e, None)
    assert as_torque.tau is None
    np.testing.assert_allclose(as_torque.current, dataset.current, atol=1e-9)
    assert as_torque.source['effort_as_recorded'] == 'current_as_torque'
    assert as_torque.source['joint_states_effort'] == 'current'
    bag = _driver_bag(folder, 'compensated', dataset, ur5e, 'gravity_compensated_torque', TOOL)
    raw = read_bag(bag, ur5e.joint_names, joint_states_effort='gravity_compensated_torque')
    at_rest = gravity_torque(ur5e, dataset.q, TOOL)
    # What the bag holds is K·i less the gravity with the tool: a few N·m where the gravity is tens.
    assert np.sqrt(np.mean(raw.tau[:, 1] ** 2)) < 0.5 * np.sqrt(np.mean(at_rest[:, 1] ** 2))
    capsys.readouterr()
    restored = read_for_commands(bag, ur5e, None)
    np.testing.assert_allclose(ur5e.drives.current_to_joint_torque(restored.current), drive_torque, atol=1e-6)
    assert restored.source['effort_as_recorded'] == 'gravity_compensated_torque'
    assert restored.source['payload_set_check']['warning'] is None
    assert 'not the one it carried' not in capsys.readouterr().err


def test_a_wrongly_set_payload_is_named_and_the_torque_still_restored(recording, ur5e, capsys):
    folder, dataset = recording
    bag = _driver_bag(folder, 'wrong', dataset, ur5e, 'gravity_compensated_torque', None)  # tool not set
    capsys.readouterr()
    restored = read_for_commands(bag, ur5e, None)
    np.testing.assert_allclose(restored.current, dataset.current, atol=1e-6)
    check = restored.source['payload_set_check']
    assert check['set_kg'] == 0.0
    assert check['carried_kg'] == pytest.approx(2.0, abs=0.5)
    err = capsys.readouterr().err
    assert 'the payload set on the robot (0 kg) is not the one it carried' in err


def test_an_unrecorded_payload_set_is_said(recording, ur5e, capsys):
    folder, dataset = recording
    driver = as_driver_recording(dataset, ur5e, 'gravity_compensated_torque', None)
    bag = write_bag(folder / 'unrecorded', dataclasses.replace(driver, source={**driver.source,
                                                                               'robot_payload': None}))
    capsys.readouterr()
    read_for_commands(bag, ur5e, None)
    assert 'the payload set on the robot is not recorded' in capsys.readouterr().err


def test_payload_record_round_trip_and_restore_inverts_removal(ur5e, recording):
    _, dataset = recording
    back = payload_from_record(payload_record(TOOL))
    assert back.mass == TOOL.mass and np.allclose(back.com, TOOL.com)
    assert payload_from_record(payload_record(None)) is None
    assert payload_from_record({'mass': 1.0, 'inertia': [1, 2, 3, 0.1, 0.2, 0.3]}).inertia[0, 2] == pytest.approx(0.2)
    effort = driver_effort(ur5e, 'gravity_compensated_torque', dataset.q, None, dataset.current, TOOL)
    compensated = dataclasses.replace(dataset, tau=effort)
    np.testing.assert_allclose(restore_gravity(compensated, ur5e, TOOL).tau,
                               ur5e.drives.current_to_joint_torque(dataset.current), atol=1e-9)


def test_dynid_simulate_writes_a_ur_mode_and_identify_reads_it_without_flags(ur5e, tmp_path, capsys):
    from dynid.cli import main

    bag = tmp_path / 'ur_torques'
    assert main(['simulate', '--robot', 'ur5e', '--duration', '4', '--rate', '250', '--payload', '2',
                 '--robot-payload', '0', '--joint-states-effort', 'gravity_compensated_torque', '-o', str(bag),
                 '--quiet']) == 0
    capsys.readouterr()
    read = read_for_commands(bag, ur5e, None)
    assert read.source['effort_as_recorded'] == 'gravity_compensated_torque' and read.theta is None
    assert 'the payload set on the robot (0 kg) is not the one it carried' in capsys.readouterr().err
    with pytest.raises(SystemExit) as exit_:
        main(['simulate', '--duration', '1', '--joint-states-effort', 'amps', '-o', str(tmp_path / 'x')])
    assert exit_.value.code == 2
