"""The page of ``dynid contact --report DIR``: per recording τ̂_ext and its alarm level per joint over time (k_j·σ
with the threshold in force, in motion or with the arm at rest: :class:`dynid.contact.monitor.ContactSamples`
``level``), the contacts shaded, a table of them; ``index.html`` and PNGs, written whole or not at all."""

from __future__ import annotations

import html
from pathlib import Path

import numpy as np

from dynid.files import written


def _plot(path: Path, name: str, joint_names, samples) -> None:
    import matplotlib

    matplotlib.use('Agg')
    import matplotlib.pyplot as plt

    n = len(joint_names)
    t = samples.t - samples.t[0]
    figure, axes = plt.subplots(n, 1, figsize=(10, 1.8 * n), sharex=True, squeeze=False)
    on = samples.alarm.any(axis=1)
    edges = np.flatnonzero(np.diff(np.concatenate([[0], on.astype(np.int8), [0]])))
    for j, axis in enumerate(axes[:, 0]):
        level = samples.level[:, j]
        axis.plot(t, samples.estimate[:, j], lw=0.8, label='τ̂_ext (less the rest baseline)')
        axis.fill_between(t, -level, level, color='0.85', label='alarm level (k·σ, in motion or at rest)')
        for a, b in zip(edges[0::2], edges[1::2], strict=True):
            axis.axvspan(t[a], t[min(b, len(t) - 1)], color='tab:red', alpha=0.2)
        axis.set_ylabel(f'{joint_names[j]}\n[N·m]', fontsize=8)
    axes[0, 0].set_title(f'{name}: external torque per joint, contacts shaded')
    axes[0, 0].legend(fontsize=7, loc='upper right')
    axes[-1, 0].set_xlabel('time [s]')
    figure.tight_layout()
    figure.savefig(path, dpi=90)
    plt.close(figure)


def _end(end_s) -> str:
    return 'open' if end_s is None else f'{end_s:.3f}'


def write_report(folder, recordings: list[dict], joint_names, header: list[str]) -> Path:
    """``folder``/index.html with one plot and contact table per recording (``recordings``: name, samples, contacts
    as :meth:`dynid.contact.detection.Contact.to_dict` gives them)."""
    folder = Path(folder)
    with written(folder) as staging:
        staging.mkdir(parents=True, exist_ok=True)
        parts = ['<html><head><meta charset="utf-8"><title>dynid contact</title></head><body>',
                 '<h1>What the arm felt</h1>', *(f'<p>{html.escape(line)}</p>' for line in header)]
        for k, recording in enumerate(recordings):
            image = f'recording_{k}.png'
            _plot(staging / image, recording['name'], joint_names, recording['samples'])
            rows = ''.join(
                f'<tr><td>{c["start_s"]:.3f}</td><td>{_end(c["end_s"])}</td>'
                f'<td>{html.escape(", ".join(c["joints"]))}</td><td>{html.escape(c["distal_joint"])}</td>'
                f'<td>{html.escape(", ".join(c["raised_by"]))}</td>'
                f'<td>{html.escape(", ".join(f"{j} {v:+.2f}" for j, v in c["peak_nm"].items()))}</td></tr>'
                for c in recording['contacts'])
            parts += [f'<h2>{html.escape(recording["name"])}</h2>', f'<img src="{image}">',
                      '<table border="1"><tr><th>start [s]</th><th>end [s]</th><th>joints</th><th>most distal</th>'
                      f'<th>raised by</th><th>peak τ̂_ext [N·m]</th></tr>{rows}</table>']
        parts.append('<p>dynid\'s contact detection is advisory: an estimate for the application, never the robot\'s '
                     'safety function.</p></body></html>')
        (staging / 'index.html').write_text('\n'.join(parts), encoding='utf-8')
    return folder / 'index.html'
