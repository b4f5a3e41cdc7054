"""One model to fit (a :class:`Candidate`, a frozen value) and its equations drawn from the prepared ones.

:class:`IdentificationProblem` pairs the :class:`~dynid.identify.equations.prepare.Equations` built once with a
candidate and gives the columns of that model; neither changes. The model reads:

For every recording the inverse dynamic model reads, per joint and (decimated) sample,

    y = W_rigid·χ_rigid + W_friction·χ_friction [+ W_Ia·Ia]                       (IDIM, eq. (6))

- **y**: ``current`` → K_τ·i with the nominal drive gains, minus B·θ̈ when motor encoders exist and
  ``rotor_compensation`` is on (thesis ch.5 eq. (P2-14)); ``motor_torque`` → the effort of
  ``joint_states`` where the driver reports the motor's torque already in N·m at the link side
  (K_τ·i: gear ratio applied, rotor inertia and friction inside it), with the rotor inertias
  identified (no drive data needed; with coupled drives the effort is the drives' torque in joint space,
  τ = Cᵀ·(K_τ·i), as joint_states holds joint quantities, and each motor's equation takes C⁻ᵀ·τ; a log of each
  motor's own torque is imported as ``motor_torque`` columns, which the import keeps as currents);
  ``joint_torque`` → the measured joint torque (a torque sensor after the gear: no rotor inertia in it, so rotor
  options are refused). ``auto`` takes currents when the drive gains are known (or identified), else the joint
  torque. Known payload contributions are subtracted.
- **W_rigid**: the base columns of [arm standard parameters | unknown payload parameters], found by
  QR on random states with the recordings' payload structure (rows with and without payload), so
  that payload parameters identifiable only from the difference between runs are kept (Gautier &
  Briot eq. (12)).
- **W_friction** (per joint, on the friction velocity ω: rotor velocity θ̇ when recorded, else q̇): the columns of the
  candidate's friction law (:mod:`dynid.friction.laws`: ``none``, ``viscous_coulomb``, ``load_squared``,
  ``load_absolute``, ``hamon``, ``comprehensive``, or a law registered outside dynid) with s = sgn(ω).

  ``temperature`` adds sgn(ω)·√|ω|·(β1 + β2·T + β3·T⁻³). A Stribeck excess (``stribeck``,
  :class:`dynid.identify.result.stribeck.StribeckExcess`: the model choice keeps it per joint) adds the column Fs of
  sgn(ω)·exp(−(|ω|/Vs_j)^μ_j) (Madsen 2020 thesis eq. (P1-25): the excess F_S − F_C of static friction over Coulomb),
  built at the full rate and decimated like the regressor. Terms on τ_out (the output torque, the
  model's own rigid-body torque) are linear once τ_out is fixed: the solvers iterate, updating τ_out
  from the latest estimate (the "load loop" of I-IRLS; Hamon's power sign from sgn(τ_out·ω), his
  iterative alternative to eq. (26)). Load-dependent features are built at the decimated rate.
- **W_Ia**: rotor inertia on θ̈ (or q̈), when the rotor is not compensated.

**Coupled joints** (the drives' coupling C, :mod:`dynid.model.drives`): the equations are the motors', one per
drive: y = C⁻ᵀ·W_rigid·χ_rigid + W_friction(θ̇)·χ_friction [+ W_Ia(θ̈)·Ia] with θ̇ = C·q̇ (or the motor encoders'),
so each motor's friction and rotor inertia act on its own equation, where they physically sit. A joint that several
motors make (a row of C⁻¹ with more than one nonzero entry) may hold friction on its own velocity q̇_j too, a torque on
the joint that enters the motors' equations through row j of C⁻¹ (the candidate's ``joint_side``: columns Fcq_j, Fvq_j
after the friction's, :mod:`dynid.identify.equations.joint_side`).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from dynid.errors import InputError
from dynid.friction.law import FrictionLaw, LawContext
from dynid.friction.laws import friction_law
from dynid.friction.power_law import power_term, power_velocity
from dynid.identify.equations.joint_side import JOINT_SIDE_SYMBOLS, joint_side_columns, joint_side_names
from dynid.identify.equations.prepare import Block, Equations, prepare
from dynid.identify.equations.read import read
from dynid.identify.equations.request import IdentifyOptions, ModelSpec, RecordingInput, friction_symbols
from dynid.identify.result.stribeck import StribeckExcess, stribeck_decay

#: The temperature term's symbols, each the prepared feature of its own name (:mod:`dynid.identify.equations.prepare`).
TEMPERATURE_SYMBOLS = ('beta1', 'beta2', 'beta3')
#: Decimated samples per piece of W built at a time (:meth:`IdentificationProblem.equations`).
_EQUATION_SAMPLES = 2048


@dataclass(frozen=True)
class Held:
    """A parameter held at a value instead of identified, and why (:mod:`dynid.identify.equations.held`, the model
    choice)."""

    name: str
    value: float
    reason: str


@dataclass(frozen=True)
class Candidate:
    """One model to fit: everything the model choice varies, as a value.

    ``friction``: the law's family (its columns per joint, :func:`dynid.identify.equations.request.friction_symbols`)
    with the temperature term or not; ``held``: the parameters held at a value (a joint's law leaving out a term holds
    its columns at 0); ``exponents``: the comprehensive law's viscous exponents α_j (None: the spec's on every joint;
    Li's friction loop refits them from these); ``stribeck``: the Stribeck excess's columns Fs_j (None: none);
    ``rotor``: the rotor inertias' columns kept where the equations have them (False: left out where that leaves the
    other base columns as they are); ``joint_side``: the joints (indices) whose own friction the model holds, among
    the equations' (:mod:`dynid.identify.equations.joint_side`); ``options``: the method, the robust weights, the load
    loop, the prior (its weight s) and physical consistency."""

    friction: str
    options: IdentifyOptions
    temperature: bool = False
    held: tuple[Held, ...] = ()
    exponents: tuple[float, ...] | None = None
    stribeck: StribeckExcess | None = None
    rotor: bool = True
    joint_side: tuple[int, ...] = ()

    @property
    def method(self) -> str:
        return self.options.method

    def holding(self, entries: dict[str, dict]) -> Candidate:
        """This candidate with ``entries`` ({name: {'value', 'reason'}}) held too (replacing any held before)."""
        new = {name: Held(name, float(entry['value']), entry['reason']) for name, entry in entries.items()}
        kept = tuple(new.pop(h.name, h) for h in self.held)  # in place where held before, as dict.update does
        return dataclasses.replace(self, held=kept + tuple(new.values()))

    def only_holding(self, names) -> Candidate:
        """This candidate holding only the parameters among ``names`` it held."""
        names = set(names)
        return dataclasses.replace(self, held=tuple(h for h in self.held if h.name in names))


@dataclass(frozen=True)
class IdentificationProblem:
    """The equations of one candidate (module docstring), built by :meth:`of`; read-only."""

    prepared: Equations
    candidate: Candidate
    stribeck_features: tuple[np.ndarray, ...] | None = None  # each block's Fs feature (M, n), where not prepared

    @classmethod
    def of(cls, equations: Equations, candidate: Candidate) -> IdentificationProblem:
        """The problem of ``candidate`` on ``equations``: its Stribeck columns made once (from the full-rate velocity,
        decimated as the regressor is) where they are not the prepared ones."""
        stribeck = candidate.stribeck
        features = None
        if stribeck is not None and stribeck is not equations.stribeck:
            def feature(w: np.ndarray, j: int) -> np.ndarray | None:
                if not stribeck.joints[j]:
                    return None
                return np.sign(w) * stribeck_decay(w, stribeck.velocities[j], stribeck.shapes[j])

            features = tuple(_per_joint(block, feature) for block in equations.blocks)
        return cls(equations, candidate, features)

    # ------------------------------------------------------------------------------- what it is
    @property
    def robot(self):
        return self.prepared.robot

    @property
    def rotor_dropped(self) -> bool:
        """The rotor inertias' columns left out (the candidate's ``rotor`` False, where the equations can)."""
        return not self.candidate.rotor and self.prepared.base_without_rotor is not None

    @property
    def spec(self) -> ModelSpec:
        """The model as identified: the equations' spec with the candidate's law."""
        return dataclasses.replace(self.prepared.spec, friction=self.candidate.friction,
                                   temperature=self.candidate.temperature,
                                   rotor_inertia=self.prepared.spec.rotor_inertia and not self.rotor_dropped,
                                   joint_side_friction=bool(self.joint_side))

    @property
    def base(self):
        return self.prepared.base_without_rotor if self.rotor_dropped else self.prepared.base

    @property
    def identify_rotor_inertia(self) -> bool:
        return self.prepared.torque.identify_rotor_inertia and not self.rotor_dropped

    @property
    def held(self) -> dict[str, dict]:
        """{name: {'value', 'reason'}} of the parameters held at a value."""
        return {h.name: {'value': h.value, 'reason': h.reason} for h in self.candidate.held}

    @property
    def stribeck(self) -> StribeckExcess | None:
        return self.candidate.stribeck

    @property
    def joint_side(self) -> tuple[int, ...]:
        """The joints whose own friction the model holds (:mod:`dynid.identify.equations.joint_side`), among the
        equations'."""
        return tuple(j for j in self.candidate.joint_side if j in self.prepared.joint_side)

    @property
    def changes(self) -> list[dict]:
        """What the equations changed in the caller's choices (:class:`dynid.identify.equations.prepare.Torque`)."""
        return list(self.prepared.torque.changes)

    def __getattr__(self, name: str):
        """The prepared equations' own attributes (recordings, blocks, settings, drives, gaps, excluded, ...)."""
        if name in _FROM_TORQUE:
            return getattr(self.prepared.torque, _FROM_TORQUE[name])
        if name in _FROM_EQUATIONS:
            return getattr(self.prepared, name)
        raise AttributeError(name)

    # ------------------------------------------------------------------------------- columns
    @property
    def rigid_names(self) -> list[str]:
        return list(self.base.names)

    @property
    def friction_names(self) -> tuple[str, ...]:
        """Per-joint friction symbols in column order: the law's (and temperature term), then ``Fs`` where the
        candidate holds a Stribeck excess."""
        stribeck = ('Fs',) if self.candidate.stribeck is not None else ()
        return friction_symbols(self.candidate.friction, self.candidate.temperature) + stribeck

    @property
    def result_friction_symbols(self) -> list[str]:
        """The friction symbols of the result's parameters ``symbol_j``: the law's, then the joints' own friction's
        where the model holds it."""
        return list(self.friction_names) + (list(JOINT_SIDE_SYMBOLS) if self.joint_side else [])

    def parameter_names(self) -> list[str]:
        """Names of the columns of :meth:`equations`: base rigid parameters, then friction per joint, then the
        joints' own friction (``Fcq_j``, ``Fvq_j``) where the model holds it."""
        n = self.robot.n
        return self.rigid_names + [f'{symbol}_{j + 1}' for symbol in self.friction_names for j in range(n)] + \
            joint_side_names(self.joint_side)

    @property
    def _rigid_kept(self) -> np.ndarray | None:
        """The prepared rigid columns this candidate keeps (a mask), or None: all of them."""
        if not self.rotor_dropped:
            return None
        return np.array([not name.startswith('Ia_') for name in self.prepared.base.names])

    def _output_torque(self, block: Block, rigid_parameters: np.ndarray | None) -> np.ndarray:
        """τ_out (M, n) of ``block`` at the base rigid parameters (zeros if None) plus its known payload torque."""
        if rigid_parameters is None:
            return block.known_output.copy()
        kept = self._rigid_kept
        if kept is not None:  # the dropped columns' parameters zero: no copy of the block's columns
            full = np.zeros(kept.size)
            full[kept] = rigid_parameters
            rigid_parameters = full
        return block.rigid @ rigid_parameters + block.known_output

    def friction_features(self, k: int, output_torque: np.ndarray, exponents: np.ndarray) -> list[np.ndarray]:
        """(M, n) features of block ``k`` in ``friction_names`` order for the τ_out estimate and exponents α."""
        block, law = self.prepared.blocks[k], self.law
        w = block.velocity
        features = {symbol: block.features[feature.kind] for symbol, feature in law.prepared.items()}
        features.update({symbol: block.features[symbol] for symbol in TEMPERATURE_SYMBOLS if symbol in block.features})
        if self.candidate.stribeck is not None:
            features['Fs'] = block.features['Fs'] if self.stribeck_features is None else self.stribeck_features[k]
        for symbol in law.shaped_symbols:  # made from the full-rate velocity one joint at a time, decimated
            features[symbol] = _per_joint(block, lambda v, j, symbol=symbol: law.shaped(v, np.sign(v), self.law_context(
                exponents[j]))[symbol]) if block.decimator is not None else \
                law.shaped(w, np.sign(w), self.law_context(exponents))[symbol]
        if law.load_symbols:
            features.update(law.loaded(w, np.sign(w), output_torque, self.law_context(exponents)))
        return [features[symbol] for symbol in self.friction_names]

    @property
    def law(self) -> FrictionLaw:
        """The candidate's friction law (:mod:`dynid.friction.laws`)."""
        return friction_law(self.candidate.friction)

    def law_context(self, exponents) -> LawContext:
        """The law's fixed shapes: Hamon's ω_H, the viscous exponents α (``exponents``) and the power term's v_s."""
        return LawContext(self.prepared.spec.hamon_velocity, exponents, self.power_velocity)

    def velocity_rows(self, joint: int) -> np.ndarray:
        """The decimated friction velocity ω [rad/s] on the kept rows of joint ``joint`` over all recordings (the
        rows of :meth:`power_feature`)."""
        parts = []
        for block in self.prepared.blocks:
            keep = slice(None) if block.keep is None else block.keep[:, joint]
            parts.append(block.velocity[:, joint][keep])
        return np.concatenate(parts)

    def power_feature(self, joint: int, exponent: float) -> np.ndarray:
        """The kept rows of joint ``joint``'s viscous power feature (:func:`dynid.friction.power_law.power_term`) over
        all recordings (I-IRLS α search)."""
        velocity = self.power_velocity
        return self._full_rate_feature(joint, lambda w: power_term(w, exponent, velocity))

    @property
    def power_velocity(self) -> float | None:
        """v_s [rad/s] of the comprehensive law's viscous power term (:mod:`dynid.friction.power_law`), None for
        Li's form as written."""
        return power_velocity(self.prepared.spec.power_form, self.settings.stiction_velocity)

    def stribeck_feature(self, joint: int, velocity: float, shape: float) -> np.ndarray:
        """The kept rows of joint ``joint``'s Stribeck feature sgn(ω)·exp(−(|ω|/Vs)^μ) over all recordings (the model
        choice's candidate, :mod:`dynid.identify.selection.candidates`)."""
        return self._full_rate_feature(joint, lambda w: np.sign(w) * stribeck_decay(w, velocity, shape))

    def _full_rate_feature(self, joint: int, feature_of) -> np.ndarray:
        """``feature_of(ω)`` of joint ``joint``'s full-rate friction velocity, decimated, on its kept rows."""
        parts = []
        for block in self.prepared.blocks:
            feature = block.decimator(feature_of(block.full_velocity[:, joint]))
            keep = np.ones(feature.shape, dtype=bool) if block.keep is None else block.keep[:, joint]
            parts.append(feature[keep])
        return np.concatenate(parts)

    def _block_columns(self, k: int, rigid_parameters: np.ndarray | None, exponents: np.ndarray,
                       with_current: bool) -> list[np.ndarray]:
        """The column groups of recording k's W in column order: (M, n, p_rigid) columns as they are, and
        (M, n) per-joint features, each n block-diagonal columns (:meth:`_assembled`)."""
        block = self.prepared.blocks[k]
        friction = self.friction_features(k, self._output_torque(block, rigid_parameters), exponents)
        joint_side = [joint_side_columns(block.features, self.joint_side, self.prepared.torque.coupling)] \
            if self.joint_side else []
        return ([block.current] if with_current else []) + [block.rigid] + friction + joint_side

    def _assembled(self, groups: list[np.ndarray], samples: slice) -> np.ndarray:
        """W of the decimated ``samples`` as (samples, n, p) from :meth:`_block_columns`' groups (the rigid columns
        this candidate keeps taken a piece at a time)."""
        eye, kept = np.eye(self.robot.n)[None, :, :], self._rigid_kept
        rigid = 1 if groups[0].ndim == 2 else 0  # the current's columns come first (TLS)
        return np.concatenate([(g[samples][:, :, kept] if i == rigid and kept is not None else g[samples])
                               if g.ndim == 3 else g[samples, :, None] * eye for i, g in enumerate(groups)], axis=2)

    def block_equations(self, k: int, rigid_parameters: np.ndarray | None, exponents: np.ndarray,
                        with_current: bool = False) -> np.ndarray:
        """W of recording k as (M, n, p): rows of every decimated sample and joint, none dropped."""
        return self._assembled(self._block_columns(k, rigid_parameters, exponents, with_current), slice(None))

    def block_keep(self, k: int) -> np.ndarray:
        return self.prepared.block_keep(k)

    def block_times(self, k: int) -> np.ndarray:
        return self.prepared.block_times(k)

    def equations(self, rigid_parameters: np.ndarray | None = None, exponents: np.ndarray | None = None,
                  with_current: bool = False, spare: int = 0):
        """Stacked system over all recordings: (W, y, joint_of_row, block_of_row, known).

        ``rigid_parameters`` (base) give τ_out for load-dependent friction (zeros if None).
        ``with_current`` prepends the block-diagonal current columns (TLS); then y is None and
        ``known`` holds the known payload-mass torque per row. ``spare``: columns of zeros after W's, room for
        columns the caller adds (the model choice's candidates) without a copy of W.
        """
        n = self.robot.n
        blocks = self.prepared.blocks
        exponents = np.full(n, self.prepared.spec.exponent) if exponents is None else exponents
        keeps = [self.block_keep(k) for k in range(len(blocks))]
        w, row = None, 0
        rows_y, joints, owners, knowns = [], [], [], []
        for k, (block, keep) in enumerate(zip(blocks, keeps, strict=True)):
            # W is filled in place a few thousand samples at a time: the whole block's (M, n, p) array and its
            # kept rows would hold W twice more (~150 MB for 10 minutes at 1 kHz).
            groups = self._block_columns(k, rigid_parameters, exponents, with_current)
            if w is None:
                kept = self._rigid_kept
                columns = sum(g.shape[2] if g.ndim == 3 else n for g in groups) - \
                    (0 if kept is None else int(kept.size - np.count_nonzero(kept)))
                w = np.zeros((sum(int(np.count_nonzero(kept)) for kept in keeps), columns + spare)) if spare else \
                    np.empty((sum(int(np.count_nonzero(kept)) for kept in keeps), columns))
            for start in range(0, len(keep), _EQUATION_SAMPLES):
                samples = slice(start, start + _EQUATION_SAMPLES)
                kept = keep[samples]
                count = int(np.count_nonzero(kept))
                w[row:row + count, :columns] = self._assembled(groups, samples)[kept]
                row += count
            if block.y is not None:
                rows_y.append(block.y[keep])
            knowns.append(block.known_output[keep])
            joints.append(np.broadcast_to(np.arange(n), keep.shape)[keep])
            owners.append(np.full(int(keep.sum()), k))
        y = np.concatenate(rows_y) if rows_y else None
        return w, y, np.concatenate(joints), np.concatenate(owners), np.concatenate(knowns)

    def output_columns(self, rigid_parameters: np.ndarray, exponents: np.ndarray | None = None
                       ) -> tuple[np.ndarray, np.ndarray]:
        """(indices, values (rows, k)) of the columns of :meth:`equations` that depend on τ_out (the load-dependent
        friction's), at the base rigid parameters ``rigid_parameters``: what changes from one pass of the load loop to
        the next, so that a caller can update its W in place instead of building it again."""
        n = self.robot.n
        exponents = np.full(n, self.prepared.spec.exponent) if exponents is None else exponents
        symbols = [s for s in self.friction_names if s in self.law.load_symbols]
        start = len(self.rigid_names)
        indices = np.array([start + self.friction_names.index(s) * n + j for s in symbols for j in range(n)], dtype=int)
        parts = []
        for k, block in enumerate(self.prepared.blocks):
            features = dict(zip(self.friction_names, self.friction_features(
                k, self._output_torque(block, rigid_parameters), exponents), strict=True))
            samples, joints = np.nonzero(self.block_keep(k))  # the kept rows, sample-major as equations() stacks them
            part = np.zeros((len(samples), len(indices)))
            for i, symbol in enumerate(symbols):
                part[np.arange(len(samples)), i * n + joints] = features[symbol][samples, joints]
            parts.append(part)
        return indices, np.concatenate(parts)

    def describe(self) -> dict:
        """Provenance of the problem (for the result file)."""
        return {**self.prepared.describe(), 'rotor_inertia_identified': self.identify_rotor_inertia,
                'joint_side_joints': [self.robot.joint_names[j] for j in self.joint_side]}


