"""The shape of the house and how sturdy and quick it is to work in: module sizes, import circles, the twin's
speed and the test suite's wall time.

Run: ``.venv/bin/python -m benchmarks.bench_house [--twin-seconds S --repeats R] [--test-suite [--pytest-args A]]``.

Targets (the layout's rules and what a developer waits for on a 2-core machine):

- ``cli_max_lines``: the longest module of ``src/dynid/cli/`` (≤ 300 lines);
- ``node_max_lines``: the longest module of ``src/dynid/nodes/`` (≤ 200: a node converts, calls the core and
  publishes);
- ``import_circles``: groups of modules of ``src/dynid`` that import each other in a circle, as the test suite's
  guard counts them (``test/test_code_shape.py``: every ``import`` statement, deferred ones inside functions too,
  type-only ones not; one reader of the graph for both, ``testing/import_graph.py``), 0 wanted;
- ``twin_rtf``: real-time factor of ``DigitalTwin.run`` (plant, controller, sensors), UR5e at 1 kHz, the best
  of ``--repeats`` (≥ 20 wanted);
- ``test_suite_s``: wall time of ``python -m pytest`` run as ``make test`` runs it (the options of pytest.ini,
  from the repository root), ≤ 480 s on a quiet machine, only with ``--test-suite``; null otherwise. Beside it
  the suite's exit code, pytest's summary line (how many tests passed, failed, skipped) and the load average
  before and after: a time is comparable only for a whole, green run, and on a machine whose other work the
  load shows (several times longer on a busy one).

The last line is JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

from testing.import_graph import import_circles, import_graph

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT / 'src'

TARGETS = {'cli_max_lines': 300, 'node_max_lines': 200, 'import_circles': 0, 'twin_rtf': 20.0,
           'test_suite_s': 480.0}


def line_counts(folder: Path) -> dict[str, int]:
    """{module file name: lines} of the Python modules directly in ``folder``."""
    return {path.name: len(path.read_text().splitlines()) for path in sorted(folder.glob('*.py'))}


def twin_rtf(seconds: float, repeats: int) -> list[float]:
    """Real-time factors of ``DigitalTwin.run`` for the UR5e at 1 kHz on its gentle motion, one per repeat."""
    from dynid.model import load_robot
    from dynid.sim.parameters import PlantParameters
    from dynid.sim.twin import DigitalTwin, gentle_motion

    robot = load_robot('ur5e')
    params = PlantParameters.defaults(robot)
    factors = []
    for _ in range(repeats):
        twin = DigitalTwin(params, rate_hz=1000.0)
        twin.follow(gentle_motion(robot))
        start = time.perf_counter()
        twin.run(seconds)
        factors.append(seconds / (time.perf_counter() - start))
    return factors


SUMMARY = re.compile(r'\d+ (passed|failed|error)')


def test_suite_seconds(extra: list[str]) -> tuple[float, int, str]:
    """(wall time [s], exit code, pytest's summary line) of the whole test suite, run as ``make test`` runs it
    (``python -m pytest`` from the repository root: pytest.ini's options) with ``extra`` arguments (none for
    ``make test``'s own run); its output is passed through."""
    environment = dict(os.environ, AMENT_PREFIX_PATH=os.environ.get('AMENT_PREFIX_PATH', sys.prefix),
                       ROS_AUTOMATIC_DISCOVERY_RANGE='LOCALHOST')
    start = time.monotonic()
    process = subprocess.Popen([sys.executable, '-m', 'pytest', '-q', '-p', 'no:cacheprovider', *extra], cwd=ROOT,
                               env=environment, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    summary = ''
    for line in process.stdout:
        sys.stdout.write(line)
        if SUMMARY.search(line) and ' in ' in line:
            summary = line.strip().strip('=').strip()
    code = process.wait()
    return time.monotonic() - start, code, summary or 'no summary line'


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--twin-seconds', type=float, default=5.0, help='simulated seconds per repeat (default 5)')
    parser.add_argument('--repeats', type=int, default=3, help='twin repeats, the best counts (default 3)')
    parser.add_argument('--test-suite', action='store_true', help='also time the whole test suite (minutes)')
    parser.add_argument('--pytest-args', default='',
                        help="extra pytest arguments of the timed suite, e.g. '-n 0' for one process (default none: "
                             'as make test runs it)')
    args = parser.parse_args()

    package = SOURCE / 'dynid'
    cli, nodes = line_counts(package / 'cli'), line_counts(package / 'nodes')
    circles = import_circles(import_graph(package))
    factors = twin_rtf(args.twin_seconds, args.repeats)
    load_before = os.getloadavg()[0]
    suite_s, suite_code, suite_summary = test_suite_seconds(args.pytest_args.split()) if args.test_suite \
        else (None, None, None)
    load = os.getloadavg()[0]

    figures = {'cli_max_lines': max(cli.values()), 'node_max_lines': max(nodes.values()),
               'import_circles': len(circles), 'twin_rtf': round(max(factors), 2),
               'test_suite_s': None if suite_s is None else round(suite_s, 1)}
    command = (f'.venv/bin/python -m benchmarks.bench_house --twin-seconds {args.twin_seconds:g} '
               f'--repeats {args.repeats}' + (' --test-suite' if args.test_suite else '')
               + (f" --pytest-args '{args.pytest_args}'" if args.pytest_args else ''))
    print(f'dynid house benchmark ({os.cpu_count()} cores, load {load_before:.1f} before the suite, '
          f'{load:.1f} at the end)')
    print(f'command: {command}')
    print(f'{"measure":<18} {"ours":>10} {"target":>10}   where')
    where = {'cli_max_lines': max(cli, key=cli.get), 'node_max_lines': max(nodes, key=nodes.get),
             'import_circles': '; '.join(' <-> '.join(group) for group in circles) or '-',
             'twin_rtf': f'UR5e 1 kHz, {args.twin_seconds:g} s, all: ' + ', '.join(f'{f:.1f}' for f in factors),
             'test_suite_s': ' '.join(['python -m pytest', *args.pytest_args.split()])
             + ('' if suite_code is None else f', exit code {suite_code}: {suite_summary}')}
    for name, value in figures.items():
        shown = 'skipped' if value is None else f'{value:g}'
        target = f'≥ {TARGETS[name]:g}' if name == 'twin_rtf' else f'≤ {TARGETS[name]:g}'
        print(f'{name:<18} {shown:>10} {target:>10}   {where[name]}')
    if suite_s is None:
        print('test_suite_s: not measured; run with --test-suite (runs python -m pytest: many minutes)')
    elif suite_code != 0:
        print(f'test_suite_s: the suite exited {suite_code}; its time is not that of a green run')
    extra = {} if suite_s is None else {'test_suite_exit_code': suite_code, 'test_suite_summary': suite_summary,
                                        'load_before': round(load_before, 2), 'load_after': round(load, 2)}
    print(json.dumps({'benchmark': 'house', **figures, **extra}))


if __name__ == '__main__':
    main()
