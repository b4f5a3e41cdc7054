"""A Feedforward from flat settings (a node's parameters), checked with reasons; and its breakdown by term.

:class:`FeedforwardSettings` holds every setting of a feedforward with its default, description and range:
the robot, the result file, the terms and their options as YAML, the backend flags, the command joints'
order, the mode and the stream's timing. It is the one source of them: feedforward_node declares its
parameters from it (:func:`dynid.ros.parameters.declare_settings`), ``from_parameters`` reads them back,
and the config files are checked against the node (test_config_files). ``build()`` loads and checks them together
(a result of another robot or of other joints, unknown terms, a friction term without a result are
refused with an :class:`~dynid.errors.InputError` naming the setting) and returns the robot, the
:class:`~dynid.control.Feedforward` and the command order.

:func:`term_rms` says what each configured term contributes over a stretch of motion: each evaluated
alone (batch, memory from its undeformed state), with τ_J,d from the rigid-body term when configured.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import yaml

from dynid.control.context import FeedforwardContext
from dynid.control.feedforward import DEFAULT_TERMS, Feedforward
from dynid.control.plugins import TermNames
from dynid.errors import InputError
from dynid.identify import IdentificationResult
from dynid.model import load_robot
from dynid.model.description import missing_effort_commands
from dynid.payload.document import load_payload
from dynid.settings import JOINT_MAP, RobotSettings, from_values, setting


@dataclass(frozen=True)
class Configured:
    """What :meth:`FeedforwardSettings.build` makes: the robot, its feedforward, the command order
    (model indices in the controller's joint order) and a one-line description of the source."""

    robot: object
    feedforward: Feedforward
    order: list[int]
    source: str


MODES = ('trajectory', 'streaming', 'measured')
ACCELERATIONS = ('zero', 'estimated')


@dataclass(frozen=True)
class FeedforwardSettings:
    """Every setting of a feedforward (feedforward_node's parameters, docs/nodes/parameters.md), with its
    default: the one source of them (module docstring). Units as in :class:`Feedforward`."""

    robot: str = setting(RobotSettings.robot, 'robot name, URDF path or robot file')
    robot_description: str = setting('', 'URDF XML, preferred when set')
    joint_map: str = setting('', JOINT_MAP)
    result_file: str = setting('', 'identification result (YAML) of this robot; empty: the model\'s own parameters, '
                                   'no friction')
    mode: str = setting('trajectory', 'what is commanded', choices=MODES)
    terms: tuple[str, ...] = setting(DEFAULT_TERMS, 'feedforward terms (entry points dynid.feedforward_terms); '
                                                    'name? runs where it can be built, else is left out with a '
                                                    'warning, as the default does with friction_static (no friction '
                                                    'model) and rotor_inertia (no drive data)',
                                  choices=TermNames())  # the registered terms, read at each use
    term_options: str = setting('', 'YAML {term: {option: value}}, e.g. "rigid_body: {payload: {mass: 2.0, '
                                    'com: [0, 0, 0.05]}}"')
    compensate_gravity: bool = setting(True, 'include gravity (false: UR, Franka compensate it)')
    compensate_friction: bool = setting(True, 'include friction (false: the robot compensates it)')
    effort_is_current: bool = setting(False, 'command motor current [A] = torque / drive gain (UR)')
    drive_gains: tuple[float, ...] = setting((), 'drive gains [N·m/A] per joint for effort_is_current; unset: the '
                                                 'result\'s', items=float)
    rate_limit: float = setting(0.0, 'largest effort change [N·m/s]; 0: none', low=0.0, high=1e7)
    controller: str = setting('joint_trajectory_controller', 'joint_trajectory_controller (trajectory mode)')
    effort_controller: str = setting('forward_effort_controller', 'forward_command_controller with interface effort '
                                                                  '(streaming, measured)')
    joints: tuple[str, ...] = setting((), 'the effort controller\'s joints order; unset: the robot\'s', items=str)
    rate_hz: float = setting(200.0, 'stream rate, and the trajectory mode\'s evaluation grid', unit='Hz', low=1.0,
                             high=2000.0, parameter='rate')
    effort_tolerance: float = setting(0.5, 'trajectory mode: largest miss of the linearly interpolated effort [N·m, '
                                           'or A]', low=1e-6, high=1e4)
    reference_correction: bool = setting(False, 'trajectory mode: add the flexible-joint deflection φ_d to the '
                                                'positions (motor-side reference; needs the flexible_joint term; only '
                                                'for controllers that regulate the motor position)')
    timeout_s: float = setting(0.1, 'joint_states silent this long [s]: stale, zeros', low=0.005, high=10.0,
                               parameter='timeout')
    acceleration: str = setting('zero', 'measured mode: q̈', choices=ACCELERATIONS)
    payload_file: str = setting('', 'payload file (dynid payload -o, dynid_payload: 1) the rigid-body model carries; '
                                    'empty: none')
    payload_topic: str = setting('', 'payload files (std_msgs/String YAML, transient local, e.g. '
                                     '/identifier_node/payload), each replacing the payload; empty: none')
    adaptive_topic: str = setting('estimator_node/friction', 'the estimator\'s friction table (α̂ of '
                                                             'friction_adaptive); empty: none')
    ur_friction_model_service: str = setting('', "UR's FrictionModelController service: its friction scales set at "
                                                 'configure (0 where this feedforward compensates friction; needs '
                                                 'ur_msgs); empty: not called')
    ur_gravity_service: str = setting('', "UR's GravityUpdateController ~/set_gravity: the robot model's gravity "
                                          'vector at configure where it is not straight down (needs ur_msgs); empty: '
                                          'not called')

    @classmethod
    def from_parameters(cls, value: Callable[[str], object]) -> FeedforwardSettings:
        """The settings of feedforward_node's parameters: ``value(name)`` is a parameter's value, None for an
        array parameter left unset (``drive_gains``, ``joints``)."""
        return from_values(cls, value)

    def options(self) -> dict:
        try:
            options = yaml.safe_load(self.term_options) or {}
        except yaml.YAMLError as error:
            raise InputError(f'term_options is not YAML: {error}') from None
        if not isinstance(options, dict):
            raise InputError(f'term_options must be a YAML mapping {{term: {{option: value}}}}, got {options!r}')
        return options

    def build(self, warn: Callable[[str], None] | None = None) -> Configured:
        """The robot, its Feedforward and the command order; ``warn`` is told what the Feedforward warns about
        (:class:`Feedforward`; default: Python warnings)."""
        terms = list(self.terms)
        names = [term.rstrip('?') for term in terms]
        if not terms or len(set(names)) != len(names) or not all(names):
            raise InputError(f'terms must name distinct feedforward terms, got {terms}')
        options = self.options()
        robot = load_robot(self.robot_description or self.robot, joint_map=self.joint_map)
        names = list(robot.joint_names)
        description = self.robot_description or self.robot
        missing = missing_effort_commands(description, names) if description.lstrip().startswith('<') else None
        if missing:  # every mode sends efforts: a hardware without effort commands takes none of them
            raise InputError(f'robot_description gives joints {missing} no effort command interface (its '
                             f'<ros2_control> block): the controller cannot take the feedforward\'s efforts')
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
                drive_gains=list(self.drive_gains) or None, rate_limit=self.rate_limit or None, rate_hz=self.rate_hz,
                warn=warn)
        except InputError as error:
            raise InputError(f'terms {terms}: {error}') from None
        source = f'{robot.name}, ' + (f'result {self.result_file}' if self.result_file else 'model parameters')
        if self.payload_file:
            payload = load_payload(self.payload_file, robot)
            feedforward.set_payload(payload)
            source += f', payload {payload.mass:.4g} kg from {self.payload_file}'
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
