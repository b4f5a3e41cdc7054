"""What a feedforward term is, and the option checks every term factory shares.

A term turns N samples of the desired motion into a torque [N·m, link side, model joint order]:

    term.evaluate(q, dq, ddq, context) -> (N, n)      q, q̇, q̈: (N, n) [rad, rad/s, rad/s²]
    term.step(q, dq, ddq, context)     -> (n,)        one sample; a term with memory advances it
    term.reset()                                       back to the state before the first step

``evaluate`` of a term with memory (E-GMS, flexible joint) runs the batch from the state :meth:`reset`
gives, and leaves the streaming state alone: stepping sample after sample from a reset gives the rows
of ``evaluate``. Terms are built by a **factory** ``factory(robot, result, options) -> term`` (robot: a
:class:`~dynid.model.RobotModel`; result: an :class:`~dynid.identify.result.result.IdentificationResult` or
None; options: a mapping, checked by the factory) that a :class:`~dynid.control.plugins.TermPlugin` holds under
the term's name, in the entry-point group ``dynid.feedforward_terms`` (:mod:`dynid.control.plugins`).

Subclassing :class:`FeedforwardTerm` is optional (the Feedforward reads the attributes with defaults):

- ``friction`` (False): the torque is friction; left out where the backend compensates friction.
- ``needs_joint_torque`` (False): the term reads ``context.desired_joint_torque`` (τ_J,d).
- ``provides_joint_torque`` (False): the term's torque *is* τ_J,d (the rigid-body model, gravity
  included); the Feedforward passes it on instead of computing τ_J,d a second time.
- ``gravity(q, context) -> (N, n) or (n,)``: the gravity part of the term's torque, subtracted where
  the backend compensates gravity itself.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from dynid.control.context import FeedforwardContext
from dynid.errors import InputError

#: Options the Feedforward passes to every factory (a term that does not use them ignores them).
COMMON_OPTIONS = ('rate_hz',)
#: Sample rate [Hz] of a term built without one: the thesis' 1 kHz loop, as a library user runs it beside
#: ros2_control. feedforward_node always passes its own ``rate`` (FeedforwardSettings, 200 Hz by default: the rate
#: a Python node streams at), so this default is not the node's.
DEFAULT_RATE_HZ = 1000.0


class FeedforwardTerm:
    """Base of the built-in terms (module docstring). Memoryless terms step through ``evaluate``."""

    name = ''
    friction = False
    needs_joint_torque = False
    provides_joint_torque = False

    def evaluate(self, q: np.ndarray, dq: np.ndarray, ddq: np.ndarray,
                 context: FeedforwardContext) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def step(self, q: np.ndarray, dq: np.ndarray, ddq: np.ndarray, context: FeedforwardContext) -> np.ndarray:
        """One sample (n,) through :meth:`evaluate`."""
        return self.evaluate(q[None], dq[None], ddq[None], context)[0]

    def reset(self) -> None:
        """Nothing to forget (memoryless)."""

    def __repr__(self) -> str:
        return f'{type(self).__name__}({self.name!r})'


def term_options(term: str, options: Mapping | None, defaults: dict) -> dict:
    """``defaults`` updated with ``options``; unknown names are refused, naming the term and the known ones."""
    if options is None:
        options = {}
    if not isinstance(options, Mapping):
        raise InputError(f'{term}: options must be a mapping of name: value, got {type(options).__name__}')
    unknown = sorted(set(options) - set(defaults) - set(COMMON_OPTIONS))
    if unknown:
        raise InputError(f'{term}: unknown option(s) {unknown}; known: {sorted(defaults)}')
    return {**defaults, **{key: value for key, value in options.items() if key in defaults}}


def per_joint(value, joint_names, what: str, minimum: float | None = None, strict: bool = False) -> np.ndarray:
    """One finite float per joint (n,) from a scalar, a list in joint order or a {joint: value} mapping.

    ``minimum``: values must be >= minimum (> minimum with ``strict``).
    """
    names = tuple(joint_names)
    if isinstance(value, Mapping):
        missing = [name for name in names if name not in value]
        extra = sorted(set(value) - set(names))
        if missing or extra:
            raise InputError(f'{what}: give a value for every joint {list(names)}'
                             + (f'; missing {missing}' if missing else '') + (f'; unknown {extra}' if extra else ''))
        value = [value[name] for name in names]
    try:
        array = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        array = None
    if array is not None and array.ndim == 0:
        array = np.full(len(names), float(array))
    if array is None or array.shape != (len(names),) or not np.all(np.isfinite(array)):
        raise InputError(f'{what}: expected a finite number or one per joint ({len(names)}), got {value!r}')
    if minimum is not None and (np.any(array <= minimum) if strict else np.any(array < minimum)):
        raise InputError(f'{what} must be {">" if strict else ">="} {minimum:g} for every joint, got {array.tolist()}')
    return array


def finite(value, what: str) -> float:
    """A finite number."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        number = float('nan')
    if not np.isfinite(number):
        raise InputError(f'{what} must be a finite number, got {value!r}')
    return number


def flag(value, what: str) -> bool:
    """A boolean (not a truthy string or number)."""
    if not isinstance(value, (bool, np.bool_)):
        raise InputError(f'{what} must be true or false, got {value!r}')
    return bool(value)

