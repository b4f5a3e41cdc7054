"""RobotModel: one serial arm over pinocchio, with batch inverse dynamics and regressors.

Arrays of states are (N, n): N samples, n joints in model order, link side, SI units (rad, rad/s,
rad/s², or m for prismatic joints). Stacked regressors are (N·n, p) with rows grouped sample by
sample: row k·n + j is joint j at sample k, matching ``tau.reshape(-1)`` of an (N, n) torque array.
"""

from __future__ import annotations

import contextlib
import math
import os
import sys
import tempfile
import xml.etree.ElementTree as ElementTree
from collections.abc import Iterator, Mapping, Sequence
from functools import cached_property

import numpy as np
import pinocchio as pin

from dynid.errors import InputError
from dynid.model.base_parameters import DEFAULT_TOLERANCE, BaseParameters, compute_base_parameters
from dynid.model.drives import JointDrives
from dynid.model.inertial import (
    INERTIAL_PARAMETER_NAMES,
    Payload,
    parameter_transform_matrix,
    to_pinocchio_inertia,
)
from dynid.model.joint_terms import check_terms, joint_term_names, joint_term_regressor
from dynid.model.subchain import chain_order, chains_text

#: Number of random samples used to find the base parameters, and the seed of their generator.
BASE_SAMPLES = 120
BASE_SEED = 20200604

_JOINT_TYPES = {
    'JointModelRX': 'revolute', 'JointModelRY': 'revolute', 'JointModelRZ': 'revolute',
    'JointModelRevoluteUnaligned': 'revolute',
    'JointModelPX': 'prismatic', 'JointModelPY': 'prismatic', 'JointModelPZ': 'prismatic',
    'JointModelPrismaticUnaligned': 'prismatic',
    'JointModelRUBX': 'continuous', 'JointModelRUBY': 'continuous', 'JointModelRUBZ': 'continuous',
    'JointModelRevoluteUnboundedUnaligned': 'continuous',
}
UNLIMITED = 1e10  # limits at or beyond this are treated as absent


def frame_index(model: pin.Model, name: str) -> int | None:
    """The index of ``model``'s frame ``name``, or None where it has none. A description may give a joint and a
    link one name (so100.urdf's ``gripper``: the jaw's joint and the wrist's link it turns on), where pinocchio's
    ``getFrameId`` refuses to choose: the joint's frame is taken (the flange defaults to the last joint's), else the
    first in the model's order."""
    named = [i for i, frame in enumerate(model.frames) if frame.name == name]
    joints = [i for i in named if model.frames[i].type == pin.FrameType.JOINT]
    return (joints or named or [None])[0]


def _finite_or_inf(values: np.ndarray, sign: float) -> np.ndarray:
    values = np.asarray(values, dtype=float).copy()
    values[~np.isfinite(values) | (np.abs(values) >= UNLIMITED)] = sign * np.inf
    return values


