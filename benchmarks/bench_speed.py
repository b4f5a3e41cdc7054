"""Speed where users wait (issue 15): excitation design and identification, beside the landed paths.

Run: ``.venv/bin/python -m benchmarks.bench_speed [--parts startup,excite,identify,memory] [--landed-src DIR]``.

- **startup**: where every command waits before its work: ``help_s``, the wall time of ``dynid --help`` in a fresh
  process, and ``identify_imports_s``, the imports stage of ``dynid identify`` as the identify part splits it
  (the modules an identification runs, imported in a fresh process before the bag is read), each the median of
  five runs (targets ≤ 0.3 s each on a quiet two-core machine). dynid's modules are byte-compiled first, as an
  installed package's are (a checkout's are on the first run, unless PYTHONDONTWRITEBYTECODE is set).

- **excite**: default UR5e ``dynid excite --optimize`` settings (5 harmonics, 10 s, 4 starts × ≤ 150
  SLSQP iterations, seed 0, no link below the floor at z = 0): analytic gradients, limits on a 60-point grid
  (positions on every second point), SLSQP ftol 3e-5, one process per core (ours) beside the landed
  finite-difference gradients, 120-point grid, ftol 1e-6, one process, in the same run. Targets: ≤ 15 s quiet, ≥ 4×
  the landed, cond(W_b) ≤ 33.
- **identify**: ``dynid identify`` (WLS) and ``--method iirls`` on a 60 s, 1 kHz twin recording of the
  shipped excitation (targets ≤ 3 s and ≤ 20 s), wall and CPU time of a fresh process each; the landed
  CLI is timed on the same bag when ``--landed-src`` names a checkout of it (its ``src``, e.g. ``git
  archive <commit> src | tar -x -C DIR``), else its figures from the issue are printed, and then the
  base parameters of both are compared (largest relative difference, and largest difference in units of
  the parameter's σ: the filters' rounding, not noise, should separate them). The WLS run's stages
  (imports, reading the bag, preparation = filtering + regressor + decimation, solving, writing), CPU
  and wall, in a fresh process each.
  The regressor stage per sample beside pinocchio's bare ``computeJointTorqueRegressor`` loop
  (target ≤ 1.2×).
- **memory**: peak resident memory of ``dynid identify`` on a 10-minute, 1 kHz, 6-joint recording
  (target < 1 GB); the landed CLI's on the same bag where ``--landed-src`` is given.

Timings on a shared machine are noisy: compare ratios measured in one run. The last line is JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pinocchio as pin
import yaml

from dynid.excite.fourier import FourierDesign, default_limits
from dynid.excite.optimize import optimize_excitation
from dynid.excite.settings import ExcitationSettings
from dynid.excite.trajectory import builtin_excitation_path
from dynid.model import load_robot
from dynid.sim.recording import SimulationSettings, simulate_recording
from dynid.sim.twin import home_configuration

# The landed implementation's figures as measured in issue 15 (quiet machine unless noted).
LANDED = {'excite_optimize_s': 56.6, 'identify_60s_s': 4.7, 'iirls_60s_s': 294.0, 'regressor_ratio': 1.35,
          'peak_mb_60s': 830.0}


def part_excite(robot) -> dict:
    home = home_configuration(robot)
    limits = default_limits(robot, home, floor=ExcitationSettings().floor)  # dynid excite's: no link below z = 0
    design = FourierDesign(robot.joint_names, 5, 10.0)
    robot.base  # noqa: B018 — the base parameters are found once, outside the timings
    workers = min(4, os.cpu_count() or 1)
    ours = optimize_excitation(robot, design, home, limits, workers=workers)
    # The landed implementation: finite-difference gradients, one process, limits on a 120-point grid, ftol 1e-6.
    landed = optimize_excitation(robot, design, home, limits, gradient='finite_difference', workers=1,
                                 constraint_samples=120, position_stride=1, tolerance=1e-6)
    return {'excite_optimize_s': ours.wall_time_s, 'excite_cond': ours.condition_number,
            'excite_landed_s': landed.wall_time_s, 'excite_landed_cond': landed.condition_number,
            'excite_speedup': landed.wall_time_s / ours.wall_time_s, 'excite_workers': workers,
            'excite_iterations': ours.iterations, 'excite_landed_iterations': landed.iterations}


def _environment(source: str | None) -> dict:
    environment = dict(os.environ, PYTHONDONTWRITEBYTECODE='1')
    if source is not None:
        environment['PYTHONPATH'] = source
    return environment


def _identify_command(source: str | None, bag: Path, output: Path, *options: str) -> tuple[float, float, float]:
    """(wall time [s], CPU time [s], peak resident memory [MB]) of one ``dynid identify`` in a fresh process,
    from the start of its imports."""
    command = [sys.executable, '-c',
               'import sys, time; start, cpu = time.perf_counter(), time.process_time(); from dynid.cli import main; '
               f'code = main({["identify", str(bag), "-o", str(output), "--quiet", "--force", *options]!r}); '
               # VmHWM: this program's own peak (ru_maxrss would include the parent's size at the fork)
               'peak = next(l for l in open("/proc/self/status") if l.startswith("VmHWM")).split()[1]; '
               'print(time.perf_counter() - start, time.process_time() - cpu, int(peak) / 1024); '
               'sys.exit(code)']
    done = subprocess.run(command, check=True, capture_output=True, text=True, env=_environment(source))
    wall, cpu, peak = done.stdout.split()[-3:]
    return float(wall), float(cpu), float(peak)


#: The imports stage of dynid identify: the modules the WLS run below uses, imported before the bag is read.
_IDENTIFY_IMPORTS = """
try:
    from dynid.identify.equations.request import RecordingInput
    from dynid.identify.steps.run import identify
    import dynid.identify.outputs.report, dynid.identify.validation.validate
