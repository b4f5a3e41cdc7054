"""A joint quantity over sessions: temperature compensation, sudden changes, the trend and the forecast.

For one joint and quantity (stiffness α̂1, or the Coulomb friction level), over the sessions of the
record (docs/methods/health.md gives the derivations and sources):

- **Segments** start at the first session and after each event that sets a new baseline (reset,
  set_baseline, gearbox swap, maintenance). The segment's baseline is the median of its first
  ``baseline_sessions`` compensated values; values are reported relative to it, and the limits
  apply to that relative change.
- **Reference model.** Within a segment, each session is predicted from the ones before it (the last
  ``window_sessions``) by a linear model fitted with Huber's M-estimator (Huber 1964; IRLS): one
  level per *regime* (the stretch since the segment start or since the last change), a slope for
  every regime after a change (a change may start a drift), and the temperature dependence shared
  by the segment: for the friction level the two columns of the friction temperature law,
  T − T0 and T⁻³ − T0⁻³ (Madsen 2020, ch.6 eq. (11); :class:`dynid.friction.temperature.
  ReferenceTemperatureFriction`), for the stiffness T − T0; for the friction level also the session's
  load, (L/L0)² − 1 of its RMS joint torque L against the joint's median L0 (the load-dependent Coulomb
  level Fc0 + Fc1·τ², Madsen 2020 ch.6 eq. (20)). Temperature and load move friction more than wear
  does (Bittencourt and Gunnarsson 2012; Bittencourt and Axelsson 2014 on wear under load and
  temperature uncertainty): each enters the fit only where it varies enough to be told apart from a level
  (temperatures by ``min_temperature_spread_c``, load by :data:`MIN_LOAD_SPREAD`), and the trend is of
  the values compensated to T0 and L0.
- **Sudden changes**: a two-sided CUSUM (Page 1954) of the standardized one-step prediction errors
  z = (y − ŷ)/√(σ²·(1 + xᵀ(XᵀWX)⁻¹x) + s²) (the prediction variance of a linear fit, and the session's own
  spread s), with reference value
  k and decision interval h in units of σ, the robust residual scale (MAD) of the fit, never below
  ``noise_floor``. At an alarm the change is placed at the session that maximizes the likelihood ratio
  of a shift of unknown size in the mean (Hinkley 1971) and a new regime starts there.
- **Trend**: the Theil–Sen line (Theil 1950, Sen 1968: the median of the pairwise slopes) of the
  current regime's compensated relative values against time [days], with Sen's confidence interval of
  the slope (from Kendall's τ; ``scipy.stats.theilslopes``).
- **Forecast**: when the line reaches the limit, and the interval of times where the confidence band
  of the line, ŷ(t) ± t_{n−2}·s·√(1/n + (t − t̄)²/Sxx), reaches it (inverse prediction, Fieller 1954;
  Draper and Smith 1998, §3.2). Without a significant slope the interval is open-ended.
"""

from __future__ import annotations

import math
from bisect import bisect_right
from dataclasses import dataclass, field

import numpy as np

from dynid.health.settings import HealthSettings

QUANTITY_UNITS = {'stiffness': 'N·m/rad', 'friction': 'N·m'}
REBASING_EVENTS = ('reset', 'set_baseline', 'gearbox_swap', 'maintenance')
CHANGE_EVENTS = ('collision', 'detected_change')
DAY_S = 86400.0
HUBER_C = 1.345  # 95 % efficiency at the normal distribution (Huber 1964)
MAD_TO_SIGMA = 1.4826
HUBER_ITERATIONS = 3
MIN_LOAD_SPREAD = 0.2  # the load column (L/L0)² − 1 enters the fit where it spans at least this much


@dataclass(frozen=True)
class Change:
    """A change in a quantity: from session ``session`` (index into the history) on, noticed at
    ``alarm_session``; ``size`` relative to the segment baseline; ``kind`` 'detected' or an event kind."""

    session: int
    alarm_session: int
    size: float
    kind: str = 'detected'


