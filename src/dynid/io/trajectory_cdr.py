"""trajectory_msgs/JointTrajectory in serialized form (little-endian CDR), its points decoded at once.

A recorded reference (``dynid simulate`` and ``dynid import`` write one point a sample) holds messages of a
thousand points; rosbags decodes them point by point, 14 ms a message. Past the first point, points whose four
arrays keep their lengths follow each other at a fixed stride, so their values are columns of one byte matrix.
CDR (OMG XCDR1, as rosbags and Fast-CDR write it): a 4-byte encapsulation header, then each value aligned to its
size counted from the end of that header; a sequence is a uint32 count, its elements aligned only where there
are some.
"""

from __future__ import annotations

import struct

import numpy as np

#: The arrays of a JointTrajectoryPoint, in their order in the message.
POINT_FIELDS = ('positions', 'velocities', 'accelerations', 'effort')
_UINT32 = struct.Struct('<I')
_TIME = struct.Struct('<iI')


def _align(offset: int, size: int) -> int:
    """``offset`` (counted from the end of the encapsulation header) rounded up to a multiple of ``size``."""
    return offset + (-offset) % size


def _string(raw, pos: int) -> tuple[str, int]:
    length = _UINT32.unpack_from(raw, 4 + pos)[0]
    return bytes(raw[4 + pos + 4:4 + pos + 4 + length - 1]).decode(), pos + 4 + length


def _point_layout(raw, pos: int) -> tuple[list[tuple[int, int, int]], int]:
    """[(offset of the count, of the doubles, count)] of each array of the point at ``pos``, and where the next
    point starts."""
    arrays = []
    for _ in POINT_FIELDS:
        at = _align(pos, 4)
        count = _UINT32.unpack_from(raw, 4 + at)[0]
        data = _align(at + 4, 8) if count else at + 4
        arrays.append((at, data, count))
        pos = data + 8 * count
    return arrays, _align(pos, 4) + 8  # time_from_start: int32 sec, uint32 nanosec


def decode_joint_trajectory(raw: bytes) -> tuple[int, list[str], np.ndarray, dict[str, np.ndarray]]:
    """(header stamp [ns], joint names, time_from_start (P,) [s], {field: (P, k) values}) of one serialized
    JointTrajectory (little-endian CDR); ValueError for bytes it cannot read or a field whose length changes from
    point to point."""
    if len(raw) < 12 or raw[1] != 1:
        raise ValueError('not a little-endian CDR message')
    sec, nanosec = _TIME.unpack_from(raw, 4)
    _, pos = _string(raw, 8)  # frame_id
    count = _UINT32.unpack_from(raw, 4 + _align(pos, 4))[0]
    pos, names = _align(pos, 4) + 4, []
    for _ in range(count):
        name, pos = _string(raw, _align(pos, 4))
        names.append(name)
    pos = _align(pos, 4)
    points = _UINT32.unpack_from(raw, 4 + pos)[0]
    pos, done = pos + 4, 0
    matrix = np.frombuffer(raw, dtype=np.uint8)
    parts: dict[str, list] = {field: [] for field in (*POINT_FIELDS, 'time')}
    while done < points:
        group, arrays, stride, run = _rows_alike(raw, matrix, pos, points - done)
        rows = matrix[4 + pos:4 + pos + run * stride].reshape(run, stride)
        for k, (point, start) in enumerate(arrays):  # the k-th point of each group of rows
            for field, (_, data, count) in zip(POINT_FIELDS, point, strict=True):
                parts[field].append((k, rows[:, data - pos:data - pos + 8 * count].copy().view('<f8')))
            time = rows[:, start - pos - 8:start - pos].copy()
            parts['time'].append((k, time[:, :4].view('<i4')[:, 0] + time[:, 4:].view('<u4')[:, 0] * 1e-9))
        for field, got in parts.items():  # the groups' points back in their order
            parts[field] = got[:-group] + [(0, _interleave([value for _, value in got[-group:]]))]
        pos, done = pos + run * stride, done + run * group
    values = {}
    for field in POINT_FIELDS:
        if len({part.shape[1] for _, part in parts[field]}) > 1:
            raise ValueError(f'points with {field} of different lengths')
        values[field] = np.concatenate([part for _, part in parts[field]]) if points else np.zeros((0, 0))
    time = np.concatenate([part for _, part in parts['time']]) if points else np.zeros(0)
    return sec * 1_000_000_000 + nanosec, names, time, values


def _interleave(values: list[np.ndarray]) -> np.ndarray:
    """Rows of the points of groups (one array per point of a group, each (groups, ...)) in point order."""
    if len(values) == 1:
        return values[0]
    return np.stack(values, axis=1).reshape((-1,) + values[0].shape[1:])


def _rows_alike(raw, matrix: np.ndarray, pos: int, remaining: int):
    """(points a group, [(layout, end) of each point of a group], the group's stride, how many groups from
    ``pos`` on are alike): one point, or two where their layouts alternate with the alignment of their starts."""
    for group in (1, 2):
        layouts, end = [], pos
        for _ in range(min(group, remaining)):
            arrays, end = _point_layout(raw, end)
            layouts.append((arrays, end))
        stride = end - pos
        if group <= remaining // 2 and stride % 8 == 0:
            following, _ = _point_layout(raw, end)
            if [(a - pos, d - pos, c) for a, d, c in layouts[0][0]] == \
                    [(a - end, d - end, c) for a, d, c in following]:
                return group, layouts, stride, _run_length(matrix, pos, stride, layouts, remaining // group)
    arrays, end = _point_layout(raw, pos)
    return 1, [(arrays, end)], end - pos, 1


def _run_length(matrix: np.ndarray, pos: int, stride: int, layouts, remaining: int) -> int:
    """How many groups of points from ``pos`` on (at most ``remaining``) have the counts of the first
    (``layouts``)."""
    run = min(remaining, (matrix.size - 4 - pos) // stride)
    rows = matrix[4 + pos:4 + pos + run * stride].reshape(run, stride)
    same = np.ones(run, dtype=bool)
    for arrays, _ in layouts:
        for at, _, count in arrays:
            same &= rows[:, at - pos:at - pos + 4].copy().view('<u4')[:, 0] == count
    bad = np.flatnonzero(~same)
    return max(1, int(bad[0])) if bad.size else run
