"""A fleet's health record on a real PostgreSQL server, its page, and re-identification of its recordings on Dask.

Run: ``.venv/bin/python benchmarks/bench_fleet.py [--quick]`` (needs PostgreSQL's server binaries: Debian's
``postgresql`` package; as root the server runs as the ``postgres`` user; see test/pg_server.py).

1. **Ingest**: a throwaway PostgreSQL server (its own folder, a free loopback port, default settings:
   fsync and synchronous_commit on). 100 twin robots × 50 daily sessions (``--quick``: 20 × 20), made from
   the wear model's truth (:mod:`dynid.fleet.synthetic`: noise, temperature and load effects as the
   estimators show), written by 8 writer processes at once, each its share of the robots, one
   :meth:`HealthRecord.append` per session. Meanwhile a ninth writer is SIGKILLed inside a session (its
   session row written, its joint rows not), and once half the sessions are in the server is crashed and
   started again (``pg_ctl stop -m immediate``: no checkpoint, WAL replayed at start); the writers reconnect
   and write on (the clock starts once every writer has opened the record). Then every robot must have
   its sessions, each once (``sessions_lost`` counts the missing and the duplicated), and nothing of the
   killed writer's session may be there. ``ingest_sessions_per_s``: sessions over the wall time of the
   whole ingest, the restart's downtime included.
2. **Fleet page**: ``dynid health --db URL --fleet-report DIR`` as a function (read every robot in one
   transaction, judge, rank, write index.html, fleet.json and 100 robot pages): ``fleet_page_s``. Three
   robots have a worn elbow (Coulomb friction +8 %/week from day 20): they must be the first three
   entries of the ranking by forecast, with no healthy robot above them.
3. **Re-identification**: ≥ 40 twin recordings (``dynid simulate``, 12 s at 250 Hz, 4 robots, a tree
   robot/date/bag) and one recording cut off on purpose, identified by :func:`dynid.fleet.batch.reidentify` on
   a LocalCluster with 1, 2, 1 and 2 workers, the best run of each counted (``force``: every run identifies
   everything; the clock starts once the cluster is up and its workers have imported dynid); recordings
   per minute of each, the ratio
   (target ≥ 1.6 on two cores), the broken one reported, the 2-worker results identical to the 1-worker
   ones and, for three recordings, to ``dynid identify`` run on its own.

The machine is shared: the load average is printed beside the figures.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / 'src'))
sys.path.insert(0, str(ROOT / 'test'))  # pg_server: the tests' throwaway PostgreSQL server

WRITERS = 8


def worn(robots: int) -> tuple[int, ...]:
    """The three robots with a worn elbow (7, 42 and 77 of 100)."""
    return tuple(robots * k // 100 for k in (7, 42, 77))


def robots_of(writer: int, robots: int) -> list[int]:
    return [r for r in range(robots) if r % WRITERS == writer]


def sessions_of(r: int, count: int, robots: int):
    from dynid.fleet.synthetic import wear_sessions
    from dynid.sim.wear import SessionSchedule, WearChange

    changes = [WearChange(20.0 * count / 50, ('elbow_joint',), coulomb_per_week=0.08 * 50 / count)] \
        if r in worn(robots) else []
    return wear_sessions(f'robot-{r:03d}', SessionSchedule.regular(count, changes=changes, seed=r), seed=r)


def writer_main(url: str, writer: int, robots: int, count: int) -> None:
    """A writer process: its robots' sessions, one transaction each (reconnecting through a restart)."""
    from dynid.health.record import HealthRecord

    record = HealthRecord(url, timeout_s=120.0)
    print('open', flush=True)
    for r in robots_of(writer, robots):
        for session in sessions_of(r, count, robots):
            record.append(session)
    record.close()
    print('done', flush=True)


def victim_main(url: str) -> None:
    """A writer that stops inside a session's transaction (its session row written) and waits to be killed."""
    from dynid.fleet.synthetic import wear_sessions
    from dynid.health.record import HealthRecord
    from dynid.sim.wear import SessionSchedule

    record = HealthRecord(url, timeout_s=120.0)
    sessions = wear_sessions('victim', SessionSchedule.regular(4, seed=99), seed=99)
    for session in sessions[:3]:
        record.append(session)

    def stall(sql, rows):
        print('inside', flush=True)
        time.sleep(3600)

    record._db.executemany = stall
    print(sessions[3].uid, flush=True)
    record.append(sessions[3])


def load() -> str:
    return ' '.join(f'{x:.1f}' for x in os.getloadavg())


