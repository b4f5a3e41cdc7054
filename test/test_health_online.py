"""estimator_node's health record without DDS (dynid.health.online.SessionRecorder): sessions written on
time, at events and at shutdown, nothing while inputs are stale, write failures survived, the judgement.

Data: a synthetic deflection φ = 1 mrad·sin(3t) on every joint of the UR5e, rotor θ = 0.5·sin(0.7t), and the
current that makes K_τ·i − B·θ̈ = K1·φ, so the stiffness estimate settles near K1 (no friction).
"""

import numpy as np
import pytest

from dynid.errors import InputError
from dynid.estimate.online import OnlineEstimation
from dynid.health.online import MIN_SNAPSHOTS, SessionRecorder
from dynid.health.record import HealthRecord
from dynid.health.settings import HealthSettings
from dynid.io.stream import StateBatch

RATE = 500.0
K1 = 3e4


class Clock:
    def __init__(self) -> None:
        self.now = 1.7e9

    def __call__(self) -> float:
        return self.now


def _feed(estimation, robot, seconds: float, start_s: float = 0.0) -> None:
    t = start_s + np.arange(int(seconds * RATE)) / RATE
    theta = 0.5 * np.sin(0.7 * t)[:, None] * np.ones(robot.n)
    ddtheta = -0.49 * theta
    phi = 1e-3 * np.sin(3.0 * t)[:, None] * np.ones(robot.n)
    current = (K1 * phi + robot.drives.rotor_inertia * ddtheta) / robot.drives.drive_gain
    stamps = np.round(t * 1e9).astype(np.int64)
    for a in range(0, t.size, 100):
        rows = slice(a, a + 100)
        q = theta[rows] - phi[rows]
        estimation.update(StateBatch(stamps[rows], q, np.zeros_like(q), np.zeros_like(q), theta=theta[rows],
                                     current=current[rows], temperature=np.full_like(q, 31.0)))


@pytest.fixture
def running(ur5e, tmp_path):
    clock = Clock()
    estimation = OnlineEstimation(ur5e, rate_hz=RATE, clock=clock)
    settings = HealthSettings(db=str(tmp_path / 'health.sqlite3'), robot='cell-2', session_s=60.0)
    return estimation, SessionRecorder(estimation, settings, input='/estimator_node', clock=clock), clock


def _run(estimation, recorder, clock, robot, seconds: int, start_s: float = 0.0) -> list:
    notes = []
    for k in range(seconds):
        _feed(estimation, robot, 1.0, start_s + k)
        clock.now += 1.0
        notes += recorder.tick()
    return notes


def test_a_session_is_written_every_session_s_with_the_settled_estimates(running, ur5e, tmp_path):
    estimation, recorder, clock = running
    assert not (tmp_path / 'health.sqlite3').exists()  # nothing written yet, so no file
    notes = _run(estimation, recorder, clock, ur5e, 70)
    assert any('written' in text for _, text in notes)
    with HealthRecord(tmp_path / 'health.sqlite3', readonly=True) as record:
        history = record.history('cell-2')
        assert record.inputs('cell-2') == {'/estimator_node'}
        stored = record.stored_judgements()  # judged after the write and stored, for the fleet's page
        assert [(r.robot, r.basis.sessions) for r in stored] == [('cell-2', 1)]
    assert len(history) == 1 and history.model == 'ur5e'
    np.testing.assert_allclose(history.values['stiffness'][0], K1, rtol=0.05)
    assert np.all(history.values['stiffness_std'][0] < 0.02 * K1)
    assert np.all(history.values['temperature_c'][0] == 31.0)
    assert np.all(history.values['samples'][0] >= 59 * RATE)  # the session's samples
    assert np.all(history.values['stiffness_residual_rms'][0] < 1.0)  # N·m: the synthetic data fit exactly
    assert np.isnan(history.values['friction_scale'][0]).all()  # no result: friction not adapted
    assert history.duration_s[0] == pytest.approx(60.0, abs=1.5)
    (record_status, *joints) = recorder.statuses()
    assert record_status.quantity == 'record' and '1 sessions of cell-2' in record_status.text
    assert len(joints) == ur5e.n and {s.level for s in joints} == {'ok'}
    assert all('learning the baseline' in s.text for s in joints)


def test_events_and_shutdown_close_the_session_and_stale_inputs_record_nothing(running, ur5e, tmp_path):
    estimation, recorder, clock = running
    _run(estimation, recorder, clock, ur5e, 20)
    recorder.event('reset')
    estimation.reset()
    for _ in range(30):  # no samples: stale inputs take no snapshots
        clock.now += 1.0
        recorder.tick()
    assert len(recorder.times) == 0
    _run(estimation, recorder, clock, ur5e, MIN_SNAPSHOTS - 1, start_s=20.0)
    recorder.close()  # too few snapshots since the reset: nothing more is written
    with HealthRecord(tmp_path / 'health.sqlite3', readonly=True) as record:
        history = record.history('cell-2')
    assert len(history) == 1 and history.duration_s[0] == pytest.approx(19.0, abs=1.5)
    assert [e.kind for e in history.events] == ['reset']


def test_a_damaged_record_is_refused_at_start_and_a_failed_write_is_survived(ur5e, tmp_path):
    clock = Clock()
    estimation = OnlineEstimation(ur5e, rate_hz=RATE, clock=clock)
    damaged = tmp_path / 'damaged.sqlite3'
    damaged.write_bytes(b'SQLite format 3\x00' + b'\x07' * 5000)
    with pytest.raises(InputError, match='damaged.sqlite3'):
        SessionRecorder(estimation, HealthSettings(db=str(damaged)), clock=clock)
    blocked = tmp_path / 'a_file'
    blocked.write_text('x')
    recorder = SessionRecorder(estimation, HealthSettings(db=str(blocked / 'health.sqlite3'), session_s=60.0),
                               clock=clock)
    notes = _run(estimation, recorder, clock, ur5e, 61)
    assert recorder.failed == 1 and any(level == 'warn' and 'not written' in text for level, text in notes)
    assert recorder.statuses()[0].level == 'warn'
