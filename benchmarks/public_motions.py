"""Models that hold on other motions (issue 71): ``bench_public.py``'s ``motions`` section. Every public dataset with
a second recording or motion of the same arm is identified with the defaults on one motion and validated on another,
and the other way round where that one identifies too; beside the last-30 % rows of ``bench_public.py``.

The motions (each imported with dynid's own front ends as ``public_datasets.py`` reads it):

- dynamic_calibration UR10e: the author's training run (``ur-20_02_10-30sec_12harm``), another exciting run
  (``ur-20_02_19_15harm50sec``, 50 s of 15 harmonics) and the author's validation run (``ur-20_01_17-ptp_10_points``):
  the training run validated on both others, each of them on the training run. The authors' model: their OLS
  re-implemented (``public_datasets._authors_ols``), trained on the motion dynid identifies on (their rows [635,
  3510] of their training run; every row of another run).
- FloBaRoID KUKA LWR4+: ``measurements_1`` (one trajectory), ``measurements_2`` (another) and ``measurements_3``
  (measurements_2's trajectory again): 2 → 1 (``bench_public.py``'s row), 3 → 1, 1 → 2 and 3. The authors' model:
  the one FloBaRoID's repository holds (``model/kuka_lwr4_identified.urdf``, identified on the trajectory of
  measurements_2 and 3; its links, and its joints' friction and damping as FloBaRoID reads them, Coulomb and viscous:
  ``public_datasets.flobaroid_identified``) on every joint of the rows validated on measurements_1; none on 1 → 2
  and 3, whose rows' trajectory it was identified on (:func:`flobaroid_authors`).
- figaroh-plus TX40: its one log's two windows, the first 70 % and the last 30 % in time (``bench_public.py``'s
  split), each imported by the command the refusal of the documented map gives with ``--end`` / ``--start`` at the
  cut; each window identified and validated on the other, in motor and joint space, beside FIGAROH's refit trained
  on the identifying window's CSV rows (``public_tx40._figaroh``: the better of their base and essential WLS per
  joint and space) and validate's robot-file model.

Datasets without a second motion say why (:data:`ONE_MOTION`) instead of inventing one.

Per row (identified on A, validated on B …) and joint: dynid's RMSE [N·m], the authors' model's on the same rows
(reproduced, quoted or none), the robot file's own model's (``public_scoring.robot_file_model``: the file's links,
friction and offset fitted on A; the TX40: validate's), the rows' errors (``residual``, ``authors_residual``); per
row the pooled ‖e‖/‖y‖ of the defaults and of ``--physical`` on the same rows, and the lines of identify or validate
that say physical consistency predicts better (:data:`PHYSICAL_SAID`).

Counts (:func:`counts`): ``joints_behind_authors``: the 90 % interval of RMSE(dynid)/RMSE(authors) over the rows
(``public_scoring.ratio_interval``) wholly above 1 (a quoted figure, which keeps no rows: dynid's RMSE above it);
``rows_without_authors`` (:func:`without_authors`): {row key, or row|run|joint where only some of a row's joints
lack one: why} of every row scored without the authors' model; ``joints_worse_than_previous_release``: against
another run's detail file (``--against``, its ``motions``), the
interval of RMSE(this)/RMSE(that) wholly above 1; without one, the figure more than 3 % above the release's kept in
:data:`RELEASES` (``--record-release``; rule ``figure``); ``physical_better_unsaid``: rows where ``--physical``'s
pooled error is below the defaults' by more than 5 % (defaults > 1.05 × physical) and no line says so.

``default_over_consistent_max``: the largest, over the rows, of the defaults' pooled error over the better of it and
``--physical``'s (issue 85's target: at most :data:`DEFAULT_OVER_CONSISTENT`); ``--evidence``: each row's
:mod:`benchmarks.public_evidence` figures and their verdicts (``consistency_evidence``).

``--alternatives`` (issue 71's "a candidate the choice did not take"): each row identified again with each of
:func:`alternative_options` (the method it did not choose, Coulomb + viscous friction, no prior) and scored on the
same rows (``alternatives``: their pooled errors, None where identify refuses); ``alternatives_better_unsaid``: rows
where one of them is below the defaults' pooled error by more than 5 % and below every estimate identify or validate
names there (``--physical``'s, where a line says physical consistency does better) by as much.
"""

