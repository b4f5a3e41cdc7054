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

import sys
from collections.abc import Iterator, Sequence
from importlib.metadata import EntryPoint, entry_points

from dynid.entry_points import unique_entry_points
from dynid.errors import InputError
from dynid.identify.methods.contract import IdentificationMethod

GROUP = 'dynid.identification_methods'
#: the distribution whose methods are listed first
_OWN = 'dynid'
#: the order dynid's own methods are listed in, simplest first (the metadata keeps its entry points sorted by name)
OWN_ORDER = ('ols', 'wls', 'irls', 'iirls', 'tls', 'mls')
#: the method the pipeline starts from where the method is left to dynid (its first estimate, the choice's baseline)
START_METHOD = 'wls'
#: the method of the regularized default, where the data alone do not determine the parameters: equal weights, the
#: prior and physical consistency carry what the data cannot (the consistency choice scores it beside the others)
REGULARIZED_METHOD = 'ols'
_REGISTERED: dict[str, IdentificationMethod] = {}
_SCANNED: dict[tuple[str, ...], dict[str, EntryPoint]] = {}  # the metadata's, for one sys.path


def _entry_points() -> dict[str, EntryPoint]:
    """{name: entry point} of every installed method, dynid's first; a name registered twice with different targets
    is refused rather than resolved by installation order. Read once for each state of sys.path: the scan reads every
    installed distribution's metadata."""
    key = tuple(sys.path)
    if key not in _SCANNED:
        found = _scanned()
        _SCANNED.clear()
        _SCANNED[key] = found
    return _SCANNED[key]


def _scanned() -> dict[str, EntryPoint]:
    def place(point: EntryPoint) -> tuple:
        own = point.dist is not None and point.dist.name == _OWN
        return (not own, OWN_ORDER.index(point.name) if own and point.name in OWN_ORDER else len(OWN_ORDER))

    points = sorted(entry_points(group=GROUP), key=place)  # others after dynid's, in the metadata's order
    return unique_entry_points(points, 'identification method', GROUP)


def method_names() -> tuple[str, ...]:
    """Every method's name: the installed ones (dynid's first), then those registered in this process."""
    installed = tuple(_entry_points())
    return installed + tuple(name for name in _REGISTERED if name not in installed)


def identification_method(name: str) -> IdentificationMethod:
    """The method registered as ``name``."""
    if name in _REGISTERED:
        return _REGISTERED[name]
    points = _entry_points()
    if name not in points:
        raise InputError(f'unknown identification method {name!r}; installed: {", ".join(method_names())} '
                         f'(entry-point group {GROUP})')
    try:
        method = points[name].load()
    except Exception as error:  # a broken plugin must not look like a dynid bug
        raise InputError(f'identification method {name!r} ({points[name].value}) cannot be loaded: '
                         f'{type(error).__name__}: {error}') from error
    if not isinstance(method, IdentificationMethod) or method.name != name:
        raise InputError(f'identification method {name!r} ({points[name].value}) is not an IdentificationMethod '
                         f'named {name!r}')
    return method


def identification_methods() -> tuple[IdentificationMethod, ...]:
    """Every method, loaded, in :func:`method_names`' order."""
    return tuple(identification_method(name) for name in method_names())


def register_method(method: IdentificationMethod) -> None:
    """Make ``method`` known in this process beside the installed ones (:func:`unregister_method` forgets it)."""
    if not isinstance(method, IdentificationMethod):
        raise InputError(f'register_method takes an IdentificationMethod, got {type(method).__name__}')
    if method.name in _entry_points():
        raise InputError(f'identification method {method.name!r} is installed already (entry-point group {GROUP})')
    _REGISTERED[method.name] = method


def unregister_method(name: str) -> None:
    """Forget a method :func:`register_method` made known."""
    _REGISTERED.pop(name, None)


def method_software(name: str) -> dict[str, str]:
    """What a result's provenance records of where the method ``name`` comes from, beside dynid's version: {} for
    dynid's own, {distribution: version} for another package's, {'method NAME': 'registered in the process'} for one
    :func:`register_method` made known."""
    if name in _REGISTERED:
        return {f'method {name}': 'registered in the process'}
    point = _entry_points().get(name)
    if point is None or point.dist is None or point.dist.name == _OWN:
        return {}
    return {point.dist.name: point.dist.version}


def spoken(names: Sequence[str], last: str = 'or', upper: bool = True) -> str:
    """'OLS, WLS or IRLS': names for a sentence."""
    names = [name.upper() if upper else name for name in names]
    return names[0] if len(names) == 1 else f'{", ".join(names[:-1])} {last} {names[-1]}'


class MethodNames(Sequence):
    """The method names as a sequence read from the registry at each use (``leading`` first: e.g. ``auto``), so that a
    settings field's choices, an option's and a check's follow what is installed and registered."""

    def __init__(self, leading: tuple[str, ...] = ()) -> None:
        self.leading = tuple(leading)

    def _names(self) -> tuple[str, ...]:
        return self.leading + method_names()

    def __getitem__(self, index):
        return self._names()[index]

    def __len__(self) -> int:
        return len(self._names())

    def __iter__(self) -> Iterator[str]:
        return iter(self._names())

    def __contains__(self, name) -> bool:
        return name in self._names()

    def __eq__(self, other) -> bool:
        return tuple(self) == tuple(other) if isinstance(other, Sequence) else NotImplemented

    def __hash__(self) -> int:
        return hash(self.leading)

    def __repr__(self) -> str:
        return repr(self._names())
