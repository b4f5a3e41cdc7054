"""What a friction law of the identified model is: one frozen :class:`FrictionLaw`, written once and used alike by the
identification's columns (:mod:`dynid.identify.equations.problem`), the feedforward
(:mod:`dynid.control.friction_static`) and whatever else evaluates an identified result's friction; registered by name
(:mod:`dynid.friction.laws`).

A law is linear in its per-joint parameters: f_j = Σ_k φ_k(ω_j, s_j, τ_j)·p_k,j, with ω the friction velocity
[rad/s] (the rotor's in link units where it is measured, else q̇), s its direction and τ the output (load) torque
[N·m]. The identification passes s = sgn(ω); the feedforward passes its smoothed ramp, so one formula serves both.
Its features come in three kinds, by what they depend on, because the identification builds each kind differently:

- ``prepared``: {symbol: :class:`Feature`} on ω alone, made once at the recordings' full rate and filtered and
  decimated like the regressor (:mod:`dynid.identify.equations.prepare`); laws share features of the same kind
  (``sign``, ``velocity``, ``one``), so one set of prepared equations serves the model choice's candidate laws.
- ``shaped(ω, s, context) -> {symbol: feature}``: on ω alone, with a shape the candidate sets (the comprehensive law's
  viscous exponents α_j), made per candidate at the full rate, one joint at a time.
- ``loaded(ω, s, τ, context) -> {symbol: feature}``: on τ, made at the decimated rate from the model's own τ_out and
  made again on each pass of the identification's load loop.

``physical``: physical consistency (:mod:`dynid.identify.solve.physical`) applies with the law's sign bounds
(``non_negative``). ``roles``: which of its symbols play the parts of the Coulomb + viscous + offset + load form
that the estimators, the E-GMS feedforward, the contact observer's σ and the URDF and MJCF exports read, {``Fc``,
``Fv``, ``tau0``, ``Fl``: the law's symbol} (the offset is part of the rigid-body fit, kept by the feedforward), with
``load_shape`` the load term's τ² (``squared``) or |τ| (``absolute``) and ``power_viscous`` where the viscous part is
the power term of :mod:`dynid.friction.power_law`. Nothing here imports the identification, so listing laws stays
cheap.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import numpy as np


@dataclass(frozen=True)
class Feature:
    """A feature on ω alone, named by its kind (laws sharing a kind share the prepared column): ``of(ω, s)``."""

    kind: str
    of: Callable[[np.ndarray, np.ndarray], np.ndarray]


#: How a load-dependent law's Coulomb level grows with the load torque τ (``FrictionLaw.load_shape``).
LOAD_LAWS = ('squared', 'absolute')


def load_shape(load_torque: np.ndarray, law: str = 'squared') -> np.ndarray:
    """τ² [N·m²] (``squared``) or |τ| [N·m] (``absolute``): the one place every load-dependent law takes it from (the
    identification's columns, the E-GMS level, the feedforward)."""
    tau = np.asarray(load_torque, dtype=float)
    return tau**2 if law == 'squared' else np.abs(tau)


SIGN = Feature('sign', lambda w, s: s)
VELOCITY = Feature('velocity', lambda w, s: w)
ONE = Feature('one', lambda w, s: np.ones_like(w))


@dataclass(frozen=True)
class LawContext:
    """What a law's features read beyond ω, s and τ: the result's (or the candidate's) fixed shapes.

    ``hamon_velocity``: ω_H [rad/s] of Hamon's decay; ``exponents``: the viscous power term's α (a scalar, or one per
    joint broadcast over the last axis); ``power_velocity``: its v_s [rad/s] (None: Li's form as written)."""

    hamon_velocity: float = 0.03
    exponents: float | np.ndarray = 1.0
    power_velocity: float | None = None


def _nothing(*_) -> dict:
    return {}


@dataclass(frozen=True)
class FrictionLaw:
    """One friction law (module docstring). ``symbols``: its per-joint parameters in column order, each made by
    exactly one of ``prepared``, ``shaped`` (``shaped_symbols``) and ``loaded`` (``load_symbols``)."""

    name: str
    description: str
    symbols: tuple[str, ...]
    prepared: Mapping[str, Feature] = field(default_factory=dict)
    shaped: Callable = _nothing
    shaped_symbols: tuple[str, ...] = ()
    loaded: Callable = _nothing
    load_symbols: tuple[str, ...] = ()
    physical: bool = True
    non_negative: tuple[str, ...] = ()
    roles: Mapping[str, str] = field(default_factory=dict)
    load_shape: str | None = None
    power_viscous: bool = False

    def __post_init__(self) -> None:
        made = (*self.prepared, *self.shaped_symbols, *self.load_symbols)
        if sorted(made) != sorted(self.symbols):
            raise ValueError(f'friction law {self.name!r}: symbols {self.symbols} are not made once each by its '
                             f'prepared {tuple(self.prepared)}, shaped {self.shaped_symbols} and loaded '
                             f'{self.load_symbols} features')

    @property
    def offset(self) -> str | None:
        """The symbol of the law's torque offset (None: it has none)."""
        return self.roles.get('tau0')

    @property
    def coulomb_viscous(self) -> bool:
        """Every symbol plays a part of the Coulomb + viscous + offset + load form (``roles``), with a Coulomb level:
        the form the estimators and the E-GMS feedforward adapt."""
        return 'Fc' in self.roles and set(self.roles.values()) == set(self.symbols)

    def in_roles(self, values: Mapping[str, float]) -> dict[str, float]:
        """{``Fc``, ``Fv``, ``tau0``, ``Fl``: value} of ``values`` ({the law's symbol: value}), 0 where the law or the
        values have none."""
        return {part: values.get(self.roles[part], 0.0) if part in self.roles else 0.0
                for part in ('Fc', 'Fv', 'tau0', 'Fl')}

    def level_symbols(self, exponent: float = 1.0) -> dict[str, str]:
        """{``Fc``, ``Fv``: the law's symbol} of the parts a simulator's joint holds, a Coulomb level and a viscous
        coefficient (``roles``): the viscous part only where it is linear in ω (a power term of exponent α ≠ 1 is no
        viscous coefficient)."""
        parts = {part: self.roles[part] for part in ('Fc', 'Fv') if part in self.roles}
        if self.power_viscous and exponent != 1.0:
            parts.pop('Fv', None)
        return parts

    def joint_levels(self, values: Mapping[str, float], exponent: float = 1.0,
                     power_velocity: float | None = None) -> dict[str, float]:
        """{``Fc``: the Coulomb level at ω → 0 [N·m], ``Fv``: the viscous coefficient [N·m·s/rad]} of one joint's
        ``values`` ({the law's symbol: value}), each where the law (:meth:`level_symbols`) and the values have it.

        Where the viscous part is the power term written from v_s (``power_velocity``, :mod:`dynid.friction.power_law`)
        at α = 1, the law above v_s is (Fc − Fv·v_s)·sgn(ω) + Fv·ω: its Coulomb level is Fc − Fv·v_s."""
        parts = {part: values[symbol] for part, symbol in self.level_symbols(exponent).items() if symbol in values}
        if self.power_viscous and 'Fc' in parts:
            shift = power_velocity or 0.0
            parts['Fc'] = parts['Fc'] - (shift * parts['Fv'] if 'Fv' in parts else 0.0)
        return parts

    def features(self, velocity: np.ndarray, direction: np.ndarray, load_torque: np.ndarray | None,
                 context: LawContext = LawContext()) -> dict[str, np.ndarray]:
        """{symbol: φ} of every feature at ω, s and τ (shape of ω); without τ (None) the load features are left out."""
        out = {symbol: feature.of(velocity, direction) for symbol, feature in self.prepared.items()}
        out.update(self.shaped(velocity, direction, context))
        if load_torque is not None:
            out.update(self.loaded(velocity, direction, load_torque, context))
        return out

    def torque(self, parameters: Mapping[str, np.ndarray], velocity: np.ndarray, direction: np.ndarray,
               load_torque: np.ndarray | None, context: LawContext = LawContext()) -> np.ndarray:
        """f [N·m] = Σ φ_k·p_k in symbol order, ``parameters`` {symbol: value or one per joint}."""
        features = self.features(velocity, direction, load_torque, context)
        f = np.zeros(np.shape(velocity))
        for symbol in self.symbols:
            if symbol in features:
                f = f + features[symbol] * parameters[symbol]
        return f
