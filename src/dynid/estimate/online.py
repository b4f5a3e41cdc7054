"""Online estimation on a running robot: estimators fed as samples arrive, and what they tell (estimator_node's core).

:class:`OnlineEstimation` keeps the estimators :func:`dynid.estimate.replay.build_estimators` makes
(stiffness: Madsen, Rosenlund, Brandt and Zhang 2019; adaptive E-GMS friction: Madsen 2020, ch.6)
for a robot and an identification result, free of ROS:

- the sample rate is given, or read off the first batch's stamps (median interval); the estimators
  are then made again for it;
- a gap in the stamps (samples lost in transport or given up by the intake: a step longer than
  (1 + GAP_TOLERANCE) periods) restarts the estimators' signal path, as :func:`dynid.estimate.replay.estimate`
  does for the contiguous pieces of a recording: the causal front ends would otherwise differentiate
  across the gap (a jump of θ seen as one step gives a θ̈ of thousands of rad/s² and τ_E errors of
  hundreds of N·m), while what was learned is kept;
- a new result (e.g. YAML received on a topic) replaces the estimators; a bad one is refused and
  counted, the running estimation kept;
- motor encoders: the estimators take θ from ``motor_states`` while they arrive (``rotor``); without them
  (:class:`EncoderWatch`: joint_states for :data:`ENCODER_WAIT_S` and no motor_states) they are made again
  for rigid joints, θ = q, the rule of :func:`dynid.estimate.replay.build_estimators`: the friction is adapted,
  the stiffness (the deflection θ − q) is not, and the display says so (:meth:`OnlineEstimation.display`);
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
from dataclasses import dataclass, field, fields
from pathlib import Path

import numpy as np
import yaml

from dynid.errors import InputError
from dynid.estimate.replay import EstimationSettings, Estimators, build_estimators
from dynid.estimate.stiffness import CONVERGED_RELATIVE_STD, NO_DEFLECTION
from dynid.files import load_yaml, read_yaml, write_text
from dynid.identify import IdentificationResult
from dynid.io.gaps import GAP_TOLERANCE
from dynid.io.stream import StateBatch
from dynid.io.stream_checks import EffortWatch
from dynid.payload.document import load_payload
from dynid.schema import Fields, Number, Table, Text, check
from dynid.settings import setting

#: stiffness table columns: α̂1 [N·m/rad], α̂3 [N·m/rad³], k0 [N·m/rad], k0 / baseline [-], fit [%],
#: standard deviation of α̂1 relative to α̂1 [-]
QUANTITIES = ('alpha1', 'alpha3', 'k0', 'relative_to_baseline', 'fit', 'relative_std')
#: friction table columns: α̂1 [-], α̂2 [N·m·s/rad], adapting (1) or frozen (0)
FRICTION_QUANTITIES = ('alpha1', 'alpha2', 'active')
STALE_S = 1.0  # no sample for this long [s]: inputs are stale
CHANGE_REPORT_S = 30.0  # a detected stiffness change is reported (warn) for this long [s of samples]
DEFLECTION_WAIT_S = 5.0  # samples [s] without any deflection before a joint is said to have none
DEFAULT_RATE_HZ = 1000.0  # the rate the estimators are first made for when it is read off the stamps
ENCODER_WAIT_S = 2.0  # joint_states for this long [s] without motor_states: no motor encoders (θ = q)


def result_from_yaml(text: str, name: str) -> IdentificationResult:
    """An identification result from its YAML text (``name`` says where, in errors); any malformation
    is an InputError."""
    try:
        return IdentificationResult.from_dict(load_yaml(text), name)
    except (yaml.YAMLError, TypeError, ValueError, KeyError, AttributeError) as error:
        raise InputError(str(error)) from None


#: a stiffness baseline file: the robot's name and k0 [N·m/rad] of each of its joints
BASELINE_FILE = Fields(required={'k0': Table(Number('N·m/rad', above=0.0, high=1.0e9), keys='joints', every=True)},
                       optional={'robot': Text()})


def load_baseline(path, robot) -> np.ndarray | None:
    """k0 [N·m/rad] per joint of ``robot`` stored in ``path``; None if there is no such file."""
    path = Path(path)
    if not path.exists():
        return None
    stored = check(read_yaml(path, 'baseline_file'), BASELINE_FILE, f'baseline_file {path}',
                   joints=robot.joint_names)
    return np.array([float(stored['k0'][name]) for name in robot.joint_names])


@dataclass(frozen=True)
class EstimatorNodeSettings:
    """estimator_node's own parameters (each field one, :mod:`dynid.settings`): its result and drives, and how it
    publishes; the robot group's are :class:`dynid.settings.RobotSettings`', the estimators'
    :class:`dynid.estimate.replay.EstimationSettings`' and the health record's
    :class:`dynid.health.settings.HealthSettings`'."""

    result_file: str = setting('', 'identification result (YAML) with the friction map; empty: none', read_only=True)
    result_topic: str = setting('', 'topic of identification results (std_msgs/String YAML, e.g. '
                                    '/identifier_node/result); each one received replaces the result; empty: none',
                                read_only=True)
    drives_file: str = setting('', "drives file (YAML: gear_ratio, drive_gain, rotor_inertia per joint) instead of "
                                   "the result's and the robot's; empty: none", read_only=True)
    publish_rate: float = setting(10.0, 'estimates published at most this often', unit='Hz', low=0.1, high=100.0,
                                  read_only=True)
    stiffness_drop_warning: float = setting(0.15, 'warn when k0 falls this fraction below the baseline', low=0.01,
                                            high=0.99)
    baseline_file: str = setting('dynid_stiffness_baseline.yaml', 'where ~/set_baseline stores k0')


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
        drives: drive data instead of the result's and the robot's (:func:`build_estimators`), or None.
        clock: monotonic time [s] of the staleness watch (``time.monotonic``; tests give their own).
        payload_file: a payload file (``dynid payload -o``) whose payload joins the friction's load torque; ''
            for none (:meth:`replace_payload` updates it later).
        rotor: samples carry the motor encoders' θ (motor_states); False: rigid joints, θ = q (:meth:`use_rotor`).

    Attributes:
        stiffness, friction: the estimators (friction None when not adapted). rate_hz, rate_known.
        payload, payload_source: the flange payload in use and where it came from.
        results_refused: results refused by :meth:`replace_result`. last_sample_time: clock time of
        the last update, None before. samples: samples fed since the start. temperature: (J,) joint
        temperatures [°C] of the newest sample, None without them. gaps: gaps in the stamps the signal
        path restarted at (module docstring).
    """

    def __init__(self, robot, result=None, settings: EstimationSettings | None = None, rate_hz: float | None = None,
                 *, result_source: str = '', baseline: np.ndarray | None = None,
                 clock: Callable[[], float] = time.monotonic, drives=None, payload_file: str = '',
                 rotor: bool = True) -> None:
        self.robot, self.result, self.result_source = robot, result, result_source
        self.rotor = bool(rotor)
        self.settings = settings or EstimationSettings()
        self.rate_known = bool(rate_hz)
        self.rate_hz = float(rate_hz) if rate_hz else DEFAULT_RATE_HZ
        self.baseline, self.clock, self.drives = baseline, clock, drives
        self.lock = threading.Lock()
        self.results_refused = 0
        self.last_sample_time: float | None = None
        self.samples = 0  # samples fed since the start
        self.gaps = 0
        self._last_stamp_ns: int | None = None  # of the newest sample fed
        self.temperature: np.ndarray | None = None  # the joints' temperatures [°C] of the newest sample, if any
        self.current_watch = EffortWatch(robot.joint_names, 'the motor current')
        self.payload = load_payload(payload_file, robot) if payload_file else None  # a bad file: refused at start
        self.payload_source = payload_file
        self.stiffness, self.friction, self.notes = self._build(result)  # bad input refused here, at start

    def _build(self, result):
        """(stiffness, friction, notes) for ``result`` at the current rate; notes warn when a result is given
        or an estimator is left out. What cannot be estimated (no drive data) is left out with its reason
        (``left_out``), not refused: a node keeps running what it can."""
        built = build_estimators(self.robot, result, self.settings, self.rate_hz, drives=self.drives, tolerant=True,
                                 payload=self.payload, rotor=self.rotor)
        self.left_out = list(built.left_out)
        level = 'warn' if result is not None else 'info'
        return built.stiffness, built.friction, [('warn' if note in self.left_out else level, note)
                                                 for note in built.notes]

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
            self.current_watch.update(batch.current, batch.q)
            for piece, after_gap in self._contiguous_pieces(batch):
                if after_gap:
                    Estimators(self.stiffness, self.friction).restart_signal_path()
                    self.gaps += 1
                if self.stiffness is not None:
                    self.stiffness.update(piece.q, piece.theta, piece.current, piece.temperature)
                if self.friction is not None:
                    self.friction.update(piece.q, piece.theta, piece.current, piece.temperature)
            self.last_sample_time = self.clock()
            self.samples += len(batch)
            if batch.temperature is not None and len(batch):
                self.temperature = np.asarray(batch.temperature[-1], dtype=float).copy()
        return notes

    def _contiguous_pieces(self, batch: StateBatch) -> list[tuple[StateBatch, bool]]:
        """The batch cut at gaps in its stamps (also the one after the previous batch's last sample), each
        piece with whether a gap comes before it."""
        stamps = np.asarray(batch.stamps_ns, dtype=np.int64)
        if stamps.size == 0:
            return []
        previous, self._last_stamp_ns = self._last_stamp_ns, int(stamps[-1])
        chain = stamps if previous is None else np.concatenate([[previous], stamps])
        long = np.diff(chain) > (1.0 + GAP_TOLERANCE) * 1e9 / self.rate_hz
        after_gap = np.flatnonzero(long) + (1 if previous is None else 0)  # the first samples after gaps
        edges = [0, *(int(k) for k in after_gap if k > 0), stamps.size]
        pieces = []
        for begin, end in zip(edges[:-1], edges[1:], strict=True):
            part = {f.name: None if getattr(batch, f.name) is None else getattr(batch, f.name)[begin:end]
                    for f in fields(StateBatch)}
            pieces.append((StateBatch(**part), begin in after_gap))
        return pieces

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

    def use_rotor(self, rotor: bool) -> list[tuple[str, str]]:
        """Estimate with the motor encoders' θ (``rotor``) or on rigid joints (θ = q) from now on: the estimators
        are made again for it (what they learned starts again); notes say so. No-op when unchanged."""
        with self.lock:
            if bool(rotor) == self.rotor:
                return []
            self.rotor, self._last_stamp_ns = bool(rotor), None
            self.stiffness, self.friction, notes = self._build(self.result)
        return [('warn' if not rotor else 'info', self.mode())] + notes

    def mode(self) -> str:
        """One sentence: what is estimated, on which encoders."""
        if self.stiffness is not None:
            return 'stiffness' + (' and friction' if self.friction is not None else '') + ' (motor_states: θ)'
        if self.friction is None:
            return 'nothing estimated (see left out)'
        why = 'stiffness off' if not self.settings.stiffness else 'no motor_states' if not self.rotor else \
            'stiffness left out'
        return f'friction only ({why}), ' + ('on the rotor (motor_states: θ)' if self.rotor else
                                             'on rigid joints (θ = q)')

    def replace_payload_document(self, text: str, source: str) -> str:
        """:meth:`replace_payload` with the payload of a payload file's YAML ``text`` (InputError if bad); one line."""
        return '; '.join(note for _, note in self.replace_payload(load_payload(text, self.robot, text=True), source))

    def replace_payload(self, payload, source: str) -> list[tuple[str, str]]:
        """The flange payload from now on (a :class:`~dynid.model.Payload`, None: none; ``source``: where it came
        from): it joins the rigid-body model of the friction's load torque. The estimates keep learning; the arm
        is not identified again."""
        from dynid.identify import RigidBodyTorque

        with self.lock:
            self.payload, self.payload_source = payload, source
            if self.friction is None:
                return [('info', f'payload from {source} kept: no friction is adapted, the stiffness needs none')]
            self.friction.joint_torque_model = RigidBodyTorque(self.result, self.robot, payload)
        mass = 0.0 if payload is None else payload.mass
        return [('info', f'payload {mass:.4g} kg from {source} in the friction\'s load torque')]

    def reset(self) -> None:
        """Both estimators start learning again (and the watch on the current stream starts again)."""
        with self.lock:
            self.current_watch.reset()
            if self.stiffness is not None:
                self.stiffness.reset()
            if self.friction is not None:
                self.friction.reset()

    def input_problem(self) -> str | None:
        """A sentence when the current stream carries nothing (constant while the joints move, with the
        likely cause: :mod:`dynid.io.stream_checks`), else None."""
        with self.lock:
            return self.current_watch.problem()

    def display(self, drop_warning: float) -> list[tuple[str, str, str, dict]]:
        """What a diagnostics display says: [(what, level 'ok', 'warn' or 'stale', sentence, values)]: the result
        in use, the mode (:meth:`mode`), what is left out, a dead current stream, then stale inputs or the
        joints' states (:meth:`joint_states`, ``drop_warning`` as there)."""
        refused = self.results_refused
        source = self.result_source or 'no identification result (no friction map, no friction adaptation)'
        found = [('result', 'warn' if refused else 'ok', source + (f'; {refused} refused on result_topic' if refused
                                                                   else ''), {'refused': str(refused)}),
                 ('mode', 'ok', self.mode(), {'motor_encoders': str(self.rotor)})]
        found += [('left out', 'warn', reason, {}) for reason in self.left_out]
        if problem := self.input_problem():  # e.g. a driver that never fills the current
            found.append(('current', 'warn', problem, {}))
        age = self.age_s()
        if age is None or age > STALE_S:
            needs = 'joint_states, ' + ('motor_states and ' if self.rotor else '') + 'joint_currents'
            return found + [('inputs', 'stale', f'no joined samples yet (needs {needs})' if age is None else
                             f'inputs stale: no sample for {age:.1f} s', {})]
        return found + [(f'{s.kind} {s.joint}', s.level, s.text, s.values) for s in self.joint_states(drop_warning)]

    def age_s(self) -> float | None:
        """Seconds since the last sample, None before any."""
        last = self.last_sample_time
        return None if last is None else self.clock() - last

    # ------------------------------------------------------------------------------- outputs
    def stiffness_table(self) -> np.ndarray:
        """(joints, :data:`QUANTITIES`) of the current stiffness estimates; relative_to_baseline NaN without one;
        all NaN when the stiffness is not estimated (:attr:`left_out`)."""
        with self.lock:
            if self.stiffness is None:
                return np.full((self.robot.n, len(QUANTITIES)), np.nan)
            alpha = self.stiffness.alpha.copy()
            k0 = self.stiffness.stiffness_at_zero.copy()
            fit = np.asarray(self.stiffness.fit, dtype=float).copy()
            spread = self.stiffness.relative_std
            undeflected = self._undeflected()
        alpha[undeflected], k0[undeflected], fit[undeflected] = np.nan, np.nan, np.nan  # no numbers from nothing
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

    def _undeflected(self) -> np.ndarray:
        """(J,) joints that, after :data:`DEFLECTION_WAIT_S` of samples, never deflected beyond the dead zone."""
        return ~self.stiffness.deflected & (self.stiffness.time_s >= DEFLECTION_WAIT_S)

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
            write_text(path, yaml.safe_dump(document, sort_keys=False))
        except OSError as error:
            return False, f'cannot write {path}: {error}'
        self.baseline = k0.copy()
        return True, f'baseline stored in {path}'

    def joint_states(self, drop_warning: float) -> list[JointState]:
        """Each joint's stiffness (converged, below the baseline by more than ``drop_warning`` [-], or
        changed within :data:`CHANGE_REPORT_S`) and, when adapted, friction (:func:`friction_state`: an α̂ capped
        at a bound of its projection box warns)."""
        table = self.stiffness_table()
        states = []
        for j, joint in enumerate(self.robot.joint_names if self.stiffness is not None else ()):
            _, _, k0, relative, _, spread = table[j]
            values = dict(zip(QUANTITIES, (f'{v:.6g}' for v in table[j]), strict=True))
            converged = bool(np.isfinite(spread) and spread <= CONVERGED_RELATIVE_STD)
            with self.lock:
                changes, changed_at = int(self.stiffness.changes[j]), self.stiffness.last_change_s[j]
                before, now = self.stiffness.before_change[j], self.stiffness.time_s
            values.update(changes=str(changes), last_change_s=f'{changed_at:.3f}')
            with self.lock:
                undeflected = bool(self._undeflected()[j])
            if undeflected:
                level, text = 'warn', (f'{NO_DEFLECTION}: θ − q never left the encoders\' resolution (motor_states '
                                       f'equal to the link positions?): no stiffness to estimate')
            elif np.isfinite(relative) and relative < 1.0 - drop_warning:
                level, text = 'warn', f'stiffness {100 * (1 - relative):.0f} % below the baseline'
            elif changes and now - changed_at < CHANGE_REPORT_S:
                level, text = 'warn', (f'stiffness changed {now - changed_at:.1f} s ago: k0 '
                                       f'{100 * (k0 / before - 1):+.0f} % since (estimating again)')
            else:
                level, text = 'ok', 'converged' if converged else 'not converged yet (needs deflection while moving)'
            states.append(JointState('stiffness', joint, level, text, values))
        friction = self.friction_table()
        with self.lock:
            box = None if self.friction is None else (self.friction.lower.copy(), self.friction.upper.copy())
        for j, joint in enumerate(self.robot.joint_names if friction is not None else ()):
            states.append(friction_state(joint, friction[j], box[0][j], box[1][j]))
        return states


class EncoderWatch:
    """Whether the motor encoders are there, from the counts of joint_states and motor_states messages received so
    far (:meth:`update`): yes while motor_states came within ``wait_s`` [s]; no once joint_states have come for
    ``wait_s`` without any motor_states (and while they keep coming); otherwise (nothing arrives) as it was."""

    def __init__(self, wait_s: float = ENCODER_WAIT_S, clock: Callable[[], float] = time.monotonic) -> None:
        self.wait_s, self.clock = float(wait_s), clock
        self.rotor = True
        self.counts = (0, 0)
        self.state_at = self.motor_at = self.states_since = None

    def update(self, states: int, motors: int) -> bool:
        """The verdict after ``states`` joint_states and ``motors`` motor_states messages received in all."""
        now = self.clock()
        if motors > self.counts[1]:
            self.motor_at = now
        if states > self.counts[0]:
            self.state_at = now
            self.states_since = now if self.states_since is None else self.states_since
        self.counts = (states, motors)
        if self.motor_at is not None and now - self.motor_at <= self.wait_s:
            self.rotor = True
        elif self.state_at is not None and now - self.state_at <= self.wait_s and \
                now - max(self.states_since, self.motor_at or self.states_since) >= self.wait_s:
            self.rotor = False
        return self.rotor


def friction_state(joint: str, row, lower, upper) -> JointState:
    """What the diagnostics say of one joint's friction: ``row`` (α̂1, α̂2, active) of the friction table, the
    projection box ``lower``, ``upper`` (2,) of (α1, α2). An estimate on an edge of the box is capped (warn): the
    box, not the data, sets it, and the friction may lie beyond (Madsen 2020, ch.6 eq. (27))."""
    alpha = np.asarray(row[:2], dtype=float)
    capped = (alpha <= lower) | (alpha >= upper)
    text = f'Coulomb level ×{alpha[0]:.3f} of the identified one, excess viscous {alpha[1]:.3g} N·m·s/rad'
    marks = [f'α̂{p + 1} capped at its {"upper" if alpha[p] >= upper[p] else "lower"} bound '
             f'{upper[p] if alpha[p] >= upper[p] else lower[p]:g}' for p in range(2) if capped[p]]
    if marks:
        text += f' ({", ".join(marks)}: the friction may lie beyond, the model no longer explains it)'
    values = {'alpha1': f'{alpha[0]:.6g}', 'alpha2': f'{alpha[1]:.6g}', 'adapting': str(bool(row[2])),
              'alpha1_capped': str(bool(capped[0])), 'alpha2_capped': str(bool(capped[1])),
              'alpha1_bounds': f'{lower[0]:.6g} {upper[0]:.6g}', 'alpha2_bounds': f'{lower[1]:.6g} {upper[1]:.6g}'}
    return JointState('friction', joint, 'warn' if capped.any() else 'ok', text, values)
