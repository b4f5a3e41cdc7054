"""Contact detection (σ, hysteresis, rest baseline), its calibration and the flange wrench."""

import dataclasses
import json

import numpy as np
import pytest

from builders import own_model_result
from dynid.contact.calibration import CalibrationRun, calibrate, gaussian_threshold
from dynid.contact.detection import ContactDetector
from dynid.contact.monitor import ContactMonitor, load_calibration, save_calibration
from dynid.contact.settings import ContactSettings
from dynid.contact.wrench import FlangeWrench
from dynid.errors import InputError
from dynid.sim.contacts import ContactLoad, ContactSchedule

RATE = 1000.0
DETECTOR = ContactSettings().detector()  # the detector's defaults


def _signals(seconds, moving=True, seed=0, n=3, sigma=0.1):
    rng = np.random.default_rng(seed)
    t = np.arange(int(seconds * RATE)) / RATE
    velocity = np.full((t.size, n), 1.0 if moving else 0.0)
    return t, sigma * rng.standard_normal((t.size, n)), velocity


def _detector(n=3, sigma=0.1, stiction=1.0, threshold=6.0, threshold_track=None, **settings):
    return ContactDetector(np.full(n, sigma), np.full(n, stiction), np.full(n, threshold), np.full(n, 100.0),
                           dataclasses.replace(DETECTOR, **settings), threshold_track=threshold_track)


def test_a_contact_in_motion_is_one_alarm_with_its_start_end_peak_and_distal_joint():
    t, external, velocity = _signals(2.0)
    inside = (t >= 0.5) & (t < 0.7)
    external[inside, 0] += 3.0  # 30 σ on joints 1 and 2, none on 3: the contact is on link 2 or beyond
    external[inside, 1] -= 2.0
    samples, contacts = _detector().run(t, external, velocity)
    assert len(contacts) == 1
    contact = contacts[0]
    assert 0.5 <= contact.start_s <= 0.5 + 0.004 and 0.7 <= contact.end_s <= 0.7 + 0.03
    assert contact.joints == (0, 1) and contact.distal_joint == 1 and contact.raised_by == ('torque',)
    assert contact.peak_signed_nm[0] == pytest.approx(3.0, abs=0.5) and contact.peak_signed_nm[1] < -1.5


def test_one_sample_is_no_alarm_and_the_batch_split_changes_nothing():
    t, external, velocity = _signals(1.0)
    external[400, 0] = 5.0  # a sampling artefact: 50 σ on one sample
    external[600:700, 2] = 2.0
    whole, contacts = _detector().run(t, external, velocity)
    assert [c.joints for c in contacts] == [(2,)]
    detector = _detector()
    parts = [detector.run(t[a:b], external[a:b], velocity[a:b]) for a, b in ((0, 1), (1, 650), (650, 1000))]
    np.testing.assert_array_equal(np.vstack([p[0].alarm for p in parts]), whole.alarm)
    np.testing.assert_allclose(np.vstack([p[0].estimate for p in parts]), whole.estimate, rtol=0, atol=1e-12)
    ended = list({id(c): c for p in parts for c in p[1] if c.end_s is not None}.values())  # an open one comes again
    assert len(ended) == 1 and ended[0].start_s == contacts[0].start_s and ended[0].end_s == contacts[0].end_s


def test_at_rest_an_offset_static_friction_holds_ends_the_alarm_and_a_larger_one_does_not():
    """A push at rest leaves 0.8 N·m or 1.6 N·m (static friction held anything within ±F_s = 1 N·m before it and
    after it: the change is within 2 F_s): the alarm ends within settle_s + 0.1 s of the force going away and the
    offset becomes the baseline; a 3 N·m offset (beyond 2 F_s) keeps the alarm."""
    for offset, ends in ((0.8, True), (1.6, True), (3.0, False)):
        t, external, velocity = _signals(4.0, moving=False, sigma=0.02)
        external[(t >= 1.0) & (t < 1.5)] += 5.0
        external[t >= 1.5] += offset
        samples, contacts = _detector(sigma=0.02, rest_drift=0.05).run(t, external, velocity)
        assert contacts and contacts[0].start_s == pytest.approx(1.0, abs=0.01)
        if ends:
            assert contacts[0].end_s is not None and contacts[0].end_s - 1.5 <= 0.3 + 0.1
            assert abs(samples.estimate[-1, 0]) < 0.2
        else:
            assert contacts[-1].end_s is None


