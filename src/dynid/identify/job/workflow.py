"""The identification workflow, once: ``dynid identify`` and identifier_node both run it, so that both
write the same provenance.

:func:`identify_and_save` identifies from recordings (:func:`dynid.identify.steps.run.identify`), refuses a
result the data cannot support unless forced (:func:`dynid.identify.result.quality.refuse_unless_forced`),
records the robot as it was given (:func:`dynid.identify.result.robot_source.record_robot`) and the drives
file, scores the result on other recordings and on the held-out last part of each, saves it and writes
the report. A front end reads and checks the recordings and hands the rest over in one call,
:func:`identify_with_settings`, which translates the job's settings into an :class:`Identification`.

    >>> settings = IdentifierSettings(method='wls')
    >>> result, report = identify_with_settings(robot, recordings, settings, 'result.yaml', 'ur5e')  # doctest: +SKIP
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from dynid.diagnosis import Diagnosis, Recording, diagnose
from dynid.errors import InputError, spell
from dynid.files import file_sha256
from dynid.identify.equations.request import ModelSpec, RecordingInput
from dynid.identify.job.bias import least_squares_bias
from dynid.identify.job.torque_sources import check_channels, compare_sources
from dynid.identify.job.ways_out import WAY_OUT_SPELLING, ways_out
from dynid.identify.registry import flagged_names, parse_method_options
from dynid.identify.result.quality import refuse_unless_forced, validation_warnings
from dynid.identify.result.result import IdentificationResult
from dynid.identify.result.robot_source import record_robot
from dynid.identify.settings import IdentifierSettings
from dynid.identify.solve.noise import TooFewRowsError
from dynid.identify.solve.physical import PhysicalSettings
from dynid.identify.solve.prior_source import PriorSource
from dynid.identify.solve.prior_source import prior_source as read_prior_source
from dynid.identify.steps.run import IdentifyOptions, identify
from dynid.identify.validation.validate import OTHER_ESTIMATE_FIELDS, validate
from dynid.io.dataset import Dataset
from dynid.model.robot import RobotModel
from dynid.signal.preprocess import FilterSettings


@dataclass(frozen=True)
class Identification:
    """What one identification runs with, as a front end translated its settings.

    Attributes:
        spec, filters, options: the model, the data pipeline and the solver (:func:`dynid.identify.steps.run.identify`).
        force: keep a result the data cannot support (its reason the first warning); refused otherwise (the
            refusal names the field ``force`` for the front end to spell).
        drives_file: a drives file (:func:`dynid.model.drives.load_drives`) replacing the robot's drive data.
        holdout: the last fraction of each recording's time left out of the fit and validated on (None: none).
        spelling: how the front end spells the settings the diagnosis and a refusal's ways out advise, ``{}`` for
            the value (``torque_sign``, ``joint_states_effort``, ``torque_source``, ``decimation_cutoff_hz``;
            :func:`dynid.diagnosis.diagnose`), and ``force`` in the warning of a result kept (the command line's:
            ``dynid.cli.flags.ADVICE``); None: the field and the value.
    """

    spec: ModelSpec = field(default_factory=ModelSpec)
    filters: FilterSettings = field(default_factory=FilterSettings)
    options: IdentifyOptions = field(default_factory=IdentifyOptions)
    force: bool = False
    drives_file: str | None = None
    holdout: float | None = None
    spelling: dict | None = None


def physical_settings(prior: bool = True, physical: bool = False, prior_relative_std: float | None = None,
                      solver: str = IdentifierSettings.physical_solver,
                      prior_source: PriorSource | None = None) -> PhysicalSettings | None:
    """The prior and physical consistency as the front ends offer them: ``prior`` (pull toward the robot file, or
    ``prior_source``: :func:`dynid.identify.solve.prior_source.prior_source`; consistent where that costs little),
    ``physical`` (always consistent); neither: None, the plain linear solution."""
    if not (prior or physical):
        return None
    return PhysicalSettings(prior=prior, prior_relative_std=prior_relative_std,
                            consistency='always' if physical else 'auto', solver=solver, prior_source=prior_source)


def identify_with_settings(robot: RobotModel, recordings: list[RecordingInput], settings: IdentifierSettings,
                           output: str | Path, robot_spec: str, *, filters: FilterSettings | None = None,
                           prior_source: PriorSource | None = None, prior_relative_std: float | None = None,
                           rotor_compensation: bool = True, drives_file: str | None = None,
                           holdout: float | None = None, validation: Sequence[tuple[str, Dataset]] = (),
                           report: str | Path | None = None, spelling: dict | None = None,
                           progress: Callable[[str], None] | None = None) -> tuple[IdentificationResult, Path | None]:
    """The identification job from its settings, the one call ``dynid identify`` and identifier_node make: ``settings``
    translated into an :class:`Identification` once, then :func:`identify_and_save`.

    Args:
        robot, recordings, output, robot_spec, validation, report, progress: as :func:`identify_and_save` takes them
            (the front end reads the recordings, with ``settings.torque_sign`` applied, and places the report).
        settings: the job's settings (:class:`dynid.identify.settings.IdentifierSettings`); its filter fields are read
            where ``filters`` is None.
        prior_source: the prior ``settings.prior_source`` names, already read by a front end that refuses a bad one
            before reading the recordings; None: read here (:func:`dynid.identify.solve.prior_source.prior_source`).
        prior_relative_std: the prior's relative σ (None: chosen by cross-validation).
        rotor_compensation: with currents, subtract B·θ̈ where the recordings have motor encoders; False: identify
            the rotor inertias instead.
        drives_file, holdout, spelling: as :class:`Identification` holds them.

    Returns:
        (the result as saved, the report's index or None); InputError naming the settings' fields otherwise.
    """
    spec = ModelSpec(friction=settings.friction, temperature=settings.temperature,
                     torque_source=settings.torque_source, exclude_joints=joint_names(settings.exclude_joints),
                     rotor_compensation=None if rotor_compensation else False, rotor_inertia=not rotor_compensation)
    if filters is None:
        filters = FilterSettings(position_cutoff_hz=settings.position_cutoff_hz or None,
                                 decimation_cutoff_hz=settings.decimation_cutoff_hz or None,
                                 stiction_velocity=settings.stiction_velocity)
    method_options = parse_method_options(settings.method_option)
    if prior_source is None and settings.prior_source:
        prior_source = read_prior_source(settings.prior_source, robot)
    options = IdentifyOptions(method=settings.method, method_options=method_options,
                              physical=physical_settings(settings.prior, settings.physical, prior_relative_std,
                                                         settings.physical_solver, prior_source))
    identification = Identification(spec, filters, options, settings.force, drives_file, holdout, spelling)
    return identify_and_save(robot, recordings, identification, output, robot_spec, validation, report, progress)


def joint_names(texts: Iterable[str]) -> tuple[str, ...]:
    """The joint names of repeated or comma-separated entries ('a,b', 'c' → ('a', 'b', 'c'))."""
    return tuple(name.strip() for text in texts for name in text.split(',') if name.strip())


def _split_holdout(recordings: list[RecordingInput], holdout: float | None) -> list:
    """The last ``holdout`` of each recording's time taken out of ``recordings`` (in place): [(recording, the part
    held out)]; none where ``holdout`` is None."""
    held_out = []
    for i, recording in enumerate(recordings if holdout is not None else ()):
        train, test = recording.dataset.split_holdout(holdout)
        recordings[i] = dataclasses.replace(recording, dataset=train)
        held_out.append((recording, test))
    return held_out


def identify_and_save(robot: RobotModel, recordings: list[RecordingInput], identification: Identification,
                      output: str | Path, robot_spec: str, validation: Sequence[tuple[str, Dataset]] = (),
                      report: str | Path | None = None,
                      progress: Callable[[str], None] | None = None) -> tuple[IdentificationResult, Path | None]:
    """Identify ``robot`` from ``recordings`` and save the result to ``output`` (module docstring).

    Args:
        robot: the robot model, as :func:`dynid.model.load_robot` gave it from ``robot_spec`` (a built-in
            name, a file path or URDF text), which the result records.
        recordings: the recordings to identify from, read and checked by the front end.
        identification: the model, pipeline, solver and the rest (:class:`Identification`).
        output: the result file (YAML) to write.
        validation: (name, recording) pairs to validate on: metrics ``validation``, ``validation_2``, ...
        report: a folder for ``index.html`` and the plots, or None for none.
        progress: takes one line per step.

    Returns:
        (the result as saved, the report's index or None). Raises InputError for bad data and where the data
        cannot support the model unless ``identification.force``; nothing is written then.
    """
    from dynid.identify.outputs.report import write_report
    from dynid.model.drives import load_drives

    progress = progress or (lambda text: None)
    drives = None if identification.drives_file is None else load_drives(identification.drives_file,
                                                                         robot.joint_names)
    progress('checking the torque channels against the robot file')
    channel_warnings, dead = check_channels(robot, recordings, identification, drives)
    progress(f'diagnosing {len(recordings)} recording(s) together: effort, sign, scale, robot file')
    diagnosis = diagnose_inputs(robot, recordings, identification.spelling, identification.spec.torque_source)
    held_out = _split_holdout(recordings, identification.holdout)
    try:
        result = identify(robot, recordings, identification.spec, identification.filters, identification.options,
                          drives=drives, progress=progress)
    except TooFewRowsError as error:  # more rows from the same recordings: the settings that give them, tried
        tried = ways_out(robot, recordings, identification, drives, _filters_of(recordings, identification),
                         progress, validation=validation, methods=error.methods)  # more equations, or fewer needed
        if not tried:
            raise
        raise InputError(f'{error.finding or error.template}; {tried}', fields=error.fields) from None
    bias, diagnosis.details['ls_bias'] = least_squares_bias(
        robot, recordings, identification.spec, identification.filters, identification.options.method, drives,
        identification.spelling, progress)
    diagnosis.findings += [bias] if bias is not None else []
    result.diagnosis_section = diagnosis.to_dict()
    spelling = {**WAY_OUT_SPELLING, **(identification.spelling or {})}
    result.warnings[:0] = diagnosis.warnings() + channel_warnings
    result.warnings = spelled(result.warnings, spelling)
    refuse_unless_forced(result, identification.force,
                         lambda: ways_out(robot, recordings, identification, drives,
                                          result.provenance.get('filters') or {}, progress, refused=result,
                                          validation=validation), spelling)
    if not dead:
        _compare_sources(result, robot, recordings, identification, drives, progress)
    record_robot(result.provenance, robot_spec, robot.urdf_joints)
    if drives is not None:
        result.provenance['drives'].update(file=str(Path(identification.drives_file).resolve()),
                                           sha256=file_sha256(identification.drives_file))
    for i, (name, dataset) in enumerate(validation):
        progress(f'validating on {name}')
        metrics = validate(result, robot, dataset, name=name)
        metrics['warnings'] = spelled([*metrics.get('warnings', []),
                                       *validation_warnings(metrics, result.metrics.get('train'))], spelling)
        result.metrics['validation' if i == 0 else f'validation_{i + 1}'] = metrics
    if held_out:
        result.provenance['holdout'] = {'fraction': identification.holdout,
                                        'part': 'the last part of each recording in time'}
    for i, (recording, dataset) in enumerate(held_out):
        progress(f'validating on the held-out last {identification.holdout:g} of {recording.name}')
        metrics = validate(result, robot, dataset, recording.payload, name=f'{recording.name} (held out)',
                           payload_mass=recording.payload_mass)
        metrics['warnings'] = spelled([*metrics.get('warnings', []),
                                       *validation_warnings(metrics, result.metrics.get('train'))], spelling)
        result.metrics['holdout' if i == 0 else f'holdout_{i + 1}'] = metrics
    result.save(output)
    if report is None:
        return result, None
    progress('writing the report')
    return result, write_report(report, result, robot, [r.dataset for r in recordings],
                                [dataset for _, dataset in validation])


def _compare_sources(result: IdentificationResult, robot: RobotModel, recordings: Sequence[RecordingInput],
                     identification: Identification, drives, progress: Callable[[str], None]) -> None:
    """Which torque source predicts the held-out rows better
    (:func:`dynid.identify.job.torque_sources.compare_sources`), in the result's provenance ``torque_sources`` (the
    front ends say it: :func:`dynid.identify.job.torque_sources.comparison_line`)."""
    comparison = compare_sources(robot, recordings, identification, drives, result.model.get('torque_source') or '',
                                 progress)
    if comparison is not None:
        result.provenance['torque_sources'] = comparison


#: the settings the identification's warnings name, written ``{field}`` (the prior,
#: :func:`dynid.identify.steps.plausibility.offset_gravity_split`; validation's,
#: :data:`dynid.identify.validation.validate.OTHER_ESTIMATE_FIELDS`), beside the methods' flagged options (the drive
#: gains' advice, ``{fix_drive_gain}``: :func:`dynid.identify.registry.flagged_names`): spelled as the front end's
#: ``spelling`` says before the result is kept
ADVISED_FIELDS = ('payload_com', 'prior', 'method_option', *OTHER_ESTIMATE_FIELDS)


def spelled(lines: Iterable[str], spelling: dict[str, str]) -> list[str]:
    """``lines`` with each ``{field}`` of :data:`ADVISED_FIELDS` and each flagged method option as the front end's
    ``spelling`` writes it (the field's own name where it has none)."""
    fields = (*ADVISED_FIELDS, *flagged_names())
    return [spell(line, fields, lambda field: spelling.get(field, field)) for line in lines]


def _filters_of(recordings: Sequence[RecordingInput], identification: Identification) -> dict:
    """The rate [Hz] and decimation cut-off [Hz] an identification of ``recordings`` uses ('rate_hz',
    'decimation_cutoff_hz', as a result's provenance records them): the first recording's rate, the cut-off the
    filters resolve for it (given, or derived from the rate:
    :meth:`dynid.signal.preprocess.FilterSettings.validated`)."""
    rate = recordings[0].dataset.rate_hz if recordings else None
    if not rate or not rate > 0:
        return {}
    return {'rate_hz': rate, 'decimation_cutoff_hz': identification.filters.validated(rate).decimation_cutoff_hz}


def diagnose_inputs(robot: RobotModel, recordings: Sequence[RecordingInput], spelling: dict | None = None,
                    torque_source: str | None = None) -> Diagnosis:
    """The one diagnosis of an identification's recordings (:func:`dynid.diagnosis.diagnose`), with what the front
    end recorded was said of their effort (``source['effort_said']`` of the first recording that has it: the user's
    option or the recording's own record), each recording's payload (a mass alone placed by the data) and what the
    identification reads the effort as (``torque_source``: advice it already follows is not given)."""
    said, said_by = None, ''
    for recording in recordings:
        told = recording.dataset.source.get('effort_said')
        if told:
            said, said_by = told.get('said'), told.get('said_by') or ''
            break
    return diagnose([Recording(r.dataset, r.payload, r.name, r.payload_mass) for r in recordings], robot,
                    None if said == 'none' else said, said_by, spelling, torque_source=torque_source)
