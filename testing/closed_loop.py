"""Closed-loop recordings of the simulated plants with their truth, shared by the closed-loop methods' tests and
benchmarks (:func:`closed_loop_recording`, :func:`true_values`, :func:`base_parameter_error`), and the IDIM's rows of a
closed-loop twin recording with instruments from a noiseless run, as the Durbin–Wu–Hausman test takes them
(:func:`closed_loop_rows`, for :func:`dynid.identify.steps.diagnose.least_squares_bias`).

The twin (UR5e, Coulomb + viscous friction on the motors, its joint-torque sensor after the gear: the torque it
measures is the links' rigid-body torque, M(q)q̈ + C(q, q̇)q̇ + g(q), to 1e-3 of its RMS) follows a random 5-harmonic
motion twice with the same reference: once with the sensors given (encoder quantization, velocity and torque noise),
once with noiseless sensors. W is the base regressor of the first run's measured positions, low-passed and
differentiated with the identification's default filters (:func:`dynid.signal.preprocess.filtered_derivatives`),
y its measured joint torque; both pass the default parallel low-pass and decimation
(:class:`dynid.signal.preprocess.Decimator`). The instruments Z are the same regressor of the noiseless run's exact
states (q, q̇, q̈ of the plant), filtered and decimated alike: the IDIM-IV instruments of a simulated closed loop
(Janot, Vandanjon and Gautier 2014), independent of the first run's noise. The truth is the robot's base parameters.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from dynid.excite.fourier import FourierDesign, default_limits, random_design
from dynid.excite.home import home_configuration
from dynid.identify.steps.fit import nominal_rigid
from dynid.io.dataset import Dataset
from dynid.model.robot import RobotModel
from dynid.signal.preprocess import Decimator, FilterSettings, filtered_derivatives
from dynid.sim.controller import KD, KI, KP
from dynid.sim.parameters import PlantParameters, SensorParameters
from dynid.sim.recording import record_to_dataset
from dynid.sim.twin import DigitalTwin

#: Coarse encoders and a noisy torque sensor: a 10-bit link encoder [rad], velocity noise [rad/s], torque noise [N·m].
NOISY = SensorParameters(link_resolution=2 * np.pi / 2**10, velocity_noise=0.01, torque_noise=0.5)
#: The twin's default sensors (20-bit link encoder, 1 mrad/s, 0.2 N·m).
CLEAN = SensorParameters()


@dataclass(frozen=True)
class ClosedLoopRows:
    """w (r, p), y (r,), z (r, p): the rows, torques and instruments; joints (r,): each row's joint; truth (p,): the
    base parameters; recording: the measured run as a Dataset with its controller's reference (what dynid identify
    reads)."""

    w: np.ndarray
    y: np.ndarray
    z: np.ndarray
    joints: np.ndarray
    truth: np.ndarray
    recording: Dataset | None = None


def fourier_motion(robot: RobotModel, seed: int, period_s: float = 10.0):
    """A random feasible 5-harmonic Fourier motion of period ``period_s`` [s] about the robot's home (its design's
    random draw from ``seed``)."""
    home = home_configuration(robot)
    design = FourierDesign(robot.joint_names, 5, period_s)
    return design.trajectory(random_design(design, home, default_limits(robot, home), np.random.default_rng(seed),
                                           np.linspace(0, period_s, 4000, endpoint=False)))


def closed_loop_recording(robot: RobotModel, trajectory, seconds: float, rate_hz: float,
                          link_resolution: float | None = None, seed: int = 0, engine: str = 'twin',
                          controller: str = 'pd') -> tuple[Dataset, dict]:
    """(the recording with the reference its controller followed, the controller's gains {kp, kd, ki[, feedforward:
    model]}) of the plant (``engine``: 'twin' or 'mujoco') following ``trajectory`` for ``seconds`` at ``rate_hz``,
    Coulomb + viscous joint friction, under ``controller``: 'pd', a PD on the motor encoders (no internal
    feedforward, no integrator), or 'model', the plant's default PID with its model-based feedforward of the
    reference; ``link_resolution``: the link encoder's quantum [rad] (default the plant's)."""
    params = PlantParameters.defaults(robot)
    if controller == 'pd':
        params.controller = dataclasses.replace(params.controller, internal_feedforward='none', integral_fraction=0.0)
    params.joints.friction_model = 'coulomb_viscous'
    if link_resolution is not None:
        params.sensors = dataclasses.replace(params.sensors, link_resolution=link_resolution)
    trajectory = dataclasses.replace(trajectory, duration_s=seconds)
    if engine == 'mujoco':
        from dynid.sim.mujoco_twin import MujocoTwin as Plant
    else:
        Plant = DigitalTwin
    twin = Plant(params, rate_hz=rate_hz, seed=seed, initial_q=trajectory.evaluate(np.array([0.0]))[0][0])
    twin.follow(trajectory)
    dataset = record_to_dataset(twin.run(seconds), None, {'simulation': f'seed {seed}'})
    gains = {name: twin.controller.gains[row].tolist() for name, row in (('kp', KP), ('kd', KD), ('ki', KI))}
    return dataset, gains if controller == 'pd' else {**gains, 'feedforward': 'model'}


def true_values(problem, robot: RobotModel) -> np.ndarray:
    """The twin's true parameters in ``problem``'s columns: the robot file's base parameters, the joints' Coulomb and
    viscous friction, no offset."""
    joints = PlantParameters.defaults(robot).joints
    names = problem.parameter_names()
    values = np.zeros(len(names))
    values[:len(problem.rigid_names)] = nominal_rigid(problem)
    for j in range(robot.n):
        values[names.index(f'Fc_{j + 1}')], values[names.index(f'Fv_{j + 1}')] = joints.coulomb[j], joints.viscous1[j]
    return values


def base_parameter_error(robot: RobotModel, names, values) -> float:
    """‖χ̂ − χ*‖/‖χ*‖ over the arm's base parameters among ``names`` (the twin's truth: the robot file's)."""
    truth = dict(zip(robot.base.names, robot.base.from_standard(robot.standard_parameters), strict=True))
    estimate = dict(zip(names, values, strict=True))
    common = [name for name in truth if name in estimate]
    difference = np.array([estimate[name] - truth[name] for name in common])
    return float(np.linalg.norm(difference) / np.linalg.norm([truth[name] for name in common]))


