"""How ``dynid batch`` re-identifies a fleet's recordings (:class:`BatchSettings`,
:func:`dynid.fleet.batch.reidentify`), apart from the batch so that the command line lists it without Dask."""

from __future__ import annotations

from dataclasses import dataclass

from dynid.settings import RobotSettings, setting


@dataclass(frozen=True)
class BatchSettings:
    """The fleet's re-identification: the robot model of the recordings, the identification's options, the workers."""

    robot: str = setting(RobotSettings.robot, 'robot model of the recordings (as for dynid identify; a manifest '
                                              'entry\'s "model" overrides it)')
    identify_args: str = setting('', 'dynid identify options for every recording, as one string (e.g. "--friction '
                                     'coulomb --no-prior"; one option alone: --identify-args=--no-prior)')
    workers: int = setting(2, 'worker processes of the local Dask cluster', low=1, high=1024)
