"""The TX40's joint 5 in motor space, dynid's defaults beside FIGAROH's refit: where the two models differ
(``benchmarks/public_tx40.py`` scores them; this takes them apart).

Run: ``.venv/bin/python -m benchmarks.public_tx40_joint5 --figaroh-plus DIR`` (the last line is JSON). The split,
the import, the identification (the library's, with the defaults) and FIGAROH's refit are ``public_tx40.py``'s. On
motor 5's held-out rows (the last 30 % of the log) it gives:

- ``held_out``: the RMSE [N·m] of dynid's model, of FIGAROH's essential WLS as their script fits it, and of the same
  columns (their regressor on dynid's filtered states, mapped onto the motors by C⁻ᵀ) fitted by their WLS on dynid's
  training rows of all six motors (``figaroh_columns_on_dynid_rows``): what their model gives without their
  processing;
- ``swapped``: each model's friction with the other's links and rotors (dynid's B·θ̈ from the drives file; theirs
  Ia, Iam6): which part of the prediction the gap sits in;
- ``motor_5_friction``: both models' friction in motor 5's equation as coefficients of sgn(q̇5), q̇5, sgn(q̇6), q̇6
  (link units; q̇5 = θ̇5, q̇6 = θ̇6 − θ̇5): dynid's fc_5, fv_5, −Fcq_6, −Fvq_6 (motor 5 keeps α = 1); FIGAROH's fs5,
  fv5 − fvm6, −fs6, fvm6 − fv6 (their joint 5's row minus joint 6's);
- ``opposite_share``: on the moving rows (|q̇5|, |q̇6| > 0.05 rad/s) of the training and the held-out part, the
  share where q̇6 turns against q̇5 (the wrist's two motors then turn the joint-side stage fast while θ̇6 stays
  small), and ``residual_correlation``: of the two models' motor-5 residuals on the held-out rows;
- ``scatter``: how far the two held-out figures lie apart against the scatter of motor 5's held-out rows
  (:func:`_scatter`): which decimated rows they are, the strokes they make (runs of one sign of q̇5) with both RMSEs
  on each, and a moving-block bootstrap of the rows (Künsch 1989; blocks of 4 and 12 rows, 80–240 ms) giving the
  90 % interval of the ratio dynid/FIGAROH and the share of resamples where dynid is not behind;
- ``motor_5_inertia``: the inertia in motor 5's equation (:func:`_inertia`): its coefficients on θ̈5 and θ̈6
  [kg·m², link units] in dynid's model (links and rotors, B·θ̈ per motor: C⁻ᵀ·M(q)·C⁻¹ + B), in FIGAROH's essential
  WLS (q̈6 left 0 in their training, as their script runs) and in the same with q̈6 computed, averaged over the
  held-out states; and motor 5's RMSE on the training and held-out rows of dynid's model with its inertial torque
  replaced by FIGAROH's (M(q)·q̈ of their regressor, mapped onto the motors by C⁻ᵀ);
- ``apparent_inertia``: motor 5's measured torque K_τ·i [N·m] against its acceleration θ̈5 (and θ̈6) in frequency
  bands (:func:`_apparent_inertia`), per part of the log: the least-squares coefficient [kg·m²] and the share of the
  band's torque it explains; a rigid drive has the links' and rotor's inertia in every band;
- ``joint_4_robot_file``: joint 4, which identify's folds give to the robot file's own model (:func:`_joint_4`).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

import numpy as np
import scipy.signal

from benchmarks import public_tx40 as tx40
from benchmarks.public_scoring import SEED, bootstrap_ratios
from dynid.identify.equations.request import IdentifyOptions, ModelSpec, RecordingInput
from dynid.identify.result.torque import RigidBodyTorque
from dynid.identify.steps.run import identify
from dynid.identify.validation.validate import predict
from dynid.io.bag import read_bag
from dynid.model import load_robot
from dynid.model.drives import load_drives
from dynid.signal.preprocess import differentiate

MOTOR = 4  # motor 5's index
#: FIGAROH's column names (public_tx40._regressor's order): per joint Ixx…m, Ia, fv, fs, off; then Iam6, fvm6, fsm6
COLUMNS = [f'{symbol}{k + 1}' for k in range(6) for symbol in
           ('XX', 'XY', 'XZ', 'YY', 'YZ', 'ZZ', 'MX', 'MY', 'MZ', 'M', 'Ia', 'fv', 'fs', 'off')] + ['Iam6', 'fvm6',
                                                                                                   'fsm6']


def _rows(result, robot, drives, dataset) -> dict:
    """The motors' rows of ``dataset`` as dynid's prediction keeps them, per motor k (lists): measured (B·θ̈ added
    back), dynid's model, its friction part, FIGAROH's regressor in motor space; and motor 5's states q̇."""
    prediction = predict(result, robot, dataset, drives=drives)
    problem = prediction.problem
    keep = np.concatenate([problem.block_keep(k) for k in range(len(problem.blocks))])
    rotor = drives.rotor_inertia * np.concatenate([b.rotor_acceleration for b in problem.blocks])
    values = np.array([result.value(name) for name in problem.parameter_names()])
    rigid = len(problem.rigid_names)
    theirs = tx40._model_series(problem, lambda q, dq, ddq: tx40._regressor(robot, q, dq, ddq).reshape(len(q), -1))
    theirs = np.einsum('kj,njp->nkp', np.linalg.inv(drives.coupling.T), theirs.reshape(len(theirs), 6, -1))
    states = tx40._model_series(problem, lambda q, dq, ddq: dq)
    out = {'measured': [], 'dynid': [], 'friction': [], 'regressor': []}
    for k in range(6):
        mine = prediction.joints == k
        out['measured'].append(prediction.measured[mine] + rotor[keep[:, k], k])
        out['dynid'].append(prediction.predicted[mine] + rotor[keep[:, k], k])
        out['friction'].append(prediction.design[mine][:, rigid:] @ values[rigid:])
        out['regressor'].append(theirs[keep[:, k], k])
    out['dq'] = states[keep[:, MOTOR]]
    out['kept'] = np.flatnonzero(keep[:, MOTOR])
    out['rows'] = len(keep)
    return out


