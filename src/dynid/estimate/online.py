"""Online estimation on a running robot: estimators fed as samples arrive, and what they tell (estimator_node's core).

:class:`OnlineEstimation` keeps the estimators :func:`dynid.estimate.replay.build_estimators` makes
(stiffness: Madsen, Rosenlund, Brandt and Zhang 2019; adaptive E-GMS friction: Madsen 2020, ch.6)
for a robot and an identification result, free of ROS:

- the sample rate is given, or read off the first batch's stamps (median interval); the estimators
  are then made again for it;
- a new result (e.g. YAML received on a topic) replaces the estimators; a bad one is refused and
  counted, the running estimation kept;
- the estimates as tables: stiffness (joints × :data:`QUANTITIES`) and friction (joints ×
  :data:`FRICTION_QUANTITIES`);
- a stored stiffness baseline (YAML ``{robot, k0: {joint: N·m/rad}}``), loaded and saved;
- the state per joint as (level, text, values) for a diagnostics display.

Notes for a log come back from the methods as (level, text), level 'info' or 'warn'. The estimators
are updated from one thread (an intake) and read from another: every access takes ``lock``.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import yaml

from dynid.errors import InputError
from dynid.estimate.replay import EstimationSettings, build_estimators
from dynid.estimate.stiffness import CONVERGED_RELATIVE_STD
from dynid.identify.result import IdentificationResult
from dynid.io.stream import StateBatch

#: stiffness table columns: α̂1 [N·m/rad], α̂3 [N·m/rad³], k0 [N·m/rad], k0 / baseline [-], fit [%],
#: standard deviation of α̂1 relative to α̂1 [-]
QUANTITIES = ('alpha1', 'alpha3', 'k0', 'relative_to_baseline', 'fit', 'relative_std')
#: friction table columns: α̂1 [-], α̂2 [N·m·s/rad], adapting (1) or frozen (0)
FRICTION_QUANTITIES = ('alpha1', 'alpha2', 'active')
STALE_S = 1.0  # no sample for this long [s]: inputs are stale
CHANGE_REPORT_S = 30.0  # a detected stiffness change is reported (warn) for this long [s of samples]
DEFAULT_RATE_HZ = 1000.0  # the rate the estimators are first made for when it is read off the stamps


def result_from_yaml(text: str, name: str) -> IdentificationResult:
    """An identification result from its YAML text (``name`` says where, in errors); any malformation
    is an InputError."""
    try:
        return IdentificationResult.from_dict(yaml.safe_load(text), name)
    except (yaml.YAMLError, TypeError, ValueError, KeyError, AttributeError) as error:
        raise InputError(str(error)) from None


def load_baseline(path, robot) -> np.ndarray | None:
    """k0 [N·m/rad] per joint of ``robot`` stored in ``path``; None if there is no such file."""
    path = Path(path)
    if not path.exists():
        return None
    try:
        stored = yaml.safe_load(path.read_text()) or {}
        return np.array([float(stored['k0'][name]) for name in robot.joint_names])
    except (OSError, yaml.YAMLError, KeyError, TypeError, ValueError) as error:
        raise InputError(f'baseline_file {path}: not a baseline of {robot.name} ({error})') from None


@dataclass(frozen=True)
class JointState:
    """What a diagnostics display says of one joint: ``kind`` 'stiffness' or 'friction', the joint,
    ``level`` 'ok' or 'warn', a sentence, and the values (strings)."""

    kind: str
    joint: str
    level: str
    text: str
    values: dict = field(default_factory=dict)


class OnlineEstimation:
    """Stiffness and friction estimators fed with joined samples (module docstring).

    Args:
        robot: the :class:`~dynid.model.RobotModel` (with drives).
        result: the :class:`IdentificationResult` (friction map, rigid-body model), or None.
        settings: the :class:`EstimationSettings` (damping, min_velocity, ...).
        rate_hz: the sample rate [Hz]; 0 or None: read off the first batch's stamps.
        result_source: where ``result`` came from (for the display), '' for none.
        baseline: k0 [N·m/rad] per joint to compare with, or None.
        clock: monotonic time [s] of the staleness watch (``time.monotonic``; tests give their own).

    Attributes:
        stiffness, friction: the estimators (friction None when not adapted). rate_hz, rate_known.
        results_refused: results refused by :meth:`replace_result`. last_sample_time: clock time of
        the last update, None before.
    """

    def __init__(self, robot, result=None, settings: EstimationSettings | None = None, rate_hz: float | None = None,
                 *, result_source: str = '', baseline: np.ndarray | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.robot, self.result, self.result_source = robot, result, result_source
        self.settings = settings or EstimationSettings()
        self.rate_known = bool(rate_hz)
        self.rate_hz = float(rate_hz) if rate_hz else DEFAULT_RATE_HZ
        self.baseline, self.clock = baseline, clock
        self.lock = threading.Lock()
        self.results_refused = 0
        self.last_sample_time: float | None = None
        self.stiffness, self.friction, self.notes = self._build(result)  # bad input refused here, at start

    def _build(self, result):
        """(stiffness, friction, notes) for ``result`` at the current rate; notes warn when a result is given."""
        built = build_estimators(self.robot, result, self.settings, self.rate_hz)
        level = 'warn' if result is not None else 'info'
        return built.stiffness, built.friction, [(level, note) for note in built.notes]

    # -------------------------------------------------------------------------------- inputs
    def update(self, batch: StateBatch) -> list[tuple[str, str]]:
        """Feed a joined batch (q, θ, current, temperature); notes when the rate was just read off it.

        Until the rate is known, batches of fewer than 3 samples are skipped (no interval to read).
        """
        notes = []
        with self.lock:
            if not self.rate_known:
                if len(batch) < 3:
                    return notes
                self.rate_hz, self.rate_known = float(1e9 / np.median(np.diff(batch.stamps_ns))), True
                self.stiffness, self.friction, notes = self._build(self.result)
                notes.append(('info', f'samples at {self.rate_hz:.4g} Hz'))
            self.stiffness.update(batch.q, batch.theta, batch.current, batch.temperature)
            if self.friction is not None:
                self.friction.update(batch.q, batch.theta, batch.current, batch.temperature)
            self.last_sample_time = self.clock()
        return notes

    def replace_result(self, text: str, name: str, source: str) -> list[tuple[str, str]]:
        """Estimate again with the result in YAML ``text`` (``name``: what errors call it; ``source``: where
        it came from); a bad one is counted and refused (InputError), the running estimation kept."""
        try:
            result = result_from_yaml(text, name)
            with self.lock:
                rate_hz = self.rate_hz
            stiffness, friction, notes = self._build(result)  # outside the lock: the intake keeps going
        except InputError:
            self.results_refused += 1
            raise
        with self.lock:
            if self.rate_hz != rate_hz:  # the rate became known meanwhile
                stiffness, friction, notes = self._build(result)
            self.result, self.result_source = result, f'result from {source}'
            self.stiffness, self.friction = stiffness, friction
        return notes

    def reset(self) -> None:
        """Both estimators start learning again."""
        with self.lock:
            self.stiffness.reset()
            if self.friction is not None:
                self.friction.reset()

    def age_s(self) -> float | None:
        """Seconds since the last sample, None before any."""
        last = self.last_sample_time
        return None if last is None else self.clock() - last

    # ------------------------------------------------------------------------------- outputs
    def stiffness_table(self) -> np.ndarray:
        """(joints, :data:`QUANTITIES`) of the current stiffness estimates; relative_to_baseline NaN without one."""
        with self.lock:
            alpha = self.stiffness.alpha.copy()
            k0 = self.stiffness.stiffness_at_zero.copy()
            fit = np.asarray(self.stiffness.fit, dtype=float).copy()
            spread = self.stiffness.relative_std
        relative = k0 / self.baseline if self.baseline is not None else np.full(k0.shape, np.nan)
        third = alpha[:, 1] if alpha.shape[1] > 1 else np.zeros(len(k0))
        return np.column_stack([alpha[:, 0], third, k0, relative, fit, spread])

    def friction_table(self) -> np.ndarray | None:
        """(joints, :data:`FRICTION_QUANTITIES`) of the friction estimate, None when friction is not adapted."""
        with self.lock:
            if self.friction is None:
                return None
            active = np.asarray(self.friction.active, dtype=float).reshape(-1)
            return np.column_stack([self.friction.alpha, np.broadcast_to(active, (self.robot.n,))])

    def set_baseline(self, path) -> tuple[bool, str]:
        """Store the current k0 of every joint in ``path`` (YAML) and compare with it from now on;
        (stored, why). Nothing is stored before every joint has a positive finite k0."""
        k0 = None if self.last_sample_time is None else self.stiffness_table()[:, 2]
        if k0 is None or not np.all(np.isfinite(k0)) or np.any(k0 <= 0):
            return False, 'nothing estimated yet'
        path = Path(path)
        document = {'robot': self.robot.name, 'k0': {n: float(v) for n, v in zip(self.robot.joint_names, k0,
                                                                                  strict=True)}}
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(yaml.safe_dump(document, sort_keys=False))
        except OSError as error:
            return False, f'cannot write {path}: {error}'
        self.baseline = k0.copy()
        return True, f'baseline stored in {path}'

    def joint_states(self, drop_warning: float) -> list[JointState]:
        """Each joint's stiffness (converged, below the baseline by more than ``drop_warning`` [-], or
        changed within :data:`CHANGE_REPORT_S`) and, when adapted, friction (α̂1 at a bound of its
        estimator, Madsen 2020 ch.6 eq. (27): warn, the model no longer explains the friction)."""
        table = self.stiffness_table()
        states = []
        for j, joint in enumerate(self.robot.joint_names):
            _, _, k0, relative, _, spread = table[j]
            values = dict(zip(QUANTITIES, (f'{v:.6g}' for v in table[j]), strict=True))
            converged = bool(np.isfinite(spread) and spread <= CONVERGED_RELATIVE_STD)
            with self.lock:
                changes, changed_at = int(self.stiffness.changes[j]), self.stiffness.last_change_s[j]
                before, now = self.stiffness.before_change[j], self.stiffness.time_s
            values.update(changes=str(changes), last_change_s=f'{changed_at:.3f}')
            if np.isfinite(relative) and relative < 1.0 - drop_warning:
                level, text = 'warn', f'stiffness {100 * (1 - relative):.0f} % below the baseline'
            elif changes and now - changed_at < CHANGE_REPORT_S:
                level, text = 'warn', (f'stiffness changed {now - changed_at:.1f} s ago: k0 '
                                       f'{100 * (k0 / before - 1):+.0f} % since (estimating again)')
            else:
                level, text = 'ok', 'converged' if converged else 'not converged yet (needs deflection while moving)'
            states.append(JointState('stiffness', joint, level, text, values))
        friction = self.friction_table()
        with self.lock:
            bounds = None if self.friction is None else (self.friction.lower[:, 0], self.friction.upper[:, 0])
        for j, joint in enumerate(self.robot.joint_names if friction is not None else ()):
            alpha1, alpha2, active = friction[j]
            at_bound = alpha1 <= bounds[0][j] + 1e-9 or alpha1 >= bounds[1][j] - 1e-9
            text = (f'Coulomb level ×{alpha1:.3f} of the identified one' +
                    (' (at its bound: the model no longer explains the friction)' if at_bound else ''))
            states.append(JointState('friction', joint, 'warn' if at_bound else 'ok', text,
                                     {'alpha1': f'{alpha1:.6g}', 'alpha2': f'{alpha2:.6g}', 'adapting': bool(active)}))
        return states
