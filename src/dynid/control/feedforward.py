"""Feedforward: the sum of the configured terms, as the effort the backend expects.

    τ_ff = Σ_terms τ_term(q_d, q̇_d, q̈_d, context)         [N·m, link side]

then, in this order (docs/contract.md, docs/backends):

1. ``compensate_gravity`` False (UR, Franka: the robot compensates gravity itself): the gravity part of
   every term that has one (``gravity(q, context)``, the rigid-body term) is subtracted. The load torque
   of the friction terms keeps gravity: the gear carries it whoever commands it.
2. ``compensate_friction`` False (Franka: libfranka adds motor friction to the commanded torque): friction
   terms are left out (``left_out`` says so; they are still built, so a configuration error shows on every
   backend).
3. Per-joint effort limits (the robot model's, or ``effort_limits``) clip τ_ff; an optional
   ``rate_limit`` [N·m/s] bounds its change from one sample to the next (the first sample after a
   reset starts from 0, so an activated controller ramps in).
4. ``effort_is_current`` (UR: effort is motor current): the output is i = τ_ff / K_τ [A], K_τ the
   drive gain [N·m/A, link side] of the result (identified or the nominal one it was identified with),
   else of the robot's drive data, else the ``drive_gains`` given.

A term named with a trailing ``?`` (``rotor_inertia?``) is wanted where it can be built: one that cannot (no
drive data for the rotor inertia, no identification result for the friction) is left out with the reason
(``left_out``: ``dropped: ...``); a term named plainly refuses with the reason.

A sample whose input is not finite (q, q̇, q̈, or a per-sample context signal, or α̂), or whose sum is
not finite (a term gone wrong), gives 0 on every joint and counts one error (``errors``,
``last_error``); the terms do not see it (their memory skips it) and the rate limiter restarts from 0.
NaN never leaves the Feedforward.

τ_J,d (``context.desired_joint_torque``, the load of the load-dependent friction and the torque the
joints deflect under) is computed once per call: it is the rigid-body term's torque when that term is
configured, else that of a rigid-body model built for the purpose (``options['rigid_body']``, e.g. the
payload, apply to it even when the rigid_body term itself is not configured).
Term combinations that count the same friction twice are refused: friction_static with friction_egms
or friction_adaptive; with friction_egms and friction_adaptive together, friction_egms gives F_V only
(Madsen 2020, ch.6 eq. (30)).

The default terms (:data:`DEFAULT_TERMS`: rigid body, rotor inertia, static friction) are also
feedforward_node's. Friction usually dominates the wrists' torque, so the feedforward warns where it runs
without it: the default terms leave friction_static out, with a warning, where there is no result or the
result has no friction model (named terms without a result are refused instead), and terms without any
friction term on a result that identified friction warn too (unless the backend compensates friction).
The default terms also leave rotor_inertia out, with a warning, where neither the drive data nor the result
give B (a robot dynid does not know), so that the default runs on any arm.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Mapping, Sequence

import numpy as np

from dynid.checks import positive
from dynid.control.context import SAMPLED_FIELDS, FeedforwardContext
from dynid.control.plugins import build_term
from dynid.control.rigid_body import RigidBodyTerm
from dynid.control.term import DEFAULT_RATE_HZ, per_joint
from dynid.errors import InputError
from dynid.identify import result_drives

#: the terms of ``Feedforward(robot, result)`` and of feedforward_node (module docstring)
DEFAULT_TERMS = ('rigid_body', 'rotor_inertia', 'friction_static')
#: the terms that apply a result identified with coupled joints (the drives' coupling C, :mod:`dynid.model.drives`):
#: their motor-side parts (rotor inertia, friction) act on θ = C·q and reach the joints as Cᵀ·τ_m
COUPLED_TERMS = DEFAULT_TERMS


class Feedforward:
    """Σ of feedforward terms with the backend's effort semantics (module docstring).

    Args:
        robot: the :class:`~dynid.model.RobotModel` (joint order, effort limits, drive data).
        result: the :class:`~dynid.identify.result.result.IdentificationResult` of ``robot``, or None.
        terms: term names (entry-point group ``dynid.feedforward_terms``; ``name?``: where it can be built) or
            term objects, in order.
        options: {term name: {option: value}}.
        compensate_gravity, compensate_friction, effort_is_current: the backend's semantics.
        drive_gains: K_τ [N·m/A] per joint (or {joint: value}) for ``effort_is_current``; default the
            result's, else the robot's drive data.
        effort_limits: |τ| limits [N·m] per joint (or {joint: value}); default the robot model's
            (infinite where it has none).
        rate_limit: largest |dτ/dt| [N·m/s], per joint or one value; None: no rate limit.
        rate_hz: sample rate [Hz] of ``step`` and of the rows of ``evaluate``.
        warn: what is told of a feedforward without friction (module docstring); default
            ``warnings.warn``.

    Attributes:
        terms: {name: term} of the terms that run. left_out: {name: reason} of those left out.
        warnings: what was told through ``warn``.
        errors: samples answered with 0 because of non-finite input or output. last_error: why.
    """

    def __init__(self, robot, result=None, terms: Sequence = DEFAULT_TERMS, options: Mapping | None = None, *,
                 compensate_gravity: bool = True, compensate_friction: bool = True, effort_is_current: bool = False,
                 drive_gains=None, effort_limits=None, rate_limit=None, rate_hz: float = DEFAULT_RATE_HZ,
                 warn: Callable[[str], None] | None = None) -> None:
        self.robot, self.result, self.n = robot, result, robot.n
        self.compensate_gravity, self.compensate_friction = bool(compensate_gravity), bool(compensate_friction)
        self.effort_is_current = bool(effort_is_current)
        self.rate_hz = positive(rate_hz, 'rate_hz')
        default_terms = not isinstance(terms, str) and tuple(terms) == DEFAULT_TERMS
        terms = [terms] if isinstance(terms, str) else list(terms)
        options = _checked_options([t.rstrip('?') for t in terms if isinstance(t, str)], options)
        self.terms, self.left_out, self.warnings = {}, {}, []
        friction = _friction_model(result)
        _check_coupled(robot, result, terms, self.effort_is_current)
        for entry in terms:
            if default_terms and entry == 'friction_static' and friction is None:
                self.left_out[entry] = ('no identification result' if result is None
                                        else 'the result has no friction model')
                self._warn(f'feedforward without friction: {self.left_out[entry]} (identify it, e.g. dynid identify '
                           f'--friction viscous_coulomb); friction is often most of the wrists\' torque', warn)
                continue
            if isinstance(entry, str):
                name = entry.rstrip('?')
                wanted_where_possible = entry.endswith('?') or (default_terms and name == 'rotor_inertia')
                try:
                    term = build_term(name, robot, result, {'rate_hz': self.rate_hz, **options.get(name, {})})
                except InputError as error:
                    if not wanted_where_possible or name in self.left_out:
                        raise
                    self.left_out[name] = f'dropped: {error}'
                    self._warn(f'feedforward without {name}: {error}', warn)
                    continue
            else:
                term, name = entry, _name(entry)
            if name in self.terms or name in self.left_out:
                raise InputError(f'feedforward terms repeat: {name!r}')
            if getattr(term, 'friction', False) and not self.compensate_friction:
                self.left_out[name] = 'friction: the backend compensates friction (compensate_friction false)'
            else:
                self.terms[name] = term
        if friction is not None and self.compensate_friction and not default_terms \
                and not any(getattr(term, 'friction', False) for term in self.terms.values()):
            self._warn(f'feedforward without friction: the result identified friction ({friction}) but no friction '
                       f'term runs (terms {list(self.terms)}); add friction_static, or set compensate_friction false '
                       f'where the robot compensates friction itself', warn)
        self._steps = [(term, getattr(term, 'step', None) or _one_sample(term)) for term in self.terms.values()]
        self._gravity = [term for term in self.terms.values() if callable(getattr(term, 'gravity', None))] \
            if not self.compensate_gravity else []
        self._provider = next((t for t in self.terms.values() if getattr(t, 'provides_joint_torque', False)), None)
        self._needs_joint_torque = any(getattr(t, 'needs_joint_torque', False) for t in self.terms.values())
        self._joint_torque_model = None
        if self._needs_joint_torque and self._provider is None:
            self._joint_torque_model = RigidBodyTerm.from_result(robot, result, options.get('rigid_body'))

        limits = robot.effort_limits if effort_limits is None else per_joint(
            effort_limits, robot.joint_names, 'effort_limits [N·m]', 0.0, strict=True)
        self.effort_limits = np.asarray(limits, dtype=float).copy()
        self._lower, self._limited = -self.effort_limits, bool(np.isfinite(self.effort_limits).any())
        self.rate_limit = None if rate_limit is None else per_joint(
            rate_limit, robot.joint_names, 'rate_limit [N·m/s]', 0.0, strict=True)
        self._max_step = None if self.rate_limit is None else self.rate_limit / self.rate_hz
        self.drive_gains = self._drive_gains(drive_gains) if self.effort_is_current else None
        self._scale = None if self.drive_gains is None else 1.0 / self.drive_gains
        self._context = FeedforwardContext()
        self.errors, self.last_error = 0, ''
        self.reset()

    def _warn(self, text: str, warn) -> None:
        self.warnings.append(text)
        if warn is None:
            warnings.warn(text, UserWarning, stacklevel=3)
        else:
            warn(text)

    def _drive_gains(self, given) -> np.ndarray:
        if given is not None:
            gains = per_joint(given, self.robot.joint_names, 'drive_gains [N·m/A]')
        elif self.result is not None and self.result.drive_gains is not None:
            gains = np.asarray(self.result.drive_gains, dtype=float)
        elif self.robot.drives is not None:
            gains = self.robot.drives.drive_gain
        else:
            raise InputError(f'effort_is_current needs drive gains: the result has none, robot {self.robot.name!r} '
                             f'has no drive data; give drive_gains [N·m/A]')
        if np.any(gains == 0):
            raise InputError(f'drive gains must be nonzero, got {gains.tolist()}')
        return gains.copy()

    def set_payload(self, payload) -> None:
        """The payload at the flange from now on (a :class:`~dynid.model.Payload`, e.g. of a dynid payload file;
        None: none): the rigid-body model's payload where the context gives none, in the rigid-body term and in
        τ_J,d of the load-dependent terms. An update of the model, not a re-identification of the arm."""
        for model in (*self.terms.values(), self._joint_torque_model):
            if isinstance(model, RigidBodyTerm):
                model.payload = payload

    def reset(self) -> None:
        """Terms back to their initial state; the rate limiter back to 0."""
        for term in self.terms.values():
            if callable(getattr(term, 'reset', None)):
                term.reset()
        self._previous = np.zeros(self.n)

    # ------------------------------------------------------------------------------------- batch
    def evaluate(self, q, dq, ddq, context: FeedforwardContext | None = None) -> np.ndarray:
        """Effort (N, n) [N·m, or A with effort_is_current] for N samples of the desired motion (N, n).

        Pure: the terms' batches start from their initial state and the rate limiter from 0, exactly
        as :meth:`step` does after :meth:`reset`; the streaming state is not touched.
        """
        q, dq, ddq = (np.asarray(x, dtype=float) for x in (q, dq, ddq))
        shape = q.shape
        if q.ndim != 2 or shape[1] != self.n or dq.shape != shape or ddq.shape != shape:
            raise InputError(f'q, dq, ddq must all have shape (N, {self.n}), got {q.shape}, {dq.shape}, {ddq.shape}')
        context = (context or FeedforwardContext()).checked(shape[0], self.n)
        good = np.all(np.isfinite(q) & np.isfinite(dq) & np.isfinite(ddq), axis=1) & context.finite_rows(shape[0])
        rows = np.flatnonzero(good)
        if rows.size < shape[0]:
            q, dq, ddq, context = q[rows], dq[rows], ddq[rows], context.rows(rows)
        torque = self._sum(q, dq, ddq, context, single=False) if rows.size else np.zeros((0, self.n))
        finite = np.all(np.isfinite(torque), axis=1)
        if rows.size == shape[0] and finite.all():  # the common case: no zero rows to fill in
            out = torque
        else:
            good[rows[~finite]] = False
            out = np.zeros(shape)
            out[rows[finite]] = torque[finite]
            bad = shape[0] - int(good.sum())
            self._count(bad, f'{bad} of {shape[0]} samples had non-finite input or feedforward: zero effort')
        out = np.minimum(np.maximum(out, self._lower), self.effort_limits)  # a new array: the terms' stay theirs
        if self._max_step is not None:
            out = limit_rate(out, np.zeros(self.n), self._max_step, ~good)
        return out if self._scale is None else out * self._scale

    def reference_correction(self, q, dq, ddq, context: FeedforwardContext | None = None):
        """(φ_d, φ̇_d, φ̈_d), each (N, n) [rad, rad/s, rad/s²]: the motor-side reference correction
        θ_d = q_d + φ_d of the flexible-joint feedforward (Madsen 2020, thesis ch.2 eq. (2.69)), for N
        consecutive samples of the desired motion at ``rate_hz``, from the configured ``flexible_joint``
        term's stiffness and this Feedforward's τ_J,d (gravity included whatever ``compensate_gravity``
        says: the joint deflects under the whole load). Only for a controller that regulates the motor
        position (:mod:`dynid.control.flexible_joint`). InputError without the flexible_joint term or
        with non-finite input (a position reference is never silently zeroed)."""
        term = self.terms.get('flexible_joint')
        if term is None or not callable(getattr(term, 'reference_correction', None)):
            raise InputError('the motor-side reference correction needs the flexible_joint term (with its '
                             'stiffness) among the terms')
        q, dq, ddq = (np.asarray(x, dtype=float) for x in (q, dq, ddq))
        shape = q.shape
        if q.ndim != 2 or shape[1] != self.n or dq.shape != shape or ddq.shape != shape:
            raise InputError(f'q, dq, ddq must all have shape (N, {self.n}), got {q.shape}, {dq.shape}, {ddq.shape}')
        context = (context or FeedforwardContext()).checked(shape[0], self.n).copy()
        finite = np.all(np.isfinite(q) & np.isfinite(dq) & np.isfinite(ddq), axis=1) & context.finite_rows(shape[0])
        if not finite.all():
            raise InputError(f'reference correction: {int((~finite).sum())} samples with non-finite input')
        if context.desired_joint_torque is None:
            model = self._provider or self._joint_torque_model  # the flexible_joint term needs τ_J,d: one exists
            context.desired_joint_torque = model.evaluate(q, dq, ddq, context)
        correction = term.reference_correction(q, dq, ddq, context)
        if not all(np.all(np.isfinite(x)) for x in correction):
            raise InputError('reference correction: not finite (the stiffness cannot carry this load)')
        return correction

    # ----------------------------------------------------------------------------------- streaming
    def step(self, q, dq, ddq, context: FeedforwardContext | None = None) -> np.ndarray:
        """Effort (n,) [N·m, or A] for one sample (n,); advances the terms' memory and the rate limiter."""
        q, dq, ddq = _vector(q), _vector(dq), _vector(ddq)
        if q.shape != (self.n,) or dq.shape != (self.n,) or ddq.shape != (self.n,):
            raise InputError(f'q, dq, ddq must have shape ({self.n},), got {q.shape}, {dq.shape}, {ddq.shape}')
        if context is not None:
            context = context.checked(None, self.n)
            if not _finite_sample(context):
                return self._fault('non-finite context signal: zero effort')
        if not math.isfinite(q @ q + dq @ dq + ddq @ ddq):
            return self._fault('non-finite q, dq or ddq: zero effort')
        torque = self._sum(q, dq, ddq, context, single=True)
        if not math.isfinite(torque @ torque):
            return self._fault('non-finite feedforward: zero effort')
        if self._limited:
            torque = np.minimum(np.maximum(torque, self._lower), self.effort_limits)
        if self._max_step is not None:
            previous, bound = self._previous, self._max_step
            torque = np.minimum(np.maximum(torque, previous - bound), previous + bound)
        self._previous = torque
        return torque if self._scale is None else torque * self._scale

    def _fault(self, reason: str) -> np.ndarray:
        self._count(1, reason)
        self._previous = np.zeros(self.n)
        return np.zeros(self.n)

    def _count(self, samples: int, reason: str) -> None:
        self.errors += samples
        self.last_error = reason

    # ------------------------------------------------------------------------------------- terms
    def _sum(self, q, dq, ddq, context: FeedforwardContext | None, single: bool) -> np.ndarray:
        """Σ of the terms [N·m] (gravity left out where the backend compensates it)."""
        if single:  # one reusable context: a dataclass copy per sample would cost more than a term
            scratch = self._context
            if context is None:
                scratch.temperature = scratch.alpha = scratch.payload = scratch.joint_torque = None
                scratch.desired_joint_torque = None
            else:
                scratch.temperature, scratch.alpha = context.temperature, context.alpha
                scratch.payload, scratch.joint_torque = context.payload, context.joint_torque
                scratch.desired_joint_torque = context.desired_joint_torque
            context = scratch
        else:
            context = context.copy()
        provided = None
        if self._needs_joint_torque and context.desired_joint_torque is None:
            model = self._provider or self._joint_torque_model
            provided = model.step(q, dq, ddq, context) if single else model.evaluate(q, dq, ddq, context)
            context.desired_joint_torque = provided
        total = None
        for term, step in self._steps:
            if term is self._provider and provided is not None:
                part = provided
            else:
                part = step(q, dq, ddq, context) if single else term.evaluate(q, dq, ddq, context)
                if type(part) is not np.ndarray or part.shape != q.shape:
                    raise InputError(f'feedforward term {_name(term)!r} returned shape {np.shape(part)}, '
                                     f'expected {q.shape}')
            total = part if total is None else total + part
        if total is None:
            total = np.zeros(q.shape)
        for term in self._gravity:
            total = total - term.gravity(q, context)
        return total


