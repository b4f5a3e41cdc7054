"""Incremental recording into rosbag2 segments, so that a crash loses nothing already recorded.

A recording is a directory of rosbag2 (MCAP) bags ``segment_0000``, ``segment_0001``, ... each
closed after ``segment_s`` seconds of data; a closed segment is complete and readable whatever
happens to the process afterwards (only the open segment can be lost). Messages arrive as
serialized CDR bytes (e.g. :func:`dynid.io.cdr.joint_state_cdr`).
:func:`read_recording` reads a recording (or a single bag) back as one :class:`Dataset`.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
from rosbags.rosbag2 import StoragePlugin, Writer

from dynid.errors import InputError
from dynid.io.bag import read_bag
from dynid.io.cdr import typestore
from dynid.io.dataset import Dataset

SEGMENT_PREFIX = 'segment_'


class SegmentedRecorder:
    """Writes (topic, type, stamp, CDR bytes) into rolling bag segments under ``folder``.

    Args:
        folder: new directory of the recording (must not exist).
        segment_s: seconds of message time per segment (> 0).
    """

    def __init__(self, folder: str | os.PathLike, segment_s: float = 5.0) -> None:
        if not np.isfinite(segment_s) or segment_s <= 0:
            raise InputError(f'segment duration must be > 0 s, got {segment_s!r}')
        self.folder = Path(folder)
        if self.folder.exists():
            raise InputError(f'{self.folder} exists; refusing to record over it')
        self.folder.mkdir(parents=True)
        self.segment_ns = int(segment_s * 1e9)
        self.index = -1
        self.writer: Writer | None = None
        self.connections: dict[str, object] = {}
        self.segment_start: int | None = None
        self.messages = 0

    def _roll(self, stamp: int) -> None:
        self.close_segment()
        self.index += 1
        self.writer = Writer(self.folder / f'{SEGMENT_PREFIX}{self.index:04d}', version=9,
                             storage_plugin=StoragePlugin.MCAP)
        self.writer.open()
        self.connections = {}
        self.segment_start = stamp

    def write(self, topic: str, msgtype: str, stamp_ns: int, data: bytes) -> None:
        """Append one serialized message (topic absolute, e.g. '/joint_states')."""
        if self.writer is None or stamp_ns - self.segment_start >= self.segment_ns:
            self._roll(stamp_ns)
        if topic not in self.connections:
            self.connections[topic] = self.writer.add_connection(topic, msgtype, typestore=typestore())
        self.writer.write(self.connections[topic], int(stamp_ns), data)
        self.messages += 1

    def close_segment(self) -> None:
        if self.writer is not None:
            self.writer.close()
            self.writer = None

    def close(self) -> Path:
        """Close the open segment; returns the recording directory."""
        self.close_segment()
        return self.folder


def read_recording(path: str | os.PathLike, joint_names=None, namespace: str | None = '',
                   joint_states_effort: str = 'torque', joint_map=None) -> Dataset:
    """A single bag (anything :func:`read_bag` reads), or a segmented recording of identifier_node joined
    in time order, as one :class:`Dataset`; ``namespace`` None: found from the topics;
    ``joint_states_effort``: what joint_states' effort holds, torque or current; ``joint_map``: {model joint:
    recorded name} where the vendors' prefixes do not tell (as for :func:`read_bag`)."""
    parts = recording_parts(path)
    dataset = read_bag(parts, joint_names, namespace, joint_states_effort, joint_map)
    if isinstance(parts, list):
        dataset.source['segments'] = len(parts)
    return dataset


def recording_parts(path: str | os.PathLike) -> Path | list[Path]:
    """What :func:`dynid.io.bag.read_bag` reads for the recording ``path``: the segments of a recording of
    :class:`SegmentedRecorder` in time order (a list), or ``path`` itself (a single bag, anything else)."""
    path = Path(path)
    segments = [] if (path / 'metadata.yaml').exists() else sorted(
        p for p in path.glob(f'{SEGMENT_PREFIX}*') if (p / 'metadata.yaml').exists())
    return segments or path
