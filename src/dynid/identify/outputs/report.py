"""Identification report: a folder with ``index.html`` and PNG plots (matplotlib, Agg backend).

Plots: measured and predicted torque per joint over time (first recording of each set), residual
histograms per joint, and the base parameters with ±3σ error bars (normalized by their value).
The page lists the model, the recordings with their lost samples (one line each, the gaps behind a
fold), the metrics (training and validation) and every parameter with its expression in standard
parameters, value, standard deviation and relative %. The physical-consistency section gives the share
of random states where M(q) is positive definite and, for a physically consistent result, each link's
mass, centre of mass, principal moments and triangle inequalities beside the robot file's (the prior).
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from pathlib import Path

import numpy as np

from dynid.files import written
from dynid.identify.result.quality import MISFIT_AUTOCORRELATION
from dynid.identify.result.result import IdentificationResult
from dynid.identify.solve.drive_gains import diagnostics_lines
from dynid.identify.validation.validate import predict_series
from dynid.io.dataset import Dataset
from dynid.io.gaps import GapSummary
from dynid.model.robot import RobotModel
from dynid.signal.preprocess import describe_filters
from dynid.text import format_number


def html_page(title: str, body: str) -> str:
    """A report page: the house style around ``body`` (HTML), titled ``title`` (text)."""
    return f'''<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>{html.escape(title)}</title>
<style>body{{font-family:sans-serif;margin:2em}}table{{border-collapse:collapse}}
td,th{{border:1px solid #ccc;padding:2px 6px;font-size:small}}img{{max-width:100%}}</style></head><body>
{body}
</body></html>
'''


def pyplot():
    """matplotlib.pyplot on the Agg backend (files only, no display)."""
    import matplotlib

    matplotlib.use('Agg')
    import matplotlib.pyplot as plt

    return plt


def torque_plot(path: Path, title: str, times, measured, predicted, keep, joint_names) -> None:
    """Measured and predicted torque [N·m] per joint over time [s] into the PNG ``path``; ``predicted`` is one
    (M, n) array or a mapping label → array (several models of the same recording), ``keep`` (M, n) the rows
    used (the others drawn grey)."""
    plt = pyplot()
    n = len(joint_names)
    predictions = predicted if isinstance(predicted, Mapping) else {'predicted': predicted}
    figure, axes = plt.subplots(n, 1, sharex=True, figsize=(11, 1.9 * n))
    for j, axis in enumerate(np.atleast_1d(axes)):
        axis.plot(times, measured[:, j], label='measured', linewidth=1)
        for label, values in predictions.items():
            axis.plot(times, values[:, j], label=label, linewidth=1, linestyle='--')
        dropped = ~keep[:, j]
        if np.any(dropped):
            axis.plot(times[dropped], measured[dropped, j], '.', markersize=2, color='grey', label='not used')
        axis.set_ylabel(f'{joint_names[j]}\n[N·m]', fontsize='small')
        axis.grid(True, alpha=0.3)
    np.atleast_1d(axes)[0].legend(loc='upper right', fontsize='small', ncol=2 + len(predictions))
    np.atleast_1d(axes)[-1].set_xlabel('time [s]')
    figure.suptitle(title)
    figure.tight_layout()
    figure.savefig(path, dpi=90)
    plt.close(figure)


def _residual_plot(path: Path, residuals: list[np.ndarray], joint_names) -> None:
    plt = pyplot()
    figure, axes = plt.subplots(1, len(joint_names), figsize=(2.2 * len(joint_names), 2.6))
    for axis, name, residual in zip(np.atleast_1d(axes), joint_names, residuals, strict=True):
        axis.hist(residual, bins=40)
        axis.set_title(name, fontsize='small')
        axis.set_xlabel('residual [N·m]', fontsize='small')
    figure.tight_layout()
    figure.savefig(path, dpi=90)
    plt.close(figure)


def _parameter_plot(path: Path, result: IdentificationResult) -> None:
    plt = pyplot()
    names = [n for n in result.parameter_names if n in result.base_expressions]
    index = [result.parameter_names.index(n) for n in names]
    values, std = result.values[index], result.std[index]
    scale = np.where(np.abs(values) > 0, np.abs(values), 1.0)
    figure, axis = plt.subplots(figsize=(max(8, 0.28 * len(names)), 3.5))
    axis.errorbar(np.arange(len(names)), values / scale, yerr=3 * std / scale, fmt='o', markersize=3, capsize=2)
    axis.set_xticks(np.arange(len(names)), names, rotation=90, fontsize='x-small')
    axis.set_ylabel('value / |value| (±3σ)')
    axis.set_ylim(-3, 3)
    axis.grid(True, alpha=0.3)
    figure.tight_layout()
    figure.savefig(path, dpi=90)
    plt.close(figure)


def _metrics_table(metrics: dict) -> str:
    """Metrics of one set of recordings; what could not be scored shows as n/a, with its warning."""
    whiteness = metrics.get('residual_lag1_autocorrelation')  # training only (dynid.identify.result.quality)
    whiteness_head = f'<th>residual lag-1 autocorrelation (misfit above {MISFIT_AUTOCORRELATION:g})</th>'
    rows = ''.join(f'<tr><td>{html.escape(name)}</td><td>{format_number(m["rmse"], ".4g")}</td>'
                   f'<td>{format_number(m["nrmse_fit_percent"], ".2f")}</td><td>{m.get("rows", "")}</td>'
                   + (f'<td>{format_number(whiteness.get(name), ".2f")}</td>' if whiteness else '') + '</tr>'
                   for name, m in metrics['joints'].items())
    notes = ''.join(f'<li>{html.escape(w)}</li>' for w in metrics.get('warnings', []))
    return (f'<p>relative residual ‖y − ŷ‖/‖y‖ = {format_number(metrics["relative_residual"], ".4g")}, RMSE '
            f'{format_number(metrics["rmse"], ".4g")} N·m, {metrics["rows"]} equations</p>'
            + (f'<ul>{notes}</ul>' if notes else '')
            + '<table><tr><th>joint</th><th>RMSE [N·m]</th><th>NRMSE fit [%]</th><th>rows scored</th>'
            + (whiteness_head if whiteness else '') + '</tr>'
            f'{rows}</table>')


def _gap_table(summary: GapSummary) -> str:
    rows = ''.join(f'<tr><td>{g.start_s:.4f}</td><td>{g.duration_s * 1e3:.4g}</td><td>{g.lost}</td></tr>'
                   for g in summary.gaps)
    return (f'<table><tr><th>start [s]</th><th>duration [ms]</th><th>samples lost</th></tr>{rows}</table>'
            f'<p>nominal period {summary.period_s * 1e3:.4g} ms</p>')


def _recording_lines(result: IdentificationResult, training: list[Dataset],
                     validation: list[Dataset]) -> list[tuple[str, GapSummary]]:
    """(one line, gaps) per recording. The line is the one identification or validation wrote when the
    result holds it (it also counts the contiguous pieces used), else one made from the stamps."""
    inputs = result.provenance.get('inputs') or []
    if len(inputs) != len(training):  # another result's recordings, or an older result listing pieces
        inputs = [{}] * len(training)
    described = [(dataset, given.get('name'), given.get('gaps')) for dataset, given in zip(training, inputs,
                                                                                        strict=True)]
    described += [(dataset, None, result.metrics.get('validation' if i == 0 else f'validation_{i + 1}', {}).get('gaps'))
                  for i, dataset in enumerate(validation)]
    lines = []
    for k, (dataset, name, gaps) in enumerate(described):
        summary = dataset.gaps()
        name = name or dataset.source.get('bag') or f'recording {k + 1}'
        lines.append(((gaps or {}).get('summary') or summary.line(name), summary))
    return lines


def _recordings_section(lines: list[tuple[str, GapSummary]]) -> str:
    items = ''.join(f'<details><summary>{html.escape(line)}</summary>{_gap_table(summary)}</details>'
                    if summary.gaps else f'<p>{html.escape(line)}</p>' for line, summary in lines)
    return f'<h2>Recordings</h2>{items}'


def _physical_section(result: IdentificationResult, robot: RobotModel) -> str:
    """Physical consistency (module docstring): M(q) check for any result, links for a physical one."""
    from dynid.errors import InputError
    from dynid.identify.steps.check import mass_matrix_check
    from dynid.model.inertial import describe_link

    section = result.physical_section
    check = None if section is None else section.get('mass_matrix')
    if check is None:
        try:
            check = mass_matrix_check(result, robot, states=1000)
        except InputError:
            return ''
    text = (f'<h2>Physical consistency</h2><p>M(q) positive definite on {check["positive_definite_percent"]:.1f} % '
            f'of {check["states"]} random states (least eigenvalue {check["min_eigenvalue"]:.3g}).</p>')
    prior = result.prior_section or {}
    used = f'{html.escape(str(prior["source"]))}, relative σ {prior["relative_std"]:g}' if prior.get('used') else 'none'
    if section is None:
        note = (prior.get('consistency') or {}).get('note')
        return text + (f'<p>Not physically consistent: {html.escape(note)}.</p>' if note else
                       '<p>Not physically consistent (asking for physical consistency enforces it): the base '
                       'parameters need not belong to any physical robot.</p>') + f'<p>Prior: {used}.</p>'
    consistency = section['consistency']
    text += (f'<p>Solver {html.escape(section["solver"])} ({section["solve_s"]:.2f} s); constraint: '
             f'{html.escape(section["constraint"])}; prior {used}. Cost of consistency: weighted χ² '
             f'{consistency["weighted_chi2_physical"]:.6g} against {consistency["weighted_chi2_unconstrained"]:.6g} '
             f'unconstrained ({consistency["cost_percent"]:+.3f} %).</p>')

    def cells(link: dict) -> str:
        return (f'<td>{link["mass"]:.4g}</td><td>{", ".join(f"{c:.4g}" for c in link["com"])}</td>'
                f'<td>{", ".join(f"{m:.4g}" for m in link["principal_moments"])}</td>'
                f'<td>{"yes" if link["triangle_inequalities"] else "<b>no</b>"}</td>')

    rows = ''.join(
        f'<tr><td>{html.escape(entry["link"])}</td>{cells(describe_link(np.asarray(entry["parameters"])))}'
        f'{cells(describe_link(np.asarray(entry["prior"])))}</tr>' for entry in section['links'])
    head = '<th>mass [kg]</th><th>CoM [m]</th><th>principal moments [kg·m²]</th><th>triangle</th>'
    return text + (f'<table><tr><th rowspan="2">link</th><th colspan="4">identified</th><th colspan="4">prior'
                   f'</th></tr><tr>{head}{head}</tr>{rows}</table>')


def write_report(folder: str | Path, result: IdentificationResult, robot: RobotModel, training: list[Dataset],
                 validation: list[Dataset] | None = None) -> Path:
    """Write ``folder/index.html`` and its plots; returns the index path. The folder may exist (its other files
    are kept); the page and plots are written whole or not at all (:func:`dynid.files.written`)."""
    with written(folder) as staging:
        staging.mkdir()
        _write_report_files(staging, result, robot, training, validation)
    return Path(folder) / 'index.html'


def _write_report_files(folder: Path, result: IdentificationResult, robot: RobotModel, training: list[Dataset],
                        validation: list[Dataset] | None) -> None:
    sections = []
    for label, datasets in (('training', training), ('validation', validation or [])):
        if not datasets:
            continue
        series = predict_series(result, robot, datasets[0])
        torque_plot(folder / f'torque_{label}.png', f'{label}: measured and predicted torque', *series,
                     robot.joint_names)
        times, measured, predicted, keep = series
        if label == 'training':
            _residual_plot(folder / 'residuals.png', [(measured - predicted)[keep[:, j], j]
                                                      for j in range(robot.n)], robot.joint_names)
        sections.append(f'<h2>{label.capitalize()}</h2>'
                        + (_metrics_table(result.metrics[key]) if (key := {'training': 'train'}.get(label, label))
                           in result.metrics else '')
                        + f'<img src="torque_{label}.png" alt="{label} torques">')
    _parameter_plot(folder / 'parameters.png', result)
    relative = result.relative_std
    parameter_rows = ''.join(
        f'<tr><td>{html.escape(n)}</td><td>{html.escape(result.base_expressions.get(n, ""))}</td>'
        f'<td>{v:.6g}</td><td>{s:.3g}</td><td>{r:.3g}</td></tr>'
        for n, v, s, r in zip(result.parameter_names, result.values, result.std, relative, strict=True))
    gains = '' if result.drive_gains is None else (
        '<h2>Drive gains [N·m/A]</h2><p>' + ('identified' if result.drive_gains_identified else 'nominal')
        + ': ' + ', '.join(f'{html.escape(j)} {g:.5g}' for j, g in zip(result.joint_names, result.drive_gains,
                                                                       strict=True)) + '</p>'
        + ''.join(f'<p>{html.escape(line)}</p>' for line in diagnostics_lines(result.drive_gain_diagnostics or {})))
    recordings = _recording_lines(result, training, validation or [])
    shown = {line for line, _ in recordings}  # a recording's gap line appears once, in its section
    warnings = ''.join(f'<li>{html.escape(w)}</li>' for w in result.warnings if w not in shown)
    page = html_page(f'dynid identification: {result.robot}', f'''<h1>Identification of {html.escape(result.robot)}</h1>
<p>method <b>{html.escape(result.method.upper())}</b>, friction model <b>{html.escape(result.model["friction"])}</b>
{"+ temperature" if result.model.get("temperature") else ""}, torque from {html.escape(result.model["torque_source"])}
{"(rotor-side compensated)" if result.model.get("rotor_compensation") else ""}; {html.escape(result.condition_text())};
{len(result.parameter_names)} parameters.</p>
<p>{html.escape(describe_filters(result.provenance.get("filters") or {}))}</p>
{"<h2>Warnings</h2><ul>" + warnings + "</ul>" if warnings else ""}
{_recordings_section(recordings)}
{gains}
{"".join(sections)}
{_physical_section(result, robot)}
<h2>Residuals (training)</h2><img src="residuals.png" alt="residual histograms">
<h2>Parameters</h2><img src="parameters.png" alt="base parameters with error bars">
<table><tr><th>name</th><th>expression</th><th>value</th><th>σ</th><th>σ [%]</th></tr>{parameter_rows}</table>''')
    (folder / 'index.html').write_text(page)