from __future__ import annotations

import json
import re
import shlex
import time
from pathlib import Path

import numpy as np

from benchmarks import public_datasets, public_evidence, public_tx40
from benchmarks.public_datasets import Case, dynid, say
from benchmarks.public_diagnosis import false_claims
from benchmarks.public_scoring import Runner, Scorer, kept, pooled, ratio_interval, recordings, score_model

RELEASES = Path(__file__).resolve().parent / 'public_motions_releases.json'
PREVIOUS = '349032a'
WORSE = 1.03  # the figure rule, where no rows of the release are at hand
PHYSICAL_MARGIN = 1.05
#: The default's pooled error over the better of it and ``--physical``'s, on the same rows, that a row may reach
DEFAULT_OVER_CONSISTENT = 1.02
#: a line of identify or validate that says the physically consistent estimate (or ``--physical``) does better
PHYSICAL_SAID = re.compile(r'(physically consistent|--physical)[^\n]*\b(better|lower)\b', re.IGNORECASE)

ONE_MOTION = {
    'unisa_ur10': 'one recording of the arm: the repository\'s other bag (ur10_inverse_dynamics_solver/test/'
                  'bagfiles/validation_trajectory.db3) is one JointTrajectory message whose efforts are Petrone '
                  '2025\'s model\'s own output on its states (to 1e-14 N·m), a unit test\'s reference, no measurement',
    'unisa_panda': 'one recording (franka_inria_inverse_dynamics_solver/bagfiles/panda_exciting_trajectory.db3)',
    'gaz_panda': 'one recording (matlab/data/Exciting_Traj/Trajectory_1/rbt_log; gen_*.txt are its trajectory\'s '
                 'parameters); the unisa Panda\'s bag is another arm, not another motion of this one',
    'lbr_med7': 'one recording of the arm (src/test/measurements.csv): robot_data*.csv are the authors\' pybullet '
                'simulation\'s output (src/trajsimulation.py run_sim), and measurements_0dgr.csv, on which '
                'src/regression.py validates, is not in the repository',
    'figaroh_tiago': 'one motion (tiago_{position,velocity,effort}.csv): tiago_bp_19_Oct_2024_2320.csv and '
                     'tiago_nov_30_64.csv are static poses with marker positions (geometric calibration)',
}
OPTIONS = {'unisa': ('unisa_ur10', 'unisa_panda'), 'gaz': ('gaz_panda',), 'lbr': ('lbr_med7',),
           'figaroh': ('figaroh_tiago',), 'dynamic_calibration': ('dyncal_ur10e',),
           'flobaroid': ('flobaroid_kuka',), 'figaroh_plus': (public_tx40.LABEL,)}
DYNCAL_MOTIONS = (public_datasets.DYNCAL_TRAIN[:-4], 'ur-20_02_19_15harm50sec', 'ur-20_01_17-ptp_10_points')
#: identified on → validated on
DYNCAL_PAIRS = {DYNCAL_MOTIONS[0]: DYNCAL_MOTIONS[1:], DYNCAL_MOTIONS[1]: DYNCAL_MOTIONS[:1],
                DYNCAL_MOTIONS[2]: DYNCAL_MOTIONS[:1]}
FLOBAROID_PAIRS = {'measurements_2': ('measurements_1',), 'measurements_3': ('measurements_1',),
                   'measurements_1': ('measurements_2', 'measurements_3')}


def alternative_options(method: str) -> dict[str, tuple[str, ...]]:
    """The candidates the choice did not take that ``--alternatives`` scores, by label: identify's options for
    each (module docstring); ``method``: the one the defaults chose."""
    return {'other method': ('--method', 'wls' if method == 'irls' else 'irls'),
            'coulomb+viscous': ('--friction', 'viscous_coulomb'), 'no prior': ('--no-prior',)}


