"""The effort against the robot file: the measured torque's sign and scale per joint, all recordings together.

**Sign and scale of the measured torque** (:func:`check_effort`). Whatever the robot file's inertias get
wrong, its gravity and inertia torque τ_f = M(q)q̈ + C(q, q̇)q̇ + g(q) at the recorded states has the
sign and order of magnitude of the true joint torque. Per joint, on the rows identification would use
(filtered, decimated: :mod:`dynid.signal.preprocess`), the measured torque e is fitted as

    in motion:  e_j = k_j·τ_f,j + Fc·sgn(q̇_j) + Fv·q̇_j + o_j + B·q̈_j        at rest:  e_j = k_j·g_j(q) [+ o_j]

(friction, an offset and a rotor inertia free, so that they cannot pose as the scale; at rest the offset too
where the rest poses' gravity differs, since a torque sensor often reads one and a small gravity would take it
for an enormous scale; at a single rest pose the two cannot be told apart and the signal is read without one,
only where the gravity there is not negligible against it: :func:`_rest_columns`; a motor current
or motor torque carries the rotor's B·q̈, a joint torque sensor after the gear neither it nor the gear's
friction). The scale k_j says what the signal is: ≈ +1 joint torque, ≈ −1 joint torque of the opposite
sign convention, ≈ 1/K_τ,j motor current in A (K_τ the joint's drive gain, N·m/A at the link side),
anything else neither (wrong units, or a robot file that does not belong); where K_τ,j is near 1 N·m/A
the two cannot be told apart ('ambiguous', its sign still checked). A joint is decided only where k_j is
known to a quarter of itself (its standard error ≤ :attr:`EffortCheckSettings.relative_std`·|k_j|); a
joint whose file torque hardly moves in the recording, or moves only with its own acceleration (a last
wrist joint), leaves k undecided. Currents are compared as K_τ·i when no joint torque was recorded.

**The sign of a joint whose scale is undecided** (:func:`motion_sign`) can still show in its motion: under
the URDF convention the torque a joint needs is k·τ_f + B·q̈ + Fc·sgn(q̇) + Fv·q̇ with k > 0 and B, Fc,
Fv ≥ 0 (inertia is positive; friction opposes the motion), whether the signal is a joint torque after the
gear (B and the friction then fit at 0), a motor torque or K_τ·i. Both sign-constrained fits (non-negative
least squares, the offset free) are made; the sign is decided where the other sign's residual sum of
squares exceeds the better one's by at least χ²_p(1 − α) residual variances (p the constrained columns,
α = :attr:`EffortCheckSettings.sign_false_alarm`; the variance inflated by (1 + ρ)/(1 − ρ) for a positive
lag-one correlation ρ of the residuals). With the true sign's coefficients inside its cone that difference
is at most the noise's projection on the columns, σ²·χ²_p, so a joint is misjudged at most α of the time
(a robot file that does not belong aside). A motor current's friction and rotor inertia decide a last wrist
joint by far; a joint torque after the gear carries neither, and where the file torque's motion is small
against the sensor noise (the UR5e's wrist 3 without a tool: 0.5 mN·m RMS under 0.2 N·m of noise) the data
cannot tell its sign and the joint stays 'not checked'. The decimated rows hold what the full-rate rows
hold here: the motion and the file torque lie below the decimation cut-off.

What the caller or the recording says the effort holds (``said``: the user's option, ``dynid import``'s or
``dynid simulate``'s record in the bag) decides the reading; the data only check it.

**Gravity apart** (:func:`check_efforts`): the same signal is also fitted on the file's gravity g_j(q) and the
rest of its torque τ_f − g separately (e = k_g·g + k_d·(τ_f − g) + B·q̈ + Fc·sgn(q̇) + Fv·q̇ + o, every row): a
vendor's torque estimate with the gravity removed shows k_g ≈ 0 beside k_d ≈ 1; B and Fc (with their standard
errors) are the rotor inertia and friction the signal carries, which a motor torque or current holds and a
joint torque sensor after the gear does not. :mod:`dynid.diagnosis.diagnosis` reads these per-joint figures
into one diagnosis.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from dynid.errors import InputError
from dynid.io.dataset import Dataset
from dynid.model.inertial import Payload
from dynid.model.robot import RobotModel
from dynid.signal.preprocess import Decimator, FilterSettings, TooShortError, differentiate

#: how the advice names the settings where the front end gives no spelling of its own ({} for the value;
#: :func:`dynid.diagnosis.diagnose`): the field and the value
FIELD_SPELLING = {'torque_sign': 'torque_sign {}', 'joint_states_effort': 'joint_states_effort {}'}


@dataclass(frozen=True)
class EffortCheckSettings:
    """Thresholds of :func:`check_effort` (module docstring).

    relative_std: a joint's scale is decided when its standard error is at most this fraction of it.
    sign_false_alarm: the chance α that :func:`motion_sign` decides a joint's sign wrongly [-].
    torque_band: (low, high) of |k| read as torque [-]. rest_velocity_rad_s: all joints slower than this
    [rad/s] is at rest. rest_spread: the share of its RMS the file's gravity must vary by between rest poses for
    the offset to be fitted at rest, and of the signal's RMS it must reach at a single pose [-]
    (:func:`_rest_columns`). gravity_band: (low, high) of a result's gravity scale that is not flagged [-].
    """

    relative_std: float = field(default=0.25, metadata={'range': (0.01, 1.0)})
    sign_false_alarm: float = field(default=1e-3, metadata={'range': (1e-9, 0.1)})
    torque_band: tuple[float, float] = (0.5, 2.0)
    rest_velocity_rad_s: float = 0.01
    rest_spread: float = 0.1
    gravity_band: tuple[float, float] = (0.1, 10.0)


@dataclass
class JointScale:
    """One joint's scale k against the robot file (module docstring): value, standard error, the rows it
    came from ('motion' or 'rest', or '' when none) and the verdict, what the recorded signal is: 'torque'
    [N·m], 'current' [A], 'ambiguous' (either: a drive gain near 1 N·m/A), 'other' or 'undecided'; ``sign``
    +1 or −1 (0 when undecided), decided by ``sign_from`` 'scale' (k) or 'motion' (:func:`motion_sign`, its
    statistic ``sign_statistic`` [-]: positive for +1); ``file_rms`` and ``scatter``: the file torque's RMS
    about its mean and the measured signal's residual RMS in the motion fit [N·m]. The gravity-apart fit (module
    docstring): ``gravity_scale`` k_g and ``dynamic_scale`` k_d [-], ``rotor`` B [N·m·s²/rad], ``coulomb`` Fc
    [N·m], each with its standard error (``*_std``), ``offset`` o [N·m] (mean over the recordings);
    ``gravity_rms``, ``signal_rms``: the file's gravity torque and the measured signal, RMS over the rows [N·m];
    ``viscous`` Fv [N·m·s/rad]; ``friction_chi2``: the Wald statistic of (Fc, Fv) together, (Fc, Fv)·C⁻¹·(Fc, Fv)
    with C their covariance [-], and ``friction_rms`` the fitted friction torque Fc·sgn(q̇) + Fv·q̇ where it
    dissipates (RMS, with the signal's sign; 0 where it feeds energy in) [N·m]; ``friction_power_z``: the mean power
    of that friction torque against the motion, Fc·mean|q̇| + Fv·mean q̇², over its standard error, of the signal as
    recorded (positive where it opposes the motion) [-]."""

    scale: float
    std: float
    rows: str
    verdict: str
    sign: int
    sign_from: str = ''
    sign_statistic: float = 0.0
    file_rms: float = float('nan')
    scatter: float = float('nan')
    gravity_scale: float = float('nan')
    gravity_std: float = float('inf')
    dynamic_scale: float = float('nan')
    dynamic_std: float = float('inf')
    rotor: float = float('nan')
    rotor_std: float = float('inf')
    coulomb: float = float('nan')
    coulomb_std: float = float('inf')
    offset: float = float('nan')
    gravity_rms: float = float('nan')
    signal_rms: float = float('nan')
    viscous: float = float('nan')
    friction_chi2: float = 0.0
    friction_rms: float = 0.0
    friction_power_z: float = 0.0


@dataclass
class EffortCheck:
    """What :func:`check_effort` found in one recording.

    name: the recording. signal: what it was read as and compared ('torque': the joint torque, directly;
    'current': the motor current, as K_τ·i; None: nothing to compare). said: what the caller or the recording
    said the effort holds ('torque', 'current' or None), and by whom (``said_by``); current_from_effort: the
    current is joint_states' effort read as current. joints: {joint: :class:`JointScale`}; drive_gains:
    K_τ [N·m/A] or None. rows: the recordings' pooled rows it compared (:func:`_pooled_rows`), for the diagnosis's
    further fits; None where it compared none.
    """

    name: str
    signal: str | None
    said: str | None
    said_by: str
    joints: dict[str, JointScale]
    drive_gains: dict[str, float] | None = None
    current_from_effort: bool = False
    rows: dict | None = field(default=None, repr=False, compare=False)

    @property
    def meaning(self) -> str | None:
        """What the compared signal is by the decided joints' majority: 'torque' or 'current' (what it was read as
        on a tie), None when no joint decides."""
        verdicts = [s.verdict for s in self.joints.values() if s.verdict in ('torque', 'current')]
        if not verdicts:
            return None
        torque, current = verdicts.count('torque'), verdicts.count('current')
        return self.signal if torque == current else 'torque' if torque > current else 'current'

    @property
    def flipped(self) -> list[str]:
        """Joints whose measured torque has the opposite sign of the robot file's (decided, any meaning)."""
        return [name for name, s in self.joints.items()
                if s.sign < 0 and (s.verdict in ('torque', 'current', 'ambiguous') or s.sign_from == 'motion')]

    @property
    def unchecked(self) -> list[str]:
        """Joints whose sign the data cannot tell."""
        return [name for name, s in self.joints.items() if s.sign == 0]

    @property
    def off_scale(self) -> list[str]:
        """Decided joints whose scale is neither torque nor current."""
        return [name for name, s in self.joints.items() if s.verdict == 'other']

    def to_dict(self) -> dict:
        """Plain data for a result's provenance."""
        return {'recording': self.name, 'signal': self.signal, 'said': self.said, 'said_by': self.said_by,
                'meaning': self.meaning, 'flipped': self.flipped,
                'joints': {name: dataclasses.asdict(s) for name, s in self.joints.items()}}

    def _evidence_text(self, joints: list[str]) -> str:
        """'scale -0.98 on A, its friction and inertia torque against the motion on B'."""
        by_scale = [name for name in joints if self.joints[name].sign_from not in ('motion', 'friction')]
        by_motion = [name for name in joints if self.joints[name].sign_from == 'motion']
        by_friction = [name for name in joints if self.joints[name].sign_from == 'friction']
        parts = ['scale ' + ', '.join(f'{name} {self.joints[name].scale:.3g}' for name in by_scale)] if by_scale else []
        if by_friction:
            parts.append(f'{", ".join(by_friction)}: the drive\'s friction against the motion (power '
                         + ', '.join(f'{self.joints[name].friction_power_z:.3g}' for name in by_friction)
                         + ' standard errors)')
        if by_motion:
            parts.append(f'{", ".join(by_motion)}: {"its" if len(by_motion) == 1 else "their"} friction and inertia '
                         'torque against the motion')
        return '; '.join(parts)

    def _unchecked_text(self) -> str:
        """' (not checked: J, whose ...)' for the joints whose sign the data cannot tell, or ''; a sign a robot file
        off by tens of percent could turn (``sign_from`` 'held': :func:`dynid.diagnosis.robot_file.tolerated_signs`)
        is said as such."""
        held = [name for name in self.unchecked if self.joints[name].sign_from in ('held', 'beside other')]
        unchecked = [name for name in self.unchecked if name not in held]
        parts = []
        if unchecked:
            sizes = ', '.join(f'{name} {self.joints[name].file_rms:.2g} under {self.joints[name].scatter:.2g}'
                              for name in unchecked if np.isfinite(self.joints[name].scatter))
            parts.append(f'not checked: {", ".join(unchecked)}, whose robot-file torque hardly moves in this recording '
                         'against the signal\'s scatter, with no friction or rotor inertia to show the sign'
                         + (f': RMS {sizes} N·m' if sizes else ''))
        if held:
            parts.append(f'not decided: {", ".join(held)}, whose sign a robot file with every link off by up to 40 % '
                         'would turn, or which only the motion shows beside a joint at no meaning\'s scale')
        return f' ({"; ".join(parts)})' if parts else ''

    def _scales_text(self, verdict: str) -> str:
        """'0.074–0.077 on 4 joints (drive gains 13.5, 13.5, 13.5, 4.4 N·m/A)': |k| of the joints of ``verdict``."""
        joints = [(name, s) for name, s in self.joints.items() if s.verdict == verdict]
        values = [abs(s.scale) for _, s in joints]
        text = f'{min(values):.3g}–{max(values):.3g}' if len(values) > 1 else f'{values[0]:.3g}'
        text += f' on {len(joints)} joint{"s" if len(joints) > 1 else ""}'
        if self.drive_gains:
            text += ' (drive gains ' + ', '.join(f'{abs(self.drive_gains[name]):.3g}' for name, _ in joints) + ' N·m/A)'
        return text


