"""IDIM-LS (WLS) against IDIM-IV and DIDIM on closed-loop twin data: the UR5e on its shipped excitation under a PD
joint controller whose gains the test knows (the twin's internal feedforward off, so that the controller is the PID
the closed-loop methods model), at 1 kHz, 250 Hz and 100 Hz with the twin's encoder quantization and torque noise.

Each row: the relative error ‖χ̂ − χ*‖/‖χ*‖ of the arm's base parameters against the twin's truth, the iterations
and the time; no prior (the robot file is the twin's truth). Ends with a JSON line.

    AMENT_PREFIX_PATH=.venv PYTHONPATH=src python benchmarks/bench_closed_loop.py [--seconds 20] [--rates 1000,250,100]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import tempfile
import time
from pathlib import Path

import numpy as np
import yaml

from dynid.excite.trajectory import builtin_excitation_path, load_trajectory
from dynid.identify.equations.request import IdentifyOptions, ModelSpec, RecordingInput
from dynid.identify.steps.run import identify
from dynid.io.dataset import Reference
from dynid.model import load_robot
from dynid.sim.controller import KD, KI, KP
from dynid.sim.parameters import PlantParameters
from dynid.sim.recording import record_to_dataset
from dynid.sim.twin import DigitalTwin


def closed_loop_recording(robot, seconds: float, rate_hz: float, seed: int = 0, integral: bool = False,
                          link_resolution: float | None = None, current_noise: float | None = None):
    """(dataset with its reference, the controller's gains {kp, kd, ki}) of the twin under a PID (no internal
    feedforward) on the shipped excitation; Coulomb + viscous friction on the joints."""
    params = PlantParameters.defaults(robot)
    params.controller = dataclasses.replace(params.controller, internal_feedforward='none',
                                            integral_fraction=params.controller.integral_fraction if integral else 0.0)
    params.joints.friction_model = 'coulomb_viscous'
    sensors = {k: v for k, v in (('link_resolution', link_resolution), ('current_noise', current_noise)) if v is not None}
    params.sensors = dataclasses.replace(params.sensors, **sensors)
    trajectory = dataclasses.replace(load_trajectory(builtin_excitation_path(robot.name)), duration_s=seconds)
    twin = DigitalTwin(params, rate_hz=rate_hz, seed=seed, initial_q=trajectory.evaluate(np.array([0.0]))[0][0])
    twin.follow(trajectory)
    record = twin.run(seconds)
    reference = Reference(*(record.reference[k] for k in ('q', 'dq', 'ddq', 'effort')), source='twin')
    dataset = dataclasses.replace(record_to_dataset(record, None, {'simulation': f'seed {seed}'}), reference=reference)
    gains = {name: twin.controller.gains[row].tolist() for name, row in (('kp', KP), ('kd', KD), ('ki', KI))}
    return dataset, gains


def base_error(robot, result) -> float:
    """‖χ̂ − χ*‖/‖χ*‖ over the arm's base parameters (the twin's truth: the robot file's)."""
    truth = dict(zip(robot.base.names, robot.base.from_standard(robot.standard_parameters), strict=True))
    values = dict(zip(result.parameter_names, result.values, strict=True))
    names = [name for name in truth if name in values]
    estimate, true = np.array([values[n] for n in names]), np.array([truth[n] for n in names])
    return float(np.linalg.norm(estimate - true) / np.linalg.norm(true))


def run(robot, dataset, method: str, gains_file: str | None) -> dict:
    method_options = {'controller_gains': gains_file} if gains_file and method != 'wls' else {}
    options = IdentifyOptions(method=method, physical=None, method_options=method_options)
    start = time.perf_counter()
    result = identify(robot, [RecordingInput(dataset, name='twin')], ModelSpec(friction='viscous_coulomb'),
                      options=options)
    seconds = time.perf_counter() - start
    iterations = (result.provenance.get('iterations') or {}).get('count')
    return {'error': base_error(robot, result), 'time_s': round(seconds, 2), 'iterations': iterations}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--seconds', type=float, default=20.0)
    parser.add_argument('--rates', default='1000,250,100')
    parser.add_argument('--methods', default='wls,idim_iv,didim')
    parser.add_argument('--link-resolution', type=float, default=None, help='link encoder quantum [rad]')
    parser.add_argument('--current-noise', type=float, default=None, help='current noise σ [A]')
    args = parser.parse_args()
    robot = load_robot('ur5e')
    rows, summary = [], {}
    with tempfile.TemporaryDirectory() as folder:
        for rate in (float(r) for r in args.rates.split(',')):
            dataset, gains = closed_loop_recording(robot, args.seconds, rate, link_resolution=args.link_resolution,
                                                   current_noise=args.current_noise)
            gains_file = Path(folder) / 'gains.yaml'
            gains_file.write_text(yaml.safe_dump(gains))
            for method in args.methods.split(','):
                row = {'rate_hz': rate, 'method': method, **run(robot, dataset, method, str(gains_file))}
                rows.append(row)
                print(f'{rate:6.0f} Hz  {method:8s}  error {row["error"]:.4f}  iterations {row["iterations"]}  '
                      f'{row["time_s"]:.1f} s', flush=True)
                summary[(rate, method)] = row['error']
    ratio = {m: summary.get((100.0, m), float('nan')) / summary.get((100.0, 'wls'), float('nan'))
             for m in ('idim_iv', 'didim')}
    print(json.dumps({'iv_over_ls_param_error_100hz': ratio['idim_iv'], 'didim_over_ls_param_error_100hz':
                      ratio['didim'], 'rows': rows}))


if __name__ == '__main__':
    main()
