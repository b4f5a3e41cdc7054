"""Re-identification of a fleet's recordings as a Dask task graph (``dynid batch``).

The recordings come from a manifest (YAML: ``recordings: [{bag, robot, model}]``, paths relative to it)
or from a tree ``ROOT/<robot>/<date>/<bag>`` (every rosbag2 folder under ROOT, the robot's name its
first folder). Each recording is one task: ``dynid identify BAG --robot MODEL -o RESULT`` with the
batch's identify options, run on a Dask worker (a LocalCluster of ``workers`` processes by default, or
the scheduler at ``scheduler``), so a result is what ``dynid identify`` gives for that recording alone.

- The result is written beside its recording, ``<bag>.result.yaml``, with ``<bag>.result.json``: the
  sha256 of every input file, the robot, the options and dynid's version. A recording whose
  ``.result.json`` matches all of those is skipped (done before); ``force`` runs it again.
- A recording that fails (unreadable, refused by the identification, a crash) is reported with its
  error; the others go on. Nothing is written for it.
- With a health record (``db``: a file or a PostgreSQL URL) each identified recording adds a session
  of its robot: the identified Coulomb and viscous friction per joint (``coulomb_nm``, ``viscous_nms``,
  friction scale 1), dated by the recording's first stamp, source ``identify`` — a fleet's friction
  over its history, re-derived whenever dynid's models improve. Sessions already there are skipped. Each result
  (identified, or found done) is kept in the record's results (:mod:`dynid.health.results`), from which a fleet prior
  is pooled without the files (:func:`dynid.fleet.prior.record_members`). Each
  robot with new sessions is judged once at the end and its judgement stored (:mod:`dynid.health.stored`), and
  every robot's place in its fleet (:func:`fleet_places`: its newest result against the other robots' of its model)
  is stored beside it, for the fleet's page and the robot's judgement.

    >>> from dynid.cli.batch import identify_command                                    # doctest: +SKIP
    >>> outcomes = reidentify('recordings/', 'ur5e', command=identify_command, workers=2)  # doctest: +SKIP
    >>> print(summary_table(outcomes))                                                  # doctest: +SKIP
"""

from __future__ import annotations

import contextlib
import io
import json
import math
import os
import shlex
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

from dynid import __version__
from dynid.errors import InputError
from dynid.files import input_files, read_yaml
from dynid.fleet.settings import BatchSettings
from dynid.health.schema import TIME_LIMIT_S
from dynid.schema import ANY, Fields, Items, MismatchError, Number, Table, Text, check

RESULT_SUFFIX = '.result.yaml'
META_SUFFIX = '.result.json'
#: a manifest (module docstring): each recording's bag (relative to the manifest), its robot's name in the record
#: (default: the bag's folder) and its robot model (default: the batch's)
MANIFEST = Fields(required={'recordings': Items(Fields(
    required={'bag': Text(empty=False)}, optional={'robot': Text(empty=False), 'model': Text(empty=False)},
    name='a {bag, robot, model} entry'), least=1)})
#: what a result's ``.result.json`` holds: what it was made from, the identified friction [N·m, N·m·s/rad] per joint
#: and the recording's start [s since 1970 UTC]; one that does not fit is done again
META = Fields(required={'fingerprint': Fields(others=ANY), 'friction': Table(Table(Number())),
                        'started_utc': Number('s', low=0.0, high=TIME_LIMIT_S, null=True, nan=True)},
              optional={'robot_name': Text()})


@dataclass(frozen=True)
class Job:
    """One recording to identify: ``bag`` (a rosbag2 folder or file), the ``robot``'s name (the record's),
    its ``model`` (as for ``dynid identify --robot``) and the identify options (extra arguments)."""

    bag: str
    robot: str
    model: str
    options: tuple[str, ...] = ()

    @property
    def result(self) -> Path:
        return Path(self.bag).with_name(Path(self.bag).name + RESULT_SUFFIX)

    @property
    def meta(self) -> Path:
        return Path(self.bag).with_name(Path(self.bag).name + META_SUFFIX)


