"""Parameter descriptors shared by the nodes: ranges, choices and read-only flags, declared once; and the
declaration of a core settings object's fields as parameters (:func:`declare_settings`).

Also :func:`declarer`: ``declare_parameter`` for a node whose floating-point parameters take
integers too. ROS types parameter values by their spelling: ``rate:=200`` on a command line or in a
launch file, or ``payload_mass: 2`` in a parameter file, is an integer, and rclpy refuses an integer
for a parameter declared with a float default (``InvalidParameterTypeException``, a traceback).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from rcl_interfaces.msg import FloatingPointRange, IntegerRange, ParameterDescriptor
from rclpy.exceptions import ParameterUninitializedException
from rclpy.node import Node
from rclpy.parameter import Parameter

from dynid.identify.registry import flag_entries, flagged_options
from dynid.settings import RobotSettings, description, from_values, parameter_name


def descriptor(description: str, read_only: bool = False, low: float | None = None, high: float | None = None,
               integer: bool = False, choices=None) -> ParameterDescriptor:
    """A ParameterDescriptor with an optional [low, high] range (integer or floating point).

    ``choices`` are listed in the description (rclpy has no enumeration; the node checks them).
    """
    if choices is not None:
        description = f'{description} ({", ".join(choices)})'
    result = ParameterDescriptor(description=description, read_only=read_only)
    if low is not None:
        if integer:
            result.integer_range = [IntegerRange(from_value=int(low), to_value=int(high), step=1)]
        else:
            result.floating_point_range = [FloatingPointRange(from_value=float(low), to_value=float(high))]
    return result


def value_or(node: Node, name: str, default=None):
    """A parameter's value; ``default`` for one declared without a default (a type) and not given."""
    try:
        return node.get_parameter(name).value
    except ParameterUninitializedException:
        return default


def _as_double(parameter: Parameter) -> Parameter:
    if parameter.type_ == Parameter.Type.INTEGER:
        return Parameter(parameter.name, Parameter.Type.DOUBLE, float(parameter.value))
    if parameter.type_ == Parameter.Type.INTEGER_ARRAY:
        return Parameter(parameter.name, Parameter.Type.DOUBLE_ARRAY, [float(v) for v in parameter.value])
    return parameter


def declarer(node: Node) -> Callable:
    """``node.declare_parameter``, except that a float parameter accepts an integer value.

    At declaration an integer override (command line, launch file, parameter file) of a parameter
    whose default is a float (or a list of floats) becomes that float; later ``set_parameters``
    calls (``ros2 param set /sim_node payload_mass 2``) are converted the same way by a pre-set
    callback, registered once per node. Everything else, ranges included, is checked by rclpy as usual.
    """
    # rclpy keeps the node's overrides (command line and files, merged) here; it has no public accessor.
    overrides = getattr(node, '_parameter_overrides', {})
    if not getattr(node, '_dynid_integer_floats', False):
        node._dynid_integer_floats = True

        def convert(parameters: list[Parameter]) -> list[Parameter]:
            return [_as_double(p) if node.has_parameter(p.name) and node.get_parameter(p.name).type_ in (
                Parameter.Type.DOUBLE, Parameter.Type.DOUBLE_ARRAY) else p for p in parameters]

        node.add_pre_set_parameters_callback(convert)

    def declare(name: str, value=None, parameter_descriptor: ParameterDescriptor | None = None, **kwargs):
        floats = isinstance(value, float) or value == Parameter.Type.DOUBLE_ARRAY or (
            isinstance(value, (list, tuple)) and value and all(isinstance(v, float) for v in value))
        if floats and name in overrides:
            overrides[name] = _as_double(overrides[name])
        if parameter_descriptor is None:
            return node.declare_parameter(name, value, **kwargs)
        return node.declare_parameter(name, value, parameter_descriptor, **kwargs)

    return declare


def declare_settings(node: Node, settings_class, read_only: bool = False, names=None, defaults=None) -> None:
    """Declare every field of the frozen settings dataclass ``settings_class`` (:mod:`dynid.settings`) as a
    parameter of ``node``: its default, description (with unit), range and choices; a tuple whose default
    is empty is declared unset, typed by its ``items``. ``read_only``: every one is read-only. ``names``: only
    these fields (the rest are not the node's to set). ``defaults``: {field: value} where this node's default is
    another than the field's."""
    declare = declarer(node)
    types = {float: Parameter.Type.DOUBLE_ARRAY, str: Parameter.Type.STRING_ARRAY, int: Parameter.Type.INTEGER_ARRAY,
             bool: Parameter.Type.BOOL_ARRAY}
    for field in dataclasses.fields(settings_class):
        if names is not None and field.name not in names:
            continue
        meta, default = field.metadata, (defaults or {}).get(field.name, field.default)
        low, high = meta.get('range') or (None, None)
        integer = isinstance(default, int) and not isinstance(default, bool)
        value = (list(default) or types[meta['items']]) if isinstance(default, tuple) else default
        declare(parameter_name(field), value, descriptor(description(field), read_only or meta.get('read_only', False),
                                                         low, high, integer, meta.get('choices')))


def declare_method_options(node: Node) -> None:
    """Declare each registered method's option with a flag (:func:`dynid.identify.registry.flagged_options`) as a
    parameter of its name: ``weight_function`` (irls, iirls), ``fix_drive_gain`` (tls, mls; a list option is a string
    array, unset by default); :func:`method_option_entries` reads them."""
    declare = declarer(node)
    for option, methods in flagged_options():
        value = (list(option.default) or Parameter.Type.STRING_ARRAY) if option.type == 'list' else option.default
        unit = f' [{option.unit}]' if option.unit else ''
        declare(option.name, value, descriptor(f'{option.help}{unit}; an option of {", ".join(methods)}', False,
                                               option.low, option.high, option.type == 'int',
                                               option.choices or None))


def method_option_entries(node: Node) -> list[str]:
    """``NAME=VALUE`` entries (:func:`dynid.identify.registry.flag_entries`) of the parameters
    :func:`declare_method_options` declared, those set to other than the option's default: a value at its default is
    not told from one left alone, so it is not given (the method's default applies). InputError naming an option
    whose value its declaration refuses."""
    values = {}
    for option, _ in flagged_options():
        value = value_or(node, option.name)
        given = value is not None and option.parsed(list(value) if option.type == 'list' else value) != option.default
        values[option.name] = value if given else None
    return flag_entries(values)


def check_method_option(name: str, value) -> None:
    """InputError where ``value`` is not one the flagged method option ``name`` takes (nothing for another
    parameter): a parameter set is refused at once, as a choice is."""
    for option, _ in flagged_options():
        if option.name == name:
            option.parsed(list(value) if option.type == 'list' else value)


def method_option_spelling(spelling: dict[str, str]) -> dict[str, str]:
    """``spelling`` (how a node writes the settings an advice names) with each flagged method option as the parameter
    :func:`declare_method_options` declares (``fix_drive_gain:=``)."""
    return {**spelling, **{option.name: f'{option.name}:=' for option, _ in flagged_options()}}


def declare_robot(node: Node, names=('robot', 'robot_description', 'joints', 'joint_map')) -> RobotSettings:
    """Declare the robot group's fields ``names`` (:class:`dynid.settings.RobotSettings`, read-only) as parameters
    of ``node``; their values (the others at their defaults)."""
    declare_settings(node, RobotSettings, names=names)
    return from_values(RobotSettings, lambda name: value_or(node, name) if name in names else None)
