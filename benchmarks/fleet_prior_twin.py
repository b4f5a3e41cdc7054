"""A simulated fleet of UR5e arms for ``bench_fleet_prior.py``: each robot's truth drawn around the population, the
robot file off as from CAD, faults on a few robots, and the motions each robot makes.

Each robot's truth (the twin's plant) is the UR5e of the robot file's public table with

- every link's mass scaled by 1 + δ_m, its inertia about the centre of mass by the same factor, its centre of mass
  moved by δ_c per axis (δ_m: a manufacturer's spread of ±3 %, δ_c: ±3 mm);
- every joint's Coulomb level (the twin's Fc0, Fs and load coefficient together) and viscous friction (Fv1..3)
  each scaled by 1 + δ_f (±30 %);
- every joint's true drive gain scaled by 1 + δ_g (±3 %) from the nominal one the identification is given.

Each band is read as a manufacturer's tolerance: δ normal with σ a third of the band, clipped at the band (a normal
population all of whose members lie within it). The robot file the identification is given is the same for every
robot: the UR5e table off as a CAD model is (:func:`dynid.sim.parameters.cad_like`: masses and inertias 1 ± 20–40 %,
centres of mass moved by 2 cm), so that the robot-file prior leans on a file that is off while the fleet's centre is
not. Faults, on fixed robots: one joint's friction (Coulomb level and viscous) 1.6 times the robot's own; a forgotten
1 kg tool on the flange (the identification is not told of it); one joint's drive gain 1.1 times the robot's own.

Motions (the twin at ``rate_hz``, its sensors' noise, a seed per recording):

- ``excitation``: the shipped optimized UR5e excitation (:func:`dynid.excite.trajectory.builtin_excitation_path`);
- ``production``: repeated pick-and-place-like point-to-point moves: from a pick pose down to the part, up, across
  to the place pose, down, up, back, each move a rest-to-rest quintic of 0.6–0.9 s with 0.2 s dwells, as a cell
  repeats them (a PointTrajectory like a joint_trajectory_controller's);
- ``held_out``: a random 5-harmonic Fourier motion at the full amplitude the kinematic limits allow (seed 7, the
  motion ``bench_generalize`` holds out on), which none of the identifications sees.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from dynid.excite.fourier import FourierDesign, default_limits, random_design
from dynid.excite.trajectory import FourierTrajectory, PointTrajectory, builtin_excitation_path, load_trajectory
from dynid.model import load_robot
from dynid.model.inertial import Payload, parameters_from_com, split_parameters
from dynid.sim.parameters import JointParameters, PlantParameters, cad_like
from dynid.sim.recording import record_to_dataset
from dynid.sim.twin import DigitalTwin, home_configuration

ROBOT = load_robot('ur5e')
#: the manufacturer's bands (module docstring): relative link mass, centre of mass [m], friction, drive gain
MASS_BAND, COM_BAND_M, FRICTION_BAND, GAIN_BAND = 0.03, 0.003, 0.30, 0.03
DRAW_RULE = 'normal, sigma a third of each band, clipped at the band'
FRICTION_FAULT, TOOL_FAULT_KG, GAIN_FAULT = 1.6, 1.0, 1.1
TOOL_COM_M = (0.0, 0.0, 0.06)
#: the known payload of a commissioning run (module docstring): its mass [kg] and centre [m] in the flange frame, off
#: the flange's axis so that it loads the wrists too (on the axis, IDIM-TLS cannot tell wrist_2's and wrist_3's gains)
KNOWN_PAYLOAD_KG, KNOWN_PAYLOAD_COM_M = 3.0, (0.1, 0.08, 0.06)


@dataclass(frozen=True)
class Fault:
    """A fault put on one robot: ``kind`` friction, tool or gain, on ``joint`` (None: the tool, on the flange)."""

    kind: str
    joint: str | None = None

    def text(self) -> str:
        return {'friction': f'friction x{FRICTION_FAULT:g} on {self.joint}', 'gain': f'drive gain x{GAIN_FAULT:g} on '
                f'{self.joint}', 'tool': f'a forgotten {TOOL_FAULT_KG:g} kg tool on the flange'}[self.kind]


#: the faulty robots by their index in the fleet: spread over it, so that a small (--quick) fleet holds them too
FAULTS = {1: Fault('friction', 'elbow_joint'), 3: Fault('tool'), 5: Fault('gain', 'shoulder_lift_joint')}


def robot_file(seed: int = 11):
    """The robot file every robot is identified with: the UR5e table off as from CAD (module docstring)."""
    return cad_like(ROBOT, seed)


def _band(rng: np.random.Generator, band: float, size) -> np.ndarray:
    return np.clip(rng.normal(0.0, band / 3.0, size), -band, band)


def robot_plant(rng: np.random.Generator, fault: Fault | None = None) -> PlantParameters:
    """One robot's truth drawn around the population (module docstring), with ``fault``."""
    standard = ROBOT.standard_parameters.copy()
    for i in range(ROBOT.n):
        mass, h, inertia = split_parameters(standard[10 * i:10 * i + 10])
        com = h / mass
        about_com = inertia - mass * (com @ com * np.eye(3) - np.outer(com, com))
        factor = 1.0 + _band(rng, MASS_BAND, ())
        standard[10 * i:10 * i + 10] = parameters_from_com(mass * factor, com + _band(rng, COM_BAND_M, 3),
                                                           about_com * factor)
    joints = JointParameters.defaults(ROBOT.effort_limits).validated(ROBOT.n)
    coulomb, viscous = 1.0 + _band(rng, FRICTION_BAND, ROBOT.n), 1.0 + _band(rng, FRICTION_BAND, ROBOT.n)
    gains = 1.0 + _band(rng, GAIN_BAND, ROBOT.n)
    payload = None
    if fault is not None and fault.kind == 'friction':
        j = ROBOT.joint_names.index(fault.joint)
        coulomb[j] *= FRICTION_FAULT
        viscous[j] *= FRICTION_FAULT
    elif fault is not None and fault.kind == 'gain':
        gains[ROBOT.joint_names.index(fault.joint)] *= GAIN_FAULT
    elif fault is not None and fault.kind == 'tool':
        payload = Payload(TOOL_FAULT_KG, np.array(TOOL_COM_M), np.diag([1.5e-3, 1.5e-3, 1e-3]))
    joints = dataclasses.replace(joints, coulomb=joints.coulomb * coulomb, static=joints.static * coulomb,
                                 load_coefficient=joints.load_coefficient * coulomb,
                                 viscous1=joints.viscous1 * viscous, viscous2=joints.viscous2 * viscous,
                                 viscous3=joints.viscous3 * viscous)
    nominal = ROBOT.drives
    return PlantParameters(ROBOT.with_parameters(standard), nominal.with_drive_gain(nominal.drive_gain * gains),
                           nominal, joints, payload)


