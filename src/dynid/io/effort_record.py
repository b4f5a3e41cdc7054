"""What a recording says its joint_states effort holds, where dynid wrote it.

Every bag :func:`dynid.io.bag.write_bag` writes (``dynid simulate``, ``dynid import``) carries
``dynid.joint_states_effort`` in the ``custom_data`` of its ``metadata.yaml``: ``torque`` (joint torque
[N·m]; motor currents, if any, are on ``joint_currents``) or ``none`` (empty efforts). Bags dynid wrote
before that key existed are known by the file beside them: ``import.yaml`` (``dynid import``) or
``truth.yaml`` (``dynid simulate``), both of which put only joint torque into the effort. A record
wins over a guess from the data (:func:`dynid.diagnosis.effort.check_effort` only checks it).
"""

from __future__ import annotations

import os
from pathlib import Path

import yaml

EFFORT_RECORD_KEY = 'dynid.joint_states_effort'
#: the files dynid writes beside a bag, and who wrote it
_BESIDE = (('import.yaml', 'dynid import'), ('truth.yaml', 'dynid simulate'))


def recorded_effort(path: str | os.PathLike) -> tuple[str | None, str]:
    """(what joint_states' effort holds by the recording's own record: 'torque', 'none' or None when it has no
    record, who recorded it: 'dynid import', 'dynid simulate', 'the bag\'s metadata' or '')."""
    path = Path(path)
    folder = path if path.is_dir() else path.parent
    metadata = folder / 'metadata.yaml'
    if metadata.is_file():
        try:
            document = yaml.safe_load(metadata.read_text()) or {}
        except (OSError, yaml.YAMLError):
            document = {}
        custom = (document.get('rosbag2_bagfile_information') or {}).get('custom_data') or {}
        if custom.get(EFFORT_RECORD_KEY) in ('torque', 'none'):
            by = next((who for name, who in _BESIDE if (folder / name).is_file()), "the bag's metadata")
            return custom[EFFORT_RECORD_KEY], by
    for name, who in _BESIDE:
        if (folder / name).is_file():
            return 'torque', who
    return None, ''
