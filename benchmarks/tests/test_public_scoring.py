"""bench_public's interval of a ratio of two models' held-out RMSE on the same rows (benchmarks/public_scoring.py):
a moving-block bootstrap of the rows, so that a gap of a few percent on 50 rows is shown beside what other rows give."""

import numpy as np

from benchmarks import bench_public, public_scoring


def _correlated(n: int, seed: int) -> np.ndarray:
    """Errors [N·m] correlated over a few rows, as decimated rows' are."""
    white = np.random.default_rng(seed).normal(size=n + 4)
    return np.convolve(white, np.ones(5) / 5, mode='valid')


def test_a_fixed_ratio_on_every_row_has_no_spread():
    mine = _correlated(60, 1)
    assert public_scoring.ratio_interval(2.0 * mine, mine) == [2.0, 2.0]


def test_the_interval_holds_the_ratio_and_narrows_with_more_rows():
    widths = []
    for n in (50, 800):
        shared = _correlated(n, 2)
        mine, theirs = shared + 0.3 * _correlated(n, 3), shared + 0.3 * _correlated(n, 4)
        low, high = public_scoring.ratio_interval(mine, theirs)
        ratio = np.sqrt(np.mean(mine ** 2) / np.mean(theirs ** 2))
        assert low < ratio < high
        widths.append(high - low)
    assert widths[1] < 0.5 * widths[0]


def test_no_interval_without_both_series_of_one_length():
    mine = _correlated(40, 5)
    assert public_scoring.ratio_interval(mine, None) is None
    assert public_scoring.ratio_interval(mine, mine[:-1]) is None
    assert public_scoring.ratio_interval(mine[:5], mine[:5]) is None


def test_a_joint_behind_the_authors_and_against_another_run_is_listed_with_its_interval():
    shared = _correlated(60, 6)
    mine, theirs = 1.2 * shared + 0.2 * _correlated(60, 7), shared
    cell = {'dynid': float(np.sqrt(np.mean(mine ** 2))), 'authors': float(np.sqrt(np.mean(theirs ** 2))),
            'residual': public_scoring.kept(mine), 'authors_residual': public_scoring.kept(theirs)}
    quoted = {'dynid': 2.0, 'authors': 1.0, 'residual': public_scoring.kept(mine)}
    rows = {'set': {'runs': {'held-out': {'j1': cell, 'j2': quoted}}, 'named': [], 'pooled': 0.1}}
    against = {'set|held-out|j1': {'dynid': 0.5 * cell['dynid'], 'residual': public_scoring.kept(0.5 * mine)},
               'set|held-out|j2': {'dynid': 2.0}}
    counts, lists = bench_public.figures(rows, None, public_scoring.Runner(), 0.2, against)
    (key, ours, authors, interval), (_, _, _, none) = lists['behind_authors']
    assert key == 'set|held-out|j1' and interval[0] < ours / authors < interval[1] and none is None
    assert lists['worse_than_against'] == [['set|held-out|j1', cell['dynid'], 0.5 * cell['dynid'], [2.0, 2.0]]]
    assert counts['joints_behind_authors'] == 2 and counts['joints_worse_than_against'] == 1
