"""``dynid contact`` on recordings that carry the controller's reference read from a logger's columns (part of
:mod:`benchmarks.bench_closed_loop`): the alarms at the first motion after a push at rest, with the reference and
without it.

The plant is identified as :mod:`benchmarks.contact_sim` does (``dynid identify`` with the defaults on its optimized
excitation); its contact-free runs (calibration) and its runs with pushes at rest and in motion
(:func:`contact_sim.plan_run`, no payload) are written as a lab's logger writes them: a CSV of the time, q, q̇, the
motor currents and the controller's reference q_r, q̇_r (columns ``ref{i}``, ``refvel{i}``), imported with
``dynid import --columns`` into bags. ``dynid contact --calibrate`` then replays them twice: as imported (the
reference read from the columns) and from the same logs imported without the reference columns. An alarm at the first
motion is a contact the detector raised outside every true contact within the window after the arm leaves a rest in
which a push acted (:func:`contact_scoring.first_motion_alarms`).

    AMENT_PREFIX_PATH=.venv PYTHONPATH=src python -m benchmarks.closed_loop_contact [--engines twin,mujoco] [--runs 6]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import tempfile
from pathlib import Path
from types import SimpleNamespace

import numpy as np

from benchmarks import contact_scoring as scoring
from benchmarks import contact_sim as sim
from benchmarks.public_datasets import dynid
from dynid.model import load_robot

#: the seeds of the runs (apart from bench_contact's)
CALIBRATION_SEED, CONTACT_SEED = 7100, 7200
COLUMNS = 'time=t,q=q{i},dq=dq{i},current=i{i},temperature=temp{i}'
REFERENCE_COLUMNS = ',q_r=ref{i},dq_r=refvel{i}'


def _logged(run, folder: Path, reference: bool) -> Path:
    """The run as a logger's CSV imported into a bag (module docstring), with or without the reference columns."""
    m, n = run.measured, run.measured['q'].shape[1]
    columns = {'t': run.t - run.t[0]}
    fields = [('q', m['q']), ('dq', m['dq']), ('i', m['current']), ('temp', m['temperature'])]
    fields += [('ref', run.reference['q']), ('refvel', run.reference['dq'])] if reference else []
    columns.update({f'{name}{j}': values[:, j] for name, values in fields for j in range(n)})
    stem = folder / f'{run.name.replace(" ", "_")}_{"ref" if reference else "bare"}'
    np.savetxt(stem.with_suffix('.csv'), np.column_stack(list(columns.values())), delimiter=',',
               header=','.join(columns), comments='', fmt='%.12g')
    dynid(['import', str(stem.with_suffix('.csv')), '--columns', COLUMNS + (REFERENCE_COLUMNS if reference else ''),
           '--robot', 'ur5e', '--timing', 'stamps', '-o', str(stem)])
    return stem


def _contacts(result: Path, bags: list[Path], calibration: list[Path]) -> list[dict]:
    """``dynid contact --json`` on ``bags`` calibrated on ``calibration``: each recording's entry."""
    from dynid.cli import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        code = main(['contact', *map(str, bags), '--params', str(result), '--calibrate', *map(str, calibration),
                     '--json'])
    if code != 0:
        raise SystemExit(f'dynid contact failed ({code})')
    return json.loads(out.getvalue().strip().splitlines()[-1])['recordings']


def engine_part(engine: str, folder: Path, runs: int, calibrations: int) -> dict:
    """The first-motion alarms of ``dynid contact`` on the engine's runs, with and without the reference."""
    robot = load_robot('ur5e')
    result = sim.identified_plant(engine, folder)
    free = [sim.simulate_run(robot, engine, f'{engine} free {k}', CALIBRATION_SEED + k,
                             sim.plan_run(robot, CALIBRATION_SEED + k, 3, contacts=False), None, 22.0 + k)
            for k in range(calibrations)]
    pushed = [sim.simulate_run(robot, engine, f'{engine} pushed {k}', CONTACT_SEED + k,
                               sim.plan_run(robot, CONTACT_SEED + k, 2, contacts=True), None, 24.0 + k)
              for k in range(runs)]
    part = {}
    for reference in (True, False):
        calibration = [_logged(run, folder, reference) for run in free]
        bags = [_logged(run, folder, reference) for run in pushed]
        recordings = _contacts(result, bags, calibration)
        alarms, moves = [], 0
        for run, recording in zip(pushed, recordings, strict=True):
            output = SimpleNamespace(contacts=[SimpleNamespace(start_s=c['start_s'] + run.t[0], end_s=None if
                                                               c['end_s'] is None else c['end_s'] + run.t[0])
                                               for c in recording['contacts']])
            alarms += [f'{run.name} {t:.2f} s' for t in scoring.first_motion_alarms(run, output)]
            moves += len(scoring.first_motion_starts(run.t, run.resting, run.loads))
        part['with_reference' if reference else 'without_reference'] = {
            'first_motions': moves, 'alarms': alarms, 'reference_read': all(r['reference'] for r in recordings)}
    return part


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--engines', default='twin,mujoco')
    parser.add_argument('--runs', type=int, default=6, help='runs with pushes per engine')
    parser.add_argument('--calibrations', type=int, default=4, help='contact-free runs per engine')
    parser.add_argument('--work', type=Path, default=None, help='keep the derived files here (default: temporary)')
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as temporary:
        folder = args.work or Path(temporary)
        folder.mkdir(parents=True, exist_ok=True)
        parts = {engine: engine_part(engine, folder, args.runs, args.calibrations)
                 for engine in args.engines.split(',')}
    for engine, part in parts.items():
        for kind, figures in part.items():
            print(f'{engine:7s} {kind:18s} reference read: {figures["reference_read"]!s:5s} alarms at the first '
                  f'motion after a push at rest: {len(figures["alarms"])} of {figures["first_motions"]} '
                  f'{figures["alarms"] or ""}')
    summary = {'contact_first_motion_alarms_with_reference': sum(len(p['with_reference']['alarms'])
                                                                 for p in parts.values()),
               'contact_first_motions': sum(p['with_reference']['first_motions'] for p in parts.values()),
               'contact_first_motion_alarms_without_reference': sum(len(p['without_reference']['alarms'])
                                                                    for p in parts.values())}
    print(json.dumps(summary))
    return {**summary, 'contact_parts': parts}


if __name__ == '__main__':
    main()
