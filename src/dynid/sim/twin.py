"""The digital twin: plant, joint controller, sensors and the reference, advanced sample by sample.

:class:`DigitalTwin` produces, at ``rate_hz``, what a robot driver publishes (link and rotor
positions and velocities, joint torque, motor current, temperature) plus the noiseless truth.
Internally each output period is split into steps of at most ``max_step_s`` (controller at every
step). The reference follows joint_trajectory_controller semantics (:mod:`dynid.sim.reference`);
an external effort [N·m] (forward effort controller) is added to the controller output.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from dynid.errors import InputError
from dynid.excite.trajectory import FourierTrajectory, PointTrajectory, Trajectory
from dynid.model.inertial import Payload
from dynid.model.robot import RobotModel
from dynid.sim.controller import JointController
from dynid.sim.parameters import PlantParameters
from dynid.sim.plant import FlexibleJointPlant
from dynid.sim.reference import ReferenceGenerator
from dynid.sim.sensors import Measurement, Sensors, quantize

#: Known comfortable start configurations [rad]; others start at the middle of their limits (or 0).
HOME_CONFIGURATIONS = {
    'ur5e': [0.0, -1.5708, 1.5708, -1.5708, -1.5708, 0.0],
    'ur5': [0.0, -1.5708, 1.5708, -1.5708, -1.5708, 0.0],
    'panda': [0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785],
}

TRUTH_FIELDS = ('q', 'dq', 'theta', 'dtheta', 'joint_torque', 'friction', 'current', 'temperature',
                'rotor_acceleration', 'link_acceleration')
MEASURED_FIELDS = ('q', 'dq', 'joint_torque', 'theta', 'dtheta', 'current', 'temperature')
REFERENCE_FIELDS = ('q', 'dq', 'ddq', 'effort')


def home_configuration(robot: RobotModel) -> np.ndarray:
    """A start configuration inside the limits (module constant, else 0 or the middle of the limits)."""
    if robot.name in HOME_CONFIGURATIONS and len(HOME_CONFIGURATIONS[robot.name]) == robot.n:
        return np.array(HOME_CONFIGURATIONS[robot.name])
    q = np.zeros(robot.n)
    outside = (q < robot.lower_limits) | (q > robot.upper_limits)
    q[outside] = 0.5 * (robot.lower_limits + robot.upper_limits)[outside]
    return q


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
    """A simulated recording: ``time`` (N,) [s] and dicts of (N, n) arrays (module constants name them)."""

    joint_names: tuple[str, ...]
    time: np.ndarray
    measured: dict[str, np.ndarray]
    truth: dict[str, np.ndarray]
    reference: dict[str, np.ndarray]
    rate_hz: float


class DigitalTwin:
    """Simulated robot with controller and sensors (module docstring).

    Args:
        params: the plant (truth), sensors and controller.
        rate_hz: output rate [Hz].
        max_step_s: longest internal integration step [s].
        seed: seed of the sensor noise.
        initial_q: start configuration [rad]; default :func:`home_configuration`.
    """

    def __init__(self, params: PlantParameters, rate_hz: float = 1000.0, max_step_s: float = 1e-3,
                 seed: int = 0, initial_q: np.ndarray | None = None) -> None:
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
        self.plant = FlexibleJointPlant(params)
        self.controller = JointController(params, self.plant)
        self.sensors = Sensors(params.sensors, params.drives.gear_ratio, seed)
        self.reference = ReferenceGenerator(self.robot.joint_names)
        self.effort_command = np.zeros(self.n)
        self.time = 0.0
        self.samples = 0
        self.reset(initial_q)

    def reset(self, q: np.ndarray | None = None) -> None:
        """Start again at rest at q (default home), time 0, holding position, no effort command."""
        q = home_configuration(self.robot) if q is None else np.asarray(q, dtype=float).reshape(-1)
        if q.shape != (self.n,) or not np.all(np.isfinite(q)):
            raise InputError(f'initial position must be {self.n} finite values, got {q.tolist()}')
        outside = (q < self.robot.lower_limits) | (q > self.robot.upper_limits)
        if np.any(outside):
            names = [n for n, o in zip(self.robot.joint_names, outside, strict=True) if o]
            raise InputError(f'initial position is outside the limits of {names}')
        self.time = 0.0
        self.samples = 0
        self.plant.reset(q)
        self.controller.reset(q)
        self.reference.hold(q, 0.0)
        self.effort_command = np.zeros(self.n)
        self._pending_current = self._command(self.reference.sample(0.0))
        self._sample_current = self._pending_current.copy()

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

    def set_payload(self, payload: Payload | None) -> None:
        """Change the payload now; the controller is not told (as with a real payload change)."""
        self.plant.set_payload(payload)
        self.params = self.plant.params

    # ------------------------------------------------------------------------------- stepping
    def _command(self, reference) -> np.ndarray:
        """Controller current for the internal step starting now, from the measured rotor state."""
        st = self.plant.state
        q_r, dq_r, ddq_r, effort_r = reference
        theta_measured = quantize(st.theta, self.sensors.motor_resolution)  # the motor encoder
        return self.controller.current(theta_measured, st.dtheta, q_r, dq_r, ddq_r,
                                       effort_r + self.effort_command, self.step_s)

    def _advance_period(self, references=None) -> None:
        """Integrate one output period (the controller runs at every internal step).

        ``references``: the reference at the internal step times of this period and at its end,
        (substeps + 1, 4, n), when computed in advance; otherwise sampled here. The command for the
        next step is computed as soon as the state at the sample is known, so that the current of the
        sample can be the mean of the commands before and after it: a zero-order-hold current jumps
        at the sample instant, and its mean is what the rotor equation holds there (recording the
        previous command alone would lag by half a step and bias identification).
        """
        for sub in range(self.substeps):
            applied = self._pending_current
            self.plant.advance(applied, self.step_s)
            t_next = (self.samples + (sub + 1) / self.substeps) / self.rate_hz
            reference = self.reference.sample(t_next) if references is None else references[sub + 1]
            self._pending_current = self._command(reference)
        self._sample_current = 0.5 * (applied + self._pending_current)
        self.samples += 1
        self.time = self.samples / self.rate_hz

    def _truth(self) -> dict[str, np.ndarray]:
        st, p = self.plant.state, self.plant
        return {'q': st.q, 'dq': st.dq, 'theta': st.theta, 'dtheta': st.dtheta,
                'joint_torque': p.joint_torque, 'friction': p.friction_torque, 'current': self._sample_current,
                'temperature': st.temperature, 'rotor_acceleration': p.rotor_acceleration,
                'link_acceleration': p.link_acceleration}

    def _measure(self) -> Measurement:
        st, p = self.plant.state, self.plant
        return self.sensors.measure(st.q, st.dq, p.joint_torque, st.theta, st.dtheta, self._sample_current,
                                    st.sensed_temperature)

    def step(self) -> TwinSample:
        """Advance one output period; returns the sample at the new time."""
        self._advance_period()
        truth = {k: np.array(v, copy=True) for k, v in self._truth().items()}
        q_r, dq_r, ddq_r, effort_r = self.reference.sample(self.time)
        reference = {'q': q_r, 'dq': dq_r, 'ddq': ddq_r, 'effort': effort_r}
        return TwinSample(self.time, self._measure(), truth, reference)

    def run(self, duration_s: float, progress: Callable[[float], None] | None = None) -> SimulationRecord:
        """Simulate ``duration_s`` [s] with the current reference; ``progress(fraction)`` about every 5 %.

        The reference is computed for all internal steps at once and the sensors are applied to the
        whole recording at the end (neither depends on the plant's state), so the loop only runs
        the controller and the plant.
        """
        if not np.isfinite(duration_s) or duration_s <= 0:
            raise InputError(f'duration must be > 0 s, got {duration_s!r}')
        count = int(round(duration_s * self.rate_hz))
        step_times = (self.samples + np.arange(count * self.substeps + 1) / self.substeps) / self.rate_hz
        planned = np.stack(self.reference.sample_many(step_times), axis=1)  # (count·substeps + 1, 4, n)
        time = (self.samples + 1 + np.arange(count)) / self.rate_hz
        truth = {k: np.empty((count, self.n)) for k in TRUTH_FIELDS}
        sensed_temperature = np.empty((count, self.n))
        every = max(1, count // 20)
        for k in range(count):
            self._advance_period(planned[k * self.substeps:(k + 1) * self.substeps + 1])
            for name, value in self._truth().items():
                truth[name][k] = value
            sensed_temperature[k] = self.plant.state.sensed_temperature
            if progress is not None and (k + 1) % every == 0:
                progress((k + 1) / count)
        measured = self.sensors.measure_many(truth['q'], truth['dq'], truth['joint_torque'], truth['theta'],
                                             truth['dtheta'], truth['current'], sensed_temperature)
        reference = dict(zip(REFERENCE_FIELDS, self.reference.sample_many(time), strict=True))
        return SimulationRecord(self.robot.joint_names, time, {k: getattr(measured, k) for k in MEASURED_FIELDS},
                                truth, reference, self.rate_hz)


def trajectory_start(trajectory: Trajectory, joint_names) -> np.ndarray:
    """Position of a trajectory at its start, in ``joint_names`` order."""
    from dynid.excite.trajectory import reorder_trajectory_output

    q = trajectory.evaluate(np.array([0.0]))[0]
    return reorder_trajectory_output(q, trajectory.joint_names, joint_names)[0]


__all__ = ['DigitalTwin', 'PointTrajectory', 'SimulationRecord', 'TwinSample', 'gentle_motion',
           'home_configuration', 'trajectory_start']
