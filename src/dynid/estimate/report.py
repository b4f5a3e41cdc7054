"""Files of a replay (``dynid estimate``): result YAML, history CSV, and an HTML convergence report.

- ``OUT.yaml``: ``dynid_estimate: 1``, robot and joints, inputs, settings, the summary (final values
  per joint) and where the history is.
- ``OUT.csv`` beside it: the history decimated to ``HISTORY_RATE_HZ`` (every k-th described sample,
  the last one always kept), one row per sample: ``time_s`` [s], then per joint ``<joint>/alpha1``
  [N·m/rad], ``<joint>/alpha3`` [N·m/rad³] (…), ``<joint>/fit_percent``, ``<joint>/learning`` (0/1),
  ``<joint>/friction_alpha1`` [-], ``<joint>/friction_alpha2`` [N·m·s/rad], ``<joint>/friction_active``
  (0/1). A CSV, not YAML lists: hours at 100 Hz stay small and open in any plotting tool.
- A report folder: ``index.html`` with the convergence of k0 = α̂1 (Madsen, Rosenlund, Brandt and
  Zhang 2019, eqs. (9)–(10)), of the running fit (eq. (15)) and of the friction α̂ (Madsen 2020, ch.6
  eq. (24)) per joint. Where the bag folder holds the ``truth.yaml`` of ``dynid simulate``, the twin's
  true α1, true Coulomb scale and viscous excess (with their scheduled changes, ``simulation.joint_changes``)
  are drawn over the estimates.
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import yaml

from dynid import __version__
from dynid.errors import InputError
from dynid.estimate.replay import EstimationHistory
from dynid.files import read_yaml, write_text, written

HISTORY_RATE_HZ = 100.0
PLOT_POINTS = 4000  # points per line at most (plots of hour-long replays stay quick)


@dataclass(frozen=True)
class TwinTruth:
    """The twin's true joint stiffness α1 [N·m/rad], Coulomb scale [-] and viscous excess [N·m·s/rad] over time.

    ``change_s`` (K,) are the times [s, dataset clock] of the applied changes; row k of ``alpha1``,
    ``coulomb_scale`` and ``viscous_excess`` ((K + 1, J), joints of the history) holds the values after k
    changes. The Coulomb scale and the viscous excess (Fv1 − its value when the twin was made) are what the
    adaptive friction's α1 and α2 estimate.
    """

    change_s: np.ndarray
    alpha1: np.ndarray
    coulomb_scale: np.ndarray
    viscous_excess: np.ndarray | None = None

    def _row(self, time) -> np.ndarray:
        return np.searchsorted(self.change_s, np.asarray(time, dtype=float), side='right')

    def at(self, time) -> tuple[np.ndarray, np.ndarray]:
        """(α1, Coulomb scale) (N, J) at times (N,) [s]."""
        row = self._row(time)
        return self.alpha1[row], self.coulomb_scale[row]

    def viscous_excess_at(self, time) -> np.ndarray | None:
        """The viscous excess [N·m·s/rad] (N, J) at times (N,) [s], or None where the truth has none."""
        return None if self.viscous_excess is None else self.viscous_excess[self._row(time)]


def load_truth(bag, joint_names, start_s: float = 0.0) -> TwinTruth | None:
    """The truth.yaml of ``dynid simulate`` in the bag folder, or None when there is none.

    ``start_s`` is the twin time [s] of the dataset's first sample (its first stamp), so that change
    times land on the dataset clock. Raises InputError for a truth.yaml that does not fit.
    """
    path = Path(bag) / 'truth.yaml'
    if not path.is_file():
        return None
    document = read_yaml(path, 'truth file')
    try:
        plant = document['plant']
        index = [list(plant['joint_names']).index(name) for name in joint_names]
        alpha1 = np.asarray(plant['joints']['alpha1'], dtype=float)[index]
        coulomb = np.asarray(plant['joints']['coulomb'], dtype=float)[index]
        viscous = np.asarray(plant['joints']['viscous1'], dtype=float)[index]
        rows, scales, excesses, times = [alpha1], [np.ones(len(index))], [np.zeros(len(index))], []
        for change in (document.get('simulation') or {}).get('joint_changes') or []:
            if change.get('applied_s') is None:
                continue
            a, c, v = rows[-1].copy(), scales[-1].copy(), excesses[-1].copy()
            for name, after in (change.get('after') or {}).items():
                j = list(joint_names).index(name)
                a[j] = float(after['alpha1'])
                c[j] = float(after['coulomb']) / coulomb[j]
                v[j] = float(after['viscous1']) - viscous[j]
            rows.append(a)
            scales.append(c)
            excesses.append(v)
            times.append(float(change['applied_s']) - start_s)
    except (KeyError, TypeError, ValueError, IndexError, AttributeError) as error:  # a section of another shape
        raise InputError(f'{path}: not a truth file of this robot ({type(error).__name__}: {error})') from None
    return TwinTruth(np.array(times), np.array(rows), np.array(scales), np.array(excesses))


# ------------------------------------------------------------------------------- YAML and CSV
def history_table(history: EstimationHistory, rate_hz: float = HISTORY_RATE_HZ) -> tuple[list[str], np.ndarray]:
    """(column names, rows) of the decimated history (module docstring)."""
    n = history.time.size
    stride = max(1, int(round(history.rate_hz / rate_hz)))
    rows = np.arange(0, n, stride)
    if rows[-1] != n - 1:
        rows = np.append(rows, n - 1)
    names, columns = ['time_s'], [history.time[rows]]
    for j, joint in enumerate(history.joint_names):
        if history.stiffness_alpha is not None:
            for p in range(history.stiffness_alpha.shape[2]):
                names.append(f'{joint}/alpha{2 * p + 1}')
                columns.append(history.stiffness_alpha[rows, j, p])
            names += [f'{joint}/fit_percent', f'{joint}/learning']
            columns += [history.fit[rows, j], history.learning[rows, j].astype(float)]
        if history.friction_alpha is not None:
            names += [f'{joint}/friction_alpha1', f'{joint}/friction_alpha2', f'{joint}/friction_active']
            columns += [history.friction_alpha[rows, j, 0], history.friction_alpha[rows, j, 1],
                        history.friction_active[rows, j].astype(float)]
    return names, np.column_stack(columns)


def save_estimation(path, history: EstimationHistory, robot: str, inputs: dict) -> tuple[Path, Path]:
    """Write ``path`` (YAML) and the history CSV beside it (same name, ``.csv``); returns both paths."""
    path = Path(path)
    table = path.with_suffix('.csv')
    names, rows = history_table(history)
    with written(table) as staging:
        np.savetxt(staging, rows, delimiter=',', header=','.join(names), comments='', fmt='%.10g')
    document = {
        'dynid_estimate': 1, 'robot': robot, 'joint_names': list(history.joint_names), 'inputs': inputs,
        'settings': history.settings.to_dict(), 'summary': history.summary(),
        'history': {'file': table.name, 'rate_hz': min(HISTORY_RATE_HZ, history.rate_hz), 'columns': names},
        'software': {'dynid': __version__}}
    write_text(path, yaml.safe_dump(document, sort_keys=False, allow_unicode=True))
    return path, table


def summary_lines(history: EstimationHistory, truth: TwinTruth | None = None) -> list[str]:
    """A table for people: final estimates per joint; the friction's Coulomb level as a change of the identified
    one, an estimate on a bound of its projection box marked ``capped``, and with the twin's ``truth`` its true
    Coulomb scale and viscous excess at the end beside α̂1 and α̂2."""
    s = history.summary()
    lines = [f'replayed {s["samples"]} samples ({s["end_s"] - s["start_s"]:.4g} s at {s["rate_hz"]:.4g} Hz, '
             f'{s["pieces"]} contiguous piece{"s" if s["pieces"] > 1 else ""})']
    if history.gaps.gaps:
        lines.append('warning: ' + history.gaps.line('recording'))
    friction = history.friction_alpha is not None
    true_scale = truth.at(history.time[-1:])[1][0] if truth is not None and friction else None
    true_excess = truth.viscous_excess_at(history.time[-1:]) if true_scale is not None else None
    header = f'  {"joint":<22}'
    if history.stiffness_alpha is not None:
        header += f' {"k0 [N·m/rad]":>13} {"fit [%]":>8} {"φmax [mrad]":>11}'
    if friction:
        header += f' {"friction α1":>11} {"Coulomb":>8} {"α2 [N·m·s/rad]":>14}'
        header += f' {"true α1":>8} {"error":>7}' if true_scale is not None else ''
        header += f' {"true α2":>8}' if true_excess is not None else ''
    lines.append(header)
    capped = []
    for j, (name, entry) in enumerate(s['joints'].items()):
        line = f'  {name:<22}'
        if history.stiffness_alpha is not None and entry['k0'] is None:
            line += f' {entry["stiffness"]:>34}'
        elif history.stiffness_alpha is not None:
            line += f' {entry["k0"]:>13.5g} {entry["fit_percent"]:>8.1f} {1e3 * entry["phi_max"]:>11.3g}'
        if friction:
            alpha1, alpha2 = entry['friction_alpha1'], entry['friction_alpha2']
            line += f' {alpha1:>11.4f} {100 * (alpha1 - 1):>+7.0f}% {alpha2:>14.4g}'
            if true_scale is not None:
                line += f' {true_scale[j]:>8.4g} {100 * (alpha1 / true_scale[j] - 1):>+6.1f}%'
            if true_excess is not None:
                line += f' {true_excess[0, j]:>8.4g}'
            marks = [f'α̂{p} capped at its {_side(entry[f"friction_alpha{p}"], entry[f"friction_alpha{p}_bounds"])} '
                     f'bound {_bound(entry, p):g}' for p in (1, 2) if entry.get(f'friction_alpha{p}_capped')]
            if marks:
                line += '  ' + ', '.join(marks)
                capped.append(name)
        lines.append(line)
    if capped:
        lines.append(f'warning: friction estimates capped on {", ".join(capped)}: the projection box, not the data, '
                     'sets them, and the truth may lie beyond (widen it: friction_change, alpha1_bounds, '
                     'alpha2_bounds)')
    return lines + [f'note: {note}' for note in history.notes]


def _side(value: float, bounds) -> str:
    return 'upper' if value >= bounds[1] else 'lower'


def _bound(entry: dict, p: int) -> float:
    bounds = entry[f'friction_alpha{p}_bounds']
    return bounds[1] if _side(entry[f'friction_alpha{p}'], bounds) == 'upper' else bounds[0]


# ------------------------------------------------------------------------------------- report
def _figure():
    import matplotlib

    matplotlib.use('Agg')
    import matplotlib.pyplot as plt

    return plt


def _plot(path: Path, history: EstimationHistory, panels: list, title: str) -> None:
    """One row per joint, one column per panel (label, unit, (N, J) values, truth (N, J) or None, y-limits or None[,
    per joint the box edges to draw or None])."""
    plt = _figure()
    step = max(1, history.time.size // PLOT_POINTS)
    t = history.time[::step]
    J = len(history.joint_names)
    figure, axes = plt.subplots(J, len(panels), sharex=True, squeeze=False, figsize=(5.5 * len(panels), 1.8 * J))
    for column, (label, unit, values, truth, limits, *box) in enumerate(panels):
        for j, name in enumerate(history.joint_names):
            axis = axes[j, column]
            axis.plot(t, values[::step, j], linewidth=1, label='estimated')
            if truth is not None:
                axis.plot(t, truth[::step, j], linewidth=1, linestyle='--', color='black', label='true (twin)')
            for k, edge in enumerate(box[0][j] if box and box[0] is not None else ()):
                axis.axhline(edge, linewidth=0.8, linestyle=':', color='tab:red', label=None if k else 'box edge')
            if limits is not None:
                low, high = limits(values[:, j], None if truth is None else truth[:, j])
                if np.isfinite(low) and np.isfinite(high) and high > low:
                    axis.set_ylim(low, high)
            axis.set_ylabel(f'{name}\n{label} [{unit}]', fontsize='x-small')
            axis.grid(True, alpha=0.3)
        axes[-1, column].set_xlabel('time [s]')
    axes[0, 0].legend(loc='best', fontsize='x-small')
    figure.suptitle(title)
    figure.tight_layout()
    figure.savefig(path, dpi=80)
    plt.close(figure)


def _edges(history: EstimationHistory, p: int):
    """(J, 2) edges of α̂_p's projection box where they are near the estimates (within their span), else None."""
    if history.friction_bounds is None:
        return None
    values = history.friction_alpha[:, :, p]
    span = np.ptp(values, axis=0) + np.abs(values).max(axis=0) + 1e-9
    edges = history.friction_bounds[:, p]
    near = np.abs(edges - values.mean(axis=0)[:, None]) <= span[:, None]  # far edges would squash the curve
    return [edges[j][near[j]] for j in range(edges.shape[0])]


