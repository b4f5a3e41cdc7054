"""bench_contact's issue-72 helpers: the first motion after a push at rest (contact_scoring), the UR10e's splits
(contact_real), the advice followed (contact_ways_out) and the bad inputs counted (contact_inputs)."""

from types import SimpleNamespace

import numpy as np
import pytest

from benchmarks import contact_inputs, contact_real, contact_scoring, contact_ways_out
from dynid.errors import InputError


def _load(start, duration):
    return SimpleNamespace(start_s=start, duration_s=duration, end_s=start + duration)


def _run():
    """10 s at 100 Hz: at rest to 3 s, moving to 5 s, at rest to 8 s, moving to the end; a push at rest at 1 s, one
    in motion at 4 s, one at rest at 6 s."""
    t = np.arange(1000) / 100.0
    resting = (t < 3.0) | ((t >= 5.0) & (t < 8.0))
    return SimpleNamespace(t=t, resting=resting, loads=[_load(1.0, 0.3), _load(4.0, 0.2), _load(6.0, 0.4)])


def test_the_first_motion_after_each_push_at_rest_and_only_the_alarms_there_outside_the_contacts():
    run = _run()
    assert contact_scoring.first_motion_starts(run.t, run.resting, run.loads) == pytest.approx([3.0, 8.0])

    def contact(start, end):
        return SimpleNamespace(start_s=start, end_s=end)

    output = SimpleNamespace(contacts=[
        contact(1.05, 1.5),   # the push itself: not counted
        contact(2.9, 3.1),    # the breakaway, 0.1 s before the motion: counted
        contact(3.5, 3.6),    # within 1 s of the motion start: counted
        contact(4.5, 4.6),    # 1.5 s into the motion, outside any contact: not at the first motion
        contact(8.05, None),  # at the second first motion, still on at the end: counted
    ])
    assert contact_scoring.first_motion_alarms(run, output) == pytest.approx([2.9, 3.5, 8.05])


def test_a_push_at_rest_the_run_ends_in_gives_no_first_motion():
    t = np.arange(500) / 100.0
    run = SimpleNamespace(t=t, resting=t < 10.0, loads=[_load(1.0, 0.3)])
    assert contact_scoring.first_motion_starts(run.t, run.resting, run.loads) == []


def test_the_splits_cover_every_run_once_and_the_first_is_the_alternating_folds():
    names = [f'run{k:02d}' for k in range(11)]
    assert contact_real.halves(names, 0) == [names[0::2], names[1::2]]
    seen = set()
    for split in range(1, 6):
        a, b = contact_real.halves(list(reversed(names)), split)
        assert sorted(a + b) == names and not set(a) & set(b)
        seen.add(tuple(a))
    assert len(seen) > 1  # the splits differ


def test_the_split_figures_take_the_median_the_worst_and_the_fewest_pushes():
    rows = [{'false_alarms': a, 'pushes_detected': p} for a, p in (
        (1, ['10_of_10', '10_of_10']), (5, ['9_of_10', '10_of_10']), (3, ['10_of_10', '10_of_10']))]
    figures = contact_real.split_figures(rows)
    assert figures['false_alarms_median'] == 3 and figures['false_alarms_worst'] == 5
    assert figures['pushes_fewest'] == 9 and figures['splits_with_every_push'] == '2_of_3'


REFUSAL = ('dynid identify: error: WLS cannot estimate the noise of A1 (38 rows for 46 parameters): give a longer '
           'recording, a smaller decimation, or a method that needs no per-joint noise (ols or iirls) (at 100 Hz the '
           'filters keep 37–39 samples per joint (one in 10 below 4 Hz)); or with the robot file\'s prior (the '
           'default; without --no-prior)')


def test_the_advice_is_followed_as_written_and_a_new_recording_is_not_a_way_out():
    groups, skipped = contact_ways_out.advised(REFUSAL)
    assert ('--method', 'ols') in groups and ('--method', 'iirls') in groups and ('--decimation', '5') in groups
    assert skipped == ['give a longer recording: a new recording']
    text = ('training χ² +7.70 % against the plain fit (--no-prior)\n'
            'warning: joint 3 reads the other sign: --torque-sign elbow_joint=-1.\n'
            'warning: a longer or optimized excitation (dynid excite --optimize) determines them')
    groups, skipped = contact_ways_out.advised(text)
    assert groups == [('--no-prior',), ('--torque-sign', 'elbow_joint=-1')]
    assert skipped == ['a longer or optimized excitation: a new recording']
    assert contact_ways_out.advised('nothing to say') == ([], [])


def test_an_advice_replaces_the_same_option_and_keeps_the_others():
    groups = (('--method', 'wls'), ('--no-prior',))
    assert contact_ways_out.merged(groups, ('--method', 'ols')) == (('--method', 'ols'), ('--no-prior',))


def test_a_bad_input_counts_only_when_refused_or_flagged_by_the_expected_name():
    def refuse():
        raise InputError("calibrates robot 'ur10e', not 'ur5e'")

    rows = [contact_inputs.attempt('robot', "robot 'ur10e'", refuse),
            contact_inputs.attempt('short', 'too short', lambda: 'calibration too short for 0.5 false alarms'),
            contact_inputs.attempt('contacts', 'push_pose_1', lambda: 'calibration too short'),  # flagged, not named
            contact_inputs.attempt('beyond', 'effort limits', lambda: '')]  # accepted
    assert [row['caught'] for row in rows] == [True, True, False, False]
    assert [row['how'] for row in rows] == ['refused', 'flagged', 'flagged', 'accepted']
    assert contact_inputs.count(rows) == '2_of_4'
