"""The page of ``dynid compare``: a folder with ``index.html`` and PNG plots (the identification report's style).

Plots: every compared parameter's change z = Δ/σ_Δ (:mod:`dynid.identify.validation.compare`) with the ±3 band, and per
held-out recording the measured torque beside both results' predictions. Tables: the parameters ranked by |z|
(values, σ, Δ, relative change) and the held-out NRMSE fit of both per joint.
"""

from __future__ import annotations

import html
from pathlib import Path

import numpy as np

from dynid.files import written
from dynid.identify.outputs.report import html_page, pyplot, torque_plot
from dynid.identify.validation.compare import SIGNIFICANT_Z, Comparison, format_z
from dynid.text import format_number


def _z_plot(path: Path, comparison: Comparison) -> None:
    plt = pyplot()
    changes = [c for c in comparison.changes if c.z is not None]
    z = np.array([c.z for c in changes])
    figure, axis = plt.subplots(figsize=(max(8.0, 0.28 * len(changes)), 3.5))
    colours = np.where(np.abs(z) > SIGNIFICANT_Z, 'tab:red', 'tab:blue')
    axis.bar(np.arange(len(changes)), np.clip(z, -20, 20), color=colours)
    for level in (-SIGNIFICANT_Z, SIGNIFICANT_Z):
        axis.axhline(level, color='grey', linestyle='--', linewidth=1)
    axis.set_xticks(np.arange(len(changes)), [c.name for c in changes], rotation=90, fontsize='x-small')
    axis.set_ylabel('change / σ (clipped at ±20)')
    axis.set_title(f'{comparison.label_b} − {comparison.label_a} in standard deviations', fontsize='small')
    axis.grid(True, alpha=0.3)
    figure.tight_layout()
    figure.savefig(path, dpi=90)
    plt.close(figure)


def _parameter_rows(comparison: Comparison) -> str:
    rows = []
    for c in comparison.ranked():
        cells = (f'{c.a:.6g}', f'{c.std_a:.3g}', f'{c.b:.6g}', f'{c.std_b:.3g}', f'{c.change:+.4g}',
                 format_number(c.relative_percent, '+.3g'), format_z(c.z))
        strong = ' style="font-weight:bold"' if c.significant else ''
        rows.append(f'<tr{strong}><td>{html.escape(c.name)}</td>' + ''.join(f'<td>{x}</td>' for x in cells) + '</tr>')
    return ''.join(rows)


def _heldout_table(comparison: Comparison, recording: str) -> str:
    both = comparison.heldout[recording]
    rows = ''.join(
        f'<tr><td>{html.escape(joint)}</td>'
        f'<td>{format_number(both["a"]["joints"][joint].get("nrmse_fit_percent"), ".2f")}</td>'
        f'<td>{format_number(both["b"]["joints"][joint].get("nrmse_fit_percent"), ".2f")}</td>'
        f'<td>{format_number(both["a"]["joints"][joint].get("rmse"), ".4g")}</td>'
        f'<td>{format_number(both["b"]["joints"][joint].get("rmse"), ".4g")}</td></tr>'
        for joint in comparison.joint_names)
    a, b = (html.escape(label) for label in (comparison.label_a, comparison.label_b))
    return (f'<table><tr><th>joint</th><th>fit {a} [%]</th><th>fit {b} [%]</th><th>RMSE {a} [N·m]</th>'
            f'<th>RMSE {b} [N·m]</th></tr>{rows}</table>')


def _listed(names) -> str:
    return ', '.join(html.escape(n) for n in names) or 'none'


def write_comparison_report(folder, comparison: Comparison, series: dict | None = None) -> Path:
    """Write ``folder/index.html`` and its plots; returns the index path. The folder may exist.

    ``series``: per held-out recording (name as in ``comparison.heldout``) the tuple (times (M,), measured (M, n),
    predicted by A (M, n), predicted by B (M, n), used (M, n)) to plot
    (:func:`dynid.identify.validation.validate.predict_series` of each result; the rows used are A's).
    """
    with written(folder) as staging:  # whole or not at all; other files of an existing folder kept
        staging.mkdir()
        _write_comparison_files(staging, comparison, series)
    return Path(folder) / 'index.html'


def _write_comparison_files(folder: Path, comparison: Comparison, series: dict | None) -> None:
    a, b = comparison.label_a, comparison.label_b
    _z_plot(folder / 'changes.png', comparison)
    heldout = []
    for k, recording in enumerate(comparison.heldout):
        image = ''
        if series and recording in series:
            times, measured, predicted_a, predicted_b, keep = series[recording]
            torque_plot(folder / f'torque_{k + 1}.png', f'{recording}: measured and predicted torque', times,
                        measured, {f'A: {a}': predicted_a, f'B: {b}': predicted_b}, keep, comparison.joint_names)
            image = f'<img src="torque_{k + 1}.png" alt="torques of {html.escape(recording)}">'
        heldout.append(f'<h3>{html.escape(recording)}</h3>{_heldout_table(comparison, recording)}{image}')
    significant = comparison.significant()
    notes = ''.join(f'<li>{html.escape(n)}</li>' for n in comparison.notes)
    body = f'''<h1>Comparison of two identifications</h1>
<p>A: <b>{html.escape(a)}</b><br>B: <b>{html.escape(b)}</b></p>
<p>{len(comparison.changes)} parameters compared; {len(significant)} changed by more than {SIGNIFICANT_Z:g} σ
(σ = √(σ_A² + σ_B²), the two identifications taken as independent): {_listed(c.name for c in significant)}.
Only in A: {_listed(comparison.only_a)}. Only in B: {_listed(comparison.only_b)}. Regrouped differently (not
compared): {_listed(comparison.regrouped)}.</p>
{"<ul>" + notes + "</ul>" if notes else ""}
<h2>Held-out fit</h2>
{"".join(heldout) or "<p>No held-out recording given.</p>"}
<h2>Parameter changes</h2><img src="changes.png" alt="parameter changes in standard deviations">
<table><tr><th>name</th><th>A</th><th>σ A</th><th>B</th><th>σ B</th><th>B − A</th><th>change [%]</th>
<th>z = (B − A)/σ</th></tr>{_parameter_rows(comparison)}</table>'''
    (folder / 'index.html').write_text(html_page(f'dynid comparison: {a} and {b}', body))
