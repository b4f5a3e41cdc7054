"""The fleet's page and JSON: every robot's joints ranked by the forecast time to a limit and by recent changes.

From one health record (SQLite or PostgreSQL) every robot is judged as ``dynid health`` judges it
(:func:`dynid.health.assessment.assess`); each joint and quantity becomes one :class:`Entry`, and

- **by forecast**: entries past their limit first, then those with a forecast (a significant trend toward
  the limit) by days to the limit, then the rest by how near their level is to the limit (level/limit);
- **by change**: entries with a change detected within ``change_warning_days``, the most recent first.

The robots are listed in the order of their first entry. The folder holds ``index.html`` (the two
rankings and the robots), ``fleet.json`` (the same for tools) and ``robots/<name>/index.html``, each robot's
own page (:func:`dynid.health.page.page_html`), one click from the fleet's; it is written whole or not at
all (:func:`dynid.files.written`).

    >>> fleet = judge_fleet('postgresql://dynid@fleet-db/health')                   # doctest: +SKIP
    >>> write_fleet_report(fleet, 'fleet_report')                                    # doctest: +SKIP
"""

from __future__ import annotations

import html
import math
import re
import time
from dataclasses import dataclass, field
from pathlib import Path

from dynid import __version__
from dynid.files import written
from dynid.health.assessment import STATE_ORDER, RobotHealth
from dynid.health.job import judge_robots
from dynid.health.page import STYLE, badge, page_html
from dynid.health.settings import HealthSettings
from dynid.health.trend import QuantityHealth


@dataclass(frozen=True)
class Entry:
    """One joint's quantity of one robot, as the rankings list it (days [d] from the judged time)."""

    robot: str
    joint: str
    quantity: str
    state: str
    level: float
    limit: float
    forecast_days: float  # inf: no forecast (no significant trend toward the limit); 0: reached
    forecast_low_days: float
    forecast_high_days: float
    change_days_ago: float  # inf: no change detected within change_warning_days
    change_size: float
    text: str

    def to_dict(self, page: str) -> dict:
        finite = lambda v: float(v) if math.isfinite(v) else None  # noqa: E731
        return {'robot': self.robot, 'joint': self.joint, 'quantity': self.quantity, 'state': self.state,
                'level': finite(self.level), 'limit': self.limit, 'forecast_days': finite(self.forecast_days),
                'forecast_low_days': finite(self.forecast_low_days),
                'forecast_high_days': finite(self.forecast_high_days),
                'change_days_ago': finite(self.change_days_ago), 'change_size': finite(self.change_size),
                'text': self.text, 'page': page}


@dataclass
class Fleet:
    """The judged fleet: ``healths`` by robot name, the two rankings, where it came from and when."""

    source: str
    healths: dict[str, RobotHealth]
    events: dict
    by_forecast: list[Entry] = field(default_factory=list)
    by_change: list[Entry] = field(default_factory=list)
    robots: list[str] = field(default_factory=list)
    pages: dict[str, str] = field(default_factory=dict)
    sections: dict[str, str] = field(default_factory=dict)  # stored page sections by robot (dynid.health.stored)
    judged: list[str] = field(default_factory=list)  # the robots judged here, not read from a stored judgement
    unjudged: dict[str, str] = field(default_factory=dict)  # robots whose stored data cannot be judged: why


def entry(robot: str, q: QuantityHealth, now_days: float, settings: HealthSettings) -> Entry:
    f = q.forecast
    days, low, high = (math.inf, math.inf, math.inf) if f is None else (f.days, f.low, f.high)
    recent = [c for c in q.changes if c.kind == 'detected' and now_days - q.t_days[c.alarm_session]
              <= settings.change_warning_days]
    ago, size = ((now_days - float(q.t_days[recent[-1].session]), recent[-1].size) if recent
                 else (math.inf, math.nan))
    return Entry(robot, q.joint, q.quantity, q.state, q.level, q.limit, days, low, high, ago, size, q.text)


def _nearness(e: Entry) -> float:
    """level/limit: 1 at the limit, 0 at the baseline, negative away from it (NaN: unknown, last)."""
    return e.level / e.limit if math.isfinite(e.level) else -math.inf


