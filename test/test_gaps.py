"""Lost samples (dynid.io.gaps): the nominal period and the gaps of recordings, and Dataset's view of them."""

import numpy as np
import pytest

from dynid.io.dataset import Dataset
from dynid.io.gaps import find_gaps, nominal_period

PERIOD_S = 0.002  # 500 Hz


def _stamps_with_losses(count: int, share: float, seed: int) -> tuple[np.ndarray, int]:
    """``count`` stamps at PERIOD_S with a ``share`` of them lost at random (first and last kept)."""
    rng = np.random.default_rng(seed)
    keep = rng.random(count) >= share
    keep[[0, -1]] = True
    return np.flatnonzero(keep) * PERIOD_S, int(count - keep.sum())


@pytest.mark.parametrize('share', [0.0, 0.05, 0.45])
def test_losses_are_counted_exactly_and_the_period_is_exact(share):
    t, lost = _stamps_with_losses(15000, share, seed=int(share * 100))
    summary = find_gaps(t)
    # The nominal period is the sampling period itself (to float rounding), whatever the share lost.
    assert summary.period_s == pytest.approx(PERIOD_S, rel=1e-9)
    assert nominal_period(np.diff(t)) == pytest.approx(PERIOD_S, rel=1e-9)
    assert summary.lost == lost and summary.expected == 15000 and summary.samples == t.size
    steps = np.diff(t)
    assert len(summary.gaps) == np.count_nonzero(steps > 1.5 * PERIOD_S)
    assert summary.edges[1:-1] == (np.flatnonzero(steps > 1.5 * PERIOD_S) + 1).tolist()


def test_uniform_recording_has_no_gap_and_one_line_says_so():
    summary = find_gaps(np.arange(1000) * PERIOD_S)
    assert summary.lost == 0 and summary.gaps == () and summary.pieces == 1 and summary.edges == [0, 1000]
    assert summary.line('rec') == 'rec: 1000 samples, none lost'


def _dataset(t: np.ndarray) -> Dataset:
    q = np.column_stack([np.sin(t), np.cos(t)])
    return Dataset(('a', 'b'), t, q, q, tau=q)


def test_dataset_pieces_follow_the_robust_period_when_most_steps_are_gaps():
    # Runs of 40 contiguous samples, then stretches keeping one sample in 6 or 7 (12–14 ms steps): the
    # median step is ~12 ms, six periods, and every long step is still a gap.
    rng = np.random.default_rng(3)
    index, k = [], 0
    while k < 20000:
        index.extend(range(k, k + 40))
        k += 40
        for _ in range(80):
            k += int(rng.integers(6, 8))
            index.append(k)
        k += 1
    t = np.array(index) * PERIOD_S
    dataset = _dataset(t)
    assert np.median(np.diff(t)) >= 6 * PERIOD_S - 1e-12
    summary = dataset.gaps()
    assert summary.period_s == pytest.approx(PERIOD_S, rel=1e-9)
    assert summary.lost == index[-1] + 1 - len(index)
    assert dataset.rate_hz == pytest.approx(1 / PERIOD_S)
    pieces = dataset.contiguous_pieces()
    assert all(np.allclose(np.diff(p.t), PERIOD_S) for p in pieces)  # each piece is uniformly sampled
    assert sum(p.n_samples for p in pieces) + sum(b - a == 1 for a, b in zip(summary.edges[:-1], summary.edges[1:],
                                                                            strict=True)) == t.size
    assert sorted({p.n_samples for p in pieces})[-1] >= 40
    # A known publisher period overrides the estimate.
    assert dataset.gaps(period_s=PERIOD_S / 2).lost > summary.lost


def test_gap_summary_reports_one_line_and_plain_values():
    t = np.concatenate([np.arange(100), np.arange(150, 200), np.arange(203, 300)]) * PERIOD_S
    summary = _dataset(t).gaps()
    assert [(g.lost, g.index) for g in summary.gaps] == [(50, 100), (3, 150)]
    assert summary.edges == [0, 100, 150, 247] and summary.longest_s == pytest.approx(51 * PERIOD_S)
    line = summary.line('rec')
    assert '\n' not in line and line.startswith('rec: 53 of 300 samples lost') and 'in 2 gaps' in line
    assert summary.to_dict() == {'period_s': pytest.approx(PERIOD_S), 'samples': 247, 'lost': 53, 'gaps': 2,
                                 'longest_gap_s': pytest.approx(51 * PERIOD_S)}
    assert [p.n_samples for p in _dataset(t).contiguous_pieces()] == [100, 50, 97]
