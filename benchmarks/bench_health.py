"""Joint health over many sessions on the twin: sudden changes flagged, false alarms, forecasts, record speed.

Run: ``.venv/bin/python -m benchmarks.bench_health [--sessions 60] [--record FILE] [--page-sessions 1000]``
(about 10 s of twin and replay per session on a quiet machine; ``--record FILE`` keeps the record, and a
second run with the same file judges it again without simulating).

Campaign (UR5e twin, :mod:`dynid.sim.wear`): one 30 s session a day of the shipped optimized excitation
at 1 kHz with sensor noise, each at its own temperature, uniform in 25 ± 15 °C (ambient and start
temperature of the run). The truth changes on four joints and stays on two:

==================  =================================================================================
shoulder_pan_joint  stiffness −10 % (step) from day ``STEP_DAY``
shoulder_lift_joint stiffness −3 %/week (linear) from day ``DRIFT_DAY``: −15 % on day DRIFT_DAY + 35
elbow_joint         Coulomb friction +30 % (step) from day ``STEP_DAY``
wrist_1_joint       Coulomb friction +5 %/week (linear) from day ``DRIFT_DAY``: +50 % on day DRIFT_DAY + 70
wrist_2_joint       unchanged
wrist_3_joint       unchanged (it barely deflects: its stiffness is never estimated)
==================  =================================================================================

Each session is replayed through the online estimators (:func:`dynid.estimate.replay.estimate`, default
settings) against one identification result (WLS, ``load_squared`` friction, from a 30 s twin session at
25 °C before the campaign) and appended to a health record (:mod:`dynid.health.record`; the append is
timed). The record is then judged causally: after each session k, :func:`dynid.health.assessment.assess`
sees sessions 0…k only (default :class:`HealthSettings`).

Figures:
- detection: sessions from a step's onset to the first session whose judgement flags the quantity (a
  change detected at that session, or its state WARN/ERROR); 0 = flagged by the onset's own session.
- false alarms: flags raised (a new detected change, or the state turning WARN/ERROR) on a joint and
  quantity whose truth has not changed, per 100 such sessions judged after the baseline sessions.
  Flags on the other quantity of a changed joint count as false alarms too (its truth did not change).
- forecast: days until the limit (stiffness −15 %, friction +50 %) forecast 10 sessions after a drift's
  onset, against the truth's days from the same session; error = |forecast − truth| / truth. The
  JSON figure is the worse of the two drifts; the table also shows later sessions.
- db_write_ms: the median time of a session's append (one transaction, WAL, synchronous=FULL: the
  commit waits for the disk) when the campaign's sessions are appended again to a fresh record; the
  table gives the 95th percentile and the slowest too, and the campaign's own appends.
- page: ``dynid health --report`` work (read, judge, write index.html) for a record of
  ``--page-sessions`` × 6 joints, synthetic (noise and temperature effects as the campaign's), and
  the wall time of a headless Chromium screenshot of that page (start-up included) where Chromium is
  installed.
The last line is JSON.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from dynid.estimate.replay import EstimationSettings, estimate
from dynid.excite.trajectory import builtin_excitation_path, load_trajectory
from dynid.health.assessment import assess
from dynid.health.record import HealthRecord
from dynid.health.session import session_from_history
from dynid.health.settings import HealthSettings
from dynid.health.trend import DAY_S
from dynid.identify.equations.request import ModelSpec, RecordingInput
from dynid.identify.steps.run import IdentifyOptions, identify
from dynid.model import load_robot
from dynid.sim.parameters import PlantParameters
from dynid.sim.recording import record_to_dataset
from dynid.sim.wear import SessionSchedule, WearChange, simulate_sessions

SESSIONS = 60
SESSION_S = 30.0
RATE = 1000.0
TEMPERATURE_C, SPREAD_C = 25.0, 15.0
STEP_DAY, DRIFT_DAY = 30.0, 20.0
START_UTC = 1.7e9  # the first session's start [s since 1970 UTC]
ROBOT = 'ur5e-bench'
CHANGES = (WearChange(STEP_DAY, ('shoulder_pan_joint',), stiffness_step=-0.10),
           WearChange(DRIFT_DAY, ('shoulder_lift_joint',), stiffness_per_week=-0.03),
           WearChange(STEP_DAY, ('elbow_joint',), coulomb_step=0.30),
           WearChange(DRIFT_DAY, ('wrist_1_joint',), coulomb_per_week=0.05))
STEPS = {'stiffness': ('shoulder_pan_joint', STEP_DAY), 'friction': ('elbow_joint', STEP_DAY)}
DRIFTS = {'stiffness': ('shoulder_lift_joint', DRIFT_DAY, -0.03), 'friction': ('wrist_1_joint', DRIFT_DAY, 0.05)}
FORECAST_AFTER = 10
TARGET = {'detect_sessions': 3, 'false_alarms_per_100': 1.0, 'forecast_error_percent': 25.0, 'db_write_ms': 50.0,
          'page_s': 5.0}


def schedule(sessions: int) -> SessionSchedule:
    return SessionSchedule.regular(sessions, 1.0, TEMPERATURE_C, SPREAD_C, CHANGES, seed=7)


def campaign(robot, record: HealthRecord, sessions: int, quiet: bool) -> list[float]:
    """Simulate, estimate and record the sessions not in ``record`` yet; the append times [ms]."""
    params = PlantParameters.defaults(robot)
    trajectory = dataclasses.replace(load_trajectory(builtin_excitation_path(robot.name)), duration_s=SESSION_S)
    done = record.session_count(ROBOT) if ROBOT in record.robots() else 0
    if done >= sessions:
        return []
    folder = Path(tempfile.mkdtemp(prefix='bench_health_'))
    result_file = folder / 'result.yaml'
    before = next(simulate_sessions(params, SessionSchedule([0.0], [TEMPERATURE_C]), trajectory, SESSION_S, RATE,
                                    seed=1000)).record
    result = identify(robot, [RecordingInput(record_to_dataset(before, None, {'simulation': 'before the campaign'}))],
                      ModelSpec(friction='load_squared'), options=IdentifyOptions('wls'))
    result.save(result_file)
    plan = schedule(sessions)
    writes = []
    for session in simulate_sessions(params, plan, trajectory, SESSION_S, RATE, seed=0,
                                     sessions=range(done, sessions)):
        started = time.perf_counter()
        dataset = record_to_dataset(session.record, None, {'simulation': f'session {session.index}'})
        history = estimate(dataset, result, EstimationSettings(), robot)
        row = session_from_history(history, robot=ROBOT, model=robot.name,
                                   started_utc=START_UTC + session.day * DAY_S, temperature_c=dataset.temperature,
                                   result=result, result_file=result_file, source='twin',
                                   input=f'twin session {session.index}, {session.temperature_c:.1f} °C')
        write = time.perf_counter()
        record.append(row)
        writes.append(1e3 * (time.perf_counter() - write))
        if not quiet:
            print(f'session {session.index:3d}  {session.temperature_c:5.1f} °C  '
                  f'{time.perf_counter() - started:5.1f} s  write {writes[-1]:.1f} ms', file=sys.stderr, flush=True)
    return writes


def rewrite_times(record: HealthRecord, folder: Path) -> np.ndarray:
    """The campaign's sessions appended again, one by one, to a fresh record: each append's time [ms]."""
    from dynid.health.record import JointSession, Session
    from dynid.health.schema import JOINT_COLUMNS

    history = record.history(ROBOT)
    times = []
    with HealthRecord(folder / 'rewrite.sqlite3') as fresh:
        for k in range(len(history)):
            joints = tuple(JointSession(name, **{c: history.values[c][k, j] for c in JOINT_COLUMNS if c != 'samples'},
                                        samples=int(history.values['samples'][k, j]))
                           for j, name in enumerate(history.joint_names))
            session = Session(ROBOT, history.model, history.joint_names, float(history.started_utc[k]), joints,
                              duration_s=float(history.duration_s[k]), source='twin')
            started = time.perf_counter()
            fresh.append(session)
            times.append(1e3 * (time.perf_counter() - started))
    return np.array(times)


def synthetic_record(path: Path, sessions: int, seed: int = 0) -> None:
    """A 6-joint record of ``sessions`` (two a day) with the campaign's noise and temperature effects: a
    stiffness step, a stiffness drift, a friction step and a friction drift, two healthy joints."""
    from dynid.health.record import JointSession, Session
    from dynid.health.trend import temperature_features

    rng = np.random.default_rng(seed)
    names = tuple(f'joint_{j + 1}' for j in range(6))
    days = 0.5 * np.arange(sessions)
    temperature = TEMPERATURE_C + rng.uniform(-SPREAD_C, SPREAD_C, sessions)
    law = temperature_features('friction', temperature, 20.0) @ np.array([-0.07, 0.03])
    middle = days[-1] / 2
    with HealthRecord(path) as record:
        for k in range(sessions):
            step, drift = float(days[k] > middle), max(days[k] - middle / 2, 0.0)
            stiffness = 4e4 * (1 + 0.001 * (temperature[k] - 20) + 0.003 * rng.standard_normal(6)
                               - np.array([0.1 * step, 0.0005 * drift, 0, 0, 0, 0]))
            friction = 1 + law[k] + 0.004 * rng.standard_normal(6) + np.array([0, 0, 0.3 * step, 0.001 * drift, 0, 0])
            record.append(Session('synthetic', 'ur5e', names, START_UTC + days[k] * DAY_S, tuple(
                JointSession(n, temperature_c=temperature[k], stiffness=stiffness[j], friction_scale=friction[j],
                             coulomb_nm=3.0, samples=30000) for j, n in enumerate(names)), source='test'))


def page_times(sessions: int, folder: Path) -> tuple[float, float | None]:
    """(seconds of dynid health --report's work, seconds of a headless Chromium screenshot of the page or None)."""
    import shutil
    import subprocess

    from dynid.health.job import write_report

    path = folder / 'page.sqlite3'
    synthetic_record(path, sessions)
    started = time.perf_counter()
    page, _ = write_report(path, folder / 'page')
    written = time.perf_counter() - started
    chromium = shutil.which('chromium') or shutil.which('chromium-browser')
    if chromium is None:
        return written, None
    started = time.perf_counter()
    subprocess.run([chromium, '--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
                    '--disable-component-update', '--disable-sync', '--no-first-run',
                    f'--user-data-dir={folder / "chromium"}', '--window-size=1200,8000',
                    f'--screenshot={folder / "page.png"}', page.resolve().as_uri()],
                   capture_output=True, timeout=300, check=True)
    return written, time.perf_counter() - started


def judge_causally(record: HealthRecord, sessions: int, settings: HealthSettings) -> list:
    """assess() after each session k on sessions 0…k."""
    full = record.history(ROBOT)
    judged = []
    for k in range(min(sessions, len(full))):
        part = dataclasses.replace(full, session_id=full.session_id[:k + 1], started_utc=full.started_utc[:k + 1],
                                   duration_s=full.duration_s[:k + 1], operating_hours=full.operating_hours[:k + 1],
                                   result_sha256=full.result_sha256[:k + 1],
                                   values={c: v[:k + 1] for c, v in full.values.items()})
        judged.append(assess(part, settings))
    return judged


def flags(judged, joint: str, quantity: str) -> np.ndarray:
    """(S,) the judgement after session k flags the quantity (a change detected at k, or WARN/ERROR)."""
    out = np.zeros(len(judged), dtype=bool)
    previous = 'unknown'
    for k, health in enumerate(judged):
        h = health.joints.get(joint, {}).get(quantity)
        if h is None:
            continue
        new_change = any(c.alarm_session == k and c.kind == 'detected' for c in h.changes)
        raised = h.state in ('warn', 'error') and previous not in ('warn', 'error')
        out[k] = new_change or raised
        previous = h.state
    return out


def detection(judged, days) -> dict:
    out = {}
    for quantity, (joint, onset) in STEPS.items():
        first = int(np.searchsorted(days, onset))
        raised = np.flatnonzero(flags(judged, joint, quantity)[first:])
        out[quantity] = int(raised[0]) if raised.size else None
    return out


def false_alarms(judged, days, robot, settings: HealthSettings) -> tuple[int, int, list]:
    stiffness, coulomb = schedule(len(days)).factors(robot.joint_names)
    truth = {'stiffness': stiffness, 'friction': coulomb}
    alarms = sessions = 0
    where = []
    for j, joint in enumerate(robot.joint_names):
        for quantity in ('stiffness', 'friction'):
            if all(joint not in h.joints or quantity not in h.joints[joint] for h in judged):
                continue
            raised = flags(judged, joint, quantity)
            healthy = np.cumsum(truth[quantity][:, j] != 1.0) == 0
            monitored = healthy & (np.arange(len(days)) >= settings.baseline_sessions)
            sessions += int(monitored.sum())
            hits = np.flatnonzero(raised & monitored)
            alarms += hits.size
            where += [(joint, quantity, int(k)) for k in hits]
    return alarms, sessions, where


def forecasts(judged, days) -> dict:
    out = {}
    for quantity, (joint, onset, rate) in DRIFTS.items():
        limit = HealthSettings().limit(quantity)
        truth_day = onset + 7.0 * limit / rate
        first = int(np.searchsorted(days, onset))
        rows = []
        for k in range(first + FORECAST_AFTER, len(judged)):
            h = judged[k].joints[joint][quantity]
            true_days = truth_day - days[k]
            if true_days <= 0:
                break
            f = h.forecast
            predicted = math.nan if f is None else f.days
            rows.append((k, true_days, predicted, f))
        out[quantity] = rows
    return out


def error_percent(row) -> float:
    return 100.0 * abs(row[2] - row[1]) / row[1] if math.isfinite(row[2]) else math.inf


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--sessions', type=int, default=SESSIONS, help=f'sessions (default {SESSIONS})')
    parser.add_argument('--record', default=None, help='health record to keep (and reuse) the campaign in')
    parser.add_argument('--page-sessions', type=int, default=1000, help='sessions of the page timing (0 skips it)')
    parser.add_argument('--quiet', action='store_true')
    args = parser.parse_args()
    started = time.perf_counter()
    robot = load_robot('ur5e')
    settings = HealthSettings()
    path = Path(args.record) if args.record else Path(tempfile.mkdtemp(prefix='bench_health_')) / 'health.sqlite3'
    with HealthRecord(path) as record:
        writes = campaign(robot, record, args.sessions, args.quiet)
        judge_start = time.perf_counter()
        judged = judge_causally(record, args.sessions, settings)
        judge_s = time.perf_counter() - judge_start
    days = (np.array([h.now_utc for h in judged]) - START_UTC) / DAY_S
    detected = detection(judged, days)
    alarms, healthy, where = false_alarms(judged, days, robot, settings)
    forecast = forecasts(judged, days)
    folder = Path(tempfile.mkdtemp(prefix='bench_health_'))
    with HealthRecord(path, readonly=True) as record:
        rewrites = rewrite_times(record, folder)
    page_s, browser_s = page_times(args.page_sessions, folder) if args.page_sessions > 0 else (None, None)
    final = judged[-1]

    print(f'health over {len(judged)} twin sessions of {SESSION_S:g} s, temperature {TEMPERATURE_C:g} ± '
          f'{SPREAD_C:g} °C (record {path})')
    print(f'{"":<60}{"ours":>10}{"target":>10}')
    for quantity, (joint, onset) in STEPS.items():
        size = '10 % stiffness loss' if quantity == 'stiffness' else '30 % friction rise'
        value = detected[quantity]
        print(f'{f"{size} ({joint}, day {onset:g}): sessions to flag":<60}{"never" if value is None else value:>10}'
              f'{"≤ " + str(TARGET["detect_sessions"]):>10}')
    rate = 100.0 * alarms / healthy if healthy else math.nan
    print(f'{f"false alarms per 100 healthy sessions ({alarms} in {healthy})":<60}{rate:>10.2f}'
          f'{"≤ " + str(TARGET["false_alarms_per_100"]):>10}')
    for joint, quantity, k in where:
        print(f'   false alarm: {joint} {quantity} at session {k}: {judged[k].joints[joint][quantity].text}')
    worst = 0.0
    for quantity, rows in forecast.items():
        joint, onset, rate_week = DRIFTS[quantity]
        print(f'forecast, {quantity} {100 * rate_week:+g} %/week from day {onset:g} ({joint}):')
        for k, true_days, predicted, f in rows[:1] + rows[5:6] + rows[10:11] + rows[-1:]:
            interval = '' if f is None else f'  ({f.low:.0f}–{f.high:.0f})'
            print(f'   after session {k} ({k - int(onset)} sessions of drift): {predicted:6.1f} days{interval}, truth '
                  f'{true_days:.1f}, error {error_percent((k, true_days, predicted)):.1f} %')
        if rows:
            worst = max(worst, error_percent(rows[0]))
    print(f'{"forecast error 10 sessions after a drift started, worse of two [%]":<60}{worst:>10.1f}'
          f'{"≤ " + str(TARGET["forecast_error_percent"]):>10}')
    write_ms = float(np.median(rewrites))
    print(f'{f"record write per session, median of {rewrites.size} [ms]":<60}{write_ms:>10.2f}'
          f'{"≤ " + str(TARGET["db_write_ms"]):>10}')
    print(f'   same, 95th percentile {np.percentile(rewrites, 95):.1f} ms, slowest {rewrites.max():.1f} ms' +
          (f'; the campaign\'s own appends (beside its simulation): median {np.median(writes):.1f}, slowest '
           f'{max(writes):.1f} ms' if writes else ''))
    if page_s is not None:
        print(f'{f"page of {args.page_sessions} sessions × 6 joints: read, judge, write [s]":<60}{page_s:>10.2f}'
              f'{"≤ " + str(TARGET["page_s"]):>10}')
        print(f'{"   and a headless Chromium screenshot of it [s]":<60}'
              f'{"no Chromium" if browser_s is None else f"{browser_s:.2f}":>10}{"≤ " + str(TARGET["page_s"]):>10}')
    print(f'judging {len(judged)} times: {judge_s:.1f} s; final states: ' +
          ', '.join(f'{j} {q} {h.state}' for j, qs in final.joints.items() for q, h in qs.items()))
    print(f'(script {time.perf_counter() - started:.0f} s)')
    print(json.dumps({'benchmark': 'health', 'sessions': len(judged),
                      'detect_sessions_stiffness_10pct': detected['stiffness'],
                      'detect_sessions_friction_30pct': detected['friction'],
                      'false_alarms_per_100_healthy': rate, 'forecast_error_percent': worst,
                      'db_write_ms': write_ms, 'page_seconds': page_s, 'page_browser_seconds': browser_s}))


if __name__ == '__main__':
    main()