#: the moving-block bootstrap of :func:`_scatter`: block lengths [decimated rows]
BLOCKS = (4, 12)


def _scatter(mine: np.ndarray, theirs: np.ndarray, kept: np.ndarray, rows: int, dq5: np.ndarray) -> dict:
    """Motor 5's held-out errors [N·m] of dynid (``mine``) and FIGAROH (``theirs``) against the scatter of their
    rows (module docstring): ``kept`` the decimated rows of the held-out part (of ``rows``) motor 5 keeps, ``dq5``
    its velocity there [rad/s]."""
    ratio = _rmse(mine) / _rmse(theirs)
    bounds = np.flatnonzero((np.diff(kept) != 1) | (np.diff(np.sign(dq5)) != 0)) + 1
    strokes = [{'rows': [int(kept[part[0]]), int(kept[part[-1]])], 'dq5_peak': float(dq5[part][np.argmax(np.abs(
        dq5[part]))]), 'dynid': _rmse(mine[part]), 'figaroh': _rmse(theirs[part])}
               for part in np.split(np.arange(len(kept)), bounds)]
    rng, n, bootstrap = np.random.default_rng(SEED), len(mine), {}
    for block in BLOCKS:
        ratios = bootstrap_ratios(mine, theirs, block, rng)
        bootstrap[f'block_{block}'] = {'ratio_90_percent': np.percentile(ratios, [5, 95]).tolist(),
                                       'share_dynid_not_behind': float(np.mean(ratios <= 1.0))}
    return {'rows': {'kept': int(n), 'of': int(rows), 'first': int(kept[0]), 'last': int(kept[-1])},
            'ratio': float(ratio), 'strokes': strokes, 'block_bootstrap': bootstrap}


