"""A fleet's health record on a real PostgreSQL server, its page, and re-identification of its recordings on Dask.

Run: ``.venv/bin/python -m benchmarks.bench_fleet [--quick] [--only page|dask]`` (needs PostgreSQL's server
binaries: Debian's ``postgresql`` package; as root the server runs as the ``postgres`` user; see
testing/pg_server.py). ``--only page``: steps 1–3 (no Dask); ``--only dask``: step 4 (no PostgreSQL).

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
2. **Bad sessions**: sessions out of range given to :meth:`HealthRecord.append` (a start of 1e300 s and of
   1.7e18 s, nanoseconds read as seconds; 2^31 samples, beyond the 32-bit column; an infinite value and length;
   a payload of 1e12 kg) must each be refused naming its field, and one with NaN values ("not known") stored;
   three robots get sessions out of range written straight into the tables, as an older dynid could have (a start
   of 1e300 s, one in nanoseconds, an infinite stiffness).
3. **Fleet page**: each robot's judgement stored as its writer stores it after a session
   (:func:`dynid.health.stored.store_judgement`, two processes: ``judgements_store_s`` for all, and the CPU
   time per robot, what a robot PC spends after each session), the server crashed and started again once half of
   them are in (each write, and the history it is made from, rides out the restart): ``judgements_lost`` counts
   the robots whose judgement is then not current but for those of older data, which are refused with the reason;
   then ``dynid health --db URL --fleet-report
   DIR`` as a function (read the stored judgements, rank, write index.html, fleet.json and 100 robot pages):
   ``fleet_page_s``, and the CPU time of this process for it (``fleet_page_cpu_s``: the server's and the
   file system's work not included); every robot must be read from its stored judgement (none judged
   again), the robots of older data named as not judged and every other robot on the page (``fleet_page_complete``).
   Beside it (not with ``--quick``) the same page judging every robot from its sessions, as before
   the judgements were stored (``fleet_page_judging_all_s``). Three robots have a worn elbow (Coulomb
   friction +8 %/week from day 20): they must be the first three entries of the ranking by forecast, with no
   healthy robot above them. ``dynid health --db URL``, the plain listing, from the stored judgements as the page
   reads them: ``listing_process_s`` as a user runs it, a new process of the ``dynid`` command (imports included;
   the median of three, with its CPU time ``listing_process_cpu_s``; the target, ≤ 2 s, is for this figure), and
   ``listing_s`` in this process (its imports already paid). The same commands with a password in the URL's query
   (``?password=``), for a robot of older data and for a database that does not exist: ``secrets_printed`` counts
   the password in all they print and write.
   ``tracebacks`` counts every exception that escaped as anything but dynid's one-line refusal.
4. **Re-identification**: ≥ 40 twin recordings (``dynid simulate``, 12 s at 250 Hz, 4 robots, a tree
   robot/date/bag) and one recording cut off on purpose, identified by :func:`dynid.fleet.batch.reidentify` on
   a local Dask cluster of single-threaded workers (``dask worker --nthreads 1``: Dask's nanny sets
   OMP/OpenBLAS/MKL threads to 1; the workers' BLAS threads are printed), each worker in a session of its
   own as separate services are (Linux shares the CPUs fairly between sessions first, ``autogroup``: on a
   machine shared with other sessions, workers started in one session would share one session's part),
   with 1, 2, 1 and 2 workers, the best run of each counted (``force``:
   every run identifies everything; the clock starts once the cluster is up and each worker has identified
   one recording, so imports and first-use costs are paid before it); recordings per minute of each, the
   ratio (target ≥ 1.6 on two cores), the broken one reported, the 2-worker results identical to the
   1-worker ones and, for three recordings, to ``dynid identify`` run on its own.

The machine may be shared: the load average is printed beside the figures, and for the Dask runs each
task's CPU time (``time.process_time`` in the worker) and the workers' CPU share, Σ task CPU / (workers ×
wall): near 1 when each worker had a core to itself. The work per task is its CPU time; a 2-worker ratio
below 2 with the same task CPU time and a share below 1 is the machine's other load, not the batch. The
ratio two workers reach with a core each, 2 × task CPU (1 worker) / task CPU (2 workers), is printed beside
the measured one (``reidentify_ratio_cpu_bound``): an estimate from CPU times, not a measurement.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import io
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

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
    here = [sys.executable, '-m', 'benchmarks.bench_fleet']
    writers = [subprocess.Popen([*here, '--writer', url, str(w), str(robots), str(count)], cwd=ROOT,
                                stdout=subprocess.PIPE, text=True) for w in range(WRITERS)]
    victim = subprocess.Popen([*here, '--victim', url], cwd=ROOT, stdout=subprocess.PIPE, text=True)
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


def store_share(url: str, names: list[str]) -> tuple[float, list[str], list[str]]:
    """Store the judgements of ``names`` (one process's share), riding out a server restart; (its CPU time [s], the
    robots refused with a one-line reason (their stored data cannot be judged), tracebacks)."""
    import traceback

    from dynid.errors import InputError
    from dynid.health.record import HealthRecord
    from dynid.health.stored import store_judgement

    cpu, refused, tracebacks = time.process_time(), [], []
    with HealthRecord(url, timeout_s=120.0) as record:
        for name in names:
            try:
                store_judgement(record, name)
            except InputError as error:
                refused.append(f'{name}: {error}')
            except Exception:  # noqa: BLE001 - counted: none may escape
                tracebacks.append(traceback.format_exc(limit=-3))
    return time.process_time() - cpu, refused, tracebacks


def store_judgements(url: str, server) -> dict:
    """Every robot's judgement stored by two processes while the server is crashed and started again once half of
    them are in (``pg_ctl stop -m immediate``); then each judgeable robot's stored judgement must be current."""
    from concurrent.futures import ProcessPoolExecutor

    import psycopg

    from dynid.health.record import HealthRecord
    from dynid.health.settings import HealthSettings
    from dynid.health.stored import read_judgements

    with HealthRecord(url, readonly=True) as record:
        names = record.robots()
    start = time.perf_counter()
    restarted = None
    with ProcessPoolExecutor(2) as pool:
        shares = [pool.submit(store_share, url, names[k::2]) for k in range(2)]
        while restarted is None and not all(share.done() for share in shares):
            with contextlib.suppress(psycopg.Error), psycopg.connect(url, connect_timeout=5) as connection:
                if connection.execute('SELECT count(*) FROM judgements').fetchone()[0] >= len(names) // 2:
                    began = time.perf_counter()
                    server.restart('immediate')
                    restarted = time.perf_counter() - began
            time.sleep(0.2)
        done = [share.result() for share in shares]
    seconds = time.perf_counter() - start
    cpu = sum(d[0] for d in done)
    refused = [line for d in done for line in d[1]]
    tracebacks = [text for d in done for text in d[2]]
    with HealthRecord(url, readonly=True) as record:
        _, stale, _ = read_judgements(record, HealthSettings())
    refused_robots = {line.split(':')[0] for line in refused}
    with psycopg.connect(url) as connection:
        size = float(connection.execute('SELECT avg(length(judgement)) FROM judgements').fetchone()[0])
    return {'seconds': seconds, 'cpu_per_robot_s': cpu / len(names), 'robots': len(names), 'bytes': size,
            'restart_s': restarted, 'refused': refused, 'tracebacks': tracebacks,
            'lost': sorted(set(stale) - refused_robots)}


