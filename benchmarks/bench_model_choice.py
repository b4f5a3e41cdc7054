"""The model chosen by blocked cross-validation against every fixed choice, trained on one motion and held out on
another (issue 32).

Run: ``.venv/bin/python -m benchmarks.bench_model_choice [--quick] [--rate 500]``.

Twin cases (UR5e digital twin; each varies what the best model is): the twin's full friction, Coulomb + viscous
friction only, the load-dependent Coulomb term ×4 on the shoulders, a static friction level 2.5× the Coulomb level
(its Stribeck velocity 20 rad/s, beyond the motions' speeds: a higher Coulomb level, nearly), a pronounced Stribeck
hump (static friction 3× the Coulomb level, Vs 0.1 rad/s, the twin's shape μ = 1.2), temperature drift
(a small thermal capacity and a warm ambient: the joints warm by tens of °C during the recordings), rotor inertia
×3 and ×0.3 of the drive data's, spikes in the motor current (1 % of the samples, ±5 A: the case for IRLS),
noisy currents, and robot files off by 20–40 % (CAD) or far off. Each is trained on 20 s of a random 5-harmonic
Fourier motion and held out on 20 s of another (other seed, other sensor noise); the drive data given are the
robot's nominal ones.

Per case: the held-out relative residual ‖y − ŷ‖/‖y‖ (``dynid validate``) of the defaults (``friction='auto'``,
``method='auto'``, the prior) and of every fixed choice (WLS, IRLS with Coulomb + viscous or load-dependent
friction; I-IRLS with Li's comprehensive model; WLS with either law and the temperature term, where the temperature
varies enough to identify it; WLS with Coulomb + viscous friction and a Stribeck excess on every joint at Vs = 0.1
rad/s, the hump case's own, of either shape the choice tries (μ 1 and 2); all with the prior);
``default_over_best_fixed`` divides the defaults' by the least of the fixed ones, picked afterwards on the held-out
data (targets: median ≤ 1.05, max ≤ 1.2). ``joints_behind_robot_file``: joints whose held-out residual is above the
robot file's own model's (its links, the friction fitted on the training run, as ``dynid validate`` prints it) by
a lead on each of five stretches of the held-out recording and by 5 % of the RMSE or more (the rule identify warns by
on its folds, :attr:`dynid.identify.result.lead.Lead.clear`) and that neither identify's warnings nor validate's lines
on the held-out recording name beside "robot file's own model" (as ``bench_public.py`` counts them; target 0); the
joints above it by any margin (``joints_above_robot_file``) and the named ones are counted beside.
``identify_60s_s``: ``dynid identify`` with the defaults on 60 s at 1 kHz of the shipped excitation in a fresh
process, from its imports, best of three (one with ``--quick``), as ``benchmarks/bench_generalize.py`` measures it,
with the CPU time and the same with ``--friction viscous_coulomb --method wls`` (the previous defaults) beside: the
difference is what the choice costs.

``coupled_wrist_fit_min_percent``: a coupled-wrist twin (the UR5e's motor 6 turns with q5 + q6, motor 5 against
q5: gear ratios of both signs; the motors' encoders read from offsets), logged on the motor side at 5 kHz (1 kHz
with ``--quick``) as a CSV of motor positions [rad on the shafts] and currents, imported by ``dynid import --columns
time=t,motor_q=mpos{i},current=cur{i} --drives drives.yaml`` (no converter) and identified with the defaults and
the drives file's coupling, trained on 20 s and held out on 20 s of another motion: the least held-out NRMSE fit
over the joints (τ = Cᵀ·τ_motors of the measured and predicted motor equations), the motors' own fits beside,
and the same log identified as if each motor drove its own joint (the drives file without its coupling).

``public``: the public datasets of the issue's table, each read with dynid's front ends, identified with the
defaults and scored per joint on held-out rows beside the data authors' model (reproduced or quoted, as each entry
says; details in ``benchmarks/public_datasets.py``). Each is a clone given by its directory:

- ``--unisa DIR`` (``$DYNID_UNISA_DATA``): ``git clone https://github.com/unisa-acg/inverse-dynamics-solver``
  (the UR10 and Panda bags; ``g++`` compiles Petrone 2025's model from it);
- ``--figaroh DIR`` (``$DYNID_FIGAROH_DATA``): ``git clone https://github.com/thanhndv212/figaroh-examples``;
- ``--flobaroid DIR`` (``$DYNID_FLOBAROID_DATA``): ``git clone https://github.com/kjyv/FloBaRoID`` and ``git lfs
  pull`` (its measurements are Git LFS objects);
- ``--dynamic-calibration DIR`` (``$DYNID_DYNCAL_DATA``): ``git clone
  https://github.com/shamilmamedov/dynamic_calibration``.

A dataset not given is ``{"status": "not given"}``; ``--public-only`` runs only them. The last line is JSON.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from benchmarks import public_datasets
from benchmarks.bench_generalize import _timed_identify, cad_file, far_file
from benchmarks.public_scoring import named_joints
from dynid.errors import InputError
from dynid.excite.fourier import FourierDesign, default_limits, random_design
from dynid.excite.trajectory import builtin_excitation_path
from dynid.identify.equations.request import ModelSpec, RecordingInput
from dynid.identify.result.lead import judge
from dynid.identify.steps.run import IdentifyOptions, identify
from dynid.identify.validation.validate import predict, validate
from dynid.model import load_robot
from dynid.sim.parameters import PlantParameters
from dynid.sim.recording import SimulationSettings, record_to_dataset, simulate_recording
from dynid.sim.twin import DigitalTwin, home_configuration

ROBOT = load_robot('ur5e')
FIXED = {'wls viscous_coulomb': ('wls', 'viscous_coulomb', False), 'wls load_squared': ('wls', 'load_squared', False),
         'irls viscous_coulomb': ('irls', 'viscous_coulomb', False),
         'irls load_squared': ('irls', 'load_squared', False), 'iirls comprehensive': ('iirls', 'comprehensive', False),
         'wls viscous_coulomb temperature': ('wls', 'viscous_coulomb', True),
         'wls load_squared temperature': ('wls', 'load_squared', True),
         'wls viscous_coulomb stribeck': ('wls', 'viscous_coulomb', False, 0.1, 2.0),
         'wls viscous_coulomb stribeck mu1': ('wls', 'viscous_coulomb', False, 0.1, 1.0)}


def say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def _plant(change) -> PlantParameters:
    params = PlantParameters.defaults(ROBOT)
    change(params)
    return params


def _scaled(name, factors):
    def change(params):
        setattr(params.joints, name, getattr(params.joints, name) * np.asarray(factors, dtype=float))
    return change


def _coulomb_viscous(params):
    params.joints.friction_model = 'coulomb_viscous'


def _stribeck(params):
    params.joints.static = params.joints.coulomb * 2.5
    params.joints.stribeck_velocity = np.full(ROBOT.n, 20.0)  # rad/s of θ̇ in link units: beyond the motions' speeds


def _hump(params):
    params.joints.static = params.joints.coulomb * 3.0
    params.joints.stribeck_velocity = np.full(ROBOT.n, 0.1)  # rad/s (θ̇ in link units), the twin's shape μ = 1.2


def _warming(params):
    params.joints.thermal_capacity = np.full(ROBOT.n, 8.0)
    params.joints.temperature_linear = params.joints.temperature_linear * 5.0
    params.ambient_c, params.initial_temperature_c = 70.0, 15.0


def _rotor(factor):
    def change(params):
        params.drives = dataclasses.replace(params.drives, rotor_inertia=params.drives.rotor_inertia * factor)
    return change


def _noisy(params):
    params.sensors = dataclasses.replace(params.sensors, current_noise=params.sensors.current_noise * 8)


def _nothing(params):
    pass


def _spikes(dataset, seed):
    """1 % of the motor current samples replaced by spikes of ±5 A (a driver's glitches)."""
    rng = np.random.default_rng(seed)
    current = dataset.current.copy()
    hit = rng.random(current.shape) < 0.01
    current[hit] += rng.choice([-5.0, 5.0], size=int(hit.sum()))
    return dataclasses.replace(dataset, current=current)


CASES = [  # (name, plant change, robot file, spikes)
    ('full friction, CAD file', _nothing, 'cad', False),
    ('coulomb+viscous only, CAD file', _coulomb_viscous, 'cad', False),
    ('load friction x4 on the shoulders', _scaled('load_coefficient', [4, 4, 1, 1, 1, 1]), 'cad', False),
    ('load friction x4, far file', _scaled('load_coefficient', [4, 4, 1, 1, 1, 1]), 'far', False),
    ('static friction x2.5 (Vs 20 rad/s)', _stribeck, 'cad', False),
    ('Stribeck hump (Vs 0.1 rad/s)', _hump, 'cad', False),
    ('temperature drift', _warming, 'cad', False),
    ('rotor inertia x3', _rotor(3.0), 'cad', False),
    ('rotor inertia x0.3', _rotor(0.3), 'cad', False),
    ('current spikes', _nothing, 'cad', True),
    ('noisy currents', _noisy, 'cad', False),
    ('full friction, far file', _nothing, 'far', False),
    ('coulomb+viscous only, far file', _coulomb_viscous, 'far', False),
    ('load friction x0 (none)', _scaled('load_coefficient', [0, 0, 0, 0, 0, 0]), 'cad', False),
]
QUICK = (0, 2, 5, 9, 12)


def record(params, seed: int, seconds: float, rate_hz: float, amplitude: float = 0.8):
    home = home_configuration(ROBOT)
    design = FourierDesign(ROBOT.joint_names, 5, 10.0)
    trajectory = design.trajectory(random_design(design, home, default_limits(ROBOT, home),
                                                 np.random.default_rng(seed),
                                                 np.linspace(0.0, 10.0, 4000, endpoint=False)))
    trajectory = dataclasses.replace(trajectory, sine=trajectory.sine * amplitude,
                                     cosine=trajectory.cosine * amplitude, duration_s=seconds)
    twin = DigitalTwin(params, rate_hz=rate_hz, seed=seed, initial_q=trajectory.evaluate(np.array([0.0]))[0][0])
    twin.follow(trajectory)
    return record_to_dataset(twin.run(seconds), None, {'simulation': f'seed {seed}'})


def run_case(name, change, file_label, spikes, files, rate_hz, seconds) -> dict:
    params = _plant(change)
    train, held = record(params, 31, seconds, rate_hz), record(params, 57, seconds, rate_hz)
    if spikes:
        train, held = _spikes(train, 1), _spikes(held, 2)
    robot_file = files[file_label]
    options = {'drives': ROBOT.drives}
    start = time.perf_counter()
    default = identify(robot_file, [RecordingInput(train)], ModelSpec(friction='auto'),
                       options=IdentifyOptions('auto'), **options)
    seconds_default = time.perf_counter() - start
    prediction = predict(default, robot_file, held)
    metrics = prediction.metrics(ROBOT.joint_names)
    fixed = {}
    for label, (method, friction, temperature, *stribeck) in FIXED.items():
        try:
            spec = ModelSpec(friction=friction, temperature=temperature, **(
                {'stribeck_velocity': stribeck[0], 'stribeck_shape': stribeck[1]} if stribeck else {}))
            result = identify(robot_file, [RecordingInput(train)], spec, options=IdentifyOptions(method), **options)
        except InputError as error:  # the temperature term where the temperature hardly varies: rank-deficient
            say(f'  {label}: refused ({str(error)[:80]}...)')
            continue
        fixed[label] = validate(result, robot_file, held)['relative_residual']
    best = min(fixed, key=fixed.get)
    theirs = {joint: m['rmse'] for joint, m in metrics['robot_file']['joints'].items()}
    above = [joint for joint, m in metrics['joints'].items() if m['rmse'] > theirs[joint]]
    behind = [joint for joint in above if _behind_beyond_spread(prediction, ROBOT.joint_names.index(joint))]
    said = named_joints(default.warnings + metrics.get('warnings', []) + metrics.get('notes', []),
                        ROBOT.joint_names)  # by identify's warnings or validate's lines
    named = [joint for joint in above if joint in said]
    choice = default.model.get('choice') or {}
    return {'case': name, 'robot_file': file_label, 'method': default.method, 'friction': default.model['friction'],
            'friction_terms': choice.get('friction_terms'), 'residual': metrics['relative_residual'],
            'robot_file_residual': metrics['robot_file']['relative_residual'], 'fixed': fixed, 'best_fixed': best,
            'ratio': metrics['relative_residual'] / fixed[best], 'joints_behind_robot_file': behind,
            'joints_above_robot_file': above, 'named': named, 'identify_s': seconds_default,
            'rmse_over_robot_file': {joint: metrics['joints'][joint]['rmse'] / theirs[joint] for joint in above}}


def _behind_beyond_spread(prediction, j: int, blocks: int = 5) -> bool:
    """Whether the robot file's own model is clearly ahead on joint j over ``blocks`` contiguous stretches of the
    held-out recording: the rule identify and validate warn by (:attr:`dynid.identify.result.lead.Lead.clear`)."""
    rows = prediction.joints == j
    measured, mine, theirs = (a[rows] for a in (prediction.measured, prediction.predicted, prediction.robot_file))
    parts = np.array_split(np.arange(measured.size), blocks)
    energy = np.array([np.sum(measured[p] ** 2) for p in parts])
    chosen = np.array([np.sum((measured[p] - mine[p]) ** 2) for p in parts]) / energy
    file = np.array([np.sum((measured[p] - theirs[p]) ** 2) for p in parts]) / energy
    return judge(chosen[:, None], file[:, None])[0].clear


WRIST_COUPLING = np.eye(6)
WRIST_COUPLING[4, 4], WRIST_COUPLING[5, 4] = -1.0, 1.0  # motor 5 against q5, motor 6 with q5 + q6
MOTOR_OFFSET = np.array([0.1, -0.2, 0.3, 1.1, -0.7, 0.35])  # [rad] the motor encoders' zero


def part_coupled(folder: Path, files, rate_hz: float, seconds: float) -> dict:
    """The coupled-wrist case (module docstring)."""
    from dynid.cli import main as dynid
    from dynid.identify.result.metrics import joint_metrics
    from dynid.identify.validation.validate import predict_series
    from dynid.io.bag import read_bag

    def couple(params):
        for name in ('drives', 'nominal_drives'):
            setattr(params, name, dataclasses.replace(getattr(params, name), coupling=WRIST_COUPLING))

    params = _plant(couple)
    drives = dataclasses.replace(ROBOT.drives, coupling=WRIST_COUPLING, motor_offset=MOTOR_OFFSET)
    (folder / 'drives.yaml').write_text(json.dumps(drives.to_dict()))  # JSON is YAML
    recordings = {}
    for label, seed in (('train', 31), ('held', 57)):
        dataset = record(params, seed, seconds, rate_hz)
        header = ['t'] + [f'mpos{i}' for i in range(ROBOT.n)] + [f'cur{i}' for i in range(ROBOT.n)]
        motor = dataset.theta * drives.gear_ratio + MOTOR_OFFSET
        np.savetxt(folder / f'{label}.csv', np.column_stack([dataset.t, motor, dataset.current]), delimiter=',',
                   header=','.join(header), comments='', fmt='%.12g')
        with contextlib.redirect_stdout(sys.stderr):  # the import's report goes with the progress, not the table
            code = dynid(['import', str(folder / f'{label}.csv'), '--columns',
                          'time=t,motor_q=mpos{i},current=cur{i}', '--robot', 'ur5e', '--drives',
                          str(folder / 'drives.yaml'), '-o', str(folder / label)])
        if code != 0:
            raise SystemExit(f'dynid import of the coupled-wrist log failed ({code})')
        recordings[label] = read_bag(folder / label, ROBOT.joint_names)
    out = {}
    for label, given in (('coupled', drives), ('uncoupled', dataclasses.replace(drives, coupling=None))):
        result = identify(files['cad'], [RecordingInput(recordings['train'])], ModelSpec(friction='auto'),
                          options=IdentifyOptions('auto'), drives=given)
        motors = validate(result, files['cad'], recordings['held'], drives=given)
        _, y, predicted, used = predict_series(result, files['cad'], recordings['held'], drives=given)
        rows = used.all(axis=1) & np.isfinite(y).all(axis=1)
        transform = WRIST_COUPLING if given.coupling is not None else np.eye(ROBOT.n)
        joints = {name: joint_metrics((y[rows] @ transform)[:, j], (predicted[rows] @ transform)[:, j])[0]
                  ['nrmse_fit_percent'] for j, name in enumerate(ROBOT.joint_names)}
        out[label] = {'joint_fit_percent': joints, 'motor_fit_percent': {
            name: m['nrmse_fit_percent'] for name, m in motors['joints'].items()},
            'relative_residual': motors['relative_residual'], 'method': result.method,
            'friction_terms': (result.model.get('choice') or {}).get('friction_terms')}
    return out


def part_speed(folder: Path, repeats: int) -> dict:
    bag = folder / 'rec60'
    path = folder / 'excitation.yaml'
    path.write_text(builtin_excitation_path('ur5e').read_text())
    simulate_recording(ROBOT, bag, str(path), SimulationSettings(duration_s=60.0), quiet=True)
    runs = {'defaults': [], 'previous_defaults': []}
    for _ in range(repeats):
        runs['defaults'].append(_timed_identify(bag, folder / 'speed.yaml'))
        runs['previous_defaults'].append(_timed_identify(bag, folder / 'speed_wls.yaml', '--friction',
                                                         'viscous_coulomb', '--method', 'wls'))
    best = {label: min(r) for label, r in runs.items()}
    return {'identify_60s_s': best['defaults'][0], 'identify_60s_cpu_s': best['defaults'][1],
            'identify_60s_previous_defaults_s': best['previous_defaults'][0],
            'identify_60s_previous_defaults_cpu_s': best['previous_defaults'][1], 'speed_runs': runs}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--quick', action='store_true', help=f'{len(QUICK)} cases of 12 s, one timing run')
    parser.add_argument('--rate', type=float, default=500.0, help='twin rate [Hz] (default 500)')
    parser.add_argument('--public-only', action='store_true', help='only the public datasets given')
    public_datasets.add_arguments(parser)
    args = parser.parse_args()
    if args.public_only:
        with tempfile.TemporaryDirectory(prefix='model_choice_public_') as folder:
            public = public_datasets.run(args, Path(folder))
        print('\n'.join(public_datasets.summary(public)))
        print(json.dumps({'benchmark': 'model_choice', 'public': public_datasets.compact(public)}, default=float))
        return
    files = {'cad': cad_file(), 'far': far_file()}
    cases = [CASES[i] for i in QUICK] if args.quick else CASES
    seconds = 12.0 if args.quick else 20.0
    start = time.perf_counter()
    runs = []
    for name, change, label, spikes in cases:
        run = run_case(name, change, label, spikes, files, args.rate, seconds)
        runs.append(run)
        say(f'{name}: {run["method"]} {run["friction"]} {run["friction_terms"]}; ratio {run["ratio"]:.3f} (best '
            f'fixed {run["best_fixed"]}); behind the robot file {run["joints_behind_robot_file"]}, named '
            f'{run["named"]}')
    with tempfile.TemporaryDirectory(prefix='model_choice_') as folder:
        say('coupled wrist: the twin logged on the motor side, imported, identified')
        coupled = part_coupled(Path(folder), files, 1000.0 if args.quick else 5000.0, seconds)
        say('speed: dynid identify on 60 s at 1 kHz')
        speed = part_speed(Path(folder), 1 if args.quick else 3)
        public = public_datasets.run(args, Path(folder))
    wrist = min(coupled['coupled']['joint_fit_percent'].values())
    ratios = np.array([r['ratio'] for r in runs])
    unnamed = sum(len(set(r['joints_behind_robot_file']) - set(r['named'])) for r in runs)
    above_unnamed = sum(len(set(r['joints_above_robot_file']) - set(r['named'])) for r in runs)
    print(f'dynid: the model chosen by blocked cross-validation (UR5e twin at {args.rate:g} Hz, trained on one motion, '
          f'held out on another; {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}, '
          f'{time.perf_counter() - start:.0f} s)')
    print(f'{"case":<40} {"chosen":<28} {"held-out":>9} {"best fixed":>11} {"ratio":>7}  behind robot file / above '
          f'(named)')
    for r in runs:
        chosen = f'{r["method"]} {r["friction"]}'
        print(f'{r["case"]:<40} {chosen:<28} {r["residual"]:>9.4g} {r["fixed"][r["best_fixed"]]:>11.4g} '
              f'{r["ratio"]:>7.3f}  {len(r["joints_behind_robot_file"])} / {len(r["joints_above_robot_file"])} '
              f'({len(r["named"])})  [{r["best_fixed"]}]')
    print(f'median ratio {np.median(ratios):.3f} (target ≤ 1.05), max {ratios.max():.3f} (≤ 1.2); joints behind the '
          f'robot file beyond the held-out spread and unnamed {unnamed} (0), above it by any margin and unnamed '
          f'{above_unnamed}, named {sum(len(r["named"]) for r in runs)}')
    for label, entry in coupled.items():
        print(f'coupled wrist, {label + ":":<10} held-out fit per joint ' + ', '.join(
            f'{v:.1f}' for v in entry['joint_fit_percent'].values()) + ' %; per motor ' + ', '.join(
            f'{v:.1f}' for v in entry['motor_fit_percent'].values()) + ' %' + (' (target ≥ 95 on every joint)'
                                                                               if label == 'coupled' else ''))
    print(f'dynid identify 60 s × 1 kHz, defaults: {speed["identify_60s_s"]:.2f} s wall, '
          f'{speed["identify_60s_cpu_s"]:.2f} s CPU (target ≤ 3 s); previous defaults (wls, viscous_coulomb): '
          f'{speed["identify_60s_previous_defaults_s"]:.2f} s, {speed["identify_60s_previous_defaults_cpu_s"]:.2f} s '
          f'CPU')
    print('\n'.join(public_datasets.summary(public)))
    detail = Path(tempfile.gettempdir()) / 'bench_model_choice.json'
    detail.write_text(json.dumps({'runs': runs, 'coupled_wrist': coupled, **speed, 'public': public}, indent=1,
                                 default=float))
    say(f'every case: {detail}')
    print(json.dumps({'benchmark': 'model_choice', 'twin_cases': len(runs),
                      'default_over_best_fixed_median': float(np.median(ratios)),
                      'default_over_best_fixed_max': float(ratios.max()), 'joints_behind_robot_file': unnamed,
                      'joints_above_robot_file_unnamed': above_unnamed,
                      'coupled_wrist_fit_min_percent': wrist, 'public': public_datasets.compact(public),
                      'identify_60s_s': speed['identify_60s_s'], 'identify_60s_cpu_s': speed['identify_60s_cpu_s']},
                     default=float))


if __name__ == '__main__':
    main()
