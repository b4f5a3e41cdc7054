"""The first try on an arm nobody prepared: vendors' robot files and loggers' CSVs, each with one trap.

Run: ``.venv/bin/python -m benchmarks.first_try [--case NAME …]`` (about 5 minutes), or as part of
``bench_any_log`` (its JSON gains ``first_try_cases``, ``first_try_right`` and ``absurd_figures_printed``).
Ends with one JSON line ``{"benchmark": "first_try", "first_try_cases": [...], "first_try_right": "k of n",
"absurd_figures_printed": N}``.

Each case is what a new user does with dynid's defaults: a simulated arm built from a vendor's robot file as
published (example-robot-data's Franka Panda with its hand and fingers; Kinova's Jaco 2 with its continuous
joints), the arm as built differing from its file (:func:`perturbed_urdf`: masses ±25 %, centres of mass ±2 cm),
run by the twin (its joints' friction, drives, noise), logged as a logger writes a CSV, then ``dynid import`` with a
column map and ``dynid identify``, and where it identifies, the result validated on another motion the twin ran
(``dynid validate``) and handed to ``dynid contact``. The trap is one thing the file or the log gets wrong or cannot
tell. A case is **right** when dynid either identifies with a true statement of what it could not separate (the
statement printed; the held-out fit on the other motion within :data:`FIT_MARGIN_POINTS` of the clean log's where
the case has one; the result accepted by ``dynid contact``) or refuses with the fix that works first (the first fix
printed, followed as written, identifies: checked by running it). The cases (:data:`CASES`):

- ``clean_panda``: the file with a hand and fingers, nothing else wrong; ``continuous_jaco``: continuous joints;
- ``zero_ranges``: revolute joints whose ``<limit>`` gives no lower and upper (read 0 to 0): taken as unbounded, said;
- ``sample_index_time``, ``time_in_ms``: a time column counting samples, or in ms mapped as s: refused with the rate
  the motion implies, the fix followed;
- ``one_way_all``, ``one_way_two``: joints that never reverse: Coulomb friction and the offset said and held;
- ``dead_channel``: a joint's torque sensor reading nothing: named, the refusal's fix followed;
- ``two_sources``: torque sensors and motor currents: the source said to predict held-out rows better is the one
  that predicts another motion better (within 5 %);
- ``refusal_ways_out``, ``refusal_ways_out_b``, ``refusal_ways_out_task``: logs too short for the defaults: the first
  way out, followed, within 5 % of the best way out on another motion, all scored on the same rows;
- ``calibration_never_alarms``: contact thresholds calibrated with an undeclared 8 kg tool: every joint whose alarm
  level lies above its effort limit named.

**Absurd figures** (``public_scoring.absurd_figures``): every torque figure [N·m] dynid printed over a case that
exceeds ten times the largest effort limit of the robot file, or is not finite. A model that predicts that is a
failed model and must be named as such, not printed as a number.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import io
import json
import re
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import yaml

from benchmarks.public_scoring import absurd_figures
from dynid.cli import main as dynid
from dynid.excite.fourier import FourierDesign, default_limits, random_design
from dynid.identify.result.result import IdentificationResult
from dynid.identify.validation.validate import predict
from dynid.io.bag import read_bag
from dynid.model import load_robot
from dynid.model.robots import example_robot_path
from dynid.sim.parameters import PlantParameters
from dynid.sim.twin import DigitalTwin, home_configuration

#: a case identified through its trap is right when its held-out fit is within this of the clean case's [points]
FIT_MARGIN_POINTS = 2.0
RATE_HZ = 1000.0
TRAIN_S, HELD_S = 20.0, 10.0


#: the vendors' robot files as example-robot-data publishes them: the Panda with its hand, Kinova's Jaco 2
VENDOR_FILES = {'panda': 'panda_description/urdf/panda.urdf', 'jaco': 'kinova_description/robots/kinova.urdf'}


# ------------------------------------------------------------------------------------------- the runs
@dataclass
class Run:
    """One dynid command: its arguments, exit code and everything it printed."""

    argv: list[str]
    code: int
    text: str


def run_dynid(argv: list[str]) -> Run:
    """``dynid ARGV`` in this process, its output captured (stdout and stderr together)."""
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer), contextlib.redirect_stderr(buffer):
        try:
            code = dynid([str(a) for a in argv])
        except SystemExit as exit_:
            code = int(exit_.code or 0) if not isinstance(exit_.code, str) else 2
    return Run([str(a) for a in argv], int(code or 0), buffer.getvalue())


# ------------------------------------------------------------------------------------------- the arms
def fourier_motion(robot, seed: int, seconds: float, period_s: float = 10.0):
    """A random Fourier excitation around the home pose (5 harmonics of 1/``period_s``), ``seconds`` long."""
    home = home_configuration(robot)
    design = FourierDesign(robot.joint_names, 5, period_s)
    variables = random_design(design, home, default_limits(robot, home), np.random.default_rng(seed),
                              np.linspace(0.0, period_s, 4000, endpoint=False))
    return dataclasses.replace(design.trajectory(variables), duration_s=seconds)


def simulate(robot, seed: int, seconds: float, trajectory=None, rate_hz: float = RATE_HZ):
    """The twin of ``robot`` (its default plant drawn with ``seed``) following ``trajectory`` (default: a
    Fourier excitation of that seed): a :class:`~dynid.sim.twin.SimulationRecord`."""
    params = PlantParameters.defaults(robot, seed=seed)
    trajectory = trajectory or fourier_motion(robot, seed, seconds)
    twin = DigitalTwin(params, rate_hz=rate_hz, seed=seed, initial_q=trajectory.evaluate(np.array([0.0]))[0][0])
    twin.follow(trajectory)
    return twin.run(seconds), params


def write_csv(path: Path, record, signals: dict[str, np.ndarray] | None = None, time_column='t',
              time_values: np.ndarray | None = None) -> Path:
    """A logger's CSV: a time column (``time_values``, default the record's seconds; ``time_column=None``: none),
    then q_i, dq_i, tau_i (the joint torque sensors) or the ``signals`` given {prefix: (N, n) array}."""
    signals = signals if signals is not None else {'q': record.measured['q'], 'dq': record.measured['dq'],
                                                    'tau': record.measured['joint_torque']}
    n = record.measured['q'].shape[1]
    names, columns = [], []
    if time_column:
        names.append(time_column)
        columns.append((record.time - record.time[0] if time_values is None else time_values)[:, None])
    for prefix, values in signals.items():
        names += [f'{prefix}_{j}' for j in range(n)]
        columns.append(values)
    np.savetxt(path, np.hstack(columns), fmt='%.9g', delimiter=',', header=','.join(names), comments='')
    return path


# ------------------------------------------------------------------------------------------- the cases
@dataclass
class Outcome:
    """What a case gave: right or not, the line that makes it right (or what was missing), every command's
    output, and the absurd figures printed."""

    name: str
    quirk: str
    right: bool
    statement: str
    runs: list[Run] = field(default_factory=list)
    absurd: list[str] = field(default_factory=list)
    seconds: float = 0.0

    def summary(self) -> dict:
        return {'case': self.name, 'quirk': self.quirk, 'right': self.right, 'statement': self.statement,
                'absurd_figures': self.absurd, 'seconds': round(self.seconds, 1)}


CASES: dict[str, tuple[str, Callable[[Path], Outcome]]] = {}


def case(name: str, quirk: str):
    """Registers a case builder ``f(folder) -> Outcome`` under ``name``."""
    def register(function):
        CASES[name] = (quirk, function)
        return function
    return register


def run_cases(names: list[str] | None = None) -> list[Outcome]:
    """Every case (or those named), each in its own temporary folder."""
    outcomes = []
    for name, (quirk, function) in CASES.items():
        if names and name not in names:
            continue
        start = time.perf_counter()
        with tempfile.TemporaryDirectory(prefix=f'first_try_{name}_') as folder:
            try:
                outcome = function(Path(folder))
            except Exception as error:  # a traceback is a wrong first try, reported as such
                outcome = Outcome(name, quirk, False, f'traceback: {type(error).__name__}: {error}')
        outcome.seconds = time.perf_counter() - start
        outcomes.append(outcome)
        print(f'{name:<24} {"right" if outcome.right else "WRONG":<6} {outcome.seconds:5.0f} s  {outcome.statement}')
        for figure in outcome.absurd:
            print(f'{"":<24} absurd figure printed: {figure}')
    return outcomes


# ------------------------------------------------------------------------------------------- the pipeline
COLUMNS = 'time=t,q=q_{i},dq=dq_{i},tau=tau_{i}'


@dataclass
class Arm:
    """A vendor's arm as a user meets it: its robot file, the model dynid reads from it, a training and a
    held-out twin run (different Fourier excitations), and the file's largest effort limit [N·m]."""

    urdf: Path
    robot: object
    train: object
    held: object
    plant: object = None

    @property
    def effort_limit(self) -> float:
        limits = np.asarray(self.robot.effort_limits, dtype=float)
        return float(np.max(limits[np.isfinite(limits)])) if np.isfinite(limits).any() else 1e3


