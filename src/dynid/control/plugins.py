"""Feedforward terms as plugins: :class:`TermPlugin` objects in the Python entry-point group
``dynid.feedforward_terms``, as for identification methods and friction laws (:mod:`dynid.entry_points`).

A plugin names a term and holds its factory, ``factory(robot, result, options) -> term`` (:mod:`dynid.control.term`).
dynid registers its built-in terms there the same way (setup.py), so a term in any installed package is found by name,
e.g. in that package's pyproject.toml::

    [project.entry-points."dynid.feedforward_terms"]
    cable_drag = "my_robot_terms.cable:CABLE_DRAG"      # CABLE_DRAG = TermPlugin('cable_drag', '...', CableDragTerm)

and :func:`register_term` adds one in this process. An installed entry point that names the factory itself (the form
before :class:`TermPlugin`) is taken as a plugin of that name.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from dynid.entry_points import Names, Registry
from dynid.errors import InputError

GROUP = 'dynid.feedforward_terms'
#: the order dynid's own terms are listed in
OWN_ORDER = ('rigid_body', 'rotor_inertia', 'friction_static', 'friction_egms', 'friction_adaptive', 'flexible_joint')


@dataclass(frozen=True)
class TermPlugin:
    """A feedforward term by name: ``factory(robot, result, options) -> term``, the term having
    ``evaluate(q, dq, ddq, context)`` (:mod:`dynid.control.term`); ``description``: what it adds, in a line."""

    name: str
    description: str
    factory: Callable


def _bare_factory(name: str, loaded):
    """An installed entry point naming a factory (the form before :class:`TermPlugin`): that factory as the plugin
    ``name``, described by its docstring's first line."""
    if isinstance(loaded, TermPlugin) or not callable(loaded):
        return loaded
    return TermPlugin(name, ((loaded.__doc__ or '').strip().splitlines() or [''])[0], loaded)


REGISTRY = Registry(GROUP, 'feedforward term', TermPlugin, OWN_ORDER, 'register_term', adapt=_bare_factory)


def register_term(plugin: TermPlugin) -> None:
    """Make ``plugin`` known in this process beside the installed ones (:func:`unregister_term` forgets it)."""
    REGISTRY.register(plugin)


def unregister_term(name: str) -> None:
    """Forget a term :func:`register_term` made known."""
    REGISTRY.unregister(name)


def term_names() -> tuple[str, ...]:
    """Every term's name: the installed ones (dynid's first), then those registered in this process."""
    return REGISTRY.names()


class TermNames(Names):
    """The terms' names as a sequence read from the registry at each use, for a setting's choices."""

    def __init__(self) -> None:
        super().__init__(REGISTRY)


def build_term(name: str, robot, result=None, options: Mapping | None = None):
    """The term ``name`` built by its factory from (robot, result, options), checked to have ``evaluate``."""
    term = REGISTRY.get(name).factory(robot, result, dict(options or {}))
    if not callable(getattr(term, 'evaluate', None)):
        raise InputError(f'feedforward term {name!r} built a {type(term).__name__} without '
                         f'evaluate(q, dq, ddq, context)')
    return term
