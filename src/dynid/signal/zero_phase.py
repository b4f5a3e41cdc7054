"""Offline zero-phase Butterworth low-pass, evaluated only at the samples a decimation keeps.

:class:`ZeroPhaseLowPass` computes what ``scipy.signal.sosfiltfilt(butter(order, cutoff_hz, fs=rate_hz,
output='sos'), x, axis=0)[start:stop:step]`` computes, to rounding: the same second-order sections
(:func:`butterworth_sos`), the same odd extension of ``3·(2·sections + 1 − …)`` samples at both ends,
and the same initial states (the steady state of a unit step, scaled by the first sample of each
pass). Two reasons for it in identification (Gautier's parallel filtering of every regressor column):

- The forward and backward recursions run as block products (below), and the backward pass yields
  only the kept rows: with a decimation of 20, about 11 multiply-adds per sample and column in a few
  matrix products over all columns at once, where scipy runs the two recursions in full (20
  multiplications and 16 additions per sample and column, one column at a time); about five times less
  CPU than scipy on an identification's regressor (benchmarks/README.md, "The figures behind the defaults").
- It needs numpy alone. ``import scipy.signal`` costs 0.5–1 s of CPU in scipy 1.17 (it rewrites the
  docstrings of ~800 functions and imports scipy.stats), against the 3 s that ``dynid identify`` on
  a 60 s recording may take in all.

Block form. The cascade of sections in transposed direct form II is one state-space system
s[k+1] = A·s[k] + B·x[k], y[k] = C·s[k] + D·x[k] (state: each section's two delays, in the order of
scipy's ``zi``). Over a block of L samples x_b (L × columns) entered with state s,

    y_b = T·x_b + O·s,    s' = A^L·s + R·x_b,

T (L × L) the lower-triangular Toeplitz matrix of the impulse response, O = [C; C·A; …; C·A^(L−1)],
R = [A^(L−1)·B, …, A·B, B]. The backward pass is the same system run on the block reversed. The
inputs of all blocks (R·x_b, and what the backward pass needs of each forward block) are products
over all blocks at once; only the state recursion s' = A^L·s + … loops, once per block.
"""

from __future__ import annotations

import numpy as np

# Block length L: each block costs two Python steps of the state recursion (~4 µs each) and, per column,
# about L/step + 8 multiply-adds per sample in the products (~4e9 per s); the sum is least near
# L = √(2·4e-6·4e9·step/columns). Clipped to 32..1024 and rounded to a multiple of the row step.
_STEP_COST = 2 * 4e-6 * 4e9
# Samples per piece of the backward pass (ZeroPhaseLowPass._rows): its temporaries are a few of these.
_BACKWARD_SAMPLES = 8192


def _block_length(step: int, columns: int) -> int:
    best = min(1024.0, max(32.0, np.sqrt(_STEP_COST * step / max(columns, 1))))
    return step * max(1, int(round(best / step)))


def butterworth_sos(order: int, cutoff_hz: float, rate_hz: float) -> np.ndarray:
    """Second-order sections (sections × 6: b0 b1 b2 1 a1 a2) of a digital Butterworth low-pass.

    Bilinear transform of the analog prototype with the cut-off pre-warped (Oppenheim & Schafer,
    Discrete-Time Signal Processing, §7.1), built as ``scipy.signal.butter(order, cutoff_hz, fs=rate_hz,
    output='sos')`` builds it, so that both give the same numbers: poles z = (4 + p)/(4 − p) of the
    prototype poles p scaled to 4·tan(π·f_c/f_s), zeros at z = −1 (and, for an odd order, a pole and a
    zero at z = 0 making the count even), the gain in the first section; scipy's "nearest" pairing
    fills the sections from the last: the pole (pair) nearest the unit circle with the two zeros
    nearest it.
    """
    if not 0 < cutoff_hz < rate_hz / 2:
        raise ValueError(f'cut-off {cutoff_hz:g} Hz must lie within (0, {rate_hz / 2:g}) Hz')
    warped = 4.0 * np.tan(np.pi * (2.0 * cutoff_hz / rate_hz) / 2.0)
    analog = warped * -np.exp(1j * np.pi * np.arange(-order + 1, order, 2) / (2 * order))
    poles = (4.0 + analog) / (4.0 - analog)
    gain = warped**order * float(np.real(1.0 / np.prod(4.0 - analog)))
    remaining = [complex(p) for p in poles if p.imag > 0] + [complex(p.real) for p in poles if p.imag == 0]
    zeros = [-1.0] * order
    if order % 2:
        remaining.append(0j)
        zeros.append(0.0)
    sections = []
    while remaining:
        first = remaining.pop(int(np.argmin([abs(1 - abs(p)) for p in remaining])))
        if first.imag == 0:
            reals = [i for i, p in enumerate(remaining) if p.imag == 0]
            second = remaining.pop(reals[int(np.argmin([abs(1 - abs(remaining[i])) for i in reals]))])
        else:
            second = first.conjugate()
        pair = [zeros.pop(int(np.argmin([abs(z - first) for z in zeros]))) for _ in range(2)]
        sections.insert(0, [1.0, -(pair[0] + pair[1]), pair[0] * pair[1],
                            1.0, -(first + second).real, (first * second).real])
    sos = np.array(sections)
    sos[0, :3] *= gain
    return sos


