"""bench_public's motions section (benchmarks/public_motions.py, issue 71): a joint is behind the authors, or worse than
the release before, only where the ratio's interval over the rows lies wholly above 1; --physical better by more than
5 % pooled counts unless identify or validate say so, and so does a candidate the choice did not take unless an
estimate named is as good; the windows of one log cut where the benchmark's split cuts."""

import numpy as np

from benchmarks import public_motions


def _errors(n: int, seed: int) -> list[float]:
    white = np.random.default_rng(seed).normal(size=n + 4)
    return list(np.convolve(white, np.ones(5) / 5, mode='valid'))


def _cell(mine, theirs=None, quoted=None, previous=None):
    cell = {'dynid': float(np.sqrt(np.mean(np.square(mine)))), 'residual': list(mine)}
    if theirs is not None:
        cell.update(authors=float(np.sqrt(np.mean(np.square(theirs)))), authors_residual=list(theirs))
    if quoted is not None:
        cell['authors'] = quoted
    return cell


def _rows(**runs):
    return {'kuka|measurements_2': {'runs': {'measurements_1': runs}, 'pooled': 0.1, 'physical_pooled': 0.1}}


def test_behind_the_authors_only_where_the_interval_lies_above_one():
    base = np.asarray(_errors(200, 1))
    clearly = _cell(1.5 * base, base)
    shared = np.asarray(_errors(50, 2))
    within = _cell(shared + 0.5 * np.asarray(_errors(50, 8)), shared + 0.5 * np.asarray(_errors(50, 7)))
    assert public_motions.behind(clearly)[0]
    assert public_motions.behind(clearly)[1][0] > 1.0
    assert within['dynid'] > within['authors']
    assert not public_motions.behind(within)[0]


def test_a_quoted_figure_keeps_no_rows_and_is_compared_as_a_figure():
    mine = _errors(100, 3)
    cell = _cell(mine, quoted=0.5 * float(np.sqrt(np.mean(np.square(mine)))))
    assert public_motions.behind(cell) == (True, 'quoted')
    assert public_motions.behind(_cell(mine, quoted=10.0)) == (False, 'quoted')
    assert public_motions.behind(_cell(mine)) == (False, None)


def test_worse_than_the_release_by_the_interval_with_rows_and_by_3_percent_without():
    base = np.asarray(_errors(300, 4))
    assert public_motions.worse(_cell(1.2 * base), {'dynid': 1.0, 'residual': list(base)})[0]
    assert not public_motions.worse(_cell(base), {'dynid': 1.0, 'residual': list(1.2 * base)})[0]
    cell = _cell(base)
    assert public_motions.worse(cell, cell['dynid'] / 1.05) == (True, 'figure')
    assert public_motions.worse(cell, cell['dynid'] / 1.02) == (False, 'figure')


def test_counts_name_the_joints_and_the_physical_rows_left_unsaid():
    base = np.asarray(_errors(300, 5))
    rows = _rows(lwr_1=_cell(2.0 * base, base), lwr_2=_cell(base, 2.0 * base))
    rows['kuka|measurements_2'].update(pooled=0.2, physical_pooled=0.1)
    rows['kuka|measurements_1'] = {'runs': {'measurements_2': {'lwr_1': _cell(base)}}, 'pooled': 0.2,
                                   'physical_pooled': 0.1, 'physical_said': ['the physically consistent ... better']}
    rows['tiago'] = {'status': 'one motion'}
    against = {'kuka|measurements_2|measurements_1|lwr_2': {'dynid': 1.0, 'residual': list(0.5 * base)},
               'kuka|measurements_2|pooled': 0.15}
    out, lists = public_motions.counts(rows, against)
    assert out['rows'] == 2 and out['joints_scored'] == 3
    assert [item[0] for item in lists['behind_authors']] == ['kuka|measurements_2|measurements_1|lwr_1']
    assert [item[0] for item in lists['worse_than_previous_release']] == ['kuka|measurements_2|measurements_1|lwr_2']
    assert out['physical_better_unsaid'] == 1 and lists['physical_better_unsaid'][0][0] == 'kuka|measurements_2'
    assert out['rows_pooled_above_previous_release'] == 1 and out['worse_rule'] == 'interval'
    assert public_motions.counts(rows)[0]['joints_worse_than_previous_release'] is None
    kept = {'joints': {}, 'pooled': {'kuka|measurements_2': round(0.2 + 4e-7, 6), 'kuka|measurements_1': 0.19}}
    rows['kuka|measurements_2']['pooled'] = 0.2 + 4e-7
    out, lists = public_motions.counts(rows, recorded=kept)
    assert [item[0] for item in lists['pooled_above_previous_release']] == ['kuka|measurements_1']
    assert out['worse_rule'] == 'figure'


