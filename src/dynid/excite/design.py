"""A Fourier excitation designed around a home pose, the one way ``dynid excite`` and excitation_node do it.

Steps (Swevers, Ganseman, Tükel, De Schutter and Van Brussel 1997 for the Fourier series):

1. limits about the home (:func:`~dynid.excite.fourier.default_limits`), with the floor height;
2. the clearance checks (:class:`~dynid.excite.clearance.Clearance`) prepared at the home;
3. coefficients: optimized (:func:`~dynid.excite.optimize.optimize_excitation`), or random ones shrunk
   into the kinematic limits (:func:`~dynid.excite.fourier.random_design`) and then into the clearance
   (:func:`~dynid.excite.optimize.fit_to_clearance`);
4. the trajectory evaluated on a dense grid (criterion, cond(W_b), peaks) and refused if it breaks a limit.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from dynid.errors import InputError
from dynid.excite.clearance import Clearance
from dynid.excite.fourier import FourierDesign, default_limits, random_design
from dynid.excite.optimize import ExcitationResult, describe_excitation, fit_to_clearance, optimize_excitation
from dynid.excite.settings import ExcitationSettings
from dynid.model.robot import RobotModel

DESIGN_GRID = 2000  # samples of one period the random start is fitted to the kinematic limits on
_D = ExcitationSettings  # the defaults of design_excitation's keywords


def design_excitation(robot: RobotModel, home: np.ndarray, harmonics: int = _D.harmonics,
                      period_s: float = _D.period_s, seed: int = _D.seed, optimize: bool = False,
                      criterion: str = _D.criterion, starts: int = _D.starts, iterations: int = _D.iterations,
                      workers: int = 1, position_range: float = _D.position_range,
                      velocity_fraction: float = _D.velocity_fraction, acceleration: float = _D.acceleration,
                      torque_fraction: float | None = None, floor: float | None = _D.floor,
                      progress: Callable[[str], None] | None = None, notice: Callable[[str], None] | None = None,
                      warn: Callable[[str], None] | None = None) -> ExcitationResult:
    """The excitation of ``harmonics`` over ``period_s`` [s] about ``home`` [rad] (module docstring).

    Limits: ± ``position_range`` [rad] about home, ``velocity_fraction`` of the velocity limits,
    ``acceleration`` [rad/s²], optionally ``torque_fraction`` of the effort limits, no link below
    ``floor`` [m, base frame z] (None: no floor). ``seed`` seeds the random design or the optimizer's
    starts; ``starts``, ``iterations`` and ``workers`` (processes; 1 in a process with threads) drive the
    optimizer, ``criterion`` ('cond', 'weighted', 'd_optimal') is what it minimizes and what is reported.
    ``notice`` gets what the clearance checks, ``warn`` the links already below the floor at home,
    ``progress`` the optimizer's news. The defaults are :class:`ExcitationSettings`'.

    Raises InputError when the home, the clearance or the finished trajectory breaks a limit.
    """
    limits = default_limits(robot, home, position_range, velocity_fraction, acceleration, torque_fraction, floor)
    clearance = Clearance.of(robot)
    clearance.prepare(home)
    if notice is not None:
        notice(f'clearance: {"no floor" if floor is None else f"floor at z = {floor:g} m"}; {clearance.describe()}')
    low = [] if floor is None else clearance.below_floor_at_home(floor)
    if low and warn is not None:
        warn(f'at home {", ".join(f"{name} (z = {z:.3f} m)" for name, z in low)} already below the floor: they '
             f'may move but not sink further; check the home position')
    design = FourierDesign(robot.joint_names, harmonics, period_s)
    if optimize:
        result = optimize_excitation(robot, design, home, limits, criterion, starts=starts, seed=seed,
                                     max_iterations=iterations, workers=workers, progress=progress,
                                     clearance=clearance)
    else:
        grid = np.linspace(0.0, period_s, DESIGN_GRID, endpoint=False)
        x = random_design(design, home, limits, np.random.default_rng(seed), grid)
        x = fit_to_clearance(robot, design, x, limits, clearance)
        result = describe_excitation(robot, design.trajectory(x), limits, criterion, clearance=clearance)
    if not result.feasible:
        raise InputError(f'the designed trajectory breaks its limits: {"; ".join(result.violations)}')
    return result