def test_a_joint_breaking_away_while_the_others_move_is_no_alarm_and_the_same_torque_at_rest_is():
    """Joint 1 has rested for seconds; then joints 2 and 3 move and it takes 0.9 F_s (the motor torque that breaks it
    away, which the model, seeing no velocity, cannot predict) for 0.3 s: no alarm, its σ is F_s while the others
    move. With the whole arm at rest the same torque is an alarm (its σ is the rest level there, 0.05 F_s)."""
    for others_move, alarm in ((True, False), (False, True)):
        t, external, velocity = _signals(4.0, moving=False, sigma=0.02)
        late = t >= 3.0
        if others_move:
            velocity[late, 1:] = 0.5
        external[late & (t < 3.3), 0] += 0.9
        samples, contacts = _detector(sigma=0.02, rest_drift=0.05).run(t, external, velocity)
        assert bool(contacts) is alarm
        if others_move:
            assert samples.sigma[late & (t < 3.3), 0].min() >= 1.0  # F_s = 1 N·m

def test_a_breakaway_the_reference_commands_is_no_alarm_at_rest_and_without_the_reference_it_is():
    """The whole arm has rested for seconds; at 3 s a motion is commanded (q̇_r 0.05 rad/s, above command_velocity)
    and joint 1 takes 0.9 F_s for 0.3 s before it moves (the motor breaking it away): with the reference the arm is
    not at rest there (σ is F_s, the motion threshold): no alarm. Without it, the same samples are a push at rest.
    A NaN reference is no reference."""
    t, external, velocity = _signals(4.0, moving=False, sigma=0.02)
    breakaway = (t >= 3.0) & (t < 3.3)
    external[breakaway, 0] += 0.9
    commanded = np.zeros_like(external)
    commanded[t >= 3.0] = 0.05
    samples, contacts = _detector(sigma=0.02, rest_drift=0.05).run(t, external, velocity, commanded=commanded)
    assert not contacts and not samples.still[breakaway].any() and samples.still[t < 3.0].all()
    assert samples.sigma[breakaway, 0].min() >= 1.0
    for unknown in (None, np.full_like(external, np.nan)):
        samples, contacts = _detector(sigma=0.02, rest_drift=0.05).run(t, external, velocity, commanded=unknown)
        assert len(contacts) == 1 and contacts[0].start_s == pytest.approx(3.0, abs=0.01) and samples.still.all()


def test_a_joint_creeping_under_its_reference_stops_when_the_reference_does():
    """Joint 1 creeps at 3 mrad/s (below rest_velocity) while its reference moves, for 3 s; at the reference's stop it
    comes to rest holding 1.5 N·m the model drops. Its stop dates from the reference's: the held friction snaps into
    the baseline, no alarm. Without the reference the joint has been at rest (slow) since the start, the stop is not
    seen and the same step is an alarm."""
    t, external, velocity = _signals(4.0, moving=False, sigma=0.02)
    creeping = t < 3.0
    velocity[creeping, 0] = 3e-3
    commanded = np.zeros_like(external)
    commanded[creeping, 0] = 3e-3
    external[~creeping, 0] += 1.5
    settings = dict(sigma=0.02, rest_drift=0.2, threshold=4.0)
    samples, contacts = _detector(**settings).run(t, external, velocity, commanded=commanded)
    assert not contacts and np.abs(samples.estimate[t >= 3.4, 0]).max() < 0.1
    _, contacts = _detector(**settings).run(t, external, velocity)
    assert len(contacts) == 1 and contacts[0].start_s == pytest.approx(3.0, abs=0.05)


def test_the_rest_threshold_calibrated_with_the_reference_leaves_out_the_breakaways():
    """Contact-free runs whose rests end with a commanded breakaway (0.9 F_s, 0.2 s, before the joint moves):
    without the reference the rest threshold must lie above the breakaways (no alarm on the runs it comes from);
    with it they count as motion and the rest threshold is the true rest's, several times lower."""
    runs = []
    for seed in range(4):
        t, external, velocity = _signals(30.0, moving=False, seed=seed, sigma=0.02)
        commanded = np.zeros_like(external)
        for start in (5.0, 15.0, 25.0):
            external[(t >= start) & (t < start + 0.2), 0] += 0.9
            commanded[(t >= start) & (t < start + 2.0)] = 0.3
            velocity[(t >= start + 0.2) & (t < start + 2.0)] = 0.3
        runs.append(CalibrationRun(t, external, velocity, None, commanded))
    n, args = 3, (np.full(3, 1.0), np.full(3, 1.0), np.full(3, 100.0), 0.5)
    settings = dataclasses.replace(DETECTOR, rest_drift=0.05)
    told = calibrate(runs, *args, settings)
    blind = calibrate([run._replace(commanded=None) for run in runs], *args, settings)
    assert told.with_reference and not blind.with_reference
    assert blind.threshold_rest[0] > 2.5 * told.threshold_rest[0]
    for calibration, reference in ((told, True), (blind, False)):
        detector = ContactDetector(calibration.sigma0, np.ones(n), calibration.threshold, np.full(n, 100.0), settings,
                                   calibration.threshold_rest)
        assert all(not detector.run(*run[:4], commanded=run.commanded if reference else None)[1] for run in runs)