_ARMS: dict[str, Arm] = {}


def arm(name: str) -> Arm:
    """The twin runs of a vendor's arm (cached: every case of one arm logs the same motion)."""
    if name not in _ARMS:
        urdf = example_robot_path(VENDOR_FILES[name])
        with tempfile.TemporaryDirectory(prefix='first_try_plant_') as folder:
            true = Path(folder) / urdf.name
            true.write_text(perturbed_urdf(urdf.read_text(), seed=1))
            plant = load_robot(str(true))
        train, _ = simulate(plant, 3, TRAIN_S)
        held, _ = simulate(plant, 7, HELD_S)
        _ARMS[name] = Arm(urdf, load_robot(str(urdf)), train, held, plant)
    return _ARMS[name]


def perturbed_urdf(text: str, seed: int, mass_spread: float = 0.25, com_spread_m: float = 0.02) -> str:
    """The arm as built, not as its file says: every link's mass (and its inertia with it) scaled by a factor
    uniform in 1 ± ``mass_spread`` and its centre of mass moved by up to ``com_spread_m`` [m] per axis."""
    rng = np.random.default_rng(seed)

    def inertial(match: re.Match) -> str:
        block, factor = match.group(0), rng.uniform(1 - mass_spread, 1 + mass_spread)
        block = re.sub(r'(<mass\s+value=")([^"]+)"', lambda m: f'{m.group(1)}{float(m.group(2)) * factor:.9g}"', block)
        block = re.sub(r'\b(i[xyz]{2})="([^"]+)"', lambda m: f'{m.group(1)}="{float(m.group(2)) * factor:.9g}"', block)
        return re.sub(r'(<origin[^>]*\bxyz=")([^"]+)"', lambda m: m.group(1) + ' '.join(
            f'{float(v) + rng.uniform(-com_spread_m, com_spread_m):.9g}' for v in m.group(2).split()) + '"', block)

    return re.sub(r'<inertial>.*?</inertial>', inertial, text, flags=re.S)


