"""figaroh-plus's Stäubli TX40 (``--figaroh-plus DIR``, env ``DYNID_FIGAROH_PLUS_DATA``: ``git clone
https://github.com/thanhndv212/figaroh-plus``): a motor-side log as users have it, read with dynid's front ends,
identified with the defaults, scored held out in motor and joint space beside FIGAROH's own least squares.

Run alone: ``.venv/bin/python -m benchmarks.public_tx40 --figaroh-plus DIR`` (the last line is JSON); a benchmark
calls :func:`tx40` (``{'figaroh_plus_tx40': entry}``, :func:`summary` for its lines).

The data (``examples/staubli_TX40/data``): ``pos_read_data.csv`` (motor encoder angles [rad on the shafts]) and
``curr_data.csv`` (motor torques [N·m on the shafts]: FIGAROH multiplies them by the gear ratios into joint
torques), 45 000 rows at 5 kHz (``ts`` 0.0002 s in their config), no time column, the same header
``Joint_1..Joint_6`` in both; the arm is ``models/staubli_tx40_description/urdf/tx40_mdh_modified.urdf``.

The drives file is written from FIGAROH's ``config/T40X_config.yaml`` and ``identification.py``: gear ratios
``N`` (joint 4's −48 as ratio 48 turning against its joint), the coupled wrist (their ``red_q[5, 4] = N[5]``: motor
6 turns with q5 + q6), the encoder offsets of their "calibration between joint mdh position and robot measure"
(q2 − π/2, q3 + π/2: 16π and −22.5π rad on the shafts), rotor inertias from their actuator inertias ``Ia`` and
``Iam6`` (motor 6's B6 = Iam6; motor 5's B5 = Ia5 − Iam6, since their joint-5 Ia5 holds B5 + B6), drive gains
= the gear ratios (k_t = 1 N·m/A: the log holds motor torques, and the identification takes K_τ·i = r·τ_m whatever
K_τ is).

Read as a user would: ``dynid import pos_read_data.csv curr_data.csv --columns
'motor_q=Joint_{n},motor_torque=Joint_{n}' --robot URDF --rate 5000 --drives drives.yaml`` (the documented map of
two files of one signal each, written without their files) is refused with the command that reads them; that
command is run as printed (0 hand edits). ``dynid identify BAG --robot URDF --drives drives.yaml --holdout 0.3``
with the defaults (``dynid validate`` the same way, for its words); held out: the last 30 % of the log in time (rows
31 500–44 999, 2.7 s; 48 decimated rows per joint), scored with ``dynid.identify.validation.validate.predict`` in motor
space (the equations) and joint space (τ = Cᵀ·(r·τ_m)).

FIGAROH's refit is **re-implemented** here as their ``examples/staubli_TX40/identification.py`` runs it, trained
on the same first 70 % of the CSV rows: joint angles q = red_q⁻¹·θ_m, a Butterworth low-pass of order 4 at
``ts·fc/2`` = 0.01 of Nyquist (25 Hz: their cut-off of 100 Hz as their code passes it) by ``filtfilt`` with 20
samples cut at either end, the calibration offsets, q̇ by forward differences and q̈ by ``np.gradient`` **for the
first five joints only** (their loop runs over ``nq − 1``: q̈6 stays 0), their regressor (pinocchio's joint torque
regressor reordered Ixx…m, then Ia, fv, fs, off per joint, then ``add_coupling_TX40``'s Iam6, fvm6, fsm6 columns),
the joint torques τ = red_tau·τ_m with 20 samples cut, both decimated twice by 10 (``scipy.signal.decimate``,
zero phase; per joint, on their joint-major rows with the 2-row offset their slicing gives), rows with
|q̇_j| < ``dq_lim_def`` left out, columns of norm² < 0.001 eliminated, the base columns of a QR without pivoting
(|R_ii| > 1e-8), the least squares on them, then their WLS (per-joint variance of that fit) — **base WLS** — and
their essential-parameter loop (the parameter of largest relative σ dropped until the largest is below 30× the
smallest, WLS with the base variances as their code has it) — **essential WLS**, the model their script ends
with. Both are scored on dynid's held-out rows (their model on dynid's filtered states, mapped to the motors by
C⁻ᵀ). The reference per joint and space is the better of the two (a joint is behind where dynid's RMSE is the
larger); the same two with q̈6 computed are shown beside (``ddq6_computed``), not used as the reference.

``joint_side`` measures what the friction of a stage that turns with joint 6 (q̇6 = θ̇6 − θ̇5: in motor space −1 on
motor 5, +1 on motor 6; ``dynid.identify.equations.joint_side``) does: the folds' table of the identification, and the
library's identification with the defaults with and without it (``ModelSpec(joint_side_friction=False)``), held out
per joint in both spaces. ``physical``: the same command with ``--physical``, its pooled held-out ‖e‖/‖y‖ of the
motors' equations beside the defaults' (``pooled``). ``named``: the joints identify's warnings or validate's lines
name beside the words "robot file's own model".
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import re
import shlex
import sys
import tempfile
from pathlib import Path

import numpy as np
import scipy.signal
import yaml

from benchmarks import dynid_layout  # noqa: F401  (an older dynid's module paths)
from dynid.identify.equations.request import RecordingInput
from dynid.identify.result.result import IdentificationResult
from dynid.identify.validation.validate import predict
from dynid.io.bag import read_bag
from dynid.model import load_robot
from dynid.model.drives import load_drives
from dynid.signal.preprocess import differentiate

HOLDOUT = 0.3
LABEL = 'figaroh_plus_tx40'
JOINTS = [f'joint_{n}' for n in range(1, 7)]
EXAMPLE = Path('examples') / 'staubli_TX40'
URDF = Path('models') / 'staubli_tx40_description' / 'urdf' / 'tx40_mdh_modified.urdf'
#: pinocchio's inertial order (m, mx, my, mz, Ixx, Ixy, Iyy, Ixz, Iyz, Izz) → FIGAROH's (Ixx … Izz, mx, my, mz, m)
PIN_TO_FIGAROH = [4, 5, 7, 6, 8, 9, 1, 2, 3, 0]
#: the issue's figures (held-out RMSE [N·m] on joint 5, dynid's defaults then against FIGAROH's refit)
ISSUE = {'motor': {'dynid': 0.99, 'figaroh': 1.24}, 'joint': {'dynid': 1.19, 'figaroh': 0.96}}


def say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def _dynid(arguments: list[str]) -> tuple[int, str]:
    """``dynid ARGUMENTS`` in this process: (exit code, what it printed); also on stderr."""
    from dynid.cli import main
    said = io.StringIO()
    with contextlib.redirect_stdout(said), contextlib.redirect_stderr(said):
        code = main(arguments)
    print(said.getvalue(), file=sys.stderr, end='', flush=True)
    return code, said.getvalue().strip()


#: the words by which identify and validate say the robot file's own model predicts a joint better
OWN_MODEL = "robot file's own model"


def named_joints(lines: list[str]) -> list[str]:
    """The joints a line beside the words "robot file's own model" names (as ``public_scoring.named_joints``)."""
    return sorted({joint for line in lines if OWN_MODEL in line for joint in JOINTS
                   if re.search(rf'(?<![\w-]){joint}(?![\w-])', line)})


def _config(root: Path) -> tuple[dict, dict]:
    with open(root / EXAMPLE / 'config' / 'T40X_config.yaml') as f:
        identification = yaml.safe_load(f)['identification']
    return identification['robot_params'][0], identification['processing_params'][0]


def drives_file(root: Path, path: Path) -> Path:
    """The TX40's drives file from FIGAROH's config and calibration (module docstring)."""
    params, _ = _config(root)
    ratio = [float(r) for r in params['N']]
    inertia = [float(b) for b in params['Ia']]
    inertia[4] -= float(params['Iam6'])  # their joint-5 Ia5 holds B5 + B6
    inertia[5] = float(params['Iam6'])
    offsets = {1: -np.pi / 2, 2: np.pi / 2}  # their q[:, 1] += −π/2, q[:, 2] += π/2 after q = θ_m / N
    drives = {}
    for k, joint in enumerate(JOINTS):
        entry = {'gear_ratio': abs(ratio[k]), 'drive_gain': abs(ratio[k]), 'rotor_inertia': inertia[k]}
        if ratio[k] < 0:
            entry['coupling'] = {joint: -1.0}
        if k in offsets:
            entry['motor_offset'] = float(-offsets[k] * ratio[k])  # θ_m = N·(q − offset_q)
        drives[joint] = entry
    drives['joint_6']['coupling'] = {'joint_5': 1.0, 'joint_6': 1.0}  # their red_q[5, 4] = N[5]
    path.write_text(yaml.safe_dump(drives, sort_keys=False))
    return path


def _regressor(robot, q, dq, ddq) -> np.ndarray:
    """FIGAROH's TX40 regressor (module docstring): (N, 6, 87), per joint Ixx…m, Ia, fv, fs, off; then Iam6, fvm6,
    fsm6 (``add_coupling_TX40``)."""
    n, samples = robot.n, len(q)
    rigid = robot.regressor(q, dq, ddq).reshape(samples, n, 10 * n)
    w = np.zeros((samples, n, 14 * n + 3))
    for k in range(n):
        w[:, :, 14 * k:14 * k + 10] = rigid[:, :, 10 * k:10 * k + 10][:, :, PIN_TO_FIGAROH]
        w[:, k, 14 * k + 10:14 * k + 14] = np.column_stack([ddq[:, k], dq[:, k], np.sign(dq[:, k]),
                                                            np.ones(samples)])
    both = np.sign(dq[:, 4] + dq[:, 5])
    w[:, 4, -3:] = np.column_stack([ddq[:, 5], dq[:, 5], both])
    w[:, 5, -3:] = np.column_stack([ddq[:, 4], dq[:, 4], both])
    return w


def figaroh_refit(root: Path, robot, motor_angles: np.ndarray, motor_torques: np.ndarray,
                  ddq6: bool = False) -> dict:
    """FIGAROH's least squares on these rows as their script runs it (module docstring): {'base_wls',
    'essential_wls'}: (columns of :func:`_regressor`, values), and the equations' count."""
    params, processing = _config(root)
    ts, cutoff = processing['ts'], processing['cut_off_frequency_butterworth']
    gears = np.diag(np.asarray(params['N'], float))
    gears[5, 4] = params['N'][5]
    q = motor_angles @ np.linalg.inv(gears).T
    b, a = scipy.signal.butter(4, ts * cutoff / 2, 'low')
    q = scipy.signal.filtfilt(b, a, q, axis=0, padtype='odd', padlen=3 * (max(len(b), len(a)) - 1))
    border = 20
    q = q[border:len(q) - border]
    q[:, 1] -= np.pi / 2
    q[:, 2] += np.pi / 2
    dq = np.diff(q, axis=0) / ts
    ddq = np.zeros_like(dq)
    for j in range(6 if ddq6 else 5):  # their loop: range(model.nq - 1)
        ddq[:, j] = np.gradient(dq[:, j], edge_order=1) / ts
    q, dq, ddq = q[:-2], dq[:-1], ddq[:-1]
    w = _regressor(robot, q, dq, ddq).transpose(1, 0, 2).reshape(6 * len(q), -1)  # their joint-major rows
    torque_gears = np.diag(np.asarray(params['N'], float))
    torque_gears[4, 5] = params['N'][5]
    tau = (torque_gears @ motor_torques.T)[:, border:motor_torques.shape[0] - border].ravel()
    per_joint = tau.shape[0] // 6
    torques, blocks = [], []
    for i in range(6):
        measured = tau[i * per_joint:(i + 1) * per_joint]
        block = w[i * per_joint:i * per_joint + per_joint]
        for _ in range(2):
            measured = scipy.signal.decimate(measured, q=10, zero_phase=True)
            block = scipy.signal.decimate(block, q=10, zero_phase=True, axis=0)
        moving = np.abs(block[:, i * 14 + 11]) >= params['dq_lim_def'][i]
        torques.append(measured[moving])
        blocks.append(block[moving])
    y, w = np.concatenate(torques), np.vstack(blocks)
    kept = np.flatnonzero(np.sum(w * w, axis=0) >= 0.001)  # eliminate_non_dynaffect
    base = kept[np.abs(np.diag(np.linalg.qr(w[:, kept])[1])) > 1e-8]  # double_QR
    w_base = w[:, base]
    phi = np.round(np.linalg.lstsq(w_base, y, rcond=None)[0], 6)
    sizes = [len(t) for t in torques]
    edges = np.cumsum([0] + sizes)
    variance = np.array([np.sum((torques[i] - w_base[edges[i]:edges[i + 1]] @ phi) ** 2) / sizes[i]
                         for i in range(6)])
    weight = 1.0 / np.repeat(variance, sizes)

    def wls(columns):
        covariance = np.linalg.inv(columns.T @ (columns * weight[:, None]))
        values = np.round(covariance @ (columns.T @ (weight * y)), 6)
        return values, np.round(100 * np.sqrt(np.diag(covariance)) / np.abs(values), 2)

    values, std = wls(w_base)
    out = {'base_wls': (base.copy(), values), 'equations': int(len(y))}
    columns, chosen = list(base), w_base
    while not std.max() < params['ratio_essential'] * std.min():
        drop = int(np.flatnonzero(np.isclose(std, std.max()))[0])
        del columns[drop]
        chosen = np.delete(chosen, drop, 1)
        values, std = wls(chosen)
    out['essential_wls'] = (np.array(columns), values)
    return out


