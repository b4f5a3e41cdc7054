"""Several torque sources in one log: a channel that carries nothing is named (at import and at identify, refused
where identification reads it, with ways out that work as written), and where the source was left to dynid, which
source predicts held-out rows better is measured and said, the source read unchanged."""

import dataclasses

import numpy as np
import pytest

from builders import random_motion, twin_run
from cli_run import run_dynid
from dynid.diagnosis.channels import DEAD_SHARE, dead_channels
from dynid.diagnosis.effort import Recording
from dynid.errors import InputError
from dynid.identify.equations.request import ModelSpec, RecordingInput
from dynid.identify.job.torque_sources import compare_sources, compared_identification, comparison_line
from dynid.identify.job.ways_out import held_out_error
from dynid.identify.job.workflow import Identification, identify_and_save
from dynid.sim.parameters import PlantParameters

#: the noise of a channel that carries nothing [N·m]
DEAD_NOISE_NM = 0.002


@pytest.fixture(scope='module')
def both_sources(ur5e):
    """10 s of the UR5e twin at 250 Hz on a random Fourier motion: joint torque and motor currents, both live."""
    return twin_run(PlantParameters.defaults(ur5e), random_motion(ur5e, 3), 10.0, 3, rate_hz=250.0)


def _dead(dataset, source: str, joint: int, robot):
    """``dataset`` with ``joint``'s ``source`` channel noise only (DEAD_NOISE_NM of torque)."""
    rng = np.random.default_rng(joint)
    if source == 'tau':
        values = dataset.tau.copy()
        values[:, joint] = DEAD_NOISE_NM * rng.normal(size=len(values))
    else:
        values = dataset.current.copy()
        values[:, joint] = DEAD_NOISE_NM / abs(robot.drives.drive_gain[joint]) * rng.normal(size=len(values))
    return dataclasses.replace(dataset, **{source: values})


def test_live_channels_are_not_named_and_a_dead_one_is(ur5e, both_sources):
    assert dead_channels([Recording(both_sources)], ur5e) == []  # both sources live on every joint
    for source, name in (('tau', 'joint_torque'), ('current', 'current')):
        [channel] = dead_channels([Recording(_dead(both_sources, source, 1, ur5e))], ur5e)
        assert (channel.joint, channel.source) == ('shoulder_lift_joint', name)
        assert channel.spread_nm < DEAD_SHARE * channel.file_spread_nm and channel.file_spread_nm > 1.0
        assert 'shoulder_lift_joint' in channel.line() and 'carries nothing' in channel.line()


def test_a_small_live_wrist_is_not_a_dead_channel(ur5e, both_sources):
    """The unloaded UR5e wrist 3 carries ~mN·m of the robot file's torque: its channel, noise around that, is live
    (not judged), and so is one that carries exactly that torque."""
    tau = both_sources.tau.copy()
    tau[:, 5] = 0.2 * np.random.default_rng(0).normal(size=len(tau))
    assert dead_channels([Recording(dataclasses.replace(both_sources, tau=tau))], ur5e) == []
    quiet = _dead(both_sources, 'tau', 5, ur5e)  # noise of 2 mN·m on a joint the file gives no torque to speak of
    assert dead_channels([Recording(quiet)], ur5e) == []


def test_identify_refuses_a_dead_channel_it_reads_with_ways_out_that_work(ur5e, both_sources, tmp_path):
    dead = _dead(both_sources, 'current', 1, ur5e)  # auto reads the currents (the UR5e's drive gains are known)
    with pytest.raises(InputError) as refused:
        identify_and_save(ur5e, [RecordingInput(dead, name='a')], Identification(), tmp_path / 'r.yaml', 'ur5e')
    assert 'shoulder_lift_joint' in refused.value.template and 'motor current channel carries nothing' in str(
        refused.value)
    assert '{exclude_joints} shoulder_lift_joint' in refused.value.template
    assert '{torque_source} joint_torque' in refused.value.template
    assert not (tmp_path / 'r.yaml').exists()
    for spec in (ModelSpec(exclude_joints=('shoulder_lift_joint',)), ModelSpec(torque_source='joint_torque')):
        result, _ = identify_and_save(ur5e, [RecordingInput(dead, name='a')], Identification(spec=spec),
                                      tmp_path / 'r.yaml', 'ur5e')
        assert result.model['torque_source'] == spec.torque_source.replace('auto', 'current')
    assert any('motor current channel carries nothing' in w for w in result.warnings)  # the one not read: said


def test_which_source_predicts_better_is_measured_and_the_source_read_unchanged(ur5e, both_sources, tmp_path):
    recordings = [RecordingInput(both_sources, name='a')]
    result, _ = identify_and_save(ur5e, list(recordings), Identification(), tmp_path / 'r.yaml', 'ur5e')
    assert result.model['torque_source'] == 'current'  # what auto reads with known drive gains, as before
    compared = result.provenance['torque_sources']
    for source in ('joint_torque', 'current'):  # each scored as held_out_error scores it, with the compared model
        variant = compared_identification(Identification(), source)
        assert variant.spec.friction == 'viscous_coulomb' and variant.options.method == 'wls'
        assert compared['scores'][source] == held_out_error(ur5e, recordings, variant, None)
    best = min(compared['scores'], key=compared['scores'].get)
    line = comparison_line(compared, {'torque_source': '--torque {}'})
    assert compared['better'] == best and compared['read'] == 'current'
    assert line.startswith(f'of the torque sources, {best} predicts the last 30 % of each recording better (rel. '
                           f"{compared['scores'][best]:.3g} against")
    assert line.endswith(': --torque joint_torque' if best == 'joint_torque' else '; identified from it')
    given = Identification(spec=ModelSpec(torque_source='current'))
    assert compare_sources(ur5e, recordings, given, None, 'current', lambda text: None) is None
    only_tau = [RecordingInput(dataclasses.replace(both_sources, current=None, theta=None, dtheta=None), name='a')]
    assert compare_sources(ur5e, only_tau, Identification(), None, 'joint_torque', lambda text: None) is None


def test_identify_says_which_source_predicts_better(tmp_path, excited_ur5e_bag):
    done = run_dynid('identify', excited_ur5e_bag, '--robot', 'ur5e', '-o', tmp_path / 'r.yaml')
    assert done.returncode == 0, done.stderr
    [line] = [line for line in done.stdout.splitlines() if line.startswith('of the torque sources, ')]
    assert 'predicts the last 30 % of each recording better' in line
    assert line.endswith(('; identified from it', ': --torque joint_torque')), line


def test_import_names_a_dead_channel_and_the_live_source(ur5e, both_sources, tmp_path):
    data = _dead(both_sources, 'tau', 2, ur5e)
    n = ur5e.n
    header = ['time'] + [f'{s}_{i}' for s in ('q', 'dq', 'tau', 'current') for i in range(n)]
    np.savetxt(tmp_path / 'log.csv', np.column_stack([data.t, data.q, data.dq, data.tau, data.current]),
               delimiter=',', header=','.join(header), comments='', fmt='%.9g')
    done = run_dynid('import', tmp_path / 'log.csv', '--robot', 'ur5e', '-o', tmp_path / 'bag', '--columns',
                     'time=time,q=q_{i},dq=dq_{i},tau=tau_{i},current=current_{i}')
    assert done.returncode == 0, done.stderr
    assert ("note: elbow_joint's joint torque channel carries nothing" in done.stdout
            and '(its motor current channel is live: dynid identify --torque current)' in done.stdout), done.stdout