@dataclass
class Pipeline:
    """A new user's commands on one case's files, their outputs kept."""

    folder: Path
    urdf: Path
    runs: list[Run] = field(default_factory=list)

    def __call__(self, *argv) -> Run:
        run = run_dynid(list(argv))
        self.runs.append(run)
        return run

    def import_(self, csv: Path, columns: str = COLUMNS, *extra) -> tuple[Run, Path]:
        bag = self.folder / f'{csv.stem}_bag'
        return self('import', csv, '--columns', columns, '--robot', self.urdf, '-o', bag, *extra), bag

    def identify(self, bag: Path, *extra, name: str = 'result') -> tuple[Run, Path]:
        result = self.folder / f'{name}.yaml'
        return self('identify', bag, '--robot', self.urdf, '-o', result, *extra), result

    def held_out_fit(self, result: Path, held_bag: Path) -> np.ndarray | None:
        """Per joint NRMSE fit [%] of ``result`` on the held-out bag (``dynid validate --json``), or None."""
        report = self.folder / f'{result.stem}_validate.json'
        run = self('validate', '--params', result, '--json', report, held_bag)
        if run.code != 0 or not report.exists():
            return None
        joints = json.loads(report.read_text())['recordings'][0]['predictions']['result']['joints']
        return np.array([np.nan if j['nrmse_fit_percent'] is None else float(j['nrmse_fit_percent'])
                         for j in joints.values()])

    def contact_accepts(self, result: Path, bag: Path) -> Run:
        return self('contact', '--params', result, '--robot', self.urdf, '--calibrate', bag,
                    '--save-calibration', self.folder / 'calibration.yaml', bag)

    def outcome(self, name: str, quirk: str, right: bool, statement: str, effort_limit: float) -> Outcome:
        absurd = [figure for run in self.runs for figure in absurd_figures(run.text, effort_limit)]
        return Outcome(name, quirk, right and not absurd, statement, self.runs, absurd)


