"""dynid contact --calibrate checks what it is given: contact-free by its own evidence, long enough for the rate asked,
tied to the robot, result and effort meaning it was made for; torques beyond the joints' limits refused. Each check
measured on clean twin runs (no false alarm) and on the faulty input (found, by name)."""

import json

import numpy as np
import pytest
import yaml

from builders import own_model_result
from cli_run import run_dynid
from dynid.errors import InputError

PUSH = """contacts:
  - {link: flange, point: [0, 0, 0.05], force: [40, 0, 20], start_s: 2.0, duration_s: 0.5, shape: step}
"""


@pytest.fixture(scope='module')
def runs(tmp_path_factory, ur5e):
    folder = tmp_path_factory.mktemp('contact_calibration')
    (folder / 'push.yaml').write_text(PUSH)
    for name, extra in (('free1', ('--seed', '5')), ('free2', ('--seed', '6')),
                        ('pushed', ('--seed', '7', '--contacts', folder / 'push.yaml'))):
        assert run_dynid('simulate', '--quiet', '--duration', '5', '--rate', '500', '-o', folder / name,
                         *extra).returncode == 0
    own_model_result(ur5e, coulomb=3.0, viscous=4.0).save(folder / 'result.yaml')
    other = own_model_result(ur5e, coulomb=3.5, viscous=4.0)
    other.save(folder / 'other.yaml')
    return folder


def _calibrate(folder, *bags, extra=()):
    return run_dynid('contact', folder / 'free1', '--params', folder / 'result.yaml', '--calibrate', *bags, '--json',
                     *extra)


def test_a_calibration_with_a_push_is_refused_by_name_and_clean_ones_are_not(runs):
    for bag in ('free1', 'free2'):  # clean: no false alarm of the contact-free check
        assert _calibrate(runs, runs / bag).returncode == 0, bag
    refused = _calibrate(runs, runs / 'free2', runs / 'pushed')
    assert refused.returncode == 2 and 'not contact-free' in refused.stderr
    assert 'pushed at 2.' in refused.stderr and 'free2' not in refused.stderr, refused.stderr


def test_a_sharp_excursion_or_a_push_held_on_a_still_arm_is_contact_like():
    from dynid.contact.calibration import contact_like

    t = np.arange(0.0, 12.0, 0.002)  # 500 Hz, two joints of noise-level z; the arm still from 2.5 s to 10 s
    z = np.full((len(t), 2), 2.0)
    still = (t >= 2.5) & (t < 10.0)

    def stretch(joint, start, seconds, level):
        z[(t >= start) & (t < start + seconds), joint] = level

    stretch(0, 1.0, 0.15, 35.0)  # sharp, in motion: the first rule
    stretch(1, 3.0, 0.5, 14.0)  # a push on the still arm at 14 σ (a UR10e's held 13.4 σ for 0.3 s): the second
    stretch(0, 5.0, 0.2, 14.0)  # as high at rest, too short for a push
    stretch(1, 7.0, 2.0, 8.0)  # long at rest, at a level contact-free runs reach
    stretch(0, 9.0, 0.5, 40.0)  # both rules: counted once
    stretch(1, 10.5, 1.0, 25.0)  # in motion, where a result whose friction is off holds z this high at each start
    found = contact_like(t, z, still)
    assert [(round(start, 2), joint) for start, joint, _ in found] == [(1.0, 0), (3.0, 1), (9.0, 0)]
    assert [peak for _, _, peak in found] == [35.0, 14.0, 40.0]
    assert [(round(start, 2), joint) for start, joint, _ in contact_like(t, z)] == [(1.0, 0), (9.0, 0)]