def _rmse(errors: np.ndarray, keep: np.ndarray) -> dict:
    return {joint: float(np.sqrt(np.mean(errors[keep[:, j], j] ** 2))) for j, joint in enumerate(JOINTS)}


def _errors(errors: np.ndarray, keep: np.ndarray) -> dict:
    """{joint: its kept rows' errors [N·m], a list} of (M, 6) errors."""
    return {joint: errors[keep[:, j], j].tolist() for j, joint in enumerate(JOINTS)}


def _model_series(problem, torque_of) -> np.ndarray:
    """A model's joint torques (q, q̇, q̈ → (N, 6) N·m) on the problem's filtered states, decimated: (M, 6)."""
    parts = []
    for k, block in enumerate(problem.blocks):
        signals, _ = differentiate(problem.recordings[k].dataset, problem.settings)
        parts.append(block.decimator(torque_of(signals.q, signals.dq, signals.ddq)))
    return np.concatenate(parts)


def _joint_side_effect(robot, drives, train, held) -> dict:
    """What the joints' own friction (dynid.identify.equations.joint_side) does on this split: the library's
    identification with the defaults, with and without it (``ModelSpec(joint_side_friction=False)``), held out per
    joint in both spaces."""
    from dynid.identify.equations.request import IdentifyOptions, ModelSpec
    from dynid.identify.steps.run import identify

    out = {}
    for label, wanted in (('with', True), ('without', False)):
        result = identify(robot.with_drives(drives), [RecordingInput(train, name=LABEL)],
                          ModelSpec(friction='auto', joint_side_friction=wanted),
                          options=IdentifyOptions(method='auto'), drives=drives)
        metrics = predict(result, robot, held, drives=drives).metrics(robot.joint_names)
        out[label] = {'motor': {j: m['rmse'] for j, m in metrics['joints'].items()},
                      'joint': {j: m['rmse'] for j, m in metrics['joint_space']['joints'].items()},
                      'parameters': {name: result.value(name) for name in result.parameter_names
                                     if name.startswith(('Fcq_', 'Fvq_'))}}
    return out


