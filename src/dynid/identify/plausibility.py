"""Plausibility against the robot file: the measured torque's sign and scale per joint, a result's gravity.

**Sign and scale of the measured torque** (:func:`check_effort`). Whatever the robot file's inertias get
wrong, its gravity and inertia torque τ_f = M(q)q̈ + C(q, q̇)q̇ + g(q) at the recorded states has the
sign and order of magnitude of the true joint torque. Per joint, on the rows identification would use
(filtered, decimated: :mod:`dynid.identify.preprocess`), the measured torque e is fitted as

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

**A result's gravity** (:func:`gravity_scale_check`): the identified model's gravity torque against the
robot file's at the recorded poses, per joint, by the same least-squares scale; a scale outside
[1/10, 10] (or negative) means masses an order of magnitude off (or of the wrong sign).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from dynid.errors import InputError
from dynid.identify.preprocess import Decimator, FilterSettings, TooShortError, differentiate
from dynid.io.dataset import Dataset
from dynid.model.inertial import Payload
from dynid.model.robot import RobotModel

#: how the CLI takes the settings a warning of :meth:`EffortCheck.warnings` names ({} for the value)
CLI_SPELLING = {'torque_sign': '--torque-sign {}', 'joint_states_effort': '--joint-states-effort {}'}


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
    about its mean and the measured signal's residual RMS in the motion fit [N·m]."""

    scale: float
    std: float
    rows: str
    verdict: str
    sign: int
    sign_from: str = ''
    sign_statistic: float = 0.0
    file_rms: float = float('nan')
    scatter: float = float('nan')


@dataclass
class EffortCheck:
    """What :func:`check_effort` found in one recording.

    name: the recording. signal: what it was read as and compared ('torque': the joint torque, directly;
    'current': the motor current, as K_τ·i; None: nothing to compare). said: what the caller or the recording
    said the effort holds ('torque', 'current' or None), and by whom (``said_by``); current_from_effort: the
    current is joint_states' effort read as current. joints: {joint: :class:`JointScale`}; drive_gains:
    K_τ [N·m/A] or None.
    """

    name: str
    signal: str | None
    said: str | None
    said_by: str
    joints: dict[str, JointScale]
    drive_gains: dict[str, float] | None = None
    current_from_effort: bool = False

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
                'joints': {name: {'scale': s.scale, 'std': s.std, 'rows': s.rows, 'verdict': s.verdict,
                                  'sign': s.sign, 'sign_from': s.sign_from, 'sign_statistic': s.sign_statistic,
                                  'file_rms': s.file_rms, 'scatter': s.scatter}
                           for name, s in self.joints.items()}}

    def warnings(self, options: dict[str, str] | None = None) -> list[str]:
        """One line per finding, each with the option that fixes it; ``options`` spells the settings
        ``torque_sign`` and ``joint_states_effort`` given a value as the front end takes them, a template with
        ``{}`` for the value (default :data:`CLI_SPELLING`, the CLI's flags)."""
        spell = {**CLI_SPELLING, **(options or {})}
        lines = []
        if self.signal is None:
            return lines
        reading = 'the measured torque' if self.signal == 'torque' else 'the motor current'
        meaning = self.meaning
        said = f' ({self.said_by} says {self.said})' if self.said is not None and self.said_by else ''
        if self.signal == 'torque' and meaning == 'current':
            lines.append(f'{self.name}: the effort read as joint torque [N·m] looks like motor current [A]{said}: its '
                         f'scale against the robot file\'s torque is {self._scales_text("current")}; if it is '
                         f'current, give {spell["joint_states_effort"].format("current")}')
        elif self.signal == 'current' and meaning == 'torque':
            source = 'the effort read as motor current' if self.current_from_effort else 'the motor current'
            fix = (f'; if it is, give {spell["joint_states_effort"].format("torque")}' if self.current_from_effort else
                   ' (a joint_currents topic holding torque?)')
            lines.append(f'{self.name}: {source} [A] looks like joint torque [N·m]{said}: times the drive gains its '
                         f'scale against the robot file\'s torque is {self._scales_text("torque")}{fix}')
        flipped = self.flipped
        if flipped:
            if self.signal == 'current' and not self.current_from_effort:  # a joint_currents topic: K_τ's sign
                fix = 'give those joints drive gains of the other sign (a drives file)'
            else:
                fix = 'give ' + spell['torque_sign'].format(','.join(f'{name}=-1' for name in flipped))
            lines.append(f'{self.name}: {reading} of {", ".join(flipped)} has the opposite sign of the robot file\'s '
                         f'gravity and inertia torque ({self._evidence_text(flipped)}): {fix}'
                         + self._unchecked_text())
        off = self.off_scale
        if off:
            scales = ', '.join(f'{name} {self.joints[name].scale:.3g}' for name in off)
            lines.append(f'{self.name}: {reading} of {", ".join(off)} is neither torque nor motor current at the robot '
                         f'file\'s scale (scale {scales} against its torque): other units, or a robot file that '
                         f'does not belong to the recording?')
        return lines

    def _evidence_text(self, joints: list[str]) -> str:
        """'scale -0.98 on A, its friction and inertia torque against the motion on B'."""
        by_scale = [name for name in joints if self.joints[name].sign_from != 'motion']
        by_motion = [name for name in joints if self.joints[name].sign_from == 'motion']
        parts = ['scale ' + ', '.join(f'{name} {self.joints[name].scale:.3g}' for name in by_scale)] if by_scale else []
        if by_motion:
            parts.append(f'{", ".join(by_motion)}: {"its" if len(by_motion) == 1 else "their"} friction and inertia '
                         'torque against the motion')
        return '; '.join(parts)

    def _unchecked_text(self) -> str:
        """' (not checked: J, whose ...)' for the joints whose sign the data cannot tell, or ''."""
        unchecked = self.unchecked
        if not unchecked:
            return ''
        sizes = ', '.join(f'{name} {self.joints[name].file_rms:.2g} under {self.joints[name].scatter:.2g}'
                          for name in unchecked if np.isfinite(self.joints[name].scatter))
        return (f' (not checked: {", ".join(unchecked)}, whose robot-file torque hardly moves in this recording '
                'against the signal\'s scatter, with no friction or rotor inertia to show the sign'
                + (f': RMS {sizes} N·m' if sizes else '') + ')')

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
    usable = np.linalg.norm(columns, axis=0) > 0
    if not usable[0] or len(measured) <= usable.sum() + 1:
        return float('nan'), float('inf')
    a = columns[:, usable]
    solution, _, rank, _ = np.linalg.lstsq(a, measured, rcond=None)
    if rank < a.shape[1]:
        return float('nan'), float('inf')
    residual = measured - a @ solution
    variance = residual @ residual / (len(measured) - a.shape[1])
    covariance = variance * np.linalg.inv(a.T @ a)
    return float(solution[0]), float(np.sqrt(max(covariance[0, 0], 0.0)))


