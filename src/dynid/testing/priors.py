"""The check of a prior source kind (:class:`dynid.identify.PriorSourceKind`: a name, a description,
``recognizes(path)`` and ``load(path, robot)``) on a file of that kind: the file recognized, the source loaded for the
twin's robot with every member of :class:`dynid.identify.PriorSource`, its rows finite and as wide as the
identification's unknowns, and an identification of the twin with it whose result's prior section names the source."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from dynid.testing.assertions import PluginCheck
from dynid.testing.methods import check_description, check_name

#: every member a loaded source has (PriorSource): attributes, then methods
SOURCE_ATTRIBUTES = ('kind', 'calibrated_std', 'releases', 'links', 'label', 'rule')
SOURCE_METHODS = ('left_out', 'pulls', 'rows', 'parameter_spread', 'link_values', 'provenance')


def check_prior_source(kind, path) -> None:
    """Raise AssertionError naming the check, the kind and what it found, unless ``kind`` (a PriorSourceKind)
    meets the contract dynid's own prior sources meet on ``path``, a file of that kind written for the twin's robot
    (:func:`dynid.testing.twin.twin`: the UR5e). The kind must be registered (:func:`register_prior_source`, or an
    installed entry point), as ``dynid identify --prior`` finds it, and be the only kind that recognizes the file.

    >>> check_prior_source(CAD_PRIOR, 'ur5e_cad.yaml')  # doctest: +SKIP
    """
    checking = PluginCheck('check_prior_source', 'prior source', getattr(kind, 'name', kind))
    check_name(checking, kind.name)
    check_description(checking, kind.description)
    checking.that(callable(kind.recognizes) and callable(kind.load), 'recognizes and load must be callable')
    path = Path(path)
    with checking.step(f'recognizing {path}'):
        checking.that(kind.recognizes(path) is True, f'recognizes({str(path)!r}) is not True for a file of its kind')
    from dynid.testing.twin import fit, twin

    with checking.step(f'loading {path} for the twin\'s robot'):
        source = kind.load(path, twin().robot)
    check_members(checking, source)
    from dynid.identify import prior_source

    with checking.step(f'giving {path} as the prior (dynid identify --prior): the registered kinds asked'):
        given = prior_source(str(path), twin().robot)
    checking.that(type(given) is type(source), f'dynid identify --prior {path} loads it as a {type(given).__name__}, '
                                               f'not as this kind\'s {type(source).__name__}')
    watched = WatchedSource(source)
    with checking.step('identifying the twin with it as the prior'):
        result, _ = fit(prior=watched)
    checking.that(watched.given, 'the identification asked the source for no rows')
    for rows, width in watched.given:
        a, b = np.asarray(rows.a, dtype=float), np.asarray(rows.b, dtype=float)
        checking.that(a.ndim == 2 and a.shape == (b.size, width), f'its rows are {a.shape} against {b.shape}, not '
                                                                   f'(rows, {width}): the identification\'s unknowns')
        checking.that(np.all(np.isfinite(a)) and np.all(np.isfinite(b)), 'its rows are not finite')
    section = result.prior_section or {}
    checking.that(section.get('source') == source.label and
                  (section.get('provenance') or {}).get('kind') == source.kind,
                  f'the result\'s prior section names {section.get("source")!r} of kind '
                  f'{(section.get("provenance") or {}).get("kind")!r}, not the source {source.label!r} of kind '
                  f'{source.kind!r}')


def check_members(checking: PluginCheck, source) -> None:
    """Every PriorSource member, each of its type."""
    missing = [name for name in (*SOURCE_ATTRIBUTES, *SOURCE_METHODS) if not hasattr(source, name)]
    checking.that(not missing, f'the loaded source lacks the PriorSource members {missing}')
    checking.that(isinstance(source.kind, str) and source.kind and isinstance(source.label, str) and source.label and
                  isinstance(source.rule, str) and source.rule, 'kind, label and rule must be text')
    checking.that(source.calibrated_std is None or source.calibrated_std > 0, 'calibrated_std must be None or > 0')
    with checking.step('reading its links, pulls and provenance'):
        links, values = source.left_out(), source.link_values()
        pulls, provenance = source.pulls(), source.provenance()
    checking.that(isinstance(source.releases, bool) and isinstance(pulls, bool), 'releases and pulls() must be bool')
    checking.that(all(link in source.links for link in links), 'left_out() names links that are not its links')
    checking.that(len(values) == len(source.links), f'link_values() gives {len(values)} links, not its '
                                                     f'{len(source.links)}')
    checking.that(isinstance(provenance, dict) and provenance.get('kind') == source.kind,
                  'provenance() must be a mapping naming its kind')


class WatchedSource:
    """A source as the identification sees it, keeping each (rows, the layout's width) it gives."""

    def __init__(self, source) -> None:
        self.source, self.given = source, []

    def __getattr__(self, name):
        return getattr(self.source, name)

    def rows(self, problem, layout, free_names):
        rows = self.source.rows(problem, layout, free_names)
        self.given.append((rows, layout.to_base.shape[1]))
        return rows
