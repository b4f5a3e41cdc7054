"""The high-rate intake of the state topics, shared by every node that consumes them (docs/contract.md).

rclpy spends a few hundred microseconds of executor time on every callback; at 1 kHz on four
topics, one callback per message takes a whole core of this project's 2-core test machine
(``benchmarks/bench_intake.py`` measures it beside the intake). So the executor never sees these
messages: the subscriptions sit in a callback group the executor never waits on, and the intake's
own thread wakes every ``intake_period`` seconds, takes everything waiting on each of them as
serialized bytes (no Python message objects), and hands the batch to the node in one call (a
timer in the executor would cost a turn of the executor per take, about a third more CPU):

- ``on_messages({topic: (stamps_ns, messages)})``: canonical CDR bytes with their stamps (recording);
- ``on_samples(batch)``: a :class:`dynid.io.stream.StateBatch`, the topics joined by stamp, joints
  in model order (estimation, feedforward).

Subscriptions keep ``intake_depth`` messages per topic (1 s at 1 kHz by default; identifier_node 5 s), best
effort (it matches every publisher, and a controller has no use for a sample resent late) or reliable, each node's
default
(``intake_reliability``). Best effort loses samples whenever the node's process is not scheduled for more than
about 0.1 s: the middleware's receive buffer fills before the queue does (Fast DDS's shared-memory port holds
512 messages, 0.13 s of four topics at 1 kHz) and nothing is resent. A reliable subscription to a reliable
publisher (the twin, ros2_control's joint_state_broadcaster) gets the missed samples again from the publisher's
history (sim_node keeps 5 s: a twin catching up after a stall publishes faster than real time), so a recorder
(identifier_node) subscribes reliable by default, with a queue as deep as that history. Losses are counted per
topic from gaps in the stamps (:class:`StampGapCounter`) and reported by :meth:`StateIntake.status` for
``/diagnostics``; malformed messages (not a JointState, no stamp, joints missing) are skipped and counted.

``joint_states_effort`` says what the driver puts into joint_states' effort (:data:`dynid.io.EFFORT_MEANINGS`):
``torque`` (the contract: joint torque [N·m]; Franka, Gazebo, the twin by default), ``current`` (motor current
[A], as the Universal Robots driver does by default), or a drive torque K·i (``current_as_torque``, UR's
gravity-compensated ``gravity_compensated_torque``). With any but ``torque`` the intake does not subscribe
``joint_currents``. With ``current`` it hands joint_states over as the contract's two topics: joint_states with
an empty effort and ``joint_currents`` with its effort (:func:`dynid.io.cdr.split_effort`), so a recording reads
as current (``dynid identify`` applies the drive gains); a drive torque is recorded as received and read by its
meaning. Joined samples carry the current in ``current`` (``tau`` NaN); a drive torque is joined as the current
i = (e + g(q; none)) / K_τ through the robot's drive gains (:func:`dynid.io.gravity_restore.drive_torque_reader`;
live, the payload set on the robot is not known: a gravity-compensated effort is read with none set).

The callbacks run on the intake's thread, not the executor's: state they share with the node's
other callbacks needs a lock.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from rclpy.callback_groups import CallbackGroup
from rclpy.node import Node
from rclpy.qos import HistoryPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState

from dynid.errors import checked_choice
from dynid.io import EFFORT_MEANINGS
from dynid.io.cdr import decode_joint_states, normalize_joint_states, split_effort
from dynid.io.gaps import StampGapCounter
from dynid.io.stream import StateBatch, StateJoiner
from dynid.ros.diagnostics import status
from dynid.ros.parameters import declare_settings, value_or
from dynid.settings import from_values, setting

TOPICS = ('joint_states', 'motor_states', 'joint_currents', 'joint_temperatures')
RELIABILITY = {'best_effort': ReliabilityPolicy.BEST_EFFORT, 'reliable': ReliabilityPolicy.RELIABLE}


class _Polled(CallbackGroup):
    """A callback group whose entities the executor never waits on nor runs: the intake takes their data."""

    def can_execute(self, entity) -> bool:
        return False

    def beginning_execution(self, entity) -> bool:
        return False

    def ending_execution(self, entity) -> None:
        pass


@dataclass(frozen=True)
class IntakeSettings:
    """How the intake subscribes: period [s], queue depth per topic, reliability, publisher rate [Hz]
    (0: read off the stamps), and what joint_states' effort holds (torque or current)."""

    period_s: float = setting(0.02, 'seconds between takes of the waiting state messages', low=0.001, high=0.2,
                              parameter='intake_period', read_only=True)
    depth: int = setting(1000, 'messages kept per state topic between takes', low=10, high=100000,
                         parameter='intake_depth', read_only=True)
    reliability: str = setting('best_effort', 'QoS reliability of the state subscriptions (best_effort matches every '
                                              "publisher; reliable gets what a busy process missed again, from a "
                                              "reliable publisher's history)", choices=tuple(RELIABILITY),
                               parameter='intake_reliability', read_only=True)
    expected_rate_hz: float = setting(0.0, 'publisher rate for loss counting [Hz]; 0: from the stamps', low=0.0,
                                      high=100000.0, parameter='expected_rate', read_only=True)
    joint_states_effort: str = setting('torque', "what joint_states' effort holds: torque (joint torque [N·m]), "
                                                 'current (motor current [A], the UR driver with '
                                                 'use_currents_as_efforts), current_as_torque (K·i [N·m]) or '
                                                 "gravity_compensated_torque (UR's actual_current_as_torque: K·i less "
                                                 'the gravity with the payload set on the robot)',
                                       choices=EFFORT_MEANINGS, read_only=True)

    @staticmethod
    def declare(node: Node, **defaults) -> IntakeSettings:
        """Declare the intake's parameters on ``node`` (``defaults``: {field: value} where the node's default is
        another, e.g. ``period_s``, ``reliability``, ``depth``) and read them (InputError for a refused value)."""
        declare_settings(node, IntakeSettings, defaults=defaults)
        settings = from_values(IntakeSettings, lambda name: value_or(node, name))
        checked_choice('parameter intake_reliability', settings.reliability, RELIABILITY)
        checked_choice('parameter joint_states_effort', settings.joint_states_effort, EFFORT_MEANINGS)
        return settings

    @property
    def effort_is_current(self) -> bool:
        return self.joint_states_effort == 'current'