def first_line(text: str, pattern: str) -> str | None:
    """The first output line matching ``pattern`` (a regular expression, case-insensitive), stripped."""
    for line in text.splitlines():
        if re.search(pattern, line, re.I):
            return line.strip()
    return None


# ------------------------------------------------------------------------------------------- cases
def _clean_fit(name: str) -> np.ndarray | None:
    """(n,) held-out NRMSE fit per joint [%] of the clean log of ``name``'s arm, None where it does not identify
    (cached)."""
    if name not in _CLEAN:
        a = arm(name)
        with tempfile.TemporaryDirectory(prefix='first_try_clean_') as folder:
            folder = Path(folder)
            pipe = Pipeline(folder, a.urdf)
            _, train = pipe.import_(write_csv(folder / 'train.csv', a.train))
            _, held = pipe.import_(write_csv(folder / 'held.csv', a.held))
            run, result = pipe.identify(train)
            fit = pipe.held_out_fit(result, held) if run.code == 0 else None
            _CLEAN[name] = fit
    return _CLEAN[name]


_CLEAN: dict[str, np.ndarray | None] = {}


@case('clean_panda', 'none: the vendor file with its hand and fingers, every joint excited, torque sensors')
def clean_panda(folder: Path) -> Outcome:
    a = arm('panda')
    return _through('clean_panda', folder, a, write_csv(folder / 'train.csv', a.train),
                    write_csv(folder / 'held.csv', a.held))


def task_motion(robot, seconds: float, one_way: tuple[int, ...] = (), seed: int = 11):
    """A task-like motion: each joint in ``one_way`` turns one way only (a ramp whose speed varies between 0.3
    and 1.7 × its mean, never reversing), the others sway about their mid-range (two sines, reversing); every
    joint within its limits. A :class:`~dynid.excite.trajectory.PointTrajectory` sampled every 10 ms."""
    from dynid.excite.trajectory import PointTrajectory

    rng = np.random.default_rng(seed)
    t = np.arange(0.0, seconds + 1e-9, 0.01)
    lower = np.where(np.isfinite(robot.lower_limits), robot.lower_limits, -np.pi)
    upper = np.where(np.isfinite(robot.upper_limits), robot.upper_limits, np.pi)
    span = upper - lower
    q, dq, ddq = (np.zeros((t.size, robot.n)) for _ in range(3))
    for j in range(robot.n):
        f = rng.uniform(0.08, 0.25, 2)
        phase = rng.uniform(0, 2 * np.pi, 2)
        if j in one_way:
            mean = 0.6 * span[j] / seconds  # 60 % of the range over the run
            w = 2 * np.pi * f[0]
            q[:, j] = lower[j] + 0.2 * span[j] + mean * (t + 0.7 * (np.sin(w * t + phase[0]) - np.sin(phase[0])) / w)
            dq[:, j] = mean * (1 + 0.7 * np.cos(w * t + phase[0]))
            ddq[:, j] = -mean * 0.7 * w * np.sin(w * t + phase[0])
        else:
            a = 0.15 * span[j] * np.array([0.6, 0.4])
            w = 2 * np.pi * f
            mid = 0.5 * (lower[j] + upper[j])
            q[:, j] = mid + (a[None] * np.sin(w[None] * t[:, None] + phase[None])).sum(1)
            dq[:, j] = (a * w * np.cos(w[None] * t[:, None] + phase[None])).sum(1)
            ddq[:, j] = -(a * w ** 2 * np.sin(w[None] * t[:, None] + phase[None])).sum(1)
    return PointTrajectory(robot.joint_names, t, q, dq, ddq)


#: the fixes a refusal of these cases may print first, followed as written
FIXES = r'--exclude-joint [\w,]+|--torque \w+'


