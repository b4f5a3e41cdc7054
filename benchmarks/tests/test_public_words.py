"""bench_public's count of what dynid's words lead to (issue 71): the condition numbers one identify run prints, the
scale, unit and gravity claims on logs read in their authors' units, and advice that made a held-out fit worse."""

from benchmarks import bench_public, public_diagnosis, public_scoring

GATE = ('weakly exciting log: cond(W) of the data alone with unit-norm columns 2.36e+03 > 1000: OLS with the robot '
        "file's prior and physical consistency tried as the default")
SUMMARY_WITH_PRIOR = ('identified 42 parameters (36 base), cond = 45.21 with unit-norm columns for the data with the '
                      'prior (raw: 3.729e+04); the data alone: cond(W) = {}')


def test_one_figure_printed_twice_is_one_and_two_figures_are_two():
    once = public_scoring.condition_figures(GATE + '\n' + SUMMARY_WITH_PRIOR.format('2355'))
    assert once == {'data alone': [2360.0], 'with the prior': [45.21]}
    twice = public_scoring.condition_figures(GATE + '\n' + SUMMARY_WITH_PRIOR.format('1102'))
    assert twice['data alone'] == [2360.0, 1102.0]


def test_a_figure_said_to_be_above_the_threshold_is_still_one_figure():
    text = SUMMARY_WITH_PRIOR.format('1063 (above 1000: a weakly exciting log)')
    assert public_scoring.condition_figures(text) == {'data alone': [1063.0], 'with the prior': [45.21]}
    plain = 'identified 54 parameters, cond(W) = 2360 with unit-norm columns (raw: 3.7e+04) (above 1000: a weakly ' \
            'exciting log)'
    assert public_scoring.condition_figures(plain) == {'data alone': [2360.0]}


def test_a_summary_without_a_prior_is_the_data_alone_and_ways_out_are_other_runs():
    text = ('refused; trying --method wls\n'
            'ways out, best first: --decimation-cutoff 10 identifies it (cond 674; held out 0.00994)\n'
            'identified 54 parameters, cond(W) = 393 with unit-norm columns (raw: 3.729e+04)')
    assert public_scoring.condition_figures(text) == {'data alone': [393.0]}


def test_the_runner_keeps_the_most_figures_of_one_identify_run():
    runner = public_scoring.Runner()
    runner.conditions = [{'command': 'a', 'figures': {'data alone': [1.0]}},
                         {'command': 'b', 'figures': {'data alone': [1.0, 2.0], 'with the prior': [3.0]}}]
    assert runner.most_conditions == 2
    counts, lists = bench_public.word_figures({}, None, None, runner)
    assert counts['cond_numbers_per_run_max'] == 2 and lists['conditions_printed_twice'] == [['b', 'data alone',
                                                                                            [1.0, 2.0]]]


def test_scale_unit_and_gravity_claims_are_false_on_logs_in_their_authors_units():
    drive = ("measurements_1: the measured torque is lwr_2_joint 11.7 ± 0.4× the robot file's while the other joints "
             "agree (weighted residual 3.1): the torque sensor's scale or unit of lwr_2_joint")
    foreign = ("K_τ·i of the motor current of joint1, joint6 is not at the robot file's scale (scale 0.1 ± 0.01), in "
               "no pattern one link, one drive or a load explains: a robot file that does not belong to the "
               "recording (another arm's?) or other units")
    gravity = ("the identified gravity torque is -0.0948×, -0.0291× the robot file's on wrist_1_joint, wrist_2_joint "
               '(at the recorded poses): masses an order of magnitude off')
    friction = "the effort read as joint torque carries the drive's friction, as a motor torque does: give --torque X"
    unrelated = 'shoulder_pan_joint: poorly excited parameters'
    lines = [drive, foreign, gravity, friction, unrelated, drive]
    assert public_diagnosis.false_claims('unisa_ur10', lines) == [drive, foreign, gravity]  # motor torque: theirs
    assert public_diagnosis.false_claims('flobaroid_kuka', lines) == [drive, foreign, gravity, friction]


def test_advice_that_raised_the_held_out_error_or_was_refused_is_counted_with_every_claim():
    rows = {'a': {'claims': ['x'], 'advice': [
        {'remedy': '--torque motor_torque', 'exit': 0, 'pooled_before': 0.0572, 'pooled_after': 0.0661,
         'claims': ['y']},
        {'remedy': '--no-prior', 'exit': 0, 'pooled_before': 0.0572, 'pooled_after': 0.05},
        {'remedy': '--method wls', 'exit': 1, 'pooled_before': 0.0572}]},
            'b': {'status': 'not given'}}
    said = public_diagnosis.words(rows)
    assert said['advice_worse_when_followed'] == [['a', '--torque motor_torque', 0.0572, 0.0661],
                                                  ['a', '--method wls', 0.0572, None]]
    assert said['false_claims_clean'] == [['a', 'defaults', 'x'], ['a', '--torque motor_torque', 'y']]
