"""What the caller asks of an identification, and what the identification settles before any equation is built.

- :class:`ModelSpec`: the model to identify (friction law, torque source, rotor, joints left out), ``auto`` where the
  model choice decides (:mod:`dynid.identify.steps.choose`); :class:`RecordingInput`: one recording and what is known
  of its payload; :class:`IdentifyOptions`: the solver (method, robust weights, the load loop, the prior and physical
  consistency).
- :func:`settle`: the search the caller left open, as one frozen :class:`Request`: the superset law whose columns hold
  every candidate of an open law, the optional terms the choice may try, whether the rotor inertias' excess is a
  candidate, the method to start from, and the changes the method makes to the caller's choices (I-IRLS identifies
  the comprehensive law: Li et al. 2024, eq. (3)).
"""

from __future__ import annotations

import dataclasses
from dataclasses import asdict, dataclass, field

import numpy as np

from dynid.errors import InputError, checked_choice
from dynid.friction.laws import added_law_names, friction_law
from dynid.friction.power_law import POWER_FORMS
from dynid.identify.choices import AUTO, FRICTION_MODELS, METHODS, TORQUE_SOURCES
from dynid.identify.registry import (
    REGULARIZED_METHOD,
    START_METHOD,
    identification_method,
    identification_methods,
    refuse_undeclared,
    spoken,
)
from dynid.identify.solve.physical import PhysicalSettings, physical_methods_only
from dynid.identify.solve.solvers import NOISE_FLOOR_FRACTION
from dynid.io.dataset import Dataset
from dynid.model.inertial import Payload

# Hamon 2010 eq. (30): the columns of am1_j and ag1_j are P⁺·τ_out,j and P⁻·τ_out,j (P⁺ + P⁻ = 1), and τ_out
# is the model's own torque W_rigid·χ₀: adding ε·χ₀ to the rigid-body parameters and −ε to every am1_j and
# ag1_j leaves every torque unchanged. Structural, so no trajectory helps; only a known payload's torque in
# τ_out (a run with a known mass) lies outside W_rigid's span and fixes the scale.
HAMON_SCALE_DEPENDENCY = (
    "Hamon's efficiency terms (am1_j, ag1_j: torque proportional to the output torque τ_out) trade against the "
    "overall scale of the rigid-body parameters, because τ_out is the model's own torque: the dependency is "
    "structural and no excitation separates them. Only runs with a known payload mass do: record runs with "
    "different known payloads (e.g. dynid simulate --payload, or dynid excite --experiment payload_schedule) and "
    "give them with {payload_mass} (e.g. 0,3.5,7.5 kg)")
#: The temperature friction term is a candidate of the model choice only where every joint's temperature spans at
#: least this much [°C] over the recordings (its three columns are one below: β1 + β2·T + β3·T⁻³ at a constant T).
TEMPERATURE_SPAN_MIN_C = 5.0


def friction_symbols(friction: str, temperature: bool) -> tuple[str, ...]:
    """Per-joint parameter symbols of a friction law (:mod:`dynid.friction.laws`), in column order."""
    return friction_law(friction).symbols + (('beta1', 'beta2', 'beta3') if temperature else ())


@dataclass(frozen=True)
class ModelSpec:
    """What to identify (module docstring). Recorded in the result."""

    friction: str = 'viscous_coulomb'
    temperature: bool = False
    torque_source: str = 'auto'
    # None (the default): B·θ̈ subtracted where the recordings have motor encoders, rotor inertias identified
    # where not, silently; True: asked for (a recording without motor encoders is then a change, said so)
    rotor_compensation: bool | None = None
    rotor_inertia: bool = False
    hamon_velocity: float = 0.03
    exponent: float = 1.0
    # the comprehensive law's viscous power term: 'shifted' (with its limit at α = 0, about the stiction velocity) or
    # 'plain' (Li's eq. (3) as written: result files written before): dynid.friction.power_law
    power_form: str = 'shifted'
    exclude_joints: tuple[str, ...] = ()  # joints whose equations are left out (their motion stays in the model)
    # a Stribeck excess on every joint at this Stribeck velocity [rad/s] and shape μ (None: 2) (StribeckExcess;
    # library use, a fixed law to compare with): None, the default, has none unless the model choice keeps it
    stribeck_velocity: float | None = None
    stribeck_shape: float | None = None
    # with coupled drives, Coulomb + viscous friction on the own velocity of each joint several motors make (a stage
    # that turns with the joint: dynid.identify.equations.joint_side), kept by the model choice where its folds support
    # it (kept as given where the law is given); False: the motors' friction alone
    joint_side_friction: bool = True

    def validated(self) -> ModelSpec:
        checked_choice('friction model', self.friction, (AUTO, *FRICTION_MODELS))
        checked_choice('torque source', self.torque_source, TORQUE_SOURCES)
        checked_choice('power form', self.power_form, POWER_FORMS)
        if self.hamon_velocity <= 0 or self.exponent <= 0:
            raise InputError('hamon_velocity and exponent must be > 0')
        if self.stribeck_velocity is not None and not (np.isfinite(self.stribeck_velocity)
                                                       and self.stribeck_velocity > 0):
            raise InputError(f'stribeck_velocity must be > 0 rad/s or None, got {self.stribeck_velocity!r}')
        if self.stribeck_shape is not None and not (np.isfinite(self.stribeck_shape) and self.stribeck_shape > 0):
            raise InputError(f'stribeck_shape must be > 0, got {self.stribeck_shape!r}')
        return self

    @property
    def uses_load(self) -> bool:
        return self.friction != AUTO and bool(friction_law(self.friction).load_symbols)

    def to_dict(self) -> dict:
        return {**asdict(self), 'exclude_joints': list(self.exclude_joints)}