def test_the_end_of_a_contact_at_rest_is_a_stop_and_the_offset_it_leaves_becomes_the_baseline():
    """A push at rest (5 N·m, 0.5 s) that leaves 2 N·m, beyond F_s (1 N·m), and the arm twitches 30 ms as it goes
    (which ends the alarm by release): the joint then counts as just stopped, its baseline takes the offset and the
    alarm does not come back."""
    t, external, velocity = _signals(4.0, moving=False, sigma=0.02)
    external[(t >= 1.0) & (t < 1.5)] += 5.0
    external[t >= 1.5] += 2.0
    velocity[(t >= 1.5) & (t < 1.53), 1] = 0.5
    samples, contacts = _detector(sigma=0.02, rest_drift=0.05).run(t, external, velocity)
    assert len(contacts) == 1 and contacts[0].end_s is not None and contacts[0].end_s < 1.6
    assert np.abs(samples.estimate[t >= 2.0]).max() < 0.2


def test_the_friction_held_at_the_stop_becomes_the_baseline_at_once_and_a_push_after_it_is_seen():
    """The arm slows down to a stop at 1 s holding 1.5 N·m (kinetic friction that static friction keeps, which the
    model, seeing no velocity, drops): with the stop snapped (rest_snap_s 0.3 s) d is within 0.1 N·m from 0.4 s after
    the stop; a baseline following from the stop with T_b = 1 s still leaves 1.5·e^(−1) ≈ 0.55 N·m at 1 s. A 200 ms
    push of −1.5 N·m at 2 s (against the held friction) is an alarm with the stop snapped (5 σ of its rest level) and
    not without (the lag takes 0.55 N·m off it, the envelope is larger there)."""
    t, external, velocity = _signals(4.0, moving=False, sigma=0.01)
    velocity[t < 1.0] = np.clip(0.5 * (1.0 - t[t < 1.0]) / 0.2, 0.0, 0.5)[:, None]  # slowing down to the stop
    external[t >= 1.0] += 1.5
    # stiction_velocity 0.05 rad/s: the held 1.5 N·m exceeds F_s (1 N·m), which only the envelope's slower fall at the
    # stop covers; the snap is what is tested here
    settings = dict(sigma=0.01, rest_drift=0.2, rest_baseline_s=1.0, threshold=4.0, stiction_velocity=0.05)
    snapped, contacts = _detector(**settings, rest_snap_s=0.3).run(t, external, velocity)
    slow, _ = _detector(**settings, rest_snap_s=0.0).run(t, external, velocity)
    assert np.abs(snapped.estimate[t >= 1.4]).max() < 0.1 and not contacts
    assert slow.estimate[(t >= 1.99) & (t < 2.0), 0].mean() > 0.45
    external[(t >= 2.0) & (t < 2.2), 0] -= 1.5
    _, contacts = _detector(**settings, rest_snap_s=0.3).run(t, external, velocity)
    assert len(contacts) == 1 and contacts[0].joints == (0,) and contacts[0].start_s == pytest.approx(2.0, abs=0.01)
    assert not _detector(**settings, rest_snap_s=0.0).run(t, external, velocity)[1]


def test_calibration_measures_sigma_and_puts_the_threshold_above_a_short_run():
    """σ₀ from steady motion within 5 %; calibrated on 2 minutes for 0.5 alarms per hour, no alarm on them, and a
    rarer rate asks a higher threshold."""
    runs = []
    for seed in range(4):
        t, external, velocity = _signals(30.0, seed=seed, sigma=0.3)
        runs.append(CalibrationRun(t, external, velocity))
    n = 3
    loose = calibrate(runs, np.full(n, 1.0), np.zeros(n), np.full(n, 100.0), 0.5, DETECTOR)
    strict = calibrate(runs, np.full(n, 1.0), np.zeros(n), np.full(n, 100.0), 0.01, DETECTOR)
    np.testing.assert_allclose(loose.sigma0, 0.3, rtol=0.05)
    assert np.all(loose.threshold > loose.largest_z) and np.all(strict.threshold >= loose.threshold)
    detector = ContactDetector(loose.sigma0, np.zeros(n), loose.threshold, np.full(n, 100.0), DETECTOR,
                               threshold_rest=loose.threshold_rest)
    assert all(not detector.run(*run[:3])[1] for run in runs)


