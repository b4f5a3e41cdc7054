"""Recordings whose joint_states effort is motor current (the UR driver's) read as current, not as torque.

A twin recording is rewritten twice with the same current i [A]: the UR way (joint_states effort = i,
no other topic, what ``ros2 bag record /joint_states`` keeps of ur_robot_driver) and the dynid way
(joint_states without effort, i on ``joint_currents``). Read with ``joint_states_effort='current'``
the first is the second; ``dynid identify --joint-states-effort current`` identifies the same model
from both.
"""

import dataclasses

import numpy as np
import pytest
import yaml

from dynid.cli import main
from dynid.errors import InputError
from dynid.excite.trajectory import builtin_excitation_path
from dynid.identify.result.result import IdentificationResult
from dynid.io.bag import read_bag, write_bag
from dynid.sim.recording import SimulationSettings, simulate_recording

WARNING = 'the effort read as joint torque [N·m] looks like motor current [A]'


@pytest.fixture(scope='module')
def bags(ur5e, tmp_path_factory):
    folder = tmp_path_factory.mktemp('effort')
    twin = simulate_recording(ur5e, folder / 'twin', builtin_excitation_path('ur5e'),
                              SimulationSettings(duration_s=12.0, rate_hz=250.0, seed=2), quiet=True)
    recorded = read_bag(twin, ur5e.joint_names)
    common = dataclasses.replace(recorded, theta=None, dtheta=None, temperature=None, source={})
    ur = write_bag(folder / 'ur', dataclasses.replace(common, tau=recorded.current, current=None))
    dynid = write_bag(folder / 'dynid', dataclasses.replace(common, tau=None))
    return {'twin': twin, 'ur': ur, 'dynid': dynid, 'current': recorded.current, 'tau': recorded.tau}


def test_effort_read_as_current_is_the_current_signal_and_no_torque(bags, ur5e):
    as_current = read_bag(bags['ur'], ur5e.joint_names, joint_states_effort='current')
    assert as_current.tau is None
    np.testing.assert_array_equal(as_current.current, bags['current'])
    assert as_current.source['joint_states_effort'] == 'current'
    dynid = read_bag(bags['dynid'], ur5e.joint_names)
    np.testing.assert_array_equal(as_current.current, dynid.current)
    np.testing.assert_array_equal(as_current.q, dynid.q)
    as_torque = read_bag(bags['ur'], ur5e.joint_names)  # the default: what the effort held before the flag
    assert as_torque.current is None
    np.testing.assert_array_equal(as_torque.tau, bags['current'])


def test_current_with_a_joint_currents_topic_is_refused(bags, ur5e):
    for bag in ('twin', 'dynid'):
        with pytest.raises(InputError, match='also has /joint_currents; refusing to guess'):
            read_bag(bags[bag], ur5e.joint_names, joint_states_effort='current')


def test_a_meaning_other_than_torque_or_current_is_refused(bags, capsys):
    with pytest.raises(InputError, match='must be one of torque, current'):
        read_bag(bags['ur'], joint_states_effort='amps')
    for command, required in (('identify', '-o'), ('validate', '--params'), ('identify-friction', '--params'),
                              ('estimate', '--params')):
        with pytest.raises(SystemExit) as exit_:
            main([command, str(bags['ur']), required, 'r.yaml', '--joint-states-effort', 'amps'])
        assert exit_.value.code == 2
        assert "invalid choice: 'amps'" in capsys.readouterr().err


def _identify(bag, output, *options):
    code = main(['identify', str(bag), '-o', str(output), '--quiet', *options])
    assert code == 0
    return IdentificationResult.load(output)


def test_identify_from_effort_as_current_equals_identify_from_joint_currents(bags, tmp_path, capsys):
    from_effort = _identify(bags['ur'], tmp_path / 'effort.yaml', '--joint-states-effort', 'current')
    assert 'looks like' not in capsys.readouterr().out  # current read as current: the check agrees
    from_topic = _identify(bags['dynid'], tmp_path / 'topic.yaml')
    assert 'looks like' not in capsys.readouterr().out  # joint_currents recorded: nothing to warn about
    for result in (from_effort, from_topic):
        assert result.diagnosis_section['meaning'] == 'motor current'
    assert from_effort.model['torque_source'] == from_topic.model['torque_source'] == 'current'
    assert from_effort.provenance['inputs'][0]['source']['joint_states_effort'] == 'current'  # said in the result
    assert from_effort.parameter_names == from_topic.parameter_names
    # The two readings give equal datasets, so equal results up to floating-point summation order.
    scale = np.abs(from_topic.values).max()
    np.testing.assert_allclose(from_effort.values, from_topic.values, rtol=0, atol=1e-9 * scale)
    # And it is the twin's model, the currents scaled by the drive gains (13.5 N·m/A on these joints): the
    # gravity moments of the upper arm and forearm within 2 % of the truth (0.2 % and 0.4 % on this recording;
    # currents taken as torques would be 13.5 times too small).
    truth = yaml.safe_load((bags['twin'] / 'truth.yaml').read_text())['inertial']
    true_values = dict(zip(truth['base_names'], truth['base_values'], strict=True))
    for name in ('mx_2R', 'mx_3R'):
        assert from_effort.value(name) == pytest.approx(true_values[name], rel=0.02), name


def test_a_ur_recording_of_joint_states_read_as_torque_warns(bags, tmp_path, capsys):
    # The check against the robot file finds the current (its scale is 1/K_τ of the file's torque) whoever said
    # torque, and names the option; what was said decides the reading, so nothing changes silently.
    warned = _identify(bags['ur'], tmp_path / 'warned.yaml', '--force')
    out = capsys.readouterr().out
    assert WARNING in out and 'give --joint-states-effort current' in out
    said = _identify(bags['ur'], tmp_path / 'said.yaml', '--joint-states-effort', 'torque', '--force')
    assert WARNING + ' (--joint-states-effort says torque)' in capsys.readouterr().out
    assert warned.model['torque_source'] == said.model['torque_source'] == 'joint_torque'  # never changed silently
    np.testing.assert_array_equal(warned.values, said.values)


def test_every_bag_reading_command_takes_the_flag(bags, tmp_path, capsys):
    _identify(bags['dynid'], tmp_path / 'result.yaml')
    params = str(tmp_path / 'result.yaml')
    assert main(['validate', str(bags['ur']), '--params', params, '--joint-states-effort', 'current']) == 0
    scored = capsys.readouterr()
    assert 'NRMSE fit' in scored.out and WARNING not in scored.err
    for command, options in (('identify', ['-o', str(tmp_path / 'again.yaml')]), ('validate', ['--params', params]),
                             ('identify-friction', ['--params', params, '-o', str(tmp_path / 'friction.yaml')]),
                             ('estimate', ['--params', params])):
        # The twin's bag has joint_currents: read with current, each command refuses it in one line.
        assert main([command, str(bags['twin']), *options, '--joint-states-effort', 'current']) == 2, command
        assert 'refusing to guess' in capsys.readouterr().err, command
