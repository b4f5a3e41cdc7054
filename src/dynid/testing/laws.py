"""The check of a friction law (:class:`dynid.friction.law.FrictionLaw`): its declaration (symbols made once, roles
mapping the parts the estimators and the feedforward read to its own symbols, sign bounds on its symbols), its
features finite and of ω's shape, a fit on the twin with it, the result's round trip and export, and the estimators
and feedforward reading its result by role."""

from __future__ import annotations

import functools

import numpy as np

from dynid.testing.assertions import PluginCheck
from dynid.testing.methods import check_description, check_name
from dynid.testing.results import check_export, check_fitted, check_round_trip

#: the parts a law's roles may name (:attr:`FrictionLaw.roles`)
ROLES = ('Fc', 'Fv', 'tau0', 'Fl')
#: how far a law's fit may predict the twin's held-out torque worse than no friction model at all (relative)
NO_WORSE_THAN_NONE = 1.05


def check_friction_law(law) -> None:
    """Raise AssertionError naming the check, the law and what it found, unless ``law`` meets the contract dynid's
    own laws meet (module docstring). The law must be registered (:func:`register_law`, or an installed entry point)
    under its name, as ``dynid identify --friction`` finds it.

    >>> from dynid.friction.laws import friction_law
    >>> check_friction_law(friction_law('viscous_coulomb'))  # doctest: +SKIP
    """
    checking = PluginCheck('check_friction_law', 'friction law', getattr(law, 'name', law))
    check_law_fields(checking, law)
    check_features(checking, law)
    from dynid.testing.twin import fit, twin

    loaded = bool(law.load_symbols)  # a law of the load torque is told from the rigid body's scale by a payload
    with checking.step('identifying the twin with it'):
        result, path = fit(friction=law.name, with_payload=loaded)
    checking.that(result.model.get('friction') == law.name,
                  f'the result names the law {result.model.get("friction")!r}')
    check_fitted(checking, result, NO_WORSE_THAN_NONE * _without_friction(loaded))
    check_round_trip(checking, result, path)
    robot = twin().robot
    check_export(checking, result, robot, path.parent, law=law.name)
    check_by_role(checking, law, result, robot)


def check_law_fields(checking: PluginCheck, law) -> None:
    """The declaration (:class:`FrictionLaw`'s docstring)."""
    from dynid.friction.law import LOAD_LAWS, FrictionLaw
    from dynid.friction.laws import friction_law

    checking.that(isinstance(law, FrictionLaw), f'is a {type(law).__name__}, not a FrictionLaw')
    check_name(checking, law.name)
    check_description(checking, law.description)
    with checking.step('finding it by name in the registry'):
        checking.that(friction_law(law.name) is law, 'the registry gives another law under its name')
    symbols = tuple(law.symbols)
    checking.that(all(isinstance(s, str) and s.isidentifier() for s in symbols) and len(set(symbols)) == len(symbols),
                  f'symbols must be distinct identifiers (the result names each SYMBOL_j), got {symbols}')
    made = (*law.prepared, *law.shaped_symbols, *law.load_symbols)
    checking.that(sorted(made) == sorted(symbols), f'symbols {symbols} are not made once each by its prepared, shaped '
                                                   f'and loaded features {made}')
    outside = [s for s in law.non_negative if s not in symbols]
    checking.that(not outside, f'non_negative names {outside}, not symbols of the law {symbols}')
    parts = [part for part in law.roles if part not in ROLES]
    checking.that(not parts, f'roles names parts {parts}; the parts are {ROLES}')
    lacking = {part: symbol for part, symbol in law.roles.items() if symbol not in symbols}
    checking.that(not lacking, f'roles maps {lacking} to symbols the law lacks (its symbols: {symbols})')
    checking.that(law.load_shape is None or law.load_shape in LOAD_LAWS,
                  f'load_shape must be one of {LOAD_LAWS} or None, got {law.load_shape!r}')
    checking.that('Fl' not in law.roles or law.load_shape is not None,
                  'roles names a load part Fl without load_shape (τ² or |τ|)')
    checking.that(not law.power_viscous or 'Fv' in law.roles, 'power_viscous without a viscous part Fv in roles')


