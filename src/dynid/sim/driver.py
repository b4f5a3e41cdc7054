"""The twin as a robot driver presents it, in real time: what sim_node publishes and the commands it takes, without
ROS types (the node converts its messages and publishes).

:class:`DriverTwin` holds the twin (:mod:`dynid.sim.twin`, or MuJoCo's: :mod:`dynid.sim.mujoco_twin`), the UR
driver side (:class:`dynid.sim.ur_modes.URDriverSide`: joint_states' effort as the driver publishes it, effort
commands applied as UR's direct torque) and the sample clock (:class:`dynid.sim.realtime.RealTimeSchedule`), and
counts what it produced, took and refused for the node's diagnostics.

    >>> driver = DriverTwin(twin, URDriverSide(params, 'torque', None, False), 500.0, now_ns=0)  # doctest: +SKIP
    >>> stamps, topics = driver.burst(now_ns=10_000_000)                                    # doctest: +SKIP
"""

from __future__ import annotations

import numpy as np

from dynid.errors import InputError
from dynid.sim.realtime import RealTimeSchedule
from dynid.sim.ur_modes import URDriverSide, hand_gravity_to_ur

CATCH_UP_S = 0.1  # seconds of samples produced in one burst at most
LATE_S = 0.1  # a lag above this is reported as a warning
#: topic: {JointState field: the twin's measurement in it}
TOPICS = {'joint_states': {'position': 'q', 'velocity': 'dq', 'effort': 'joint_torque'},
          'motor_states': {'position': 'theta', 'velocity': 'dtheta'},
          'joint_currents': {'effort': 'current'}, 'joint_temperatures': {'effort': 'temperature'}}
#: forward command controllers' topics (Float64MultiArray, robot joint order): (counter, the twin's method)
COMMANDS = {'forward_effort_controller/commands': ('effort_commands', 'set_effort_command'),
            'forward_position_controller/commands': ('position_commands', 'command_position'),
            'forward_velocity_controller/commands': ('velocity_commands', 'command_velocity')}


