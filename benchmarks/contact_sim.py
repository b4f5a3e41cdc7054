"""The simulated part of ``bench_contact.py``: the plant identified from its optimized excitation, contact-free runs
and runs with contacts on the twin and on the MuJoCo plant, the truth beside each.

- **Identification.** ``dynid simulate`` of the built-in optimized UR5e excitation (60 s, 1 kHz, 25 °C) on the
  plant (``--engine twin`` or ``mujoco``), then ``dynid identify`` with the defaults: the contact runs are never
  identified on.
- **Runs.** A run is a plan of segments: rests (the arm holding where it is) and motions (a random rest-to-rest
  Fourier motion of 5 harmonics about the home, 10 s, at 15–50 % of the velocity limits, approached from where the
  arm is), with a payload (none, 1 or 2.5 kg off the flange axis: declared to the observer) and a starting
  temperature (20–30 °C; the twin warms as it works and reports it).
- **Contacts** (:func:`random_contact`): a force of 5–60 N in a random direction at a random point of a random
  link (a quarter on the flange, within 5 cm of it: the tool), a step, ramp or half-sine of 50–500 ms, at a random
  time of a motion or of a rest (at least 1 s into the rest and 1.5 s before its end); one contact per 2 s at most.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from benchmarks.public_datasets import dynid
from dynid.excite.fourier import FourierDesign, default_limits, random_design
from dynid.excite.home import home_configuration
from dynid.excite.trajectory import approach_trajectory, builtin_excitation_path
from dynid.model.inertial import Payload
from dynid.sim.contacts import FLANGE, SHAPES, ContactLoad
from dynid.sim.mujoco_twin import make_twin
from dynid.sim.parameters import PlantParameters

RATE_HZ = 1000.0
EXCITATION_S = 60.0
PAYLOADS = (None, Payload(1.0, (0.05, 0.0, 0.05)), Payload(2.5, (0.0, 0.06, 0.08)))
SEGMENT_S = 10.0


def identified_plant(engine: str, folder: Path, torque: str | None = None) -> Path:
    """The result of ``dynid identify`` on the plant's optimized excitation (module docstring), made once; ``torque``:
    the torque source it reads (``joint_torque``: the twin's link-side torque sensors) instead of the default's."""
    result = folder / f'{engine}{"_" + torque if torque else ""}_result.yaml'
    if not result.is_file():
        bag = folder / f'{engine}_excitation'
        if not bag.exists():
            dynid(['simulate', '--robot', 'ur5e', '--engine', engine, '--trajectory',
                   str(builtin_excitation_path('ur5e')), '--duration', str(EXCITATION_S), '--rate', str(RATE_HZ),
                   '-o', str(bag), '--quiet'])
        dynid(['identify', str(bag), '--robot', 'ur5e', '-o', str(result), '--quiet',
               *(['--torque', torque] if torque else [])])
    return result


@dataclass
class Run:
    """A plan and what the simulation gave: samples' times (N,), the measured and true signals, which samples the
    arm was resting, the contacts put on it, its payload and engine."""

    name: str
    engine: str
    payload: Payload | None
    temperature_c: float
    t: np.ndarray = field(default_factory=lambda: np.zeros(0))
    measured: dict = field(default_factory=dict)
    truth: dict = field(default_factory=dict)
    resting: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool))
    loads: list[ContactLoad] = field(default_factory=list)
    flange_wrench: np.ndarray | None = None
    flange_rotation: np.ndarray | None = None
    reference: dict = field(default_factory=dict)
    #: (n,) [N·m] the torque up to which the plant's static friction holds a rigid joint (MuJoCo's ``frictionloss``, a
    #: dry-friction constraint); None on the twin, whose elastic joints move the link under a push through the gear's
    #: spring whatever the rotor's friction (E-GMS, with pre-sliding) holds
    static_friction: np.ndarray | None = None

    @property
    def hours(self) -> float:
        return float(self.t[-1] - self.t[0]) / 3600.0

    def signals(self) -> dict:
        """The observer's inputs (:meth:`dynid.contact.monitor.ContactMonitor.run`'s keywords)."""
        m = self.measured
        return {'t': self.t, 'q': m['q'], 'dq': m['dq'], 'current': m['current'], 'tau': m['joint_torque'],
                'dtheta': m['dtheta'], 'temperature': m['temperature']}


def _motion(robot, rng: np.random.Generator):
    home = home_configuration(robot)
    design = FourierDesign(robot.joint_names, 5, SEGMENT_S)
    limits = default_limits(robot, home, position_range=0.8, velocity_fraction=float(rng.uniform(0.15, 0.5)),
                            acceleration=float(rng.uniform(1.0, 2.5)))
    dense = np.linspace(0.0, SEGMENT_S, 2000, endpoint=False)
    trajectory = design.trajectory(random_design(design, home, limits, rng, dense))
    return dataclasses.replace(trajectory, duration_s=SEGMENT_S)


def random_contact(robot, rng: np.random.Generator, start_s: float) -> ContactLoad:
    """One random contact starting at ``start_s`` (module docstring)."""
    if rng.uniform() < 0.25:
        link, point = FLANGE, rng.uniform(-0.05, 0.05, 3)
    else:
        links = [f'{name}_link' for name in robot.joint_names] if robot.builtin else None
        link = str(rng.choice(links))
        point = rng.uniform(-0.05, 0.05, 3) + np.array([rng.uniform(-0.3, 0.3), 0.0, 0.0])
    direction = rng.normal(size=3)
    force = rng.uniform(5.0, 60.0) * direction / np.linalg.norm(direction)
    return ContactLoad(link, tuple(point), tuple(force), start_s, float(rng.uniform(0.05, 0.5)),
                       str(rng.choice(SHAPES)))


def plan_run(robot, seed: int, segments: int, contacts: bool, rest_range=(1.5, 6.0)) -> list:
    """A plan of segments [(kind 'rest' or 'move', seconds or trajectory, contacts as (offset [s] into the segment,
    load))], rests and motions alternating; a motion's offsets count from the end of its approach (2 s or more)."""
    rng = np.random.default_rng(seed)
    plan = []
    for _ in range(segments):
        rest = float(rng.uniform(3.5, 6.0)) if contacts else float(rng.uniform(*rest_range))
        loads = []
        if contacts:
            load = random_contact(robot, rng, 0.0)
            loads.append((float(rng.uniform(1.0, rest - 1.5 - load.duration_s)), load))
        plan.append(('rest', rest, loads))
        motion, loads = _motion(robot, rng), []
        if contacts:
            for offset in np.arange(0.5, SEGMENT_S - 1.0, 2.5):
                loads.append((float(offset + rng.uniform(0.0, 0.5)), random_contact(robot, rng, 0.0)))
        plan.append(('move', motion, loads))
    plan.append(('rest', 2.0, []))
    return plan


