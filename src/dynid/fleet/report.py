"""The fleet's page and JSON: every robot's joints ranked by the forecast time to a limit and by recent changes.

From one health record (SQLite or PostgreSQL) every robot is judged as ``dynid health`` judges it
(:func:`dynid.health.assessment.assess`); each joint and quantity becomes one :class:`Entry`, and

- **by forecast**: entries past their limit first, then those with a forecast (a significant trend toward
  the limit) by days to the limit, then the rest by how near their level is to the limit (level/limit);
- **by change**: entries with a change detected within ``change_warning_days``, the most recent first.

Beside the trends, **each robot's place in its fleet**: its identified parameters against the other robots' results
(:mod:`dynid.fleet.standing`), from the result files given (``results``) or as the record holds them (written by
``dynid batch --db``); the robots standing apart are named with the parameter and its size.

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
from dynid.fleet.prior import read_members
from dynid.fleet.standing import FALSE_FLAG_RATE, MIN_FLEET, FleetStandings, standings_by_model
from dynid.health.assessment import STATE_ORDER, RobotHealth
from dynid.health.job import judge_robots
from dynid.health.page import STYLE, badge, page_html
from dynid.health.record import HealthRecord
from dynid.health.results import store_results
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
    standings: list[FleetStandings] = field(default_factory=list)  # from the result files given, by robot model
    standings_given: bool = False  # result files were given (else the places are the record's, where stored)


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
                robots=None, workers: int | None = None, store: bool = False, use_stored: bool = True,
                results=None, false_flag_rate: float = FALSE_FLAG_RATE) -> Fleet:
    """Read every robot (or ``robots``) of the record ``db`` read-only, judge them and rank them (module
    docstring; :func:`dynid.health.job.judge_robots` reads the stored judgements that are current, judges the others,
    stores them with ``store``). A robot whose stored data cannot be judged is listed with the reason
    (``Fleet.unjudged``), the others ranked. ``results``: the robots' identification result files (each named by its
    stem, as the record names the robot): every robot's place in its fleet judged from them (``false_flag_rate``:
    :func:`dynid.fleet.standing.fleet_standing`), in place of the record's, and stored in it with ``store``.
    InputError for a missing, damaged or newer record, one without sessions, or a result file missing."""
    settings = settings or HealthSettings()
    members = read_members(results) if results else []
    found = judge_robots(db, settings, now_utc, robots, workers, store, use_stored)
    fleet = Fleet(found.source, found.healths, found.events, sections=found.sections, judged=found.judged,
                  unjudged=found.unjudged, standings=standings_by_model(members, false_flag_rate) if results else [],
                  standings_given=bool(results))
    if results:
        places = {place.robot: place for group in fleet.standings for place in group.places()}
        for name, health in fleet.healths.items():
            health.fleet = places.get(name)
        if store:  # the places judged and the results they were judged from
            with HealthRecord(db, create=False) as record:
                record.store_standings(list(places.values()))
                store_results(record, members)
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


def standing_apart(fleet: Fleet) -> list[tuple[str, dict]]:
    """(robot, parameter standing apart as :meth:`dynid.fleet.standing.ParameterStanding.to_dict` gives it) of every
    robot the page names, farthest first within a robot; robots in the order of the fleet's, then the others'."""
    if fleet.standings_given:
        found = [(s.robot, entry.to_dict()) for group in fleet.standings for s in group.standings for entry in s.apart]
    else:
        found = [(name, entry) for name, h in fleet.healths.items() if h.fleet is not None for entry in h.fleet.apart]
    order = {robot: k for k, robot in enumerate(fleet.robots)}
    return sorted(found, key=lambda item: order.get(item[0], len(order)))


def standing_note(fleet: Fleet) -> str:
    """Why the page names no robot's place in its fleet, or ''."""
    if fleet.standings_given:
        why = [group.why_not for group in fleet.standings if group.why_not]
        judged = [group for group in fleet.standings if not group.why_not]
        if why and not judged:
            return 'Not judged: ' + '; '.join(why) + '.'
        return ('Not judged: ' + '; '.join(why) + '.') if why else ''
    if not any(h.fleet is not None for h in fleet.healths.values()):
        return (f'Not judged: no robot\'s identification results at hand (give the fleet report its robots\' result '
                f'files, or let the batch re-identification store each robot\'s place in the health record; at least '
                f'{MIN_FLEET} robots of one model).')
    return ''


