"""The real logs of ``bench_contact.py``: the UR10e pushes of dynamic_calibration and the LBR Med 7 log beside KUKA's
own external-torque estimate.

**UR10e** (``--dynamic-calibration DIR``, ``$DYNID_DYNCAL_DATA``; ``git clone
https://github.com/shamilmamedov/dynamic_calibration``). Every CSV is imported as ``public_datasets.py`` imports it
(``dynid import --columns 'time=#0,q=#{n},dq=#{i+7},current=#{i+13}'``, the drive gains of the author's ``main.m``
in a drives file) and the model identified by ``dynid identify`` (defaults) on the author's training run
(``identification_data/ur-20_02_10-30sec_12harm.csv``). Free motion: every run of ``validation_data``,
``jointwise_motion`` and ``identification_data`` but the training run, the loaded runs (``*load*``, ``unload`` kept)
and ``ur-19_09_27-11_32_02`` (its velocities and currents hold values of 1e129 and more: left out). Thresholds come
from free motion only, in two folds: each half of the free runs (alternating in name order) is scored with the
thresholds calibrated on the other half; the pushes (``collision/ur-20_01_22-push_pose_{1,2}.csv``, the arm at rest)
with thresholds calibrated on all free runs. A push counts as detected when an alarm starts within
:data:`PUSH_WINDOW_S` of the push times the issue reads off the logs (:data:`PUSHES`); alarms outside every window are
counted apart.
Over :data:`SPLITS` splits of the free runs (:func:`halves`: the two folds above, then random halves), each half is
scored with the other half's thresholds and the pushes with each half's (:func:`ur10e_splits`).

**LBR Med 7** (``--lbr DIR``, ``$DYNID_LBR_DATA``; ``git clone
https://github.com/lbr-stack/dynamic_parameter_identification``): the log of ``bench_any_log.py`` part 3
(``src/test/measurements.csv``, 100 Hz, joint torque sensors and KUKA's ``tau_ext``), identified on its first 70 %
(``--torque-sign all=-1``, as there); the observer runs on the held-out last 30 % with the same sign. The log holds
no contact: the RMS of τ̂_ext per joint against the RMS of KUKA's ``tau_ext`` on the same rows is each estimate's
free-motion error (lower is better).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np

from benchmarks.public_datasets import dynid, say
from dynid.contact.monitor import ContactMonitor
from dynid.contact.settings import ContactSettings
from dynid.identify.result.result import IdentificationResult
from dynid.io.bag import read_bag
from dynid.model import load_robot
from dynid.model.drives import load_drives

DYNCAL_COLUMNS = 'time=#0,q=#{n},dq=#{i+7},current=#{i+13}'
DYNCAL_TRAIN = 'ur-20_02_10-30sec_12harm'
BROKEN = 'ur-19_09_27-11_32_02'
#: [s] the pushes as the issue reads them off the logs (the arm at rest, pushed by hand)
PUSHES = {'push_pose_1': (1.9, 4.5, 8.3, 11.7), 'push_pose_2': (0.6, 2.4, 4.8, 8.0, 11.2, 14.2)}
PUSH_WINDOW_S = (-0.7, 1.2)
LBR_SPLIT = 0.7
#: the UR10e's splits of its free runs (:func:`ur10e_splits`)
SPLITS = 6


def _ur10e_data(root: Path, folder: Path):
    data = root / 'dataset_ur10e'
    quoted = re.search(r'drive_gains\s*=\s*\[([-+0-9.eE;\s]+)\]', (root / 'main.m').read_text())
    gains = [float(v) for v in quoted.group(1).replace(';', ' ').split()]
    robot = load_robot('ur10e')
    drives = folder / 'ur10e_drives.yaml'
    drives.write_text(json.dumps({joint: {'gear_ratio': 101.0, 'drive_gain': k, 'rotor_inertia': 0.0}
                                  for joint, k in zip(robot.joint_names, gains, strict=True)}))
    robot = robot.with_drives(load_drives(drives, robot.joint_names))
    bags = {}
    for path in sorted(data.glob('*/*.csv')):
        stem = path.stem
        if BROKEN in stem or ('load' in stem.lower() and 'unload' not in stem):
            continue
        bag = folder / f'ur10e_{path.parent.name}_{stem}'
        if not bag.exists():
            dynid(['import', str(path), '--columns', DYNCAL_COLUMNS, '--robot', 'ur10e', '-o', str(bag)])
        bags[(path.parent.name, stem)] = bag
    result = folder / 'ur10e_result.yaml'
    if not result.is_file():
        dynid(['identify', str(bags[('identification_data', DYNCAL_TRAIN)]), '--robot', 'ur10e', '--drives',
               str(drives), '-o', str(result), '--quiet'])
    return robot, IdentificationResult.load(result), bags


def _signals(bag: Path, robot) -> dict:
    d = read_bag(bag, robot.joint_names)
    return {'t': d.t, 'q': d.q, 'dq': d.dq, 'current': d.current}


def ur10e_logs(root: Path, folder: Path):
    """The UR10e's robot (with the author's drive gains), its identified result, the free runs and the pushes (each
    a mapping of signals, by stem) and the logs' rate [Hz]."""
    robot, result, bags = _ur10e_data(root, folder)
    free = {stem: _signals(bag, robot) for (part, stem), bag in bags.items()
            if part != 'collision' and stem != DYNCAL_TRAIN}
    pushes = {stem: _signals(bag, robot) for (part, stem), bag in bags.items() if part == 'collision'}
    rate = 1.0 / float(np.median(np.diff(next(iter(free.values()))['t'])))
    return robot, result, free, pushes, rate


