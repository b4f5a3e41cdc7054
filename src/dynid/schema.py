"""What a file holds, described once, and the one check of a parsed document against that description.

Every file a user hands dynid (a result, a drives file, a robot file, a trajectory, a payload, a manifest, a
stiffness baseline, a parameter file) is described as nested specs, and checked whole before any of its values is
used:

- :class:`Number`: a number (never true/false), its unit, inclusive range, whether it is an integer, and whether
  null (or NaN) may stand for "not known";
- :class:`Text` (a name, or one of ``choices``) and :class:`Flag` (true or false);
- :class:`Items`: a list of one kind, with its length (``'joints'``: one per joint);
- :class:`Fields`: a mapping of known keys, ``required`` and ``optional``; any other key is refused (a misspelt
  key would otherwise be ignored without a word) unless ``others`` says what such keys hold;
- :class:`Table`: a mapping of names to one kind (``keys='joints'``: the robot's joints, ``every``: each of them);
- :class:`OneOf` (the first that fits) and :data:`ANY` (report data that nothing computes with).

Where a settings class describes the fields (:func:`dynid.settings.setting`: type, default, unit, range, choices),
:func:`settings_fields` makes the spec from that description, so a file and its settings class are described once.
:func:`check` raises one :class:`~dynid.errors.InputError` naming the file, the field's path in it and what the
field must be:

    >>> from dynid.signal.preprocess import FilterSettings
    >>> result = Fields(optional={'provenance': Fields(optional={'filters': settings_fields(FilterSettings)})})
    >>> check({'provenance': {'filters': {'motion_bandwidth_hz': {'a': 1}}}}, result, 'result.yaml')
    Traceback (most recent call last):
    ...
    dynid.errors.InputError: result.yaml: provenance.filters.motion_bandwidth_hz must be a number in [0.01, 100000] \
Hz, got {'a': 1}
"""

from __future__ import annotations

import dataclasses
import math
import numbers
import types
import typing
from collections.abc import Mapping, Sequence

from dynid.errors import InputError


class MismatchError(Exception):
    """A field that does not fit its spec: where (a path of keys and indices) and the sentence that says so."""

    def __init__(self, path: tuple, text: str, named: bool = False) -> None:
        super().__init__(text)
        self.path, self.text, self.named = path, text, named  # named: the sentence names the field itself


def path_text(path: Sequence) -> str:
    """``('provenance', 'inputs', 0, 'name')`` as ``provenance.inputs[0].name``."""
    text = ''
    for key in path:
        text += f'[{key}]' if isinstance(key, int) else (f'.{key}' if text else str(key))
    return text


def shown(value, limit: int = 60) -> str:
    """``repr(value)`` on one line, cut at ``limit`` characters."""
    text = ' '.join(repr(value).split())
    return text if len(text) <= limit else text[:limit - 3] + '...'


def _bound(value: float) -> str:
    return f'{value:g}'


class Spec:
    """One kind of value; :meth:`check` raises :class:`MismatchError` where ``value`` is not of it."""

    def what(self) -> str:
        """What a value of this kind is, in words ('a number >= 0 kg')."""
        raise NotImplementedError

    def check(self, value, path: tuple, context: Mapping) -> None:
        raise NotImplementedError

    def fail(self, value, path: tuple):
        raise MismatchError(path, f'must be {self.what()}, got {shown(value)}')


class _Any(Spec):
    def what(self) -> str:
        return 'anything'

    def check(self, value, path, context) -> None:
        return None


#: anything (report data that no reader computes with)
ANY = _Any()


