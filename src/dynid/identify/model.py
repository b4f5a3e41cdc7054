"""The identification model: which torque is measured and which columns explain it.

For every recording the inverse dynamic model reads, per joint and (decimated) sample,

    y = W_rigid·χ_rigid + W_friction·χ_friction [+ W_Ia·Ia]                       (IDIM, eq. (6))

- **y**: ``current`` → K_τ·i with the nominal drive gains, minus B·θ̈ when motor encoders exist and
  ``rotor_compensation`` is on (thesis ch.5 eq. (P2-14)); ``motor_torque`` → the effort of
  ``joint_states`` where the driver reports the motor's torque already in N·m at the link side
  (K_τ·i: gear ratio applied, rotor inertia and friction inside it), with the rotor inertias
  identified (no drive data needed); ``joint_torque`` → the measured joint torque (a torque sensor
  after the gear: no rotor inertia in it, so rotor options are refused). ``auto`` takes currents
  when the drive gains are known (or identified), else the joint torque. Known payload
  contributions are subtracted.
- **W_rigid**: the base columns of [arm standard parameters | unknown payload parameters], found by
  QR on random states with the recordings' payload structure (rows with and without payload), so
  that payload parameters identifiable only from the difference between runs are kept (Gautier &
  Briot eq. (12)).
- **W_friction** (per joint, on the friction velocity ω: rotor velocity θ̇ when recorded, else q̇):

  ===================  ============================================================================
  ``none``             —
  ``viscous_coulomb``  Fc·sgn(ω) + Fv·ω + tau0 (thesis ch.5 (P2-15); Gautier & Briot Fs, Fv, τ_off)
  ``load_squared``     + Fl·sgn(ω)·τ_out² (thesis (P1-27), Li Model III)
  ``load_absolute``    + Fl·sgn(ω)·|τ_out| (Li Model II, Bittencourt/Gao)
  ``hamon``            Hamon eq. (30) around τ_out: P⁺(am1 + bm·E)τ_out + P⁻(ag1 − bg·E)τ_out
                       + P⁺(cm + dm·E)sgn + P⁻(cg + dg·E)sgn + Fv·ω + tau0 (am1 = a_m − 1, ag1 = a_g − 1)
  ``comprehensive``    Li eq. (3): sgn(ω)(fc + fv·|ω|^α) + fo + fL·sgn(ω)·τ_out² (α by I-IRLS)
  ===================  ============================================================================

  ``temperature`` adds sgn(ω)·√|ω|·(β1 + β2·T + β3·T⁻³). A Stribeck excess (``stribeck``,
  :class:`dynid.identify.stribeck.StribeckExcess`: the model choice adds it per joint) adds the column Fs of
  sgn(ω)·exp(−(|ω|/Vs_j)^μ_j) (Madsen 2020 thesis eq. (P1-25): the excess F_S − F_C of static friction over Coulomb),
  built at the full rate and decimated like the regressor. Terms on τ_out (the output torque, the
  model's own rigid-body torque) are linear once τ_out is fixed: the solvers iterate, updating τ_out
  from the latest estimate (the "load loop" of I-IRLS; Hamon's power sign from sgn(τ_out·ω), his
  iterative alternative to eq. (26)). Load-dependent features are built at the decimated rate.
- **W_Ia**: rotor inertia on θ̈ (or q̈), when the rotor is not compensated.

**Coupled joints** (the drives' coupling C, :mod:`dynid.model.drives`): the equations are the motors', one per
drive: y = C⁻ᵀ·W_rigid·χ_rigid + W_friction(θ̇)·χ_friction [+ W_Ia(θ̈)·Ia] with θ̇ = C·q̇ (or the motor encoders'),
so each motor's friction and rotor inertia act on its own equation, where they physically sit.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace

import numpy as np

from dynid.errors import InputError, checked_choice
from dynid.identify.bridging import bridge_gaps
from dynid.identify.choices import AUTO, FRICTION_MODELS, LOAD_MODELS, TORQUE_SOURCES
from dynid.identify.held import excluded_mask
from dynid.identify.stribeck import StribeckExcess, stribeck_decay
from dynid.io.dataset import Dataset
from dynid.io.gaps import GapSummary, nominal_period
from dynid.io.stream_checks import effort_problem
from dynid.model.base_parameters import compute_base_parameters
from dynid.model.drives import JointDrives
from dynid.model.inertial import INERTIAL_PARAMETER_NAMES, Payload
from dynid.model.robot import RobotModel
from dynid.signal.preprocess import (
    Decimator,
    FilterSettings,
    NonUniformSamplesError,
    Signals,
    TooShortError,
    central_difference,
    differentiate,
    filtered_derivatives,
)


def friction_symbols(friction: str, temperature: bool) -> tuple[str, ...]:
    """Per-joint parameter symbols of a friction model, in column order."""
    symbols = {
        'none': (),
        'viscous_coulomb': ('Fc', 'Fv', 'tau0'),
        'load_squared': ('Fc', 'Fv', 'tau0', 'Fl'),
        'load_absolute': ('Fc', 'Fv', 'tau0', 'Fl'),
        'hamon': ('am1', 'bm', 'ag1', 'bg', 'cm', 'dm', 'cg', 'dg', 'Fv', 'tau0'),
        'comprehensive': ('fc', 'fv', 'fo', 'fL'),
    }[friction]
    return symbols + (('beta1', 'beta2', 'beta3') if temperature else ())


@dataclass
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
    exclude_joints: tuple[str, ...] = ()  # joints whose equations are left out (their motion stays in the model)
    # a Stribeck excess on every joint at this Stribeck velocity [rad/s] and shape μ (None: 2) (StribeckExcess;
    # library use, a fixed law to compare with): None, the default, has none unless the model choice keeps it
    stribeck_velocity: float | None = None
    stribeck_shape: float | None = None

    def validated(self) -> ModelSpec:
        checked_choice('friction model', self.friction, (AUTO, *FRICTION_MODELS))
        checked_choice('torque source', self.torque_source, TORQUE_SOURCES)
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
        return self.friction in LOAD_MODELS

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


#: Below this share of a recording used, its line is a loud warning.
USED_WARNING_FRACTION = 0.9


@dataclass
class RecordingGaps:
    """One recording as given: its lost samples (``summary``), the gaps bridged before filtering
    (:mod:`dynid.identify.bridging`), how many of the contiguous pieces left enter the problem (``used``;
    the others are too short for the filters and the decimation) and how much of it they hold."""

    name: str
    summary: GapSummary
    source: dict = field(default_factory=dict)
    payload_mass_known: float | None = None
    payload_known: float | None = None
    used: int = 0
    longest_piece: int = 0  # samples of the longest piece found too short
    needed: int = 0         # samples a piece needs
    pieces: int = 1         # contiguous pieces after bridging
    bridged_gaps: int = 0
    bridged_samples: int = 0
    bridge_s: float = 0.0
    used_samples: int = 0   # samples (filled ones included) in the pieces used
    used_recorded: int = 0  # of those, the recording's own samples (the others filled in over its gaps)

    @property
    def skipped(self) -> int:
        return self.pieces - self.used

    @property
    def lost_any(self) -> bool:
        """Whether any of the recording's span is not used (a gap kept as a split, a piece skipped): only then
        is its line a warning; gaps that were all bridged lose nothing."""
        return self.used_samples < self.summary.expected

    @property
    def used_fraction(self) -> float:
        """The share of the recording's span (its samples and those lost in its gaps) in the pieces used."""
        return self.used_samples / max(1, self.summary.expected)

    def line(self, loud: bool = True) -> str:
        """One line for people, e.g. 'rec: used 99.1 % of the recording (5645 of its 5700 samples and 310
        filled in over its gaps); 310 of 6010 samples lost (5.2 %) in 290 gaps, longest 9 ms: 289 bridged (up to
        20 ms), 1 kept as a split; used 2 of 2 contiguous pieces'; 'rec: only 62 % of the recording was
        used (…; less than 90 %)' when less than 90 % was used (and ``loud``). The samples counted are the
        recording's own (as its file holds them) and, apart, those filled in over bridged gaps."""
        percent = 100.0 * self.used_fraction
        filled = self.used_samples - self.used_recorded
        counts = f'{self.used_recorded} of its {self.summary.samples} samples' + (
            f' and {filled} filled in over its gaps' if filled > 0 else '')
        text = f'{self.name}: used {percent:.4g} % of the recording ({counts})'
        if loud and percent < 100.0 * USED_WARNING_FRACTION:
            text = (f'{self.name}: only {percent:.3g} % of the recording was used ({counts}; less than '
                    f'{100 * USED_WARNING_FRACTION:g} %)')
        if self.summary.gaps:
            lost = self.summary.line(self.name)[len(self.name) + 2:]
            split = len(self.summary.gaps) - self.bridged_gaps
            text += (f'; {lost}: {self.bridged_gaps} bridged (up to {1e3 * self.bridge_s:.3g} ms), {split} kept as '
                     f'split{"s" if split != 1 else ""}')
        if self.pieces > 1:
            text += f'; used {self.used} of {self.pieces} contiguous pieces'
            text += f' ({self.skipped} too short for the filters, skipped)' if self.skipped else ''
        return text

    def to_dict(self) -> dict:
        """The gap summary, the gaps bridged, the pieces used and the share used, for result files."""
        return {**self.summary.to_dict(), 'bridged_gaps': self.bridged_gaps, 'bridged_samples': self.bridged_samples,
                'bridge_s': self.bridge_s, 'pieces': self.pieces, 'pieces_used': self.used,
                'pieces_skipped': self.skipped, 'used_samples': self.used_samples,
                'used_recorded': self.used_recorded, 'lost_any': self.lost_any,
                'used_fraction': self.used_fraction, 'summary': self.line()}


