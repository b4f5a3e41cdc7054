"""OnlineEstimation (estimator_node's core) without DDS: the rate read off the stamps, results replaced or
refused, the tables, the stored baseline and what each joint's diagnostics say.

Data: the synthetic deflection of test_stiffness_estimator (τ_E = K1·φ + K3·φ³, no friction) through
the UR5e's drives, so the recovered k0 can be checked against K1.
"""

import numpy as np
import pytest
import yaml

from dynid.errors import InputError
from dynid.estimate.online import FRICTION_QUANTITIES, QUANTITIES, OnlineEstimation, load_baseline
from dynid.io.stream import StateBatch
from test_feedforward_terms import identified
from test_stiffness_estimator import K1, RATE, _synthetic


class Clock:
    def __init__(self) -> None:
        self.now = 10.0

    def __call__(self) -> float:
        return self.now


def _batches(robot, seconds: float, size: int = 50):
    q, theta, current = _synthetic(robot.drives, seconds=seconds)
    stamps = (np.arange(len(q)) * 1e9 / RATE).astype(np.int64)
    for a in range(0, len(q), size):
        rows = slice(a, a + size)
        yield StateBatch(stamps[rows], q[rows], np.zeros_like(q[rows]), np.zeros_like(q[rows]), theta=theta[rows],
                         current=current[rows])


@pytest.fixture(scope='module')
def learned(ur5e):
    """An estimation that read its rate off the stamps and learned 6 s of deflection."""
    clock = Clock()
    estimation = OnlineEstimation(ur5e, clock=clock)
    batches = list(_batches(ur5e, 6.0))
    first = batches[0]
    assert estimation.update(StateBatch(first.stamps_ns[:2], *(x[:2] for x in (first.q, first.dq, first.tau)),
                                        theta=first.theta[:2], current=first.current[:2])) == []
    assert estimation.last_sample_time is None and not estimation.rate_known  # 2 samples: no interval yet
    notes = [note for batch in batches for note in estimation.update(batch)]
    return estimation, clock, notes


def test_the_rate_is_read_off_the_stamps_and_the_stiffness_learned(learned, ur5e):
    estimation, clock, notes = learned
    assert estimation.rate_known and estimation.rate_hz == pytest.approx(RATE)
    assert estimation.stiffness.rate_hz == pytest.approx(RATE)  # made again for the rate read
    assert ('info', 'samples at 1000 Hz') in notes
    table = estimation.stiffness_table()
    assert table.shape == (ur5e.n, len(QUANTITIES)) and np.all(np.isnan(table[:, 3]))  # no baseline
    np.testing.assert_allclose(table[:, 2], K1, rtol=0.05)  # k0 within 5 % of the truth after 6 s
    assert estimation.friction is None and estimation.friction_table() is None  # no result: not adapted
    assert estimation.age_s() == 0.0
    clock.now += 2.5
    assert estimation.age_s() == pytest.approx(2.5)


def test_baseline_is_stored_read_back_and_a_drop_warns(learned, tmp_path, ur5e):
    estimation, _, _ = learned
    assert OnlineEstimation(ur5e).set_baseline(tmp_path / 'none.yaml') == (False, 'nothing estimated yet')
    path = tmp_path / 'deep' / 'baseline.yaml'
    stored, message = estimation.set_baseline(path)
    assert stored and str(path) in message
    k0 = estimation.stiffness_table()[:, 2]
    np.testing.assert_allclose(load_baseline(path, ur5e), k0)
    np.testing.assert_allclose(estimation.stiffness_table()[:, 3], 1.0)
    estimation.baseline = k0 / np.r_[0.5, np.ones(ur5e.n - 1)]  # joint 1: half its baseline now
    states = {s.joint: s for s in estimation.joint_states(0.15) if s.kind == 'stiffness'}
    first, second = ur5e.joint_names[:2]
    assert states[first].level == 'warn' and '50 % below the baseline' in states[first].text
    assert states[second].level == 'ok' and states[second].values['k0'] == f'{k0[1]:.6g}'
    assert load_baseline(tmp_path / 'absent.yaml', ur5e) is None
    bad = tmp_path / 'bad.yaml'
    bad.write_text(yaml.safe_dump({'k0': {ur5e.joint_names[0]: 1.0}}))
    with pytest.raises(InputError, match='not a baseline of ur5e'):
        load_baseline(bad, ur5e)


def test_a_result_replaces_the_estimators_and_a_bad_one_is_refused(ur5e):
    estimation = OnlineEstimation(ur5e, rate_hz=RATE)
    assert estimation.friction is None and ('info', 'friction not adapted: no identification result') in \
        estimation.notes
    kept = estimation.stiffness
    with pytest.raises(InputError):
        estimation.replace_result('robot: [not, a, result', 'result_topic', '/r')
    assert estimation.results_refused == 1 and estimation.stiffness is kept and estimation.result_source == ''
    result = identified(ur5e, 'viscous_coulomb', {'Fc': 2.0, 'Fv': 5.0})
    estimation.replace_result(yaml.safe_dump(result.to_dict()), 'result_topic', '/identifier_node/result')
    assert estimation.result_source == 'result from /identifier_node/result' and estimation.stiffness is not kept
    table = estimation.friction_table()
    assert table.shape == (ur5e.n, len(FRICTION_QUANTITIES))
    np.testing.assert_allclose(table[:, :2], estimation.friction.alpha)
    friction = [s for s in estimation.joint_states(0.15) if s.kind == 'friction']
    assert [s.joint for s in friction] == list(ur5e.joint_names)
    assert all(s.level == 'ok' and 'Coulomb level ×' in s.text for s in friction)  # nominal α̂1: inside its bounds
    estimation.reset()
