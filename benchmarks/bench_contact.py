"""What the arm feels: external torque, contacts and the flange wrench from the identified model, measured.

Run: ``.venv/bin/python -m benchmarks.bench_contact [--quick] [--dynamic-calibration DIR] [--lbr DIR]`` (the full run
simulates about 3 hours of 1 kHz motion: some 40 minutes on a 2-core machine; ``--quick`` a tenth of it).

Parts (each module's docstring says how):

1. **Simulated plants** (:mod:`contact_sim`, :mod:`contact_scoring`): the UR5e twin (dynid's flexible-joint plant,
   E-GMS friction, heating) and the MuJoCo plant, each identified by ``dynid identify`` from the optimized excitation
   simulated on it. Thresholds are calibrated (:func:`dynid.contact.calibration.calibrate`) on contact-free runs
   (:data:`CALIBRATION_RUNS` of each) that are never scored; then contact-free runs are scored for false alarms and
   runs with random contacts (steps, ramps, half-sines of 5–60 N, 50–500 ms, in motion and at rest) for detection,
   delay, peak error, the flange wrench and the alarm's end at rest; on MuJoCo also obstacles in the tool's path.
   Each contact in the set detected late or missed is simulated again without it: what the signals carried of it
   in time (:func:`contact_scoring.information_onset_ms`). On MuJoCo, whose static friction holds a rigid joint,
   each contact at rest is also timed to the first joint that slips (:func:`contact_scoring.breakaway_ms`): the
   floor of the delay at rest where friction does not give (``delay_ms_p95_rest_breakaway``), and the delay at
   rest of a detector alarming at each late contact's information, and at the later of it and the slip
   (:func:`contact_scoring.informed_rest`).
   The levels L_j that make the set are 15 σ of the plant's true model on the calibration runs. Calibration: 33
   minutes of the twin, 22 of MuJoCo; scored: 2 h of the twin's and 0.5 h of MuJoCo's contact-free motion (rests,
   payloads of 0–2.5 kg declared, 20–30 °C), 20 runs with contacts on each.
2. **UR10e** pushes and free motion (:func:`contact_real.ur10e`), **LBR Med 7** beside KUKA's ``tau_ext``
   (:func:`contact_real.lbr`).
3. **The learned baseline** (:mod:`contact_learned`), trained on the calibration runs, scored on the same runs;
   and both on contacts with a payload (4 kg) and a temperature (38 °C) outside the calibration data.
4. **Speed**: the observer and the detector per sample of a 7-joint arm (the Panda) from Python, batches of 50
   samples (the node's intake at 1 kHz takes about 50 at a time), and the whole batch of a 60 s log.
5. **Issue 72**: on part 1's runs with contacts, the detector also without the controller's reference (calibrated on
   the same calibration runs without it, as on a recording that has none): its alarms at the first motion after a
   push at rest (:func:`contact_scoring.first_motion_alarms`), per hour of those runs; the UR10e over
   :data:`contact_real.SPLITS` splits of its free runs (:func:`contact_real.ur10e_splits`); bad calibration inputs
   on the UR10e's logs and each plant's runs, refused or flagged by name (:mod:`contact_inputs`); every result
   ``dynid identify`` writes on the UR10e's and the LBR's logs by default and by each advice it prints, given to the
   observer (:mod:`contact_ways_out`).

The last line is the JSON of the issue's Done-when.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from benchmarks import contact_inputs, contact_real, contact_ways_out
from benchmarks import contact_learned as learned
from benchmarks import contact_scoring as scoring
from benchmarks import contact_sim as sim
from benchmarks.public_datasets import say
from dynid.cli.shared import add_settings_arguments, settings_from_args
from dynid.contact.calibration import CalibrationRun, calibrate
from dynid.contact.monitor import ContactMonitor, tracking_error
from dynid.contact.settings import ContactSettings
from dynid.identify.result.result import IdentificationResult
from dynid.model import load_robot

CALIBRATION_RUNS = 10
SEEDS = {'calibration': 1000, 'free': 2000, 'contacts': 3000, 'obstacle': 4000, 'outside': 5000}
#: contacts with a payload and a temperature the calibration runs (and the learned baseline's training) never saw; the
#: payload is declared to the observer (the result's model takes it), the network has no input for it
OUTSIDE_PAYLOAD = sim.Payload(4.0, (0.04, 0.04, 0.1))
OUTSIDE_TEMPERATURE_C = 38.0
#: the observer of the levels L_j (:func:`contact_scoring.true_sigma`)
LEVEL_OBSERVER = ContactSettings(observer_gain=100.0, observer_stages=1)


def _monitors(result, robot, settings):
    """One monitor per payload (the payload is declared to the observer), made on first use."""
    cache = {}

    def get(payload):
        key = None if payload is None else tuple(payload.parameters())
        if key not in cache:
            cache[key] = ContactMonitor(result, robot, settings, sim.RATE_HZ, payload=payload)
        return cache[key]

    return get


def commanded(run, reference: bool):
    """The run's commanded joint velocity [rad/s] (the controller's reference at its samples, as a deployment reads it
    from the trajectory it sends), or None with ``reference`` off (a recording without one)."""
    return run.reference['dq'] if reference and run.reference.get('dq') is not None else None


def commanded_position(run, reference: bool):
    """The run's reference position [rad] (the controller's, as :func:`commanded` its velocity), or None."""
    return run.reference['q'] if reference and run.reference.get('q') is not None else None


def _detected(monitors, calibration, run, reference: bool):
    """The calibrated monitor of the run's payload and its output over the run (with the commanded velocity and
    position)."""
    monitor = monitors(run.payload)
    monitor.set_calibration(calibration)
    return monitor, monitor.run(**run.signals(), reference_velocity=commanded(run, reference),
                                reference_position=commanded_position(run, reference))


def _calibration(robot, engine, result, settings, runs: int, reference: bool = True):
    """Calibration runs: the monitor's calibration, the levels L_j and the learned baseline's training data."""
    source = result.model['torque_source']
    truth_result = sim.true_model_result(robot, source)
    monitors, observed, truths, training = _monitors(result, robot, settings), [], [], []
    for k in range(runs):
        seed = SEEDS['calibration'] + k
        plan = sim.plan_run(robot, seed, 3, contacts=False)
        run = sim.simulate_run(robot, engine, f'calibration {k}', seed, plan, sim.PAYLOADS[k % 3], 20.0 + k % 11)
        monitor = monitors(run.payload)
        monitor.reset()
        samples, theta = monitor.observe(**run.signals())
        observed.append(CalibrationRun(samples.t, samples.external, samples.velocity, theta, commanded(run, reference),
                                       tracking_error(commanded_position(run, reference), run.measured['q'])))
        # the levels are the benchmark's, not the detector's: the true model through the observer they were stated
        # with (one stage of K = 100 1/s), whatever settings the detector under test runs with (a wider observer
        # bandwidth would raise them, a second stage lower them)
        truth = ContactMonitor(truth_result, robot, LEVEL_OBSERVER, sim.RATE_HZ, payload=run.payload, wrench=False)
        friction = run.truth['friction'] if source != 'joint_torque' else None  # none after the gear
        truths.append(truth.observe(**run.signals(), friction=friction)[0].external)
        training.append(run)
    first = monitors(None)
    calibration = calibrate(observed, first.result_sigma, first.stiction, first.bandwidth, settings.false_alarm_rate,
                            settings.detector())
    # the same runs as a recording without the controller's reference gives them (:func:`_first_motion_part`)
    bare = calibrate([o._replace(commanded=None, tracking=None) for o in observed], first.result_sigma, first.stiction,
                     first.bandwidth, settings.false_alarm_rate, settings.detector())
    levels = scoring.LEVEL_SIGMAS * scoring.true_sigma(truths)
    return monitors, (calibration, bare), levels, training


def _learned_detector(training, robot, monitors, settings):
    """The learned baseline trained on the calibration runs: (predict residual of a run, its calibration)."""
    x = np.vstack([learned.features(r.signals(), r.reference)[::5] for r in training])
    y = np.vstack([monitors(r.payload).model.measured_torque(r.signals()['current'], r.signals()['tau'])[::5]
                   for r in training])
    network = learned.TorqueNetwork(x.shape[1], y.shape[1])
    losses = network.fit(x, y)
    gain, stages = monitors(None).gain[0], monitors(None).observer.stages

    def residual(run):
        measured = monitors(run.payload).model.measured_torque(run.signals()['current'], run.signals()['tau'])
        return learned.low_pass(run.t, measured - network.predict(learned.features(run.signals(), run.reference)),
                                gain, stages)

    zero = np.zeros(robot.n)
    observed = [CalibrationRun(r.t, residual(r), r.signals()['dq']) for r in training]
    sigma0 = np.concatenate([o.external for o in observed]).std(axis=0)
    calibration = calibrate(observed, sigma0, zero, monitors(None).bandwidth, settings.false_alarm_rate,
                            settings.detector())
    return residual, calibration, losses


def _learned_samples(residual, run, calibration, bandwidth, settings, n):
    from dynid.contact.detection import ContactDetector
    from dynid.contact.monitor import ContactSamples

    detector = ContactDetector(calibration.sigma0, np.zeros(n), calibration.threshold, np.full(n, bandwidth),
                               settings.detector(), calibration.threshold_rest)
    external = residual(run)
    samples, contacts = detector.run(run.t, external, run.signals()['dq'])
    return ContactSamples(run.t, external, samples.estimate, samples.sigma, samples.alarm, samples.speed,
                          contacts=contacts)


def _contact_runs(robot, engine, monitors, calibrations, levels, bandwidth, learned_detector, settings, count: int,
                  reference: bool) -> dict:
    """Part 1's runs with contacts on one plant: their scores, the learned baseline's, the alarms outside contacts,
    those detected late or missed (with what the signals carried of them), and the detector without the reference
    at the first motion after a push at rest (:func:`_first_motion_part`)."""
    scores, learned_scores, extra, learned_extra, late, noise = [], [], 0, 0, [], sim.sensor_noise(robot)
    residual, learned_calibration = learned_detector
    first_motion = {'alarms': [], 'moves': 0, 'hours': 0.0, 'alarms_outside_contacts': 0, 'alarms_detector_as_run': []}
    first = None
    say(f'{engine}: {count} runs with contacts')
    for k in range(count):
        seed = SEEDS['contacts'] + k
        plan = sim.plan_run(robot, seed, 3, contacts=True)
        payload, temperature = sim.PAYLOADS[(k + 2) % 3], 20.0 + (7 * k) % 11
        run = sim.simulate_run(robot, engine, f'contacts {k}', seed, plan, payload, temperature)
        _first_motion_part(first_motion, monitors, calibrations[1], run)
        monitor, out = _detected(monitors, calibrations[0], run, reference)
        first_motion['alarms_detector_as_run'] += [f'{run.name} {t:.2f} s'
                                                   for t in scoring.first_motion_alarms(run, out)]
        run_scores = scoring.score_contacts(run, out, levels, bandwidth, monitor.detector.threshold_rest)
        scores += run_scores
        for score in run_scores:  # what the signals carried of those detected late or missed
            if score.in_set and not (score.detected and score.delay_ms <= scoring.ON_TIME_MS):
                load = run.loads[score.index]
                without = sim.without_contact(robot, engine, run.name, seed, plan, payload, temperature, score.index)
                score.information_ms = scoring.information_onset_ms(run, without, load, levels, noise)
                late.append({'run': run.name, 'start_s': round(load.start_s, 3), 'resting': score.resting,
                             'shape': score.shape, 'link': load.link,
                             'delay_ms': round(score.delay_ms, 1) if score.detected else None,
                             'breakaway_ms': round(score.breakaway_ms, 1) if np.isfinite(score.breakaway_ms) else None,
                             'information_ms': round(score.information_ms, 1)})
        extra += scoring.false_alarms_in_contact_runs(run, out)
        theirs = _learned_samples(residual, run, learned_calibration, bandwidth, settings, robot.n)
        learned_scores += scoring.score_contacts(run, theirs, levels, bandwidth)
        learned_extra += scoring.false_alarms_in_contact_runs(run, theirs)
        first = run if k == 0 else first
    return {'scores': scores, 'learned_scores': learned_scores, 'extra': extra, 'learned_extra': learned_extra,
            'late': late, 'first_motion': first_motion, 'first': first}


def _first_motion_part(into: dict, monitors, bare, run) -> None:
    """The detector without the controller's reference (calibrated on the same runs without it, ``bare``) on a run
    with contacts: its alarms at the first motion after a push at rest (:func:`contact_scoring.first_motion_alarms`),
    added to ``into``. The observer's state is put back after it: the runs that follow see what they saw before."""
    state = monitors(run.payload).observer.state.copy()
    _, out = _detected(monitors, bare, run, reference=False)
    monitors(run.payload).observer.state[...] = state
    found = scoring.first_motion_alarms(run, out)
    into['alarms'] += [f'{run.name} {t:.2f} s' for t in found]
    into['moves'] += len(scoring.first_motion_starts(run.t, run.resting, run.loads))
    into['hours'] += run.hours
    into['alarms_outside_contacts'] += scoring.false_alarms_in_contact_runs(run, out)