def ingest(server, robots: int, count: int) -> dict:
    from dynid.health.record import HealthRecord

    url = server.database('fleet')
    HealthRecord(url).close()  # the schema, once
    here = [sys.executable, __file__]
    writers = [subprocess.Popen([*here, '--writer', url, str(w), str(robots), str(count)], stdout=subprocess.PIPE,
                                text=True) for w in range(WRITERS)]
    victim = subprocess.Popen([*here, '--victim', url], stdout=subprocess.PIPE, text=True)
    for w in writers:  # the clock starts once every writer has started Python and opened the record
        assert w.stdout.readline().strip() == 'open'
    start = time.perf_counter()
    partial_uid = victim.stdout.readline().strip()
    assert victim.stdout.readline().strip() == 'inside', 'the victim writer did not stop inside its session'

    os.kill(victim.pid, signal.SIGKILL)
    victim.wait()
    total = robots * count
    restarted = None
    with HealthRecord(url, readonly=True) as watcher:
        while restarted is None:
            if watcher.session_count() >= total // 2 + 3:
                began = time.perf_counter()
                server.restart('immediate')
                restarted = time.perf_counter() - began
            time.sleep(0.2)
    for w in writers:
        out = w.communicate(timeout=3600)[0]
        if w.returncode != 0 or not out.strip().endswith('done'):
            raise SystemExit(f'a writer failed: {out}')
    seconds = time.perf_counter() - start
    with HealthRecord(url, readonly=True) as record:
        histories = {h.robot: h for h in record.histories()}
        import psycopg

        with psycopg.connect(url) as connection:
            partial = connection.execute('SELECT count(*) FROM sessions WHERE uid = %s', (partial_uid,)).fetchone()[0]
            stored = connection.execute("SELECT sum(pg_total_relation_size(t::regclass)) FROM unnest(ARRAY['robots', "
                                        "'sessions', 'joint_sessions', 'events']) AS t").fetchone()[0]
            count_all = connection.execute('SELECT count(*) FROM sessions').fetchone()[0]
    lost = 0
    for r in range(robots):
        h = histories.get(f'robot-{r:03d}')
        days = [] if h is None else sorted(round((t - 1.7e9) / 86400.0) for t in h.started_utc)
        lost += abs(count - len(set(days))) + (len(days) - len(set(days)))
    victim_sessions = len(histories['victim']) if 'victim' in histories else 0
    return {'url': url, 'seconds': seconds, 'restart_s': restarted, 'lost': lost + abs(3 - victim_sessions),
            'robots': robots, 'bytes_per_session': float(stored) / count_all,
            'partial_present': partial, 'sessions': total, 'victim_committed': victim_sessions}


def fleet_page(url: str, folder: Path, robots: int) -> dict:
    from dynid.fleet.report import judge_fleet, write_fleet_report

    start = time.perf_counter()
    fleet = judge_fleet(url)
    judged = time.perf_counter() - start
    write_fleet_report(fleet, folder)
    seconds = time.perf_counter() - start
    top = [(e.robot, e.joint, e.quantity) for e in fleet.by_forecast[:3]]
    expected = {f'robot-{r:03d}' for r in worn(robots)}
    return {'seconds': seconds, 'judge_s': judged, 'top': top,
            'worn_on_top': {t[0] for t in top} == expected and all(t[1] == 'elbow_joint' for t in top),
            'robots': len(fleet.robots)}


def simulate_one(bag: str, seed: int) -> str:
    from dynid.cli import main

    with contextlib.redirect_stdout(io.StringIO()):
        code = main(['simulate', '--quiet', '--duration', '12', '--rate', '250', '--seed', str(seed), '-o', bag])
    if code:
        raise SystemExit(f'simulate {bag} failed ({code})')
    return bag


def recordings(root: Path, robots: int, per_robot: int) -> tuple[list[Path], Path]:
    from concurrent.futures import ProcessPoolExecutor

    bags = [root / f'robot-{r}' / f'2026-11-{d + 1:02d}' / 'bag' for r in range(robots) for d in range(per_robot)]
    with ProcessPoolExecutor(2) as pool:
        list(pool.map(simulate_one, map(str, bags), range(len(bags))))
    broken = root / f'robot-{robots - 1}' / '2026-12-01' / 'bag'
    broken.mkdir(parents=True)
    (broken / 'metadata.yaml').write_text('rosbag2_bagfile_information: {version: 5, storage_identifier: mcap}\n')
    (broken / 'bag_0.mcap').write_bytes(b'\x89MCAP0\r\n' + b'\x00' * 64)  # cut off at its start
    return bags, broken


def _warm() -> None:
    import dynid.cli.identify  # noqa: F401
    import dynid.fleet.batch  # noqa: F401


