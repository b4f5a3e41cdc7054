"""Online estimation on the twin: joint stiffness (Madsen et al. 2019) and adaptive E-GMS friction
(Madsen 2020, ch.6 benchmark B2) beside the papers' figures.

Run: ``make bench`` or ``.venv/bin/python -m benchmarks.bench_estimation [--node-seconds 30]``.

Stiffness (issue 9, the paper's experiment on the twin): UR5e, only the base joint moves, random
bang-coast-bang moves (waits 0–1 s, targets, speeds and accelerations 30–100 % of the allowed
values), 35 s at 1 kHz with sensor noise and quantization. The estimator sees what a driver
publishes (q, θ, current, temperature) in batches of 20 samples, as a 20 ms intake gets them; its
friction map is the identification-style static map (Coulomb + viscous + offset) fitted to the
twin's true rotor friction; the damping is the twin's. Figure of merit (the paper's): NRMSE fit %
of the estimated flexibility-torque curve τ_E(φ) against the twin's true one over the deflections
the joint reached. Second run: the true stiffness of the base joint halves at t = 10 s
(``dynid.sim.changes``); fit against the new truth 5 s later.

Adaptive friction (ch.6 §6.6, B2), decisions:

- Identified model: a real dynid identification, not the twin's parameters. The twin carries a
  7.5 kg payload (centre of mass (0.03, 0.02, 0.05) m in the flange frame, unknown to the
  identification, so it folds into the arm's base parameters as a payload every run carries does)
  and follows the shipped optimized excitation for 20 s; ``dynid.identify.steps.run.identify`` with WLS and
  the ``load_squared`` friction model (Fc·sgn ω + Fv·ω + τ0 + Fl·sgn ω·τ_out²) gives the rigid body
  and friction. The estimators are then built from the result as estimator_node builds them
  (τ̂_j = :class:`RigidBodyTorque` of the result, F(τ) = Fc + Fl·τ², F_V = Fv·ω + τ0, the thesis'
  E-GMS with a constant 1 mrad backlash); an identified Fl < 0 (the wrist-3 joint barely carries
  load, so its Fl is not identifiable) is set to 0, as estimator_node does.
- Change: from t = 0 the twin's friction differs from what was identified: Coulomb level
  F(τ) = Fc0 + Fc1·τ² ×1.5 (wear, ``JointChange.coulomb_scale``) and a viscous excess of
  0.03 N·m·s/rad (inside the paper's α2 box of ±0.05) on every joint. The ×1.5 sits on the upper
  bound of the paper's α1 box [0.4, 1.5]: where the identification put the Coulomb level a little
  low, the projection holds α̂1 at 1.5.
- Run: the ``waypoints`` experiment (thesis Table 1, π rad/s, 2π/3 rad/s²; its cycle is 13.27 s
  here, 13.458 s in the paper), starting at rest at wp1; α̂(0) = (0.47, 0.04) on every joint,
  frozen for the first 30 s (the estimator's ``freeze_s``), default gains (T_a = 2 s), prefilter
  on. Both estimators replay the record in batches of 20 samples, as a 20 ms intake takes them
  (the figures above), and again, timed together, in batches of 1000 as ``dynid estimate`` does (the
  replay speed; the numbers are the same for any batching, the per-call overhead is not).
- Windows: the paper's windows are two cycles each, 0.900–27.816 s and 55.075–81.991 s (4.03
  cycles later). Ours are the same in whole cycles of our trajectory: [0.9, 0.9 + 2c] and
  [0.9 + 4c, 0.9 + 6c] s with c = 13.27 s (0.9–27.44 s and 53.98–80.52 s), so both cover the same
  motion; times are those of the sample described (the estimator lags its input by 51 samples).
- MSE: predicted friction torque of the adapted model, α̂1·F(τ̂_j)·H + α̂2·ω + Fv·ω + τ0 with α̂ as
  it was before the sample (what a feedforward would have used), against the twin's true rotor
  friction torque at the same sample, all six joints. Reduction per joint 100·(1 − MSE_after /
  MSE_before); the average is the mean of the per-joint reductions (as the paper's 84.2 %). Also
  printed: the same over the samples where the rotor moves (|ω| ≥ 0.01 rad/s), and the error
  against the virtual friction measurement f of eq. (23) (what a robot can measure: it carries the
  current noise and the identified rigid body's error, as the paper's motor-torque error does).
- Convergence: seconds after enabling (30 s) until α̂1 stays within 5 % of its final value (at the
  end of the run, 0.2 s after the second window) on every joint that moves (all six do); α̂ at a
  sample counts from the time its input sample arrived.
- 7.5 kg is above the UR5e's rated 5 kg (as in the paper): the shoulder-lift current sits at its
  limit in a few per cent of the samples (printed); IDIM and the estimator use the measured current,
  so this does not bias them.

Node: sim_node at 1 kHz and estimator_node in separate processes (``bench_intake.run_estimator``,
estimator_node with the B2 identification result: stiffness and friction adaptation both run), 30 s;
samples lost read from the estimator's /diagnostics, and its CPU seconds per second of data.
The last line is JSON.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import tempfile
import time
from pathlib import Path

import numpy as np

from dynid.estimate import AdaptiveFrictionEstimator, StiffnessEstimator
from dynid.estimate.stiffness import stiffness_curve_fit
from dynid.excite.experiments import bang_coast_bang, waypoint_cycle
from dynid.excite.trajectory import builtin_excitation_path, load_trajectory
from dynid.identify.equations.request import ModelSpec, RecordingInput
from dynid.identify.result.torque import RigidBodyTorque
from dynid.identify.steps.run import IdentifyOptions, identify
from dynid.model import Payload, load_robot
from dynid.sim.changes import JointChange
from dynid.sim.parameters import PlantParameters
from dynid.sim.recording import record_to_dataset
from dynid.sim.twin import DigitalTwin, home_configuration

RATE = 1000.0
DURATION = 35.0
BATCH = 20  # samples per update of an intake taking every 20 ms at 1 kHz (estimator_node: 50 ms)
REPLAY_BATCH = 1000  # samples per update of the offline replay (dynid estimate's default)
JOINT = 'shoulder_pan_joint'
PAPER = {'fit_35s': 96.6, 'offline_bound': 96.9, 'fit_10s_after_drop': 95.2}
TARGET = {'fit_20s': 97.0, 'fit_5s_after_drop': 96.0}

PAYLOAD = Payload(7.5, [0.03, 0.02, 0.05])
IDENTIFICATION_S = 20.0
WEAR = JointChange(0.0, coulomb_scale=1.5, viscous_excess=0.03)
ALPHA0 = (0.47, 0.04)
FREEZE_S = 30.0
FIRST_WINDOW_S = 0.9
CYCLES = 7  # the windows end 6 cycles after 0.9 s
SETTLED = 0.05  # α̂1 within 5 % of its final value
PAPER_B2 = {'reduction': [91.5, 75.7, 87.4, 65.6, 90.7, 94.0], 'average': 84.2, 'convergence_s': 50.0,
            'windows': ((0.9, 27.816), (55.075, 81.991)), 'cycle_s': 13.458}
TARGET_B2 = {'reduction': 90.0, 'convergence_s': 30.0}
NODE_SECONDS = 30.0


# ------------------------------------------------------------------------------------------- stiffness
def _record(robot, params, trajectory, changes):
    twin = DigitalTwin(params, rate_hz=RATE, seed=3, joint_changes=changes)
    twin.follow(trajectory)
    return twin.run(DURATION)


def _friction_map(robot, record) -> dict:
    """Fc·sgn(ω) + Fv·ω + τ0 per joint, least squares on the twin's true rotor friction where |ω| > 0.01."""
    friction = {}
    for j, name in enumerate(robot.joint_names):
        omega, f = record.truth['dtheta'][:, j], record.truth['friction'][:, j]
        moving = np.abs(omega) > 0.01
        if moving.sum() < 10:
            friction[name] = {'Fc': 0.0, 'Fv': 0.0, 'tau0': 0.0}
            continue
        columns = np.column_stack([np.sign(omega[moving]), omega[moving], np.ones(moving.sum())])
        fc, fv, tau0 = np.linalg.lstsq(columns, f[moving], rcond=None)[0]
        friction[name] = {'Fc': float(fc), 'Fv': float(fv), 'tau0': float(tau0)}
    return friction


