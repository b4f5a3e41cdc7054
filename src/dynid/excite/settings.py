"""How an excitation is designed (:class:`ExcitationSettings`), apart from the design so that the command line lists
it without loading the optimizer."""

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