def test_an_alternative_better_by_more_than_5_percent_counts_unless_a_named_estimate_is_as_good(capsys):
    rows = {'a': {'runs': {'b': {}}, 'pooled': 0.10, 'alternatives': {'other method': 0.098, 'no prior': 0.090}},
            'c': {'runs': {'d': {}}, 'pooled': 0.10, 'alternatives': {'coulomb+viscous': 0.070, 'no prior': None},
                  'physical_pooled': 0.072, 'physical_said': ['the physically consistent ... better']},
            'e': {'runs': {'f': {}}, 'pooled': 0.10, 'alternatives': {'coulomb+viscous': 0.070},
                  'physical_pooled': 0.072},
            'g': {'runs': {'h': {}}, 'pooled': 0.10, 'alternatives': {'other method': 0.096}}}
    out, lists = public_motions.counts(rows)
    assert [item[0] for item in lists['alternatives_better_unsaid']] == ['a', 'e']
    assert lists['alternatives_better_unsaid'][0][1:] == [0.10, 0.090, 'no prior']
    assert out['alternatives_better_unsaid'] == 2
    from benchmarks.bench_public import print_lists

    print_lists({'motions alternatives_better_unsaid': lists['alternatives_better_unsaid']})
    assert '  a: 0.1 vs 0.09 (ratio 1.111, no prior)' in capsys.readouterr().out
    for row in rows.values():
        del row['alternatives']
    assert public_motions.counts(rows)[0]['alternatives_better_unsaid'] is None
    assert set(public_motions.alternative_options('irls')) == {'other method', 'coulomb+viscous', 'no prior'}
    assert public_motions.alternative_options('irls')['other method'] == ('--method', 'wls')
    assert public_motions.alternative_options('wls')['other method'] == ('--method', 'irls')


def test_the_words_that_say_physical_consistency_does_better():
    text = ('warning: the physically consistent estimate the identification computed and declined predicts this '
            'recording better: relative residual 0.04\nthe model is physically consistent\n--physical: refused')
    assert public_motions.said_physical(text) == [text.splitlines()[0]]


def test_the_windows_cut_where_split_holdout_cuts():
    cut, bound = public_motions.window_bounds(45000, 0.3, 5000.0)
    assert cut == 31500
    times = np.arange(45000) / 5000.0
    assert np.count_nonzero(times <= bound) == cut and np.count_nonzero(times >= bound) == 45000 - cut


def test_the_default_over_the_better_of_it_and_the_consistent_estimate():
    rows = {'a': {'runs': {'b': {}}, 'pooled': 0.105, 'physical_pooled': 0.100},
            'c': {'runs': {'d': {}}, 'pooled': 0.100, 'physical_pooled': 0.120},
            'e': {'runs': {'f': {}}, 'pooled': 0.1015, 'physical_pooled': 0.100},
            'g': {'runs': {'h': {}}, 'pooled': 0.100}}
    out, lists = public_motions.counts(rows)
    assert out['default_over_consistent_max'] == 0.105 / 0.100
    assert [item[0] for item in lists['default_over_consistent']] == ['a']
    assert out['rows_default_over_consistent'] == 1
    assert public_motions.counts({'g': rows['g']})[0]['default_over_consistent_max'] is None