def _wls(regressors: list[np.ndarray], measured: list[np.ndarray]) -> np.ndarray:
    """FIGAROH's WLS on these rows: least squares, then each motor's rows weighted by 1/σ_k of its residual."""
    a, y = np.vstack(regressors), np.concatenate(measured)
    first = np.linalg.lstsq(a, y, rcond=None)[0]
    weight = np.concatenate([np.full(len(t), 1.0 / np.std(t - r @ first)) for r, t in zip(regressors, measured,
                                                                                         strict=True)])
    return np.linalg.lstsq(a * weight[:, None], y * weight, rcond=None)[0]


def _rmse(error) -> float:
    return float(np.sqrt(np.mean(np.square(error))))


def _opposite_share(dq: np.ndarray, moving: float = 0.05) -> float:
    rows = (np.abs(dq[:, 4]) > moving) & (np.abs(dq[:, 5]) > moving)
    return float(np.mean(np.sign(dq[rows, 5]) == -np.sign(dq[rows, 4])))


def joint5(root: Path, folder: Path) -> dict:
    """The figures of the module docstring."""
    bag, drives_path, _ = tx40._imported(root, folder, tx40._dynid)
    robot = load_robot(str(root / tx40.URDF))
    drives = load_drives(drives_path, robot.joint_names)
    train, held = read_bag(bag, robot.joint_names).split_holdout(tx40.HOLDOUT)
    result = identify(robot.with_drives(drives), [RecordingInput(train, name=tx40.LABEL)], ModelSpec(friction='auto'),
                      options=IdentifyOptions(method='auto'), drives=drives)
    data = tx40.EXAMPLE / 'data'
    angles, torques = (np.loadtxt(root / data / name, delimiter=',', skiprows=1)[:train.n_samples]
                       for name in ('pos_read_data.csv', 'curr_data.csv'))
    columns, values = tx40.figaroh_refit(root, robot, angles, torques)['essential_wls']
    computed = tx40.figaroh_refit(root, robot, angles, torques, ddq6=True)['essential_wls']
    fitted, scored = (_rows(result, robot, drives, part) for part in (train, held))
    refit = _wls([r[:, columns] for r in fitted['regressor']], fitted['measured'])
    regressor, measured, friction_part = (scored[key][MOTOR] for key in ('regressor', 'measured', 'friction'))
    theirs = regressor[:, columns] @ values
    friction = np.array([COLUMNS[c][:2] in ('fv', 'fs', 'of') for c in columns])
    their_friction = regressor[:, columns[friction]] @ values[friction]
    mine = scored['dynid'][MOTOR]
    y, a = fitted['measured'][MOTOR], fitted['regressor'][MOTOR][:, columns]
    value = dict(zip((COLUMNS[c] for c in columns), values.tolist(), strict=True))
    figaroh_friction = [value.get('fs5', 0.0), value.get('fv5', 0.0) - value.get('fvm6', 0.0), -value.get('fs6', 0.0),
                        value.get('fvm6', 0.0) - value.get('fv6', 0.0)]
    dynid_friction = [result.value('fc_5'), result.value('fv_5'), -result.value('Fcq_6'), -result.value('Fvq_6')]
    return {
        'held_out_rows': int(len(measured)),
        'held_out': {'dynid': _rmse(measured - mine), 'figaroh_essential_wls': _rmse(measured - theirs),
                     'figaroh_columns_on_dynid_rows': _rmse(measured - regressor[:, columns] @ refit)},
        'training': {'dynid': _rmse(y - fitted['dynid'][MOTOR]), 'figaroh_essential_wls': _rmse(y - a @ values)},
        'swapped': {'dynid_links_figaroh_friction': _rmse(measured - (mine - friction_part + their_friction)),
                    'figaroh_links_dynid_friction': _rmse(measured - (theirs - their_friction + friction_part))},
        'motor_5_friction': {'terms': ['sgn(q5)', 'q5', 'sgn(q6)', 'q6'], 'dynid': dynid_friction,
                             'figaroh': figaroh_friction},
        'opposite_share': {'training': _opposite_share(fitted['dq']), 'held_out': _opposite_share(scored['dq'])},
        'residual_correlation': float(np.corrcoef(measured - mine, measured - theirs)[0, 1]),
        'scatter': _scatter(measured - mine, measured - theirs, scored['kept'], scored['rows'], scored['dq'][:, MOTOR]),
        'motor_5_inertia': _inertia(result, robot, drives, {'training': (train, fitted), 'held_out': (held, scored)},
                                    {'figaroh_essential_wls': (columns, values),
                                     'figaroh_essential_wls_ddq6_computed': computed}),
        'apparent_inertia': {name: _apparent_inertia(part, drives, predict(result, robot, part, drives=drives)
                                                     .problem.settings) for name, part in (('training', train),
                                                                                          ('held_out', held))},
        'joint_4_robot_file': _joint_4(result, robot, drives, held)}


