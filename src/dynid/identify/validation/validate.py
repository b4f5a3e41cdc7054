"""Validation: predict the torques of another recording with an identification result.

The recording goes through the same pipeline (filters, decimation, model columns) as the training
data, rebuilt from the result's model and provenance; the prediction is W·χ̂. Metrics: RMSE and
NRMSE fit per joint, relative residual ‖y − ŷ‖/‖y‖. :func:`recover_payload` estimates an unknown
payload on the recording from what the identified model leaves unexplained (Gautier & Briot's
payload-mass check on validation runs).

Beside the identified model, the robot file's own model (its link inertias, with the rotor inertias, Coulomb +
viscous friction and an offset fitted at identification whatever law the result chose: ``prior.robot_file_reference``
of the result, :mod:`dynid.identify.solve.reference`; a result without it: ``prior.robot_file_model``, the result's law)
predicts the same rows; every joint it predicts better, or alike (within 5 % of the result's RMSE either way), is
named by the rule identify names a joint by on its folds (:mod:`dynid.identify.result.lead`): a warning where it is
ahead on each of five contiguous stretches of the joint's rows (fewer where it has fewer than ten rows) and by at least
5 %, else a note (``notes``): alike, or the lead with the share of stretches it holds on. With coupled drives the
joints' torques (``joint_space``) are judged by the same rule, their lines beside the motors'.

Another robot file (``other``: a vendor's URDF, a colleague's identified one) predicts the same rows too,
shown beside the result and not judged: its rigid-body torque by its own inverse dynamics (pinocchio's RNEA,
so its link frames need not match the result's) on the same filtered states and decimation as the
equations, plus the identification's friction (and, where the identification modelled rotor inertia,
the reflected rotor inertias of the other file's drives, else of the result's robot, times the same
rotor acceleration). Joints left out of the identification (``exclude_joints``) are not scored.

A load the identification knew by its mass alone was placed by the data: its first moment and inertia cannot be
told from the last link's and are regrouped with them (the last link's parameters then end in ``R``). A recording
with that load given by its mass (``payload_mass``) is predicted with the same structure, the known mass's torque
included; a recording without it, or with another load, is predicted with those regrouped parameters in place of
the last link's own, that is with the identification's load still on the flange (the front end says so). ``holdout``
scores only the last part of a recording in time (:func:`dynid.io.dataset.Dataset.split_holdout`).

With drives that couple joints (a coupling C, :mod:`dynid.model.drives`) the equations are the motors' (one per
drive, named after the joint it is declared under); the metrics score them, and ``joint_space`` scores the joints'
torques they make, τ = Cᵀ·(K_τ·i) per sample (the rotors' B·θ̈ added back to the measured and the predicted torque
where identification subtracted it), of the identified model and of the robot file's own: the torque a user of the
arm compares. A joint is scored on the samples where every motor that turns it has its row (:func:`joint_space`). A
result's friction on a joint's own velocity (:mod:`dynid.identify.equations.joint_side`) is a column of the motors'
equations, as at identification.

Each model's metrics (the result's, the robot file's own, another robot file's) gain ``failed`` where its prediction
goes beyond ten times a joint's effort limit (:func:`dynid.identify.result.metrics.failed_model`): the front ends name
the failure instead of printing its figures.

A recording that lost samples has its short gaps bridged and is split at the others exactly as for
identification; pieces too short for the filters and the decimation are left out, and the metrics
carry the share of the recording used (``usage``, ``used_fraction``) and the gap summary under
``gaps`` (its ``summary`` is the one line for people).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dynid.errors import InputError
from dynid.identify.equations.problem import IdentificationProblem, problem_for
from dynid.identify.equations.read import USED_WARNING_FRACTION, RecordingGaps
from dynid.identify.equations.request import ModelSpec, RecordingInput
from dynid.identify.result.lead import Lead, judge, stretch_errors
from dynid.identify.result.metrics import equation_metrics, failed_model
from dynid.identify.result.result import MODEL_KEYS, IdentificationResult, result_drives
from dynid.identify.solve.reference import reference_block, reference_rows
from dynid.io.dataset import Dataset
from dynid.model.drives import JointDrives
from dynid.model.inertial import Payload
from dynid.model.robot import RobotModel
from dynid.signal.preprocess import FilterSettings, differentiate


@dataclass
class Prediction:
    """Measured and predicted torque rows of a recording (decimated; rows of ``joints``)."""

    measured: np.ndarray
    predicted: np.ndarray
    joints: np.ndarray
    problem: IdentificationProblem
    design: np.ndarray
    robot_file: np.ndarray | None = None  # the robot file's own model's prediction (module docstring)
    other: np.ndarray | None = None  # another robot file's prediction (module docstring)
    other_label: str = ''
    left_out: tuple[str, ...] = ()  # joints left out of the identification: not scored
    joint_rows: tuple | None = None  # coupled drives: the joints' torques (:func:`joint_space`)
    other_estimate: np.ndarray | None = None  # the estimate of the other consistency decision's prediction
    other_consistent: bool = False  # ... which is the physically consistent one

    @property
    def gaps(self) -> RecordingGaps:
        """The recording's lost samples and the contiguous pieces used."""
        return self.problem.gaps[0]

    def robot_file_leads(self, n: int) -> list[Lead]:
        """Per joint the robot file's own model against the result on :data:`dynid.identify.result.lead.LEAD_STRETCHES`
        contiguous stretches of its rows, fewer for a joint with fewer rows
        (:func:`dynid.identify.result.lead.stretch_errors`; :func:`dynid.identify.result.lead.judge`: the rule identify
        names a joint by on its folds)."""
        return _leads(self.measured, self.predicted, self.robot_file, self.joints, n)

    def _robot_file_ahead(self, n: int) -> np.ndarray:
        """(n,) whether the robot file's own model is clearly ahead on each joint (:attr:`Lead.clear`)."""
        return np.array([lead.clear for lead in self.robot_file_leads(n)], dtype=bool)

    def metrics(self, joint_names) -> dict:
        """Equation metrics, the share of the recording used (``usage``, its line; ``used_fraction``), ``gaps``
        (:meth:`RecordingGaps.to_dict`) when samples were lost or less than 90 % was used, and ``robot_file``
        (the robot file's own model's metrics) with a warning for every joint it predicts better."""
        limits = self.problem.robot.effort_limits
        metrics = _judged(equation_metrics(self.measured, self.predicted, self.joints, joint_names, self.left_out),
                          (self.measured, self.predicted, self.joints), joint_names, limits)
        if self.other is not None:
            other = equation_metrics(self.measured, self.other, self.joints, joint_names, self.left_out)
            metrics['compare_robot'] = _judged({'robot': self.other_label, **{
                key: other[key] for key in ('relative_residual', 'rmse', 'joints')}},
                (self.measured, self.other, self.joints), joint_names, limits)
        metrics['usage'] = self.gaps.line()
        metrics['used_fraction'] = self.gaps.used_fraction
        if self.robot_file is not None:
            reference = equation_metrics(self.measured, self.robot_file, self.joints, joint_names, self.left_out)
            metrics['robot_file'] = _judged({key: reference[key] for key in ('relative_residual', 'rmse', 'joints')},
                                            (self.measured, self.robot_file, self.joints), joint_names, limits)
            _name_leads(metrics, reference, self.robot_file_leads(len(joint_names)), 'this recording')
        if self.gaps.summary.gaps or self.gaps.used_fraction < USED_WARNING_FRACTION:
            metrics['gaps'] = self.gaps.to_dict()
        if self.other_estimate is not None:
            _other_estimate(metrics, equation_metrics(self.measured, self.other_estimate, self.joints, joint_names,
                                                      self.left_out), self.other_consistent)
        if self.joint_rows is not None:
            measured, predicted, robot_file, joints = self.joint_rows
            space = _judged(equation_metrics(measured, predicted, joints, joint_names, self.left_out),
                            (measured, predicted, joints), joint_names, limits)
            space.pop('warnings', None)  # the motors' metrics said what could not be scored
            if robot_file is not None:
                reference = equation_metrics(measured, robot_file, joints, joint_names, self.left_out)
                space['robot_file'] = _judged({key: reference[key] for key in ('relative_residual', 'rmse', 'joints')},
                                              (measured, robot_file, joints), joint_names, limits)
                leads = _leads(measured, predicted, robot_file, joints, len(joint_names))
                _name_leads(space, reference, leads, 'this recording\'s joint torques')
            metrics['joint_space'] = space
        return metrics