def rank(healths: list[RobotHealth], settings: HealthSettings) -> tuple[list[Entry], list[Entry], list[str]]:
    """(by forecast, by change, robots in order of their first entry) (module docstring)."""
    entries = []
    for h in healths:
        now_days = (h.now_utc - h.first_utc) / 86400.0 if h.sessions else 0.0
        for quantities in h.joints.values():
            entries.extend(entry(h.robot, q, now_days, settings) for q in quantities.values())
    by_forecast = sorted(entries, key=lambda e: (e.forecast_days, -_nearness(e), -STATE_ORDER.index(e.state),
                                                 e.robot, e.joint, e.quantity))
    by_change = sorted((e for e in entries if math.isfinite(e.change_days_ago)),
                       key=lambda e: (e.change_days_ago, -abs(e.change_size), e.robot, e.joint))
    robots = list(dict.fromkeys([e.robot for e in by_forecast] + [h.robot for h in healths]))
    return by_forecast, by_change, robots


def judge_fleet(db, settings: HealthSettings | None = None, now_utc: float | None = None,
                robots=None, workers: int | None = None, store: bool = False, use_stored: bool = True) -> Fleet:
    """Read every robot (or ``robots``) of the record ``db`` read-only, judge them and rank them (module
    docstring; :func:`dynid.health.job.judge_robots` reads the stored judgements that are current, judges the others,
    stores them with ``store``). A robot whose stored data cannot be judged is listed with the reason
    (``Fleet.unjudged``), the others ranked. InputError for a missing, damaged or newer record, or one without
    sessions."""
    settings = settings or HealthSettings()
    found = judge_robots(db, settings, now_utc, robots, workers, store, use_stored)
    fleet = Fleet(found.source, found.healths, found.events, sections=found.sections, judged=found.judged,
                  unjudged=found.unjudged)
    fleet.by_forecast, fleet.by_change, fleet.robots = rank(list(fleet.healths.values()), settings)
    fleet.pages = _page_names(fleet.robots)
    return fleet


def _page_names(robots: list[str]) -> dict[str, str]:
    """{robot: its page's path in the folder}; names made safe for files, told apart when two collide."""
    pages, taken = {}, set()
    for robot in sorted(robots):
        stem = re.sub(r'[^A-Za-z0-9._-]+', '_', robot).strip('._') or 'robot'
        name, k = stem, 1
        while name.lower() in taken:
            k += 1
            name = f'{stem}-{k}'
        taken.add(name.lower())
        pages[robot] = f'robots/{name}/index.html'
    return pages


def fleet_json(fleet: Fleet) -> dict:
    """The fleet as plain values: robots (state, sessions, page), the two rankings (``dynid health --fleet-json``)."""
    robots = []
    for name in fleet.robots:
        h = fleet.healths[name]
        robots.append({'robot': name, 'model': h.model, 'sessions': h.sessions, 'state': h.state,
                       'last_session_utc': h.now_utc if math.isfinite(h.now_utc) else None,
                       'page': fleet.pages[name]})
    return {'source': fleet.source, 'written_utc': time.time(), 'software': f'dynid {__version__}',
            'robots': robots, 'not_judged': [{'robot': robot, 'reason': why} for robot, why in fleet.unjudged.items()],
            'by_forecast': [e.to_dict(fleet.pages[e.robot]) for e in fleet.by_forecast],
            'by_change': [e.to_dict(fleet.pages[e.robot]) for e in fleet.by_change]}


def _days(value: float) -> str:
    return f'{value:.0f}' if math.isfinite(value) else '—'


def _percent(value: float) -> str:
    return f'{100 * value:+.1f} %' if math.isfinite(value) else '—'