def closed_loop_rows(robot: RobotModel, rate_hz: float, sensors: SensorParameters, seed: int,
                     seconds: float = 20.0) -> ClosedLoopRows:
    """The rows of the twin of ``robot`` at ``rate_hz`` with ``sensors`` (noise seed ``seed``; the motion's seed
    too) and their instruments (module docstring)."""
    trajectory = dataclasses.replace(fourier_motion(robot, seed), duration_s=seconds)
    measured = _run(robot, trajectory, rate_hz, sensors, seed, seconds)
    noiseless = _run(robot, trajectory, rate_hz, SensorParameters.noiseless(), seed, seconds)
    settings = FilterSettings().validated(rate_hz)
    decimate = Decimator(settings, rate_hz, len(measured.time))
    base = robot.base
    q, dq, ddq = filtered_derivatives(measured.measured['q'], settings)
    w = _rows(robot, base, decimate, q, dq, ddq)
    truth = noiseless.truth
    z = _rows(robot, base, decimate, truth['q'], truth['dq'], truth['link_acceleration'])
    y = decimate(measured.measured['joint_torque']).reshape(-1)
    joints = np.tile(np.arange(robot.n), len(decimate.keep))
    return ClosedLoopRows(w, y, z, joints, base.from_standard(robot.standard_parameters),
                          record_to_dataset(measured, None, {'simulation': f'seed {seed}'}))


def _run(robot, trajectory, rate_hz, sensors, seed, seconds):
    params = PlantParameters.defaults(robot)
    params.joints.friction_model = 'coulomb_viscous'
    params.sensors = sensors
    twin = DigitalTwin(params, rate_hz=rate_hz, seed=seed, initial_q=trajectory.evaluate(np.array([0.0]))[0][0])
    twin.follow(trajectory)
    return twin.run(seconds)


def _rows(robot, base, decimate, q, dq, ddq) -> np.ndarray:
    """The base regressor's rows (kept samples × joints, p) of the states, low-passed and decimated."""
    columns = base.columns(robot.regressor(q, dq, ddq))  # (N·n, p), rows sample by sample
    return decimate(columns.reshape(len(q), robot.n, -1)).reshape(-1, columns.shape[1])
