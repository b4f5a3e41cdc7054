"""Calibrated checks: the diagnosis (:func:`dynid.diagnosis.diagnose`) on fault-free twin logs and on logs with one
injected fault each, the refusals' ways out, and the generated-input fuzzing.

Run: ``.venv/bin/python -m benchmarks.bench_diagnostics`` (a few minutes on a quiet 2-core machine; ``--quick`` for
a smaller set). Ends with one JSON line ``{"benchmark": "diagnostics", ...}``.

1. **Fault-free logs** (:func:`clean_logs`): twin recordings of several built-in arms (UR3e, UR5e, UR10e, Panda,
   FR3), each of a random Fourier excitation, at 30 Hz to 1 kHz, 8 s or 20 s long, with the joint torque or the motor
   current (compared as K_τ·i), without a payload or with one declared fully (mass and centre of mass) or by its
   mass alone; each diagnosed against its robot file as filed and against copies whose every link is off by 20–40 %
   (a factor 0.6–0.8 or 1.2–1.4 on all its inertial parameters). Any finding is a false warning.
2. **One fault per log** (:func:`faulty_logs`): the same logs with one of: the sign of one, several or all joints;
   the motor current read as joint torque; the motor torque K_τ·i read as joint torque; a torque with the gravity
   removed (a vendor's estimate); one joint's drive gain ×2 in the robot file (current logs); time in ms read as s;
   positions in degrees read as radians; another arm's robot file (UR3e/UR5e/UR10e among themselves, Panda and
   FR3); one link's mass ×3 in the robot file; a payload the user did not declare. A fault is **named** when the
   first finding is of its kind (and names its joints: the flipped ones, the joint of the drive, the link), **named
   wrongly** when a finding claims something else, and not named when there is no finding. Another arm's file is
   named by a finding that the file does not belong ('robot_file') or that one of its links is far off ('link': true
   of another arm's file, where the data show one link beyond what a file off by tens of percent gives); one drive
   said instead is a wrong claim. ``faults_named_strict`` counts only the first as naming it.
3. **Refusals** (:func:`refusal_ways_out`): the logs a user meets refusals on (:data:`REFUSAL_LOGS`: short logs
   at 30–250 Hz, weakly exciting ones at 3–10 % of the joint limits' motion, logs with one or two joints that do
   not move) identified with the defaults; each refusal met names its ways out, each way out is run as written and
   must succeed.
4. **Fuzzing**: ``benchmarks/diagnostics_fuzz.py``'s ``run_fuzz`` where it is present (else null).
5. **Public data** (:func:`public_lbr_med7`, ``--lbr PATH`` or ``DYNID_LBR_DATA``): the KUKA LBR Med 7 log of
   lbr-stack/dynamic_parameter_identification (``src/test/measurements.csv``, 100 Hz, no time column, the
   authors' robot file ``urdf/med/med7dock.urdf``). Get it with ``git clone
   https://github.com/lbr-stack/dynamic_parameter_identification`` and give the clone's folder. ``dynid import``
   with what reading it needs (its columns, the rate, the robot file), ``dynid identify`` with the defaults, then
   again with the advice of its warnings as written; each warning line is reported, and the sign the diagnosis
   gives each joint is checked against the dataset's own: the logged torque correlates negatively with the
   authors' robot file's inverse dynamics on every joint (their sign convention, −1 on all seven), so a joint read
   as +1 or an advice that leaves a joint unflipped contradicts the data's authors. Without the path the section
   is reported as skipped. Nothing fetched is kept. Then the public datasets of ``public_datasets.py`` that are
   given (``--unisa``, ``--figaroh``, ``--flobaroid``, ``--dynamic-calibration``; how to get each is in its
   docstring), identified with the defaults, and their results' warnings judged against what their authors
   document (``public_diagnosis.py``).

Python warnings (numpy's, scipy's, …) that would reach the terminal from any part (under the interpreter's warning
filters, ``-W`` included) are recorded instead, listed after the parts and counted (``library_warnings_printed``; the
``dynid`` command drops library warnings itself).
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import io
import json
import os
import re
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

from dynid.diagnosis import DiagnosisSettings, Recording, diagnose
from dynid.excite.fourier import FourierDesign, default_limits, random_design
from dynid.excite.home import home_configuration
from dynid.model import Payload, load_robot
from dynid.sim.parameters import PlantParameters
from dynid.sim.recording import record_to_dataset
from dynid.sim.twin import DigitalTwin, trajectory_start

ROBOTS = ('ur5e', 'panda', 'ur10e', 'fr3', 'ur3e')
OTHER_ARM = {'ur5e': 'ur10e', 'ur10e': 'ur3e', 'ur3e': 'ur5e', 'panda': 'fr3', 'fr3': 'panda'}
RATES_HZ = (30.0, 50.0, 100.0, 125.0, 250.0, 500.0, 1000.0)
FAULTS = ('sign_one', 'sign_several', 'sign_all', 'current_as_torque', 'motor_torque', 'gravity_removed',
          'drive_gain_x2', 'time_ms', 'degrees', 'other_arm_file', 'link_mass_x3', 'undeclared_payload')
KIND = {'sign_one': 'sign', 'sign_several': 'sign', 'sign_all': 'sign', 'current_as_torque': 'meaning',
        'motor_torque': 'meaning', 'gravity_removed': 'meaning', 'drive_gain_x2': 'drive', 'time_ms': 'time',
        'degrees': 'positions', 'other_arm_file': ('robot_file', 'link'), 'link_mass_x3': 'link',
        'undeclared_payload': 'payload'}
#: what the strict count takes as naming a fault where it differs: another arm's file only by a finding that the
#: file does not belong (a link of the file far off is true of another arm's file, but not the whole of it)
STRICT = {'other_arm_file': ('robot_file',)}
MEANING_WORD = {'current_as_torque': 'motor current', 'motor_torque': 'motor torque',
                'gravity_removed': 'gravity removed'}
TARGET_FALSE_PER_100, TARGET_NAMED = 1.0, 0.95


@dataclasses.dataclass
class Log:
    robot: str
    rate_hz: float
    seconds: float
    signal: str  # 'torque' or 'current'
    payload: str  # 'none', 'full', 'mass'
    dataset: object
    seed: int


def _simulate(robot, seconds: float, rate: float, seed: int, payload: Payload | None, amplitude: float = 1.0,
              still: tuple[int, ...] = ()):
    """A twin recording of a random 10 s Fourier excitation (one period; a longer recording holds its last pose after
    it, at rest: a 20 s log is half rest), as the sensors give it; ``amplitude``
    scales every joint's motion about its offset (a weakly exciting log below 1), the joints ``still`` (indices)
    are held at their offset."""
    home = home_configuration(robot)
    design = FourierDesign(robot.joint_names, 5, 10.0)
    dense = np.linspace(0.0, 10.0, 2000, endpoint=False)
    x = random_design(design, home, default_limits(robot, home), np.random.default_rng(seed), dense)
    x = x.reshape(robot.n, -1).copy()
    x[:, 1:] *= amplitude
    x[list(still), 1:] = 0.0
    trajectory = design.trajectory(x.reshape(-1))
    params = PlantParameters.of_twin(robot, payload, 0.0, seed, 25.0)
    twin = DigitalTwin(params, rate_hz=rate, seed=seed, initial_q=trajectory_start(trajectory, robot.joint_names))
    twin.follow(trajectory, start_time=0.0)
    return record_to_dataset(twin.run(seconds), payload, {'simulation': 'bench_diagnostics'})


def base_logs(count: int, seed: int = 0) -> list[Log]:
    """``count`` twin logs across robots, rates, lengths, signals and payloads (module docstring)."""
    rng = np.random.default_rng(seed)
    logs = []
    for k in range(count):
        name = ROBOTS[k % len(ROBOTS)]
        robot = load_robot(name)
        rate = float(RATES_HZ[rng.integers(len(RATES_HZ))])
        seconds = 8.0 if k % 2 == 0 else 20.0
        payload_kind = ('none', 'full', 'mass')[k % 3]
        payload = None if payload_kind == 'none' else Payload(float(rng.uniform(0.5, 3.0)),
                                                              tuple(rng.uniform([-0.05, -0.05, 0.02],
                                                                                [0.05, 0.05, 0.1])))
        dataset = _simulate(robot, seconds, rate, 100 + k, payload)
        signal = 'current' if (k // len(ROBOTS)) % 2 else 'torque'
        logs.append(Log(name, rate, seconds, signal, payload_kind, dataset, 100 + k))
    return logs


def perturbed(robot, rng) -> object:
    """``robot`` with every link's inertial parameters scaled by a factor 0.6–0.8 or 1.2–1.4."""
    factors = rng.uniform(1.2, 1.4, robot.n) ** rng.choice([-1.0, 1.0], robot.n)
    factors = np.where(factors < 1, 2.0 - 1.0 / factors, factors)  # 1/1.2..1/1.4 → 0.6–0.8 symmetric in percent
    return robot.with_parameters(robot.standard_parameters * np.repeat(factors, 10)).with_drives(robot.drives)