def _per_joint(block: Block, feature_of) -> np.ndarray:
    """(M, n) the decimated ``feature_of(ω_j, j)`` of each joint's full-rate friction velocity ω_j (None: a joint
    without the feature, zeros), one joint at a time (a 10-minute 1 kHz log's full-rate (N, n) arrays are ~29 MB
    each)."""
    out = np.zeros(block.velocity.shape)
    for j in range(out.shape[1]):
        feature = feature_of(block.full_velocity[:, j], j)
        if feature is not None:
            out[:, j] = block.decimator(feature)
    return out


#: The equations' attributes a problem gives as its own (:meth:`IdentificationProblem.__getattr__`).
_FROM_EQUATIONS = ('recordings', 'origins', 'blocks', 'settings', 'drives', 'drive_gains_unknown', 'gaps', 'excluded',
                   'payload_blocks', 'warnings', 'still', 'keep_full_velocity')
_FROM_TORQUE = {'torque_source': 'source', 'compensate_rotor': 'compensate_rotor',
                'friction_on_rotor': 'friction_on_rotor', 'coupling': 'coupling'}


def problem_for(robot, recordings: list[RecordingInput], spec: ModelSpec, settings=None, drives=None,
                stribeck: StribeckExcess | None = None, joint_side: tuple[int, ...] = ()) -> IdentificationProblem:
    """The problem of the model ``spec`` on ``recordings``, read and prepared (e.g. a result's model on another
    recording, to predict its torque: :mod:`dynid.identify.validation.validate`); ``stribeck``: a result's Stribeck
    excess; ``joint_side``: the joints whose own friction a result holds (:mod:`dynid.identify.equations.joint_side`),
    which the equations must be able to make."""
    from dynid.signal.preprocess import FilterSettings

    settings = settings or FilterSettings()
    equations = prepare(robot, read(robot, recordings, settings), spec, settings, drives, stribeck=stribeck)
    missing = [robot.joint_names[j] for j in joint_side if j not in equations.joint_side]
    if missing:
        raise InputError(f'the model holds friction on the own velocity of {", ".join(missing)} (a joint several '
                         f'motors turn), which these drives do not make of several motors: give the drives file of '
                         f'the identification ({{drives}})', fields=('drives',))
    return IdentificationProblem.of(equations, Candidate(spec.friction, IdentifyOptions(), spec.temperature,
                                                         stribeck=equations.stribeck, joint_side=tuple(joint_side)))
