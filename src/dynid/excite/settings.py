"""How an excitation is designed (:class:`ExcitationSettings`, the defaults of ``dynid excite`` and
:func:`dynid.excite.design.design_excitation`) and how excitation_node sends one (:class:`ExcitationRunSettings`, its
parameters), apart from the design and its optimizer."""

from __future__ import annotations

from dataclasses import dataclass

from dynid.settings import setting

#: What the excitation optimizer minimizes (:mod:`dynid.excite.gradients`).
CRITERIA = ('cond', 'weighted', 'd_optimal')


@dataclass(frozen=True)
class ExcitationSettings:
    """How an excitation is designed: the defaults of :func:`design_excitation` (and of ``dynid excite``'s
    options), and the special experiments' joint and payload masses."""

    harmonics: int = setting(5, 'harmonics per joint', low=1, high=100)
    period_s: float = setting(10.0, 'period', unit='s')
    seed: int = setting(0, 'seed of the random designs')
    criterion: str = setting('cond', 'what the optimizer minimizes and what is reported: cond(W_b), the weighted '
                                     'condition number or the D-optimal criterion', choices=CRITERIA)
    starts: int = setting(4, 'optimizer starts', low=1, high=1000)
    iterations: int = setting(150, 'iterations per start', low=1, high=100000)
    position_range: float = setting(1.0, '± motion about home', unit='rad')
    velocity_fraction: float = setting(0.5, 'fraction of the velocity limits')
    acceleration: float = setting(2.5, 'acceleration bound', unit='rad/s²')
    floor: float | None = setting(0.0, 'height z in the base frame that no link may go below (collision geometry '
                                       'where the URDF has it, else link frames); "none": no floor; 0: the mounting '
                                       'plane. Links against each other are checked where geometry exists', unit='m')
    joint: str = setting('0', 'joint name or index for single-joint experiments')
    payloads: tuple[float, ...] = setting((0.0, 3.5, 7.5), 'masses for payload_schedule', unit='kg', items=float)


@dataclass(frozen=True)
class ExcitationRunSettings:
    """What excitation_node sends and how (each field is a node parameter, :mod:`dynid.settings`, beside the robot
    group's robot, robot_description and joint_map): the trajectory, read or designed once at start-up, and its
    publication, read at each ~/start."""

    trajectory_file: str = setting('', "dynid trajectory file, 'builtin' (the robot's shipped optimized one) or "
                                       'empty: design one', read_only=True)
    harmonics: int = setting(ExcitationSettings.harmonics, 'harmonics of a designed trajectory', low=2, high=20,
                             read_only=True)
    period: float = setting(ExcitationSettings.period_s, 'period of a designed trajectory', unit='s', low=1.0,
                            high=600.0, read_only=True)
    seed: int = setting(ExcitationSettings.seed, 'seed of the design', low=0, high=2**31 - 1, read_only=True)
    optimize: bool = setting(False, 'optimize the designed trajectory', read_only=True)
    point_rate: float = setting(100.0, 'trajectory points per second', unit='Hz', low=1.0, high=1000.0)
    chunk_duration: float = setting(10.0, 'seconds per published message', low=0.5, high=600.0)
    lead_time: float = setting(0.5, 'publish each chunk this early', unit='s', low=0.05, high=10.0)
    approach_velocity: float = setting(0.2, 'peak speed of the approach', unit='rad/s', low=0.01, high=2.0)
    repeat: int = setting(1, 'periods of the trajectory to run', low=1, high=1000)