def with_known_payload(plant: PlantParameters) -> PlantParameters:
    """``plant`` carrying the commissioning run's known payload besides whatever it carries already (a forgotten
    tool: the two as one rigid body, their standard parameters about the flange summed)."""
    known = Payload(KNOWN_PAYLOAD_KG, np.array(KNOWN_PAYLOAD_COM_M))
    if plant.payload is None:
        return plant.with_payload(known)
    return plant.with_payload(Payload.from_parameters(known.parameters() + plant.payload.parameters()))


def fleet_plants(robots: int, seed: int) -> list[PlantParameters]:
    """``robots`` robots' truths drawn from ``seed``, the :data:`FAULTS` on theirs."""
    rng = np.random.default_rng(seed)
    return [robot_plant(rng, FAULTS.get(r)) for r in range(robots)]


def excitation():
    return load_trajectory(builtin_excitation_path('ur5e'))


def production(seconds: float):
    """Repeated pick-and-place-like moves (module docstring) for ``seconds``."""
    home = excitation().evaluate(np.array([0.0]))[0][0]
    pick, place = home + np.array([-0.6, 0.0, 0.0, 0.0, 0.2, 0.3]), home + np.array([0.6, 0.0, 0.0, 0.0, -0.2, -0.3])
    down = np.array([0.0, 0.15, -0.25, 0.1, 0.05, 0.0])  # shoulder and elbow lower the tool, the wrist follows
    cycle = [(pick, 0.9), (pick + down, 0.6), (pick, 0.6), (place, 0.9), (place + down, 0.6), (place, 0.6)]
    times, points, t = [0.0], [pick], 0.0
    while t < seconds:
        for pose, move_s in cycle[1:] + cycle[:1]:
            t += move_s
            times.append(t)
            points.append(pose)
            t += 0.2  # dwell
            times.append(t)
            points.append(pose)
    positions = np.array(points)
    zeros = np.zeros_like(positions)
    return PointTrajectory(ROBOT.joint_names, np.array(times), positions, zeros, zeros)


def held_out(seed: int = 7, harmonics: int = 5, period_s: float = 10.0):
    """A random Fourier motion at the full amplitude (module docstring)."""
    home = home_configuration(ROBOT)
    design = FourierDesign(ROBOT.joint_names, harmonics, period_s)
    return design.trajectory(random_design(design, home, default_limits(ROBOT, home), np.random.default_rng(seed),
                                           np.linspace(0.0, period_s, 4000, endpoint=False)))


def record(plant: PlantParameters, trajectory, seconds: float, seed: int, rate_hz: float):
    """``seconds`` of ``plant`` following ``trajectory`` as a Dataset; a tool on the plant is not declared."""
    if isinstance(trajectory, FourierTrajectory):  # periodic: as long as asked
        trajectory = dataclasses.replace(trajectory, duration_s=max(seconds, trajectory.duration_s or 0.0))
    twin = DigitalTwin(plant, rate_hz=rate_hz, seed=seed, initial_q=trajectory.evaluate(np.array([0.0]))[0][0])
    twin.follow(trajectory)
    return record_to_dataset(twin.run(seconds), None, {'simulation': f'seed {seed}'})