def _judged(block: dict, rows: tuple, joint_names, limits) -> dict:
    """``block`` (one model's metrics) with ``failed`` where its prediction goes far beyond what the arm can produce
    (:func:`dynid.identify.result.metrics.failed_model`; ``rows``: the measured, the model's predicted torque and the
    joint of each row)."""
    measured, predicted, joints = rows
    failed = failed_model(predicted, joints, joint_names, limits, measured)
    return {**block, 'failed': failed} if failed else block


def _leads(measured: np.ndarray, predicted: np.ndarray, robot_file: np.ndarray, joints: np.ndarray, n: int
           ) -> list[Lead]:
    """Per joint the robot file's own model (``robot_file``) against the result (``predicted``) on contiguous
    stretches of the joint's rows (:func:`dynid.identify.result.lead.stretch_errors`,
    :func:`dynid.identify.result.lead.judge`)."""
    return judge(stretch_errors(measured, predicted, joints, n), stretch_errors(measured, robot_file, joints, n))


def _name_leads(metrics: dict, theirs: dict, leads: list[Lead], where: str) -> None:
    """Append to ``metrics``' warnings (clearly ahead) or notes the line of every joint ``leads``
    (:func:`dynid.identify.result.lead.judge`) names beside the robot file's own model (``metrics``, ``theirs``: the two
    models' equation metrics on the rows judged, which ``where`` describes)."""
    for lead, (name, own) in zip(leads, metrics['joints'].items(), strict=True):
        other = theirs['joints'][name]
        if own['rmse'] is None or other['rmse'] is None or not lead.named:
            continue
        line = lead.line(name, where, other['rmse'], own['rmse'])
        metrics.setdefault('warnings' if lead.clear else 'notes', []).append(line)


