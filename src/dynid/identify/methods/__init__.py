"""Identification methods as plugins: the Python entry-point group ``dynid.identification_methods``.

Each entry point names a method and points at its :class:`~dynid.identify.methods.contract.IdentificationMethod`.
dynid registers its own methods there the same way (setup.py: one module each in this package), so a method in any
installed package is found by name, e.g. in that package's pyproject.toml::

    [project.entry-points."dynid.identification_methods"]
    idim_iv = "my_methods.iv:METHOD"

:func:`register_method` adds one in this process (a library user's, a test's). The names are read from the installed
distributions' metadata without importing any method (``dynid identify --help`` stays cheap), once for each state of
``sys.path`` (a package put on it while the process runs is found on the next look-up); a method's module is imported
when it is asked for by name.
"""

from __future__ import annotations

from collections.abc import Sequence

from dynid.entry_points import Names, Registry
from dynid.identify.methods.contract import IdentificationMethod

GROUP = 'dynid.identification_methods'
#: the order dynid's own methods are listed in, simplest first (the metadata keeps its entry points sorted by name)
OWN_ORDER = ('ols', 'wls', 'irls', 'iirls', 'tls', 'mls')
#: the method the pipeline starts from where the method is left to dynid (its first estimate, the choice's baseline)
START_METHOD = 'wls'
#: the method of the regularized default, where the data alone do not determine the parameters: equal weights, the
#: prior and physical consistency carry what the data cannot (the consistency choice scores it beside the others)
REGULARIZED_METHOD = 'ols'
REGISTRY = Registry(GROUP, 'identification method', IdentificationMethod, OWN_ORDER, 'register_method')


def method_names() -> tuple[str, ...]:
    """Every method's name: the installed ones (dynid's first), then those registered in this process."""
    return REGISTRY.names()


def identification_method(name: str) -> IdentificationMethod:
    """The method registered as ``name``."""
    return REGISTRY.get(name)


def identification_methods() -> tuple[IdentificationMethod, ...]:
    """Every method, loaded, in :func:`method_names`' order."""
    return REGISTRY.all()


def register_method(method: IdentificationMethod) -> None:
    """Make ``method`` known in this process beside the installed ones (:func:`unregister_method` forgets it)."""
    REGISTRY.register(method)


def unregister_method(name: str) -> None:
    """Forget a method :func:`register_method` made known."""
    REGISTRY.unregister(name)


def method_software(name: str) -> dict[str, str]:
    """What a result's provenance records of where the method ``name`` comes from, beside dynid's version: {} for
    dynid's own, {distribution: version} for another package's, {'method NAME': 'registered in the process'} for one
    :func:`register_method` made known."""
    return REGISTRY.software(name, 'method')


def spoken(names: Sequence[str], last: str = 'or', upper: bool = True) -> str:
    """'OLS, WLS or IRLS': names for a sentence."""
    names = [name.upper() if upper else name for name in names]
    return names[0] if len(names) == 1 else f'{", ".join(names[:-1])} {last} {names[-1]}'


class MethodNames(Names):
    """The method names as a sequence read from the registry at each use (``leading`` first: e.g. ``auto``)."""

    def __init__(self, leading: tuple[str, ...] = ()) -> None:
        super().__init__(REGISTRY, leading)