def _state_space(sos: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """(A, B, C, D) of the cascade of ``sos`` in transposed direct form II (module docstring): one step
    of the sections applied to every unit state and to the unit input."""
    m = 2 * len(sos)
    state = np.hstack([np.eye(m), np.zeros((m, 1))])
    signal = np.r_[np.zeros(m), 1.0]
    new = np.empty_like(state)
    for j, (b0, b1, b2, a0, a1, a2) in enumerate(sos):
        b0, b1, b2, a1, a2 = b0 / a0, b1 / a0, b2 / a0, a1 / a0, a2 / a0
        out = b0 * signal + state[2 * j]
        new[2 * j] = b1 * signal - a1 * out + state[2 * j + 1]
        new[2 * j + 1] = b2 * signal - a2 * out
        signal = out
    return new[:, :m], new[:, m], signal[:m], float(signal[m])


def _steady_state(sos: np.ndarray) -> np.ndarray:
    """The state of the cascade after a unit input held forever (as ``scipy.signal.sosfilt_zi``): section
    by section, each under the DC gain of those before it. Solving s = A·s + B for the whole cascade
    instead loses digits: I − A has a condition number of ~1e9 for a 2 Hz cut-off at 1 kHz."""
    state, scale = np.empty(2 * len(sos)), 1.0
    for j, section in enumerate(sos):
        b, a = section[:3] / section[3], section[3:] / section[3]
        state[2 * j:2 * j + 2] = scale * np.linalg.solve([[1 + a[1], -1.0], [a[2], 1.0]], b[1:] - a[1:] * b[0])
        scale *= b.sum() / a.sum()
    return state


class ZeroPhaseLowPass:
    """Butterworth low-pass run forward and backward (zero phase) along axis 0 (module docstring).

    ``order``, ``cutoff_hz`` [Hz] and ``rate_hz`` [Hz] as for :func:`butterworth_sos`. Attributes:
    ``sos``, ``poles`` (z-plane), ``padlen`` (samples of odd extension at each end; an input must be
    longer), ``settle`` (samples after which the slowest pole's response has decayed below double
    precision).
    """

    def __init__(self, order: int, cutoff_hz: float, rate_hz: float) -> None:
        self.sos = butterworth_sos(order, cutoff_hz, rate_hz)
        self.poles = np.concatenate([np.roots(section[3:]) for section in self.sos])
        zeros_b2, zeros_a2 = int(np.sum(self.sos[:, 2] == 0)), int(np.sum(self.sos[:, 5] == 0))
        self.padlen = 3 * (2 * len(self.sos) + 1 - min(zeros_b2, zeros_a2))  # as scipy.signal.sosfiltfilt
        slowest = float(np.abs(self.poles).max())
        self.settle = int(np.ceil(np.log(np.finfo(float).eps) / np.log(slowest))) if slowest > 0 else 1
        self.a, self.b, self.c, self.d = _state_space(self.sos)
        self.zi = _steady_state(self.sos)
        self._blocks: dict[int, tuple] = {}
        self._kept: dict[tuple[int, int, int], tuple] = {}

    def _matrices(self, length: int) -> tuple:
        """T, O, R and A^L of blocks of ``length`` samples (module docstring), and A^t for every t ≤ L."""
        if length not in self._blocks:
            a, b, c = self.a, self.b, self.c
            powers = [np.eye(len(b))]
            for _ in range(length):
                powers.append(a @ powers[-1])
            response = np.r_[self.d, [c @ powers[i] @ b for i in range(length - 1)]]
            toeplitz = np.zeros((length, length))
            for i in range(length):
                toeplitz[i, :i + 1] = response[i::-1]
            observe = np.array([c @ powers[i] for i in range(length)])
            reach = np.column_stack([powers[length - 1 - j] @ b for j in range(length)])
            self._blocks[length] = toeplitz, observe, reach, powers
        return self._blocks[length]

    def _kept_rows(self, length: int, step: int, offset: int) -> tuple:
        """For blocks of ``length`` samples whose kept rows are ``offset``, offset + step, …: those rows, and
        the matrices that take a block's samples x_b and its forward start state s to what the forward and
        backward passes need of them (:meth:`_rows`)."""
        key = (length, step, offset)
        if key not in self._kept:
            toeplitz, observe, reach, _ = self._matrices(length)
            # The backward pass in forward-order coordinates (J: reversal) is J·T·J, J·O, R·J; it enters a
            # block with that block's forward output T·x_b + O·s, so it needs (R·J·T)·x_b + (R·J·O)·s and, of
            # the kept rows, (J·T·J)[kept]·(T·x_b + O·s).
            toeplitz_back, observe_back, reach_back = toeplitz[::-1, ::-1], observe[::-1], reach[:, ::-1]
            picked = np.arange(offset, length, step)
            on_blocks = np.vstack([reach, reach_back @ toeplitz, toeplitz_back[picked] @ toeplitz])
            on_starts = np.vstack([reach_back @ observe, toeplitz_back[picked] @ observe])
            self._kept[key] = picked, on_blocks, on_starts, observe_back[picked]
        return self._kept[key]

    def __call__(self, x: np.ndarray, start: int = 0, stop: int | None = None, step: int = 1) -> np.ndarray:
        """Rows ``start:stop:step`` (non-negative, ``stop`` ≤ len(x)) of the zero-phase output of ``x``
        (N, ...), in x's units; N must exceed :attr:`padlen`."""
        x = np.asarray(x, dtype=float)
        n, p = x.shape[0], self.padlen
        stop = n if stop is None else stop
        if n <= p:
            raise ValueError(f'{n} samples are too few for the zero-phase filter (more than {p} needed)')
        if not (0 <= start and stop <= n and step >= 1):
            raise ValueError(f'rows {start}:{stop}:{step} are not within 0..{n}')
        flat = x.reshape(n, -1)
        extended = np.concatenate([2 * flat[:1] - flat[p:0:-1], flat, 2 * flat[-1:] - flat[-2:-p - 2:-1]])
        rows = self._rows(extended, p + start, p + max(start, stop), step)
        return rows.reshape((-1,) + x.shape[1:])

    def _rows(self, x: np.ndarray, start: int, stop: int, step: int) -> np.ndarray:
        """Rows start:stop:step of forward-backward filtering of ``x`` (E, K) with scipy's initial states.

        The backward pass runs over pieces of :data:`_BACKWARD_SAMPLES` samples from the end, each piece's
        kept rows written into the output as soon as its states are known: besides x and the output, only
        the forward products (about x's size at ``step`` 1, a tenth at 20) are held whole. The products are
        the same, per block, as over all blocks at once, so the pieces do not change a bit of the result.
        """
        size, columns = x.shape
        m = len(self.b)
        length = _block_length(step, columns)
        toeplitz, observe, reach, powers = self._matrices(length)
        power = powers[length]
        head = size % length  # a short block first, so that the blocks end with the signal
        count = size // length
        blocks = x[head:].reshape(count, length, columns)
        picked, on_blocks, on_starts, observe_kept = self._kept_rows(length, step, (start - head) % step)
        from_blocks = on_blocks @ blocks  # one product over all blocks, reading x once
        # Forward pass from scipy's initial state zi·x[0]: the head, then the state at every block start.
        state = self.zi[:, None] * x[:1]
        head_out = toeplitz[:head, :head] @ x[:head] + observe[:head] @ state
        starts = np.empty((count + 1, m, columns))
        starts[0] = powers[head] @ state + reach[:, length - head:] @ x[:head]
        for k in range(count):
            starts[k + 1] = power @ starts[k] + from_blocks[k, :m]
        starts = starts[:count]
        last = (toeplitz[-1] @ blocks[-1] + observe[-1] @ starts[-1]) if count else head_out[-1]
        # The rows wanted: the head's, then a run of the blocks' kept rows (block-major, positions increasing;
        # every one is a step from ``start``, as the picked rows were chosen).
        head_positions = np.arange(head)
        head_wanted = (head_positions >= start) & (head_positions < stop) & ((head_positions - start) % step == 0)
        kept_positions = (head + np.arange(count)[:, None] * length + picked).ravel()
        first, end = np.searchsorted(kept_positions, start), np.searchsorted(kept_positions, stop)
        from_head = int(np.count_nonzero(head_wanted))
        out = np.empty((from_head + end - first, columns))
        # Backward pass from zi·(last forward output), piece by piece from the end: the state entering each
        # block from its end, then the piece's kept rows.
        state = self.zi[:, None] * last
        per_piece, rows = max(1, _BACKWARD_SAMPLES // length), len(picked)
        into = np.empty((min(per_piece, count), m, columns))
        for high in range(count, 0, -per_piece):
            low = max(0, high - per_piece)
            from_starts = on_starts @ starts[low:high]
            for k in range(high - 1, low - 1, -1):
                into[k - low] = state
                state = power @ state + from_blocks[k, m:2 * m] + from_starts[k - low, :m]
            a, b = max(low * rows, first), min(high * rows, end)
            if a < b:
                kept = from_blocks[low:high, 2 * m:] + from_starts[:, m:] + observe_kept @ into[:high - low]
                out[from_head + a - first:from_head + b - first] = kept.reshape(-1, columns)[a - low * rows:
                                                                                             b - low * rows]
        # The head, backward: its forward output reversed through the first rows of the system.
        head_back = (toeplitz[:head, :head] @ head_out[::-1] + observe[:head] @ state)[::-1]
        out[:from_head] = head_back[head_wanted]
        return out
