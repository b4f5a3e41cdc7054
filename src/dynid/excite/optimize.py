"""Optimized excitation: the Fourier coefficients that make the base parameters best identifiable.

Criteria (evaluated on the base regressor W_b stacked over samples of one period):

- ``cond``: cond(W_b), the classical criterion (Swevers et al. 1997; the thesis reports
  cond(W) = 66 for its hand-made 31 s trajectory, Madsen 2020, ch.4 §3.7).
- ``weighted``: W1·cond(W_b) + W2·cond(W_f), with W_f the per-joint Coulomb and viscous friction
  columns — Li et al. 2024 eq. (21) weights two parts of the regressor; here the rigid-body and the
  friction part, as the issue asks (Li's own split, by moment order, is not recoverable from the seed).
- ``d_optimal``: −log det(W_bᵀW_b/N) of the column-normalized W_b (D-optimality).

The optimizer is SLSQP on the rest-to-rest variables (:mod:`dynid.excite.fourier`), minimizing the
logarithm of the criterion with its analytic gradient (:mod:`dynid.excite.gradients`), with the
kinematic limits as exact linear constraints on a time grid and optional model-torque and
floor constraints (every link, :mod:`dynid.excite.clearance`); self-collisions are checked after.
It runs from several random feasible starts (seeded, so the same seed gives the same trajectory)
and keeps the best feasible result.

The floor is held on a coarse grid, and a link may dip below it between the grid's points. Where the dense check
finds it below, SLSQP goes on from its answer with the floor also held at each dip's deepest point and around it (an
exchange step of semi-infinite programming: Hettich and Kortanek 1993, SIAM Review 35(3), §7), up to
:data:`FLOOR_ROUNDS` times, within the start's iterations. Only what still breaks the clearance then (a dip left, a
self-collision) is shrunk into it by one factor (:func:`fit_to_clearance`), which costs much of the criterion: on the
UR5e with ``dynid excite``'s defaults, seed 0, a start's cond 44.7 became 106.7 at the factor 0.81 before the exchange.
"""

from __future__ import annotations

import multiprocessing
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import scipy.optimize
from threadpoolctl import threadpool_limits

from dynid.errors import InputError, checked_choice
from dynid.excite.clearance import Clearance
from dynid.excite.fourier import ExcitationLimits, FourierDesign, fit_to_limits, random_design
from dynid.excite.gradients import CRITERIA, CriterionGradient, trajectory_states
from dynid.excite.trajectory import FourierTrajectory
from dynid.model.joint_terms import joint_term_regressor
from dynid.model.robot import RobotModel


def excitation_criterion(robot: RobotModel, trajectory: FourierTrajectory, times: np.ndarray,
                         criterion: str = 'cond', weights: tuple[float, float] = (1.0, 1.0)) -> float:
    """The value of an identifiability criterion (module docstring) on samples at ``times`` [s]."""
    checked_choice('criterion', criterion, CRITERIA)
    q, dq, ddq = trajectory_states(robot, trajectory, times)
    base = robot.base.columns(robot.regressor(q, dq, ddq))
    if criterion == 'cond':
        return float(np.linalg.cond(base))
    if criterion == 'weighted':
        friction = joint_term_regressor(('coulomb', 'viscous'), dq)
        return float(weights[0] * np.linalg.cond(base) + weights[1] * np.linalg.cond(friction))
    normalized = base / np.maximum(np.linalg.norm(base, axis=0), 1e-300)
    sign, logdet = np.linalg.slogdet(normalized.T @ normalized / base.shape[0])
    return float(-logdet) if sign > 0 else np.inf


