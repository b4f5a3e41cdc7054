"""identifier_node's core without DDS: recordings written take by take, identification refused or kept."""

import dataclasses

import numpy as np
import pytest
import yaml
from rosbags.rosbag2 import Reader

from dynid.errors import InputError, checked_choice
from dynid.excite.trajectory import builtin_excitation_path, load_trajectory
from dynid.identify.job.session import IdentificationSession
from dynid.identify.result.quality import identifiability_refusal
from dynid.identify.result.result import IdentificationResult
from dynid.identify.settings import CHOICES, IdentifierSettings
from dynid.io.bag import STATE_TOPICS
from dynid.io.cdr import JointStateEncoder
from dynid.io.recorder import read_recording
from dynid.ros.runner import PARAMETER_ADVICE, node_message
from dynid.sim.parameters import PlantParameters
from dynid.sim.recording import record_to_dataset
from dynid.sim.twin import DigitalTwin, gentle_motion, trajectory_start

START_NS = 1_700_000_000_000_000_000
FAST = IdentifierSettings(report=False)


def _simulate(robot, trajectory, seconds: float):
    twin = DigitalTwin(PlantParameters.defaults(robot, seed=0), rate_hz=250.0, seed=0,
                       initial_q=trajectory_start(trajectory, robot.joint_names))
    twin.follow(trajectory, start_time=0.0)
    return record_to_dataset(twin.run(seconds), None, {})


@pytest.fixture(scope='module')
def excited(ur5e):
    """One period (10 s) of the UR5e's shipped optimized excitation on the twin, 250 Hz."""
    return _simulate(ur5e, load_trajectory(builtin_excitation_path('ur5e')), 10.0)


@pytest.fixture(scope='module')
def gentle(ur5e):
    """15 s of the twin's gentle motion: it excites too little to identify the model (cond ~1e4)."""
    return _simulate(ur5e, gentle_motion(ur5e), 15.0)


def _takes(dataset, take_s: float = 0.028):
    """The dataset as the intake gives it: {topic: (stamps [ns], CDR bytes)} per ``take_s`` of samples,
    topics in reverse contract order (joint_temperatures first) so that writing must sort by stamp;
    7 samples per take at 250 Hz, so that segments (a whole number of samples) end inside a take."""
    stamps = START_NS + np.round(dataset.t * 1e9).astype(np.int64)
    encoded = {}
    for topic, fields in reversed(STATE_TOPICS.items()):
        values = {name: getattr(dataset, field) for name, field in zip(('position', 'velocity', 'effort'), fields,
                                                                       strict=True) if field is not None}
        encoded[topic] = JointStateEncoder(dataset.joint_names, tuple(values)).encode(stamps, **values)
    per_take = max(1, round(take_s / np.median(np.diff(dataset.t))))
    for first in range(0, stamps.size, per_take):
        part = slice(first, first + per_take)
        yield {topic: (stamps[part], messages[part]) for topic, messages in encoded.items()}


def _record(session, dataset, folder):
    session.start(folder, segment_s=2.0)
    assert all(session.write(take) for take in _takes(dataset))  # every take held joint_states
    return session.close()


def test_takes_are_recorded_in_stamp_order_under_the_namespace(ur5e, excited, tmp_path):
    session = IdentificationSession(ur5e, 'ur5e', namespace='/arm')
    assert not session.write(next(_takes(excited)))  # nothing open: nothing written
    folder = session.start(tmp_path, segment_s=2.0)
    assert folder.parent == tmp_path and folder.name.startswith('recording_')
    with pytest.raises(InputError, match='already recording'):
        session.start(tmp_path, segment_s=2.0)
    for take in _takes(excited):
        session.write(take)
    assert session.close() == folder == session.last_recording and session.recorder is None
    assert session.last_messages == 4 * excited.t.size and session.close() is None
    segments = sorted(folder.glob('segment_*'))
    assert len(segments) == 5  # 10 s in closed segments of 2 s
    spans = []
    for segment in segments:
        with Reader(segment) as reader:
            spans.append((reader.start_time, reader.end_time))
    # Written in stamp order, each segment holds the samples of its own 2 s, every topic of them.
    assert all(spans[k + 1][0] > spans[k][1] for k in range(len(spans) - 1)), spans
    recorded = read_recording(folder, ur5e.joint_names, '/arm')
    np.testing.assert_allclose(recorded.t, excited.t - excited.t[0], atol=1e-9)
    for signal in ('q', 'dq', 'tau', 'theta', 'dtheta', 'current', 'temperature'):
        np.testing.assert_array_equal(getattr(recorded, signal), getattr(excited, signal))
    with pytest.raises(InputError, match='cannot record') as refused:  # a file where the folder should go
        (tmp_path / 'file').write_text('')
        session.start(tmp_path / 'file', segment_s=2.0)
    assert refused.value.fields == ('output_directory',)  # the front end spells the setting at fault
    assert 'output_directory:=' in node_message(refused.value)


