"""Masks of kept samples that imitate a lossy intake, shared by the tests of recordings with gaps."""

import numpy as np


def bursty_losses(count: int, seed: int, run=(100, 500), stretch=(150, 300)) -> np.ndarray:
    """Contiguous runs of ``run`` samples (uniform in the range), each followed by ``stretch`` samples
    of which 90 % are lost; True where a sample is kept."""
    rng = np.random.default_rng(seed)
    keep = np.zeros(count, dtype=bool)
    k = 0
    while k < count:
        length, lossy_length = int(rng.integers(*run)), int(rng.integers(*stretch))
        keep[k:k + length] = True
        lossy = keep[k + length:k + length + lossy_length]  # a view
        lossy[:] = rng.random(lossy.size) >= 0.9
        k += length + lossy_length
    return keep