@dataclass
class Outcome:
    """What became of one job: ``status`` 'identified', 'skipped' (done before) or 'failed' (``error``);
    ``seconds`` its wall time [s], ``cpu_s`` the CPU time of the process that ran it over that time [s]."""

    bag: str
    robot: str
    status: str
    error: str = ''
    seconds: float = 0.0
    cpu_s: float = 0.0
    result: str = ''
    session: int | None = None
    friction: dict = field(default_factory=dict)
    started_utc: float = math.nan
    log: str = ''


def _is_bag(path: Path) -> bool:
    return path.is_dir() and (path / 'metadata.yaml').is_file()


def discover(source, robot: str = 'ur5e', options: Sequence[str] = ()) -> list[Job]:
    """The jobs of a manifest file or a recordings tree (module docstring); InputError naming the source."""
    source = Path(source)
    options = tuple(options)
    if source.is_file():
        data = check(read_yaml(source, 'manifest'), MANIFEST, f'manifest {source}')
        jobs = []
        for item in data['recordings']:
            bag = (source.parent / item['bag']).resolve()
            jobs.append(Job(str(bag), str(item.get('robot') or bag.parent.name), str(item.get('model') or robot),
                            options))
        return jobs
    if not source.is_dir():
        raise InputError(f'{source}: no such manifest or recordings folder')
    bags = sorted(p for p in source.rglob('metadata.yaml') if _is_bag(p.parent))
    if not bags:
        raise InputError(f'{source}: no rosbag2 recordings under it (folders with a metadata.yaml)')
    jobs = []
    for meta in bags:
        bag = meta.parent.resolve()
        relative = bag.relative_to(source.resolve())
        name = relative.parts[0] if len(relative.parts) > 1 else source.resolve().name
        jobs.append(Job(str(bag), name, robot, options))
    return jobs


def fingerprint(job: Job) -> dict:
    """What a result depends on: the recording's files (sha256), the robot, the options, dynid's version."""
    robot_file = Path(job.model)
    return {'inputs': [{'path': str(Path(f['path']).relative_to(Path(job.bag).parent)), 'sha256': f['sha256']}
                       for f in input_files(job.bag)],
            'robot': job.model,
            'robot_sha256': input_files(robot_file)[0]['sha256'] if robot_file.is_file() else '',
            'options': list(job.options), 'software': f'dynid {__version__}'}


def run_job(job: Job, force: bool = False, *, command: Callable[[list[str]], int]) -> Outcome:
    """Identify one recording (module docstring) and never raise: a failure is the outcome's error.
    Runs on a Dask worker (or anywhere). ``command``: ``dynid identify`` as the command line's front end runs it
    (its arguments, from ``identify``, to its exit code; argparse's refusal as SystemExit):
    :func:`dynid.cli.batch.identify_command`. The front end gives it, so the core never imports the command line."""
    from dynid.identify import IdentificationResult

    start, cpu = time.perf_counter(), time.process_time()
    outcome = Outcome(job.bag, job.robot, 'failed')
    log = io.StringIO()
    try:
        print_ = fingerprint(job)
        if not force and job.meta.is_file() and job.result.is_file():
            try:
                done = json.loads(job.meta.read_text())
                META.check(done, (), {})
            except (OSError, ValueError, MismatchError):
                done = None
            if done is not None and done['fingerprint'] == print_:
                outcome.status, outcome.result = 'skipped', str(job.result)
                outcome.friction, outcome.started_utc = done.get('friction', {}), done.get('started_utc', math.nan)
                return outcome
        partial = job.result.with_name(job.result.name + '.partial.yaml')
        argv = ['identify', job.bag, '--robot', job.model, '-o', str(partial), '--quiet', *job.options]
        with contextlib.redirect_stdout(log), contextlib.redirect_stderr(log):
            code = command(argv)
        if code != 0:
            raise InputError(f'dynid identify exited {code}')
        result = IdentificationResult.load(partial)
        outcome.friction = result.coulomb_viscous()
        outcome.started_utc = _start_utc(job)
        os.replace(partial, job.result)
        meta = {'fingerprint': print_, 'friction': outcome.friction, 'started_utc': outcome.started_utc,
                'robot_name': job.robot}
        staging = job.meta.with_name(job.meta.name + '.partial')
        staging.write_text(json.dumps(meta, indent=1))
        os.replace(staging, job.meta)
        outcome.status, outcome.result = 'identified', str(job.result)
    except InputError as error:
        outcome.error = str(error)
    except SystemExit as error:  # argparse refusing the options
        lines = log.getvalue().strip().splitlines()
        outcome.error = f'bad identify options ({lines[-1] if lines else error})'
    except Exception as error:  # noqa: BLE001 - one recording's crash is reported, the fleet goes on
        outcome.error = f'{type(error).__name__}: {error} ({traceback.format_exc(limit=-1).strip().splitlines()[-3]})'
    finally:
        outcome.seconds, outcome.cpu_s = time.perf_counter() - start, time.process_time() - cpu
        outcome.log = log.getvalue()[-2000:]
        with contextlib.suppress(OSError):
            job.result.with_name(job.result.name + '.partial.yaml').unlink(missing_ok=True)
    return outcome