#: The other consistency decision's estimate is named where its relative residual on the recording is lower than
#: the result's by more than this fraction (the margin by which the model choice keeps a richer friction law).
OTHER_ESTIMATE_MARGIN = 0.05
#: the settings the other estimate's warning names, as ``{field}`` for the front end to spell
OTHER_ESTIMATE_FIELDS = ('physical',)


def _other_estimate(metrics: dict, other: dict, consistent: bool) -> None:
    """``metrics['other_estimate']`` (the other consistency decision's estimate on the same rows) and, where it
    predicts the recording better by more than :data:`OTHER_ESTIMATE_MARGIN`, a warning that says which, by how
    much and what gives it: consistency asked for (the field ``{physical}``, which the front end spells:
    :data:`OTHER_ESTIMATE_FIELDS`) gives a consistent estimate, this one where the model chosen under consistency is
    the same (on a log whose laws the folds choose alike); the unconstrained one (consistency enforced by the auto
    rule) no setting gives."""
    metrics['other_estimate'] = {'physically_consistent': consistent,
                                 **{key: other[key] for key in ('relative_residual', 'rmse', 'joints')}}
    mine, theirs = metrics['relative_residual'], other['relative_residual']
    if mine is None or theirs is None or not theirs < (1.0 - OTHER_ESTIMATE_MARGIN) * mine:
        return
    which = 'physically consistent' if consistent else 'unconstrained'
    how = ('{physical} gives a consistent estimate, its model chosen again under consistency' if consistent else
           'no setting of the identification gives it: the prior\'s estimate left inconsistent')
    metrics.setdefault('warnings', []).append(
        f'the {which} estimate the identification computed and did not keep (prior.consistency.other_estimate; '
        f'{how}) predicts '
        f'this recording better: relative residual {theirs:.4g} against the model identified\'s {mine:.4g} '
        f'({theirs / mine:.2f}×); per joint RMSE ' + ', '.join(
            f'{name} {entry["rmse"]:.4g}' for name, entry in other['joints'].items() if entry['rmse'] is not None)
        + ' N·m')