def _case_row(case: Case, name: str, folder: Path, runner: Runner, alternatives: bool = False,
              evidence: bool = False) -> dict:
    """One row: ``case.train`` (motion ``name``) identified with the defaults, scored on every bag of
    ``case.held`` (module docstring); ``status`` where identify refuses. ``evidence``: what the identifying
    recording's folds say of physical consistency (:mod:`benchmarks.public_evidence`), in ``evidence``."""
    from dynid.identify.result.result import IdentificationResult
    from dynid.model import load_robot
    from dynid.model.drives import load_drives

    scorer = Scorer(folder, runner)
    robot = load_robot(case.robot, **case.robot_options)
    given = None if case.drives is None else load_drives(case.drives, robot.joint_names)
    tag = f'motion_{name}'
    say(f'{case.label}: identified on {name}, validated on {", ".join(case.held)}')
    with public_evidence.captured(evidence) as fits:
        call, path = scorer._identify(case, tag)
    row = {'dataset': case.label, 'identified_on': name, 'validated_on': list(case.held),
           'authors_source': case.authors_source, 'identify_exit': call.code}
    if call.code != 0:
        return {**row, 'status': f'identify refused: {call.last_line[:300]}'}
    if evidence and fits:
        row['evidence'] = public_evidence.evidence(*fits[-1])
    result = IdentificationResult.load(path)
    train, held = recordings(case, robot.joint_names)
    score = score_model(result, robot, case, train, held, given)
    row.update(method=result.method, friction=result.model['friction'], runs=score['runs'], pooled=pooled(score))
    if score.get('beside') is not None:
        row['beside'] = {'pooled': pooled(score['beside']), 'consistent': score['beside']['consistent']}
    check = scorer._validate(case, path)
    row['claims'] = false_claims(case.label, call.warnings + check.warnings)
    row['advice'] = scorer._advice(case, call.warnings + check.warnings, robot, train, held, given, row['pooled'],
                                   f'{tag}_')
    physical, physical_path = scorer._identify(case, f'{tag}_physical', '--physical')
    if physical.code == 0:
        row['physical_pooled'] = pooled(score_model(IdentificationResult.load(physical_path), robot, case, train,
                                                    held, given, references=False))
    else:
        row['physical_refused'] = physical.last_line[:300]
    row['physical_said'] = said_physical(call.text + '\n' + check.text)
    if alternatives:
        row['alternatives'] = {}
        for label, options in alternative_options(result.method).items():
            other, other_path = scorer._identify(case, f'{tag}_{label.replace(" ", "_")}', *options)
            row['alternatives'][label] = None if other.code != 0 else pooled(score_model(
                IdentificationResult.load(other_path), robot, case, train, held, given, references=False))
    return row


def said_physical(text: str) -> list[str]:
    """The lines of ``text`` that say physical consistency (``--physical``) predicts better (:data:`PHYSICAL_SAID`)."""
    return [line.strip() for line in text.splitlines() if PHYSICAL_SAID.search(line)]


def dyncal_rows(root: Path, folder: Path, runner: Runner, alternatives: bool = False, evidence: bool = False
                ) -> dict:
    """The dynamic_calibration UR10e's rows (module docstring), or its status."""
    from dynid.model import load_robot

    data = root / 'dataset_ur10e'
    paths = {name: next((data / part / f'{name}.csv' for part in ('identification_data', 'validation_data')
                         if (data / part / f'{name}.csv').is_file()), None) for name in DYNCAL_MOTIONS}
    missing = [name for name, path in paths.items() if path is None] + \
        ([] if (root / 'main.m').is_file() else ['main.m'])
    if missing:
        return {'dyncal_ur10e': {'status': f'missing: {", ".join(missing)}'}}
    robot = load_robot('ur10e')
    gains, drives = public_datasets.dyncal_drives(root / 'main.m', robot, folder)
    bags = {}
    for name, path in paths.items():
        bags[name] = folder / f'motion_dyncal_{name}'
        dynid(['import', str(path), '--columns', public_datasets.DYNCAL_COLUMNS, '--robot', 'ur10e', '-o',
               str(bags[name])])
    rows = {}
    for name, others in DYNCAL_PAIRS.items():
        their_rows = public_datasets.DYNCAL_ROWS if name == DYNCAL_MOTIONS[0] else None
        case = Case('dyncal_ur10e', 'ur10e', bags[name], held={other: bags[other] for other in others},
                    extra=('--drives', str(drives)), drives=drives,
                    authors=public_datasets._authors_ols(robot, paths[name], gains, their_rows),
                    authors_source='the author\'s OLS, re-implemented, trained on ' + (
                        'their rows of this run' if their_rows else 'every row of this run'))
        rows[f'dyncal_ur10e|{name}'] = _case_row(case, name, folder, runner, alternatives, evidence)
    return rows