def _start_utc(job: Job) -> float:
    """The recording's first stamp [s since 1970 UTC] (its folder's time where the stamps are a simulation's)."""
    from rosbags.rosbag2 import Reader

    from dynid.health.session import EARLIEST_UTC

    try:
        with Reader(job.bag) as reader:
            start = reader.start_time / 1e9
    except Exception:  # noqa: BLE001 - the date is a convenience; the folder's time stands in
        start = 0.0
    return start if start >= EARLIEST_UTC else Path(job.bag).stat().st_mtime


def record_outcome(record, outcome: Outcome, model: str) -> int | None:
    """Append the identified friction of ``outcome`` as a session of its robot (module docstring); None when
    there is no friction or the session is in the record already."""
    from dynid.health.record import JointSession, Session

    if not outcome.friction or outcome.status == 'failed':
        return None
    if outcome.robot in record.robots() and outcome.bag in record.inputs(outcome.robot):
        return None
    joints = tuple(outcome.friction)
    rows = tuple(JointSession(j, friction_scale=1.0, coulomb_nm=v.get('Fc', math.nan),
                              viscous_nms=v.get('Fv', math.nan)) for j, v in outcome.friction.items())
    return record.append(Session(outcome.robot, model, joints, outcome.started_utc, rows, source='identify',
                                 input=outcome.bag, result_file=outcome.result,
                                 result_sha256=input_files(outcome.result)[0]['sha256'],
                                 software=f'dynid {__version__}'))


def record_result(record, outcome: Outcome, model: str) -> bool:
    """Keep the result of ``outcome`` (identified or found done) in the record's results (:mod:`dynid.health.results`),
    dated by the recording's start; ``model`` the robot model as the batch names it (for a robot new to the record).
    False where there is none or the record holds it already."""
    from dynid.health.results import StoredResult, made_utc
    from dynid.identify import IdentificationResult

    if outcome.status == 'failed' or not outcome.result or not Path(outcome.result).is_file():
        return False
    result = IdentificationResult.load(outcome.result)
    when = outcome.started_utc if math.isfinite(outcome.started_utc) else made_utc(result, outcome.result)
    return record.store_result(outcome.robot, model, result.joint_names,
                               StoredResult.of(result, outcome.result, identified_utc=when, recording=outcome.bag))


