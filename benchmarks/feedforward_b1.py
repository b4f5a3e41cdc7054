"""Benchmark B1 of ``bench_feedforward.py`` (Madsen 2020, ch.6 §5.3): E-GMS friction feedforward against the
discontinuous load-dependent model of the "common method" on the twin's shoulder, with the joint friction
identified from the thesis' own friction experiments.

Run by ``benchmarks/bench_feedforward.py`` (its table's B1 rows and ``b1_...`` JSON keys); the common set-up
(twin, IDIM result, settle hold and ramp, tracking and torque-prediction errors) is in that script's docstring
and the closed loop in ``feedforward_loop.py``.

B1 (ch.6 §5.3): shoulder-lift joint from vertical (q2 = −90°, no load) to horizontal (q2 = 0, largest
load) and back, the other joints held. The paper's trajectory is only drawn (Fig. 8); ours is the thesis'
reciprocating drive of eq. (21) scaled up: strokes of 13.5° forward and 4.5° back at a constant
|q̈| = 0.2 rad/s² (9° net per cycle, 10 cycles up, then the same motion time-reversed down; 39 reversals,
68.5 s). Compared: rigid_body + rotor_inertia + friction_egms (F(τ_J,d)·H(q_d) + F_V) against the same
with friction_static at a vanishing band (1e-9 rad/s), i.e. the discontinuous sgn(ω)·F(τ_J,d) + F_V of
the "common method". Also run (diagnostic): friction_static with its default band, and friction_egms with
the IDIM result's friction alone. Figures are for the shoulder-lift joint over the whole motion. Ratios are
baseline MSE / E-GMS MSE.

- Friction (decision): the thesis fed forward friction identified by its own experiments, and so does B1
  (until now it took the IDIM's Coulomb, viscous and load terms: no Stribeck excess, linear viscous, the
  thesis' E-GMS laws). The twin (7.5 kg, its own controller, 1 kHz, 25 °C) records the thesis' experiments
  of the shoulder, and ``identify_joint_friction`` (``dynid identify-friction``) fits them
  against the IDIM result's rigid body; its ``joint_friction`` section goes into the result both compared
  terms read. Plateaus (§4.1): 0.005–0.4 rad/s each way, 2 s each, swinging across upright (|τ_j| up to
  60 N·m: the thesis' no-load plateaus need the axis along gravity, a wall mount for this joint; the
  sweep's Fc1 takes the load out, as the coupled fits do). Gravity sweep (§5.1, eq. (19)): 0.05 rad/s from
  upright to horizontal and back. Reciprocating (§5.2, eq. (21)): 0.05 rad/s², 3° net (4.5° on, 1.5° back),
  10 cycles from upright (|τ_j| 0–65 N·m; the thesis' run is unloaded). No warm-up: the twin stays near
  25 °C and the map holds there (no temperature term). The fit of this set was unusable before two fixes to
  identify-friction: the plateau map now fits a torque offset (the identified gravity is 0.1 N·m off at the
  plateaus' poses; the residual had dropped the Stribeck excess and given Fv3 = −99), and the E-GMS fit the
  band over which the Stribeck excess turns over (taken as sgn(ω), it put the backlash 30 % low). The
  parameters are printed beside the twin's; with the recordings' noise seeds they move a little (three
  seed sets: Fc0 2.87–2.97 N·m, mu 1.07–1.20, backlash 0.74–0.77 mrad), the figures hardly (uncorrected
  torque ratio 2.70–2.72×, tracking 5.09–5.13×; before the motor-side reference correction below).
- Motor-side reference correction (headline, decision): the thesis' controller acts on the link error
  e = q − q_d (ch.6 eq. (30)), the twin's on the rotor θ, so under the twin's controller the link hangs
  φ = τ_j/k below q_d (up to 2.8 mrad) and its gravity differs from the feedforward's by −0.145 N·m on
  average (0.0275 (N·m)² of the uncorrected E-GMS run's 0.0703). The flexible-joint feedforward (thesis
  ch.2 eq. (2.69)) moves the rotor reference to θ_d = q_d + φ_d, φ_d = τ_E⁻¹(τ_J,d): both compared runs
  send q_d + φ_d (q̇_d + φ̇_d, q̈_d + φ̈_d) from ``Feedforward.reference_correction`` (feedforward_node's
  ``reference_correction``), ramped in with the feedforward, and add the flexible_joint term (B·φ̈_d) to
  their torque. The stiffness is the product's own estimate: :class:`StiffnessEstimator` built as
  estimator_node builds it, fed the gravity-sweep recording of the friction experiments (above); α3 < 0
  would be clipped to 0 (it was not). Only B1's joint is corrected (the held joints get stiffness 1e12:
  φ_d ≈ 0). So the link follows q_d as under the thesis' controller; the headline B1 keys of the JSON are
  these runs, the uncorrected ones are printed beside them and in the ``..._uncorrected`` keys. With the
  correction the rotor error is θ − θ_d (the controller's own error) and the link error q − q_d. One run
  (load about 3): α̂ = (39956 N·m/rad, 9.95e8 N·m/rad³), twin (40000, 1e9); torque 0.1470 → 0.0268 (N·m)²,
  5.47× (uncorrected 2.70×); raw 2.30× (1.93×); rotor-side tracking 6.23× (5.09×); link-side tracking
  960 → 161 µrad², 5.95× (uncorrected both ~4.32e6 µrad², 1.00×: the sag). The "floor" rows below are of
  the uncorrected loop. What is left of the sag (−0.030 N·m mean, 0.0012 (N·m)²) comes from the
  uncorrected held joints and the estimate.
- Torque metric (decision): the error is low-passed zero-phase (4th-order Butterworth at 20 Hz, forward
  and backward, ``dynid.signal.zero_phase.ZeroPhaseLowPass``: the same filter on measurement and
  prediction) before its MSE; the raw figure is printed beside it. The twin's current noise (0.02 A ×
  13.5 N·m/A, white: 0.073 (N·m)²) belongs to the sensor, not to a friction model, and alone exceeds the
  paper's E-GMS MSE (0.0297). 20 Hz is above the loop's 8 Hz bandwidth, below which the feedback makes
  the current follow what the joint needs, and leaves 0.0025 (N·m)² of the noise. 20 Hz was chosen before
  the motor-side reference correction existed, because the uncorrected ratio barely depends on the cut-off
  and stays under the noiseless current's, not for its value. The table prints the ratio at 5, 10, 20, 50
  and 100 Hz as well (last run, load about 5: uncorrected 2.62, 2.77, 2.70, 2.61, 2.51×, noiseless
  2.78×). The corrected ratio, the headline, does depend on it (8.05, 6.12, 5.47, 4.48, 3.93×): the
  current noise the filter passes (about 0.0025 (N·m)² at 20 Hz, white: about five times that at 100 Hz)
  is a large share of the corrected E-GMS error (0.0268 (N·m)² at 20 Hz). At 20 Hz and below it also
  exceeds the corrected ratio with the noiseless current, unfiltered (5.03×): there the filter removes
  more of the baseline's error than the noise alone.

What limits the figures (the diagnostic rows; figures of one run, load average about 9 on 2 cores):

- The measured motor torque differs from any prediction made on desired signals by a floor no friction
  model removes: the current noise (0.073 (N·m)² on the big joints), the identified rigid body and the
  closed loop's deviation from the desired motion. The "floor" rows measure it: a run whose friction
  feedforward is the twin's own true friction (as recorded in the E-GMS run). In B1, with the friction
  identified as above, the E-GMS term matches the twin's friction to 0.0017 (N·m)² (sgn(ω)·F(τ): 0.116)
  and its torque MSE (0.0703 at 20 Hz) sits on that floor (0.0700): without the motor-side reference
  correction the torque ratio, 2.70× (raw 1.93×; paper 2.1×, target 3×), cannot rise further on this
  twin (with it: 5.47×, above). What the floor holds: (1) the sagging link:
  the twin's loop closes on θ, so the link hangs φ = τ_j/k (up to 2.8 mrad) off q_d and its gravity differs
  from g(q_d) by −0.145 N·m on average, 0.0275 (N·m)² — the thesis' feedback on e = q − q_d (eq. (30))
  would hold the link at q_d; without that part the ratio is 4.8× (diagnostic row); (2) the identified
  rigid body with its offset tau0 (−0.03 N·m along the path); (3) the friction at reversals follows the
  actual θ, not q_d: the first E-GMS element slips within ~6 µrad while the loop tracks to ~12 µrad RMS.
  Tracking: 5.1× (target 2×; the floor run 6.8×). With the IDIM friction alone (no dedicated experiments)
  the E-GMS run had 0.134 (N·m)² and 504 µrad² (the earlier 1.33×, 1.58× against an IDIM sgn baseline).
  The paper's E-GMS MSE, 0.0297 (N·m)², is below our floor.
- The twin's load-dependent Coulomb level (Fc0 + Fc1·τ², 3 N·m + 1.3e-4·τ², about 5 N·m at 130 N·m) is an
  assumption: the thesis gives no value for Fc0 or Fc1 (ch.6 eq. (20) and its Fig. 6, likewise Journal
  Paper 1 eq. (27)). Its "almost 40 N·m" reversal errors of the baseline would suggest about 20 N·m, but
  such jumps cannot coexist with its baseline MSE of 0.0625 (N·m)², so the twin was not changed.
"""

