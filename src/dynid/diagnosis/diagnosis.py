"""One diagnosis per identification: what its recordings' effort holds, read from all of them together.

Per joint (:class:`JointDiagnosis`): the effort's **meaning** — 'joint torque' (a sensor after the gear: scale ≈ 1
against the robot file's torque, no friction or rotor inertia in it), 'motor torque' (scale ≈ 1 with the drive's
friction in it: the Coulomb and viscous friction (Fc, Fv) fitted together beside the file torque, rotor inertia and
offset are not zero by a Wald test at false-alarm rate :attr:`DiagnosisSettings.friction_false_alarm`, and the
friction torque they make dissipates energy and is at least :attr:`DiagnosisSettings.friction_share` of the
signal's RMS; a joint torque sensor after the gear holds no friction, and a motor's friction need not look like
Coulomb's alone: the E-GMS friction of a harmonic drive at low speed is mostly viscous-like), 'motor current'
(scale ≈ 1/K_τ), 'torque without gravity'
(a vendor's torque estimate with the gravity compensated: the gravity's scale k_g below
:attr:`DiagnosisSettings.gravity_removed` while the rest of the torque's scale k_d is ≈ 1, on a joint that carries
gravity), 'joint torque or motor current' (a drive gain near 1 N·m/A), 'other' or 'not decided' — its **sign**
(+1, −1, or 0: not decided), **scale** and **offset**, each with its numbers (:mod:`dynid.diagnosis.effort`). A
joint the data cannot decide is 'not decided', never guessed.

Findings (:class:`Finding`, each one line with its evidence and the option that fixes it where one does), in
this order, the first kind that applies silencing those below it that its cause would explain:

1. **time and positions** (:mod:`dynid.diagnosis.recording`): stamps in milliseconds, positions in degrees;
2. **meaning**: the effort read as joint torque looks like motor current, a motor torque or a torque without
   gravity (or the current looks like torque), by more than half of the joints whose scale is decided (a joint at
   no meaning's scale counts against: most joints off scale is the robot file's problem, below). A motor torque is
   claimed only where the joint carrying the most gravity torque shows the drive's friction too: on a joint torque
   sensor's log a robot file's misfit passes for friction on lightly loaded joints, not on the most loaded one
   (the figures: docs/methods/diagnosis.md);
3. **robot file**: decided joints whose scale lies outside [1/t, t] (t = :attr:`DiagnosisSettings.trigger_band`)
   are explained (:mod:`dynid.diagnosis.robot_file`) by a load nobody declared, a link of the robot file, a
   joint's drive gain or sensor scale, or else a robot file that does not belong — the robot file's problem is
   named as such, not as units;
4. **signs**: the joints whose signal has the opposite sign of the robot file's torque (a −1 held against every
   file whose links are each off by tens of percent and their centres of mass by a few cm: :func:`_hold_signs`; a
   joint whose torque a load placed by the data takes up signed by a motor current's friction:
   :func:`_friction_sign`). The advice is the
   complete set that works as written: ``all=-1`` where every decided joint is flipped (the joints the data cannot
   decide then go with them, as one driver counts all its joints one way: said in the line, and not among the
   finding's ``joints``, which are the joints the data show flipped), else the flipped joints by name.

**Signs are advised, not applied.** The identification runs on the data as given: a sign the diagnosis would
apply by itself changes what the result (and every feedforward it feeds) means without a command line that says
so, and its evidence is one recording set's; the warning gives the option that applies it, and validate, estimate
and identify-friction then take it from the result.

The diagnosis is kept in the result (its ``diagnosis`` section, :meth:`Diagnosis.to_dict`); validate and estimate
read it from there (:meth:`Diagnosis.from_dict`) instead of deciding again.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from dynid.diagnosis.effort import (
    FIELD_SPELLING,
    EffortCheck,
    EffortCheckSettings,
    Recording,
    _pooled_rows,
    check_efforts,
    chi2_quantile,
)
from dynid.diagnosis.recording import TIME_BAND, degree_joints, time_scale
from dynid.diagnosis.robot_file import explain, place_mass, tolerated_signs
from dynid.model.inertial import Payload
from dynid.model.robot import RobotModel

NOT_DECIDED = 'not decided'


@dataclass(frozen=True)
class DiagnosisSettings:
    """Thresholds of :func:`diagnose` (module docstring), set from ``benchmarks/bench_diagnostics.py``.

    The robot-file rules (:func:`dynid.diagnosis.robot_file.explain`'s fits, in this order; k_j ± σ_j a joint's
    scale fitted per joint, α ± σ_α the one link that fits best, m ± σ_m the load fit's mass; the costs are the
    fits' weighted residuals in units of each joint's noise):

    trigger_band: a decided joint's |k| outside [1/t, t] has the explanations fitted [-].
    file_off, tolerated_evidence: every explanation named must leave at most tolerated_evidence times the cost of a
    file whose links are each off by up to file_off of their value (the 'tolerated' fit: each link's data over file
    factor within [1/(1 + file_off), 1/(1 − file_off)], :meth:`file_factors`): what such a file
    explains as well is not told apart from the common case of a file off by tens of percent, and not named [-].
    com_off_m: a sign held against such a file (:func:`_hold_signs`) is held against each link's centre of mass off
    by up to this much along each axis too [m]: on a wrist roll the gravity torque comes from a centre of mass a
    few mm off the axis, which a CAD file's error turns (a Panda chirp's joint 7 was read as flipped and the advice,
    followed, doubled its held-out error; at 0.02 it is not decided, and bench_diagnostics names as many faults; at 0.03
    the wrist 2 of a UR5e log with every joint flipped was not decided either).
    payload_kg, payload_evidence, payload_tolerated: a load is named where m − 2σ_m ≥ payload_kg [kg], its cost is at
    most payload_evidence times the smaller of a scale per joint's and one link's, and at most payload_tolerated
    (not tolerated_evidence) times the tolerated file's: a file off by tens of percent imitates a load only with
    the last link's mass, which payload_kg already bars [-]. payload_free: and at most this times the cost of every
    acting link scaled freely, where that fit is made (a link far off): a load's point mass off the axis is no
    pattern of links scaled, and where they explain the data as well the data show no load (None: no such rule).
    Measured: a UR5e and a UR10e moved by multi-sines about one pose with every link 20–40 % and its centre of mass
    ~2 cm off were told of a load that was not there without this rule; at 1.0 neither is, and
    bench_diagnostics names as many faults (benchmarks/README.md, "The figures behind the defaults") [-].
    link_band: (low, high), link_evidence: one link is named where α lies outside [1/low, low] and inside
    [1/high, high], α ± 2σ_α outside [1/scale_band, scale_band], and its cost is at most link_evidence times a scale
    per joint's (one number against one per joint); an α > 1 that a load of plausible mass explains as well (cost
    within link_evidence) is said as a load with the link beside it, not decided (and where the load's mass is
    positive by 2σ_m but below payload_kg, nothing is said: the last link heavier or a small load); the last link is
    not named where
    a load given by its mass alone was placed by the data (its torque is then the placement's as much) [-].
    scale_band, scale_z, agree_band: a joint whose |k| lies outside [1/scale_band, scale_band] and |k| ± scale_z·σ
    outside [1/agree_band, agree_band], while
    no other decided joint's |k| ± 2σ lies outside [1/agree_band, agree_band], at least one other's lies wholly within
    it (a joint that shows the file's scale), and a scale per joint fits at least as well as one link or a load, is
    that joint's drive gain (current) or sensor scale (torque) [-]; two or more joints so far out, or one with a best
    link that would need a negative mass (α + 2σ_α < 0), where a scale per joint fits at least as well as a load and
    one link (unless that link would need a factor outside [1/high, high] of link_band: no file is off by that much)
    and costs at most foreign_evidence times the tolerated file's, are a robot file that does not belong [-].
    beyond_band, beyond_evidence, beyond_free, beyond_second: one link is also named where, fitted beyond the
    tolerated file (that link at any factor ≥ 0, every other within file_off), its factor lies outside
    [1/beyond_band, beyond_band] (and inside link_band's outer limits), its cost is at most beyond_evidence times the
    tolerated file's and beyond_free times every link's scaled freely (one link beyond accounts for all the data
    show), the next link's fit costs at least beyond_second times as much (the data tell which link; a link whose
    fit needs a factor outside [1/high, high], a massless link, is no rival: no file is off by that much), and at
    most link_evidence times a scale per joint's [-].

    friction_false_alarm, friction_share: the Wald test of (Fc, Fv) at this false-alarm rate (χ²₂) and a
    dissipating friction torque at least this share of the signal's RMS show a motor torque [-].
    gravity_removed: |k_g| below this with k_d in the torque band is a torque without gravity [-];
    gravity_joint_share: a joint carries gravity where its file gravity RMS is at least
    this share of the largest joint's [-]. placed_share: a joint whose file torque a load placed by the data (a mass
    alone declared) makes at least this share of is not given a sign by its scale or motion; on a motor current its
    drive's friction may still show it (:func:`_friction_sign`) [-].
    """

    trigger_band: float = 1.1
    scale_band: float = 1.8
    scale_z: float = 2.0
    agree_band: float = 1.25
    link_band: tuple[float, float] = (2.6, 6.0)
    link_evidence: float = 1.05
    payload_evidence: float = 0.95
    payload_tolerated: float = 0.95
    payload_free: float | None = 1.0
    tolerated_evidence: float = 1.0 / 1.15
    foreign_evidence: float = 0.9
    file_off: float = 0.4
    com_off_m: float = 0.02
    payload_kg: float = 0.7
    friction_false_alarm: float = 1e-6
    friction_share: float = 0.05
    gravity_removed: float = 0.25
    gravity_joint_share: float = 0.1  # also: the joints the robot-file explanations are fitted on
    placed_share: float = 0.5
    beyond_band: float = 2.2
    beyond_evidence: float = 0.97
    beyond_free: float = 1.02
    beyond_second: float = 1.02
    effort: EffortCheckSettings = field(default_factory=EffortCheckSettings)

    @property
    def file_factors(self) -> tuple[float, float]:
        """The factors (the data's over the file's) a link of a file off by up to file_off takes [-]."""
        return 1.0 / (1.0 + self.file_off), 1.0 / (1.0 - self.file_off)


@dataclass
class JointDiagnosis:
    """One joint's diagnosis (module docstring): ``meaning``, ``sign`` (±1, 0 not decided), ``scale`` k and its
    standard error against the robot file's torque [-], ``offset`` [N·m], ``evidence`` (numbers, one phrase)."""

    meaning: str
    sign: int
    scale: float
    scale_std: float
    offset: float
    evidence: str


@dataclass
class Finding:
    """One thing the diagnosis says: ``kind`` ('time', 'positions', 'meaning', 'payload', 'link', 'drive',
    'robot_file', 'sign'), the ``joints`` it concerns, ``text`` (the claim with its numbers) and ``advice`` (the
    option that fixes it as written, or '' where none does)."""

    kind: str
    joints: list[str]
    text: str
    advice: str = ''

    def line(self) -> str:
        return self.text + (f': {self.advice}' if self.advice else '')


@dataclass
class Diagnosis:
    """The diagnosis of an identification's recordings (module docstring).

    recordings: their names. signal: what was compared ('torque': the joint torque; 'current': K_τ·i; None:
    nothing). said, said_by: what the user or the recordings said the effort holds, and who. meaning: the effort's
    meaning most decided joints have (:func:`_most_common`: of several as many, the one the effort is read as where
    it is among them, else 'not decided'). joints: {joint: :class:`JointDiagnosis`}.
    findings: :class:`Finding` in order. details: the figures behind them (plain data).
    """

    recordings: list[str]
    signal: str | None
    said: str | None
    said_by: str
    meaning: str
    joints: dict[str, JointDiagnosis]
    findings: list[Finding]
    details: dict = field(default_factory=dict)

    def warnings(self) -> list[str]:
        """One line per finding."""
        where = ', '.join(self.recordings) if len(self.recordings) <= 3 else f'{len(self.recordings)} recordings'
        return [f'{where}: {finding.line()}' if where else finding.line() for finding in self.findings]

    @property
    def flipped(self) -> list[str]:
        """Joints whose signal has the opposite sign of the robot file's."""
        return [name for name, joint in self.joints.items() if joint.sign < 0]

    def to_dict(self) -> dict:
        return {'recordings': self.recordings, 'signal': self.signal, 'said': self.said, 'said_by': self.said_by,
                'meaning': self.meaning, 'joints': {k: dataclasses.asdict(v) for k, v in self.joints.items()},
                'findings': [dataclasses.asdict(f) for f in self.findings], 'warnings': self.warnings(),
                'details': self.details}

    @classmethod
    def from_dict(cls, data: dict) -> Diagnosis:
        return cls(list(data.get('recordings') or []), data.get('signal'), data.get('said'),
                   data.get('said_by') or '', data.get('meaning') or NOT_DECIDED,
                   {k: JointDiagnosis(**v) for k, v in (data.get('joints') or {}).items()},
                   [Finding(**f) for f in data.get('findings') or []], dict(data.get('details') or {}))


def _finite(value: float) -> bool:
    return bool(np.isfinite(value))


def _joint_meanings(check: EffortCheck, settings: DiagnosisSettings) -> dict[str, str]:
    """Each joint's meaning (module docstring) from the effort check's figures."""
    gravity_max = max((s.gravity_rms for s in check.joints.values() if _finite(s.gravity_rms)), default=0.0)
    low, high = settings.effort.torque_band
    friction_threshold = chi2_quantile(2, settings.friction_false_alarm)
    meanings = {}
    for name, s in check.joints.items():
        carries = gravity_max > 0 and s.gravity_rms >= settings.gravity_joint_share * gravity_max
        decided_split = (_finite(s.dynamic_scale) and s.dynamic_std <= settings.effort.relative_std
                         * abs(s.dynamic_scale) and _finite(s.gravity_std) and s.gravity_std <= 0.1)
        friction = (s.friction_chi2 >= friction_threshold
                    and s.friction_rms >= settings.friction_share * s.signal_rms)
        if carries and decided_split and abs(s.gravity_scale) <= settings.gravity_removed and \
                low <= abs(s.dynamic_scale) <= high:
            meanings[name] = 'torque without gravity'
        elif s.verdict == 'torque':
            meanings[name] = ('motor torque' if friction and check.signal == 'torque' else 'joint torque')
        elif s.verdict == 'current':
            meanings[name] = 'motor current'
        elif s.verdict == 'ambiguous':
            meanings[name] = 'joint torque or motor current'
        elif s.verdict == 'other':
            meanings[name] = 'other'
        else:
            meanings[name] = NOT_DECIDED
    return meanings


def _evidence(s) -> str:
    """The numbers of one joint, one phrase."""
    if not _finite(s.scale):
        parts = ['no rows to compare']
    else:
        parts = [f'scale {s.scale:.3g} ± {s.std:.2g} ({s.rows} rows)']
    if _finite(s.gravity_scale) and _finite(s.gravity_std):
        parts.append(f'gravity ×{s.gravity_scale:.3g} ± {s.gravity_std:.2g}')
    if _finite(s.dynamic_scale) and _finite(s.dynamic_std):
        parts.append(f'inertia ×{s.dynamic_scale:.3g} ± {s.dynamic_std:.2g}')
    if _finite(s.coulomb) and _finite(s.coulomb_std):
        parts.append(f'friction {s.coulomb:.3g} ± {s.coulomb_std:.2g} N·m')
    if s.sign_from == 'motion':
        parts.append(f'sign from friction and inertia against the motion (statistic {s.sign_statistic:.3g})')
    elif s.sign_from == 'friction':
        parts.append(f'sign from the drive\'s friction against the motion (its power {s.friction_power_z:.3g} standard '
                     'errors; the scale is a load\'s placed by the data as much)')
    elif s.sign_from == 'beside other':
        parts.append(f'sign {NOT_DECIDED}: only its motion shows it, beside a joint at no meaning\'s scale (the robot '
                     'file\'s torque is not right up to a scale)')
    elif s.sign_from == 'held':
        parts.append(f'sign {NOT_DECIDED}: a robot file with every link off by up to 40 % turns it (statistic '
                     f'{s.sign_statistic:.3g} of the fits with the links so scaled, positive for +1)')
    elif not s.sign and _finite(s.scatter):
        parts.append(f'file torque {s.file_rms:.2g} N·m RMS under {s.scatter:.2g} N·m of scatter')
    return '; '.join(parts)


def _sign_finding(check: EffortCheck, meanings: dict[str, str], spell: dict[str, str],
                  applied: dict[str, int] | None = None) -> Finding | None:
    """The flipped joints (module docstring): every joint whose sign the data decide as −1, whatever its scale
    says it holds (a scale decided at −2 is a sign decided as well as one at −1). ``applied``: the joints whose
    effort the user's torque_sign already negated ({joint: −1}); the advice is then the whole setting that
    works as written (:func:`_sign_setting`), not the flips on top of it."""
    flipped = [name for name, s in check.joints.items() if s.sign < 0]
    if not flipped:
        return None
    decided = [name for name, s in check.joints.items() if s.sign != 0]
    undecided = [name for name in check.joints if name not in decided]
    every = len(flipped) == len(decided) and len(decided) >= 2
    evidence = check._evidence_text(flipped)
    reading = 'the measured torque' if check.signal == 'torque' else 'the motor current'
    subject = 'every decided joint' if every and undecided else 'every joint' if every else ', '.join(flipped)
    text = (f'{reading} of {subject} has the opposite sign of the robot file\'s gravity and inertia torque '
            f'({evidence})')
    if every and undecided:
        text += f'; {", ".join(undecided)}: {NOT_DECIDED} by the data, taken with the others'
    elif undecided:
        text += check._unchecked_text()
    if check.signal == 'current' and not check.current_from_effort:
        advice = 'give those joints drive gains of the other sign (a drives file)'
    else:
        advice = 'give ' + spell['torque_sign'].format(_sign_setting(list(check.joints), flipped, every,
                                                                       applied or {}))
    return Finding('sign', flipped, text, advice)  # the joints the data show flipped; the advice may take more


def _sign_setting(joints: list[str], flipped: list[str], every: bool, applied: dict[str, int]) -> str:
    """The torque_sign value that reads the data with the robot file's sign: the flipped joints (every joint with
    ``every``) turned against the signs ``applied`` already. Without any applied, only the flips ('all=-1' or
    'J=-1,…'); with some, the whole setting ('all=1', 'all=-1' or 'all=1,J=-1,…'), which gives the same signs
    whether it replaces the setting given or follows it (a later item overrides an earlier one)."""
    turned = set(joints) if every else set(flipped)
    if not any(applied.get(name, 1) < 0 for name in joints):
        return 'all=-1' if every else ','.join(f'{n}=-1' for n in flipped)
    negative = [n for n in joints if applied.get(n, 1) * (-1 if n in turned else 1) < 0]
    if len(negative) == len(joints):
        return 'all=-1'
    return 'all=1' + ''.join(f',{n}=-1' for n in negative)


def _meaning_findings(check: EffortCheck, meanings: dict[str, str], spell: dict[str, str],
                      torque_source: str | None = None) -> list[Finding]:
    """The effort's meaning by the decided joints' majority, where it is not what the effort is read as; none where
    the identification already reads it so (``torque_source`` 'motor_torque': a motor torque's friction is
    modelled, the advice followed)."""
    decided = [m for m in meanings.values() if m in ('joint torque', 'motor torque', 'motor current',
                                                     'torque without gravity')]
    majority = _most_common(decided, check)
    off_scale = sum(m == 'other' for m in meanings.values())
    # no majority, or most decided joints at no meaning's scale: the robot file's finding, not the effort's
    if majority is None or 2 * decided.count(majority) <= len(decided) + off_scale:
        return []
    said = f' ({check.said_by} says {check.said})' if check.said is not None and check.said_by else ''
    joints = [name for name, m in meanings.items() if m == majority]
    if check.signal == 'torque' and majority == 'motor current':
        return [Finding('meaning', joints, f'the effort read as joint torque [N·m] looks like motor current '
                        f'[A]{said}: its scale against the robot file\'s torque is {check._scales_text("current")}',
                        f'give {spell["joint_states_effort"].format("current")}')]
    if check.signal == 'current' and majority == 'joint torque':
        source = 'the effort read as motor current' if check.current_from_effort else 'the motor current'
        advice = (f'give {spell["joint_states_effort"].format("torque")}' if check.current_from_effort else '')
        return [Finding('meaning', joints, f'{source} [A] looks like joint torque [N·m]{said}: times the drive '
                        f'gains its scale against the robot file\'s torque is {check._scales_text("torque")}'
                        + ('' if advice else ' (a joint_currents topic holding torque?)'), advice)]
    if majority == 'torque without gravity':
        numbers = ', '.join(f'{n} gravity ×{check.joints[n].gravity_scale:.2g}, inertia '
                            f'×{check.joints[n].dynamic_scale:.3g}' for n in joints)
        from dynid.io import EFFORT_MEANINGS

        gravity_meaning = next((m for m in EFFORT_MEANINGS if 'gravity' in m), None)
        advice = (f'give {spell["joint_states_effort"].format(gravity_meaning)}' if gravity_meaning else
                  'identification needs the torque with its gravity: record the motor current (the driver\'s '
                  'current interface) or a joint torque instead')
        return [Finding('meaning', joints, f'the effort holds no gravity torque: a vendor\'s torque estimate with '
                        f'the gravity removed ({numbers})', advice)]
    if check.signal == 'torque' and majority == 'motor torque' and torque_source != 'motor_torque' and \
            meanings.get(_most_gravity(check), 'motor torque') == 'motor torque':
        numbers = ', '.join(f'{n} {check.joints[n].friction_rms:.2g} N·m RMS (χ² {check.joints[n].friction_chi2:.3g})'
                            for n in joints)
        return [Finding('meaning', joints, f'the effort read as joint torque carries the drive\'s friction, as a '
                        f'motor torque does (friction torque fitted beside the robot file\'s torque: {numbers})',
                        f'if it is the motor\'s torque, give {spell["torque_source"].format("motor_torque")}'
                        if 'torque_source' in spell else 'if it is the motor\'s torque, identify it as one (dynid '
                        'identify --torque motor_torque)')]
    return []


def _most_common(meanings: list[str], check: EffortCheck) -> str | None:
    """The meaning most of ``meanings`` have; of several as many, the one the effort is read as ('joint torque' for a
    torque, 'motor current' for a current) where it is among them, else None (the joints do not decide)."""
    counts = Counter(meanings)
    top = max(counts.values(), default=0)
    tied = sorted(m for m, count in counts.items() if count == top)
    read_as = 'joint torque' if check.signal == 'torque' else 'motor current'
    return tied[0] if len(tied) == 1 else read_as if read_as in tied else None


def _most_gravity(check: EffortCheck) -> str | None:
    """The joint whose robot-file gravity torque is the largest over the recordings (None where none carries any)."""
    loads = {name: s.gravity_rms for name, s in check.joints.items() if _finite(s.gravity_rms) and s.gravity_rms > 0}
    return max(loads, key=loads.get) if loads else None


def _decisively_outside(value: float, std: float, band: float, z: float) -> bool:
    """|value| ± z·std wholly outside [1/band, band]."""
    size = abs(value)
    return bool(np.isfinite(size) and np.isfinite(std) and (size - z * std > band or size + z * std < 1.0 / band))


def _off_link(found, robot: RobotModel, settings: DiagnosisSettings, placed_load: bool) -> dict | None:
    """The link of the robot file the rules name (:class:`DiagnosisSettings`: link_band, link_evidence; beyond_band,
    beyond_evidence, beyond_free, beyond_second), or None: {'link', 'scale', 'std', 'cost', 'second', 'beyond'}. A
    load of known mass placed by the data (``placed_load``) leaves the last link unnamed: its torque is then the
    placement's as much."""
    cost, single, beyond = found.cost, found.single_link, found.beyond
    low, high = settings.link_band
    alpha, alpha_std = single.get('scale', 1.0), single.get('std', float('inf'))
    last = robot.joint_names[-1]
    if (not (placed_load and single.get('link') == last) and 1.0 / high <= alpha <= high
            and not 1.0 / low <= alpha <= low and _decisively_outside(alpha, alpha_std, settings.scale_band, 2.0)
            and cost['link'] <= settings.link_evidence * cost['joint']
            and cost['link'] <= settings.tolerated_evidence * cost['tolerated']):
        return {'link': single['link'], 'scale': alpha, 'std': alpha_std, 'cost': cost['link'], 'beyond': False}
    if not beyond or (placed_load and beyond['link'] == last):
        return None
    factor, band = beyond['scale'], settings.beyond_band
    # the rivals: the other links' fits at a factor a file can be off by (a link fitted massless or more than
    # link_band's outer factor off explains nothing a robot file could hold)
    second = min((fit[0] for name, fit in (beyond.get('fits') or {}).items()
                  if name != beyond['link'] and 1.0 / high <= fit[1] <= high), default=cost['tolerated'])
    if (1.0 / high <= factor <= high and not 1.0 / band <= factor <= band
            and cost['beyond'] <= settings.beyond_evidence * cost['tolerated']
            and cost['beyond'] <= settings.beyond_free * cost['free']
            and second >= settings.beyond_second * cost['beyond']
            and cost['beyond'] <= settings.link_evidence * cost['joint']):
        return {'link': beyond['link'], 'scale': factor, 'std': float('nan'), 'cost': cost['beyond'],
                'second': second, 'beyond': True}
    return None


def _robot_file_findings(check: EffortCheck, meanings: dict[str, str], rows, robot: RobotModel,
                         recordings: Sequence[Recording], settings: DiagnosisSettings,
                         details: dict, placed: set[str] = frozenset(),
                         spell: dict[str, str] | None = None) -> list[Finding]:
    """Decided joints off the robot file's scale, explained (module docstring; the rules and their thresholds:
    :class:`DiagnosisSettings`; ``spell``: how the front end spells the fields the advice names, :func:`_spelled`)."""
    spell = FIELD_SPELLING if spell is None else spell
    candidates = [j for j, (name, s) in enumerate(check.joints.items())
                  if s.verdict in ('torque', 'current', 'ambiguous', 'other')
                  and meanings[name] != 'torque without gravity' and name not in placed]  # its scale: the placement's
    trigger = settings.trigger_band
    off = [robot.joint_names[j] for j in candidates
           if not 1.0 / trigger <= abs(check.joints[robot.joint_names[j]].scale) <= trigger]
    if not off:
        return []
    signs = np.array([s.sign if s.sign else -1 if s.sign_from in ('held', 'beside other') else 1
                      for s in check.joints.values()], float)
    found = explain(rows, robot, signs, candidates, [r.payload if r.payload is not None else r.dataset.payload
                                                      for r in recordings], settings.file_factors,
                    any(r.payload_mass for r in recordings))
    details['robot_file'] = found.to_dict()
    cost, payload = found.cost, found.payload
    k = found.joint_scales
    k_text = ', '.join(f'{name} {k[name]:.3g}' for name in off if name in k)
    plausible_load = payload['mass_kg'] - 2.0 * payload['mass_std'] >= settings.payload_kg
    beaten = settings.tolerated_evidence * cost['tolerated']  # what a file off by tens of percent leaves
    link = _off_link(found, robot, settings, any(r.payload_mass for r in recordings))
    # a load's point mass off the axis is no pattern of links scaled: where they explain the data as well, freely
    # scaled, the data show no load (a motion about one pose, a file with its centres of mass a few cm off)
    specific = 'free' not in cost or settings.payload_free is None or \
        cost['payload'] <= settings.payload_free * cost['free']
    load_first = (plausible_load and specific
                  and cost['payload'] <= settings.payload_evidence * min(cost['joint'], cost['link'])
                  and cost['payload'] <= settings.payload_tolerated * cost['tolerated'])
    if load_first or (link and link['scale'] > 1.0 and plausible_load
                      and cost['payload'] <= settings.link_evidence * link['cost']):
        com, mass = ','.join(f'{c:.2g}' for c in payload['com_m']), f'{payload["mass_kg"]:.2g}'
        both = '' if load_first else (f'; {NOT_DECIDED} against the link moved by {link["link"]} at '
                                      f'{link["scale"]:.2g}× the file\'s (weighted residual {link["cost"]:.3g}), '
                                      'which explains it as well')
        return [Finding('payload', off, f'the torque holds a load on the flange (or heavier last links) that '
                        f'neither the robot file nor the declared payload holds: about {payload["mass_kg"]:.2g} ± '
                        f'{payload["mass_std"]:.1g} kg at ({com}) m in the flange frame explains it (scale {k_text} '
                        f'against the file\'s torque without it; weighted residual {cost["payload"]:.3g} against '
                        f'{cost["joint"]:.3g} for a scale per joint and {cost["link"]:.3g} for one link){both}',
                        f'if the arm carried it, give {_spelled(spell, "payload_mass", mass)} '
                        f'{_spelled(spell, "payload_com", com)}')]
    if link and link['scale'] > 1.0 and link['link'] == robot.joint_names[-1] and \
            payload['mass_kg'] - 2.0 * payload['mass_std'] > 0.0 and \
            cost['payload'] <= settings.link_evidence * link['cost']:
        return []  # the last link heavier, or a load below payload_kg: the data do not tell which
    if link:
        name, alpha = link['link'], link['scale']
        if link['beyond']:
            low, high = settings.file_factors
            how = (f'{alpha:.2g}× the file\'s with every other link within {low:.2g}–{high:.3g}× '
                   f'(a mass or centre of mass far off; scale {k_text}; weighted residual {link["cost"]:.3g} against '
                   f'{cost["tolerated"]:.3g} with every link within {low:.2g}–{high:.3g}×, '
                   f'{link["second"]:.3g} with another link beyond, {cost["joint"]:.3g} with a scale per joint)')
        else:
            how = (f'{alpha:.2g} ± {link["std"]:.1g}× the file\'s (a mass or centre of mass far off; scale {k_text} '
                   f'on the joints that carry it; weighted residual {link["cost"]:.3g} with that one number against '
                   f'{cost["joint"]:.3g} with a scale per joint)')
        return [Finding('link', [name], f'the robot file disagrees with the data, not the units: the link moved by '
                        f'{name}: the data put its torque at {how}',
                        'correct that link\'s inertial data in the robot file (identification estimates it from the '
                        'data, but the robot file\'s prior pulls toward it)')]
    return _scale_findings(check, found, settings, beaten, spell)


def _spelled(spell: dict[str, str], field: str, value: str) -> str:
    """``field`` given ``value`` as the front end spells it (``spell``: templates with ``{}`` for the value, or the
    option alone, which the value then follows; the field's name where the front end has none)."""
    template = spell.get(field, field)
    return template.format(value) if '{}' in template else f'{template} {value}'


def _scale_findings(check: EffortCheck, found, settings: DiagnosisSettings, beaten: float,
                    spell: dict[str, str]) -> list[Finding]:
    """A joint's drive gain or sensor scale, or a robot file that does not belong, from the explanations ``found``
    (:func:`dynid.diagnosis.robot_file.explain`; the rules: :class:`DiagnosisSettings`); ``beaten``: the cost an
    explanation must not exceed (tolerated_evidence times the tolerated file's); ``spell``: :func:`_spelled`'s."""
    cost, single, k = found.cost, found.single_link, found.joint_scales
    far = [name for name in k if not 1.0 / settings.scale_band <= abs(k[name]) <= settings.scale_band
           and _decisively_outside(k[name], found.joint_std[name], settings.agree_band, settings.scale_z)]
    rest_agree = not any(_decisively_outside(k[name], found.joint_std[name], settings.agree_band, 2.0)
                         for name in k if name not in far)
    band = settings.agree_band  # and one other joint at least shows the file's scale: |k| ± 2σ within the band
    rest_agree = rest_agree and any(1.0 / band <= abs(k[name]) - 2.0 * found.joint_std[name] and
                                    abs(k[name]) + 2.0 * found.joint_std[name] <= band for name in k if name not in far)
    if far and len(far) <= max(1, len(k) // 3) and rest_agree and \
            cost['joint'] <= min(cost['link'], cost['payload'], beaten):
        k_far = ', '.join(f'{name} {k[name]:.3g} ± {found.joint_std[name]:.1g}' for name in far)
        evidence = (f'weighted residual {cost["joint"]:.3g} with a scale per joint against {cost["link"]:.3g} for one '
                    f'link and {cost["payload"]:.3g} for a load')
        if check.signal == 'current':
            gains = check.drive_gains or {}
            fix = ', '.join(f'{name} {gains[name] / k[name]:.3g}' for name in far if name in gains)
            return [Finding('drive', far, f'the drive gain of {", ".join(far)} disagrees with the data: K_τ·i is '
                            f'{k_far}× the robot file\'s torque while the other joints agree ({evidence})',
                            f'give drive gains of {fix} N·m/A in a drives file ({_spelled(spell, "drives", "FILE")})')]
        return [Finding('drive', far, f'the measured torque is {k_far}× the robot file\'s while the other joints '
                        f'agree ({evidence}): the torque sensor\'s scale or unit of {", ".join(far)}')]
    alpha, alpha_std = single.get('scale', 1.0), single.get('std', float('inf'))
    high = settings.link_band[1]
    absurd = not 1.0 / high <= alpha <= high  # one link that would need such a factor explains nothing a file can
    link_cost = float('inf') if absurd else cost['link']
    foreign = settings.foreign_evidence * cost['tolerated']
    if far and cost['joint'] <= min(foreign, link_cost, cost['payload']) and \
            (len(far) >= 2 or alpha + 2.0 * alpha_std < 0.0):
        k_far = ', '.join(f'{name} {k[name]:.3g} ± {found.joint_std[name]:.1g}' for name in far)
        negative = (f'; the one link that fits best, moved by {single["link"]}, would need {alpha:.2g}× its torque, '
                    + ('a negative mass' if alpha + 2.0 * alpha_std < 0.0 else 'beyond any file\'s error')
                    if absurd or alpha + 2.0 * alpha_std < 0.0 else '')
        reading = 'the measured torque' if check.signal == 'torque' else 'K_τ·i of the motor current'
        return [Finding('robot_file', far, f'{reading} of {", ".join(far)} is not at the robot file\'s '
                        f'scale (scale {k_far}, beyond what a file whose links are off by tens of percent gives), in '
                        f'no pattern one link, one drive or a load explains{negative}: a robot file that does not '
                        f'belong to the recording (another arm\'s?) or other units')]
    return []


def diagnose(recordings: Sequence[Recording], robot: RobotModel, said: str | None = None, said_by: str = '',
             spelling: dict[str, str] | None = None, settings: DiagnosisSettings | None = None,
             torque_source: str | None = None) -> Diagnosis:
    """The diagnosis of ``recordings`` together against ``robot``'s file (module docstring).

    Args:
        recordings: the identification's recordings (:class:`dynid.diagnosis.effort.Recording`: data in the robot's
            joint order, the load on the flange, a name).
        robot: the robot file's model.
        said, said_by: what the user or the recordings said the effort holds ('torque', 'current', None) and who.
        spelling: how the front end spells the settings the advice names (``torque_sign``,
            ``joint_states_effort``, ``torque_source``), templates with ``{}`` for the value (the command line's:
            ``dynid.cli.flags.ADVICE``); default the field and the value.
        torque_source: what the identification reads the effort as
            (:class:`dynid.identify.equations.request.ModelSpec`), or None: a finding whose advice it already follows
            is not made (a motor torque read as one).
    """
    settings = settings or DiagnosisSettings()
    spell = {**FIELD_SPELLING, 'torque_source': 'torque_source {}'} if spelling is None else \
        {**FIELD_SPELLING, **spelling}
    names = [r.name for r in recordings if r.name]
    details: dict = {}
    findings: list[Finding] = []
    ratios = [time_scale(r.dataset) for r in recordings]
    details['time_ratio'] = ratios
    odd_time = [(r, x) for r, x in zip(recordings, ratios, strict=True)
                if np.isfinite(x) and not 1.0 / TIME_BAND <= x <= TIME_BAND]
    for recording, ratio in odd_time:
        unit = ' (time in milliseconds read as seconds?)' if 3e-4 <= ratio <= 3e-3 else ''
        where = f'{recording.name}: ' if len(recordings) > 1 else ''
        findings.append(Finding('time', [], f'{where}its positions change {ratio:.3g}× as fast over the stamps as '
                                f'its recorded velocity says{unit}', 'import the log with its time unit (dynid import '
                                '--columns \'time=COLUMN,time_unit=ms,...\')'))
    degrees = sorted({name for r in recordings for name in degree_joints(r.dataset, robot)})
    if degrees:
        findings.append(Finding('positions', degrees, f'the positions of {", ".join(degrees)} leave the joint limits '
                                'by more than a turn and lie within them read as degrees: positions in degrees?',
                                'dynid reads positions in radians: convert them (×π/180) before importing'))
    if any(r.payload is None and r.payload_mass for r in recordings):
        recordings, placement_joints = _place_loads(recordings, robot, settings)
    else:
        placement_joints = set()
    check = check_efforts(recordings, robot, said, said_by, ', '.join(names), settings.effort)
    rows = check.rows  # the pooled rows the check compared: the signs held and the robot file's fits take them too
    for name in placement_joints:  # their sign is the load's placement's as much as the data's: not decided,
        joint = check.joints.get(name)  # unless the drive's friction in a motor current shows it
        if joint is not None and joint.sign:
            joint.sign = _friction_sign(joint, check.signal, settings)
            joint.sign_from = 'friction' if joint.sign else ''
            joint.verdict = 'undecided' if joint.verdict != 'other' else joint.verdict
    _hold_signs(check, rows, robot, settings)
    meanings = _joint_meanings(check, settings)
    joints = {name: JointDiagnosis(meanings[name], int(s.sign), float(s.scale), float(s.std), float(s.offset),
                                   _evidence(s)) for name, s in check.joints.items()}
    meaning = _most_common([m for m in meanings.values() if m != NOT_DECIDED], check) or NOT_DECIDED
    details['effort_check'] = {k: v for k, v in check.to_dict().items() if k in ('joints', 'flipped')}
    if check.signal is not None and not findings:
        meaning_findings = _meaning_findings(check, meanings, spell, torque_source)
        findings += meaning_findings
        if not meaning_findings and rows is not None:
            findings += _robot_file_findings(check, meanings, rows, robot, recordings, settings, details,
                                             placement_joints, spell)
        if not any(f.kind in ('robot_file', 'payload', 'link') for f in findings):  # signs judged against it
            sign = _sign_finding(check, meanings, spell, _applied_signs(recordings))
            if sign is not None:
                findings.append(sign)
    return Diagnosis(names, check.signal, said, said_by, meaning, joints, findings, details)


def _friction_sign(joint, signal: str | None, settings: DiagnosisSettings) -> int:
    """The sign a motor current's friction shows (K_τ·i compared: ``signal`` 'current'), whatever the file torque
    beside it: the friction fitted beside the file's gravity and inertia torque, rotor inertia and offsets
    (:func:`dynid.diagnosis.effort.check_efforts`) opposes the motion in the drive's sign convention, so the sign of
    its mean power against the motion is the signal's; decided where that power's z reaches the two-sided normal
    quantile at :attr:`EffortCheckSettings.sign_false_alarm` (|z| ≥ 3.29 at 10⁻³), else 0. A joint torque after the
    gear holds no friction: not used there."""
    if signal != 'current':
        return 0
    z = float(joint.friction_power_z)
    if not np.isfinite(z) or z * z < chi2_quantile(1, settings.effort.sign_false_alarm):
        return 0
    return 1 if z > 0 else -1


def _hold_signs(check: EffortCheck, rows, robot: RobotModel, settings: DiagnosisSettings) -> None:
    """Each sign the scale decided, judged again against a robot file off by tens of percent
    (:func:`dynid.diagnosis.robot_file.tolerated_signs`, each link within :attr:`DiagnosisSettings.file_factors` and
    its centre of mass within :attr:`DiagnosisSettings.com_off_m`, at
    false-alarm rate :attr:`EffortCheckSettings.sign_false_alarm`): a sign such a file could turn (a joint whose links'
    torques nearly cancel) is not decided (``sign`` 0; ``sign_from`` 'held' keeps why, the statistic in
    ``sign_statistic``). A sign from the motion alone (:func:`dynid.diagnosis.effort.motion_sign`, whose test takes
    the file's torque as right up to a positive scale) is not decided beside a joint whose decided scale is at no
    meaning's (verdict 'other': the file's torque is not right up to a scale there; ``sign_from`` 'beside other')."""
    if any(s.verdict == 'other' for s in check.joints.values()):  # the file's torque not right up to a scale
        for joint in check.joints.values():
            if joint.sign < 0 and joint.sign_from == 'motion':
                joint.sign, joint.sign_from = 0, 'beside other'
    judged = [j for j, s in enumerate(check.joints.values()) if s.sign < 0 and s.sign_from in ('scale', 'motion')]
    if not judged or rows is None:  # rows: the recordings' pooled rows (:func:`dynid.diagnosis.effort._pooled_rows`)
        return
    held = tolerated_signs(rows, robot, judged, settings.file_factors, settings.effort.sign_false_alarm,
                           settings.com_off_m)
    for j, (sign, statistic) in held.items():
        joint = check.joints[robot.joint_names[j]]
        if sign != joint.sign:
            joint.sign, joint.sign_from, joint.sign_statistic = 0, 'held', statistic


def _applied_signs(recordings: Sequence[Recording]) -> dict[str, int]:
    """{joint: −1} of the joints whose effort a torque_sign negated before the diagnosis read it (the recordings'
    ``source['torque_sign']``; the first recording's where they differ, as a front end gives one setting to all)."""
    for recording in recordings:
        signs = (recording.dataset.source or {}).get('torque_sign')
        if signs:
            return {name: int(value) for name, value in signs.items()}
    return {}


def _place_loads(recordings: Sequence[Recording], robot: RobotModel,
                 settings: DiagnosisSettings) -> tuple[list[Recording], set[str]]:
    """The recordings with each load of known mass alone placed where the data put it (:func:`place_mass`): placed
    with every joint's sign +1 and with every joint's −1, then again with the signs the check reads with the better
    of the two; the placement of the smallest weighted residual is kept (a joint whose torque is mostly the load's
    shows its sign only once the load is placed, and a flipped joint pulls a placement made with the wrong sign).
    Also the joints whose file torque the placed first moment m·c makes at least :attr:`DiagnosisSettings.
    placed_share` of (RMS): their sign is the placement's as much as the data's, so it is not decided."""
    placed, placement_joints = list(recordings), set()
    for index, recording in enumerate(recordings):
        if recording.payload is not None or not recording.payload_mass:
            continue
        rows = _pooled_rows([Recording(recording.dataset, None, recording.name)], robot, settings.effort)
        if rows is None:
            continue
        mass = float(recording.payload_mass)
        ones = np.ones(robot.n)
        best = min((place_mass(rows, robot, mass, sign * ones) for sign in (1.0, -1.0)), key=lambda fit: fit[1])
        trial = Recording(recording.dataset, Payload(mass, tuple(best[0])), recording.name)
        check = check_efforts([trial], robot, settings=settings.effort)
        signs = np.array([s.sign if s.sign else 1 for s in check.joints.values()], float)
        if check.joints and np.any(signs < 0) and not np.all(signs < 0):
            again = place_mass(rows, robot, mass, signs)
            best = again if again[1] < best[1] else best
        placed[index] = Recording(recording.dataset, Payload(mass, tuple(best[0])), recording.name, mass)
        count = len(rows['q'])
        pick = np.unique(np.linspace(0, count - 1, min(count, 500)).astype(int))
        y_payload = robot.payload_regressor(rows['q'][pick], rows['dq'][pick], rows['ddq'][pick]).reshape(
            len(pick), robot.n, 10)
        moment = y_payload[:, :, 1:4] @ (mass * np.asarray(best[0]))
        whole = rows['file'][pick] + mass * y_payload[:, :, 0] + moment
        share = np.sqrt(np.mean(moment**2, axis=0)) / np.maximum(np.sqrt(np.mean(whole**2, axis=0)), 1e-300)
        placement_joints |= {name for name, x in zip(robot.joint_names, share, strict=True)
                             if x >= settings.placed_share}
    return placed, placement_joints


def recordings_of(inputs, payloads: Sequence[Payload | None] | None = None) -> list[Recording]:
    """:class:`Recording` of identification inputs (objects with ``dataset``, ``payload``, ``name``)."""
    out = []
    for i, r in enumerate(inputs):
        payload = payloads[i] if payloads is not None else getattr(r, 'payload', None)
        out.append(Recording(r.dataset, payload, getattr(r, 'name', '') or ''))
    return out
