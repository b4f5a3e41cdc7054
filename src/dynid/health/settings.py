"""The health job's settings: one frozen dataclass the CLI, estimator_node and the docs translate.

Each field is a :func:`dynid.settings.setting` (default, description, unit, range) whose node parameter is
``health_`` + its name (estimator_node declares them all, read once at start-up); :meth:`HealthSettings.
__post_init__` validates every field with a one-line :class:`InputError` naming it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields

from dynid.errors import InputError
from dynid.settings import setting

PARAMETER_PREFIX = 'health_'


def _setting(name: str, default, description: str, unit: str | None = None, low: float | None = None,
             high: float | None = None):
    return setting(default, description, unit=unit, low=low, high=high, parameter=PARAMETER_PREFIX + name,
                   read_only=True)


@dataclass(frozen=True)
class HealthSettings:
    """Where the health record is, how estimator_node writes it, and how joint health is judged from it
    (docs/health.md, docs/methods/health.md)."""

    db: str = _setting('db', '', 'health record: an SQLite file or a postgresql:// URL; empty: '
                       '$XDG_DATA_HOME/dynid/health.sqlite3')
    robot: str = _setting('robot', '', 'the robot\'s name in the record (one file may hold a fleet); empty: the '
                          'robot model\'s name')
    record: bool = _setting('record', True, 'estimator_node appends its sessions to the health record and '
                            'publishes its judgement in /diagnostics')
    session_s: float = _setting('session_s', 1800.0, 'estimator_node records a session this often, and at '
                                'shutdown, ~/reset and ~/set_baseline', 's', 60.0, 604800.0)
    diagnostics_period_s: float = _setting('diagnostics_period_s', 60.0, 'estimator_node publishes the record\'s '
                                           'judgement in /diagnostics this often', 's', 1.0, 86400.0)
    stiffness_limit: float = _setting('stiffness_limit', -0.15, 'relative change of the joint stiffness α1 against '
                                      'its baseline at which the joint needs service (−0.15: 15 % softer)', None,
                                      -0.99, -0.001)
    friction_limit: float = _setting('friction_limit', 0.5, 'relative change of the Coulomb friction level against '
                                     'its baseline at which the joint needs service (0.5: 50 % more)', None, 0.001,
                                     10.0)
    baseline_sessions: int = _setting('baseline_sessions', 6, 'sessions that set a segment\'s baseline, and that a '
                                      'regime needs before it is monitored', None, 3, 100)
    cusum_drift: float = _setting('cusum_drift', 0.5, 'CUSUM reference value k: half the smallest shift to detect '
                                  'quickly', 'σ', 0.0, 5.0)
    cusum_threshold: float = _setting('cusum_threshold', 6.0, 'CUSUM decision interval h: a change is declared '
                                      'when the sum exceeds it', 'σ', 1.0, 50.0)
    noise_floor: float = _setting('noise_floor', 0.005, 'smallest session-to-session noise assumed, relative to '
                                  'the baseline', None, 0.0, 0.5)
    confidence: float = _setting('confidence', 0.9, 'confidence level of the trend\'s slope interval and of the '
                                 'forecast interval', None, 0.5, 0.999)
    warn_days: float = _setting('warn_days', 30.0, 'WARN when the forecast reaches the limit within this many days',
                                'd', 0.0, 3650.0)
    change_warning_days: float = _setting('change_warning_days', 14.0, 'WARN for this many days after a change '
                                          'was detected', 'd', 0.0, 3650.0)
    window_sessions: int = _setting('window_sessions', 120, 'most recent sessions of a segment the reference '
                                    'model is fitted to', None, 10, 100000)
    reference_temperature_c: float = _setting('reference_temperature_c', 20.0, 'temperature the values are '
                                              'compensated to (the friction law\'s T0)', '°C', 5.0, 80.0)
    temperature_compensation: bool = _setting('temperature_compensation', True, 'remove the temperature '
                                              'dependence (friction: the law of Madsen 2020 ch.6 eq. (11); '
                                              'stiffness: linear) fitted to the sessions')
    min_temperature_spread_c: float = _setting('min_temperature_spread_c', 3.0, 'temperatures must span at least '
                                               'this much before their effect is fitted', '°C', 0.0, 100.0)

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(f.default, str):
                if not isinstance(value, str):
                    raise InputError(f'{f.name} must be text, got {value!r}')
                continue
            if isinstance(f.default, bool):
                if not isinstance(value, bool):
                    raise InputError(f'{f.name} must be true or false, got {value!r}')
                continue
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise InputError(f'{f.name} must be a number, got {value!r}')
            if isinstance(f.default, int) and not float(value).is_integer():
                raise InputError(f'{f.name} must be an integer, got {value!r}')
            if not math.isfinite(value):
                raise InputError(f'{f.name} must be finite, got {value!r}')
            low, high = f.metadata['range'] or (None, None)
            if (low is not None and value < low) or (high is not None and value > high):
                raise InputError(f'{f.name} must be within [{low:g}, {high:g}], got {value!r}')
            if isinstance(f.default, int):
                object.__setattr__(self, f.name, int(value))

    def limit(self, quantity: str) -> float:
        """The relative limit of ``quantity`` ('stiffness' or 'friction')."""
        return {'stiffness': self.stiffness_limit, 'friction': self.friction_limit}[quantity]