def test_a_tail_too_thin_to_fit_takes_the_gaussian_level_at_the_recordings_rate():
    """Rests whose z never reaches 3 σ: the rest threshold is the level a Gaussian z passes at the joint's share of the
    rate at the recordings' sample rate, lower at 100 Hz than at 1 kHz (a fixed 6 σ missed a UR10e push held at 6.0 σ
    at 94 Hz); a push held at 5.8 σ on the still arm at 100 Hz is then one alarm."""
    n, found = 3, {}
    for rate in (100.0, 1000.0):
        t = np.arange(int(120 * rate)) / rate
        external = 0.3 * np.random.default_rng(1).standard_normal((t.size, n))  # z ~ 0.3 against σ₀ = 1 N·m
        still = np.zeros((t.size, n))
        calibration = calibrate([CalibrationRun(t, external, still)], np.full(n, 1.0), np.zeros(n), np.full(n, 100.0),
                                0.5, DETECTOR)
        assert calibration.excursions_rest.max() < 5
        np.testing.assert_allclose(calibration.threshold_rest, gaussian_threshold(0.5 / n / 2, rate))
        found[rate] = calibration
    assert 5.0 < found[100.0].threshold_rest[0] < found[1000.0].threshold_rest[0] < 6.0
    t = np.arange(1000) / 100.0
    external = 0.3 * np.random.default_rng(2).standard_normal((t.size, n))
    external[(t >= 4.0) & (t < 5.0), 1] += 5.8
    calibration = found[100.0]
    detector = ContactDetector(calibration.sigma0, np.zeros(n), calibration.threshold, np.full(n, 100.0), DETECTOR,
                               threshold_rest=calibration.threshold_rest)
    contacts = detector.run(t, external, np.zeros((t.size, n)))[1]
    assert len(contacts) == 1 and contacts[0].joints == (1,) and 4.0 <= contacts[0].start_s < 4.2, contacts


def test_the_calibration_file_round_trips_and_a_wrong_one_is_refused(ur5e, tmp_path):
    monitor = ContactMonitor(own_model_result(ur5e), ur5e)
    t, external, velocity = _signals(20.0, n=ur5e.n)
    calibration = calibrate([CalibrationRun(t, external, velocity)], np.full(6, 1.0), np.zeros(6), np.full(6, 100.0),
                            0.5, DETECTOR)
    path = tmp_path / 'calibration.yaml'
    save_calibration(calibration, path, ur5e, monitor.settings)
    loaded = load_calibration(path, ur5e)
    np.testing.assert_allclose(loaded.threshold, calibration.threshold)
    np.testing.assert_allclose(loaded.threshold_rest, calibration.threshold_rest)
    assert loaded.with_reference is False and loaded.threshold_track is None  # no reference position calibrated
    calibration.threshold_track, calibration.threshold_speed = np.full(6, 2e-4), np.full(6, 3e-3)
    save_calibration(calibration, path, ur5e, monitor.settings)
    loaded = load_calibration(path, ur5e)
    np.testing.assert_allclose(loaded.threshold_track, 2e-4)
    np.testing.assert_allclose(loaded.threshold_speed, 3e-3)
    calibration.threshold_track = calibration.threshold_speed = None
    calibration.with_reference = True
    save_calibration(calibration, path, ur5e, monitor.settings)
    assert load_calibration(path, ur5e).with_reference is True
    path.write_text(path.read_text().replace('with_reference: true', 'with_reference: 1'))
    with pytest.raises(InputError, match='with_reference must be true or false'):
        load_calibration(path, ur5e)
    path.write_text(path.read_text().replace('shoulder_pan_joint', 'other_joint'))
    with pytest.raises(InputError, match='sigma0_nm needs a number for each joint'):
        load_calibration(path, ur5e)


def test_the_wrench_from_its_joint_torque_comes_back_and_a_singular_pose_is_refused(ur5e):
    """τ = Jᵀ·w of a flange load gives w back (1e-6); with the wrist straight (q5 = 0) the pose is refused."""
    wrench = FlangeWrench(ur5e)
    q = ur5e.random_states(3, seed=8)[0]
    q[2, 4] = 0.0
    load = ContactLoad('flange', (0.02, -0.01, 0.08), (4.0, -9.0, 15.0), 0.0, 1.0, moment=(0.3, 0.0, -0.5))
    schedule = ContactSchedule(ur5e, [load])
    tau = np.array([schedule.torque(0.5, qk) for qk in q])
    estimate, std, singular = wrench.estimate(q, tau, np.full_like(tau, 0.1))
    truth = schedule.flange_wrench(np.full(3, 0.5), q)
    np.testing.assert_allclose(estimate[:2], truth[:2], atol=1e-6)
    assert singular.tolist() == [False, False, True] and np.isnan(estimate[2]).all() and np.all(std[:2] > 0)


def test_a_wrench_needs_six_joints(ur5e):
    arm = ur5e.__class__.from_urdf(ur5e.urdf, joints=list(ur5e.joint_names[:5])) if ur5e.urdf else None
    if arm is None:
        from dynid.model import load_robot
        arm = load_robot('ur5', joints=list(load_robot('ur5').joint_names[:5]))
    with pytest.raises(InputError, match='needs six joints or more'):
        FlangeWrench(arm)