def flobaroid_rows(root: Path, folder: Path, runner: Runner, alternatives: bool = False, evidence: bool = False
                   ) -> dict:
    """FloBaRoID's KUKA's rows (module docstring), or its status."""
    logs = {name: root / 'data' / 'KUKA' / 'HW' / f'{name}.npz' for name in FLOBAROID_PAIRS}
    urdf = root / 'model' / 'kuka_lwr4.urdf'
    missing = [str(path) for path in [*logs.values(), urdf] if not path.is_file()]
    found = {} if missing else public_datasets.lfs_objects(root, list(logs.values()), folder)
    missing += [f'{path} (a Git LFS pointer whose object is in no commit)' for path in logs.values()
                if not missing and path not in found]
    if missing:
        return {'flobaroid_kuka': {'status': f'missing: {", ".join(missing)}'}}
    bags = {}
    for name, path in logs.items():
        bags[name] = folder / f'motion_flobaroid_{name}'
        dynid(['import', str(found[path]), '--columns', 'time=times,q=positions_{i},dq=velocities_{i},'
               'tau=torques_{i}', '--robot', str(urdf), '-o', str(bags[name])])
    from dynid.model import load_robot

    model = public_datasets.flobaroid_identified(root, load_robot(str(urdf)).joint_names)
    rows = {}
    for name, others in FLOBAROID_PAIRS.items():
        authors, source = flobaroid_authors(model, name, others)
        case = Case('flobaroid_kuka', str(urdf), bags[name], held={other: bags[other] for other in others},
                    authors=authors, authors_source=source)
        rows[f'flobaroid_kuka|{name}'] = _case_row(case, name, folder, runner, alternatives, evidence)
    return rows


def flobaroid_authors(model, name: str, others) -> tuple[object, str]:
    """(the authors' model, its source) of FloBaRoID's row identified on ``name`` and validated on ``others``:
    ``model`` (``public_datasets.flobaroid_identified``) where it saw neither the rows validated nor their
    trajectory (the measurements it was identified on, ``FLOBAROID_IDENTIFIED_ON``, identify the row), else (None,
    why)."""
    seen = public_datasets.FLOBAROID_IDENTIFIED_ON
    if model is None:
        return None, f'none: the checkout has no {public_datasets.FLOBAROID_IDENTIFIED}'
    if name in seen and not set(others) & set(seen):
        return model, public_datasets.FLOBAROID_SOURCE
    return None, (f'none: the repository\'s one identified model of this arm ({public_datasets.FLOBAROID_IDENTIFIED}) '
                  f'was identified on the trajectory of {" and ".join(seen)} (the script of its commit: {seen[-1]}), '
                  f'the rows validated here or their trajectory; FloBaRoID\'s identification for this arm '
                  f'(configs/kuka_lwr4.yaml: an SDP constrained to physical consistency, closest to the CAD by '
                  f'observability, centres of mass within the meshes\' hulls, friction refitted in a second step) '
                  f'is not re-implemented')


def window_bounds(rows: int, holdout: float, rate: float) -> tuple[int, float]:
    """(the first row of the held-out window, the time [s] halfway between it and the row before): the cut of
    ``split_holdout`` on a log of ``rows`` rows at ``rate`` Hz, as ``dynid import --start/--end`` take it."""
    cut = int(round((1.0 - holdout) * rows))
    return cut, (cut - 0.5) / rate


def _tx40_cells(root, robot, drives, prediction, train_rows: slice, other: str) -> dict:
    """The TX40's runs of one row: per space and joint dynid's RMSE beside FIGAROH's refit trained on
    ``train_rows`` and validate's robot-file model, with the rows' errors."""
    metrics = prediction.metrics(robot.joint_names)
    spaces = {'motor': public_tx40._space(metrics), 'joint': public_tx40._space(metrics['joint_space'])}
    figaroh = public_tx40._figaroh(root, robot, drives, prediction.problem, train_rows, computed=(False,))
    joint_measured, joint_predicted, _, joint_of = prediction.joint_rows
    ours = {'motor': (prediction.measured - prediction.predicted, prediction.joints),
            'joint': (joint_measured - joint_predicted, joint_of)}
    runs = {}
    for space, mine in spaces.items():
        error, of = ours[space]
        cells = {}
        for k, joint in enumerate(public_tx40.JOINTS):
            best = min(('base_wls', 'essential_wls'), key=lambda m, s=space, j=joint: figaroh[m][s][j])
            cells[joint] = {'dynid': mine['dynid'][joint], 'fit': mine['fit'][joint],
                            'authors': figaroh[best][space][joint], 'robot_file': mine['robot_file'][joint],
                            'residual': kept(error[of == k]),
                            'authors_residual': kept(figaroh[best]['errors'][space][joint])}
        runs[f'{other} ({space} space)'] = cells
    return runs


