"""Plugins found by name through a Python entry-point group (identification methods, friction laws, feedforward terms,
prior sources).

:class:`Registry` is one group's plugins: the installed ones, read from the distributions' metadata without importing
any plugin (a ``--help`` stays cheap), once for each state of ``sys.path`` (a package put on it while the process runs
is found on the next look-up), dynid's own first; and those a library user or a test registers in the process. A
plugin's module is imported when it is asked for by name. :class:`Names` is its names as a sequence read at each use,
for a settings field's choices.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from importlib.metadata import EntryPoint, EntryPoints, entry_points

from dynid.errors import InputError

#: the distribution whose plugins are listed first
_OWN = 'dynid'

#: every installed entry point, for the one state of sys.path it was read in (:func:`installed`)
_INSTALLED: dict[tuple[str, ...], EntryPoints] = {}


def installed(group: str) -> EntryPoints:
    """The installed entry points of ``group``: every distribution's metadata read once for each state of sys.path,
    one pass for all the groups (a pass per group read every distribution again: ~10 ms each)."""
    key = tuple(sys.path)
    if key not in _INSTALLED:
        _INSTALLED.clear()
        _INSTALLED[key] = entry_points()
    return _INSTALLED[key].select(group=group)


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


class Registry:
    """The plugins of the entry-point group ``group`` (module docstring): instances of ``kind`` with a ``name``.

    ``what`` names one for people ('identification method'); ``own_order``: the order dynid's own are listed in (the
    metadata keeps entry points sorted by name); ``register_call``: the function that registers one, for its message;
    ``adapt(name, loaded)``: what an installed entry point's object becomes before it is checked to be a ``kind`` (an
    older form of the plugin, wrapped), None: taken as it is.
    """

    def __init__(self, group: str, what: str, kind: type, own_order: tuple[str, ...] = (),
                 register_call: str = 'register', adapt: Callable[[str, object], object] | None = None) -> None:
        self.group, self.what, self.kind = group, what, kind
        self.own_order, self.register_call, self.adapt = own_order, register_call, adapt
        self._registered: dict[str, object] = {}
        self._scanned: dict[tuple[str, ...], dict[str, EntryPoint]] = {}

    def entry_points(self) -> dict[str, EntryPoint]:
        """{name: entry point} of every installed plugin, dynid's first; a name registered twice with different targets
        is refused rather than resolved by installation order. Read once for each state of sys.path."""
        key = tuple(sys.path)
        if key not in self._scanned:
            def place(point: EntryPoint) -> tuple:
                own = point.dist is not None and point.dist.name == _OWN
                order = self.own_order
                return (not own, order.index(point.name) if own and point.name in order else len(order))

            found = unique_entry_points(sorted(installed(self.group), key=place), self.what, self.group)
            self._scanned.clear()
            self._scanned[key] = found
        return self._scanned[key]

    def names(self) -> tuple[str, ...]:
        """Every plugin's name: the installed ones (dynid's first), then those registered in this process."""
        installed = tuple(self.entry_points())
        return installed + tuple(name for name in self._registered if name not in installed)

    def get(self, name: str):
        """The plugin registered as ``name``; InputError naming the installed ones where there is none."""
        if name in self._registered:
            return self._registered[name]
        points = self.entry_points()
        if name not in points:
            raise InputError(f'unknown {self.what} {name!r}; installed: {", ".join(self.names())} '
                             f'(entry-point group {self.group})')
        try:
            plugin = points[name].load()
        except Exception as error:  # a broken plugin must not look like a dynid bug
            raise InputError(f'{self.what} {name!r} ({points[name].value}) cannot be loaded: '
                             f'{type(error).__name__}: {error}') from error
        if self.adapt is not None:
            plugin = self.adapt(name, plugin)
        if not isinstance(plugin, self.kind) or plugin.name != name:
            raise InputError(f'{self.what} {name!r} ({points[name].value}) is not {_article(self.kind.__name__)} '
                             f'{self.kind.__name__} named {name!r}')
        return plugin

    def all(self) -> tuple:
        """Every plugin, loaded, in :meth:`names`' order."""
        return tuple(self.get(name) for name in self.names())

    def register(self, plugin) -> None:
        """Make ``plugin`` known in this process beside the installed ones (:meth:`unregister` forgets it)."""
        if not isinstance(plugin, self.kind):
            raise InputError(f'{self.register_call} takes {_article(self.kind.__name__)} {self.kind.__name__}, got '
                             f'{type(plugin).__name__}')
        if plugin.name in self.entry_points():
            raise InputError(f'{self.what} {plugin.name!r} is installed already (entry-point group {self.group})')
        self._registered[plugin.name] = plugin

    def unregister(self, name: str) -> None:
        """Forget a plugin :meth:`register` made known."""
        self._registered.pop(name, None)

    def software(self, name: str, label: str) -> dict[str, str]:
        """Where the plugin ``name`` comes from, beside dynid's version: {} for dynid's own, {distribution: version}
        for another package's, {'``label`` NAME': 'registered in the process'} for one :meth:`register` made known."""
        if name in self._registered:
            return {f'{label} {name}': 'registered in the process'}
        point = self.entry_points().get(name)
        if point is None or point.dist is None or point.dist.name == _OWN:
            return {}
        return {point.dist.name: point.dist.version}


def _article(word: str) -> str:
    return 'an' if word[:1].upper() in 'AEIOU' else 'a'


class Names(Sequence):
    """A registry's names as a sequence read at each use (``leading`` first: e.g. ``auto``), so that a settings
    field's choices, an option's and a check's follow what is installed and registered."""

    def __init__(self, registry: Registry, leading: tuple[str, ...] = ()) -> None:
        self.registry, self.leading = registry, tuple(leading)

    def _names(self) -> tuple[str, ...]:
        return self.leading + self.registry.names()

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
        return hash((self.registry.group, self.leading))

    def __repr__(self) -> str:
        return repr(self._names())
