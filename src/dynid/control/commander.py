"""What a running feedforward commands, mode by mode, and when it commands nothing (feedforward_node's core).

:class:`FeedforwardCommander` holds a configured :class:`~dynid.control.Feedforward` and the
state around it that decides each command, free of ROS (the node converts messages and publishes):

- ``trajectory`` mode: :meth:`~FeedforwardCommander.fill` gives a reference trajectory its efforts
  and added points (:func:`dynid.control.trajectory_effort.fill_effort`), with the measured
  temperature when it is fresh; an empty trajectory (a cancel) passes unchanged. With
  ``reference_correction`` the points' positions (velocities, accelerations) also get the flexible-joint
  motor-side correction φ_d (φ̇_d, φ̈_d) (:meth:`dynid.control.Feedforward.reference_correction`), for
  controllers that regulate the motor position; refused at construction without the flexible_joint term
  and in the streamed modes (their command is an effort: a position correction has no channel there).
- ``streaming`` mode: :meth:`~FeedforwardCommander.follow` makes a reference the active one with
  joint_trajectory_controller semantics (:class:`dynid.excite.reference.ReferenceGenerator`: started at
  its start time, or on reception; replaced by the next; the last point held after the end; a cancel
  holds where the reference is), starting from the measured position (else the reference's first
  point); :meth:`~FeedforwardCommander.tick` gives the effort of the reference now.
- ``measured`` mode: :meth:`~FeedforwardCommander.tick` gives the effort of the newest measured
  state (q̈ = 0, or the :class:`~dynid.control.inputs.MeasuredAcceleration` estimate).

Staleness: the measured sample is fresh while it is at most ``timeout_s`` old (``clock``, seconds,
monotonic). A stale sample gives no measured inputs (temperature, joint torque: the terms' defaults)
and, in the streamed modes, no command (``tick`` returns None: the node sends zeros). Each change
from fresh to stale counts one ``stale_events`` and says why once (:meth:`~FeedforwardCommander.fresh`).

Efforts are in the controller's joint order (``order``), [N·m, or A with effort_is_current].

feedforward_node builds its commander from its parameters (:meth:`~FeedforwardCommander.from_parameters`)
and reports :func:`node_statuses` on ``/diagnostics``.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping, MutableMapping, Sequence

import numpy as np

from dynid.control.configuration import ACCELERATIONS, MODES, Configured, FeedforwardSettings, term_rms
from dynid.control.context import FeedforwardContext
from dynid.control.inputs import MeasuredAcceleration, friction_alpha
from dynid.control.trajectory_effort import TrajectoryEffort, fill_effort, grid_motion
from dynid.errors import InputError, checked_choice
from dynid.excite.reference import ReferenceGenerator
from dynid.excite.trajectory import PointTrajectory
from dynid.io.stream import StateBatch
from dynid.payload.document import load_payload

#: the counters a commander adds to (the node keeps them across configurations)
COUNTERS = ('stale_events', 'published', 'points_added')
RMS_MAX_SAMPLES = 5000  # grid samples of a trajectory's term RMS at most


_F = FeedforwardSettings  # the defaults of feedforward_node's parameters


class FeedforwardCommander:
    """The feedforward's per-mode command logic (module docstring).

    Args:
        configured: what :meth:`dynid.control.configuration.FeedforwardSettings.build` made.
        mode: one of :data:`MODES`. acceleration: q̈ of the measured mode, one of :data:`ACCELERATIONS`.
        timeout_s: a measured sample older than this [s] is stale.
        rate_hz: the stream rate [Hz], also the trajectory mode's evaluation grid.
        effort_tolerance: the trajectory mode's largest miss of the linear effort [N·m, or A].
        counters: a mapping the commander adds its :data:`COUNTERS` to (created when None).
        clock: monotonic time [s] of the staleness watch (``time.monotonic``; tests give their own).
        reference_correction: trajectory mode: add the motor-side reference correction (module docstring).

    Attributes:
        robot, feedforward, order, source: those of ``configured``.
        sample: the newest measured (q, q̇, q̈, τ_j, temperature or None), model order, or None.
        alpha: the latest α̂ (n, 2) of the friction_adaptive term, or None.
        stale: whether the last look found the measured sample stale (True before any).
        reference: the streaming mode's :class:`ReferenceGenerator`, None before the first reference.
        recent: the motion behind the term RMS: a list of streamed (q, q̇, q̈), or the last trajectory.
    """

    def __init__(self, configured: Configured, mode: str = _F.mode, acceleration: str = _F.acceleration, *,
                 timeout_s: float = _F.timeout_s, rate_hz: float = _F.rate_hz,
                 effort_tolerance: float = _F.effort_tolerance,
                 counters: MutableMapping[str, int] | None = None,
                 clock: Callable[[], float] = time.monotonic,
                 reference_correction: bool = _F.reference_correction) -> None:
        self.mode = checked_choice('mode', mode, MODES)
        acceleration = checked_choice('acceleration', acceleration, ACCELERATIONS)
        self.robot, self.feedforward, self.order = configured.robot, configured.feedforward, configured.order
        self.reference_correction = bool(reference_correction)
        if self.reference_correction:
            if self.mode != 'trajectory':
                raise InputError(f'reference_correction needs mode trajectory: the {self.mode} mode commands an '
                                 f'effort, which cannot carry a position correction')
            if 'flexible_joint' not in self.feedforward.terms:
                raise InputError('reference_correction needs the flexible_joint term with its stiffness (terms and '
                                 'term_options flexible_joint: {stiffness: ...}): the correction is its φ_d')
        self.source = configured.source
        self.n = self.robot.n
        self.acceleration = MeasuredAcceleration(self.n) if acceleration == 'estimated' else None
        self.timeout_s, self.rate_hz, self.effort_tolerance = timeout_s, rate_hz, effort_tolerance
        self.counters = {} if counters is None else counters
        for name in COUNTERS:
            self.counters.setdefault(name, 0)
        self.clock = clock
        self.lock = threading.Lock()  # the intake's thread writes the measured sample
        self.sample = self.last_sample_time = self.alpha = self.reference = self.recent = None
        self.stale = True
        self._rms: tuple = (None, {})

    @classmethod
    def from_settings(cls, settings: FeedforwardSettings, **kwargs) -> FeedforwardCommander:
        """The commander of ``settings`` (its mode, acceleration, timeout, rate, effort tolerance and reference
        correction), built after the mode and acceleration are checked: the cheap refusal first. ``kwargs``
        (counters, clock, warn: what the Feedforward warns about) as for the constructor and
        :meth:`FeedforwardSettings.build`."""
        checked_choice('mode', settings.mode, MODES)
        checked_choice('acceleration', settings.acceleration, ACCELERATIONS)
        warn = kwargs.pop('warn', None)
        return cls(settings.build(warn), settings.mode, settings.acceleration, timeout_s=settings.timeout_s,
                   rate_hz=settings.rate_hz, effort_tolerance=settings.effort_tolerance,
                   reference_correction=settings.reference_correction, **kwargs)

    @classmethod
    def from_parameters(cls, value: Callable[[str], object], **kwargs) -> FeedforwardCommander:
        """The commander of feedforward_node's parameters (``value`` as for
        :meth:`FeedforwardSettings.from_parameters`); ``kwargs`` as for :meth:`from_settings`. Any bad setting
        is an InputError with the reason: a ValueError, TypeError or KeyError that no check named (a value
        of the wrong type in ``term_options``) becomes one that names its type."""
        try:
            return cls.from_settings(FeedforwardSettings.from_parameters(value), **kwargs)
        except InputError:
            raise
        except (ValueError, TypeError, KeyError) as error:
            raise InputError(f'{type(error).__name__}: {error}') from None

    @property
    def streamed(self) -> bool:
        """Whether this mode sends a command every period (streaming, measured)."""
        return self.mode != 'trajectory'

    def describe(self) -> str:
        """One line for the log: the mode, the source, the terms and those left out (why)."""
        left_out = ''.join(f'; {name} left out ({why})' for name, why in self.feedforward.left_out.items())
        return f'{self.mode} feedforward of {self.source}: {", ".join(self.feedforward.terms)}{left_out}'

    def activate(self) -> None:
        """A fresh start: the feedforward's memory and rate limiter reset, no active reference."""
        self.feedforward.reset()
        self.reference = None

    # ---------------------------------------------------------------------------------- inputs
    def measure(self, batch: StateBatch) -> None:
        """The newest measured sample of a joined batch (any thread); NaN velocities: at rest."""
        last = len(batch) - 1
        dq = np.nan_to_num(batch.dq[last], nan=0.0)
        ddq = np.zeros(self.n) if self.acceleration is None else self.acceleration.update(batch.stamps_ns,
                                                                                           batch.dq).copy()
        temperature = None if batch.temperature is None else batch.temperature[last]
        with self.lock:
            self.sample = (batch.q[last], dq, ddq, batch.tau[last], temperature)
            self.last_sample_time = self.clock()

    def set_payload_document(self, text: str, source: str) -> str:
        """The payload of a payload file's YAML ``text`` (:mod:`dynid.payload.document`; InputError if bad) in the
        rigid-body model from now on (:meth:`Feedforward.set_payload`); the line that says so."""
        payload = load_payload(text, self.robot, text=True)
        self.feedforward.set_payload(payload)
        return f'payload {payload.mass:.4g} kg at {[round(float(c), 4) for c in payload.com]} m from {source}'

    def set_alpha(self, labels: Sequence[str], sizes: Sequence[int], data: Sequence[float]) -> None:
        """α̂ from the estimator's labelled friction table (:func:`friction_alpha`; InputError if bad)."""
        self.alpha = friction_alpha(labels, sizes, data, self.robot.joint_names)

    def fresh(self) -> tuple[bool, str]:
        """(whether the measured sample is fresh, why it just went stale or ''); counts stale events."""
        with self.lock:
            age = None if self.last_sample_time is None else self.clock() - self.last_sample_time
        stale = age is None or age > self.timeout_s
        news = ''
        if stale and not self.stale:
            self.counters['stale_events'] += 1
            silent = 'never heard' if age is None else f'silent for {age:.3f} s'
            news = f'joint_states {silent}: {"zero effort" if self.streamed else "measured inputs left out"} ' \
                   f'until it is back'
        self.stale = stale
        return not stale, news

    def context(self, measured: bool, fresh: bool) -> FeedforwardContext:
        """The terms' measured inputs (temperature; joint torque if ``measured``) and α̂; none when stale
        or not finite."""
        with self.lock:
            sample = self.sample if fresh else None
        temperature = None if sample is None else sample[4]
        torque = sample[3] if measured and sample is not None else None
        return FeedforwardContext(
            temperature=temperature if temperature is not None and np.all(np.isfinite(temperature)) else None,
            joint_torque=torque if torque is not None and np.all(np.isfinite(torque)) else None, alpha=self.alpha)

    # --------------------------------------------------------------------------------- commands
    def fill(self, trajectory: PointTrajectory | None, fresh: bool) -> TrajectoryEffort | None:
        """Trajectory mode: the efforts (and added points) of ``trajectory``; None passes a cancel."""
        filled = None
        if trajectory is not None:
            filled = fill_effort(self.feedforward, trajectory, self.rate_hz, self.effort_tolerance,
                                 self.context(False, fresh), correction=self.reference_correction)
            self.counters['points_added'] += filled.added
            self.recent = trajectory
        self.counters['published'] += 1
        return filled

    def follow(self, trajectory: PointTrajectory | None, start_s: float | None, now_s: float) -> None:
        """Streaming mode: ``trajectory`` from ``start_s`` (None: now) becomes the active reference;
        None (a cancel) holds where the reference is now. Times [s] on the node's clock."""
        if self.reference is None:
            if trajectory is None:
                return
            with self.lock:
                measured = None if self.sample is None else self.sample[0]
            if measured is None:
                first = dict(zip(trajectory.joint_names, trajectory.positions[0], strict=True))
                measured = np.array([first[name] for name in self.robot.joint_names])
            self.reference = ReferenceGenerator(self.robot.joint_names)
            self.reference.hold(measured, now_s)
        if trajectory is None:
            self.reference.hold(self.reference.sample(now_s)[0], now_s)
            return
        self.reference.follow(trajectory, now_s if start_s is None else start_s, now_s)

    def tick(self, now_s: float, fresh: bool) -> np.ndarray | None:
        """Streamed modes: the effort (n,) to command at ``now_s`` [s], controller order; None: zeros
        (the measured sample is stale, or no reference yet)."""
        if not fresh:
            return None
        measured = self.mode == 'measured'
        if measured:
            with self.lock:
                q, dq, ddq = self.sample[:3]
        elif self.reference is None:
            return None
        else:
            q, dq, ddq, _ = self.reference.sample(now_s)
        effort = self.feedforward.step(q, dq, ddq, self.context(measured, fresh))
        self.counters['published'] += 1
        self.recent = self.recent if isinstance(self.recent, list) else []
        self.recent.append((q, dq, ddq))
        if len(self.recent) > 2 * self.rate_hz:  # the last one to two seconds
            del self.recent[:len(self.recent) // 2]
        return effort[self.order]

    def zeros(self) -> np.ndarray:
        """The command that commands nothing."""
        return np.zeros(self.n)

    # ------------------------------------------------------------------------------ diagnostics
    def term_rms(self, fresh: bool) -> dict[str, float]:
        """RMS [N·m] of each term alone over the recent stream or the last trajectory (recomputed only
        when that motion changed); {} before any motion."""
        key = (id(self.recent), len(self.recent) if isinstance(self.recent, list) else 0)
        if self.recent is None or self._rms[0] == key:
            return self._rms[1]
        if isinstance(self.recent, list):
            motion = tuple(np.array([sample[k] for sample in self.recent]) for k in range(3))
        else:
            motion = grid_motion(self.recent, self.robot.joint_names, self.rate_hz, max_samples=RMS_MAX_SAMPLES)
        self._rms = (key, term_rms(self.feedforward, *motion, self.context(self.mode == 'measured', fresh)))
        return self._rms[1]

    def values(self, fresh: bool) -> dict[str, object]:
        """The feedforward's diagnostic values: terms, errors, left-out terms, each term's RMS [N·m]
        (or why a term refused the recent motion)."""
        feedforward = self.feedforward
        values = {'terms': ','.join(feedforward.terms), 'feedforward_errors': feedforward.errors,
                  'left_out': ','.join(feedforward.left_out), 'warnings': ' | '.join(feedforward.warnings)}
        try:
            values.update({f'rms_{name}_Nm': f'{value:.4g}' for name, value in self.term_rms(fresh).items()})
        except InputError as error:  # a term refusing the recent motion is reported, not raised
            values['term_rms_error'] = str(error)
        return values


def node_statuses(commander: FeedforwardCommander | None, state: str, mode: str, counters: Mapping[str, int],
                  refusal: str, fresh: Callable[[], bool] | None, timeout_s: float) -> list[tuple[str, str, str, dict]]:
    """What feedforward_node reports on ``/diagnostics``: [(what, level, message, values)].

    ``feedforward``: 'error' with the configure ``refusal`` if there is one, else 'ok' with the lifecycle
    ``state`` and the ``mode``; values: state, mode, the ``counters`` (as they were before ``fresh`` looked)
    and the commander's :meth:`~FeedforwardCommander.values`. ``joint_states`` (only while the state is
    watched: ``fresh`` given, the commander's staleness watch): 'ok' when fresh, else 'stale' (no
    joint_states for more than ``timeout_s`` [s]), with the stale events.
    """
    values = {'state': state, 'mode': mode, **counters}
    is_fresh = fresh() if fresh is not None else False
    if commander is not None:
        values.update(commander.values(is_fresh))
    statuses = [('feedforward', 'error', refusal, values) if refusal else
                ('feedforward', 'ok', f'{state}, {mode} mode', values)]
    dropped = {} if commander is None else {name: why for name, why in commander.feedforward.left_out.items()
                                            if why.startswith('dropped: ')}
    if dropped:  # terms wanted where they can be built (``name?``) that could not be
        statuses.append(('terms', 'warn', '; '.join(f'{name} {why}' for name, why in dropped.items()),
                         {'dropped': ','.join(dropped)}))
    if fresh is not None:
        statuses.append(('joint_states', 'ok' if is_fresh else 'stale', 'fresh' if is_fresh else
                         f'no joint_states for more than {timeout_s} s: zero effort',
                         {'stale_events': counters['stale_events']}))
    return statuses
