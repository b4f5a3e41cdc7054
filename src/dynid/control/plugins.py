"""Feedforward terms as plugins: the Python entry-point group ``dynid.feedforward_terms``.

Each entry point names a term and points at its factory, ``factory(robot, result, options) -> term``
(:mod:`dynid.control.term`). dynid registers its built-in terms there the same way (setup.py), so a
term in any installed package is found by name, e.g. in that package's pyproject.toml::

    [project.entry-points."dynid.feedforward_terms"]
    cable_drag = "my_robot_terms.cable:CableDragTerm"

Discovery reads the installed distributions' metadata (importlib.metadata) at each call, so a package
installed while the process runs is found on the next look-up.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from importlib.metadata import EntryPoint, entry_points

from dynid.entry_points import unique_entry_points
from dynid.errors import InputError

GROUP = 'dynid.feedforward_terms'


def available_terms() -> dict[str, EntryPoint]:
    """{name: entry point} of every installed term, by name.

    A name registered by two distributions with different targets is ambiguous and refused here rather
    than resolved by installation order.
    """
    return unique_entry_points(entry_points(group=GROUP), 'feedforward term', GROUP)


def term_factory(name: str) -> Callable:
    """The factory of the term registered as ``name``."""
    terms = available_terms()
    if name not in terms:
        raise InputError(f'unknown feedforward term {name!r}; installed: {sorted(terms)} (entry-point group {GROUP})')
    try:
        factory = terms[name].load()
    except Exception as error:  # a broken plugin must not look like a dynid bug
        raise InputError(f'feedforward term {name!r} ({terms[name].value}) cannot be loaded: '
                         f'{type(error).__name__}: {error}') from error
    if not callable(factory):
        raise InputError(f'feedforward term {name!r} ({terms[name].value}) is not a factory (robot, result, options)')
    return factory


def build_term(name: str, robot, result=None, options: Mapping | None = None):
    """The term ``name`` built by its factory from (robot, result, options), checked to have ``evaluate``."""
    term = term_factory(name)(robot, result, dict(options or {}))
    if not callable(getattr(term, 'evaluate', None)):
        raise InputError(f'feedforward term {name!r} built a {type(term).__name__} without '
                         f'evaluate(q, dq, ddq, context)')
    return term