#: robots whose sessions an older dynid stored out of range (written here straight into the tables): what each holds
LEGACY = {'legacy-absurd-start': ('UPDATE sessions SET started_utc = 1e300 WHERE session_id = %s',
                                  'started_utc 1e+300'),
          'legacy-nanoseconds': ('UPDATE sessions SET started_utc = started_utc * 1e9 WHERE session_id = %s',
                                 'nanoseconds read as seconds'),
          'legacy-infinite': ("UPDATE joint_sessions SET stiffness = 'Infinity' WHERE session_id = %s",
                              'stiffness inf')}
SECRET = 'fleet-S3cret-in-query'


def bad_sessions(url: str) -> dict:
    """Sessions out of range given to :meth:`HealthRecord.append` (each must be refused naming its field, or, NaN
    meaning "not known", stored), and the robots of :data:`LEGACY`, written as an older dynid could have."""
    import math

    import psycopg

    from dynid.errors import InputError
    from dynid.fleet.synthetic import wear_sessions
    from dynid.health.record import HealthRecord
    from dynid.sim.wear import SessionSchedule

    good = wear_sessions('refusals', SessionSchedule.regular(2, seed=5), seed=5)[0]
    joint = good.joints[0]
    cases = {  # field named in the refusal, or None: stored
        'started_utc': {'started_utc': 1e300}, 'started_utc ': {'started_utc': 1.7e18},
        'samples': {'joints': (dataclasses.replace(joint, samples=2**31), *good.joints[1:])},
        'stiffness': {'joints': (dataclasses.replace(joint, stiffness=math.inf), *good.joints[1:])},
        'duration_s': {'duration_s': -math.inf}, 'payload_kg': {'payload_kg': 1e12},
        None: {'joints': (dataclasses.replace(joint, stiffness=math.nan, friction_scale=math.nan),
                          *good.joints[1:])}}
    named, stored, tracebacks = 0, 0, []
    with HealthRecord(url, timeout_s=120.0) as record:
        for field, changes in cases.items():
            try:
                session = dataclasses.replace(good, **changes, uid=f'bad-{len(tracebacks)}-{named}-{stored}')
                record.append(session)
                stored += field is None
            except InputError as error:
                named += field is not None and f'{field.strip()} must be' in str(error) and '\n' not in str(error)
            except Exception as error:  # noqa: BLE001 - counted: none may escape
                tracebacks.append(f'{type(error).__name__}: {error}')
        for robot in LEGACY:
            for session in wear_sessions(robot, SessionSchedule.regular(30, seed=7), seed=7):
                record.append(session)
    with psycopg.connect(url, autocommit=True) as connection:
        for robot, (sql, _) in LEGACY.items():
            newest = connection.execute('SELECT max(session_id) FROM sessions JOIN robots USING (robot_id) WHERE '
                                        'name = %s', (robot,)).fetchone()[0]
            connection.execute(sql, (newest,))
    return {'refusals': len(cases) - 1, 'named': named, 'nan_stored': stored, 'tracebacks': tracebacks}


