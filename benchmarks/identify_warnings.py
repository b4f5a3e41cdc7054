"""Every warning ``dynid identify`` prints with the defaults on fault-free twin logs (issue 31, calibrated checks).

``bench_diagnostics.py`` part 1 judges the diagnosis's findings alone; a user reads every line that starts with
``warning:``. This part runs the whole command (reading, diagnosis, model choice, the result's checks) on the same
fault-free logs (:func:`bench_diagnostics.base_logs`: five arms, 30 Hz–1 kHz, 8 s and 20 s, joint torque or motor
current, a payload declared fully, by its mass alone or none), each against the robot file the twin was built
from, and sorts the warnings by what they claim:

- **about the data or the robot file** (a sign, a meaning, units, a link or a load, the gravity an order of
  magnitude off, another arm's rate, samples lost): false on these logs, every one of them;
- **about the model identified** (the robot file's own model predicts held-out stretches better, a structured
  residual, parameters poorly excited, parameters held): true or false of the identification, not of the data. On
  the twin the robot file is the plant's own links, so its model is the truth and predicting better is what it
  does; the twin has terms no identified model holds (elastic joints, E-GMS pre-sliding friction, the Stribeck
  rise), which a structured residual may show. They are counted, not judged.

Run: ``.venv/bin/python -m benchmarks.identify_warnings`` (about a minute on a quiet 2-core machine). Ends with one
JSON line ``{"benchmark": "identify_warnings", "logs": N, "false_warnings_per_100_logs": X, "by_kind": {...}}``.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import re
import sys
import tempfile
import time
from pathlib import Path

#: (kind, the words of its text, whether it claims something of the data or the robot file); first match wins
KINDS = (
    ('robot_file_model_ahead', "the robot file's own model", False),
    ('misfit', 'model misfit', False),
    ('poorly_excited', 'poorly excited', False),
    ('held', 'held, not identified', False),
    ('gravity_off', 'the identified gravity torque is', True),
    ('rate', 'the rate of the', True),
    ('samples', 'of the recording', True),
    ('sign', 'opposite sign', True),
    ('meaning', 'looks like', True),
    ('dead_channel', 'carries nothing', True),
)
TARGET_FALSE_PER_100 = 1.0


def kind_of(line: str) -> tuple[str, bool]:
    """(kind, whether it claims something of the data or the robot file) of one warning's text; anything not
    listed is taken as such a claim (module docstring)."""
    for kind, words, claim in KINDS:
        if words in line:
            return kind, claim
    return 'other', True


def identify_warnings(logs, folder: Path) -> dict:
    """``dynid identify`` with the defaults on each of ``logs`` (``bench_diagnostics.Log``) as a user gives it:
    joint torque or motor current as the log holds, the payload declared as the log says. {'logs', 'false',
    'by_kind', 'lines'}."""
    from benchmarks import bench_diagnostics  # noqa: PLC0415
    from dynid.io.bag import write_bag

    by_kind: dict[str, int] = {}
    false, lines = 0, []
    for k, log in enumerate(logs):
        data, payload = log.dataset, log.dataset.payload
        data = dataclasses.replace(data, payload=None, source={}, theta=None, dtheta=None, temperature=None,
                                   **({'tau': None} if log.signal == 'current' else {'current': None}))
        bag = write_bag(folder / f'log_{k}', data)
        argv = ['identify', str(bag), '--robot', log.robot, '-o', str(folder / f'log_{k}.yaml'), '--quiet']
        if payload is not None and log.payload in ('full', 'mass'):
            argv += ['--payload-mass', f'{payload.mass:.6g}']
            if log.payload == 'full':
                argv += ['--payload-com=' + ','.join(f'{c:.6g}' for c in payload.com)]
        code, out = bench_diagnostics._dynid(argv, stdout=True)
        label = f'{log.robot} {log.rate_hz:g} Hz {log.seconds:g} s {log.signal} payload {log.payload}'
        found = [(*kind_of(line), line) for line in bench_diagnostics._warnings(out)]
        if code != 0:  # a refusal of a fault-free log is a claim about its data too
            found.append(('refused', True, f'exit {code}: {out.strip().splitlines()[-1] if out.strip() else ""}'))
        claims = 0
        for kind, claim, line in found:
            by_kind[kind] = by_kind.get(kind, 0) + 1
            if claim:
                claims += 1
                lines.append(f'{label}: {re.sub(r"/[^ :]+/log_", "log_", line)[:240]}')
        false += claims > 0
    return {'logs': len(logs), 'false': false, 'by_kind': dict(sorted(by_kind.items())), 'lines': lines}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--count', type=int, default=60, help='fault-free logs (default 60)')
    parser.add_argument('--seed', type=int, default=0)
    args = parser.parse_args(argv)
    from benchmarks import bench_diagnostics  # noqa: PLC0415

    start = time.perf_counter()
    logs = bench_diagnostics.base_logs(args.count, args.seed)
    with tempfile.TemporaryDirectory() as scratch:
        run = identify_warnings(logs, Path(scratch))
    rate = 100.0 * run['false'] / max(1, run['logs'])
    print(f'dynid identify with the defaults on {run["logs"]} fault-free twin logs: {run["false"]} with a warning '
          f'that claims something of the data or the robot file ({rate:.2f} per 100; target ≤ '
          f'{TARGET_FALSE_PER_100:g}); warnings by kind: {run["by_kind"]} ({time.perf_counter() - start:.0f} s)')
    for line in run['lines']:
        print(f'   {line}')
    print(json.dumps({'benchmark': 'identify_warnings', 'logs': run['logs'],
                      'false_warnings_per_100_logs': round(rate, 3), 'by_kind': run['by_kind']}))
    return 0


if __name__ == '__main__':
    sys.exit(main())
