"""Coupled joints (a wrist whose last motor turns with q5 + q6): the twin simulates them, a motor-side log is
imported without a converter, and identification writes the motors' equations (dynid.model.drives)."""

import dataclasses
import json

import numpy as np
import pytest
import yaml

from builders import coupled_wrist_twin
from dynid.cli import main
from dynid.identify.equations.request import ModelSpec, RecordingInput
from dynid.identify.result.metrics import joint_metrics
from dynid.identify.result.result import IdentificationResult
from dynid.identify.steps.run import identify
from dynid.identify.validation.validate import predict_series, validate
from dynid.io.csv_log import parse_column_spec
from dynid.io.importing import ImportSettings, import_logs
from dynid.io.log_checks import LogLimits
from dynid.model import load_robot
from dynid.sim.parameters import PlantParameters
from dynid.sim.recording import record_to_dataset

ROBOT = load_robot('ur5e')
COUPLING = np.eye(6)
COUPLING[4, 4], COUPLING[5, 4] = -1.0, 1.0  # motor 5 turns against q5; motor 6 with q5 + q6
OFFSET = np.array([0.1, -0.2, 0.3, 1.1, -0.7, 0.35])  # [rad] the motor encoders' zero


def _drives():
    return dataclasses.replace(ROBOT.drives, coupling=COUPLING, motor_offset=OFFSET)


def _record(seed: int, seconds: float = 8.0, rate_hz: float = 500.0):
    return record_to_dataset(coupled_wrist_twin(ROBOT, COUPLING, seed, seconds, rate_hz), None,
                             {'simulation': f'seed {seed}'})


def _motor_log(dataset, path):
    """The twin's recording as a motor-side log: time, motor encoders [rad on the shaft], currents [A]."""
    motor = dataset.theta * ROBOT.drives.gear_ratio + OFFSET
    header = ['t'] + [f'mpos{i}' for i in range(6)] + [f'cur{i}' for i in range(6)]
    np.savetxt(path, np.column_stack([dataset.t, motor, dataset.current]), delimiter=',', header=','.join(header),
               comments='', fmt='%.12g')
    return path


@pytest.fixture(scope='module')
def motor_logs(tmp_path_factory):
    folder = tmp_path_factory.mktemp('coupled')
    (folder / 'drives.yaml').write_text(yaml.safe_dump(_drives().to_dict()))
    records = {seed: _record(seed) for seed in (3, 4)}
    return folder, {seed: (record, _motor_log(record, folder / f'log{seed}.csv')) for seed, record in records.items()}


def test_the_twin_moves_the_links_through_the_coupling(motor_logs):
    _, logs = motor_logs
    dataset = logs[3][0]
    # the motors' angles are C·q up to the joints' deflection (mrad), not q: motor 6 turns with q5 + q6
    assert np.abs(dataset.theta - dataset.q @ COUPLING.T).max() < 5e-3
    assert np.abs(dataset.theta[:, 5] - dataset.q[:, 5]).max() > 0.1


def test_a_motor_side_log_imports_without_a_converter(motor_logs):
    folder, logs = motor_logs
    truth, path = logs[3]
    spec = parse_column_spec('time=t,motor_q=mpos{i},current=cur{i}')
    dataset, report, _ = import_logs([path], spec, ROBOT.joint_names, LogLimits.of_robot(ROBOT),
                                     ImportSettings(drives=str(folder / 'drives.yaml')))
    assert dataset.n_samples == truth.n_samples
    np.testing.assert_allclose(dataset.theta, truth.theta, atol=1e-9)
    np.testing.assert_allclose(dataset.q, truth.theta @ np.linalg.inv(COUPLING).T, atol=1e-9)
    assert any('coupled joints' in line for line in report.lines())
    # without the drives file the robot's own drive data (no coupling, no offsets) would turn them: a different q
    plain, _, _ = import_logs([path], spec, ROBOT.joint_names, LogLimits.of_robot(ROBOT), drives=ROBOT.drives)
    assert np.abs(plain.q - dataset.q).max() > 0.1