def fleet_json(fleet: Fleet) -> dict:
    """The fleet as plain values: robots (state, sessions, page, place in the fleet), the two rankings, the robots
    standing apart from their fleet (``dynid health --fleet-json``)."""
    robots = []
    for name in fleet.robots:
        h = fleet.healths[name]
        robots.append({'robot': name, 'model': h.model, 'sessions': h.sessions, 'state': h.state,
                       'last_session_utc': h.now_utc if math.isfinite(h.now_utc) else None,
                       'page': fleet.pages[name], 'fleet': None if h.fleet is None else h.fleet.to_dict()})
    note = standing_note(fleet)
    standing = {'source': 'results given' if fleet.standings_given else 'the record',
                'groups': [group.to_dict() for group in fleet.standings], 'why_not': note or None,
                'apart': [{'robot': robot, **entry} for robot, entry in standing_apart(fleet)]}
    return {'source': fleet.source, 'written_utc': time.time(), 'software': f'dynid {__version__}',
            'robots': robots, 'not_judged': [{'robot': robot, 'reason': why} for robot, why in fleet.unjudged.items()],
            'standing': standing,
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
    apart = standing_apart(fleet)
    by_robot: dict[str, list[dict]] = {}
    for robot, entry in apart:
        by_robot.setdefault(robot, []).append(entry)
    robots = ''.join(f'<tr><td><a href="{html.escape(fleet.pages[r])}">{html.escape(r)}</a></td>'
                     f'<td>{html.escape(fleet.healths[r].model)}</td><td>{badge(fleet.healths[r].state)}</td>'
                     f'<td class="num">{fleet.healths[r].sessions}</td>'
                     f'<td>{_place_cell(fleet.healths[r], by_robot.get(r, []))}</td></tr>' for r in fleet.robots)
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
            f'{_standing_section(fleet, apart)}'
            f'<h2>Robots</h2><table><tr><th>robot</th><th>model</th><th>state</th><th>sessions</th>'
            f'<th>against its fleet</th></tr>{robots}</table>{unjudged}</body></html>')


def _size(entry: dict) -> str:
    relative = entry.get('relative_percent')
    return (f'{html.escape(str(entry["parameter"]))} ({html.escape(entry.get("joint") or "—")}) '
            + (f'{relative:+.0f} %, ' if relative is not None else '') + f'z {entry["z_own"]:+.1f}')


def _place_cell(health, apart: list[dict]) -> str:
    """The robots table's cell: the parameters standing apart, 'with its fleet', or '—' where not judged."""
    if apart:
        return badge('warn') + ' ' + '; '.join(_size(entry) for entry in apart)
    return 'with its fleet' if health.fleet is not None else '—'


def _standing_section(fleet: Fleet, apart: list[tuple[str, dict]]) -> str:
    """The robots standing apart from their fleet, a row per parameter (or why none is named)."""
    note = standing_note(fleet)
    head = ('<h2>Robots standing apart from their fleet</h2><p class="meta">Each robot\'s identified parameters '
            'against the other robots\' of its model (leave-one-out: the median and robust spread of the others): z '
            'in units of the fleet\'s spread, and with the robot\'s own σ; a parameter is named when abs(z with its '
            'own σ) passes the threshold that lets at most the false-flag rate of healthy robots be named. Named here '
            'without waiting for the robot\'s own trend.</p>')
    if note and not apart:
        return f'{head}<p>{html.escape(note)}</p>'
    if not apart:
        return f'{head}<p>No robot stands apart from its fleet.</p>'
    rows = []
    for robot, e in apart:
        name = (f'<a href="{html.escape(fleet.pages[robot])}">{html.escape(robot)}</a>' if robot in fleet.pages
                else html.escape(robot))
        relative = e.get('relative_percent')
        rows.append(f'<tr><td>{name}</td><td>{html.escape(e.get("joint") or "—")}</td>'
                    f'<td>{html.escape(e["parameter"])} ({html.escape(e["kind"].replace("_", " "))})</td>'
                    f'<td class="num">{e["value"]:.4g}</td><td class="num">{e["centre"]:.4g} ± {e["spread"]:.2g}</td>'
                    f'<td class="num">{_percent(relative / 100) if relative is not None else "—"}</td>'
                    f'<td class="num">{e["z"]:+.1f}</td><td class="num">{e["z_own"]:+.1f}</td>'
                    f'<td class="num">{e["threshold"]:.2f}</td><td class="num">{e["others"]}</td></tr>')
    return (f'{head}{f"<p>{html.escape(note)}</p>" if note else ""}<table><tr><th>robot</th><th>joint</th>'
            '<th>parameter</th><th>its value</th><th>fleet centre ± spread</th><th>against the centre</th>'
            '<th>z (fleet spread)</th><th>z (with its own σ)</th><th>named beyond</th><th>other robots</th></tr>'
            f'{"".join(rows)}</table>')


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