def _replay(robot, params, record, friction):
    """Feed the record in batches; returns (times of the described samples [s], α̂ (N, J, 2), seconds per sample)."""
    estimator = StiffnessEstimator(robot.drives, friction, rate_hz=RATE, damping=params.joints.damping)
    m = record.measured
    alphas = []
    start = time.perf_counter()
    for k in range(0, len(record.time), BATCH):
        part = slice(k, k + BATCH)
        alphas.append(estimator.update(m['q'][part], m['theta'][part], m['current'][part],
                                       m['temperature'][part]).alpha)
    elapsed = time.perf_counter() - start
    times = record.time - estimator.delay / RATE
    return times, np.concatenate(alphas), elapsed / len(record.time)


def stiffness_benchmark(robot) -> dict:
    """The base-joint stiffness runs: fits after 5–35 s, and after the stiffness halves at 10 s."""
    params = PlantParameters.defaults(robot)
    j = robot.joint_names.index(JOINT)
    trajectory = bang_coast_bang(robot, [JOINT], home_configuration(robot), duration_s=DURATION, seed=1)
    truth = np.array([params.joints.alpha1[j], params.joints.alpha3[j]])

    record = _record(robot, params, trajectory, [])
    friction = _friction_map(robot, record)
    phi_max = float(np.abs(record.truth['theta'][:, j] - record.truth['q'][:, j]).max())
    times, alpha, per_sample = _replay(robot, params, record, friction)

    def at(t, times, alphas):  # α̂ of the base joint at the last described sample up to t [s]
        return alphas[min(int(np.searchsorted(times, t)), len(times) - 1), j]

    fits = {t: float(stiffness_curve_fit(at(t, times, alpha), truth, phi_max)) for t in (5.0, 10.0, 20.0, 35.0)}
    dropped = _record(robot, params, trajectory, [JointChange(10.0, (JOINT,), stiffness_scale=0.5)])
    times_d, alpha_d, _ = _replay(robot, params, dropped, friction)
    after = {t: float(stiffness_curve_fit(at(t, times_d, alpha_d), 0.5 * truth, phi_max))
             for t in (11.0, 15.0, 20.0, 35.0)}
    return {'fits': fits, 'after': after, 'alpha_20_ratio': at(20.0, times, alpha) / truth, 'phi_max': phi_max,
            'us_per_sample': per_sample * 1e6}