def _tx40_windows(root: Path, folder: Path, runner: Runner):
    """The TX40's two windows imported (module docstring): (urdf, drives file, {window: (bag, CSV rows)})."""
    from dynid.io.bag import read_bag
    from dynid.model import load_robot

    def run(argv):
        call = runner(argv)
        return call.code, call.text

    own = folder / 'motions_tx40'  # bench_public's TX40 row imports into the folder itself
    own.mkdir(exist_ok=True)
    bag, drives_path, imported = public_tx40._imported(root, own, run)
    urdf = str(root / public_tx40.URDF)
    total = read_bag(bag, load_robot(urdf).joint_names).n_samples
    cut, bound = window_bounds(total, public_tx40.HOLDOUT, 5000.0)
    command = shlex.split(imported['command'])[1:]
    windows = {}
    for name, option, rows in ((f'first {1 - public_tx40.HOLDOUT:.0%}', '--end', slice(0, cut)),
                               (f'last {public_tx40.HOLDOUT:.0%}', '--start', slice(cut, total))):
        path = folder / f'motion_tx40_{name.split()[0]}'
        call = runner([*command, option, f'{bound:.6f}', '-o', str(path)])
        if call.code != 0:
            raise SystemExit(f'{public_tx40.LABEL}: the window {name} was not imported: {call.last_line}')
        windows[name] = (path, rows)
    return urdf, drives_path, windows


def tx40_rows(root: Path, folder: Path, runner: Runner, alternatives: bool = False, evidence: bool = False) -> dict:
    """The TX40's two rows (module docstring), or its status."""
    from dynid.identify.result.result import IdentificationResult
    from dynid.identify.validation.validate import predict
    from dynid.io.bag import read_bag
    from dynid.model import load_robot
    from dynid.model.drives import load_drives

    data = root / public_tx40.EXAMPLE / 'data'
    needed = [data / 'pos_read_data.csv', data / 'curr_data.csv', root / public_tx40.URDF,
              root / public_tx40.EXAMPLE / 'config' / 'T40X_config.yaml']
    missing = [str(path) for path in needed if not path.is_file()]
    if missing:
        return {public_tx40.LABEL: {'status': f'missing: {", ".join(missing)}'}}
    urdf, drives_path, windows = _tx40_windows(root, folder, runner)
    robot = load_robot(urdf)
    drives = load_drives(drives_path, robot.joint_names)
    rows = {}
    for name, (bag, train_rows) in windows.items():
        other = next(window for window in windows if window != name)
        say(f'{public_tx40.LABEL}: identified on the {name}, validated on the {other}')
        common = [str(bag), '--robot', urdf, '--drives', str(drives_path)]
        path, physical_path = folder / f'motion_tx40_{name[:4]}.yaml', folder / f'motion_tx40_{name[:4]}_p.yaml'
        with public_evidence.captured(evidence) as fits:
            call = runner(['identify', *common, '-o', str(path)])
        row = {'dataset': public_tx40.LABEL, 'identified_on': name, 'validated_on': [other],
               'authors_source': 'FIGAROH\'s refit, re-implemented, trained on this window\'s CSV rows',
               'identify_exit': call.code}
        if call.code != 0:
            rows[f'{public_tx40.LABEL}|{name}'] = {**row, 'status': f'identify refused: {call.last_line[:300]}'}
            continue
        if evidence and fits:
            row['evidence'] = public_evidence.evidence(*fits[-1])
        check = runner(['validate', '--params', str(path), '--drives', str(drives_path), str(windows[other][0])])
        result = IdentificationResult.load(path)
        held = read_bag(windows[other][0], robot.joint_names)
        prediction = predict(result, robot, held, drives=drives)
        row.update(method=result.method, friction=result.model['friction'],
                   runs=_tx40_cells(root, robot, drives, prediction, train_rows, other),
                   pooled=prediction.metrics(robot.joint_names)['relative_residual'])
        if prediction.other_estimate is not None:
            row['beside'] = {'pooled': float(np.linalg.norm(prediction.measured - prediction.other_estimate)
                                             / np.linalg.norm(prediction.measured)),
                             'consistent': prediction.other_consistent}
        physical = runner(['identify', *common, '--physical', '-o', str(physical_path)])
        if physical.code == 0:
            row['physical_pooled'] = predict(IdentificationResult.load(physical_path), robot, held,
                                             drives=drives).metrics(robot.joint_names)['relative_residual']
        else:
            row['physical_refused'] = physical.last_line[:300]
        row['physical_said'] = said_physical(call.text + '\n' + check.text)
        row['claims'] = false_claims(public_tx40.LABEL, call.warnings + check.warnings)
        if alternatives:
            row['alternatives'] = {}
            for label, options in alternative_options(result.method).items():
                other_path = folder / f'motion_tx40_{name[:4]}_{label.replace(" ", "_")}.yaml'
                other = runner(['identify', *common, *options, '-o', str(other_path)])
                row['alternatives'][label] = None if other.code != 0 else predict(
                    IdentificationResult.load(other_path), robot, held, drives=drives
                ).metrics(robot.joint_names)['relative_residual']
        rows[f'{public_tx40.LABEL}|{name}'] = row
    return rows