@dataclasses.dataclass(frozen=True)
class Number(Spec):
    """A number: int or float, never true/false; finite unless NaN is allowed (``nan``: not known, as YAML's
    ``.nan``) or the range reaches ±inf; within [``low``, ``high``] (inclusive), above ``above`` (exclusive) and
    not 0 where ``nonzero``; an int where ``integer``; null allowed where ``null``."""

    unit: str | None = None
    low: float | None = None
    high: float | None = None
    integer: bool = False
    null: bool = False
    nan: bool = False
    above: float | None = None
    nonzero: bool = False

    def what(self) -> str:
        kind = 'an integer' if self.integer else 'a number'
        unbounded = self.low in (None, -math.inf) and self.high in (None, math.inf)
        if self.above is not None:
            kind += f' > {_bound(self.above)}' + (f' and <= {_bound(self.high)}' if self.high not in (None, math.inf)
                                                  else '')
        elif self.nonzero:
            kind = 'a nonzero ' + kind[2:] + (f' in [{_bound(self.low)}, {_bound(self.high)}]'
                                              if self.low is not None and self.high is not None else '')
        elif unbounded:
            kind = kind if self.integer else 'a finite number'
            if self.low == -math.inf or self.high == math.inf:
                kind += ' or ' + ('±.inf' if self.low == -math.inf and self.high == math.inf
                                  else '.inf' if self.high == math.inf else '-.inf')
        elif self.low is not None and self.high is not None:
            kind += f' in [{_bound(self.low)}, {_bound(self.high)}]'
        elif self.low is not None:
            kind += f' >= {_bound(self.low)}'
        else:
            kind += f' <= {_bound(self.high)}'
        if self.unit:
            kind += f' [{self.unit}]' if unbounded and self.above is None and not self.nonzero else f' {self.unit}'
        return kind + (' or null' if self.null else '')

    def check(self, value, path, context) -> None:
        if value is None and self.null:
            return
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            self.fail(value, path)
        if self.integer and not isinstance(value, numbers.Integral):
            self.fail(value, path)
        if not self.integer:
            if math.isnan(value):
                if self.nan:
                    return
                self.fail(value, path)
            infinite_ok = (value > 0 and self.high == math.inf) or (value < 0 and self.low == -math.inf)
            if math.isinf(value) and not infinite_ok:
                self.fail(value, path)
        if (self.low is not None and value < self.low) or (self.high is not None and value > self.high) \
                or (self.above is not None and not value > self.above) or (self.nonzero and value == 0):
            self.fail(value, path)


@dataclasses.dataclass(frozen=True)
class Text(Spec):
    """A string; one of ``choices`` where given; not empty where ``empty`` is False."""

    choices: tuple[str, ...] | None = None
    empty: bool = True
    null: bool = False

    def what(self) -> str:
        if self.choices:
            kind = 'one of ' + ', '.join(self.choices)
        else:
            kind = 'a text' if self.empty else 'a name'
        return kind + (' or null' if self.null else '')

    def check(self, value, path, context) -> None:
        if value is None and self.null:
            return
        if not isinstance(value, str) or (self.choices and value not in self.choices) or (not self.empty and not value):
            self.fail(value, path)


@dataclasses.dataclass(frozen=True)
class Flag(Spec):
    """true or false (null too where ``null``)."""

    null: bool = False

    def what(self) -> str:
        return 'true or false' + (' or null' if self.null else '')

    def check(self, value, path, context) -> None:
        if not (isinstance(value, bool) or (value is None and self.null)):
            self.fail(value, path)


def _length(length, context: Mapping) -> int | None:
    """A list's length: ``length``, or the number of joints for 'joints' (None, unchecked, where none are known)."""
    if length != 'joints':
        return length
    return None if context.get('joints') is None else len(context['joints'])


@dataclasses.dataclass(frozen=True)
class Items(Spec):
    """A list of ``item``: exactly ``length`` of them (an int, or 'joints': one per joint), or from ``least`` to
    ``most``; null allowed where ``null``."""

    item: Spec
    length: int | str | None = None
    least: int = 0
    most: int | None = None
    null: bool = False
    name: str | None = None  # how the list is called in messages ('3 numbers [m]')

    def what(self, context: Mapping | None = None) -> str:
        if self.name:
            return self.name + (' or null' if self.null else '')
        length = self.length if context is None else _length(self.length, context)
        if self.length == 'joints':
            count = ' (one per joint' + (f': {length})' if isinstance(length, int) else ')')
        elif length is not None:
            count = f' of {length}'
        elif self.least and self.most is not None:
            count = f' of {self.least} to {self.most}'
        else:
            count = ''
        kind = 'a non-empty list' if self.least == 1 and self.most is None and length is None else 'a list'
        return f'{kind}{count}, each {self.item.what()}' + (' or null' if self.null else '')

    def check(self, value, path, context) -> None:
        if value is None and self.null:
            return
        length = _length(self.length, context)
        if not isinstance(value, list) or (length is not None and len(value) != length) or len(value) < self.least \
                or (self.most is not None and len(value) > self.most):
            raise MismatchError(path, f'must be {self.what(context)}, got {shown(value)}')
        for k, element in enumerate(value):
            self.item.check(element, (*path, k), context)


