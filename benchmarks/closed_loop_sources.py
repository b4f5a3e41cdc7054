"""The controller's reference read back from each kind of log (part of :mod:`benchmarks.bench_closed_loop`).

A short run of each simulator (dynid's twin and MuJoCo: the UR5e, and the Panda for libfranka's log) is written as
each kind of log a lab keeps, read back as dynid reads it, and its reference (q_r, q̇_r and, where the kind holds
them, q̈_r and the commanded torque) compared with the one the simulator's controller followed. A kind counts as read
where every signal comes back within 1e-6 (absolute, in its unit) and the same log without its reference columns reads
as a recording without one, its joint signals unchanged.

    AMENT_PREFIX_PATH=.venv PYTHONPATH=src python -m benchmarks.closed_loop_sources
"""

from __future__ import annotations

import dataclasses
import json
import tempfile
from pathlib import Path

import numpy as np

from dynid.io.bag import read_bag, write_bag
from dynid.io.csv_log import PRESETS, parse_column_spec
from dynid.io.importing import ImportSettings, import_logs
from dynid.io.log_checks import LogLimits
from dynid.io.rtde import write_rtde
from dynid.model import load_robot
from dynid.sim.mujoco_twin import make_twin
from dynid.sim.parameters import PlantParameters
from dynid.sim.recording import record_to_dataset
from testing.closed_loop import fourier_motion

RATE_HZ = 250.0
SECONDS = 3.0
TOLERANCE = 1e-6


def simulated(robot, engine: str):
    """The simulator's dataset (with the reference its controller followed) on a random motion about the robot's
    home."""
    trajectory = fourier_motion(robot, 7)
    params = PlantParameters.of_twin(robot, None, 0.0, 5, 25.0)
    twin = make_twin(params, engine, None, rate_hz=RATE_HZ, seed=5,
                     initial_q=trajectory.evaluate(np.array([0.0]))[0][0])
    twin.follow(trajectory, start_time=0.0)
    return record_to_dataset(twin.run(SECONDS), None, {'simulation': engine})


def _agrees(read, given, names) -> bool:
    return read is not None and all(
        getattr(read, name) is not None and float(np.abs(getattr(read, name) - getattr(given, name)).max()) < TOLERANCE
        for name in names)


def _table(path: Path, columns: dict, delimiter: str) -> Path:
    np.savetxt(path, np.column_stack(list(columns.values())), delimiter=delimiter, header=delimiter.join(columns),
               comments='', fmt='%.15g')
    return path


def _logger_csv(folder: Path, dataset, kind: str, with_reference: bool):
    """(the log, its column map) as UR's RTDE logger, libfranka's or a lab's own logger writes it."""
    r = dataset.reference
    n = dataset.n_joints
    if kind == 'franka':
        columns = {'time': np.round(dataset.t * 1e3, 9)}
        fields = [('state.q', dataset.q), ('state.dq', dataset.dq), ('state.tau_J', dataset.tau)]
        fields += [('state.q_d', r.q), ('state.dq_d', r.dq), ('state.ddq_d', r.ddq), ('state.tau_J_d', r.effort)] \
            if with_reference else []
        columns.update({f'{f}[{j}]': v[:, j] for f, v in fields for j in range(n)})
        return _table(folder / f'franka_{with_reference}.csv', columns, ','), PRESETS['franka']
    if kind == 'ur_rtde':
        columns = {'timestamp': dataset.t + 100.0}
        fields = [('actual_q', dataset.q), ('actual_qd', dataset.dq), ('actual_current', dataset.current)]
        fields += [('target_q', r.q), ('target_qd', r.dq), ('target_qdd', r.ddq), ('target_moment', r.effort)] \
            if with_reference else []
        columns.update({f'{f}_{j}': v[:, j] for f, v in fields for j in range(n)})
        return _table(folder / f'rtde_{with_reference}.csv', columns, ' '), PRESETS['ur_rtde']
    columns = {'stamp': dataset.t}
    fields = [('pos', dataset.q), ('vel', dataset.dq), ('tau', dataset.tau)]
    fields += [('ref', r.q), ('refvel', r.dq), ('refacc', r.ddq), ('cmd', r.effort)] if with_reference else []
    columns.update({f'{f}{j}': v[:, j] for f, v in fields for j in range(n)})
    spec = 'time=stamp,q=pos{i},dq=vel{i},tau=tau{i}' + (
        ',q_r=ref{i},dq_r=refvel{i},ddq_r=refacc{i},tau_r=cmd{i}' if with_reference else '')
    return _table(folder / f'columns_{with_reference}.csv', columns, ','), parse_column_spec(spec)