from __future__ import annotations

import dataclasses
import time

import numpy as np

from benchmarks.bench_estimation import BATCH, PAYLOAD
from benchmarks.feedforward_loop import (
    BASELINE,
    DISCONTINUOUS,
    EGMS,
    RATE,
    RIGID,
    applied,
    errors,
    feedforward_run,
    follow_run,
    mse,
    row,
    sampled,
    with_settle,
)
from dynid.control import Feedforward
from dynid.control.friction_static import friction_parameters, idim_offset
from dynid.estimate import StiffnessEstimator
from dynid.excite.experiments import constant_velocity_plateaus, gravity_sweep, reciprocating_sweep
from dynid.excite.trajectory import PointTrajectory
from dynid.identify.friction_fit.identify import identify_joint_friction
from dynid.identify.friction_fit.recordings import FrictionRecording
from dynid.signal.zero_phase import ZeroPhaseLowPass
from dynid.sim.parameters import PlantParameters
from dynid.sim.plant import STRIBECK_SMOOTHING
from dynid.sim.recording import record_to_dataset
from dynid.sim.twin import DigitalTwin

SMOOTHED = BASELINE  # friction_static at its default band (smoothed)
B1_JOINT = 'shoulder_lift_joint'
B1_START = [0.0, -np.pi / 2, 0.0, -np.pi / 2, 0.0, 0.0]  # arm upright: no gravity load on the shoulder
B1_SWEEP = {'acceleration': 0.2, 'net_deg': 9.0, 'back_deg': 4.5, 'cycles': 10}
#: The thesis' friction experiments for B1's joint (ch.6 §4.1, §5.1, §5.2), recorded on the twin (module docstring).
B1_PLATEAUS = {'speeds': (0.005, 0.01, 0.02, 0.04, 0.08, 0.15, 0.25, 0.4), 'hold_s': 2.0, 'acceleration': 1.0,
               'behind_rad': 0.45}