def _through(name: str, folder: Path, a: Arm, train_csv: Path, held_csv: Path, columns: str = COLUMNS,
             said: str | None = None, import_extra: tuple = (), clean: np.ndarray | None = None) -> Outcome:
    """A case dynid should identify through: import both logs, identify with the defaults, validate on the held-out
    motion and hand the result to ``dynid contact``. Right when it identifies, every joint's held-out fit is within
    :data:`FIT_MARGIN_POINTS` of ``clean`` (where given), the contact observer accepts the result, and (``said``: a
    regular expression) the statement of what the data could not tell is printed. Where identify refuses with a fix
    (:data:`FIXES`), the first is followed as written and the case judged on what it gives."""
    pipe = Pipeline(folder, a.urdf)
    imported, train = pipe.import_(train_csv, columns, *import_extra)
    _, held = pipe.import_(held_csv, columns, *import_extra)
    problems, statement = [], []
    if imported.code != 0:
        return pipe.outcome(name, CASES[name][0], False, 'import refused: ' + _last(imported.text), a.effort_limit)
    run, result = pipe.identify(train)
    fix = re.search(FIXES, run.text) if run.code != 0 else None
    if fix is not None:  # a refusal's first fix, followed as written
        statement.append(f'refused: {first_line(run.text, "error")[:160]}…; {fix.group(0)!r} followed')
        run, result = pipe.identify(train, *fix.group(0).split())
    if run.code != 0:
        return pipe.outcome(name, CASES[name][0], False, 'identify refused: ' + _last(run.text), a.effort_limit)
    if said is not None:
        line = first_line('\n'.join(r.text for r in pipe.runs), said)
        statement.append(f'said: {line}' if line else f'not said ({said})')
        problems += [] if line else ['not said']
    fit = pipe.held_out_fit(result, held)
    if fit is None:
        problems.append('not validated')
    else:
        statement.append(f'held-out fit min {np.nanmin(fit):.1f} %')
        if clean is not None:
            worse = [a.robot.joint_names[j] for j in np.flatnonzero(fit < clean - FIT_MARGIN_POINTS)]
            if worse:
                problems.append('worse than the clean log on ' + ', '.join(worse))
                statement.append(problems[-1])
    contact = pipe.contact_accepts(result, held)
    if contact.code != 0:
        problems.append('contact refuses')
        statement.append('contact refuses it: ' + _last(contact.text))
    return pipe.outcome(name, CASES[name][0], not problems, '; '.join(statement), a.effort_limit)


def _last(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1].strip() if lines else '(nothing printed)'


@case('continuous_jaco', "continuous joints: Kinova's Jaco 2 (6 joints) as example-robot-data publishes it")
def continuous_jaco(folder: Path) -> Outcome:
    a = arm('jaco')
    return _through('continuous_jaco', folder, a, write_csv(folder / 'train.csv', a.train),
                    write_csv(folder / 'held.csv', a.held))


@case('zero_ranges', 'revolute joints written <limit effort velocity/> without lower and upper (read as 0 to 0)')
def zero_ranges(folder: Path) -> Outcome:
    a = arm('panda')
    text = re.sub(r'\s(lower|upper)="[^"]*"', '', a.urdf.read_text())
    urdf = folder / 'panda_no_ranges.urdf'
    urdf.write_text(text)
    a = dataclasses.replace(a, urdf=urdf)
    return _through('zero_ranges', folder, a, write_csv(folder / 'train.csv', a.train),
                    write_csv(folder / 'held.csv', a.held), said=r'0 to 0|unbounded', clean=_clean_fit('panda'))


def _one_way(name: str, folder: Path, joints: tuple[int, ...]) -> Outcome:
    a = arm('panda')
    record, _ = simulate(a.plant, 5, TRAIN_S, task_motion(a.robot, TRAIN_S, joints))
    names = '|'.join(a.robot.joint_names[j] for j in joints)
    return _through(name, folder, a, write_csv(folder / 'train.csv', record), write_csv(folder / 'held.csv', a.held),
                    said=rf"(never reverse|one way).*({names})|({names}).*(never reverse|one way)")


@case('one_way_all', 'a task log: every joint turns one way only (Coulomb friction and the offset are one constant)')
def one_way_all(folder: Path) -> Outcome:
    return _one_way('one_way_all', folder, tuple(range(7)))


@case('one_way_two', 'a task log: two joints turn one way only, the others sway')
def one_way_two(folder: Path) -> Outcome:
    return _one_way('one_way_two', folder, (1, 3))