def _recording(log: Log, dataset, declared: bool = True) -> Recording:
    """The recording as a user gives it: the signal, the payload declared (fully or by mass) or not."""
    if log.signal == 'current':
        dataset = dataclasses.replace(dataset, tau=None)
    payload = dataset.payload
    dataset = dataclasses.replace(dataset, payload=None)
    if payload is None or not declared:
        return Recording(dataset, None, 'log')
    if log.payload == 'mass':
        return Recording(dataset, None, 'log', float(payload.mass))
    return Recording(dataset, payload, 'log')


def clean_logs(logs: list[Log], files_per_log: int, settings: DiagnosisSettings, rng) -> dict:
    """Part 1 (module docstring)."""
    cases, false, lines = 0, 0, []
    for log in logs:
        robot = load_robot(log.robot)
        files = [robot] + [perturbed(robot, rng) for _ in range(files_per_log - 1)]
        for index, file in enumerate(files):
            diagnosis = diagnose([_recording(log, log.dataset)], file, settings=settings)
            cases += 1
            if diagnosis.findings:
                false += 1
                lines.append(f'{log.robot} {log.rate_hz:g} Hz {log.seconds:g} s {log.signal} payload {log.payload} '
                             f'file {index}: {diagnosis.warnings()[0][:240]}')
    return {'logs': cases, 'false': false, 'lines': lines}