def check_features(checking: PluginCheck, law) -> None:
    """Its features at random ω, s = sgn ω and τ on 6 joints: one per symbol (the load features without τ left out),
    finite, of ω's shape; its torque their sum weighted by the parameters (to 1e-12)."""
    from dynid.friction.law import LawContext

    rng = np.random.default_rng(0)
    w, tau = rng.normal(size=(50, 6)), 20.0 * rng.normal(size=(50, 6))
    context = LawContext(0.03, rng.uniform(0.3, 1.0, 6), 0.02)
    with checking.step('evaluating its features'):
        features = law.features(w, np.sign(w), tau, context)
        without_load = law.features(w, np.sign(w), None, context)
    checking.that(set(features) == set(law.symbols), f'its features {sorted(features)} are not its symbols '
                                                     f'{sorted(law.symbols)}')
    checking.that(set(without_load) == set(law.symbols) - set(law.load_symbols),
                  f'without a load torque its features are {sorted(without_load)}, not its symbols but the loaded ones')
    for symbol, feature in features.items():
        feature = np.asarray(feature, dtype=float)
        checking.that(feature.shape == w.shape, f'feature {symbol} has shape {feature.shape}, not ω\'s {w.shape}')
        checking.that(np.all(np.isfinite(feature)), f'feature {symbol} is not finite at finite ω, s and τ')
    parameters = {symbol: rng.normal(size=6) for symbol in law.symbols}
    with checking.step('evaluating its torque'):
        torque = law.torque(parameters, w, np.sign(w), tau, context)
    expected = sum((features[symbol] * parameters[symbol] for symbol in law.symbols), np.zeros_like(w))
    checking.that(np.allclose(torque, expected, rtol=1e-12, atol=1e-12), 'its torque is not the sum of its features '
                                                                        'weighted by the parameters')


def check_by_role(checking: PluginCheck, law, result, robot) -> None:
    """The feedforward's friction_static built from the result evaluates a finite torque; where the law holds the
    Coulomb + viscous form (:attr:`FrictionLaw.coulomb_viscous`) the E-GMS term does too; the stiffness estimator reads
    the result's friction by role where it adapts the law (a Coulomb level, no load term or a squared one), and
    refuses it by name where not."""
    from dynid.control.context import FeedforwardContext
    from dynid.control.friction_egms import EGMSFrictionTerm
    from dynid.control.friction_static import StaticFrictionTerm
    from dynid.estimate.replay import adapted
    from dynid.estimate.stiffness import StiffnessEstimator

    rng = np.random.default_rng(1)
    q, dq, ddq = (rng.uniform(-1.0, 1.0, (5, robot.n)) for _ in range(3))
    terms = {'friction_static': StaticFrictionTerm.from_result}
    if law.coulomb_viscous:
        terms['friction_egms'] = EGMSFrictionTerm.from_result
    for name, factory in terms.items():
        if not law.symbols:  # no friction to feed forward: refused by the law's name
            _check_refused(checking, law, functools.partial(factory, robot, result, {}), f'the feedforward term {name}')
            continue
        with checking.step(f'the feedforward term {name} of its result'):
            torque = np.asarray(factory(robot, result, {}).evaluate(q, dq, ddq, FeedforwardContext()))
        checking.that(torque.shape == q.shape and np.all(np.isfinite(torque)),
                      f'the feedforward term {name} of its result gives {torque.shape} torques, finite: '
                      f'{bool(np.all(np.isfinite(torque)))}')
    if not (adapted(law) or not law.symbols):
        _check_refused(checking, law, functools.partial(StiffnessEstimator.from_robot, robot, result),
                       'the stiffness estimator')
        return
    with checking.step('the stiffness estimator of its result'):
        estimator = StiffnessEstimator.from_robot(robot, result)
    table = result.friction()
    for j, joint in enumerate(robot.joint_names):
        roles = law.in_roles(table.get(joint, {}))
        held = {part: float(getattr(estimator, part)[j]) for part in ROLES}
        checking.that(held == {part: float(value) for part, value in roles.items()},
                      f'the stiffness estimator holds {held} of joint {joint}, not its roles\' values {roles}')


def _check_refused(checking: PluginCheck, law, build, what: str) -> None:
    """``build()`` refuses the law's result by an InputError naming the law."""
    from dynid.errors import InputError

    try:
        build()
    except InputError as error:
        checking.that(law.name in str(error), f'{what} refused its result without naming the law: {error}')
        return
    except Exception as error:
        raise checking.failed(f'{what} of its result raised {type(error).__name__}: {error}') from error
    raise checking.failed(f'{what} took its result, which it cannot read by role')


def _without_friction(loaded: bool) -> float:
    """The held-out relative residual of the twin identified without a friction model (``loaded``: with the payload
    recording beside the plain one), the bound a law's fit must stay within."""
    from dynid.testing.twin import fit

    result, _ = fit(friction='none', with_payload=loaded)
    return float(result.metrics['holdout']['relative_residual'])