def engine_part(name: str, robot, folder: Path, settings: ContactSettings, counts: dict,
                reference: bool = True) -> dict:
    """Part 1 on one plant (module docstring); ``name`` 'twin_torque' is the twin identified from, and observed on,
    its link-side joint torque sensors (as an arm with torque sensors is) instead of its currents."""
    engine, torque = ('twin', 'joint_torque') if name == 'twin_torque' else (name, None)
    say(f'{name}: identifying from the optimized excitation')
    result = IdentificationResult.load(sim.identified_plant(engine, folder, torque))
    say(f'{engine}: {counts["calibration"]} calibration runs')
    monitors, (calibration, bare), levels, training = _calibration(robot, engine, result, settings,
                                                                   counts['calibration'], reference)
    residual, learned_calibration, losses = _learned_detector(training, robot, monitors, settings)
    del training
    bandwidth = float(monitors(None).bandwidth[0])
    free_hours, alarms, learned_alarms, where, first_free = 0.0, 0, 0, [], None
    say(f'{engine}: {counts["free"]} contact-free runs')
    for k in range(counts['free']):
        seed = SEEDS['free'] + k
        run = sim.simulate_run(robot, engine, f'free {k}', seed, sim.plan_run(robot, seed, 3, contacts=False),
                               sim.PAYLOADS[(k + 1) % 3], 20.0 + (3 * k) % 11)
        _, out = _detected(monitors, calibration, run, reference)
        first_free = run if k == 0 else first_free
        free_hours += run.hours
        alarms += len(out.contacts)
        where += [f'{run.name} {c.start_s:.2f} s joints {list(c.joints)}' for c in out.contacts]
        theirs = _learned_samples(residual, run, learned_calibration, bandwidth, settings, robot.n)
        learned_alarms += len(theirs.contacts)
    contacts = _contact_runs(robot, engine, monitors, (calibration, bare), levels, bandwidth,
                             (residual, learned_calibration), settings, counts['contacts'], reference)
    scores, learned_scores, extra, learned_extra, late = (contacts[key] for key in (
        'scores', 'learned_scores', 'extra', 'learned_extra', 'late'))
    inputs = contact_inputs.sim_cases(engine, lambda payload: ContactMonitor(
        result, robot, settings, sim.RATE_HZ, payload=payload, wrench=False), first_free, contacts['first']) \
        if first_free is not None and contacts['first'] is not None else []
    del first_free, contacts['first']
    outside, learned_outside, outside_alarms = [], [], [0, 0]
    say(f'{engine}: {counts["outside"]} runs with contacts outside the training data')
    for k in range(counts['outside']):
        seed = SEEDS['outside'] + k
        run = sim.simulate_run(robot, engine, f'outside {k}', seed, sim.plan_run(robot, seed, 3, contacts=True),
                               OUTSIDE_PAYLOAD, OUTSIDE_TEMPERATURE_C)
        monitor, out = _detected(monitors, calibration, run, reference)
        outside += scoring.score_contacts(run, out, levels, bandwidth, monitor.detector.threshold_rest)
        outside_alarms[0] += scoring.false_alarms_in_contact_runs(run, out)
        theirs = _learned_samples(residual, run, learned_calibration, bandwidth, settings, robot.n)
        learned_outside += scoring.score_contacts(run, theirs, levels, bandwidth)
        outside_alarms[1] += scoring.false_alarms_in_contact_runs(run, theirs)
    obstacle = _obstacles(robot, monitors, calibration, counts['obstacles'], reference) if engine == 'mujoco' \
        else None
    summary = scoring.summarize(scores)
    learned_summary = scoring.summarize(learned_scores)
    keys = ('in_set', 'detected_motion_percent', 'detected_rest_percent', 'delay_ms_median',
            'peak_error_percent_median', 'peak_error_percent_p75')
    beyond = {'payload_kg': OUTSIDE_PAYLOAD.mass, 'temperature_c': OUTSIDE_TEMPERATURE_C,
              'observer': {**{key: scoring.summarize(outside)[key] for key in keys},
                           'alarms_outside_contacts': outside_alarms[0]},
              'learned': {**{key: scoring.summarize(learned_outside)[key] for key in keys},
                          'alarms_outside_contacts': outside_alarms[1]}}
    return {'engine': name, 'result': {'friction': result.model['friction'], 'method': result.method,
                                       'torque_source': result.model['torque_source']},
            'observer_gain': float(monitors(None).gain[0]), 'observer_stages': monitors(None).observer.stages,
            'levels_nm': [round(float(v), 3) for v in levels],
            'calibration': calibration.to_dict(robot.joint_names), 'free_hours': free_hours,
            'false_alarms': alarms, 'false_alarm_times': where[:30], 'alarms_outside_contacts': extra,
            **summary, **scoring.informed_rest(scores), 'obstacles': obstacle, 'outside_training': beyond,
            'late_or_missed': late,
            'late_or_missed_informed_on_time': int(sum(row['information_ms'] <= scoring.ON_TIME_MS for row in late)),
            'bad_calibrations': inputs,
            'without_reference_first_motion': {**contacts['first_motion'],
                                               'calibration': bare.to_dict(robot.joint_names)},
            'learned_baseline': {'training_loss': [round(v, 5) for v in losses[-3:]], 'false_alarms': learned_alarms,
                                 'alarms_outside_contacts': learned_extra,
                                 **{key: learned_summary[key] for key in (
                                     'detected_motion_percent', 'detected_rest_percent', 'delay_ms_median',
                                     'delay_ms_p95', 'peak_error_percent_median', 'peak_error_percent_p75')}}}


