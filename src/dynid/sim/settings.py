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
