"""Recordings and files: the Dataset type, rosbag2/MCAP read and write (rosbags), YAML results.

:data:`EFFORT_MEANINGS` is defined here and :class:`Dataset` imported on first use, so that the command
line's help lists the meanings without loading the readers (Dataset's payload type brings pinocchio).
"""

#: What joint_states' effort may hold (docs/contract.md): joint torque [N·m], the contract's default, or
#: motor current [A], as the Universal Robots driver publishes it. The nodes' ``joint_states_effort``
#: parameter and the command line's ``--joint-states-effort`` take these values; :func:`dynid.io.bag.read_bag`
#: reads a recording by them.
EFFORT_MEANINGS = ('torque', 'current')

__all__ = ['EFFORT_MEANINGS', 'Dataset']


def __getattr__(name: str):
    if name == 'Dataset':
        from dynid.io.dataset import Dataset
        return Dataset
    raise AttributeError(f'module {__name__!r} has no attribute {name!r}')