def test_a_short_calibration_is_flagged_with_the_minutes_it_needs(runs):
    short = _calibrate(runs, runs / 'free1', extra=('--save-calibration', runs / 'short.yaml'))
    flagged = json.loads(short.stdout)
    # 0.5 false alarms per hour over 6 joints, extrapolated at most 100×: 14.4 minutes; 5 s are flagged
    assert flagged['calibration']['short'] is True and flagged['calibration']['minutes_needed'] == pytest.approx(14.4)
    assert 'too short' in flagged['calibration_short'] and 'too short' in short.stderr
    assert yaml.safe_load((runs / 'short.yaml').read_text())['short'] is True
    # at a rate the same 5 s are enough for (7.2/r minutes: r = 200/h needs 2.2 s) it is not flagged
    enough = json.loads(_calibrate(runs, runs / 'free1', extra=('--false-alarm-rate', '200')).stdout)
    assert enough['calibration']['short'] is False and enough['calibration_short'] is None


def test_a_calibration_is_refused_for_another_result_robot_or_effort_meaning(runs, tmp_path):
    made = _calibrate(runs, runs / 'free1', extra=('--save-calibration', tmp_path / 'cal.yaml'))
    assert made.returncode == 0
    own = run_dynid('contact', runs / 'free2', '--params', runs / 'result.yaml', '--calibration',
                    tmp_path / 'cal.yaml')
    assert own.returncode == 0, own.stderr  # its own result, robot and reading: taken
    other = run_dynid('contact', runs / 'free2', '--params', runs / 'other.yaml', '--calibration',
                      tmp_path / 'cal.yaml')
    assert other.returncode == 2 and 'calibrated with another result' in other.stderr
    data = yaml.safe_load((tmp_path / 'cal.yaml').read_text())
    (tmp_path / 'ur10e.yaml').write_text(yaml.safe_dump({**data, 'robot': 'ur10e'}))
    robot = run_dynid('contact', runs / 'free2', '--params', runs / 'result.yaml', '--calibration',
                      tmp_path / 'ur10e.yaml')
    assert robot.returncode == 2 and "calibrates robot 'ur10e'" in robot.stderr
    (tmp_path / 'current.yaml').write_text(yaml.safe_dump({**data, 'joint_states_effort': 'current'}))
    effort = run_dynid('contact', runs / 'free2', '--params', runs / 'result.yaml', '--calibration',
                       tmp_path / 'current.yaml')
    assert effort.returncode == 2 and 'effort read as current' in effort.stderr


def test_torques_beyond_the_joints_limits_are_refused_as_a_misread_input(runs, ur5e):
    # clean runs and the push (tens of N·m): within the limits, no refusal
    for bag in ('free1', 'pushed'):
        assert run_dynid('contact', runs / bag, '--params', runs / 'result.yaml').returncode == 0
    # the currents read with drive gains 20× too strong (as a drives file of another arm would): hundreds of N·m
    drives = {name: dict(row, drive_gain=20.0 * row['drive_gain']) for name, row in ur5e.drives.to_dict().items()}
    (runs / 'drives.yaml').write_text(yaml.safe_dump(drives))
    misread = run_dynid('contact', runs / 'free1', '--params', runs / 'result.yaml', '--drives', runs / 'drives.yaml')
    assert misread.returncode == 2 and 'beyond the joints\' effort limits' in misread.stderr, misread.stderr
    assert 'a misread input' in misread.stderr and 'own friction' not in misread.stderr  # the input, not the law