class RobotModel:
    """A serial robot arm: structure, limits, inverse dynamics, regressors and base parameters.

    Build it with :meth:`from_urdf`, :func:`dynid.model.load_robot` (built-in names, URDF, DH
    files) or directly from a pinocchio model. The model is fixed once built; computations take
    arrays and return arrays.

    Args:
        model: pinocchio model of a fixed-base serial chain of 1-DoF joints.
        name: robot name.
        flange: name of the frame a payload is attached to; default ``tool0``, ``flange`` or the
            last joint's frame, whichever exists first.
        drives: joint drive parameters, if known.
        source: where the model came from (file path, ``built-in``), for provenance.
    """

    def __init__(
        self,
        model: pin.Model,
        name: str | None = None,
        flange: str | None = None,
        drives: JointDrives | None = None,
        source: str = '',
    ) -> None:
        self._model = model
        self._data = model.createData()
        self.name = name or model.name or 'robot'
        self.source = source
        joints = [model.joints[i] for i in range(1, model.njoints)]
        if not joints:
            raise InputError(f'robot {self.name!r} has no movable joints')
        types = []
        for i, joint in enumerate(joints, start=1):
            kind = _JOINT_TYPES.get(joint.shortname())
            if kind is None:
                raise InputError(f'joint {model.names[i]!r} is a {joint.shortname()}; dynid handles '
                                 f'revolute, continuous and prismatic joints only')
            if model.parents[i] != i - 1:
                raise InputError(f'robot {self.name!r} is not a serial chain (joint {model.names[i]!r} '
                                 f'branches): select one chain with {{joints}}; its chains: {chains_text(model)}',
                                 fields=('joints',))
            types.append(kind)
        self.joint_names: tuple[str, ...] = tuple(model.names[i] for i in range(1, model.njoints))
        self.joint_types: tuple[str, ...] = tuple(types)
        self._q_index = np.array([joint.idx_q for joint in joints])
        self._continuous = np.array([t == 'continuous' for t in types])

        lower = np.full(self.n, -np.inf)
        upper = np.full(self.n, np.inf)
        limited = ~self._continuous
        lower[limited] = _finite_or_inf(model.lowerPositionLimit[self._q_index[limited]], -1.0)
        upper[limited] = _finite_or_inf(model.upperPositionLimit[self._q_index[limited]], 1.0)
        unstated = (np.array([t == 'revolute' for t in types]) & (lower == 0.0) & (upper == 0.0))
        lower[unstated], upper[unstated] = -np.inf, np.inf
        #: Revolute joints whose position range reads 0 to 0 (a URDF ``<limit>`` without lower and upper, which
        #: default to 0): taken as unbounded, like continuous joints (:attr:`range_note` says so).
        self.unstated_ranges: tuple[str, ...] = tuple(name for name, u in zip(self.joint_names, unstated, strict=True)
                                                       if u)
        self.lower_limits = lower
        self.upper_limits = upper
        self.velocity_limits = _finite_or_inf(model.velocityLimit, 1.0)
        self.effort_limits = _finite_or_inf(model.effortLimit, 1.0)
        for array in (self.lower_limits, self.upper_limits, self.velocity_limits, self.effort_limits):
            array.setflags(write=False)

        self.flange = self._choose_flange(flange)
        flange = frame_index(model, self.flange)
        self._flange_placement = model.frames[flange].placement if flange is not None else pin.SE3.Identity()
        if drives is not None and drives.joint_names != self.joint_names:
            drives = drives.reordered(self.joint_names)
        self.drives = drives
        #: The URDF (path or XML) this model was read from, and the joints kept; None otherwise.
        self.urdf: str | None = None
        self.urdf_joints: tuple[str, ...] | None = None
        #: The built-in arm this is (a built-in's name, or the one a URDF was recognized as), else None.
        self.builtin: str | None = None
        #: What the reading noticed and the user should hear (e.g. URDF values it ignored), one line each.
        self.notes: tuple[str, ...] = ()
        self._base_cache: dict[tuple, BaseParameters] = {}

    # ----------------------------------------------------------------------------- construction
    @classmethod
    def from_urdf(
        cls,
        urdf: str,
        joints: Sequence[str] | None = None,
        gravity: Sequence[float] | None = None,
        flange: str | None = None,
        name: str | None = None,
        drives: JointDrives | None = None,
    ) -> RobotModel:
        """Model from a URDF file path or XML string (meshes are not needed).

        Args:
            urdf: path of a ``.urdf`` file, or the XML itself (``robot_description``).
            joints: the joints to keep, in chain order; the others are locked at zero (or at the
                middle of their limits when zero is outside them). Default: all movable joints.
            gravity: gravity vector [m/s²] in the base frame; default (0, 0, -9.81).
            flange: payload frame name (see the class docstring).
            name: robot name; default the URDF's.
            drives: joint drive parameters.
        """
        text = urdf.strip()
        is_xml = text.startswith('<')
        source = 'robot_description' if is_xml else urdf
        notes: tuple[str, ...] = ()
        if not is_xml:
            try:
                with open(urdf, encoding='utf-8') as handle:  # closed here, not whenever it is collected
                    file_text = handle.read()
            except (OSError, UnicodeDecodeError) as error:
                raise InputError(f'cannot read URDF {urdf}: {getattr(error, "strerror", None) or error}') from None
            sanitized, notes = without_invalid_dynamics(file_text)
            if notes:
                text, is_xml = sanitized.strip(), True
        else:
            sanitized, notes = without_invalid_dynamics(text)
            text = sanitized.strip()
        with native_stderr() as parser_messages:
            try:
                model = pin.buildModelFromXML(text) if is_xml else pin.buildModelFromUrdf(urdf)
                error = None
            except (RuntimeError, ValueError, OSError) as caught:
                model, error = None, caught
        if model is None:
            reason = ' '.join(str(error).split()) or type(error).__name__
            detail = next((line.strip() for line in parser_messages if line.strip()), '')
            raise InputError(f'cannot read URDF {source}: {reason}'
                             + (f' (urdfdom: {detail})' if detail else ''))
        parser_errors = urdf_parser_errors(parser_messages)
        if parser_errors:
            # urdfdom reports an unreadable element (e.g. <inertia ixx="abc">) and goes on with zeros
            # in its place: a model that differs from the file without a word. Refuse it instead.
            raise InputError(f'cannot read URDF {source} exactly: {"; ".join(parser_errors)} (urdfdom)')
        if joints is not None:
            model = cls._reduce(model, joints, source)
        if gravity is not None:
            model.gravity = pin.Motion(_gravity_vector(gravity), np.zeros(3))
        robot = cls(model, name=name, flange=flange, drives=drives, source=source)
        robot.urdf = text if is_xml else urdf
        robot.urdf_joints = None if joints is None else robot.joint_names
        robot.notes = notes + ((robot.range_note,) if robot.range_note else ())
        return robot

    @staticmethod
    def locked_joints(model: pin.Model, joints: Sequence[str], source: str) -> tuple[list[int], np.ndarray]:
        """(indices of the joints of ``model`` not in ``joints``, the configuration they are locked at)."""
        names = list(model.names)
        unknown = [j for j in joints if j not in names[1:]]
        if unknown:
            raise InputError(f'joints {unknown} are not in {source}; it has {names[1:]}')
        keep = {names.index(j) for j in joints}
        lock = [i for i in range(1, model.njoints) if i not in keep]
        reference = pin.neutral(model)
        low, high = model.lowerPositionLimit, model.upperPositionLimit
        outside = (reference < low) | (reference > high)
        reference[outside] = (0.5 * (low + high))[outside]
        return lock, reference

    @classmethod
    def _reduce(cls, model: pin.Model, joints: Sequence[str], source: str) -> pin.Model:
        """``model`` with only ``joints`` movable, in the order of the chain they lie on
        (:func:`dynid.model.subchain.chain_order`), the others locked."""
        joints = chain_order(model, joints, source)
        lock, reference = cls.locked_joints(model, joints, source)
        return pin.buildReducedModel(model, lock, reference)

    def _choose_flange(self, flange: str | None) -> str:
        model = self._model
        last = model.njoints - 1
        if flange is not None:
            index = frame_index(model, flange)
            if index is None:
                raise InputError(f'flange frame {flange!r} is not in robot {self.name!r}')
            if model.frames[index].parentJoint != last:
                raise InputError(f'flange frame {flange!r} is not attached to the last joint '
                                 f'{self.joint_names[-1]!r}')
            return flange
        for candidate in ('tool0', 'flange'):
            index = frame_index(model, candidate)
            if index is not None and model.frames[index].parentJoint == last:
                return candidate
        return self.joint_names[-1]

    # ------------------------------------------------------------------------------- structure
    @property
    def n(self) -> int:
        """Number of joints."""
        return len(self.joint_names)

    @property
    def range_note(self) -> str | None:
        """One line naming the joints of :attr:`unstated_ranges` and how they are taken, or None."""
        if not self.unstated_ranges:
            return None
        return (f'the robot file gives {", ".join(self.unstated_ranges)} no position range (lower and upper read 0 '
                f'to 0: a URDF <limit> without lower and upper): taken as unbounded, like continuous joints')

    def require_ranges(self, purpose: str, joints: Sequence[str] | None = None) -> None:
        """Refuse (InputError) where ``purpose`` needs the position ranges of ``joints`` (default: all) and the
        robot file gives some of them none (:attr:`unstated_ranges`), naming them and the range read."""
        missing = [name for name in self.unstated_ranges if joints is None or name in joints]
        if missing:
            raise InputError(f'{purpose} keeps within the joints\' position ranges, and the robot file gives '
                             f'{", ".join(missing)} none (lower and upper read 0 to 0: a URDF <limit> without lower '
                             f'and upper): give each its range in the robot file (<limit lower=".." upper=".." [rad]>)')

    @property
    def pinocchio_model(self) -> pin.Model:
        """The underlying pinocchio model (do not modify it)."""
        return self._model

    @property
    def gravity(self) -> np.ndarray:
        """Gravity vector [m/s²] in the base frame."""
        return np.array(self._model.gravity.linear)

    @property
    def flange_placement(self) -> pin.SE3:
        """Placement of the flange frame in the last joint's frame."""
        return pin.SE3(self._flange_placement)

    @cached_property
    def standard_parameter_names(self) -> tuple[str, ...]:
        """Names of the 10·n standard inertial parameters: ``m_1, mx_1, ..., Izz_n``."""
        return tuple(f'{p}_{j + 1}' for j in range(self.n) for p in INERTIAL_PARAMETER_NAMES)

    @property
    def standard_parameters(self) -> np.ndarray:
        """The model's 10·n standard inertial parameters, each body about its joint frame origin."""
        return np.concatenate([self._model.inertias[j].toDynamicParameters()
                               for j in range(1, self._model.njoints)])

    def with_parameters(self, standard: np.ndarray) -> RobotModel:
        """A copy whose link inertias are given by 10·n standard parameters."""
        standard = np.asarray(standard, dtype=float)
        if standard.shape != (10 * self.n,):
            raise InputError(f'expected {10 * self.n} standard parameters, got shape {standard.shape}')
        model = pin.Model(self._model)
        for j in range(self.n):
            model.inertias[j + 1] = to_pinocchio_inertia(standard[10 * j:10 * j + 10])
        return self._copy(model)

    def with_gravity(self, gravity: Sequence[float]) -> RobotModel:
        """A copy with another gravity vector [m/s²] (e.g. a tilted or wall mount)."""
        model = pin.Model(self._model)
        model.gravity = pin.Motion(_gravity_vector(gravity), np.zeros(3))
        return self._copy(model)

    def with_drives(self, drives: JointDrives | None) -> RobotModel:
        """A copy with other drive data (e.g. of a drives file), taken by joint name; None: no drive data."""
        robot = self._copy(self._model)
        robot.drives = None if drives is None else drives.reordered(self.joint_names)
        robot._base_cache = self._base_cache  # the same model: the same base parameters
        return robot

    def renamed(self, names: Mapping[str, str]) -> RobotModel:
        """A copy whose joints have other names ({joint: new name}; the others keep theirs), e.g. those a driver
        publishes; drive data follow. The dynamics are the same."""
        unknown = sorted(set(names) - set(self.joint_names))
        if unknown:
            raise InputError(f'joint_map names {unknown}, which are not joints of robot {self.name!r} '
                             f'({list(self.joint_names)})')
        new = [names.get(name, name) for name in self.joint_names]
        if len(set(new)) != len(new):
            raise InputError(f'joint_map gives two joints one name: {new}')
        model = pin.Model(self._model)
        for i, name in enumerate(new, start=1):
            old = model.names[i]
            model.names[i] = name
            for frame in model.frames:
                if frame.name == old and frame.type == pin.FrameType.JOINT:
                    frame.name = name
        drives = None if self.drives is None else JointDrives(tuple(new), self.drives.gear_ratio,
                                                              self.drives.drive_gain, self.drives.rotor_inertia,
                                                              self.drives.coupling, self.drives.motor_offset)
        robot = RobotModel(model, self.name, self.flange, drives, self.source)
        robot.builtin, robot.notes = self.builtin, self.notes  # no URDF: its joints have the old names
        robot.notes += (f'joints renamed by the joint map: {", ".join(f"{a} -> {b}" for a, b in names.items())}',)
        return robot

    def _copy(self, model: pin.Model) -> RobotModel:
        robot = RobotModel(model, self.name, self.flange, self.drives, self.source)
        robot.urdf, robot.urdf_joints = self.urdf, self.urdf_joints
        robot.builtin, robot.notes = self.builtin, self.notes
        return robot

    # ------------------------------------------------------------------------------ dynamics
    def configuration_vector(self, q: np.ndarray) -> np.ndarray:
        """Pinocchio configuration (nq,) of one sample of joint positions (n,)."""
        if not self._continuous.any():
            return np.asarray(q, dtype=float)
        return self.configuration(q)[0]

    def configuration(self, q: np.ndarray) -> np.ndarray:
        """Pinocchio configuration vectors (N, nq) from joint positions (N, n): cos/sin for continuous."""
        q = np.atleast_2d(q)
        config = np.empty((q.shape[0], self._model.nq))
        config[:, self._q_index] = q
        continuous = self._q_index[self._continuous]
        if continuous.size:
            config[:, continuous] = np.cos(q[:, self._continuous])
            config[:, continuous + 1] = np.sin(q[:, self._continuous])
        return config

    def _states(self, **arrays: np.ndarray) -> list[np.ndarray]:
        """Validate named (N, n) or (n,) arrays; return them as (N, n) float arrays."""
        out = []
        for label, array in arrays.items():
            a = np.asarray(array, dtype=float)
            a = a[None, :] if a.ndim == 1 else a
            if a.ndim != 2 or a.shape[1] != self.n:
                raise InputError(f'{label} must have shape (N, {self.n}) or ({self.n},), '
                                 f'got {np.shape(array)}')
            if not np.all(np.isfinite(a)):
                raise InputError(f'{label} holds NaN or infinite values')
            out.append(a)
        if len({a.shape[0] for a in out}) != 1:
            raise InputError(f'{", ".join(arrays)} have different numbers of samples: '
                             f'{[a.shape[0] for a in out]}')
        return out

    def inverse_dynamics(
        self, q: np.ndarray, dq: np.ndarray, ddq: np.ndarray, payload: Payload | None = None
    ) -> np.ndarray:
        """Joint torques τ = M(q)q̈ + C(q,q̇)q̇ + g(q) [N·m or N], shape (N, n), by pinocchio's RNEA.

        The batch runs inside pinocchio (``rneaInParallel`` on one thread), not in a Python loop.

        Args:
            q, dq, ddq: (N, n) or (n,) link-side positions, velocities and accelerations.
            payload: rigid payload at the flange, if any.
        """
        q, dq, ddq = self._states(q=q, dq=dq, ddq=ddq)
        if payload is None:
            pool = self._rnea_pool
        else:
            pool = pin.ModelPool(self._model_with_payload(payload), 1)
        tau = np.empty((self.n, q.shape[0]), order='F')
        pin.rneaInParallel(1, pool, np.asfortranarray(self.configuration(q).T),
                           np.asfortranarray(dq.T), np.asfortranarray(ddq.T), tau)
        return tau.T

    @cached_property
    def _rnea_pool(self) -> pin.ModelPool:
        return pin.ModelPool(self._model, 1)

    def _model_with_payload(self, payload: Payload) -> pin.Model:
        model = pin.Model(self._model)
        last = model.njoints - 1
        model.inertias[last] = model.inertias[last] + self._flange_placement.act(
            to_pinocchio_inertia(payload.parameters()))
        return model

    def regressor(self, q: np.ndarray, dq: np.ndarray, ddq: np.ndarray) -> np.ndarray:
        """Joint-torque regressor Y with τ = Y·standard_parameters, shape (N·n, 10·n).

        Uses pinocchio's ``computeJointTorqueRegressor`` sample by sample (the per-sample cost is
        in ``benchmarks/bench_model.py``).
        """
        q, dq, ddq = self._states(q=q, dq=dq, ddq=ddq)
        config = self.configuration(q)
        out = np.empty((q.shape[0], self.n, 10 * self.n))
        model, data = self._model, self._data
        for k in range(q.shape[0]):
            out[k] = pin.computeJointTorqueRegressor(model, data, config[k], dq[k], ddq[k])
        return out.reshape(q.shape[0] * self.n, 10 * self.n)

    @cached_property
    def _payload_transform(self) -> np.ndarray:
        placement = self._flange_placement
        return parameter_transform_matrix(placement.rotation, placement.translation)

    def payload_regressor(self, q: np.ndarray, dq: np.ndarray, ddq: np.ndarray,
                          arm_regressor: np.ndarray | None = None) -> np.ndarray:
        """Columns of a flange payload's 10 standard parameters (about the flange origin), (N·n, 10).

        τ_payload = payload_regressor · Payload.parameters(). Pass ``arm_regressor`` (the output of
        :meth:`regressor` for the same states) to avoid computing it again.
        """
        y = self.regressor(q, dq, ddq) if arm_regressor is None else arm_regressor
        return y[:, -10:] @ self._payload_transform

    def payload_link_parameters(self, payload: Payload) -> np.ndarray:
        """The 10 standard parameters a flange payload adds to the last link, about its joint frame.

        Adding them to the last link's parameters gives the torque of :meth:`payload_regressor`:
        payload_regressor · Payload.parameters() = regressor[:, -10:] · payload_link_parameters.
        """
        return self._payload_transform @ payload.parameters()

    def joint_term_regressor(self, terms: Sequence[str], velocity: np.ndarray,
                             acceleration: np.ndarray | None = None) -> np.ndarray:
        """Per-joint drive and friction columns (see :mod:`dynid.model.joint_terms`), (N·n, k·n)."""
        arrays = {'velocity': velocity} if acceleration is None else {
            'velocity': velocity, 'acceleration': acceleration}
        return joint_term_regressor(terms, *self._states(**arrays))

    # ------------------------------------------------------------------------ base parameters
    @property
    def base(self) -> BaseParameters:
        """Base parameters of the arm's rigid-body regressor (no payload, no joint terms)."""
        return self.base_parameters()

    def parameter_names(self, payload: bool = False, joint_terms: Sequence[str] = ()) -> list[str]:
        """Column names of [arm | payload | joint terms]; payload parameters carry the suffix ``_P``."""
        names = list(self.standard_parameter_names)
        if payload:
            names += [f'{p}_P' for p in INERTIAL_PARAMETER_NAMES]
        return names + joint_term_names(joint_terms, self.n)

    def base_parameters(self, payload: bool = False, joint_terms: Sequence[str] = (),
                        tolerance: float = DEFAULT_TOLERANCE) -> BaseParameters:
        """Base parameters of the columns [arm | payload | joint terms].

        Found on :data:`BASE_SAMPLES` random states (seeded, so the result is reproducible) with
        positions uniform within the limits (±π where unlimited), velocities and accelerations
        uniform in ±2 rad/s and ±5 rad/s². The rotor inertia terms act on q̈ here (rigid joints),
        so Ia_j regroups with Izz_j wherever link j spins about its axis at q̇_j alone (joint 1,
        and joint 2 when its axis is perpendicular to joint 1's).
        """
        key = (bool(payload), check_terms(joint_terms), float(tolerance))
        if key not in self._base_cache:
            q, dq, ddq = self.random_states(BASE_SAMPLES)
            w = self.full_regressor(q, dq, ddq, payload=key[0], joint_terms=key[1])
            self._base_cache[key] = compute_base_parameters(
                w, self.parameter_names(key[0], key[1]), key[2])
        return self._base_cache[key]

    def random_states(self, n_samples: int, seed: int = BASE_SEED) -> tuple[np.ndarray, ...]:
        """Random (q, dq, ddq), each (n_samples, n), within position limits (±π where unlimited)."""
        rng = np.random.default_rng(seed)
        low = np.where(np.isfinite(self.lower_limits), self.lower_limits, -np.pi)
        high = np.where(np.isfinite(self.upper_limits), self.upper_limits, np.pi)
        q = rng.uniform(np.maximum(low, -np.pi), np.minimum(high, np.pi), size=(n_samples, self.n))
        dq = rng.uniform(-2.0, 2.0, size=(n_samples, self.n))
        ddq = rng.uniform(-5.0, 5.0, size=(n_samples, self.n))
        return q, dq, ddq

    def full_regressor(self, q, dq, ddq, payload: bool = False, joint_terms: Sequence[str] = (),
                       velocity=None, acceleration=None) -> np.ndarray:
        """Columns [arm | payload | joint terms], as named by :meth:`parameter_names`.

        ``velocity`` and ``acceleration`` feed the joint terms; they default to q̇ and q̈.
        """
        arm = self.regressor(q, dq, ddq)
        blocks = [arm]
        if payload:
            blocks.append(self.payload_regressor(q, dq, ddq, arm_regressor=arm))
        if joint_terms:
            blocks.append(self.joint_term_regressor(
                joint_terms, dq if velocity is None else velocity,
                ddq if acceleration is None else acceleration))
        return np.hstack(blocks)

    def summary(self) -> dict:
        """Plain-data description: joints and limits, gravity, flange, drives, parameter counts."""
        def number(x: float) -> float | None:
            return float(x) if np.isfinite(x) else None

        joints = [
            {'name': name, 'type': kind, 'lower': number(lo), 'upper': number(up),
             'velocity': number(v), 'effort': number(e)}
            for name, kind, lo, up, v, e in zip(self.joint_names, self.joint_types, self.lower_limits,
                                               self.upper_limits, self.velocity_limits,
                                               self.effort_limits, strict=True)
        ]
        return {
            'robot': self.name,
            'source': self.source,
            'joints': joints,
            'gravity': self.gravity.tolist(),
            'flange': self.flange,
            'drives': None if self.drives is None else self.drives.to_dict(),
            'standard_parameters': len(self.standard_parameter_names),
            'base_parameters': self.base.to_dict(),
        }

    def __repr__(self) -> str:
        return f'RobotModel({self.name!r}, joints={list(self.joint_names)})'