def _inject(fault: str, log: Log, robot, rng):
    """(the recording, the robot file, the expected joints or None) of ``log`` with ``fault``."""
    dataset = log.dataset
    names = list(robot.joint_names)
    gains = np.asarray(robot.drives.drive_gain, float)
    expected = None
    declared = True
    if fault.startswith('sign_'):
        count = {'sign_one': 1, 'sign_several': int(rng.integers(2, robot.n)), 'sign_all': robot.n}[fault]
        flipped = np.sort(rng.choice(robot.n, count, replace=False))
        sign = np.ones(robot.n)
        sign[flipped] = -1.0
        signal = 'current' if log.signal == 'current' else 'tau'
        dataset = dataclasses.replace(dataset, **{signal: getattr(dataset, signal) * sign})
        expected = [names[j] for j in flipped]
    elif fault == 'current_as_torque':
        dataset = dataclasses.replace(dataset, tau=dataset.current, current=None)
    elif fault == 'motor_torque':
        dataset = dataclasses.replace(dataset, tau=dataset.current * gains, current=None)
    elif fault == 'gravity_removed':
        zeros = np.zeros_like(dataset.q)
        truth = robot.inverse_dynamics(dataset.q, zeros, zeros, dataset.payload)
        dataset = dataclasses.replace(dataset, tau=dataset.tau - truth)
    elif fault == 'drive_gain_x2':
        j = int(rng.integers(robot.n))
        wrong = gains.copy()
        wrong[j] *= 2.0
        robot = robot.with_drives(dataclasses.replace(robot.drives, drive_gain=wrong))
        expected = [names[j]]
    elif fault == 'time_ms':
        dataset = dataclasses.replace(dataset, t=dataset.t * 1000.0)
    elif fault == 'degrees':
        dataset = dataclasses.replace(dataset, q=np.degrees(dataset.q), dq=np.degrees(dataset.dq))
    elif fault == 'other_arm_file':
        other = load_robot(OTHER_ARM[log.robot])
        robot = other.renamed(dict(zip(other.joint_names, robot.joint_names, strict=True)))
    elif fault == 'link_mass_x3':
        j = int(rng.integers(1, robot.n))
        factors = np.ones(robot.n)
        factors[j] = 3.0
        robot = robot.with_parameters(robot.standard_parameters * np.repeat(factors, 10)).with_drives(robot.drives)
        expected = [names[j]]
    elif fault == 'undeclared_payload':
        declared = False
    return _recording(log, dataset, declared), robot, expected