def _rest_columns(gravity: np.ndarray, measured: np.ndarray, settings: EffortCheckSettings) -> np.ndarray | None:
    """The columns of one joint's fit at rest (module docstring), or None where the rest rows cannot give a scale.

    Where the robot file's gravity differs between the rest poses (its spread at least
    :attr:`EffortCheckSettings.rest_spread` of its RMS), the offset is fitted beside it: a torque sensor's offset
    then cannot pose as a scale of a small gravity. At one rest pose gravity and offset cannot be told apart: the
    signal is read without an offset, where the file's gravity there is not negligible against it (at least
    ``rest_spread`` of the signal's RMS; a last wrist joint's ~0 gravity would turn any offset into a scale)."""
    size = float(np.sqrt(np.mean(gravity**2)))
    if size == 0.0:
        return None
    if np.std(gravity) >= settings.rest_spread * size:
        return np.column_stack([gravity, np.ones(len(gravity))])
    if size < settings.rest_spread * float(np.sqrt(np.mean(measured**2))):
        return None
    return gravity[:, None]


def motion_sign(columns: np.ndarray, measured: np.ndarray, false_alarm: float = 1e-3) -> tuple[int, float, float]:
    """(sign, statistic, residual RMS) of ``measured`` (N,) from its motion (module docstring).

    ``columns`` (N, p): the torques whose coefficients share the signal's sign (file torque τ_f, q̈_j,
    sgn(q̇_j), q̇_j); an offset is fitted freely. The statistic is the two sign-constrained fits' difference in
    residual sum of squares (the −1 fit's minus the +1 fit's) in residual variances, divided by the
    correlation inflation; the sign is ±1 where |statistic| ≥ χ²_p(1 − ``false_alarm``), else 0.
    """
    import scipy.optimize  # here: a quarter second that checks without an undecided joint skip
    import scipy.special

    centred = columns - columns.mean(axis=0)
    centred = centred[:, np.linalg.norm(centred, axis=0) > 0]
    target = measured - measured.mean()
    p = centred.shape[1]
    if p == 0 or len(target) <= p + 2:
        return 0, 0.0, float('nan')
    plus, minus = scipy.optimize.nnls(centred, target)[0], scipy.optimize.nnls(-centred, target)[0]
    residual_plus, residual_minus = target - centred @ plus, target + centred @ minus
    rss_plus, rss_minus = residual_plus @ residual_plus, residual_minus @ residual_minus
    best = residual_plus if rss_plus <= rss_minus else residual_minus
    variance = best @ best / (len(target) - 1 - p)
    if not variance > 0:
        return 0, 0.0, 0.0
    rho = float(best[1:] @ best[:-1] / (best @ best))
    inflation = max(1.0, (1.0 + rho) / (1.0 - rho)) if rho < 1.0 else np.inf
    statistic = float((rss_minus - rss_plus) / (variance * inflation))
    threshold = float(scipy.special.chdtri(p, false_alarm))
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


