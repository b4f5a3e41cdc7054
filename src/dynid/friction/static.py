"""Static friction maps of velocity (torques in N·m, velocities in rad/s, on the side given by the caller).

- :class:`CoulombViscous`: F_C·sgn(ω) + F_V·ω + offset, with an asymmetric option that has its own
  Coulomb and viscous coefficients per direction (PA-10 report eqs. (C.1)–(C.2), Table C.1 layout).
- :class:`StribeckMap`: the 7-parameter map with polynomial viscous terms (thesis ch.3 eq. (14), ch.4
  eq. (P1-25)): s(ω) = sgn(ω)·(F_C + (F_S − F_C)·exp(−(|ω|/V_S)^μ)) + F_V1·ω + F_V2·|ω|·ω + F_V3·ω³.
  Erratum (Madsen 2020, ch.4): ch.4 prints −F_V2; we use +F_V2 and let the coefficient carry the sign.
- :class:`PowerLawViscous`: Li et al. 2024 eq. (4): sgn(ω)·(f_c + f_v·|ω|^α) + f_o.

The Stribeck map's excess term alone, as the identification's model choice adds it beside Coulomb + viscous
friction, is :class:`dynid.identify.result.stribeck.StribeckExcess` (outside this package, whose import the
identification does not pay).

All maps use sgn(0) = 0, so they are discontinuous at ω = 0; dynamic models (GMS, E-GMS) remove that.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dynid.errors import InputError
from dynid.friction.linear import LinearFrictionTerm, sgn


@dataclass(frozen=True)
class CoulombViscous(LinearFrictionTerm):
    """Coulomb + viscous + offset friction, symmetric.

    f = Fc·sgn(ω) + Fv·ω + tau0. Fc [N·m], Fv [N·m·s/rad], tau0 [N·m].
    """

    Fc: float | np.ndarray = 0.0
    Fv: float | np.ndarray = 0.0
    tau0: float | np.ndarray = 0.0
    symbols = ('Fc', 'Fv', 'tau0')

    def __post_init__(self) -> None:
        self._coerce_parameters()

    def features(self, velocity: np.ndarray) -> list[np.ndarray]:
        w = np.asarray(velocity, dtype=float)
        return [sgn(w), w, np.ones_like(w)]


@dataclass(frozen=True)
class AsymmetricCoulombViscous(LinearFrictionTerm):
    """Direction-dependent Coulomb + viscous friction (PA-10 report eqs. (C.1)–(C.2)).

    ω > 0: f = Fcp + Fvp·ω;  ω < 0: f = −Fcn + Fvn·ω;  ω = 0: f = 0. Fcp and Fcn are the magnitudes
    of the Coulomb level in each direction [N·m]; Fvp, Fvn [N·m·s/rad]. A torque offset has no
    column of its own here: for ω ≠ 0 it is indistinguishable from Fcp − Fcn (it shifts both levels).
    """

    Fcp: float | np.ndarray = 0.0
    Fvp: float | np.ndarray = 0.0
    Fcn: float | np.ndarray = 0.0
    Fvn: float | np.ndarray = 0.0
    symbols = ('Fcp', 'Fvp', 'Fcn', 'Fvn')

    def __post_init__(self) -> None:
        self._coerce_parameters()

    def features(self, velocity: np.ndarray) -> list[np.ndarray]:
        w = np.asarray(velocity, dtype=float)
        positive, negative = (w > 0).astype(float), (w < 0).astype(float)
        return [positive, positive * w, -negative, negative * w]


@dataclass(frozen=True)
class StribeckMap(LinearFrictionTerm):
    """The 7-parameter Stribeck map with polynomial viscous terms (module docstring).

    Linear in (Fc, Fs, Fv1, Fv2, Fv3) for fixed Stribeck velocity Vs [rad/s] and shape mu [-].
    Fc: Coulomb level [N·m]; Fs: static (breakaway) level [N·m]; Fv1 [N·m·s/rad], Fv2 [N·m·s²/rad²],
    Fv3 [N·m·s³/rad³]. ``smoothing`` [rad/s] > 0 replaces sgn(ω) by tanh(ω/smoothing) (for simulation,
    or the band identified with the E-GMS, :func:`dynid.identify.friction_fit.fit.fit_egms`; 0 keeps the published
    discontinuous map); a scalar or one value per joint.
    """

    Fc: float | np.ndarray = 0.0
    Fs: float | np.ndarray = 0.0
    Fv1: float | np.ndarray = 0.0
    Fv2: float | np.ndarray = 0.0
    Fv3: float | np.ndarray = 0.0
    Vs: float | np.ndarray = 0.01
    mu: float | np.ndarray = 1.0
    smoothing: float | np.ndarray = 0.0
    symbols = ('Fc', 'Fs', 'Fv1', 'Fv2', 'Fv3')

    def __post_init__(self) -> None:
        self._coerce_parameters('Vs', 'mu')
        if np.any(self.Vs <= 0) or np.any(self.mu <= 0):
            raise InputError(f'Stribeck velocity Vs and shape mu must be > 0, got Vs={self.Vs}, mu={self.mu}')
        if np.ndim(self.smoothing):
            object.__setattr__(self, 'smoothing', np.asarray(self.smoothing, dtype=float))
        if not np.all(np.isfinite(self.smoothing)) or np.any(np.asarray(self.smoothing) < 0):
            raise InputError(f'smoothing must be >= 0 rad/s, got {self.smoothing}')

    def direction(self, velocity: np.ndarray) -> np.ndarray:
        """sgn(ω), or tanh(ω/smoothing) where smoothing > 0."""
        w = np.asarray(velocity, dtype=float)
        if np.ndim(self.smoothing) == 0:
            return np.tanh(w / self.smoothing) if self.smoothing > 0 else sgn(w)
        smooth = self.smoothing > 0
        return np.where(smooth, np.tanh(w / np.where(smooth, self.smoothing, 1.0)), sgn(w))

    def stribeck_decay(self, velocity: np.ndarray) -> np.ndarray:
        """exp(−(|ω|/Vs)^mu) [-], 1 at rest and → 0 in sliding."""
        return np.exp(-((np.abs(velocity) / self.Vs) ** self.mu))

    def features(self, velocity: np.ndarray) -> list[np.ndarray]:
        w = np.asarray(velocity, dtype=float)
        s, e = self.direction(w), self.stribeck_decay(w)
        return [s * (1.0 - e), s * e, w, np.abs(w) * w, w**3]

    def viscous(self, velocity: np.ndarray) -> np.ndarray:
        """Fv1·ω + Fv2·|ω|·ω + Fv3·ω³ [N·m]."""
        w = np.asarray(velocity, dtype=float)
        return w * (self.Fv1 + np.abs(w) * self.Fv2 + w * w * self.Fv3)

    def excess(self, velocity: np.ndarray) -> np.ndarray:
        """The static level above Coulomb, sgn(ω)·(Fs − Fc)·exp(−(|ω|/Vs)^mu) [N·m]."""
        return self.direction(velocity) * (self.Fs - self.Fc) * self.stribeck_decay(velocity)

    def evaluate(self, velocity: np.ndarray) -> np.ndarray:
        """s(ω) [N·m] (the same as Σ features·parameters, written out for speed)."""
        return self.direction(velocity) * self.Fc + self.excess(velocity) + self.viscous(velocity)

    def static_level(self) -> np.ndarray:
        """lim_{ω→0+} s(ω) = Fs [N·m] (the breakaway level)."""
        return np.asarray(self.Fs)


@dataclass(frozen=True)
class PowerLawViscous(LinearFrictionTerm):
    """Li et al. 2024 eq. (4): f = sgn(ω)·(fc + fv·|ω|^alpha) + fo.

    Linear in (fc, fv, fo) for fixed exponent alpha > 0. fc [N·m], fv [N·m·(s/rad)^alpha], fo [N·m].
    """

    fc: float | np.ndarray = 0.0
    fv: float | np.ndarray = 0.0
    fo: float | np.ndarray = 0.0
    alpha: float | np.ndarray = 1.0
    symbols = ('fc', 'fv', 'fo')

    def __post_init__(self) -> None:
        self._coerce_parameters('alpha')
        if np.any(self.alpha <= 0):
            raise InputError(f'exponent alpha must be > 0, got {self.alpha}')

    def features(self, velocity: np.ndarray) -> list[np.ndarray]:
        w = np.asarray(velocity, dtype=float)
        s = sgn(w)
        return [s, s * np.abs(w) ** self.alpha, np.ones_like(w)]