def _applies(fault: str, log: Log) -> bool:
    if fault in ('current_as_torque', 'motor_torque', 'gravity_removed'):
        return log.signal == 'torque'
    if fault == 'drive_gain_x2':
        return log.signal == 'current'
    if fault == 'undeclared_payload':
        return log.payload != 'none'
    return True


def _named(fault: str, diagnosis, expected, strict: bool = False) -> bool:
    """Whether the first finding of ``diagnosis`` names ``fault`` right (module docstring; ``strict``: only the
    kinds of :data:`STRICT` where it has the fault). A sign finding is right
    where it claims only flipped joints and every flipped joint it leaves out is one the data cannot decide (said
    'not decided'); a joint it claims that is not flipped, or a flipped one read as +1, is a wrong claim."""
    finding = diagnosis.findings[0]
    kinds = KIND[fault]
    kinds = STRICT.get(fault, kinds) if strict else kinds
    kinds = kinds if isinstance(kinds, tuple) else (kinds,)
    if finding.kind not in kinds:
        return False
    if fault in MEANING_WORD:
        return MEANING_WORD[fault] in finding.text
    if fault.startswith('sign_'):
        claimed = set(finding.joints)
        return claimed <= set(expected) and all(name in claimed or diagnosis.joints[name].sign == 0
                                                for name in expected)
    if fault in ('drive_gain_x2', 'link_mass_x3'):
        return set(finding.joints) == set(expected)
    return True


def faulty_logs(logs: list[Log], settings: DiagnosisSettings, rng, per_log: int) -> dict:
    """Part 2 (module docstring)."""
    rows = {fault: {'injected': 0, 'named': 0, 'named_strict': 0, 'misnamed': 0, 'missed': []} for fault in FAULTS}
    wrong = []
    for i, log in enumerate(logs):
        applicable = [f for f in FAULTS if _applies(f, log)]
        for k in range(per_log):
            fault = applicable[(i * per_log + k) % len(applicable)]
            recording, file, expected = _inject(fault, log, load_robot(log.robot), rng)
            diagnosis = diagnose([recording], file, settings=settings)
            row = rows[fault]
            row['injected'] += 1
            if not diagnosis.findings:
                row['missed'].append(f'{log.robot} {log.rate_hz:g} Hz {log.signal} {expected or ""}')
                continue
            row['named_strict'] += _named(fault, diagnosis, expected, strict=True)
            if _named(fault, diagnosis, expected):
                row['named'] += 1
            else:
                row['misnamed'] += 1
                wrong.append(f'{fault} {expected or ""} on {log.robot} {log.rate_hz:g} Hz {log.signal} payload '
                             f'{log.payload}: {diagnosis.warnings()[0][:260]}')
    return {'rows': rows, 'wrong': wrong}