def run_cli(args: list[str]) -> tuple[int, str]:
    """``dynid ARGS`` in this process: (exit code, what it printed); a traceback's text where one escaped."""
    import traceback

    from dynid.cli import main as dynid

    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
            code = dynid(args)
    except BaseException:  # noqa: BLE001 - counted: none may escape
        return 1, out.getvalue() + traceback.format_exc()
    return code, out.getvalue()


def secret_commands(url: str, folder: Path) -> dict:
    """``dynid health`` with the password in the URL's query (a listing, the fleet page, a robot that cannot be
    judged, a database that does not exist): the exit codes, the secret's appearances in what they printed and
    wrote, and the tracebacks."""
    secret_url = f'{url}?password={SECRET}&application_name=dynid-bench'
    missing = url.rsplit('/', 1)[0] + f'/no_such_database?sslmode=disable&password={SECRET}'
    runs = {'listing': ['health', '--db', secret_url], 'page': ['health', '--db', secret_url, '--fleet-report',
                                                                str(folder / 'secret_page')],
            'unjudgeable robot': ['health', '--db', secret_url, '--robot', 'legacy-nanoseconds'],
            'missing database': ['health', '--db', missing]}
    codes, printed, tracebacks = {}, '', []
    for name, args in runs.items():
        code, text = run_cli(args)
        codes[name] = code
        printed += text
        if code not in (0, 2) or 'Traceback' in text:
            tracebacks.append(f'{name}: {text[-600:]}')
    written = ''.join(p.read_text(errors='replace') for p in (folder / 'secret_page').rglob('*') if p.is_file())
    return {'codes': codes, 'secrets': (printed + written).count(SECRET) + (printed + written).count('S3cret'),
            'tracebacks': tracebacks, 'unjudgeable_line': next((line for line in printed.splitlines()
                                                                if 'cannot be judged' in line), '')}


def listing(url: str, runs: int = 3) -> dict:
    """``dynid health --db URL``, the plain listing: wall time [s] in this process (its imports already paid), and as
    a user runs it, a new process of the ``dynid`` command (imports included): the median of ``runs``, each run's
    wall and CPU time [s]; the new process must print what this process printed."""
    import resource

    start = time.perf_counter()
    code, text = run_cli(['health', '--db', url])
    here = time.perf_counter() - start
    script = Path(sys.executable).with_name('dynid')  # the console script pip installs beside the interpreter
    command = [str(script)] if script.exists() else [sys.executable, '-m', 'dynid.cli']
    walls, cpus, fresh = [], [], None
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        fresh = subprocess.run([*command, 'health', '--db', url], capture_output=True, text=True,
                               env=dict(os.environ, PYTHONPATH=str(ROOT / 'src')))
        walls.append(time.perf_counter() - start)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    listed = sum(1 for line in text.splitlines() if line and not line.startswith(' ') and 'sessions):' in line)
    return {'seconds': here, 'process_s': statistics.median(walls), 'process_runs_s': walls, 'process_cpu_s': cpus,
            'command': ' '.join(Path(c).name for c in command), 'code': code, 'fresh_code': fresh.returncode,
            'fresh_same': fresh.returncode == code and fresh.stdout == text, 'listed': listed,
            'not_judged': sum('NOT JUDGED' in line for line in text.splitlines())}


