"""Speed where users wait (issue 15): excitation design and identification, beside the landed paths.

Run: ``.venv/bin/python benchmarks/bench_speed.py [--parts excite,identify,memory] [--landed-src DIR]``.

- **excite**: default UR5e ``dynid excite --optimize`` settings (5 harmonics, 10 s, 4 starts × ≤ 150
  SLSQP iterations, seed 0): analytic gradients, limits on a 60-point grid (positions on every
  second point), SLSQP ftol 3e-5, one process per core (ours) beside the landed finite-difference
  gradients, 120-point grid, ftol 1e-6, one process, in the same run. Targets: ≤ 15 s quiet, ≥ 4×
  the landed, cond(W_b) ≤ 33.
- **identify**: ``dynid identify`` (WLS) and ``--method iirls`` on a 60 s, 1 kHz twin recording of the
  shipped excitation (targets ≤ 3 s and ≤ 20 s); the landed CLI is timed on the same bag when
  ``--landed-src`` names a checkout of it (its ``src``, e.g. ``git archive <commit> src | tar -x -C
  DIR``), else its figures from the issue are printed.
  The regressor stage per sample beside pinocchio's bare ``computeJointTorqueRegressor`` loop
  (target ≤ 1.2×).
- **memory**: peak resident memory of ``dynid identify`` on a 10-minute, 1 kHz, 6-joint recording
  (target < 1 GB).

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
from dynid.excite.trajectory import builtin_excitation_path
from dynid.model import load_robot
from dynid.sim.recording import SimulationSettings, simulate_recording
from dynid.sim.twin import home_configuration

# The landed implementation's figures as measured in issue 15 (quiet machine unless noted).
LANDED = {'excite_optimize_s': 56.6, 'identify_60s_s': 4.7, 'iirls_60s_s': 294.0, 'regressor_ratio': 1.35,
          'peak_mb_60s': 830.0}


def part_excite(robot) -> dict:
    home = home_configuration(robot)
    limits = default_limits(robot, home)
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


def _identify_command(source: str | None, bag: Path, output: Path, *options: str) -> tuple[float, float]:
    """(wall time [s], peak resident memory [MB]) of one ``dynid identify`` in a fresh process."""
    environment = dict(os.environ, PYTHONDONTWRITEBYTECODE='1')
    if source is not None:
        environment['PYTHONPATH'] = source
    command = [sys.executable, '-c',
               'import sys, time; from dynid.cli import main; start = time.perf_counter(); '
               f'code = main({["identify", str(bag), "-o", str(output), "--quiet", "--force", *options]!r}); '
               # VmHWM: this program's own peak (ru_maxrss would include the parent's size at the fork)
               'peak = next(l for l in open("/proc/self/status") if l.startswith("VmHWM")).split()[1]; '
               'print(time.perf_counter() - start, int(peak) / 1024); '
               'sys.exit(code)']
    done = subprocess.run(command, check=True, capture_output=True, text=True, env=environment)
    wall, peak = done.stdout.split()[-2:]
    return float(wall), float(peak)


def _recording(robot, folder: Path, seconds: float) -> Path:
    bag = folder / f'rec{seconds:g}'
    path = folder / 'excitation.yaml'
    path.write_text(builtin_excitation_path('ur5e').read_text())
    simulate_recording(robot, bag, str(path), SimulationSettings(duration_s=seconds), quiet=True)
    return bag


def part_identify(robot, folder: Path, landed_src: str | None) -> dict:
    bag = _recording(robot, folder, 60.0)
    results = {}
    for key, options in (('identify_60s', ()), ('iirls_60s', ('--method', 'iirls'))):
        wall, peak = _identify_command(None, bag, folder / f'{key}.yaml', *options)
        results[f'{key}_s'], results[f'{key}_peak_mb'] = wall, peak
        if landed_src is not None:
            wall, peak = _identify_command(landed_src, bag, folder / f'{key}_landed.yaml', *options)
            results[f'{key}_landed_s'], results[f'{key}_landed_peak_mb'] = wall, peak
            ours, landed = (np.array([p['value'] for p in yaml.safe_load(path.read_text())['base_parameters']])
                            for path in (folder / f'{key}.yaml', folder / f'{key}_landed.yaml'))
            results[f'{key}_max_relative_difference'] = float(np.max(np.abs(ours - landed) / np.abs(landed)))
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


def part_memory(robot, folder: Path) -> dict:
    bag = _recording(robot, folder, 600.0)
    wall, peak = _identify_command(None, bag, folder / 'rec600.yaml')
    return {'peak_mb_10min': peak, 'identify_10min_s': wall}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--parts', default='excite,identify,memory')
    parser.add_argument('--landed-src', default=None,
                        help="the landed implementation's src folder, to time its dynid identify on the same bags")
    args = parser.parse_args()
    parts = set(args.parts.split(','))
    robot = load_robot('ur5e')
    results: dict = {}
    with tempfile.TemporaryDirectory(prefix='speed_') as folder:
        for part, run in (('excite', lambda: part_excite(robot)),
                          ('identify', lambda: part_identify(robot, Path(folder), args.landed_src)),
                          ('memory', lambda: part_memory(robot, Path(folder)))):
            if part in parts:
                print(f'[bench_speed] {part} ...', file=sys.stderr, flush=True)
                results.update(run())

    def row(label, ours, reference, target):
        text = '—' if ours is None else f'{ours:.3g}'
        print(f'{label:<52} {text:>10} {reference:>16} {target:>12}')

    print(f'dynid speed benchmark (UR5e; {os.cpu_count()} cores; load average {os.getloadavg()[0]:.1f})')
    print(f'{"figure":<52} {"ours":>10} {"landed":>16} {"target":>12}')
    get = results.get
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
        if get('identify_60s_max_relative_difference') is not None:
            print(f'  base parameters equal the landed ones to a relative '
                  f'{get("identify_60s_max_relative_difference"):.1e} (WLS), '
                  f'{get("iirls_60s_max_relative_difference"):.1e} (I-IRLS)')
        row('regressor stage / bare pinocchio regressor', get('regressor_ratio'),
            f'{LANDED["regressor_ratio"]:g} (issue)', '≤ 1.2')
    if 'memory' in parts:
        row('peak memory, 10 min at 1 kHz [MB]', get('peak_mb_10min'),
            '~7000 (issue, est.)', '< 1000')
    print(json.dumps({'benchmark': 'speed', **{key: get(key) for key in (
        'excite_optimize_s', 'excite_speedup', 'excite_cond', 'identify_60s_s', 'iirls_60s_s', 'regressor_ratio',
        'peak_mb_10min')}, 'details': results}))


if __name__ == '__main__':
    main()