def test_import_refuses_a_missing_drives_file(motor_logs, tmp_path, capsys):
    _, logs = motor_logs
    code = main(['import', str(logs[3][1]), '--columns', 'time=t,motor_q=mpos{i},current=cur{i}', '--robot', 'ur5e',
                 '--drives', str(tmp_path / 'none.yaml'), '-o', str(tmp_path / 'bag')])
    assert code == 2
    assert '--drives' in capsys.readouterr().err
    assert not (tmp_path / 'bag').exists()


def test_identification_writes_the_motors_equations(motor_logs):
    folder, logs = motor_logs
    spec = parse_column_spec('time=t,motor_q=mpos{i},current=cur{i}')
    settings = ImportSettings(drives=str(folder / 'drives.yaml'))
    train, held = (import_logs([logs[seed][1]], spec, ROBOT.joint_names, LogLimits.of_robot(ROBOT), settings)[0]
                   for seed in (3, 4))
    coupled = identify(ROBOT, [RecordingInput(train)], ModelSpec(friction='viscous_coulomb'), drives=_drives())
    metrics = validate(coupled, ROBOT, held, drives=_drives())
    fits = [m['nrmse_fit_percent'] for m in metrics['joints'].values()]
    assert min(fits) > 90.0, fits
    _, y, predicted, used = predict_series(coupled, ROBOT, held, drives=_drives())
    rows = used.all(axis=1) & np.isfinite(y).all(axis=1)
    joint_fits = [joint_metrics((y[rows] @ COUPLING)[:, j], (predicted[rows] @ COUPLING)[:, j])[0]['nrmse_fit_percent']
                  for j in range(6)]
    assert min(joint_fits) > 90.0, joint_fits
    # validate scores the joints' torques beside the motors': τ = Cᵀ·y on the samples where every motor that turns a
    # joint has its row (the rotors' B·θ̈, where subtracted, added back to both sides: the same residual)
    space = metrics['joint_space']
    for j, name in enumerate(ROBOT.joint_names):
        kept = used[:, COUPLING[:, j] != 0].all(axis=1) & np.isfinite(y).all(axis=1)
        residual = ((y - predicted) @ COUPLING)[kept, j]
        assert space['joints'][name]['rows'] == int(kept.sum())
        assert space['joints'][name]['rmse'] == pytest.approx(np.sqrt(np.mean(residual ** 2)), rel=1e-9)
    assert space['joints']['wrist_3_joint']['rmse'] == pytest.approx(metrics['joints']['wrist_3_joint']['rmse'])
    assert space['joints']['wrist_2_joint']['rmse'] != pytest.approx(metrics['joints']['wrist_2_joint']['rmse'])
    assert space['robot_file']['joints'].keys() == space['joints'].keys()
    # a joint whose torque the robot file's own model predicts better or alike (RMSE ratio below 1.05) is named there,
    # by the rule the motors' equations are judged by; the others are not
    said = {name: [line for line in space.get('notes', []) + space.get('warnings', []) if line.startswith(f'{name}:')]
            for name in ROBOT.joint_names}
    ratios = {name: space['robot_file']['joints'][name]['rmse'] / m['rmse'] for name, m in space['joints'].items()}
    for name, ratio in ratios.items():
        assert bool(said[name]) == (ratio < 1.05), (name, ratio, said[name])
        assert all("joint torques" in line for line in said[name])
    # the same log read as if each motor drove its own joint: the wrist's equations cannot hold
    plain = dataclasses.replace(_drives(), coupling=None)
    uncoupled = identify(ROBOT, [RecordingInput(train)], ModelSpec(friction='viscous_coulomb'), drives=plain)
    assert validate(uncoupled, ROBOT, held, drives=plain)['relative_residual'] > metrics['relative_residual']
    # the result records the coupling with its drives: validated without a drives file, the same motors' equations
    again = IdentificationResult.from_dict(yaml.safe_load(yaml.safe_dump(coupled.to_dict())))
    assert validate(again, ROBOT, held)['relative_residual'] == pytest.approx(metrics['relative_residual'], rel=1e-9)


