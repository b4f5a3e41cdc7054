"""Offline replay of the online estimators: a recording through the objects estimator_node runs.

:func:`build_estimators` is the one construction of the estimators from a robot and an identification
result, shared by estimator_node and :func:`estimate`:

- stiffness: :class:`StiffnessEstimator` (RLS with directional forgetting on the virtual flexibility
  torque τ_E = K_τ·i − B·θ̈ − F(θ̇) − D·φ̇, Madsen, Rosenlund, Brandt and Zhang 2019, eqs. (17)–(18)),
  with the result's static friction map F and drive gains;
- friction: :class:`AdaptiveFrictionEstimator` (gradient law on α = (α1, α2) of
  f = α1·F(τ_j)·H + α2·ω, Madsen 2020, ch.6 eqs. (23)–(28)) when the result's friction model is
  ``viscous_coulomb`` or ``load_squared``: F(τ_j) = Fc + Fl·τ_j² from the result, τ̂_j from its
  rigid-body model (:class:`dynid.identify.result.torque.RigidBodyTorque`), F_V(ω) = Fv·ω + τ0. On the joints
  the result's ``joint_friction`` section covers (schema 2,
  :func:`~dynid.identify.friction_fit.identified.joint_friction_of`)
  F(τ_j) = Fc0 + max(Fc1, 0)·τ_j², F_V = its remainder (Stribeck excess, Fv1–Fv3, temperature term with
  T = 20 °C where the recording has none) plus the result's τ0 (the offset belongs to its rigid-body fit,
  as in the feedforward terms) and the E-GMS laws and backlash are the section's instead.

:func:`estimate` feeds a :class:`Dataset` through them in batches of ``settings.batch`` samples, as
the node's intake delivers them (the estimators give the same numbers for any split of a record, so
the batch size only changes the speed), and returns an :class:`EstimationHistory`.

Gaps (lost samples, :meth:`Dataset.contiguous_pieces`). The causal front ends (Savitzky–Golay
smoothing and central differences, Madsen 2020, ch.6 §6.1) need evenly spaced samples: across a gap
they would differentiate a jump. Each contiguous piece therefore restarts the estimators' signal path
(the front end, and the friction estimator's learning prefilter) exactly as at construction, while
what was learned carries over: α̂ and P of the RLS, the running-fit sums, α̂ of the friction law, the
E-GMS operator state, the excitation window and the freeze count (which counts the samples received,
not the ones lost). Resetting the whole estimator would throw the convergence away at every lost
packet. estimator_node restarts the same way at gaps in the stamps of what arrives
(:class:`dynid.estimate.online.OnlineEstimation`).

Time. An output row describes the sample ``delay`` samples before the newest input (51 samples at
1 kHz). Within each piece the first ``delay`` rows describe no sample of the piece and are left out,
and its last ``delay`` samples are never described; every kept row carries the time [s] of the
sample it describes, on the dataset's clock.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field

import numpy as np

from dynid.checks import finite, interval
from dynid.errors import InputError
from dynid.estimate.friction import AdaptiveFrictionEstimator
from dynid.estimate.projection import projection_bounds
from dynid.estimate.rls import FORGETTING, REGULARIZATION
from dynid.estimate.stiffness import NO_DEFLECTION, StiffnessEstimator
from dynid.friction.egms import EGMS
from dynid.friction.law import FrictionLaw
from dynid.friction.laws import friction_law, law_names
from dynid.friction.power_law import power_term
from dynid.identify import joint_friction_of, result_drives, velocity_friction
from dynid.io.dataset import Dataset
from dynid.io.gaps import GapSummary
from dynid.settings import setting

#: What the summary says of a joint deflected beyond the dead zone only at rest (no sample learned from).
NOT_LEARNED = 'deflected only at rest'



def adapted(law: FrictionLaw) -> bool:
    """Whether the E-GMS adaptation starts from ``law``'s static map (its Coulomb level Fc0 and squared load term Fc1):
    a Coulomb + viscous + offset (+ squared load) law (:attr:`FrictionLaw.roles`; the comprehensive law's viscous term
    is its power term with the result's exponents)."""
    return law.coulomb_viscous and law.load_shape in (None, 'squared')


def adapted_laws() -> list[str]:
    """The registered laws the E-GMS adaptation starts from."""
    return [name for name in law_names() if adapted(friction_law(name))]
#: The estimates a replay keeps of each estimator's batch outputs.
FIELDS = {'stiffness': ('alpha', 'fit', 'learning'), 'friction': ('alpha', 'active', 'capped')}


@dataclass(frozen=True)
class EstimationSettings:
    """What a user sets for the estimators (validated on construction with one-line InputErrors).

    Attributes:
        batch: samples per update [-] (1000 by default; estimator_node gets 20 per take at 1 kHz:
            the numbers do not depend on it, the speed does).
        stiffness, friction: estimate the joint stiffness / adapt the E-GMS friction.
        damping: transmission damping D [N·m·s/rad] (Madsen et al. 2019, eq. (17)): one value for every
            joint, or a tuple with one per joint in robot order.
        order: P, odd powers in the stiffness regressor ψ = [φ, φ³, …] (eq. (8)).
        forgetting, regularization: μ and δ of RLS-DF* (eq. (18); paper: 0.99995, 0.1).
        deadzone: |φ| [rad] at or below which a sample does not learn; None: from the encoder resolutions.
        min_velocity: |θ̇| [rad/s, link units] below which a sample does not learn (the static friction
            map does not hold at rest; :mod:`dynid.estimate.stiffness`, "Rest").
        fit_window_s: time constant of the running NRMSE fit [s].
        freeze_s: no friction adaptation before this time [s] from the start (Madsen 2020, ch.6: 30 s).
        adaptation_time_s: T_a of the friction gain rule [s].
        prefilter: adapt the friction on the Savitzky–Golay-filtered pair (f, Y) (see
            :mod:`dynid.estimate.friction`); False: the thesis' plain law.
        window: Savitzky–Golay window of the front ends [samples, odd]; None: 101 at 1 kHz, scaled.
        friction_change: c of the adaptive friction's projection box [-] (:mod:`dynid.estimate.projection`:
            α1 within 1 ± (c + k·σ(Fc)/Fc), α2 within ±(c·|Fv| + k·σ(Fv)), never narrower than the thesis'
            [0.4, 1.5] × [−0.05, 0.05]); 1: the friction may fall to none or double.
        bound_sigmas: k of the same rule, standard deviations of the identified Fc and Fv [-].
        alpha1_bounds, alpha2_bounds: (min, max) of α1 [-] and α2 [N·m·s/rad] on every joint instead of the
            rule; (0.4, 1.5) and (-0.05, 0.05) are the thesis'.
    """

    batch: int = 1000
    stiffness: bool = setting(True, 'estimate the joint stiffness (needs motor_states: the deflection is θ − q); '
                                    'false: adapt the friction alone')
    friction: bool = True
    damping: float | tuple[float, ...] = setting(0.0, 'transmission damping D of every joint', unit='N·m·s/rad',
                                                 low=0.0, high=1e4)
    order: int = 2
    forgetting: float = FORGETTING
    regularization: float = REGULARIZATION
    deadzone: float | None = None
    min_velocity: float = setting(0.05, 'stiffness learns only while |rotor velocity| reaches this: the friction '
                                        'map does not hold at rest', unit='rad/s', low=0.0, high=10.0)
    fit_window_s: float = 10.0
    freeze_s: float = 0.0
    adaptation_time_s: float = 2.0
    prefilter: bool = True
    window: int | None = None
    friction_change: float = setting(
        1.0, 'friction box: relative change of the identified friction admitted (α1 within 1 ± (c + k·σ(Fc)/Fc), α2 '
             'within ±(c·|Fv| + k·σ(Fv)); an estimate on its edge is capped: diagnostics warn)', low=0.0, high=100.0)
    bound_sigmas: float = setting(3.0, 'friction box: k, standard deviations of the identified Fc and Fv added',
                                  low=0.0, high=100.0)
    alpha1_bounds: tuple[float, float] | None = setting(None, 'friction box of α1 on every joint instead of the rule',
                                                        items=float)
    alpha2_bounds: tuple[float, float] | None = setting(None, 'friction box of α2 on every joint instead of the rule',
                                                        unit='N·m·s/rad', items=float)

    def __post_init__(self) -> None:
        for name in ('batch', 'order'):
            _integer(getattr(self, name), name, 1)
        if self.window is not None and (_integer(self.window, 'window', 5) % 2 == 0):
            raise InputError(f'window must be odd (a centred Savitzky–Golay fit), got {self.window}')
        for name in ('stiffness', 'friction', 'prefilter'):
            if not isinstance(getattr(self, name), bool):
                raise InputError(f'{name} must be true or false, got {getattr(self, name)!r}')
        if not (self.stiffness or self.friction):
            raise InputError('nothing to estimate: stiffness and friction are both switched off')
        if isinstance(self.damping, list | tuple | np.ndarray):
            if len(self.damping) == 0:
                raise InputError('damping needs one value, or one per joint; got none')
            object.__setattr__(self, 'damping', tuple(_number(d, 'damping [N·m·s/rad]', minimum=0.0)
                                                      for d in self.damping))
        else:
            _number(self.damping, 'damping [N·m·s/rad]', minimum=0.0)
        forgetting = _number(self.forgetting, 'forgetting')
        if not 0.0 < forgetting <= 1.0:
            raise InputError(f'forgetting must be within (0, 1], got {self.forgetting!r}')
        _number(self.regularization, 'regularization', minimum=0.0)
        if self.deadzone is not None:
            _number(self.deadzone, 'deadzone [rad]', minimum=0.0)
        _number(self.min_velocity, 'min_velocity [rad/s]', minimum=0.0)
        _number(self.fit_window_s, 'fit_window_s [s]', minimum=0.0, inclusive=False)
        _number(self.freeze_s, 'freeze_s [s]', minimum=0.0)
        _number(self.adaptation_time_s, 'adaptation_time_s [s]', minimum=0.0, inclusive=False)
        _number(self.friction_change, 'friction_change', minimum=0.0)
        _number(self.bound_sigmas, 'bound_sigmas', minimum=0.0)
        object.__setattr__(self, 'alpha1_bounds', interval(self.alpha1_bounds, 'alpha1_bounds'))
        object.__setattr__(self, 'alpha2_bounds', interval(self.alpha2_bounds, 'alpha2_bounds', ' [N·m·s/rad]'))
        if self.alpha1_bounds is not None and not self.alpha1_bounds[0] <= 1.0 <= self.alpha1_bounds[1]:
            raise InputError(f'alpha1_bounds must contain 1 (the identified Coulomb level), got {self.alpha1_bounds}')
        if self.alpha2_bounds is not None and not self.alpha2_bounds[0] <= 0.0 <= self.alpha2_bounds[1]:
            raise InputError(f'alpha2_bounds must contain 0 (the identified viscous friction), got '
                             f'{self.alpha2_bounds}')

    def to_dict(self) -> dict:
        """Plain values (for result files)."""
        values = asdict(self)
        for name in ('damping', 'alpha1_bounds', 'alpha2_bounds'):
            if isinstance(values[name], tuple):
                values[name] = list(values[name])
        return values


def _integer(value, name: str, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < minimum:
        raise InputError(f'{name} must be an integer >= {minimum}, got {value!r}')
    return int(value)


def _number(value, name: str, minimum: float | None = None, inclusive: bool = True) -> float:
    x = finite(value, name)
    if minimum is not None and (x < minimum or (not inclusive and x == minimum)):
        raise InputError(f'{name} must be {">=" if inclusive else ">"} {minimum:g}, got {value!r}')
    return x


@dataclass(frozen=True)
class Estimators:
    """The estimators of one robot and result; None where not estimated, ``notes`` saying why; ``left_out``:
    those the data could not build (``build_estimators(..., tolerant=True)``), with the reason."""

    stiffness: StiffnessEstimator | None
    friction: AdaptiveFrictionEstimator | None
    notes: tuple[str, ...] = ()
    left_out: tuple[str, ...] = ()

    @property
    def delay(self) -> int:
        """Samples between the newest input and the sample the outputs describe (both estimators')."""
        delays = {e.delay for e in (self.stiffness, self.friction) if e is not None}
        if len(delays) != 1:
            raise RuntimeError(f'the estimators describe different samples (delays {sorted(delays)})')
        return delays.pop()

    def restart_signal_path(self) -> None:
        """Forget the input history (front ends, friction prefilter), keep what was learned (module docstring)."""
        if self.stiffness is not None:
            self.stiffness.front_end.reset()
        if self.friction is not None:
            for part in (self.friction.front_end, self.friction.learning_filter, self.friction.learning_delay):
                part.reset()


def build_estimators(robot, result, settings: EstimationSettings, rate_hz: float, *, drives=None,
                     rotor: bool = True, tolerant: bool = False, payload=None) -> Estimators:
    """The estimators estimator_node runs, for ``robot`` and an identification ``result``.

    Args:
        robot: the :class:`RobotModel`.
        result: an :class:`IdentificationResult` of ``robot`` (friction map, drive gains, rigid-body
            model), or None (stiffness without friction compensation, no friction adaptation).
        settings: the user's settings.
        rate_hz: sample rate [Hz].
        drives: the :class:`JointDrives` (K_τ [N·m/A], B [kg·m²], link side) to use, e.g. of a drives
            file; None: those the result recorded, else the robot's (:func:`dynid.identify.result.result.result_drives`;
            the result's drive gains replace theirs).
        rotor: the recording has motor encoders (motor_states); False: friction only, on a rigid joint
            (θ = q, :class:`AdaptiveFrictionEstimator`); the stiffness needs them.
        tolerant: an estimator that cannot be built (no drive data, no motor encoders) is left out with its
            reason in the notes, even both (a running node keeps what it can; ``dynid estimate`` refuses).
        payload: the :class:`~dynid.model.Payload` at the flange (e.g. of a dynid payload file), or None: it
            joins the rigid-body model whose joint torque loads the adapted friction.

    Raises InputError where the drives are missing or couple joints, or the result does not fit the robot
    (``tolerant``: only where the result does not fit).
    """
    notes: list[str] = []
    left_out: list[str] = []
    resolved = result_drives(result, robot, drives) if result is not None else (drives or robot.drives)
    if resolved is not None and resolved.coupling is not None:  # each motor's friction and rotor, on θ = C·q
        raise InputError('the drives couple joints (their coupling): the online estimators take one drive per '
                         'joint (θ = q) and cannot estimate a coupled wrist yet')
    if resolved is not robot.drives:
        robot = robot.with_drives(resolved)
    rigid_robot = robot  # with the B that goes beside the result's rigid-body torque (the friction's τ̂_j)
    if result is not None and result.model.get('rotor_inertia_identified', False) and robot.drives is not None:
        robot, rigid_robot = _identified_rotor_inertia(robot, result, settings, notes)
    stiffness = friction = None
    if settings.stiffness:
        try:
            if not rotor:
                raise InputError('the stiffness estimation needs the motor encoders (motor_states): the deflection '
                                 'is θ − q (switch it off to adapt the friction alone)')
            if robot.drives is None:
                raise InputError(f'stiffness estimation needs drive data; robot {robot.name!r} has none (give a '
                                 f'robot with drive data, or the result of an identification that recorded them)')
            stiffness = StiffnessEstimator.from_robot(
                robot, result, rate_hz=rate_hz, order=settings.order, damping=settings.damping,
                forgetting=settings.forgetting, regularization=settings.regularization, deadzone=settings.deadzone,
                fit_window_s=settings.fit_window_s, window=settings.window, min_velocity=float(settings.min_velocity))
        except InputError as error:
            if not tolerant or robot.drives is not None and rotor:
                raise
            left_out.append(f'stiffness not estimated: {error}')
    if settings.friction:
        try:
            friction = _friction_estimator(rigid_robot, result, settings, rate_hz, notes, rotor, payload)
        except InputError as error:
            if not tolerant or rigid_robot.drives is not None:
                raise
            left_out.append(f'friction not adapted: {error}')
    if stiffness is None and friction is None and not tolerant:
        raise InputError('nothing to estimate: ' + ('; '.join(notes) or 'stiffness and friction are off'))
    if friction is not None and not rotor:
        notes.append('no motor encoders: the friction is adapted on rigid joints (θ = q: the link\'s velocity, '
                     'acceleration and position drive the friction model)')
    return Estimators(stiffness, friction, tuple(notes + left_out), tuple(left_out))


def _identified_rotor_inertia(robot, result, settings: EstimationSettings, notes: list[str]):
    """(robot for the stiffness, robot for the friction): the drives with the rotor inertia B the result
    identified (:func:`dynid.identify.result.torque.rotor_inertia`) instead of the drive data's, which would count
    it twice. The stiffness's rotor equation takes the physical B (the drive data's where the result
    regrouped Ia_j with a link inertia); the friction, whose τ̂_j holds a regrouped Ia_j·q̈ already, takes 0
    there. A B that is not a positive finite number is refused with the reason."""
    from dynid.identify import compensated_rotor, rotor_inertia

    names = robot.joint_names
    own = [j for j in range(robot.n) if f'Ia_{j + 1}' in result.parameter_names]
    excess = compensated_rotor(result, robot)  # B subtracted before: Ia_j is the excess over it
    bad = {names[j]: result.value(f'Ia_{j + 1}') + excess[j] for j in own
           if not (np.isfinite(result.value(f'Ia_{j + 1}')) and result.value(f'Ia_{j + 1}') + excess[j] > 0)}
    if bad:
        raise InputError('the result identified rotor inertias that are not positive (' + ', '.join(
            f'{joint} {value:.3g} kg·m²' for joint, value in bad.items()) + '): B·θ̈ cannot be taken off the '
            'motor torque with them; identify on richer motion, or without identifying B (currents with rotor '
            'compensation and drive data)')
    regrouped = [names[j] for j in range(robot.n) if j not in own]
    physical = rotor_inertia(robot, result, regrouped_as_zero=False) if settings.stiffness else None
    notes.append('rotor inertia B from the result (identified) on ' + (', '.join(names[j] for j in own) or 'no joint')
                 + ('; regrouped with the link inertia on ' + ', '.join(regrouped) + ' (the rigid-body model holds '
                    'it; the stiffness takes the drive data\'s B there)' if regrouped else ''))
    stiffness_robot = robot if physical is None else robot.with_drives(robot.drives.with_rotor_inertia(physical))
    rigid = rotor_inertia(robot, result, regrouped_as_zero=True)
    return stiffness_robot, robot.with_drives(robot.drives.with_rotor_inertia(rigid))


def _friction_estimator(robot, result, settings: EstimationSettings, rate_hz: float,
                        notes: list[str], rotor: bool = True, payload=None) -> AdaptiveFrictionEstimator | None:
    from dynid.identify import RigidBodyTorque  # pinocchio-heavy; only where friction is adapted

    if result is None:
        notes.append('friction not adapted: no identification result')
        return None
    kind = result.model.get('friction')
    if kind not in law_names() or not adapted(friction_law(kind)):
        notes.append(f'friction not adapted: the result\'s friction model is {kind!r}, not one of {adapted_laws()}')
        return None
    if robot.drives is None:
        raise InputError(f'adaptive friction estimation needs drive data; robot {robot.name!r} has none (give a '
                         'drives file)')
    table = result.friction()
    named = friction_law(kind).roles
    value = {symbol: np.array([table[name].get(named.get(symbol, symbol), 0.0) for name in robot.joint_names])
             for symbol in ('Fc', 'Fv', 'tau0', 'Fl')}
    scale = {symbol: value[symbol].copy() for symbol in ('Fc', 'Fv')}  # Fc, Fv and σ of the projection box
    order = {name: j for j, name in enumerate(result.joint_names)}
    std = {symbol: np.array([_std_of(result, f'{named.get(symbol, symbol)}_{order[name] + 1}')
                             for name in robot.joint_names]) for symbol in ('Fc', 'Fv')}
    exponent, shift = result.power_exponents(robot.joint_names), result.power_velocity  # α, v_s of the power term

    stribeck, excess = result.stribeck, np.array([table[name].get('Fs', 0.0) for name in robot.joint_names])
    if stribeck is not None and tuple(result.joint_names) != tuple(robot.joint_names):
        stribeck = type(stribeck)(np.array([stribeck.velocities[order[name]] for name in robot.joint_names]),
                                  np.array([stribeck.shapes[order[name]] for name in robot.joint_names]))

    def remainder(omega, temperature):  # F_V: the viscous term, the offset and the Stribeck excess where kept
        value_ = value['Fv'] * power_term(omega, exponent, shift) + value['tau0']
        return value_ if stribeck is None else value_ + stribeck.torque(omega, excess)

    egms = None
    identified = joint_friction_of(result, robot)
    if identified is not None and identified[1].any():  # the section's model where it covers the joint
        model, mask = identified
        value['Fc'] = np.where(mask, model.stribeck.Fc, value['Fc'])
        value['Fl'] = np.where(mask, model.load_coefficient, value['Fl'])
        for symbol, name in (('Fc', 'Fc0'), ('Fv', 'Fv1')):  # the box around the section's values there
            section = np.array([_section_value(result, joint, name) for joint in robot.joint_names])
            covered = mask & np.isfinite(section[:, 0])
            scale[symbol] = np.where(covered, section[:, 0], scale[symbol])  # Fc: the same as value['Fc']
            std[symbol] = np.where(covered, section[:, 1], std[symbol])
        section, idim = velocity_friction(model), remainder

        def remainder(omega, temperature):
            return np.where(mask, section(omega, temperature) + value['tau0'], idim(omega, temperature))

        laws, default = model.egms, EGMS(robot.n)  # thesis defaults on the other joints, as without the section
        egms = EGMS(robot.n, laws.elements, np.where(mask, laws.r_delta, default.r_delta),
                    np.where(mask, laws.r_k, default.r_k),
                    backlash=np.where(mask, laws.backlash_table[:, 0], default.backlash_table[:, 0]))
    names = np.array(robot.joint_names)
    if np.any(value['Fc'] <= 0):
        notes.append('friction not adapted: the result\'s Coulomb level Fc is <= 0 on '
                     f'{names[value["Fc"] <= 0].tolist()} (α1 scales it)')
        return None
    if np.any(value['Fl'] < 0):  # unphysical (friction falling with load): the level without the load term
        notes.append(f'friction: negative load coefficients Fl on {names[value["Fl"] < 0].tolist()} taken as 0')
        value['Fl'] = np.maximum(value['Fl'], 0.0)
    bounds = projection_bounds(scale['Fc'], scale['Fv'], std['Fc'], std['Fv'], friction_change=settings.friction_change,
                               bound_sigmas=settings.bound_sigmas, alpha1_bounds=settings.alpha1_bounds,
                               alpha2_bounds=settings.alpha2_bounds)
    return AdaptiveFrictionEstimator(
        robot.drives, RigidBodyTorque(result, robot, payload), value['Fc'], value['Fl'], rate_hz=rate_hz, egms=egms,
        velocity_friction=remainder, bounds=bounds,
        adaptation_time_s=settings.adaptation_time_s, freeze_s=settings.freeze_s, prefilter=settings.prefilter,
        window=settings.window, rotor=rotor)


def _std_of(result, name: str) -> float:
    """σ of a result's parameter ``name`` (NaN where it has none)."""
    return float(result.std[result.parameter_names.index(name)]) if name in result.parameter_names else float('nan')


def _section_value(result, joint: str, name: str) -> tuple[float, float]:
    """(value, σ) of parameter ``name`` of ``joint`` in the result's joint_friction section (NaN where absent)."""
    entry = (result.joint_friction_section or {}).get('joints', {}).get(joint) or {}
    value, std = (entry.get('parameters') or {}).get(name), (entry.get('std') or {}).get(name)
    return (float('nan') if value is None else float(value)), (float('nan') if std is None else float(std))


@dataclass(frozen=True)
class EstimationHistory:
    """The estimates after every described sample of a replay; N >= 1 rows, J joints in robot order.

    Attributes:
        time: (N,) time [s] of the sample each row describes (dataset clock, ``delay`` accounted for).
        stiffness_alpha: (N, J, P) α̂ = [α1 N·m/rad, α3 N·m/rad³, …] (Madsen et al. 2019, eq. (8)), or None.
        fit: (N, J) running NRMSE fit [%] of the one-step τ_E prediction (eq. (15)), or None.
        learning: (N, J) the sample entered the stiffness RLS, or None.
        friction_alpha: (N, J, 2) α̂ = (α1 [-], α2 [N·m·s/rad]) (Madsen 2020, ch.6 eq. (24)), or None.
        friction_active: (N, J) the sample adapted the friction, or None.
        friction_capped: (N, J, 2) α̂1, α̂2 sat on a bound of their projection box, or None.
        friction_bounds: (J, 2, 2) the box: per joint ((α1_min, α1_max), (α2_min, α2_max)), or None.
        phi_max: (J,) largest |φ| the stiffness learned from [rad] (NaN without stiffness).
        deflected: (J,) a deflection beyond the dead zone was measured (:attr:`StiffnessEstimator.deflected`), or
            None without stiffness; the summary says :data:`NO_DEFLECTION` for the other joints, and
            :data:`NOT_LEARNED` for a joint deflected only while at rest (no sample learned from: α̂ never left its
            start, so it gives no numbers either).
        rate_hz: sample rate [Hz]; delay: samples between input and described sample.
        gaps: the recording's lost samples; pieces: contiguous pieces replayed.
        notes: what was not estimated and why.
        residual_rms: {'stiffness': (J,), 'friction': (J,)} RMS [N·m] of each estimator's prediction error over the
            samples it learned from (the estimators' ``residual_rms``), for those that ran.
    """

    joint_names: tuple[str, ...]
    time: np.ndarray
    stiffness_alpha: np.ndarray | None
    fit: np.ndarray | None
    learning: np.ndarray | None
    friction_alpha: np.ndarray | None
    friction_active: np.ndarray | None
    phi_max: np.ndarray
    rate_hz: float
    delay: int
    gaps: GapSummary
    pieces: int
    settings: EstimationSettings
    notes: tuple[str, ...] = ()
    friction_capped: np.ndarray | None = None
    friction_bounds: np.ndarray | None = None
    deflected: np.ndarray | None = None
    residual_rms: dict = field(default_factory=dict)

    @property
    def k0(self) -> np.ndarray | None:
        """(N, J) stiffness at zero deflection k(0) = α̂1 [N·m/rad] (eqs. (9)–(10)), the wear indicator."""
        return None if self.stiffness_alpha is None else self.stiffness_alpha[:, :, 0]

    def summary(self) -> dict:
        """Final values per joint, the share of samples that learned, and the replay's extent (plain values)."""
        joints = {}
        for j, name in enumerate(self.joint_names):
            entry: dict = {}
            if self.stiffness_alpha is not None:
                entry.update({f'alpha{2 * p + 1}': float(a) for p, a in enumerate(self.stiffness_alpha[-1, j])})
                entry.update({'k0': float(self.stiffness_alpha[-1, j, 0]), 'fit_percent': float(self.fit[-1, j]),
                              'phi_max': float(self.phi_max[j]),
                              'learning_share': float(self.learning[:, j].mean())})
                unmoved = self.deflected is not None and not self.deflected[j]
                if unmoved or not self.learning[:, j].any():  # nothing to estimate from: no numbers
                    entry.update({key: None for key in entry if key.startswith('alpha')}, k0=None, fit_percent=None,
                                 stiffness=NO_DEFLECTION if unmoved else NOT_LEARNED)
            if self.friction_alpha is not None:
                entry.update({'friction_alpha1': float(self.friction_alpha[-1, j, 0]),
                              'friction_alpha2': float(self.friction_alpha[-1, j, 1]),
                              'friction_active_share': float(self.friction_active[:, j].mean())})
                if self.friction_capped is not None:
                    entry.update({'friction_alpha1_capped': bool(self.friction_capped[-1, j, 0]),
                                  'friction_alpha2_capped': bool(self.friction_capped[-1, j, 1]),
                                  'friction_capped_share': float(self.friction_capped[:, j].any(axis=-1).mean())})
                if self.friction_bounds is not None:
                    entry.update({'friction_alpha1_bounds': self.friction_bounds[j, 0].tolist(),
                                  'friction_alpha2_bounds': self.friction_bounds[j, 1].tolist()})
            joints[name] = entry
        return {'samples': int(self.time.size), 'start_s': float(self.time[0]), 'end_s': float(self.time[-1]),
                'rate_hz': self.rate_hz, 'delay_samples': self.delay, 'pieces': self.pieces,
                'gaps': self.gaps.to_dict(), 'notes': list(self.notes), 'joints': joints}


def estimate(dataset: Dataset, result, settings: EstimationSettings | None, robot, *,
             progress: Callable[[int, int], None] | None = None, drives=None, payload=None) -> EstimationHistory:
    """Replay ``dataset`` through the estimators of :func:`build_estimators` (module docstring).

    Args:
        dataset: the recording; needs q and the motor current (joint_currents), and θ (motor_states) for
            the stiffness (without θ the friction is adapted on rigid joints, θ = q); temperature optional.
            Joints are matched to the robot's by name.
        result: identification result of ``robot`` or None.
        settings: the user's settings; None: the defaults of :class:`EstimationSettings`.
        robot: the :class:`RobotModel`.
        progress: called as progress(samples done, samples total) after every batch.
        drives: drive data instead of the result's or the robot's (:func:`build_estimators`).
    """
    settings = settings or EstimationSettings()
    where = dataset.source.get('bag', 'the recording')
    if dataset.current is None:
        raise InputError(f'{where} has no joint_currents (motor currents): the online estimators need the current')
    rotor = dataset.theta is not None
    if not rotor and settings.stiffness:
        raise InputError(f'{where} has no motor_states (rotor positions θ): the stiffness estimation needs both '
                         'encoders (with the stiffness off, the friction is adapted on rigid joints, θ = q)')
    if tuple(dataset.joint_names) != tuple(robot.joint_names):
        dataset = dataset.reordered(robot.joint_names)
    rate_hz = dataset.rate_hz
    estimators = build_estimators(robot, result, settings, rate_hz, drives=drives, rotor=rotor, payload=payload)
    delay = estimators.delay
    pieces = dataset.contiguous_pieces()
    total, done = sum(p.n_samples for p in pieces), 0
    times: list[np.ndarray] = []
    rows: dict[str, list[dict]] = {name: [] for name in FIELDS}
    for k, piece in enumerate(pieces):
        if k:
            estimators.restart_signal_path()
        outputs: dict[str, list] = {name: [] for name in FIELDS}
        for start in range(0, piece.n_samples, settings.batch):
            stop = min(start + settings.batch, piece.n_samples)
            inputs = (piece.q[start:stop], piece.theta[start:stop] if rotor else None, piece.current[start:stop],
                      None if piece.temperature is None else piece.temperature[start:stop])
            for name, batches in outputs.items():
                estimator = getattr(estimators, name)
                if estimator is not None:  # only the kept fields: the rest would hold ~10× the memory
                    out = estimator.update(*inputs)
                    batches.append({f: getattr(out, f) for f in FIELDS[name]})
            done += stop - start
            if progress is not None:
                progress(done, total)
        described = max(piece.n_samples - delay, 0)  # row delay + i describes sample i of the piece
        times.append(piece.t[:described])
        for name, batches in outputs.items():
            if batches:
                rows[name].append({f: np.concatenate([b[f] for b in batches])[delay:delay + described]
                                   for f in FIELDS[name]})
    time = np.concatenate(times) if times else np.zeros(0)
    if time.size == 0:
        raise InputError(f'{where}: no contiguous piece is longer than the estimators\' delay ({delay} samples)')
    stiffness, friction = ({f: np.concatenate([r[f] for r in rows[name]]) for f in FIELDS[name]} if rows[name]
                           else {} for name in FIELDS)
    return EstimationHistory(
        joint_names=tuple(robot.joint_names), time=time, stiffness_alpha=stiffness.get('alpha'),
        fit=stiffness.get('fit'), learning=stiffness.get('learning'), friction_alpha=friction.get('alpha'),
        friction_active=friction.get('active'), friction_capped=friction.get('capped'),
        friction_bounds=None if estimators.friction is None else np.stack(
            (estimators.friction.lower, estimators.friction.upper), axis=-1),
        phi_max=estimators.stiffness.phi_max.copy() if estimators.stiffness is not None else np.full(robot.n, np.nan),
        deflected=estimators.stiffness.deflected.copy() if estimators.stiffness is not None else None,
        rate_hz=rate_hz, delay=delay, gaps=dataset.gaps(), pieces=len(pieces), settings=settings,
        notes=estimators.notes, residual_rms={name: getattr(estimators, name).residual_rms for name in FIELDS
                                              if getattr(estimators, name) is not None})