def ur10e(root: Path | None, folder: Path, settings: ContactSettings, learned: bool = True) -> dict:
    """The UR10e figures (module docstring); ``learned``: the learned baseline's beside (:func:`learned_ur10e`)."""
    if root is None:
        return {'status': 'not given (--dynamic-calibration DIR or $DYNID_DYNCAL_DATA)'}
    robot, result, free, pushes, rate = ur10e_logs(root, folder)
    names = sorted(free)
    folds = [names[0::2], names[1::2]]
    minutes, alarms, where = 0.0, 0, []
    for k in range(2):
        monitor = ContactMonitor(result, robot, settings, rate, wrench=False)
        monitor.calibrate([free[name] for name in folds[k]])
        for name in folds[1 - k]:
            monitor.reset()
            out = monitor.run(**free[name])
            minutes += float(free[name]['t'][-1] - free[name]['t'][0]) / 60.0
            alarms += len(out.contacts)
            where += [f'{name} {c.start_s - free[name]["t"][0]:.2f} s' for c in out.contacts]
    monitor = ContactMonitor(result, robot, settings, rate, wrench=False)
    calibration = monitor.calibrate([free[name] for name in names])
    detected, extra, peaks = _pushes(monitor, pushes)
    say(f'ur10e: {detected} of 10 pushes, {alarms} false alarms in {minutes:.1f} free minutes')
    out = {'status': 'ok', 'rate_hz': rate, 'free_runs': len(names), 'free_minutes': minutes, 'false_alarms': alarms,
           'false_alarm_times': where, 'pushes_detected': f'{detected}_of_10', 'alarms_outside_pushes': extra,
           'push_peak_nm': [round(p, 1) for p in peaks], 'calibration': calibration.to_dict(robot.joint_names),
           'left_out': f'{BROKEN} (velocities and currents of 1e129 and more)',
           'thresholds': 'free runs scored in two folds (each half with the other half\'s thresholds); pushes with '
                         'thresholds from all free runs'}
    out['splits'] = ur10e_splits(robot, result, free, pushes, rate, settings)
    if learned:
        out['learned_baseline'] = learned_ur10e(robot, result, free, folds, pushes, rate, settings)
    return out


def _pushes(monitor, pushes: dict) -> tuple[int, int, list]:
    """The pushes through ``monitor`` (calibrated): pushes detected (an alarm starting within :data:`PUSH_WINDOW_S`
    of the push), alarms outside every push's window, and each alarm's peak [N·m]."""
    detected, extra, peaks = 0, 0, []
    for stem, signals in pushes.items():
        monitor.reset()
        out = monitor.run(**signals)
        starts = np.array([c.start_s - signals['t'][0] for c in out.contacts])
        times = PUSHES[next(key for key in PUSHES if key in stem)]
        hit = [bool(np.any((starts >= t + PUSH_WINDOW_S[0]) & (starts <= t + PUSH_WINDOW_S[1]))) for t in times]
        detected += sum(hit)
        extra += int(sum(not any(t + PUSH_WINDOW_S[0] <= s <= t + PUSH_WINDOW_S[1] for t in times) for s in starts))
        peaks += [float(np.nanmax(c.peak_nm)) for c in out.contacts]
    return detected, extra, peaks