def _inertia(result, robot, drives, parts: dict, figaroh: dict) -> dict:
    """``motor_5_inertia`` of the module docstring. ``parts``: {name: (recording, :func:`_rows` of it)};
    ``figaroh``: {label: (columns of their regressor, values)}."""
    rigid = RigidBodyTorque(result, robot)
    rotor = drives.rotor_inertia + np.array([result.value(f'Ia_{j + 1}') if f'Ia_{j + 1}' in result.parameter_names
                                             else 0.0 for j in range(robot.n)])  # B and the excess identified
    models = {'dynid': rigid, **{label: (lambda q, dq, ddq, c=c, v=v: tx40._regressor(robot, q, dq, ddq)[:, :, c] @ v)
                                 for label, (c, v) in figaroh.items()}}

    def inertial(torque_of):  # M(q)·q̈ [N·m, joint space]: the model is linear in q̈
        return lambda q, dq, ddq: torque_of(q, dq, ddq) - torque_of(q, dq, np.zeros_like(ddq))

    held, _ = parts['held_out']
    problem = predict(result, robot, held, drives=drives).problem
    q = differentiate(held, problem.settings)[0].q[::200]  # every 40 ms
    coefficients = {}
    for label, torque_of in models.items():
        zero = torque_of(q, np.zeros_like(q), np.zeros_like(q))
        mass = np.stack([torque_of(q, np.zeros_like(q), np.tile(np.eye(robot.n)[k], (len(q), 1))) - zero
                         for k in range(robot.n)], axis=2)  # (samples, joint, q̈_k)
        motors = np.linalg.solve(drives.coupling.T, mass) @ np.linalg.inv(drives.coupling)  # C⁻ᵀ·M·C⁻¹
        if label == 'dynid':
            motors = motors + np.diag(rotor)
        coefficients[label] = motors[:, MOTOR, 4:6].mean(axis=0).tolist()
    swapped = {}
    for name, (recording, rows) in parts.items():
        problem = predict(result, robot, recording, drives=drives).problem
        keep = np.concatenate([problem.block_keep(k) for k in range(len(problem.blocks))])[:, MOTOR]
        acceleration = np.concatenate([block.rotor_acceleration for block in problem.blocks])[keep, MOTOR]
        mine, theirs = (drives.joint_to_motor_torque_space(tx40._model_series(problem, inertial(models[label])))[
            keep, MOTOR] for label in ('dynid', 'figaroh_essential_wls'))
        predicted = rows['dynid'][MOTOR] - mine - rotor[MOTOR] * acceleration + theirs
        swapped[name] = _rmse(rows['measured'][MOTOR] - predicted)
    return {'terms': ['ddtheta5', 'ddtheta6'], 'coefficients': coefficients,
            'dynid_with_figaroh_inertia': swapped}