def test_the_folds_point_the_right_way_only_on_the_side_the_other_motion_takes():
    from benchmarks import public_evidence

    rows = {'helps': {'pooled': 0.10, 'physical_pooled': 0.08, 'evidence': {'time': 1.3, 'region': 0.9}},
            'costs': {'pooled': 0.10, 'physical_pooled': 0.11, 'evidence': {'time': 1.1, 'region': 0.95}},
            'tie': {'pooled': 0.10, 'physical_pooled': 0.101, 'evidence': {'time': 3.0, 'region': 0.5}},
            'none': {'pooled': 0.10, 'physical_pooled': 0.08, 'evidence': {'status': 'no prior'}},
            'beside': {'pooled': 0.10, 'physical_pooled': 0.08, 'beside': {'pooled': 0.1005, 'consistent': True},
                       'evidence': {'time': 2.0, 'region': 0.5}},
            'kept': {'pooled': 0.08, 'beside': {'pooled': 0.10, 'consistent': False},
                     'evidence': {'time': 1.2, 'region': 0.9}}}
    found = public_evidence.verdicts(rows)
    assert set(found['rows']) == {'helps', 'costs', 'tie', 'beside', 'kept'}
    assert found['rows']['helps']['time_right'] is False and found['rows']['helps']['region_right'] is True
    assert found['rows']['costs']['time_right'] is True and found['rows']['costs']['region_right'] is False
    assert found['rows']['tie']['time_right'] is None
    # the estimate kept beside, with the same laws, is the other motion's answer where the result has one
    assert abs(found['rows']['beside']['other_motion'] - 1.005) < 1e-12
    assert found['rows']['beside']['time_right'] is None
    assert abs(found['rows']['kept']['other_motion'] - 0.8) < 1e-12 and found['rows']['kept']['time_right'] is False
    assert found['rows']['kept']['pose'] is None and found['rows']['kept']['pose_right'] is None
    assert (found['wrong_time'], found['wrong_region'], found['decided']) == (2, 1, 3)


def test_rows_without_the_authors_model_are_named_with_why():
    base = _errors(50, 9)
    rows = {'kuka|measurements_2': {'authors_source': 'reproduced', 'runs': {'measurements_1': {
                'lwr_1': _cell(base, base), 'lwr_2': _cell(base, base)}}},
            'kuka|measurements_1': {'authors_source': 'none: it saw these rows', 'runs': {
                'measurements_2': {'lwr_1': _cell(base)}, 'measurements_3': {'lwr_1': _cell(base)}}},
            'kuka|quoted': {'authors_source': 'quoted on lwr_1', 'runs': {'measurements_1': {
                'lwr_1': _cell(base, quoted=0.4), 'lwr_2': _cell(base)}}},
            'tiago': {'status': 'one motion'}}
    for row in rows.values():
        row.update({'method': 'wls', 'friction': 'viscous', 'pooled': 0.1} if 'runs' in row else {})
    assert public_motions.without_authors(rows) == {'kuka|measurements_1': 'none: it saw these rows',
                                                    'kuka|quoted|measurements_1|lwr_2': 'quoted on lwr_1'}
    assert public_motions.counts(rows)[0]['rows_without_authors'] == public_motions.without_authors(rows)
    assert any(line.startswith("motions: without the authors' model: kuka|measurements_1: none")
               for line in public_motions.table({key: row for key, row in rows.items() if key != 'kuka|quoted'}, {}))


def test_flobaroids_model_only_beside_rows_whose_validated_motion_it_did_not_see():
    def model(q, dq, ddq):
        return q

    for name in ('measurements_2', 'measurements_3'):
        assert public_motions.flobaroid_authors(model, name, ('measurements_1',))[0] is model
    authors, why = public_motions.flobaroid_authors(model, 'measurements_1', ('measurements_2', 'measurements_3'))
    assert authors is None and why.startswith('none: ') and 'measurements_3' in why
    assert public_motions.flobaroid_authors(None, 'measurements_2', ('measurements_1',))[0] is None