B1_GRAVITY_SWEEP = {'speed': 0.05, 'amplitude': np.pi / 4}
B1_RECIPROCATING = {'acceleration': 0.05, 'net_deg': 3.0, 'back_deg': 1.5, 'cycles': 10}
B1_EXPERIMENT_SEED = 21
#: Stiffness given to the joints the estimator did not see deflect (held joints): φ_d ≈ 0 there [N·m/rad].
B1_UNCORRECTED_STIFFNESS = 1e12
#: Zero-phase low-pass [Hz] of the torque-prediction error (module docstring).
B1_LOWPASS_HZ = 20.0
#: Cut-offs [Hz] the torque ratio is also printed at (module docstring: the ratio hardly depends on it).
B1_LOWPASS_SWEEP_HZ = (5.0, 10.0, 20.0, 50.0, 100.0)
PAPER_B1 = {'torque': (0.0625, 0.0297), 'tracking': (0.010433, 0.0068945), 'peak_error': 40.0}
TARGET_B1 = {'torque_ratio': 3.0, 'tracking_ratio': 2.0}


def b1_motion(robot):
    """Vertical → horizontal → vertical with reversals (module docstring), (q, q̇, q̈) at RATE."""
    sweep = reciprocating_sweep(robot, B1_JOINT, B1_START, rate_hz=RATE, **B1_SWEEP)
    q, dq, ddq = sampled(sweep, sweep.duration_s)
    return (np.vstack([q, q[-2::-1]]), np.vstack([dq, -dq[-2::-1]]), np.vstack([ddq, ddq[-2::-1]]))


