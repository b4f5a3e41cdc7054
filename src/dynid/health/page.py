"""The health page: one ``index.html`` a maintenance engineer reads, plots drawn as inline SVG.

Per robot: its state, a table of every joint's stiffness and friction (level against the baseline,
trend per week, forecast to the limit with its interval, the last change) and, per joint, a plot of
each quantity over the sessions: the temperature-compensated values relative to the baseline, the
current regime's trend with its confidence band carried on to the limit, the limit, and the segment
starts, events and detected changes. Inline SVG keeps the page one self-contained file and quick to
write and to render for thousands of sessions (one path element per series).
"""

from __future__ import annotations

import html
import math
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from dynid import __version__
from dynid.errors import InputError
from dynid.files import write_text
from dynid.health.assessment import RobotHealth
from dynid.health.trend import DAY_S, QuantityHealth

STATE_COLOURS = {'ok': '#2e7d32', 'warn': '#e69500', 'error': '#c62828', 'unknown': '#757575'}
STATE_WORDS = {'ok': 'OK', 'warn': 'WARN', 'error': 'ERROR', 'unknown': 'LEARNING'}
QUANTITY_TITLES = {'stiffness': 'Stiffness α1', 'friction': 'Coulomb friction'}
WIDTH, HEIGHT = 520, 220
MARGIN = (56, 34, 22, 34)  # left, right, top, bottom [px]

STYLE = """
body{font-family:system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;margin:24px;color:#222;max-width:1180px}
h1{font-size:1.5em;margin-bottom:4px} h2{margin-top:28px;border-bottom:1px solid #ddd;padding-bottom:4px}
h3{margin:18px 0 6px} .meta{color:#555;font-size:.92em}
table{border-collapse:collapse;font-size:.92em;margin:8px 0} th,td{padding:4px 10px;border-bottom:1px solid #eee;
text-align:left;vertical-align:top} th{background:#f6f6f6}
.badge{display:inline-block;color:#fff;border-radius:4px;padding:1px 8px;font-weight:600;font-size:.85em}
.plots{display:flex;flex-wrap:wrap;gap:12px} figure{margin:0} figcaption{font-size:.88em;color:#333;max-width:520px}
svg text{font-size:11px;fill:#444} .num{text-align:right;font-variant-numeric:tabular-nums}
"""


def badge(state: str) -> str:
    """The coloured state word of a page."""
    return _badge(state)


def _badge(state: str) -> str:
    return (f'<span class="badge" style="background:{STATE_COLOURS[state]}">{STATE_WORDS[state]}</span>')


def _date(utc: float) -> str:
    return time.strftime('%Y-%m-%d', time.gmtime(utc)) if math.isfinite(utc) else '—'


def _percent(value: float, digits: int = 1) -> str:
    return f'{100 * value:+.{digits}f} %' if value is not None and math.isfinite(value) else '—'


def _forecast_cell(q: QuantityHealth) -> str:
    f = q.forecast
    if f is None:
        return 'no trend toward the limit' if q.trend is not None else '—'
    if f.reached:
        return '<b>limit reached</b>'
    high = f'{f.high:.0f}' if math.isfinite(f.high) else '∞'
    return f'{f.days:.0f} days ({f.low:.0f}–{high})'


def _ticks(low: float, high: float, count: int = 5) -> np.ndarray:
    """Round tick values covering [low, high]."""
    span = max(high - low, 1e-12)
    step = 10 ** math.floor(math.log10(span / count))
    for factor in (1, 2, 2.5, 5, 10):
        if span / (step * factor) <= count:
            step *= factor
            break
    return np.arange(math.ceil(low / step) * step, high + step * 1e-9, step)