def _scale_fit(columns: np.ndarray, measured: np.ndarray) -> tuple[float, float]:
    """(k, its standard error): least squares of ``measured`` on ``columns`` (first column: the file torque)."""
    if not np.linalg.norm(columns[:, 0]) > 0:
        return float('nan'), float('inf')
    values, errors = _coefficients(columns, measured)
    return float(values[0]), float(errors[0])


def _inflation(residual: np.ndarray) -> float:
    """(1 + ρ)/(1 − ρ) of the residual's lag-one correlation ρ > 0 (1 otherwise): the variance of a coefficient of
    smooth columns fitted on correlated rows is that much larger than the white-noise formula says."""
    energy = float(residual @ residual)
    if len(residual) < 3 or not energy > 0:
        return 1.0
    rho = float(residual[1:] @ residual[:-1] / energy)
    return max(1.0, (1.0 + rho) / (1.0 - rho)) if rho < 1.0 else float('inf')


def _rest_columns(gravity: np.ndarray, measured: np.ndarray, settings: EffortCheckSettings,
                  offsets: np.ndarray | None = None) -> np.ndarray | None:
    """The columns of one joint's fit at rest (module docstring), or None where the rest rows cannot give a scale.

    Where the robot file's gravity differs between the rest poses (its spread at least
    :attr:`EffortCheckSettings.rest_spread` of its RMS), the offset (one per recording: ``offsets``, default one)
    is fitted beside it: a torque sensor's offset then cannot pose as a scale of a small gravity. At one rest pose
    gravity and offset cannot be told apart: the signal is read without an offset, where the file's gravity there
    is not negligible against it (at least ``rest_spread`` of the signal's RMS; a last wrist joint's ~0 gravity
    would turn any offset into a scale)."""
    size = float(np.sqrt(np.mean(gravity**2)))
    if size == 0.0:
        return None
    if np.std(gravity) >= settings.rest_spread * size:
        return np.column_stack([gravity, np.ones((len(gravity), 1)) if offsets is None else offsets])
    if size < settings.rest_spread * float(np.sqrt(np.mean(measured**2))):
        return None
    return gravity[:, None]