def _imported(root: Path, folder: Path, run) -> tuple[Path, Path, dict]:
    """The TX40's bag through the documented map, refused with a command that is run as printed (module docstring):
    (bag, drives file, what was refused and run)."""
    data = root / EXAMPLE / 'data'
    files = [data / 'pos_read_data.csv', data / 'curr_data.csv']
    urdf = str(root / URDF)
    drives_path = drives_file(root, folder / 'tx40_drives.yaml')
    bag = folder / 'tx40'
    say(f'{LABEL}: dynid import of the two files with the documented map written without their files')
    given = ['import', *map(str, files), '--columns', 'motor_q=Joint_{n},motor_torque=Joint_{n}', '--robot', urdf,
             '--rate', '5000', '--drives', str(drives_path), '-o', str(bag)]
    code, said = run(given)
    refusal = next((line for line in reversed(said.splitlines()) if 'dynid import ' in line), '')
    if code != 2 or not refusal:
        raise SystemExit(f'{LABEL}: the import of two files with one header was not refused with a command '
                         f'(exit {code}): {said[-500:]}')
    command = shlex.split(refusal[refusal.index('dynid import '):])
    say(f'{LABEL}: refused ({refusal[:refusal.index(": dynid import")]}); running its command')
    code, said = run(command[1:])
    if code != 0:
        raise SystemExit(f'{LABEL}: the command the refusal gave failed ({code}): {said[-500:]}')
    return bag, drives_path, {'refused': refusal[:refusal.index(': dynid import')], 'command': ' '.join(command)}


