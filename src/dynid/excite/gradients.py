"""Analytic gradients of the excitation criteria with respect to the rest-to-rest Fourier variables.

A criterion f of the stacked base regressor W_b (N·n × b, rows sample-major) changes by
df = Σ_r a_rᵀ·dW_b·e_r for vectors a_r (N·n) and e_r (b) that follow from f's derivative:

- ``cond``, f = log σ_1 − log σ_b: (a, e) = (u_1/σ_1, v_1) and (−u_b/σ_b, v_b), with u, v the singular
  vectors (the derivative of a simple singular value is uᵀ·dW·v).
- ``d_optimal``, f = −log det(W_nᵀW_n/N) with W_n = W_b·diag(1/‖w_c‖): ∂f/∂W_b = W_b·S with
  S = 2·(diag(1/‖w_c‖²) − (W_bᵀW_b)⁻¹); with S = Σ λ_r·e_r·e_rᵀ the pairs are (λ_r·W_b·e_r, e_r).
- ``weighted``: the ``cond`` pairs of W_b and W_f weighted by the chain rule of log(W1·c_b + W2·c_f);
  W_f's viscous columns are q̇ itself, its Coulomb columns sgn(q̇) have zero derivative.

W_b·e is the inverse dynamics τ(q, q̇, q̈; θ) of the robot with standard parameters θ (e scattered into
the base columns), so a_kᵀ·dW_b,k·e = a_kᵀ·(∂τ/∂q·dq_k + ∂τ/∂q̇·dq̇_k + M·dq̈_k), from pinocchio's
``computeRNEADerivatives`` (Carpentier & Mansard 2018) once per sample and pair. q, q̇ and q̈ are linear
in the Fourier variables (:meth:`dynid.excite.fourier.FourierDesign.kinematic_matrices`), which closes
the chain rule. A parameter vector θ need not be physical (a zero mass has no centre of mass in
pinocchio's inertia), so each pass runs with θ + δ, δ a point mass at every joint origin, and the pass of
δ alone is subtracted (inverse dynamics is linear in the parameters).
"""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import scipy.linalg

from dynid.errors import InputError, checked_choice
from dynid.excite.fourier import FourierDesign
from dynid.excite.settings import CRITERIA
from dynid.excite.trajectory import FourierTrajectory, reorder_trajectory_output
from dynid.model.joint_terms import joint_term_regressor
from dynid.model.robot import RobotModel


def trajectory_states(robot: RobotModel, trajectory: FourierTrajectory, times: np.ndarray):
    """(q, q̇, q̈) of a trajectory at the times, in the robot's joint order."""
    q, dq, ddq = trajectory.evaluate(times)
    names = trajectory.joint_names
    return tuple(reorder_trajectory_output(v, names, robot.joint_names) for v in (q, dq, ddq))


