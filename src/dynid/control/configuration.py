"""A Feedforward from flat settings (a node's parameters), checked with reasons; and its breakdown by term.

:class:`FeedforwardSettings` holds what a user writes in a parameter file: the robot, the result file,
the term names, the terms' options as YAML, the backend flags, the command joints' order
(``from_parameters``: from feedforward_node's parameters). ``build()`` loads and checks them together
(a result of another robot or of other joints, unknown terms, a friction term without a result are
refused with an :class:`~dynid.errors.InputError` naming the setting) and returns the robot, the
:class:`~dynid.control.Feedforward` and the command order.

:func:`term_rms` says what each configured term contributes over a stretch of motion: each evaluated
alone (batch, memory from its undeformed state), with τ_J,d from the rigid-body term when configured.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import yaml

from dynid.control.context import FeedforwardContext
from dynid.control.feedforward import Feedforward
from dynid.errors import InputError
from dynid.identify.result import IdentificationResult
from dynid.model import load_robot


@dataclass(frozen=True)
class Configured:
    """What :meth:`FeedforwardSettings.build` makes: the robot, its feedforward, the command order
    (model indices in the controller's joint order) and a one-line description of the source."""

    robot: object
    feedforward: Feedforward
    order: list[int]
    source: str


@dataclass(frozen=True)
class FeedforwardSettings:
    """Flat settings of a feedforward (module docstring); units as in :class:`Feedforward`.

    ``robot``: robot name, URDF path, robot file or URDF XML. ``result_file``: '' for none.
    ``term_options``: YAML {term: {option: value}} or ''. ``drive_gains``: empty for the result's.
    ``rate_limit`` [N·m/s]: 0 for none. ``joints``: the controller's joint order, empty for the robot's.
    """

    robot: str = 'ur5e'
    result_file: str = ''
    terms: tuple[str, ...] = ('rigid_body', 'rotor_inertia', 'friction_static')
    term_options: str = ''
    compensate_gravity: bool = True
    compensate_friction: bool = True
    effort_is_current: bool = False
    drive_gains: tuple[float, ...] = ()
    rate_limit: float = 0.0
    rate_hz: float = 500.0
    joints: tuple[str, ...] = field(default=())

    @classmethod
    def from_parameters(cls, value: Callable[[str], object]) -> FeedforwardSettings:
        """The settings of feedforward_node's parameters (docs/nodes/parameters.md): ``value(name)`` is a
        parameter's value, None for an array parameter left unset (``drive_gains``, ``joints``)."""
        return cls(value('robot_description') or value('robot'), value('result_file'), tuple(value('terms')),
                   value('term_options'), value('compensate_gravity'), value('compensate_friction'),
                   value('effort_is_current'), tuple(value('drive_gains') or ()), value('rate_limit'), value('rate'),
                   tuple(value('joints') or ()))

    def options(self) -> dict:
        try:
            options = yaml.safe_load(self.term_options) or {}
        except yaml.YAMLError as error:
            raise InputError(f'term_options is not YAML: {error}') from None
        if not isinstance(options, dict):
            raise InputError(f'term_options must be a YAML mapping {{term: {{option: value}}}}, got {options!r}')
        return options

    def build(self) -> Configured:
        terms = list(self.terms)
        if not terms or len(set(terms)) != len(terms) or not all(terms):
            raise InputError(f'terms must name distinct feedforward terms, got {terms}')
        options = self.options()
        robot = load_robot(self.robot)
        names = list(robot.joint_names)
        result = IdentificationResult.load(self.result_file) if self.result_file else None
        if result is not None and result.robot != robot.name:
            raise InputError(f'result_file {self.result_file} identifies robot {result.robot!r}, not {robot.name!r}')
        if result is not None and list(result.joint_names) != names:
            raise InputError(f'result_file {self.result_file} is for joints {list(result.joint_names)}, the robot '
                             f'{robot.name!r} has {names}')
        joints = list(self.joints) or names
        if sorted(joints) != sorted(names):
            raise InputError(f'joints {joints} must name the robot\'s joints {names} (any order)')
        try:
            feedforward = Feedforward(
                robot, result, terms, options, compensate_gravity=self.compensate_gravity,
                compensate_friction=self.compensate_friction, effort_is_current=self.effort_is_current,
                drive_gains=list(self.drive_gains) or None, rate_limit=self.rate_limit or None, rate_hz=self.rate_hz)
        except InputError as error:
            raise InputError(f'terms {terms}: {error}') from None
        source = f'{robot.name}, ' + (f'result {self.result_file}' if self.result_file else 'model parameters')
        return Configured(robot, feedforward, [names.index(name) for name in joints], source)


def term_rms(feedforward: Feedforward, q: np.ndarray, dq: np.ndarray, ddq: np.ndarray,
             context: FeedforwardContext | None = None) -> dict[str, float]:
    """{term: RMS over the samples of its torque alone [N·m], the largest joint} for (N, n) motion."""
    context = (context or FeedforwardContext()).checked(q.shape[0], feedforward.n).copy()
    rigid = feedforward.terms.get('rigid_body')
    if rigid is not None:
        context.desired_joint_torque = rigid.evaluate(q, dq, ddq, context)
    values = {}
    for name, term in feedforward.terms.items():
        torque = context.desired_joint_torque if term is rigid else term.evaluate(q, dq, ddq, context)
        values[name] = float(np.sqrt(np.mean(np.square(torque), axis=0)).max()) if len(q) else 0.0
    return values
