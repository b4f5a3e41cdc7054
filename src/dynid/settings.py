"""A job's settings as one frozen dataclass whose fields carry everything a front end needs.

Each field is made by :func:`setting`: its default, and in its metadata the description, the unit, the
range, the choices, the element type of a list that may be empty, and the name of the node parameter
when it differs from the field's. A node declares the fields as parameters
(:func:`dynid.ros.parameters.declare_settings`), the parameter page and the config-file test read the
node's declarations, and the core takes the settings object: one place for every default.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence

from dynid.errors import InputError, checked_choice


def setting(default, description: str, *, unit: str | None = None, low: float | None = None,
            high: float | None = None, choices: Sequence[str] | None = None, items: type | None = None,
            parameter: str | None = None, read_only: bool = False, factory: Callable[[], object] | None = None):
    """A settings field: ``default`` (a list becomes a tuple) and its metadata.

    ``unit`` is appended to the description ("[Hz]"); ``low``/``high`` the inclusive range; ``items``
    the element type (float, str) of a tuple setting, needed where the default is empty; ``parameter``
    the node parameter's name where it is not the field's; ``read_only``: read once at start-up;
    ``factory``: makes the default each time instead (``default`` is then what the description calls it).
    """
    if isinstance(default, list | tuple):
        default = tuple(default)
    if choices is not None and (isinstance(choices, list) or not isinstance(choices, Sequence)):
        choices = tuple(choices)  # a Sequence of its own (read at each use: registered names) is kept as it is
    metadata = {'description': description, 'unit': unit, 'range': None if low is None else (low, high),
                'choices': choices, 'items': items, 'parameter': parameter, 'read_only': read_only}
    if factory is not None:
        return dataclasses.field(default_factory=factory, metadata=metadata)
    return dataclasses.field(default=default, metadata=metadata)


#: what a joint map is (``--joint-map``, a node's ``joint_map``; :func:`dynid.model.naming.parse_joint_map`)
JOINT_MAP = ("NAME=MODEL_JOINT,...: the names the driver gives the model's joints where they differ (a built-in "
             "robot on a driver that names its joints otherwise); the vendors' prefixes need none")


@dataclasses.dataclass(frozen=True)
class RobotSettings:
    """The robot every job runs on, the same fields for each front end: the command line's ``--robot`` and the
    nodes' robot group (each node declares those it takes, read-only)."""

    robot: str = setting('ur5e', 'built-in robot name, URDF path or dynid robot file', read_only=True)
    robot_description: str = setting('', 'URDF XML; used instead of robot when not empty', read_only=True)
    joints: tuple[str, ...] = setting((), "joints to model: one serial chain of a description that branches (e.g. a "
                                          "mobile manipulator's arm), the others locked; unset: all (estimator_node: "
                                          "those of the result's identification)", items=str, read_only=True)
    joint_map: str = setting('', JOINT_MAP, read_only=True)


def description(field: dataclasses.Field) -> str:
    """The field's description with its unit."""
    unit = field.metadata.get('unit')
    return f'{field.metadata["description"]} [{unit}]' if unit else field.metadata['description']


def parameter_name(field: dataclasses.Field) -> str:
    """The node parameter that sets ``field``."""
    return field.metadata.get('parameter') or field.name


def from_values(settings_class, value: Callable[[str], object]):
    """``settings_class`` from ``value(parameter name)`` (None: not given, the field's default); lists
    become tuples."""
    values = {}
    for field in dataclasses.fields(settings_class):
        given = value(parameter_name(field))
        if given is not None:
            values[field.name] = tuple(given) if isinstance(given, list | tuple) else given
    return settings_class(**values)


def check_settings(settings) -> None:
    """InputError naming the field where a value of ``settings`` (a dataclass of :func:`setting` fields) is not
    one of its choices, lies outside its inclusive range, or is not of its default's kind (true/false, integer)."""
    for field in dataclasses.fields(settings):
        value, meta, default = getattr(settings, field.name), field.metadata, field.default
        if isinstance(default, bool):
            if not isinstance(value, bool):
                raise InputError(f'{field.name} must be true or false, got {value!r}')
            continue
        if meta.get('choices'):
            checked_choice(field.name, value, meta['choices'])
        if isinstance(default, int | float) and meta.get('range'):
            low, high = meta['range']
            if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) \
                    or not low <= value <= high:
                raise InputError(f'{field.name} must be within [{low:g}, {high:g}], got {value!r}')
            if isinstance(default, int) and int(value) != value:
                raise InputError(f'{field.name} must be an integer, got {value!r}')