# --------------------------------------------------------------------------------------- friction (B2)
def _simulate(params, trajectory, seconds: float, seed: int, changes=()):
    """The twin at rest at the trajectory's start, following it for ``seconds``."""
    start = trajectory.evaluate(np.array([0.0]))[0][0]
    twin = DigitalTwin(params, rate_hz=RATE, seed=seed, initial_q=start, joint_changes=changes)
    twin.follow(trajectory)
    return twin.run(seconds)


def identified_model(robot, params):
    """WLS identification with the ``load_squared`` friction model on the shipped excitation (payload unknown)."""
    excitation = dataclasses.replace(load_trajectory(builtin_excitation_path(robot.name)), duration_s=IDENTIFICATION_S)
    record = _simulate(params, excitation, IDENTIFICATION_S, seed=1)
    dataset = record_to_dataset(record, None, {'simulation': 'shipped excitation, 7.5 kg payload'})
    return identify(robot, [RecordingInput(dataset)], ModelSpec(friction='load_squared'),
                    options=IdentifyOptions('wls', physical=None))


def estimators(robot, result):
    """(stiffness, friction estimator, F_V, clipped joints) from the result, as estimator_node builds them."""
    table = result.friction()
    value = {s: np.array([table[n].get(s, 0.0) for n in robot.joint_names]) for s in ('Fc', 'Fv', 'tau0', 'Fl')}
    clipped = [n for n, fl in zip(robot.joint_names, value['Fl'], strict=True) if fl < 0]
    drives = robot.drives if result.drive_gains is None else robot.drives.with_drive_gain(result.drive_gains)

    def velocity_friction(omega, temperature):  # the identified model's Fv·ω + τ0
        return value['Fv'] * omega + value['tau0']

    friction = AdaptiveFrictionEstimator(drives, RigidBodyTorque(result, robot), value['Fc'],
                                         np.maximum(value['Fl'], 0.0), rate_hz=RATE,
                                         velocity_friction=velocity_friction, alpha0=ALPHA0, freeze_s=FREEZE_S)
    return StiffnessEstimator.from_robot(robot, result, rate_hz=RATE), friction, velocity_friction, clipped