def b1_experiments(robot) -> dict[str, PointTrajectory]:
    """The thesis' friction experiments of B1's joint as trajectories (module docstring), by experiment name."""
    j = robot.joint_names.index(B1_JOINT)
    upright = np.array(B1_START)
    plateaus = dict(B1_PLATEAUS)
    behind = upright.copy()
    behind[j] -= plateaus.pop('behind_rad')
    middle = upright.copy()
    middle[j] += B1_GRAVITY_SWEEP['amplitude']
    return {'plateaus': constant_velocity_plateaus(robot, B1_JOINT, behind, rate_hz=RATE, **plateaus),
            'gravity_sweep': gravity_sweep(robot, B1_JOINT, middle, rate_hz=RATE, **B1_GRAVITY_SWEEP),
            'reciprocating': reciprocating_sweep(robot, B1_JOINT, upright, rate_hz=RATE, **B1_RECIPROCATING)}


def b1_joint_friction(robot, result):
    """(result with the ``joint_friction`` section of B1's joint, the identification, seconds): dynid
    identify-friction on twin recordings of the thesis' experiments (module docstring)."""
    started = time.perf_counter()
    params = PlantParameters.defaults(robot, payload=PAYLOAD)  # the robot's own controller, as for the IDIM
    recordings = []
    for k, (name, trajectory) in enumerate(b1_experiments(robot).items()):
        twin = DigitalTwin(params, rate_hz=RATE, seed=B1_EXPERIMENT_SEED + k,
                           initial_q=trajectory.evaluate(np.array([0.0]))[0][0])
        twin.follow(trajectory, start_time=0.0)
        record = twin.run(trajectory.duration_s + 0.5)
        # The payload every identification run carried is in the result's base parameters already.
        dataset = record_to_dataset(record, None, {'simulation': f'{name} of {B1_JOINT}, 7.5 kg payload'})
        recordings.append(FrictionRecording(dataset, name, name, B1_JOINT))
        if name == 'gravity_sweep':
            stiffness = b1_stiffness(robot, result, record)
    identification = identify_joint_friction(recordings, result, robot)
    return (dataclasses.replace(result, joint_friction_section=identification.section()), identification,
            time.perf_counter() - started, stiffness)


def b1_stiffness(robot, result, record) -> dict:
    """B1 joint's stiffness [α1, α3] as the product estimates it: :class:`StiffnessEstimator` built as
    estimator_node builds it (``from_robot`` with the identification result) fed the gravity-sweep recording
    (measured q, θ, current, temperature; the shoulder's load 0–65 N·m) in batches; its α̂ after the run.
    The other joints get B1_UNCORRECTED_STIFFNESS (no correction: the held joints hardly deflect anew)."""
    estimator = StiffnessEstimator.from_robot(robot, result, rate_hz=RATE)
    m = record.measured
    for k in range(0, len(record.time), BATCH):
        part = slice(k, k + BATCH)
        estimator.update(m['q'][part], m['theta'][part], m['current'][part], m['temperature'][part])
    j = robot.joint_names.index(B1_JOINT)
    alpha = np.zeros((robot.n, estimator.alpha.shape[1]))
    alpha[:, 0] = B1_UNCORRECTED_STIFFNESS
    alpha[j] = np.maximum(estimator.alpha[j], 0.0)  # an invertible spring: α3 >= 0
    truth = PlantParameters.defaults(robot, payload=PAYLOAD).joints
    return {'alpha': alpha.tolist(), 'estimated': estimator.alpha[j].tolist(),
            'converged': bool(estimator.converged[j]), 'truth': [float(truth.alpha1[j]), float(truth.alpha3[j])]}


def lowpass(error: np.ndarray, cutoff_hz: float = B1_LOWPASS_HZ) -> np.ndarray:
    """Zero-phase 4th-order Butterworth low-pass at ``cutoff_hz`` along the samples (module docstring)."""
    return ZeroPhaseLowPass(4, cutoff_hz, RATE)(error)