def _figaroh(root: Path, robot, drives, problem, train_rows: slice, computed=(False, True)) -> dict:
    """FIGAROH's refit on the rows ``train_rows`` of the CSV files, scored on dynid's held-out rows (``problem``: the
    held-out prediction's) in both spaces; with q̈6 left 0 (their loop) and, in ``computed``, computed."""
    data = root / EXAMPLE / 'data'
    angles = np.loadtxt(data / 'pos_read_data.csv', delimiter=',', skiprows=1)[train_rows]
    torques = np.loadtxt(data / 'curr_data.csv', delimiter=',', skiprows=1)[train_rows]
    coupling = drives.coupling
    rotor = drives.rotor_inertia if problem.compensate_rotor else np.zeros(6)
    acceleration = np.concatenate([block.rotor_acceleration for block in problem.blocks])
    motors_measured = np.concatenate([block.y for block in problem.blocks]) + rotor * acceleration
    keep = np.concatenate([problem.block_keep(k) for k in range(len(problem.blocks))])
    keep_joint = np.stack([keep[:, coupling[:, j] != 0].all(axis=1) for j in range(6)], axis=1)
    figaroh = {}
    for ddq6 in computed:
        fits = figaroh_refit(root, robot, angles, torques, ddq6)
        for name in ('base_wls', 'essential_wls'):
            columns, values = fits[name]
            joints_torque = _model_series(problem, lambda q, dq, ddq, c=columns, v=values:
                                          _regressor(robot, q, dq, ddq)[:, :, c] @ v)
            motors = np.linalg.solve(coupling.T, joints_torque.T).T
            label = name + ('_ddq6_computed' if ddq6 else '')
            motor_errors, joint_errors = motors_measured - motors, motors_measured @ coupling - joints_torque
            figaroh[label] = {'motor': _rmse(motor_errors, keep), 'joint': _rmse(joint_errors, keep_joint),
                              'parameters': int(len(columns)), 'equations': fits['equations'],
                              'errors': {'motor': _errors(motor_errors, keep),
                                         'joint': _errors(joint_errors, keep_joint)}}
    return figaroh