@contextlib.contextmanager
def native_stderr() -> Iterator[list[str]]:
    """Capture what C++ libraries (urdfdom) write to file descriptor 2; yields the lines after exit.

    The URDF parser prints its diagnostics there; we fold them into one-line error messages instead.
    """
    lines: list[str] = []
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile(mode='w+b') as capture:
        os.dup2(capture.fileno(), 2)
        try:
            yield lines
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            capture.seek(0)
            lines.extend(capture.read().decode(errors='replace').splitlines())


_DYNAMICS = ('damping', 'friction')


def without_invalid_dynamics(urdf_xml: str) -> tuple[str, tuple[str, ...]]:
    """(the URDF without the ``<dynamics damping friction>`` values that are not numbers >= 0, one note per
    value dropped). dynid reads only a URDF's structure, limits and inertials: a negative friction of a
    third-party file (urdfdom refuses it) must not keep its inertials from loading. The text is returned
    unchanged when every value is valid."""
    if '<dynamics' not in urdf_xml:
        return urdf_xml, ()
    try:
        root = ElementTree.fromstring(urdf_xml.strip())
    except ElementTree.ParseError:
        return urdf_xml, ()  # the URDF parser reports it
    notes = []
    for joint in root.iter('joint'):
        for dynamics in joint.findall('dynamics'):
            for key in _DYNAMICS:
                text = dynamics.get(key)
                if text is None:
                    continue
                try:
                    valid = math.isfinite(float(text)) and float(text) >= 0.0
                except ValueError:
                    valid = False
                if not valid:
                    del dynamics.attrib[key]
                    notes.append(f'joint {joint.get("name")!r}: <dynamics {key}="{text}"> ignored (not a number '
                                 f'>= 0; dynid reads only the URDF\'s kinematics, limits and inertials)')
            if not any(key in dynamics.attrib for key in _DYNAMICS):  # urdfdom refuses an empty <dynamics>
                joint.remove(dynamics)
    if not notes:
        return urdf_xml, ()
    return ElementTree.tostring(root, encoding='unicode'), tuple(notes)


def urdf_parser_errors(messages: Sequence[str]) -> list[str]:
    """The errors among urdfdom's diagnostic lines ("Error:   <text>"), without its source locations."""
    return [line.split(':', 1)[1].strip() for line in messages
            if line.strip().startswith('Error:') and line.split(':', 1)[1].strip()]


def _gravity_vector(gravity: Sequence[float]) -> np.ndarray:
    try:
        g = np.asarray(gravity, dtype=float).reshape(-1)
    except (TypeError, ValueError):
        g = np.full(1, np.nan)
    if g.shape != (3,) or not np.all(np.isfinite(g)):
        raise InputError(f'gravity must be 3 finite numbers [m/s²], got {gravity!r}')
    return g