class StateIntake:
    """Takes the state topics in batches for ``node`` (module docstring).

    Args:
        node: the consuming node.
        settings: see :class:`IntakeSettings` (``IntakeSettings.declare(node)`` reads them from parameters).
        topics: the topics to take (relative names); ``joint_currents`` is left out when joint_states'
            effort is current (it comes from joint_states then).
        on_messages: called per take with {topic: (stamps (M,) [ns], canonical bytes)} of the topics
            that brought messages.
        on_samples: called with the joined :class:`StateBatch` per take; needs ``joint_names``.
        joint_names: model order of the joined arrays.
        required: topics a joined sample must have besides joint_states (see :class:`StateJoiner`).

    :meth:`start` subscribes, :meth:`stop` takes what is left and unsubscribes; both run in the
    node's executor thread (or under the caller's care). Counters reset at each start.
    """

    def __init__(self, node: Node, settings: IntakeSettings, topics=TOPICS,
                 on_messages: Callable[[dict], None] | None = None,
                 on_samples: Callable[[StateBatch], None] | None = None, joint_names=None,
                 required=('motor_states', 'joint_currents'), robot=None) -> None:
        if on_samples is not None and joint_names is None:
            raise ValueError('joined samples need the joint names')
        self.node, self.settings = node, settings
        # joint_currents split off joint_states: the effort is a current, or a drive torque read as one (robot)
        self.from_effort = settings.joint_states_effort != 'torque'
        self.drive_torque = None
        if self.from_effort and not settings.effort_is_current and on_samples is not None:
            from dynid.io.gravity_restore import drive_torque_reader
            self.drive_torque = drive_torque_reader(robot, settings.joint_states_effort)
        self.topics = tuple(t for t in topics if not (self.from_effort and t == 'joint_currents'))
        self.on_messages, self.on_samples = on_messages, on_samples
        self.joint_names = None if joint_names is None else list(joint_names)
        self.required = tuple(t for t in required if t in self.topics or (self.from_effort and t == 'joint_currents'))
        self.group = _Polled()
        self.subscriptions: dict[str, object] = {}
        self.thread: threading.Thread | None = None
        self.stopping = threading.Event()
        self.lock = threading.Lock()  # takes never interleave
        self._reset_counters()

    def _reset_counters(self) -> None:
        period_ns = int(round(1e9 / self.settings.expected_rate_hz)) if self.settings.expected_rate_hz > 0 else 0
        self.counters = {topic: StampGapCounter(period_ns) for topic in self.topics}
        self.malformed = {topic: 0 for topic in self.topics}
        self.joiner = StateJoiner(len(self.joint_names), self.required) if self.on_samples is not None else None
        self.takes = 0
        self._reported_lost = 0

    def require(self, required) -> None:
        """Join samples on the ``required`` topics (besides joint_states) from now on, e.g. without motor_states
        on an arm that has no motor encoders: a new joiner (what waited in the old one is dropped), counters kept."""
        with self.lock:
            self.required = tuple(t for t in required
                                  if t in self.topics or (self.from_effort and t == 'joint_currents'))
            if self.on_samples is not None:
                self.joiner = StateJoiner(len(self.joint_names), self.required)

    def received(self, topic: str) -> int:
        """Messages of ``topic`` received since the start (0 for a topic not taken)."""
        counter = self.counters.get(topic)
        return 0 if counter is None else counter.received

    @property
    def running(self) -> bool:
        return self.thread is not None

    def start(self) -> None:
        """Subscribe and start taking (no-op when running)."""
        if self.running:
            return
        self._reset_counters()
        qos = QoSProfile(depth=self.settings.depth, history=HistoryPolicy.KEEP_LAST,
                         reliability=RELIABILITY[self.settings.reliability])
        self.subscriptions = {topic: self.node.create_subscription(JointState, topic, _never_called, qos, raw=True,
                                                                   callback_group=self.group)
                              for topic in self.topics}
        self.stopping.clear()
        self.thread = threading.Thread(target=self._run, name=f'{self.node.get_name()}_intake', daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while not self.stopping.wait(self.settings.period_s):
            try:
                self.take()
            except Exception as error:  # noqa: BLE001 - a consumer's failure must not end the intake silently
                if not self.node.context.ok():
                    return  # shutting down
                self.node.get_logger().error(f'intake: {error!r}', throttle_duration_sec=5.0)

    def stop(self) -> None:
        """Take what is waiting, then unsubscribe (no-op when stopped)."""
        if not self.running:
            return
        self.stopping.set()
        self.thread.join()
        self.thread = None
        if self.node.context.ok():  # after Ctrl-C nothing can be taken any more
            self.take()
        with self.lock:
            for subscription in self.subscriptions.values():
                self.node.destroy_subscription(subscription)
            self.subscriptions = {}

    def take(self) -> None:
        """Take every waiting message of every topic and hand them over (the thread does this)."""
        with self.lock:
            if not self.subscriptions:
                return
            self.takes += 1
            taken = {}
            for topic, subscription in self.subscriptions.items():
                raws = []
                with subscription.handle:
                    while (message := subscription.handle.take_message(JointState, True)) is not None:
                        raws.append(message[0])
                if not raws:
                    continue
                if self.on_messages is None:  # joined samples only: decode the bytes as they came
                    self._join(topic, raws)
                elif (valid := self._check(topic, raws)) is not None:
                    taken[topic] = valid
            if taken:
                self.on_messages(self._contract(taken))
                if self.joiner is not None:
                    for topic, (_, messages) in taken.items():
                        self._join(topic, messages)
            if self.joiner is not None and (batch := self.joiner.take()) is not None:
                self.on_samples(batch)

    def _check(self, topic: str, raws: list[bytes]):
        """(stamps, canonical messages) of the well-formed, stamped messages, counted; None if none."""
        stamps, messages, malformed = normalize_joint_states(raws)
        stamped = stamps > 0
        self._skipped(topic, malformed + int(stamps.size - stamped.sum()), 'malformed or unstamped')
        if not stamped.all():
            stamps, messages = stamps[stamped], [m for m, keep in zip(messages, stamped, strict=True) if keep]
        if stamps.size == 0:
            return None
        self.counters[topic].update(stamps)
        return stamps, messages

    def _contract(self, taken: dict) -> dict:
        """``taken`` in the contract's topics: joint_states' current split off into joint_currents (a drive torque
        is recorded as received, in joint_states, and read as its meaning says: dynid.identify.job.session)."""
        if not self.settings.effort_is_current or 'joint_states' not in taken:
            return taken
        stamps, messages = taken['joint_states']
        states, currents = split_effort(messages)
        return {**taken, 'joint_states': (stamps, states), 'joint_currents': (stamps, currents)}

    def _join(self, topic: str, messages: list[bytes]) -> None:
        """Decode, count and join; ``messages`` canonical (after :meth:`_check`) or as taken (then counted here)."""
        stamps, values, skipped = decode_joint_states(messages, self.joint_names)
        counted = self.on_messages is not None
        stamped = stamps > 0
        if not counted:
            skipped += int(stamps.size - stamped.sum())
        self._skipped(topic, skipped, 'malformed, unstamped or lacking joints of the model')
        if not stamped.all():
            stamps, values = stamps[stamped], {field: array[stamped] for field, array in values.items()}
        if stamps.size == 0:
            return
        if not counted:
            self.counters[topic].update(stamps)
        if self.from_effort and topic == 'joint_states':
            current = values['effort'] if self.drive_torque is None else self.drive_torque(values['position'],
                                                                                          values['effort'])
            self.joiner.add('joint_currents', stamps, {**values, 'effort': current})
            values = {**values, 'effort': np.full(current.shape, np.nan)}
        self.joiner.add(topic, stamps, values)

    def _skipped(self, topic: str, count: int, what: str) -> None:
        if count:
            self.malformed[topic] += count
            self.node.get_logger().warning(f'{topic}: skipped {count} {what} messages ({self.malformed[topic]} '
                                           'so far)', throttle_duration_sec=5.0)

    @property
    def lost(self) -> int:
        """Samples lost on all topics so far (stamp gaps)."""
        return sum(c.lost for c in self.counters.values())

    def summary(self) -> dict[str, dict[str, int]]:
        """Per topic: received, lost, gaps, longest gap [ms], late, malformed."""
        return {topic: {'received': c.received, 'lost': c.lost, 'gaps': c.gaps,
                        'longest_gap_ms': round(c.longest_gap_ns / 1e6, 3), 'late': c.late,
                        'malformed': self.malformed[topic]} for topic, c in self.counters.items()}

    def status(self, name: str):
        """A DiagnosticStatus of the intake: WARN while samples are being lost, values per topic."""
        lost = self.lost
        new = lost - self._reported_lost
        self._reported_lost = lost
        values = {f'{topic}.{key}': value for topic, row in self.summary().items() for key, value in row.items()}
        if self.joiner is not None:
            values.update(joined=self.joiner.joined, unmatched=self.joiner.unmatched, late=self.joiner.late)
        if not self.running:
            return status(name, 'ok', 'not subscribed', values)
        if new:
            return status(name, 'warn', f'{new} samples lost since the last report ({lost} in all)', values)
        received = self.counters['joint_states'].received if 'joint_states' in self.counters else 0
        return status(name, 'ok', f'{received} samples received, {lost} lost', values)


def _never_called(message) -> None:  # the polled group keeps the executor away
    raise AssertionError('the intake takes its messages itself')
