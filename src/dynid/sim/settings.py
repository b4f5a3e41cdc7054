"""The settings of the twin's jobs, apart from the simulation so that a front end lists them (the command line's
help, a node's parameters) without loading it: one offline run (:class:`SimulationSettings`,
:func:`dynid.sim.recording.simulate_recording`) and the lab logger it may imitate (:class:`RealLogSettings`,
:mod:`dynid.sim.real_log`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from dynid.errors import InputError, checked_choice
from dynid.io import EFFORT_MEANINGS, STORAGES
from dynid.settings import setting

if TYPE_CHECKING:
    from dynid.sim.changes import JointChange

#: The plants ``engine`` chooses between: dynid's own flexible-joint twin (default) and MuJoCo
#: (:mod:`dynid.sim.mujoco_twin`).
ENGINES = ('twin', 'mujoco')
#: The column names of a real log (:mod:`dynid.sim.real_log`) and whose clock stamps it.
CSV_FORMATS = ('ur_rtde', 'franka')
STAMPS = ('controller', 'logger')


@dataclass
class RealLogSettings:
    """How the logger samples and spoils the twin's run (module docstring)."""

    rate_hz: float = setting(100.0, 'log at about this rate, on jittery stamps (at most a quarter of the twin\'s '
                                    'rate); with logger stamps the control rate', unit='Hz')
    jitter: float = setting(0.25, 'J within [0, 0.5): each step is the period times 1 + U(-J, J) (0.25: 7.5–12.5 ms '
                                  'at 100 Hz)')
    gap_rate_hz: float = setting(0.2, 'gaps (single steps of gap_periods periods) per second, on average (>= 0)',
                                 unit='Hz')
    gap_periods: float = setting(3.0, 'length of a gap in periods, >= 1 (with logger stamps the longest stall)')
    position_rounding_rad: float = setting(1e-4, 'position rounding (>= 0)', unit='rad')
    glitches: int = setting(2, 'rows of each glitch kind (>= 0): position jump, absurd current (or torque), garbage '
                               'CSV line')
    csv_format: str = setting('ur_rtde', 'CSV column names: UR RTDE (currents, no torque) or libfranka (joint '
                                         'torque, no current)', choices=CSV_FORMATS)
    time_offset_s: float = setting(1000.0, 'the first stamp of the log', unit='s')
    stamps: str = setting('controller', "controller: the stamps are the controller's sample times; logger: every "
                                        "control tick is logged (the log rate is the control rate, the twin's rate a "
                                        "whole multiple of it), stamped by the logger's clock U(0, J) periods after "
                                        'its tick (J: the jitter), steps (1 ± J) periods; gaps are stalls of 2 … '
                                        'gap_periods ticks', choices=STAMPS)
    repeats: float = setting(0.0, "with logger stamps: this share of the rows, within [0, 0.5), repeats the state "
                                  'before it (the logger read a sample not yet replaced; the next row catches up by '
                                  'two ticks), e.g. 0.05')
    time_column: bool = setting(True, 'log.csv has a time column')

    def check(self, twin_rate_hz: float) -> None:
        checked_choice('log format', self.csv_format, CSV_FORMATS)
        checked_choice('log stamps', self.stamps, STAMPS)
        if self.stamps == 'logger':
            ratio = twin_rate_hz / self.rate_hz if self.rate_hz > 0 else 0.0
            if not (ratio >= 1 and abs(ratio - round(ratio)) < 1e-9):
                raise InputError(f'a logger-stamped log is at the control rate: {{rate}} {twin_rate_hz:g} Hz must be '
                                 f'a whole multiple of the log rate, got {self.rate_hz:g} Hz', fields=('rate',))
            if not 0 <= self.repeats < 0.5:
                raise InputError(f'the share of repeated states must be within [0, 0.5), got {self.repeats:g}')
        elif not 0 < self.rate_hz <= twin_rate_hz / 4:
            raise InputError(f'the log rate must be within (0, {twin_rate_hz / 4:g}] Hz (a quarter of {{rate}} '
                             f'{twin_rate_hz:g} Hz), got {self.rate_hz:g}', fields=('rate',))
        elif self.repeats:
            raise InputError('repeated states are made by a logger on its own clock (stamps: logger)')
        if not 0 <= self.jitter < 0.5:
            raise InputError(f'the stamp jitter must be within [0, 0.5) of the period, got {self.jitter:g}')
        if self.gap_rate_hz < 0 or self.gap_periods < 1 or self.position_rounding_rad < 0 or self.glitches < 0:
            raise InputError('gap rate, rounding and glitch count must be >= 0, gap periods >= 1')



