"""The contact job's settings: one frozen dataclass every front end translates (the CLI's ``dynid contact``,
contact_node's parameters, config files)."""

from __future__ import annotations

from dataclasses import dataclass, fields

from dynid.contact.detection import DetectorSettings
from dynid.settings import check_settings, setting
from dynid.signal.preprocess import FilterSettings


@dataclass(frozen=True)
class ContactSettings:
    """How the external torque is estimated and contacts detected (docs/methods/contact.md)."""

    observer_gain: float = setting(0.0, 'bandwidth K of each stage of the momentum observer (τ̂_ext is τ_ext through '
                                        'observer_stages first-order low-passes of time constant 1/K); 0: 100 1/s '
                                        'times the stages (200 1/s each of two), at most a quarter of the sample '
                                        'rate', unit='1/s', low=0.0, high=2000.0)
    observer_stages: int = setting(0, "1: the observer's own first-order response; 2: its output through a second "
                                      'stage of the same K, which cuts the measured velocity\'s noise the first '
                                      'passes above K (two stages of 2K lag a ramp as one of K); 0: two where the '
                                      'sample rate allows stages of 200 1/s (800 Hz and faster), else one',
                                   low=0, high=2)
    false_alarm_rate: float = setting(0.5, 'false alarms per hour of contact-free motion the thresholds are '
                                           'calibrated to (the whole arm)', unit='1/h', low=1e-4, high=1000.0)
    hysteresis: float = setting(0.6, 'an alarm ends below this share of its threshold', low=0.05, high=1.0)
    persistence_s: float = setting(0.003, 'an alarm needs its threshold passed this long (and on two samples at '
                                          'least)', unit='s', low=0.0, high=1.0)
    release_s: float = setting(0.02, 'an alarm ends after this long below the hysteresis level (two samples at '
                                     'least)', unit='s', low=0.0, high=5.0)
    rest_velocity: float = setting(0.01, 'a joint is at rest below this filtered speed', unit='rad/s', low=0.0,
                                   high=1.0)
    velocity_filter_s: float = setting(0.02, 'time constant of the speed filter', unit='s', low=1e-4, high=1.0)
    stiction_velocity: float = setting(2.0 * FilterSettings.stiction_velocity,
                                       'below this speed the friction the model predicts is uncertain by the static '
                                       'friction level (twice the identification\'s stiction_velocity, below which '
                                       'its rows are dropped)', unit='rad/s', low=1e-4, high=1.0)
    stiction_scale: float = setting(1.0, 'the friction static friction may hold, as a multiple of the identified '
                                         'Coulomb level (with its Stribeck excess)', low=0.0, high=10.0)
    rest_baseline_s: float = setting(1.0, 'time constant of the rest baseline: at rest, what static friction holds '
                                          'becomes the baseline of the estimate this fast', unit='s', low=0.01,
                                     high=60.0)
    rest_drift: float = setting(0.2, 'the share of the static friction level that can still move at rest (the '
                                     "controller settling against it)", low=0.0, high=1.0)
    rest_snap_s: float = setting(0.3, 'this long after a joint stops, its rest baseline follows τ̂_ext as fast as the '
                                      'observer (the friction static friction holds at the stop becomes the baseline '
                                      'at once) and then its friction envelope falls with this time constant; 0: the '
                                      'baseline follows from the stop with rest_baseline_s, the envelope falls with '
                                      'it', unit='s', low=0.0, high=5.0)
    command_velocity: float = setting(1e-3, 'where the controller\'s reference is known, the arm is not at rest while '
                                            'the reference velocity of a joint exceeds this: the motor may be breaking '
                                            'it away (the motion threshold and static friction\'s whole envelope then)',
                                      unit='rad/s', low=0.0, high=1.0)
    reference: bool = setting(True, "take the controller's reference where it is given (contact_node's "
                                    "reference_topic, the reference a recording holds): its velocity tells the "
                                    'rest, its position gives the tracking error and the speed their reading at rest; '
                                    'off: the measured speeds alone')
    settle_s: float = setting(0.3, 'at rest, an alarm whose estimate stays steady this long within twice the static '
                                   'friction level ends (static friction holds what is left: anything within ±F_s '
                                   'before the push and after it)', unit='s', low=0.01, high=10.0)
    settle_band: float = setting(3.0, 'steady: within this many σ of itself', low=0.1, high=100.0)
    recent_motion_s: float = setting(0.5, 'a joint slower than half the stiction velocity is slowing down or reversing '
                                          '(its friction unsure) this long after it was faster, and creeping off a '
                                          'rest after that', unit='s', low=0.0, high=10.0)
    friction_band: float = setting(5e-3, 'width of the ramp replacing sgn(ω) in the friction law', unit='rad/s',
                                   low=1e-6, high=1.0)
    temperature_c: float = setting(20.0, 'temperature of the friction law where the recording has none', unit='°C',
                                   low=-40.0, high=150.0)

    def validated(self) -> ContactSettings:
        check_settings(self)
        return self

    def detector(self) -> DetectorSettings:
        """The detector's constants: its fields, as set here."""
        return DetectorSettings(**{f.name: getattr(self, f.name) for f in fields(DetectorSettings)})

    def stages(self, rate_hz: float) -> int:
        """The observer's stages at a sample rate [Hz]: the setting, or two where a quarter of the rate is at least
        200 1/s (the K of two stages whose lag is one stage's of 100 1/s), else one."""
        return int(self.observer_stages) if self.observer_stages > 0 else (2 if rate_hz / 4.0 >= 200.0 else 1)

    def gain(self, rate_hz: float) -> float:
        """Each stage's K [1/s] at a sample rate [Hz]: the setting, or 100 1/s times the stages (the estimate's
        bandwidth 100 1/s) capped at a quarter of the rate."""
        return self.observer_gain if self.observer_gain > 0 else min(100.0 * self.stages(rate_hz), rate_hz / 4.0)

    def bandwidth(self, rate_hz: float) -> float:
        """The estimate's bandwidth [1/s]: K over the stages (the inverse of the lag a ramp sees); the detector's
        decays follow it."""
        return self.gain(rate_hz) / self.stages(rate_hz)


