"""The identified model's friction laws, each written once (:class:`~dynid.friction.law.FrictionLaw`), and their
registry: the Python entry-point group ``dynid.friction_laws``, as for identification methods and feedforward terms.

dynid's own laws are registered there the same way (setup.py), so a law in any installed package is found by name, e.g.
in that package's pyproject.toml::

    [project.entry-points."dynid.friction_laws"]
    tanh_coulomb = "my_laws.tanh:LAW"

and :func:`register_law` adds one in this process. Per joint, on the friction velocity ω [rad/s], its direction s
(sgn(ω) when identifying, the feedforward's ramp) and the output torque τ [N·m]:

===================  ============================================================================
``none``             —
``viscous_coulomb``  Fc·s + Fv·ω + tau0 (Madsen 2020 ch.5 eq. (P2-15); Gautier & Briot 2014 Fs, Fv, τ_off)
``load_squared``     + Fl·s·τ² (Madsen 2020 ch.4 eq. (P1-27), Li et al. 2024 Model III)
``load_absolute``    + Fl·s·|τ| (Li et al. 2024 Model II, Bittencourt/Gao)
``hamon``            P⁺(am1 + bm·E)τ + P⁻(ag1 − bg·E)τ + P⁺(cm + dm·E)s + P⁻(cg + dg·E)s + Fv·ω + tau0,
                     E = exp(−|ω|/ω_H), P± = (1 ± s·sgn τ)/2, am1 = a_m − 1, ag1 = a_g − 1
                     (Hamon, Gautier & Garrec 2010 eq. (30))
``comprehensive``    s·fc + fv·(viscous power term of ω, :mod:`dynid.friction.power_law`) + fo + fL·s·τ²
                     (Li et al. 2024 eq. (3))
===================  ============================================================================
"""

from __future__ import annotations

import numpy as np

from dynid.entry_points import Names, Registry
from dynid.friction.law import ONE, SIGN, VELOCITY, FrictionLaw, LawContext, load_shape
from dynid.friction.power_law import power_term

GROUP = 'dynid.friction_laws'
#: the order dynid's own laws are listed in (the metadata keeps entry points sorted by name)
OWN_ORDER = ('none', 'viscous_coulomb', 'load_squared', 'load_absolute', 'hamon', 'comprehensive')
REGISTRY = Registry(GROUP, 'friction law', FrictionLaw, OWN_ORDER, 'register_law')

_COULOMB_VISCOUS = {'Fc': SIGN, 'Fv': VELOCITY, 'tau0': ONE}
_ROLES = {'Fc': 'Fc', 'Fv': 'Fv', 'tau0': 'tau0'}


def _load_squared(w, s, tau, context: LawContext) -> dict:
    return {'Fl': s * load_shape(tau, 'squared')}


def _load_absolute(w, s, tau, context: LawContext) -> dict:
    return {'Fl': s * load_shape(tau, 'absolute')}


def _hamon(w, s, tau, context: LawContext) -> dict:
    power = s * np.sign(tau)  # sgn(τ·ω) where s = sgn(ω)
    plus, minus = (1 + power) / 2, (1 - power) / 2
    decay = np.exp(-np.abs(w) / context.hamon_velocity)
    return {'am1': plus * tau, 'bm': plus * decay * tau, 'ag1': minus * tau, 'bg': -minus * decay * tau,
            'cm': plus * s, 'dm': plus * decay * s, 'cg': minus * s, 'dg': minus * decay * s}


def _power(w, s, context: LawContext) -> dict:
    return {'fv': power_term(w, context.exponents, context.power_velocity)}


def _comprehensive_load(w, s, tau, context: LawContext) -> dict:
    return {'fL': s * load_shape(tau, 'squared')}


NONE = FrictionLaw('none', 'no friction', ())
VISCOUS_COULOMB = FrictionLaw('viscous_coulomb', 'Coulomb + viscous + offset', ('Fc', 'Fv', 'tau0'),
                              _COULOMB_VISCOUS, non_negative=('Fc', 'Fv'), roles=_ROLES)
LOAD_SQUARED = FrictionLaw('load_squared', 'Coulomb + viscous + offset + Coulomb on the squared load torque',
                           ('Fc', 'Fv', 'tau0', 'Fl'), _COULOMB_VISCOUS, loaded=_load_squared, load_symbols=('Fl',),
                           non_negative=('Fc', 'Fv', 'Fl'), roles={**_ROLES, 'Fl': 'Fl'}, load_shape='squared')
LOAD_ABSOLUTE = FrictionLaw('load_absolute', 'Coulomb + viscous + offset + Coulomb on the absolute load torque',
                            ('Fc', 'Fv', 'tau0', 'Fl'), _COULOMB_VISCOUS, loaded=_load_absolute, load_symbols=('Fl',),
                            non_negative=('Fc', 'Fv', 'Fl'), roles={**_ROLES, 'Fl': 'Fl'}, load_shape='absolute')
HAMON = FrictionLaw('hamon', "Hamon's motor/generator quadrants of the output torque",
                    ('am1', 'bm', 'ag1', 'bg', 'cm', 'dm', 'cg', 'dg', 'Fv', 'tau0'), {'Fv': VELOCITY, 'tau0': ONE},
                    loaded=_hamon, load_symbols=('am1', 'bm', 'ag1', 'bg', 'cm', 'dm', 'cg', 'dg'), physical=False,
                    roles={'Fv': 'Fv', 'tau0': 'tau0'})
COMPREHENSIVE = FrictionLaw('comprehensive', "Li's Coulomb + viscous power + offset + squared load torque",
                            ('fc', 'fv', 'fo', 'fL'), {'fc': SIGN, 'fo': ONE}, shaped=_power, shaped_symbols=('fv',),
                            loaded=_comprehensive_load, load_symbols=('fL',), non_negative=('fc', 'fv', 'fL'),
                            roles={'Fc': 'fc', 'Fv': 'fv', 'tau0': 'fo', 'Fl': 'fL'}, load_shape='squared',
                            power_viscous=True)


def friction_law(name: str) -> FrictionLaw:
    """The law registered as ``name`` (InputError naming the installed ones where there is none)."""
    return REGISTRY.get(name)


def law_names() -> tuple[str, ...]:
    """Every law's name: the installed ones (dynid's first), then those registered in this process."""
    return REGISTRY.names()


def added_law_names() -> tuple[str, ...]:
    """The laws registered beside dynid's own (another package's, or this process's :func:`register_law`)."""
    return tuple(name for name in law_names() if name not in OWN_ORDER)


def physical_laws() -> tuple[str, ...]:
    """The laws physical identification takes (:attr:`FrictionLaw.physical`)."""
    return tuple(name for name in law_names() if friction_law(name).physical)


def register_law(law: FrictionLaw) -> None:
    """Make ``law`` known in this process beside the installed ones (:func:`unregister_law` forgets it)."""
    REGISTRY.register(law)


def unregister_law(name: str) -> None:
    """Forget a law :func:`register_law` made known."""
    REGISTRY.unregister(name)


def law_software(name: str) -> dict[str, str]:
    """Where the law ``name`` comes from, for a result's provenance ({} for dynid's own)."""
    return REGISTRY.software(name, 'friction law')


class LawNames(Names):
    """The laws' names as a sequence read from the registry at each use (``leading`` first: e.g. ``auto``)."""

    def __init__(self, leading: tuple[str, ...] = ()) -> None:
        super().__init__(REGISTRY, leading)