def plot_svg(q: QuantityHealth, first_utc: float, now_days: float) -> str:
    """The quantity's plot (module docstring) as an SVG element, relative values in %."""
    left, right, top, bottom = MARGIN
    width, height = WIDTH - left - right, HEIGHT - top - bottom
    t, r = q.t_days, 100.0 * q.relative
    shown = np.isfinite(r)
    trend_t = trend_mid = trend_half = None
    if q.trend is not None and q.regime_start is not None:
        start = q.t_days[q.regime_start]
        end = now_days
        if q.forecast is not None and not q.forecast.reached and math.isfinite(q.forecast.days):
            end = now_days + min(q.forecast.days, 2.0 * max(now_days - start, 1.0))  # to the limit, within reason
        trend_t = np.linspace(start, end, 40)
        trend_mid, trend_half = 100.0 * q.trend.at(trend_t), 100.0 * q.trend.band(trend_t)
    x_high = max(float(np.nanmax(t)) if t.size else 1.0, now_days, trend_t[-1] if trend_t is not None else 0.0)
    x_low = float(np.nanmin(t)) if t.size else 0.0
    if x_high <= x_low:
        x_high = x_low + 1.0
    values = [r[shown], [0.0, 100.0 * q.limit]]
    if trend_mid is not None:
        values += [trend_mid - trend_half, trend_mid + trend_half]
    flat = np.concatenate([np.asarray(v, dtype=float).ravel() for v in values])
    flat = flat[np.isfinite(flat)]
    y_low, y_high = float(flat.min()), float(flat.max())
    pad = 0.06 * max(y_high - y_low, 1.0)
    y_low, y_high = y_low - pad, y_high + pad

    def X(v):
        return left + (np.asarray(v, dtype=float) - x_low) / (x_high - x_low) * width

    def Y(v):
        return top + (y_high - np.asarray(v, dtype=float)) / (y_high - y_low) * height

    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" '
             f'viewBox="0 0 {WIDTH} {HEIGHT}" role="img" aria-label="{html.escape(q.joint)} {q.quantity}">',
             f'<rect x="{left}" y="{top}" width="{width}" height="{height}" fill="#fcfcfc" stroke="#ccc"/>']
    for v in _ticks(y_low, y_high):
        y = float(Y(v))
        parts.append(f'<line x1="{left}" x2="{left + width}" y1="{y:.1f}" y2="{y:.1f}" stroke="#eee"/>'
                     f'<text x="{left - 4}" y="{y + 4:.1f}" text-anchor="end">{v:g} %</text>')
    for v in _ticks(x_low, x_high, 4):
        x = float(X(v))
        parts.append(f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{top}" y2="{top + height}" stroke="#f0f0f0"/>'
                     f'<text x="{x:.1f}" y="{top + height + 14}" text-anchor="middle">'
                     f'{_date(first_utc + v * DAY_S)}</text>')
    limit_line = (100.0 * q.limit, STATE_COLOURS['error'], ' stroke-dasharray="6 4"')
    for level, colour, dash in ((0.0, '#888', ''), limit_line):
        y = float(Y(level))
        parts.append(f'<line x1="{left}" x2="{left + width}" y1="{y:.1f}" y2="{y:.1f}" stroke="{colour}"{dash}/>')
    y_limit = float(Y(100.0 * q.limit))
    parts.append(f'<text x="{left + width - 4}" y="{y_limit - 4:.1f}" text-anchor="end" '
                 f'style="fill:{STATE_COLOURS["error"]}">limit {100 * q.limit:+.0f} %</text>')
    for k in q.segments[1:]:
        x = float(X(t[k]))
        parts.append(f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{top}" y2="{top + height}" stroke="#1565c0" '
                     f'stroke-width="1.5"><title>new baseline {_date(first_utc + t[k] * DAY_S)}</title></line>')
    for change in q.changes:
        x = float(X(t[change.session]))
        label = 'detected change' if change.kind == 'detected' else change.kind.replace('_', ' ')
        parts.append(f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{top}" y2="{top + height}" stroke="#8e24aa" '
                     f'stroke-dasharray="3 3"><title>{label} {_date(first_utc + t[change.session] * DAY_S)}'
                     f'{"" if not math.isfinite(change.size) else f", {100 * change.size:+.1f} %"}</title></line>')
    if trend_t is not None:
        xs = X(trend_t)
        upper, lower = Y(trend_mid + trend_half), Y(trend_mid - trend_half)
        outline = ' '.join(f'{a:.1f},{b:.1f}' for a, b in zip(np.r_[xs, xs[::-1]], np.r_[upper, lower[::-1]],
                                                              strict=True))
        parts.append(f'<polygon points="{outline}" fill="#1565c0" fill-opacity="0.15" stroke="none"/>')
        line = ' '.join(f'{a:.1f},{b:.1f}' for a, b in zip(xs, Y(trend_mid), strict=True))
        parts.append(f'<polyline points="{line}" fill="none" stroke="#1565c0" stroke-width="1.5"/>')
    x_points, y_points = X(t[shown]), Y(r[shown])
    dots = ''.join(f'M{a:.1f} {b:.1f}h0' for a, b in zip(x_points, y_points, strict=True))
    parts.append(f'<path d="{dots}" stroke="#333" stroke-width="{3.5 if shown.sum() < 200 else 2.2}" '
                 'stroke-linecap="round" fill="none"/>')
    x_now = float(X(now_days))
    parts.append(f'<line x1="{x_now:.1f}" x2="{x_now:.1f}" y1="{top}" y2="{top + height}" stroke="#555" '
                 'stroke-dasharray="1 3"/>')
    parts.append(f'<text x="{left}" y="{top - 7}">{QUANTITY_TITLES[q.quantity]}: % against the baseline, '
                 'temperature-compensated</text></svg>')
    return ''.join(parts)


