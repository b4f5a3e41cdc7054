"""Every registered plug-in paired with its check, for ``pytest.mark.parametrize`` (scikit-learn's
``parametrize_with_checks``): dynid's own and those installed or registered in the process. The prior sources are not
listed yet (identify's face does not list the registered kinds): each is checked on a file of its kind by
:func:`~dynid.testing.check_prior_source`."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Mapping

from dynid.testing.laws import check_friction_law
from dynid.testing.methods import check_method
from dynid.testing.priors import check_prior_source
from dynid.testing.terms import check_feedforward_term

#: the kinds of plug-in, in the order :func:`all_checks` goes through them
KINDS = ('method', 'friction_law', 'feedforward_term', 'prior_source')
#: the options dynid's own terms are built with where they need some: the flexible joint's stiffness [N·m/rad] has no
#: default
OWN_TERM_OPTIONS = {'flexible_joint': {'stiffness': 3.0e4}}


def plugin_checks(kind: str, prior_files: Mapping[str, str] | None = None) -> Iterator[tuple[object, Callable]]:
    """(plug-in, check) of every registered plug-in of ``kind`` (one of :data:`KINDS`); ``check(plugin)`` raises
    AssertionError naming what fails. A prior source is checked on a file of its kind: ``prior_files`` {kind's name:
    path} must give one for each (ValueError naming those without)."""
    if kind == 'method':
        from dynid.identify.registry import identification_methods

        yield from ((method, check_method) for method in identification_methods())
    elif kind == 'friction_law':
        from dynid.friction.laws import REGISTRY

        yield from ((law, check_friction_law) for law in REGISTRY.all())
    elif kind == 'feedforward_term':
        for plugin in _feedforward_terms():
            yield plugin, functools.partial(check_feedforward_term, options=OWN_TERM_OPTIONS.get(plugin.name))
    elif kind == 'prior_source':
        kinds, files = _prior_source_kinds(), dict(prior_files or {})
        without = [source.name for source in kinds if source.name not in files]
        if without:
            raise ValueError(f'prior_files gives no file of the prior sources {without}')
        yield from ((source, functools.partial(check_prior_source, path=files[source.name])) for source in kinds)
    else:
        raise ValueError(f'kind must be one of {", ".join(KINDS)}, got {kind!r}')


def all_checks(prior_files: Mapping[str, str] | None = None) -> Iterator[tuple[object, Callable]]:
    """(plug-in, check) of every registered plug-in of every kind (:func:`plugin_checks`); the prior sources only
    where ``prior_files`` is given (a file for each registered kind), as a prior source is checked on a file of its
    kind."""
    for kind in KINDS:
        if kind != 'prior_source' or prior_files is not None:
            yield from plugin_checks(kind, prior_files)


def check_id(value) -> str:
    """A test id of a plug-in (its name) or a check (its function's name), for ``parametrize(..., ids=check_id)``."""
    check = getattr(value, 'func', value)
    return getattr(value, 'name', None) or getattr(check, '__name__', repr(value))


def _feedforward_terms() -> tuple:
    from dynid.control.plugins import REGISTRY

    return REGISTRY.all()


def _prior_source_kinds() -> tuple:
    from dynid.identify import prior_source_kinds

    return prior_source_kinds()
