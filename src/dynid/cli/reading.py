"""Reading recordings as the user told: the effort-meaning argument group, the torque signs given, the effort
meaning a recording holds, restoring gravity a driver removed, the checks of a recording against the robot file,
the recordings of an identification with their payloads, and drives files."""

from __future__ import annotations

import argparse
import sys

from dynid.cli.flags import ADVICE
from dynid.errors import InputError


def add_effort_argument(parser: argparse.ArgumentParser) -> None:
    from dynid.cli.options import add_option
    from dynid.identify.settings import IdentifierSettings
    from dynid.io import EFFORT_MEANINGS

    parser.add_argument('--joint-states-effort', choices=EFFORT_MEANINGS, default=None,
                        help="what joint_states' effort holds in the recordings: torque (joint torque [N·m]; the "
                             'default), current (motor current [A], then used as a joint_currents topic is: through '
                             'the drive gains), current_as_torque (the drive torque K·i [N·m] from the current) or '
                             'gravity_compensated_torque (that torque minus the robot\'s gravity with the payload set '
                             'on it: added back). The UR driver publishes motor current there before its PR #1551 '
                             'or with use_currents_as_efforts:=true, and UR\'s gravity-compensated '
                             'actual_current_as_torque after it (docs/backends/ur.md). A recording dynid wrote says '
                             'what it holds and is read by that unless told. With current, a recording that also has a '
                             'joint_currents topic (as dynid simulate and identifier_node write) is refused. Each '
                             'recording is checked against the robot file (sign and scale of its torque per joint) and '
                             'a warning names what looks wrong')
    parser.add_argument('--joint-map', default=None, metavar='NAME=MODEL_JOINT,...',
                        help="the recordings' joint names where they are not the model's: comma-separated "
                             'NAME=MODEL_JOINT pairs. Not needed for the vendors\' prefixes (a tf_prefix or '
                             "arm_prefix, fer_joint1 or fr3_joint1 for panda_joint1), which are matched by name")
    add_option(parser, IdentifierSettings, 'torque_sign', '--torque-sign', action='append', metavar='JOINT=-1',
               show_default=False,
               help="negate joint_states' effort of a joint whose driver counts it the other way round from the "
                    'robot file (comma-separated or repeated; all=-1 for every joint); the check against the robot '
                    'file names the joints that need it. validate, estimate and identify-friction take the '
                    'identification\'s signs unless given')


def torque_signs(args: argparse.Namespace, joint_names) -> dict[str, int]:
    """{joint: ±1} of the --torque-sign options (``all`` for every joint of ``joint_names``)."""
    from dynid.io.dataset import parse_torque_signs

    return parse_torque_signs(getattr(args, 'torque_sign', []), joint_names, '--torque-sign')


def result_torque_signs(args: argparse.Namespace, result, joint_names) -> dict[str, int]:
    """--torque-sign where given, else the signs the result's identification applied (its first recording's),
    said on stderr: recordings of the same driver count the same way."""
    if getattr(args, 'torque_sign', None):
        return torque_signs(args, joint_names)
    inputs = result.provenance.get('inputs') or [{}]
    recorded = (inputs[0].get('source') or {}).get('torque_sign') or {}
    if recorded:
        print('note: the torque of ' + ', '.join(recorded) + ' is negated as in the identification (--torque-sign '
              + ','.join(f'{name}={sign}' for name, sign in recorded.items()) + '); --torque-sign all=1 keeps it as '
              'recorded', file=sys.stderr)
    return {name: int(sign) for name, sign in recorded.items()}


def effort_told(args: argparse.Namespace, torque_sources=()) -> str | None:
    """What the user said joint_states' effort holds: --joint-states-effort, else torque where --torque names
    the effort as a torque (``torque_sources``), else None (not said: read as torque, and checked)."""
    if args.joint_states_effort is None and getattr(args, 'torque', None) in torque_sources:
        return 'torque'
    return args.joint_states_effort


def read_bag(bag, robot, joint_states_effort: str | None, joint_map: str | None = None,
             signs: dict[str, int] | None = None, warn: bool = True, payload=None, check: bool = True,
             diagnosis: dict | None = None):
    """The recording ``bag`` in ``robot``'s joint order, joint_states' effort read as ``joint_states_effort``
    says (None: not given, torque), its joints named as ``joint_map`` (--joint-map text) or the vendors' prefixes
    say, the torque of the joints in ``signs`` negated. What the user or the recording said the effort holds is kept
    in ``source['effort_said']``. Where ``check``, the recording is diagnosed against the robot file with ``payload``
    (a :class:`dynid.model.Payload` on the flange, or None) (:func:`check_recording`: its warnings on stderr where
    ``warn``), unless an identification's ``diagnosis`` (its result's section) is given and the effort is read as it
    was there: that is kept instead, not decided again. A warning where its rate is another UR controller's than
    the robot's."""
    import numpy as np

    from dynid.io.recorder import read_recording
    from dynid.io.stream_checks import rate_note
    from dynid.model.naming import parse_joint_map
    from dynid.signal.preprocess import NonUniformSamplesError

    meaning = joint_states_effort or recorded_meaning(bag) or 'torque'
    dataset = read_recording(bag, robot.joint_names, None, meaning, parse_joint_map(joint_map))
    dataset = dataset.with_torque_signs(signs or {})
    if dataset.source.get('rtde'):  # the RTDE publisher's recording: what it holds is its fields' (dynid.io.rtde)
        meaning = dataset.source['joint_states_effort']
    if meaning == 'gravity_compensated_torque':
        dataset = restored_gravity(dataset, robot, bag, warn)
    if meaning in ('current_as_torque', 'gravity_compensated_torque'):  # a drive torque K·i: read as the current
        from dynid.io.gravity_restore import drive_torque_as_current
        dataset = drive_torque_as_current(dataset, robot)
    said, said_by = effort_said(joint_states_effort, bag, dataset)
    dataset.source['effort_said'] = {'said': said, 'said_by': said_by}
    if diagnosis is not None and (joint_states_effort is None or said == diagnosis.get('said')):
        dataset.source['diagnosis'] = diagnosis
    elif check:
        try:
            check_recording(dataset, robot, joint_states_effort, bag, warn, payload)
        except NonUniformSamplesError as error:  # a driver's raw stamps: name the import that resamples them
            from dynid.io.importing import import_command  # here: its resampling imports scipy.interpolate

            raise InputError(f'{error}: {import_command(bag, robot, joint_states_effort)}, then give the new bag') \
                from None
    note = rate_note(robot.builtin, 1.0 / float(np.median(np.diff(dataset.t))))
    if note:
        print(f'warning: {bag}: {note}', file=sys.stderr)
    return dataset