def test_the_commanded_velocity_follows_the_trajectories_sent_with_the_controllers_semantics():
    """Nothing known before the first trajectory; one sent at 10 s whose first point is 1 s later is reached from
    where the arm is (held: 0.1 rad/s on joint a for 0.1 rad in that second), then its end is held (0 rad/s);
    an empty trajectory (None) stops at once."""
    from dynid.contact.command import CommandedVelocity
    from dynid.excite.trajectory import PointTrajectory

    names = ('a', 'b', 'c')
    commanded = CommandedVelocity(names)
    assert commanded.at(np.array([9.0])) is None
    q = np.array([0.1, 0.2, 0.3])
    trajectory = PointTrajectory(('c', 'a', 'b'), [1.0], [[0.3, 0.2, 0.2]])  # joint a: 0.1 -> 0.2 rad
    commanded.follow(trajectory, 10.0, 10.0, q)
    velocity = commanded.at(np.array([9.9, 10.5, 11.5]))[1]
    assert velocity[0].tolist() == [0.0, 0.0, 0.0] and velocity[2].tolist() == [0.0, 0.0, 0.0]
    assert velocity[1, 0] == pytest.approx(0.1) and velocity[1, 1:].tolist() == [0.0, 0.0]
    commanded.follow(PointTrajectory(names, [5.0], [[1.0, 0.2, 0.3]]), 20.0, 20.0, q)
    assert commanded.at(np.array([22.0]))[1][0, 0] == pytest.approx(0.8 / 5.0)
    commanded.follow(None, 23.0, 23.0, q)
    assert not commanded.at(np.array([23.5]))[1].any()


def test_the_live_job_warns_where_the_arm_moves_without_the_reference_its_thresholds_were_calibrated_with(ur5e):
    """Thresholds calibrated with the controller's reference, no trajectory arriving while the arm moves: /diagnostics
    warns (a breakaway can pass the rest threshold); at rest, or once a trajectory arrives, it does not."""
    from dynid.contact.live import LiveContacts
    from dynid.excite.trajectory import PointTrajectory
    from dynid.io.stream import StateBatch

    monitor = ContactMonitor(own_model_result(ur5e, torque_source='joint_torque'), ur5e)
    t, external, velocity = _signals(20.0, n=ur5e.n)
    calibration = calibrate([CalibrationRun(t, external, velocity, None, np.zeros_like(velocity))], np.full(6, 1.0),
                            np.zeros(6), np.full(6, 100.0), 30.0, DETECTOR)  # 30/h: 20 s are enough (not short)
    assert calibration.with_reference
    monitor.set_calibration(calibration)
    live = LiveContacts(monitor, record=None, clock=lambda: 0.0)  # not about staleness: a compile under load is not

    def batch(start, speed):
        stamps = np.arange(start, start + 100) * 1_000_000
        q = np.zeros((100, 6)) + speed * stamps[:, None] * 1e-9
        dq = np.full((100, 6), speed)
        return StateBatch(stamps, q, dq, ur5e.inverse_dynamics(q, dq, np.zeros((100, 6))))

    live.update(batch(0, 0.0))
    assert live.status()[:2] == ('ok', 'no contact (0 contacts so far; advisory, not a safety function)'), \
        live.status()
    live.update(batch(100, 0.3))
    level, message, _ = live.status()
    assert level == 'warn' and 'no trajectory' in message and 'calibrate without the reference' in message
    holding = PointTrajectory(tuple(ur5e.joint_names), np.array([0.0, 1.0]), np.zeros((2, 6)))
    live.follow(holding, 0.2, 0.2)
    assert live.status()[0] == 'ok'


def test_the_live_job_says_stale_when_the_state_stops_coming(ur5e):
    """Once batches have come, none for STALE_S is a stale status (contacts are not watched then), not 'no contact':
    a process stopped for more than a second can come back deaf to shared memory (docs/contract.md)."""
    from dynid.contact.live import STALE_S, LiveContacts
    from dynid.io.stream import StateBatch

    monitor = ContactMonitor(own_model_result(ur5e, torque_source='joint_torque'), ur5e)
    t, external, velocity = _signals(20.0, n=ur5e.n)
    monitor.set_calibration(calibrate([CalibrationRun(t, external, velocity, None, None)], np.full(6, 1.0),
                                      np.zeros(6), np.full(6, 100.0), 30.0, DETECTOR))  # 30/h: not short
    now = [50.0]
    live = LiveContacts(monitor, record=None, clock=lambda: now[0])
    now[0] += 10.0
    assert live.status()[:2] == ('ok', 'waiting for the state topics')  # nothing yet: not stale
    stamps = np.arange(100) * 1_000_000
    q, dq = np.zeros((100, 6)), np.zeros((100, 6))
    batch = StateBatch(stamps, q, dq, ur5e.inverse_dynamics(q, dq, np.zeros((100, 6))))
    live.update(batch)
    now[0] += STALE_S - 0.1
    assert live.status()[0] == 'ok'
    now[0] += 0.6
    level, message, _ = live.status()
    assert level == 'stale' and message == f'no state sample for {STALE_S + 0.5:.1f} s: contacts are not being watched'
    live.update(StateBatch(stamps + 100_000_000, q, dq, batch.tau))
    assert live.status()[0] == 'ok'