def chi2_survival(dof: int, x: float) -> float:
    """P(χ²_dof > x) for an integer dof ≥ 1: erfc(√(x/2)) (dof 1) or e^(−x/2) (dof 2), then Q(k + 2, x) = Q(k, x) +
    (x/2)^(k/2)·e^(−x/2)/Γ(k/2 + 1) (Abramowitz & Stegun 26.4.4–26.4.5)."""
    half = 0.5 * max(x, 0.0)
    q = math.erfc(math.sqrt(half)) if dof % 2 else math.exp(-half)
    for k in range(1 if dof % 2 else 2, dof, 2):
        q += math.exp(0.5 * k * math.log(half) - half - math.lgamma(0.5 * k + 1.0)) if half > 0 else 0.0
    return q


def chi2_quantile(dof: int, tail: float) -> float:
    """x with P(χ²_dof > x) = ``tail`` (scipy.special.chdtri's value, by bisection on :func:`chi2_survival`: importing
    scipy.special for it cost a quarter second of every identification)."""
    low, high = 0.0, 1.0
    while chi2_survival(dof, high) > tail:
        high *= 2.0
    for _ in range(80):
        middle = 0.5 * (low + high)
        low, high = (middle, high) if chi2_survival(dof, middle) > tail else (low, middle)
    return 0.5 * (low + high)


