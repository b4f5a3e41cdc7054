"""Every joint of every public dataset dynid reads, identified with the defaults (and only what reading needs) and
held out on rows none of the models saw, beside the data authors' model and the robot file's own model; the same
joints against the figures of the releases before; and what dynid's words lead to when followed.

Run (from a checkout; it scores whatever ``dynid`` it imports, so ``PYTHONPATH=<other checkout>/src`` scores
another)::

    nice -n 5 .venv/bin/python -m benchmarks.bench_public --unisa D --gaz D --dynamic-calibration D --lbr D \\
        --figaroh D --flobaroid D --figaroh-plus D [--quick] [--no-twins] [--record-release NAME] \\
        [--holdout F] [--against DETAIL] [--no-motions | --motions-only] [--alternatives] [--evidence]

Each dataset is a clone given by its folder (or environment variable); how each is read, split and compared, and
whether its authors' model is reproduced or quoted, is in ``public_datasets.py`` (``--unisa``, ``--figaroh``,
``--flobaroid``, ``--dynamic-calibration``), ``public_extra_datasets.py`` (``--gaz``, ``--lbr``) and
``public_tx40.py`` (``--figaroh-plus``: the Stäubli TX40's motor-side logs, a coupled wrist, imported by dynid itself
and scored per joint in motor space, the runs ``motor space``, and joint space, ``joint space``, beside FIGAROH's
refit re-implemented and validate's robot-file model, with its ``--physical``; no advice is followed there); a
dataset not given is ``{"status": "not given"}``. Per joint (for dynamic_calibration per
held-out run and joint): dynid's held-out RMSE [N·m] and fit [%], the authors' model's on the same rows, and the
robot file's own model's (its links as filed, Coulomb + viscous friction and an offset fitted on the training rows:
``public_scoring.py``).

- ``joints_behind_authors``: joints where the authors' model (reproduced or quoted) has the lower held-out RMSE.
- ``joints_behind_robot_file_unnamed``: joints where the robot file's own model has it and neither ``dynid
  identify``'s warnings nor ``dynid validate``'s lines name the joint beside "robot file's own model".
- ``joints_worse_than_previous_release``: joints whose RMSE is more than 3 % above the previous release's figure
  (``public_releases.json``: main e6a614e, recorded with ``--record-release``); ``..._09b880a`` the same against the
  release before it, for information.
- ``physical_over_default_max``: ``--physical`` on each dataset, its pooled held-out error ‖y − ŷ‖/‖y‖ over the
  defaults', the largest (``physical_refused``: the datasets where ``--physical`` is refused).
- ``warnings_repeated_after_advice``: each remedy an identify or validate warning gives, followed as written; a
  repeat is the same remedy given again. ``ways_out_worse_than_force``: each refusal (public or twin), its first way
  out as written scored held out against ``--force``. ``library_warnings_printed``: Python warnings (numpy, scipy,
  cvxpy, ...) that reached the terminal from any dynid command of the run.
- ``weak_*``: the weakly exciting twin cases (``public_twins.py``).
- What the words lead to (issue 71), over the rows, the motions' rows and the twins: ``advice_worse_when_followed``:
  remedies that, followed as written, raised the pooled held-out error (any rise) or were refused;
  ``false_claims_clean``: the scale, unit or gravity claims (and meanings the data's authors do not document) of
  identify and validate on these logs, each read in its authors' units, before and after each advice is followed
  (``public_diagnosis.false_claims``; the TX40's rows: identify's warnings); ``cond_numbers_per_run_max``: the most
  distinct figures one ``dynid identify`` run of this benchmark printed for one condition number (the data alone's,
  or the data's with the prior: ``public_scoring.CONDITIONS``; figures within 0.6 % are one, as 3 digits round).
- ``joints_worse_than_against`` (with ``--against DETAIL``): joints whose RMSE is more than 3 % above their figure
  in another run's detail file (``$TMPDIR/bench_public.json`` of a run of another checkout on the same split);
  ``joints_better_than_against``: more than 3 % below it.

A joint in ``behind_authors`` (where the authors' model is reproduced) or in the ``--against`` lists is printed with
the ratio of the two RMSEs and its 90 % interval over the same held-out rows resampled in blocks
(``public_scoring.ratio_interval``): a split holds out as few as 48 decimated rows per joint, where a few percent is
within what other rows would give. The counts do not depend on it. The releases' figures keep no rows: for an
interval against a release, score its checkout on the same split and give that run's detail file as ``--against``.

``--holdout F``: the last F of each single-recording log held out instead of 0.3 (dynamic_calibration keeps its
held-out runs). A default that moved one split's figures is judged on others too: the model choice's discrete
decisions (a law, an exponent at the grid's floor, the method) can flip with the training rows, and a change tuned on
one split can win there and lose on another (benchmarks/README.md, issue 45: the viscous exponents' grid from 0.1).
The releases' figures are the 0.3 split's, so on another split they are not compared (their counts are null): run
the other checkout on the same split and give its detail file as ``--against``.

``motions`` (issue 71; ``public_motions.py``): every dataset with a second recording or motion of the arm identified
on one and validated on another, both ways where both identify (dynamic_calibration's runs, FloBaRoID's three
measurements, the TX40's two windows; the others say why they have none), per joint beside the authors' model, the
robot file's and the release before (``public_motions_releases.json``: main 349032a; with ``--against``, the other
run's motion rows by the ratio's interval), ``--physical`` beside the defaults per row; the JSON's ``motions``, whose
``rows_without_authors`` names each row (or joint) scored without the authors' model and why.
``--no-motions`` leaves it out, ``--motions-only`` runs it alone (``--record-release`` then records its rows only).
``--alternatives`` scores each motion row's candidates the choice did not take beside it (the other method,
Coulomb + viscous friction, no prior; ``public_motions.alternative_options``) and counts the rows where one is
better by more than 5 % and nothing says so (``alternatives_better_unsaid``; null without ``--alternatives``).

``default_over_consistent_max`` (issue 85): over the motion rows, the defaults' pooled error over the better of it and
``--physical``'s on the same rows (``rows_default_over_consistent``: the rows above 1.02). ``--evidence``
(``public_evidence.py``): what each motion row's identifying recording says of physical consistency on its own folds
(the choice's blocks in time, and regions of (velocity, torque) held out in turn) beside what the other motion says;
``consistency_evidence`` counts the rows where each points the wrong way.

``absurd_figures_printed`` (issue 89): the torque figures any ``dynid`` command of the run printed above ten times its
robot file's largest effort limit, or not finite (``public_scoring.absurd_figures``; listed in the detail file).

``--quick``: dynamic_calibration on 4 of its held-out runs, 3 twin cases with fewer fixed choices. The per-run
detail goes to ``$TMPDIR/bench_public.json``; the last line is JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

from benchmarks import public_datasets, public_diagnosis, public_motions, public_twins, public_tx40
from benchmarks import public_extra_datasets as extra
from benchmarks.public_scoring import ABSURD_PRINTED, Runner, Scorer, kept, ratio_interval

RELEASES = Path(__file__).resolve().parent / 'public_releases.json'
#: The split the releases' figures were recorded on (the last 30 % of each single-recording log held out).
RECORDED_HOLDOUT = 0.3
PREVIOUS, BEFORE = 'e6a614e', '09b880a'
WORSE = 1.03
EXTRA = {'gaz': 'DYNID_GAZ_DATA', 'lbr': 'DYNID_LBR_DATA', 'figaroh_plus': 'DYNID_FIGAROH_PLUS_DATA'}
LABELS = {'unisa': ('unisa_ur10', 'unisa_panda'), 'gaz': ('gaz_panda',), 'dynamic_calibration': ('dyncal_ur10e',),
          'lbr': ('lbr_med7',), 'figaroh': ('figaroh_tiago',), 'flobaroid': ('flobaroid_kuka',),
          'figaroh_plus': ('figaroh_plus_tx40',)}
QUICK_DYNCAL_RUNS = ('ur-20_01_17-ptp_10_points', 'ur-19_09_27-11_28_22', 'ur-20_02_05-20sec_8harm',
                     'ur-20_02_19_15harm50sec')


def cases(args, folder: Path) -> tuple[list, dict]:
    """The :class:`public_datasets.Case` s of the datasets given, and {label: {"status": "not given"}} of the others."""
    given = {option: getattr(args, option) for option in LABELS}
    missing = {label: {'status': 'not given'} for option, labels in LABELS.items() if given[option] is None
               for label in labels}
    gaz = extra.gaz_model(Path(given['gaz']), folder) if given['gaz'] else None
    out = []
    readers = (('unisa', lambda root: public_datasets.unisa_cases(root, folder, gaz)),
               ('gaz', lambda root: extra.gaz_cases(root, folder, gaz)),
               ('dynamic_calibration', lambda root: public_datasets.dynamic_calibration_cases(root, folder)),
               ('lbr', lambda root: extra.lbr_cases(root, folder)),
               ('figaroh', lambda root: public_datasets.figaroh_cases(root, folder)),
               ('flobaroid', lambda root: public_datasets.flobaroid_cases(root, folder)))
    for option, reader in readers:
        if given[option] is not None:
            out += reader(Path(given[option]))
    for case in out:
        if args.quick and case.label == 'dyncal_ur10e':
            case.held = {run: bag for run, bag in case.held.items() if run in QUICK_DYNCAL_RUNS}
    return out, missing


def tx40_rows(root: Path, folder: Path, runner: Runner) -> dict:
    """The TX40's row (``public_tx40.tx40``, its commands through ``runner``): the runs ``motor space`` and ``joint
    space``, per joint dynid's held-out RMSE and fit beside FIGAROH's refit (the authors' column) and validate's
    robot-file model; ``--physical``'s pooled error; the joints named beside the robot file's own model."""
    def run(argv):
        call = runner(argv)
        return call.code, call.text

    entry = public_tx40.tx40(root, folder, run)[public_tx40.LABEL]
    if 'dynid' not in entry:
        return {public_tx40.LABEL: {'status': entry.get('status')}}
    runs = {name: {joint: {'dynid': space['dynid'][joint], 'fit': space['fit'][joint],
                           'authors': space['reference'][joint], 'robot_file': space['robot_file'][joint],
                           'residual': kept(entry['errors'][key][joint]['dynid']),
                           'authors_residual': kept(entry['errors'][key][joint]['reference'])}
                   for joint in public_tx40.JOINTS}
            for name, key, space in (('motor space', 'motor', entry), ('joint space', 'joint', entry['joint_space']))}
    row = {'method': entry['method'], 'friction': entry['friction'], 'authors_source': entry['reference_source'],
           'pooled': entry['pooled'], 'named': entry['named'], 'runs': runs,
           'identify_warnings': entry['identify_warnings'], 'validate_lines': entry['validate_lines'],
           'claims': public_diagnosis.false_claims(public_tx40.LABEL, entry['identify_warnings']),
           'tx40': {key: entry[key] for key in ('split', 'import', 'figaroh', 'joint_side', 'joints_behind_reference')}}
    if 'pooled' in entry['physical']:
        row['physical_pooled'] = entry['physical']['pooled']
    else:
        row['physical_refused'] = entry['physical']['refused']
    return {public_tx40.LABEL: row}


def cells(rows: dict):
    """(label, run, joint, cell) of every joint scored."""
    for label, row in rows.items():
        for run, joints in (row.get('runs') or {}).items():
            for joint, cell in joints.items():
                yield label, run, joint, cell


def releases() -> dict:
    return json.loads(RELEASES.read_text()) if RELEASES.is_file() else {}


def against_figures(path: Path, holdout: float) -> dict[str, dict]:
    """{dataset|run|joint: its cell (held-out RMSE ``dynid``, the rows' errors ``residual`` where kept)} of another
    run's detail file (``--against``), which must be of the same split."""
    detail = json.loads(Path(path).read_text())
    theirs = detail.get('holdout', RECORDED_HOLDOUT)
    if theirs != holdout:
        raise ValueError(f'that run held out the last {theirs:g}, this one {holdout:g}: give both the same --holdout')
    return {f'{label}|{run}|{joint}': cell for label, run, joint, cell in cells(detail.get('rows') or {})}


def figures(rows: dict, twins: dict | None, runner: Runner, holdout: float = RECORDED_HOLDOUT,
            against: dict[str, dict] | None = None) -> dict:
    """The JSON line's counts (module docstring) and the lists of joints behind them: [key, ours, theirs] and, where
    both models' errors on the rows are kept (the authors' reproduced models, ``--against``), the 90 % interval of
    the ratio ours/theirs (``public_scoring.ratio_interval``). The releases' comparisons only on their split
    (:data:`RECORDED_HOLDOUT`), ``against`` another run's cells (:func:`against_figures`)."""
    compared = holdout == RECORDED_HOLDOUT
    recorded = releases() if compared else {}
    out = {'datasets': sum(1 for row in rows.values() if row.get('runs')), 'joints_scored': 0,
           'joints_behind_authors': 0, 'joints_behind_robot_file_unnamed': 0,
           'joints_worse_than_previous_release': 0, f'joints_worse_than_{BEFORE}': 0}
    lists = {'behind_authors': [], 'behind_robot_file_unnamed': []}
    if compared:
        lists.update({'worse_than_previous_release': [], f'worse_than_{BEFORE}': []})
    if against is not None:
        lists.update({'worse_than_against': [], 'better_than_against': []})
    for label, run, joint, cell in cells(rows):
        out['joints_scored'] += 1
        key = f'{label}|{run}|{joint}'
        if cell.get('authors') is not None and cell['dynid'] > cell['authors']:
            lists['behind_authors'].append([key, cell['dynid'], cell['authors'],
                                            ratio_interval(cell.get('residual'), cell.get('authors_residual'))])
        if cell.get('robot_file') is not None and cell['dynid'] > cell['robot_file'] and \
                joint not in rows[label].get('named', ()):
            lists['behind_robot_file_unnamed'].append([key, cell['dynid'], cell['robot_file']])
        for name, tag in ((PREVIOUS, 'worse_than_previous_release'), (BEFORE, f'worse_than_{BEFORE}')):
            then = (recorded.get(name) or {}).get('joints', {}).get(key)
            if then is not None:
                cell[name] = then
                if cell['dynid'] > WORSE * then:
                    lists[tag].append([key, cell['dynid'], then])
        other = (against or {}).get(key)
        if other is not None and (cell['dynid'] > WORSE * other['dynid'] or WORSE * cell['dynid'] < other['dynid']):
            lists['worse_than_against' if cell['dynid'] > other['dynid'] else 'better_than_against'].append(
                [key, cell['dynid'], other['dynid'], ratio_interval(cell.get('residual'), other.get('residual'))])
    out['joints_behind_authors'] = len(lists['behind_authors'])
    out['joints_behind_robot_file_unnamed'] = len(lists['behind_robot_file_unnamed'])
    out['joints_worse_than_previous_release'] = len(lists['worse_than_previous_release']) if compared else None
    out[f'joints_worse_than_{BEFORE}'] = len(lists[f'worse_than_{BEFORE}']) if compared else None
    if against is not None:
        out['joints_worse_than_against'] = len(lists['worse_than_against'])
        out['joints_better_than_against'] = len(lists['better_than_against'])
    ratios = [row['physical_pooled'] / row['pooled'] for row in rows.values()
              if row.get('physical_pooled') is not None and row.get('pooled')]
    out['physical_over_default_max'] = max(ratios) if ratios else None
    out['physical_refused'] = sum(1 for row in rows.values() if row.get('physical_refused'))
    out['warnings_repeated_after_advice'] = sum(entry.get('repeated', False) for row in rows.values()
                                                for entry in row.get('advice', ())) + \
        (twins or {}).get('weak_warnings_repeated_after_advice', 0)
    out['ways_out_worse_than_force'] = sum(entry['worse_than_force'] for row in rows.values()
                                           for entry in row.get('refusals', ())) + \
        (twins or {}).get('weak_refusals_way_out_worse_than_force', 0)
    out['library_warnings_printed'] = len(runner.library)
    out['absurd_figures_printed'] = len(ABSURD_PRINTED)
    lists['absurd_figures_printed'] = [f'{item["command"]}: {item["figure"]} (largest effort limit '
                                       f'{item["limit"]:g} N·m)' for item in ABSURD_PRINTED]
    if twins is not None:
        out.update({key: value for key, value in twins.items() if key.startswith('weak_')})
    return out, lists


def word_figures(rows: dict, motions: dict | None, twins: dict | None, runner: Runner) -> tuple[dict, dict]:
    """The counts of what dynid's words lead to (module docstring: ``advice_worse_when_followed``,
    ``false_claims_clean``, ``cond_numbers_per_run_max``) and their lists, over the rows, the motions' rows and the
    twins, every identify run of this benchmark for the condition numbers."""
    lists = public_diagnosis.words({**rows, **{f'motions {key}': row for key, row in (motions or {}).items()}})
    lists['conditions_printed_twice'] = [[run['command'], quantity, figures] for run in runner.conditions
                                         for quantity, figures in run['figures'].items() if len(figures) > 1]
    twins = twins or {}
    return {'advice_worse_when_followed': len(lists['advice_worse_when_followed'])
            + twins.get('weak_advice_worse_held_out', 0),
            'false_claims_clean': len(lists['false_claims_clean']) + twins.get('weak_false_claims', 0),
            'cond_numbers_per_run_max': runner.most_conditions}, lists


def word_lines(lists: dict) -> list[str]:
    """The human lines of :func:`word_figures`'s lists."""
    lines = [f'{tag}: {len(items)}' for tag, items in lists.items()]
    lines += [f'  advice worse when followed: {key}: {remedy!r} pooled {_number(before)} → '
              f'{"refused" if after is None else _number(after)}'
              for key, remedy, before, after in lists['advice_worse_when_followed']]
    lines += [f'  false claim: {key} ({when}): {line[:200]}' for key, when, line in lists['false_claims_clean']]
    lines += [f'  condition numbers: {command}: {quantity} {", ".join(f"{v:.4g}" for v in figures)}'
              for command, quantity, figures in lists['conditions_printed_twice']]
    return lines


def _number(value, digits: int = 4) -> str:
    return 'n/a' if value is None else f'{value:.{digits}g}'


def table(rows: dict, lists: dict) -> list[str]:
    """The human table: per dataset and joint our figure beside the references (dynamic_calibration: its validation
    run, then every flagged cell)."""
    flagged = {item[0] for items in lists.values() for item in items}
    lines = [f'{"dataset / run / joint":<58} {"dynid":>8} {"fit %":>6} {"authors":>8} {"file":>8} {PREVIOUS:>8} '
             f'{BEFORE:>8}  flags']
    for label, row in rows.items():
        if not row.get('runs'):
            lines.append(f'{label}: {row.get("status")}')
            continue
        physical = row.get('physical_pooled')
        physical = 'refused' if row.get('physical_refused') else _number(physical)
        lines.append(f'{label}: {row["method"]} {row["friction"]}; authors: {row["authors_source"]}; pooled '
                     f'{_number(row["pooled"])}, --physical {physical}; named {row["named"] or "none"}')
        for run, joints in row['runs'].items():
            show = label != 'dyncal_ur10e' or 'ptp' in run or len(row['runs']) == 1
            for joint, cell in joints.items():
                key = f'{label}|{run}|{joint}'
                if not show and key not in flagged:
                    continue
                flags = [tag for tag, items in lists.items() if any(item[0] == key for item in items)]
                lines.append(f'  {run[:24] + " / " + joint:<56} {_number(cell["dynid"]):>8} '
                             f'{_number(cell.get("fit"), 4):>6} {_number(cell.get("authors")):>8} '
                             f'{_number(cell.get("robot_file")):>8} {_number(cell.get(PREVIOUS)):>8} '
                             f'{_number(cell.get(BEFORE)):>8}  {" ".join(flags)}')
        for entry in row.get('advice', ()):
            lines.append(f'  advice {entry["remedy"]!r}: exit {entry["exit"]}, repeated {entry.get("repeated")}, '
                         f'pooled {_number(entry.get("pooled_before"))} → {_number(entry.get("pooled_after"))}')
        for entry in row.get('refusals', ()):
            lines.append(f'  refused {entry["options"]}: way out {entry["way_out"]!r} '
                         f'{_number(entry.get("way_out_pooled"))} vs --force {_number(entry["force_pooled"])}')
    return lines


def twin_lines(twins: dict | None) -> list[str]:
    """The twin section's lines: per case the default against the best fixed choice, and each advice followed."""
    lines = []
    for row in (twins or {}).get('rows', ()):
        least = min((v for v in row['fixed_gravity_scale_min'].values() if v is not None), default=None)
        lines.append(f'weak twin: {row["case"]}: default {row.get("method")} {row.get("friction")} '
                     f'{_number(row["default"])} vs best fixed {_number(row["fixed"].get(row["best_fixed"]))} '
                     f'({row["best_fixed"]}), ratio {_number(row["ratio"])}; gravity below 0.5 unsaid '
                     f'{row.get("gravity_below_half_unsaid")}; fixed choices\' least gravity scale {_number(least)}')
        for entry in row['advice']:
            lines.append(f'  advice {entry["remedy"]!r}: exit {entry["exit"]}, repeated {entry["repeated"]}, held-out '
                         f'{_number(row["default"])} → {_number(entry["residual"])}')
        refusal = row.get('refusal')
        if refusal:
            lines.append(f'  refused: way out {refusal["way_out"]!r} {_number(refusal["way_out_residual"])} vs --force '
                         f'{_number(refusal["force"])}')
    return lines


def record_release(name: str, rows: dict, note: str) -> None:
    """Keep this run's per-joint RMSE as release ``name``'s in :data:`RELEASES`."""
    recorded = releases()
    recorded[name] = {'date': time.strftime('%Y-%m-%d'), 'note': note,
                      'joints': {f'{label}|{run}|{joint}': round(cell['dynid'], 6)
                                 for label, run, joint, cell in cells(rows)}}
    RELEASES.write_text(json.dumps(recorded, indent=1, sort_keys=True) + '\n')


def compact(rows: dict) -> dict:
    """The rows for the JSON line: per joint [dynid, authors, robot file] (the TX40 per space; dynamic_calibration:
    counts only)."""
    out = {}
    for label, row in rows.items():
        if not row.get('runs'):
            out[label] = {'status': row.get('status')}
            continue
        entry = {key: row.get(key) for key in ('method', 'friction', 'authors_source', 'pooled', 'physical_pooled',
                                                'named')}
        if len(row['runs']) == 1:
            entry['joints'] = {joint: [cell['dynid'], cell.get('authors'), cell.get('robot_file')]
                               for joint, cell in next(iter(row['runs'].values())).items()}
        elif len(row['runs']) == 2:  # the TX40's motor and joint space
            entry['runs'] = {run: {joint: [cell['dynid'], cell.get('authors'), cell.get('robot_file')]
                                   for joint, cell in joints.items()} for run, joints in row['runs'].items()}
        else:
            entry['runs'] = len(row['runs'])
            entry['cells'] = sum(len(joints) for joints in row['runs'].values())
        out[label] = entry
    return out


def motions_section(args, folder: Path, runner: Runner) -> tuple[dict, dict, dict]:
    """The ``motions`` section (``public_motions.py``): its rows, counts (against ``--against``'s motion rows where
    given, else the release's figures) and lists."""
    rows = public_motions.run({option: getattr(args, option) for option in public_motions.OPTIONS}, folder, runner,
                              args.alternatives, args.evidence)
    against = public_motions.against_cells(json.loads(args.against.read_text())) if args.against else None
    recorded = public_motions.releases().get(public_motions.PREVIOUS) if args.holdout == RECORDED_HOLDOUT else None
    counts, lists = public_motions.counts(rows, against, recorded)
    return rows, counts, lists


def print_lists(lists: dict) -> None:
    for tag, items in lists.items():
        print(f'{tag}: {len(items)}' + ''.join(f'\n  {item[0]}: {item[1]:.4g} vs {item[2]:.4g}' + (
            f' (ratio {item[1] / item[2]:.3f}, 90 % over these rows {item[3][0]:.3f}–{item[3][1]:.3f})'
            if len(item) > 3 and isinstance(item[3], list) else
            f' (ratio {item[1] / item[2]:.3f}, {item[3]})' if len(item) > 3 and item[3] else '') for item in items))


def dynid_source() -> str:
    """The folder of the dynid scored and its checkout's commit, where it is one."""
    import subprocess

    import dynid
    folder = Path(dynid.__file__).resolve().parents[1]
    commit = subprocess.run(['git', '-C', str(folder), 'rev-parse', '--short', 'HEAD'], capture_output=True, text=True)
    return f'{folder}' + (f' at {commit.stdout.strip()}' if commit.returncode == 0 else '')


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--quick', action='store_true', help='a fast subset (module docstring)')
    parser.add_argument('--no-twins', action='store_true', help='leave the weakly exciting twin cases out')
    parser.add_argument('--record-release', metavar='NAME', help=f'keep the per-joint figures as NAME\'s in '
                                                                 f'{RELEASES.name}')
    parser.add_argument('--holdout', type=float, default=RECORDED_HOLDOUT, metavar='F',
                        help='the last F of each single-recording log held out (default %(default)s; module docstring)')
    parser.add_argument('--against', type=Path, metavar='DETAIL',
                        help="another run's $TMPDIR/bench_public.json on the same split: joints more than 3 %% worse "
                             'or better than there')
    section = parser.add_mutually_exclusive_group()
    parser.add_argument('--evidence', action='store_true',
                        help='what each motion row\'s identifying recording says of physical consistency on its own '
                             'folds, beside the other motion (public_evidence.py)')
    section.add_argument('--no-motions', action='store_true', help='leave the motions section out')
    section.add_argument('--motions-only', action='store_true', help='the motions section alone')
    parser.add_argument('--alternatives', action='store_true',
                        help='the motions\' rows identified again with each candidate the choice did not take '
                             '(public_motions.alternative_options) and scored beside the defaults')
    public_datasets.add_arguments(parser)
    for option, env in EXTRA.items():
        parser.add_argument(f'--{option.replace("_", "-")}', type=Path, default=os.environ.get(env) or None,
                            metavar='DIR', help=f'checkout of the dataset (default ${env}; public_extra_datasets.py)')
    args = parser.parse_args()
    if not 0.05 <= args.holdout <= 0.5:
        parser.error(f'--holdout {args.holdout:g}: give a share of the log between 0.05 and 0.5')
    if args.record_release and args.holdout != RECORDED_HOLDOUT:
        parser.error(f'--record-release: the releases are recorded on --holdout {RECORDED_HOLDOUT:g}')
    try:
        against = against_figures(args.against, args.holdout) if args.against else None
    except (OSError, ValueError, KeyError) as error:
        parser.error(f'--against {args.against}: {error}')
    public_datasets.HOLDOUT = public_tx40.HOLDOUT = args.holdout
    start = time.perf_counter()
    runner = Runner()
    motions = None
    with tempfile.TemporaryDirectory(prefix='bench_public_') as scratch:
        folder = Path(scratch)
        if args.motions_only:
            motions = motions_section(args, folder, runner)
            return motions_only(args, motions, runner, start)
        given, rows = cases(args, folder)
        scorer = Scorer(folder, runner, args.quick)
        for case in given:
            public_datasets.say(f'{case.label}: scoring' if case.status is None else f'{case.label}: {case.status}')
            rows[case.label] = {'status': case.status} if case.status is not None else scorer.score(case)
        if args.figaroh_plus is not None:
            public_datasets.say(f'{public_tx40.LABEL}: scoring')
            rows.update(tx40_rows(Path(args.figaroh_plus), folder, runner))
        twins = None if args.no_twins else public_twins.run_all(folder, runner, args.quick, public_datasets.say)
        if not args.no_motions:
            motions = motions_section(args, folder, runner)
    counts, lists = figures(rows, twins, runner, args.holdout, against)
    said, words = word_figures(rows, motions and motions[0], twins, runner)
    counts.update(said)
    source = dynid_source()
    print(f'dynid on the public datasets, held out (dynid from {source}; {os.cpu_count()} cores, load '
          f'{os.getloadavg()[0]:.1f}, {time.perf_counter() - start:.0f} s); RMSE [N·m]; authors and file on the same '
          f'rows; {PREVIOUS} and {BEFORE}: the releases\' figures' + (
              '' if args.holdout == RECORDED_HOLDOUT else
              f' (not compared: this run holds out the last {args.holdout:g}, they the last {RECORDED_HOLDOUT:g})'))
    print('\n'.join(table(rows, lists) + twin_lines(twins) + [
        f'library warning ({item["command"]}): {item["category"]}: {item["message"]} [{item["where"]}]'
        for item in runner.library]))
    print_lists(lists)
    print('\n'.join(word_lines(words)))
    if motions is not None:
        print('\n'.join(public_motions.table(motions[0], motions[2])))
        print_lists({f'motions {tag}': items for tag, items in motions[2].items()})
    if args.record_release:
        record_release(args.record_release, rows, f'load {os.getloadavg()[0]:.1f}, dynid from {source}')
        if motions is not None:
            public_motions.record_release(args.record_release, motions[0], f'dynid from {source}')
    detail = Path(tempfile.gettempdir()) / 'bench_public.json'
    detail.write_text(json.dumps({'holdout': args.holdout, 'source': source, 'rows': rows, 'twins': twins,
                                  'lists': lists, 'words': words, 'library': runner.library,
                                  'motions': motions and motions[0], 'motions_lists': motions and motions[2]},
                                 indent=1, default=float))
    public_datasets.say(f'detail: {detail}')
    block = {} if motions is None else {'motions': {**motions[1], 'rows_detail': public_motions.compact(motions[0])}}
    print(json.dumps({'benchmark': 'public', 'holdout': args.holdout, **counts, 'rows': compact(rows), **block},
                     default=float))


def motions_only(args, motions: tuple, runner: Runner, start: float) -> None:
    """``--motions-only``: the section's table, lists, detail file and JSON line."""
    rows, counts, lists = motions
    said, words = word_figures({}, rows, None, runner)
    source = dynid_source()
    print(f'dynid on the public datasets\' other motions (dynid from {source}; {os.cpu_count()} cores, load '
          f'{os.getloadavg()[0]:.1f}, {time.perf_counter() - start:.0f} s); RMSE [N·m]')
    print('\n'.join(public_motions.table(rows, lists)))
    print_lists({f'motions {tag}': items for tag, items in lists.items()})
    print('\n'.join(word_lines(words)))
    if args.record_release:
        public_motions.record_release(args.record_release, rows, f'dynid from {source}')
    detail = Path(tempfile.gettempdir()) / 'bench_public.json'
    detail.write_text(json.dumps({'holdout': args.holdout, 'source': source, 'motions': rows, 'motions_lists': lists,
                                  'words': words, 'library': runner.library}, indent=1, default=float))
    public_datasets.say(f'detail: {detail}')
    print(json.dumps({'benchmark': 'public', 'holdout': args.holdout, 'seconds': round(time.perf_counter() - start),
                      **said, 'absurd_figures_printed': len(ABSURD_PRINTED),
                      'motions': {**counts, 'library_warnings_printed': len(runner.library),
                                  'rows_detail': public_motions.compact(rows)}}, default=float))


if __name__ == '__main__':
    main()