class DriverTwin:
    """A twin run in real time as a driver (module docstring).

    Args:
        twin: the plant and its controller (``advance``, ``follow``, ``reset``, the command methods of
            :data:`COMMANDS`). ur: joint_states' effort as the driver publishes it and how effort commands apply.
        rate_hz: output rate [Hz]. now_ns: the clock at the start [ns]: stamp of twin time 0.
        initial_q: where a reset starts [rad] (None: the twin's home).

    Attributes:
        topics: {topic: {JointState field: the measurement in it}} as published (joint_states' effort as ``ur``
            says). counters: samples produced, trajectories and commands taken and refused, late bursts.
    """

    def __init__(self, twin, ur: URDriverSide, rate_hz: float, now_ns: int, initial_q: np.ndarray | None = None):
        self.twin, self.ur, self.initial_q = twin, ur, initial_q
        if ur.ur is not None:
            hand_gravity_to_ur(twin, ur.ur)
        self.topics = {**TOPICS, 'joint_states': {**TOPICS['joint_states'], 'effort': ur.effort_field}}
        self.counters = {'samples': 0, 'trajectories': 0, 'rejected_trajectories': 0, 'late_callbacks': 0,
                         'contacts': 0, 'rejected_contacts': 0,
                         **{f'{prefix}{kind}': 0 for kind, _ in COMMANDS.values() for prefix in ('', 'rejected_')}}
        twin.compile_kernels()  # before the clock starts: the first samples are not late by it
        self.schedule = RealTimeSchedule(rate_hz, now_ns, max(1, int(CATCH_UP_S * rate_hz)))

    def burst(self, now_ns: int) -> tuple[np.ndarray, dict[str, dict[str, np.ndarray]]] | None:
        """The samples due at ``now_ns`` (at most :data:`CATCH_UP_S` of them): their stamps [ns] and each topic's
        fields {topic: {JointState field: (count, n) values}}; None when none is due. UR's gravity and friction
        are evaluated at the state of the burst's start."""
        count = self.schedule.due(now_ns, self.twin.samples)
        if count == 0:
            return None
        if count == self.schedule.max_batch:
            self.counters['late_callbacks'] += 1
        first = self.twin.samples + 1
        if self.ur.ur is not None:
            self.twin.set_effort_command(self.ur.effort(self.twin))
        record = self.twin.advance(count)
        measured = self.ur.measured(record.measured)  # the effort as the driver publishes it
        self.counters['samples'] += count
        return self.schedule.stamps(first, count), {topic: {field: measured[name] for field, name in fields.items()}
                                                     for topic, fields in self.topics.items()}

    def follow(self, trajectory, effort, stamp_ns: int) -> None:
        """Follow ``trajectory`` (with its feedforward ``effort`` or None) from its stamp [ns] (0: now); None
        cancels: the reference holds where it is. A late one starts late (counted, reported); InputError for a
        trajectory the twin refuses."""
        twin = self.twin
        if trajectory is None:
            twin.reference.hold(twin.reference.sample(twin.time)[0], twin.time)
            return
        start = twin.time if stamp_ns == 0 else self.schedule.twin_time(stamp_ns)
        twin.follow(trajectory, start_time=start, effort=effort)
        self.schedule.arrived(start, twin.time)
        self.counters['trajectories'] += 1

    def command(self, kind: str, values: np.ndarray) -> None:
        """A forward command controller's command (:data:`COMMANDS` ``kind``): effort [N·m] added and held (as the
        robot applies it: UR's direct torque adds its own terms), position [rad] held, velocity [rad/s] for the
        twin's velocity horizon."""
        method = next(method for name, method in COMMANDS.values() if name == kind)
        if kind == 'effort_commands':
            values = self.ur.effort(self.twin, values)
        getattr(self.twin, method)(values)
        self.counters[kind] += 1

    def apply_contacts(self, text: str, now_ns: int) -> int:
        """Contacts from YAML ``text`` (one load or a list, :class:`dynid.sim.contacts.ContactLoad`'s keys, start_s
        counted from ``now_ns``; 0 by default: now) put on the twin; returns how many. InputError for a bad one
        (none of them is applied then)."""
        import dataclasses

        import yaml

        from dynid.sim.contacts import loads_from_list

        try:
            document = yaml.safe_load(text)
        except yaml.YAMLError as error:
            raise InputError(f'contact: not YAML ({str(error).splitlines()[0]})') from None
        entries = document if isinstance(document, list) else [document]
        now = max(self.schedule.twin_time(now_ns), self.twin.time)
        loads = loads_from_list([{'start_s': 0.0, **entry} if isinstance(entry, dict) else entry
                                 for entry in entries], 'contact')
        loads = [dataclasses.replace(load, start_s=now + load.start_s) for load in loads]
        for load in loads:
            self.twin.contacts.check(load)  # every link before any load is applied
        for load in loads:
            self.twin.apply_contact(load)
        self.counters['contacts'] += len(loads)
        return len(loads)

    def rejected(self, kind: str) -> str:
        """Count a refused command of ``kind`` ('trajectories' or a :data:`COMMANDS` counter); what to call it."""
        self.counters[f'rejected_{kind}'] += 1
        return 'trajectory' if kind == 'trajectories' else kind[:-1].replace('_', ' ')

    def start(self, now_ns: int) -> None:
        """The clock starts at ``now_ns``: the stamp of twin time 0 (once the caller is set up)."""
        self.schedule.restart(now_ns)

    def reset(self, now_ns: int) -> None:
        """Back to the initial position, the clock restarted at ``now_ns``."""
        self.twin.reset(self.initial_q)
        self.schedule.restart(now_ns)

    def health(self, now_ns: int) -> tuple[str, str, dict]:
        """(level, message, values) of the real-time run (:meth:`dynid.sim.realtime.RealTimeSchedule.health`)."""
        return self.schedule.health(now_ns, self.twin.samples, self.counters, LATE_S)