def _rows(entries: list[Entry], pages: dict[str, str], limit: int) -> str:
    rows = []
    for rank_, e in enumerate(entries[:limit], 1):
        if e.forecast_days == 0:
            forecast = 'past the limit'
        elif math.isfinite(e.forecast_days):
            forecast = f'{_days(e.forecast_days)} d ({_days(e.forecast_low_days)}–{_days(e.forecast_high_days)})'
        else:
            forecast = '—'
        change = (f'{_percent(e.change_size)}, {e.change_days_ago:.0f} d ago' if math.isfinite(e.change_days_ago)
                  else '—')
        rows.append(f'<tr><td class="num">{rank_}</td><td><a href="{html.escape(pages[e.robot])}">'
                    f'{html.escape(e.robot)}</a></td><td>{html.escape(e.joint)}</td><td>{e.quantity}</td>'
                    f'<td>{badge(e.state)}</td><td class="num">{_percent(e.level)}</td>'
                    f'<td class="num">{_percent(e.limit)}</td><td>{forecast}</td><td>{change}</td></tr>')
    return ''.join(rows)


HEADER = ('<tr><th>#</th><th>robot</th><th>joint</th><th>quantity</th><th>state</th><th>now</th><th>limit</th>'
          '<th>forecast to the limit (interval)</th><th>recent change</th></tr>')


def fleet_html(fleet: Fleet, top: int = 50) -> str:
    """The fleet's ``index.html``: the rankings (their first ``top`` entries) and every robot, linked."""
    counts = {state: sum(fleet.healths[r].state == state for r in fleet.robots) for state in reversed(STATE_ORDER)}
    summary = ' · '.join(f'{badge(state)} {count}' for state, count in counts.items() if count)
    robots = ''.join(f'<tr><td><a href="{html.escape(fleet.pages[r])}">{html.escape(r)}</a></td>'
                     f'<td>{html.escape(fleet.healths[r].model)}</td><td>{badge(fleet.healths[r].state)}</td>'
                     f'<td class="num">{fleet.healths[r].sessions}</td></tr>' for r in fleet.robots)
    changes = (f'<table>{HEADER}{_rows(fleet.by_change, fleet.pages, top)}</table>' if fleet.by_change
               else '<p>No change detected recently.</p>')
    unjudged = ''.join(f'<tr><td>{html.escape(robot)}</td><td>{html.escape(why)}</td></tr>'
                       for robot, why in fleet.unjudged.items())
    unjudged = (f'<h2>Robots not judged</h2><p class="meta">Their record holds what cannot be judged (written by an '
                f'older dynid?); every other robot is judged without them.</p><table><tr><th>robot</th>'
                f'<th>why</th></tr>{unjudged}</table>' if unjudged else '')
    return (f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Fleet joint health</title>'
            f'<style>{STYLE}</style></head><body><h1>Fleet joint health</h1>'
            f'<p class="meta">{html.escape(fleet.source)} · {len(fleet.robots)} robots'
            f'{f" ({len(fleet.unjudged)} more not judged)" if fleet.unjudged else ""} · written '
            f'{time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())} by dynid {__version__} · '
            f'<a href="fleet.json">fleet.json</a></p><p>{summary}</p>'
            f'<h2>Joints by forecast time to a limit</h2><p class="meta">Past the limit first, then the forecast '
            'days (the trend\'s line, and its interval at the settings\' confidence), then the rest by how near '
            f'they are to their limit. The first {min(top, len(fleet.by_forecast))} of {len(fleet.by_forecast)}.</p>'
            f'<table>{HEADER}{_rows(fleet.by_forecast, fleet.pages, top)}</table>'
            f'<h2>Recent changes</h2><p class="meta">Changes detected within the last days, the most recent '
            f'first.</p>{changes}'
            f'<h2>Robots</h2><table><tr><th>robot</th><th>model</th><th>state</th><th>sessions</th></tr>{robots}'
            f'</table>{unjudged}</body></html>')


def write_fleet_report(fleet: Fleet, folder, top: int = 50):
    """Write the fleet's folder (module docstring) whole or not at all; returns its path."""
    import json

    files = {'index.html': fleet_html(fleet, top), 'fleet.json': json.dumps(fleet_json(fleet), indent=1)}
    for robot, page in fleet.pages.items():
        files[page] = page_html([fleet.healths[robot]], fleet.events, fleet.source, back='../../index.html',
                                sections=fleet.sections)
    with written(folder) as staging:
        for relative, text in files.items():
            path = staging / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding='utf-8')
    return Path(folder)