def test_a_recording_that_hears_nothing_says_so_and_what_to_do(ur5e, excited, tmp_path):
    """An open recording that has taken nothing for SILENT_S is a warning on /diagnostics: how long, and, with the
    publishers the node sees, what it means (a CI run's hang, 2026-11: a process stopped for 2 s came back deaf to
    shared memory while its diagnostics said 'ok')."""
    from dynid.identify.job.session import SILENT_S

    now = [100.0]
    session = IdentificationSession(ur5e, 'ur5e', namespace='/arm', clock=lambda: now[0])
    assert session.statuses(publishers=1)[0][1] == 'ok'  # not recording: nothing to hear
    session.start(tmp_path, segment_s=2.0)
    now[0] += SILENT_S + 1.0  # nothing heard yet (a best-effort publisher looks the same): no word of a lost port
    assert session.statuses(publishers=1)[0][1:3] == (
        'warn', f'recording to {session.recorder.folder}: no state message for {SILENT_S + 1.0:.0f} s '
                'while 1 /arm/joint_states publisher is there')
    takes = _takes(excited)
    session.write(next(takes))
    now[0] += SILENT_S - 0.5
    assert session.statuses(publishers=1)[0][1] == 'ok'
    now[0] += 2.0  # silent SILENT_S + 1.5 s
    what, level, message, values = session.statuses(publishers=1)[0]
    assert (what, level, values['silent_s']) == ('recording', 'warn', SILENT_S + 1.5)
    assert f'no state message for {SILENT_S + 1.5:.0f} s while 1 /arm/joint_states publisher is there' in message
    assert 'restart this node' in message
    assert session.statuses(publishers=0)[0][2].endswith('and no /arm/joint_states publisher')
    assert session.statuses()[0][2].endswith(f'no state message for {SILENT_S + 1.5:.0f} s')  # publishers not known
    session.write(next(takes))  # heard again
    assert session.statuses(publishers=1)[0][1] == 'ok'
    session.close()
    assert session.statuses(publishers=1)[0][1] == 'ok'


def test_begin_says_why_no_identification_can_run(ur5e, excited, tmp_path):
    session = IdentificationSession(ur5e, 'ur5e')
    with pytest.raises(InputError, match='nothing recorded yet'):
        session.begin()
    session.start(tmp_path, segment_s=2.0)
    with pytest.raises(InputError, match='stop the recording first'):
        session.begin()
    folder = session.close()
    assert session.begin() == folder and session.identifying
    with pytest.raises(InputError, match='already running'):
        session.begin()


def test_identifiable_data_give_a_result_written_beside_the_recording(ur5e, excited, tmp_path):
    session = IdentificationSession(ur5e, 'ur5e')
    recording = _record(session, excited, tmp_path)
    identified = session.identify(session.begin(), FAST)
    assert not session.identifying and session.outcome == ('ok', identified.message)
    assert identified.path == recording / 'result.yaml' and identified.path.exists()
    assert not (recording / 'report').exists()  # report=False
    residual = identified.result.metrics['train']['relative_residual']
    result = identified.result  # the method and friction law chosen by cross-validation (the defaults)
    assert identified.message == (f'{result.method.upper()}: {len(result.parameter_names)} parameters, relative '
                                  f'residual {residual:.4g}; wrote {identified.path}')
    assert result.model['choice']['friction_terms'].keys() == set(ur5e.joint_names)
    assert residual < 0.1  # the twin's noise, not a misfit
    document = yaml.safe_load(identified.document)
    assert len(document['base_parameters']) == 36  # + the friction of the laws chosen
    published = IdentificationResult.from_dict(document)
    assert published.parameter_names == identified.result.parameter_names
    assert published.provenance['robot_spec'] == 'ur5e'
    assert identifiability_refusal(identified.result) is None
    assert identified.result.condition_number_scaled < 1000.0