def test_the_live_job_warns_with_what_its_calibration_says_of_its_thresholds(ur5e):
    from dynid.contact.live import LiveContacts

    monitor = ContactMonitor(own_model_result(ur5e, torque_source='joint_torque'), ur5e)
    t, external, velocity = _signals(20.0, n=ur5e.n)
    calibration = calibrate([CalibrationRun(t, external, velocity, None, None)], np.full(6, 1.0), np.zeros(6),
                            np.full(6, 100.0), 30.0, DETECTOR)  # 30/h: not short
    monitor.set_calibration(calibration)
    live = LiveContacts(monitor, record=None, clock=lambda: 0.0)
    assert live.status()[0] == 'ok' and live.status()[2]['calibration_warnings'] == '[]'
    calibration.warnings = ['wrist_1_joint: its alarm level k·σ₀ (31.8 N·m in motion, 31.8 N·m at rest; σ₀ 5.69 N·m) '
                            'is above its effort limit 28 N·m: no torque the joint holds raises a contact on it',
                            'the thresholds raise 3 contact(s) on their own contact-free recordings (a: 3), where …']
    level, message, values = live.status()
    assert level == 'warn' and message == calibration.warnings[0] + ' (and 1 more: calibration_warnings)'
    assert json.loads(values['calibration_warnings']) == calibration.warnings



def test_the_alarm_level_is_the_threshold_in_force_times_sigma_and_an_estimate_at_it_raises_the_alarm(ur5e):
    """ContactSamples.level is k_j·σ with the rest threshold while the arm is at rest and the motion threshold while
    it moves; the live job says the last sample's levels in /diagnostics; at rest a push whose estimate passes the
    level raises the alarm there, and one that stays below it does not."""
    from dynid.contact.calibration import Calibration
    from dynid.contact.live import LiveContacts
    from dynid.io.stream import StateBatch

    n = ur5e.n
    monitor = ContactMonitor(own_model_result(ur5e, torque_source='joint_torque'), ur5e)
    monitor.set_calibration(Calibration(np.full(n, 0.05), np.full(n, 5.0), np.zeros(n), np.zeros(n), np.zeros(n), 1.0,
                                        0.5, threshold_rest=np.full(n, 8.0)))
    stamps = np.arange(2000) * 1_000_000  # 2 s at 1 kHz: at rest, then the first joint moving
    t = stamps * 1e-9
    dq = np.zeros((t.size, n))
    dq[1000:, 0] = 0.5
    q = np.cumsum(dq, axis=0) * 1e-3
    out = monitor.run(t, q, dq, tau=ur5e.inverse_dynamics(q, dq, np.zeros_like(q)))
    rest, moving = slice(200, 900), slice(1300, 2000)
    np.testing.assert_allclose(out.level[rest], 8.0 * out.sigma[rest])
    np.testing.assert_allclose(out.level[moving], 5.0 * out.sigma[moving])

    for push, raised in ((1.2, True), (0.8, False)):  # at rest; as a multiple of the level there
        monitor.reset()
        live = LiveContacts(monitor, record=None)
        q = np.zeros((1500, n))
        tau = ur5e.inverse_dynamics(q, q, q)
        first = live.update(StateBatch(stamps[:1000], q[:1000], q[:1000], tau[:1000]))
        level = first.samples.level[-1, 1]
        assert json.loads(live.status()[2]['alarm_level_nm'])['shoulder_lift_joint'] == pytest.approx(level, abs=1e-3)
        pushed = tau[1000:].copy()
        pushed[:, 1] += push * level  # a torque the arm's own sensors read, as the estimate does after the observer
        later = live.update(StateBatch(stamps[1000:1500], q[1000:], q[1000:], pushed))
        assert later.samples.alarm[:, 1].any() == raised, (push, level, np.abs(later.samples.estimate[:, 1]).max())


def test_the_report_draws_the_alarm_level_in_force_at_rest_and_in_motion(tmp_path, monkeypatch):
    """The page's band around τ̂_ext is ContactSamples.level, the rest threshold's where the arm was at rest (it drew
    the motion threshold's everywhere)."""
    import matplotlib.axes

    from dynid.contact.monitor import ContactSamples
    from dynid.contact.report import write_report

    t = np.arange(100) / 100.0
    sigma = np.full((100, 2), 0.5)
    level = np.where(t[:, None] < 0.5, 8.0, 5.0) * sigma  # at rest, then moving
    samples = ContactSamples(t, np.zeros((100, 2)), np.zeros((100, 2)), sigma, np.zeros((100, 2), bool),
                             np.zeros((100, 2)), level)
    drawn = []
    original = matplotlib.axes.Axes.fill_between
    monkeypatch.setattr(matplotlib.axes.Axes, 'fill_between',
                        lambda self, x, low, high, **kw: drawn.append(np.asarray(high)) or original(self, x, low, high,
                                                                                                       **kw))
    write_report(tmp_path / 'page', [{'name': 'a', 'samples': samples, 'contacts': []}], ['j1', 'j2'], ['header'])
    assert len(drawn) == 2
    for j, band in enumerate(drawn):
        np.testing.assert_allclose(band, level[:, j])


