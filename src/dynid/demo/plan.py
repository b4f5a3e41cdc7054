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

import math
from pathlib import Path

from dynid.demo.settings import DemoSettings
from dynid.errors import InputError, checked_choice
from dynid.excite.trajectory import builtin_excitation_path
from dynid.model import load_robot
from dynid.model.mjcf import require_mujoco
from dynid.sim.settings import ENGINES

HOLDOUT_PERIOD_S = 10.0  # the held-out random Fourier trajectory, also the feedforward's tracking task
#: training; held-out validation and tracking without feedforward; the same through feedforward_node
EXCITATIONS = ('excitation_node', 'holdout_excitation', 'feedforward_excitation')
APPROACH_VELOCITY = 0.5  # [rad/s] of the excitations' approach to their first point


class DemoError(RuntimeError):
    """A step of the demo did not complete (a node refused or timed out)."""


def excitation_progress(name: str, elapsed_s: float, total_s: float) -> str:
    """The demo's line on the excitation node ``name`` under way: the whole seconds since its start of its
    trajectory's ``total_s`` [s], never more than the total. The node says done a lead time after the trajectory's
    last point, later still on a twin slower than real time: past the total, the line says it waits for that.

    >>> excitation_progress('excitation_node', 35.2, 34.49)
    'excitation_node: 34 of 34 s, waiting for it to report done'
    """
    total = f'{total_s:.0f}'
    if elapsed_s >= total_s:
        return f'{name}: {total} of {total} s, waiting for it to report done'
    return f'{name}: {math.floor(elapsed_s)} of {total} s'


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