@dataclass(frozen=True)
class Trend:
    """The Theil–Sen line r(t) = intercept + slope·t [relative, t in days] of the current regime.

    ``slope_low``, ``slope_high``: Sen's interval at the settings' confidence; ``scale``: robust residual
    scale [relative]; ``t_mean``, ``sxx``, ``n``: what the band needs; ``quantile``: Student t of the band.
    """

    slope: float
    intercept: float
    slope_low: float
    slope_high: float
    scale: float
    t_mean: float
    sxx: float
    n: int
    quantile: float

    def at(self, t) -> np.ndarray:
        return self.intercept + self.slope * np.asarray(t, dtype=float)

    def band(self, t) -> np.ndarray:
        """Half width of the confidence band of the line at ``t`` [days]."""
        t = np.asarray(t, dtype=float)
        return self.quantile * self.scale * np.sqrt(1.0 / self.n + (t - self.t_mean) ** 2 / self.sxx)

    def reaching(self, limit: float, now: float) -> tuple[float, float, float]:
        """(t of the line at ``limit``, earliest, latest t >= ``now`` where the band holds it) [days];
        inf where never or not bounded.

        Inverse prediction: the band holds the limit where (r̄ + b·u − L)² <= g·(1/n + u²/Sxx),
        u = t − t̄, g = (q·s)² (module docstring); with a significant slope that is an interval.
        """
        b = self.slope
        centre = math.inf if b == 0 else self.t_mean + (limit - float(self.at(self.t_mean))) / b
        a = float(self.at(self.t_mean)) - limit
        g = (self.quantile * self.scale) ** 2
        quadratic, linear, constant = b * b - g / self.sxx, 2.0 * a * b, a * a - g / self.n
        u_now = now - self.t_mean
        holds = lambda u: quadratic * u * u + linear * u + constant <= 0  # noqa: E731
        discriminant = linear * linear - 4 * quadratic * constant
        if abs(quadratic) < 1e-300 or discriminant < 0:
            if holds(u_now):  # (no sign change) the band holds the limit now and for ever
                return centre, now, math.inf
            return centre, math.inf, math.inf
        roots = sorted((-linear + sign * math.sqrt(discriminant)) / (2 * quadratic) for sign in (-1, 1))
        if quadratic > 0:  # an interval [r1, r2]
            if u_now > roots[1]:
                return centre, math.inf, math.inf
            return centre, self.t_mean + max(roots[0], u_now), self.t_mean + roots[1]
        # the slope is not significant: outside (r1, r2)
        if holds(u_now):
            return centre, now, math.inf
        return centre, self.t_mean + roots[1], math.inf


@dataclass(frozen=True)
class Forecast:
    """Days from ``now`` until the trend reaches the limit: ``days`` (the line), ``low``–``high``
    (its band; inf: not bounded); ``reached``: the line is at or beyond the limit now."""

    limit: float
    days: float
    low: float
    high: float
    reached: bool = False


@dataclass
class QuantityHealth:
    """One joint's quantity over the record, as judged at ``now`` (module docstring).

    Arrays are (S,) over the history's sessions: ``t_days`` since the first session, ``value`` as
    recorded [unit], ``compensated`` (at the reference temperature) [unit], ``relative`` to the baseline of
    the session's segment [-] (NaN where no value). ``segments``: index of each segment's first session.
    """

    joint: str
    quantity: str
    unit: str
    limit: float
    t_days: np.ndarray
    value: np.ndarray
    compensated: np.ndarray
    relative: np.ndarray
    segments: list[int]
    baseline: float = math.nan
    noise: float = math.nan
    temperature_coefficients: tuple[float, ...] = ()
    load_coefficient: float = math.nan
    regime_start: int | None = None
    changes: list[Change] = field(default_factory=list)
    trend: Trend | None = None
    forecast: Forecast | None = None
    level: float = math.nan
    state: str = 'unknown'
    text: str = ''

    def to_dict(self) -> dict:
        """Plain values for JSON (the arrays left out)."""
        trend = None if self.trend is None else {
            'slope_per_day': self.trend.slope, 'slope_low': self.trend.slope_low, 'slope_high': self.trend.slope_high,
            'sessions': self.trend.n}
        forecast = None if self.forecast is None else {
            'limit': self.forecast.limit, 'days': _finite_or_none(self.forecast.days),
            'low_days': _finite_or_none(self.forecast.low), 'high_days': _finite_or_none(self.forecast.high),
            'reached': self.forecast.reached}
        return {'joint': self.joint, 'quantity': self.quantity, 'unit': self.unit, 'state': self.state,
                'text': self.text, 'level': _finite_or_none(self.level), 'limit': self.limit,
                'baseline': _finite_or_none(self.baseline), 'noise': _finite_or_none(self.noise),
                'sessions': int(np.isfinite(self.relative).sum()),
                'temperature_coefficients': list(self.temperature_coefficients),
                'load_coefficient': _finite_or_none(self.load_coefficient),
                'segment_start': self.segments[-1] if self.segments else None, 'regime_start': self.regime_start,
                'changes': [{'session': c.session, 'alarm_session': c.alarm_session, 'size': c.size, 'kind': c.kind}
                            for c in self.changes],
                'trend': trend, 'forecast': forecast}