def _summary_rows(health: RobotHealth) -> str:
    rows = []
    for joint, quantities in health.joints.items():
        for quantity, q in quantities.items():
            trend = '—' if q.trend is None else f'{700 * q.trend.slope:+.2f} %/week'
            changes = [c for c in q.changes if c.kind == 'detected']
            last = '—' if not changes else (f'{_percent(changes[-1].size)} on '
                                             f'{_date(health.first_utc + q.t_days[changes[-1].session] * DAY_S)}')
            rows.append(f'<tr><td>{html.escape(joint)}</td><td>{quantity}</td><td>{_badge(q.state)}</td>'
                        f'<td class="num">{_percent(q.level)}</td><td class="num">{_percent(q.limit, 0)}</td>'
                        f'<td class="num">{trend}</td><td>{_forecast_cell(q)}</td><td>{last}</td></tr>')
    return ''.join(rows)


def _compensated_for(q: QuantityHealth) -> str:
    words = [w for w, on in (('temperature', bool(q.temperature_coefficients)),
                             ('load', math.isfinite(q.load_coefficient))) if on]
    return ' and '.join(words)


def fleet_place_html(place) -> str:
    """A robot's place in its fleet (:class:`dynid.health.fleet_place.FleetPlace`): the parameters standing apart,
    each with its value, the fleet's centre and spread and the two z, or one line saying it stands with its fleet."""
    if place is None:
        return ''
    compared = html.escape(place.compared)
    if not place.apart:
        return f'<p class="meta">Against its fleet: {_badge("ok")} no parameter stands apart ({compared}).</p>'
    rows = ''.join(
        f'<tr><td>{html.escape(e.get("joint") or "—")}</td><td>{html.escape(str(e["parameter"]))} '
        f'({html.escape(str(e["kind"]).replace("_", " "))})</td><td class="num">{e["value"]:.4g}</td>'
        f'<td class="num">{e["centre"]:.4g} ± {e["spread"]:.2g}</td>'
        f'<td class="num">{_relative(e.get("relative_percent"))}</td><td class="num">{e["z"]:+.1f}</td>'
        f'<td class="num">{e["z_own"]:+.1f}</td><td class="num">{e["threshold"]:.2f}</td></tr>' for e in place.apart)
    return (f'<h3>Against its fleet {_badge(place.state)}</h3><p>Stands apart from its fleet in {len(place.apart)} '
            f'parameter{"s" if len(place.apart) > 1 else ""}, without waiting for its own trend: {compared}.</p>'
            '<table><tr><th>joint</th><th>parameter</th><th>its value</th><th>fleet centre ± spread</th>'
            '<th>against the centre</th><th>z (fleet spread)</th><th>z (with its own σ)</th><th>named beyond</th></tr>'
            f'{rows}</table>')


def _relative(percent) -> str:
    return f'{percent:+.1f} %' if isinstance(percent, int | float) and math.isfinite(percent) else '—'