def simulate_run(robot, engine: str, name: str, seed: int, plan: list, payload, temperature_c: float,
                 prepare=None) -> Run:
    """The plan on the plant (``engine``) with its contacts; ``prepare(twin)`` before it starts (an obstacle)."""
    params = PlantParameters.of_twin(robot, payload, 0.0, seed, temperature_c)
    twin = make_twin(params, engine, rate_hz=RATE_HZ, seed=seed)
    if prepare is not None:
        prepare(twin)
    records, resting = [], []

    def place(loads):
        for offset, load in loads:
            twin.apply_contact(dataclasses.replace(load, start_s=twin.time + offset))

    for kind, value, loads in plan:
        if kind == 'rest':
            place(loads)
            record = twin.run(value)
            resting.append(np.ones(record.time.size, dtype=bool))
        else:
            start = value.evaluate(np.array([0.0]))[0][0]
            approach = approach_trajectory(robot.joint_names, twin.reference.sample(twin.time)[0], start)
            twin.follow(approach)
            first = twin.run(max(approach.duration_s, 2.0))
            twin.follow(value)
            place(loads)
            record = type(first).concatenate([first, twin.run(value.duration_s)])
            resting.append(np.zeros(record.time.size, dtype=bool))
        records.append(record)
    record = type(records[0]).concatenate(records)
    run = Run(name, engine, payload, temperature_c, record.time, record.measured, record.truth,
              np.concatenate(resting), list(twin.contacts.loads), reference=record.reference,
              static_friction=twin.frictionloss.copy() if engine == 'mujoco' else None)
    run.flange_wrench = twin.contacts.flange_wrench(record.time, record.truth['q'])
    run.flange_rotation = flange_rotations(robot, run.t, record.truth['q'], run.loads)
    return run


