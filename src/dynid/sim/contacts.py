"""Contacts put on the simulated robot: a wrench at a point of a link for a time, the truth of what the arm feels.

One :class:`ContactLoad` is a force F [N] (and a moment m [N·m]), both in the world frame, at a point p [m] given in
the frame of a link (a URDF link of the robot, or ``flange``: the robot's flange frame), from ``start_s`` for
``duration_s``, scaled by its shape over time (u = (t − start_s)/duration_s in [0, 1)):

    step        1                     ramp        u (rises to the peak, then ends)
    half_sine   sin(π·u)

The joints feel τ_ext = J_p(q)ᵀ·F + J_ω(q)ᵀ·m (J_p the Jacobian of the point, J_ω the link's angular one; both
of pinocchio at the link's pose), which the twin adds to the links' equation (M·q̈ + C·q̇ + g = τ_j + τ_ext) at
every internal step, and the MuJoCo plant applies as the body's ``xfrc_applied`` (the same wrench moved to the body's
centre of mass). The truth of a run is τ_ext at each sample (the recording's ``external_torque``) and, for the loads
on the flange, their wrench in the flange frame about its origin (what a flange force-torque sensor would read,
:meth:`ContactSchedule.flange_wrench`).

A file or a list of mappings gives the loads (``dynid simulate --contacts FILE``, sim_node's ``~/apply_contact``)::

    contacts:
      - {link: wrist_3_link, point: [0, 0, 0.05], force: [0, 0, -20], start_s: 2.0, duration_s: 0.2, shape: half_sine}
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pinocchio as pin

from dynid.checks import finite
from dynid.errors import InputError, checked_choice
from dynid.model.robot import RobotModel, frame_index

SHAPES = ('step', 'ramp', 'half_sine')
#: The keys of one load in a file or a service request.
LOAD_KEYS = ('link', 'point', 'force', 'moment', 'start_s', 'duration_s', 'shape')
#: The name of the robot's flange frame as a contact's link.
FLANGE = 'flange'
#: the setting a load's error names (``{contacts}``: the command line's --contacts, sim_node's service)
FIELDS = ('contacts',)


def _vector(value, name: str) -> tuple[float, float, float]:
    try:
        array = np.asarray(value, dtype=float).reshape(-1)
    except (TypeError, ValueError):
        raise InputError(f'contact {name} must be three numbers, got {value!r}', fields=FIELDS) from None
    if array.shape != (3,) or not np.all(np.isfinite(array)):
        raise InputError(f'contact {name} must be three finite numbers, got {value!r}', fields=FIELDS)
    return tuple(float(v) for v in array)


@dataclass(frozen=True)
class ContactLoad:
    """A wrench at a point of a link for a time (module docstring). Units: point [m] in the link frame, force [N]
    and moment [N·m] in the world frame (their peaks), start_s and duration_s [s]."""

    link: str
    point: tuple[float, float, float]
    force: tuple[float, float, float]
    start_s: float
    duration_s: float
    shape: str = 'step'
    moment: tuple[float, float, float] = (0.0, 0.0, 0.0)

    def __post_init__(self) -> None:
        if not isinstance(self.link, str) or not self.link:
            raise InputError(f'contact link must be a link name, got {self.link!r}', fields=FIELDS)
        for name in ('point', 'force', 'moment'):
            object.__setattr__(self, name, _vector(getattr(self, name), name))
        start = finite(self.start_s, 'contact start_s')
        duration = finite(self.duration_s, 'contact duration_s')
        if start < 0 or duration <= 0:
            raise InputError(f'contact start_s must be >= 0 s and duration_s > 0 s, got {start:g} and {duration:g}',
                             fields=FIELDS)
        object.__setattr__(self, 'start_s', start)
        object.__setattr__(self, 'duration_s', duration)
        checked_choice('contact shape', self.shape, SHAPES)

    @property
    def end_s(self) -> float:
        return self.start_s + self.duration_s

    def scale(self, t: np.ndarray) -> np.ndarray:
        """The shape's factor in [0, 1] at times ``t`` [s] (0 outside the load's time)."""
        t = np.asarray(t, dtype=float)
        u = (t - self.start_s) / self.duration_s
        inside = (t >= self.start_s) & (t < self.end_s)
        if self.shape == 'step':
            value = np.ones_like(u)
        elif self.shape == 'ramp':
            value = u
        else:
            value = np.sin(np.pi * np.clip(u, 0.0, 1.0))
        return np.where(inside, value, 0.0)

    def to_dict(self) -> dict:
        return {'link': self.link, 'point': list(self.point), 'force': list(self.force), 'moment': list(self.moment),
                'start_s': self.start_s, 'duration_s': self.duration_s, 'shape': self.shape}

    @classmethod
    def from_dict(cls, entry: Mapping, where: str = 'contact') -> ContactLoad:
        if not isinstance(entry, Mapping):
            raise InputError(f'{where} must be a mapping of {", ".join(LOAD_KEYS)}, got {entry!r}', fields=FIELDS)
        unknown = sorted(set(entry) - set(LOAD_KEYS))
        missing = [key for key in ('link', 'force', 'start_s', 'duration_s') if key not in entry]
        if unknown or missing:
            raise InputError(f'{where}: ' + '; '.join(
                ([f'unknown keys {unknown} (known: {", ".join(LOAD_KEYS)})'] if unknown else [])
                + ([f'missing {", ".join(missing)}'] if missing else [])), fields=FIELDS)
        return cls(entry['link'], entry.get('point', (0.0, 0.0, 0.0)), entry['force'], entry['start_s'],
                   entry['duration_s'], entry.get('shape', 'step'), entry.get('moment', (0.0, 0.0, 0.0)))


def loads_from_list(entries, where: str = 'contacts') -> list[ContactLoad]:
    """Loads of a file's ``contacts`` list (None: none); InputError naming the entry."""
    if entries is None:
        return []
    if not isinstance(entries, Sequence) or isinstance(entries, str | bytes):
        raise InputError(f'{where} must be a list of contacts', fields=FIELDS)
    return [ContactLoad.from_dict(entry, f'{where}[{k}]') for k, entry in enumerate(entries)]


