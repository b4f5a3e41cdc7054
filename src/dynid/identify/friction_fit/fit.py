"""Fits of friction and stiffness models to the seeds' dedicated single-joint experiments.

Each fit takes the arrays of one joint and returns a :class:`FitResult` with the parameters, their
standard deviations where the fit defines them (linear least squares: σ̂²·(WᵀW)⁻¹ with
σ̂² = ‖r‖²/(m − p); nonlinear least squares: the same with the residual Jacobian), and the NRMSE fit
in percent (thesis definition, :func:`dynid.identify.result.metrics.nrmse_fit`). Linear fits use QR with
column pivoting (``gelsy``), as the thesis does.

=============================================  ==========================================================
experiment                                     fit
=============================================  ==========================================================
constant-velocity plateaus, both directions    :func:`constant_velocity_plateaus`, then
                                               :func:`fit_coulomb_viscous_per_direction` (PA-10 Table C.1)
                                               or :func:`fit_stribeck` (thesis, BFGS)
slow motion (0.05 rad/s) under gravity load    :func:`fit_load_coulomb` (thesis ch.6 eqs. (19)–(20))
warm-up run at constant velocities             :func:`fit_temperature` (thesis (P1-28) / ch.6 (11))
slow reciprocating sweep                       :func:`fit_egms` (backlash, element exponents, level)
deflection/torque pairs                        :func:`fit_stiffness` (odd polynomial)
=============================================  ==========================================================
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import scipy.linalg
import scipy.optimize

from dynid.errors import InputError, checked_choice
from dynid.friction.egms import EGMS
from dynid.friction.linear import sgn
from dynid.friction.static import AsymmetricCoulombViscous, StribeckMap
from dynid.friction.stiffness import OddPolynomialStiffness
from dynid.friction.temperature import ReferenceTemperatureFriction, TemperatureFriction
from dynid.identify.result.metrics import nrmse_fit, rms


@dataclass(frozen=True)
class FitResult:
    """Fitted parameters of one joint.

    Attributes:
        parameters: name → value (units in the fitted model's docstring).
        std: name → standard deviation (NaN where the fit does not define one).
        nrmse_fit: NRMSE fit [%] of the model on the data used.
        rms_residual: RMS of the residual, in the unit of the fitted signal.
        samples: number of data points used.
        extra: fit-specific data (e.g. the plateau table).
    """

    parameters: dict[str, float]
    std: dict[str, float]
    nrmse_fit: float
    rms_residual: float
    samples: int
    extra: dict = field(default_factory=dict)

    def __getitem__(self, name: str) -> float:
        return self.parameters[name]

    def relative_std(self) -> dict[str, float]:
        """100·σ/|value| [%] per parameter (inf for a zero value)."""
        return {name: 100.0 * self.std[name] / abs(value) if value else np.inf
                for name, value in self.parameters.items()}


def _vectors(*arrays: np.ndarray, names: Sequence[str]) -> list[np.ndarray]:
    out = []
    for array, name in zip(arrays, names, strict=True):
        a = np.asarray(array, dtype=float).reshape(-1)
        if not np.all(np.isfinite(a)):
            raise InputError(f'{name} holds NaN or infinite values')
        out.append(a)
    if len({a.size for a in out}) != 1:
        raise InputError(f'{", ".join(names)} have different lengths: {[a.size for a in out]}')
    return out


def linear_fit(columns: Sequence[np.ndarray], target: np.ndarray, names: Sequence[str],
               extra: dict | None = None) -> FitResult:
    """Least squares target ≈ Σ columns_i·p_i with statistics (QR with column pivoting)."""
    w = np.column_stack(columns)
    y = np.asarray(target, dtype=float)
    m, p = w.shape
    if m <= p:
        raise InputError(f'{m} data points cannot determine {p} parameters {list(names)}')
    if np.linalg.matrix_rank(w) < p:
        raise InputError(f'the data cannot separate the parameters {list(names)} (rank-deficient regressor)')
    theta = scipy.linalg.lstsq(w, y, lapack_driver='gelsy')[0]
    residual = y - w @ theta
    variance = residual @ residual / (m - p)
    std = np.sqrt(np.diag(variance * np.linalg.inv(w.T @ w)))
    return FitResult(dict(zip(names, map(float, theta), strict=True)),
                     dict(zip(names, map(float, std), strict=True)),
                     float(nrmse_fit(y, w @ theta)), float(rms(residual)), m, extra or {})


# ------------------------------------------------------------------------- constant-velocity data
def constant_velocity_plateaus(
    time: np.ndarray,
    velocity: np.ndarray,
    torque: np.ndarray,
    min_speed: float = 1e-3,
    min_duration: float = 0.5,
    acceleration_tolerance: float = 0.05,
    smoothing: float = 0.05,
    trim: float = 0.1,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Mean velocity and torque over each constant-velocity plateau of a recording.

    A plateau is a run of at least ``min_duration`` [s] where the velocity, smoothed by a moving
    average over ``smoothing`` [s], changes by less than ``acceleration_tolerance`` [rad/s²] and
    exceeds ``min_speed`` [rad/s] in magnitude; ``trim`` of each end is dropped before averaging.

    Returns:
        (mean velocity [rad/s], mean torque [N·m], samples per plateau), one entry per plateau.
    """
    t, w, tau = _vectors(time, velocity, torque, names=('time', 'velocity', 'torque'))
    if w.size < 3 or np.any(np.diff(t) <= 0):
        raise InputError('time must increase strictly and hold at least 3 samples')
    dt = float(np.median(np.diff(t)))
    window = max(1, int(round(smoothing / dt)))
    if w.size <= 2 * window:
        raise InputError(f'the recording ({w.size} samples) is shorter than two smoothing windows')
    smooth = np.convolve(w, np.ones(window) / window, mode='same')
    # Slope over one window on each side: the sample-to-sample derivative of a measured velocity
    # is mostly noise.
    slope = np.full(w.size, np.inf)
    slope[window:-window] = (smooth[2 * window:] - smooth[:-2 * window]) / (t[2 * window:] - t[:-2 * window])
    steady = (np.abs(slope) < acceleration_tolerance) & (np.abs(smooth) > min_speed)
    edges = np.flatnonzero(np.diff(np.concatenate([[0], steady.astype(int), [0]])))
    means_w, means_tau, counts = [], [], []
    for start, stop in zip(edges[::2], edges[1::2], strict=True):
        if t[stop - 1] - t[start] < min_duration:
            continue
        cut = int((stop - start) * trim)
        segment = slice(start + cut, stop - cut)
        if np.ptp(np.sign(w[segment])) > 0:
            continue
        means_w.append(np.mean(w[segment]))
        means_tau.append(np.mean(tau[segment]))
        counts.append(stop - start - 2 * cut)
    return np.array(means_w), np.array(means_tau), np.array(counts)


def fit_coulomb_viscous_per_direction(velocity: np.ndarray, torque: np.ndarray) -> FitResult:
    """Direction-dependent Coulomb + viscous friction (PA-10 report (C.1)–(C.2), Table C.1 layout).

    Fits Fcp, Fvp (ω > 0) and Fcn, Fvn (ω < 0) of :class:`AsymmetricCoulombViscous` to friction
    samples or plateau means; needs at least 3 points with distinct speeds per direction.
    """
    w, tau = _vectors(velocity, torque, names=('velocity', 'torque'))
    for label, mask in (('positive', w > 0), ('negative', w < 0)):
        if np.unique(w[mask]).size < 3:
            raise InputError(f'need at least 3 distinct {label} velocities to fit Coulomb and viscous terms')
    moving = w != 0
    features = AsymmetricCoulombViscous().features(w[moving])
    return linear_fit(features, tau[moving], AsymmetricCoulombViscous.symbols)


def fit_stribeck(velocity: np.ndarray, torque: np.ndarray, initial: dict | None = None) -> FitResult:
    """The 7-parameter Stribeck map (thesis ch.4 eq. (P1-25)) by BFGS.

    The cost (1/N)·Σ(τ − s(ω))² is minimized over (log Vs, log mu) by BFGS with the five linear
    parameters solved by least squares inside (variable projection), from the best point of a
    coarse grid or from ``initial`` {'Vs', 'mu'}. Standard deviations come from the Jacobian of the
    residual in all seven parameters at the optimum.
    """
    w, tau = _vectors(velocity, torque, names=('velocity', 'torque'))
    moving = w != 0
    w, tau = w[moving], tau[moving]
    if w.size < 8:
        raise InputError(f'the Stribeck map has 7 parameters; got {w.size} moving data points')

    def linear_part(u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        shape = StribeckMap(Vs=float(np.exp(u[0])), mu=float(np.exp(u[1])))
        columns = np.column_stack(shape.features(w))
        theta = scipy.linalg.lstsq(columns, tau, lapack_driver='gelsy')[0]
        return theta, tau - columns @ theta

    def cost(u: np.ndarray) -> float:
        return float(np.mean(linear_part(u)[1] ** 2))

    if initial is not None:
        start = np.log([initial['Vs'], initial['mu']])
    else:
        speed = np.abs(w)
        grid = [(v, m) for v in np.geomspace(max(speed.min(), 1e-4), speed.max(), 12)
                for m in (0.5, 1.0, 1.5, 2.0)]
        start = np.log(min(grid, key=lambda g: cost(np.log(g))))
    result = scipy.optimize.minimize(cost, start, method='BFGS')
    u = result.x
    theta, residual = linear_part(u)
    names = ('Fc', 'Fs', 'Fv1', 'Fv2', 'Fv3', 'Vs', 'mu')
    values = np.concatenate([theta, np.exp(u)])

    def residual_of(p: np.ndarray) -> np.ndarray:
        return tau - StribeckMap(*p[:5], Vs=p[5], mu=p[6]).evaluate(w)

    jacobian = _numeric_jacobian(residual_of, values)
    variance = residual @ residual / (w.size - values.size)
    covariance = variance * np.linalg.pinv(jacobian.T @ jacobian)
    std = np.sqrt(np.abs(np.diag(covariance)))
    return FitResult(dict(zip(names, map(float, values), strict=True)),
                     dict(zip(names, map(float, std), strict=True)),
                     float(nrmse_fit(tau, tau - residual)), float(rms(residual)), w.size,
                     {'converged': bool(result.success), 'cost': float(result.fun)})


def _numeric_jacobian(function, x: np.ndarray) -> np.ndarray:
    columns = []
    for i in range(x.size):
        h = 1e-6 * max(1.0, abs(x[i]))
        up, down = x.copy(), x.copy()
        up[i] += h
        down[i] -= h
        columns.append((function(up) - function(down)) / (2 * h))
    return np.column_stack(columns)


# -------------------------------------------------------------------------------- load, temperature
def fit_load_coulomb(
    velocity: np.ndarray,
    drive_torque: np.ndarray,
    load_torque: np.ndarray,
    velocity_friction: np.ndarray | None = None,
    law: str = 'squared',
    min_speed: float = 1e-3,
) -> FitResult:
    """Load-dependent Coulomb level F(τ) = Fc0 + Fc1·τ² (or |τ|) from slow motion under gravity load.

    Thesis ch.6 eq. (19): (|ω|/ω)·(K_τ·i − g(q) − F_V(ω, T)) = F(g(q)), with the drive torque K_τ·i,
    the gravity (load) torque g(q) and the velocity/temperature friction F_V (0 if not given).
    Samples with |ω| < ``min_speed`` are dropped (the sign is undefined there).
    """
    w, drive, load = _vectors(velocity, drive_torque, load_torque,
                              names=('velocity', 'drive_torque', 'load_torque'))
    rest = np.zeros_like(w) if velocity_friction is None else _vectors(
        velocity_friction, w, names=('velocity_friction', 'velocity'))[0]
    checked_choice('law', law, ('squared', 'absolute'))
    keep = np.abs(w) >= min_speed
    level = sgn(w[keep]) * (drive[keep] - load[keep] - rest[keep])
    shape = load[keep] ** 2 if law == 'squared' else np.abs(load[keep])
    return linear_fit([np.ones_like(shape), shape], level, ('Fc0', 'Fc1'), {'law': law})


def fit_temperature(
    velocity: np.ndarray,
    temperature: np.ndarray,
    friction: np.ndarray,
    form: str = 'absolute',
    t0: float = 20.0,
    min_speed: float = 1e-3,
) -> FitResult:
    """Temperature coefficients of f_T from a warm-up run (friction minus the velocity map).

    ``form='absolute'``: beta1, beta2, beta3 of :class:`TemperatureFriction`;
    ``form='reference'``: Ft1, Ft2 of :class:`ReferenceTemperatureFriction` (zero at ``t0``).
    """
    w, t, f = _vectors(velocity, temperature, friction, names=('velocity', 'temperature', 'friction'))
    keep = np.abs(w) >= min_speed
    if np.any(t <= 0):
        raise InputError('temperatures must be > 0 °C for the T⁻³ basis')
    if checked_choice('form', form, ('absolute', 'reference')) == 'absolute':
        model = TemperatureFriction(t_min=min(5.0, t.min()), t_max=max(80.0, t.max()))
    else:
        model = ReferenceTemperatureFriction(t0=t0, t_min=min(5.0, t.min()), t_max=max(80.0, t.max()))
    return linear_fit(model.features(w[keep], t[keep]), f[keep], model.symbols, {'form': form, 't0': t0})


# ---------------------------------------------------------------------------------------- E-GMS
def fit_egms(
    theta: np.ndarray,
    torque: np.ndarray,
    level: np.ndarray | None = None,
    elements: int = 4,
    initial: tuple[float, float, float] = (1e-3, 4.0, 2.0),
    warmup: int = 0,
    excess: np.ndarray | None = None,
    velocity: np.ndarray | None = None,
    excess_band: float = 1e-3,
) -> FitResult:
    """Backlash B [rad] and element exponents r_Δ, r_k of the E-GMS from a slow reciprocating sweep.

    Model: torque ≈ Fc·H(θ; B, r_Δ, r_k) with H the E-GMS output (constant backlash) and Fc the
    Coulomb level, solved by least squares for each candidate, or ŷ = level·H when the level
    (e.g. F(τ_j) per sample) is given. (log B, r_Δ, r_k) are searched by Nelder–Mead from
    ``initial``; the first ``warmup`` samples only set the operator state (the thesis starts where
    all operators slip). No standard deviations are defined for the searched parameters.

    With ``excess`` (N,) [N·m], the Stribeck excess's size (Fs − Fc0)·exp(−(|ω|/Vs)^mu) at each sample,
    and the friction ``velocity`` ω (N,) [rad/s], the model adds the excess with its sign taken as
    tanh(ω/ε), and ε [rad/s] (``excess_band`` in the result) is searched too, from ``excess_band``. The
    excess changes sign where the sweep reverses, while the first E-GMS element slips (with the thesis'
    laws, half of the Coulomb level within 2·B·Δ_1 ≈ 8 µrad of travel, 18 ms at 0.05 rad/s²): how fast the
    excess turns over shapes the same samples as H does, and a sign taken as sgn(ω) where the joint's turns
    over more slowly biases the laws (module docstring of :mod:`dynid.identify.friction_fit.identify`).
    """
    x, y = _vectors(theta, torque, names=('theta', 'torque'))
    given = None if level is None else _vectors(level, x, names=('level', 'theta'))[0]
    size, w = None, None
    if excess is not None:
        if velocity is None:
            raise InputError('an excess needs the friction velocity to fit its band')
        size, w = _vectors(excess, velocity, x, names=('excess', 'velocity', 'theta'))[:2]
        if not np.isfinite(excess_band) or excess_band <= 0:
            raise InputError(f'excess_band must be > 0 rad/s, got {excess_band!r}')
    if not 0 <= warmup < x.size - 10:
        raise InputError(f'warmup must leave at least 10 samples, got {warmup} of {x.size}')
    target = y[warmup:]

    def hysteresis(p: np.ndarray) -> np.ndarray:
        model = EGMS(1, elements, r_delta=p[1], r_k=p[2], backlash=float(np.exp(p[0])))
        return model.run(x[:, None])[warmup:, 0]

    def fitted(p: np.ndarray) -> tuple[np.ndarray, float]:
        h = hysteresis(p)
        known = 0.0 if size is None else size[warmup:] * np.tanh(w[warmup:] / np.exp(p[3]))
        if given is not None:
            return given[warmup:] * h + known, float('nan')
        scale = float(h @ (target - known) / max(h @ h, 1e-300))
        return scale * h + known, scale

    def cost(p: np.ndarray) -> float:
        if p[1] <= 0.05 or abs(p[2]) > 20 or p[1] > 20:
            return np.inf
        prediction, _ = fitted(p)
        return float(np.mean((target - prediction) ** 2))

    start = np.array([np.log(initial[0]), initial[1], initial[2]]
                     + ([] if size is None else [np.log(excess_band)]))
    result = scipy.optimize.minimize(cost, start, method='Nelder-Mead',
                                     options={'xatol': 1e-4, 'fatol': 1e-12, 'maxiter': 400 * start.size // 3})
    prediction, scale = fitted(result.x)
    parameters = {'backlash': float(np.exp(result.x[0])), 'r_delta': float(result.x[1]),
                  'r_k': float(result.x[2])}
    if size is not None:
        parameters['excess_band'] = float(np.exp(result.x[3]))
    std = dict.fromkeys(parameters, float('nan'))
    if given is None:
        h = hysteresis(result.x)
        parameters['Fc'] = scale
        std['Fc'] = float(np.sqrt(np.sum((target - prediction) ** 2) / (target.size - start.size - 1) / (h @ h)))
    return FitResult(parameters, std, float(nrmse_fit(target, prediction)),
                     float(rms(target - prediction)), target.size,
                     {'elements': elements, 'converged': bool(result.success)})


# ------------------------------------------------------------------------------------- stiffness
def fit_stiffness(deflection: np.ndarray, torque: np.ndarray, order: int = 2) -> FitResult:
    """Odd-polynomial stiffness τ = Σ α_p·φ^(2p−1) from deflection [rad] / torque [N·m] pairs.

    Thesis ch.3 §V "Stiffness" (LS with P = 2 coefficients, NRMSE 96.9 % on the UR5e base joint).
    Parameters are named alpha1, alpha3, ... [N·m/rad^(2p−1)].
    """
    phi, tau = _vectors(deflection, torque, names=('deflection', 'torque'))
    if order < 1:
        raise InputError(f'order must be >= 1, got {order}')
    model = OddPolynomialStiffness(np.zeros(order))
    names = [f'alpha{p}' for p in model.powers]
    return linear_fit(model.features(phi), tau, names)