def run(given: dict, folder: Path, runner: Runner, alternatives: bool = False, evidence: bool = False) -> dict:
    """{row key or dataset label: row or {"status": ...}} of the datasets ``given`` ({option: folder or None});
    ``alternatives``: each row's :func:`alternative_options` scored too; ``evidence``: each row's
    :func:`benchmarks.public_evidence.evidence`."""
    out = {}
    readers = {'dynamic_calibration': dyncal_rows, 'flobaroid': flobaroid_rows, 'figaroh_plus': tx40_rows}
    for option, labels in OPTIONS.items():
        if given.get(option) is None:
            out.update({label: {'status': 'not given'} for label in labels})
        elif option in readers:
            out.update(readers[option](Path(given[option]), folder, runner, alternatives, evidence))
        else:
            out.update({label: {'status': ONE_MOTION[label]} for label in labels})
    return out


def cells(rows: dict):
    """(row key, run, joint, cell) of every joint scored."""
    for key, row in rows.items():
        for run, joints in (row.get('runs') or {}).items():
            for joint, cell in joints.items():
                yield key, run, joint, cell


def behind(cell: dict) -> tuple[bool, list | str | None]:
    """Whether dynid is behind the authors' model on ``cell`` (module docstring) and why: the interval of the ratio
    over the rows, 'quoted' where the authors' figure keeps no rows, None without an authors' figure."""
    if cell.get('authors') is None:
        return False, None
    interval = ratio_interval(cell.get('residual'), cell.get('authors_residual'))
    if interval is None:
        return cell['dynid'] > cell['authors'], 'quoted' if cell.get('authors_residual') is None else None
    return interval[0] > 1.0, interval


def worse(cell: dict, then) -> tuple[bool, list | str]:
    """Whether ``cell`` is worse than ``then`` (another run's cell with its rows' errors, or a release's figure):
    the interval of the ratio wholly above 1, or (no rows) the figure more than :data:`WORSE` above."""
    if isinstance(then, dict):
        interval = ratio_interval(cell.get('residual'), then.get('residual'))
        if interval is not None:
            return interval[0] > 1.0, interval
        then = then['dynid']
    return cell['dynid'] > WORSE * then, 'figure'


