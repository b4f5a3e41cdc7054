"""What ``dynid demo`` runs: its settings, their checks, and the suite with its parameters. No ROS here.

The suite (:func:`suite_plan`): sim_node (the twin at ``rate``, or MuJoCo with ``engine`` 'mujoco'),
identifier_node recording into ``output/recordings``, estimator_node estimating with the identifier's
result (its health record in ``output/health.sqlite3``, not the user's), feedforward_node (trajectory
mode, configured by the demo once a result exists) and three excitation nodes (:data:`EXCITATIONS`):
the shipped optimized excitation for training (``periods`` periods), and twice the held-out random
Fourier trajectory (seed ``holdout_seed``, :data:`HOLDOUT_PERIOD_S`): once straight to the twin's joint
controller, once through feedforward_node.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from dynid.errors import InputError, checked_choice
from dynid.excite.trajectory import builtin_excitation_path
from dynid.identify.choices import AUTO
from dynid.model import load_robot
from dynid.model.mjcf import require_mujoco
from dynid.settings import RobotSettings, setting
from dynid.sim.mujoco_twin import ENGINES

HOLDOUT_PERIOD_S = 10.0  # the held-out random Fourier trajectory, also the feedforward's tracking task
#: training; held-out validation and tracking without feedforward; the same through feedforward_node
EXCITATIONS = ('excitation_node', 'holdout_excitation', 'feedforward_excitation')
APPROACH_VELOCITY = 0.5  # [rad/s] of the excitations' approach to their first point
#: the identification methods and friction models the demo offers (a subset of identifier_node's)
DEMO_METHODS = (AUTO, 'ols', 'wls', 'irls', 'iirls')
DEMO_FRICTION = (AUTO, 'viscous_coulomb', 'load_squared', 'load_absolute', 'comprehensive')


class DemoError(RuntimeError):
    """A step of the demo did not complete (a node refused or timed out)."""


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


def check_settings(settings: DemoSettings) -> DemoSettings:
    """Reject out-of-range demo settings with a clear reason."""
    if not 50.0 <= settings.rate <= 2000.0:
        raise InputError(f'{{rate}} must be within 50–2000 Hz, got {settings.rate:g}', fields=('rate',))
    if not 1 <= settings.periods <= 30:
        raise InputError(f'{{periods}} must be within 1–30, got {settings.periods}', fields=('periods',))
    if settings.holdout_seed < 0:
        raise InputError('{holdout_seed} must be ≥ 0', fields=('holdout_seed',))
    builtin_excitation_path(load_robot(settings.robot).name)  # the demo runs the robot's shipped excitation
    checked_choice('engine', settings.engine, ENGINES)
    if settings.engine == 'mujoco':
        require_mujoco()
    return settings


def suite_plan(settings: DemoSettings) -> tuple[dict, dict, dict]:
    """(parameters {node: {name: value}}, excitations {excitation node: its parameters}, the suite's
    options) for :func:`dynid.suite.bringup.plan_suite` and :func:`~dynid.suite.bringup.build_suite`
    (module docstring)."""
    recordings = Path(settings.output) / 'recordings'
    parameters = {'sim_node': {'rate': float(settings.rate), 'seed': settings.seed, 'engine': settings.engine},
                  'identifier_node': {'output_directory': str(recordings), 'method': settings.method,
                                      'friction': settings.friction, 'report': False},
                  'estimator_node': {'result_topic': 'identifier_node/result',
                                     'health_db': str(Path(settings.output) / 'health.sqlite3')},
                  'feedforward_node': {'autostart': False}}
    if settings.engine == 'mujoco':  # rigid joints: no stiffness to estimate, the friction adapts on θ = q
        parameters['estimator_node']['stiffness'] = False
    holdout = {'seed': settings.holdout_seed, 'approach_velocity': APPROACH_VELOCITY, 'period': HOLDOUT_PERIOD_S,
               'lead_time': settings.lead_time}
    excitations = {'excitation_node': {'trajectory_file': 'builtin', 'repeat': settings.periods,
                                       'approach_velocity': APPROACH_VELOCITY, 'lead_time': settings.lead_time},
                   'holdout_excitation': holdout, 'feedforward_excitation': holdout}
    suite = {'estimator': True, 'feedforward': 'trajectory', 'feedforward_from': ['feedforward_excitation']}
    return parameters, excitations, suite
