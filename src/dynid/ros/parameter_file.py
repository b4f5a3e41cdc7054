"""A ROS 2 parameter file (``--params-file``, a launch file's ``params_file``) checked against the parameters a dynid
node declares, before it runs: a misspelt parameter in the node's own section would otherwise be ignored without a
word, and a value of the wrong type ends the node in rclpy's traceback.

The file's shape is ROS's (rcl_yaml_param_parser): a mapping of node names (``/ns/node``, ``node``, or patterns with
``*`` for one name and ``**`` for any names) to ``{ros__parameters: {name: value}}``. The parameters a node declares
(their types and ranges come from the core's settings classes: :func:`dynid.ros.parameters.declare_settings`) are
its description: a section that names the node (its last part is the node's name) may set only those; a section
for every node (``/**``) may set any, and those the node declares are checked. A value must have the declared type
(an integer stands for a float, as :func:`dynid.ros.parameters.declarer` takes it) and lie within the declared range.

    >>> check_parameter_file('config/suite.yaml', '/sim_node', declared_parameters(node))   # doctest: +SKIP
"""

from __future__ import annotations

import difflib
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass

from dynid.errors import InputError
from dynid.files import read_yaml

#: rcl's parameter types by the names the parameter page uses (rcl_interfaces/ParameterType)
TYPES = {1: 'bool', 2: 'integer', 3: 'double', 4: 'string', 5: 'byte[]', 6: 'bool[]', 7: 'integer[]',
         8: 'double[]', 9: 'string[]'}


@dataclass(frozen=True)
class Declared:
    """A parameter as a node declares it: its type (:data:`TYPES`' names), its inclusive range or None."""

    type: str
    low: float | None = None
    high: float | None = None


def declared_parameters(node) -> dict[str, Declared]:
    """{name: :class:`Declared`} of every parameter ``node`` (an rclpy Node) has declared."""
    names = sorted(node._parameters)  # rclpy's own table; the node's public accessors copy it one by one
    found = {}
    for name, descriptor in zip(names, node.describe_parameters(names), strict=True):
        bounds = list(descriptor.floating_point_range) + list(descriptor.integer_range)
        low, high = (bounds[0].from_value, bounds[0].to_value) if bounds else (None, None)
        found[name] = Declared(TYPES.get(descriptor.type, 'unknown'), low, high)
    return found


def parameter_files(arguments) -> list[str]:
    """The ``--params-file`` values among ROS arguments (``--ros-args ... --params-file FILE ...``)."""
    arguments = list(arguments or ())
    return [arguments[k + 1] for k, word in enumerate(arguments[:-1]) if word == '--params-file']


def _matches(pattern: list[str], name: list[str]) -> bool:
    """Whether a node name (its parts) matches a section's pattern (``*``: one part, ``**``: any parts)."""
    if not pattern:
        return not name
    if pattern[0] == '**':
        return any(_matches(pattern[1:], name[k:]) for k in range(len(name) + 1))
    return bool(name) and pattern[0] in ('*', name[0]) and _matches(pattern[1:], name[1:])


def sections(document: Mapping, node: str) -> list[tuple[str, Mapping, bool]]:
    """(section, its parameters, whether it names the node itself) of each section of a parameter file
    (:func:`read_parameter_file`) that applies to the node of fully qualified name ``node`` (``/ns/name``)."""
    found = []
    parts = [p for p in node.split('/') if p]
    for key, parameters in document.items():
        pattern = [p for p in str(key).split('/') if p]  # a name without its leading '/' is one from the root (rcl)
        if not pattern or not _matches(pattern, parts):
            continue
        found.append((str(key), parameters, pattern[-1] not in ('*', '**')))
    return found


def _flat(parameters: Mapping, where: str, prefix: str = '') -> dict:
    """Parameters as rcl reads them: a nested mapping's keys joined by dots (``overruns: {manage: false}``)."""
    flat = {}
    for name, value in parameters.items():
        if not isinstance(name, str) or not name:
            raise InputError(f'{where}: {name!r} is not a parameter name')
        if isinstance(value, dict):
            flat.update(_flat(value, where, f'{prefix}{name}.'))
        else:
            flat[prefix + name] = value
    return flat


def read_parameter_file(path: str | os.PathLike) -> dict[str, dict]:
    """The parameter file at ``path`` as {node name or pattern: {parameter: value}}, its nested names joined as rcl
    joins them (``/**: {controller_manager: {ros__parameters: ...}}`` is the section ``/**/controller_manager``;
    nested parameter names with dots); InputError naming the file and the section otherwise."""
    document = read_yaml(path, 'parameter file')
    if not isinstance(document, dict) or not document:
        raise InputError(f'parameter file {path}: must be a mapping of node names to {{ros__parameters: ...}}')
    found = {}

    def walk(mapping, name: str) -> None:
        for key, body in mapping.items():
            if key == 'ros__parameters':
                if not isinstance(body, dict) or not name:
                    raise InputError(f'parameter file {path}: {name or key}: ros__parameters must be a mapping of '
                                     'names to values under a node name')
                found[name] = _flat(body, f'parameter file {path}: {name}')
                continue
            if not isinstance(key, str) or not key.strip('/') or key.startswith('/') and name:
                raise InputError(f'parameter file {path}: {key!r} is not a node name')
            section = f'{name}/{key.strip("/")}' if name else key
            if not isinstance(body, dict) or not body:
                raise InputError(f'parameter file {path}: {section} must be a mapping {{ros__parameters: {{name: '
                                 'value}}}} (or of nodes in its namespace)')
            walk(body, section)

    walk(document, '')
    return found


def _fits(value, declared: Declared) -> bool:
    kind = declared.type
    if kind.endswith('[]'):
        return isinstance(value, list) and all(_fits(v, Declared(kind[:-2], declared.low, declared.high))
                                               for v in value)
    if kind == 'bool':
        return isinstance(value, bool)
    if kind == 'string':
        return isinstance(value, str)
    if isinstance(value, bool) or not isinstance(value, int | float) or (kind == 'integer' and
                                                                         not isinstance(value, int)):
        return False
    if kind == 'double' and not math.isfinite(value):
        return False
    return (declared.low is None or value >= declared.low) and (declared.high is None or value <= declared.high)


def _what(declared: Declared) -> str:
    kind = {'double': 'a number', 'integer': 'an integer', 'bool': 'true or false', 'string': 'a text'}.get(
        declared.type.removesuffix('[]'), declared.type)
    if declared.low is not None:
        kind += f' in [{declared.low:g}, {declared.high:g}]'
    return f'a list of {kind.removeprefix("a ").removeprefix("an ")}s' if declared.type.endswith('[]') else kind


def check_parameter_file(path: str | os.PathLike, node: str, declared: Mapping[str, Declared]) -> None:
    """InputError naming the file, the section and the parameter where the parameter file ``path`` sets, for the
    node of fully qualified name ``node``, a parameter it does not declare (in a section that names it) or a value
    that is not of the declared type and range (module docstring)."""
    name = node.rsplit('/', 1)[-1]
    for section, parameters, own in sections(read_parameter_file(path), node):
        for key, value in parameters.items():
            if key not in declared:
                if own:
                    close = difflib.get_close_matches(key, list(declared), 1)
                    raise InputError(f'parameter file {path}: {section}: {name} has no parameter {key!r}'
                                     + (f' (did you mean {close[0]!r}?)' if close else ''))
                continue
            if declared[key].type != 'unknown' and not _fits(value, declared[key]):
                raise InputError(f'parameter file {path}: {section}: {key} must be {_what(declared[key])} for '
                                 f'{name}, got {value!r:.60}')
