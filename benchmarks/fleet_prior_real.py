"""Real sessions for ``bench_fleet_prior.py``: dynamic_calibration's UR10e runs (``git clone
https://github.com/shamilmamedov/dynamic_calibration``, read as ``benchmarks/public_datasets.py`` reads them: ``dynid
import`` by column, the drive gains the author quotes as a drives file) as sessions of one robot.

The sessions are the runs without a payload that move and last at least 20 s (the static poses p1–p10 and the short
September/October 2019 runs are left out). Each session is identified on its whole length with the defaults; then,
per session, a fleet prior of the other sessions' results (leave-one-out) and the session's first 15 s identified
(a) with the defaults (the robot file's prior) and (b) with ``--prior`` that fleet prior, both scored on the rest of
the session (which neither saw): per joint the held-out RMSE [N·m], the root mean square over the sessions, fleet
over robot file (``heldout_over_robot_file_prior``; below 1: the fleet prior ahead on that joint).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from benchmarks.fleet_prior_identify import identified, one_law
from benchmarks.public_datasets import dynamic_calibration_cases
from dynid.fleet.prior import fleet_prior, read_members
from dynid.identify.validation.validate import validate
from dynid.io.bag import read_bag
from dynid.model import load_robot
from dynid.model.drives import load_drives

SHORT_S, LEAST_S = 15.0, 20.0


def say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def sessions(root: Path, folder: Path) -> tuple[dict, Path | None, str | None]:
    """{run: Dataset} of the sessions (module docstring), the drives file, and why there are none."""
    folder.mkdir(parents=True, exist_ok=True)
    case = dynamic_calibration_cases(root, folder)[0]
    if case.status is not None:
        return {}, None, case.status
    robot = load_robot('ur10e')
    bags = {case.train.name.removeprefix('dyncal_'): case.train, **case.held}
    chosen = {}
    for run, bag in sorted(bags.items()):
        dataset = read_bag(bag, robot.joint_names)
        moving = np.max(np.abs(dataset.dq)) > 0.1
        if moving and dataset.t[-1] - dataset.t[0] >= LEAST_S:
            chosen[run] = dataset
    return chosen, case.drives, None


def run(root: Path, folder: Path) -> dict:
    """The sessions scored (module docstring)."""
    data, drives, status = sessions(root, folder)
    if status is not None:
        return {'status': status, 'heldout_over_robot_file_prior': None}
    robot = load_robot('ur10e')
    runs = list(data)
    say(f'dynamic_calibration UR10e: {len(runs)} sessions of at least {LEAST_S:g} s')
    paths = [folder / f'{name}.yaml' for name in runs]

    def full(k: int, friction: str = 'auto'):
        return identified(robot, data[runs[k]], runs[k], paths[k], friction=friction, robot_spec='ur10e',
                          drives_file=str(drives))

    for k in range(len(runs)):
        full(k)
    laws = one_law(paths, lambda k, law: full(k, law))
    given = load_drives(drives, robot.joint_names)
    per_session = {}
    for k, name in enumerate(runs):
        dataset = data[name]
        cut = int(np.searchsorted(dataset.t, dataset.t[0] + SHORT_S))
        short, rest = dataset.sliced(0, cut), dataset.sliced(cut, dataset.n_samples)
        prior = fleet_prior(read_members([p for j, p in enumerate(paths) if j != k])).save(
            folder / f'fleet_prior_without_{name}.yaml')
        rmse = {}
        for label, prior_file in (('robot_file_prior', ''), ('fleet_prior', str(prior))):
            result = identified(robot, short, f'{name} first {SHORT_S:g} s', folder / f'{name}-short-{label}.yaml',
                                prior=prior_file, robot_spec='ur10e', drives_file=str(drives))
            joints = validate(result, robot, rest, drives=given)['joints']
            rmse[label] = {joint: joints[joint]['rmse'] for joint in robot.joint_names}
        per_session[name] = rmse
        say(f'  {name}: held-out RMSE fleet / robot file per joint ' + ', '.join(
            f'{rmse["fleet_prior"][j] / rmse["robot_file_prior"][j]:.2f}' for j in robot.joint_names))
    ratio = {}
    for joint in robot.joint_names:
        rms = {label: float(np.sqrt(np.mean([per_session[s][label][joint] ** 2 for s in runs])))
               for label in ('robot_file_prior', 'fleet_prior')}
        ratio[joint] = rms['fleet_prior'] / rms['robot_file_prior']
    behind = [joint for joint, value in ratio.items() if value > 1.0]
    return {'heldout_over_robot_file_prior': ratio, 'ahead_on_every_joint': not behind, 'joints_behind': behind,
            'sessions': runs, 'short_s': SHORT_S, **laws, 'per_session_rmse': per_session}