def _obstacles(robot, monitors, calibration, count: int, reference: bool = True) -> dict:
    """Obstacles in the tool's path on the MuJoCo plant: hits (true contact torque above 1 N·m) and alarms."""
    hits, detected, delays = 0, 0, []
    for k in range(count):
        rng = np.random.default_rng(SEEDS['obstacle'] + k)
        motion = sim._motion(robot, rng)
        times = np.linspace(2.0, 8.0, 300)
        _, velocity = sim.tool_path(robot, motion, times)
        hit_s = float(times[np.argmax(np.linalg.norm(velocity, axis=1))])
        center, half = sim.obstacle_ahead(robot, motion, hit_s)
        plan = [('rest', 1.0, []), ('move', motion, []), ('rest', 1.0, [])]
        run = sim.simulate_run(robot, 'mujoco', f'obstacle {k}', SEEDS['obstacle'] + k, plan, None, 25.0,
                               prepare=lambda twin, c=center, h=half: twin.add_obstacle(c, h))
        touching = np.flatnonzero(np.abs(run.truth['external_torque']).max(axis=1) > 1.0)
        if touching.size == 0:
            continue
        hits += 1
        _, out = _detected(monitors, calibration, run, reference)  # no payload: monitors(None)
        first = run.t[touching[0]]
        alarms = [c.start_s for c in out.contacts if first - 0.05 <= c.start_s <= run.t[touching[-1]] + 0.2]
        if alarms:
            detected += 1
            delays.append((min(alarms) - first) * 1e3)
    return {'hits': hits, 'detected': detected, 'delay_ms': [round(d, 1) for d in delays]}