def test_at_rest_a_displacement_from_the_reference_is_a_contact_the_torque_estimate_does_not_see():
    """The tracking error e = q_r − q at rest: a push that moves the joint by 3 θ for 0.3 s, static friction holding the
    torque (d unchanged), raises one alarm that ends within the settling after it; 0.5 θ does not; the same error
    while the arm moves is not read; calibration puts θ at TRACK_MARGIN times the largest held change of its rests."""
    from dynid.contact.calibration import TRACK_MARGIN, held

    theta = 1e-4
    t, external, velocity = _signals(4.0, moving=False)
    commanded = np.zeros_like(velocity)
    for size, raised in ((3.0, True), (0.5, False)):
        error = 1e-6 * np.random.default_rng(1).standard_normal(velocity.shape)
        pushed = (t >= 2.0) & (t < 2.3)
        error[pushed, 1] += size * theta
        detector = _detector(threshold_track=None)
        detector.joint[5] = theta
        samples, contacts = detector.run(t, external, velocity, None, commanded, error)
        assert bool(contacts) == raised, (size, contacts)
        if raised:
            assert len(contacts) == 1 and 2.0 <= contacts[0].start_s <= 2.005 and contacts[0].joints == (1,)
            assert contacts[0].raised_by == ('position',)
            assert contacts[0].end_s is not None and contacts[0].end_s <= 2.3 + 1.0
    moving = np.full_like(velocity, 1.0)
    detector = _detector()
    detector.joint[5] = theta
    assert not detector.run(t, external, moving, None, None, error * 0 + 10 * theta)[1]

    runs = [CalibrationRun(t, external, velocity, None, commanded, 1e-6 * np.random.default_rng(k).standard_normal(
        velocity.shape)) for k in range(2)]
    calibration = calibrate(runs, np.full(3, 0.1), np.full(3, 1.0), np.full(3, 100.0), 0.5, DETECTOR)
    reference = ContactDetector(np.full(3, 0.1), np.full(3, 1.0), np.inf, np.full(3, 100.0), DETECTOR)
    largest = np.zeros(3)
    for run in runs:
        track = reference.run(run.t, run.external, run.velocity, None, run.commanded, run.tracking)[0].track
        largest = np.maximum(largest, held(np.nan_to_num(track, nan=0.0), 3).max(axis=0))  # 3 ms at 1 kHz
        reference.reset()
    np.testing.assert_allclose(calibration.threshold_track, TRACK_MARGIN * largest, rtol=1e-12)
    assert np.all(calibration.threshold_track > 0) and np.all(calibration.threshold_track < 1e-5)


def test_at_rest_a_joint_its_controller_settles_is_followed_and_a_push_on_it_is_a_contact():
    """The tracking error's forecast at rest: a joint the controller still settles after a stop (e swinging by
    300 µrad over seconds, under 0.6 mrad/s) raises nothing against a threshold of 20 µrad, which a baseline that
    only follows e's level would pass within 0.1 s; a push that sets it moving (0.5 rad/s² for 30 ms) raises one alarm
    within 15 ms; a reference that starts moving (below ``command_velocity``) stops the reading: its e is not read."""
    theta = 2e-5
    t, external, velocity = _signals(6.0, moving=False)
    settling = 3e-4 * np.cos(2.0 * np.pi * t / 3.4)[:, None] * np.ones((1, 3))
    commanded = np.zeros_like(velocity)

    def run(error, commanded=commanded):
        detector = _detector()
        detector.joint[5] = theta
        return detector.run(t, external, velocity, None, commanded, error)

    samples, contacts = run(settling)
    assert not contacts, contacts
    read = ~np.isnan(samples.track[:, 1])
    assert read.mean() > 0.8 and np.nanmax(samples.track) < theta / 2
    level = np.abs(settling[read, 1] - settling[np.argmax(read), 1])  # the level at the reading's start, held
    assert level[100] > theta

    pushed = settling.copy()
    after = np.clip(t - 3.0, 0.0, 0.03)
    pushed[:, 1] += 0.5 * 0.5 * after ** 2 + 0.5 * 0.03 * np.clip(t - 3.03, 0.0, None)
    contacts = run(pushed)[1]
    assert len(contacts) >= 1 and 3.0 < contacts[0].start_s <= 3.015 and contacts[0].joints == (1,)
    assert contacts[0].raised_by == ('position',)

    starting = commanded.copy()
    starting[t >= 4.0, 2] = 5e-4  # below command_velocity (1e-3 rad/s): the arm still counts as at rest
    moved = settling.copy()
    moved[:, 2] += 5e-4 * np.clip(t - 4.0, 0.0, None)
    samples, contacts = run(moved, starting)
    assert not contacts and np.isnan(samples.track[t >= 4.0]).all()