@dataclass
class RecordingInput:
    """One recording and what is known of its payload.

    payload: fully known payload (its torque is subtracted), or None. payload_mass: only the mass
    [kg] is known (its other 9 parameters are identified), or None. If neither is given the recording
    has no payload.
    """

    dataset: Dataset
    payload: Payload | None = None
    payload_mass: float | None = None
    name: str = ''

    def __post_init__(self) -> None:
        if self.payload is not None and self.payload_mass is not None:
            raise InputError('give either a known payload or a known payload mass, not both')
        if self.payload_mass is not None and not (np.isfinite(self.payload_mass) and self.payload_mass > 0):
            raise InputError(f'payload mass must be > 0 kg, got {self.payload_mass!r}')


@dataclass(frozen=True)
class IdentifyOptions:
    """Solver options. ``load_iterations`` bounds the load loop (and the outer I-IRLS loop);
    ``noise_floor_fraction``: WLS floors each joint's noise estimate at this fraction of the pooled one
    (:func:`dynid.identify.solve.solvers.joint_noise`). ``physical``: the robot file as a prior and physical
    consistency (:mod:`dynid.identify.solve.physical`; by default where the model allows it); None: the linear
    solution alone. ``method_options``: the method's own options as it declares them
    (:attr:`dynid.identify.registry.IdentificationMethod.method_options`: IRLS's weight function, TLS's held drive
    gains, ...), {name: value or text}; where the method is ``auto``, those of the methods it may end with
    (:func:`open_methods`)."""

    method: str = START_METHOD
    weight_constant: float | None = None
    load_iterations: int = 10
    exponent_bounds: tuple[float, float] = (0.2, 2.0)
    physical: PhysicalSettings | None = field(default_factory=PhysicalSettings)
    noise_floor_fraction: float = NOISE_FLOOR_FRACTION
    method_options: dict[str, object] | None = None  # the method's own ({name: value or text})

    def validated(self) -> IdentifyOptions:
        checked_choice('method', self.method, (AUTO, *METHODS))
        method = None if self.method == AUTO else identification_method(self.method)
        if method is not None:
            method.option_values(self.method_options)
        elif self.method_options:
            candidates = open_methods()
            refuse_undeclared(f'method auto ({spoken([m.name for m in candidates], upper=False)})',
                              tuple(dict.fromkeys(o.name for m in candidates for o in m.method_options)),
                              self.method_options)
            for candidate in candidates:
                candidate.own_option_values(self.method_options)
        if self.load_iterations < 1:
            raise InputError('load_iterations must be >= 1')
        if not 0 < self.noise_floor_fraction <= 1:
            raise InputError(f'noise_floor_fraction must be within (0, 1], got {self.noise_floor_fraction!r}')
        if self.physical is not None:
            self.physical.validated()
            if self.physical.consistency == 'always' and method is not None and not method.physical:
                raise InputError(physical_methods_only(self.method))
        return self

    def for_method(self, method: str) -> IdentifyOptions:
        """These options for ``method`` instead, with the method options it declares (an identification dynid runs
        with a method of its own choosing: the torque sources compared by WLS)."""
        declared = {option.name for option in identification_method(method).method_options}
        return dataclasses.replace(self, method=method, method_options={
            name: value for name, value in (self.method_options or {}).items() if name in declared} or None)


def open_methods() -> list:
    """The methods an identification whose method is left to dynid (``auto``) may end with: the start and
    regularized methods, those the choice scores (``choice_weights``) and the ways out of a refusal (``way_out``)."""
    return [method for method in identification_methods() if method.choice_weights is not None or method.way_out
            or method.name in (START_METHOD, REGULARIZED_METHOD)]


def change_text(change: dict) -> str:
    """One line for people of a change the identification made to the caller's choices (``model.changes`` of
    a result): 'friction: viscous_coulomb given, comprehensive used (I-IRLS identifies ...)'."""
    return f'{change["setting"]}: {change["given"]} given, {change["used"]} used ({change["reason"]})'


