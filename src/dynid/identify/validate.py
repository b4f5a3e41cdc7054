"""Validation: predict the torques of another recording with an identification result.

The recording goes through the same pipeline (filters, decimation, model columns) as the training
data, rebuilt from the result's model and provenance; the prediction is W·χ̂. Metrics: RMSE and
NRMSE fit per joint, relative residual ‖y − ŷ‖/‖y‖. :func:`recover_payload` estimates an unknown
payload on the recording from what the identified model leaves unexplained (Gautier & Briot's
payload-mass check on validation runs).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dynid.errors import InputError
from dynid.identify.model import IdentificationProblem, ModelSpec, RecordingInput
from dynid.identify.preprocess import FilterSettings
from dynid.identify.result import IdentificationResult
from dynid.identify.run import equation_metrics
from dynid.io.dataset import Dataset
from dynid.model.drives import JointDrives
from dynid.model.inertial import Payload
from dynid.model.robot import RobotModel


@dataclass
class Prediction:
    """Measured and predicted torque rows of a recording (decimated; rows of ``joints``)."""

    measured: np.ndarray
    predicted: np.ndarray
    joints: np.ndarray
    problem: IdentificationProblem
    design: np.ndarray

    def metrics(self, joint_names) -> dict:
        return equation_metrics(self.measured, self.predicted, self.joints, joint_names)


def _problem_for(result: IdentificationResult, robot: RobotModel, recording: RecordingInput) -> IdentificationProblem:
    if tuple(result.joint_names) != tuple(robot.joint_names):
        raise InputError(f'the result is for joints {list(result.joint_names)}, '
                         f'the robot has {list(robot.joint_names)}')
    model = result.model
    spec = ModelSpec(friction=model['friction'], temperature=model['temperature'],
                     torque_source=model['torque_source'], rotor_compensation=model['rotor_compensation'],
                     rotor_inertia=model['rotor_inertia_identified'],
                     hamon_velocity=model.get('hamon_velocity', 0.03), exponent=model.get('exponent', 1.0))
    filters = result.provenance.get('filters') or {}
    settings = FilterSettings(**{k: v for k, v in filters.items() if k in FilterSettings.__dataclass_fields__})
    drives = robot.drives
    if result.drive_gains is not None:
        base = drives if drives is not None else JointDrives(robot.joint_names, 1.0, result.drive_gains, 0.0)
        drives = base.with_drive_gain(result.drive_gains)
    return IdentificationProblem(robot, [recording], spec, settings, drives)


def predict(result: IdentificationResult, robot: RobotModel, dataset: Dataset,
            payload: Payload | None = None) -> Prediction:
    """Torques of ``dataset`` as measured and as the result predicts them (``payload``: known payload)."""
    problem = _problem_for(result, robot, RecordingInput(dataset, payload=payload, name='validation'))
    names = problem.parameter_names()
    missing = [n for n in names if n not in result.parameter_names]
    if missing:
        raise InputError(f'the result lacks parameters {missing} that this recording\'s model needs')
    values = np.array([result.value(n) for n in names])
    rigid = values[:len(problem.rigid_names)]
    exponents = result.exponents
    w, y, joints, _, _ = problem.equations(rigid, exponents)
    return Prediction(y, w @ values, joints, problem, w)


def predict_series(result: IdentificationResult, robot: RobotModel, dataset: Dataset,
                   payload: Payload | None = None):
    """(times (M,), measured (M, n), predicted (M, n), used (M, n)) of a recording, for plots.

    A recording split at lost samples gives one stretch per piece, separated by a NaN row.
    """
    problem = _problem_for(result, robot, RecordingInput(dataset, payload=payload, name='series'))
    names = problem.parameter_names()
    values = np.array([result.value(n) for n in names])
    exponents = result.exponents if result.exponents is not None else np.full(robot.n, problem.spec.exponent)
    gap = (np.full(1, np.nan), np.full((1, robot.n), np.nan), np.full((1, robot.n), np.nan),
           np.zeros((1, robot.n), dtype=bool))
    parts = []
    for k in range(len(problem.blocks)):
        w = problem.block_equations(k, values[:len(problem.rigid_names)], exponents)
        parts += [gap] if parts else []
        parts.append((problem.block_times(k), problem.blocks[k].y, w @ values, problem.block_keep(k)))
    return tuple(np.concatenate(column) for column in zip(*parts, strict=True))


def validate(result: IdentificationResult, robot: RobotModel, dataset: Dataset,
             payload: Payload | None = None) -> dict:
    """Validation metrics of ``result`` on ``dataset`` (module docstring)."""
    return predict(result, robot, dataset, payload).metrics(robot.joint_names)


def recover_payload(result: IdentificationResult, robot: RobotModel, dataset: Dataset) -> dict:
    """Least-squares estimate of an unknown flange payload from the residual of the identified model.

    Returns {'mass': kg, 'mass_std': kg, 'parameters': the 10 standard parameters about the flange}.
    """
    prediction = predict(result, robot, dataset)
    problem = prediction.problem
    block = problem.blocks[0]
    signals_rows = block.rigid.shape[0]
    # Payload columns at the decimated samples: rebuild from the filtered states of the recording.
    from dynid.identify.preprocess import Decimator, differentiate

    signals, settings = differentiate(dataset, problem.settings)
    decimate = Decimator(settings, signals.rate_hz, len(signals.t))
    columns = robot.payload_regressor(signals.q, signals.dq, signals.ddq).reshape(len(signals.t), robot.n, 10)
    columns = decimate(columns)
    if columns.shape[0] != signals_rows:
        raise InputError('internal: payload columns and equations differ in length')
    keep = np.ones(block.velocity.shape, dtype=bool) if block.keep is None else block.keep
    w = columns[keep]
    residual = prediction.measured - prediction.predicted
    solution, *_ = np.linalg.lstsq(w, residual, rcond=None)
    error = residual - w @ solution
    variance = error @ error / max(1, len(error) - 10)
    covariance = variance * np.linalg.pinv(w.T @ w)
    return {'mass': float(solution[0]), 'mass_std': float(np.sqrt(covariance[0, 0])),
            'parameters': solution.tolist()}
