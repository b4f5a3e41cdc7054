"""contact_node's core (no ROS): the contact job on the intake's joined batches, what it says in /diagnostics, and
each contact into the health record as a ``collision`` event.

:class:`LiveContacts` takes :class:`dynid.io.stream.StateBatch` es as they come (any size, stamps in ns), runs the
:class:`dynid.contact.monitor.ContactMonitor` on them and returns what to publish: τ̂_ext per sample, the flange wrench,
the contacts that started or ended. A batch it cannot take (no currents where the result reads currents, a NaN) is
counted with its reason and skipped, never raised: the node stays up and says why in /diagnostics. A contact that ends
is recorded as a ``collision`` event of the robot (:class:`dynid.health.record.Event`): at its start, on its most
distal joint, with its peak τ̂_ext per joint and joints in the note; a record that cannot be written is counted and
said, the contacts go on. Where the trajectories sent to the arm's controller are seen (:meth:`LiveContacts.follow`),
the detector takes the commanded velocity at the batch's stamps (:mod:`dynid.contact.command`). Once batches have
come, none for :data:`STALE_S` is said as stale: no contact is being watched then.
"""

from __future__ import annotations

import datetime
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from dynid.contact.command import CommandedVelocity
from dynid.contact.detection import Contact
from dynid.contact.monitor import ContactMonitor, ContactSamples
from dynid.errors import InputError
from dynid.health.record import Event, HealthRecord, default_record_path, is_postgres

#: No state batch for this long [s] after the first: the status is stale (contacts are not watched).
STALE_S = 1.0


@dataclass
class LiveOutput:
    """What one batch gives: the samples (None when the batch was skipped) and the contacts that started and ended."""

    samples: ContactSamples | None
    started: list[Contact] = field(default_factory=list)
    ended: list[Contact] = field(default_factory=list)