def fleet_page(url: str, folder: Path, robots: int, use_stored: bool = True) -> dict:
    from dynid.fleet.report import judge_fleet, write_fleet_report

    start, cpu = time.perf_counter(), time.process_time()
    fleet = judge_fleet(url, use_stored=use_stored)
    judged = time.perf_counter() - start
    write_fleet_report(fleet, folder)
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    top = [(e.robot, e.joint, e.quantity) for e in fleet.by_forecast[:3]]
    expected = {f'robot-{r:03d}' for r in worn(robots)}
    return {'seconds': seconds, 'cpu_s': cpu, 'judge_s': judged, 'top': top, 'unjudged': fleet.unjudged,
            'from_stored': len(fleet.robots) - len(fleet.judged),
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


def _warm(bag: str) -> dict:
    """On a worker: identify ``bag`` once (imports and first-use costs paid); the worker's BLAS threads."""
    from threadpoolctl import threadpool_info

    from dynid.cli.batch import identify_command
    from dynid.fleet.batch import Job, run_job

    with tempfile.TemporaryDirectory() as folder:
        copy = Path(folder) / 'bag'
        import shutil

        shutil.copytree(bag, copy)
        run_job(Job(str(copy), 'warm', 'ur5e'), force=True, command=identify_command)
    return {'blas_threads': max((p['num_threads'] for p in threadpool_info()), default=1),
            'OMP_NUM_THREADS': os.environ.get('OMP_NUM_THREADS')}


@contextlib.contextmanager
def worker_sessions(address: str, workers: int):
    """``workers`` Dask workers (``dask worker``: a nanny, one process, one thread), each in a session of its own."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT / 'src'), os.environ.get('PYTHONPATH', '')]))
    command = [sys.executable, '-m', 'distributed.cli.dask_worker', address, '--nthreads', '1', '--nworkers', '1',
               '--no-dashboard', '--death-timeout', '60']
    started = [subprocess.Popen(command, env=env, start_new_session=True, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL) for _ in range(workers)]
    try:
        yield started
    finally:
        for process in started:
            process.terminate()
        for process in started:
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def reidentification(root: Path, bags: list[Path], broken: Path) -> dict:
    import numpy as np
    from dask.distributed import Client, LocalCluster

    from dynid.cli import main
    from dynid.cli.batch import identify_command
    from dynid.fleet.batch import reidentify
    from dynid.identify.result.result import IdentificationResult

    runs, values = {1: [], 2: []}, {}
    for workers in (1, 2, 1, 2):  # alternated: the other helpers' load drifts between runs
        # the cluster started and its workers' imports done before the clock starts: the steady throughput
        with LocalCluster(n_workers=0, processes=True, dashboard_address=None) as cluster, Client(cluster) as client, \
                worker_sessions(cluster.scheduler_address, workers):
            client.wait_for_workers(workers, timeout=600)
            threads = client.run(_warm, str(bags[0]))
            start = time.perf_counter()
            outcomes = reidentify(root, 'ur5e', command=identify_command, scheduler=cluster.scheduler_address,
                                  force=True)
            seconds = time.perf_counter() - start
        identified = [o for o in outcomes if o.status == 'identified']
        failed = [o for o in outcomes if o.status == 'failed']
        task_cpu = sum(o.cpu_s for o in outcomes)
        runs[workers].append({'seconds': seconds, 'identified': len(identified), 'failed': [o.bag for o in failed],
                              'per_min': 60.0 * len(identified) / seconds, 'load': load(),
                              'task_cpu_s': sum(o.cpu_s for o in identified) / len(identified),
                              'task_wall_s': sum(o.seconds for o in identified) / len(identified),
                              'cpu_share': task_cpu / (workers * seconds)})
        values[workers] = {o.bag: IdentificationResult.load(o.result).values for o in identified}
        run = runs[workers][-1]
        print(f'reidentify, {workers} worker(s): {len(identified)} recordings in {seconds:.1f} s = '
              f'{run["per_min"]:.1f}/min, failed {len(failed)}; per task {run["task_cpu_s"]:.2f} s CPU in '
              f'{run["task_wall_s"]:.2f} s wall; the workers\' CPU share {run["cpu_share"]:.2f} (load {load()}; '
              f'workers\' BLAS threads {sorted(t["blas_threads"] for t in threads.values())})', flush=True)
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
    parser.add_argument('--only', choices=('page', 'dask'), help='page: the record, its judgements and the fleet '
                        'page (PostgreSQL); dask: the re-identification')
    parser.add_argument('--victim', help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.writer:
        url, writer, robots, count = args.writer
        return writer_main(url, int(writer), int(robots), int(count))
    if args.victim:
        return victim_main(args.victim)

    robots, count = (20, 20) if args.quick else (100, 50)
    per_robot, fleet_robots = (3, 4) if args.quick else (10, 4)
    print(f'load average at start: {load()} (2 cores, shared)')
    out = {'benchmark': 'fleet'} | ({'only': args.only} if args.only else {})
    if args.only != 'dask':
        out |= page_part(robots, count, args.quick)
    if args.only != 'page':
        out |= dask_part(fleet_robots, per_robot)
    print(json.dumps(out | {'load_average': load()}))


def page_part(robots: int, count: int, quick: bool) -> dict:
    """Steps 1 to 3 on a throwaway PostgreSQL server: the figures for the JSON line."""
    from testing import pg_server

    reason = pg_server.unavailable()
    if reason:
        raise SystemExit(f'bench_fleet needs a PostgreSQL server: {reason}')
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
        bad = bad_sessions(got['url'])
        print(f'bad sessions given to HealthRecord.append: {bad["named"]} of {bad["refusals"]} refused naming their '
              f'field (start 1e300 and 1.7e18 s, 2^31 samples, an infinite value and length, a payload of 1e12 kg); '
              f'a session with NaN values (not known) stored: {bool(bad["nan_stored"])}; tracebacks '
              f'{len(bad["tracebacks"])}; {len(LEGACY)} robots with sessions out of range written as an older dynid '
              f'could have ({", ".join(LEGACY)})')
        stored = store_judgements(got['url'], server)
        print(f'judgements stored: {stored["robots"]} robots in {stored["seconds"]:.1f} s (two processes, the server '
              f'crashed and started again once half were in: {stored["restart_s"] or 0:.1f} s); '
              f'{stored["cpu_per_robot_s"]:.2f} s CPU per robot of {count} sessions, what its writer spends after a '
              f'session; {stored["bytes"] / 1000:.0f} kB stored per robot; judgements lost {len(stored["lost"])}; '
              f'refused with the reason {len(stored["refused"])} (the robots of older data); tracebacks '
              f'{len(stored["tracebacks"])} (load {load()})')
        with tempfile.TemporaryDirectory() as folder:
            page = fleet_page(got['url'], Path(folder) / 'fleet', robots)
            every = None if quick else fleet_page(got['url'], Path(folder) / 'every', robots, use_stored=False)
            secrets = secret_commands(got['url'], Path(folder))
        listed = listing(got['url'])
        healthy = robots + 2  # the twins, the victim writer's robot, the robot of the NaN session
        print(f'fleet page: {page["robots"]} robots in {page["seconds"]:.2f} s, {page["cpu_s"]:.2f} s CPU of this '
              f'process (reading and ranking '
              f'{page["judge_s"]:.2f} s; {page["from_stored"]} robots from their stored judgements; target ≤ 2 s) '
              f'(load {load()}); top 3 {page["top"]}; worn joints on top: {page["worn_on_top"]}; named as not judged: '
              f'{sorted(page["unjudged"])}; complete for every other robot: {page["robots"] == healthy}')
        if every is not None:
            print(f'the same page judging every robot from its sessions: {every["seconds"]:.1f} s (load {load()}); '
                  f'the same top 3: {every["top"] == page["top"]}')
        print(f'dynid health (the listing): {listed["listed"]} robots listed and {listed["not_judged"]} named as not '
              f'judged; as a user runs it, a new process of `{listed["command"]} health --db URL` (imports included): '
              f'{listed["process_s"]:.2f} s, the median of {", ".join(f"{w:.2f}" for w in listed["process_runs_s"])} s '
              f'wall ({", ".join(f"{c:.2f}" for c in listed["process_cpu_s"])} s CPU; target ≤ 2 s, for this figure); '
              f'{listed["seconds"]:.2f} s in this process, its imports already paid; the new process printed the same: '
              f'{listed["fresh_same"]} (load {load()})')
        print(f'the password in the URL\'s query: exit codes {secrets["codes"]}; printed or written '
              f'{secrets["secrets"]} times; a robot of older data: {secrets["unjudgeable_line"][:160]}')
    finally:
        server.close()
    tracebacks = bad['tracebacks'] + stored['tracebacks'] + secrets['tracebacks']
    for text in tracebacks[:3]:
        print(f'  traceback: {text[:600]}')
    return {'robots': robots, 'sessions': got['sessions'], 'postgres': True, 'concurrent_writers': WRITERS,
            'sessions_lost': got['lost'], 'partial_session_present': bool(got['partial_present']),
            'ingest_sessions_per_s': round(got['sessions'] / got['seconds'], 1),
            'bad_sessions_refused_naming_the_field': f'{bad["named"]}/{bad["refusals"]}',
            'nan_session_stored': bool(bad['nan_stored']),
            'judgements_lost': len(stored['lost']), 'judgement_restart_s': round(stored['restart_s'] or 0.0, 1),
            'tracebacks': len(tracebacks), 'secrets_printed': secrets['secrets'],
            'fleet_page_s': round(page['seconds'], 2), 'fleet_page_cpu_s': round(page['cpu_s'], 2),
            'fleet_page_from_stored': page['from_stored'] == page['robots'],
            'fleet_page_complete': page['robots'] == healthy and sorted(page['unjudged']) == sorted(LEGACY),
            'listing_s': round(listed['seconds'], 2), 'listing_process_s': round(listed['process_s'], 2),
            'listing_process_cpu_s': round(statistics.median(listed['process_cpu_s']), 2),
            'listing_process_same': listed['fresh_same'], 'listing_robots': listed['listed'],
            'judgement_cpu_s_per_robot': round(stored['cpu_per_robot_s'], 3),
            'judgement_bytes_per_robot': round(stored['bytes']),
            'fleet_page_judging_all_s': None if every is None else round(every['seconds'], 1),
            'worn_on_top': page['worn_on_top'], 'bytes_per_session': round(got['bytes_per_session'])}


def dask_part(fleet_robots: int, per_robot: int) -> dict:
    """Step 4: the figures for the JSON line."""
    with tempfile.TemporaryDirectory() as folder:
        bags, broken = recordings(Path(folder), fleet_robots, per_robot)
        ident = reidentification(Path(folder), bags, broken)
    one, two = ident['runs'][1], ident['runs'][2]
    ratio = two['per_min'] / one['per_min']
    print(f'best of two runs each: {one["per_min"]:.1f}/min (1 worker), {two["per_min"]:.1f}/min (2 workers): '
          f'{ratio:.2f}× (target ≥ 1.6× on two cores); per task {one["task_cpu_s"]:.2f} and {two["task_cpu_s"]:.2f} s '
          f'CPU, the workers\' CPU share {one["cpu_share"]:.2f} and {two["cpu_share"]:.2f} (each worker with a core '
          f'to itself: {2 * one["task_cpu_s"] / two["task_cpu_s"]:.2f}×); results 1 vs 2 workers '
          f'identical: {ident["same_1_2"]}; identical to dynid identify alone (3 recordings): '
          f'{ident["same_as_alone"]}; the broken recording reported: {ident["reported"]}')
    return {'reidentified': two['identified'], 'reidentify_per_min_1_worker': round(one['per_min'], 1),
            'reidentify_per_min_2_workers': round(two['per_min'], 1), 'reidentify_ratio': round(ratio, 2),
            'task_cpu_s_1_worker': round(one['task_cpu_s'], 3), 'task_cpu_s_2_workers': round(two['task_cpu_s'], 3),
            'cpu_share_1_worker': round(one['cpu_share'], 2), 'cpu_share_2_workers': round(two['cpu_share'], 2),
            'reidentify_ratio_cpu_bound': round(2 * one['task_cpu_s'] / two['task_cpu_s'], 2),
            'failed_recordings_reported': ident['reported'],
            'results_identical': ident['same_1_2'] and ident['same_as_alone']}


if __name__ == '__main__':
    main()
