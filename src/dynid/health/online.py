"""A running estimator's sessions in the health record, and the record's judgement for a diagnostics display.

:class:`SessionRecorder` is estimator_node's core of the health record (no ROS): it takes a snapshot of
the running estimation (:class:`dynid.estimate.online.OnlineEstimation`) about once a second while
samples arrive, and every ``session_s`` of wall time writes them as one session (each joint's settled
value and spread: :func:`dynid.health.session.settled`, the same reduction as a replay's) in one
transaction. ``~/reset``, ``~/set_baseline`` and shutdown close the session early; the first two are
recorded as events (a new baseline). After every write the robot's record is judged again
(:func:`dynid.health.assessment.assess`; and at its last session, stored for the fleet's page:
:func:`dynid.health.stored.store_judgement`) and :meth:`SessionRecorder.statuses` says per joint and quantity
OK, WARN ("limit in N days", a change) or ERROR (past the limit).

A process killed between writes loses the session in progress only. A write that fails (a full disk, a
writer holding the file for longer than the timeout) is logged and counted; estimation goes on.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from dynid import __version__
from dynid.errors import InputError
from dynid.health.assessment import RobotHealth, assess
from dynid.health.backend import RecordUnavailableError, database_errors
from dynid.health.record import Event, HealthRecord, Session, default_record_path, is_postgres
from dynid.health.session import file_sha256, identified_levels, joint_sessions, mounting_text, settled
from dynid.health.settings import HealthSettings
from dynid.health.stored import store_judgement

MIN_SNAPSHOTS = 10  # a session needs this many snapshots (about 10 s of estimation) to be written
STALE_S = 1.0  # no snapshot while the newest sample is older than this [s]
LEVELS = {'unknown': 'ok', 'ok': 'ok', 'warn': 'warn', 'error': 'error'}


@dataclass(frozen=True)
class HealthStatus:
    """What a diagnostics display says of one joint's quantity: ``level`` 'ok', 'warn' or 'error', a sentence
    and values (strings)."""

    joint: str
    quantity: str
    level: str
    text: str
    values: dict = field(default_factory=dict)


class SessionRecorder:
    """Sessions of a running estimation written to the health record; its judgement (module docstring).

    Args:
        estimation: the :class:`OnlineEstimation` (read through its tables and estimators).
        settings: the record's place (``db``, ``robot``), ``session_s`` and the judgement's settings.
        result_file: the identification result the estimation started from ('' for none).
        input: what is estimated from (e.g. the node's name and topics), recorded with each session.
        clock: wall time [s since 1970 UTC] (``time.time``; tests give their own).

    Raises InputError when the record is not a readable health record (at start-up, before anything runs).
    """

    def __init__(self, estimation, settings: HealthSettings, result_file: str = '', input: str = '',
                 clock: Callable[[], float] = time.time) -> None:
        self.estimation, self.settings, self.clock = estimation, settings, clock
        self.robot = estimation.robot
        self.name = settings.robot or self.robot.name
        self.result_file, self.input = result_file, input
        self.result_sha256 = file_sha256(result_file) if result_file else ''
        if is_postgres(settings.db):
            self.target = settings.db
            self.path = HealthRecord.display(settings.db)
        else:
            self.target = self.path = Path(settings.db).expanduser() if settings.db else default_record_path()
        # an existing record is checked now (refused at start-up if damaged or newer); a new one is made at the
        # first write; a PostgreSQL server that cannot be reached now is tried again at each write
        self.record = None
        if is_postgres(self.target):
            try:
                self.record = HealthRecord(self.target)
            except RecordUnavailableError:
                pass
        elif self.path.exists():
            self.record = HealthRecord(self.path)
        self.written = self.failed = 0
        self.last_error = ''
        self.health: RobotHealth | None = None
        self._start_session()
        self.judge()

    # ---------------------------------------------------------------------------- sessions
    def _start_session(self) -> None:
        self.started = self.clock()
        self.times: list[float] = []
        self.rows: dict[str, list[np.ndarray]] = {'stiffness': [], 'friction': [], 'temperature': []}
        self.samples_at_start = self.estimation.samples
        self.sums_at_start = self._residual_sums()

    def _residual_sums(self) -> dict[str, np.ndarray]:
        with self.estimation.lock:
            return {name: getattr(self.estimation, name).residual_sums.copy()
                    for name in ('stiffness', 'friction') if getattr(self.estimation, name) is not None}

    def snapshot(self) -> None:
        """Keep the current estimates, if samples are arriving."""
        age = self.estimation.age_s()
        if age is None or age > STALE_S:
            return
        self.times.append(self.clock())
        self.rows['stiffness'].append(self.estimation.stiffness_table()[:, 2])
        friction = self.estimation.friction_table()
        self.rows['friction'].append(np.full((self.robot.n, 2), np.nan) if friction is None else friction[:, :2])
        temperature = self.estimation.temperature
        self.rows['temperature'].append(np.full(self.robot.n, np.nan) if temperature is None else temperature)

    def tick(self) -> list[tuple[str, str]]:
        """A snapshot, and the session written when ``session_s`` has passed; notes (level, text) for a log."""
        self.snapshot()
        if self.clock() - self.started >= self.settings.session_s:
            return self.flush()
        return []

    def session(self) -> Session | None:
        """The session in progress as the record would keep it; None with fewer than MIN_SNAPSHOTS snapshots."""
        if len(self.times) < MIN_SNAPSHOTS:
            return None
        times = np.asarray(self.times)
        stiffness, stiffness_std = settled(times, np.array(self.rows['stiffness']))
        friction, friction_std = settled(times, np.array(self.rows['friction']))
        if not np.isfinite(friction).any():
            friction = friction_std = None
        temperature = np.array(self.rows['temperature'])
        temperature = np.nanmean(temperature, axis=0) if np.isfinite(temperature).any() else None
        now, start = self._residual_sums(), self.sums_at_start
        residual = {}
        for name, sums in now.items():
            before = start.get(name)
            if before is not None and before.shape == sums.shape and np.all(sums >= before):
                sums = sums - before  # else the estimator was made again since: its sums are the session's
            with np.errstate(divide='ignore', invalid='ignore'):
                residual[name] = np.where(sums[0] > 0, np.sqrt(sums[1] / sums[0]), np.nan)
        coulomb, viscous = identified_levels(self.estimation.result, self.robot.joint_names)
        joints = joint_sessions(self.robot.joint_names, temperature_c=temperature, stiffness=stiffness,
                                stiffness_std=stiffness_std, friction=friction, friction_std=friction_std,
                                coulomb=coulomb, viscous=viscous, stiffness_residual=residual.get('stiffness'),
                                friction_residual=residual.get('friction'),
                                samples=max(self.estimation.samples - self.samples_at_start, 0))
        return Session(self.name, self.robot.name, tuple(self.robot.joint_names), self.started, joints,
                       duration_s=self.times[-1] - self.started, source='node', input=self.input,
                       result_file=self.result_file, result_sha256=self.result_sha256, software=f'dynid {__version__}',
                       mounting=mounting_text(self.robot.gravity), payload_kg=self._payload_kg())

    def _payload_kg(self) -> float:
        payload = getattr(self.estimation, 'payload', None)
        return float(payload.mass) if payload is not None else math.nan

    def flush(self) -> list[tuple[str, str]]:
        """Write the session in progress (if it has enough snapshots) and start the next; notes for a log."""
        session = self.session()
        self._start_session()
        if session is None:
            return []
        try:
            self._open().append(session)
        except (*database_errors(), InputError, OSError) as error:
            self.failed += 1
            self.last_error = str(error)
            return [('warn', f'health record {self.path}: session not written ({error})')]
        self.written += 1
        self.judge()
        return [('info', f'health record: session of {self.name} written to {self.path}')]

    def _open(self) -> HealthRecord:
        if self.record is None:
            self.record = HealthRecord(self.target)
        return self.record

    def event(self, kind: str, note: str = '') -> list[tuple[str, str]]:
        """Close the session in progress and record ``kind`` (reset, set_baseline) for every joint."""
        notes = self.flush()
        try:
            self._open().add_event(self.name, Event(kind, self.clock(), None, note), model=self.robot.name,
                                   joint_names=self.robot.joint_names)
        except (*database_errors(), InputError, OSError) as error:
            return notes + [('warn', f'health record {self.path}: event {kind} not written ({error})')]
        self.judge()
        return notes

    def close(self) -> list[tuple[str, str]]:
        """Write the session in progress and close the record."""
        notes = self.flush()
        if self.record is not None:
            self.record.close()
        return notes

    # ---------------------------------------------------------------------------- judgement
    def judge(self) -> None:
        """Judge the robot's record again (after a write: the record changes only then)."""
        if self.record is None:
            return
        try:
            if self.name in self.record.robots():
                self.health = assess(self.record.history(self.name), self.settings, now_utc=self.clock())
                store_judgement(self.record, self.name, self.settings)  # at the last session: the fleet page's
        except (*database_errors(), InputError) as error:
            self.last_error = f'judging the record: {error}'

    def statuses(self) -> list[HealthStatus]:
        """Per joint and quantity: the judgement's level and sentence; one 'record' status first."""
        sessions = 0 if self.health is None else self.health.sessions
        text = f'{sessions} sessions of {self.name} in {self.path}; next in ' \
               f'{max(self.settings.session_s - (self.clock() - self.started), 0.0):.0f} s'
        if self.failed:
            text += f'; {self.failed} not written, last: {self.last_error}'
        out = [HealthStatus('', 'record', 'warn' if self.failed else 'ok', text,
                            {'sessions': str(sessions), 'written': str(self.written), 'failed': str(self.failed)})]
        if self.health is None:
            return out
        for joint, quantities in self.health.joints.items():
            for quantity, q in quantities.items():
                forecast = q.forecast
                days = '' if forecast is None or not math.isfinite(forecast.days) else f'{forecast.days:.1f}'
                out.append(HealthStatus(joint, quantity, LEVELS[q.state], q.text or q.state, {
                    'state': q.state, 'level_percent': f'{100 * q.level:.2f}' if math.isfinite(q.level) else '',
                    'limit_percent': f'{100 * q.limit:g}', 'forecast_days': days,
                    'sessions': str(int(np.isfinite(q.relative).sum()))}))
        return out