def counts(rows: dict, against: dict | None = None, recorded: dict | None = None) -> tuple[dict, dict]:
    """The ``motions`` block's counts (module docstring) and the lists of joints behind them ([key, ours, theirs,
    interval or rule]); ``against``: {key: cell} of another run's motions, ``recorded``: a release's
    {'joints': {key: RMSE}, 'pooled': {row: pooled}}."""
    recorded = recorded or {}
    lists = {'behind_authors': [], 'worse_than_previous_release': [], 'physical_better_unsaid': [],
             'alternatives_better_unsaid': [], 'pooled_above_previous_release': []}
    scored = 0
    for key, run, joint, cell in cells(rows):
        scored += 1
        name = f'{key}|{run}|{joint}'
        flag, why = behind(cell)
        if flag:
            lists['behind_authors'].append([name, cell['dynid'], cell['authors'], why])
        then = (against or {}).get(name, recorded.get('joints', {}).get(name))
        if then is not None:
            flag, why = worse(cell, then)
            cell['previous'] = then['dynid'] if isinstance(then, dict) else then
            if flag:
                lists['worse_than_previous_release'].append([name, cell['dynid'], cell['previous'], why])
    for key, row in rows.items():
        if row.get('physical_pooled') is not None and row.get('pooled') and not row.get('physical_said') and \
                row['pooled'] > PHYSICAL_MARGIN * row['physical_pooled']:
            lists['physical_better_unsaid'].append([key, row['pooled'], row['physical_pooled']])
        unsaid = alternative_unsaid(row)
        if unsaid is not None:
            lists['alternatives_better_unsaid'].append([key, row['pooled'], unsaid[1], unsaid[0]])
        then = (against or {}).get(f'{key}|pooled', recorded.get('pooled', {}).get(key))
        if row.get('pooled') is not None and then is not None:
            row['previous_pooled'] = then
            if round(row['pooled'], 6) > round(then, 6):  # the release keeps 6 decimals
                lists['pooled_above_previous_release'].append([key, row['pooled'], then])
    compared = against is not None or bool(recorded)
    over = {key: row['pooled'] / min(row['pooled'], row['physical_pooled']) for key, row in rows.items()
            if row.get('pooled') and row.get('physical_pooled') is not None}
    lists['default_over_consistent'] = [[key, row['pooled'], row['physical_pooled']]
                                        for key, row in rows.items() if over.get(key, 1.0) > DEFAULT_OVER_CONSISTENT]
    out = {'rows': sum(1 for row in rows.values() if row.get('runs')), 'joints_scored': scored,
           'joints_behind_authors': len(lists['behind_authors']),
           'joints_worse_than_previous_release': len(lists['worse_than_previous_release']) if compared else None,
           'physical_better_unsaid': len(lists['physical_better_unsaid']),
           'alternatives_better_unsaid': len(lists['alternatives_better_unsaid']) if any(
               'alternatives' in row for row in rows.values()) else None,
           'rows_pooled_above_previous_release': len(lists['pooled_above_previous_release']) if compared else None,
           'previous_release': PREVIOUS, 'worse_rule': 'interval' if against is not None else 'figure',
           'default_over_consistent_max': max(over.values()) if over else None,
           'rows_default_over_consistent': len(lists['default_over_consistent']),
           'rows_without_authors': without_authors(rows)}
    if any('evidence' in row for row in rows.values()):
        out['consistency_evidence'] = public_evidence.verdicts(rows)
    return out, lists


def without_authors(rows: dict) -> dict[str, str]:
    """{row key: why} of every row scored without the authors' model on any joint, and {row|run|joint: why} of the
    joints without one in a row that has it on others (the row's ``authors_source`` says why)."""
    out = {}
    for key, row in rows.items():
        scored = [(run, joint) for run, joints in (row.get('runs') or {}).items() for joint in joints]
        missing = [(run, joint) for run, joint in scored if row['runs'][run][joint].get('authors') is None]
        why = row.get('authors_source') or 'none given'
        if missing and len(missing) == len(scored):
            out[key] = why
        else:
            out.update({f'{key}|{run}|{joint}': why for run, joint in missing})
    return out


def alternative_unsaid(row: dict) -> tuple[str, float] | None:
    """(label, pooled error) of the best of the row's ``alternatives`` where it is below the defaults' pooled error
    and below every estimate a line names (``--physical``'s, where one says physical consistency does better) by more
    than 5 % (:data:`PHYSICAL_MARGIN`); None otherwise."""
    scored = {label: value for label, value in (row.get('alternatives') or {}).items() if value is not None}
    if not scored or not row.get('pooled'):
        return None
    label = min(scored, key=scored.get)
    named = [row['pooled']] + ([row['physical_pooled']] if row.get('physical_said') and
                               row.get('physical_pooled') is not None else [])
    return (label, scored[label]) if min(named) > PHYSICAL_MARGIN * scored[label] else None


