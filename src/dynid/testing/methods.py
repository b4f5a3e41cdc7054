"""The check of an identification method (:class:`dynid.identify.registry.IdentificationMethod`): its declaration
(name, description, estimator, the laws it takes, the options it reads and declares), fits on the twin through
``dynid identify``'s path (:mod:`dynid.testing.twin`: its own solution, and where physical consistency applies to it,
with the robot file's prior and consistency), each result's round trip and its URDF and MJCF export."""

from __future__ import annotations

import dataclasses

from dynid.testing.assertions import PluginCheck
from dynid.testing.results import check_export, check_fitted, check_round_trip

#: the held-out relative residual a method's fit on the twin must stay below: dynid's methods give 0.5–2.5 % there
#: (the twin's sensor noise and its friction beyond the Coulomb + viscous law; I-IRLS's own solution 2.5 %); a method
#: that does not fit gives tens of per cent (the twin's rigid-body torque alone leaves 23 %)
METHOD_BOUND = 0.05
#: the law a method is fitted with on the twin, where it takes it (the twin's joints have Coulomb + viscous friction)
TWIN_LAW = 'viscous_coulomb'


def check_method(method) -> None:
    """Raise AssertionError naming the check, the method and what it found, unless ``method`` meets the contract
    dynid's own methods meet (module docstring). The method must be registered (:func:`register_method`, or an
    installed entry point) under its name, as ``dynid identify --method`` finds it.

    >>> from dynid.identify.registry import identification_method
    >>> check_method(identification_method('wls'))  # doctest: +SKIP
    """
    checking = PluginCheck('check_method', 'identification method', getattr(method, 'name', method))
    check_method_fields(checking, method)
    from dynid.testing.twin import fit, twin

    law = twin_law(method)
    # its own solution first (a prior pulls any estimate toward the robot file), then as dynid identify runs it by
    # default where physical consistency applies to it: the result the export writes
    for linear in (True, False) if method.physical else (True,):
        words = 'its own solution' if linear else 'the robot file as a prior and physical consistency'
        with checking.step(f'identifying the twin with friction {law}, {words}'):
            result, path = fit(method.name, law, linear=linear)
        checking.that(result.method == method.name, f'the result names the method {result.method!r}')
        check_fitted(checking, result, METHOD_BOUND)
        check_round_trip(checking, result, path)
        check_export(checking, result, twin().robot, path.parent, law=result.model.get('friction'))


def twin_law(method) -> str:
    """The law ``method`` is fitted with on the twin: :data:`TWIN_LAW` where it takes it, else its own."""
    if method.friction is None or TWIN_LAW in method.friction:
        return TWIN_LAW
    return method.friction_default or method.friction[0]


def check_method_fields(checking: PluginCheck, method) -> None:
    """The declaration (:class:`IdentificationMethod`'s docstring): each field of its type and meaning."""
    from dynid.friction.laws import law_names
    from dynid.identify import IdentifyOptions
    from dynid.identify.registry import IdentificationMethod, MethodOption, identification_method

    checking.that(isinstance(method, IdentificationMethod), f'is a {type(method).__name__}, not an '
                                                            'IdentificationMethod')
    check_name(checking, method.name)
    check_description(checking, method.description)
    with checking.step('finding it by name in the registry'):
        checking.that(identification_method(method.name) is method, 'the registry gives another method under its '
                                                                    'name')
    checking.that(callable(method.solve), 'solve is not callable')
    checking.that(isinstance(method.covariance, str) and method.covariance.strip(),
                  'covariance must say, as an equation, the covariance its estimate carries')
    for name in ('fit', 'choice_weights'):
        checking.that(getattr(method, name) is None or callable(getattr(method, name)), f'{name} is not callable')
    laws = law_names()
    if method.friction is not None:
        unknown = [law for law in method.friction if law not in laws]
        checking.that(not unknown, f'friction names laws that are not registered: {unknown} (registered: {laws})')
    if method.friction_default is not None:
        checking.that(method.friction_default in (method.friction or laws),
                      f'friction_default {method.friction_default!r} is not a law it takes')
    checking.that(not method.friction_required or (method.friction_default and method.friction_reason),
                  'friction_required needs friction_default and friction_reason (the change the result records)')
    fields = {f.name for f in dataclasses.fields(IdentifyOptions)}
    unknown = [name for name in method.options if name not in fields]
    checking.that(not unknown, f'options names fields IdentifyOptions does not have: {unknown}')
    names = [option.name for option in method.method_options]
    checking.that(all(isinstance(option, MethodOption) for option in method.method_options),
                  'method_options must be MethodOption declarations')
    checking.that(len(set(names)) == len(names), f'method_options declares a name twice: {names}')
    for option in method.method_options:
        with checking.step(f'reading method option {option.name}\'s default'):
            checking.that(option.default is None or option.parsed(option.default) == option.default,
                          f'method option {option.name}: its default {option.default!r} is not a value it takes')
    with checking.step('reading its options\' defaults'):
        method.option_values({})


def check_name(checking: PluginCheck, name) -> None:
    """A name a front end takes as one word: text without spaces, commas, '=' or ':'."""
    checking.that(isinstance(name, str) and name and not any(c.isspace() or c in ',=:' for c in name),
                  'its name must be one word (no spaces, commas, "=" or ":"), as the command line\'s options and '
                  'the nodes\' parameters take it')


def check_description(checking: PluginCheck, description) -> None:
    checking.that(isinstance(description, str) and description.strip() and '\n' not in description,
                  'description must be one line for people')