def _names(keys, limit: int = 12) -> str:
    keys = list(keys)
    return ', '.join(keys[:limit]) + (', ...' if len(keys) > limit else '')


@dataclasses.dataclass(frozen=True)
class Fields(Spec):
    """A mapping of known keys: each of ``required`` must be there, ``optional`` may be; any other key is refused
    unless ``others`` gives the kind of their values. Null allowed where ``null``."""

    required: Mapping[str, Spec] = dataclasses.field(default_factory=dict)
    optional: Mapping[str, Spec] = dataclasses.field(default_factory=dict)
    others: Spec | None = None
    null: bool = False
    name: str = 'a mapping'

    def what(self) -> str:
        return self.name + (' or null' if self.null else '')

    def known(self) -> dict[str, Spec]:
        return {**self.required, **self.optional}

    def check(self, value, path, context) -> None:
        if value is None and self.null:
            return
        if not isinstance(value, dict):
            self.fail(value, path)
        known = self.known()
        for key in value:
            if key not in known and self.others is None:
                where = path_text((*path, key)) if isinstance(key, str) else f'{path_text(path)} key {key!r}'
                raise MismatchError((*path, str(key)), f'{where}: no such key here (known: {_names(known)})',
                                    named=True)
        for key in self.required:
            if key not in value:
                raise MismatchError((*path, key), f'is missing ({known[key].what()})')
        for key, element in value.items():
            (known.get(key) or self.others).check(element, (*path, key), context)

    def with_fields(self, required: Mapping[str, Spec] | None = None, optional: Mapping[str, Spec] | None = None,
                    **changes) -> Fields:
        """These fields with more (or other) required and optional ones."""
        return dataclasses.replace(self, required={**self.required, **(required or {})},
                                   optional={**self.optional, **(optional or {})}, **changes)


@dataclasses.dataclass(frozen=True)
class Table(Spec):
    """A mapping of names to ``value``: any names, or (``keys='joints'``) joints of the robot, each of them where
    ``every``. Null allowed where ``null``."""

    value: Spec
    keys: str | None = None
    every: bool = False
    null: bool = False

    def what(self) -> str:
        names = 'each joint' if self.every else ('joint names' if self.keys == 'joints' else 'names')
        return f'a mapping of {names} to {self.value.what()}' + (' or null' if self.null else '')

    def check(self, value, path, context) -> None:
        if value is None and self.null:
            return
        if not isinstance(value, dict):
            self.fail(value, path)
        joints = context.get('joints') if self.keys == 'joints' else None
        for key in value:
            if not isinstance(key, str):
                raise MismatchError(path, f'must have names as keys, got {shown(key)}')
            if joints is not None and key not in joints:
                raise MismatchError((*path, key), f'{path_text((*path, key))} is not a joint of the robot (its joints: '
                                             f'{_names(joints)})', named=True)
        if self.every and joints is not None:
            missing = [j for j in joints if j not in value]
            if missing:
                raise MismatchError(path, f'has no entry for {_names(missing)} (needs {self.value.what()} for each '
                                          'joint)')
        for key, element in value.items():
            self.value.check(element, (*path, key), context)


@dataclasses.dataclass(frozen=True)
class OneOf(Spec):
    """A value of the first of ``options`` it fits; ``name`` says what in messages."""

    options: tuple[Spec, ...]
    name: str

    def what(self) -> str:
        return self.name

    def check(self, value, path, context) -> None:
        for option in self.options:
            try:
                option.check(value, path, context)
                return
            except MismatchError:
                continue
        self.fail(value, path)