except ImportError:  # a landed checkout before identify/'s wings
    try:
        from dynid.identify.request import RecordingInput
    except ImportError:  # before the identification's pipeline
        from dynid.identify.model import RecordingInput
    from dynid.identify.run import identify
    import dynid.identify.report, dynid.identify.validate
from dynid.io.recorder import read_recording
from dynid.model import load_robot
import dynid.cli
"""

# The WLS run of dynid identify in stages, in a fresh process: (label, CPU [s], wall [s]) per stage as JSON.
_STAGES = """
import json, sys, time
marks = [('start', time.process_time(), time.perf_counter())]
def mark(label, *_):
    marks.append((label, time.process_time(), time.perf_counter()))
""" + _IDENTIFY_IMPORTS + """
mark('imports')
robot = load_robot('ur5e')
dataset = read_recording(sys.argv[1], robot.joint_names, None)
mark('reading the bag')
labels = {'preparing': 'start', 'solving': 'preparation', 'done': 'solving'}
result = identify(robot, [RecordingInput(dataset, name=sys.argv[1])],
                  progress=lambda text: mark(labels[text.split()[0]]) if text.split()[0] in labels else None)
result.save(sys.argv[2])
mark('writing the result')
stages = [(b[0], b[1] - a[1], b[2] - a[2]) for a, b in zip(marks, marks[1:]) if b[0] != 'start']
print(json.dumps(stages + [('total', marks[-1][1] - marks[0][1], marks[-1][2] - marks[0][2])]))
"""


def _identify_stages(source: str | None, bag: Path, output: Path) -> list:
    done = subprocess.run([sys.executable, '-c', _STAGES, str(bag), str(output)], check=True, capture_output=True,
                          text=True, env=_environment(source))
    return json.loads(done.stdout.splitlines()[-1])


def _byte_compile(source: str | None) -> None:
    """Byte-compile dynid's modules (of ``source``, else the imported package) as installing them does."""
    import compileall

    import dynid

    folder = Path(source) / 'dynid' if source is not None else Path(dynid.__file__).parent
    compileall.compile_dir(str(folder), quiet=1)


def _fresh_wall(source: str | None, code: str) -> float:
    """Wall time [s] of ``python -c code`` in a fresh process, from its start to its end."""
    start = time.perf_counter()
    subprocess.run([sys.executable, '-c', code], check=True, capture_output=True, env=_environment(source))
    return time.perf_counter() - start