def test_the_feedforward_applies_the_coupling(motor_logs):
    # The feedforward of a coupled result on another motion's true states against what the motors applied, Cᵀ·K·i:
    # its rotor inertia and friction are the motors', on θ = C·q, and reach the joints as Cᵀ·τ_m.
    from dynid.control.feedforward import Feedforward
    from dynid.errors import InputError

    _, logs = motor_logs
    result = identify(ROBOT, [RecordingInput(logs[3][0])], ModelSpec(friction='viscous_coulomb'), drives=_drives())
    params = PlantParameters.defaults(ROBOT)
    truth = coupled_wrist_twin(ROBOT, COUPLING, 4).truth
    applied = (truth['current'] * params.drives.drive_gain) @ COUPLING

    def fits(feedforward):
        predicted = feedforward.evaluate(truth['q'], truth['dq'], truth['link_acceleration'])
        return np.array([joint_metrics(applied[:, j], predicted[:, j])[0]['nrmse_fit_percent'] for j in range(6)])

    coupled = fits(Feedforward(ROBOT, result))
    assert coupled.min() > 85.0, coupled
    ignored = dataclasses.replace(result, provenance={**result.provenance, 'drives': {
        'joints': dataclasses.replace(_drives(), coupling=None).to_dict()}})
    plain = fits(Feedforward(ROBOT, ignored))  # the same model as if each motor drove its own joint
    assert plain[4:].max() < 70.0 and np.all(coupled[4:] > plain[4:] + 25.0), (coupled, plain)
    np.testing.assert_allclose(plain[:4], coupled[:4], atol=1e-6)  # the joints outside the coupling: unchanged
    # a term or an effort meaning that takes one drive per joint refuses it, naming the ones that apply it
    with pytest.raises(InputError, match='coupled joints'):
        Feedforward(ROBOT, result, terms=('rigid_body', 'friction_egms'))
    with pytest.raises(InputError, match='coupled joints') as refused:
        Feedforward(ROBOT, result, effort_is_current=True)
    assert refused.value.fields == ('effort_is_current',)


def test_the_online_estimators_refuse_a_coupled_result(motor_logs):
    from dynid.errors import InputError
    from dynid.estimate.replay import EstimationSettings, build_estimators

    _, logs = motor_logs
    result = identify(ROBOT, [RecordingInput(logs[3][0])], ModelSpec(friction='viscous_coulomb'), drives=_drives())
    for tolerant in (False, True):  # a running node keeps nothing it would estimate wrongly either
        with pytest.raises(InputError, match='couple joints'):
            build_estimators(ROBOT, result, EstimationSettings(), 500.0, tolerant=tolerant)


def test_the_command_line_prints_and_writes_both_spaces(motor_logs, tmp_path, capsys):
    folder, logs = motor_logs
    drives = str(folder / 'drives.yaml')
    bag, result = tmp_path / 'bag', tmp_path / 'result.yaml'
    assert main(['import', str(logs[3][1]), '--columns', 'time=t,motor_q=mpos{i},current=cur{i}', '--robot', 'ur5e',
                 '--drives', drives, '-o', str(bag)]) == 0
    assert main(['identify', str(bag), '--robot', 'ur5e', '--drives', drives, '--friction', 'viscous_coulomb',
                 '--method', 'wls', '--holdout', '0.3', '-o', str(result), '--quiet']) == 0
    printed = capsys.readouterr().out
    assert "holdout, the motors' equations:" in printed and "holdout, the joints' torques τ = Cᵀ·" in printed
    verdict = tmp_path / 'verdict.json'
    assert main(['validate', '--params', str(result), str(bag), '--holdout', '0.3', '--json', str(verdict)]) == 0
    predictions = json.loads(verdict.read_text())['recordings'][0]['predictions']
    assert predictions['joint_space']['judged'] is False and set(predictions['joint_space']['joints']) == \
        set(ROBOT.joint_names)
    assert "the joints' torques" in capsys.readouterr().out


def test_identify_help_says_what_a_coupling_does(capsys):
    with pytest.raises(SystemExit):
        main(['identify', '--help'])
    text = ' '.join(capsys.readouterr().out.split())
    assert "makes the equations the motors'" in text and 'dynid model --drives FILE' in text
    assert 'friction on its own velocity' in text
