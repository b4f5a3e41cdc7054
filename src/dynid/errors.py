"""Errors that dynid raises for bad input.

The command line turns :class:`InputError` into exit code 2 with its message as the one-line
reason (docs/contract.md); any other exception is an internal error (exit code 1).
"""


class InputError(ValueError):
    """Bad input from the user: a file, topic, parameter or array that cannot be used.

    The message names the offending item and says what was expected, in one line.
    """
