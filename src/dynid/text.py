"""How dynid writes a number that may be missing, in every table and line it prints (:func:`format_number`)."""

from __future__ import annotations


def format_number(value: float | None, spec: str) -> str:
    """``value`` formatted with ``spec``, or 'n/a' for None (what could not be scored).

    >>> format_number(0.12345, '.3g'), format_number(None, '.3g')
    ('0.123', 'n/a')
    """
    return 'n/a' if value is None else format(value, spec)