@dataclass
class Block:
    """The decimated equations of one recording (rows: samples × joints, sample-major)."""

    name: str
    y: np.ndarray                 # (M, n) measured torque minus known parts [N·m]
    rigid: np.ndarray             # (M, n, p_rigid) all rigid columns (arm standard + payload blocks)
    known_output: np.ndarray      # (M, n) known payload torque (mass, or whole payload): the TLS scale and part of
                                  # τ_out for load-dependent friction; zeros without
    current: np.ndarray | None    # (M, n) motor current [A] (for drive-gain identification)
    rotor_acceleration: np.ndarray  # (M, n) θ̈ (or q̈) [rad/s²]
    velocity: np.ndarray          # (M, n) friction velocity ω [rad/s]
    temperature: np.ndarray | None  # (M, n) [°C]
    static_features: dict = field(default_factory=dict)  # symbol -> (M, n), features not depending on τ_out
    keep: np.ndarray | None = None  # (M, n) rows kept (stiction rejection)
    full_velocity: np.ndarray | None = None
    decimator: Decimator | None = None


def _structural_base(robot: RobotModel, groups: list[list[int]], n_payload_blocks: int, rotor_inertia: bool,
                     tolerance: float = 1e-8):
    """Base columns of [arm | payload blocks | Ia] given which payload blocks each recording carries."""
    rng_seed = 20200604
    q, dq, ddq = robot.random_states(40 * max(1, len(groups)), seed=rng_seed)
    y_arm = robot.regressor(q, dq, ddq)
    y_payload = robot.payload_regressor(q, dq, ddq, arm_regressor=y_arm)
    rows = y_arm.shape[0]
    per_group = rows // max(1, len(groups))
    blocks = [y_arm]
    for b in range(n_payload_blocks):  # the mass is known: the other 9 payload parameters are unknowns
        column = np.zeros((rows, 9))
        for g, members in enumerate(groups):
            if b in members:
                column[g * per_group:(g + 1) * per_group] = y_payload[g * per_group:(g + 1) * per_group, 1:]
        blocks.append(column)
    if rotor_inertia:
        from dynid.model.joint_terms import joint_term_regressor

        blocks.append(joint_term_regressor(('rotor_inertia',), dq, ddq))
    names = list(robot.standard_parameter_names)
    for b in range(n_payload_blocks):
        names += [f'{p}_P{b + 1}' for p in INERTIAL_PARAMETER_NAMES[1:]]
    if rotor_inertia:
        names += [f'Ia_{j + 1}' for j in range(robot.n)]
    return compute_base_parameters(np.hstack(blocks), names, tolerance)