def test_data_that_cannot_identify_the_model_are_refused_unless_forced(ur5e, gentle, tmp_path):
    # Without the robot file as a prior (prior:=false): with it, the prior completes what the gentle motion
    # leaves open (test_identifiability.py).
    from dynid.model.dh_urdf import robot_urdf

    description = robot_urdf('ur5e')  # the robot given as URDF text, as robot_description gives it
    session = IdentificationSession(ur5e, description)  # the fields' bare names (a front end spells them)
    recording = _record(session, gentle, tmp_path)
    fixed = {'method': 'wls', 'friction': 'viscous_coulomb'}  # the model whose 54 parameters the data cannot hold
    with pytest.raises(InputError) as refused:
        session.identify(session.begin(), dataclasses.replace(FAST, prior=False, **fixed))
    reason = str(refused.value)
    assert reason.startswith('the data cannot identify the model: cond(W) = ')
    assert 'dynid excite --optimize' in reason and reason.endswith('(force keeps the result anyway)')
    assert refused.value.fields == ('force',)
    # The prior that would complete the data, turned off, is tried (not advised unmeasured): here it does not
    # identify the model either, and the refusal says why; the new data it needs are said to be not scored.
    assert 'no setting tried makes these data identify the model (' in reason and '; prior: ' in reason
    assert "or identify with the robot file's prior" not in reason
    assert 'not scored (new data or a value dynid cannot try): record an optimized excitation' in reason
    assert node_message(refused.value).endswith('(force:=true keeps the result anyway)')  # as a node says it
    assert session.outcome == ('warn', f'refused: {reason}') and not session.identifying
    session.spelling, session.message = PARAMETER_ADVICE, node_message  # as identifier_node makes it
    assert not (recording / 'result.yaml').exists()
    kept = session.identify(session.begin(), IdentifierSettings(report=False, force=True, prior=False, **fixed))
    assert kept.result.warnings[0].startswith('kept with force:=true although the data cannot identify the model')
    assert kept.path.exists() and session.outcome[0] == 'ok'
    assert kept.result.provenance['robot_spec'] == 'robot_description'
    assert kept.result.provenance['robot_source']['urdf_xml'] == description  # loadable again, as the CLI's


def test_bad_choices_are_refused_with_the_allowed_values(ur5e, excited, tmp_path):
    assert checked_choice('method', 'wls', CHOICES['method']) == 'wls'
    with pytest.raises(InputError) as refused:
        checked_choice('method', 'magic', CHOICES['method'])
    assert str(refused.value) == ("method must be one of auto, ols, wls, irls, iirls, tls, mls, didim, idim_iv, "
                                  "got 'magic'")
    session = IdentificationSession(ur5e, 'ur5e')
    _record(session, excited, tmp_path)
    with pytest.raises(InputError, match='friction must be one of'):
        session.identify(session.begin(), IdentifierSettings(friction='sticky'))
    assert session.outcome[0] == 'warn' and not session.identifying


def test_the_sign_check_runs_and_torque_sign_and_exclude_joints_reach_the_identification(ur5e, excited, tmp_path):
    import dataclasses

    # shoulder_lift_joint's effort counted the other way round, as some drivers do
    flipped = dataclasses.replace(excited, tau=excited.tau * np.array([1, -1, 1, 1, 1, 1]))
    session = IdentificationSession(ur5e, 'ur5e', spelling=PARAMETER_ADVICE)  # identifier_node's spelling
    _record(session, flipped, tmp_path)
    identified = session.identify(session.begin(), FAST)
    warning = ("the measured torque of shoulder_lift_joint has the opposite sign of the robot file's gravity and "
               'inertia torque (scale shoulder_lift_joint -1')
    assert len(identified.warnings) == 1 and warning in identified.warnings[0]
    assert 'give torque_sign:=[shoulder_lift_joint=-1]' in identified.warnings[0]
    assert identified.warnings[0] in identified.result.warnings and identified.warnings[0] in identified.message
    assert session.outcome == ('warn', identified.message)
    check = identified.result.diagnosis_section
    assert [name for name, joint in check['joints'].items() if joint['sign'] < 0] == ['shoulder_lift_joint']
    assert check['said'] == 'torque'
    fixed = session.identify(session.begin(), IdentifierSettings(report=False, torque_sign=('shoulder_lift_joint=-1',),
                                                                 exclude_joints=('wrist_3_joint',)))
    assert fixed.warnings == () and session.outcome == ('ok', fixed.message)
    assert fixed.result.provenance['inputs'][0]['source']['torque_sign'] == {'shoulder_lift_joint': -1}
    assert fixed.result.model['exclude_joints'] == ['wrist_3_joint']
    assert fixed.result.metrics['train']['joints']['wrist_3_joint']['rows'] == 0
    with pytest.raises(InputError, match=r"torque_sign takes JOINT=-1 \(or JOINT=1, all=-1\), got 'elbow_joint=2'"):
        session.identify(session.begin(), IdentifierSettings(report=False, torque_sign=('elbow_joint=2',)))
    with pytest.raises(InputError, match=r"exclude_joints names \['elbow'\]"):
        session.identify(session.begin(), IdentifierSettings(report=False, exclude_joints=('elbow',)))