@case('dead_channel', "a torque sensor channel that carries nothing (panda_joint6's reads noise about 0)")
def dead_channel(folder: Path) -> Outcome:
    a = arm('panda')
    logs = []
    for kind, record in (('train', a.train), ('held', a.held)):
        tau = record.measured['joint_torque'].copy()
        tau[:, 5] = np.random.default_rng(1).normal(0.0, 2e-3, tau.shape[0])
        logs.append(write_csv(folder / f'{kind}.csv', record, {'q': record.measured['q'],
                                                               'dq': record.measured['dq'], 'tau': tau}))
    return _through('dead_channel', folder, a, *logs, said=r'panda_joint6.*(carries nothing|dead)')


@case('two_sources', "joint torque sensors and motor currents both logged (Franka's drive data known)")
def two_sources(folder: Path) -> Outcome:
    """Right when identify names the source that predicts held-out rows better and another motion agrees: each
    source identified alone (``--torque``) predicts the other motion's own torque, ‖y − ŷ‖/‖y‖, the named one
    within 5 % of the other or better."""
    a = arm('panda')
    drives = load_robot('panda').drives
    plant = a.plant.with_drives(drives)
    train, _ = simulate(plant, 3, TRAIN_S)
    held, _ = simulate(plant, 7, HELD_S)
    pipe = Pipeline(folder, 'panda')  # the built-in Panda: example-robot-data's file with Franka's drive data
    columns = COLUMNS + ',current=current_{i}'
    logs = [write_csv(folder / f'{kind}.csv', record, {'q': record.measured['q'], 'dq': record.measured['dq'],
                                                      'tau': record.measured['joint_torque'],
                                                      'current': record.measured['current']})
            for kind, record in (('train', train), ('held', held))]
    (_, bag), (_, held_bag) = (pipe.import_(log, columns) for log in logs)
    run, _ = pipe.identify(bag)
    said = re.search(r'of the torque sources, (\w+) predicts', run.text)
    if run.code != 0 or said is None:
        return pipe.outcome('two_sources', CASES['two_sources'][0], False,
                            'refused' if run.code else 'which source predicts better not said', a.effort_limit)
    errors = {}
    for source in ('joint_torque', 'current'):
        ran, result = pipe.identify(bag, '--torque', source, name=source)
        errors[source] = held_out_error(pipe, result, held_bag) if ran.code == 0 else None
    named, other = said.group(1), 'current' if said.group(1) == 'joint_torque' else 'joint_torque'
    right = errors[named] is not None and (errors[other] is None or errors[named] <= 1.05 * errors[other])
    return pipe.outcome('two_sources', CASES['two_sources'][0], right,
                        f'said: {first_line(run.text, "of the torque sources")}; on another motion '
                        + ', '.join(f'{s} {e:.3g}' if e is not None else f'{s} failed' for s, e in errors.items()),
                        a.effort_limit)


@case('calibration_never_alarms', 'contact thresholds calibrated on runs carrying an undeclared 8 kg tool')
def calibration_never_alarms(folder: Path) -> Outcome:
    """Right when ``dynid contact --calibrate`` names the joints whose alarm level lies above their effort limit
    (no torque the joint holds could raise a contact there), where the level is above it."""
    from dynid.model import Payload

    a = arm('panda')
    pipe = Pipeline(folder, a.urdf)
    _, bag = pipe.import_(write_csv(folder / 'train.csv', a.train))
    run, result = pipe.identify(bag)
    params = PlantParameters.defaults(a.plant, payload=Payload(8.0, (0.1, 0.0, 0.1)), seed=7)
    trajectory = fourier_motion(a.robot, 7, HELD_S)
    twin = DigitalTwin(params, rate_hz=RATE_HZ, seed=7, initial_q=trajectory.evaluate(np.array([0.0]))[0][0])
    twin.follow(trajectory)
    _, heavy = pipe.import_(write_csv(folder / 'heavy.csv', twin.run(HELD_S)))
    saved = folder / 'heavy_calibration.yaml'
    calibrated = pipe('contact', '--params', result, '--robot', a.urdf, '--calibrate', heavy, '--save-calibration',
                      saved, heavy)
    named = sorted(set(re.findall(r'(\w+): its alarm level k·σ₀ \([^)]*\) is above its effort limit', calibrated.text)))
    above = []
    if saved.exists():
        data = yaml.safe_load(saved.read_text())
        for j, joint in enumerate(a.robot.joint_names):
            levels = [data['sigma0_nm'][joint] * data[key][joint]
                      for key in ('threshold_sigma', 'threshold_rest_sigma')]
            above += [joint] if max(levels) > a.robot.effort_limits[j] else []
    right = run.code == 0 and calibrated.code == 0 and bool(above) and named == above
    return pipe.outcome('calibration_never_alarms', CASES['calibration_never_alarms'][0], right,
                        f'levels above the limit: {", ".join(above) or "none"}; named: {", ".join(named) or "none"}',
                        a.effort_limit)