def b1_benchmark(robot, result, params) -> dict:
    """E-GMS against sgn(ω)·F(τ) (and the smoothed static friction) on the shoulder sweep, with the friction
    identified from the dedicated experiments; E-GMS with the IDIM friction alone for comparison."""
    sectioned, identification, identification_s, stiffness = b1_joint_friction(robot, result)
    flexible = {'flexible_joint': {'stiffness': stiffness['alpha']}}
    motion = b1_motion(robot)
    j = robot.joint_names.index(B1_JOINT)
    gains = np.asarray(result.drive_gains)
    q, dq, ddq, ramp, start = with_settle(motion)
    # The terms carry the IDIM offset tau0 with the friction; the diagnostics count it with the rigid body.
    rigid = Feedforward(robot, result, RIGID).evaluate(q, dq, ddq) + idim_offset(
        result, friction_parameters(result, robot), robot.n)
    rows = slice(start, None)
    gravity = params.robot.inverse_dynamics  # the twin's true rigid body, for the sag diagnostic
    zero = np.zeros_like(q[1:])
    at_desired = gravity(q[1:], zero, zero, payload=params.payload)[:, j]
    runs = {}
    corrected = {'egms_corrected': EGMS, 'sgn_corrected': DISCONTINUOUS}
    for label, config, used in (('egms', EGMS, sectioned), ('sgn', DISCONTINUOUS, sectioned),
                                ('smoothed', SMOOTHED, sectioned), ('egms_idim', EGMS, result),
                                *((label, (config[0] + ['flexible_joint'], {**(config[1] or {}), **flexible}),
                                   sectioned) for label, config in corrected.items())):
        correct = label.endswith('_corrected')
        record, effort, _, shift = feedforward_run(robot, used, params, config, motion, seed=11, correct=correct)
        e = errors(record, effort, gains, shift)
        # the flexible_joint term's B·φ̈_d counts with the rigid body in the friction diagnostic
        flex = 0.0 if not correct else ramp[:, None] * Feedforward(robot, used, ['flexible_joint'], flexible,
                                                                  rate_hz=RATE).evaluate(q, dq, ddq)
        friction_term = applied(effort - ramp[:, None] * rigid - flex)
        # The link sags by φ under the rotor-side loop: the gravity at the measured link less the one at q_d.
        sag = gravity(record.truth['q'], zero, zero, payload=params.payload)[:, j] - at_desired
        torque = e['torque'][:, j]
        runs[label] = {
            'torque': float(np.mean(lowpass(torque)[rows] ** 2)), 'torque_raw': mse(e['torque'], rows)[j],
            'torque_by_cutoff': [float(np.mean(lowpass(torque, hz)[rows] ** 2)) for hz in B1_LOWPASS_SWEEP_HZ],
            'rotor': mse(e['rotor'], rows)[j], 'link': mse(e['link'], rows)[j],
            'peak': float(np.abs(torque[rows]).max()), 'bias': float(np.mean(torque[rows])),
            'noiseless_torque': mse(gains * record.truth['current'] - applied(effort), rows)[j],
            'sag': float(np.mean(sag[rows] ** 2)), 'sag_mean': float(np.mean(sag[rows])),
            'without_sag': float(np.mean(lowpass(torque - sag)[rows] ** 2)),
            'friction': mse(record.truth['friction'] - friction_term, rows)[j],
            'load': float(np.abs(record.truth['joint_torque'][rows, j]).max())}
        if label == 'egms':
            known = known_friction_run(robot, used, params, motion, rigid, record, seed=11)
    keys = ('torque', 'torque_raw', 'rotor', 'link', 'noiseless_torque', 'without_sag', 'friction')
    ratio = {key: runs['sgn'][key] / runs['egms'][key] for key in keys}
    ratio_corrected = {key: runs['sgn_corrected'][key] / runs['egms_corrected'][key] for key in keys}
    for ratios, (sgn, egms) in ((ratio, ('sgn', 'egms')), (ratio_corrected, ('sgn_corrected', 'egms_corrected'))):
        ratios['torque_by_cutoff'] = [b / e for b, e in zip(runs[sgn]['torque_by_cutoff'],
                                                             runs[egms]['torque_by_cutoff'], strict=True)]
    reversals = int(np.sum(np.diff(np.sign(motion[1][:, j][motion[1][:, j] != 0])) != 0))
    floor = {'torque': float(np.mean(lowpass(known['torque'][:, j])[rows] ** 2)),
             'torque_raw': mse(known['torque'], rows)[j], 'rotor': mse(known['rotor'], rows)[j]}
    return {'runs': runs, 'ratio': ratio, 'ratio_corrected': ratio_corrected, 'stiffness': stiffness,
            'duration_s': (len(motion[0]) - 1) / RATE, 'reversals': reversals,
            'floor': floor, 'friction': identification.joints[B1_JOINT], 'identification_s': identification_s,
            'truth': _b1_truth(robot, identification)}