def part_startup(landed_src: str | None) -> dict:
    """``help_s`` and ``identify_imports_s`` (module docstring), medians of five fresh processes each, with the
    interpreter's own start-up (``python -c pass``) beside them; the landed implementation's where given."""
    help_code = 'import sys; from dynid.cli import main; sys.argv = ["dynid", "--help"]; main()'
    results = {}
    for label, source in (('', None), ('_landed', landed_src)):
        if label and source is None:
            continue
        _byte_compile(source)
        for key, code in (('help_s', help_code), ('identify_imports_s', _IDENTIFY_IMPORTS), ('python_s', 'pass')):
            _fresh_wall(source, code)  # once untimed: the files in the page cache
            results[key.replace('_s', f'{label}_s')] = float(np.median([_fresh_wall(source, code) for _ in range(5)]))
    return results


def _recording(robot, folder: Path, seconds: float) -> Path:
    bag = folder / f'rec{seconds:g}'
    path = folder / 'excitation.yaml'
    path.write_text(builtin_excitation_path('ur5e').read_text())
    simulate_recording(robot, bag, str(path), SimulationSettings(duration_s=seconds), quiet=True)
    return bag


def _base_parameters(path: Path) -> np.ndarray:
    """(values, standard deviations) of the base parameters of a result file."""
    return np.array([[p['value'], p['std']] for p in yaml.safe_load(path.read_text())['base_parameters']]).T


def part_identify(robot, folder: Path, landed_src: str | None) -> dict:
    bag = _recording(robot, folder, 60.0)
    results = {}
    for key, options in (('identify_60s', ()), ('iirls_60s', ('--method', 'iirls'))):
        wall, cpu, peak = _identify_command(None, bag, folder / f'{key}.yaml', *options)
        results[f'{key}_s'], results[f'{key}_cpu_s'], results[f'{key}_peak_mb'] = wall, cpu, peak
        if landed_src is not None:
            wall, cpu, peak = _identify_command(landed_src, bag, folder / f'{key}_landed.yaml', *options)
            results[f'{key}_landed_s'], results[f'{key}_landed_cpu_s'] = wall, cpu
            results[f'{key}_landed_peak_mb'] = peak
            (ours, sigma), (landed, _) = (_base_parameters(folder / f'{key}{end}.yaml') for end in ('', '_landed'))
            results[f'{key}_max_relative_difference'] = float(np.max(np.abs(ours - landed) / np.abs(landed)))
            results[f'{key}_max_difference_in_sigma'] = float(np.max(np.abs(ours - landed) / sigma))
    results['identify_stages'] = _identify_stages(None, bag, folder / 'stages.yaml')
    if landed_src is not None:
        results['identify_landed_stages'] = _identify_stages(landed_src, bag, folder / 'stages_landed.yaml')
    samples = 20000
    q, dq, ddq = robot.random_states(samples, seed=1)
    model, data = robot.pinocchio_model, robot.pinocchio_model.createData()
    out = np.empty((samples, robot.n, 10 * robot.n))

    def floor() -> None:  # one bare call per sample into a preallocated output
        for k in range(samples):
            out[k] = pin.computeJointTorqueRegressor(model, data, q[k], dq[k], ddq[k])

    timings = {'ours': [], 'floor': []}
    for _ in range(5):  # interleaved, best of five: the machine is shared
        for label, run in (('ours', lambda: robot.regressor(q, dq, ddq)), ('floor', floor)):
            start = time.perf_counter()
            run()
            timings[label].append((time.perf_counter() - start) / samples * 1e6)
    ours, bare = min(timings['ours']), min(timings['floor'])
    results.update(regressor_us_per_sample=ours, pinocchio_regressor_us_per_sample=bare, regressor_ratio=ours / bare)
    return results


