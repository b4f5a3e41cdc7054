"""The learned baseline of ``bench_contact.py``: a small network that predicts the measured torque from a short window
of the joint states and the command, trained on the same contact-free motion the observer's thresholds come from
(the way FACTR 2's NEXT is trained on free motion); τ̂_ext is the measured torque less its prediction.

- **Inputs** per sample: the last :data:`WINDOW` samples (every :data:`STRIDE`-th: 16 ms at 1 kHz) of q, q̇ and the
  command, each standardized. The command is the controller's reference (q_r, q̇_r, q̈_r) where the recording has
  one (the simulations); a logged command current would hold the controller's answer to a contact, so it is not
  used (the UR10e logs hold no reference: q and q̇ only there).
- **Network**: two hidden layers of :data:`HIDDEN` tanh units, a linear output per joint (the measured torque
  K_τ·i or the effort, standardized); Adam (lr 1e-3) on minibatches of 256 for :data:`EPOCHS` epochs, numpy only
  (scikit-learn has Python 3.11 wheels, but one small multilayer perceptron did not seem worth a dependency of 10 MB).
- **Estimate**: the residual through the same low-pass as the observer's estimate (its stages of gain K), so that
  both are scored at the same bandwidth; its σ₀ and thresholds by the same calibration (no friction envelope: the
  network has no friction model to be unsure of), on the same contact-free runs.
"""

from __future__ import annotations

import numpy as np

WINDOW = 5
STRIDE = 4
HIDDEN = 64
EPOCHS = 15
BATCH = 256


def features(signals: dict, reference: dict | None, stride: int = STRIDE) -> np.ndarray:
    """(N, F) inputs (module docstring); samples before the window's start repeat the first one."""
    parts = [signals['q'], signals['dq']]
    if reference:
        parts += [reference['q'], reference['dq'], reference['ddq']]
    state = np.hstack(parts)
    lagged = []
    for lag in range(WINDOW):
        shift = lag * stride
        lagged.append(np.vstack([np.repeat(state[:1], shift, axis=0), state[:len(state) - shift]]) if shift else state)
    return np.hstack(lagged)


class TorqueNetwork:
    """The multilayer perceptron of the module docstring, with its standardization."""

    def __init__(self, inputs: int, outputs: int, seed: int = 0) -> None:
        rng = np.random.default_rng(seed)
        sizes = (inputs, HIDDEN, HIDDEN, outputs)
        self.weights = [rng.normal(0.0, 1.0 / np.sqrt(a), (a, b)) for a, b in zip(sizes[:-1], sizes[1:], strict=True)]
        self.biases = [np.zeros(b) for b in sizes[1:]]
        self.x_mean = self.x_std = self.y_mean = self.y_std = None

    def _forward(self, x: np.ndarray) -> list[np.ndarray]:
        activations = [x]
        for k, (w, b) in enumerate(zip(self.weights, self.biases, strict=True)):
            z = activations[-1] @ w + b
            activations.append(np.tanh(z) if k < len(self.weights) - 1 else z)
        return activations

    def fit(self, x: np.ndarray, y: np.ndarray, epochs: int = EPOCHS, seed: int = 0) -> list[float]:
        """Train on (x, y); returns the training loss per epoch (standardized units)."""
        self.x_mean, self.x_std = x.mean(axis=0), x.std(axis=0) + 1e-9
        self.y_mean, self.y_std = y.mean(axis=0), y.std(axis=0) + 1e-9
        xs, ys = (x - self.x_mean) / self.x_std, (y - self.y_mean) / self.y_std
        parameters = self.weights + self.biases
        first = [np.zeros_like(p) for p in parameters]
        second = [np.zeros_like(p) for p in parameters]
        rng, step, losses = np.random.default_rng(seed), 0, []
        for _ in range(epochs):
            order = rng.permutation(len(xs))
            total = 0.0
            for start in range(0, len(xs), BATCH):
                rows = order[start:start + BATCH]
                activations = self._forward(xs[rows])
                error = activations[-1] - ys[rows]
                total += float(np.sum(error ** 2))
                grads_w, grads_b, delta = [], [], 2.0 * error / len(rows)
                for k in range(len(self.weights) - 1, -1, -1):
                    grads_w.insert(0, activations[k].T @ delta)
                    grads_b.insert(0, delta.sum(axis=0))
                    if k:
                        delta = (delta @ self.weights[k].T) * (1.0 - activations[k] ** 2)
                step += 1
                for p, g, m, v in zip(parameters, grads_w + grads_b, first, second, strict=True):
                    m *= 0.9
                    m += 0.1 * g
                    v *= 0.999
                    v += 0.001 * g * g
                    p -= 1e-3 * (m / (1 - 0.9 ** step)) / (np.sqrt(v / (1 - 0.999 ** step)) + 1e-8)
            losses.append(total / ys.size)
        return losses

    def predict(self, x: np.ndarray) -> np.ndarray:
        out = np.empty((len(x), len(self.y_mean)))
        for start in range(0, len(x), 20000):
            out[start:start + 20000] = self._forward((x[start:start + 20000] - self.x_mean) / self.x_std)[-1]
        return out * self.y_std + self.y_mean


def low_pass(t: np.ndarray, values: np.ndarray, gain: float, stages: int = 1) -> np.ndarray:
    """``values`` through ``stages`` first-order stages ṙ = K·(x − r), exact for a held input (the observer's)."""
    from scipy.signal import lfilter

    dt = float(np.median(np.diff(t)))
    a = np.exp(-gain * dt)
    for _ in range(stages):
        values = lfilter([1.0 - a], [1.0, -a], values, axis=0)
    return values