def vector(size: int, unit: str | None = None, null: bool = False, low: float | None = None) -> Items:
    """``size`` finite numbers (a point, an axis) in ``unit``."""
    return Items(Number(unit, low=low), length=size, null=null,
                 name=f'{size} {"finite numbers" if low is None else f"numbers >= {_bound(low)}"}'
                      + (f' [{unit}]' if unit else ''))


def matrix(rows: int | str | None, columns: int | str | None, unit: str | None = None, low: float | None = None,
           null: bool = False) -> Items:
    """A list of ``rows`` lists of ``columns`` numbers (``'joints'``: one per joint; None: any number)."""
    cell = Number(unit, low=low)
    return Items(Items(cell, length=columns), length=rows, null=null)


def check(document, spec: Spec, source: str, *, joints: Sequence[str] | None = None):
    """``document`` if it fits ``spec``; else InputError '<source>: <field> must be <what>, got <value>'.

    ``joints``: the robot's joint names, for specs of one value per joint. Returns the document unchanged.
    """
    try:
        spec.check(document, (), {'joints': tuple(joints) if joints is not None else None})
    except MismatchError as mismatch:
        where = path_text(mismatch.path)
        if mismatch.named:
            raise InputError(f'{source}: {mismatch.text}') from None
        raise InputError(f'{source}: {where} {mismatch.text}' if where else f'{source} {mismatch.text}') from None
    return document


# ------------------------------------------------------------------------------------------ from a settings class
def field_spec(field: dataclasses.Field, annotation, unknown: bool = False) -> Spec:
    """The spec of one field of a settings dataclass (:func:`dynid.settings.setting`), from its type and its
    metadata: unit, range, choices, the element type of a tuple. ``unknown``: a float may be null or NaN (not
    known), as the dataclasses of a result's sections write what they could not determine."""
    meta = field.metadata
    low, high = meta.get('range') or (None, None)
    null = False
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        arguments = [a for a in typing.get_args(annotation) if a is not type(None)]
        null = len(arguments) < len(typing.get_args(annotation))
        if len(arguments) != 1:
            raise TypeError(f'{field.name}: no spec for {annotation}')
        annotation = arguments[0]
        origin = typing.get_origin(annotation)
    choices = tuple(meta['choices']) if meta.get('choices') else None
    if annotation is bool:
        return Flag(null=null)
    if annotation is int:
        return Number(meta.get('unit'), low, high, integer=True, null=null)
    if annotation is float:
        return Number(meta.get('unit'), low, high, null=null or unknown, nan=unknown)
    if annotation is str:
        return Text(choices, null=null)
    if origin in (tuple, list):
        arguments = typing.get_args(annotation)
        item_type = arguments[0] if arguments else meta.get('items')
        if item_type is str:
            item = Text(choices)
        elif item_type in (int, float):
            item = Number(meta.get('unit'), low, high, integer=item_type is int)
        else:
            raise TypeError(f'{field.name}: no spec for {annotation}')
        fixed = len(arguments) if origin is tuple and not (len(arguments) == 2 and arguments[1] is Ellipsis) else None
        return Items(item, length=fixed, null=null)
    raise TypeError(f'{field.name}: no spec for {annotation}')


def settings_fields(settings_class, *, required: Sequence[str] = (), skip: Sequence[str] = (),
                    others: Spec | None = None, unknown: bool = False) -> Fields:
    """The fields of the settings dataclass ``settings_class`` as a :class:`Fields` spec: each optional (its default
    stands in) but those in ``required``; ``skip`` left out; ``others``: what other keys hold (None: refused);
    ``unknown``: floats may be null or NaN (:func:`field_spec`)."""
    hints = typing.get_type_hints(settings_class)
    specs = {f.name: field_spec(f, hints[f.name], unknown) for f in dataclasses.fields(settings_class)
             if f.name not in skip}
    return Fields(required={k: v for k, v in specs.items() if k in required},
                  optional={k: v for k, v in specs.items() if k not in required}, others=others)
