"""The command line's spelling of the settings fields that core errors name (:class:`dynid.errors.InputError`).

Every option's destination is its flag without the dashes (``--joint-states-effort`` →
``joint_states_effort``), so the field a core error names is spelled back as that flag.
"""

from __future__ import annotations

from dynid.errors import InputError


def flag(field: str) -> str:
    """``joint_states_effort`` → ``--joint-states-effort``."""
    return '--' + field.replace('_', '-')


def message(error: InputError) -> str:
    """The error's one-line message with the fields it names spelled as this command's flags."""
    return error.spelled(flag)