def _stiffness_limits(values, truth):
    reference = truth if truth is not None else values[np.isfinite(values)]
    top = np.max(np.abs(reference)) if reference.size else np.nan
    return (0.0, 1.6 * top) if top > 0 else (np.nan, np.nan)


def _fit_limits(values, truth):
    finite = values[np.isfinite(values)]
    return (max(float(finite.min()), -100.0) - 5.0, 105.0) if finite.size else (np.nan, np.nan)


def _cell(value) -> str:
    """A summary value for the page: numbers to 5 digits, pairs as [a, b], flags as yes/no."""
    if value is None:
        return ''
    if isinstance(value, str):
        return html.escape(value)
    if isinstance(value, bool):
        return 'yes' if value else 'no'
    if isinstance(value, list):
        return '[' + ', '.join(f'{v:.4g}' for v in value) + ']'
    return f'{value:.5g}'


def write_estimation_report(folder, history: EstimationHistory, truth: TwinTruth | None = None,
                            title: str = 'recording') -> Path:
    """Write ``folder/index.html`` and its PNG plots; returns the index path. The folder may exist (its other
    files are kept); the page and plots are written whole or not at all (:func:`dynid.files.written`)."""
    with written(folder) as staging:
        staging.mkdir()
        _write_estimation_files(staging, history, truth, title)
    return Path(folder) / 'index.html'