def _rows(dataset: Dataset, robot: RobotModel, signal: np.ndarray):
    """Decimated (q, q̇, q̈, signal) of every contiguous piece long enough for the default filters."""
    parts = []
    edges = dataset.gaps().edges
    for a, b in zip(edges[:-1], edges[1:], strict=True):
        if b - a < 2:
            continue
        piece = dataset.sliced(a, b)
        try:
            signals, settings = differentiate(piece, FilterSettings(stiction_velocity=0.0))
        except TooShortError:
            continue
        decimate = Decimator(settings, signals.rate_hz, len(signals.t))
        parts.append([decimate(x) for x in (signals.q, signals.dq, signals.ddq, signal[a:b])])
    if not parts:
        return None
    return [np.concatenate([p[k] for p in parts]) for k in range(4)]


def check_effort(dataset: Dataset, robot: RobotModel, said: str | None = None, said_by: str = '',
                 name: str = '', settings: EffortCheckSettings | None = None,
                 payload: Payload | None = None) -> EffortCheck:
    """The sign and scale of ``dataset``'s measured torque against ``robot``'s (module docstring).

    Args:
        dataset: the recording, in ``robot``'s joint order. Its joint torque is compared where it has one,
            else K_τ·i from its current (needs ``robot.drives``).
        robot: the robot file's model (its inertial parameters and drives).
        said: what the effort holds by the caller or the recording ('torque', 'current'), or None.
        said_by: who said it, for messages ('--joint-states-effort', 'dynid import').
        name: the recording, for messages.
        payload: a tool or load on the flange during the recording (default: the recording's own, if any).

    Returns:
        An :class:`EffortCheck`; its ``signal`` is None when there is nothing to compare.
    """
    settings = settings or EffortCheckSettings()
    if tuple(dataset.joint_names) != tuple(robot.joint_names):
        raise InputError(f'{name or "recording"}: joints {list(dataset.joint_names)} are not the robot\'s '
                         f'{list(robot.joint_names)}')
    drives = robot.drives
    from_effort = dataset.source.get('joint_states_effort') == 'current'
    gains = None if drives is None else dict(zip(robot.joint_names, np.asarray(drives.drive_gain, float).tolist(),
                                                 strict=True))
    if dataset.tau is not None:
        signal, kind = dataset.tau, 'torque'
    elif dataset.current is not None and drives is not None:
        signal, kind = drives.current_to_joint_torque(dataset.current), 'current'
    else:
        return EffortCheck(name, None, said, said_by, {}, gains, from_effort)
    rows = _rows(dataset, robot, signal)
    if rows is None:
        scales = {joint: JointScale(float('nan'), float('inf'), '', 'undecided', 0) for joint in robot.joint_names}
        return EffortCheck(name, kind, said, said_by, scales, gains, from_effort)
    q, dq, ddq, measured = rows
    payload = payload if payload is not None else dataset.payload  # a known tool is part of the joints' torque
    file_torque = robot.inverse_dynamics(q, dq, ddq, payload)
    rest = np.all(np.abs(dq) < settings.rest_velocity_rad_s, axis=1)
    gravity = (robot.inverse_dynamics(q[rest], np.zeros_like(q[rest]), np.zeros_like(q[rest]), payload)
               if rest.any() else None)
    joints = {}
    for j, joint in enumerate(robot.joint_names):
        moving = ~rest
        motion = np.column_stack([file_torque[moving, j], np.sign(dq[moving, j]), dq[moving, j],
                                  np.ones(int(moving.sum())), ddq[moving, j]])
        fits = [(*_scale_fit(motion, measured[moving, j]), 'motion')]
        if gravity is not None:
            at_rest = _rest_columns(gravity[:, j], measured[rest, j], settings)
            if at_rest is not None:
                fits.append((*_scale_fit(at_rest, measured[rest, j]), 'rest'))
        scale, std, kind_of_rows = min(fits, key=lambda f: f[1] / abs(f[0]) if np.isfinite(f[0]) and f[0] else np.inf)
        verdict, sign = _verdict(scale, std, kind, None if gains is None else gains[joint], settings)
        file_rms = float(np.std(file_torque[moving, j])) if moving.any() else float('nan')
        found = JointScale(scale, std, kind_of_rows if np.isfinite(scale) else '', verdict, sign,
                           'scale' if sign else '', file_rms=file_rms)
        if not sign and moving.any():
            motion_columns = motion[:, [0, 4, 1, 2]]  # τ_f, q̈, sgn(q̇), q̇: each with the signal's sign
            found.sign, found.sign_statistic, found.scatter = motion_sign(motion_columns, measured[moving, j],
                                                                          settings.sign_false_alarm)
            found.sign_from = 'motion' if found.sign else ''
        joints[joint] = found
    return EffortCheck(name, kind, said, said_by, joints, gains, from_effort)