def reidentify(source, robot: str = BatchSettings.robot, options: Sequence[str] | str = BatchSettings.identify_args,
               *, command: Callable[[list[str]], int], workers: int = BatchSettings.workers,
               scheduler: str | None = None, db=None,
               force: bool = False, progress: Callable[[Outcome, int, int], None] | None = None) -> list[Outcome]:
    """Identify every recording of ``source`` (a manifest or a tree) on Dask (module docstring); the outcomes
    in the jobs' order. ``options``: ``dynid identify`` options for every recording (a list or one string);
    ``command``: what runs them (:func:`run_job`; :func:`dynid.cli.batch.identify_command`).
    InputError for a bad source, an unreachable scheduler or a bad record; a recording's failure is its outcome's."""
    try:
        from dask.distributed import Client, LocalCluster, as_completed
    except ImportError:
        raise InputError('dynid batch needs Dask: pip install "dask[distributed]"') from None
    if isinstance(options, str):
        options = shlex.split(options)
    jobs = discover(source, robot, options)
    record = None
    if db is not None:
        from dynid.health.record import HealthRecord

        record = HealthRecord(db)  # refused before any work when it is not a health record
    cluster = None
    try:
        if scheduler:
            try:
                client = Client(scheduler, timeout='20s')
            except (OSError, TimeoutError) as error:
                raise InputError(f'cannot reach the Dask scheduler {scheduler} ({error})') from None
        else:
            cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None)
            client = Client(cluster)
        with client:
            futures = {client.submit(run_job, job, force, command=command, pure=False,
                                     key=f'identify-{k}-{Path(job.bag).name}'): k for k, job in enumerate(jobs)}
            outcomes: list[Outcome | None] = [None] * len(jobs)
            for done, future in enumerate(as_completed(futures), 1):
                k = futures[future]
                try:
                    outcome = future.result()
                except Exception as error:  # noqa: BLE001 - a worker lost: that recording is reported
                    outcome = Outcome(jobs[k].bag, jobs[k].robot, 'failed', f'the task failed: {error}')
                if record is not None and outcome.status != 'failed':
                    outcome.session = record_outcome(record, outcome, jobs[k].model)
                    record_result(record, outcome, jobs[k].model)
                outcomes[k] = outcome
                if progress is not None:
                    progress(outcome, done, len(jobs))
        if record is not None:  # each robot with new sessions judged once, for the fleet's page
            from dynid.health.stored import store_judgement

            for name in dict.fromkeys(o.robot for o in outcomes if o.session is not None):
                store_judgement(record, name)
            record.store_standings([place for group in fleet_places(outcomes) for place in group.places()])
    finally:
        if cluster is not None:
            cluster.close()
        if record is not None:
            record.close()
    return outcomes


def fleet_places(outcomes: Sequence[Outcome], false_flag_rate: float | None = None) -> list:
    """Each robot's place in its fleet (:func:`dynid.fleet.standing.standings_by_model`) from the newest result of
    each robot among ``outcomes`` (identified or skipped; the newest by the recording's start)."""
    from dynid.fleet.prior import FleetMember
    from dynid.fleet.standing import FALSE_FLAG_RATE, standings_by_model
    from dynid.identify import IdentificationResult

    newest: dict[str, Outcome] = {}
    for o in outcomes:
        if o.status != 'failed' and o.result and Path(o.result).is_file():
            known = newest.get(o.robot)
            if known is None or (o.started_utc if math.isfinite(o.started_utc) else -math.inf) >= \
                    (known.started_utc if math.isfinite(known.started_utc) else -math.inf):
                newest[o.robot] = o
    members = [FleetMember(robot, o.result, input_files(o.result)[0]['sha256'], IdentificationResult.load(o.result))
               for robot, o in newest.items()]
    return standings_by_model(members, FALSE_FLAG_RATE if false_flag_rate is None else false_flag_rate)


def summary_table(outcomes: Sequence[Outcome]) -> str:
    """A text table: one row per recording (robot, status, seconds, result or error), then the counts."""
    rows = [f'{"robot":<16}{"status":<12}{"s":>7}  recording / error']
    for o in outcomes:
        rows.append(f'{o.robot:<16}{o.status:<12}{o.seconds:7.1f}  {Path(o.bag).name}'
                    + (f': {o.error}' if o.error else ''))
    counts = {s: sum(o.status == s for o in outcomes) for s in ('identified', 'skipped', 'failed')}
    rows.append(', '.join(f'{n} {s}' for s, n in counts.items()) + f' of {len(outcomes)} recordings')
    return '\n'.join(rows)


def outcomes_json(outcomes: Sequence[Outcome]) -> list[dict]:
    return [{k: v for k, v in asdict(o).items() if k != 'log'} for o in outcomes]