class RegressorDerivatives:
    """Contractions Σ_r a_rᵀ·(∂W_b/∂(q, q̇, q̈))·e_r of a robot's base regressor (module docstring).

    Args:
        robot: the robot; its base parameters give the columns of W_b.
    """

    def __init__(self, robot: RobotModel) -> None:
        self.robot = robot
        self._model = pin.Model(robot.pinocchio_model)  # our copy: its inertias are overwritten
        self._data = self._model.createData()
        self._indices = np.asarray(robot.base.indices)

    def _set_parameters(self, standard: np.ndarray) -> None:
        for j in range(self.robot.n):
            self._model.inertias[j + 1] = pin.Inertia.FromDynamicParameters(standard[10 * j:10 * j + 10])

    def _pass(self, config: np.ndarray, dq: np.ndarray, ddq: np.ndarray, weights: np.ndarray,
              out: tuple[np.ndarray, np.ndarray, np.ndarray], sign: float) -> None:
        """Add sign·a_kᵀ·∂τ/∂(q, q̇, q̈) of every sample k to ``out`` for the parameters currently set."""
        model, data = self._model, self._data
        for k in range(config.shape[0]):
            d_q, d_v, d_a = pin.computeRNEADerivatives(model, data, config[k], dq[k], ddq[k])
            a = sign * weights[k]
            out[0][k] += a @ d_q
            out[1][k] += a @ d_v
            out[2][k] += a @ d_a

    def contract(self, q: np.ndarray, dq: np.ndarray, ddq: np.ndarray,
                 pairs: list[tuple[np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Gradients (each (N, n)) of Σ_r a_rᵀ·W_b(q, q̇, q̈)·e_r with respect to q, q̇ and q̈.

        Args:
            q, dq, ddq: (N, n) states in the robot's joint order [rad, rad/s, rad/s²].
            pairs: (a_r (N·n,), e_r (b,)).
        """
        n, samples = self.robot.n, q.shape[0]
        config = self.robot.configuration(q)
        out = (np.zeros((samples, n)), np.zeros((samples, n)), np.zeros((samples, n)))
        thetas = []
        for _, e in pairs:
            theta = np.zeros(10 * n)
            theta[self._indices] = e
            thetas.append(theta)
        # δ: a point mass at each joint origin, large enough that every m_j + δ is far from zero.
        scale = 2.0 * max(float(np.abs(theta).max()) for theta in thetas) + 1e-300
        shift = np.zeros(10 * n)
        shift[::10] = scale
        total = np.zeros((samples, n))
        for (a, _), theta in zip(pairs, thetas, strict=True):
            weights = a.reshape(samples, n)
            total += weights
            self._set_parameters(theta + shift)
            self._pass(config, dq, ddq, weights, out, 1.0)
        self._set_parameters(shift)
        self._pass(config, dq, ddq, total, out, -1.0)
        return out


def _cond_pairs(w: np.ndarray) -> tuple[float, list[tuple[np.ndarray, np.ndarray]]]:
    """(cond(W), pairs of d log cond(W)); the SVD of W's small R factor gives σ and v, and u = W·v/σ."""
    r = scipy.linalg.qr(w, mode='r', check_finite=False)[0][:w.shape[1]]
    _, s, vt = np.linalg.svd(r)
    first, last = vt[0], vt[-1]
    return float(s[0] / s[-1]), [(w @ first / s[0] ** 2, first), (-(w @ last) / s[-1] ** 2, last)]


class CriterionGradient:
    """A criterion of :mod:`dynid.excite.optimize` as a function of the Fourier variables x, with its
    analytic gradient (module docstring).

    ``value(x)`` is what the optimizer minimizes: log cond(W_b), log(W1·cond(W_b) + W2·cond(W_f)) or
    −log det(W_nᵀW_n/N); ``gradient(x)`` is its gradient (the last value's decomposition is reused
    when the optimizer asks for the gradient at the point it just evaluated).

    Args:
        robot, design: the robot and the Fourier parameterization (joints matched by name).
        times: (N,) sample times [s] of one period. criterion, weights: as for ``excitation_criterion``.
    """

    def __init__(self, robot: RobotModel, design: FourierDesign, times: np.ndarray, criterion: str = 'cond',
                 weights: tuple[float, float] = (1.0, 1.0)) -> None:
        checked_choice('criterion', criterion, CRITERIA)
        missing = [name for name in robot.joint_names if name not in design.joint_names]
        if missing:
            raise InputError(f'the design has no joints {missing}')
        self.robot, self.criterion, self.weights = robot, criterion, weights
        self._design, self._times = design, np.asarray(times, dtype=float)
        self._derivatives = RegressorDerivatives(robot)
        order = [design.joint_names.index(name) for name in robot.joint_names]
        samples = len(times)
        # (N·n, size) matrices in the robot's joint order: q = P·x, q̇ = V·x, q̈ = A·x.
        self._matrices = tuple(m.reshape(samples, design.n, -1)[:, order].reshape(samples * robot.n, -1)
                               for m in design.kinematic_matrices(times))
        self._samples = samples
        self._cache: tuple[bytes, float, tuple] | None = None

    def _evaluate(self, x: np.ndarray) -> tuple[float, tuple]:
        key = np.asarray(x, dtype=float).tobytes()
        if self._cache is not None and self._cache[0] == key:
            return self._cache[1], self._cache[2]
        q, dq, ddq = trajectory_states(self.robot, self._design.trajectory(x), self._times)
        w = self.robot.base.columns(self.robot.regressor(q, dq, ddq))
        friction_pairs = []
        if self.criterion == 'cond':
            cond, pairs = _cond_pairs(w)
            value = float(np.log(cond))
        elif self.criterion == 'weighted':
            cond_b, pairs = _cond_pairs(w)
            cond_f, friction_pairs = _cond_pairs(joint_term_regressor(('coulomb', 'viscous'), dq))
            total = self.weights[0] * cond_b + self.weights[1] * cond_f
            value = float(np.log(total))
            pairs = [(a * self.weights[0] * cond_b / total, e) for a, e in pairs]
            friction_pairs = [(a * self.weights[1] * cond_f / total, e) for a, e in friction_pairs]
        else:
            norms = np.maximum(np.linalg.norm(w, axis=0), 1e-300)
            normalized = w / norms
            sign, logdet = np.linalg.slogdet(normalized.T @ normalized / w.shape[0])
            value = float(-logdet) if sign > 0 else np.inf
            pairs = []
            if sign > 0:
                s = 2.0 * (np.diag(1.0 / norms**2) - np.linalg.inv(w.T @ w))
                eigenvalues, vectors = np.linalg.eigh(0.5 * (s + s.T))
                pairs = [(lam * (w @ e), e) for lam, e in zip(eigenvalues, vectors.T, strict=True)]
        self._cache = (key, value, (q, dq, ddq, pairs, friction_pairs))
        return value, self._cache[2]

    def value(self, x: np.ndarray) -> float:
        """The minimized criterion at x (class docstring)."""
        return self._evaluate(x)[0]

    def gradient(self, x: np.ndarray) -> np.ndarray:
        """Its gradient with respect to x (size,)."""
        value, (q, dq, ddq, pairs, friction_pairs) = self._evaluate(x)
        if not np.isfinite(value):
            return np.zeros(self._matrices[0].shape[1])
        g_q, g_dq, g_ddq = self._derivatives.contract(q, dq, ddq, pairs)
        n = self.robot.n
        for a, e in friction_pairs:  # viscous columns n..2n−1 hold q̇_j on joint j's rows
            g_dq += a.reshape(-1, n) * e[n:2 * n]
        position, velocity, acceleration = self._matrices
        return position.T @ g_q.reshape(-1) + velocity.T @ g_dq.reshape(-1) + acceleration.T @ g_ddq.reshape(-1)