def _space(metrics: dict) -> dict:
    """{'dynid': {joint: RMSE}, 'fit': {joint: NRMSE fit %}, 'robot_file': {joint: RMSE}, 'pooled': ‖e‖/‖y‖} of one
    space's metrics (``dynid validate``'s)."""
    return {'dynid': {j: m['rmse'] for j, m in metrics['joints'].items()},
            'fit': {j: m['nrmse_fit_percent'] for j, m in metrics['joints'].items()},
            'robot_file': {j: m['rmse'] for j, m in metrics['robot_file']['joints'].items()},
            'pooled': metrics['relative_residual']}


def tx40(root: Path, folder: Path, run=None) -> dict:
    """The TX40 entry (module docstring): ``{'figaroh_plus_tx40': entry}``. ``run``: ``dynid ARGV`` → (exit code,
    what it printed), default in this process (:func:`_dynid`; bench_public.py passes its own, which records library
    warnings)."""
    run = run or _dynid
    data = root / EXAMPLE / 'data'
    needed = [data / 'pos_read_data.csv', data / 'curr_data.csv', root / URDF,
              root / EXAMPLE / 'config' / 'T40X_config.yaml', root / EXAMPLE / 'identification.py']
    missing = [str(path) for path in needed if not path.is_file()]
    if missing:
        return {LABEL: {'status': f'missing: {", ".join(missing)}'}}
    urdf = str(root / URDF)
    bag, drives_path, imported = _imported(root, folder, run)
    result_path, physical_path = folder / 'tx40.yaml', folder / 'tx40_physical.yaml'
    common = [str(bag), '--robot', urdf, '--drives', str(drives_path), '--holdout', str(HOLDOUT)]
    code, said = run(['identify', *common, '-o', str(result_path)])
    if code != 0:
        raise SystemExit(f'{LABEL}: dynid identify with the defaults failed ({code}): {said[-500:]}')
    warnings = [line[len('warning: '):] for line in said.splitlines() if line.startswith('warning: ')]
    _, checked = run(['validate', '--params', str(result_path), '--holdout', str(HOLDOUT), '--drives',
                      str(drives_path), str(bag)])
    named = named_joints(warnings + checked.splitlines())
    result = IdentificationResult.load(result_path)
    robot = load_robot(urdf)
    drives = load_drives(drives_path, robot.joint_names)
    train, held = read_bag(bag, robot.joint_names).split_holdout(HOLDOUT)
    prediction = predict(result, robot, held, drives=drives)
    metrics = prediction.metrics(robot.joint_names)
    motor, joint = _space(metrics), _space(metrics['joint_space'])
    figaroh = _figaroh(root, robot, drives, prediction.problem, slice(0, train.n_samples))
    chosen = {space: {j: min(('base_wls', 'essential_wls'), key=lambda m, s=space, j=j: figaroh[m][s][j])
                      for j in JOINTS} for space in ('motor', 'joint')}
    reference = {space: {j: figaroh[m][space][j] for j, m in chosen[space].items()} for space in chosen}
    joint_measured, joint_predicted, _, joint_of = prediction.joint_rows
    ours = {'motor': (prediction.measured - prediction.predicted, prediction.joints),
            'joint': (joint_measured - joint_predicted, joint_of)}
    errors = {space: {j: {'dynid': error[of == k].tolist(), 'reference': figaroh[chosen[space][j]]['errors'][space][j]}
                      for k, j in enumerate(JOINTS)} for space, (error, of) in ours.items()}
    behind = {name + ('' if space == 'motor' else ' (joint space)'): [mine['dynid'][name], reference[space][name]]
              for space, mine in (('motor', motor), ('joint', joint)) for name in JOINTS
              if mine['dynid'][name] > reference[space][name]}
    code, said = run(['identify', *common, '--physical', '-o', str(physical_path)])
    physical = {'refused': said.strip().splitlines()[-1][:300] if said.strip() else f'exit {code}'} if code else \
        {'pooled': predict(IdentificationResult.load(physical_path), robot, held, drives=drives).metrics(
            robot.joint_names)['relative_residual']}
    say(f'{LABEL}: the joints\' own friction: the library\'s identification with and without it')
    rows = int(prediction.measured.size)
    return {LABEL: {
        'method': result.method, 'friction': result.model['friction'], 'held_out_rows': rows,
        'split': f'identified on the first {1 - HOLDOUT:g} of the log in time ({train.n_samples} of '
                 f'{train.n_samples + held.n_samples} rows), held out on the last {HOLDOUT:g} ({held.n_samples} rows, '
                 f'{rows // 6} decimated rows per joint)',
        'import': imported, 'identify_warnings': warnings, 'named': named,
        'validate_lines': [line for line in checked.splitlines() if OWN_MODEL in line][:20],
        **{key: motor[key] for key in ('dynid', 'fit', 'robot_file', 'pooled')}, 'reference': reference['motor'],
        'joint_space': {**joint, 'reference': reference['joint']}, 'figaroh': figaroh, 'physical': physical,
        'reference_source': 'FIGAROH\'s refit (examples/staubli_TX40/identification.py), re-implemented as their code '
                            'runs it, trained on the same rows: the better of their base WLS and essential WLS per '
                            'joint and space',
        'joints_behind_reference': behind, 'ahead_on_every_joint': not behind, 'errors': errors,
        'joint_side': {'choice': (result.model.get('choice') or {}).get('tried', {}).get('joint_side'),
                       'joints': result.model.get('joint_side_joints'),
                       **_joint_side_effect(robot, drives, train, held)},
        'issue_joint_5': ISSUE}}


