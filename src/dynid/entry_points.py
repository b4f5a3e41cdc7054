"""Plugins found by name through a Python entry-point group (feedforward terms, identification methods)."""

from __future__ import annotations

from collections.abc import Iterable
from importlib.metadata import EntryPoint

from dynid.errors import InputError


def unique_entry_points(points: Iterable[EntryPoint], what: str, group: str) -> dict[str, EntryPoint]:
    """{name: entry point} of ``points`` in their order. A name two distributions register with different targets is
    ambiguous and refused (``what`` names the kind, e.g. 'feedforward term'), never resolved by installation order."""
    found: dict[str, EntryPoint] = {}
    for point in points:
        known = found.get(point.name)
        if known is not None and known.value != point.value:
            raise InputError(f'{what} {point.name!r} is registered twice: {known.value} and {point.value} '
                             f'(entry-point group {group}); uninstall one')
        found[point.name] = point
    return found
