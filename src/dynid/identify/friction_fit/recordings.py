"""Joint friction torque from recordings of the dedicated friction experiments, and which experiment each is.

Madsen 2020, ch.6 eqs. (1)–(2): M(q)·q̈ + C(q, q̇)·q̇ + g(q) = τ_j and B·θ̈ + f + τ_j = K_τ·i, so the friction
of a joint is

    f = K_τ·i − B·θ̈ − τ_j(q, q̇, q̈)        [N·m, link side]

with τ_j the identified rigid-body model (:class:`dynid.identify.result.torque.RigidBodyTorque`, payload included;
the thesis' eq. (19) with τ_j = g(q) is its slow-motion case), K_τ·i the motor torque from the currents and
the drive gains (``torque='current'``) or the joint_states effort where a driver reports the motor torque
there (``torque='effort'``, e.g. UR; the effort of a joint-torque sensor excludes the friction and gives
f ≈ 0), and B·θ̈ the rotor inertia's torque. Positions (link q and, where recorded, the rotor θ) pass a
zero-phase Butterworth low-pass at ``cutoff_hz`` (4th order; default 30 Hz, at most a tenth of the rate)
before central differences give velocities and accelerations, and the motor torque passes the same
filter, so that the three terms of f describe the same band (IDIM's parallel filtering): the current
also carries the joint's vibration after each stick-slip transition, which filtered B·θ̈ and τ_j no
longer cancel, and which biases the E-GMS fit (on the twin, 10 Hz without parallel filtering gives a
backlash 25 % high; 20–45 Hz with it within 3 %). The friction velocity ω and the hysteresis input are
the rotor's (θ̇, θ), or the link's where the recording has no motor encoders (a rigid joint).

Drives: the drive gains the result identified or recorded, on the drives given (a drives file), else those
recorded in its provenance, else the robot's; the rotor inertias the result identified (``Ia_j``) replace the drives'.

Experiments (:data:`EXPERIMENTS`; the names of ``dynid excite --experiment`` plus ``warm_up``):

==================  ==============================================================================
``plateaus``        one joint at several constant velocities, both directions (static map, ch.6 §4.1)
``warm_up``         plateaus while the joint's temperature changes (temperature terms, ch.6 eq. (11))
``gravity_sweep``   one joint at one slow constant velocity through its gravity load (ch.6 eq. (19))
``reciprocating``   one joint at constant |q̈| with frequent reversals (E-GMS hysteresis, ch.6 eq. (21))
==================  ==============================================================================

Which experiment a recording is (:func:`classify_motion`), in this order: given by the user
(``--experiment NAME[:JOINT]``); named by the trajectory file of a twin recording (its ``truth.yaml``
names the trajectory file, whose ``experiment`` section ``dynid excite`` wrote; only the name and the joint
are read, :func:`recorded_experiment`); or found from the motion: exactly one joint moves (range at least
``MOVING_RAD`` and 5 % of the largest); its constant-velocity plateaus (:func:`dynid.identify.friction_fit.fit.
constant_velocity_plateaus` with a 0.02 rad/s² tolerance) at three or more distinct speeds make
``plateaus`` (``warm_up`` when its temperature spans ``min_temperature_span_c`` or more), at one or two
speeds a ``gravity_sweep``; no plateau and four or more reversals make ``reciprocating``. Anything else is
refused with the reason.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from dynid.errors import InputError, checked_choice
from dynid.identify.friction_fit.fit import constant_velocity_plateaus
from dynid.identify.friction_fit.settings import EXPERIMENTS, TORQUE_SOURCES
from dynid.identify.result.result import IdentificationResult, result_drives
from dynid.identify.result.torque import RigidBodyTorque
from dynid.io.dataset import Dataset
from dynid.model.drives import JointDrives
from dynid.model.inertial import Payload
from dynid.model.robot import RobotModel
from dynid.signal.zero_phase import ZeroPhaseLowPass

#: A joint moves in a recording when its filtered position spans at least this [rad] (and 5 % of the largest).
MOVING_RAD = 0.01
#: Acceleration tolerance [rad/s²] of the plateaus that classify a motion (the reciprocating sweep's 0.05 fails it).
PLATEAU_ACCELERATION = 0.02


@dataclass
class FrictionRecording:
    """One recording for the friction identification.

    Attributes:
        dataset: the recording (joints in any order; taken by name).
        name: how messages and the result name it (default its bag, else ``recording <i>``).
        experiment: one of :data:`EXPERIMENTS`, or None to find it (module docstring).
        joint: the moving joint's name, or None to find it.
        payload: the payload during the recording (default ``dataset.payload``), for τ_j.
        found_by: how the experiment was found: ``given``, ``trajectory file`` or ``motion`` (set by
            :func:`joint_signals`).
    """

    dataset: Dataset
    name: str = ''
    experiment: str | None = None
    joint: str | None = None
    payload: Payload | None = None
    found_by: str = 'given'


@dataclass
class JointSignals:
    """The moving joint of one recording, ready for the fits; arrays (N,).

    t [s]; theta: hysteresis input (rotor position in link units, else link position) [rad]; omega: friction
    velocity [rad/s]; friction f [N·m]; load: τ_j [N·m]; temperature [°C] or None.
    """

    recording: str
    experiment: str
    joint: str
    found_by: str
    t: np.ndarray
    theta: np.ndarray
    omega: np.ndarray
    friction: np.ndarray
    load: np.ndarray
    temperature: np.ndarray | None


def friction_drives(result: IdentificationResult, robot: RobotModel,
                    drives: JointDrives | None = None) -> JointDrives | None:
    """Drive gains and rotor inertias to compute the friction with (module docstring); ``drives`` (a drives
    file's) replace those the result recorded and the robot's."""
    drives = result_drives(result, robot, drives)
    names = [f'Ia_{j + 1}' for j in range(robot.n)]
    if drives is not None and all(name in result.parameter_names for name in names):
        # where B·θ̈ was subtracted before, the identified Ia is the excess over the drive data's B
        compensated = result.model.get('rotor_compensation') and result.model.get('rotor_inertia_identified')
        excess = drives.rotor_inertia if compensated else 0.0
        drives = drives.with_rotor_inertia(np.maximum(np.array([result.value(name) for name in names]) + excess, 0.0))
    return drives


def _lowpass(rate_hz: float, cutoff_hz: float, samples: int, name: str) -> ZeroPhaseLowPass:
    """The zero-phase 4th-order Butterworth low-pass of a recording of ``samples`` (module docstring)."""
    lowpass = ZeroPhaseLowPass(4, cutoff_hz, rate_hz)
    if samples <= lowpass.padlen:
        raise InputError(f'{name}: {samples} samples are too few to filter')
    return lowpass


def _derivatives(x: np.ndarray, t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    velocity = np.gradient(x, t, axis=0)
    return velocity, np.gradient(velocity, t, axis=0)


def motor_torque(dataset: Dataset, drives: JointDrives | None, source: str, name: str) -> tuple[np.ndarray, str]:
    """(K_τ·i or the effort (N, n) [N·m], the source used) for ``source`` in :data:`TORQUE_SOURCES`."""
    checked_choice('torque source', source, TORQUE_SOURCES)
    if source in ('auto', 'current') and dataset.current is not None and drives is not None:
        return dataset.current * drives.drive_gain, 'current'
    if source == 'current':
        missing = 'joint_currents' if dataset.current is None else 'drive gains (robot, result or drives file)'
        raise InputError(f'{name}: the motor torque from currents needs {missing}')
    if dataset.tau is None:
        raise InputError(f'{name}: no motor torque: the recording has neither currents with drive gains nor an '
                         f'effort in joint_states')
    return dataset.tau, 'effort'


def recorded_experiment(bag: str | Path) -> tuple[str, str | None] | None:
    """(experiment, joint or None) named by a twin recording's trajectory file, or None (module docstring)."""
    from dynid.files import read_yaml

    bag = Path(bag)
    truth = (bag if bag.is_dir() else bag.parent) / 'truth.yaml'
    if not truth.is_file():
        return None
    document = read_yaml(truth, 'twin truth file')
    source = ((document or {}).get('simulation') or {}).get('trajectory') if isinstance(document, dict) else None
    if not isinstance(source, str):
        return None
    for path in (Path(source), bag.parent / source, bag / source):
        if path.is_file():
            experiment = _experiment_section(path)
            if 'name' in experiment:
                joint = experiment.get('joint')
                return str(experiment['name']), None if joint is None else str(joint)
    return None


def _experiment_section(path: Path) -> dict:
    """The ``experiment`` section of a trajectory file, read without parsing its (long) point lists."""
    import yaml

    lines = path.read_text().splitlines()
    starts = [i for i, line in enumerate(lines) if line.startswith('experiment:')]
    if not starts:
        return {}
    block = [lines[starts[0]]]
    for line in lines[starts[0] + 1:]:
        if line and not line[0].isspace():  # the next top-level key (the section is a mapping: indented)
            break
        block.append(line)
    try:
        section = yaml.safe_load('\n'.join(block)).get('experiment')
    except (yaml.YAMLError, AttributeError):
        return {}
    return section if isinstance(section, dict) else {}


def resolve_joint(robot: RobotModel, joint, name: str) -> int:
    """Index of a joint given by name or index (as ``dynid excite --joint`` takes it)."""
    if joint in robot.joint_names:
        return robot.joint_names.index(joint)
    try:
        index = int(joint)
    except (TypeError, ValueError):
        raise InputError(f'{name}: unknown joint {joint!r}; joints: {list(robot.joint_names)}') from None
    if not 0 <= index < robot.n:
        raise InputError(f'{name}: joint index {index} is outside 0..{robot.n - 1}')
    return index


def _reversals(omega: np.ndarray) -> int:
    fast = omega[np.abs(omega) > 0.2 * np.max(np.abs(omega))]
    return int(np.count_nonzero(np.diff(np.sign(fast)) != 0))


def _distinct(speeds: np.ndarray, tolerance: float = 0.15) -> int:
    values = np.sort(np.abs(speeds))
    if values.size == 0:
        return 0
    return 1 + int(np.count_nonzero(values[1:] > values[:-1] * (1 + tolerance)))


def classify_motion(t: np.ndarray, omega: np.ndarray, temperature: np.ndarray | None, name: str,
                    min_temperature_span_c: float) -> str:
    """The experiment of a single-joint motion (module docstring); InputError when none fits."""
    if np.max(np.abs(omega)) < 1e-3:
        raise InputError(f'{name}: the joint hardly moves (peak {np.max(np.abs(omega)):.2g} rad/s): give '
                         f'{{experiment}} NAME[:JOINT] for another joint', fields=('experiment',))
    speeds, _, _ = constant_velocity_plateaus(t, omega, omega, acceleration_tolerance=PLATEAU_ACCELERATION)
    distinct, reversals = _distinct(speeds), _reversals(omega)
    if distinct >= 3:
        span = 0.0 if temperature is None else float(np.ptp(temperature))
        return 'warm_up' if span >= min_temperature_span_c else 'plateaus'
    if distinct >= 1:
        return 'gravity_sweep'
    if reversals >= 4:
        return 'reciprocating'
    raise InputError(f'{name}: cannot tell which friction experiment this is ({len(speeds)} constant-velocity '
                     f'plateaus, {reversals} reversals): give {{experiment}} NAME[:JOINT]', fields=('experiment',))


class FrictionTorque:
    """Computes :class:`JointSignals` of recordings for one robot and identification (module docstring).

    Args:
        result, robot: the identified rigid-body model and its robot (same joints).
        torque: ``auto`` (currents where recorded with drive gains, else the effort), ``current`` or ``effort``.
        cutoff_hz: low-pass [Hz] of positions and motor torque (at most a tenth of each recording's rate).
        min_temperature_span_c: a plateau run whose temperature spans this [°C] is a warm-up.
        drives: drives (e.g. of a drives file) instead of the result's or the robot's (:func:`friction_drives`).
    """

    def __init__(self, result: IdentificationResult, robot: RobotModel, torque: str = 'auto',
                 cutoff_hz: float = 30.0, min_temperature_span_c: float = 3.0,
                 drives: JointDrives | None = None) -> None:
        if not np.isfinite(cutoff_hz) or cutoff_hz <= 0:
            raise InputError(f'the cut-off must be > 0 Hz, got {cutoff_hz!r}')
        self.result, self.robot = result, robot
        self.drives = friction_drives(result, robot, drives)
        self.torque, self.cutoff_hz = torque, float(cutoff_hz)
        self.min_temperature_span_c = float(min_temperature_span_c)
        self.sources: set[str] = set()
        self._rigid: dict = {}

    def _rigid_body(self, payload: Payload | None) -> RigidBodyTorque:
        key = None if payload is None else (payload.mass, *payload.com, *payload.inertia.ravel())
        if key not in self._rigid:
            self._rigid[key] = RigidBodyTorque(self.result, self.robot, payload)
        return self._rigid[key]

    def __call__(self, recording: FrictionRecording) -> JointSignals:
        robot, name = self.robot, recording.name
        dataset = recording.dataset.reordered(robot.joint_names)
        rate = dataset.rate_hz
        cutoff = min(self.cutoff_hz, 0.1 * rate)
        t = dataset.t
        lowpass = _lowpass(rate, cutoff, len(t), name)
        q = lowpass(dataset.q)
        dq, ddq = _derivatives(q, t)
        rotor = dataset.theta is not None
        theta = lowpass(dataset.theta) if rotor else q
        dtheta, ddtheta = _derivatives(theta, t) if rotor else (dq, ddq)
        drive, source = motor_torque(dataset, self.drives, self.torque, name)
        drive = lowpass(drive)
        self.sources.add(source)
        payload = recording.payload if recording.payload is not None else dataset.payload
        load = self._rigid_body(payload)(q, dq, ddq)
        inertia = self.drives.rotor_inertia if self.drives is not None else np.zeros(robot.n)
        friction = drive - inertia * ddtheta - load

        if recording.joint is not None:
            j = resolve_joint(robot, recording.joint, name)
        else:
            span = np.ptp(q, axis=0)
            moving = np.flatnonzero(span >= max(MOVING_RAD, 0.05 * span.max()))
            if moving.size != 1:
                listed = [robot.joint_names[k] for k in moving] or 'none'
                raise InputError(f'{name}: a friction experiment moves one joint; moving joints: {listed} '
                                 f'(give {{experiment}} NAME:JOINT)', fields=('experiment',))
            j = int(moving[0])
        temperature = None if dataset.temperature is None else dataset.temperature[:, j]
        experiment = recording.experiment
        if experiment is None:
            experiment = classify_motion(t, dtheta[:, j], temperature, name, self.min_temperature_span_c)
            recording.found_by = 'motion'
        elif experiment == 'plateaus' and temperature is not None and \
                np.ptp(temperature) >= self.min_temperature_span_c:
            experiment = 'warm_up'
        if experiment not in EXPERIMENTS:
            raise InputError(f'{name}: {experiment!r} is not a friction experiment; use one of {list(EXPERIMENTS)}')
        return JointSignals(name, experiment, robot.joint_names[j], recording.found_by, t, theta[:, j],
                            dtheta[:, j], friction[:, j], load[:, j], temperature)


def parse_experiment(spec: str) -> tuple[str | None, str | None]:
    """``NAME``, ``NAME:JOINT`` or ``auto`` (as ``--experiment`` takes it) → (name or None, joint or None)."""
    name, _, joint = spec.partition(':')
    name = name.strip()
    if name == 'auto':
        return None, joint.strip() or None
    checked_choice(f'{{experiment}} {spec!r}: the experiment', name, (*EXPERIMENTS, 'auto'), fields=('experiment',))
    return name, joint.strip() or None


def friction_recordings(bags: Sequence[str], robot: RobotModel, experiments: Sequence[str] | None = None,
                        payload_masses: Sequence[float] | None = None,
                        payload_com: Sequence[float] = (0.0, 0.0, 0.0),
                        joint_states_effort: str = 'torque', joint_map=None) -> list[FrictionRecording]:
    """Read bags as :class:`FrictionRecording` (what ``dynid identify-friction`` takes).

    ``experiments``: ``NAME``, ``NAME:JOINT`` or ``auto`` per bag (one for all, or None: auto); auto takes a
    twin recording's trajectory file (:func:`recorded_experiment`), else the motion. ``payload_masses``:
    [kg] per bag (0: none), a point mass at ``payload_com`` [m] in the flange frame. ``joint_states_effort``:
    what joint_states' effort holds, torque or current; ``joint_map``: {model joint: recorded name}
    (:func:`dynid.io.bag.read_bag`).
    """
    from dynid.io.recorder import read_recording

    specs = list(experiments or ['auto'])
    if len(specs) == 1:
        specs = specs * len(bags)
    if len(specs) != len(bags):
        raise InputError(f'{{experiment}}: give one per bag ({len(bags)}) or one for all, got {len(specs)}',
                         fields=('experiment',))
    masses = list(payload_masses) if payload_masses else [0.0] * len(bags)
    if len(masses) != len(bags):
        raise InputError(f'{{payload_mass}} needs one mass per bag ({len(bags)}), got {len(masses)}',
                         fields=('payload_mass',))
    recordings = []
    for bag, spec, mass in zip(bags, specs, masses, strict=True):
        experiment, joint = parse_experiment(spec)
        found_by = 'given'
        if experiment is None:
            recorded = recorded_experiment(bag)
            if recorded is not None:
                experiment, joint = recorded[0], joint or recorded[1]
                found_by = 'trajectory file'
        if mass < 0:
            raise InputError(f'payload mass of {bag} must be >= 0 kg, got {mass}')
        dataset = read_recording(bag, robot.joint_names, None, joint_states_effort, joint_map)
        recordings.append(FrictionRecording(dataset, str(bag), experiment, joint,
                                            Payload(mass, payload_com) if mass > 0 else None, found_by))
    return recordings