#: (robot, seconds, rate [Hz], amplitude, joints held still, what a user meets): the refusals a user meets with
#: the defaults: short logs (few equations for the parameters), weakly exciting ones (a motion at a few percent
#: of the joint limits), a joint that does not move; a log the defaults identify counts as no refusal met
REFUSAL_LOGS = (('panda', 5.0, 100.0, 1.0, (), 'short'), ('ur3e', 3.0, 30.0, 1.0, (), 'short, few rows'),
                ('panda', 10.0, 100.0, 1.0, (6,), 'the last joint still'),
                ('ur5e', 2.0, 30.0, 1.0, (), 'too few rows for WLS'), ('panda', 1.5, 100.0, 1.0, (), 'very short'),
                ('ur10e', 8.0, 250.0, 0.03, (), 'weakly exciting (3 %)'),
                ('panda', 3.0, 100.0, 1.0, (), 'short'), ('ur5e', 6.0, 100.0, 1.0, (), 'short'),
                ('ur10e', 6.0, 50.0, 1.0, (), 'short'), ('fr3', 4.0, 250.0, 1.0, (), 'short'),
                ('ur3e', 5.0, 30.0, 1.0, (), 'short'), ('ur5e', 8.0, 100.0, 0.1, (), 'weakly exciting (10 %)'),
                ('fr3', 6.0, 500.0, 0.05, (), 'weakly exciting (5 %)'),
                ('fr3', 20.0, 100.0, 1.0, (0,), 'the first joint still'),
                ('ur5e', 10.0, 125.0, 1.0, (1, 5), 'two joints still'))


def _dynid(argv: list[str], stdout: bool = False) -> tuple[int, str]:
    """``dynid argv``: (exit code, stderr; with ``stdout``, stdout and stderr: the warnings go to either)."""
    from dynid.cli import main as dynid

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = dynid(argv)
    return code, (out.getvalue() + err.getvalue()) if stdout else err.getvalue()


def _named_way(error: str) -> str:
    """The option a refusal names as its way out, as written: a setting that identifies the data (``--decimation-cutoff
    X identifies it``) or the joints to leave out (``--exclude-joint J,…``); '' where it names none."""
    match = re.search(r'(--[a-z-]+ [0-9.]+) identifies it', error) or re.search(r'(--exclude-joint [\w,]+)', error)
    return match.group(1) if match else ''


def refusal_ways_out(folder: Path, quick: bool) -> dict:
    """Part 3 (module docstring): twin logs a user meets refusals on (:data:`REFUSAL_LOGS`), identified with the
    defaults (joint torque only, as a driver gives it). Each refusal met is followed as written: the setting it
    names as identifying the data (``--decimation-cutoff X identifies it``) or the option it gives for joints that
    do not move (``--exclude-joint J,…``), run as written; or, where it names neither, its other way out: a longer
    recording (three times as long, the same excitation), identified with the defaults, and where that is refused
    in turn with a setting named, with that setting as written (a user follows each refusal; the way out counts as
    working only where the last command succeeds)."""
    from dynid.io.bag import write_bag

    rows = []
    for name, seconds, rate, amplitude, still, what in REFUSAL_LOGS[:5] if quick else REFUSAL_LOGS:
        robot = load_robot(name)
        label = f'{name} {seconds:g} s at {rate:g} Hz, {what}'

        def bag(length: float, tag: str, name=name, robot=robot, rate=rate, amplitude=amplitude,
                still=still) -> Path:
            data = _simulate(robot, length, rate, 11, None, amplitude, still)
            return write_bag(folder / f'{name}_{tag}_{rate:g}_{amplitude:g}_{len(still)}', dataclasses.replace(
                data, current=None, theta=None, dtheta=None, temperature=None, source={}))

        short = bag(seconds, f'{seconds:g}s')
        code, err = _dynid(['identify', str(short), '--robot', name, '-o', str(folder / f'{short.name}.yaml'),
                            '--quiet'])
        if code == 0:
            rows.append({'log': label, 'refused': False})
            continue
        way = _named_way(err)
        if way:
            worked, after = _dynid(['identify', str(short), '--robot', name, *way.split(), '-o',
                                    str(folder / f'{short.name}_w.yaml'), '--quiet'])
        else:
            way = 'a longer recording (3×)'
            longer = bag(3 * seconds, f'{3 * seconds:g}s')
            argv = ['identify', str(longer), '--robot', name, '-o', str(folder / f'{longer.name}.yaml'), '--quiet']
            worked, after = _dynid(argv)
            then = _named_way(after) if worked else ''
            if then:  # the longer recording's own refusal, followed as written (a user follows each refusal)
                way += f', then {then} as its refusal says'
                worked, after = _dynid([*argv[:-3], *then.split(), *argv[-3:]])
        rows.append({'log': label, 'refused': True, 'refusal': err.strip(), 'way_out': way, 'worked': worked == 0,
                     'after': after.strip()})
    met = [r for r in rows if r['refused']]
    return {'rows': rows, 'working': sum(r['worked'] for r in met), 'total': len(met)}


