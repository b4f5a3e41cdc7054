"""Drive gains identified with the parameters (IDIM-TLS and modified LS), and how far to trust them.

Gautier & Briot 2014 write the torque of joint j as K_τj·i_j: with every gain unknown the IDIM reads
V·g − W·χ = 0 (eq. (15)) and only a known torque fixes the scale — a payload of known mass (eq. (17):
the column −W_kL·χ_kL). Each row of joint j carries that scale only through the payload's torque on
joint j, so a gain is determined only as far as the payload loads its joint: a payload on the flange
axis puts no torque on the last joint and little on a vertical base joint, and TLS then returns any
value for their gains without a word. What this module adds:

- **fixed gains** (``fixed``, joint index → N·m/A): a gain held at a given value moves its column
  to the known side, K_j·v_j − W_kL·χ_kL, and only the others are unknown. A fixed gain fixes the
  scale by itself, so no payload run is needed then.
- **diagnostics**: the kernel gap s_{c−1}/s_c and the smallest singular values of the weighted
  W_tot (a gap near 1 means a second solution fits about as well: eq. (20) is then ill-posed), the
  payload's torque content per joint against the noise (RMS of the known torque on joint j over
  |K̂_j|·σ_i,j, with σ_i,j the current noise of joint j estimated from the data alone: the residual
  of an ordinary LS of joint j's current on joint j's own columns and the known torque, which no gain
  or shared parameter can bias; below :data:`PAYLOAD_CONTENT_MIN` the payload does not determine that gain), and the
  identified gains against the nominal ones (outside ±:data:`NOMINAL_BAND_PERCENT` warns).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace

import numpy as np

from dynid.errors import InputError
from dynid.identify.solve.noise import per_joint_sigma
from dynid.identify.solve.solvers import Estimate

PAYLOAD_CONTENT_MIN = 3.0     # RMS(known payload torque on joint j) / (|K̂_j|·current noise of joint j)
NOMINAL_BAND_PERCENT = 25.0   # identified gains beyond ±25 % of the nominal ones warn
KERNEL_GAP_MIN = 1.5          # s_{c−1}/s_c below this: the TLS solution is barely singled out


@dataclass
class DriveGainSolution:
    """The solved drive-gain problem: all n gains (fixed ones with σ = 0), the parameters, the rows.

    measured: K̂·i minus the known torque per row [N·m]; prediction_w: W per row, so that W·values
    predicts it; joints: each row's joint.
    """

    estimate: Estimate
    gains: np.ndarray
    gains_std: np.ndarray
    values: np.ndarray
    std: np.ndarray
    measured: np.ndarray
    prediction_w: np.ndarray
    joints: np.ndarray
    diagnostics: dict = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)


def parse_fixed_gains(texts, joint_names) -> dict[int, float]:
    """``['wrist_3_joint=13.5', ...]`` → {joint index: gain [N·m/A]}; names or 1-based indices."""
    fixed = {}
    for text in texts or ():
        name, sep, value = str(text).partition('=')
        name = name.strip()
        try:
            gain = float(value)
        except ValueError:
            gain = float('nan')
        if not sep or not np.isfinite(gain) or gain == 0:
            raise InputError(f'{{fix_drive_gain}} expects JOINT=VALUE with a nonzero gain in N·m/A, got {text!r}',
                             fields=('fix_drive_gain',))
        if name in joint_names:
            index = list(joint_names).index(name)
        elif name.isdigit() and 1 <= int(name) <= len(joint_names):
            index = int(name) - 1
        else:
            raise InputError(f'{{fix_drive_gain}}: {name!r} is not a joint of the robot ({", ".join(joint_names)})',
                             fields=('fix_drive_gain',))
        if index in fixed:
            raise InputError(f'{{fix_drive_gain}}: joint {joint_names[index]} is given twice',
                             fields=('fix_drive_gain',))
        fixed[index] = gain
    if len(fixed) == len(joint_names) and joint_names:
        raise InputError('{fix_drive_gain} holds every gain: identify with the drives file instead ({drives})',
                         fields=('fix_drive_gain', 'drives'))
    return fixed


def solve_drive_gains(problem, solve: Callable[..., Estimate], rigid_start: np.ndarray,
                      fixed: dict[int, float] | None = None, nominal: np.ndarray | None = None,
                      method: str = '') -> DriveGainSolution:
    """The free gains and the parameters of ``problem`` (an
    :class:`~dynid.identify.equations.problem.IdentificationProblem` built with unknown gains) by a drive-gain method's
    ``solve(w_total, joints, names) -> Estimate`` of W_tot·[g; χ; 1] = 0, W_tot = [V_free, −W, −W_kL·χ_kL +
    V_fixed·g_fixed] (eq. (17)): IDIM-TLS, or the modified LS of eq. (16) (:mod:`dynid.identify.methods.tls`,
    :mod:`dynid.identify.methods.mls`), named ``method`` in the estimate and the diagnostics."""
    fixed = dict(fixed or {})
    n = problem.robot.n
    if problem.spec.uses_load:
        raise InputError('drive-gain identification supports the linear friction models only')
    carries = [r.payload is not None or r.payload_mass is not None for r in problem.recordings]
    if not fixed:
        if not any(carries):
            raise InputError('drive-gain identification needs a recording with a known payload ({payload_mass}, '
                             'with {payload_com} for a point mass) beside recordings without payload, or a gain '
                             'held fixed ({fix_drive_gain} JOINT=VALUE)',
                             fields=('payload_mass', 'payload_com', 'fix_drive_gain'))
        if all(carries):
            raise InputError('drive-gain identification needs recordings without payload too')
    free = [j for j in range(n) if j not in fixed]
    names = [f'K_tau_{j + 1}' for j in free] + problem.parameter_names()
    w, _, joints, _, known = problem.equations(rigid_start, with_current=True)
    current, rigid = w[:, :n], w[:, n:]
    held = np.array([fixed[j] for j in sorted(fixed)])
    scale = -known + (current[:, sorted(fixed)] @ held if fixed else 0.0)  # the column whose coefficient is 1
    w_total = np.hstack([current[:, free], -rigid, scale[:, None]])
    estimate = replace(solve(w_total, joints, names), method=method)
    k = len(free)
    gains, gains_std = np.zeros(n), np.zeros(n)
    gains[free], gains_std[free] = estimate.values[:k], estimate.std[:k]
    for j, value in fixed.items():
        gains[j] = value
    values, std = estimate.values[k:], estimate.std[k:]
    measured = current @ gains - known
    solution = DriveGainSolution(estimate, gains, gains_std, values, std, measured, rigid, joints)
    # [A]; one current column per row; the known torque is a column too (it is signal, not noise)
    current_noise = per_joint_sigma(np.hstack([rigid, known[:, None]]), current.sum(axis=1), joints)
    _diagnose(solution, problem, estimate, known, joints, fixed, nominal, current_noise)
    return solution


def _diagnose(solution: DriveGainSolution, problem, estimate: Estimate, known: np.ndarray, joints: np.ndarray,
              fixed: dict[int, float], nominal: np.ndarray | None, current_noise: np.ndarray) -> None:
    names = problem.robot.joint_names
    noise = np.abs(solution.gains) * current_noise  # [N·m]
    content = np.array([np.sqrt(np.mean(known[joints == j] ** 2)) for j in range(len(names))])
    ratio = content / np.maximum(noise, 1e-300)
    diagnostics = {
        'method': estimate.method,
        'fixed': {names[j]: float(v) for j, v in sorted(fixed.items())},
        'payload_torque_rms': dict(zip(names, content.tolist(), strict=True)),
        'noise_rms': dict(zip(names, noise.tolist(), strict=True)),
        'payload_content_ratio': dict(zip(names, ratio.tolist(), strict=True)),
        'payload_content_min': PAYLOAD_CONTENT_MIN,
        'nominal_band_percent': NOMINAL_BAND_PERCENT,
        'nominal': None if nominal is None else dict(zip(names, np.asarray(nominal, float).tolist(), strict=True)),
    }
    if 'kernel_gap' in estimate.extra:  # a TLS solution: how well the data single it out
        diagnostics['kernel_gap'] = float(estimate.extra['kernel_gap'])
        diagnostics['smallest_singular_values'] = [float(s) for s in estimate.extra['singular_values_tail']]
        if diagnostics['kernel_gap'] < KERNEL_GAP_MIN:
            solution.warnings.append(
                f'TLS kernel gap s_(c-1)/s_c = {diagnostics["kernel_gap"]:.3g} is below {KERNEL_GAP_MIN:g}: another '
                f'solution fits almost as well; the drive gains and parameters are not singled out by the data')
    unexcited = [j for j in range(len(names)) if j not in fixed and ratio[j] < PAYLOAD_CONTENT_MIN]
    diagnostics['unexcited_joints'] = [names[j] for j in unexcited]
    if unexcited:
        solution.warnings.append(
            'the known payload puts too little torque on ' + ', '.join(
                f'{names[j]} (RMS {content[j]:.3g} N·m, {ratio[j]:.2g}× its noise)' for j in unexcited)
            + f' (needs {PAYLOAD_CONTENT_MIN:g}×): the payload does not determine '
            + ('that drive gain' if len(unexcited) == 1 else 'those drive gains')
            + ('; hold it' if len(unexcited) == 1 else '; hold them')
            + ' at trusted values ({fix_drive_gain} JOINT=VALUE) or place the payload off the joint axes '
            '({payload_com})')
    if nominal is not None:
        nominal = np.asarray(nominal, float)
        deviation = 100.0 * (solution.gains / nominal - 1.0)
        diagnostics['deviation_from_nominal_percent'] = dict(zip(names, deviation.tolist(), strict=True))
        outside = [j for j in range(len(names)) if j not in fixed and not abs(deviation[j]) <= NOMINAL_BAND_PERCENT]
        if outside:
            solution.warnings.append(
                'identified drive gains outside ±' + f'{NOMINAL_BAND_PERCENT:g} % of the nominal ones: ' + ', '.join(
                    f'{names[j]} {solution.gains[j]:.4g} N·m/A (nominal {nominal[j]:.4g}, {deviation[j]:+.3g} %)'
                    for j in outside))
    solution.diagnostics = diagnostics


def diagnostics_lines(diagnostics: dict) -> list[str]:
    """The drive-gain diagnostics for people (stdout, report), one line per item; none without any."""
    if not diagnostics:
        return []
    lines = []
    if 'kernel_gap' in diagnostics:
        tail = ', '.join(f'{s:.4g}' for s in diagnostics['smallest_singular_values'])
        lines.append(f'TLS kernel gap s_(c-1)/s_c = {diagnostics["kernel_gap"]:.4g} (smallest singular values {tail})')
    ratio = diagnostics['payload_content_ratio']
    lines.append('payload torque RMS / noise RMS per joint: ' + ', '.join(
        f'{j} {r:.3g}' + (' (fixed)' if j in diagnostics['fixed'] else '') for j, r in ratio.items())
        + f' (below {diagnostics["payload_content_min"]:g}: gain not determined)')
    if diagnostics.get('deviation_from_nominal_percent'):
        lines.append('identified / nominal drive gains: ' + ', '.join(
            f'{j} {d:+.3g} %' for j, d in diagnostics['deviation_from_nominal_percent'].items())
            + f' (band ±{diagnostics["nominal_band_percent"]:g} %)')
    return lines
