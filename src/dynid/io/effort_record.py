"""What a recording says its joint_states effort holds, where dynid wrote it.

Every bag :func:`dynid.io.bag.write_bag` writes (``dynid simulate``, ``dynid import``) carries
``dynid.joint_states_effort`` in the ``custom_data`` of its ``metadata.yaml``: ``torque`` (joint torque
[N·m]; motor currents, if any, are on ``joint_currents``), another of :data:`dynid.io.TORQUE_MEANINGS`
(a twin recording written as a UR driver publishes, ``current_as_torque`` or ``gravity_compensated_torque``)
or ``none`` (empty efforts). Where the effort depends on the payload set on the robot (a gravity-compensated
torque), ``dynid.robot_payload`` holds that payload as JSON (``mass`` [kg], ``com`` [m] and ``inertia``
[kg·m², 3×3 about the centre of mass] in the flange frame). Bags dynid wrote
before that key existed are known by the file beside them: ``import.yaml`` (``dynid import``) or
``truth.yaml`` (``dynid simulate``), both of which put only joint torque into the effort. A record
wins over a guess from the data (:func:`dynid.diagnosis.effort.check_effort` only checks it).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import yaml

from dynid.io import TORQUE_MEANINGS

EFFORT_RECORD_KEY = 'dynid.joint_states_effort'
ROBOT_PAYLOAD_KEY = 'dynid.robot_payload'
#: the files dynid writes beside a bag, and who wrote it
_BESIDE = (('import.yaml', 'dynid import'), ('truth.yaml', 'dynid simulate'))


def effort_record_value(dataset) -> str:
    """What a bag written of ``dataset`` holds in joint_states' effort: its ``source['joint_states_effort']``
    where that is one of the torque meanings, ``torque`` for any other dataset with a torque, else ``none``."""
    if dataset.tau is None:
        return 'none'
    meaning = dataset.source.get('joint_states_effort', 'torque')
    return meaning if meaning in TORQUE_MEANINGS else 'torque'


def _custom_data(path: Path) -> dict:
    folder = path if path.is_dir() else path.parent
    metadata = folder / 'metadata.yaml'
    if not metadata.is_file():
        return {}
    try:
        document = yaml.safe_load(metadata.read_text())
    except (OSError, yaml.YAMLError, ValueError):  # unreadable: no record here (the bag's reader says why)
        return {}
    information = document.get('rosbag2_bagfile_information') if isinstance(document, dict) else None
    custom = information.get('custom_data') if isinstance(information, dict) else None
    return custom if isinstance(custom, dict) else {}


def recorded_robot_payload(path: str | os.PathLike) -> dict | None:
    """The payload set on the robot by the recording's record (``mass``, ``com``, ``inertia``), or None."""
    text = _custom_data(Path(path)).get(ROBOT_PAYLOAD_KEY)
    try:
        value = None if text is None else json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, dict) and 'mass' in value else None


def recorded_effort(path: str | os.PathLike) -> tuple[str | None, str]:
    """(what joint_states' effort holds by the recording's own record: one of :data:`dynid.io.TORQUE_MEANINGS`,
    'none' or None when it has no record, who recorded it: 'dynid import', 'dynid simulate', 'the bag\'s
    metadata' or '')."""
    path = Path(path)
    folder = path if path.is_dir() else path.parent
    custom = _custom_data(path)
    if custom:
        if custom.get(EFFORT_RECORD_KEY) in (*TORQUE_MEANINGS, 'none'):
            by = next((who for name, who in _BESIDE if (folder / name).is_file()), "the bag's metadata")
            return custom[EFFORT_RECORD_KEY], by
    for name, who in _BESIDE:
        if (folder / name).is_file():
            return 'torque', who
    return None, ''