def _problem_for(result: IdentificationResult, robot: RobotModel, recording: RecordingInput,
                 drives: JointDrives | None = None, exclude_joints: tuple[str, ...] = ()) -> IdentificationProblem:
    if tuple(result.joint_names) != tuple(robot.joint_names):
        raise InputError(f'the result is for joints {list(result.joint_names)}, '
                         f'the robot has {list(robot.joint_names)}')
    model = result.model
    missing = [key for key in MODEL_KEYS if key not in model]
    if missing:
        raise InputError(f'the result\'s model has no {", ".join(missing)}: not a result of dynid identify?')
    spec = ModelSpec(friction=model['friction'], temperature=model['temperature'],
                     torque_source=model['torque_source'], rotor_compensation=model['rotor_compensation'],
                     rotor_inertia=model['rotor_inertia_identified'],
                     hamon_velocity=model.get('hamon_velocity', 0.03), exponent=model.get('exponent', 1.0),
                     power_form=model.get('power_form', 'plain'),
                     exclude_joints=tuple(exclude_joints), joint_side_friction=bool(result.joint_side_joints))
    settings = FilterSettings.from_dict(result.provenance.get('filters') or {})
    return problem_for(robot, [recording], spec, settings, result_drives(result, robot, drives),
                       stribeck=result.stribeck, joint_side=result.joint_side_joints)


def _name(dataset: Dataset, name: str | None) -> str:
    return name or dataset.source.get('bag') or 'validation'


def left_out_joints(result: IdentificationResult) -> tuple[str, ...]:
    """The joints whose equations the identification left out (``exclude_joints``): not scored."""
    left = result.model.get('exclude_joints') or ()
    return tuple(name for name in left if isinstance(name, str) and name in result.joint_names)


def predict(result: IdentificationResult, robot: RobotModel, dataset: Dataset,
            payload: Payload | None = None, name: str | None = None, drives: JointDrives | None = None,
            exclude_joints: tuple[str, ...] = (), other: RobotModel | None = None,
            payload_mass: float | None = None) -> Prediction:
    """Torques of ``dataset`` as measured and as the result predicts them (``payload``: known payload;
    ``payload_mass``: a load known by its mass alone, placed as the identification placed it, module docstring;
    ``name``: the recording's name in messages, default its bag; ``drives``: see :func:`result_drives`;
    ``exclude_joints``: joints whose equations are left out, e.g. joints at rest, beside those the
    identification left out; ``other``: another robot file predicting the same rows, module docstring)."""
    exclude_joints = tuple(dict.fromkeys((*left_out_joints(result), *exclude_joints)))
    problem = _problem_for(result, robot, RecordingInput(dataset, payload=payload, payload_mass=payload_mass,
                                                         name=_name(dataset, name)), drives, exclude_joints)
    names = _names_in(result, problem.parameter_names())
    values = np.array([result.value(n) for n in names])
    rigid = values[:len(problem.rigid_names)]
    exponents = result.exponents
    w, y, joints, _, _ = problem.equations(rigid, exponents)
    reference, file_values = result.robot_file_reference(), result.robot_file_values()
    robot_file = file_full = None
    if reference is not None:  # the fixed reference (dynid.identify.solve.reference), whatever law the result chose
        robot_file = reference_rows(problem, reference, w)
    elif file_values is not None:  # a result from before it: the file's links with the result's law fitted
        order = {name: i for i, name in enumerate(result.parameter_names)}
        file_full = np.array([file_values[order[n]] for n in names])
        robot_file = w @ file_full
    other_torque = None if other is None else _other_prediction(problem, other, w, values)
    joint_rows = None if problem.coupling is None else joint_space(problem, values, exponents, file_full, reference)
    estimate = None if identified_on(result, dataset) else result.other_estimate()  # on its own rows: no news
    second = None if estimate is None else _second_prediction(problem, w, names, estimate[1], exponents)
    return Prediction(y, w @ values, joints, problem, w, robot_file, other_torque,
                      '' if other is None else (other.source or other.name), left_out_joints(result), joint_rows,
                      second, estimate is not None and estimate[0])


def identified_on(result: IdentificationResult, dataset: Dataset) -> bool:
    """Whether ``dataset`` is one of the recordings ``result`` was identified on (its bag's start and its samples
    as the result's provenance records them)."""
    start = dataset.source.get('start_ns')
    return start is not None and any(
        entry.get('source', {}).get('start_ns') == start and entry.get('samples') == len(dataset.t)
        for entry in (result.provenance or {}).get('inputs', []))