def without_contact(robot, engine: str, name: str, seed: int, plan: list, payload, temperature_c: float,
                    index: int) -> Run:
    """The run of ``plan`` again with its contact ``index`` (in the order they are placed, as ``Run.loads``) and every
    later one at zero force, the segments after the one holding it left out: the same plant, sensor noise and
    commands, the contacts before it acting as they did (the counterfactual of
    :func:`contact_scoring.information_onset_ms`)."""
    placed, cut = 0, []
    for kind, value, loads in plan:
        kept = [(offset, load if placed + j < index else dataclasses.replace(load, force=(0.0, 0.0, 0.0),
                                                                                moment=(0.0, 0.0, 0.0)))
                for j, (offset, load) in enumerate(loads)]
        cut.append((kind, value, kept))
        placed += len(loads)
        if placed > index:
            break
    return simulate_run(robot, engine, f'{name} without contact {index}', seed, cut, payload, temperature_c)


def sensor_noise(robot) -> dict:
    """The plants' sensor noise (both engines share the twin's sensors): the σ of the motor current [A] and the link
    velocity [rad/s], the link encoder's step [rad]."""
    sensors = PlantParameters.of_twin(robot, None, 0.0, 0, 25.0).sensors
    return {'current': sensors.current_noise, 'dq': sensors.velocity_noise, 'q': sensors.link_resolution}


def flange_rotations(robot, t: np.ndarray, q: np.ndarray, loads, after_s: float = 0.5) -> np.ndarray:
    """(N, 3, 3): the flange frame's orientation in the world at the true positions ``q``, on the samples from each
    flange load's start to ``after_s`` after its end (NaN elsewhere): what turns a flange-frame wrench into the world
    frame, where a contact's force does not turn with the arm."""
    import pinocchio as pin

    out = np.full((len(t), 3, 3), np.nan)
    model = robot.pinocchio_model
    data = model.createData()
    frame = model.getFrameId(robot.flange)
    for load in loads:
        if load.link != FLANGE:
            continue
        for k in range(int(np.searchsorted(t, load.start_s)), int(np.searchsorted(t, load.end_s + after_s))):
            if np.isnan(out[k, 0, 0]):
                pin.framesForwardKinematics(model, data, robot.configuration_vector(q[k]))
                out[k] = data.oMf[frame].rotation
    return out


def true_model_result(robot, torque_source: str = 'current'):
    """A result holding the plant's own links and drives, no friction (the benchmark gives the true friction torque
    of the run instead): the 'true model' of the levels L_j (contact_scoring)."""
    from dynid.identify.result.result import IdentificationResult

    base = robot.base
    names = list(base.names)
    return IdentificationResult(
        robot=robot.name, joint_names=tuple(robot.joint_names), method='truth',
        model={'friction': 'none', 'friction_symbols': [], 'temperature': False, 'torque_source': torque_source,
               'rotor_compensation': torque_source == 'current', 'rotor_inertia_identified': False,
               'friction_velocity': 'rotor'},
        parameter_names=names, values=np.array(base.from_standard(robot.standard_parameters)),
        std=np.zeros(len(names)), base_expressions=dict(zip(base.names, base.expressions, strict=True)))


def tool_path(robot, trajectory, times: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The flange origin's world positions (N, 3) [m] and velocities (N, 3) [m/s] along ``trajectory``."""
    import pinocchio as pin

    model = robot.pinocchio_model
    data = model.createData()
    frame = model.getFrameId(robot.flange)
    q = trajectory.evaluate(times)[0]
    points = np.array([pin.framesForwardKinematics(model, data, robot.configuration_vector(qk))
                       or data.oMf[frame].translation.copy() for qk in q])
    return points, np.gradient(points, times, axis=0)


def obstacle_ahead(robot, trajectory, hit_s: float, half_m: float = 0.04):
    """(centre, half sizes) of a box the tool meets at ``hit_s`` of ``trajectory`` [s]: just ahead of the tool sphere
    along its path (its face at the sphere's surface then), so that the rest of the motion drives into it."""
    from dynid.sim.mujoco_twin import TOOL_RADIUS_M

    times = np.array([hit_s - 0.01, hit_s, hit_s + 0.01])
    points, velocity = tool_path(robot, trajectory, times)
    direction = velocity[1] / max(np.linalg.norm(velocity[1]), 1e-9)
    return points[1] + direction * (half_m + TOOL_RADIUS_M), np.full(3, half_m)