def _follow_time_fix(name: str, folder: Path, a: Arm, train: Path, held: Path, implied_hz: float) -> Outcome:
    """A log whose time column is not in seconds: right when ``dynid import`` refuses it naming the rate its
    velocities imply (within 5 % of ``implied_hz``) and the first fix it prints (a column map's ``time_unit=…`` or
    ``--rate …`` in place of the time column), followed as written on both logs, identifies as the clean log does."""
    pipe = Pipeline(folder, a.urdf)
    refused, _ = pipe.import_(train)
    if refused.code == 0:
        return pipe.outcome(name, CASES[name][0], False, 'imported without a word: ' + (first_line(
            refused.text, r'rows? lie on|resampled') or _last(refused.text)), a.effort_limit)
    rates = [float(v) for v in re.findall(r'(\d+(?:\.\d+)?)\s*Hz', refused.text)]
    if not any(abs(rate - implied_hz) <= 0.05 * implied_hz for rate in rates):
        return pipe.outcome(name, CASES[name][0], False, f'refused without the rate the motion implies '
                            f'({implied_hz:g} Hz): ' + _last(refused.text), a.effort_limit)
    fix = re.search(r"time_unit=(\w+)|--rate\s+(\d+(?:\.\d+)?)", refused.text)
    if fix is None:
        return pipe.outcome(name, CASES[name][0], False, 'refused without a fix: ' + _last(refused.text),
                            a.effort_limit)
    if fix.group(1):
        columns, extra = f'{COLUMNS.split(",", 1)[0]},time_unit={fix.group(1)},{COLUMNS.split(",", 1)[1]}', ()
    else:
        columns, extra = COLUMNS.split(',', 1)[1], ('--rate', fix.group(2))
    outcome = _through(name, folder, a, train, held, columns, import_extra=extra, clean=_clean_fit('panda'))
    outcome.runs[:0] = pipe.runs
    outcome.statement = f'refused ({first_line(refused.text, "Hz") or ""}); the fix {fix.group(0)!r} followed: ' \
                        + outcome.statement
    return outcome


@case('sample_index_time', 'a time column that counts samples (0, 1, 2 …) at 1 kHz')
def sample_index_time(folder: Path) -> Outcome:
    a = arm('panda')
    logs = [write_csv(folder / f'{kind}.csv', record, time_values=np.arange(record.time.size, dtype=float))
            for kind, record in (('train', a.train), ('held', a.held))]
    return _follow_time_fix('sample_index_time', folder, a, *logs, implied_hz=RATE_HZ)


@case('time_in_ms', 'a time column in milliseconds mapped as seconds')
def time_in_ms(folder: Path) -> Outcome:
    a = arm('panda')
    logs = [write_csv(folder / f'{kind}.csv', record, time_values=1e3 * (record.time - record.time[0]))
            for kind, record in (('train', a.train), ('held', a.held))]
    return _follow_time_fix('time_in_ms', folder, a, *logs, implied_hz=RATE_HZ)


_WAY = re.compile(r'(--[\w-]+(?: [^\s;()]+)?) (?:identifies it|keeps this result)')


def held_out_error(pipe: Pipeline, result: Path, held_bag: Path) -> float | None:
    """‖y − ŷ‖/‖y‖ of ``result`` on the held-out bag (``dynid validate --json``'s relative residual), or None."""
    report = pipe.folder / f'{result.stem}_error.json'
    run = pipe('validate', '--params', result, '--json', report, held_bag)
    if run.code != 0 or not report.exists():
        return None
    return json.loads(report.read_text())['recordings'][0]['predictions']['result']['relative_residual']