def _second_prediction(problem: IdentificationProblem, w: np.ndarray, names: list[str], values: dict[str, float],
                       exponents) -> np.ndarray:
    """The torque rows another estimate of the same model predicts (its own τ_out where the law reads it)."""
    x = np.array([values[name] for name in names])
    if problem.spec.uses_load:
        w = problem.equations(x[:len(problem.rigid_names)], exponents)[0]
    return w @ x


def joint_space(problem: IdentificationProblem, values: np.ndarray, exponents: np.ndarray | None,
                other_values: np.ndarray | None = None, reference: dict[str, float] | None = None):
    """The joints' torques of a problem whose equations are the motors' (drives with a coupling C): τ = Cᵀ·y per
    decimated sample, of the measured torque and of the model with parameters ``values`` (and ``other_values``,
    e.g. the robot file's), the rotors' B·θ̈ added back where identification subtracted it (module docstring).

    ``reference``: the robot file's fixed reference (:mod:`dynid.identify.solve.reference`) as the other model instead.

    Returns:
        (measured, predicted, other or None, joint of each row) [N·m]: the rows of joint j where every motor that
        turns it (C_kj ≠ 0) has its row in the equations (stiction rejection, left-out joints).
    """
    coupling = problem.coupling
    n = problem.robot.n
    exponents = np.full(n, problem.spec.exponent) if exponents is None else exponents
    rigid = values[:len(problem.rigid_names)]
    turns = coupling != 0.0  # (motor, joint)
    parts = []
    for k, block in enumerate(problem.blocks):
        w = problem.block_equations(k, rigid, exponents)
        rotor = problem.drives.rotor_inertia * block.rotor_acceleration if problem.compensate_rotor else 0.0
        theirs = w @ other_values if other_values is not None else \
            reference_block(problem, reference, k, w) if reference is not None else None
        series = [block.y + rotor, w @ values + rotor] + ([] if theirs is None else [theirs + rotor])
        keep = problem.block_keep(k)
        kept = np.stack([keep[:, turns[:, j]].all(axis=1) for j in range(n)], axis=1)
        joints = np.broadcast_to(np.arange(n), kept.shape)[kept]
        parts.append([(torque @ coupling)[kept] for torque in series] + [joints])
    columns = [np.concatenate(column) for column in zip(*parts, strict=True)]
    return columns[0], columns[1], columns[2] if len(columns) == 4 else None, columns[-1]


def _other_prediction(problem: IdentificationProblem, other: RobotModel, w: np.ndarray,
                      values: np.ndarray) -> np.ndarray:
    """The rows of ``w`` predicted with ``other``'s links (RNEA on the equations' filtered states, decimated and
    kept as they are) and the identification's friction (module docstring)."""
    if tuple(other.joint_names) != tuple(problem.robot.joint_names):
        raise InputError(f'robot file {other.source or other.name} has joints {list(other.joint_names)}, the result '
                         f'{list(problem.robot.joint_names)} (give {{joints}} or a joint map to select them)',
                         fields=('joints',))
    rigid = len(problem.rigid_names)
    reflected = next((d.rotor_inertia for d in (other.drives, problem.drives) if d is not None), None)
    rotor = reflected if problem.identify_rotor_inertia else None
    return model_rows(problem, other.inverse_dynamics, rotor) + w[:, rigid:] @ values[rigid:]


def model_rows(problem: IdentificationProblem, torque_of, rotor_inertia=None) -> np.ndarray:
    """The equations' rows of ``problem`` as another model predicts them: ``torque_of(q, dq, ddq)`` [rad, rad/s,
    rad/s² → N·m, (N, n)] on each recording's filtered states, mapped onto the motors where the drives couple
    joints, decimated and kept as the equations are; ``rotor_inertia`` [kg·m², link side] adds B·θ̈ where the
    problem identifies the rotor inertias. Scores a model given as code (a data author's) on the same rows as
    :func:`predict`'s ``measured``."""
    parts = []
    for k, block in enumerate(problem.blocks):
        signals, _ = differentiate(problem.recordings[k].dataset, problem.settings)
        torque = np.asarray(torque_of(signals.q, signals.dq, signals.ddq), dtype=float)
        if problem.coupling is not None:  # the motors' equations (dynid.identify.equations.problem)
            torque = problem.drives.joint_to_motor_torque_space(torque)
        torque = block.decimator(torque)
        if rotor_inertia is not None:
            torque = torque + np.asarray(rotor_inertia)[None, :] * block.rotor_acceleration
        parts.append(torque[problem.block_keep(k)])
    return np.concatenate(parts)