def _replay_both(record, stiffness, friction, size: int = BATCH) -> tuple[dict, float]:
    """Both estimators over the record in batches of ``size``; (friction history, s per sample)."""
    m = record.measured
    parts = []
    start = time.perf_counter()
    for k in range(0, len(record.time), size):
        batch = [m[name][k:k + size] for name in ('q', 'theta', 'current', 'temperature')]
        stiffness.update(*batch)
        parts.append(friction.update(*batch))
    elapsed = time.perf_counter() - start
    history = {name: np.concatenate([getattr(p, name) for p in parts])
               for name in ('alpha', 'friction_hat', 'error', 'velocity', 'temperature')}
    return history, elapsed / len(record.time)


def _reduction(error, windows) -> np.ndarray:
    """100·(1 − MSE_after/MSE_before) per joint; ``windows`` = (before, after) row masks; NaN rows left out."""
    before, after = (np.nanmean(error[w] ** 2, axis=0) for w in windows)
    return 100.0 * (1.0 - after / before)


def _convergence_s(alpha1, times, moving) -> np.ndarray:
    """Per moving joint: seconds after FREEZE_S until α̂1 stays within SETTLED of its final value."""
    outside = (np.abs(alpha1 / alpha1[-1] - 1.0) > SETTLED) & (times >= FREEZE_S)[:, None]
    seconds = np.full(alpha1.shape[1], np.nan)
    for j in np.flatnonzero(moving):
        rows = np.flatnonzero(outside[:, j])
        seconds[j] = times[rows[-1] + 1] - FREEZE_S if len(rows) else 0.0
    return seconds


def friction_benchmark(robot) -> dict:
    """B2 on the twin (module docstring): identify, change the friction, adapt, compare the windows."""
    params = PlantParameters.defaults(robot, payload=PAYLOAD)
    start = time.perf_counter()
    result = identified_model(robot, params)
    identification_s = time.perf_counter() - start
    stiffness, friction, velocity_friction, clipped = estimators(robot, result)

    trajectory = waypoint_cycle(robot, cycles=CYCLES)
    cycle = trajectory.duration_s / CYCLES
    windows_s = ((FIRST_WINDOW_S, FIRST_WINDOW_S + 2 * cycle), (FIRST_WINDOW_S + 4 * cycle, FIRST_WINDOW_S + 6 * cycle))
    record = _simulate(params, trajectory, windows_s[1][1] + 0.2, seed=5, changes=[WEAR])
    history, node_per_sample = _replay_both(record, stiffness, friction)
    _, per_sample = _replay_both(record, *estimators(robot, result)[:2], size=REPLAY_BATCH)  # dynid estimate

    delay = friction.delay
    described = record.time - delay / RATE
    truth = np.full(history['friction_hat'].shape, np.nan)
    truth[delay:] = record.truth['friction'][:-delay]
    true_speed = np.zeros_like(truth)
    true_speed[delay:] = np.abs(record.truth['dtheta'][:-delay])
    predicted = history['friction_hat'] + velocity_friction(history['velocity'], history['temperature'])
    windows = [(described >= a) & (described < b) for a, b in windows_s]
    error = predicted - truth
    moving_error = np.where(true_speed >= friction.omega_min, error, np.nan)

    reduction = _reduction(error, windows)
    moving = np.abs(record.reference['dq']).max(axis=0) >= friction.omega_min
    convergence = _convergence_s(history['alpha'][..., 0], record.time, moving)
    saturated = np.abs(record.truth['current']) >= 0.999 * params.current_limits
    return {'reduction': reduction, 'average': float(reduction.mean()),
            'mse': [np.mean(error[w] ** 2, axis=0) for w in windows],
            'moving_average': float(_reduction(moving_error, windows).mean()),
            'measured_average': float(_reduction(history['error'], windows).mean()),
            'convergence': convergence, 'convergence_s': float(np.nanmax(convergence)),
            'alpha_final': history['alpha'][-1], 'cycle_s': cycle, 'windows_s': windows_s,
            'us_per_sample': per_sample * 1e6, 'node_us_per_sample': node_per_sample * 1e6, 'result': result,
            'identification_s': identification_s, 'clipped_Fl': clipped,
            'saturated_percent': 100.0 * saturated.mean(axis=0)}


