"""Command-line options made from a job's settings fields (:func:`dynid.settings.setting`).

An option's default, choices, type and help come from the field, so a default lives in one place for every
front end (the node's parameter is declared from the same field, :func:`dynid.ros.parameters.declare_settings`).
The option keeps its own spelling (``--log-jitter`` sets ``RealLogSettings.jitter``); the value the user gives
lands in ``args`` under the option's destination as usual.
"""

from __future__ import annotations

import argparse
import dataclasses

from dynid.settings import description


def settings_field(settings_class, name: str) -> dataclasses.Field:
    """The field ``name`` of the settings dataclass ``settings_class``."""
    for field in dataclasses.fields(settings_class):
        if field.name == name:
            return field
    raise KeyError(f'{settings_class.__name__} has no field {name!r}')


def field_default(field: dataclasses.Field):
    """The field's default (None where it has none)."""
    if field.default is not dataclasses.MISSING:
        return field.default
    if field.default_factory is not dataclasses.MISSING:
        return field.default_factory()
    return None


def _kind(field: dataclasses.Field, default):
    """The argparse type of one value of ``field``: its items' type for a tuple, else its default's, else the
    one its annotation names (a float that defaults to None)."""
    if isinstance(default, tuple):
        return field.metadata.get('items') or (type(default[0]) if default else str)
    if isinstance(default, int | float | str) and not isinstance(default, bool):
        return type(default)
    annotation = str(field.type)
    return next((kind for name, kind in (('float', float), ('int', int)) if name in annotation), str)


def shown(default) -> str:
    """A default as the help text says it."""
    if isinstance(default, tuple | list):
        return ','.join(f'{value:g}' if isinstance(value, float) else str(value) for value in default)
    return f'{default:g}' if isinstance(default, float) else str(default)


def add_option(parser, settings_class, name: str, *flags: str, more: str = '', help: str | None = None,
               show_default: bool = True, **kwargs) -> argparse.Action:
    """Add to ``parser`` (or an argument group) the option ``flags`` for the field ``name`` of
    ``settings_class``: its default (a tuple as a list), choices, value type and help
    (the description with its unit, then ``more``, then the default where there is one and ``show_default``)
    from the field; ``help`` replaces the description; ``kwargs`` go to ``add_argument`` as given (a store_true
    or store_false action takes no type)."""
    field = settings_field(settings_class, name)
    default = field_default(field)
    action = kwargs.get('action')
    if isinstance(default, tuple):  # argparse appends to a list default
        default = list(default)
    kwargs.setdefault('default', default)
    if field.metadata.get('choices'):
        kwargs.setdefault('choices', field.metadata['choices'])
    kind = _kind(field, field_default(field))
    if action in (None, 'store', 'append') and kind is not str:
        kwargs.setdefault('type', kind)
    text = (description(field) if help is None else help) + more
    value = kwargs['default']
    if show_default and action not in ('store_true', 'store_false') and value not in (None, '', [], ()):
        text += f' (default {shown(value)})'
    return parser.add_argument(*flags, help=text.replace('%', '%%'), **kwargs)