def processing(root: Path, folder: Path) -> dict:
    """Joint 5 against FIGAROH's processing (``--processing``): the library's identification with the defaults (method
    and law chosen) and with one of their processing choices each, a position low-pass at 25 Hz (theirs), rows with
    |ω| < 0.06 rad/s left out (about their ``dq_lim_def`` of the wrist), without the joints' own friction; and the
    split the other way round (the first 30 % held out, trained on the rest). Each beside FIGAROH's refit on the same
    training rows, scored on the same held-out rows: {variant: {'dynid': {space: RMSE}, 'figaroh': {space: RMSE}}} of
    joint 5 [N·m], and the identification's Fcq_6, Fvq_6."""
    from dynid.identify.equations.request import IdentifyOptions, ModelSpec
    from dynid.identify.steps.run import identify
    from dynid.signal.preprocess import FilterSettings

    bag, drives_path, _ = _imported(root, folder, _dynid)
    robot = load_robot(str(root / URDF))
    drives = load_drives(drives_path, robot.joint_names)
    whole = read_bag(bag, robot.joint_names)
    n = whole.n_samples
    train, held = whole.split_holdout(HOLDOUT)
    cut = train.n_samples
    splits = {'last': (train, held, slice(0, cut)),
              'first': (whole.sliced(n - cut, n), whole.sliced(0, n - cut), slice(n - cut, n))}
    variants = {'defaults': ('last', None, True),
                'position cut-off 25 Hz': ('last', {'position_cutoff_hz': 25.0}, True),
                'stiction velocity 0.06 rad/s': ('last', {'stiction_velocity': 0.06}, True),
                'without the joints\' own friction': ('last', None, False),
                'first 30 % held out': ('first', None, True),
                'first 30 % held out, without the joints\' own friction': ('first', None, False)}
    out = {}
    for label, (split, filters, own) in variants.items():
        say(f'{LABEL}: processing: {label}')
        training, holding, rows = splits[split]
        result = identify(robot.with_drives(drives), [RecordingInput(training, name=LABEL)],
                          ModelSpec(friction='auto', joint_side_friction=own),
                          None if filters is None else FilterSettings(**filters), IdentifyOptions(method='auto'),
                          drives)
        prediction = predict(result, robot, holding, drives=drives)
        metrics = prediction.metrics(robot.joint_names)
        figaroh = _figaroh(root, robot, drives, prediction.problem, rows, computed=(False,))
        out[label] = {'dynid': {'motor': metrics['joints']['joint_5']['rmse'],
                                'joint': metrics['joint_space']['joints']['joint_5']['rmse']},
                      'figaroh': {space: min(figaroh[m][space]['joint_5'] for m in ('base_wls', 'essential_wls'))
                                  for space in ('motor', 'joint')},
                      'own': {name: result.value(name) for name in result.parameter_names
                              if name.startswith(('Fcq_', 'Fvq_'))},
                      'own_relative_std_percent': {name: float(std) for name, std in zip(
                          result.parameter_names, result.relative_std, strict=True) if name.startswith('Fcq_')},
                      'signs': _signs(training)}
    return out