def test_a_moment_beyond_the_limits_is_an_impact_and_most_of_a_recording_a_misread_input(ur5e):
    """A hard impact passes a joint's effort limit for a moment (the drive back-driven): accepted. The same excess over
    most of a recording is a misread input: refused by name. A node's short batches are not judged."""
    from types import SimpleNamespace

    from dynid.contact.monitor import MISREAD_MIN_S, ContactMonitor

    monitor = SimpleNamespace(robot=ur5e, model=SimpleNamespace(torque_source='current'))
    t = np.arange(0.0, 4.0, 1e-3)
    external = np.zeros((t.size, ur5e.n))
    external[(t > 2.0) & (t < 2.1), 1] = 1.4 * ur5e.effort_limits[1]  # 0.1 s of an impact
    ContactMonitor._within_limits(monitor, SimpleNamespace(t=t, external=external), 'impact')
    external[t > 1.0, 1] = 1.4 * ur5e.effort_limits[1]  # 3 s of 4
    with pytest.raises(InputError, match=r"misread: external torque beyond the joints' effort limits over most of the "
                                         r"recording \(shoulder_lift_joint 210 N·m \(limit 150\) on 75 % of it\)"):
        ContactMonitor._within_limits(monitor, SimpleNamespace(t=t, external=external), 'misread')
    short = t < 0.9 * MISREAD_MIN_S
    ContactMonitor._within_limits(monitor, SimpleNamespace(t=t[short], external=external[short] + 1e3), 'batch')


def test_clean_calibrations_say_nothing_of_their_thresholds(runs):
    """On contact-free runs of the model's own arm no joint's alarm level passes its effort limit and the thresholds
    raise no contact on their own recordings: no warning beyond the shortness (measured on four more such runs, in 5
    calibrations, likewise: docs/methods/contact.md)."""
    for bags in (('free1',), ('free2',), ('free1', 'free2')):
        made = _calibrate(runs, *(runs / bag for bag in bags))
        assert made.returncode == 0, made.stderr
        assert json.loads(made.stdout)['calibration']['warnings'] == []
        assert [line for line in made.stderr.splitlines() if 'too short' not in line] == [], made.stderr


@pytest.fixture(scope='module')
def heavy_runs(runs):
    """Two runs of 5 s with 20 kg 10 cm off the flange axis that the result does not hold: wrist 1's residual σ₀ rises
    to ~5.7 N·m and its alarm level k·σ₀ to ~32 N·m, above its 28 N·m limit."""
    for seed in (11, 12):
        assert run_dynid('simulate', '--quiet', '--duration', '5', '--rate', '500', '--seed', seed, '--payload', '20',
                         '--payload-com', '0.1,0,0.05', '-o', runs / f'heavy{seed}').returncode == 0
    return runs


def test_a_threshold_above_a_joints_effort_limit_is_said_by_name_and_kept_in_the_file(heavy_runs, tmp_path):
    runs = heavy_runs
    made = _calibrate(runs, runs / 'heavy11', runs / 'heavy12', extra=('--save-calibration', tmp_path / 'cal.yaml'))
    assert made.returncode == 0, made.stderr
    said = json.loads(made.stdout)['calibration']['warnings']
    assert len(said) == 1 and said[0].startswith('wrist_1_joint: its alarm level k·σ₀ (') and \
        'is above its effort limit 28 N·m: no torque the joint holds raises a contact on it' in said[0], said
    level = float(said[0].split('(')[1].split(' N·m')[0])
    calibration = json.loads(made.stdout)['calibration']
    assert level == pytest.approx(calibration['threshold_sigma']['wrist_1_joint']
                                  * calibration['sigma0_nm']['wrist_1_joint'], rel=1e-2) and level > 28.0
    assert f'warning: {said[0]}' in made.stderr
    assert yaml.safe_load((tmp_path / 'cal.yaml').read_text())['warnings'] == said
    used = run_dynid('contact', runs / 'free2', '--params', runs / 'result.yaml', '--calibration',
                     tmp_path / 'cal.yaml')
    assert used.returncode == 0 and f'warning: {said[0]}' in used.stderr, used.stderr