#: the frequency bands of :func:`_apparent_inertia` [Hz]
BANDS = ((3.0, 8.0), (8.0, 18.0), (10.0, 15.0), (18.0, 30.0))


def _apparent_inertia(recording, drives, settings, edge_s: float = 0.2) -> dict:
    """``apparent_inertia`` of the module docstring for one part of the log: per band, motor 5's torque K_τ·i and
    its acceleration θ̈5 (θ̈6) band-passed (Butterworth of order 4, zero phase; ``edge_s`` [s] cut at either end), the
    least-squares coefficients [kg·m²] on θ̈5 alone and on θ̈5, θ̈6, and the share of the band's torque variance
    explained by the second."""
    signals, _ = differentiate(recording, settings)
    torque = drives.current_to_joint_torque(signals.current)[:, MOTOR]
    cut = int(edge_s * signals.rate_hz)
    out = {}
    for low, high in BANDS:
        band = scipy.signal.butter(4, [low, high], 'bandpass', fs=signals.rate_hz, output='sos')
        y = scipy.signal.sosfiltfilt(band, torque)[cut:-cut]
        a = scipy.signal.sosfiltfilt(band, signals.ddtheta[:, MOTOR:MOTOR + 2], axis=0)[cut:-cut]
        alone = np.linalg.lstsq(a[:, :1], y, rcond=None)[0]
        both = np.linalg.lstsq(a, y, rcond=None)[0]
        out[f'{low:g}-{high:g} Hz'] = {'on_ddtheta5': float(alone[0]), 'on_ddtheta5_ddtheta6': both.tolist(),
                                      'explained': float(1.0 - np.var(y - a @ both) / np.var(y)),
                                      'torque_rms': float(np.std(y))}
    return out


def _joint_4(result, robot, drives, held) -> dict:
    """Joint 4, where identify's folds name the robot file's own model: its fold scores beside the chosen model's
    (the choice's table), and held out [N·m] dynid's model, the robot file's links with the chosen law's friction
    fitted (the model the folds score: :meth:`IdentificationResult.robot_file_values`) and validate's fixed reference
    (the file's links with Coulomb + viscous + offset fitted)."""
    prediction = predict(result, robot, held, drives=drives)
    order = {name: i for i, name in enumerate(result.parameter_names)}
    file_values = result.robot_file_values()
    with_law = prediction.design @ np.array([file_values[order[name]]
                                             for name in prediction.problem.parameter_names()])
    rows = prediction.joints == 3
    tried = (result.model.get('choice') or {}).get('tried') or {}
    return {'folds': {'chosen': tried.get('chosen_per_joint', {}).get('joint_4'),
                      'robot_file_with_the_chosen_law': tried.get('robot_file_per_joint', {}).get('joint_4')},
            'held_out': {'dynid': _rmse((prediction.measured - prediction.predicted)[rows]),
                         'robot_file_with_the_chosen_law': _rmse((prediction.measured - with_law)[rows]),
                         'robot_file_fixed_reference': _rmse((prediction.measured - prediction.robot_file)[rows])}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--figaroh-plus', type=Path, default=os.environ.get('DYNID_FIGAROH_PLUS_DATA') or None,
                        metavar='DIR', help='checkout of thanhndv212/figaroh-plus (default $DYNID_FIGAROH_PLUS_DATA)')
    args = parser.parse_args()
    if args.figaroh_plus is None:
        sys.exit('give --figaroh-plus DIR')
    with tempfile.TemporaryDirectory() as folder:
        found = joint5(args.figaroh_plus, Path(folder))
    for key, entry in found.items():
        print(f'{key}: {entry}')
    print(json.dumps({'benchmark': 'public_tx40_joint5', **found}))


if __name__ == '__main__':
    main()
