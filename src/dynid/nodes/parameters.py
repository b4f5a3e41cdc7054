"""Parameter descriptors shared by the nodes: ranges, choices and read-only flags, declared once."""

from __future__ import annotations

from rcl_interfaces.msg import FloatingPointRange, IntegerRange, ParameterDescriptor


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