def _warnings(stderr: str) -> list[str]:
    return [line[len('warning: '):] for line in stderr.splitlines() if line.startswith('warning: ')]


def public_lbr_med7(folder: Path, clone: Path | None) -> dict:
    """Part 5 (module docstring): {'status', 'warnings', 'signs', 'contradicted', ...}."""
    if clone is None:
        return {'status': 'skipped', 'reason': 'no --lbr PATH or DYNID_LBR_DATA (git clone '
                'https://github.com/lbr-stack/dynamic_parameter_identification)'}
    source, urdf = clone / 'src' / 'test' / 'measurements.csv', clone / 'urdf' / 'med' / 'med7dock.urdf'
    for path in (source, urdf):
        if not path.is_file():
            raise SystemExit(f'bench_diagnostics: {path} does not exist: give the clone of '
                             'lbr-stack/dynamic_parameter_identification (--lbr)')
    from dynid.identify.result.result import IdentificationResult

    bag = folder / 'lbr_med7'
    code, err = _dynid(['import', str(source), '--columns', 'q=q_{i},tau=tau_{i}', '--rate', '100', '--robot',
                        str(urdf), '-o', str(bag)])
    if code != 0:
        return {'status': 'import failed', 'stderr': err.strip()[-400:]}
    runs = {}
    argv = ['identify', str(bag), '--robot', str(urdf), '-o', str(folder / 'defaults.yaml')]
    code, err = _dynid(argv, stdout=True)
    runs['defaults'] = {'exit': code, 'warnings': _warnings(err)}
    if code != 0:
        runs['defaults']['stderr'] = err.strip()[-400:]
        return {'status': 'identify refused', 'runs': runs}
    diagnosis = IdentificationResult.load(folder / 'defaults.yaml').diagnosis_section or {}
    signs = {name: joint.get('sign') for name, joint in (diagnosis.get('joints') or {}).items()}
    advice = [f.get('advice', '') for f in diagnosis.get('findings') or [] if f.get('kind') == 'sign']
    match = re.search(r'(--torque-sign \S+)', advice[0]) if advice else None
    advised = match.group(1).split()[1] if match else ''
    # the authors' convention: τ logged with the opposite sign of the file's torque on every joint (module docstring)
    contradicted = [name for name, sign in signs.items() if sign == 1]
    if advice and advised != 'all=-1':
        contradicted += [name for name in signs if f'{name}=-1' not in advised]
    if match:
        code, err = _dynid([*argv[:-2], *match.group(1).split(), '-o', str(folder / 'advised.yaml')], stdout=True)
        runs['advised'] = {'argv': match.group(1), 'exit': code, 'warnings': _warnings(err)}
    return {'status': 'ok', 'runs': runs, 'signs': signs, 'advice': advised,
            'contradicted_by_authors': sorted(set(contradicted))}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--quick', action='store_true', help='a smaller set (20 logs) for development')
    parser.add_argument('--seed', type=int, default=0)
    parser.add_argument('--lbr', default=os.environ.get('DYNID_LBR_DATA'),
                        help='clone of lbr-stack/dynamic_parameter_identification (default $DYNID_LBR_DATA)')
    parser.add_argument('--public-only', action='store_true', help='only part 5 (the public data)')
    parser.add_argument('--no-fuzz', action='store_true', help='leave part 4 out (its figures null)')
    from benchmarks import public_datasets  # noqa: PLC0415

    public_datasets.add_arguments(parser)  # --unisa, --figaroh, --flobaroid, --dynamic-calibration (part 5)
    args = parser.parse_args(argv)
    # what would reach a terminal, counted and said at the end: recorded under the interpreter's own filters (with
    # 'default' for every warning this counted a DeprecationWarning Python does not print, lark's import of sre_parse
    # under rosidl_parser, raised in the library, not in __main__)
    with warnings.catch_warnings(record=True) as caught:
        figures = _run(args)
    library = sorted({f'{w.category.__name__}: {str(w.message)[:160]} [{Path(w.filename).name}:{w.lineno}]'
                      for w in caught})
    for line in library:
        print(f'library warning: {line}')
    print(json.dumps({**figures, 'library_warnings_printed': len(library)}))
    return 0