def reidentification(root: Path, bags: list[Path], broken: Path) -> dict:
    import numpy as np
    from dask.distributed import Client, LocalCluster

    from dynid.cli import main
    from dynid.cli.batch import identify_command
    from dynid.fleet.batch import reidentify
    from dynid.identify.result import IdentificationResult

    runs, values = {1: [], 2: []}, {}
    for workers in (1, 2, 1, 2):  # alternated: the other helpers' load drifts between runs
        # the cluster started and its workers' imports done before the clock starts: the steady throughput
        with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
                Client(cluster) as client:
            client.run(_warm)
            start = time.perf_counter()
            outcomes = reidentify(root, 'ur5e', command=identify_command, scheduler=cluster.scheduler_address,
                                  force=True)
            seconds = time.perf_counter() - start
        identified = [o for o in outcomes if o.status == 'identified']
        failed = [o for o in outcomes if o.status == 'failed']
        runs[workers].append({'seconds': seconds, 'identified': len(identified), 'failed': [o.bag for o in failed],
                              'per_min': 60.0 * len(identified) / seconds, 'load': load()})
        values[workers] = {o.bag: IdentificationResult.load(o.result).values for o in identified}
        print(f'reidentify, {workers} worker(s): {len(identified)} recordings in {seconds:.1f} s = '
              f'{60.0 * len(identified) / seconds:.1f}/min, failed {len(failed)} (load {load()})', flush=True)
    runs = {w: max(r, key=lambda run: run['per_min']) for w, r in runs.items()}  # the best of two each
    same = values[1].keys() == values[2].keys() and all(np.array_equal(values[1][b], values[2][b]) for b in values[1])
    alone = True
    with tempfile.TemporaryDirectory() as folder:
        for bag in bags[:3]:
            out = Path(folder) / 'alone.yaml'
            out.unlink(missing_ok=True)
            with contextlib.redirect_stdout(io.StringIO()):
                assert main(['identify', str(bag), '-o', str(out), '--quiet']) == 0
            alone &= bool(np.array_equal(IdentificationResult.load(out).values, values[2][str(bag)]))
    reported = runs[1]['failed'] == runs[2]['failed'] == [str(broken)]
    return {'runs': runs, 'same_1_2': same, 'same_as_alone': alone, 'reported': reported}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--quick', action='store_true', help='20 robots × 20 sessions, 12 recordings')
    parser.add_argument('--writer', nargs=4, help=argparse.SUPPRESS)
    parser.add_argument('--victim', help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.writer:
        url, writer, robots, count = args.writer
        return writer_main(url, int(writer), int(robots), int(count))
    if args.victim:
        return victim_main(args.victim)

    import pg_server

    reason = pg_server.unavailable()
    if reason:
        raise SystemExit(f'bench_fleet needs a PostgreSQL server: {reason}')
    robots, count = (20, 20) if args.quick else (100, 50)
    per_robot, fleet_robots = (3, 4) if args.quick else (10, 4)
    print(f'load average at start: {load()} (2 cores, shared)')
    server = pg_server.Server()
    try:
        print(f'PostgreSQL {server.bin.parent.name} on 127.0.0.1:{server.port}; {robots} robots × {count} sessions, '
              f'{WRITERS} writers, one more killed inside a session, the server crashed and restarted once')
        got = ingest(server, robots, count)
        print(f'ingest: {got["sessions"]} sessions in {got["seconds"]:.1f} s ({got["sessions"] / got["seconds"]:.0f}/s,'
              f' restart {got["restart_s"]:.1f} s included); lost or doubled {got["lost"]}; the killed writer\'s '
              f'partial session present: {got["partial_present"]}; its committed sessions: {got["victim_committed"]} '
              f'of 3 (load {load()}); {got["bytes_per_session"]:.0f} bytes per 6-joint session stored (tables and '
              'indexes)')
        with tempfile.TemporaryDirectory() as folder:
            page = fleet_page(got['url'], Path(folder) / 'fleet', robots)
        print(f'fleet page: {page["robots"]} robots in {page["seconds"]:.2f} s (judging {page["judge_s"]:.2f} s; '
              f'target ≤ 2 s) (load {load()}); top 3 {page["top"]}; worn joints on top: {page["worn_on_top"]}')
    finally:
        server.close()
    with tempfile.TemporaryDirectory() as folder:
        bags, broken = recordings(Path(folder), fleet_robots, per_robot)
        ident = reidentification(Path(folder), bags, broken)
    ratio = ident['runs'][2]['per_min'] / ident['runs'][1]['per_min']
    print(f'best of two runs each: {ident["runs"][1]["per_min"]:.1f}/min (1 worker), {ident["runs"][2]["per_min"]:.1f}'
          f'/min (2 workers): {ratio:.2f}× (target ≥ 1.6× on two cores); results 1 vs 2 workers identical: '
          f'{ident["same_1_2"]}; identical to dynid identify alone (3 recordings): {ident["same_as_alone"]}; '
          f'the broken recording reported: {ident["reported"]}')
    print(json.dumps({'benchmark': 'fleet', 'robots': robots, 'sessions': got['sessions'], 'postgres': True,
                      'concurrent_writers': WRITERS, 'sessions_lost': got['lost'],
                      'partial_session_present': bool(got['partial_present']),
                      'ingest_sessions_per_s': round(got['sessions'] / got['seconds'], 1),
                      'fleet_page_s': round(page['seconds'], 2),
                      'reidentified': ident['runs'][2]['identified'],
                      'reidentify_per_min_1_worker': round(ident['runs'][1]['per_min'], 1),
                      'reidentify_per_min_2_workers': round(ident['runs'][2]['per_min'], 1),
                      'failed_recordings_reported': ident['reported'], 'worn_on_top': page['worn_on_top'],
                      'bytes_per_session': round(got['bytes_per_session']),
                      'results_identical': ident['same_1_2'] and ident['same_as_alone'], 'load_average': load()}))


if __name__ == '__main__':
    main()