def _write_estimation_files(folder: Path, history: EstimationHistory, truth: TwinTruth | None, title: str) -> None:
    true_alpha1, true_scale = truth.at(history.time) if truth is not None else (None, None)
    images = []
    if history.stiffness_alpha is not None:
        _plot(folder / 'stiffness.png', history,
              [('k0 = α̂1', 'N·m/rad', history.k0, true_alpha1, _stiffness_limits),
               ('fit', '%', history.fit, None, _fit_limits)],
              'joint stiffness: k0 = α̂1 (RLS-DF*) and the running NRMSE fit of τ_E')
        images.append(('Joint stiffness', 'stiffness.png'))
    if history.friction_alpha is not None:
        _plot(folder / 'friction.png', history,
              [('α̂1', '-', history.friction_alpha[:, :, 0], true_scale, None, _edges(history, 0)),
               ('α̂2', 'N·m·s/rad', history.friction_alpha[:, :, 1],
                truth.viscous_excess_at(history.time) if truth is not None else None, None, _edges(history, 1))],
              'adaptive E-GMS friction: Coulomb scale α̂1 and excess viscous α̂2')
        images.append(('Friction', 'friction.png'))
    summary = history.summary()
    keys = list(dict.fromkeys(k for entry in summary['joints'].values() for k in entry))  # a joint may add one
    header = ''.join(f'<th>{html.escape(k)}</th>' for k in keys)
    true_columns = [] if truth is None else [  # (header, values at the end) of the quantities estimated
        (label, values[0]) for label, values, shown in zip(
            ('true alpha1 at the end [N·m/rad]', 'true Coulomb scale at the end'), truth.at(history.time[-1:]),
            (history.stiffness_alpha is not None, history.friction_alpha is not None), strict=True) if shown]
    header += ''.join(f'<th>{html.escape(label)}</th>' for label, _ in true_columns)
    rows = ''
    for j, (name, entry) in enumerate(summary['joints'].items()):
        cells = ''.join(f'<td>{_cell(entry.get(k))}</td>' for k in keys)
        cells += ''.join(f'<td>{values[j]:.5g}</td>' for _, values in true_columns)
        rows += f'<tr><td>{html.escape(name)}</td>{cells}</tr>'
    settings = ', '.join(f'{k} = {v}' for k, v in history.settings.to_dict().items())
    notes = ''.join(f'<li>{html.escape(note)}</li>' for note in history.notes)
    gaps = history.gaps.line(title)
    page = f'''<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>dynid estimation: {html.escape(title)}</title>
<style>body{{font-family:sans-serif;margin:2em}}table{{border-collapse:collapse}}
td,th{{border:1px solid #ccc;padding:2px 6px;font-size:small}}img{{max-width:100%}}</style></head><body>
<h1>Online estimation replayed on {html.escape(title)}</h1>
<p>{summary["samples"]} described samples, {summary["start_s"]:.4g}–{summary["end_s"]:.4g} s at
{summary["rate_hz"]:.4g} Hz in {summary["pieces"]} contiguous piece(s); {html.escape(gaps)}. Each estimate is
drawn at the time of the sample it describes ({summary["delay_samples"]} samples before the newest input).
{"The dashed lines are the twin's truth (truth.yaml)." if truth is not None else ""}</p>
<p>settings: {html.escape(settings)}</p>
{"<h2>Notes</h2><ul>" + notes + "</ul>" if notes else ""}
<h2>Final estimates</h2>
<table><tr><th>joint</th>{header}</tr>{rows}</table>
{"".join(f'<h2>{label}</h2><img src="{image}" alt="{label}">' for label, image in images)}
</body></html>
'''
    (folder / 'index.html').write_text(page)