def _run(args) -> dict:
    """The benchmark's parts (module docstring); the JSON line's figures."""
    if args.public_only:
        with tempfile.TemporaryDirectory() as scratch:
            public = public_parts(Path(scratch), args)
        _print_public(public)
        return {'benchmark': 'diagnostics', 'public': {name: _public_summary(part) for name, part in public.items()}}
    start = time.perf_counter()
    settings = DiagnosisSettings()
    rng = np.random.default_rng(args.seed)
    count, files, per_log = (20, 2, 1) if args.quick else (60, 4, 4)
    logs = base_logs(count, args.seed)
    print(f'{len(logs)} twin logs simulated ({time.perf_counter() - start:.0f} s)')
    clean = clean_logs(logs, files, settings, rng)
    rate = 100.0 * clean['false'] / max(1, clean['logs'])
    print(f'1. fault-free: {clean["false"]} false warnings on {clean["logs"]} logs ({rate:.2f} per 100; target '
          f'≤ {TARGET_FALSE_PER_100:g})')
    for line in clean['lines']:
        print(f'     {line}')
    faults = faulty_logs(logs, settings, rng, per_log)
    injected = sum(r['injected'] for r in faults['rows'].values())
    named = sum(r['named'] for r in faults['rows'].values())
    misnamed = sum(r['misnamed'] for r in faults['rows'].values())
    strict = sum(r['named_strict'] for r in faults['rows'].values())
    print(f'2. one fault per log: {named} of {injected} named right ({100 * named / max(1, injected):.1f} %; target '
          f'≥ {100 * TARGET_NAMED:g} %), {misnamed} named wrongly (target 0); strictly (another arm\'s file only by a '
          f'finding that the file does not belong): {strict} named right')
    for fault, row in faults['rows'].items():
        print(f'   {fault:<20} {row["named"]:>3} of {row["injected"]:>3} named, {row["misnamed"]} wrongly, '
              f'{len(row["missed"])} not named')
        for line in row['missed'][:4]:
            print(f'       not named: {line}')
    for line in faults['wrong']:
        print(f'     wrongly: {line}')
    with tempfile.TemporaryDirectory() as scratch:
        refusals = refusal_ways_out(Path(scratch), args.quick)
    print(f'3. refusals: {refusals["total"]} met, the way out each names worked on {refusals["working"]}')
    for row in refusals['rows']:
        if not row['refused']:
            print(f'   {row["log"]}: identified with the defaults')
            continue
        print(f'   {row["log"]}: refused: …{row["refusal"][-220:]}')
        print(f'     way out: {row["way_out"]}: {"worked" if row["worked"] else "FAILED: " + row["after"][-200:]}')
    try:
        if args.no_fuzz:
            raise ImportError('--no-fuzz')
        from benchmarks.diagnostics_fuzz import run_fuzz  # noqa: PLC0415 - another helper's module, where present
        fuzz = run_fuzz(200 if args.quick else 2000, args.seed)
    except ImportError:
        fuzz = {'fuzz_cases': None, 'fuzz_tracebacks': None, 'partial_outputs': None}
    with tempfile.TemporaryDirectory() as scratch:
        public = public_parts(Path(scratch), args)
    _print_public(public)
    print(f'({time.perf_counter() - start:.0f} s)')
    return {'benchmark': 'diagnostics', 'clean_logs': clean['logs'], 'false_warnings_per_100_logs': round(rate, 3),
            'faults_injected': injected, 'faults_named': named, 'faults_misnamed': misnamed,
            'faults_named_strict': strict,
            'refusal_ways_out_working': f'{refusals["working"]}_of_{refusals["total"]}', **fuzz,
            'public': {name: _public_summary(part) for name, part in public.items()}}


