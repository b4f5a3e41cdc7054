"""Errors that dynid raises for bad input, and the check of a setting that takes one of a few names.

The command line turns :class:`InputError` into exit code 2 with its message as the one-line
reason (docs/contract.md); any other exception is an internal error (exit code 1).

The core names the settings it refuses by their field names (``joints``, ``drives``), never by a front end's
spelling: a message refers to a field as ``{joints}`` and lists it in ``fields``; each front end spells it
(:meth:`InputError.spelled`): the command line as ``--joints``, a node as ``joints:=``.

    >>> error = InputError('the robot branches: select one chain with {joints}', fields=('joints',))
    >>> str(error), error.field
    ('the robot branches: select one chain with joints', 'joints')
    >>> error.spelled(lambda field: '--' + field)
    'the robot branches: select one chain with --joints'
"""

from __future__ import annotations

from collections.abc import Callable, Sequence


def spell(text: str, fields: Sequence[str], spelling: Callable[[str], str]) -> str:
    """``text`` with each ``{field}`` of ``fields`` as ``spelling(field)`` spells it (other braces stay): a front
    end's wording of a message or an advice that names settings by their fields."""
    for name in fields:
        text = text.replace('{' + name + '}', spelling(name))
    return text


class InputError(ValueError):
    """Bad input from the user: a file, topic, parameter or array that cannot be used.

    The message names the offending item and says what was expected, in one line. Settings it names are
    written ``{field}`` in ``message`` and listed in ``fields`` (the first is :attr:`field`, the one at
    fault); ``str()`` shows their bare names, :meth:`spelled` a front end's spelling of them.
    """

    def __init__(self, message: str = '', *, fields: Sequence[str] = ()):
        self.template = message
        self.fields: tuple[str, ...] = tuple(fields)
        super().__init__(self.spelled(str))

    @property
    def field(self) -> str | None:
        """The setting at fault, by its field name; None when the message names no setting."""
        return self.fields[0] if self.fields else None

    def spelled(self, spelling: Callable[[str], str]) -> str:
        """The message with each of :attr:`fields` as ``spelling(field)`` spells it (``--joints``, ``joints:=``)."""
        return spell(self.template, self.fields, spelling)


def checked_choice(name: str, value, allowed: Sequence[str], fields: Sequence[str] = ()):
    """``value`` if it is one of ``allowed``, else InputError "<name> must be one of a, b, got 'x'".

    ``name`` is the setting as the user knows it (``method``, ``mode``, ``friction_static: load``); it may
    refer to ``fields`` as :class:`InputError` does (``'{columns}: time_unit'``).
    """
    if value not in allowed:
        raise InputError(f'{name} must be one of {", ".join(allowed)}, got {value!r}', fields=fields)
    return value