@dataclass
class ExcitationResult:
    """An optimized (or random) excitation and how it was obtained.

    Attributes:
        trajectory: the rest-to-rest Fourier trajectory.
        criterion, value: the criterion and its value on the dense check grid.
        condition_number: cond(W_b) on the dense check grid.
        limits: the limits used. peaks: largest |q − home| share, |q̇|, |q̈|, |τ|, lowest point [m],
        self-collision. feasible: every limit holds on the dense grid. starts, iterations, wall_time_s:
        effort spent. violations: what breaks which limit, for which joint or link, and when.
    """

    trajectory: FourierTrajectory
    criterion: str
    value: float
    condition_number: float
    limits: ExcitationLimits
    peaks: dict = field(default_factory=dict)
    feasible: bool = True
    starts: int = 0
    iterations: int = 0
    wall_time_s: float = 0.0
    violations: list[str] = field(default_factory=list)

    def summary(self) -> dict:
        return {'criterion': self.criterion, 'value': self.value, 'condition_number': self.condition_number,
                'feasible': self.feasible, 'violations': self.violations, 'starts': self.starts,
                'iterations': self.iterations, 'wall_time_s': self.wall_time_s, 'peaks': self.peaks,
                'limits': self.limits.to_dict()}


def _named_peak(values: np.ndarray, bound: np.ndarray, times: np.ndarray, names, what: str, unit: str) -> str | None:
    """'<what> of <joint> reaches <value> at t = <time> (limit <bound>)' for the worst excess, or None."""
    excess = values - bound
    k, j = np.unravel_index(np.argmax(excess), excess.shape)
    if excess[k, j] <= 0:
        return None
    return (f'{what} of {names[j]} reaches {values[k, j]:.4g} {unit} at t = {times[k]:.3f} s '
            f'(limit {bound[j]:.4g} {unit})')