def test_contacts_on_their_own_recordings_at_the_rate_they_state_are_not_said(runs):
    """Six runs of 8 s with 3 kg 8 cm off the flange axis that the result does not hold (a heavier tail of the
    residual) calibrated at 1000 false alarms per hour: replayed, the thresholds raise 12 contacts on them where the
    rate expects 13, which is what the rate states: no word."""
    bags = []
    for seed in range(31, 37):
        bags.append(runs / f'mid{seed}')
        assert run_dynid('simulate', '--quiet', '--duration', '8', '--rate', '500', '--seed', seed, '--payload', '3',
                         '--payload-com', '0.08,0,0.05', '-o', bags[-1]).returncode == 0
    made = _calibrate(runs, *bags, extra=('--false-alarm-rate', '1000'))
    assert made.returncode == 0 and json.loads(made.stdout)['calibration']['warnings'] == [], made.stderr


def _bumps(seed: int = 2):
    """Ten contact-free minutes at 200 Hz of one joint in motion: unit noise and 21 bumps a minute held at 5 σ for
    30 ms (a disturbance that repeats at one height, as a reversal's does): the exponential tail fitted to their
    excesses puts a threshold of 1000 false alarms per hour under them."""
    from dynid.contact.calibration import CalibrationRun

    rng = np.random.default_rng(seed)
    runs = []
    for _ in range(10):
        t = np.arange(0.0, 60.0, 1.0 / 200.0)
        z = np.convolve(rng.normal(0.0, 1.0, t.size), np.ones(8) / np.sqrt(8), 'same')[:, None]
        for start in rng.uniform(0.5, 59.5, 21):
            z[(t > start) & (t < start + 0.03), 0] = 5.0
        runs.append(CalibrationRun(t, z, np.ones((t.size, 1))))
    return runs


def test_thresholds_that_alarm_on_their_own_recordings_beyond_their_rate_are_said_with_a_rate_that_does_not():
    from types import SimpleNamespace

    from dynid.contact.calibration import calibrate
    from dynid.contact.monitor import ContactMonitor
    from dynid.contact.settings import ContactSettings

    runs, settings = _bumps(), ContactSettings(false_alarm_rate=1000.0)
    calibration = calibrate(runs, np.ones(1), np.zeros(1), np.full(1, 50.0), 1000.0, settings.detector())
    assert sum(calibration.own_contacts) == 200 and calibration.own_contacts_unlikely  # P(≥ 200 | 167) < 1 %
    monitor = SimpleNamespace(settings=settings, result_sigma=np.ones(1), stiction=np.zeros(1),
                              bandwidth=np.full(1, 50.0))
    quieter = ContactMonitor._quieter_rate(monitor, runs)
    assert quieter == 100.0
    said = calibration.cautions(['j1'], np.array([100.0]), [f'run{k}' for k in range(10)], quieter)
    assert said == ['the thresholds raise 200 contact(s) on their own contact-free recordings (run0: 20, run1: 19, '
                    'run2: 20, run3: 20, run4: 21, run5: 19, run6: 21, run7: 20, run8: 20, run9: 20), where 1000 false '
                    'alarms per hour expect 167 over their 10.0 min; {false_alarm_rate} 100 raises none on them']
    followed = calibrate(runs, np.ones(1), np.zeros(1), np.full(1, 50.0), quieter, settings.detector())
    assert sum(followed.own_contacts) == 0 and followed.cautions(['j1'], np.array([100.0]), ['run'] * 10) == []


def test_a_level_above_the_limit_in_motion_only_is_said_for_motion_only():
    from dynid.contact.calibration import Calibration

    n = 2
    calibration = Calibration(np.array([3.25, 1.0]), np.array([42.8, 5.0]), np.zeros(n), np.zeros(n), np.zeros(n), 1.0,
                              0.5, threshold_rest=np.array([5.0, 5.0]))
    assert calibration.cautions(['wrist_2_joint', 'wrist_3_joint'], np.array([28.0, 28.0]), []) == [
        'wrist_2_joint: its alarm level k·σ₀ (139 N·m in motion; σ₀ 3.25 N·m) is above its effort limit 28 N·m: no '
        'torque the joint holds raises a contact on it in motion']
    assert calibration.cautions(['a', 'b'], np.array([0.0, np.inf]), []) == []  # no limit given: not compared