@dataclass
class _Placed:
    load: ContactLoad
    frame: int
    placement: pin.SE3  # of the point's frame in the link's frame (the flange placement for 'flange')
    on_flange: bool


@dataclass
class ContactSchedule:
    """The loads of a run on ``robot`` (module docstring): their joint torques and flange wrenches over time.

    Raises InputError naming a link the robot does not have (and listing its links).
    """

    robot: RobotModel
    loads: list[ContactLoad] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._model = pin.Model(self.robot.pinocchio_model)
        self._data = self._model.createData()
        self._flange = frame_index(self._model, self.robot.flange)
        self._placed = [self._place(load) for load in self.loads]

    def _place(self, load: ContactLoad) -> _Placed:
        model = self._model
        if load.link == FLANGE or load.link == self.robot.flange:
            if self._flange is not None:
                return _Placed(load, self._flange, pin.SE3.Identity(), True)
            frame = model.getFrameId(model.names[model.njoints - 1])
            return _Placed(load, frame, self.robot.flange_placement, True)
        links = [f.name for f in model.frames if f.type == pin.FrameType.BODY]
        if load.link not in links:
            raise InputError(f'contact link {load.link!r} is not a link of {self.robot.name!r} (links: '
                             f'{", ".join(links)}, or {FLANGE})', fields=FIELDS)
        return _Placed(load, model.getFrameId(load.link, pin.FrameType.BODY), pin.SE3.Identity(), False)

    def check(self, load: ContactLoad) -> None:
        """InputError where ``load``'s link is not one of the robot's (nothing is scheduled)."""
        self._place(load)

    def add(self, load: ContactLoad) -> None:
        """Schedule one more load (checked as the others)."""
        self._placed.append(self._place(load))
        self.loads.append(load)

    def active(self, start_s: float, end_s: float) -> bool:
        """Whether a load acts at some time in [start_s, end_s] [s]."""
        return any(p.load.start_s <= end_s and p.load.end_s > start_s for p in self._placed)

    def world_wrenches(self, t: float, q: np.ndarray) -> list[tuple[int, np.ndarray, np.ndarray, np.ndarray]]:
        """The loads acting at ``t`` [s] with the robot at link position q [rad]: (joint index of the link,
        world point [m], world force [N], world moment [N·m]) each."""
        acting = [(p, float(p.load.scale(t))) for p in self._placed if p.load.start_s <= t < p.load.end_s]
        acting = [(p, s) for p, s in acting if s != 0.0]
        if not acting:
            return []
        model, data = self._model, self._data
        pin.framesForwardKinematics(model, data, self.robot.configuration_vector(q))
        out = []
        for p, s in acting:
            pose = data.oMf[p.frame] * p.placement
            point = pose.act(np.array(p.load.point))
            out.append((model.frames[p.frame].parentJoint, point, s * np.array(p.load.force),
                        s * np.array(p.load.moment)))
        return out

    def torque(self, t: float, q: np.ndarray) -> np.ndarray | None:
        """τ_ext (n,) [N·m] at time ``t`` [s] and link position q [rad]; None when no load acts."""
        wrenches = self.world_wrenches(t, q)
        if not wrenches:
            return None
        model, data = self._model, self._data
        pin.computeJointJacobians(model, data, self.robot.configuration_vector(q))
        tau = np.zeros(self.robot.n)
        for joint, point, force, moment in wrenches:
            jacobian = pin.getJointJacobian(model, data, joint, pin.ReferenceFrame.LOCAL_WORLD_ALIGNED)
            lever = point - data.oMi[joint].translation
            tau += jacobian[:3].T @ force + jacobian[3:].T @ (moment + np.cross(lever, force))
        return tau

    def torques(self, times: np.ndarray, q: np.ndarray) -> np.ndarray:
        """τ_ext (N, n) [N·m] at sample times (N,) [s] and positions (N, n) [rad]."""
        out = np.zeros((len(times), self.robot.n))
        if not self._placed or not self.active(float(times[0]), float(times[-1])):
            return out
        for k, t in enumerate(times):
            tau = self.torque(float(t), q[k])
            if tau is not None:
                out[k] = tau
        return out

    def flange_wrench(self, times: np.ndarray, q: np.ndarray) -> np.ndarray:
        """(N, 6) [N, N·m]: the flange loads' wrench in the flange frame about its origin, (force, moment), at
        sample times and positions; zeros where no flange load acts (loads on other links are not in it)."""
        out = np.zeros((len(times), 6))
        flange = [p for p in self._placed if p.on_flange]
        if not flange:
            return out
        model, data = self._model, self._data
        for k, t in enumerate(times):
            t = float(t)
            acting = [(p, float(p.load.scale(t))) for p in flange if p.load.start_s <= t < p.load.end_s]
            if not acting:
                continue
            pin.framesForwardKinematics(model, data, self.robot.configuration_vector(q[k]))
            for p, s in acting:
                pose = data.oMf[p.frame] * p.placement
                force = pose.rotation.T @ (s * np.array(p.load.force))
                moment = pose.rotation.T @ (s * np.array(p.load.moment))
                out[k, :3] += force
                out[k, 3:] += moment + np.cross(np.array(p.load.point), force)
        return out