def against_cells(detail: dict) -> dict | None:
    """{key: cell} and {row|pooled: pooled} of another run's detail file's motions (None where it has none)."""
    motions = detail.get('motions')
    if not motions:
        return None
    out = {f'{key}|{run}|{joint}': cell for key, run, joint, cell in cells(motions)}
    out.update({f'{key}|pooled': row['pooled'] for key, row in motions.items() if row.get('pooled') is not None})
    return out


def releases() -> dict:
    return json.loads(RELEASES.read_text()) if RELEASES.is_file() else {}


def record_release(name: str, rows: dict, note: str) -> None:
    """Keep this run's per-joint RMSE and per-row pooled errors as release ``name``'s in :data:`RELEASES`."""
    recorded = releases()
    recorded[name] = {'date': time.strftime('%Y-%m-%d'), 'note': note,
                      'joints': {f'{key}|{run}|{joint}': round(cell['dynid'], 6)
                                 for key, run, joint, cell in cells(rows)},
                      'pooled': {key: round(row['pooled'], 6) for key, row in rows.items()
                                 if row.get('pooled') is not None},
                      'physical_pooled': {key: round(row['physical_pooled'], 6) for key, row in rows.items()
                                          if row.get('physical_pooled') is not None}}
    RELEASES.write_text(json.dumps(recorded, indent=1, sort_keys=True) + '\n')


def _number(value, digits: int = 4) -> str:
    return 'n/a' if value is None else f'{value:.{digits}g}'


def table(rows: dict, lists: dict) -> list[str]:
    """The section's human lines: per row our figure beside the authors', the robot file's and the release's."""
    flagged = {item[0]: tag for tag, items in lists.items() for item in items}
    lines = [f'motions: {"row / validated on / joint":<62} {"dynid":>8} {"authors":>8} {"file":>8} {PREVIOUS:>8}']
    for key, row in rows.items():
        if not row.get('runs'):
            lines.append(f'motions: {key}: {row.get("status")}')
            continue
        physical = 'refused' if row.get('physical_refused') else _number(row.get('physical_pooled'))
        others = ''.join(f', {label} {_number(value)}' for label, value in (row.get('alternatives') or {}).items())
        lines.append(f'motions: {key} ({row["method"]} {row["friction"]}; authors: {row["authors_source"]}): pooled '
                     f'{_number(row["pooled"])} ({PREVIOUS} {_number(row.get("previous_pooled"))}), --physical '
                     f'{physical}{others}; said {row.get("physical_said") or "nothing"}')
        found = row.get('evidence') or {}
        if 'time' in found:
            lines.append(f'motions:   its own folds, consistent over unconstrained: time {found["time"]:.3f}, region '
                         f'{found["region"]:.3f}; on the other motion --physical over the defaults '
                         f'{_number(row.get("physical_pooled", float("nan")) / row["pooled"])}')
        for run, joints in row['runs'].items():
            for joint, cell in joints.items():
                name = f'{key}|{run}|{joint}'
                lines.append(f'motions:   {run[:40] + " / " + joint:<60} {_number(cell["dynid"]):>8} '
                             f'{_number(cell.get("authors")):>8} {_number(cell.get("robot_file")):>8} '
                             f'{_number(cell.get("previous")):>8}  {flagged.get(name, "")}')
    lines += [f'motions: without the authors\' model: {key}: {why}' for key, why in without_authors(rows).items()]
    return lines


def compact(rows: dict) -> dict:
    """The rows for the JSON line: per row its pooled errors and per run and joint [dynid, authors, robot file]."""
    out = {}
    for key, row in rows.items():
        if not row.get('runs'):
            out[key] = {'status': row.get('status')}
            continue
        out[key] = {**{name: row.get(name) for name in ('method', 'friction', 'pooled', 'previous_pooled',
                                                        'physical_pooled', 'physical_said', 'alternatives')},
                    'runs': {run: {joint: [cell['dynid'], cell.get('authors'), cell.get('robot_file')]
                                   for joint, cell in joints.items()} for run, joints in row['runs'].items()}}
    return out
