"""OnlineEstimation (estimator_node's core) without DDS: the rate read off the stamps, results replaced or
refused, the tables, the stored baseline and what each joint's diagnostics say.

Data: the synthetic deflection of stiffness_data (τ_E = K1·φ + K3·φ³, no friction) through
the UR5e's drives, so the recovered k0 can be checked against K1.
"""

import numpy as np
import pytest
import yaml

from builders import identified
from dynid.errors import InputError
from dynid.estimate.online import FRICTION_QUANTITIES, QUANTITIES, OnlineEstimation, friction_state, load_baseline
from dynid.io.stream import StateBatch
from stiffness_data import K1, RATE, deflection_log


class Clock:
    def __init__(self) -> None:
        self.now = 10.0

    def __call__(self) -> float:
        return self.now


def _batches(robot, seconds: float, size: int = 50):
    q, theta, current = deflection_log(robot.drives, seconds=seconds)
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
    with pytest.raises(InputError, match='bad.yaml: k0 has no entry for shoulder_lift_joint'):
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


def test_a_capped_friction_estimate_warns_with_its_bound():
    """/diagnostics of a joint whose α̂ sits on an edge of its projection box: warn, naming the estimate and bound."""
    lower, upper = np.array([0.0, -0.5]), np.array([2.0, 0.5])
    inside = friction_state('j1', (1.47, 0.1, 1.0), lower, upper)
    assert inside.level == 'ok' and 'Coulomb level ×1.470' in inside.text and 'capped' not in inside.text
    assert inside.values['alpha1_capped'] == 'False' and inside.values['alpha1_bounds'] == '0 2'
    capped = friction_state('j1', (2.0, -0.5, 1.0), lower, upper)
    assert capped.level == 'warn' and capped.values['alpha2_capped'] == 'True'
    assert 'α̂1 capped at its upper bound 2' in capped.text and 'α̂2 capped at its lower bound -0.5' in capped.text


def test_a_joint_that_never_deflects_says_so_after_a_while(ur5e):
    """θ = q on the last joint (motor_states that are the link positions): after DEFLECTION_WAIT_S of samples its
    diagnostics say 'no deflection measured' and its table row holds NaN, not k0 0 N·m/rad; the others learn."""
    from dynid.estimate.online import DEFLECTION_WAIT_S

    estimation = OnlineEstimation(ur5e, clock=Clock())
    for batch in _batches(ur5e, DEFLECTION_WAIT_S + 1.0, size=500):
        batch.theta[:, -1] = batch.q[:, -1]
        estimation.update(batch)
    states = {s.joint: s for s in estimation.joint_states(0.15) if s.kind == 'stiffness'}
    last = ur5e.joint_names[-1]
    assert states[last].level == 'warn' and 'no deflection measured' in states[last].text
    table = estimation.stiffness_table()
    assert np.isnan(table[-1, 2]) and np.all(table[:-1, 2] > 0)
    assert 'no deflection' not in states[ur5e.joint_names[0]].text


def test_gaps_in_the_stamps_restart_the_signal_path_as_the_replay_does(ur5e):
    # 8 s of deflection with 1 s, 0.25 s and 1.5 s lost (what a starved subscriber loses): the online
    # estimation restarts its front ends after each gap and keeps what it learned, giving α̂ of the replay
    # of the same samples as contiguous pieces (to rounding, 1e-12: the same estimators on the same
    # pieces, batched differently), k0 within 1 % (measured 0.1 %). Fed as one stream, as before, the
    # front ends differentiate across the gaps: k0 up to 35 % off and no joint converged (measured).
    from dynid.estimate.replay import estimate
    from dynid.estimate.stiffness import CONVERGED_RELATIVE_STD, StiffnessEstimator
    from dynid.io.dataset import Dataset

    q, theta, current = deflection_log(ur5e.drives, seconds=8.0)
    kept = np.ones(len(q), dtype=bool)
    for first, count in ((1980, 1000), (4010, 250), (5500, 1500)):  # across batch boundaries and inside one
        kept[first:first + count] = False
    index = np.flatnonzero(kept)
    q, theta, current = q[index], theta[index], current[index]
    stamps = (index * 1e9 / RATE).astype(np.int64)
    online = OnlineEstimation(ur5e, rate_hz=RATE)
    for a in range(0, len(q), 50):
        rows = slice(a, a + 50)
        online.update(StateBatch(stamps[rows], q[rows], np.zeros_like(q[rows]), np.zeros_like(q[rows]),
                                 theta=theta[rows], current=current[rows]))
    assert online.gaps == 3 and online.samples == len(q)
    dataset = Dataset(ur5e.joint_names, index / RATE, q, np.zeros_like(q), theta=theta, current=current)
    replayed = estimate(dataset, None, None, ur5e)
    np.testing.assert_allclose(online.stiffness.alpha, replayed.stiffness_alpha[-1], rtol=1e-12)
    np.testing.assert_allclose(online.stiffness_table()[:, 2], K1, rtol=0.01)
    assert np.all(online.stiffness.relative_std <= CONVERGED_RELATIVE_STD)
    spliced = StiffnessEstimator.from_robot(ur5e, rate_hz=RATE)
    spliced.update(q, theta, current)
    assert np.abs(spliced.stiffness_at_zero / K1 - 1).max() > 0.2, spliced.stiffness_at_zero / K1
    assert np.all(spliced.relative_std > CONVERGED_RELATIVE_STD), spliced.relative_std