def _checked_options(names: list[str], options: Mapping | None) -> dict:
    """Per-term options, refusing options of absent terms and friction counted twice (module docstring)."""
    options = dict(options or {})
    for name, value in options.items():
        if value is not None and not isinstance(value, Mapping):
            raise InputError(f'options of {name!r} must be a mapping of option: value, got {value!r}')
        options[name] = dict(value or {})
    unknown = sorted(set(options) - set(names) - {'rigid_body'})
    if unknown:
        raise InputError(f'options given for terms that are not configured: {unknown}')
    if 'friction_static' in names and ({'friction_egms', 'friction_adaptive'} & set(names)):
        raise InputError('friction_static and the E-GMS terms model the same friction: configure one of them')
    if {'friction_egms', 'friction_adaptive'} <= set(names):
        egms = options.get('friction_egms', {})
        if egms.get('coulomb', False) is not False:
            raise InputError('with friction_adaptive, friction_egms must leave out its Coulomb part (coulomb: '
                             'false): the adaptive term carries α1·F(τ)·H (Madsen 2020, ch.6 eq. (30))')
        options['friction_egms'] = {**egms, 'coulomb': False}
    return options


def limit_rate(target: np.ndarray, previous: np.ndarray, max_step: np.ndarray, restart: np.ndarray | None = None):
    """y_k = clamp(x_k, y_{k−1} − r, y_{k−1} + r) per joint, from y_{−1} = ``previous``; (N, n) → (N, n).

    ``restart`` (N,) marks samples passed through unlimited, after which the limiter continues from them
    (the Feedforward's zero answers to faults). Stretches where the target moves slower than the limit
    are copied whole; only the samples the limit acts on are stepped one by one.
    """
    out = np.array(target, dtype=float)
    n_samples = out.shape[0]
    restart = np.zeros(n_samples, dtype=bool) if restart is None else restart
    previous = np.asarray(previous, dtype=float)
    k = 0
    while k < n_samples:
        if restart[k]:
            previous, k = out[k], k + 1
            continue
        end = k + int(np.argmax(np.append(restart[k:], True)))  # the next restart, or the end
        jumps = np.abs(np.diff(out[k:end], axis=0, prepend=previous[None])) > max_step
        first = np.flatnonzero(jumps.any(axis=1))
        if first.size == 0:
            previous, k = (out[end - 1] if end > k else previous), end
            continue
        offset = int(first[0])
        if offset:
            previous = out[k + offset - 1]
        k += offset
        while k < end:  # the limit acts: step until the output has caught up with the target
            value = np.minimum(np.maximum(target[k], previous - max_step), previous + max_step)
            out[k], previous, k = value, value, k + 1
            if np.array_equal(value, target[k - 1]):
                break
    return out