def public_parts(folder: Path, args) -> dict:
    """Part 5 (module docstring): the LBR Med 7 log, then the public datasets of public_datasets.py that are
    given, their results' warnings judged against their authors (public_diagnosis.py)."""
    from benchmarks import (
        public_datasets,  # noqa: PLC0415
        public_diagnosis,  # noqa: PLC0415
    )

    public = {'lbr_med7': public_lbr_med7(folder, Path(args.lbr) if args.lbr else None)}
    given = public_datasets.run(args, folder)
    judged = public_diagnosis.judge_all(folder, given)
    for entry, figures in given.items():
        public[entry] = ({'status': 'ok', **judged[entry]} if entry in judged
                         else {'status': figures.get('status', 'no result')})
    return public


def _public_summary(part: dict) -> dict:
    """The JSON line's figures of one public dataset."""
    if 'contradicted_by_authors' in part and 'runs' not in part:  # judged by public_diagnosis
        return {'status': 'ok', 'warnings': part['warnings'],
                'contradicted_by_authors': len(part['contradicted_by_authors'])}
    if part.get('status') != 'ok':
        return {'status': part.get('status')}
    runs = part['runs']
    return {'status': 'ok', 'identify_defaults_exit': runs['defaults']['exit'],
            'warnings_defaults': len(runs['defaults']['warnings']), 'advice': part['advice'],
            'identify_advised_exit': runs.get('advised', {}).get('exit'),
            'warnings_advised': len(runs.get('advised', {}).get('warnings', [])),
            'contradicted_by_authors': len(part['contradicted_by_authors'])}


def _print_public(public: dict) -> None:
    for name, part in public.items():
        if 'contradicted_by_authors' in part and 'runs' not in part:
            print(f'5. {name}: {part["warnings"]} warnings, findings {part["findings"] or "none"}; contradicted by '
                  f'the authors: {part["contradicted_by_authors"] or "none"}; about the robot file: '
                  f'{part["about_the_robot_file"] or "none"}')
            continue
        print(f'5. {name}: {part.get("status")}' + (f' ({part["reason"]})' if 'reason' in part else ''))
        for label, run in part.get('runs', {}).items():
            print(f'   identify, {label} {run.get("argv", "")}: exit {run["exit"]}, {len(run["warnings"])} warnings')
            for line in run['warnings']:
                print(f'     warning: {line[:300]}')
        if part.get('status') == 'ok':
            print(f'   signs by the diagnosis: {part["signs"]}; advice {part["advice"] or "none"}; contradicted by '
                  f'the authors\' convention (−1 on every joint): {part["contradicted_by_authors"] or "none"}')


if __name__ == '__main__':
    sys.exit(main())