def _b1_truth(robot, identification) -> dict:
    """The twin's friction parameters of B1's joint, as the identification names them (backlash: the range
    its position-dependent backlash spans over the reciprocating run)."""
    j = robot.joint_names.index(B1_JOINT)
    truth = PlantParameters.defaults(robot, payload=PAYLOAD).joints
    theta = next(s.theta for s in identification.signals if s.experiment == 'reciprocating')
    backlash = truth.backlash[j] * (1 + truth.backlash_variation[j] * np.sin(np.linspace(theta.min(), theta.max())))
    return {'Fc0': truth.coulomb[j], 'Fs': truth.static[j], 'Vs': truth.stribeck_velocity[j],
            'mu': truth.stribeck_shape[j], 'excess_band': STRIBECK_SMOOTHING, 'Fc1': truth.load_coefficient[j],
            'backlash': (float(backlash.min()), float(backlash.max())), 'r_delta': truth.egms_r_delta,
            'r_k': truth.egms_r_k}


def known_friction_run(robot, result, params, motion, rigid, record, seed: int) -> dict:
    """Errors of a run whose friction feedforward is the twin's true friction as recorded in ``record`` (a run
    of the same motion), beside the same rigid_body + rotor_inertia and IDIM offset (``rigid``, with the settle
    hold): what no friction model can beat, the floor the current noise, the identified rigid body and the
    closed loop's deviation from the desired motion leave (diagnostic; the friction of the repeat differs
    from the recorded one only as far as the two runs' motions differ)."""
    q, dq, ddq, ramp, start = with_settle(motion)
    friction = np.vstack([np.zeros((1, robot.n)), record.truth['friction']])
    effort = ramp[:, None] * (rigid + friction)
    repeat = follow_run(params, (q, dq, ddq), effort, seed)
    return {**errors(repeat, effort, np.asarray(result.drive_gains)), 'start': start}



def _b1_friction_rows(b1: dict) -> None:
    """The identified joint friction of B1's joint beside the twin's (module docstring)."""
    fit, truth = b1['friction'], b1['truth']
    plateaus = ', '.join(f'{v:g}' for v in B1_PLATEAUS['speeds'])
    print(f'   friction identified the thesis\' way ({b1["identification_s"]:.0f} s: twin recordings at 1 kHz, 7.5 kg, '
          f'then dynid identify-friction): plateaus {plateaus} rad/s; gravity sweep '
          f'{B1_GRAVITY_SWEEP["speed"]:g} rad/s upright → horizontal → upright; reciprocating '
          f'{B1_RECIPROCATING["acceleration"]:g} rad/s², {B1_RECIPROCATING["net_deg"]:g}° net, '
          f'{B1_RECIPROCATING["cycles"]} cycles from upright')
    scale = {'excess_band': (1e3, 'mrad/s'), 'backlash': (1e3, 'mrad'), 'Fc1': (1e4, '1e-4/(N·m)')}
    cells = []
    for name in ('Fc0', 'Fs', 'Vs', 'mu', 'excess_band', 'Fc1', 'backlash', 'r_delta', 'r_k'):
        factor, unit = scale.get(name, (1.0, ''))
        true = truth[name]
        true = '–'.join(f'{factor * t:.3g}' for t in true) if isinstance(true, tuple) else f'{factor * true:.3g}'
        cells.append(f'{name} {factor * fit.parameters[name]:.3g} ({true}){" " + unit if unit else ""}')
    print('   identified (twin): ' + ', '.join(cells[:5]))
    print('                      ' + ', '.join(cells[5:]) + '; Fv1–Fv3 ' + ', '.join(
        f'{fit.parameters[n]:.3g}' for n in ('Fv1', 'Fv2', 'Fv3')) + ' (4, −0.5, 0.1; only 0–0.4 rad/s seen)')


