"""Which files make a recording: a rosbag2 directory (with ``metadata.yaml``), a bare storage file (``.mcap``,
``.db3``), or a directory of storage files without metadata (the segments of one recording, in name order).

Below the readers (:mod:`dynid.io.bag`, :mod:`dynid.io.rtde`), which both open what :func:`recording_files` names.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from dynid.errors import InputError

#: The storage files rosbags reads, in the order a directory's files are looked for.
STORAGE_SUFFIXES = ('.mcap', '.db3')


def _natural_key(path: Path) -> list:
    return [int(part) if part.isdigit() else part for part in re.split(r'(\d+)', path.name)]


def recording_files(path: str | os.PathLike) -> list[Path]:
    """What rosbags opens for the recording ``path`` (module docstring): the bag directory itself, a bare
    storage file, or the storage files of a directory without metadata. InputError otherwise."""
    path = Path(path)
    if not path.exists():
        raise InputError(f'bag {path} does not exist')
    if path.is_file():
        if path.suffix.lower() in STORAGE_SUFFIXES:
            return [path]
        if path.suffix.lower() == '.bag':
            raise InputError(f'{path} is a ROS 1 bag; dynid reads ROS 2 recordings (convert it with rosbags-convert)')
        kind = f'a {path.suffix} file' if path.suffix else 'a file without extension'
        raise InputError(f'{path} is {kind}, not a recording: give a rosbag2 directory or an .mcap or .db3 file')
    if (path / 'metadata.yaml').is_file():
        return [path]
    try:
        entries = list(path.iterdir())
    except OSError as error:
        raise InputError(f'cannot read bag directory {path}: {error.strerror}') from None
    for suffix in STORAGE_SUFFIXES:
        files = sorted((f for f in entries if f.is_file() and f.suffix.lower() == suffix), key=_natural_key)
        if files:
            return files
    if not entries:
        raise InputError(f'bag {path} is an empty directory, not a recording')
    raise InputError(f'{path} is not a rosbag2 directory: no metadata.yaml and no .mcap or .db3 file in it')