def speed(settings: ContactSettings) -> dict:
    """Part 4 (module docstring): µs per sample of observer and detector, 7 joints (Panda)."""
    robot = load_robot('panda')
    result = sim.true_model_result(robot, torque_source='joint_torque')
    monitor = ContactMonitor(result, robot, settings, 1000.0, wrench=False)
    q, dq, _ = robot.random_states(60000, seed=1)
    t = np.arange(60000) / 1000.0
    current = np.zeros_like(q)
    monitor.run(t[:100], q[:100], dq[:100], tau=current[:100])  # compile the kernels
    monitor.reset()
    start = time.perf_counter()
    for a in range(0, 60000, 50):
        monitor.run(t[a:a + 50], q[a:a + 50], dq[a:a + 50], tau=current[a:a + 50])
    batches = (time.perf_counter() - start) / 60000 * 1e6
    monitor.reset()
    start = time.perf_counter()
    monitor.run(t, q, dq, tau=current)
    whole = (time.perf_counter() - start) / 60000 * 1e6
    with_wrench = ContactMonitor(result, robot, settings, 1000.0)
    start = time.perf_counter()
    for a in range(0, 6000, 50):
        with_wrench.run(t[a:a + 50], q[a:a + 50], dq[a:a + 50], tau=current[a:a + 50])
    wrench = (time.perf_counter() - start) / 6000 * 1e6
    return {'observer_us_per_sample_7dof_batches_of_50': batches, 'observer_us_per_sample_7dof_60s_batch': whole,
            'with_flange_wrench_us_per_sample_7dof_batches_of_50': wrench, 'load': os.getloadavg()[0]}


