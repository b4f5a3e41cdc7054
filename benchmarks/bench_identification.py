"""Batch identification on the digital twin: the seeds' headline results beside ours.

Run: ``make bench`` or ``.venv/bin/python -m benchmarks.bench_identification [--quick]``.

Cases (issue 6), all on the UR5e twin at 1 kHz with the optimized excitation of
``dynid/excite/data/ur5e_excitation.yaml`` (5 harmonics, 10 s) and a random Fourier validation trajectory:

1. matched model: the twin's friction restricted to Coulomb + viscous (what the model contains);
   WLS base parameters within 3σ of the truth (target ≥ 95 %), validation NRMSE fit (target ≥ 95 %
   on every joint).
2. drive gains (Gautier & Briot 2014): true gains perturbed by up to ±10 %, one run without and one
   with a 3 kg off-axis payload whose mass only is known; IDIM-TLS against the modified LS (MLS):
   gain errors (target < 1 %), payload mass recovered on a validation run with 2 kg (paper 0.65 %).
3. load-dependent friction (Hamon 2010): full twin friction (its Coulomb level grows with the squared
   load), runs with 0, 3.5 and 7.5 kg known payloads; relative residual of the global Hamon model
   against the usual viscous + Coulomb model (paper −34 %, target ≤ −30 %).
4. I-IRLS (Li 2024): full twin warming from 25 °C towards 40 °C over one session (identification
   then validation), I-IRLS with the comprehensive + temperature model against IRLS and LS with the
   usual model: validation RMSE (paper > 14 % and > 16 % lower).
5. speed: ``dynid identify`` on a 60 s, 1 kHz, 6-joint bag (target ≤ 10 s), regressor stage per
   sample against pinocchio's bare regressor (target within 2×).

The last line is one JSON object with every figure.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pinocchio as pin

from dynid.excite.fourier import FourierDesign, default_limits, random_design
from dynid.excite.trajectory import approach_trajectory, builtin_excitation_path, load_trajectory
from dynid.identify.equations.request import ModelSpec, RecordingInput
from dynid.identify.steps.run import IdentifyOptions, identify
from dynid.identify.validation.validate import recover_payload, validate
from dynid.model import Payload, load_robot
from dynid.sim.parameters import PlantParameters
from dynid.sim.recording import SimulationSettings, record_to_dataset, simulate_recording
from dynid.sim.twin import DigitalTwin, home_configuration

EXCITATION = builtin_excitation_path('ur5e')


def simulate(params: PlantParameters, trajectory, seconds: float, seed: int, payload: Payload | None = None,
             twin: DigitalTwin | None = None):
    """A recording of ``seconds`` (periodic trajectories repeat); reuses ``twin`` to continue a session."""
    trajectory = dataclasses.replace(trajectory, duration_s=seconds)
    start = trajectory.evaluate(np.array([0.0]))[0][0]
    if twin is None:
        twin = DigitalTwin(params.with_payload(payload), rate_hz=1000.0, seed=seed, initial_q=start)
    else:  # continue the session: move to the new trajectory's start first (not recorded)
        approach = approach_trajectory(twin.robot.joint_names, twin.plant.state.q, start)
        twin.follow(approach)
        twin.run(approach.duration_s + 0.5)
    twin.follow(trajectory)
    record = twin.run(seconds)
    return record_to_dataset(record, payload, {'simulation': f'seed {seed}'}), twin


def validation_trajectory(robot, seed: int = 7):
    home = home_configuration(robot)
    design = FourierDesign(robot.joint_names, 5, 10.0)
    dense = np.linspace(0.0, 10.0, 4000, endpoint=False)
    return design.trajectory(random_design(design, home, default_limits(robot, home), np.random.default_rng(seed),
                                           dense))


def base_truth(robot) -> dict:
    return dict(zip(robot.base.names, robot.base.from_standard(robot.standard_parameters), strict=True))


def case_matched(robot, excitation, validation, seconds):
    params = PlantParameters.defaults(robot)
    params.joints.friction_model = 'coulomb_viscous'
    train, _ = simulate(params, excitation, seconds, 1)
    test, _ = simulate(params, validation, seconds / 2, 2)
    result = identify(robot, [RecordingInput(train)], ModelSpec(), options=IdentifyOptions('wls', physical=None))
    truth = base_truth(robot)
    z = np.array([(result.value(n) - truth[n]) / result.std[result.parameter_names.index(n)] for n in truth])
    metrics = validate(result, robot, test)
    fits = [m['nrmse_fit_percent'] for m in metrics['joints'].values()]
    return {'within_3_sigma_percent': 100 * float(np.mean(np.abs(z) < 3)), 'max_abs_z': float(np.abs(z).max()),
            'validation_nrmse_min_percent': min(fits), 'validation_nrmse_percent': fits}


def case_drive_gains(robot, excitation, validation, seconds):
    params = PlantParameters.defaults(robot, drive_gain_error=0.1, seed=4)
    load = Payload(3.0, [0.04, 0.03, 0.05])
    unloaded, _ = simulate(params, excitation, seconds, 1)
    loaded, _ = simulate(params, excitation, seconds, 2, load)
    check, _ = simulate(params, validation, seconds / 2, 3, Payload(2.0, [0.02, -0.03, 0.04]))
    out = {'true_over_nominal': (params.drives.drive_gain / params.nominal_drives.drive_gain).tolist()}
    for method in ('tls', 'mls'):
        result = identify(robot, [RecordingInput(unloaded), RecordingInput(loaded, payload_mass=3.0)], ModelSpec(),
                          options=IdentifyOptions(method, physical=None))
        error = 100 * (result.drive_gains / params.drives.drive_gain - 1)
        mass = recover_payload(result, robot, check)['mass']
        out[method] = {'gain_error_percent': error.tolist(), 'max_gain_error_percent': float(np.abs(error).max()),
                       'validation_payload_mass_kg': mass, 'payload_mass_error_percent': 100 * (mass / 2.0 - 1)}
    return out


def case_hamon(robot, excitation, seconds):
    params = PlantParameters.defaults(robot)
    recordings = []
    for seed, mass in enumerate((0.0, 3.5, 7.5)):
        payload = Payload(mass, [0.03, 0.02, 0.05]) if mass > 0 else None
        recordings.append(RecordingInput(simulate(params, excitation, seconds, seed, payload)[0], payload=payload))
    residual = {}
    for friction in ('viscous_coulomb', 'hamon'):
        result = identify(robot, recordings, ModelSpec(friction=friction),
                          options=IdentifyOptions('ols', physical=None))
        residual[friction] = result.metrics['train']['relative_residual']
    return {'usual_relative_residual': residual['viscous_coulomb'], 'hamon_relative_residual': residual['hamon'],
            'change_percent': 100 * (residual['hamon'] / residual['viscous_coulomb'] - 1)}


def case_iirls(robot, excitation, validation, seconds):
    params = PlantParameters.defaults(robot)
    # Faster heating and slower cooling than the defaults, so that one 90 s session warms the joints
    # from 25 °C to about 40 °C (as a long warm-up would).
    params.joints.thermal_capacity = params.joints.thermal_capacity * 0.06
    params.joints.thermal_resistance = params.joints.thermal_resistance * 4.0
    train, twin = simulate(params, excitation, seconds, 1)
    test, _ = simulate(params, validation, seconds / 2, 1, twin=twin)  # the same session, warmer
    temperatures = {'train_start': float(train.temperature[0].mean()), 'train_end': float(train.temperature[-1].mean()),
                    'validation_end': float(test.temperature[-1].mean()), 'hottest': float(test.temperature.max())}
    print(f'  I-IRLS session temperatures [°C]: {temperatures}', file=sys.stderr)
    rmse, seconds_taken = {}, {}
    for method, spec in (('ols', ModelSpec()), ('irls', ModelSpec()),
                         ('iirls', ModelSpec(friction='comprehensive', temperature=True))):
        start = time.perf_counter()
        result = identify(robot, [RecordingInput(train)], spec, options=IdentifyOptions(method, physical=None))
        seconds_taken[method] = time.perf_counter() - start
        rmse[method] = validate(result, robot, test)['rmse']
    return {'temperatures_c': temperatures, 'validation_rmse': rmse, 'seconds': seconds_taken,
            'iirls_vs_irls_percent': 100 * (rmse['iirls'] / rmse['irls'] - 1),
            'iirls_vs_ls_percent': 100 * (rmse['iirls'] / rmse['ols'] - 1)}


def case_speed(robot, excitation):
    with tempfile.TemporaryDirectory() as folder:
        bag = Path(folder) / 'rec60'
        path = Path(folder) / 'excitation.yaml'
        path.write_text(EXCITATION.read_text())
        simulate_recording(robot, bag, str(path), SimulationSettings(duration_s=60.0), quiet=True)
        start = time.perf_counter()
        command = [sys.executable, '-m', 'dynid.cli', 'identify', str(bag), '-o', str(Path(folder) / 'r.yaml'),
                   '--quiet']
        subprocess.run(command, check=True, capture_output=True)
        wall = time.perf_counter() - start
    q, dq, ddq = robot.random_states(20000, seed=1)
    start = time.perf_counter()
    robot.regressor(q, dq, ddq)
    ours = (time.perf_counter() - start) / 20000 * 1e6
    model, data = robot.pinocchio_model, robot.pinocchio_model.createData()
    start = time.perf_counter()
    for k in range(20000):
        pin.computeJointTorqueRegressor(model, data, q[k], dq[k], ddq[k])
    bare = (time.perf_counter() - start) / 20000 * 1e6
    return {'identify_60s_bag_wall_s': wall, 'regressor_us_per_sample': ours,
            'pinocchio_regressor_us_per_sample': bare, 'regressor_ratio': ours / bare}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--seconds', type=float, default=60.0, help='identification recording length (default 60)')
    parser.add_argument('--cases', default='matched,gains,hamon,iirls,speed')
    args = parser.parse_args()
    robot = load_robot('ur5e')
    excitation = load_trajectory(EXCITATION)
    validation = validation_trajectory(robot)
    cases = args.cases.split(',')
    results: dict = {}
    for name, run in (('matched', lambda: case_matched(robot, excitation, validation, args.seconds)),
                      ('gains', lambda: case_drive_gains(robot, excitation, validation, args.seconds)),
                      ('hamon', lambda: case_hamon(robot, excitation, args.seconds * 2 / 3)),
                      ('iirls', lambda: case_iirls(robot, excitation, validation, args.seconds)),
                      ('speed', lambda: case_speed(robot, excitation))):
        if name in cases:
            start = time.perf_counter()
            print(f'running case {name} ...', file=sys.stderr, flush=True)
            results[name] = run()
            results[name]['case_wall_s'] = time.perf_counter() - start

    print('dynid identification benchmark (UR5e twin, 1 kHz)')
    print(f'{"measure":<62} {"ours":>12} {"reference":>18}')
    rows = []
    if 'matched' in results:
        m = results['matched']
        rows += [('matched: WLS base parameters within 3σ [%]', m['within_3_sigma_percent'], '≥ 95 (target)'),
                 ('matched: worst validation NRMSE fit over joints [%]', m['validation_nrmse_min_percent'],
                  '≥ 95 (target)')]
    if 'gains' in results:
        g = results['gains']
        rows += [('drive gains: TLS worst gain error [%]', g['tls']['max_gain_error_percent'], '< 1 (target)'),
                 ('drive gains: modified LS worst gain error [%]', g['mls']['max_gain_error_percent'], 'TLS beats it'),
                 ('drive gains: TLS payload mass error on validation [%]', g['tls']['payload_mass_error_percent'],
                  '0.65 (paper)')]
    if 'hamon' in results:
        h = results['hamon']
        rows += [('Hamon: relative residual, usual model', h['usual_relative_residual'], '0.0733 (paper)'),
                 ('Hamon: relative residual, global load-dependent model', h['hamon_relative_residual'],
                  '0.0484 (paper)'),
                 ('Hamon: change [%]', h['change_percent'], '−34 (paper)')]
    if 'iirls' in results:
        i = results['iirls']
        rows += [('I-IRLS: validation RMSE vs IRLS [%]', i['iirls_vs_irls_percent'], '< −14 (paper)'),
                 ('I-IRLS: validation RMSE vs LS [%]', i['iirls_vs_ls_percent'], '< −16 (paper)')]
    if 'speed' in results:
        s = results['speed']
        rows += [('speed: dynid identify, 60 s 1 kHz bag [s]', s['identify_60s_bag_wall_s'], '≤ 10 (target)'),
                 ('speed: regressor / bare pinocchio regressor per sample', s['regressor_ratio'], '≤ 2 (target)')]
    for label, value, reference in rows:
        print(f'{label:<62} {value:>12.4g} {reference:>18}')
    print(json.dumps({'benchmark': 'identification', **results}))


if __name__ == '__main__':
    main()