def halves(names: list[str], split: int) -> list[list[str]]:
    """Split ``split`` of the free runs into two halves: 0, alternating in name order (the two folds of
    :func:`ur10e`); k > 0, a random permutation (seed k) cut in two. Every run is in one half."""
    names = sorted(names)
    if split == 0:
        return [names[0::2], names[1::2]]
    order = [names[i] for i in np.random.default_rng(split).permutation(len(names))]
    middle = len(order) // 2
    return [sorted(order[:middle]), sorted(order[middle:])]


def ur10e_splits(robot, result, free: dict, pushes: dict, rate: float, settings, splits: int = SPLITS) -> list:
    """The UR10e over ``splits`` splits of its free runs (:func:`halves`): in each, every half scored for false alarms
    with the other half's thresholds, and the pushes with each half's; one row a split."""
    rows = []
    for split in range(splits):
        row = {'split': split, 'false_alarms': 0, 'free_minutes': 0.0, 'pushes_detected': [],
               'alarms_outside_pushes': [], 'short_calibrations': 0}
        parts = halves(list(free), split)
        for k in range(2):
            monitor = ContactMonitor(result, robot, settings, rate, wrench=False)
            calibration = monitor.calibrate([free[name] for name in parts[k]])
            row['short_calibrations'] += int(calibration.short)
            for name in parts[1 - k]:
                monitor.reset()
                row['false_alarms'] += len(monitor.run(**free[name]).contacts)
                row['free_minutes'] += float(free[name]['t'][-1] - free[name]['t'][0]) / 60.0
            detected, extra, _ = _pushes(monitor, pushes)
            row['pushes_detected'].append(f'{detected}_of_10')
            row['alarms_outside_pushes'].append(extra)
        say(f'ur10e split {split}: {row["false_alarms"]} false alarms in {row["free_minutes"]:.1f} free minutes, '
            f'pushes {row["pushes_detected"]}')
        rows.append(row)
    return rows


def split_figures(rows: list[dict]) -> dict:
    """The splits' false alarms (median, worst) and the pushes detected with every split's thresholds (the fewest,
    and on how many of the splits every push was detected with both halves' thresholds)."""
    alarms = [row['false_alarms'] for row in rows]
    counts = [int(p.split('_of_')[0]) for row in rows for p in row['pushes_detected']]
    every = sum(all(p == '10_of_10' for p in row['pushes_detected']) for row in rows)
    return {'splits': len(rows), 'false_alarms_median': float(np.median(alarms)) if alarms else None,
            'false_alarms_worst': max(alarms) if alarms else None, 'pushes_fewest': min(counts) if counts else None,
            'splits_with_every_push': f'{every}_of_{len(rows)}'}


