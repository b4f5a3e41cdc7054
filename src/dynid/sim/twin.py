"""The digital twin: plant, joint controller, sensors and the reference, advanced sample by sample.

:class:`DigitalTwin` produces, at ``rate_hz``, what a robot driver publishes (link and rotor
positions and velocities, joint torque, motor current, temperature) plus the noiseless truth.
Internally each output period is split into steps of at most ``max_step_s`` (controller at every
step). The reference follows joint_trajectory_controller semantics (:mod:`dynid.excite.reference`);
an external effort [N·m] (forward effort controller) is added to the controller output.

:meth:`DigitalTwin.advance` is the one way the twin moves: ``step`` is ``advance(1)`` and ``run``
calls it in chunks. Only the plant and the controller's feedback run per internal step; the
reference, the controller's model-based torque and the sensors depend on time alone and are
computed for a call's samples at once. Results do not depend on how samples are split into calls:
the reference is evaluated in blocks of :attr:`DigitalTwin.REFERENCE_BLOCK` steps aligned to the
step count (a batch evaluation's rounding can depend on the batch), and the sensor noise is one
seeded stream (:class:`dynid.sim.sensors.Sensors`).

Scheduled changes of the true joints (:class:`dynid.sim.changes.JointChange`: stiffness loss, wear)
apply at the first output sample at or after their time, inside :meth:`DigitalTwin.advance`, so they
too do not depend on how samples are split into calls.

Contacts (:class:`dynid.sim.contacts.ContactLoad`: a wrench at a point of a link for a time, on the twin's clock)
act on the links at every internal step (:meth:`DigitalTwin.apply_contact`); the truth's ``external_torque`` is
their τ_ext at each sample.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from dynid.errors import InputError
from dynid.excite.home import home_configuration
from dynid.excite.reference import ReferenceGenerator
from dynid.excite.trajectory import FourierTrajectory, PointTrajectory, Trajectory
from dynid.model.inertial import Payload
from dynid.model.robot import RobotModel
from dynid.sim.changes import AppliedJointChange, JointChange, changed_fields
from dynid.sim.contacts import ContactLoad, ContactSchedule
from dynid.sim.controller import JointController
from dynid.sim.integrator import FRICTION, JOINT_TORQUE, RECORDED
from dynid.sim.parameters import PlantParameters
from dynid.sim.plant import FlexibleJointPlant
from dynid.sim.sensors import Measurement, Sensors
from dynid.sim.stepping import PLAN_ROWS, run_steps

TRUTH_FIELDS = ('q', 'dq', 'theta', 'dtheta', 'joint_torque', 'friction', 'current', 'temperature',
                'rotor_acceleration', 'link_acceleration', 'external_torque')
MEASURED_FIELDS = ('q', 'dq', 'joint_torque', 'theta', 'dtheta', 'current', 'temperature')
REFERENCE_FIELDS = ('q', 'dq', 'ddq', 'effort')


def gentle_motion(robot: RobotModel, amplitude: float = 0.3, base_frequency_hz: float = 0.1) -> FourierTrajectory:
    """A slow cosine series around the home configuration, starting at rest at home (the default motion)."""
    weights = np.array([0.6, 0.25, 0.15])
    sign = np.where(np.arange(robot.n) % 2 == 0, 1.0, -1.0)
    cosine = amplitude * sign[:, None] * weights[None, :]
    home = home_configuration(robot)
    return FourierTrajectory(robot.joint_names, base_frequency_hz, home - cosine.sum(axis=1),
                             np.zeros_like(cosine), cosine)


@dataclass
class TwinSample:
    """One output sample: time [s], the measurement, the truth and the reference, (n,) arrays."""

    time: float
    measured: Measurement
    truth: dict[str, np.ndarray]
    reference: dict[str, np.ndarray]


@dataclass
class SimulationRecord:
    """A simulated recording: ``time`` (N,) [s] and dicts of (N, n) arrays (module constants name them).

    ``measured`` holds what the driver publishes (:data:`MEASURED_FIELDS`), ``truth`` the noiseless
    plant (:data:`TRUTH_FIELDS`; ``current`` is the mean of the commands before and after each sample)
    and ``reference`` the controller's reference at the sample times (:data:`REFERENCE_FIELDS`).
    """

    joint_names: tuple[str, ...]
    time: np.ndarray
    measured: dict[str, np.ndarray]
    truth: dict[str, np.ndarray]
    reference: dict[str, np.ndarray]
    rate_hz: float

    @classmethod
    def concatenate(cls, records: Sequence[SimulationRecord]) -> SimulationRecord:
        """Consecutive records joined into one (at least one record)."""
        first = records[0]
        if len(records) == 1:
            return first
        return cls(first.joint_names, np.concatenate([r.time for r in records]),
                   *({k: np.concatenate([getattr(r, part)[k] for r in records]) for k in getattr(first, part)}
                     for part in ('measured', 'truth', 'reference')),
                   first.rate_hz)


class DigitalTwin:
    """Simulated robot with controller and sensors (module docstring).

    Args:
        params: the plant (truth), sensors and controller.
        rate_hz: output rate [Hz].
        max_step_s: longest internal integration step [s].
        seed: seed of the sensor noise.
        initial_q: start configuration [rad]; default :func:`home_configuration`.
        joint_changes: changes of the true joints to apply during the run
            (:meth:`schedule_joint_change`).

    Attributes:
        joint_changes: every change scheduled, in the order given.
        applied_joint_changes: the changes applied since the last :meth:`reset`, in order, with the
            sample they applied at and the changed parameters before and after
            (:class:`dynid.sim.changes.AppliedJointChange`).
    """

    #: Internal steps per block of reference evaluation (blocks start at multiples of it).
    REFERENCE_BLOCK = 128
    #: Most samples per :meth:`advance` call inside :meth:`run` (bounds the memory of long runs).
    RUN_CHUNK = 1000

    def __init__(self, params: PlantParameters, rate_hz: float = 1000.0, max_step_s: float = 1e-3,
                 seed: int = 0, initial_q: np.ndarray | None = None,
                 joint_changes: Sequence[JointChange] = ()) -> None:
        self._set_up(params, rate_hz, max_step_s)
        self.plant = FlexibleJointPlant(params)
        self.sensors = Sensors(params.sensors, params.drives.gear_ratio, seed)
        self.controller = JointController(params, self.plant, self.sensors.motor_resolution)
        self.reference = ReferenceGenerator(self.robot.joint_names)
        self.effort_command = np.zeros(self.n)
        self.time = 0.0
        self.samples = 0
        self._reference_block = None  # (block index, reference revision, values; _planned_reference)
        self._original_joints = params.joints  # changes scale these (dynid.sim.changes)
        self.joint_changes: list[JointChange] = []
        self.applied_joint_changes: list[AppliedJointChange] = []
        self._pending_changes: list[tuple[int, int, JointChange]] = []  # (sample, order, change), sorted
        self._next_change_sample = -1  # sample of the first pending change, −1 if none
        self.contacts = ContactSchedule(self.robot)
        self.reset(initial_q)
        for change in joint_changes:
            self.schedule_joint_change(change)

    def _set_up(self, params: PlantParameters, rate_hz: float, max_step_s: float) -> None:
        """The plant-independent part of the set-up: parameters, robot, output rate and internal step, checked."""
        if not np.isfinite(rate_hz) or not 1.0 <= rate_hz <= 20000.0:
            raise InputError(f'rate must be within 1–20000 Hz, got {rate_hz!r}')
        if not np.isfinite(max_step_s) or not 1e-5 <= max_step_s <= 0.01:
            raise InputError(f'max_step_s must be within 1e-5–0.01 s, got {max_step_s!r}')
        self.params = params
        self.robot = params.robot
        self.n = self.robot.n
        self.rate_hz = float(rate_hz)
        self.substeps = max(1, int(np.ceil(1.0 / (rate_hz * max_step_s) - 1e-9)))
        self.step_s = 1.0 / (rate_hz * self.substeps)

    def reset(self, q: np.ndarray | None = None) -> None:
        """Start again at rest at q (default home), time 0, holding position, no effort command.

        The true joints return to their parameters when the twin was made and every scheduled joint
        change is pending again (changes at t = 0 apply at once, after the start at rest).
        """
        q = home_configuration(self.robot) if q is None else np.asarray(q, dtype=float).reshape(-1)
        if q.shape != (self.n,) or not np.all(np.isfinite(q)):
            raise InputError(f'initial position must be {self.n} finite values, got {q.tolist()}')
        outside = (q < self.robot.lower_limits) | (q > self.robot.upper_limits)
        if np.any(outside):
            names = [n for n, o in zip(self.robot.joint_names, outside, strict=True) if o]
            raise InputError(f'initial position is outside the limits of {names}')
        self.time = 0.0
        self.samples = 0
        if self.applied_joint_changes:
            self.plant.set_joint_parameters(self._original_joints)
            self.params = self.plant.params
        self.plant.reset(self.params.drives.joints_to_motors(q))
        self.controller.reset(q)
        self.reference.hold(q, 0.0)
        self.effort_command = np.zeros(self.n)
        st = self.plant.state
        q_r, dq_r, ddq_r, effort_r = self.reference.sample(0.0)
        self._pending_current = self.controller.current(st.theta, st.dtheta, q_r,
                                                        dq_r, ddq_r, effort_r + self.effort_command, self.step_s)
        self.applied_joint_changes = []
        self._pending_changes = [(self._change_sample(c.time_s), i, c) for i, c in enumerate(self.joint_changes)]
        self._pending_changes.sort(key=lambda entry: entry[:2])
        self._apply_due_changes(0)

    # ------------------------------------------------------------------------------ commands
    def follow(self, trajectory: Trajectory, start_time: float | None = None,
               effort: np.ndarray | None = None) -> None:
        """Follow a trajectory from ``start_time`` [s] (default now), replacing the active one."""
        self.reference.follow(trajectory, self.time if start_time is None else start_time, self.time, effort)

    def set_effort_command(self, effort: np.ndarray) -> None:
        """External effort [N·m] per joint, held until changed (a forward effort controller)."""
        effort = np.asarray(effort, dtype=float).reshape(-1)
        if effort.shape != (self.n,) or not np.all(np.isfinite(effort)):
            raise InputError(f'effort command must be {self.n} finite values')
        self.effort_command = effort

    #: [s] a velocity command moves the reference this long, then holds it (renew to keep moving)
    VELOCITY_HORIZON_S = 0.5

    def _command(self, values, what: str) -> np.ndarray:
        """``values`` as n finite values; InputError otherwise."""
        values = np.asarray(values, dtype=float).reshape(-1)
        if values.shape != (self.n,) or not np.all(np.isfinite(values)):
            raise InputError(f'{what} must be {self.n} finite values')
        return values

    def command_position(self, q: np.ndarray) -> None:
        """A position command (ros2_control's forward position controller) [rad]: the reference holds ``q`` from now,
        and the joint controller takes the arm there. Refused (InputError) outside the position limits."""
        q = self._command(q, 'position command')
        self._within_limits(q, 'position command')
        self.reference.hold(q, self.time)

    def command_velocity(self, dq: np.ndarray) -> None:
        """A velocity command (a forward velocity controller) [rad/s]: the reference moves from where it is at ``dq``
        for :attr:`VELOCITY_HORIZON_S`, then holds (a command not renewed stops the arm). Refused (InputError) where
        the motion would leave the position limits within it."""
        dq = self._command(dq, 'velocity command')
        q0 = self.reference.sample(self.time)[0]
        end = q0 + dq * self.VELOCITY_HORIZON_S
        self._within_limits(end, 'velocity command')
        ramp = PointTrajectory(self.robot.joint_names, np.array([0.0, self.VELOCITY_HORIZON_S]), np.array([q0, end]),
                               np.array([dq, dq]))
        self.reference.follow(ramp, self.time, self.time)

    def _within_limits(self, q: np.ndarray, what: str) -> None:
        outside = (q < self.robot.lower_limits) | (q > self.robot.upper_limits)
        if np.any(outside):
            names = [n for n, o in zip(self.robot.joint_names, outside, strict=True) if o]
            raise InputError(f'{what} leaves the position limits of {names}')

    def apply_contact(self, load: ContactLoad) -> None:
        """Put ``load`` on the robot at its ``start_s`` (twin time; a start already past acts from now for what is
        left of it); the controller is not told. InputError for a link the robot does not have."""
        self.contacts.add(load)

    def _external(self, first_step: int, count: int):
        """``external(step, q)`` for :func:`dynid.sim.stepping.run_steps` over ``count`` internal steps from
        ``first_step`` (steps of the call, from 0), or None where no contact acts in them."""
        start = self._step_times(np.array([first_step]))[0] - self.step_s
        end = self._step_times(np.array([first_step + count]))[0]
        if not self.contacts.active(start, end):
            return None
        offset = self.samples * self.substeps + 1
        half = 0.5 * self.step_s

        def external(step: int, q: np.ndarray):
            return self.contacts.torque(float(self._step_times(np.array([offset + step]))[0]) - half, q)

        return external

    def set_payload(self, payload: Payload | None) -> None:
        """Change the payload now; the controller is not told (as with a real payload change)."""
        self.plant.set_payload(payload)
        self.params = self.plant.params

    def _change_sample(self, time_s: float) -> int:
        """Index of the first output sample at or after time_s [s] (sample k is at k/rate_hz)."""
        x = time_s * self.rate_hz
        return math.ceil(x - 1e-12 * max(1.0, x))  # a time on a sample, up to rounding, is that sample

    def schedule_joint_change(self, change: JointChange) -> None:
        """Apply ``change`` at the first output sample at or after ``change.time_s`` (twin time).

        At that sample instant the true joint parameters change with the state kept
        (:meth:`FlexibleJointPlant.set_joint_parameters`): the sample reports the joint torque and
        friction just after the change, and the integration from it on uses the new parameters (its
        accelerations are those of the step that ended there). Whatever the split into
        :meth:`advance` calls, the change applies at the same sample. The controller is not told.

        Raises InputError for unknown joints, a Fv1 made negative, or a time before the current one
        (a change at the current sample applies at once; that sample has already been returned).
        """
        if not isinstance(change, JointChange):
            raise InputError(f'expected a JointChange, got {type(change).__name__}')
        change.applied_to(self._original_joints, self._original_joints, self.robot.joint_names)  # validates
        sample = self._change_sample(change.time_s)
        if sample < self.samples:
            raise InputError(f'joint change at {change.time_s:g} s is in the past (twin time {self.time:g} s)')
        self.joint_changes.append(change)
        self._pending_changes.append((sample, len(self.joint_changes) - 1, change))
        self._pending_changes.sort(key=lambda entry: entry[:2])
        self._apply_due_changes(self.samples)

    @property
    def pending_joint_changes(self) -> list[JointChange]:
        """The scheduled changes not applied yet, in the order they will apply."""
        return [change for _, _, change in self._pending_changes]

    def _apply_due_changes(self, sample: int) -> int:
        """Apply the pending changes due at ``sample`` (the plant is at that sample); returns the sample
        of the next pending change (−1 if none)."""
        names = self.robot.joint_names
        while self._pending_changes and self._pending_changes[0][0] <= sample:
            _, _, change = self._pending_changes.pop(0)
            current = self.plant.params.joints
            mask = change.mask(names)
            joints = change.applied_to(self._original_joints, current, names)
            self.plant.set_joint_parameters(joints)
            self.params = self.plant.params
            self.applied_joint_changes.append(AppliedJointChange(
                change, sample, sample / self.rate_hz, changed_fields(current, names, mask),
                changed_fields(joints, names, mask)))
        self._next_change_sample = self._pending_changes[0][0] if self._pending_changes else -1
        return self._next_change_sample

    # ------------------------------------------------------------------------------- stepping
    def _step_times(self, steps: np.ndarray) -> np.ndarray:
        """Times [s] of internal step indices (step k·substeps is output sample k)."""
        s = self.substeps
        return (steps // s + (steps % s) / s) / self.rate_hz

    def _planned_reference(self, first: int, count: int) -> list[np.ndarray]:
        """(q_r, q̇_r, q̈_r, effort, controller's model-based torque), each (count, n), at internal steps
        first … first + count − 1.

        Evaluated per aligned block of REFERENCE_BLOCK steps and kept until the block is left or the
        reference changes, so a step's value is the same whatever the calls were.
        """
        size, parts, step, end = self.REFERENCE_BLOCK, [], first, first + count
        while step < end:
            block = step // size
            cached = self._reference_block
            if cached is None or cached[0] != block or cached[1] != self.reference.revision:
                times = self._step_times(block * size + np.arange(size))
                values = self.reference.sample_many(times)
                values = (*values, self.controller.internal_torques(*values[:3]))
                cached = self._reference_block = (block, self.reference.revision, values)
            low, high = step - block * size, min(end - block * size, size)
            parts.append([value[low:high] for value in cached[2]])
            step = block * size + high
        if len(parts) == 1:
            return parts[0]
        return [np.concatenate(values) for values in zip(*parts, strict=True)]

    def compile_kernels(self) -> None:
        """Compile (or load from numba's cache) the step's kernels on a throwaway twin of the same plant, this
        twin untouched: a real-time run (sim_node) calls it before its clock starts, so that its first
        :meth:`advance` is not late by the compilation (seconds on a machine without the cache)."""
        DigitalTwin(self.params, rate_hz=self.rate_hz, max_step_s=1.0 / (self.rate_hz * self.substeps)).advance(1)

    def advance(self, count: int) -> SimulationRecord:
        """Advance ``count`` output samples; returns them as a :class:`SimulationRecord` (count, n).

        The same as ``count`` calls of :meth:`step` (bit for bit), at a fraction of the cost: the
        reference, the controller's model-based torque and the sensors are computed for all samples
        at once, and only the plant and the controller's feedback run per internal step. Commands
        (:meth:`follow`, :meth:`set_effort_command`, :meth:`set_payload`) take effect from the next
        call; scheduled joint changes (:meth:`schedule_joint_change`) at their sample, also within a
        call. The sensor noise continues its one stream across calls.

        The command for the next step is computed as soon as the state at the sample is known, so
        that the current of the sample can be the mean of the commands before and after it: a
        zero-order-hold current jumps at the sample instant, and its mean is what the rotor equation
        holds there (recording the previous command alone would lag by half a step and bias
        identification).
        """
        try:
            count = operator.index(count)
        except TypeError:
            raise InputError(f'sample count must be an integer, got {count!r}') from None
        if count < 0:
            raise InputError(f'sample count must be >= 0, got {count}')
        if count == 0:
            empty = np.empty((0, self.n))
            return SimulationRecord(self.robot.joint_names, np.empty(0), dict.fromkeys(MEASURED_FIELDS, empty),
                                    dict.fromkeys(TRUTH_FIELDS, empty), dict.fromkeys(REFERENCE_FIELDS, empty),
                                    self.rate_hz)
        s, h, n = self.substeps, self.step_s, self.n
        plant, controller = self.plant, self.controller
        q_r, dq_r, ddq_r, effort_r, internal = self._planned_reference(self.samples * s + 1, count * s)
        plan = np.empty((len(PLAN_ROWS), count * s, n))
        p_r, dp_r, effort = controller.motor_reference(q_r, dq_r, effort_r + self.effort_command)
        plan[0], plan[1], plan[2], plan[3] = controller.setpoints(p_r, internal), dp_r, internal, effort
        table = np.empty((count, RECORDED, n))  # per sample the work rows (the truth, both commands)
        pending, done, next_change = self._pending_current, 0, self._next_change_sample
        while done < count:  # in pieces that end where a scheduled joint change applies
            end = next_change - self.samples if self.samples < next_change <= self.samples + count else count
            pending = run_steps(plant, controller.gains, pending, plan, done * s, end * s, h, s, table,
                                self._external(self.samples * s + 1 + done * s, (end - done) * s))
            done = end
            if self.samples + done == next_change:  # the feedback reads the encoder only: the same after it
                next_change = self._apply_due_changes(next_change)
                table[done - 1, JOINT_TORQUE], table[done - 1, FRICTION] = plant.joint_torque, plant.friction_torque
        first = self.samples + 1
        self.samples += count
        self.time = self.samples / self.rate_hz

        q, dq, theta, dtheta, joint_torque, friction, before, after, *rest, sensed_temperature = \
            table.transpose(1, 0, 2)  # (fields, count, n)
        current = 0.5 * (before + after)  # the mean of the zero-order hold across the sample
        if plant.inverse_coupling is not None:  # the plant's coordinates are the motors': the links' q = C⁻¹·p
            q, dq = q @ plant.inverse_coupling.T, dq @ plant.inverse_coupling.T
            rest[-1] = rest[-1] @ plant.inverse_coupling.T  # link_acceleration
        external = self.contacts.torques(np.arange(first, first + count) / self.rate_hz, q)
        truth = dict(zip(TRUTH_FIELDS, (q, dq, theta, dtheta, joint_torque, friction, current, *rest, external),
                         strict=True))
        self._pending_current = pending
        return self._record(first, truth, sensed_temperature, (q_r, dq_r, ddq_r, effort_r))

    def _record(self, first: int, truth: dict, sensed_temperature: np.ndarray, planned) -> SimulationRecord:
        """The samples ``first`` … of a call: the truth (:data:`TRUTH_FIELDS`, (count, n) each), measured through the
        sensors (with the sensed temperature), and the ``planned`` reference (q_r, q̇_r, q̈_r, effort at every
        internal step of the call) at the samples."""
        s, count = self.substeps, len(truth['q'])
        measured = self.sensors.measure_many(truth['q'], truth['dq'], truth['joint_torque'], truth['theta'],
                                             truth['dtheta'], truth['current'], sensed_temperature)
        # One copy (the planned block stays in use) of the reference at the samples.
        reference = dict(zip(REFERENCE_FIELDS, np.array([value[s - 1::s] for value in planned]), strict=True))
        time = np.arange(first, first + count) / self.rate_hz
        return SimulationRecord(self.robot.joint_names, time, {k: getattr(measured, k) for k in MEASURED_FIELDS},
                                truth, reference, self.rate_hz)

    def step(self) -> TwinSample:
        """Advance one output period; returns the sample at the new time (``advance(1)``)."""
        record = self.advance(1)
        m = record.measured
        measured = Measurement(**{k: m[k][0] for k in MEASURED_FIELDS})
        return TwinSample(self.time, measured, {k: v[0] for k, v in record.truth.items()},
                          {k: v[0] for k, v in record.reference.items()})

    def run(self, duration_s: float, progress: Callable[[float], None] | None = None) -> SimulationRecord:
        """Simulate ``duration_s`` [s] with the current reference; ``progress(fraction)`` about every 5 %.

        :meth:`advance` in chunks of at most RUN_CHUNK samples, joined.
        """
        if not np.isfinite(duration_s) or duration_s <= 0:
            raise InputError(f'duration must be > 0 s, got {duration_s!r}')
        count = int(round(duration_s * self.rate_hz))
        if count == 0:
            return self.advance(0)
        chunk = self.RUN_CHUNK if progress is None else min(self.RUN_CHUNK, max(1, count // 20))
        records, done = [], 0
        while done < count:
            records.append(self.advance(min(chunk, count - done)))
            done += records[-1].time.size
            if progress is not None:
                progress(done / count)
        return SimulationRecord.concatenate(records)


def trajectory_start(trajectory: Trajectory, joint_names) -> np.ndarray:
    """Position of a trajectory at its start, in ``joint_names`` order."""
    from dynid.excite.trajectory import reorder_trajectory_output

    q = trajectory.evaluate(np.array([0.0]))[0]
    return reorder_trajectory_output(q, trajectory.joint_names, joint_names)[0]


__all__ = ['DigitalTwin', 'PointTrajectory', 'SimulationRecord', 'TwinSample', 'gentle_motion',
           'home_configuration', 'trajectory_start']
