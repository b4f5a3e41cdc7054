"""Parameters of the simulated plant (the "truth" of the digital twin), its sensors and controller.

Defaults are assumptions (the seeds give no values; docs/contract.md): gear ratio 101, drive gains and
rotor inertias from the robot file or scaled from the effort limit, joint stiffness
τ = α1·φ + α3·φ³ with α1 of order 1e4–5e4 N·m/rad, Coulomb friction of a few N·m growing with the
squared load, E-GMS with M = 4, r_Δ = 4, r_k = 2 and a backlash of 1 mrad varying ±20 % over the
output revolution, viscous friction falling as the joint warms. Joint "size" follows the effort
limit: per-joint values are scaled by effort_limit / 150 N·m (the UR5e's big joints).

Every quantity here is written to ``truth.yaml`` beside simulated recordings, so that benchmarks can
compare identified parameters with the truth.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace

import numpy as np

from dynid.errors import InputError, checked_choice
from dynid.model.drives import JointDrives
from dynid.model.inertial import Payload
from dynid.model.robot import RobotModel

REFERENCE_EFFORT = 150.0  # N·m, the UR5e's size-3 joints: per-joint defaults scale from here


def _per_joint(value, n: int, name: str, positive: bool = False, nonnegative: bool = False) -> np.ndarray:
    a = np.broadcast_to(np.asarray(value, dtype=float), (n,)).copy() if np.ndim(value) == 0 else \
        np.asarray(value, dtype=float).reshape(-1)
    if a.shape != (n,) or not np.all(np.isfinite(a)):
        raise InputError(f'{name}: expected one finite value per joint ({n}), got {value!r}')
    if positive and np.any(a <= 0):
        raise InputError(f'{name} must be > 0, got {a.tolist()}')
    if nonnegative and np.any(a < 0):
        raise InputError(f'{name} must be >= 0, got {a.tolist()}')
    return a


@dataclass
class JointParameters:
    """Per-joint parameters of the flexible joints, friction and heating (arrays of length n).

    Stiffness: alpha1 [N·m/rad], alpha3 [N·m/rad³], damping [N·m·s/rad] of τ_j = α1·φ + α3·φ³ + D·φ̇.
    Friction on the rotor (thesis ch.6 eq. (11)): coulomb (Fc0) [N·m], static (Fs) [N·m],
    stribeck_velocity (Vs) [rad/s], stribeck_shape (μ), viscous1..3 (Fv1..3), load_coefficient
    (Fc1 of Fc0 + Fc1·τ_j²) [1/(N·m)], temperature_linear (Ft1) [N·m·(s/rad)^½/°C] and
    temperature_cubic (Ft2) [N·m·(s/rad)^½·°C³] of the reference form around 20 °C.
    E-GMS: egms_elements, egms_r_delta, egms_r_k (shared), backlash [rad] and backlash_variation
    (relative amplitude of its sinusoidal variation over one output revolution).
    Thermal: thermal_capacity [J/K], thermal_resistance [K/W] to ambient, winding_resistance [Ω]
    (copper loss R·i²), sensor_lag [s]. ``friction_model`` 'coulomb_viscous' restricts the friction to
    Fc·sgn(ω) + Fv1·ω (what the usual identification model contains; for matched-model benchmarks).
    """

    alpha1: np.ndarray
    alpha3: np.ndarray
    damping: np.ndarray
    coulomb: np.ndarray
    static: np.ndarray
    stribeck_velocity: np.ndarray
    stribeck_shape: np.ndarray
    viscous1: np.ndarray
    viscous2: np.ndarray
    viscous3: np.ndarray
    load_coefficient: np.ndarray
    temperature_linear: np.ndarray
    temperature_cubic: np.ndarray
    backlash: np.ndarray
    backlash_variation: np.ndarray
    thermal_capacity: np.ndarray
    thermal_resistance: np.ndarray
    winding_resistance: np.ndarray
    sensor_lag: np.ndarray
    egms_elements: int = 4
    egms_r_delta: float = 4.0
    egms_r_k: float = 2.0
    friction_model: str = 'full'  # 'full' (module docstring) or 'coulomb_viscous' (Fc·sgn(ω) + Fv1·ω only)

    @classmethod
    def defaults(cls, effort_limits: np.ndarray) -> JointParameters:
        """Defaults scaled by joint size s = effort_limit / 150 N·m (module docstring)."""
        effort = np.where(np.isfinite(effort_limits), effort_limits, REFERENCE_EFFORT)
        s = np.clip(effort / REFERENCE_EFFORT, 0.05, 4.0)
        return cls(
            alpha1=4.0e4 * s, alpha3=1.0e9 * s, damping=10.0 * s,
            coulomb=3.0 * s**0.7, static=3.9 * s**0.7, stribeck_velocity=np.full_like(s, 0.02),
            stribeck_shape=np.full_like(s, 1.2), viscous1=4.0 * s**0.7, viscous2=-0.5 * s**0.7,
            viscous3=0.1 * s**0.7, load_coefficient=1.3e-4 / s,
            temperature_linear=-0.03 * s**0.7, temperature_cubic=400.0 * s**0.7,
            backlash=np.full_like(s, 1e-3), backlash_variation=np.full_like(s, 0.2),
            thermal_capacity=400.0 * s, thermal_resistance=2.0 / s, winding_resistance=np.full_like(s, 0.5),
            sensor_lag=np.full_like(s, 10.0),
        )

    def validated(self, n: int) -> JointParameters:
        """A copy with every array checked to hold n finite values of the right sign."""
        positive = {'alpha1', 'stribeck_velocity', 'stribeck_shape', 'backlash', 'thermal_capacity',
                    'thermal_resistance', 'sensor_lag'}
        nonnegative = {'alpha3', 'damping', 'coulomb', 'static', 'load_coefficient', 'backlash_variation',
                       'winding_resistance'}
        checked_choice('friction_model', self.friction_model, ('full', 'coulomb_viscous'))
        values = {}
        for name, value in asdict(self).items():
            if name.startswith('egms_') or name == 'friction_model':
                values[name] = value
                continue
            values[name] = _per_joint(value, n, name, positive=name in positive,
                                      nonnegative=name in nonnegative)
        if np.any(values['backlash_variation'] >= 1):
            raise InputError('backlash_variation must be < 1 (the backlash must stay > 0)')
        return JointParameters(**values)

    def to_dict(self) -> dict:
        return {k: (v.tolist() if isinstance(v, np.ndarray) else v) for k, v in asdict(self).items()}


@dataclass
class SensorParameters:
    """Sensor models (all noise seeded).

    link_resolution, motor_resolution: encoder quantization [rad, link units; the motor encoder's
    step is 2π/(counts·gear ratio)]; velocity_noise [rad/s] (white, on reported velocities);
    current_noise [A] and current_resolution [A]; torque_noise [N·m] on the measured joint torque;
    temperature_resolution [°C].
    """

    link_resolution: float = 2 * np.pi / 2**20
    motor_counts_per_revolution: int = 2**14
    velocity_noise: float = 1e-3
    current_noise: float = 0.02
    current_resolution: float = 1e-3
    torque_noise: float = 0.2
    temperature_resolution: float = 0.1

    def __post_init__(self) -> None:
        for name, value in asdict(self).items():
            if not np.isfinite(value) or value < 0:
                raise InputError(f'sensor parameter {name} must be a finite number >= 0, got {value!r}')
        if self.motor_counts_per_revolution < 1:
            raise InputError('motor_counts_per_revolution must be >= 1')

    @classmethod
    def noiseless(cls) -> SensorParameters:
        """Ideal sensors (for physics tests)."""
        return cls(0.0, 1, 0.0, 0.0, 0.0, 0.0, 0.0)


@dataclass
class ControllerParameters:
    """Joint controller: PID on the motor side plus feedforward, current saturation.

    bandwidth_hz: closed-loop bandwidth used to set the PD gains from the joint's inertia;
    damping_ratio; integral_fraction: K_i = K_p·(2π·bandwidth_hz)·integral_fraction;
    internal_feedforward: 'full' (nominal rigid-body inverse dynamics of the reference + rotor
    inertia + nominal Coulomb and viscous friction), 'gravity' or 'none' — what a robot controller
    adds on its own, beside the external effort input; current_limit_fraction of the effort limit.
    """

    bandwidth_hz: float = 8.0
    damping_ratio: float = 0.8
    integral_fraction: float = 0.2
    internal_feedforward: str = 'full'
    current_limit_fraction: float = 1.0

    def __post_init__(self) -> None:
        checked_choice('internal_feedforward', self.internal_feedforward, ('full', 'gravity', 'none'))
        for name in ('bandwidth_hz', 'damping_ratio', 'current_limit_fraction'):
            value = getattr(self, name)
            if not np.isfinite(value) or value <= 0:
                raise InputError(f'controller {name} must be > 0, got {value!r}')
        if not np.isfinite(self.integral_fraction) or self.integral_fraction < 0:
            raise InputError(f'controller integral_fraction must be >= 0, got {self.integral_fraction!r}')


@dataclass
class PlantParameters:
    """Everything that defines a simulated robot: model, true drives, joints, payload, sensors, control.

    ``drives`` are the **true** drive parameters; ``nominal_drives`` are what the controller and a
    user believe (they differ when drive gains are perturbed). ``ambient_c`` and
    ``initial_temperature_c`` [°C] set the thermal state.
    """

    robot: RobotModel
    drives: JointDrives
    nominal_drives: JointDrives
    joints: JointParameters
    payload: Payload | None = None
    sensors: SensorParameters = field(default_factory=SensorParameters)
    controller: ControllerParameters = field(default_factory=ControllerParameters)
    ambient_c: float = 25.0
    initial_temperature_c: float | np.ndarray = 25.0

    @classmethod
    def defaults(cls, robot: RobotModel, payload: Payload | None = None,
                 drive_gain_error: float = 0.0, seed: int = 0) -> PlantParameters:
        """Default plant of a robot (module docstring).

        Args:
            robot: the rigid-body model (its standard parameters are the truth).
            payload: payload at the flange.
            drive_gain_error: true drive gains differ from the nominal ones by a factor uniform in
                1 ± drive_gain_error (seeded by ``seed``), for drive-gain identification.
        """
        nominal = robot.drives if robot.drives is not None else default_drives(robot)
        if not 0.0 <= drive_gain_error < 0.5:
            raise InputError(f'drive_gain_error must be in [0, 0.5), got {drive_gain_error}')
        factor = np.random.default_rng(seed).uniform(1 - drive_gain_error, 1 + drive_gain_error, robot.n)
        true = nominal.with_drive_gain(nominal.drive_gain * factor)
        return cls(robot, true, nominal, JointParameters.defaults(robot.effort_limits).validated(robot.n),
                   payload)

    @classmethod
    def of_twin(cls, robot: RobotModel, payload: Payload | None = None, drive_gain_error: float = 0.0, seed: int = 0,
                temperature_c: float = 25.0, internal_feedforward: str = 'full', noise: bool = True) -> PlantParameters:
        """The default plant (:meth:`defaults`) as the twin's front ends set it up (``dynid simulate``,
        sim_node): ambient and initial temperature ``temperature_c`` [°C], the joint controller's own
        feedforward ``internal_feedforward`` ('full', 'gravity', 'none'), noiseless sensors unless ``noise``."""
        params = cls.defaults(robot, payload=payload, drive_gain_error=drive_gain_error, seed=seed)
        params.ambient_c = params.initial_temperature_c = temperature_c
        params.controller = replace(params.controller, internal_feedforward=internal_feedforward)
        if not noise:
            params.sensors = SensorParameters.noiseless()
        return params

    def with_payload(self, payload: Payload | None) -> PlantParameters:
        return replace(self, payload=payload)

    @property
    def current_limits(self) -> np.ndarray:
        """Current saturation [A] per joint from the effort limits and nominal drive gains."""
        effort = np.where(np.isfinite(self.robot.effort_limits), self.robot.effort_limits, REFERENCE_EFFORT)
        return self.controller.current_limit_fraction * effort / np.abs(self.nominal_drives.drive_gain)

    def to_dict(self) -> dict:
        """The truth, as plain data (for truth.yaml)."""
        payload = None if self.payload is None else {
            'mass': self.payload.mass, 'com': self.payload.com.tolist(),
            'inertia': self.payload.inertia.tolist()}
        return {
            'robot': self.robot.name,
            'joint_names': list(self.robot.joint_names),
            'gravity': self.robot.gravity.tolist(),
            'drives': self.drives.to_dict(),
            'nominal_drives': self.nominal_drives.to_dict(),
            'joints': self.joints.to_dict(),
            'payload': payload,
            'sensors': asdict(self.sensors),
            'controller': asdict(self.controller),
            'ambient_c': float(self.ambient_c),
            'initial_temperature_c': np.broadcast_to(self.initial_temperature_c, (self.robot.n,)).tolist(),
            'current_limits': self.current_limits.tolist(),
        }


def default_drives(robot: RobotModel) -> JointDrives:
    """Drives for robots without drive data: r = 101, K_τ = effort/12 A, B = 0.004·effort [kg·m²]."""
    effort = np.where(np.isfinite(robot.effort_limits), robot.effort_limits, REFERENCE_EFFORT)
    return JointDrives(robot.joint_names, gear_ratio=101.0, drive_gain=effort / 12.0,
                       rotor_inertia=0.004 * effort)


def cad_like(robot: RobotModel, seed: int = 11) -> RobotModel:
    """``robot`` as the arm differs from a robot file made in CAD: every link's mass scaled by 1 ± 20–40 %, its
    inertia about the centre of mass by the same factor and by a shape factor of 1 ± 20–40 %, its centre of mass
    moved by a normal step of σ 2 cm per axis [m] (each sign and size drawn from ``seed``). A twin whose plant is
    this while the identification is given ``robot``'s file sees a robot file as far off as a CAD model's."""
    from dynid.model.inertial import parameters_from_com, split_parameters

    rng = np.random.default_rng(seed)
    standard = robot.standard_parameters.copy()
    for i in range(robot.n):
        mass, h, inertia = split_parameters(standard[10 * i:10 * i + 10])
        com = h / mass
        inertia = inertia - mass * (com @ com * np.eye(3) - np.outer(com, com))
        factor = 1 + rng.choice([-1, 1]) * rng.uniform(0.2, 0.4)
        shape = 1 + rng.choice([-1, 1]) * rng.uniform(0.2, 0.4)
        standard[10 * i:10 * i + 10] = parameters_from_com(mass * factor, com + rng.normal(0, 0.02, 3),
                                                           inertia * factor * shape)
    return robot.with_parameters(standard)
