"""The module paths these benchmarks import, on a dynid of the flat ``dynid.identify`` layout (main 349032a and before,
until the package was split into ``equations/``, ``result/``, ``steps/`` and ``validation/``): each path of today an
alias of the module it moved from, so that the same benchmark scores an older checkout (``PYTHONPATH=<old>/src``).
On today's layout it does nothing."""

from __future__ import annotations

import importlib
import importlib.util
import sys

#: today's path: the flat layout's
MOVED = {'dynid.identify.equations.request': 'dynid.identify.request',
         'dynid.identify.result.metrics': 'dynid.identify.metrics',
         'dynid.identify.result.result': 'dynid.identify.result',
         'dynid.identify.result.torque': 'dynid.identify.torque',
         'dynid.identify.steps.run': 'dynid.identify.run',
         'dynid.identify.validation.validate': 'dynid.identify.validate'}


def flat_layout() -> bool:
    """Whether the dynid imported has the flat layout (``dynid.identify.result`` a module, not a package)."""
    spec = importlib.util.find_spec('dynid.identify.result')
    return spec is not None and spec.submodule_search_locations is None


def alias() -> list[str]:
    """Alias today's paths to the flat layout's modules where the dynid imported has it; the paths aliased."""
    if not flat_layout():
        return []
    for new, old in MOVED.items():
        sys.modules.setdefault(new, importlib.import_module(old))
    return list(MOVED)


ALIASED = alias()