def _finite_or_none(value):
    return float(value) if value is not None and math.isfinite(value) else None


def temperature_features(quantity: str, temperature_c: np.ndarray, reference_c: float) -> np.ndarray:
    """(S, m) temperature columns of ``quantity`` (module docstring), scaled to order one, zero at reference_c.

    friction: [(T − T0)/10, (T⁻³ − T0⁻³)·T0³] from the friction law's features at ω = 1 rad/s
    (T clamped to the law's 5–80 °C); stiffness: [(T − T0)/10].
    """
    t = np.asarray(temperature_c, dtype=float)
    if quantity == 'friction':
        # here, not at the top: the friction law pulls in the robot model (pinocchio), which reading stored judgements
        # (the fleet page, the listing) does not need
        from dynid.friction.temperature import ReferenceTemperatureFriction

        law = ReferenceTemperatureFriction(1.0, 1.0, t0=reference_c)
        linear, cubic = law.features(np.ones_like(t), t)
        return np.column_stack([linear / 10.0, cubic * reference_c**3])
    return ((t - reference_c) / 10.0)[:, None]


def _huber(X: np.ndarray, y: np.ndarray, scale: float, weights: np.ndarray | None = None,
           iterations: int = HUBER_ITERATIONS) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Huber M-estimate by IRLS (from ``weights``, default least squares): (β, (XᵀWX)⁻¹, weights)."""
    w = np.ones(len(y)) if weights is None else weights
    for _ in range(iterations):
        Xw = X.T * w
        try:
            inverse = np.linalg.inv(Xw @ X)
        except np.linalg.LinAlgError:
            inverse = np.linalg.pinv(Xw @ X)
        beta = inverse @ (Xw @ y)
        r = np.abs(y - X @ beta) / scale
        w = np.where(r <= HUBER_C, 1.0, HUBER_C / np.maximum(r, 1e-300))
    return beta, inverse, w


def _median(a: np.ndarray) -> float:
    """Median of a 1-D array without NaN (np.median's overhead matters in the per-session scan)."""
    n = a.size
    half = n // 2
    if n % 2:
        return float(np.partition(a, half)[half])
    part = np.partition(a, (half - 1, half))
    return 0.5 * float(part[half - 1] + part[half])


def _robust_scale(residual: np.ndarray, parameters: int) -> float:
    """σ from the median absolute deviation, corrected for the ``parameters`` fitted."""
    n = residual.size
    if n <= parameters:
        return math.nan
    return MAD_TO_SIGMA * _median(np.abs(residual - _median(residual))) * math.sqrt(n / (n - parameters))


def _change_time(z_of: dict[int, float]) -> int:
    """The position a shift of unknown size most likely started at, among the monitored ones: argmax over τ
    of (Σ_{i>=τ} z_i)² / (count from τ) (the likelihood ratio of a shift in the mean of unit-variance
    errors, Hinkley 1971)."""
    positions = np.array(sorted(z_of))
    z = np.array([z_of[p] for p in positions])
    tail = np.cumsum(z[::-1])[::-1]
    return int(positions[np.argmax(tail**2 / np.arange(z.size, 0, -1))])


class _Segment:
    """The sequential scan of one segment; positions index the segment's valid sessions.

    ``regimes``: first position of each regime; ``changes``: (first position, alarm position) of each
    detected change; ``scale``: the last robust residual scale [relative to the normalizer].
    """

    def __init__(self, t: np.ndarray, u: np.ndarray, features: np.ndarray | None, forced: set[int],
                 settings: HealthSettings, spread: np.ndarray | None = None,
                 groups: list[tuple[int, int, float]] | None = None) -> None:
        self.t, self.u, self.features, self.forced, self.settings = t, u, features, forced, settings
        # the feature columns in groups (first, stop, smallest span of the first column): temperature, load
        if features is not None and groups is None:
            groups = [(0, features.shape[1], settings.min_temperature_spread_c / 10.0)]
        self.groups = groups or []
        self.spread = np.zeros(len(u)) if spread is None else np.nan_to_num(spread, nan=0.0)
        self.regimes = [0]
        self.changes: list[tuple[int, int]] = []
        self.scale = settings.noise_floor
        self.weights = np.ones(len(u))  # Huber weights of the last fit, carried to the next (IRLS warm start)
        # per group: count of sessions without finite features before each position
        self.bad_features = [np.concatenate([[0], np.cumsum(~np.isfinite(features[:, a:b]).all(axis=1))])
                             for a, b, _ in self.groups]

    def design(self, low: int, high: int, at: int | None = None) -> tuple[np.ndarray, np.ndarray | None, list[int]]:
        """(X for positions low…high − 1, the row x of position ``at`` or None, the feature columns used).

        Columns: a level per regime present, a slope per regime after the first with at least three
        sessions in the rows, each group of feature columns (temperature, load) that is finite in those
        rows and spans its smallest span there.
        """
        starts = self.regimes
        first = bisect_right(starts, low) - 1
        last = len(starts) - 1 if at is not None else bisect_right(starts, high - 1) - 1
        t = self.t[low:high]
        blocks, x = [], []
        for k in range(first, last + 1):
            begin = max(starts[k], low) - low
            end = (min(starts[k + 1], high) if k + 1 < len(starts) else high) - low
            level = np.zeros(high - low)
            level[begin:end] = 1.0
            blocks.append(level)
            x.append(1.0 if k == last and at is not None else 0.0)
            if k > 0 and end - begin >= 3:
                origin = self.t[starts[k]]
                slope = np.zeros(high - low)
                slope[begin:end] = t[begin:end] - origin
                blocks.append(slope)
                x.append(self.t[at] - origin if k == last and at is not None else 0.0)
        used: list[int] = []
        if high > low:
            for (a, b, smallest), bad in zip(self.groups, self.bad_features, strict=True):
                if (bad[high] - bad[low] == 0 and (at is None or bad[at + 1] == bad[at])
                        and float(np.ptp(self.features[low:high, a])) >= smallest):
                    used.extend(range(a, b))
            if used:
                blocks.extend(self.features[low:high, used].T)
                if at is not None:
                    x.extend(self.features[at, used])
        return np.column_stack(blocks), (np.asarray(x) if at is not None else None), used

    def scan(self) -> None:
        """Page's two-sided CUSUM over the standardized one-step prediction errors (module docstring)."""
        s = self.settings
        upper = lower = 0.0
        z_of: dict[int, float] = {}  # the regime's monitored positions and their z
        signature = None  # (columns, regime start) of the last fit: the same model, one row further
        for p in range(len(self.u)):
            if p in self.forced and p != self.regimes[-1]:
                self.regimes.append(p)
                upper = lower = 0.0
                z_of = {}
            start = self.regimes[-1]
            if p - start < s.baseline_sessions:
                continue
            low = max(0, p - s.window_sessions)
            X, x, _ = self.design(low, p, at=p)
            if X.shape[0] <= X.shape[1] + 1:
                continue
            y = self.u[low:p]
            same, signature = signature == (X.shape[1], start), (X.shape[1], start)
            beta, inverse, self.weights[low:p] = _huber(X, y, max(self.scale, s.noise_floor), self.weights[low:p],
                                                        1 if same else HUBER_ITERATIONS)
            scale = _robust_scale(y - X @ beta, X.shape[1])
            sigma = self.scale = max(scale if math.isfinite(scale) else 0.0, s.noise_floor)
            leverage = float(x @ inverse @ x)
            deviation = math.sqrt(sigma**2 * (1.0 + max(leverage, 0.0)) + self.spread[p] ** 2)
            z = z_of[p] = (self.u[p] - x @ beta) / deviation
            upper = max(0.0, upper + z - s.cusum_drift)
            lower = max(0.0, lower - z - s.cusum_drift)
            if max(upper, lower) > s.cusum_threshold:
                self.changes.append((_change_time(z_of), p))
                self.regimes.append(self.changes[-1][0])
                upper = lower = 0.0
                z_of = {}

    def condition_coefficients(self) -> tuple[np.ndarray, list[int]] | None:
        """(coefficients, feature columns) of the conditions fitted to the segment's last window; None when
        none was fitted."""
        s, n = self.settings, len(self.u)
        if self.features is None:
            return None
        low = max(0, n - s.window_sessions)
        X, _, used = self.design(low, n)
        if not used or X.shape[0] <= X.shape[1] + 1:
            return None
        beta = _huber(X, self.u[low:n], max(self.scale, s.noise_floor))[0]
        return beta[-len(used):], used


def analyze_quantity(joint: str, quantity: str, t_days: np.ndarray, value: np.ndarray,
                     temperature_c: np.ndarray | None, events: list[tuple[int, str]], settings: HealthSettings,
                     now_days: float | None = None, spread: np.ndarray | None = None,
                     load_nm: np.ndarray | None = None) -> QuantityHealth:
    """Judge one joint's ``quantity`` over its sessions (module docstring).

    Args:
        joint, quantity: what is judged ('stiffness' or 'friction').
        t_days: (S,) session times [days], non-decreasing. value: (S,) the quantity [unit]; NaN or <= 0: none.
        temperature_c: (S,) session temperatures [°C] or None.
        events: (session index, kind) of the events on this joint: a kind of :data:`REBASING_EVENTS`
            starts a segment at that session, one of :data:`CHANGE_EVENTS` a regime.
        settings: limits and detector settings.
        now_days: the time judged at [days]; default the last session's.
        spread: (S,) each session's own standard deviation [unit] (NaN: none), added to the prediction's
            variance: a session whose estimate did not settle counts for less.
        load_nm: (S,) each session's RMS joint torque [N·m] or None: the friction level is compensated to
            the joint's median load (module docstring).

    >>> h = analyze_quantity('elbow_joint', 'stiffness', days, k0, None, [], HealthSettings())  # doctest: +SKIP
    >>> h.state, h.text, h.forecast                                                         # doctest: +SKIP
    """
    s = settings
    t_days = np.asarray(t_days, dtype=float)
    value = np.asarray(value, dtype=float)
    count = value.size
    health = QuantityHealth(joint, quantity, QUANTITY_UNITS[quantity], s.limit(quantity), t_days, value,
                            np.full(count, np.nan), np.full(count, np.nan), [0])
    if count == 0:
        health.text = 'no sessions'
        return health
    now = float(t_days[-1] if now_days is None else now_days)
    starts = sorted({0} | {i for i, kind in events if kind in REBASING_EVENTS and 0 <= i < count})
    health.segments = starts
    with np.errstate(invalid='ignore'):
        valid = np.isfinite(value) & (value > 0)
    features_all, groups, has_load = _condition_features(quantity, temperature_c, load_nm, s)
    for number, first in enumerate(starts):
        last = starts[number + 1] if number + 1 < len(starts) else count
        index = np.flatnonzero(valid[first:last]) + first
        current = number == len(starts) - 1
        if index.size == 0:
            if current:
                health.text = 'no values in this segment yet'
            continue
        normalizer = float(np.median(value[index[:s.baseline_sessions]]))
        u = value[index] / normalizer
        features = None if features_all is None else features_all[index]
        forced = {int(np.searchsorted(index, i)) for i, kind in events if kind in CHANGE_EVENTS and first < i < last}
        segment = _Segment(t_days[index], u, features, forced, s,
                           None if spread is None else np.asarray(spread, dtype=float)[index] / normalizer, groups)
        segment.scan()
        fitted = segment.condition_coefficients()
        coefficients = None
        compensated = u
        if fitted is not None:
            beta, used = fitted
            compensated = u - features[:, used] @ beta
            coefficients = np.zeros(features.shape[1])
            coefficients[used] = beta
        baseline = float(np.median(compensated[:s.baseline_sessions]))
        relative = compensated / baseline - 1.0
        health.compensated[index] = compensated * normalizer
        health.relative[index] = relative
        if not current:
            continue
        health.baseline = baseline * normalizer
        health.noise = segment.scale / baseline
        if coefficients is not None:
            relative_coefficients = [float(c) / baseline for c in coefficients]
            if has_load:
                health.load_coefficient = relative_coefficients.pop()
            health.temperature_coefficients = tuple(relative_coefficients)
        health.changes = _segment_changes(segment, index, relative,
                                          [(i, kind) for i, kind in events if first < i < last])
        health.regime_start = int(index[segment.regimes[-1]])
        _judge(health, index[segment.regimes[-1]:], index.size, now, s)
    return health


def _condition_features(quantity: str, temperature_c: np.ndarray | None, load_nm: np.ndarray | None,
                        s: HealthSettings) -> tuple[np.ndarray | None, list[tuple[int, int, float]], bool]:
    """The conditions a session's value is compensated for, as feature columns (S, k) (None: none): the temperature
    features where compensated and given, and for friction the load ((load/median)² − 1) where given; the column
    groups (first, end, least spread to fit them) and whether the load is one."""
    columns, groups = [], []
    if s.temperature_compensation and temperature_c is not None:
        temperature = temperature_features(quantity, np.asarray(temperature_c, dtype=float), s.reference_temperature_c)
        groups.append((0, temperature.shape[1], s.min_temperature_spread_c / 10.0))
        columns.append(temperature)
    load = None if load_nm is None or quantity != 'friction' else np.asarray(load_nm, dtype=float)
    has_load = load is not None and bool(np.isfinite(load).any()) and float(np.nanmedian(load)) > 0
    if has_load:
        first_column = sum(c.shape[1] for c in columns)
        groups.append((first_column, first_column + 1, MIN_LOAD_SPREAD))
        columns.append(((load / np.nanmedian(load)) ** 2 - 1.0)[:, None])
    return (np.hstack(columns) if columns else None), groups, has_load


def _segment_changes(segment: _Segment, index: np.ndarray, relative: np.ndarray,
                     events: list[tuple[int, str]]) -> list[Change]:
    """The changes of the current segment in session order: each change the detector found, sized as its regime's
    median against the one before (relative), and each change ``event`` of the segment (size NaN)."""
    regimes = segment.regimes + [index.size]
    changes = []
    for a, b in segment.changes:
        k = regimes.index(a)
        changes.append(Change(int(index[a]), int(index[b]),
                              float(np.median(relative[a:regimes[k + 1]]) - np.median(relative[regimes[k - 1]:a]))))
    changes += [Change(i, i, math.nan, kind) for i, kind in events if kind in CHANGE_EVENTS]
    return sorted(changes, key=lambda c: c.session)


def _judge(health: QuantityHealth, regime: np.ndarray, sessions: int, now: float, s: HealthSettings) -> None:
    """Trend, forecast, level, state and text of the current regime (module docstring)."""
    t, r = health.t_days[regime], health.relative[regime]
    limit = health.limit
    if sessions < s.baseline_sessions:
        health.state = 'unknown'
        health.text = f'learning the baseline ({sessions} of {s.baseline_sessions} sessions)'
        health.level = float(np.median(r))
        return
    if r.size >= 3 and np.ptp(t) > 0:
        # here, not at the top: scipy.stats is a second of import that reading stored judgements does not need
        from scipy import stats

        fit = stats.theilslopes(r, t, alpha=s.confidence)
        scale = _robust_scale(r - (fit.intercept + fit.slope * t), 2)
        health.trend = Trend(float(fit.slope), float(fit.intercept), float(fit.low_slope), float(fit.high_slope),
                             max(scale if math.isfinite(scale) else 0.0, s.noise_floor), float(t.mean()),
                             float(np.sum((t - t.mean()) ** 2)), int(r.size),
                             float(stats.t.ppf(0.5 + s.confidence / 2, max(r.size - 2, 1))))
        health.level = float(health.trend.at(now))
    else:
        health.level = float(np.median(r[-3:]))
    sign = 1.0 if limit > 0 else -1.0
    reached = sign * (health.level - limit) >= 0
    if reached:
        health.forecast = Forecast(limit, 0.0, 0.0, 0.0, True)
    elif health.trend is not None and sign * health.trend.slope > 0:
        centre, early, late = health.trend.reaching(limit, now)
        if math.isfinite(late):  # a significant slope toward the limit; else no forecast is made
            health.forecast = Forecast(limit, max(centre - now, 0.0), max(early - now, 0.0), late - now)
    recent = [c for c in health.changes
              if c.kind == 'detected' and now - health.t_days[c.alarm_session] <= s.change_warning_days]
    words = [f'{100 * health.level:+.1f} % against the baseline (limit {100 * limit:+.0f} %)']
    f = health.forecast
    if f is not None and not f.reached:
        words.append(f'trend {700 * health.trend.slope:+.2f} %/week: limit in {f.days:.0f} days ({f.low:.0f}–'
                     f'{f.high:.0f} at {100 * s.confidence:.0f} % confidence)')
    elif health.trend is not None and not reached:
        words.append(f'no significant trend toward the limit ({700 * health.trend.slope_low:+.2f} to '
                     f'{700 * health.trend.slope_high:+.2f} %/week)')
    if recent:
        c = recent[-1]
        words.append(f'change of {100 * c.size:+.1f} % detected {now - health.t_days[c.alarm_session]:.0f} days ago')
    health.text = '; '.join(words)
    if reached:
        health.state = 'error'
    elif (f is not None and f.days <= s.warn_days) or recent:
        health.state = 'warn'
    else:
        health.state = 'ok'