def small_nnls(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """argmin ‖a·x − b‖ subject to x ≥ 0 for a few columns (a (N, p), p ≤ ~6): the least squares on each subset of the
    columns, the best of those whose solution is ≥ 0. The non-negative optimum is the least squares on its own
    support (the KKT conditions), so this is exact; on the p×p normal equations, 2^p tiny solves instead of
    importing scipy.optimize's NNLS (a fifth of a second)."""
    gram, moment, total = a.T @ a, a.T @ b, float(b @ b)
    p = a.shape[1]
    best, best_cost = np.zeros(p), total
    for mask in range(1, 1 << p):
        support = [k for k in range(p) if mask >> k & 1]
        try:
            x = np.linalg.solve(gram[np.ix_(support, support)], moment[support])
        except np.linalg.LinAlgError:
            continue
        if np.all(x >= 0):
            cost = total - 2.0 * x @ moment[support] + x @ gram[np.ix_(support, support)] @ x
            if cost < best_cost:
                best, best_cost = np.zeros(p), cost
                best[support] = x
    return best


def motion_sign(columns: np.ndarray, measured: np.ndarray, false_alarm: float = 1e-3,
                groups: np.ndarray | None = None) -> tuple[int, float, float]:
    """(sign, statistic, residual RMS) of ``measured`` (N,) from its motion (module docstring).

    ``columns`` (N, p): the torques whose coefficients share the signal's sign (file torque τ_f, q̈_j,
    sgn(q̇_j), q̇_j); an offset is fitted freely (one per group of rows: ``groups``, the recording of each row). The
    statistic is the two sign-constrained fits' difference in
    residual sum of squares (the −1 fit's minus the +1 fit's) in residual variances, divided by the
    correlation inflation; the sign is ±1 where |statistic| ≥ χ²_p(1 − ``false_alarm``), else 0.
    """
    groups = np.zeros(len(measured), int) if groups is None else np.asarray(groups)
    centred, target = np.array(columns, dtype=float), np.array(measured, dtype=float)
    for group in np.unique(groups):
        mine = groups == group
        centred[mine] -= centred[mine].mean(axis=0)
        target[mine] -= target[mine].mean()
    centred = centred[:, np.linalg.norm(centred, axis=0) > 0]
    p = centred.shape[1]
    if p == 0 or len(target) <= p + 1 + len(np.unique(groups)):
        return 0, 0.0, float('nan')
    plus, minus = small_nnls(centred, target), small_nnls(-centred, target)
    residual_plus, residual_minus = target - centred @ plus, target + centred @ minus
    rss_plus, rss_minus = residual_plus @ residual_plus, residual_minus @ residual_minus
    best = residual_plus if rss_plus <= rss_minus else residual_minus
    variance = best @ best / (len(target) - len(np.unique(groups)) - p)
    if not variance > 0:
        return 0, 0.0, 0.0
    rho = float(best[1:] @ best[:-1] / (best @ best))
    inflation = max(1.0, (1.0 + rho) / (1.0 - rho)) if rho < 1.0 else np.inf
    statistic = float((rss_minus - rss_plus) / (variance * inflation))
    threshold = chi2_quantile(p, false_alarm)
    sign = 1 if statistic >= threshold else -1 if statistic <= -threshold else 0
    return sign, statistic, float(np.sqrt(variance))


def _verdict(scale: float, std: float, signal: str, gain: float | None,
             settings: EffortCheckSettings) -> tuple[str, int]:
    """(what the recorded signal is, its sign) from its scale k against the file torque: ``signal`` as it was read
    where |k| is within the torque band; the other one where |k|·K_τ (torque read) or |k|/K_τ (K_τ·i compared) is."""
    if not (np.isfinite(scale) and std <= settings.relative_std * abs(scale)):
        return 'undecided', 0
    size, sign = abs(scale), 1 if scale > 0 else -1
    low, high = settings.torque_band
    other = None if gain is None else size * abs(gain) if signal == 'torque' else size / abs(gain)
    as_read, as_other = low <= size <= high, other is not None and low <= other <= high
    if as_read and as_other:
        return 'ambiguous', sign
    if as_read:
        return signal, sign
    if as_other:
        return ('current' if signal == 'torque' else 'torque'), sign
    return 'other', sign


def decimated_rows(dataset: Dataset, signal: np.ndarray):
    """Decimated (q, q̇, q̈, signal) of every contiguous piece long enough for the default filters, or None."""
    parts = []
    edges = dataset.gaps().edges
    for a, b in zip(edges[:-1], edges[1:], strict=True):
        if b - a < 2:
            continue
        piece = dataset.sliced(a, b)
        try:
            signals, settings = differentiate(piece, FilterSettings(stiction_velocity=0.0), rotor=False)
        except TooShortError:
            continue
        decimate = Decimator(settings, signals.rate_hz, len(signals.t))
        parts.append([decimate(x) for x in (signals.q, signals.dq, signals.ddq, signal[a:b])])
    if not parts:
        return None
    return [np.concatenate([p[k] for p in parts]) for k in range(4)]


@dataclass
class Recording:
    """One recording of an identification as the checks take it: the data in the robot's joint order, the load
    on the flange during it (a :class:`Payload`, or None: none, or the recording's own), its name, and the mass of
    a load whose centre of mass is not known (``payload_mass``, with ``payload`` None; once the diagnosis placed
    it, :func:`dynid.diagnosis.diagnose` keeps both)."""

    dataset: Dataset
    payload: Payload | None = None
    name: str = ''
    payload_mass: float | None = None  # a load whose mass alone is known [kg] (placed by the diagnosis)


def _signal(dataset: Dataset, robot: RobotModel) -> tuple[np.ndarray | None, str | None]:
    """(the compared signal N×n, 'torque' or 'current'), or (None, None) when there is nothing to compare."""
    if dataset.tau is not None:
        return dataset.tau, 'torque'
    if dataset.current is not None and robot.drives is not None:
        return robot.drives.current_to_joint_torque(dataset.current), 'current'
    return None, None


def _pooled_rows(recordings: Sequence[Recording], robot: RobotModel, settings: EffortCheckSettings):
    """The rows of every recording together: dict of q, dq, ddq, measured, file (τ_f), gravity (g of the file at
    the row's pose), rest (bool) and recording (index), all with the recording's payload; None without rows."""
    pieces = []
    for index, recording in enumerate(recordings):
        signal, _ = _signal(recording.dataset, robot)
        rows = None if signal is None else decimated_rows(recording.dataset, signal)
        if rows is None:
            continue
        q, dq, ddq, measured = rows
        payload = recording.payload if recording.payload is not None else recording.dataset.payload
        zeros = np.zeros_like(q)
        pieces.append({'q': q, 'dq': dq, 'ddq': ddq, 'measured': measured,
                       'file': robot.inverse_dynamics(q, dq, ddq, payload),
                       'gravity': robot.inverse_dynamics(q, zeros, zeros, payload),
                       'recording': np.full(len(q), index)})
    if not pieces:
        return None
    rows = {key: np.concatenate([piece[key] for piece in pieces]) for key in pieces[0]}
    rows['rest'] = np.all(np.abs(rows['dq']) < settings.rest_velocity_rad_s, axis=1)
    return rows


def _offsets(recording: np.ndarray) -> np.ndarray:
    """One offset column per recording present in ``recording`` (its rows' recording indices)."""
    present = np.unique(recording)
    return (recording[:, None] == present[None, :]).astype(float)


def _coefficients(columns: np.ndarray, measured: np.ndarray,
                  covariance_of: slice | None = None) -> tuple[np.ndarray, np.ndarray] | tuple:
    """Least-squares coefficients of ``measured`` on ``columns`` and their standard errors, inflated for the
    residual's correlation (:func:`_inflation`) (NaN, inf where the columns are rank deficient or the rows too few;
    an all-zero column gets 0 ± inf). With ``covariance_of`` (a slice of the columns) also the covariance of those
    coefficients (None where they cannot be had)."""
    p = columns.shape[1]
    values, errors = np.full(p, np.nan), np.full(p, np.inf)
    usable = np.linalg.norm(columns, axis=0) > 0
    covariance = None
    if len(measured) > usable.sum() + 1:
        a = columns[:, usable]
        solution, _, rank, _ = np.linalg.lstsq(a, measured, rcond=None)
        if rank == a.shape[1]:
            residual = measured - a @ solution
            variance = residual @ residual / (len(measured) - a.shape[1]) * _inflation(residual)
            full = np.full((p, p), np.nan)
            full[np.ix_(usable, usable)] = variance * np.linalg.inv(a.T @ a)
            values[usable], errors[usable] = solution, np.sqrt(np.maximum(np.diag(full)[usable], 0.0))
            values[~usable] = 0.0
            covariance = full
    if covariance_of is None:
        return values, errors
    block = None if covariance is None else covariance[covariance_of, covariance_of]
    return values, errors, (block if block is not None and np.all(np.isfinite(block)) else None)


def _friction_test(values: np.ndarray, covariance: np.ndarray | None, dq: np.ndarray,
                   sign: float) -> tuple[float, float, float]:
    """(Wald statistic of (Fc, Fv) together, RMS of the friction torque where it dissipates, z of the power it
    dissipates) (:class:`JointScale`): ``values`` (Fc, Fv), ``covariance`` theirs, ``dq`` the rows' velocity,
    ``sign`` the signal's (±1). The power's z: P = Fc·mean|q̇| + Fv·mean q̇² of the signal as recorded, over its
    standard error from the covariance (positive where the friction the signal holds opposes the motion)."""
    if covariance is None or not np.all(np.isfinite(values)):
        return 0.0, 0.0, 0.0
    try:
        statistic = float(values @ np.linalg.solve(covariance, values))
    except np.linalg.LinAlgError:
        return 0.0, 0.0, 0.0
    torque = values[0] * np.sign(dq) + values[1] * dq
    dissipates = sign * float(torque @ dq) > 0.0
    gradient = np.array([np.mean(np.abs(dq)), np.mean(dq**2)])
    spread = float(gradient @ covariance @ gradient)
    power_z = float(gradient @ values) / np.sqrt(spread) if spread > 0 else 0.0
    return statistic, float(np.sqrt(np.mean(torque**2))) if dissipates else 0.0, power_z


def check_efforts(recordings: Sequence[Recording], robot: RobotModel, said: str | None = None, said_by: str = '',
                  name: str = '', settings: EffortCheckSettings | None = None) -> EffortCheck:
    """The sign and scale of the measured torque of ``recordings`` together against ``robot``'s (module
    docstring): one offset per recording, each recording's payload in its file torque.

    Args:
        recordings: the recordings (:class:`Recording`), each in ``robot``'s joint order. Their joint torque is
            compared where they have one, else K_τ·i from the current (needs ``robot.drives``).
        robot: the robot file's model (its inertial parameters and drives).
        said: what the effort holds by the caller or the recording ('torque', 'current'), or None.
        said_by: who said it, for messages ('--joint-states-effort', 'dynid import').
        name: the recordings, for messages.

    Returns:
        An :class:`EffortCheck`; its ``signal`` is None when there is nothing to compare.
    """
    settings = settings or EffortCheckSettings()
    for recording in recordings:
        if tuple(recording.dataset.joint_names) != tuple(robot.joint_names):
            raise InputError(f'{recording.name or "recording"}: joints {list(recording.dataset.joint_names)} are '
                             f'not the robot\'s {list(robot.joint_names)}')
    drives = robot.drives
    from_effort = any(r.dataset.source.get('joint_states_effort') == 'current' for r in recordings)
    gains = None if drives is None else dict(zip(robot.joint_names, np.asarray(drives.drive_gain, float).tolist(),
                                                 strict=True))
    kinds = {_signal(r.dataset, robot)[1] for r in recordings}
    if None in kinds or len(kinds) != 1:  # nothing to compare, or torque in one recording and current in another
        return EffortCheck(name, None, said, said_by, {}, gains, from_effort)
    kind = kinds.pop()
    rows = _pooled_rows(recordings, robot, settings)
    if rows is None:
        scales = {joint: JointScale(float('nan'), float('inf'), '', 'undecided', 0) for joint in robot.joint_names}
        return EffortCheck(name, kind, said, said_by, scales, gains, from_effort)
    rest, moving = rows['rest'], ~rows['rest']
    offsets_moving, offsets_rest = _offsets(rows['recording'][moving]), _offsets(rows['recording'][rest])
    offsets_all = _offsets(rows['recording'])
    joints = {}
    for j, joint in enumerate(robot.joint_names):
        dq, ddq, measured = rows['dq'][:, j], rows['ddq'][:, j], rows['measured'][:, j]
        file, gravity = rows['file'][:, j], rows['gravity'][:, j]
        motion = np.column_stack([file[moving], ddq[moving], np.sign(dq[moving]), dq[moving], offsets_moving])
        fits = [(*_scale_fit(motion, measured[moving]), 'motion')]
        if rest.any():
            at_rest = _rest_columns(gravity[rest], measured[rest], settings, offsets_rest)
            if at_rest is not None:
                fits.append((*_scale_fit(at_rest, measured[rest]), 'rest'))
        scale, std, kind_of_rows = min(fits, key=lambda f: f[1] / abs(f[0]) if np.isfinite(f[0]) and f[0] else np.inf)
        verdict, sign = _verdict(scale, std, kind, None if gains is None else gains[joint], settings)
        file_rms = float(np.std(file[moving])) if moving.any() else float('nan')
        found = JointScale(scale, std, kind_of_rows if np.isfinite(scale) else '', verdict, sign,
                           'scale' if sign else '', file_rms=file_rms)
        # the gravity and the rest of the file torque apart, with friction, rotor inertia and offsets
        some = np.sqrt(np.mean(gravity**2)) > 1e-9 * max(np.sqrt(np.mean(file**2)), 1e-300)
        carried = gravity if some else np.zeros_like(gravity)
        split = np.column_stack([carried, file - carried, ddq, np.sign(dq), dq, offsets_all])
        values, errors, friction_covariance = _coefficients(split, measured, slice(3, 5))
        found.viscous = float(values[4])
        found.friction_chi2, found.friction_rms, found.friction_power_z = _friction_test(
            values[3:5], friction_covariance, dq, 1.0 if not np.isfinite(scale) or scale >= 0 else -1.0)
        found.gravity_scale, found.gravity_std = float(values[0]), float(errors[0])
        found.dynamic_scale, found.dynamic_std = float(values[1]), float(errors[1])
        found.rotor, found.rotor_std = float(values[2]), float(errors[2])
        found.coulomb, found.coulomb_std = float(values[3]), float(errors[3])
        found.offset = float(np.mean(values[5:])) if np.all(np.isfinite(values[5:])) else float('nan')
        found.gravity_rms = float(np.sqrt(np.mean(gravity**2)))
        found.signal_rms = float(np.sqrt(np.mean(measured**2)))
        if not sign and moving.any():
            found.sign, found.sign_statistic, found.scatter = motion_sign(
                motion[:, :4], measured[moving], settings.sign_false_alarm, rows['recording'][moving])
            found.sign_from = 'motion' if found.sign else ''
        joints[joint] = found
    return EffortCheck(name, kind, said, said_by, joints, gains, from_effort, rows)


def check_effort(dataset: Dataset, robot: RobotModel, said: str | None = None, said_by: str = '',
                 name: str = '', settings: EffortCheckSettings | None = None,
                 payload: Payload | None = None) -> EffortCheck:
    """:func:`check_efforts` of one recording (``payload``: the load on the flange, default the recording's own)."""
    return check_efforts([Recording(dataset, payload, name)], robot, said, said_by, name, settings)