def test_the_tracking_threshold_is_at_least_three_steps_of_the_encoder():
    """An encoder of 2^20 counts a turn: a joint drifting at 0.3 mrad/s reads its tracking error in steps of 6 µrad,
    and its departures from the forecast times TRACK_MARGIN stay below three steps, which θ_j is; the resolution is
    seen only where every reference is held."""
    from dynid.contact.calibration import TRACK_STEPS, resolution

    step = 2.0 * np.pi / 2 ** 20
    t, external, velocity = _signals(4.0, moving=False)
    commanded = np.zeros_like(velocity)
    drift = np.round(3e-4 * t[:, None] * np.array([1.0, 0.5, 0.25]) / step) * step
    runs = [CalibrationRun(t, external, velocity, None, commanded, drift)]
    calibration = calibrate(runs, np.full(3, 0.1), np.full(3, 1.0), np.full(3, 100.0), 0.5, DETECTOR)
    np.testing.assert_allclose(calibration.threshold_track, TRACK_STEPS * step, rtol=1e-9)
    moving = commanded.copy()
    moving[:, 0] = 1e-4  # a reference moving the whole time: its changes are not the encoder's
    smooth = drift.copy()
    smooth[:, 0] = 1e-7 * t
    assert resolution(smooth, moving)[0] == np.inf and resolution(smooth, commanded)[0] == pytest.approx(1e-10)

def test_at_rest_a_joint_set_moving_is_a_contact_and_the_return_after_one_is_not():
    """The speed |ω| at rest, where the reference is known: a push that moves the joint at 3 θ̇ for 20 ms (no
    displacement, no torque seen) raises one alarm; 0.5 θ̇ does not; the joint moving back 0.5 s after a contact's end
    (the controller returning it) raises none, and the same motion 3 s after it does; calibration puts θ̇ at
    TRACK_MARGIN times the largest held speed of its rests."""
    from dynid.contact.calibration import TRACK_MARGIN, held
    from dynid.contact.detection import TRACK_RECOVERY_S

    theta = 3e-3
    t, external, _ = _signals(6.0, moving=False)
    commanded, error = np.zeros_like(external), np.zeros_like(external)

    def detector():
        detector = _detector()
        detector.joint[5], detector.joint[6] = 1.0, theta  # the displacement is never large enough
        return detector

    for size, raised in ((3.0, True), (0.5, False)):
        velocity = 1e-4 * np.random.default_rng(2).standard_normal(external.shape)
        velocity[(t >= 2.0) & (t < 2.02), 2] += size * theta
        contacts = detector().run(t, external, velocity, None, commanded, error)[1]
        assert bool(contacts) == raised, (size, contacts)
        if raised:
            assert len(contacts) == 1 and 2.0 <= contacts[0].start_s <= 2.003 and contacts[0].joints == (2,)
            assert contacts[0].raised_by == ('speed',) and contacts[0].to_dict('abc')['raised_by'] == ['speed']

    pushed = external.copy()
    pushed[(t >= 1.0) & (t < 1.2), 0] += 3.0  # a contact seen by the torque estimate: 30 σ
    for after, raised in ((0.5, False), (3.0, True)):
        assert after < TRACK_RECOVERY_S or after > TRACK_RECOVERY_S + 1.0
        velocity = np.zeros_like(external)
        back = (t >= 1.25 + after) & (t < 1.25 + after + 0.1)
        velocity[back, 1] = 3.0 * theta
        contacts = detector().run(t, pushed, velocity, None, commanded, error)[1]
        assert len(contacts) == (2 if raised else 1), (after, contacts)
        assert contacts[0].joints == (0,) and contacts[0].start_s < 1.01

    runs = [CalibrationRun(t, external, 1e-4 * np.random.default_rng(k).standard_normal(external.shape), None,
                           commanded, error) for k in range(2)]
    calibration = calibrate(runs, np.full(3, 0.1), np.full(3, 1.0), np.full(3, 100.0), 0.5, DETECTOR)
    reference = ContactDetector(np.full(3, 0.1), np.full(3, 1.0), np.inf, np.full(3, 100.0), DETECTOR)
    largest = np.zeros(3)
    for run in runs:
        speed = reference.run(run.t, run.external, run.velocity, None, run.commanded, run.tracking)[0].rest_speed
        largest = np.maximum(largest, held(np.nan_to_num(speed, nan=0.0), 3).max(axis=0))
        reference.reset()
    np.testing.assert_allclose(calibration.threshold_speed, TRACK_MARGIN * largest, rtol=1e-12)
    assert np.all(calibration.threshold_speed > 1e-4) and np.all(calibration.threshold_speed < 1e-3)