def _refusal(name: str, folder: Path, seconds: float, rate_hz: float, seed: int, task: bool = False) -> Outcome:
    """Right when the refusal names its ways out and the first, followed as written, predicts other motion (two
    10 s excitations at the same rate, pooled; every way scored on the same rows, filtered as the defaults filter
    them) within 5 % of the best of them. The refused log: a Fourier excitation whose period is its length
    (``task``: :func:`task_motion`)."""
    a = arm('panda')
    motion = task_motion(a.robot, seconds, (), seed=seed) if task else fourier_motion(a.robot, seed, seconds, seconds)
    train, _ = simulate(a.plant, 5, seconds, motion, rate_hz=rate_hz)
    pipe = Pipeline(folder, a.urdf)
    _, bag = pipe.import_(write_csv(folder / 'train.csv', train))
    held_bags = [pipe.import_(write_csv(folder / f'held_{k}.csv', simulate(a.plant, k, HELD_S, rate_hz=rate_hz)[0]))[1]
                 for k in (7, 8)]
    refused, _ = pipe.identify(bag)
    ways = _WAY.findall(refused.text)
    if refused.code == 0 or not ways:
        return pipe.outcome(name, CASES[name][0], False,
                            'not refused' if refused.code == 0 else 'refused without ways out', a.effort_limit)
    filters = {}  # the default filters, derived from the held-out log's rate: the same rows for every way
    errors = {}
    for k, way in enumerate(ways):
        run, result = pipe.identify(bag, *way.split(), name=f'way_{k}')
        errors[way] = common_rows_error(result, filters, a.robot, held_bags) if run.code == 0 else None
    scored = {way: e for way, e in errors.items() if e is not None}
    best = min(scored.values()) if scored else None
    first = errors[ways[0]]
    right = first is not None and first <= 1.05 * best
    statement = (f'ways out as printed: {", ".join(ways)}; on two other motions, pooled: ' + ', '.join(
        f'{way} {"failed" if e is None else f"{e:.3g}"}' for way, e in errors.items()))
    return pipe.outcome(name, CASES[name][0], right, statement, a.effort_limit)


def common_rows_error(result: Path, filters: dict, robot, held_bags: list[Path]) -> float:
    """‖y − ŷ‖/‖y‖ of ``result`` over the held-out bags' rows as ``filters`` make them (the same rows for every way
    out: a higher cut-off's own rows hold more noise, and its error there is not comparable)."""
    loaded = IdentificationResult.load(result)
    loaded = dataclasses.replace(loaded, provenance={**loaded.provenance, 'filters': filters})
    error = energy = 0.0
    for bag in held_bags:
        prediction = predict(loaded, robot, read_bag(bag, robot.joint_names))
        error += float(np.sum((prediction.measured - prediction.predicted) ** 2))
        energy += float(np.sum(prediction.measured ** 2))
    return float(np.sqrt(error / energy))


@case('refusal_ways_out', 'a 2.5 s excitation at 100 Hz the defaults refuse, with two cut-offs as ways out')
def refusal_ways_out(folder: Path) -> Outcome:
    return _refusal('refusal_ways_out', folder, 2.5, 100.0, 8)


@case('refusal_ways_out_b', 'a 2 s excitation at 100 Hz the defaults refuse, two joints never reversing')
def refusal_ways_out_b(folder: Path) -> Outcome:
    return _refusal('refusal_ways_out_b', folder, 2.0, 100.0, 11)


@case('refusal_ways_out_task', 'a 2.5 s task log at 100 Hz the defaults refuse')
def refusal_ways_out_task(folder: Path) -> Outcome:
    return _refusal('refusal_ways_out_task', folder, 2.5, 100.0, 6, task=True)


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--case', action='append', help='run only this case (repeatable)')
    parser.add_argument('--verbose', action='store_true', help="print every command's output")
    args = parser.parse_args(argv)
    outcomes = run_cases(args.case)
    if args.verbose:
        for outcome in outcomes:
            for run in outcome.runs:
                print(f'\n$ dynid {" ".join(run.argv)}  (exit {run.code})\n{run.text}')
    right = sum(o.right for o in outcomes)
    figures = {'benchmark': 'first_try', 'first_try_cases': [o.summary() for o in outcomes],
               'first_try_right': f'{right} of {len(outcomes)}',
               'absurd_figures_printed': sum(len(o.absurd) for o in outcomes)}
    print(json.dumps(figures))
    return figures


if __name__ == '__main__':
    main()