def excitation_violations(robot: RobotModel, trajectory: FourierTrajectory, limits: ExcitationLimits,
                          samples: int = 2000, clearance: Clearance | None = None) -> tuple[list[str], dict]:
    """(what breaks the limits, naming the limit, the joint or link and the time; peak values) on
    ``samples`` points of one period. Empty list: the trajectory is inside every limit.

    The floor (``limits.floor``) and self-collisions are checked with ``clearance`` (default
    :meth:`Clearance.of` the robot, prepared at the trajectory's start) on about 400 of the samples
    (every 25 ms of a 10 s period: at 1 rad/s a 0.8 m arm moves 2 cm between two of them).
    """
    times = np.linspace(0.0, trajectory.duration_s, samples)
    q, dq, ddq = trajectory_states(robot, trajectory, times)
    tolerance = 1e-9
    peaks = {'position_low': q.min(axis=0).tolist(), 'position_high': q.max(axis=0).tolist(),
             'velocity': np.abs(dq).max(axis=0).tolist(), 'acceleration': np.abs(ddq).max(axis=0).tolist()}
    names = robot.joint_names
    found = [
        _named_peak(-q, -limits.position_low + tolerance, times, names, 'position', 'rad'),
        _named_peak(q, limits.position_high + tolerance, times, names, 'position', 'rad'),
        _named_peak(np.abs(dq), limits.velocity + tolerance, times, names, 'velocity', 'rad/s'),
        _named_peak(np.abs(ddq), limits.acceleration + tolerance, times, names, 'acceleration', 'rad/s²'),
    ]
    if found[0] is not None:  # said of −q above: say it of q
        k, j = np.unravel_index(np.argmax(limits.position_low - q), q.shape)
        found[0] = (f'position of {names[j]} reaches {q[k, j]:.4g} rad at t = {times[k]:.3f} s '
                    f'(lower limit {limits.position_low[j]:.4g} rad)')
    if limits.torque is not None:
        torque = np.abs(robot.inverse_dynamics(q, dq, ddq))
        peaks['torque'] = torque.max(axis=0).tolist()
        found.append(_named_peak(torque, limits.torque + 1e-6, times, names, 'model torque', 'N·m'))
    if limits.floor is not None or clearance is not None:
        if clearance is None:
            clearance = Clearance.of(robot)
            clearance.prepare(q[0])
        step = max(1, samples // 400)
        coarse = q[::step]
        if limits.floor is not None:
            heights = clearance.heights(coarse)
            margin = clearance.floor_margin(coarse, limits.floor)
            peaks['lowest_point_m'] = float(heights.min())
            k, b = np.unravel_index(np.argmin(margin), margin.shape)
            if margin[k, b] < -1e-6:
                found.append(f'{clearance.bodies[b].name} reaches z = {heights[k, b]:.3f} m at '
                             f't = {times[k * step]:.3f} s, below the floor at {limits.floor:.3f} m')
        collision = clearance.first_collision(coarse)
        peaks['self_collision'] = collision is not None
        if collision is not None:
            found.append(f'{collision[1]} and {collision[2]} collide at t = {times[collision[0] * step]:.3f} s')
    return [text for text in found if text is not None], peaks


def check_excitation(robot: RobotModel, trajectory: FourierTrajectory, limits: ExcitationLimits,
                     samples: int = 2000, clearance: Clearance | None = None) -> tuple[bool, dict]:
    """(feasible, peaks) of a trajectory against the limits (:func:`excitation_violations`)."""
    violations, peaks = excitation_violations(robot, trajectory, limits, samples, clearance)
    return not violations, peaks


#: Smallest share of a designed motion :func:`fit_to_clearance` keeps; below it the home leaves no room.
MIN_CLEARANCE_SCALE = 0.25


def fit_to_clearance(robot: RobotModel, design: FourierDesign, x: np.ndarray, limits: ExcitationLimits,
                     clearance: Clearance, samples: int = 1000) -> np.ndarray:
    """Shrink every joint's motion about its offset by one common factor (bisection, 10 steps) until
    the floor and self-collision checks hold; the variables unchanged if they already do.

    Raises InputError, naming what the full motion breaks, when the factor would fall below
    :data:`MIN_CLEARANCE_SCALE` (an excitation that small identifies nothing) or when even the
    offsets alone fail.
    """
    x = np.asarray(x, dtype=float).reshape(design.n, -1)
    loose = ExcitationLimits(limits.position_low - 1.0, limits.position_high + 1.0, limits.velocity + np.inf,
                             limits.acceleration + np.inf, None, limits.floor)

    def scaled(factor: float) -> np.ndarray:
        y = x.copy()
        y[:, 1:] *= factor
        return y.reshape(-1)

    def violations(factor: float) -> list[str]:
        return excitation_violations(robot, design.trajectory(scaled(factor)), loose, samples, clearance)[0]

    full = violations(1.0)
    if not full:
        return scaled(1.0)
    if violations(0.0):
        raise InputError(f'the excitation\'s centre already breaks the clearance check ({violations(0.0)[0]}); '
                         f'choose another {{home}} or a lower {{floor}}', fields=('home', 'floor'))
    low, high = 0.0, 1.0
    for _ in range(10):
        middle = 0.5 * (low + high)
        low, high = (low, middle) if violations(middle) else (middle, high)
    if low < MIN_CLEARANCE_SCALE:
        raise InputError(f'the motion about this home breaks the clearance check ({full[0]}) and clears it only '
                         f'when shrunk to {100 * low:.0f} % (less than {100 * MIN_CLEARANCE_SCALE:.0f} %): '
                         f'choose another {{home}} (the arm folded above its base) or a lower {{floor}}',
                         fields=('home', 'floor'))
    return scaled(low)


GRADIENTS = ('analytic', 'finite_difference')


def _kinematic_constraint(design: FourierDesign, limits: ExcitationLimits, grid: np.ndarray,
                          strides: tuple[int, int, int] = (1, 1, 1)) -> dict:
    """The position, velocity and acceleration limits on a time grid as one linear SLSQP constraint.

    The grid sees the limits only at its points: a 2 % margin is kept there (the result is then fitted
    on a dense grid). ``strides``: position, velocity and acceleration rows at every k-th grid time.
    """
    n = design.n
    matrices = [m.reshape(grid.size, n, -1)[::stride].reshape(-1, m.shape[1])
                for m, stride in zip(design.kinematic_matrices(grid), strides, strict=True)]
    position, velocity, acceleration = matrices
    points = [m.shape[0] // n for m in matrices]
    margin = 0.02 * (limits.position_high - limits.position_low)
    low, high = np.tile(limits.position_low + margin, points[0]), np.tile(limits.position_high - margin, points[0])
    v_max, a_max = np.tile(0.98 * limits.velocity, points[1]), np.tile(0.98 * limits.acceleration, points[2])
    linear = np.vstack([position, -position, velocity, -velocity, acceleration, -acceleration])
    bound = np.concatenate([high, -low, v_max, v_max, a_max, a_max])
    return {'type': 'ineq', 'fun': lambda x: bound - linear @ x, 'jac': lambda x: -linear}

# The start runner of the current optimization, inherited by forked worker processes (a closure cannot
# be pickled; a fork copies it).
_FORKED_START: Callable | None = None


def _forked_start(arguments: tuple) -> tuple:
    return _FORKED_START(*arguments)


def optimize_excitation(
        robot: RobotModel, design: FourierDesign, home: np.ndarray, limits: ExcitationLimits, criterion: str = 'cond',
        weights: tuple[float, float] = (1.0, 1.0), starts: int = 4, seed: int = 0, max_iterations: int = 150,
        objective_samples: int = 60, constraint_samples: int = 60, progress: Callable[[str], None] | None = None,
        gradient: str = 'analytic', workers: int = 1, clearance: Clearance | None = None, position_stride: int = 2,
        tolerance: float = 3e-5) -> ExcitationResult:
    """Optimize the Fourier coefficients (module docstring); returns the best feasible start.

    ``gradient``: ``analytic`` (:mod:`dynid.excite.gradients`) or ``finite_difference`` (scipy's
    two-point differences of the criterion, the first implementation, kept for comparison).
    ``workers`` > 1 runs the starts in that many forked processes (Linux; not from a process with
    threads such as a ROS node); the result is the same as with one. ``constraint_samples``: grid of
    the kinematic limits inside SLSQP, whose subproblem cost grows faster than linearly with it (60
    points: ~2× faster than the first implementation's 120 at the same cond(W_b) on the UR5e, seeds
    0 and 1: 31.9 vs 33.6, 30.7 vs 30.6); feasibility is checked and restored on a dense grid
    either way. ``clearance`` (default :meth:`Clearance.of` the robot, prepared at ``home``): the floor
    (``limits.floor``) is a constraint on a coarse grid; the floor and self-collisions are then checked
    densely and each start's motion shrunk until they hold (:func:`fit_to_clearance`).
    ``position_stride``: the position limits on every k-th point of that grid only (q is
    the smoothest of q, q̇, q̈: its harmonics fall by 1/(kω) against q̇'s); ``tolerance``: SLSQP's
    ``ftol`` on the logarithm of the criterion. Both cut the time spent in SLSQP's subproblem, which
    grows with the constraint rows, and its iterations at a plateau: UR5e defaults, one process, busy
    machine, CPU time: 2 and 3e-5 take 11.1 s and 255 iterations for cond 32.5 (seed 0; seed 1: 18.4 s,
    399 iterations, cond 30.1) against 23.0 s and 391 iterations for cond 31.9 (seed 0) with 1 and 1e-6,
    the earlier values; positions on every third point lost 1–5 in cond. Raises InputError if no start
    ends feasible.
    """
    checked_choice('criterion', criterion, CRITERIA)
    checked_choice('gradient', gradient, GRADIENTS)
    if starts < 1 or max_iterations < 1 or workers < 1 or position_stride < 1:
        raise InputError('starts, max_iterations, workers and position_stride must be >= 1')
    if not tolerance > 0:
        raise InputError(f'tolerance must be > 0, got {tolerance}')
    clock = time.perf_counter()
    grid = np.linspace(0.0, design.period_s, constraint_samples, endpoint=False)
    home = np.asarray(home, dtype=float)
    clearance = clearance if clearance is not None else Clearance.of(robot)
    clearance.prepare(home)
    objective, jacobian = _objective(robot, design, np.linspace(0.0, design.period_s, objective_samples,
                                                                endpoint=False), criterion, weights, gradient)
    run_start = _StartRunner(robot, design, limits, clearance, objective, jacobian,
                             _constraints(robot, design, limits, grid, position_stride, clearance),
                             np.linspace(0.0, design.period_s, max(2400, 20 * constraint_samples), endpoint=False),
                             criterion, starts, min(workers, starts), max_iterations, tolerance, progress)
    rng = np.random.default_rng(seed)
    initial = [random_design(design, home, limits, rng, grid) for _ in range(starts)]
    outcomes: list[tuple | None] = [None] * starts

    def finished(start: int, outcome: tuple) -> None:
        outcomes[start] = outcome
        value, _, nit, feasible, _ = outcome
        if progress is not None:
            done = sum(o is not None for o in outcomes)
            left = (time.perf_counter() - clock) / done * (starts - done)
            note = outcome[4] if feasible else 'infeasible, discarded'
            progress(f'start {start + 1}/{starts} done after {nit} iterations: {criterion} '
                     f'{_shown(criterion, value):.4g}' + (f' ({note})' if note else '')
                     + (f'; about {left:.0f} s left' if done < starts else ''))

    _run_starts(run_start, initial, finished)
    feasible = [(o[0], start, o[1]) for start, o in enumerate(outcomes) if o[3]]
    if not feasible:
        raise InputError(f'no start reached a trajectory inside the limits (start 1: {outcomes[0][4]}); '
                         f'widen the limits or add starts')
    best = min(feasible, key=lambda item: (item[0], item[1]))
    return describe_excitation(robot, design.trajectory(best[2]), limits, criterion, weights, starts,
                               sum(o[2] for o in outcomes), time.perf_counter() - clock, clearance=clearance)


def _constraints(robot: RobotModel, design: FourierDesign, limits: ExcitationLimits, grid: np.ndarray,
                 position_stride: int, clearance: Clearance) -> list[dict]:
    """SLSQP's constraints on the variables: the kinematic limits on ``grid`` (positions every ``position_stride``-th
    point), the torque limits on ``grid`` where given, and the floor on every fourth point of it where given."""
    constraints = [_kinematic_constraint(design, limits, grid, (position_stride, 1, 1))]
    if limits.torque is not None:
        torque_bound = np.tile(limits.torque, grid.size)

        def torque_margin(x: np.ndarray) -> np.ndarray:
            q, dq, ddq = trajectory_states(robot, design.trajectory(x), grid)
            tau = robot.inverse_dynamics(q, dq, ddq).reshape(-1)
            return np.concatenate([torque_bound - tau, torque_bound + tau])

        constraints.append({'type': 'ineq', 'fun': torque_margin})
    if limits.floor is not None:
        constraints.append(_floor_constraint(robot, design, limits, clearance, grid[::4]))
    return constraints


def _floor_constraint(robot: RobotModel, design: FourierDesign, limits: ExcitationLimits, clearance: Clearance,
                      times: np.ndarray) -> dict:
    """SLSQP's floor constraint at ``times`` [s]: every link's height above the floor, >= 0 where allowed."""

    def floor_margin(x: np.ndarray) -> np.ndarray:
        q = trajectory_states(robot, design.trajectory(x), times)[0]
        return clearance.floor_margin(q, limits.floor).reshape(-1)

    return {'type': 'ineq', 'fun': floor_margin}


def _objective(robot: RobotModel, design: FourierDesign, times: np.ndarray, criterion: str,
               weights: tuple[float, float], gradient: str) -> tuple[Callable, Callable | None]:
    """The criterion SLSQP minimizes (its logarithm, but for ``d_optimal``) on ``times``, and its gradient (None:
    SLSQP's finite differences)."""
    if gradient == 'analytic':
        model = CriterionGradient(robot, design, times, criterion, weights)
        return model.value, model.gradient

    def objective(x: np.ndarray) -> float:
        value = excitation_criterion(robot, design.trajectory(x), times, criterion, weights)
        return float(np.log(value)) if criterion != 'd_optimal' else value

    return objective, None


#: SLSQP's further runs of a start with the floor held where the dense check finds a link below it (module docstring),
#: each of at most :data:`FLOOR_ROUND_ITERATIONS` iterations, all within the start's ``max_iterations``.
FLOOR_ROUNDS = 3
FLOOR_ROUND_ITERATIONS = 40
#: The dense grid's samples either side of a dip's deepest point held as well: held at its deepest point alone, a
#: dip moved 67 ms and came back (UR5e, 2400 samples over 10 s: 33 and 67 ms).
FLOOR_NEIGHBOURS = (8, 16)
#: A margin below zero [m] that counts as on the floor (SLSQP meets an active constraint up to rounding).
_FLOOR_SLACK = 1e-6


def _shown(criterion: str, value: float) -> float:
    """The criterion of the objective's ``value`` (the objective is its logarithm, but for ``d_optimal``)."""
    return float(np.exp(value)) if criterion != 'd_optimal' else value


@dataclass
class _StartRunner:
    """One start of :func:`optimize_excitation`: SLSQP from ``x0``, then fitted to the limits on the dense grid and to
    the clearance; (objective, variables, iterations, feasible, what breaks the limits)."""

    robot: RobotModel
    design: FourierDesign
    limits: ExcitationLimits
    clearance: Clearance
    objective: Callable
    jacobian: Callable | None
    constraints: list[dict]
    dense: np.ndarray
    criterion: str
    starts: int
    workers: int
    max_iterations: int
    tolerance: float
    progress: Callable[[str], None] | None

    def __call__(self, start: int, x0: np.ndarray) -> tuple[float, np.ndarray, int, bool, str]:
        begun, counter = time.perf_counter(), {'n': 0}
        # Starts not yet begun when this one began, run ``workers`` at a time after it.
        later = -(-max(0, self.starts - start - self.workers) // self.workers)

        def report(x: np.ndarray) -> None:
            counter['n'] += 1
            if self.progress is not None and counter['n'] % 10 == 0:
                per_iteration = (time.perf_counter() - begun) / counter['n']
                left = per_iteration * (self.max_iterations - counter['n'] + later * self.max_iterations)
                self.progress(f'start {start + 1}/{self.starts}, iteration {counter["n"]}: {self.criterion} '
                              f'{_shown(self.criterion, self.objective(x)):.4g}; at most {left:.0f} s left')

        constraints, x, iterations = list(self.constraints), x0, 0
        for round_ in range(1 + (FLOOR_ROUNDS if self.limits.floor is not None else 0)):
            budget = self.max_iterations - iterations
            if round_:  # the floor held where the motion dips below it between the coarse grid's points
                below = self.below_floor(x)
                budget = min(budget, FLOOR_ROUND_ITERATIONS)
                if not below.size or budget < 1:
                    break
                constraints.append(_floor_constraint(self.robot, self.design, self.limits, self.clearance, below))
            result = scipy.optimize.minimize(self.objective, x, method='SLSQP', jac=self.jacobian,
                                             constraints=constraints, callback=report,
                                             options={'maxiter': budget, 'ftol': self.tolerance})
            x, iterations = result.x, iterations + int(result.nit)
        x = fit_to_limits(self.design, x, self.limits, self.dense)
        try:
            fitted = fit_to_clearance(self.robot, self.design, x, self.limits, self.clearance)
        except InputError as error:
            return self.objective(x), x, iterations, False, str(error)
        violations, _ = excitation_violations(self.robot, self.design.trajectory(fitted), self.limits,
                                              samples=self.dense.size, clearance=self.clearance)
        if violations:
            return self.objective(fitted), fitted, iterations, False, '; '.join(violations)
        return self.objective(fitted), fitted, iterations, True, self.shrunk(x, fitted)

    def below_floor(self, x: np.ndarray) -> np.ndarray:
        """The times [s] of the dense grid where the motion ``x`` dips deepest below the floor in each stretch below
        it, each with the samples :data:`FLOOR_NEIGHBOURS` away either side (the motion is periodic: a stretch may wrap
        around); empty where no link is below."""
        q = trajectory_states(self.robot, self.design.trajectory(x), self.dense)[0]
        lowest = self.clearance.floor_margin(q, self.limits.floor).min(axis=1)
        deepest = np.flatnonzero((lowest < -_FLOOR_SLACK) & (lowest <= np.roll(lowest, 1))
                                 & (lowest <= np.roll(lowest, -1)))
        around = deepest[:, None] + np.array([0, *FLOOR_NEIGHBOURS, *(-k for k in FLOOR_NEIGHBOURS)])
        return self.dense[np.unique(around % lowest.size)]

    def shrunk(self, x: np.ndarray, fitted: np.ndarray) -> str:
        """What :func:`fit_to_clearance` did to SLSQP's motion ``x`` (fitted to the kinematic limits), for the start's
        progress line: '' where nothing, else the criterion SLSQP reached, the factor and the check the full motion
        broke (the floor between the coarse grid's points, where SLSQP holds it, or a self-collision)."""
        motion, kept = (np.reshape(v, (self.design.n, -1))[:, 1:] for v in (x, fitted))
        factor = float(np.linalg.norm(kept) / max(np.linalg.norm(motion), 1e-300))
        if factor >= 1.0:
            return ''
        broken, _ = excitation_violations(self.robot, self.design.trajectory(x), self.limits,
                                          samples=self.dense.size, clearance=self.clearance)
        return (f'SLSQP\'s motion reached {_shown(self.criterion, self.objective(x)):.4g}, then shrunk to '
                f'{100 * factor:.3g} % to clear what it broke: ' + '; '.join(broken))


def _run_starts(run_start: _StartRunner, initial: list[np.ndarray], finished: Callable[[int, tuple], None]) -> None:
    """Every start from its ``initial`` variables, one after the other or ``run_start.workers`` forked processes at
    a time (the same outcomes either way); ``finished(start, outcome)`` as each ends, in order."""
    global _FORKED_START
    # The matrices here are small: BLAS threads only contend with each other (and with the workers).
    with threadpool_limits(1):
        if run_start.workers == 1:
            for start, x0 in enumerate(initial):
                finished(start, run_start(start, x0))
            return
        _FORKED_START = run_start
        try:
            with multiprocessing.get_context('fork').Pool(run_start.workers) as pool:
                jobs = list(enumerate(initial))
                for start, outcome in zip(range(len(initial)), pool.imap(_forked_start, jobs), strict=True):
                    finished(start, outcome)
        finally:
            _FORKED_START = None


def describe_excitation(robot: RobotModel, trajectory: FourierTrajectory, limits: ExcitationLimits,
                        criterion: str = 'cond', weights: tuple[float, float] = (1.0, 1.0), starts: int = 0,
                        iterations: int = 0, wall_time_s: float = 0.0, samples: int = 1000,
                        clearance: Clearance | None = None) -> ExcitationResult:
    """Evaluate a trajectory on a dense grid: criterion, cond(W_b), feasibility (what breaks which limit
    and when, in ``violations``) and peak values."""
    times = np.linspace(0.0, trajectory.duration_s, samples, endpoint=False)
    violations, peaks = excitation_violations(robot, trajectory, limits, clearance=clearance)
    return ExcitationResult(trajectory, criterion,
                            excitation_criterion(robot, trajectory, times, criterion, weights),
                            excitation_criterion(robot, trajectory, times, 'cond'), limits, peaks, not violations,
                            starts, iterations, wall_time_s, violations)