class LiveContacts:
    """The contact job over live batches (module docstring).

    Args:
        monitor: the monitor (its result, robot, settings, calibration).
        record: the health record's place (an SQLite file, a postgresql:// URL; '' the default file; None: no
            record). robot_name: the robot's name in the record (empty: the robot model's). An event's time is its
            contact's start on the stamps' clock [s since 1970 for a driver's stamps]. clock: monotonic time [s]
            of the staleness watch (tests give their own).
    """

    def __init__(self, monitor: ContactMonitor, record: str | None = None, robot_name: str = '',
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.monitor = monitor
        self.clock = clock
        self.heard_s: float | None = None  # the clock at the last batch
        self.names = list(monitor.robot.joint_names)
        self.record_target = None if record is None else (record if is_postgres(record) or record
                                                          else str(default_record_path()))
        self.robot_name = robot_name or monitor.robot.name
        self.samples = self.skipped = self.contacts = self.records_failed = self.references_refused = 0
        self.last_problem = ''
        self.open: Contact | None = None
        self.last_contact: dict | None = None
        self.commanded = CommandedVelocity(self.names)
        self.last_q: np.ndarray | None = None
        self.moved = False  # a joint faster than the stiction velocity in a batch taken
        self.level: np.ndarray | None = None  # the alarm level per joint at the last sample taken [N·m]

    def follow(self, trajectory, start_s: float, now_s: float) -> None:
        """A trajectory (:class:`dynid.excite.trajectory.PointTrajectory`, None: stop and hold) sent to the arm's
        controller at ``now_s``, starting at ``start_s`` [s, the stamps' clock]; before the first state sample its
        first point stands for where the arm is."""
        q = self.last_q
        if q is None:
            if trajectory is None:
                return
            q = trajectory.positions[0][[list(trajectory.joint_names).index(name) for name in self.names]]
        self.commanded.follow(trajectory, start_s, now_s, q)

    def refuse_reference(self, reason: str) -> None:
        """A trajectory that could not be taken: counted and said in /diagnostics, the detector goes on."""
        self.references_refused += 1
        self.last_problem = f'reference refused: {reason}'

    def update(self, batch) -> LiveOutput:
        """Run one joined batch (module docstring)."""
        if len(batch) == 0:
            return LiveOutput(None)
        self.heard_s = self.clock()
        t = batch.stamps_ns * 1e-9
        try:
            if not (np.all(np.isfinite(batch.q)) and np.all(np.isfinite(batch.dq))):
                raise InputError('joint_states holds NaN positions or velocities')
            current = None if batch.current is None or np.isnan(batch.current).any() else batch.current
            tau = None if batch.tau is None or np.isnan(batch.tau).any() else batch.tau
            dtheta = None if batch.dtheta is None or np.isnan(batch.dtheta).any() else batch.dtheta
            temperature = None if batch.temperature is None or np.isnan(batch.temperature).any() \
                else batch.temperature
            reference = self.commanded.at(t)
            samples = self.monitor.run(t, batch.q, batch.dq, current, tau, dtheta, temperature,
                                       what='the state topics',
                                       reference_velocity=None if reference is None else reference[1],
                                       reference_position=None if reference is None else reference[0])
        except InputError as error:
            self.skipped += len(batch)
            self.last_problem = str(error)
            return LiveOutput(None)
        self.samples += len(batch)
        self.last_q = np.array(batch.q[-1], dtype=float)
        self.level = samples.level[-1]
        self.moved = self.moved or bool(np.any(np.abs(batch.dq) > self.monitor.settings.stiction_velocity))
        started, ended = [], []
        for contact in samples.contacts:
            if contact is not self.open:
                started.append(contact)
                self.contacts += 1
            if contact.end_s is not None:
                ended.append(contact)
        self.open = next((c for c in samples.contacts if c.end_s is None), None)
        for contact in ended:
            self.last_contact = contact.to_dict(self.names)
            self._record(contact)
        return LiveOutput(samples, started, ended)

    def _record(self, contact: Contact) -> None:
        if self.record_target is None:
            return
        note = json.dumps({'peak_nm': {self.names[j]: round(float(contact.peak_signed_nm[j]), 3)
                                       for j in contact.joints},
                           'joints': [self.names[j] for j in contact.joints],
                           'duration_s': round(contact.end_s - contact.start_s, 4),
                           'raised_by': list(contact.raised_by)})
        event = Event('collision', float(contact.start_s), self.names[contact.distal_joint], note)
        try:
            if not is_postgres(self.record_target):
                Path(self.record_target).parent.mkdir(parents=True, exist_ok=True)
            with HealthRecord(self.record_target) as record:
                record.add_event(self.robot_name, event, model=self.monitor.robot.name, joint_names=self.names)
        except (InputError, OSError, RuntimeError) as error:
            self.records_failed += 1
            self.last_problem = f'health record: {error}'

    def status(self) -> tuple[str, str, dict]:
        """(level, message, values) for /diagnostics: WARN while batches are skipped, records fail, trajectories are
        refused, the arm moves with no trajectory arrived where the thresholds were calibrated with the
        controller's reference, the calibration is shorter than the rate asked needs or says what its thresholds
        cannot do (:meth:`dynid.contact.calibration.Calibration.cautions`); else OK with the contact
        state. Among the values ``alarm_level_nm``: the |d| per joint at which an alarm is raised at the last sample
        (:class:`dynid.contact.monitor.ContactSamples` ``level``), JSON."""
        values = {'samples': self.samples, 'skipped_samples': self.skipped, 'contacts': self.contacts,
                  'in_contact': self.open is not None, 'records_failed': self.records_failed,
                  'observer_gain': float(self.monitor.gain[0]), 'observer_stages': self.monitor.observer.stages,
                  'calibrated': self.monitor.calibration is not None,
                  'calibration_short': '' if self.monitor.calibration is None
                  else self.monitor.calibration.shortness(),
                  'calibrated_with_reference': bool(getattr(self.monitor.calibration, 'with_reference', False)),
                  'calibration_warnings': json.dumps([] if self.monitor.calibration is None
                                                     else self.monitor.calibration.warnings),
                  'reference_trajectories': self.commanded.trajectories,
                  'references_refused': self.references_refused,
                  'last_contact': '' if self.last_contact is None else json.dumps(self.last_contact),
                  'alarm_level_nm': '' if self.level is None else json.dumps(
                      {name: round(float(v), 3) for name, v in zip(self.names, self.level, strict=True)})}
        if self.heard_s is not None and (silent_s := self.clock() - self.heard_s) > STALE_S:
            return 'stale', f'no state sample for {silent_s:.1f} s: contacts are not being watched', values
        if self.skipped and self.last_problem:
            return 'warn', f'skipping samples: {self.last_problem}', values
        if self.records_failed or self.references_refused:
            return 'warn', self.last_problem, values
        if values['calibrated_with_reference'] and self.moved and not self.commanded.trajectories:
            return 'warn', ('the arm moves but no trajectory sent to its controller has arrived, and the thresholds '
                            "were calibrated with the controller's reference: a motion's breakaway at rest can pass "
                            'the rest threshold (give reference_topic the topic the trajectories go to, or calibrate '
                            'without the reference)'), values
        if values['calibration_short']:
            return 'warn', values['calibration_short'], values
        said = [] if self.monitor.calibration is None else self.monitor.calibration.warnings
        if said:
            return 'warn', said[0] + (f' (and {len(said) - 1} more: calibration_warnings)' if len(said) > 1 else ''), \
                values
        if self.samples == 0:
            return 'ok', 'waiting for the state topics', values
        state = 'in contact' if self.open is not None else 'no contact'
        return 'ok', f'{state} ({self.contacts} contacts so far; advisory, not a safety function)', values


def contact_message(contact: Contact, names, phase: str, short: str = '') -> str:
    """A contact's start or end as JSON for the ``~/contacts`` topic; ``short``: the flag of a calibration shorter than
    its rate needs (:meth:`dynid.contact.calibration.Calibration.shortness`)."""
    return json.dumps({'phase': phase, **contact.to_dict(names), **({'calibration_short': short} if short else {}),
                       'utc': datetime.datetime.fromtimestamp(contact.start_s, datetime.timezone.utc).isoformat()})