def node_at_rate(result: Path, seconds: float) -> dict:
    """contact_node on sim_node's four topics at 1 kHz (bench_intake.run_estimator with contact_node): samples lost
    by its intake and its CPU per second of data."""
    from benchmarks import bench_intake

    out = bench_intake.run_estimator(seconds, False, 190 + os.getpid() % 10, f'result_file:={result}',
                                     name='contact_node')
    return {'seconds': seconds, 'lost': out['lost'], 'cpu_fraction': out['cpu_fraction'],
            'received': out['received']['joint_states']}


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--quick', action='store_true', help='a tenth of the runs')
    parser.add_argument('--dynamic-calibration', type=Path, default=os.environ.get('DYNID_DYNCAL_DATA') or None,
                        metavar='DIR', help='checkout of shamilmamedov/dynamic_calibration '
                                            '(default $DYNID_DYNCAL_DATA)')
    parser.add_argument('--lbr', type=Path, default=os.environ.get('DYNID_LBR_DATA') or None, metavar='DIR',
                        help='checkout of lbr-stack/dynamic_parameter_identification (default $DYNID_LBR_DATA)')
    parser.add_argument('--engines', default='twin,mujoco',
                        help='twin, mujoco, twin_torque (the twin read through its joint torque sensors: beside, not '
                             'in the JSON\'s pooled figures)')
    parser.add_argument('--counts', default='', help='runs of each kind instead of the defaults, e.g. '
                                                     "'calibration=10,free=20,contacts=5,obstacles=2'")
    parser.add_argument('--without-reference', action='store_true',
                        help="the detector without the controller's reference (as on a recording without one): the "
                             'rest threshold then also covers the breakaway before each motion')
    parser.add_argument('--work', type=Path, default=None, help='keep the derived files here (default: temporary)')
    parser.add_argument('--intake-seconds', type=float, default=30.0,
                        help='contact_node at 1 kHz beside sim_node for this long, its intake counting losses '
                             '(bench_intake\'s way; 0: not run)')
    add_settings_arguments(parser, ContactSettings, "the detector's settings (ContactSettings), e.g. --rest-velocity "
                                                    '0.01; the levels L_j stay LEVEL_OBSERVER\'s')
    args = parser.parse_args(argv)
    settings = settings_from_args(args, ContactSettings)
    counts = {'twin': {'calibration': 3 * CALIBRATION_RUNS, 'free': 100, 'contacts': 20, 'outside': 4,
                       'obstacles': 0},
              'mujoco': {'calibration': 2 * CALIBRATION_RUNS, 'free': 30, 'contacts': 20, 'outside': 4,
                         'obstacles': 10},
              'twin_torque': {'calibration': CALIBRATION_RUNS, 'free': 20, 'contacts': 10, 'outside': 2,
                              'obstacles': 0}}
    if args.quick:
        counts = {name: {key: max(1, value // 10) if value else 0 for key, value in c.items()}
                  for name, c in counts.items()}
    for item in filter(None, args.counts.split(',')):
        key, _, value = item.partition('=')
        for c in counts.values():
            c[key] = int(value)
    robot = load_robot('ur5e')
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as temporary:
        folder = args.work or Path(temporary)
        folder.mkdir(parents=True, exist_ok=True)
        engines = {name: engine_part(name, robot, folder, settings, counts[name], not args.without_reference)
                   for name in filter(None, args.engines.split(','))}
        ur10e = contact_real.ur10e(args.dynamic_calibration, folder, settings)
        lbr = contact_real.lbr(args.lbr, folder, settings)
        if args.dynamic_calibration is not None:
            ur10e['bad_calibrations'] = contact_inputs.ur10e_cases(args.dynamic_calibration, folder, settings)
        ways = contact_ways_out.ways_out(args.dynamic_calibration, args.lbr, folder, settings)
        if args.intake_seconds > 0 and 'twin' in engines:
            engines['twin']['node_1khz'] = node_at_rate(folder / 'twin_result.yaml', args.intake_seconds)
    timing = speed(settings)
    figures = combine(engines, ur10e, lbr, timing, ways)
    report(engines, ur10e, lbr, timing, figures, time.perf_counter() - started)
    detail = {'engines': engines, 'ur10e': ur10e, 'lbr': lbr, 'timing': timing, 'ways_out': ways,
              'settings': vars(settings),
              'reference': not args.without_reference}
    print(json.dumps({'detail': detail}, default=float), file=sys.stderr)
    print(json.dumps(figures, default=float))
    return figures


def worst(parts: list[dict], key: str):
    """The larger of the plants' ``key`` (None where none has it)."""
    values = [p[key] for p in parts if p.get(key) is not None]
    return max(values) if values else None


def combine(engines: dict, ur10e: dict, lbr: dict, timing: dict, ways: dict | None = None) -> dict:
    """The JSON line of the issue's Done-when, over both plants."""
    parts = [p for p in engines.values() if p['engine'] != 'twin_torque']

    def pooled(key):
        values = [p[key] for p in parts if p.get(key) is not None]
        weights = [p['in_set_motion' if 'motion' in key else 'in_set_rest' if 'rest' in key else 'in_set']
                   for p in parts if p.get(key) is not None]
        return float(np.average(values, weights=weights)) if values and sum(weights) else None

    def worst_of(key):
        return worst(parts, key)

    obstacles = [p['obstacles'] for p in parts if p.get('obstacles')]
    hours = sum(p['free_hours'] for p in parts)
    alarms = sum(p['false_alarms'] for p in parts)
    return {
        'benchmark': 'contact', 'sim_contacts': int(sum(p['contacts'] for p in parts)),
        'levels_nm': {p['engine']: p['levels_nm'] for p in parts},
        'detected_motion_percent': pooled('detected_motion_percent'),
        'detected_rest_percent': pooled('detected_rest_percent'),
        'obstacle_hits_detected': f'{sum(o["detected"] for o in obstacles)}_of_{sum(o["hits"] for o in obstacles)}',
        'delay_ms_median': worst_of('delay_ms_median'), 'delay_ms_p95': worst_of('delay_ms_p95'),
        'delay_ms_p95_oracle': worst_of('delay_ms_p95_oracle'),
        'delay_step_ms_median': worst_of('delay_step_ms_median'), 'delay_step_ms_p95': worst_of('delay_step_ms_p95'),
        'peak_error_percent_median': worst_of('peak_error_percent_median'),
        'peak_error_percent_p75': worst_of('peak_error_percent_p75'),
        'wrench_error_percent_median_motion': worst_of('wrench_error_percent_median_motion'),
        'wrench_error_percent_p75_motion': worst_of('wrench_error_percent_p75_motion'),
        'wrench_error_percent_median_rest': worst_of('wrench_error_percent_median_rest'),
        'free_motion_hours': hours, 'false_alarms_per_hour': alarms / hours if hours else None,
        'alarm_clear_s_max': worst_of('alarm_clear_s_max'),
        'ur10e_pushes_detected': ur10e.get('pushes_detected'), 'ur10e_free_minutes': ur10e.get('free_minutes'),
        'ur10e_false_alarms': ur10e.get('false_alarms'), 'lbr_rms_over_kuka': lbr.get('rms_over_kuka'),
        'learned_baseline': {**{p['engine']: p['learned_baseline'] for p in parts},
                             'ur10e': ur10e.get('learned_baseline')},
        'observer_us_per_sample_7dof': timing['observer_us_per_sample_7dof_batches_of_50'],
        'node_1khz_lost': (engines.get('twin') or {}).get('node_1khz', {}).get('lost'),
        **issue72(parts, ur10e, ways or {}),
    }


def issue72(parts: list[dict], ur10e: dict, ways: dict) -> dict:
    """Issue 72's fields of the JSON line: the delay at rest (worse plant), the detector without the reference at the
    first motion after a push at rest (both plants), the UR10e over its splits, the bad calibrations and the results
    of every way out."""
    moves = [p['without_reference_first_motion'] for p in parts if p.get('without_reference_first_motion')]
    hours = sum(m['hours'] for m in moves)
    splits = ur10e.get('splits') or []
    bad = [row for p in parts for row in p.get('bad_calibrations') or []] + (ur10e.get('bad_calibrations') or [])
    return {
        **{key: worst(parts, key) for key in ('delay_ms_p95_rest', 'delay_ms_p95_rest_breakaway',
                                              'delay_ms_p95_rest_informed', 'delay_ms_p95_rest_informed_after_slip')},
        'alarms_after_rest_push_per_hour': sum(len(m['alarms']) for m in moves) / hours if hours else None,
        'alarms_after_rest_push': f'{sum(len(m["alarms"]) for m in moves)}_at_{sum(m["moves"] for m in moves)}'
                                  f'_first_motions_in_{hours:.2f}_h',
        'ur10e_false_alarms_splits': [row['false_alarms'] for row in splits],
        'ur10e_pushes_splits': [row['pushes_detected'] for row in splits],
        'ur10e_splits': contact_real.split_figures(splits) if splits else None,
        'bad_calibrations_refused': contact_inputs.count(bad) if bad else None,
        'results_of_every_way_out_accepted': ways.get('accepted'),
    }


def report(engines, ur10e, lbr, timing, figures, wall) -> None:
    print('dynid contact benchmark: the momentum observer over the identified model, detection and wrench')
    print(f'{"measure":<58} {"ours":>16} {"target (issue)":>22}')

    def row(label, value, target):
        text = 'n/a' if value is None else value if isinstance(value, str) else f'{value:.4g}'
        print(f'{label:<58} {text:>16} {target:>22}')

    for p in engines.values():
        row(f'{p["engine"]}: contacts in the set (motion / rest)', f'{p["in_set_motion"]} / {p["in_set_rest"]}', '')
        row(f'{p["engine"]}: detected in motion [%]', p['detected_motion_percent'], '>= 98')
        row(f'{p["engine"]}: detected at rest [%]', p['detected_rest_percent'], '>= 90')
        causes = p.get('rest_causes') or {}
        row(f'{p["engine"]}: at rest on time/late/held/below k/other', '/'.join(str(v) for v in causes.values()), '')
        row(f'{p["engine"]}: delay median / p95 [ms]', f'{p["delay_ms_median"]:.3g} / {p["delay_ms_p95"]:.3g}'
            if p['delay_ms_median'] is not None else None, '<= 5 / 15')
        row(f'{p["engine"]}: the oracle at L_j: delay p95 [ms], reached at rest [%]',
            f'{p["delay_ms_p95_oracle"]:.3g} / {p["reached_rest_percent_oracle"]:.3g}'
            if p['delay_ms_p95_oracle'] is not None else None, '')
        if p.get('delay_ms_p95_rest_breakaway') is not None:
            row(f'{p["engine"]}: at rest, slipping from L_j: p95 [ms], > 20 ms, never',
                f'{p["delay_ms_p95_rest_breakaway"]:.3g}, {p["rest_breakaway_later_than_20_ms"]}, '
                f'{p["rest_never_breaking_away"]}', '')
        row(f'{p["engine"]}: late or missed / in the signals by 3 σ in 15 ms',
            f'{len(p["late_or_missed"])} / {p["late_or_missed_informed_on_time"]}', '')
        if p.get('delay_ms_p95_rest_informed') is not None:
            row(f'{p["engine"]}: informed at rest: p95 [ms], after the slip', f'{p["delay_ms_p95_rest_informed"]:.3g}, '
                f'{p["delay_ms_p95_rest_informed_after_slip"]:.3g}', '')
        row(f'{p["engine"]}: false alarms in {p["free_hours"]:.2f} free hours', p['false_alarms'], '<= 1 in 2 h')
    for key, target in (('sim_contacts', '>= 400'), ('obstacle_hits_detected', 'every one'),
                        ('delay_step_ms_median', '<= 10'), ('delay_step_ms_p95', '<= 20'),
                        ('peak_error_percent_median', '<= 5'), ('peak_error_percent_p75', '<= 10'),
                        ('wrench_error_percent_median_motion', '<= 5'), ('wrench_error_percent_p75_motion', '<= 10'),
                        ('wrench_error_percent_median_rest', 'reported'), ('alarm_clear_s_max', '<= 1'),
                        ('ur10e_pushes_detected', '>= 9 of 10'), ('ur10e_false_alarms', '<= 12'),
                        ('observer_us_per_sample_7dof', '<= 25')):
        row(key, figures[key], target)
    for key, target in (('delay_ms_p95_rest', '<= 20'), ('delay_ms_p95_rest_breakaway', ''),
                        ('delay_ms_p95_rest_informed', ''), ('delay_ms_p95_rest_informed_after_slip', ''),
                        ('alarms_after_rest_push_per_hour', '<= 0.5'),
                        ('alarms_after_rest_push', ''), ('bad_calibrations_refused', 'every one'),
                        ('results_of_every_way_out_accepted', 'every one')):
        row(key, figures[key], target)
    splits = figures['ur10e_splits'] or {}
    row('ur10e false alarms over splits: median / worst', f'{splits["false_alarms_median"]:.3g} / '
        f'{splits["false_alarms_worst"]}' if splits else None, '<= 4 / <= 8')
    row('ur10e splits with every push (each half\'s thresholds)', splits.get('splits_with_every_push'), 'every one')
    row('lbr_rms_over_kuka', ' '.join(f'{v:.2f}' for v in figures['lbr_rms_over_kuka'] or []) or None,
        'A2, A4 <= 0.5; others <= 1.2')
    print(f'wall time {wall:.0f} s, load {os.getloadavg()[0]:.1f}')


if __name__ == '__main__':
    main()
