"""Scoring one public dataset for ``bench_public.py``: ``dynid identify`` with the defaults as a user runs it (its words
kept), the model held out per joint beside the data authors' model and the robot file's own model, then what its
words lead to (the advice followed as written, a refusal's first way out against ``--force``, ``--physical``).

The robot file's own model here is fixed, whatever the identification chose: the file's links as filed (its
inverse dynamics on dynid's filtered states of the same rows) plus, per joint, viscous and Coulomb friction and a
constant offset (and the reflected rotor inertia where the identification models one: motor-side efforts) fitted by
least squares on the training rows. A joint where it predicts the held-out rows better than dynid's model is
**named** when a warning of ``dynid identify`` or a line of ``dynid validate`` names the joint beside the words
"robot file's own model" (the words both use for it).

How far a ratio of two models' RMSE on the same held-out rows would move with other rows (:func:`ratio_interval`):
a moving-block bootstrap of the rows (Künsch 1989), blocks of ⌈n^(1/3)⌉ rows (Hall, Horowitz & Jing 1995), since
consecutive decimated rows' errors are correlated. Each cell keeps its rows' errors (``residual``, and the authors'
model's, ``authors_residual``, where it is reproduced) for it.

Absurd figures (:func:`absurd_figures`): every torque figure [N·m] a command printed above :data:`ABSURD_FACTOR` × the
largest effort limit of its robot file (``--robot``, else the result's ``--params``), or not finite: a model that
predicts that is a failed model and is to be named as such, not printed as a number. :class:`Runner` and
``public_datasets.dynid`` keep them in :data:`ABSURD_PRINTED`.

Library warnings: every Python warning (numpy's ``RuntimeWarning``, scipy's, cvxpy's, ...) a ``dynid`` command lets
reach the terminal is recorded instead of printed (the interpreter's default filters, afresh for each command, so
each distinct warning counts once per command as a terminal shows it once per process) and counted.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import io
import math
import re
import warnings
from pathlib import Path

import numpy as np

from benchmarks import public_datasets
from benchmarks.public_datasets import Case
from benchmarks.public_diagnosis import false_claims

#: the options a warning gives as its remedy, together: 'give --torque motor_torque', 'give `--torque-sign all=-1`',
#: 'give --payload-mass 2.1 --payload-com 0.01,0.1,-0.15'
REMEDY = re.compile(r'(?:give|with|add|use|try|pass)\s+((?:--[a-z][a-z-]*(?:[ =](?!--)[^\s;:)`]+)?(?:\s+|$))+)')
#: a refusal's way out that identifies the data as written: '--decimation-cutoff 10 identifies it', '--exclude-joint J'
WAY_OUT = (re.compile(r'(--[a-z-]+ [0-9.]+) identifies it'), re.compile(r'(--exclude-joint [\w,]+)'),
           re.compile(r'(--(?!force)[a-z][a-z-]*(?: (?!--)[^\s,;:)`]+)?)'))


#: a torque figure above this many times the robot file's largest effort limit is absurd
ABSURD_FACTOR = 10.0
_TORQUE = re.compile(r'([-+]?(?:\d[\d ]*\.?\d*|\.\d+)(?:e[-+]?\d+)?|[-+]?inf|nan)\s*(?=N·m(?![/·]))', re.I)
#: every absurd figure a dynid command of this process printed: {'command', 'figure', 'limit'}
ABSURD_PRINTED: list[dict] = []


def absurd_figures(text: str, effort_limit: float) -> list[str]:
    """The torque figures [N·m] in ``text`` above :data:`ABSURD_FACTOR` × ``effort_limit`` [N·m] or not finite."""
    found = []
    for match in _TORQUE.finditer(text):
        try:
            value = float(match.group(1).replace(' ', ''))
        except ValueError:
            continue
        if not math.isfinite(value) or abs(value) > ABSURD_FACTOR * effort_limit:
            found.append(match.group(0).strip())
    return found


@functools.cache
def _effort_limit(spec: str) -> float | None:
    from dynid.model import load_robot

    try:
        limits = np.asarray(load_robot(spec).effort_limits, dtype=float)
    except Exception:  # a robot this benchmark cannot load: its figures are not judged
        return None
    return float(limits[np.isfinite(limits)].max()) if np.isfinite(limits).any() else None


def record_absurd(argv: list, text: str) -> list[str]:
    """The absurd figures ``dynid ARGV`` printed in ``text`` (module docstring), kept in :data:`ABSURD_PRINTED`."""
    argv = [str(a) for a in argv]
    spec = argv[argv.index('--robot') + 1] if '--robot' in argv[:-1] else None
    if spec is None and '--params' in argv[:-1]:
        from dynid.identify.result.result import IdentificationResult

        with contextlib.suppress(Exception):
            spec = IdentificationResult.load(argv[argv.index('--params') + 1]).robot
    limit = _effort_limit(spec) if spec else None
    found = absurd_figures(text, limit) if limit else []
    ABSURD_PRINTED.extend({'command': ' '.join(argv[:2]), 'figure': figure, 'limit': limit} for figure in found)
    return found


#: the condition numbers identify prints, by what they are of (issue 71: one figure per run for each): the data
#: alone (the weakly exciting log's gate, the choice's line, the summary; without a prior the summary's cond(W) is
#: the data's), and the data with the prior. A refusal's ways out print other settings' runs and are not read.
NUMBER = r'([0-9][0-9.]*(?:e[+-]?[0-9]+)?)'
CONDITIONS = {'data alone': (re.compile(r'cond\(W\) of the data alone(?: with unit-norm columns)? ' + NUMBER),
                             re.compile(r'the data alone: cond\(W\) = ' + NUMBER),
                             re.compile(r'(?<!alone: )cond\(W\) = ' + NUMBER + ' with unit-norm columns')),
              'with the prior': (re.compile(r'cond = ' + NUMBER + ' with unit-norm columns for the data with the '
                                            'prior'),
                                 re.compile(r'cond with the prior ' + NUMBER),
                                 re.compile(r'cond of the data with the prior = ' + NUMBER))}
#: two printed figures are one where they differ by less than this relative amount (3 significant digits round
#: by up to 0.5 %)
SAME_FIGURE = 0.006

#: the words by which identify and validate say the robot file's own model predicts a joint better
OWN_MODEL = "robot file's own model"


@dataclasses.dataclass
class Call:
    argv: list
    code: int
    text: str

    @property
    def warnings(self) -> list[str]:
        return [line[len('warning: '):] for line in self.text.splitlines() if line.startswith('warning: ')]

    @property
    def last_line(self) -> str:
        lines = [line for line in self.text.strip().splitlines() if line.strip()]
        return lines[-1] if lines else ''


class Runner:
    """``dynid ARGV`` in this process, its output kept; the Python warnings it lets through recorded
    (module docstring) in :attr:`library`."""

    def __init__(self):
        self.library: list[dict] = []
        self.calls = 0
        self.conditions: list[dict] = []  # every identify run: its distinct condition figures by quantity

    def __call__(self, argv: list[str]) -> Call:
        from dynid.cli import main

        out = io.StringIO()
        with warnings.catch_warnings(record=True) as caught, contextlib.redirect_stdout(out), \
                contextlib.redirect_stderr(out):
            try:
                code = main([str(a) for a in argv])
            except SystemExit as stop:  # argparse's refusals
                code = stop.code if isinstance(stop.code, int) else 2
        self.calls += 1
        record_absurd(argv, out.getvalue())
        seen = set()
        for w in caught:
            key = (w.category.__name__, str(w.message), w.filename, w.lineno)
            if key not in seen:
                seen.add(key)
                self.library.append({'command': ' '.join(map(str, argv[:2])), 'category': key[0],
                                     'message': key[1][:160], 'where': f'{Path(w.filename).name}:{w.lineno}'})
        if argv and argv[0] == 'identify':
            self.conditions.append({'command': ' '.join(map(str, argv[1:]))[-160:],
                                    'figures': condition_figures(out.getvalue())})
        return Call(list(argv), code, out.getvalue())

    @property
    def most_conditions(self) -> int:
        """The most distinct figures one identify run printed for one quantity (:data:`CONDITIONS`)."""
        return max((len(figures) for run in self.conditions for figures in run['figures'].values()), default=0)


def condition_figures(text: str) -> dict[str, list[float]]:
    """{quantity: its distinct figures} of the condition numbers an identify run printed (:data:`CONDITIONS`; a
    refusal's ways out left out)."""
    out = {}
    for line in text.splitlines():
        if 'refused; trying' in line or 'identifies it (cond' in line:
            continue
        for quantity, patterns in CONDITIONS.items():
            for pattern in patterns:
                for match in pattern.finditer(line):
                    value = float(match.group(1).rstrip('.'))
                    kept = out.setdefault(quantity, [])
                    if not any(abs(value - v) <= SAME_FIGURE * max(abs(v), abs(value)) for v in kept):
                        kept.append(value)
    return out


def remedies(lines: list[str]) -> list[str]:
    """The options the lines give as remedies, as written (module docstring), each once."""
    found = []
    for line in lines:
        for option in REMEDY.findall(line.replace('`', '')):
            option = option.strip().rstrip('.,')
            if option not in found:
                found.append(option)
    return found


#: a refusal's ways out ranked by their held-out error: the first after 'best first …:' is its first way out
RANKED = re.compile(r'ways out, best first[^:]*:\s*(--[a-z][a-z-]*(?: (?!--)[^\s,;:)`]+)?)')


def way_out(refusal: str, given=()) -> str:
    """The first way out a refusal names, as written ('without --X' where it says to leave ``--X`` of ``given``
    out; the first of a ranked list); '' where it names none."""
    text = refusal.replace('`', '')
    for option in given:
        if f'without {option}' in text:
            return f'without {option}'
    ranked = RANKED.search(text)
    if ranked:  # an option without a value (--force) is followed by the way's words
        option = ranked.group(1)
        return option.split()[0] if option.split()[-1] in ('identifies', 'keeps') else option
    for pattern in WAY_OUT:
        for match in pattern.finditer(text):
            if match.group(1).split()[0] not in given:
                return match.group(1)
    return ''


def _signed(dataset, sign: float):
    if sign == 1.0 or dataset.tau is None:
        return dataset
    return dataclasses.replace(dataset, tau=dataset.tau * sign)


def recordings(case: Case, names) -> tuple:
    """(the training recording, {run: held-out recording}) as the identification split them."""
    from dynid.io.bag import read_bag

    whole = _signed(read_bag(case.train, names), case.torque_sign)
    if case.held:
        return whole, {run: _signed(read_bag(bag, names), case.torque_sign) for run, bag in case.held.items()}
    train, held = whole.split_holdout(public_datasets.HOLDOUT)
    return train, {'held-out': held}


def _friction_rows(problem, n: int, rotor: bool) -> np.ndarray:
    """(rows, k) the fixed robot-file model's friction columns per row (module docstring), per row's joint."""
    from dynid.identify.validation.validate import model_rows

    dq = model_rows(problem, lambda q, v, a: v)
    columns = [dq, np.sign(dq), np.ones_like(dq)]
    if rotor:
        columns.append(model_rows(problem, lambda q, v, a: np.zeros_like(q), np.ones(n)))
    return np.column_stack(columns)


def robot_file_model(result, robot, train, given):
    """The fixed robot-file model (module docstring) fitted on ``train``: a function prediction → rows."""
    from dynid.identify.validation.validate import model_rows, predict

    fitted = predict(result, robot, train, drives=given)
    rotor = bool(getattr(fitted.problem, 'identify_rotor_inertia', False))
    links = model_rows(fitted.problem, robot.inverse_dynamics)
    columns = _friction_rows(fitted.problem, robot.n, rotor)
    values = {}
    for j in range(robot.n):
        rows = fitted.joints == j
        if rows.sum() >= columns.shape[1]:
            values[j] = np.linalg.lstsq(columns[rows], fitted.measured[rows] - links[rows], rcond=None)[0]

    def rows_of(prediction):
        out = model_rows(prediction.problem, robot.inverse_dynamics)
        friction = _friction_rows(prediction.problem, robot.n, rotor)
        for j, theta in values.items():
            rows = prediction.joints == j
            out[rows] = out[rows] + friction[rows] @ theta
        return out
    return rows_of


def score_model(result, robot, case: Case, train, held: dict, given, references: bool = True) -> dict:
    """Per run and joint the held-out RMSE [N·m] and fit [%] of ``result``, and with ``references`` those of the
    fixed robot-file model and the authors' model on the same rows; ``pooled``: ‖e‖²'s and ‖y‖²'s sums; ``beside``:
    the same sums of the other consistency decision's estimate the result keeps, and whether it is the consistent
    one (None where it keeps none)."""
    from dynid.identify.result.metrics import equation_metrics
    from dynid.identify.validation.validate import model_rows, predict

    file_rows = robot_file_model(result, robot, train, given) if references else None
    runs, error, energy, beside_error, beside_consistent = {}, 0.0, 0.0, 0.0, None
    for run, dataset in held.items():
        prediction = predict(result, robot, dataset, drives=given)
        names = robot.joint_names
        mine = equation_metrics(prediction.measured, prediction.predicted, prediction.joints, names)['joints']
        error += float(np.sum((prediction.measured - prediction.predicted) ** 2))
        energy += float(np.sum(prediction.measured ** 2))
        if prediction.other_estimate is not None:  # the other consistency decision's estimate the result keeps
            beside_error += float(np.sum((prediction.measured - prediction.other_estimate) ** 2))
            beside_consistent = prediction.other_consistent
        rows = {joint: prediction.joints == j for j, joint in enumerate(names)}
        errors = prediction.measured - prediction.predicted
        cells = {joint: {'dynid': m['rmse'], 'fit': m['nrmse_fit_percent'], 'residual': kept(errors[rows[joint]])}
                 for joint, m in mine.items() if m['rmse'] is not None}
        if references and cells:
            theirs = equation_metrics(prediction.measured, file_rows(prediction), prediction.joints, names)['joints']
            model = case.authors_model(dataset)
            authored = None if model is None else model_rows(prediction.problem, model)
            authors = None if model is None else equation_metrics(
                prediction.measured, authored, prediction.joints, names)['joints']
            for joint, cell in cells.items():
                cell['robot_file'] = theirs[joint]['rmse']
                cell['authors'] = authors[joint]['rmse'] if authors is not None else case.authors_quoted.get(joint)
                cell['authors_fit'] = authors[joint]['nrmse_fit_percent'] if authors is not None else None
                if authored is not None:
                    cell['authors_residual'] = kept((prediction.measured - authored)[rows[joint]])
        runs[run] = cells
    return {'runs': runs, 'pooled': [error, energy],
            'beside': None if beside_consistent is None else {'pooled': [beside_error, energy],
                                                              'consistent': beside_consistent}}


#: :func:`ratio_interval`'s resamples, seed and level
RESAMPLES, SEED, LEVEL = 4000, 0, 0.90


def bootstrap_ratios(mine: np.ndarray, theirs: np.ndarray, block: int, rng: np.random.Generator,
                     resamples: int = RESAMPLES) -> np.ndarray:
    """RMSE(mine)/RMSE(theirs) over ``resamples`` moving-block resamples of the rows (Künsch 1989): each draws
    ⌈n/block⌉ runs of ``block`` consecutive rows, the same rows of both error series [N·m]."""
    n = len(mine)
    block = min(block, n)
    starts = rng.integers(0, n - block + 1, size=(resamples, -(-n // block)))
    picked = (starts[:, :, None] + np.arange(block)).reshape(resamples, -1)[:, :n]
    return np.sqrt(np.mean(mine[picked] ** 2, axis=1) / np.mean(theirs[picked] ** 2, axis=1))


def ratio_interval(mine, theirs) -> list[float] | None:
    """The :data:`LEVEL` interval of RMSE(mine)/RMSE(theirs) on the same rows (errors [N·m], in the rows' order), by
    :func:`bootstrap_ratios` in blocks of ⌈n^(1/3)⌉ rows (Hall, Horowitz & Jing 1995); None unless both are given, of
    one length, with at least 8 rows."""
    if mine is None or theirs is None or len(mine) != len(theirs) or len(mine) < 8:
        return None
    mine, theirs = np.asarray(mine, dtype=float), np.asarray(theirs, dtype=float)
    if not np.any(theirs):
        return None
    ratios = bootstrap_ratios(mine, theirs, int(np.ceil(len(mine) ** (1 / 3))), np.random.default_rng(SEED))
    return [round(float(value), 4) for value in np.quantile(ratios, [(1 - LEVEL) / 2, (1 + LEVEL) / 2])]


def kept(errors: np.ndarray) -> list[float]:
    """Errors [N·m] as a cell keeps them (7 digits)."""
    return [float(f'{value:.7g}') for value in np.asarray(errors, dtype=float)]


def named_joints(lines: list[str], joints) -> set:
    """The joints a line beside the words "robot file's own model" names."""
    named = set()
    for line in lines:
        if OWN_MODEL in line:
            named |= {joint for joint in joints if re.search(rf'(?<![\w-]){re.escape(joint)}(?![\w-])', line)}
    return named


def pooled(score: dict) -> float | None:
    error, energy = score['pooled']
    return float(np.sqrt(error / energy)) if energy > 0 else None


class Scorer:
    """Scores :class:`Case` s with one :class:`Runner` (module docstring)."""

    def __init__(self, folder: Path, runner: Runner, quick: bool = False):
        self.folder, self.run, self.quick = folder, runner, quick

    def _identify(self, case: Case, tag: str, *options: str) -> tuple[Call, Path]:
        path = self.folder / f'{case.label}_{tag}.yaml'
        split = [] if case.held else ['--holdout', str(public_datasets.HOLDOUT)]
        argv = ['identify', str(case.train), '--robot', case.robot, *split, *case.extra, *options, '-o', str(path)]
        return self.run(argv), path

    def _validate(self, case: Case, path: Path, *options: str, runs=None) -> Call:
        """``dynid validate`` of the result at ``path`` on the held-out bags (``runs``: those runs only)."""
        bags = [bag for run, bag in case.held.items() if runs is None or run in runs] or [case.train]
        split = [] if case.held else ['--holdout', str(public_datasets.HOLDOUT)]
        sign = ['--torque-sign', 'all=-1'] if case.torque_sign == -1.0 else []
        return self.run(['validate', '--params', str(path), *split, *sign, *options, *map(str, bags)])

    def _model(self, path: Path, robot, case, train, held, given, references=False) -> dict:
        from dynid.identify.result.result import IdentificationResult

        return score_model(IdentificationResult.load(path), robot, case, train, held, given, references)

    def score(self, case: Case) -> dict:
        """The row of one dataset (module docstring of bench_public.py)."""
        from dynid.identify.result.result import IdentificationResult
        from dynid.model import load_robot
        from dynid.model.drives import load_drives

        robot = load_robot(case.robot, **case.robot_options)
        given = None if case.drives is None else load_drives(case.drives, robot.joint_names)
        train, held = recordings(case, robot.joint_names)
        call, path = self._identify(case, 'defaults')
        row = {'authors_source': case.authors_source, 'identify_exit': call.code,
               'identify_warnings': call.warnings}
        refusals = []
        if call.code != 0:
            refusals.append(self._refusal(case, call, robot, train, held, given))
            call, path = self._identify(case, 'forced', '--force')
            row['refused'] = call.code == 0 and refusals[-1]['refusal']
            if call.code != 0:
                return {**row, 'status': f'identify failed even with --force: {call.last_line}', 'refusals': refusals}
        result = IdentificationResult.load(path)
        row.update(method=result.method, friction=result.model['friction'])
        score = score_model(result, robot, case, train, held, given)
        row['runs'], row['pooled'] = score['runs'], pooled(score)
        moving = {run for run, joints in row['runs'].items() if joints}  # static runs: no rows validate scores
        check = self._validate(case, path, runs=moving)
        row['validate_exit'] = check.code
        row['validate_lines'] = [line for line in check.text.splitlines() if OWN_MODEL in line][:20]
        named = named_joints(call.warnings + check.text.splitlines(), robot.joint_names)
        row['named'] = sorted(named)
        row['claims'] = false_claims(case.label, call.warnings + check.warnings)
        row['advice'] = self._advice(case, call.warnings + check.warnings, robot, train, held, given, row['pooled'])
        physical, physical_path = self._identify(case, 'physical', '--physical')
        if physical.code == 0:
            row['physical_pooled'] = pooled(self._model(physical_path, robot, case, train, held, given))
        else:
            row['physical_refused'] = physical.last_line[:300]
            refusals.append(self._refusal(case, physical, robot, train, held, given, ('--physical',), row['pooled']))
        row['refusals'] = refusals
        return row

    def _advice(self, case, lines, robot, train, held, given, before, tag: str = '') -> list[dict]:
        """Each remedy the warnings give, followed as written: whether a warning gives it again, the false claims
        (``public_diagnosis.false_claims``) of the run it gives, and the pooled held-out error after it against
        before."""
        out = []
        for k, option in enumerate(remedies(lines)):
            after, path = self._identify(case, f'{tag}advice{k}', *option.split())
            entry = {'remedy': option, 'exit': after.code}
            if after.code == 0:
                again = self._validate(case, path, *[o for o in option.split() if option.startswith('--torque-sign')])
                entry['repeated'] = option in remedies(after.warnings + again.warnings)
                entry['claims'] = false_claims(case.label, after.warnings + again.warnings)
                entry['pooled_before'] = before
                entry['pooled_after'] = pooled(self._model(path, robot, case, train, held, given))
            else:
                entry['repeated'] = False
                entry['refusal'] = after.last_line[:300]
            out.append(entry)
        return out

    def _refusal(self, case, call, robot, train, held, given, options=(), defaults=None) -> dict:
        """A refusal's first way out run as written and ``--force``, each scored held out (``defaults``: the pooled
        error of the command without ``options``, the way out of a refusal that says to leave one out)."""
        refusal = call.text.strip()[-600:]
        option = way_out(refusal, options)
        entry = {'options': list(options), 'refusal': call.last_line[:300], 'way_out': option}
        forced, forced_path = self._identify(case, 'refusal_force', *options, '--force')
        entry['force_pooled'] = pooled(self._model(forced_path, robot, case, train, held, given)) \
            if forced.code == 0 else None
        if option.startswith('without '):
            entry['way_out_pooled'] = defaults
        elif option:
            out, path = self._identify(case, 'refusal_way', *options, *option.split())
            entry['way_out_exit'] = out.code
            entry['way_out_pooled'] = pooled(self._model(path, robot, case, train, held, given)) \
                if out.code == 0 else None
        # worse: the way out fails or scores above --force; not judged where --force is refused too
        entry['worse_than_force'] = entry['force_pooled'] is not None and (
            entry.get('way_out_pooled') is None or entry['way_out_pooled'] > entry['force_pooled'])
        return entry
