"""Filters and differentiation for the online estimator: causal, with explicit state and stated delays.

Delay bookkeeping. A causal filter cannot look ahead, so a smoother or differentiator built on a
centred window describes a past sample: each filter here has a ``delay`` in samples, and its output
at sample k describes the input at sample k − delay. Filters in series add their delays. Signals
that enter one equation together must describe the same sample, so every signal that is not
smoothed (current, temperature, stamps) goes through a :class:`DelayLine` of the total delay.

Madsen 2020, ch.6 §6.1 (state estimation): Savitzky–Golay low-pass, n_LP = 101 samples at 1 kHz,
delay (n_LP − 1)/2 = 50; then a central difference, n_CD = 3, delay (n_CD − 1)/2 = 1; in total
(n_LP − 1)/2 + (n_CD − 1)/2 = 51 samples = 0.051 s. (The printed formula (n_LP − n_CD − 2)/2
gives 48 and contradicts the thesis' own 51.) :class:`AlignedStateEstimator` computes its delay
from its parts, so other windows and rates (:func:`savitzky_golay_window`) stay consistent.

Offline, zero-phase filtering of whole recordings for identification: :mod:`dynid.signal.zero_phase`
(the Butterworth low-pass run forward and backward, evaluated at the kept samples), used by the pipeline of
:mod:`dynid.signal.preprocess`.
"""

from dynid.signal.aligned import AlignedState, AlignedStateEstimator
from dynid.signal.causal import CausalFIR, CentralDifference, DelayLine, SavitzkyGolay, savitzky_golay_window

__all__ = [
    'AlignedState',
    'AlignedStateEstimator',
    'CausalFIR',
    'CentralDifference',
    'DelayLine',
    'SavitzkyGolay',
    'savitzky_golay_window',
]
