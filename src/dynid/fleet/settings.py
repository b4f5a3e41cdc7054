"""How ``dynid batch`` re-identifies a fleet's recordings (:class:`BatchSettings`,
:func:`dynid.fleet.batch.reidentify`), apart from the batch so that the command line lists it without Dask; how
``dynid fleet prior`` pools the fleet's results (:class:`FleetPriorSettings`)."""

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


@dataclass(frozen=True)
class FleetPriorSettings:
    """A fleet prior from many robots' results (:func:`dynid.fleet.prior.fleet_prior`) and each robot's place in the
    fleet (:func:`dynid.fleet.standing.fleet_standing`)."""

    false_flag_rate: float = setting(0.01, 'the chance that a healthy robot has any parameter named as standing apart '
                                           'from the others (Bonferroni over its parameters; 0.01: one healthy robot '
                                           'in 100)', low=1e-9, high=0.5)