def _cutoffs() -> str:
    return ', '.join(f'{hz:g}' for hz in B1_LOWPASS_SWEEP_HZ)


def _ratios(values) -> str:
    return ', '.join(f'{v:.2f}×' for v in values)


def print_b1(b1: dict) -> None:
    """The B1 rows of the table."""
    runs, ratio = b1['runs'], b1['ratio']
    print(f'-- B1 (ch.6 §5.3): {B1_JOINT} vertical → horizontal → vertical, {b1["reversals"]} reversals, '
          f'{b1["duration_s"]:.1f} s, |τ_j| up to {runs["egms"]["load"]:.0f} N·m (paper > 150)')
    _b1_friction_rows(b1)
    print('   E-GMS: friction_egms; baseline sgn(ω)·F(τ): friction_static at band 1e-9 rad/s; both with the joint '
          'friction above; MSE baseline → E-GMS; first without the motor-side reference correction, the headline '
          'with it below')
    p = PAPER_B1
    row(f'torque prediction MSE, error low-passed at {B1_LOWPASS_HZ:g} Hz [(N·m)²]',
        f'{runs["sgn"]["torque"]:.4f} → {runs["egms"]["torque"]:.4f}', f'{p["torque"][0]:g} → {p["torque"][1]:g}')
    row('  ratio (b1_torque_mse_ratio_uncorrected)', f'{ratio["torque"]:.2f}×',
        f'{p["torque"][0] / p["torque"][1]:.1f}×; ≥ {TARGET_B1["torque_ratio"]:g}× (target)')
    row('  raw: the measured current as it is [(N·m)²]',
        f'{runs["sgn"]["torque_raw"]:.4f} → {runs["egms"]["torque_raw"]:.4f}', '—')
    row('  raw ratio (b1_torque_mse_ratio_raw_uncorrected)', f'{ratio["torque_raw"]:.2f}×', '—')
    row('tracking MSE, rotor side [µrad²]', f'{1e12 * runs["sgn"]["rotor"]:.0f} → {1e12 * runs["egms"]["rotor"]:.0f}',
        f'{p["tracking"][0]:g} → {p["tracking"][1]:g} rad²')
    row('  ratio (b1_tracking_mse_ratio_uncorrected)', f'{ratio["rotor"]:.2f}×',
        f'{p["tracking"][0] / p["tracking"][1]:.1f}×; ≥ {TARGET_B1["tracking_ratio"]:g}× (target)')
    row('tracking MSE ratio, link side (deflection included)', f'{ratio["link"]:.2f}×', '—')
    row('largest torque-prediction error, raw [N·m]', f'{runs["sgn"]["peak"]:.1f} → {runs["egms"]["peak"]:.1f}',
        f'almost {p["peak_error"]:g} (baseline)')
    row('  diagnosis: torque MSE ratio with the noiseless current (unfiltered)', f'{ratio["noiseless_torque"]:.2f}×',
        '—')
    row(f'  diagnosis: torque MSE ratio low-passed at {_cutoffs()} Hz', _ratios(ratio['torque_by_cutoff']), '—')
    row('  diagnosis: mean torque-prediction error [N·m] sgn / E-GMS',
        f'{runs["sgn"]["bias"]:+.3f} / {runs["egms"]["bias"]:+.3f}', '—')
    row('  of it, the sagging link: g(q) − g(q_d), mean [N·m] / MSE [(N·m)²]',
        f'{runs["egms"]["sag_mean"]:+.3f} / {runs["egms"]["sag"]:.4f}', '—')
    row('  diagnosis: low-passed torque MSE less the sag [(N·m)²]',
        f'{runs["sgn"]["without_sag"]:.4f} → {runs["egms"]["without_sag"]:.4f}', f'ratio {ratio["without_sag"]:.2f}×')
    row('  diagnosis: friction term vs the twin\'s true friction, MSE ratio', f'{ratio["friction"]:.2f}×', '—')
    row('  diagnosis: friction term MSE [(N·m)²] sgn → E-GMS',
        f'{runs["sgn"]["friction"]:.4f} → {runs["egms"]["friction"]:.4f}', '—')
    floor = b1['floor']
    row(f'  floor: the twin\'s true friction fed forward, torque MSE at {B1_LOWPASS_HZ:g} Hz [(N·m)²]',
        f'{floor["torque"]:.4f}', f'→ ratio ≤ {runs["sgn"]["torque"] / floor["torque"]:.2f}×')
    row('  floor: same, raw [(N·m)²]', f'{floor["torque_raw"]:.4f}',
        f'→ ratio ≤ {runs["sgn"]["torque_raw"] / floor["torque_raw"]:.2f}×')
    row('  floor: same, rotor-side tracking MSE [µrad²]', f'{1e12 * floor["rotor"]:.0f}',
        f'→ ratio ≤ {runs["sgn"]["rotor"] / floor["rotor"]:.2f}×')
    row('  friction_static at its default band (smoothed): torque MSE [(N·m)²]', f'{runs["smoothed"]["torque"]:.4f}',
        '—')
    row('  same: rotor-side tracking MSE [µrad²]', f'{1e12 * runs["smoothed"]["rotor"]:.0f}', '—')
    idim = runs['egms_idim']
    row('  E-GMS with the IDIM friction alone: torque MSE [(N·m)²] / tracking [µrad²]',
        f'{idim["torque"]:.4f} / {1e12 * idim["rotor"]:.0f}', '—')
    stiffness, fixed = b1['stiffness'], b1['ratio_corrected']
    sgn, egms = runs['sgn_corrected'], runs['egms_corrected']
    print(f'   with the motor-side reference correction θ_d = q_d + φ_d (reference_correction, thesis ch.2 eq. (2.69)) '
          f'in both runs, stiffness of {B1_JOINT} estimated by StiffnessEstimator on the gravity-sweep recording: '
          f'α1 {stiffness["estimated"][0]:.4g} N·m/rad, α3 {stiffness["estimated"][1]:.3g} N·m/rad³ '
          f'(twin {stiffness["truth"][0]:.4g}, {stiffness["truth"][1]:.3g}; converged {stiffness["converged"]})')
    row(f'torque prediction MSE at {B1_LOWPASS_HZ:g} Hz, corrected [(N·m)²]',
        f'{sgn["torque"]:.4f} → {egms["torque"]:.4f}',
        f' {fixed["torque"]:.2f}× (b1_torque_mse_ratio); paper 2.1×, ≥ 3× (target)')
    row('  raw, corrected [(N·m)²]', f'{sgn["torque_raw"]:.4f} → {egms["torque_raw"]:.4f}',
        f' {fixed["torque_raw"]:.2f}× (b1_torque_mse_ratio_raw)')
    row('tracking MSE, rotor side θ − θ_d, corrected [µrad²]',
        f'{1e12 * sgn["rotor"]:.0f} → {1e12 * egms["rotor"]:.0f}',
        f' {fixed["rotor"]:.2f}× (b1_tracking_mse_ratio); ≥ 2× (target)')
    row('tracking MSE, link side q − q_d, corrected [µrad²]', f'{1e12 * sgn["link"]:.0f} → {1e12 * egms["link"]:.0f}',
        f' uncorrected {1e12 * runs["sgn"]["link"]:.0f} → {1e12 * runs["egms"]["link"]:.0f}')
    row(f'  torque MSE ratio low-passed at {_cutoffs()} Hz, corrected', _ratios(fixed['torque_by_cutoff']),
        f'noiseless current: {fixed["noiseless_torque"]:.2f}×')
    row('  ratio, link side, corrected', f'{fixed["link"]:.2f}×', f'uncorrected {ratio["link"]:.2f}×')
    row('  the sagging link, corrected: g(q) − g(q_d), mean [N·m] / MSE [(N·m)²]',
        f'{egms["sag_mean"]:+.3f} / {egms["sag"]:.4f}', '—')
    row('  diagnosis, corrected: friction term vs the twin\'s friction, MSE [(N·m)²] sgn → E-GMS',
        f'{sgn["friction"]:.4f} → {egms["friction"]:.4f}', '—')