def learned_ur10e(robot, result, free: dict, folds: list, pushes: dict, rate: float, settings) -> dict:
    """The learned baseline on the UR10e, the observer's way: trained on one fold of the free runs, its thresholds
    from that fold, scored on the other (both ways), and, trained on all free runs, on the pushes. The logs hold no
    reference: the window is of q and q̇ alone, one sample apart (about 10 ms at 94 Hz)."""
    from benchmarks.contact_learned import TorqueNetwork, features, low_pass
    from dynid.contact.calibration import CalibrationRun, calibrate
    from dynid.contact.detection import ContactDetector

    model = ContactMonitor(result, robot, settings, rate, wrench=False).model
    gain, bandwidth, stages = float(settings.gain(rate)), float(settings.bandwidth(rate)), settings.stages(rate)

    def train(names):
        x = np.vstack([features(free[n], None, stride=1) for n in names])
        y = np.vstack([model.measured_torque(free[n]['current'], None) for n in names])
        network = TorqueNetwork(x.shape[1], y.shape[1])
        network.fit(x, y, epochs=30)

        def residual(signals):
            measured = model.measured_torque(signals['current'], None)
            return low_pass(signals['t'], measured - network.predict(features(signals, None, stride=1)), gain,
                            stages)

        observed = [CalibrationRun(free[n]['t'], residual(free[n]), free[n]['dq']) for n in names]
        sigma = np.concatenate([o.external for o in observed]).std(axis=0)
        calibration = calibrate(observed, sigma, np.zeros(robot.n), np.full(robot.n, bandwidth),
                                settings.false_alarm_rate, settings.detector())
        return residual, calibration

    def contacts(residual, calibration, signals):
        detector = ContactDetector(calibration.sigma0, np.zeros(robot.n), calibration.threshold,
                                   np.full(robot.n, bandwidth), settings.detector(), calibration.threshold_rest)
        return detector.run(signals['t'], residual(signals), signals['dq'])[1]

    alarms = 0
    for k in range(2):
        residual, calibration = train(folds[k])
        alarms += sum(len(contacts(residual, calibration, free[n])) for n in folds[1 - k])
    residual, calibration = train(sorted(free))
    detected = 0
    for stem, signals in pushes.items():
        starts = np.array([c.start_s - signals['t'][0] for c in contacts(residual, calibration, signals)])
        times = PUSHES[next(key for key in PUSHES if key in stem)]
        detected += sum(bool(np.any((starts >= t + PUSH_WINDOW_S[0]) & (starts <= t + PUSH_WINDOW_S[1])))
                        for t in times)
    return {'false_alarms': alarms, 'pushes_detected': f'{detected}_of_10'}


def lbr_held_out(table: np.ndarray, cut: int) -> tuple[np.ndarray, dict]:
    """The LBR log's rows from ``cut`` on and the observer's signals of them (the torque's sign as identified)."""
    held = table[cut:]
    t = np.arange(held.shape[0]) / 100.0
    q = held[:, :7]
    dq = np.gradient(q, t, axis=0)  # the log holds no velocity: central differences of the positions
    return held, {'t': t, 'q': q, 'dq': dq, 'tau': -held[:, 7:14]}


def lbr(root: Path | None, folder: Path, settings: ContactSettings) -> dict:
    """The LBR Med 7 figures (module docstring)."""
    if root is None:
        return {'status': 'not given (--lbr DIR or $DYNID_LBR_DATA)'}
    source, urdf = root / 'src' / 'test' / 'measurements.csv', root / 'urdf' / 'med' / 'med7dock.urdf'
    lines = source.read_text().splitlines()
    header, rows = lines[0], lines[1:]
    table = np.array([[float(x) for x in row.split(',')] for row in rows])
    cut = int(LBR_SPLIT * len(rows))
    train = folder / 'lbr_train.csv'
    train.write_text('\n'.join([header, *rows[:cut]]) + '\n')
    bag, result_path = folder / 'lbr_train', folder / 'lbr_result.yaml'
    if not result_path.is_file():
        dynid(['import', str(train), '--columns', 'q=q_{i},tau=tau_{i}', '--rate', '100', '--robot', str(urdf),
               '-o', str(bag)])
        dynid(['identify', str(bag), '--robot', str(urdf), '--torque-sign', 'all=-1', '--quiet', '-o',
               str(result_path)])
    robot = load_robot(str(urdf))
    result = IdentificationResult.load(result_path)
    held, signals = lbr_held_out(table, cut)
    monitor = ContactMonitor(result, robot, settings, 100.0, wrench=False)
    out = monitor.run(**signals)
    kuka = -held[:, 14:21]
    skip = 10  # the observer's first 0.1 s (it anchors at the first sample)
    ours = np.sqrt(np.mean(out.external[skip:] ** 2, axis=0))
    theirs = np.sqrt(np.mean(kuka[skip:] ** 2, axis=0))
    ratio = ours / theirs
    say('lbr: τ̂_ext RMS over KUKA tau_ext RMS per joint ' + ' '.join(f'{r:.2f}' for r in ratio))
    return {'status': 'ok', 'rows_held_out': int(held.shape[0]), 'rate_hz': 100.0,
            'observer_gain': float(monitor.gain[0]),
            'rms_ours_nm': [round(float(v), 4) for v in ours], 'rms_kuka_nm': [round(float(v), 4) for v in theirs],
            'rms_over_kuka': [round(float(v), 3) for v in ratio],
            'velocity': 'central differences of the logged positions (the log has none)',
            'targets': 'A2, A4 below 0.5; A1, A3, A5-A7 at most 1.2'}