def _imported(robot, folder: Path, dataset, kind: str, with_reference: bool):
    log, columns = _logger_csv(folder, dataset, kind, with_reference)
    imported, _, _ = import_logs([log], columns, robot.joint_names, LogLimits.of_robot(robot),
                                 ImportSettings(rate_hz=RATE_HZ) if kind != 'column_map' else ImportSettings(
                                     timing='stamps'))
    # dynid import writes what it read as a bag: the reference must survive that too
    return read_bag(write_bag(folder / f'{kind}_{with_reference}_bag', imported), robot.joint_names)


def reference_sources(folder: Path) -> dict:
    """{kind: {'read': bool, 'without_loses_nothing': bool}} over the kinds of log (module docstring)."""
    ur5e, panda = load_robot('ur5e'), load_robot('panda')
    kinds = {}
    names = ('q', 'dq', 'ddq', 'effort')
    for engine in ('twin', 'mujoco'):
        dataset = simulated(ur5e, engine)
        read = read_bag(write_bag(folder / f'{engine}_bag', dataset), ur5e.joint_names)
        plain = read_bag(write_bag(folder / f'{engine}_plain', dataclasses.replace(dataset, reference=None)),
                         ur5e.joint_names)
        kinds[f'{engine} bag (joint_trajectory topic)'] = {
            'read': _agrees(read.reference, dataset.reference, names),
            'without_loses_nothing': plain.reference is None and np.array_equal(plain.q, read.q)}
    dataset = simulated(ur5e, 'twin')
    read = read_bag(write_rtde(folder / 'rtde', dataset), ur5e.joint_names)
    plain = read_bag(write_rtde(folder / 'rtde_plain', dataclasses.replace(dataset, reference=None)), ur5e.joint_names)
    kinds['UR RTDE bag (target_*)'] = {'read': _agrees(read.reference, dataset.reference, names),
                                       'without_loses_nothing': plain.reference is None
                                       and np.array_equal(plain.q, read.q)}
    for kind, robot in (('ur_rtde', ur5e), ('franka', panda), ('column_map', ur5e)):
        dataset = simulated(robot, 'twin')
        read = _imported(robot, folder, dataset, kind, True)
        plain = _imported(robot, folder, dataset, kind, False)
        kinds[f'{kind} log'] = {'read': _agrees(read.reference, dataset.reference, names),
                                'without_loses_nothing': plain.reference is None
                                and np.allclose(plain.q, read.q, rtol=0, atol=1e-12)}
    return kinds


def main() -> dict:
    with tempfile.TemporaryDirectory() as folder:
        kinds = reference_sources(Path(folder))
    for kind, outcome in kinds.items():
        print(f'{kind:42s} read {"yes" if outcome["read"] else "NO":4s} '
              f'without it, nothing lost: {"yes" if outcome["without_loses_nothing"] else "NO"}')
    summary = {'reference_sources_read': sum(o['read'] for o in kinds.values()),
               'reference_sources_tried': len(kinds),
               'reference_absent_loses_nothing': all(o['without_loses_nothing'] for o in kinds.values())}
    print(json.dumps(summary))
    return {**summary, 'reference_sources': kinds}


if __name__ == '__main__':
    main()
