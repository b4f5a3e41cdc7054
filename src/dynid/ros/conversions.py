"""Messages into core types, shared by the nodes (validation included: bad input raises InputError)."""

from __future__ import annotations

import numpy as np
from builtin_interfaces.msg import Duration, Time
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray, MultiArrayDimension
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from dynid.errors import InputError


def trajectory_with_effort(message: JointTrajectory, filled) -> JointTrajectory:
    """``message`` with the effort of every point and the added points of ``filled``
    (:class:`dynid.control.trajectory_effort.TrajectoryEffort`); the header and given points kept (their
    positions, velocities and accelerations replaced by the corrected ones when ``filled.corrected``)."""
    given = iter(message.points)
    points = []
    for k, t in enumerate(filled.time_s):
        if filled.given[k]:
            point = next(given)
            if filled.corrected:
                point.positions = filled.positions[k].tolist()
                if filled.velocities is not None and len(point.velocities):
                    point.velocities = filled.velocities[k].tolist()
                if filled.accelerations is not None and len(point.accelerations):
                    point.accelerations = filled.accelerations[k].tolist()
        else:
            point = JointTrajectoryPoint(
                positions=filled.positions[k].tolist(), time_from_start=duration(t),
                velocities=[] if filled.velocities is None else filled.velocities[k].tolist(),
                accelerations=[] if filled.accelerations is None else filled.accelerations[k].tolist())
        point.effort = filled.effort[k].tolist()
        points.append(point)
    return JointTrajectory(header=message.header, joint_names=message.joint_names, points=points)


def trajectory_message(joint_names, start_ns: int, piece) -> JointTrajectory:
    """A JointTrajectory of ``piece`` (``time_s`` (P,) [s] from ``start_ns``, ``positions``, ``velocities``,
    ``accelerations`` (P, n) [rad, rad/s, rad/s²] in ``joint_names`` order) stamped ``start_ns`` [ns]."""
    message = JointTrajectory(joint_names=list(joint_names))
    message.header.stamp = Time(sec=start_ns // 10**9, nanosec=start_ns % 10**9)
    message.points = [
        JointTrajectoryPoint(positions=p.tolist(), velocities=v.tolist(), accelerations=a.tolist(),
                             time_from_start=duration(t))
        for t, p, v, a in zip(piece.time_s, piece.positions, piece.velocities, piece.accelerations, strict=True)]
    return message


def joint_positions(message: JointState, joint_names) -> np.ndarray:
    """The positions [rad] of ``joint_names`` in a JointState (joints by name); InputError if unusable."""
    names = list(message.name)
    if len(message.position) != len(names):
        raise InputError('the latest joint_states has fewer positions than names')
    missing = [n for n in joint_names if n not in names]
    if missing:
        raise InputError(f'the latest joint_states lacks joints {missing}')
    q = np.array([message.position[names.index(n)] for n in joint_names], dtype=float)
    if not np.all(np.isfinite(q)):
        raise InputError('the latest joint_states has non-finite positions')
    return q


def effort_command(message: Float64MultiArray, joints: int) -> np.ndarray:
    """The efforts of a Float64MultiArray command, one finite value per joint; InputError otherwise."""
    values = np.array(message.data, dtype=float)
    if values.shape != (joints,):
        raise InputError(f'{values.size} values for {joints} joints')
    if not np.all(np.isfinite(values)):
        raise InputError('NaN or infinite values')
    return values


def duration(seconds: float) -> Duration:
    """builtin_interfaces/Duration of ``seconds`` [s], rounded to the nanosecond."""
    nanoseconds = int(round(seconds * 1e9))
    return Duration(sec=nanoseconds // 10**9, nanosec=nanoseconds % 10**9)


def labelled_table_message(table: np.ndarray, joint_names, quantities) -> Float64MultiArray:
    """A (joints, quantities) table as Float64MultiArray, row by row, its layout labelled
    ``joint:<name>,...`` × ``quantity:<name>,...`` (read back by :func:`dynid.control.inputs.labelled_table`)."""
    message = Float64MultiArray(data=np.asarray(table, dtype=float).ravel().tolist())
    joints, width = table.shape
    message.layout.dim = [
        MultiArrayDimension(label='joint:' + ','.join(joint_names), size=joints, stride=joints * width),
        MultiArrayDimension(label='quantity:' + ','.join(quantities), size=width, stride=width)]
    return message