def _signs(recording, moving: float = 0.05) -> dict:
    """On the samples where θ̇5, θ̇6 and q̇6 all exceed ``moving`` [rad/s]: the share where sgn(q̇6) = sgn(θ̇6) (the
    stage's Coulomb column and motor 6's alike in motor 6's equation) and where sgn(q̇6) = −sgn(θ̇5) (alike in motor
    5's, with the opposite sign)."""
    motor, joint = recording.dtheta, recording.dq
    rows = (np.abs(motor[:, 4]) > moving) & (np.abs(motor[:, 5]) > moving) & (np.abs(joint[:, 5]) > moving)
    q6, theta5, theta6 = (np.sign(x[rows]) for x in (joint[:, 5], motor[:, 4], motor[:, 5]))
    return {'q6_as_theta6': float(np.mean(q6 == theta6)), 'q6_against_theta5': float(np.mean(q6 == -theta5))}


def summary(public: dict) -> list[str]:
    """Lines for a table: per joint and space dynid's held-out RMSE beside FIGAROH's refit."""
    entry = public.get(LABEL) or {}
    if 'dynid' not in entry:
        return [f'{LABEL}: {entry.get("status")}']
    lines = [f'{LABEL} ({entry["method"]} {entry["friction"]}; {entry["split"]}; reference: '
             f'{entry["reference_source"]})']
    for space, mine, theirs, file in (
            ('motor space', entry['dynid'], entry['reference'], entry['robot_file']),
            ('joint space', entry['joint_space']['dynid'], entry['joint_space']['reference'],
             entry['joint_space']['robot_file'])):
        lines.append(f'  {space}: held-out RMSE [N·m] dynid vs FIGAROH (robot file): ' + ', '.join(
            f'{j} {mine[j]:.3g} vs {theirs[j]:.3g} ({file[j]:.3g})' for j in JOINTS))
    for name, figures in entry['figaroh'].items():
        lines.append(f'  FIGAROH {name} ({figures["parameters"]} parameters): motor ' + ', '.join(
            f'{v:.3g}' for v in figures['motor'].values()) + '; joint ' + ', '.join(
            f'{v:.3g}' for v in figures['joint'].values()))
    own = entry['joint_side']
    lines.append(f'  the joints\' own friction (kept on {own["joints"] or "none"}; folds {own["choice"]}): without → '
                 f'with it, joint 5 motor {own["without"]["motor"]["joint_5"]:.3g} → '
                 f'{own["with"]["motor"]["joint_5"]:.3g}, joint {own["without"]["joint"]["joint_5"]:.3g} → '
                 f'{own["with"]["joint"]["joint_5"]:.3g} N·m '
                 f'({", ".join(f"{k} {v:.3g}" for k, v in own["with"]["parameters"].items())})')
    physical = entry['physical']
    lines.append(f'  pooled held-out ‖e‖/‖y‖ (motors): defaults {entry["pooled"]:.4g}, --physical '
                 + (f'{physical["pooled"]:.4g}' if 'pooled' in physical else f'refused: {physical["refused"]}')
                 + f'; named beside the robot file\'s own model: {entry["named"] or "none"}')
    lines.append(f'  behind FIGAROH\'s refit on: {list(entry["joints_behind_reference"]) or "none"}')
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--figaroh-plus', type=Path, default=os.environ.get('DYNID_FIGAROH_PLUS_DATA') or None,
                        metavar='DIR', help='checkout of thanhndv212/figaroh-plus (default $DYNID_FIGAROH_PLUS_DATA)')
    parser.add_argument('--processing', action='store_true',
                        help='also joint 5 against FIGAROH\'s processing choices and the other split (processing())')
    args = parser.parse_args()
    if args.processing and args.figaroh_plus is not None:
        with tempfile.TemporaryDirectory() as folder:
            found = processing(args.figaroh_plus, Path(folder))
        for label, entry in found.items():
            print(f'  joint 5, {label}: motor {entry["dynid"]["motor"]:.3f} vs FIGAROH '
                  f'{entry["figaroh"]["motor"]:.3f}, joint {entry["dynid"]["joint"]:.3f} vs '
                  f'{entry["figaroh"]["joint"]:.3f} N·m '
                  f'({", ".join(f"{k} {v:.3g}" for k, v in entry["own"].items()) or "no own friction"}; σ % '
                  f'{entry["own_relative_std_percent"]}; signs on the training rows {entry["signs"]})')
        print(json.dumps({'benchmark': 'public_tx40_processing', LABEL: found}))
    if args.figaroh_plus is None:
        public = {LABEL: {'status': 'not given'}}
    else:
        with tempfile.TemporaryDirectory() as folder:
            public = tx40(args.figaroh_plus, Path(folder))
    for line in summary(public):
        print(line)
    entry = public[LABEL]
    print(json.dumps({'benchmark': 'public_tx40', LABEL: {k: v for k, v in entry.items()
                                                          if k not in ('figaroh', 'errors')}}))


if __name__ == '__main__':
    main()