def part_memory(robot, folder: Path, landed_src: str | None) -> dict:
    bag = _recording(robot, folder, 600.0)
    wall, cpu, peak = _identify_command(None, bag, folder / 'rec600.yaml')
    results = {'peak_mb_10min': peak, 'identify_10min_s': wall, 'identify_10min_cpu_s': cpu}
    if landed_src is not None:  # the landed CLI on the same bag, right after
        wall, cpu, peak = _identify_command(landed_src, bag, folder / 'rec600_landed.yaml')
        results.update(peak_mb_10min_landed=peak, identify_10min_landed_s=wall, identify_10min_landed_cpu_s=cpu)
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--parts', default='startup,excite,identify,memory')
    parser.add_argument('--landed-src', default=None,
                        help="the landed implementation's src folder, to time its dynid identify on the same bags")
    args = parser.parse_args()
    parts = set(args.parts.split(','))
    robot = load_robot('ur5e')
    results: dict = {}
    with tempfile.TemporaryDirectory(prefix='speed_') as folder:
        for part, run in (('startup', lambda: part_startup(args.landed_src)),
                          ('excite', lambda: part_excite(robot)),
                          ('identify', lambda: part_identify(robot, Path(folder), args.landed_src)),
                          ('memory', lambda: part_memory(robot, Path(folder), args.landed_src))):
            if part in parts:
                print(f'[bench_speed] {part} ...', file=sys.stderr, flush=True)
                results.update(run())

    def row(label, ours, reference, target):
        text = '—' if ours is None else f'{ours:.3g}'
        print(f'{label:<52} {text:>10} {reference:>16} {target:>12}')

    print(f'dynid speed benchmark (UR5e; {os.cpu_count()} cores; load average {os.getloadavg()[0]:.1f})')
    print(f'{"figure":<52} {"ours":>10} {"landed":>16} {"target":>12}')
    get = results.get
    if 'startup' in parts:
        for key, label in (('help_s', 'dynid --help, fresh process [s]'),
                           ('identify_imports_s', 'dynid identify: imports stage, fresh process [s]')):
            landed = get(key.replace('_s', '_landed_s'))
            row(label, get(key), '' if landed is None else f'{landed:.3g} (this run)', '≤ 0.3')
        row('  python -c pass (the interpreter alone) [s]', get('python_s'), '', '')
    if 'excite' in parts:
        row('excite --optimize, default settings [s]', get('excite_optimize_s'),
            f'{get("excite_landed_s"):.3g} (this run)', '≤ 15')
        row('  speed-up over the landed (same run)', get('excite_speedup'), '', '≥ 4')
        row('  cond(W_b)', get('excite_cond'), f'{get("excite_landed_cond"):.3g}', '≤ 33')
    if 'identify' in parts:
        for key, label, target in (('identify_60s', 'dynid identify (WLS), 60 s at 1 kHz [s]', '≤ 3'),
                                   ('iirls_60s', 'dynid identify --method iirls, 60 s at 1 kHz [s]', '≤ 20')):
            landed = get(f'{key}_landed_s')
            row(label, get(f'{key}_s'),
                f'{landed:.3g} (this run)' if landed is not None else f'{LANDED[f"{key}_s"]:g} (issue)', target)
            landed = get(f'{key}_landed_cpu_s')
            row('  its CPU time [s]', get(f'{key}_cpu_s'), '' if landed is None else f'{landed:.3g} (this run)', '')
        if get('identify_60s_max_relative_difference') is not None:
            print(f'  base parameters equal the landed ones to a relative '
                  f'{get("identify_60s_max_relative_difference"):.1e} (WLS), '
                  f'{get("iirls_60s_max_relative_difference"):.1e} (I-IRLS); to '
                  f'{get("identify_60s_max_difference_in_sigma"):.1e} σ (WLS), '
                  f'{get("iirls_60s_max_difference_in_sigma"):.1e} σ (I-IRLS)')
        landed_stages = dict((label, (cpu, wall)) for label, cpu, wall in get('identify_landed_stages') or [])
        print('  WLS stages, CPU / wall [s] (ours, landed):')
        for label, cpu, wall in get('identify_stages'):
            other = landed_stages.get(label)
            landed = f'    {other[0]:6.2f} / {other[1]:5.2f}' if other else ''
            print(f'    {label:<22} {cpu:6.2f} / {wall:5.2f}{landed}')
        row('regressor stage / bare pinocchio regressor', get('regressor_ratio'),
            f'{LANDED["regressor_ratio"]:g} (issue)', '≤ 1.2')
    if 'memory' in parts:
        landed = get('peak_mb_10min_landed')
        row('peak memory, 10 min at 1 kHz [MB]', get('peak_mb_10min'),
            '~7000 (issue, est.)' if landed is None else f'{landed:.4g} (this run)', '< 1000')
    print(json.dumps({'benchmark': 'speed', **{key: get(key) for key in (
        'help_s', 'identify_imports_s', 'excite_optimize_s', 'excite_speedup', 'excite_cond', 'identify_60s_s',
        'identify_60s_cpu_s', 'iirls_60s_s',
        'regressor_ratio', 'peak_mb_10min')}, 'load_average': os.getloadavg()[0], 'details': results}))


if __name__ == '__main__':
    main()