def test_the_settings_dynid_identify_shares_reach_the_node_identification(ur5e, excited, tmp_path):
    """torque_source and physical_solver: fields of the one settings class that dynid identify's options and
    identifier_node's parameters are made of, used by the node's identification; weight_function and fix_drive_gain:
    the methods' own options (the node gives them as method_option entries), each read by the methods that declare
    it and refused by name for another."""
    session = IdentificationSession(ur5e, 'ur5e', spelling=PARAMETER_ADVICE, message=node_message)
    _record(session, excited, tmp_path)
    settings = IdentifierSettings(report=False, method='irls', friction='viscous_coulomb', prior=False,
                                  torque_source='joint_torque', method_option=('weight_function=tukey',))
    identified = session.identify(session.begin(), settings)
    assert identified.result.model['torque_source'] == 'joint_torque'
    assert identified.result.provenance['options']['weight_function'] == 'tukey'
    with pytest.raises(InputError) as refused:  # held gains are for the methods that identify them
        session.identify(session.begin(), dataclasses.replace(
            settings, method_option=(*settings.method_option, 'fix_drive_gain=elbow_joint=10')))
    assert ('method irls has no option fix_drive_gain (its options: weight_function; fix_drive_gain is an option of '
            'tls, mls)') in str(refused.value)
    with pytest.raises(InputError, match='physical_solver must be one of clarabel, scs, log_cholesky'):
        session.identify(session.begin(), dataclasses.replace(settings, physical_solver='mosek'))


def test_the_node_and_dynid_identify_run_one_workflow(ur5e, excited, tmp_path, capsys):
    # identifier_node's core and `dynid identify` on one recording: the same result and provenance (the robot
    # as loadable, the filters, the inputs and their checks); only clocks and the front end's spelling differ.
    from dynid.cli import main

    session = IdentificationSession(ur5e, 'ur5e')
    recording = _record(session, excited, tmp_path)
    session.identify(session.begin(), FAST)
    node = IdentificationResult.load(recording / 'result.yaml').to_dict()
    assert main(['identify', str(recording), '--robot', 'ur5e', '--joint-states-effort', 'torque', '--quiet',
                 '-o', str(tmp_path / 'cli.yaml')]) == 0
    cli = IdentificationResult.load(tmp_path / 'cli.yaml').to_dict()
    for document in (node, cli):
        document['provenance'].pop('created')
        document['prior'].pop('seconds')
    assert node['provenance']['robot_source'] == {'kind': 'built-in', 'spec': 'ur5e'}
    said = [d['diagnosis'].pop('said_by') for d in (node, cli)]
    assert said == ['joint_states_effort', '--joint-states-effort']
    assert [d['provenance']['inputs'][0]['source']['effort_said'].pop('said_by') for d in (node, cli)] == said
    flat_node, flat_cli = _leaves(node), _leaves(cli)
    assert flat_node.keys() == flat_cli.keys()
    for key, value in flat_node.items():  # one computation on one machine; 1e-9 leaves room for BLAS threads
        assert flat_cli[key] == (pytest.approx(value, rel=1e-9, abs=1e-12) if isinstance(value, float) else value), key


def _leaves(document, path: str = '') -> dict:
    """{'a.b[0].c': value} of a nested YAML document."""
    if isinstance(document, dict):
        return {k: v for key, item in document.items() for k, v in _leaves(item, f'{path}.{key}').items()}
    if isinstance(document, list):
        return {k: v for i, item in enumerate(document) for k, v in _leaves(item, f'{path}[{i}]').items()}
    return {path: document}