def predict_series(result: IdentificationResult, robot: RobotModel, dataset: Dataset,
                   payload: Payload | None = None, name: str | None = None, drives: JointDrives | None = None,
                   payload_mass: float | None = None):
    """(times (M,), measured (M, n), predicted (M, n), used (M, n)) of a recording, for plots.

    A recording split at lost samples gives one stretch per piece used, separated by a NaN row.
    """
    problem = _problem_for(result, robot, RecordingInput(dataset, payload=payload, payload_mass=payload_mass,
                                                         name=_name(dataset, name)), drives)
    names = _names_in(result, problem.parameter_names())
    values = np.array([result.value(n) for n in names])
    exponents = result.power_exponents()
    gap = (np.full(1, np.nan), np.full((1, robot.n), np.nan), np.full((1, robot.n), np.nan),
           np.zeros((1, robot.n), dtype=bool))
    parts = []
    for k in range(len(problem.blocks)):
        w = problem.block_equations(k, values[:len(problem.rigid_names)], exponents)
        parts += [gap] if parts else []
        parts.append((problem.block_times(k), problem.blocks[k].y, w @ values, problem.block_keep(k)))
    return tuple(np.concatenate(column) for column in zip(*parts, strict=True))


def validate(result: IdentificationResult, robot: RobotModel, dataset: Dataset,
             payload: Payload | None = None, name: str | None = None, drives: JointDrives | None = None,
             other: RobotModel | None = None, payload_mass: float | None = None) -> dict:
    """Validation metrics of ``result`` on ``dataset`` (module docstring); ``other``: another robot file scored
    beside it (``compare_robot``); ``payload_mass``: see :func:`predict`."""
    return predict(result, robot, dataset, payload, name, drives, other=other,
                   payload_mass=payload_mass).metrics(robot.joint_names)


def _names_in(result: IdentificationResult, names: list[str]) -> list[str]:
    """The result's names of the parameters ``names`` the recording's model needs (module docstring: a link
    parameter the identification regrouped with a load placed by the data stands for it where the recording's
    model has it alone)."""
    held = set(result.parameter_names)
    blocks = int((result.model or {}).get('payload_blocks', 0))
    chosen = [n if n in held or not blocks or f'{n}R' not in held else f'{n}R' for n in names]
    missing = [n for n in chosen if n not in held]
    if missing:
        raise InputError(f'the result lacks parameters {missing} that this recording\'s model needs')
    return chosen


def recover_payload(result: IdentificationResult, robot: RobotModel, dataset: Dataset,
                    name: str | None = None, drives: JointDrives | None = None) -> dict:
    """Least-squares estimate of an unknown flange payload from the residual of the identified model.

    The payload columns are built per contiguous piece from the same filtered states and decimation
    as the equations. Returns {'mass': kg, 'mass_std': kg,
    'parameters': the 10 standard parameters about the flange}.
    """
    prediction = predict(result, robot, dataset, name=name, drives=drives)
    problem = prediction.problem
    parts = []
    for k, block in enumerate(problem.blocks):
        signals, _ = differentiate(problem.recordings[k].dataset, problem.settings)
        columns = robot.payload_regressor(signals.q, signals.dq, signals.ddq).reshape(len(signals.t), robot.n, 10)
        parts.append(block.decimator(columns)[problem.block_keep(k)])
    w = np.concatenate(parts)
    if w.shape[0] != prediction.measured.shape[0]:
        raise RuntimeError('payload columns and equations differ in length')
    residual = prediction.measured - prediction.predicted
    solution, *_ = np.linalg.lstsq(w, residual, rcond=None)
    error = residual - w @ solution
    variance = error @ error / max(1, len(error) - 10)
    covariance = variance * np.linalg.pinv(w.T @ w)
    return {'mass': float(solution[0]), 'mass_std': float(np.sqrt(covariance[0, 0])),
            'parameters': solution.tolist()}