def robot_section(health: RobotHealth, events: Sequence = ()) -> str:
    """The HTML of one robot: state, its place in its fleet, summary table, per-joint plots, events."""
    now_days = (health.now_utc - health.first_utc) / DAY_S if health.sessions else 0.0
    parts = [f'<h2>{html.escape(health.robot)} {_badge(health.state)}</h2>',
             f'<p class="meta">model {html.escape(health.model)} · {health.sessions} sessions from '
             f'{_date(health.first_utc)} to {_date(health.now_utc)}</p>', fleet_place_html(health.fleet)]
    if not health.joints:
        return ''.join(parts + ['<p>No estimates recorded yet.</p>'])
    parts.append('<table><tr><th>joint</th><th>quantity</th><th>state</th><th>now</th><th>limit</th><th>trend</th>'
                 f'<th>forecast to the limit</th><th>last change</th></tr>{_summary_rows(health)}</table>')
    for joint, quantities in health.joints.items():
        parts.append(f'<h3>{html.escape(joint)}</h3><div class="plots">')
        for q in quantities.values():
            taken = (q.value - q.compensated) / q.baseline
            taken = float(np.nanmax(np.abs(taken))) if np.isfinite(taken).any() else 0.0
            caption = (f'{_badge(q.state)} {html.escape(q.text)}. Baseline {q.baseline:.4g} {q.unit}; '
                       f'session-to-session noise {_percent(q.noise, 2).lstrip("+")}'
                       + (f'; the {_compensated_for(q)} compensation moved sessions by up to {100 * taken:.1f} %'
                          if q.temperature_coefficients or math.isfinite(q.load_coefficient)
                          else '; not compensated for temperature or load') + '.')
            parts.append(f'<figure>{plot_svg(q, health.first_utc, now_days)}<figcaption>{caption}'
                         '</figcaption></figure>')
        parts.append('</div>')
    if events:
        rows = ''.join(f'<tr><td>{_date(e.time_utc)}</td><td>{html.escape(e.joint or "all joints")}</td>'
                       f'<td>{html.escape(e.kind)}</td><td>{html.escape(e.note)}</td></tr>' for e in events)
        parts.append(f'<h3>Events</h3><table><tr><th>date</th><th>joint</th><th>event</th><th>note</th></tr>{rows}'
                     '</table>')
    return ''.join(parts)


def write_page(folder, healths: Sequence[RobotHealth], events: dict | None = None, source: str = '') -> Path:
    """Write ``folder/index.html`` for the robots' judgements; returns its path.

    ``events``: {robot: [Event, ...]} to list under each robot. The folder is made if needed; an existing
    index.html in it is replaced (the page is derived from the record, which is never touched).
    """
    folder = Path(folder)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise InputError(f'report folder {folder}: cannot create it ({error.strerror})') from None
    if not folder.is_dir():
        raise InputError(f'report folder {folder} is not a folder')
    path = folder / 'index.html'
    write_text(path, page_html(healths, events, source))
    return path


def _section(health: RobotHealth, events: Sequence, made: str | None) -> str:
    """The robot's section: the one made before where there is one (its place in its fleet added after it; a robot
    standing apart is drawn anew, so that its state at the top says so)."""
    if made is None or (health.fleet is not None and health.fleet.apart):
        return robot_section(health, events)
    return made + fleet_place_html(health.fleet)


def page_html(healths: Sequence[RobotHealth], events: dict | None = None, source: str = '', back: str = '',
              sections: dict[str, str] | None = None) -> str:
    """The page of :func:`write_page` as text; ``back``: a link to put above it (a fleet page's address);
    ``sections``: {robot: its :func:`robot_section` made before} (stored judgements: dynid.health.stored)."""
    events, made = events or {}, sections or {}
    sections = ''.join(_section(h, events.get(h.robot, ()), made.get(h.robot)) for h in healths)
    legend = ('<p class="meta">Dots: each session\'s estimate, compensated to the reference temperature and load, '
              'relative to the baseline of its segment. Blue line and band: the trend of the sessions since the last '
              'change (Theil–Sen) and its confidence band, carried on toward the limit (red dashed). Blue verticals: '
              'a new baseline (reset, new gear, maintenance); purple dashed: a detected or reported change; '
              'dotted: now.</p>')
    page = (f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Joint health</title>'
            f'<style>{STYLE}</style></head><body>'
            + (f'<p class="meta"><a href="{html.escape(back)}">← the fleet</a></p>' if back else '')
            + '<h1>Joint health</h1>'
            f'<p class="meta">{html.escape(source)} · written {time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())} '
            f'by dynid {__version__}</p>{legend}{sections}</body></html>')
    return page