def test_the_encoder_watch_follows_the_motor_states_that_come():
    from dynid.estimate.online import ENCODER_WAIT_S, EncoderWatch

    clock = Clock()
    watch = EncoderWatch(clock=clock)
    assert watch.update(0, 0)  # nothing heard yet: encoders assumed (motor_states may come later than joint_states)
    for second in range(1, 6):  # joint_states and motor_states
        clock.now += 1.0
        assert watch.update(100 * second, 100 * second)
    states = 500
    for _ in range(int(ENCODER_WAIT_S)):  # motor_states stop: still trusted for wait_s
        clock.now, states = clock.now + 1.0, states + 100
        assert watch.update(states, 500)
    clock.now, states = clock.now + 0.5, states + 50
    assert not watch.update(states, 500)  # joint_states for longer than wait_s without them
    clock.now += 10.0
    assert not watch.update(states, 500)  # nothing arrives at all: as it was
    clock.now += 1.0
    assert watch.update(states + 100, 501)  # motor_states again


def test_without_motor_encoders_the_friction_is_adapted_on_rigid_joints_as_the_replay_does(ur5e):
    # An arm without motor_states: the node's estimation made again for θ = q adapts the friction exactly as
    # `dynid estimate --no-stiffness` replays the same samples (to rounding: the same estimators, batched
    # differently), leaves the stiffness out with the reason, and says what it does.
    from dynid.estimate.replay import EstimationSettings, estimate
    from dynid.io.dataset import Dataset

    result = identified(ur5e, 'viscous_coulomb', {'Fc': 2.0, 'Fv': 3.0})
    q, _, current = deflection_log(ur5e.drives, seconds=4.0)
    stamps = (np.arange(len(q)) * 1e9 / RATE).astype(np.int64)
    # the staleness watch on a clock of its own: the replay below may take more than a second on a busy machine
    online = OnlineEstimation(ur5e, result, rate_hz=RATE, clock=lambda: 0.0)
    assert online.rotor and online.stiffness is not None and online.left_out == []
    notes = online.use_rotor(False)
    assert notes[0] == ('warn', 'friction only (no motor_states), on rigid joints (θ = q)')
    assert online.stiffness is None and not online.friction.rotor
    assert online.left_out[0].startswith('stiffness not estimated: the stiffness estimation needs the motor encoders')
    for a in range(0, len(q), 50):
        rows = slice(a, a + 50)
        online.update(StateBatch(stamps[rows], q[rows], np.zeros_like(q[rows]), np.zeros_like(q[rows]),
                                 current=current[rows]))
    replayed = estimate(Dataset(ur5e.joint_names, stamps / 1e9, q, np.zeros_like(q), current=current), result,
                        EstimationSettings(stiffness=False), ur5e)
    np.testing.assert_allclose(online.friction.alpha, replayed.friction_alpha[-1], rtol=1e-12, atol=1e-15)
    shown = {what: (level, text) for what, level, text, _ in online.display(0.15)}
    assert shown['mode'] == ('ok', 'friction only (no motor_states), on rigid joints (θ = q)')
    assert shown['left out'][0] == 'warn' and 'motor encoders' in shown['left out'][1]
    assert 'friction wrist_3_joint' in shown and not any(what.startswith('stiffness') for what in shown)
    assert np.all(np.isnan(online.stiffness_table()))
    assert online.use_rotor(False) == []  # unchanged: nothing made again
    online.use_rotor(True)
    assert online.stiffness is not None and online.friction.rotor and online.left_out == []
    stiffness_off = OnlineEstimation(ur5e, result, EstimationSettings(stiffness=False), rate_hz=RATE)
    assert stiffness_off.mode() == 'friction only (stiffness off), on the rotor (motor_states: θ)'
