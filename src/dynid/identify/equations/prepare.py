"""The prepare step of an identification: the recordings filtered, differentiated and turned into equations, once.

Each contiguous piece (:mod:`dynid.identify.equations.read`) becomes a :class:`Block` of decimated rows: the measured
torque (minus what is known of it), the base rigid-body columns, the friction velocity and what the friction columns are
made of (their features that do not depend on the output torque τ_out), the rows kept (stiction rejection), and, where
a candidate needs it, the full-rate friction velocity with its decimator (the viscous exponent's and the Stribeck
excess's columns are made at the full rate and decimated as the regressor is). :class:`Equations` holds them with
what the torque is (current, motor torque, joint torque), what the rotor adds, and the base parameters; it is built
once per identification and never changed: every candidate, fold and fit draws its columns from it
(:class:`dynid.identify.equations.problem.IdentificationProblem`).

The features are kept by what they are, not by the symbol a law gives them: ``sign`` sgn(ω) (Fc, fc), ``velocity`` ω
(Fv), ``one`` (tau0, fo), ``beta1..3`` the temperature term, ``Fs`` a Stribeck excess given at one velocity for
every joint (:attr:`dynid.identify.equations.request.ModelSpec.stribeck_velocity`); with coupled drives ``joint_sign``
and ``joint_velocity``, sgn(q̇) and q̇ = C⁻¹·θ̇ of the joints' own velocities
(:mod:`dynid.identify.equations.joint_side`).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

import numpy as np

from dynid.errors import InputError
from dynid.friction.laws import friction_law
from dynid.identify.equations.held import excluded_mask
from dynid.identify.equations.joint_side import joint_side_features, joint_side_joints
from dynid.identify.equations.read import Reading, RecordingGaps
from dynid.identify.equations.request import ModelSpec, RecordingInput
from dynid.identify.result.stribeck import StribeckExcess
from dynid.identify.result.torque import structural_base
from dynid.io.stream_checks import effort_problem
from dynid.model.drives import JointDrives
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
    regressor_stride,
)

#: Filter-rate samples of the regressor made and filtered at a time (:meth:`Decimator.chunked`): ~8 MB of columns.
_REGRESSOR_SAMPLES = 4096


@dataclass(frozen=True)
class Block:
    """The decimated equations of one piece (rows: samples × joints, sample-major)."""

    name: str
    y: np.ndarray | None          # (M, n) measured torque minus known parts [N·m]; None where the gains are unknown
    rigid: np.ndarray             # (M, n, p_rigid) the base rigid columns (arm standard + payload blocks + Ia)
    known_output: np.ndarray      # (M, n) known payload torque (mass, or whole payload): the TLS scale and part of
                                  # τ_out for load-dependent friction; zeros without
    current: np.ndarray | None    # (M, n) motor current [A] (for drive-gain identification)
    rotor_acceleration: np.ndarray  # (M, n) θ̈ (or q̈) [rad/s²]
    velocity: np.ndarray          # (M, n) friction velocity ω [rad/s]
    temperature: np.ndarray | None  # (M, n) [°C]
    features: dict = field(default_factory=dict)  # kind -> (M, n), features not depending on τ_out (module docstring)
    keep: np.ndarray | None = None  # (M, n) rows kept (stiction rejection)
    full_velocity: np.ndarray | None = None
    decimator: Decimator | None = None


@dataclass(frozen=True)
class Torque:
    """What the equations' measured torque is (``source``: current, motor_torque, joint_torque) and what the rotor
    adds to it: B·θ̈ subtracted (``compensate_rotor``, where motor encoders exist) or the rotor inertias identified
    (``identify_rotor_inertia``); friction on the rotor's velocity where motor encoders exist; the drives' coupling C
    (θ = C·q: the equations are then the motors'); ``changes`` to the caller's choices (as
    :func:`dynid.identify.equations.request.change_text` prints them)."""

    source: str
    compensate_rotor: bool
    identify_rotor_inertia: bool
    friction_on_rotor: bool
    coupling: np.ndarray | None
    changes: tuple[dict, ...] = ()


@dataclass(frozen=True)
class Equations:
    """All recordings prepared for one identification (module docstring), never changed once built.

    ``spec``: the model the equations were built for (the superset law where the law is open); ``settings``: the
    filters as resolved for the recordings' rate; ``base``: the base rigid columns (with the rotor inertias where
    ``torque.identify_rotor_inertia``) and ``base_without_rotor`` the same without them where dropping the rotor
    columns leaves the other base columns as they are (None otherwise); ``recordings``/``origins``: the pieces used
    and their recording; ``gaps``: per recording as given, its line
    (:class:`dynid.identify.equations.read.RecordingGaps`); ``warnings``: the lines of recordings with gaps, less than
    90 % used or skipped; ``still``: joints not left out whose every row is in the stiction zone."""

    robot: RobotModel
    spec: ModelSpec
    settings: FilterSettings
    drives: JointDrives | None
    drive_gains_unknown: bool
    torque: Torque
    payload_blocks: tuple[int, ...]
    base: object
    base_without_rotor: object | None
    excluded: np.ndarray
    recordings: tuple[RecordingInput, ...]
    origins: tuple[int, ...]
    gaps: tuple[RecordingGaps, ...]
    warnings: tuple[str, ...]
    still: tuple[str, ...]
    blocks: tuple[Block, ...]
    keep_full_velocity: bool
    stribeck: StribeckExcess | None  # the Stribeck excess the spec gives every joint (ModelSpec.stribeck_velocity)
    # joints whose own friction the blocks' features make (dynid.identify.equations.joint_side)
    joint_side: tuple[int, ...] = ()

    def block_keep(self, k: int) -> np.ndarray:
        """(M, n) rows of recording k that enter the estimation (stiction rejection; left-out joints' none)."""
        return _kept(self.blocks[k], self.excluded)

    def block_times(self, k: int) -> np.ndarray:
        """Times [s] of the decimated samples of recording k."""
        return self.recordings[k].dataset.t[self.blocks[k].decimator.keep]

    def describe(self) -> dict:
        """Provenance of the equations (for the result file)."""
        # of each recording's source: where it came from, how its effort was read and what was said of it (the
        # diagnosis of all recordings together is the result's own section), and the payload set on the robot
        kept = ('bag', 'simulation', 'start_ns', 'joint_states_effort', 'torque_sign', 'effort_said',
                'effort_as_recorded', 'robot_payload', 'payload_set_check')
        return {'torque_source': self.torque.source, 'rotor_compensation': self.torque.compensate_rotor,
                'friction_velocity': 'rotor' if self.torque.friction_on_rotor else 'link',
                'filters': None if self.settings is None else self.settings.to_dict(),
                'recordings': [{'name': g.name, 'source': {k: v for k, v in g.source.items() if k in kept},
                                'samples': g.summary.samples, 'payload_mass_known': g.payload_mass_known,
                                'payload_known': g.payload_known, 'gaps': g.to_dict()}
                               for g in self.gaps]}


def prepare(robot: RobotModel, reading: Reading, spec: ModelSpec, settings: FilterSettings | None = None,
            drives: JointDrives | None = None, drive_gains_unknown: bool = False,
            keep_full_velocity: bool = False, stribeck: StribeckExcess | None = None,
            laws: tuple[str, ...] = ()) -> Equations:
    """The equations of ``reading``'s pieces for the model ``spec`` (module docstring).

    ``drives``: nominal drives (default ``robot.drives``); needed when the torque comes from currents, unless the gains
    are identified (``drive_gains_unknown``: no K_τ·i target, no rotor compensation, no prior drive data needed).
    ``keep_full_velocity``: keep the full-rate friction velocity for the candidates made from it (the viscous exponent,
    the Stribeck excess; always for the comprehensive law). ``stribeck``: a Stribeck excess per joint whose columns
    are made with the others (a result's, to predict with it; default the spec's, if any). ``laws``: other friction
    laws whose features on ω are made too (those the model choice tries whole: ``Request.laws``). A recording's pieces
    too short for the filters and the decimation are skipped and counted in its line; only equations left without any
    usable piece are refused.
    """
    spec = spec.validated()
    drives = drives if drives is not None else robot.drives
    settings = settings or FilterSettings()
    torque = _torque(robot, reading.pieces, spec, drives, drive_gains_unknown)
    payload_blocks = tuple(sorted({o for o, r in zip(reading.origins, reading.pieces, strict=True)
                                   if r.payload_mass is not None}))
    groups = [[payload_blocks.index(i)] if i in payload_blocks else [] for i in range(len(reading.gaps))]
    base = structural_base(robot, groups, len(payload_blocks), torque.identify_rotor_inertia)
    without = None
    if torque.identify_rotor_inertia and torque.compensate_rotor:  # the rotor's excess, a candidate (Request.rotor)
        keep = np.array([not name.startswith('Ia_') for name in base.names])
        alternative = structural_base(robot, groups, len(payload_blocks), False)
        without = alternative if list(alternative.indices) == list(base.indices[keep]) else None
    stribeck = stribeck if stribeck is not None or spec.stribeck_velocity is None else StribeckExcess(
        np.full(robot.n, spec.stribeck_velocity), 2.0 if spec.stribeck_shape is None else spec.stribeck_shape)
    keep_full_velocity = keep_full_velocity or bool(friction_law(spec.friction).shaped_symbols)
    excluded = excluded_mask(robot.joint_names, spec.exclude_joints)
    joint_side = joint_side_joints(drives if torque.coupling is not None else None, spec.friction,
                                   spec.joint_side_friction, excluded)
    context = _Context(robot, spec, drives, drive_gains_unknown, torque, payload_blocks, base, stribeck,
                       keep_full_velocity, joint_side, laws)
    blocks, used, gaps, warnings, resolved = _prepare_pieces(context, reading, settings)
    if not blocks:
        lines = ''.join(f'{g.line(loud=False)}: ' for g in gaps if g.summary.gaps)
        needed = max(g.needed for g in gaps)
        raise InputError(f'{lines}no contiguous piece of the recordings is long enough for the filters and the '
                         f'decimation' + (f' (need at least {needed} samples, the longest has '
                                          f'{max(g.longest_piece for g in gaps)})' if needed else ''))
    warnings = [g.line() for g in gaps if g.lost_any] + warnings
    rows = sum(_kept(block, excluded).sum(axis=0) for block in blocks)
    still = tuple(name for name, count, out in zip(robot.joint_names, rows, excluded, strict=True)
                  if count == 0 and not out)
    return Equations(robot, spec, resolved, drives, drive_gains_unknown, torque, payload_blocks, base, without,
                     excluded, tuple(reading.pieces[i] for i in used), tuple(reading.origins[i] for i in used),
                     tuple(gaps), tuple(warnings), still, tuple(blocks), keep_full_velocity, stribeck, joint_side)


def _kept(block: Block, excluded: np.ndarray) -> np.ndarray:
    """(M, n) rows of ``block`` that enter the estimation (stiction rejection; left-out joints' none)."""
    keep = np.ones(block.velocity.shape, dtype=bool) if block.keep is None else block.keep
    return keep & ~excluded[None, :] if excluded.any() else keep


def refuse_still_joints(equations: Equations) -> None:
    """InputError naming the joints that never leave the stiction zone (:attr:`Equations.still`), with the remedies:
    an identification has nothing to fit there (a validation scores them n/a instead)."""
    if equations.still:
        raise InputError(f'{", ".join(equations.still)} never leave the stiction zone (|ω| below '
                         f'{equations.settings.stiction_velocity:g} rad/s throughout): their equations hold nothing '
                         f'to fit; move them (a richer excitation: dynid excite optimizes one) or leave their '
                         f'equations out ({{exclude_joints}} {",".join(equations.still)})', fields=('exclude_joints',))


# ------------------------------------------------------------------------------------------------ the torque
def _torque(robot: RobotModel, pieces, spec: ModelSpec, drives: JointDrives | None,
            drive_gains_unknown: bool) -> Torque:
    """The measured torque and what the rotor adds to it (:class:`Torque`); refuses a source the data or the drives
    cannot give."""
    source = _torque_source(pieces, spec, drives, drive_gains_unknown)
    if source == 'current' and drives is None and not drive_gains_unknown:
        has_tau = all(r.dataset.tau is not None for r in pieces)
        raise InputError(f'robot {robot.name!r} has no drive data: give a drives file ({{drives}}) or '
                         f'identify the gains (TLS or MLS with a payload run)'
                         + (', or use the joint torque or motor torque ({torque} joint_torque or motor_torque)'
                            if has_tau else ''), fields=('drives', 'torque'))
    if source == 'joint_torque' and spec.rotor_inertia:
        raise InputError('{no_rotor_compensation} does not apply to the joint torque (measured after the gear, '
                         'it holds no rotor inertia); if the effort is the motor\'s torque use {torque} '
                         'motor_torque', fields=('no_rotor_compensation', 'torque'))
    coupling = None if drives is None else drives.coupling
    if coupling is not None and source == 'joint_torque':
        raise InputError('the drives file couples joints (coupling): their equations are the motors\', from '
                         'currents or the motors\' torques; a joint torque sensor measures after the coupling '
                         '({torque} current or motor_torque)', fields=('torque',))
    has_motor = all(r.dataset.theta is not None for r in pieces)
    compensate = source == 'current' and spec.rotor_compensation is not False and has_motor and not drive_gains_unknown
    identify_rotor = source == 'motor_torque' or (source == 'current' and (spec.rotor_inertia or not compensate))
    changes = ()
    if source == 'current' and spec.rotor_compensation is True and not has_motor and not drive_gains_unknown:
        changes = ({'setting': 'rotor_compensation', 'given': True, 'used': False,
                    'reason': 'the recordings have no motor encoders (motor_states) for B·θ̈: the rotor '
                              'inertias are identified instead'},)
    return Torque(source, compensate, identify_rotor, has_motor, coupling, changes)


def read_torque_source(recordings, torque_source: str, gains: bool) -> str:
    """The source an identification of ``recordings`` reads its torque from: ``torque_source`` as given, or for
    ``auto`` the currents where every recording holds them and the drive gains are known or identified (``gains``),
    else the joint torque where every recording holds it, else the currents ('' where there is neither)."""
    if torque_source != 'auto':
        return torque_source
    has_current = all(r.dataset.current is not None for r in recordings)
    has_tau = all(r.dataset.tau is not None for r in recordings)
    return 'current' if has_current and gains else 'joint_torque' if has_tau else 'current' if has_current else ''


def _torque_source(pieces, spec: ModelSpec, drives: JointDrives | None, drive_gains_unknown: bool) -> str:
    has_current = all(r.dataset.current is not None for r in pieces)
    has_tau = all(r.dataset.tau is not None for r in pieces)
    source = read_torque_source(pieces, spec.torque_source, drives is not None or drive_gains_unknown)
    if source == 'current' and not has_current:
        raise InputError('the recordings hold no motor currents (neither a joint_currents topic nor, with '
                         '{joint_states_effort} current, an effort in joint_states)',
                         fields=('joint_states_effort',))
    if source in ('joint_torque', 'motor_torque') and not has_tau:
        kept = (': dynid import keeps motor_torque columns (a drive\'s torque on its shaft) as the motors\' currents, '
                'read through the drives file ({torque} current)' if source == 'motor_torque' and has_current else '')
        raise InputError(f'the recordings hold no {source.replace("_", " ")}s (effort of joint_states){kept}',
                         fields=('torque',))
    if not source:
        raise InputError('the recordings hold neither motor currents nor joint torques')
    if drive_gains_unknown and source != 'current':
        raise InputError('drive-gain identification needs motor currents')
    for recording in pieces:  # a stream the driver does not fill identifies nothing
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


# ------------------------------------------------------------------------------------------------ the pieces
@dataclass(frozen=True)
class _Context:
    """What every piece's preparation needs (:func:`prepare`)."""

    robot: RobotModel
    spec: ModelSpec
    drives: JointDrives | None
    drive_gains_unknown: bool
    torque: Torque
    payload_blocks: tuple[int, ...]
    base: object
    stribeck: StribeckExcess | None
    keep_full_velocity: bool
    joint_side: tuple[int, ...] = ()
    laws: tuple[str, ...] = ()  # other laws whose features are made too (prepare's ``laws``)


def _prepare_pieces(context: _Context, reading: Reading, settings: FilterSettings):
    """Each piece filtered and decimated into its :class:`Block`; a piece too short for the filters is skipped
    (counted in its recording's line; a whole recording too short is said, or refused when it is the only one).
    Returns the blocks, the indices of the pieces used, the recordings' gaps with what was used, the warnings of
    recordings skipped and the settings resolved for the rate."""
    gaps = list(reading.gaps)
    blocks, used, warnings, resolved = [], [], [], None
    single = len(reading.gaps) == 1
    for i, (recording, origin) in enumerate(zip(reading.pieces, reading.origins, strict=True)):
        try:
            block, resolved = _prepare(context, origin, recording, settings)
        except TooShortError as error:
            gaps[origin] = dataclasses.replace(gaps[origin], longest_piece=max(gaps[origin].longest_piece,
                                                                               error.samples), needed=error.needed)
            if gaps[origin].pieces > 1:  # counted in the recording's one line
                continue
            if single:
                raise
            warnings.append(f'{recording.name} skipped: {error}')
            continue
        blocks.append(block)
        used.append(i)
        t, stamps = recording.dataset.t, reading.stamps[origin]  # the recording's own samples in this piece
        recorded = int(np.searchsorted(stamps, t[-1] + 1e-9, 'right') - np.searchsorted(stamps, t[0] - 1e-9, 'left'))
        gaps[origin] = dataclasses.replace(gaps[origin], used=gaps[origin].used + 1,
                                           used_samples=gaps[origin].used_samples + recording.dataset.n_samples,
                                           used_recorded=gaps[origin].used_recorded + recorded)
    return blocks, used, gaps, warnings, resolved


def _prepare(context: _Context, index: int, recording: RecordingInput, settings: FilterSettings):
    """The decimated :class:`Block` of one piece, and the settings validated for its rate.

    Few full-rate arrays (~29 MB each for 10 minutes of 6 joints at 1 kHz) are held at once: the
    regressor's pieces take q̇ and q̈ from the filtered q piece by piece (:meth:`Signals.link_rows`);
    q goes once the regressor is built, and only then is the rotor's chain derived (before, where rotor
    inertia columns put θ̈ in the regressor); the torque and each friction feature are decimated one at
    a time.
    """
    robot, torque = context.robot, context.torque
    dataset = recording.dataset
    try:
        signals, settings = differentiate(dataset, settings, rotor=False, derivatives=False)
    except NonUniformSamplesError as error:
        # here: the importer (its resampling imports scipy.interpolate) only for this refusal's advice
        from dynid.io.importing import import_command

        command = import_command(dataset.source.get('bag') or 'BAG', robot, dataset.source.get('joint_states_effort'))
        raise NonUniformSamplesError(f'{error}: {command}, then give the new bag') from None
    decimate = Decimator(settings, signals.rate_hz, len(signals.t), regressor_stride(settings, signals.rate_hz))
    if torque.identify_rotor_inertia and dataset.theta is not None:  # θ̈ in the regressor: the rotor's chain first
        signals.dtheta, signals.ddtheta = filtered_derivatives(dataset.theta, settings)[1:]
    rigid, known, known_mass = _rigid_columns(context, index, recording, signals, decimate)
    # Below, the link chain gives at most the friction velocity q̇ (where some recording has no motor
    # encoders) and the acceleration q̈ (where this one has none); q goes before the rotor's chain comes.
    dt = 1.0 / signals.rate_hz
    dq = central_difference(signals.q, dt) if dataset.theta is None or not torque.friction_on_rotor else None
    ddq = central_difference(dq, dt) if dataset.theta is None else None
    if torque.coupling is not None:  # the motors' velocity and acceleration θ̇ = C·q̇ (dynid.identify.equations.problem)
        dq, ddq = (None if x is None else context.drives.joints_to_motors(x) for x in (dq, ddq))
    signals = dataclasses.replace(signals, q=None, dq=dq, ddq=ddq)
    del dq, ddq
    if dataset.theta is not None and signals.ddtheta is None:
        signals.dtheta, signals.ddtheta = filtered_derivatives(dataset.theta, settings)[1:]
    rotor_acceleration = signals.ddtheta if signals.ddtheta is not None else signals.ddq
    velocity = signals.dtheta if torque.friction_on_rotor else signals.dq
    y = _measured_torque(context, signals)
    nothing = np.zeros((len(decimate.keep), robot.n))
    # the known payload torque, the mass alone or the whole payload (at the regressor's rate): subtracted from the
    # measured torque, and the TLS scale and part of τ_out
    known, known_mass = (nothing if part is None else decimate.sub(part) for part in (known, known_mass))
    y = None if y is None else decimate(y) - known - known_mass
    known_output = known_mass + known
    keep = None
    if settings.stiction_velocity > 0:
        keep = decimate.window_all(np.abs(velocity) >= settings.stiction_velocity)
    block = Block(
        name=recording.name, y=y, rigid=rigid, known_output=known_output,
        current=None if signals.current is None else decimate(signals.current),
        rotor_acceleration=decimate(rotor_acceleration), velocity=decimate(velocity),
        temperature=None if signals.temperature is None else decimate(signals.temperature),
        features={kind: decimate(feature) for kind, feature in _features(context, velocity, signals.temperature)},
        keep=keep, full_velocity=velocity if context.keep_full_velocity else None, decimator=decimate)
    return block, settings


def _rigid_columns(context: _Context, index: int, recording: RecordingInput, signals: Signals, decimate: Decimator):
    """(decimated base rigid columns (M, n, p_rigid), torque (N', n) of a fully known payload or None, of a known
    payload mass or None) of recording ``index``, the torques at the regressor's rate (every ``decimate.stride``-th
    sample: :func:`dynid.signal.preprocess.regressor_stride`); the mass's other 9 parameters are columns. The
    regressor is built and filtered piece by piece (:meth:`Decimator.chunked`)."""
    robot, torque, base = context.robot, context.torque, context.base
    n, samples = robot.n, decimate.sub_samples
    needs_payload = index in context.payload_blocks or recording.payload is not None or \
        recording.payload_mass is not None
    known = np.zeros((samples, n)) if recording.payload is not None else None
    known_mass = np.zeros((samples, n)) if recording.payload_mass is not None else None
    coupling = torque.coupling
    inverse_transposed = None if coupling is None else np.linalg.inv(coupling).T

    def columns_of(a: int, b: int) -> np.ndarray:
        """Base columns of the regressor-rate samples a..b−1 (the recording's o + a·k, o + (a+1)·k, …)."""
        rows = decimate.samples(a, b)
        states = signals.link_rows_at(rows)
        arm = robot.regressor(*states)
        columns = [arm.reshape(b - a, n, -1)]
        if needs_payload:
            payload = robot.payload_regressor(*states, arm_regressor=arm)
            if recording.payload is not None:
                known[a:b] = (payload @ recording.payload.parameters()).reshape(b - a, n)
            if recording.payload_mass is not None:
                known_mass[a:b] = payload[:, 0].reshape(b - a, n) * recording.payload_mass
            payload = payload.reshape(b - a, n, 10)
        for owner in context.payload_blocks:
            columns.append(payload[:, :, 1:] if owner == index else np.zeros((b - a, n, 9)))
        if coupling is not None:  # the motors' equations: C⁻ᵀ·τ of the links' (dynid.identify.equations.problem)
            columns = [np.einsum('kj,mjp->mkp', inverse_transposed, c) for c in columns]
            for part in (known, known_mass):
                if part is not None:
                    part[a:b] = context.drives.joint_to_motor_torque_space(part[a:b])
        if torque.identify_rotor_inertia:  # Ia_j on θ̈_j, on joint (motor) j's rows: only the base ones are made
            acceleration = signals.ddtheta[rows] if signals.ddtheta is not None \
                else states[2] \
                if coupling is None else context.drives.joints_to_motors(states[2])
            start = sum(c.shape[2] for c in columns)
            rotor = base.indices[base.indices >= start] - start
            part = np.zeros((b - a, n, len(rotor)))
            part[:, rotor, np.arange(len(rotor))] = acceleration[:, rotor]
            kept = [base.indices[base.indices < start]]
        else:
            kept = [base.indices]
        # Only the base columns are filtered and kept (fewer columns through the parallel filter), taken from
        # each group of columns (no array of every column is made).
        picked, offset = [], 0
        for group in columns:
            width = group.shape[2]
            inside = kept[0][(kept[0] >= offset) & (kept[0] < offset + width)] - offset
            if inside.size:
                picked.append(group[:, :, inside])
            offset += width
        if torque.identify_rotor_inertia:
            picked.append(part)
        return np.concatenate(picked, axis=2) if len(picked) > 1 else picked[0]

    return decimate.chunked(columns_of, _REGRESSOR_SAMPLES), known, known_mass


def _measured_torque(context: _Context, signals: Signals) -> np.ndarray | None:
    if context.drive_gains_unknown:
        return None
    if context.torque.source in ('joint_torque', 'motor_torque'):  # coupled: joint_states' Cᵀ·(K_τ·i) as C⁻ᵀ·τ
        return signals.tau if context.torque.coupling is None else \
            context.drives.joint_to_motor_torque_space(signals.tau)
    torque = context.drives.current_to_joint_torque(signals.current)
    if context.torque.compensate_rotor:
        torque -= context.drives.rotor_inertia_torque(signals.ddtheta)
    return torque


def _features(context: _Context, velocity: np.ndarray, temperature: np.ndarray | None):
    """(kind, full-rate feature) of the friction features that do not depend on τ_out (module docstring), one at a
    time (they are filtered like the regressor; each is decimated before the next is made)."""
    spec = context.spec
    if spec.temperature:
        if temperature is None:
            raise InputError('the temperature term needs joint temperatures (topic joint_temperatures)')
        if np.any(temperature <= 0):
            raise InputError('temperatures must be > 0 °C for the T⁻³ term')
    made = set()
    features = [feature for law in (spec.friction, *context.laws) for feature in friction_law(law).prepared.values()]
    for feature in features:  # the laws' own (sign, velocity, one, ...), each kind once
        if feature.kind not in made:
            made.add(feature.kind)
            # the direction made for each feature, not held beside every decimation (a full-rate array)
            yield feature.kind, feature.of(velocity, np.sign(velocity))
    if spec.temperature:
        root = np.sign(velocity) * np.sqrt(np.abs(velocity))
        yield 'beta1', root
        yield 'beta2', root * temperature
        yield 'beta3', root * temperature**-3.0
    if context.stribeck is not None:
        yield 'Fs', context.stribeck.feature(velocity)
    if context.joint_side:
        yield from joint_side_features(context.drives, velocity)
