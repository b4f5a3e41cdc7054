"""Each robot's judgement stored in its record beside the sessions it was made from, so that a fleet's page reads
it instead of judging every robot again.

Judging a robot re-fits the reference model at every session of every joint (:mod:`dynid.health.trend`): a
fraction of a second per robot, which a fleet's page would pay for every robot each time it is drawn. Whoever
writes a robot's sessions judges that robot once more (estimator_node after each session, ``dynid batch``,
:func:`store_judgement`), and stores

- the robot's :class:`RobotHealth` as judged at its last session (:func:`dynid.health.assessment.assess`,
  ``now_utc`` None) and its page section (:func:`dynid.health.page.robot_section`), as zlib-compressed JSON
  (numbers written with ``repr``, arrays as their float64 bytes in base64: both read back bit for bit), in
  the ``judgements`` table (schema version 4);
- its :class:`JudgementBasis`: the robot's session count and newest session id, a digest of its events, a
  digest of the settings that judge (:data:`JUDGING_FIELDS`) and dynid's version.

A stored judgement is *current* while its basis is the record's now (:func:`current_basis`); a new session or
event, other settings or another dynid make it stale, and :func:`read_judgements` leaves that robot to be judged
again. The fleet's page then reads the current ones (one aggregate query, no session rows) and judges only the
stale ones: the judging is spread over the robot PCs, as the sessions arrive, and the page is a read.

    >>> with HealthRecord(db) as record:                                                   # doctest: +SKIP
    ...     record.append(session)
    ...     store_judgement(record, session.robot, settings)
"""

from __future__ import annotations

import base64
import hashlib
import json
import zlib
from dataclasses import asdict, fields

import numpy as np

from dynid import __version__
from dynid.errors import InputError
from dynid.health.assessment import RobotHealth, assess
from dynid.health.record import HealthRecord, JudgementBasis, RobotHistory, StoredJudgement, events_sha256
from dynid.health.settings import HealthSettings
from dynid.health.trend import Change, Forecast, QuantityHealth, Trend

#: the settings a judgement depends on (the others say where the record is and how a node writes it)
JUDGING_FIELDS = tuple(f.name for f in fields(HealthSettings)
                       if f.name not in ('db', 'robot', 'record', 'session_s', 'diagnostics_period_s'))
FORMAT = 2  # of the stored JSON; part of the basis's software


def settings_sha256(settings: HealthSettings) -> str:
    """sha256 of the judging settings (:data:`JUDGING_FIELDS`)."""
    text = json.dumps({name: getattr(settings, name) for name in JUDGING_FIELDS}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()


def software() -> str:
    """The judging software as a basis names it."""
    return f'dynid {__version__} judgement {FORMAT}'


def current_basis(robot: StoredJudgement, settings: HealthSettings) -> JudgementBasis:
    """The basis a judgement of ``robot`` made now, with ``settings``, would have."""
    return JudgementBasis(robot.sessions, robot.last_session_id, events_sha256(robot.events),
                          settings_sha256(settings), software())


# ------------------------------------------------------------------------------------------ to and from JSON
def _quantity_dict(q: QuantityHealth) -> dict:
    out = {}
    for f in fields(QuantityHealth):
        value = getattr(q, f.name)
        if isinstance(value, np.ndarray):  # the float64 bytes: exact, and quick to read back
            value = base64.b64encode(np.ascontiguousarray(value, dtype='<f8').tobytes()).decode('ascii')
        elif f.name == 'changes':
            value = [asdict(c) for c in value]
        elif f.name in ('trend', 'forecast'):
            value = None if value is None else asdict(value)
        elif isinstance(value, tuple):
            value = list(value)
        out[f.name] = value
    return out


def _quantity(d: dict) -> QuantityHealth:
    d = dict(d)
    for name in ('t_days', 'value', 'compensated', 'relative'):
        d[name] = np.frombuffer(base64.b64decode(d[name]), dtype='<f8').astype(float)
    d['changes'] = [Change(**c) for c in d['changes']]
    d['trend'] = None if d['trend'] is None else Trend(**d['trend'])
    d['forecast'] = None if d['forecast'] is None else Forecast(**d['forecast'])
    d['temperature_coefficients'] = tuple(d['temperature_coefficients'])
    return QuantityHealth(**d)


def encode(health: RobotHealth, section: str) -> bytes:
    """``health`` and its page section as compressed JSON (NaN and ±inf as JSON's extensions)."""
    document = {'robot': health.robot, 'model': health.model, 'joint_names': list(health.joint_names),
                'sessions': health.sessions, 'first_utc': health.first_utc, 'now_utc': health.now_utc,
                'joints': {joint: {quantity: _quantity_dict(q) for quantity, q in quantities.items()}
                           for joint, quantities in health.joints.items()},
                'section': section}
    return zlib.compress(json.dumps(document).encode(), 6)


def decode(judgement: bytes) -> tuple[RobotHealth, str]:
    """(the health, its page section) of :func:`encode`'s bytes."""
    d = json.loads(zlib.decompress(judgement))
    health = RobotHealth(d['robot'], d['model'], tuple(d['joint_names']), d['sessions'], d['first_utc'], d['now_utc'],
                         {joint: {quantity: _quantity(q) for quantity, q in quantities.items()}
                          for joint, quantities in d['joints'].items()})
    return health, d['section']


# ------------------------------------------------------------------------------------------ storing and reading
def store_judgement(record: HealthRecord, robot: str, settings: HealthSettings | None = None) -> RobotHealth:
    """Judge ``robot`` from ``record`` (opened for writing) at its last session and store the judgement with its
    basis (module docstring); returns the judgement. A session written meanwhile by another writer leaves the
    stored judgement stale (its basis is the history's), never wrong."""
    from dynid.health.page import robot_section

    settings = settings or HealthSettings()
    history = record.history(robot)
    if history.problem:
        raise InputError(f'{record.path}: robot {robot!r} cannot be judged: {history.problem}')
    health = assess(history, settings)
    record.store_judgement(robot, basis_of(history, settings), encode(health, robot_section(health, history.events)))
    return health


def basis_of(history: RobotHistory, settings: HealthSettings) -> JudgementBasis:
    """The basis of a judgement of ``history`` with ``settings``."""
    return JudgementBasis(len(history), int(history.session_id.max()) if len(history) else 0,
                          events_sha256(history.events), settings_sha256(settings), software())


def read_judgements(record: HealthRecord, settings: HealthSettings, robots=None) \
        -> tuple[dict[str, tuple[RobotHealth, str]], list[str], dict[str, list]]:
    """({robot: (health, page section)} of the current stored judgements, the robots to judge again (stale or
    none stored), {robot: events}) of ``robots`` (default every robot)."""
    current, stale, events = {}, [], {}
    for robot in record.stored_judgements(robots):
        events[robot.robot] = robot.events
        if robot.basis is not None and robot.basis == current_basis(robot, settings):
            try:
                current[robot.robot] = decode(robot.judgement)
                continue
            except (ValueError, TypeError, KeyError, AttributeError, zlib.error):  # damaged: judged again
                pass
        stale.append(robot.robot)
    return current, stale, events