def _name(term) -> str:
    return getattr(term, 'name', '') or type(term).__name__


def _vector(x) -> np.ndarray:
    return x if type(x) is np.ndarray and x.dtype == np.float64 else np.asarray(x, dtype=float)


def _finite_sample(context: FeedforwardContext) -> bool:
    """:meth:`FeedforwardContext.finite_rows` of one sample of a checked context, in scalar arithmetic: x·x of
    a vector is finite only if every entry is (as the check of q, q̇, q̈; a few numpy calls less per sample)."""
    for name in SAMPLED_FIELDS:
        value = getattr(context, name)
        if value is not None and not math.isfinite(value @ value):
            return False
    alpha = context.alpha
    return alpha is None or math.isfinite(np.vdot(alpha, alpha))


def _one_sample(term):
    """step(q, dq, ddq, context) of a term that only has evaluate: a batch of one sample."""
    def step(q, dq, ddq, context):
        return term.evaluate(q[None], dq[None], ddq[None], context)[0]
    return step


def _friction_model(result) -> str | None:
    """The result's identified friction model, None without a result or friction."""
    model = None if result is None else (result.model or {}).get('friction')
    return None if model in (None, '', 'none') else model


def _check_coupled(robot, result, terms: Sequence, effort_is_current: bool) -> None:
    """InputError where a result identified with coupled joints meets a term or an effort meaning that takes one
    drive per joint (:data:`COUPLED_TERMS` apply the coupling)."""
    drives = None if result is None else result_drives(result, robot)
    if drives is None or drives.coupling is None:
        return
    other = [t if isinstance(t, str) else _name(t) for t in terms
             if (t.rstrip('?') if isinstance(t, str) else _name(t)) not in COUPLED_TERMS]
    if other:
        raise InputError(f'the result was identified with coupled joints (its drives\' coupling): the terms '
                         f'{list(COUPLED_TERMS)} apply it, {other} take one drive per joint')
    if effort_is_current:
        raise InputError('the result was identified with coupled joints (its drives\' coupling): effort as motor '
                         'current would need each motor\'s share C⁻ᵀ·τ, which the feedforward does not send yet; '
                         'command joint torques (effort_is_current false)', fields=('effort_is_current',))