def effort_said(joint_states_effort: str | None, bag, dataset=None) -> tuple[str | None, str]:
    """(what the effort of ``bag`` holds, who said it): the user's --joint-states-effort, else the recording's own
    record (:func:`dynid.io.effort_record.recorded_effort`); (None, '') when neither says. A drive torque (UR's
    efforts) is said as what ``dataset`` read it as: the current it was made of."""
    from dynid.io import TORQUE_MEANINGS
    from dynid.io.effort_record import recorded_effort

    said, said_by = (joint_states_effort, '--joint-states-effort') if joint_states_effort else recorded_effort(bag)
    if said in TORQUE_MEANINGS and dataset is not None:
        said = dataset.source.get('joint_states_effort', 'torque')
    return (None if said == 'none' else said), said_by


def recorded_meaning(bag) -> str | None:
    """What the recording's own record says joint_states' effort holds (:mod:`dynid.io.effort_record`), where
    it names a meaning to read by (a bag of dynid's twin written as a UR driver publishes, or of identifier_node
    told by ur.launch.py), else None."""
    from dynid.io import EFFORT_MEANINGS
    from dynid.io.effort_record import recorded_effort

    try:
        said, _ = recorded_effort(bag)
    except (OSError, TypeError):
        return None
    return said if said in EFFORT_MEANINGS else None


def restored_gravity(dataset, robot, bag, warn: bool = True):
    """A gravity-compensated effort (UR's ``actual_current_as_torque``) with the robot file's gravity added back,
    with the payload the robot had set by the recording (:mod:`dynid.io.gravity_restore`); the check of that
    payload against the torque in ``source['payload_set_check']``, its warning (and a note where the recording
    does not say the payload set) on stderr where ``warn``."""
    from dynid.io.effort_record import recorded_robot_payload
    from dynid.io.gravity_restore import payload_from_record, payload_set_check, restore_gravity

    record = dataset.source.get('robot_payload') or recorded_robot_payload(bag)
    notes = []
    if record is None:
        notes.append(f'{bag}: the payload set on the robot is not recorded (the RTDE publisher\'s payload topics): '
                     'its gravity-compensated effort is read with none set')
    payload_set = payload_from_record(record)
    restored = restore_gravity(dataset, robot, payload_set)
    check = payload_set_check(restored, robot, payload_set)
    restored.source['payload_set_check'] = check
    if check['warning']:
        notes.append(f'{bag}: {check["warning"]}')
    for line in notes if warn else ():
        print(f'warning: {line}', file=sys.stderr)
    check['notes'] = notes
    return restored


def check_recording(dataset, robot, joint_states_effort: str | None, bag, warn: bool = True, payload=None) -> None:
    """The diagnosis of ``dataset`` alone against the robot file (:func:`dynid.diagnosis.diagnose`), with what the
    user (``joint_states_effort``) or the recording said the effort holds, and the ``payload`` on the flange;
    ``source['diagnosis']`` keeps it, its warnings printed to stderr where ``warn``."""
    from dynid.diagnosis import Recording, diagnose

    said, said_by = effort_said(joint_states_effort, bag, dataset)
    diagnosis = diagnose([Recording(dataset, payload, str(bag))], robot, said, said_by, ADVICE)
    dataset.source['diagnosis'] = diagnosis.to_dict()
    for line in diagnosis.warnings() if warn else ():
        print(f'warning: {line}', file=sys.stderr)


def recording_inputs(bags, robot, masses, com, label, joint_states_effort=None, joint_map=None, signs=None):
    """The bags as identification inputs, each with its payload (``masses`` and ``com``, --``label``); their
    diagnosis is the identification's, of all of them together (:func:`dynid.identify.job.workflow.diagnose_inputs`)."""
    from dynid.identify import RecordingInput
    from dynid.model import Payload

    if masses and len(masses) != len(bags):
        raise InputError(f'--{label} needs one mass per bag ({len(bags)}), got {len(masses)}')
    recordings = []
    for i, bag in enumerate(bags):
        mass = masses[i] if masses else 0.0
        if mass < 0:
            raise InputError(f'payload mass of {bag} must be >= 0 kg, got {mass}')
        dataset = read_bag(bag, robot, joint_states_effort, joint_map, signs, check=False)
        if mass == 0:
            recordings.append(RecordingInput(dataset, name=str(bag)))
        elif com is not None:
            recordings.append(RecordingInput(dataset, payload=Payload(mass, com), name=str(bag)))
        else:
            recordings.append(RecordingInput(dataset, payload_mass=mass, name=str(bag)))
    return recordings


def drives_from_file(path, robot):
    """The drives of a --drives file for ``robot``, or None without one."""
    from dynid.model.drives import load_drives

    return None if path is None else load_drives(path, robot.joint_names)
