"""Errors that dynid raises for bad input, and the check of a setting that takes one of a few names.

The command line turns :class:`InputError` into exit code 2 with its message as the one-line
reason (docs/contract.md); any other exception is an internal error (exit code 1).
"""

from __future__ import annotations

from collections.abc import Sequence


class InputError(ValueError):
    """Bad input from the user: a file, topic, parameter or array that cannot be used.

    The message names the offending item and says what was expected, in one line.
    """


def checked_choice(name: str, value, allowed: Sequence[str]):
    """``value`` if it is one of ``allowed``, else InputError "<name> must be one of a, b, got 'x'".

    ``name`` is the setting as the user knows it (``method``, ``mode``, ``friction_static: load``).
    """
    if value not in allowed:
        raise InputError(f'{name} must be one of {", ".join(allowed)}, got {value!r}')
    return value