@dataclass
class SimulationSettings:
    """Settings of one offline simulation (validated in :func:`simulate_recording`)."""

    duration_s: float | None = setting(None, "seconds to simulate; none: the trajectory's duration", unit='s')
    rate_hz: float = setting(1000.0, 'output rate', unit='Hz')
    seed: int = setting(0, 'seed of noise and perturbations')
    payload_kg: float = setting(0.0, 'payload mass at the flange, at payload_com', unit='kg', low=0.0, high=100.0)
    payload_com: Sequence[float] = setting((0.0, 0.0, 0.05), 'payload centre of mass in the flange frame (0,0,0.05: '
                                                             'on the flange axis, which loads the last joint not at '
                                                             'all); off-axis, e.g. 0.08,0,0.05, loads every joint',
                                           unit='m', items=float)
    drive_gain_error: float = setting(0.0, 'true drive gains differ from nominal by up to this fraction')
    temperature_c: float = setting(25.0, 'initial and ambient temperature', unit='°C', low=-20.0, high=80.0)
    #: beside those of the trajectory file (module docstring)
    joint_changes: Sequence[JointChange] = setting((), 'changes of the true joints during the run')
    #: write a "real-log" recording instead (dynid.sim.real_log)
    real_log: RealLogSettings | None = setting(None, 'how a lab\'s logger samples and spoils the run; none: the '
                                                     'contract\'s bag')
    storage: str = setting('mcap', 'storage of the written bag (sqlite3 writes a .db3 bag, as ROS 2 before Iron '
                                   'recorded)', choices=STORAGES)
    engine: str = setting('twin', "the plant: twin (dynid's flexible-joint twin) or mujoco (the robot's URDF in "
                                  'MuJoCo: rigid joints, armature, damping and friction loss from the drive and '
                                  'friction data; needs pip install mujoco)', choices=ENGINES)
    mjcf: str | None = setting(None, "with engine mujoco: an MJCF to simulate instead of the robot's URDF (joints "
                                     "named as the robot's; its own armature, damping, friction loss)")
    joint_states_effort: str = setting('torque', "what the bag's joint_states effort holds, as a driver publishes "
                                                 "it: torque (the contract's bag with motor states, currents and "
                                                 'temperatures), or as the UR driver does (only joint_states): '
                                                 'current, current_as_torque (K·i [N·m]) or '
                                                 "gravity_compensated_torque (UR's actual_current_as_torque: K·i less "
                                                 'the gravity with the payload set on the robot); the bag records '
                                                 'which (dynid.sim.ur_modes)', choices=EFFORT_MEANINGS)
    robot_payload_kg: float | None = setting(None, 'payload set on the robot (at payload_com) that a '
                                                   'gravity_compensated_torque effort leaves out; none: the one '
                                                   'carried', unit='kg', low=0.0, high=100.0)
    #: beside those of the trajectory file's ``contacts`` list (dynid.sim.contacts)
    contacts: Sequence = setting((), 'contacts put on the robot: a wrench at a point of a link for a time '
                                     '(dynid.sim.contacts.ContactLoad)')
    obstacles: Sequence = setting((), 'with engine mujoco: boxes in the world (centre x, y, z and half sizes, [m]) a '
                                      'sphere at the tool collides with', unit='m')


@dataclass(frozen=True)
class TwinSettings:
    """The twin in real time over DDS (sim_node; each field is a node parameter, :mod:`dynid.settings`, beside the
    robot group's robot and robot_description). All but the payload and UR's friction compensation are read once
    at start-up."""

    rate: float = setting(500.0, 'publishing rate', unit='Hz', low=1.0, high=2000.0, read_only=True)
    payload_mass: float = setting(0.0, 'payload at the flange [kg], 5 cm out; changeable', low=0.0, high=100.0)
    noise: bool = setting(True, 'sensor noise and quantization on', read_only=True)
    seed: int = setting(SimulationSettings.seed, 'seed of noise and perturbations', low=0, high=2**31 - 1,
                        read_only=True)
    initial_position: tuple[float, ...] = setting((), 'start configuration [rad], one per joint; empty: home',
                                                  items=float, read_only=True)
    drive_gain_error: float = setting(SimulationSettings.drive_gain_error, 'true drive gains differ by up to this '
                                      'fraction', low=0.0, high=0.45, read_only=True)
    temperature: float = setting(SimulationSettings.temperature_c, 'initial and ambient temperature', unit='°C',
                                 low=-20.0, high=80.0, read_only=True)
    batch_period: float = setting(0.005, 'samples are produced and published in bursts this often', unit='s',
                                  low=0.001, high=0.1, read_only=True)
    internal_feedforward: str = setting('full', "the twin controller's own model torque: full (nominal rigid body, "
                                                'rotor inertia, friction), gravity or none (an external feedforward, '
                                                'e.g. feedforward_node, supplies it)', read_only=True)
    joint_changes: tuple[str, ...] = setting((), "scheduled changes of the true joints, e.g. 'time=10,stiffness_scale="
                                                 "0.5,joints=shoulder_pan_joint' (time [s] since start; keys as dynid "
                                                 'simulate --change)', items=str, read_only=True)
    engine: str = setting(SimulationSettings.engine, "the plant: twin (dynid's flexible-joint twin) or mujoco (the "
                                                     "robot's URDF, or mjcf, in MuJoCo: rigid joints; needs the mujoco "
                                                     'package)', choices=ENGINES, read_only=True)
    mjcf: str = setting('', "with engine mujoco: an MJCF file to simulate instead of the robot's URDF (joints named "
                            "as the robot's)", read_only=True)
    joint_states_effort: str = setting(
        SimulationSettings.joint_states_effort, "what joint_states' effort holds: torque (joint torque [N·m]), current "
        '(motor current [A]), current_as_torque (K·i [N·m]) or gravity_compensated_torque (K·i less the gravity '
        "with the payload set on the robot: UR's actual_current_as_torque)", choices=EFFORT_MEANINGS, read_only=True)
    robot_payload_mass: float = setting(-1.0, 'payload set on the robot [kg] (5 cm out) that a '
                                              'gravity_compensated_torque effort leaves out; negative: the one it '
                                              'carries (payload_mass)', low=-1.0, high=100.0, read_only=True)
    ur_direct_torque: bool = setting(False, 'effort commands applied as UR applies direct_torque(): plus its gravity '
                                            '(with the payload set) and its friction model scaled by '
                                            'ur_viscous_scale, ur_coulomb_scale (use internal_feedforward none)',
                                     read_only=True)
    ur_viscous_scale: tuple[float, ...] = setting((0.0,), "UR's viscous friction compensation per joint, 0-1 "
                                                          '(FrictionModelController); one value: all joints',
                                                  items=float)
    ur_coulomb_scale: tuple[float, ...] = setting((0.0,), "UR's Coulomb friction compensation per joint, 0-1",
                                                  items=float)