@dataclass(frozen=True)
class Request:
    """The caller's model and options with what the identification chooses itself settled for the search
    (:func:`settle`): ``spec`` the model the equations are built for (the superset law where the law is open),
    ``options`` the solver (WLS to start where the method is open), ``friction``/``method`` whether each is open
    (chosen by cross-validation), ``terms_available`` the optional friction terms of an open law, ``rotor`` whether
    the rotor inertias' excess is a candidate (where B·θ̈ is subtracted), ``changes`` what the method changed in the
    caller's choices (:func:`change_text`), ``given`` the caller's options as given, ``laws`` the friction laws
    registered beside dynid's that an open law tries whole against the one chosen per joint
    (:mod:`dynid.identify.selection.whole_laws`)."""

    spec: ModelSpec
    options: IdentifyOptions
    given: IdentifyOptions
    friction: bool
    method: bool
    terms_available: tuple[str, ...] = ()
    rotor: bool = False
    changes: tuple[dict, ...] = ()
    laws: tuple[str, ...] = ()

    @property
    def drive_gains_unknown(self) -> bool:
        """The drive gains are identified with the parameters (TLS, MLS)."""
        return identification_method(self.options.method).drive_gains

    @property
    def consistency_always(self) -> bool:
        """Physical consistency asked for (``--physical``)."""
        return self.options.physical is not None and self.options.physical.consistency == 'always'


def settle(recordings: list[RecordingInput], spec: ModelSpec, options: IdentifyOptions,
           drives_known: bool = True) -> Request:
    """The model to search where the friction law is open (``auto``: the superset law, chosen per joint by
    :mod:`dynid.identify.steps.choose`; a method with its own law takes that law), WLS to start where the method is
    open, and the comprehensive law I-IRLS identifies (a change said in ``changes``). ``spec`` and ``options``
    validated; a model the method cannot identify is refused before any work."""
    spec, given = spec.validated(), options.validated()
    friction_open, method_open = spec.friction == AUTO, given.method == AUTO
    method = None if method_open else identification_method(given.method)
    always = given.physical is not None and given.physical.consistency == 'always'
    terms, rotor, superset = (), False, spec
    if friction_open:
        if method is not None and method.friction_default is not None:
            friction, friction_open = method.friction_default, False
        else:  # physical consistency constrains the links: the friction law is chosen as without it
            friction = 'load_squared'
            terms = ('offset', 'load') + \
                (('temperature',) if _temperature_spans(recordings) and not spec.temperature else ())
        # the rotor inertia's excess over the drive data's B, where B·θ̈ will be subtracted (currents, motor
        # encoders, drive data): a candidate per joint, once the equations say it applies (not beside joints left
        # out, whose columns are empty, nor with consistency 'always', which holds nothing)
        rotor = friction_open and not spec.rotor_inertia and spec.rotor_compensation is not False and \
            spec.torque_source in ('auto', 'current') and drives_known and not spec.exclude_joints and \
            not always and all(r.dataset.theta is not None and r.dataset.current is not None for r in recordings)
        superset = dataclasses.replace(spec, friction=friction, rotor_inertia=spec.rotor_inertia or rotor,
                                       temperature=spec.temperature or 'temperature' in terms)
    start = dataclasses.replace(given, method=START_METHOD) if method_open else given
    changes = ()
    if method is not None and method.friction_required and superset.friction != method.friction_default:
        changes = ({'setting': 'friction', 'given': superset.friction, 'used': method.friction_default,
                    'reason': method.friction_reason},)
        superset = dataclasses.replace(superset, friction=method.friction_default)
    if method is not None and method.friction is not None and superset.friction not in method.friction:
        raise InputError(f'method {method.name} identifies the friction models {", ".join(method.friction)} only, '
                         f'not {superset.friction!r}: give one of them with {{friction}}', fields=('friction',))
    if start.physical is not None:  # refused before any work: a model that consistency 'always' cannot solve
        start.physical.check_model(superset, start.method)
    if superset.friction == 'hamon' and not any(r.payload is not None or r.payload_mass is not None
                                                for r in recordings):
        raise InputError(HAMON_SCALE_DEPENDENCY, fields=('payload_mass',))
    laws = tuple(name for name in added_law_names() if _tried_whole(friction_law(name), method, always)) \
        if friction_open else ()
    return Request(superset, start, given, friction_open, method_open, terms, rotor, changes, laws)


def _tried_whole(law, method, always: bool) -> bool:
    """Whether the model choice tries ``law`` (registered beside dynid's) whole: its columns need no shape the choice
    would fit (a viscous exponent), the method given takes it, and physical consistency asked for can hold it."""
    return not law.shaped_symbols and (method is None or method.friction is None or law.name in method.friction) \
        and (law.physical or not always)


def _temperature_spans(recordings: list[RecordingInput]) -> bool:
    """Whether every recording holds temperatures > 0 °C and each joint's spans :data:`TEMPERATURE_SPAN_MIN_C`."""
    return all(r.dataset.temperature is not None and np.all(r.dataset.temperature > 0) for r in recordings) and \
        bool(np.all(np.ptp(np.concatenate([r.dataset.temperature for r in recordings]), axis=0)
                    >= TEMPERATURE_SPAN_MIN_C))