@dataclass(frozen=True)
class ContactNodeSettings:
    """contact_node's own parameters beside :class:`ContactSettings` and the intake's (docs/nodes/README.md)."""

    result_file: str = setting('', 'identification result (dynid identify) the observer runs on; required',
                               read_only=True)
    calibration_file: str = setting('', 'thresholds from contact-free runs (dynid contact --calibrate ... '
                                        '--save-calibration FILE); empty: uncalibrated, Gaussian at the result\'s σ',
                                    read_only=True)
    payload_mass: float = setting(0.0, 'payload declared at the flange', unit='kg', low=0.0, high=100.0,
                                  read_only=True)
    payload_com: tuple[float, ...] = setting((0.0, 0.0, 0.0), 'its centre of mass in the flange frame', unit='m',
                                             items=float, read_only=True)
    reference_topic: str = setting('joint_trajectory_controller/joint_trajectory',
                                   'JointTrajectory topic of the arm\'s controller (what dynid\'s excitation and '
                                   'feedforward send): the detector takes the commanded velocity from it, a breakaway '
                                   'at rest then meets the motion threshold; empty: none (the measured speeds alone)',
                                   read_only=True)
    wrench: str = setting('auto', 'publish the flange wrench: auto (arms of six joints or more), on (refused below '
                                  'six joints), off', choices=('auto', 'on', 'off'), read_only=True)
    torque_sign: tuple[str, ...] = setting((), "negate joint_states' effort of these joints (JOINT=-1, all=-1); "
                                               "unset: as the result's identification did", items=str, read_only=True)
    record_collisions: bool = setting(True, 'each contact goes into the health record as a collision event',
                                      read_only=True)
    health_db: str = setting('', 'health record: an SQLite file or a postgresql:// URL; empty: the default file',
                             read_only=True)
    health_robot: str = setting('', "the robot's name in the health record; empty: the robot model's",
                                read_only=True)