def attach_effort_check(dataset: Dataset, robot: RobotModel, said: str | None = None, said_by: str = '',
                        name: str = '', spelling: dict[str, str] | None = None,
                        payload: Payload | None = None) -> list[str]:
    """:func:`check_effort` of ``dataset`` kept in ``dataset.source['effort_check']`` with its warnings, spelled
    for the front end (``spelling``: :meth:`EffortCheck.warnings`), which identification carries into the
    result; returns the warnings. ``payload``: as :func:`check_effort` takes it."""
    check = check_effort(dataset, robot, said, said_by, name=name, payload=payload)
    lines = check.warnings(spelling)
    dataset.source['effort_check'] = {**check.to_dict(), 'warnings': lines}
    return lines


def gravity_scale_check(result, robot: RobotModel, q: np.ndarray,
                        settings: EffortCheckSettings | None = None) -> tuple[dict[str, float], str | None]:
    """({joint: scale}, warning or None): the identified gravity torque against the robot file's at poses
    ``q`` (N, n) (module docstring). Joints whose file gravity torque at those poses is below 1 % of the
    largest joint's are left out (a vertical first joint, a wrist roll)."""
    from dynid.identify.torque import RigidBodyTorque

    settings = settings or EffortCheckSettings()
    zeros = np.zeros_like(q)
    file_gravity = robot.inverse_dynamics(q, zeros, zeros)
    identified = RigidBodyTorque(result, robot)(q, zeros, zeros)
    size = np.sqrt(np.mean(file_gravity**2, axis=0))
    scales = {}
    for j, joint in enumerate(robot.joint_names):
        if size[j] > 0.01 * size.max():
            scales[joint] = float(file_gravity[:, j] @ identified[:, j] / (file_gravity[:, j] @ file_gravity[:, j]))
    low, high = settings.gravity_band
    off = {joint: s for joint, s in scales.items() if not low <= s <= high}
    if not off:
        return scales, None
    return scales, ('the identified gravity torque is ' + ', '.join(f'{s:.3g}×' for s in off.values())
                    + f' the robot file\'s on {", ".join(off)} (at the recorded poses): masses an order of magnitude '
                    'off' + (' or of the wrong sign' if any(s < 0 for s in off.values()) else '')
                    + ' — a torque in other units (motor current?), of the wrong sign, or a robot file that does not '
                    'belong to the recording')
