"""Recordings and files: the Dataset type, rosbag2/MCAP read and write (rosbags), YAML results.

:data:`EFFORT_MEANINGS` is defined here and :class:`Dataset` imported on first use, so that the command
line's help lists the meanings without loading the readers (Dataset's payload type brings pinocchio).
"""

#: What joint_states' effort may hold (docs/contract.md, docs/backends/ur.md), each read into the contract's
#: streams by :func:`dynid.io.bag.read_bag`:
#:
#: - ``torque``: joint torque [N·m], the contract's default (Franka, Gazebo, the twin) → ``tau``;
#: - ``current``: motor current [A] (the UR driver before PR #1551, or with ``use_currents_as_efforts:=true``)
#:   → ``current``, through the drive gains;
#: - ``current_as_torque``: the drive torque K_τ·i [N·m] the controller computes from the motor current,
#:   gravity included (a current in N·m: it carries friction and rotor inertia as a current does) → ``tau``
#:   as read, then, where the robot has drive data, the current i = τ / K_τ (it is not a torque sensor's);
#: - ``gravity_compensated_torque``: that torque minus the controller's own gravity model with the payload set
#:   on the robot [N·m] (UR's ``actual_current_as_torque``, the UR driver's effort from PR #1551 with
#:   ``use_currents_as_efforts:=false``; 0 at rest with the payload set right) → ``tau`` once the model's
#:   gravity with that payload is added back (:func:`dynid.io.gravity_restore.restore_gravity`), then
#:   read as ``current_as_torque`` is.
#:
#: The nodes' ``joint_states_effort`` parameter and the command line's ``--joint-states-effort`` take these.
EFFORT_MEANINGS = ('torque', 'current', 'current_as_torque', 'gravity_compensated_torque')
#: The meanings read into ``tau`` [N·m] (the others: ``current`` [A]).
TORQUE_MEANINGS = ('torque', 'current_as_torque', 'gravity_compensated_torque')
#: rosbag2 storages dynid writes (:func:`dynid.io.bag.write_bag`): mcap (rosbag2's default since Iron) or sqlite3.
STORAGES = ('mcap', 'sqlite3')

__all__ = ['EFFORT_MEANINGS', 'STORAGES', 'TORQUE_MEANINGS', 'Dataset']


def __getattr__(name: str):
    if name == 'Dataset':
        from dynid.io.dataset import Dataset
        return Dataset
    raise AttributeError(f'module {__name__!r} has no attribute {name!r}')
