"""How one identification runs (:class:`IdentifierSettings`): the one settings class of the identification job,
whose fields identifier_node declares as its parameters and ``dynid identify`` makes its options of; apart from the
pipeline so that either lists them without loading it."""

from __future__ import annotations

from dataclasses import dataclass, fields

from dynid.friction.laws import LawNames
from dynid.identify.choices import AUTO, SOLVERS, TORQUE_SOURCES
from dynid.identify.registry import MethodNames
from dynid.settings import setting
from dynid.signal.preprocess import FilterSettings

#: how the reason of a result's prior section begins where the setting prior was off
PRIOR_OFF = 'not asked for'


@dataclass(frozen=True)
class IdentifierSettings:
    """How one identification runs (each field is a node parameter, :mod:`dynid.settings`)."""

    method: str = setting(AUTO, 'identification method; auto: wls or irls by blocked cross-validation',
                          choices=MethodNames(leading=(AUTO,)))  # the registered methods, read at each use
    friction: str = setting(AUTO, 'friction model; auto: per joint Coulomb + viscous with or without the offset, the '
                                  'load-dependent and the temperature term, by blocked cross-validation',
                            choices=LawNames(leading=(AUTO,)))  # the registered laws, read at each use
    temperature: bool = setting(False, 'add the temperature friction term')
    torque_source: str = setting(
        AUTO, 'measured torque: current = K_τ·i from joint_currents (or a joint_states effort read as current) and '
              "the drive gains (minus B·θ̈ with motor encoders); motor_torque = joint_states effort that is already "
              "the motor's torque in N·m at the link side (rotor inertias identified, no drive data needed; with "
              "coupled drives, their torque in joint space Cᵀ·(K_τ·i)); "
              'joint_torque = joint_states effort from a torque sensor after the gear; auto: currents when the drive '
              'gains are known or identified (tls, mls), else the joint torque', choices=TORQUE_SOURCES)
    method_option: tuple[str, ...] = setting(
        (), "the method's own options, NAME=VALUE, as the method declares them (e.g. max_iterations=5; "
            'docs/methods/identification.md lists each method\'s; one it does not declare is refused with the list of '
            'its own)',
        items=str)
    prior: bool = setting(True, "pull toward the robot file's link inertias, weight by cross-validation (every "
                                "method but tls and mls), physically consistent where that costs little (method ols, "
                                "wls or irls; friction none or viscous_coulomb)")
    prior_source: str = setting('', "a previous identification's result file to pull toward instead of the robot file: "
                                    'its base parameters, each spread by its σ, or a fleet prior file (dynid fleet '
                                    "prior: many robots' median, spread by their spread), or a file of a kind "
                                    'another package registers (entry points dynid.prior_sources); weight by the same '
                                    "cross-validation; refused when it is another robot's or has another joint order; "
                                    'empty: the robot file')
    physical: bool = setting(False, 'always physically consistent standard parameters (method ols, wls or irls; '
                                    'friction none or viscous_coulomb)')
    physical_solver: str = setting('clarabel', 'solver of the physically consistent identification', choices=SOLVERS)
    position_cutoff_hz: float = setting(0.0, 'position low-pass; 0: from the sample rate (50 Hz from 500 Hz up)',
                                        unit='Hz', low=0.0, high=1000.0, parameter='position_cutoff')
    decimation_cutoff_hz: float = setting(0.0, 'parallel low-pass; 0: from the sample rate (20 Hz from 500 Hz up)',
                                          unit='Hz', low=0.0, high=1000.0, parameter='decimation_cutoff')
    stiction_velocity: float = setting(FilterSettings.stiction_velocity, 'rows below this friction velocity are '
                                       'dropped', unit='rad/s', low=0.0, high=10.0)
    torque_sign: tuple[str, ...] = setting(
        (), "joints whose joint_states effort counts the other way round from the robot file, negated before "
            "identifying: JOINT=-1 (all=-1: every joint); the sign check's warnings name them", items=str)
    exclude_joints: tuple[str, ...] = setting(
        (), "joints whose equations are left out of the fit, their motion kept in the others' (a torque missing or "
            "not to be trusted); their friction is held at 0", items=str)
    report: bool = setting(True, 'write an HTML report beside the result')
    force: bool = setting(False, 'keep a result the data cannot identify (cond of the column-scaled regressor > 1000 '
                                 'or most parameters above 50 % σ), which is refused otherwise, as by dynid identify')


@dataclass(frozen=True)
class RecordingSettings:
    """How identifier_node records (each field a node parameter, :mod:`dynid.settings`; read at each
    ~/start_recording)."""

    output_directory: str = setting('dynid_recordings', 'where recordings and results go')
    segment_duration: float = setting(5.0, 'seconds per recording segment', low=0.5, high=600.0)
    data_wait: float = setting(10.0, '~/start_recording fails when no joint_states arrive within this', unit='s',
                               low=0.1, high=60.0)


@dataclass(frozen=True)
class ValidationSettings:
    """How recordings are scored with a result (``dynid validate``, and ``dynid compare`` on held-out recordings)."""

    payload_com: tuple[float, float, float] = setting(
        (0.0, 0.0, 0.0), 'centre of mass x,y,z of the known point-mass payloads in the flange frame', unit='m',
        items=float)
    require_fit: tuple[str, ...] = setting(
        (), 'least NRMSE fit [%] of every joint on every recording (a number), or of one joint (JOINT=PERCENT; '
            'comma-separated); a joint that cannot be scored fails its threshold', items=str)


@dataclass(frozen=True)
class ComparisonSettings:
    """How two results are compared (``dynid compare``, :func:`dynid.identify.validation.compare.compare_results`)."""

    top: int = setting(15, 'parameters shown, largest |z| first (every significant one at least)', low=0,
                       high=1000000)


#: the settings that take one of a list of values, and those values (checked with
#: :func:`dynid.errors.checked_choice`)
CHOICES = {field.name: field.metadata['choices'] for field in fields(IdentifierSettings) if field.metadata['choices']}
