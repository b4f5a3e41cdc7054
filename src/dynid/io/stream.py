"""The state topics joined by stamp as their messages arrive, in batches (docs/contract.md).

A live node takes what arrived on ``joint_states``, ``motor_states``, ``joint_currents`` and
``joint_temperatures`` since its last look and hands it to :class:`StateJoiner`, which returns
the samples that are now complete as one :class:`StateBatch` (numpy arrays, joints in model order,
stamp order). The rules are those of :func:`dynid.io.bag.read_bag`, so a live node and a recording
of the same messages see the same samples:

- ``joint_states`` is the clock; a sample is complete when every *required* topic has a message with
  its exact stamp. Temperatures (optional) are held from the latest stamp at or before the sample.
- A sample is given up (``unmatched``) when each topic that lacks it has brought a later stamp: a
  publisher sends in stamp order and DDS delivers one writer's messages in order (reliable ones after
  repair), so the partner was lost. A topic that brings nothing holds the samples back until the
  newest stamp is ``horizon_ns`` past them. Waiting on the topics' own progress and not on the newest
  stamp alone keeps samples that come in a burst: after a stall a publisher catches up faster than
  real time, and the topics' bursts may arrive further apart in stamp time than they ever are live.
- Messages older than the last sample handed out are ``late`` and dropped. Both are counted, never
  silently lost.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

import numpy as np

from dynid.io.bag import STATE_TOPICS
from dynid.io.cdr import FIELDS

OPTIONAL_TOPICS = ('joint_temperatures',)


@dataclass
class StateBatch:
    """Joined samples: ``stamps_ns`` (N,) and (N, n) arrays, None where the topic is not joined.

    Units as in :class:`dynid.io.dataset.Dataset`: q [rad], dq [rad/s], tau joint torque [N·m],
    theta/dtheta rotor position/velocity in link units, current [A], temperature [°C]. Values a
    message left empty are NaN.
    """

    stamps_ns: np.ndarray
    q: np.ndarray
    dq: np.ndarray
    tau: np.ndarray
    theta: np.ndarray | None = None
    dtheta: np.ndarray | None = None
    current: np.ndarray | None = None
    temperature: np.ndarray | None = None

    def __len__(self) -> int:
        return int(self.stamps_ns.size)

    @staticmethod
    def concatenate(batches: list[StateBatch]) -> StateBatch:
        """One batch of several (same fields present in each)."""
        values = {}
        for f in fields(StateBatch):
            parts = [getattr(b, f.name) for b in batches]
            values[f.name] = None if any(p is None for p in parts) else np.concatenate(parts)
        return StateBatch(**values)


class _Buffer:
    """Stamps and rows of one topic not yet joined, in stamp order."""

    def __init__(self, n: int) -> None:
        self.stamps = np.zeros(0, dtype=np.int64)
        self.values = {field: np.zeros((0, n)) for field in FIELDS}

    def add(self, stamps: np.ndarray, values: dict[str, np.ndarray]) -> None:
        stamps = np.concatenate([self.stamps, stamps])
        order = np.argsort(stamps, kind='stable')
        self.stamps = stamps[order]
        self.values = {f: np.concatenate([self.values[f], values[f]])[order] for f in FIELDS}

    def keep(self, mask: np.ndarray) -> None:
        self.stamps = self.stamps[mask]
        self.values = {f: v[mask] for f, v in self.values.items()}


class StateJoiner:
    """Joins decoded state-topic batches into complete samples (module docstring).

    Args:
        n_joints: columns of every array (the caller decodes in model order).
        required: topics every sample must have besides ``joint_states``
            (e.g. ('motor_states', 'joint_currents')).
        horizon_ns: how far the newest stamp may run past a sample whose partner's topic has not yet
            brought a later stamp (a topic gone silent) before the sample is given up [ns]; 5 s, the
            history a reliable publisher such as sim_node resends from.

    Counters (plain attributes): ``joined``, ``unmatched`` (joint_states samples given up),
    ``orphans`` (messages of other topics with no joint_states partner), ``late``.
    """

    def __init__(self, n_joints: int, required=('motor_states', 'joint_currents'),
                 horizon_ns: int = 5_000_000_000) -> None:
        unknown = set(required) - set(STATE_TOPICS)
        if unknown or 'joint_states' in required:
            raise ValueError(f'required topics must be among {sorted(set(STATE_TOPICS) - {"joint_states"})}')
        self.n = int(n_joints)
        self.required = tuple(required)
        self.horizon_ns = int(horizon_ns)
        self.buffers = {topic: _Buffer(self.n) for topic in ('joint_states', *self.required)}
        self.temperature_stamps = np.zeros(0, dtype=np.int64)
        self.temperature_values = np.zeros((0, self.n))
        self.last_ns: int | None = None
        self.newest_ns: int | None = None
        self.joined = self.unmatched = self.orphans = self.late = 0

    def add(self, topic: str, stamps_ns: np.ndarray, values: dict[str, np.ndarray]) -> None:
        """Messages of one topic: stamps (M,) [ns] and {'position', 'velocity', 'effort': (M, n)}.

        Topics neither joint_states, required nor joint_temperatures are ignored.
        """
        stamps = np.asarray(stamps_ns, dtype=np.int64).reshape(-1)
        if stamps.size == 0:
            return
        self.newest_ns = int(stamps.max()) if self.newest_ns is None else max(self.newest_ns, int(stamps.max()))
        if self.last_ns is not None:
            fresh = stamps > self.last_ns
            self.late += int(np.count_nonzero(~fresh))
            stamps, values = stamps[fresh], {f: v[fresh] for f, v in values.items()}
        if topic in self.buffers:
            self.buffers[topic].add(stamps, values)
        elif topic == 'joint_temperatures':
            merged = np.concatenate([self.temperature_stamps, stamps])
            order = np.argsort(merged, kind='stable')
            self.temperature_stamps = merged[order]
            self.temperature_values = np.concatenate([self.temperature_values, values['effort']])[order]

    def take(self) -> StateBatch | None:
        """The samples complete now, in stamp order, or None; gives up the samples whose partners will
        not come (module docstring)."""
        main = self.buffers['joint_states']
        if main.stamps.size == 0 or self.newest_ns is None:
            return None
        complete = np.ones(main.stamps.size, dtype=bool)
        settled = np.ones(main.stamps.size, dtype=bool)  # every partner is here or was lost
        positions = {}
        for topic in self.required:
            other = self.buffers[topic]
            index = np.clip(np.searchsorted(other.stamps, main.stamps), 0, max(other.stamps.size - 1, 0))
            found = other.stamps[index] == main.stamps if other.stamps.size else np.zeros(main.stamps.size, bool)
            complete &= found
            # the topic's newest stamp is its buffer's last: what it brought up to the last sample handed out has
            # been let go, and every sample still waiting is newer than that
            passed = main.stamps < other.stamps[-1] if other.stamps.size else np.zeros(main.stamps.size, bool)
            settled &= found | passed
            positions[topic] = index
        expired = settled | (main.stamps < self.newest_ns - self.horizon_ns)
        # Hand out complete samples up to the first incomplete one that may still complete, so that
        # samples leave in stamp order.
        waiting = ~complete & ~expired
        end = int(np.argmax(waiting)) if np.any(waiting) else main.stamps.size
        out = np.flatnonzero(complete[:end])
        self.unmatched += int(np.count_nonzero(~complete[:end]))
        batch = self._batch(out, positions) if out.size else None
        if end:
            self.last_ns = int(main.stamps[end - 1])
            main.keep(np.arange(main.stamps.size) >= end)
            for topic in self.required:
                other = self.buffers[topic]
                stale = other.stamps <= self.last_ns
                self.orphans += int(np.count_nonzero(stale)) - out.size  # the matched ones are not orphans
                other.keep(~stale)
        return batch

    def _batch(self, out: np.ndarray, positions: dict[str, np.ndarray]) -> StateBatch:
        main = self.buffers['joint_states']
        stamps = main.stamps[out]
        signals: dict[str, np.ndarray | None] = {}
        for topic in ('joint_states', *self.required):
            rows = out if topic == 'joint_states' else positions[topic][out]
            for field, target in zip(FIELDS, STATE_TOPICS[topic], strict=True):
                if target is not None:
                    signals[target] = self.buffers[topic].values[field][rows]
        if self.temperature_stamps.size:
            latest = np.clip(np.searchsorted(self.temperature_stamps, stamps, side='right') - 1, 0, None)
            signals['temperature'] = self.temperature_values[latest]
            keep_from = max(int(latest[-1]), 0)  # older temperatures are no longer needed
            self.temperature_stamps = self.temperature_stamps[keep_from:]
            self.temperature_values = self.temperature_values[keep_from:]
        self.joined += int(stamps.size)
        return StateBatch(stamps, **signals)