_EQUATION_SAMPLES = 2048  # decimated samples per piece of W built at a time (IdentificationProblem.equations)


class IdentificationProblem:
    """All recordings prepared for one identification (decimated blocks and the column layout).

    Args:
        robot: the model to identify. recordings: the data. spec: the model. settings: filters.
        drives: nominal drives (default ``robot.drives``); needed when the torque comes from currents,
            unless the gains are identified.
        drive_gains_unknown: build for drive-gain identification (no K_τ·i target, no rotor compensation;
            no prior drive data needed).
        stribeck: the Stribeck excess per joint (its column Fs after the law's; None: none), e.g. a result's.

    A recording that lost samples has its short gaps bridged and is split at the others
    (:mod:`dynid.identify.bridging`); its pieces too short for the filters and the decimation are
    skipped, and ``gaps`` (one :class:`RecordingGaps` per recording as given) counts them and the share
    of the recording used (its line: :meth:`RecordingGaps.line`); ``warnings`` holds the lines of recordings
    with gaps or less than 90 % used. Only a problem left without any usable piece is refused.
    """

    def __init__(self, robot: RobotModel, recordings: list[RecordingInput], spec: ModelSpec,
                 settings: FilterSettings | None = None, drives: JointDrives | None = None,
                 drive_gains_unknown: bool = False, keep_full_velocity: bool = False,
                 stribeck: StribeckExcess | None = None) -> None:
        if not recordings:
            raise InputError('identification needs at least one recording')
        self.robot, self.spec = robot, spec.validated()
        #: the full-rate friction velocity kept beside the decimated blocks (the comprehensive law's sgn(ω)·|ω|^α,
        #: and the viscous exponent the model choice tries: :meth:`power_feature`, :meth:`to_comprehensive`)
        self.keep_full_velocity = keep_full_velocity or self.spec.friction == 'comprehensive'
        self.drives = drives if drives is not None else robot.drives
        self.drive_gains_unknown = drive_gains_unknown
        settings = settings or FilterSettings()
        self.warnings: list[str] = []
        recorded = self._split_at_gaps(recordings, settings)
        self._choose_torque()
        # Payload parameter blocks: one per original recording with only a known mass.
        self.payload_blocks = sorted({o for o, r in zip(self.origins, self.recordings, strict=True)
                                      if r.payload_mass is not None})
        groups = [[self.payload_blocks.index(i)] if i in self.payload_blocks else [] for i in range(len(recordings))]
        self.base = _structural_base(robot, groups, len(self.payload_blocks), self.identify_rotor_inertia)
        #: the Stribeck excess (module docstring) or None; :meth:`add_stribeck` adds it to a problem built without
        self.stribeck = stribeck
        self.excluded = excluded_mask(robot.joint_names, spec.exclude_joints)
        #: parameters held at a value, not identified ({name: {'value', 'reason'}}; dynid.identify.held)
        self.held: dict[str, dict] = {}
        self._prepare_pieces(settings, recorded, single=len(recordings) == 1)
        self.warnings[:0] = [gaps.line() for gaps in self.gaps if gaps.lost_any]
        self.still: list[str] = []  # joints not left out whose every row is in the stiction zone
        if self.blocks:
            rows = sum(self.block_keep(k).sum(axis=0) for k in range(len(self.blocks)))
            self.still = [name for name, count, out in zip(robot.joint_names, rows, self.excluded, strict=True)
                          if count == 0 and not out]
        if not self.blocks:
            lines = ''.join(f'{gaps.line(loud=False)}: ' for gaps in self.gaps if gaps.summary.gaps)
            needed = max(gaps.needed for gaps in self.gaps)
            raise InputError(f'{lines}no contiguous piece of the recordings is long enough for the filters and '
                             f'the decimation' + (f' (need at least {needed} samples, the longest has '
                                                  f'{max(gaps.longest_piece for gaps in self.gaps)})'
                                                  if needed else ''))

    def _split_at_gaps(self, recordings: list[RecordingInput], settings: FilterSettings) -> list[np.ndarray]:
        """Recordings with lost samples bridged over their short gaps and split into their contiguous pieces
        (:attr:`recordings`); pieces of one recording share its payload parameters (:attr:`origins`), and
        :attr:`gaps` counts them per recording. Returns each recording's own stamps (bridging adds samples)."""
        self.recordings, self.origins, self.gaps = [], [], []
        recorded = []
        for i, r in enumerate(self._check_joints(recordings)):
            dataset = r.dataset.reordered(self.robot.joint_names) if r.dataset.joint_names != self.robot.joint_names \
                else r.dataset
            name = r.name or dataset.source.get('bag') or f'recording {i + 1}'
            period = nominal_period(np.diff(dataset.t))
            bridged = bridge_gaps(dataset, settings.validated(1.0 / period).bridge_s, period)
            recorded.append(dataset.t)
            pieces = bridged.pieces
            self.gaps.append(RecordingGaps(name, bridged.summary, dataset.source, r.payload_mass,
                                           None if r.payload is None else float(r.payload.mass),
                                           pieces=bridged.split_gaps + 1,
                                           bridged_gaps=bridged.bridged_gaps, bridged_samples=bridged.bridged_samples,
                                           bridge_s=bridged.limit_s))
            for k, (a, b) in enumerate(pieces):
                self.recordings.append(RecordingInput(bridged.dataset.sliced(a, b), r.payload, r.payload_mass,
                                                      name if len(pieces) == 1 else f'{name} part {k + 1}'))
                self.origins.append(i)
        return recorded

    def _choose_torque(self) -> None:
        """The measured torque (:attr:`torque_source`) and what the rotor adds to it: compensated with B·θ̈ where motor
        encoders exist, else the rotor inertias identified; refuses a source the data or the drives cannot give."""
        spec, drive_gains_unknown = self.spec, self.drive_gains_unknown
        self.torque_source = self._torque_source()
        if self.torque_source == 'current' and self.drives is None and not drive_gains_unknown:
            has_tau = all(r.dataset.tau is not None for r in self.recordings)
            raise InputError(f'robot {self.robot.name!r} has no drive data: give a drives file ({{drives}}) or '
                             f'identify the gains (TLS or MLS with a payload run)'
                             + (', or use the joint torque or motor torque ({torque} joint_torque or motor_torque)'
                                if has_tau else ''), fields=('drives', 'torque'))
        if self.torque_source == 'joint_torque' and spec.rotor_inertia:
            raise InputError('{no_rotor_compensation} does not apply to the joint torque (measured after the gear, '
                             'it holds no rotor inertia); if the effort is the motor\'s torque use {torque} '
                             'motor_torque', fields=('no_rotor_compensation', 'torque'))
        #: the drives' coupling C (θ = C·q), or None: with one, the equations are the motors' (module docstring)
        self.coupling = None if self.drives is None else self.drives.coupling
        if self.coupling is not None and self.torque_source == 'joint_torque':
            raise InputError('the drives file couples joints (coupling): their equations are the motors\', from '
                             'currents or the motors\' torques; a joint torque sensor measures after the coupling '
                             '({torque} current or motor_torque)', fields=('torque',))
        has_motor = all(r.dataset.theta is not None for r in self.recordings)
        self.compensate_rotor = (self.torque_source == 'current' and spec.rotor_compensation is not False and has_motor
                                 and not drive_gains_unknown)
        self.identify_rotor_inertia = self.torque_source == 'motor_torque' or (
            self.torque_source == 'current' and (spec.rotor_inertia or not self.compensate_rotor))
        self.friction_on_rotor = has_motor
        #: changes to the caller's choices, as :func:`dynid.identify.run.change_text` prints them
        self.changes: list[dict] = []
        if self.torque_source == 'current' and spec.rotor_compensation is True and not has_motor and \
                not drive_gains_unknown:
            self.changes.append({'setting': 'rotor_compensation', 'given': True, 'used': False,
                                 'reason': 'the recordings have no motor encoders (motor_states) for B·θ̈: the rotor '
                                           'inertias are identified instead'})

    def _prepare_pieces(self, settings: FilterSettings, recorded: list[np.ndarray], single: bool) -> None:
        """Each piece filtered and decimated into its :class:`Block`; a piece too short for the filters is skipped
        (counted in its recording's line; a whole recording too short is said, or refused when it is the only one)."""
        self.blocks: list[Block] = []
        self.settings: FilterSettings | None = None
        kept, origins = [], []
        for recording, origin in zip(self.recordings, self.origins, strict=True):
            try:
                block, self.settings = self._prepare(origin, recording, settings)
            except TooShortError as error:
                gaps = self.gaps[origin]
                gaps.longest_piece = max(gaps.longest_piece, error.samples)
                gaps.needed = error.needed
                if gaps.pieces > 1:  # counted in the recording's one line
                    continue
                if single:
                    raise
                self.warnings.append(f'{recording.name} skipped: {error}')
                continue
            self.blocks.append(block)
            kept.append(recording)
            origins.append(origin)
            self.gaps[origin].used += 1
            self.gaps[origin].used_samples += recording.dataset.n_samples
            t, stamps = recording.dataset.t, recorded[origin]  # the recording's own samples in this piece
            self.gaps[origin].used_recorded += int(np.searchsorted(stamps, t[-1] + 1e-9, 'right')
                                                   - np.searchsorted(stamps, t[0] - 1e-9, 'left'))
        self.recordings, self.origins = kept, origins

    def refuse_still_joints(self) -> None:
        """InputError naming the joints that never leave the stiction zone (:attr:`still`), with the remedies:
        an identification has nothing to fit there (a validation scores them n/a instead)."""
        if self.still:
            raise InputError(f'{", ".join(self.still)} never leave the stiction zone (|ω| below '
                             f'{self.settings.stiction_velocity:g} rad/s throughout): their equations hold nothing '
                             f'to fit; move them (a richer excitation: dynid excite optimizes one) or leave their '
                             f'equations out ({{exclude_joints}} {",".join(self.still)})', fields=('exclude_joints',))

    # ------------------------------------------------------------------------------- set-up
    def _check_joints(self, recordings):
        for r in recordings:
            missing = [j for j in self.robot.joint_names if j not in r.dataset.joint_names]
            if missing:
                raise InputError(f'{r.name or r.dataset.source.get("bag", "recording")}: joints {missing} of robot '
                                 f'{self.robot.name!r} are not in the recording ({list(r.dataset.joint_names)})')
        return recordings

    def _torque_source(self) -> str:
        source = self.spec.torque_source
        has_current = all(r.dataset.current is not None for r in self.recordings)
        has_tau = all(r.dataset.tau is not None for r in self.recordings)
        if source == 'auto':  # currents need drive gains: known ones, or identified
            usable_current = has_current and (self.drives is not None or self.drive_gains_unknown)
            source = 'current' if usable_current else 'joint_torque' if has_tau else 'current' if has_current else ''
        if source == 'current' and not has_current:
            raise InputError('the recordings hold no motor currents (neither a joint_currents topic nor, with '
                             '{joint_states_effort} current, an effort in joint_states)',
                             fields=('joint_states_effort',))
        if source in ('joint_torque', 'motor_torque') and not has_tau:
            raise InputError(f'the recordings hold no {source.replace("_", " ")}s (effort of joint_states)')
        if not source:
            raise InputError('the recordings hold neither motor currents nor joint torques')
        if self.drive_gains_unknown and source != 'current':
            raise InputError('drive-gain identification needs motor currents')
        for recording in self.recordings:  # a stream the driver does not fill identifies nothing
            dataset = recording.dataset
            what = 'the motor current' if source == 'current' else 'joint_states effort'
            problem = effort_problem(dataset.current if source == 'current' else dataset.tau, dataset.q,
                                     dataset.joint_names, what)
            if problem:
                other = ' ({torque_source} current uses the recorded currents)' \
                    if source != 'current' and has_current else ''
                raise InputError(f'{recording.name or dataset.source.get("bag", "a recording")}: {problem}{other}',
                                 fields=('torque_source',))
        return source

    def _prepare(self, index: int, recording: RecordingInput, settings: FilterSettings):
        """The decimated :class:`Block` of one recording, and the settings validated for its rate.

        Few full-rate arrays (~29 MB each for 10 minutes of 6 joints at 1 kHz) are held at once: the
        regressor's pieces take q̇ and q̈ from the filtered q piece by piece (:meth:`Signals.link_rows`);
        q goes once the regressor is built, and only then is the rotor's chain derived (before, where rotor
        inertia columns put θ̈ in the regressor); the torque and each friction feature are decimated one at
        a time.
        """
        dataset = recording.dataset
        try:
            signals, settings = differentiate(dataset, settings, rotor=self.identify_rotor_inertia, derivatives=False)
        except NonUniformSamplesError as error:
            # here: the importer (its resampling imports scipy.interpolate) only for this refusal's advice
            from dynid.io.importing import import_command

            command = import_command(dataset.source.get('bag') or 'BAG', self.robot,
                                     dataset.source.get('joint_states_effort'))
            raise NonUniformSamplesError(f'{error}: {command}, then give the new bag') from None
        decimate = Decimator(settings, signals.rate_hz, len(signals.t))
        rigid, known, known_mass = self._rigid_columns(index, recording, signals, decimate)
        # Below, the link chain gives at most the friction velocity q̇ (where some recording has no motor
        # encoders) and the acceleration q̈ (where this one has none); q goes before the rotor's chain comes.
        dt = 1.0 / signals.rate_hz
        dq = central_difference(signals.q, dt) if dataset.theta is None or not self.friction_on_rotor else None
        ddq = central_difference(dq, dt) if dataset.theta is None else None
        if self.coupling is not None:  # the motors' velocity and acceleration θ̇ = C·q̇ (module docstring)
            dq, ddq = (None if x is None else self.drives.joints_to_motors(x) for x in (dq, ddq))
        signals = replace(signals, q=None, dq=dq, ddq=ddq)
        del dq, ddq
        if dataset.theta is not None and signals.ddtheta is None:
            signals.dtheta, signals.ddtheta = filtered_derivatives(dataset.theta, settings)[1:]
        rotor_acceleration = signals.ddtheta if signals.ddtheta is not None else signals.ddq
        velocity = signals.dtheta if self.friction_on_rotor else signals.dq
        y = self._measured_torque(signals)
        for part in (known, known_mass):
            if y is not None and part is not None:
                y = y - part
        y = None if y is None else decimate(y)
        nothing = np.zeros((len(decimate.keep), self.robot.n))
        # the known payload torque, the mass alone or the whole payload: the TLS scale and part of τ_out
        known_output = (decimate(known_mass) if known_mass is not None else nothing) + \
            (decimate(known) if known is not None else nothing)
        keep = None
        if settings.stiction_velocity > 0:
            keep = decimate.window_all(np.abs(velocity) >= settings.stiction_velocity)
        block = Block(
            name=recording.name, y=y, rigid=rigid, known_output=known_output,
            current=None if signals.current is None else decimate(signals.current),
            rotor_acceleration=decimate(rotor_acceleration), velocity=decimate(velocity),
            temperature=None if signals.temperature is None else decimate(signals.temperature),
            static_features={symbol: decimate(feature)
                             for symbol, feature in self._static_features(velocity, signals.temperature)},
            keep=keep, full_velocity=velocity if self.keep_full_velocity else None,
            decimator=decimate)
        return block, settings

    def _rigid_columns(self, index: int, recording: RecordingInput, signals: Signals, decimate: Decimator):
        """(decimated base rigid columns (M, n, p_rigid), full-rate torque (N, n) of a fully known payload or
        None, of a known payload mass or None) of recording ``index``; the mass's other 9 parameters are
        columns. The regressor is built and filtered piece by piece (:meth:`Decimator.chunked`)."""
        robot, n, samples = self.robot, self.robot.n, len(signals.t)
        needs_payload = index in self.payload_blocks or recording.payload is not None or \
            recording.payload_mass is not None
        known = np.zeros((samples, n)) if recording.payload is not None else None
        known_mass = np.zeros((samples, n)) if recording.payload_mass is not None else None
        coupling = self.coupling
        inverse_transposed = None if coupling is None else np.linalg.inv(coupling).T

        def columns_of(a: int, b: int) -> np.ndarray:
            """Base columns of samples a..b−1."""
            states = signals.link_rows(a, b)
            arm = robot.regressor(*states)
            columns = [arm.reshape(b - a, n, -1)]
            if needs_payload:
                payload = robot.payload_regressor(*states, arm_regressor=arm)
                if recording.payload is not None:
                    known[a:b] = (payload @ recording.payload.parameters()).reshape(b - a, n)
                if recording.payload_mass is not None:
                    known_mass[a:b] = payload[:, 0].reshape(b - a, n) * recording.payload_mass
                payload = payload.reshape(b - a, n, 10)
            for owner in self.payload_blocks:
                columns.append(payload[:, :, 1:] if owner == index else np.zeros((b - a, n, 9)))
            if coupling is not None:  # the motors' equations: C⁻ᵀ·τ of the links' (module docstring)
                columns = [np.einsum('kj,mjp->mkp', inverse_transposed, c) for c in columns]
                for part in (known, known_mass):
                    if part is not None:
                        part[a:b] = self.drives.joint_to_motor_torque_space(part[a:b])
            if self.identify_rotor_inertia:  # Ia_j on θ̈_j, on joint (motor) j's rows: only the base ones are made
                acceleration = signals.ddtheta[a:b] if signals.ddtheta is not None else states[2] \
                    if coupling is None else self.drives.joints_to_motors(states[2])
                start = sum(c.shape[2] for c in columns)
                rotor = self.base.indices[self.base.indices >= start] - start
                part = np.zeros((b - a, n, len(rotor)))
                part[:, rotor, np.arange(len(rotor))] = acceleration[:, rotor]
                kept = [self.base.indices[self.base.indices < start]]
            else:
                kept = [self.base.indices]
            # Only the base columns are filtered and kept (fewer columns through the parallel filter), taken from
            # each group of columns (no array of every column is made).
            picked, offset = [], 0
            for group in columns:
                width = group.shape[2]
                inside = kept[0][(kept[0] >= offset) & (kept[0] < offset + width)] - offset
                if inside.size:
                    picked.append(group[:, :, inside])
                offset += width
            if self.identify_rotor_inertia:
                picked.append(part)
            return np.concatenate(picked, axis=2) if len(picked) > 1 else picked[0]

        return decimate.chunked(columns_of), known, known_mass

    def _measured_torque(self, signals: Signals) -> np.ndarray | None:
        if self.drive_gains_unknown:
            return None
        if self.torque_source in ('joint_torque', 'motor_torque'):
            return signals.tau
        torque = self.drives.current_to_joint_torque(signals.current)
        if self.compensate_rotor:
            torque -= self.drives.rotor_inertia_torque(signals.ddtheta)
        return torque

    def _static_features(self, velocity: np.ndarray, temperature: np.ndarray | None):
        """(symbol, full-rate feature) of the features that do not depend on τ_out, one at a time (they are
        filtered like the regressor; each is decimated before the next is made)."""
        spec = self.spec
        if spec.temperature:
            if temperature is None:
                raise InputError('the temperature term needs joint temperatures (topic joint_temperatures)')
            if np.any(temperature <= 0):
                raise InputError('temperatures must be > 0 °C for the T⁻³ term')
        if spec.friction in ('viscous_coulomb', 'load_squared', 'load_absolute'):
            yield from (('Fc', np.sign(velocity)), ('Fv', velocity), ('tau0', np.ones_like(velocity)))
        elif spec.friction == 'hamon':
            yield from (('Fv', velocity), ('tau0', np.ones_like(velocity)))
        elif spec.friction == 'comprehensive':
            yield from (('fc', np.sign(velocity)), ('fo', np.ones_like(velocity)))
        if spec.temperature:
            root = np.sign(velocity) * np.sqrt(np.abs(velocity))
            yield 'beta1', root
            yield 'beta2', root * temperature
            yield 'beta3', root * temperature**-3.0
        if self.stribeck is not None:
            yield 'Fs', self.stribeck.feature(velocity)

    # ------------------------------------------------------------------------------- columns
    @property
    def rigid_names(self) -> list[str]:
        return list(self.base.names)

    @property
    def friction_names(self) -> tuple[str, ...]:
        """Per-joint friction symbols in column order: the spec's law (and temperature term), then ``Fs`` where the
        problem holds a Stribeck excess."""
        stribeck = ('Fs',) if self.stribeck is not None else ()
        return friction_symbols(self.spec.friction, self.spec.temperature) + stribeck

    def parameter_names(self) -> list[str]:
        """Names of the columns of :meth:`equations`: base rigid parameters, then friction per joint."""
        n = self.robot.n
        return self.rigid_names + [f'{symbol}_{j + 1}' for symbol in self.friction_names for j in range(n)]

    def friction_features(self, block: Block, output_torque: np.ndarray, exponents: np.ndarray) -> list[np.ndarray]:
        """(M, n) features in ``friction_names`` order for the current τ_out estimate and exponents α."""
        spec, w = self.spec, block.velocity
        s = np.sign(w)
        features = dict(block.static_features)
        if spec.friction == 'load_squared':
            features['Fl'] = s * output_torque**2
        elif spec.friction == 'load_absolute':
            features['Fl'] = s * np.abs(output_torque)
        elif spec.friction == 'hamon':
            power = np.sign(output_torque * w)
            plus, minus = (1 + power) / 2, (1 - power) / 2
            decay = np.exp(-np.abs(w) / spec.hamon_velocity)
            features.update(am1=plus * output_torque, bm=plus * decay * output_torque, ag1=minus * output_torque,
                            bg=-minus * decay * output_torque, cm=plus * s, dm=plus * decay * s, cg=minus * s,
                            dg=minus * decay * s)
        elif spec.friction == 'comprehensive':
            features['fv'] = block.decimator(np.sign(block.full_velocity) * np.abs(block.full_velocity)
                                             ** exponents[None, :]) if block.decimator is not None else \
                s * np.abs(w) ** exponents
            features['fL'] = s * output_torque**2
        return [features[symbol] for symbol in self.friction_names]

    def to_comprehensive(self) -> None:
        """Switch a problem of Coulomb + viscous friction (with the offset and the load term, or not) to Li et al.
        2024's comprehensive law (eq. (3)), the same columns under its symbols (Fc, Fv, tau0, Fl → fc, fv, fo, fL),
        fv_j = sgn(ω)·|ω|^α_j with the exponents given to :meth:`equations` (α_j = 1: the viscous column as it
        was). Needs the full-rate velocity (``keep_full_velocity``); parameters held keep their values."""
        if self.spec.friction not in ('viscous_coulomb', 'load_squared') or not self.keep_full_velocity:
            raise InputError(f'no comprehensive law from friction {self.spec.friction!r} (or without the full-rate '
                             f'velocity)')
        rename = dict(zip(('Fc', 'Fv', 'tau0', 'Fl'), ('fc', 'fv', 'fo', 'fL'), strict=True))
        for block in self.blocks:
            block.static_features = {rename.get(symbol, symbol): feature
                                     for symbol, feature in block.static_features.items() if symbol != 'Fv'}
        self.spec = replace(self.spec, friction='comprehensive')
        renamed = {}
        for name, entry in self.held.items():
            symbol, _, joint = name.rpartition('_')
            renamed[f'{rename[symbol]}_{joint}' if symbol in rename else name] = entry
        self.held = renamed

    def velocity_rows(self, joint: int) -> np.ndarray:
        """The decimated friction velocity ω [rad/s] on the kept rows of joint ``joint`` over all recordings (the
        rows of :meth:`power_feature`)."""
        parts = []
        for block in self.blocks:
            keep = slice(None) if block.keep is None else block.keep[:, joint]
            parts.append(block.velocity[:, joint][keep])
        return np.concatenate(parts)

    def power_feature(self, joint: int, exponent: float) -> np.ndarray:
        """The kept rows of joint ``joint``'s feature sgn(ω)·|ω|^α over all recordings (I-IRLS α search)."""
        return self._full_rate_feature(joint, lambda w: np.sign(w) * np.abs(w) ** exponent)

    def stribeck_feature(self, joint: int, velocity: float, shape: float) -> np.ndarray:
        """The kept rows of joint ``joint``'s Stribeck feature sgn(ω)·exp(−(|ω|/Vs)^μ) over all recordings (the model
        choice's candidate, :func:`dynid.identify.run._stribeck_candidates`)."""
        return self._full_rate_feature(joint, lambda w: np.sign(w) * stribeck_decay(w, velocity, shape))

    def _full_rate_feature(self, joint: int, feature_of) -> np.ndarray:
        """``feature_of(ω)`` of joint ``joint``'s full-rate friction velocity, decimated, on its kept rows."""
        parts = []
        for block in self.blocks:
            feature = block.decimator(feature_of(block.full_velocity[:, joint]))
            keep = np.ones(feature.shape, dtype=bool) if block.keep is None else block.keep[:, joint]
            parts.append(feature[keep])
        return np.concatenate(parts)

    def add_stribeck(self, stribeck: StribeckExcess) -> None:
        """Add the Stribeck excess's column Fs to a problem built without it (the model choice kept it on some
        joints; needs the full-rate velocity, ``keep_full_velocity``): each recording's feature made at the full rate
        and decimated, as :meth:`_static_features` makes it."""
        if self.stribeck is not None or not self.keep_full_velocity:
            raise InputError('the Stribeck excess is added once, to a problem that kept the full-rate velocity')
        for block in self.blocks:
            block.static_features['Fs'] = block.decimator(stribeck.feature(block.full_velocity))
        self.stribeck = stribeck

    def _block_columns(self, k: int, rigid_parameters: np.ndarray | None, exponents: np.ndarray,
                       with_current: bool) -> list[np.ndarray]:
        """The column groups of recording k's W in column order: (M, n, p_rigid) columns as they are, and
        (M, n) per-joint features, each n block-diagonal columns (:meth:`_assembled`)."""
        block = self.blocks[k]
        rigid = block.rigid  # base columns already
        torque_out = rigid @ rigid_parameters if rigid_parameters is not None else np.zeros(block.velocity.shape)
        friction = self.friction_features(block, torque_out + block.known_output, exponents)
        return ([block.current] if with_current else []) + [rigid] + friction

    def _assembled(self, groups: list[np.ndarray], samples: slice) -> np.ndarray:
        """W of the decimated ``samples`` as (samples, n, p) from :meth:`_block_columns`' groups."""
        eye = np.eye(self.robot.n)[None, :, :]
        return np.concatenate([g[samples] if g.ndim == 3 else g[samples, :, None] * eye for g in groups], axis=2)

    def block_equations(self, k: int, rigid_parameters: np.ndarray | None, exponents: np.ndarray,
                        with_current: bool = False) -> np.ndarray:
        """W of recording k as (M, n, p): rows of every decimated sample and joint, none dropped."""
        return self._assembled(self._block_columns(k, rigid_parameters, exponents, with_current), slice(None))

    def block_keep(self, k: int) -> np.ndarray:
        """(M, n) rows of recording k that enter the estimation (stiction rejection; left-out joints' none)."""
        block = self.blocks[k]
        keep = np.ones(block.velocity.shape, dtype=bool) if block.keep is None else block.keep
        return keep & ~self.excluded[None, :] if self.excluded.any() else keep

    def block_times(self, k: int) -> np.ndarray:
        """Times [s] of the decimated samples of recording k."""
        return self.recordings[k].dataset.t[self.blocks[k].decimator.keep]

    def equations(self, rigid_parameters: np.ndarray | None = None, exponents: np.ndarray | None = None,
                  with_current: bool = False):
        """Stacked system over all recordings: (W, y, joint_of_row, block_of_row, known).

        ``rigid_parameters`` (base) give τ_out for load-dependent friction (zeros if None).
        ``with_current`` prepends the block-diagonal current columns (TLS); then y is None and
        ``known`` holds the known payload-mass torque per row.
        """
        n = self.robot.n
        exponents = np.full(n, self.spec.exponent) if exponents is None else exponents
        keeps = [self.block_keep(k) for k in range(len(self.blocks))]
        w, row = None, 0
        rows_y, joints, owners, knowns = [], [], [], []
        for k, (block, keep) in enumerate(zip(self.blocks, keeps, strict=True)):
            # W is filled in place a few thousand samples at a time: the whole block's (M, n, p) array and its
            # kept rows would hold W twice more (~150 MB for 10 minutes at 1 kHz).
            groups = self._block_columns(k, rigid_parameters, exponents, with_current)
            if w is None:
                columns = sum(g.shape[2] if g.ndim == 3 else n for g in groups)
                w = np.empty((sum(int(np.count_nonzero(kept)) for kept in keeps), columns))
            for start in range(0, len(keep), _EQUATION_SAMPLES):
                samples = slice(start, start + _EQUATION_SAMPLES)
                kept = keep[samples]
                count = int(np.count_nonzero(kept))
                w[row:row + count] = self._assembled(groups, samples)[kept]
                row += count
            if block.y is not None:
                rows_y.append(block.y[keep])
            knowns.append(block.known_output[keep])
            joints.append(np.broadcast_to(np.arange(n), keep.shape)[keep])
            owners.append(np.full(int(keep.sum()), k))
        y = np.concatenate(rows_y) if rows_y else None
        return w, y, np.concatenate(joints), np.concatenate(owners), np.concatenate(knowns)

    def describe(self) -> dict:
        """Provenance of the problem (for the result file)."""
        # of each recording's source: where it came from, how its effort was read and what was said of it (the
        # diagnosis of all recordings together is the result's own section), and the payload set on the robot
        kept = ('bag', 'simulation', 'start_ns', 'joint_states_effort', 'torque_sign', 'effort_said',
                'effort_as_recorded', 'robot_payload', 'payload_set_check')
        return {'torque_source': self.torque_source, 'rotor_compensation': self.compensate_rotor,
                'rotor_inertia_identified': self.identify_rotor_inertia,
                'friction_velocity': 'rotor' if self.friction_on_rotor else 'link',
                'filters': None if self.settings is None else self.settings.to_dict(),
                'recordings': [{'name': g.name, 'source': {k: v for k, v in g.source.items() if k in kept},
                                'samples': g.summary.samples, 'payload_mass_known': g.payload_mass_known,
                                'payload_known': g.payload_known, 'gaps': g.to_dict()}
                               for g in self.gaps]}
