"""The no-load static friction map with its temperature term, fitted in one least squares to plateau means.

Madsen 2020, ch.6 eq. (10)–(11) in sliding (H = sgn ω) at no load:

    f = sgn(ω)·(Fc + (Fs − Fc)·exp(−(|ω|/Vs)^mu)) + Fv1·ω + Fv2·|ω|·ω + Fv3·ω³
        + sgn(ω)·√|ω|·(Ft1·(T − T0) + Ft2·(T⁻³ − T0⁻³))

(the Stribeck map of :class:`dynid.friction.static.StribeckMap` plus
:class:`dynid.friction.temperature.ReferenceTemperatureFriction`, erratum A1 option (a)). The thesis fits it by
BFGS from a cold-start run that warms up; this is :func:`~dynid.identify.friction_fit.fit.fit_stribeck` (variable
projection: the
seven linear parameters by least squares inside, BFGS over log Vs and log mu from the best point of a grid) with
the temperature columns added, so that the map and the temperature term come out of one fit instead of
alternating two correlated ones. Three decisions:

- Vs and mu are searched inside bounds (L-BFGS-B): Vs within [0.2, 1]× the slowest and fastest plateau
  speeds, mu within [0.3, 4]. Outside, the excess flattens into a Coulomb or viscous term and the linear
  parameters grow without bound against each other (the optimum is a ridge, not a point).
- When the plateaus do not determine the Stribeck excess, it is left out (Fs = Fc) and Coulomb and
  polynomial viscous terms are fitted by least squares instead, with ``extra['stribeck']`` saying why: a
  fitted excess that is not one (Fs <= Fc: the exponential bent to mimic the viscous curve), fewer than
  ``MIN_RESOLVED_SPEEDS`` plateau speeds where the fitted excess is still a tenth of its height (the decay
  is not seen: the slowest plateaus are too fast), σ(Vs) above ``max_relative_std`` %, or fewer plateaus
  than parameters + 1. The thesis' plateaus start at a few mrad/s for this reason.
- A torque offset (the same in both directions) is fitted beside the map and reported, not kept in the
  model: eq. (10) has none, but a measured friction f = K_τ·i − B·θ̈ − τ̂_j holds the rigid-body model's
  error at the plateaus' poses (and any current offset). Without the column that offset, in which the
  odd map has no share, stays in the residual: the Stribeck excess then loses its precision and the
  polynomial viscous terms bend to mimic the offset; with the column the excess is kept
  (``benchmarks/bench_feedforward.py``'s B1 prints the fitted parameters beside the twin's; the figures:
  benchmarks/README.md, "The figures behind the defaults").

σ of every parameter come from the residual's Jacobian at the optimum, σ̂²·(JᵀJ)⁻¹, as in fit_stribeck.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg
import scipy.optimize

from dynid.errors import InputError
from dynid.friction.linear import sgn
from dynid.friction.static import StribeckMap
from dynid.friction.temperature import ReferenceTemperatureFriction
from dynid.identify.friction_fit.fit import FitResult, _numeric_jacobian, linear_fit
from dynid.identify.result.metrics import nrmse_fit, rms

LINEAR = ('Fc', 'Fs', 'Fv1', 'Fv2', 'Fv3')
TEMPERATURE = ('Ft1', 'Ft2')
OFFSET = ('offset',)
MU_BOUNDS = (0.3, 4.0)
#: Distinct plateau speeds where the fitted excess is at least a tenth of Fs − Fc, for the map to be kept.
MIN_RESOLVED_SPEEDS = 2


def fit_plateau_map(velocity: np.ndarray, friction: np.ndarray, temperature: np.ndarray | None = None,
                    t0: float = 20.0, max_relative_std: float = 50.0, offset: bool = True) -> FitResult:
    """Stribeck map (+ temperature term when ``temperature`` [°C] is given) from plateau means (module docstring).

    Args:
        velocity: plateau velocities [rad/s] (both directions; zeros are dropped).
        friction: friction torque [N·m] at them.
        temperature: temperature [°C] at them, or None for the map alone.
        t0: reference temperature T0 [°C] of the temperature term.
        max_relative_std: σ(Vs) [%] above which the Stribeck excess is left out.
        offset: fit a torque offset [N·m] (the same in both directions) beside the map (module docstring).

    Returns:
        FitResult with Fc, Fs, Fv1, Fv2, Fv3, Vs, mu (or Fc, Fv1, Fv2, Fv3 without the excess), Ft1, Ft2
        with a temperature, and ``offset`` when asked; ``extra['stribeck']`` describes the choice.
    """
    w = np.asarray(velocity, dtype=float).reshape(-1)
    f = np.asarray(friction, dtype=float).reshape(-1)
    if w.shape != f.shape or not (np.all(np.isfinite(w)) and np.all(np.isfinite(f))):
        raise InputError('plateau velocities and torques must be finite and of equal length')
    moving = w != 0
    w, f = w[moving], f[moving]
    extra_columns, extra_names = [], ()
    if temperature is not None:
        t = np.asarray(temperature, dtype=float).reshape(-1)[moving]
        if not np.all(np.isfinite(t)) or np.any(t <= 0):
            raise InputError('plateau temperatures must be finite and > 0 °C (the T⁻³ basis)')
        term = ReferenceTemperatureFriction(t0=t0)
        extra_columns, extra_names = list(term.features(w, t)), TEMPERATURE
    if offset:
        extra_columns, extra_names = [*extra_columns, np.ones_like(w)], extra_names + OFFSET
    if not (np.any(w > 0) and np.any(w < 0)):
        raise InputError('the static map needs plateaus in both directions')
    stribeck_size = len(LINEAR) + len(extra_names) + 2
    if w.size > stribeck_size:
        result = _stribeck(w, f, extra_columns, extra_names, t0, temperature is not None)
        p = result.parameters
        relative = 100.0 * result.std['Vs'] / p['Vs']
        # Speeds where the excess is still at least a tenth of its height: below them it is resolved.
        resolved = np.unique(np.round(np.abs(w[np.abs(w) <= p['Vs'] * np.log(10.0) ** (1.0 / p['mu'])]), 6))
        if p['Fs'] <= p['Fc']:
            why = f'Stribeck excess left out: the fit found none (Fs {p["Fs"]:.4g} <= Fc {p["Fc"]:.4g} N·m)'
        elif resolved.size < MIN_RESOLVED_SPEEDS:
            why = (f'Stribeck excess left out: {resolved.size} plateau speed(s) below where it decays '
                   f'(Vs {p["Vs"]:.3g} rad/s; {MIN_RESOLVED_SPEEDS} needed: add slower plateaus)')
        elif relative > max_relative_std:
            why = f'Stribeck excess left out: the plateaus do not determine Vs (σ {relative:.3g} %)'
        else:
            return result
    else:
        why = f'Stribeck excess left out: {w.size} plateaus for {stribeck_size} parameters'
    names = ('Fc', 'Fv1', 'Fv2', 'Fv3')
    columns = [sgn(w), w, np.abs(w) * w, w**3]
    while len(columns) + len(extra_names) >= w.size and len(columns) > 2:
        columns, names = columns[:-1], names[:-1]  # fewer polynomial viscous terms for few plateaus
    result = linear_fit([*columns, *extra_columns], f, names + extra_names)
    return FitResult(result.parameters, result.std, result.nrmse_fit, result.rms_residual, result.samples,
                     {'stribeck': why})


def _stribeck(w: np.ndarray, f: np.ndarray, extra_columns: list, extra_names: tuple, t0: float,
              with_temperature: bool) -> FitResult:
    speed = np.abs(w)
    bounds = [(np.log(0.2 * speed.min()), np.log(speed.max())), tuple(np.log(MU_BOUNDS))]

    def columns(u: np.ndarray) -> np.ndarray:
        shape = StribeckMap(Vs=float(np.exp(u[0])), mu=float(np.exp(u[1])))
        return np.column_stack([*shape.features(w), *extra_columns])

    def linear_part(u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        a = columns(u)
        theta = scipy.linalg.lstsq(a, f, lapack_driver='gelsy')[0]
        return theta, f - a @ theta

    def cost(u: np.ndarray) -> float:
        return float(np.mean(linear_part(u)[1] ** 2))

    grid = [(v, m) for v in np.geomspace(np.exp(bounds[0][0]), np.exp(bounds[0][1]), 12) for m in (0.5, 1.0, 1.5, 2.0)]
    start = np.log(min(grid, key=lambda g: cost(np.log(g))))
    found = scipy.optimize.minimize(cost, start, method='L-BFGS-B', bounds=bounds)
    theta, residual = linear_part(found.x)
    names = LINEAR + extra_names + ('Vs', 'mu')
    values = np.concatenate([theta, np.exp(found.x)])
    n_linear = len(LINEAR) + len(extra_names)

    def residual_of(p: np.ndarray) -> np.ndarray:
        shape = StribeckMap(Vs=p[-2], mu=p[-1])
        return f - np.column_stack([*shape.features(w), *extra_columns]) @ p[:n_linear]

    jacobian = _numeric_jacobian(residual_of, values)
    variance = residual @ residual / (w.size - values.size)
    std = np.sqrt(np.abs(np.diag(variance * np.linalg.pinv(jacobian.T @ jacobian))))
    at_bound = [name for name, u, (low, high) in zip(('Vs', 'mu'), found.x, bounds, strict=True)
                if np.isclose(u, low, atol=1e-6) or np.isclose(u, high, atol=1e-6)]
    why = 'Stribeck map fitted' + (f' ({", ".join(at_bound)} at the search bound)' if at_bound else '')
    return FitResult(dict(zip(names, map(float, values), strict=True)), dict(zip(names, map(float, std), strict=True)),
                     float(nrmse_fit(f, f - residual)), float(rms(residual)), w.size,
                     {'stribeck': why, 'converged': bool(found.success), 't0': t0 if with_temperature else None})