# ------------------------------------------------------------------------------------------------ node
def node_samples_dropped(seconds: float, result) -> dict:
    """sim_node → estimator_node at 1 kHz for ``seconds`` (``bench_intake.run_estimator``), with the B2
    identification ``result``: stiffness and friction adaptation both run."""
    from benchmarks.bench_intake import run_estimator

    with tempfile.TemporaryDirectory() as directory:
        path = result.save(Path(directory) / 'result.yaml')
        return run_estimator(seconds, False, 190 + os.getpid() % 20, f'result_file:={path}',
                             f'baseline_file:={Path(directory) / "baseline.yaml"}')


# ---------------------------------------------------------------------------------------------- output
def _row(label: str, ours: str, reference: str) -> None:
    print(f'{label:<62}{ours:>12}{reference:>24}')


def print_table(robot, stiff: dict, fric: dict, node: dict | None) -> None:
    print(f'dynid online estimation benchmark: UR5e twin at {RATE:g} Hz, estimators fed in batches of {BATCH}')
    _row('measure', 'ours', 'paper / target')
    print(f'-- stiffness: {JOINT} alone, bang-coast-bang {DURATION:g} s, deflection up to '
          f'{stiff["phi_max"] * 1e3:.3f} mrad')
    reference = {20.0: f'≥ {TARGET["fit_20s"]:g} (target)',
                 35.0: f'{PAPER["fit_35s"]:g} (bound {PAPER["offline_bound"]:g})'}
    for t, value in stiff['fits'].items():
        _row(f'stiffness curve fit after {t:g} s [%]', f'{value:.2f}', reference.get(t, '—'))
    reference = {15.0: f'≥ {TARGET["fit_5s_after_drop"]:g} (target)', 20.0: f'{PAPER["fit_10s_after_drop"]:g} (paper)'}
    for t, value in stiff['after'].items():
        _row(f'fit vs halved stiffness, {t - 10:g} s after the drop [%]', f'{value:.2f}', reference.get(t, '—'))
    _row('alpha1 after 20 s / true', f'{stiff["alpha_20_ratio"][0]:.4f}', '1')
    _row('alpha3 after 20 s / true (unobservable at this deflection)', f'{stiff["alpha_20_ratio"][1]:.3g}', '—')

    (a0, a1), (b0, b1) = fric['windows_s']
    (p0, p1), (q0, q1) = PAPER_B2['windows']
    print(f'-- adaptive friction (ch.6 B2): waypoint cycle {fric["cycle_s"]:.2f} s (paper {PAPER_B2["cycle_s"]:g}), '
          f'{PAYLOAD.mass:g} kg, Coulomb ×{WEAR.coulomb_scale:g} + viscous {WEAR.viscous_excess:g} N·m·s/rad, '
          f'α̂(0) = {ALPHA0}, frozen {FREEZE_S:g} s')
    print(f'   windows {a0:.2f}–{a1:.2f} s vs {b0:.2f}–{b1:.2f} s (paper {p0:g}–{p1:g} vs {q0:g}–{q1:g}); identified '
          f'model: {IDENTIFICATION_S:g} s shipped excitation, WLS load_squared ({fric["identification_s"]:.1f} s)'
          + (f'; Fl < 0 set to 0 on {", ".join(fric["clipped_Fl"])}' if fric['clipped_Fl'] else ''))
    print(f'   {"joint":<22}{"MSE before → after [(N·m)²]":>30}{"reduction [%]":>15}{"paper":>7}'
          f'{"settled [s]":>13}{"α̂1":>8}{"α̂2":>8}{"at I limit":>12}')
    for j, name in enumerate(robot.joint_names):
        alpha = fric['alpha_final'][j]
        print(f'   {name:<22}{fric["mse"][0][j]:>15.3g} → {fric["mse"][1][j]:<12.3g}{fric["reduction"][j]:>15.1f}'
              f'{PAPER_B2["reduction"][j]:>7.1f}{fric["convergence"][j]:>13.1f}{alpha[0]:>8.3f}{alpha[1]:>8.3f}'
              f'{fric["saturated_percent"][j]:>11.1f}%')
    print(f'   (α̂ at the end; the twin\'s Coulomb level is ×{WEAR.coulomb_scale:g} its own before the change, '
          f'its viscous +{WEAR.viscous_excess:g} N·m·s/rad)')
    _row('friction MSE reduction, mean of the joints [%]', f'{fric["average"]:.1f}',
         f'{PAPER_B2["average"]:g}; ≥ {TARGET_B2["reduction"]:g} (target)')
    _row('  same, only samples with |ω| ≥ 0.01 rad/s [%]', f'{fric["moving_average"]:.1f}', '—')
    _row('  same, error against the virtual measurement f, eq. (23) [%]', f'{fric["measured_average"]:.1f}', '—')
    _row('convergence after enabling, slowest joint [s]', f'{fric["convergence_s"]:.1f}',
         f'< {PAPER_B2["convergence_s"]:g}; ≤ {TARGET_B2["convergence_s"]:g} (target)')
    print('-- speed')
    _row(f'replay, stiffness only (bang-coast-bang), batches of {BATCH} [µs per 6-joint sample]',
         f'{stiff["us_per_sample"]:.1f}', '—')
    _row(f'replay, stiffness + friction, batches of {REPLAY_BATCH} [µs per 6-joint sample]',
         f'{fric["us_per_sample"]:.1f}', '≤ 20 (target)')
    _row(f'  same in batches of {BATCH} (20 ms takes at 1 kHz)', f'{fric["node_us_per_sample"]:.1f}',
         '—')
    if node is not None:
        received = sum(node['received'].values())
        _row(f'estimator_node (stiffness + friction) from sim_node, {node["data_s"]:.0f} s: samples lost '
             f'({received} received)',
             f'{node["lost"]:d}', '0 (target)')
        _row('estimator_node CPU [s per s of data]', f'{node["cpu_fraction"]:.3f}', '—')


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--node-seconds', type=float, default=NODE_SECONDS,
                        help=f'seconds of the sim_node → estimator_node run (default {NODE_SECONDS:g}; 0 skips it)')
    args = parser.parse_args()
    started = time.perf_counter()
    robot = load_robot('ur5e')
    stiff = stiffness_benchmark(robot)
    fric = friction_benchmark(robot)
    node = node_samples_dropped(args.node_seconds, fric['result']) if args.node_seconds > 0 else None
    print_table(robot, stiff, fric, node)
    print(f'(script {time.perf_counter() - started:.0f} s)')
    print(json.dumps({
        'benchmark': 'estimation', 'stiffness_fit_percent_20s': stiff['fits'][20.0],
        'stiffness_fit_percent_5s_after_drop': stiff['after'][15.0],
        'friction_mse_reduction_percent': fric['average'], 'friction_convergence_s': fric['convergence_s'],
        'replay_us_per_sample': fric['us_per_sample'], 'replay_includes': 'stiffness+friction',
        'node_samples_dropped': None if node is None else node['lost'],
        'node_cpu_s_per_s': None if node is None else node['cpu_fraction'],
        'stiffness_fit_percent': stiff['fits'], 'after_drop_fit_percent': stiff['after'],
        'alpha1_ratio_20s': float(stiff['alpha_20_ratio'][0]), 'deflection_max_rad': stiff['phi_max'],
        'stiffness_only_replay_us_per_sample': stiff['us_per_sample'],
        'friction_mse_reduction_per_joint_percent': fric['reduction'].tolist(),
        'friction_mse_reduction_moving_percent': fric['moving_average'],
        'friction_mse_reduction_vs_measurement_percent': fric['measured_average'],
        'friction_convergence_per_joint_s': fric['convergence'].tolist(),
        'friction_alpha_final': fric['alpha_final'].tolist(), 'friction_windows_s': fric['windows_s'],
        'friction_cycle_s': fric['cycle_s']}))


if __name__ == '__main__':
    main()
