"""What ``dynid demo`` runs (:class:`DemoSettings`), apart from the plan so that the command line lists it without
loading the suite's modules."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from dynid.identify.choices import AUTO
from dynid.settings import RobotSettings, setting
from dynid.sim.settings import ENGINES

#: the identification methods and friction models the demo offers (a subset of identifier_node's)
DEMO_METHODS = (AUTO, 'ols', 'wls', 'irls', 'iirls')
DEMO_FRICTION = (AUTO, 'viscous_coulomb', 'load_squared', 'load_absolute', 'comprehensive')


@dataclass
class DemoSettings:
    """What the demo runs. Rates [Hz], durations [s]."""

    output: str | Path = setting('dynid_demo', 'output folder')
    robot: str = setting(RobotSettings.robot, 'robot with a shipped excitation')
    namespace: str = setting('dynid_demo_<process id>', 'namespace of the suite',
                             factory=lambda: f'dynid_demo_{os.getpid()}')
    rate: float = setting(1000.0, "the twin's rate", unit='Hz', low=50.0, high=2000.0)
    periods: int = setting(3, 'periods of the 10 s optimized excitation', low=1, high=30)
    holdout_seed: int = setting(7, 'seed of the held-out trajectory', low=0, high=2**31 - 1)
    method: str = setting(AUTO, 'identification method; auto: chosen by blocked cross-validation, as dynid identify '
                                'does', choices=DEMO_METHODS)
    friction: str = setting(AUTO, 'friction model; auto: per joint by blocked cross-validation, as dynid identify '
                                  'does', choices=DEMO_FRICTION)
    seed: int = setting(1, "seed of the twin's noise")
    processes: bool = setting(True, 'one process per node; false: the nodes run in this process (at a rate of 500 '
                                    'Hz or less then)')
    #: each excitation chunk is published this long before its start (excitation_node's lead_time, 0.5 s
    #: by default): on the way to the twin's controller a chunk of the feedforward run also passes through
    #: feedforward_node (received, filled, sent again), which took up to 1.2 s on a busy 2-core machine; a
    #: chunk that arrives late starts late and its tracking is scored against its stamps
    lead_time: float = setting(2.0, 'each excitation chunk is published this long before its start', unit='s')
    engine: str = setting('twin', 'the plant sim_node simulates: twin (dynid\'s) or mujoco (the robot in MuJoCo: '
                                  'rigid joints, so no stiffness estimate and the estimator adapts the friction alone; '
                                  'needs pip install mujoco)', choices=ENGINES)
