"""Which explains a torque that disagrees with the robot file: the drives (a scale per joint), a link of the robot
file (a scale per link), or a load on the flange nobody declared.

Every explanation is fitted on the rows of all recordings together (:func:`dynid.diagnosis.effort.check_efforts`'s
rows, each joint's signal with its decided sign), each joint with its own rotor inertia, friction and offsets
(e_j = … + B_j·q̈_j + Fc_j·sgn(q̇_j) + Fv_j·q̇_j + o_j), in units of each joint's residual scatter:

- **per joint**: e_j = k_j·τ_f,j — a drive gain, a sensor's scale or a unit of one joint;
- **one link**: e_j = τ_f,j + (α_L − 1)·τ_j^(L), τ^(L) the torque of link L's inertial parameters alone (the
  rows of the joint-torque regressor, Atkeson et al. 1986, times the file's parameters of link L), the link L
  that fits best — a link's mass and first moment off by a factor shows on every joint that carries it, in the
  pattern the chain dictates, with one number;
- **a load**: e_j = τ_f,j + Y_p,j·(m, m·c) — the flange payload's mass and first moment (its rotational inertia
  left out: second order in c).

Where a load given by its mass alone was placed by the data against this file
(:func:`dynid.diagnosis.diagnosis.diagnose`), its first moment is fitted again beside the links' factors (shared by
the joints): a link far off in the file pulls the placement, which would otherwise take part of that link's torque.

The explanation of least weighted residual is named (:class:`RobotFileFinding`), with its numbers; the caller
decides when the disagreement is large enough to speak of (:mod:`dynid.diagnosis.diagnosis`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from dynid.diagnosis.effort import _inflation, chi2_quantile
from dynid.model.robot import RobotModel

#: rows of the explanation fits, at most (the regressor is computed per sample)
MAX_ROWS = 1500
#: a link is fitted where its torque is at least this share of a decided joint's file torque (RMS) [-]
LINK_SHARE = 0.05
#: the links are fitted beyond the tolerated file (each one bounded least-squares fit) where one link's factor
#: fitted alone lies outside [1/BEYOND_SCREEN, BEYOND_SCREEN] [-]
BEYOND_SCREEN = 2.0


@dataclass
class RobotFileFinding:
    """The explanations' fits (module docstring), each joint's rows weighted by its residual scatter in the fit of
    a scale per joint (inflated for correlated residuals), so that a cost is a χ²-like sum in units of the noise.

    ``cost``: weighted residual sum of squares [-] of 'file' (the file as it is), 'joint' (a scale per joint),
    'link' (the one link that fits best), 'payload' and 'tolerated' (every link scaled at once, each by a factor
    within ``tolerance`` of :func:`explain`: a file off by tens of percent, as files are); ``dof``: each one's number of
    shared parameters; ``joint_scales``/``joint_std``: k_j per joint and its standard error [-];
    ``single_link``: the link that fits best alone ('link': the joint that moves it), its α ('scale') and standard
    error ('std') [-]; ``payload``: the load fit's mass ('mass_kg') with its standard error ('mass_std') [kg] and
    centre of mass ('com_m') [m, flange frame]; ``best``: the least cost of 'joint', 'link' and 'payload';
    ``beyond``: one link beyond the tolerated file (:func:`_beyond`: 'link', its factor 'scale', and 'fits', each
    candidate link's [cost, factor]; costs 'beyond' and 'free', every acting link scaled freely), {} where not
    fitted."""

    best: str
    cost: dict[str, float]
    joint_scales: dict[str, float]
    joint_std: dict[str, float]
    single_link: dict
    payload: dict
    dof: dict[str, int] = field(default_factory=dict)
    beyond: dict = field(default_factory=dict)
    links: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {'best': self.best, 'cost': self.cost, 'dof': self.dof, 'joint_scales': self.joint_scales,
                'joint_std': self.joint_std, 'single_link': self.single_link, 'payload': self.payload,
                'beyond': self.beyond, 'links': self.links}


def _nuisance(dq: np.ndarray, ddq: np.ndarray, recording: np.ndarray, rest_velocity: float = 0.01) -> np.ndarray:
    """Each joint's own columns: q̈, sgn(q̇) (0 below ``rest_velocity`` [rad/s]: at rest the sign of a velocity in
    the noise is no friction's direction, and would pull every fit with it), q̇, one offset per recording."""
    present = np.unique(recording)
    moving = np.sign(dq) * (np.abs(dq) >= rest_velocity)
    return np.column_stack([ddq, moving, dq, (recording[:, None] == present[None, :]).astype(float)])


def _stacked_matrix(blocks_shared: list[np.ndarray], blocks_own: list[np.ndarray], targets: list[np.ndarray]):
    """The joints' rows stacked: shared columns first (same parameters on every joint), then each joint's own
    columns block-diagonally; (matrix, stacked targets)."""
    shared_width = blocks_shared[0].shape[1]
    a = np.zeros((sum(len(t) for t in targets), shared_width + sum(b.shape[1] for b in blocks_own)))
    start, column = 0, shared_width
    for shared, own, target in zip(blocks_shared, blocks_own, targets, strict=True):
        stop = start + len(target)
        a[start:stop, :shared_width] = shared
        a[start:stop, column:column + own.shape[1]] = own
        start, column = stop, column + own.shape[1]
    return a, np.concatenate(targets)


def _stacked(blocks_shared: list[np.ndarray], blocks_own: list[np.ndarray], targets: list[np.ndarray],
             covariance: bool = False):
    """Least squares of the joints' targets on shared columns (same parameters on every joint) beside each joint's
    own columns: (shared parameters, residual sum of squares[, their covariance for unit-variance rows])."""
    a, y = _stacked_matrix(blocks_shared, blocks_own, targets)
    shared_width, rows = blocks_shared[0].shape[1], len(y)
    scale = np.linalg.norm(a, axis=0)
    scale[scale == 0] = 1.0
    scaled = a / scale
    solution = np.linalg.lstsq(scaled, y, rcond=None)[0] / scale
    residual = y - a @ solution
    cost = float(residual @ residual)
    if not covariance:
        return solution[:shared_width], cost
    inverse = np.linalg.pinv(scaled.T @ scaled)[:shared_width, :shared_width]
    spread = max(1.0, cost / max(1, rows - a.shape[1]))
    return solution[:shared_width], cost, spread * inverse / np.outer(scale[:shared_width], scale[:shared_width])


def _reduced(links: np.ndarray, joints: list[int], weights: list[np.ndarray], own: list[np.ndarray],
             residuals: list[np.ndarray], acting: np.ndarray, free: list[np.ndarray] | None = None) -> dict:
    """The stacked problem of the acting links' factors beside each joint's own columns (:func:`_stacked_matrix`),
    its columns scaled to unit norm and reduced once by a QR factorization: ||A·x − y||² = ||R·x − Qᵀy||² + rest,
    so that the bounded fits below solve a square problem of the columns' size instead of every row's."""
    blocks = [np.column_stack([links[:, j, :][:, acting] * weights[k][:, None]] + ([free[k]] if free else []))
              for k, j in enumerate(joints)]
    a, y = _stacked_matrix(blocks, own, residuals)
    scale = np.linalg.norm(a, axis=0)
    scale[scale == 0] = 1.0
    q, r = np.linalg.qr(a / scale)
    projected = q.T @ y
    return {'r': r, 'b': projected, 'rest': max(float(y @ y - projected @ projected), 0.0), 'scale': scale,
            'width': len(acting)}


def _bounded(problem: dict, lower: np.ndarray, upper: np.ndarray) -> tuple[float, np.ndarray]:
    """The weighted residual of every acting link scaled at once, link k's factor within [lower_k, upper_k]
    (bounded least squares on :func:`_reduced`'s problem, each joint's own columns free), and the factors."""
    import scipy.optimize  # here: only where a disagreement is explained

    scale, width = problem['scale'], problem['width']
    low = np.full(len(scale), -np.inf)
    high = np.full(len(scale), np.inf)
    low[:width], high[:width] = (np.asarray(lower) - 1.0) * scale[:width], (np.asarray(upper) - 1.0) * scale[:width]
    scaled = scipy.optimize.lsq_linear(problem['r'], problem['b'], bounds=(low, high), method='bvls').x
    residual = problem['r'] @ scaled - problem['b']
    return float(residual @ residual) + problem['rest'], 1.0 + scaled[:width] / scale[:width]


def _tolerated(problem: dict, tolerance: tuple[float, float]) -> float:
    """The weighted residual of every acting link scaled at once by a factor within ``tolerance`` (low, high): what
    a robot file whose links are each off by up to that much explains (:func:`_reduced`'s problem)."""
    width = problem['width']
    return _bounded(problem, np.full(width, tolerance[0]), np.full(width, tolerance[1]))[0]


def _one_beyond(problem: dict, tolerance: tuple[float, float], candidates: list[int]) -> dict[int, tuple[float, float]]:
    """For each link of ``candidates`` (indices into the acting links of :func:`_reduced`'s problem): the weighted
    residual and that link's factor when it alone may take any factor ≥ 0 while every other acting link's stays
    within ``tolerance`` (low, high) — one link far off in a file whose other links are off by tens of percent."""
    width = problem['width']
    out = {}
    for index in candidates:
        lower, upper = np.full(width, tolerance[0]), np.full(width, tolerance[1])
        lower[index], upper[index] = 0.0, np.inf
        cost, factors = _bounded(problem, lower, upper)
        out[index] = (cost, float(factors[index]))
    return out


def _scatter(residual: np.ndarray, groups: list[np.ndarray], width: int) -> np.ndarray:
    """Each row's residual scatter σ [signal units]: per group of rows (``groups``, boolean masks: the rows at rest
    and those in motion), the residual's RMS (its degrees of freedom shared by the groups' sizes) inflated for
    correlated residuals (:func:`dynid.diagnosis.effort._inflation`, at most 10³); 1 where a group leaves none."""
    sigma = np.ones(len(residual))
    total = len(residual)
    for mask in groups:
        part = residual[mask]
        free = len(part) - width * len(part) / max(total, 1)
        variance = float(part @ part / max(1.0, free)) * min(_inflation(part), 1e3)
        sigma[mask] = float(np.sqrt(variance)) or 1.0
    return sigma


def _segments(rest: np.ndarray, width: int) -> list[np.ndarray]:
    """The groups of rows weighted apart (:func:`_scatter`): those at rest and those in motion where each holds at
    least 4·``width`` rows (at rest a joint's signal wanders with the static friction its controller works against,
    in correlated stretches unlike its scatter in motion: one scatter for both would weight the motion, where the
    inertia shows the scale, by the rest's), else all rows as one."""
    if min(int(rest.sum()), int((~rest).sum())) < 4 * width:
        return [np.ones(len(rest), bool)]
    return [rest, ~rest]


def _per_joint(measured: np.ndarray, file: np.ndarray, dq: np.ndarray, ddq: np.ndarray, recording: np.ndarray,
               joints: list[int], names: list[str], rest: np.ndarray | None = None) -> dict:
    """Each joint's fit of a scale of its file torque beside its own columns, weighted by its residual scatter
    (inflated for correlated residuals; at rest and in motion apart: :func:`_segments`): the weights (one per row),
    own columns and targets of the shared fits, the per-joint scales and their standard errors, and the costs of
    'file' (the file as it is) and 'joint'."""
    own, targets, weights = [], [], []
    cost, file_cost, joint_scales, joint_std = 0.0, 0.0, {}, {}
    for j in joints:
        nuisance = _nuisance(dq[:, j], ddq[:, j], recording)
        a = np.column_stack([file[:, j], nuisance])
        solution = np.linalg.lstsq(a, measured[:, j], rcond=None)[0]
        residual = measured[:, j] - a @ solution
        groups = [np.ones(len(residual), bool)] if rest is None else _segments(rest, a.shape[1])
        weight = 1.0 / _scatter(residual, groups, a.shape[1])
        if len(groups) > 1:  # weighted least squares with the scatter of each group
            solution = np.linalg.lstsq(a * weight[:, None], measured[:, j] * weight, rcond=None)[0]
            residual = measured[:, j] - a @ solution
        weights.append(weight)
        own.append(nuisance * weight[:, None])
        targets.append(measured[:, j] * weight)
        cost += float(np.sum((residual * weight) ** 2))
        joint_scales[names[j]] = float(solution[0])
        try:
            inverse = np.linalg.inv((a * weight[:, None]).T @ (a * weight[:, None]))
            joint_std[names[j]] = float(np.sqrt(max(inverse[0, 0], 0.0)))
        except np.linalg.LinAlgError:
            joint_std[names[j]] = float('inf')
        rest_of_file = (measured[:, j] - file[:, j]) * weight
        own_columns = nuisance * weight[:, None]
        left = rest_of_file - own_columns @ np.linalg.lstsq(own_columns, rest_of_file, rcond=None)[0]
        file_cost += float(left @ left)
    return {'own': own, 'targets': targets, 'weights': weights, 'cost': {'file': file_cost, 'joint': cost},
            'joint_scales': joint_scales, 'joint_std': joint_std}


def _sampled_links(rows: dict, robot: RobotModel) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(pick, Y, τ^(L)) on at most MAX_ROWS of the pooled rows spread evenly: the rows picked (indices), the arm's
    regressor there (P, n, 10·n) and each link's torque as filed, τ_j^(L) = Y_j,L·π_L (P, n joints, n links)."""
    count = len(rows['q'])
    pick = np.unique(np.linspace(0, count - 1, min(count, MAX_ROWS)).astype(int))
    n = robot.n
    y_arm = robot.regressor(rows['q'][pick], rows['dq'][pick], rows['ddq'][pick]).reshape(len(pick), n, 10 * n)
    parameters = robot.standard_parameters
    links = np.stack([y_arm[:, :, 10 * k:10 * k + 10] @ parameters[10 * k:10 * k + 10] for k in range(n)], axis=2)
    return pick, y_arm, links


def explain(rows: dict, robot: RobotModel, signs: np.ndarray, joints: list[int], payloads,
            tolerance: tuple[float, float] = (1.0 / 1.4, 1.0 / 0.6), placed: bool = False) -> RobotFileFinding:
    """The explanations of the signal of ``joints`` (indices; those whose scale was decided) against the robot
    file (module docstring). ``rows``: the pooled rows of :func:`dynid.diagnosis.effort._pooled_rows`; ``signs``:
    each joint's decided sign (±1; the signal is multiplied by it); ``payloads``: the declared load of each
    recording (list, None where none); ``tolerance``: (low, high), the factors (the data's over the file's) each link
    may take in the 'tolerated' fit: (1/1.4, 1/0.6) for a file whose every link is off by up to 40 %; ``placed``: a
    load of known mass was placed by the data (module docstring: its first moment fitted again beside the links)."""
    pick, y_arm, links = _sampled_links(rows, robot)
    dq, ddq = rows['dq'][pick], rows['ddq'][pick]
    file = rows['file'][pick]  # with the declared loads, which stay as declared
    n = robot.n
    y_payload = (y_arm[:, :, -10:].reshape(len(pick) * n, 10) @ robot._payload_transform).reshape(len(pick), n, 10)
    fit = _per_joint(rows['measured'][pick] * signs, file, dq, ddq, rows['recording'][pick], joints,
                     list(robot.joint_names), rows['rest'][pick])
    own, weights, costs = fit['own'], fit['weights'], fit['cost']
    dof = {'file': 0, 'joint': len(joints), 'link': 1, 'payload': 4}
    # links that act on the decided joints (at least LINK_SHARE of a joint's file torque); the others stay as filed
    size = np.sqrt(np.mean(links[:, joints, :] ** 2, axis=0))  # (decided joints, links)
    total = np.sqrt(np.mean(file[:, joints] ** 2, axis=0))[:, None]
    acting = np.flatnonzero(np.any(size >= LINK_SHARE * np.maximum(total, 1e-300), axis=0))
    residuals = [t - file[:, j] * weights[k] for k, (t, j) in enumerate(zip(fit['targets'], joints, strict=True))]
    # a load placed by the data against this file (its mass alone declared): its first moment fitted again beside
    # each link's factors, shared by the joints
    moment = [y_payload[:, j, 1:4] * weights[k][:, None] if placed else np.zeros((len(pick), 0))
              for k, j in enumerate(joints)]
    link_costs, single, single_std = {}, {}, {}
    for link in acting:  # one link off at a time: τ_f + (α_L − 1)·τ^(L)
        change, link_costs[link], covariance = _stacked(
            [np.column_stack([links[:, j, link:link + 1] * weights[k][:, None], moment[k]])
             for k, j in enumerate(joints)],
            own, residuals, covariance=True)
        single[link] = 1.0 + float(change[0])
        single_std[link] = float(np.sqrt(max(covariance[0, 0], 0.0)))
    problem = _reduced(links, joints, weights, own, residuals, acting, moment) if len(acting) else None
    costs['tolerated'] = _tolerated(problem, tolerance) if problem is not None else costs['file']
    dof['tolerated'] = len(acting)
    worst = min(link_costs, key=link_costs.get) if link_costs else None
    costs['link'] = link_costs[worst] if worst is not None else float('inf')
    beyond = _beyond(problem, acting, tolerance, single, costs)
    mass_moment, costs['payload'], covariance = _stacked(
        [y_payload[:, j, :4] * weights[k][:, None] for k, j in enumerate(joints)], own, residuals, covariance=True)
    mass = float(mass_moment[0])
    com = (mass_moment[1:] / mass).tolist() if mass > 0 else [0.0, 0.0, 0.0]
    moved = {} if worst is None else {'link': robot.joint_names[worst], 'scale': single[worst],
                                      'std': single_std[worst]}
    if beyond:
        beyond['link'] = robot.joint_names[beyond['link']]
        beyond['fits'] = {robot.joint_names[k]: fit for k, fit in beyond['fits'].items()}
    best = min(('joint', 'link', 'payload'), key=costs.get)
    each = {robot.joint_names[link]: {'scale': single[link], 'std': single_std[link], 'cost': link_costs[link]}
            for link in acting}
    return RobotFileFinding(best, costs, fit['joint_scales'], fit['joint_std'], moved,
                            {'mass_kg': mass, 'mass_std': float(np.sqrt(max(covariance[0, 0], 0.0))), 'com_m': com},
                            dof, beyond, each)


def _beyond(problem: dict | None, acting: np.ndarray, tolerance: tuple[float, float], single: dict,
            costs: dict) -> dict:
    """One link beyond the tolerated file (:func:`_one_beyond`), fitted for every acting link where one link's
    factor fitted alone lies outside [1/BEYOND_SCREEN, BEYOND_SCREEN] (the link off need not be the one that fits
    best alone: a light link ×3 is explained alone by a heavier one's factor); and every acting link scaled freely.
    Adds the costs 'beyond' (the best link's) and 'free' to ``costs``. Returns {} where nothing is fitted, else the
    link (index), its factor ('scale') and 'fits': {link index: [cost, factor]} of every candidate (the rules judge
    the rivals among them: :func:`dynid.diagnosis.diagnosis._off_link`)."""
    if problem is None or not any(not 1.0 / BEYOND_SCREEN <= single[link] <= BEYOND_SCREEN for link in acting):
        return {}
    fits = _one_beyond(problem, tolerance, list(range(len(acting))))
    best = min(fits, key=lambda k: fits[k][0])
    costs['beyond'] = fits[best][0]
    free = problem['r'] @ np.linalg.lstsq(problem['r'], problem['b'], rcond=None)[0] - problem['b']
    costs['free'] = float(free @ free) + problem['rest']
    return {'link': int(acting[best]), 'scale': fits[best][1],
            'fits': {int(acting[k]): list(fit) for k, fit in fits.items()}}


def place_mass(rows: dict, robot: RobotModel, mass: float, signs: np.ndarray | None = None,
               reach_m: float = 0.3) -> tuple[np.ndarray, float]:
    """The centre of mass [m, flange frame] of a load whose mass alone was declared, from the rows of its
    recording (:func:`dynid.diagnosis.effort._pooled_rows` without the load): its first moment m·c fitted on all
    joints together beside each joint's own scale of the file torque, friction, rotor inertia and offset (module
    docstring), the mass held, each joint's signal times its sign (``signs``, ±1; default +1); kept within
    ``reach_m`` of the flange. Returns (the centre of mass, the fit's weighted residual sum of squares)."""
    count = len(rows['q'])
    pick = np.unique(np.linspace(0, count - 1, min(count, MAX_ROWS)).astype(int))
    q, dq, ddq = rows['q'][pick], rows['dq'][pick], rows['ddq'][pick]
    n = robot.n
    y_payload = robot.payload_regressor(q, dq, ddq).reshape(len(pick), n, 10)
    file = rows['file'][pick] + mass * y_payload[:, :, 0]
    remainder = rows['measured'][pick] * (np.ones(n) if signs is None else signs)
    weights = 1.0 / np.maximum(np.std(remainder, axis=0), 1e-9)
    shared = [y_payload[:, j, 1:4] * weights[j] for j in range(n)]
    own = [np.column_stack([file[:, j], _nuisance(dq[:, j], ddq[:, j], rows['recording'][pick])]) * weights[j]
           for j in range(n)]
    moment, cost = _stacked(shared, own, [remainder[:, j] * weights[j] for j in range(n)])
    com = moment / mass
    size = float(np.linalg.norm(com))
    return (com if size <= reach_m else com * (reach_m / size)), cost


def _moment_shifts(y_joint: np.ndarray, masses: np.ndarray, com_off_m: float) -> tuple[np.ndarray, np.ndarray]:
    """(P, 3K) the first-moment columns (m·c) of the K links with mass that act on a joint (its regressor rows
    ``y_joint`` (P, 10·n)), and (3K,) how far each may move: m_L·``com_off_m`` (:func:`tolerated_signs`)."""
    moved = [k for k in range(len(masses)) if com_off_m > 0 and masses[k] > 0
             and np.any(y_joint[:, 10 * k + 1:10 * k + 4])]
    if not moved:
        return np.zeros((len(y_joint), 0)), np.zeros(0)
    return (np.concatenate([y_joint[:, 10 * k + 1:10 * k + 4] for k in moved], axis=1),
            np.repeat(masses[moved] * com_off_m, 3))


def tolerated_signs(rows: dict, robot: RobotModel, joints: list[int], tolerance: tuple[float, float],
                    false_alarm: float, com_off_m: float = 0.0) -> dict[int, tuple[int, float]]:
    """The sign of each joint of ``joints`` (indices) that holds against a robot file whose links are each off by
    up to ``tolerance`` (low, high: the factors, the data's over the file's, each link may take) and a signal in any
    unit, as the scale's sign alone does not: where the links' torques on a joint nearly cancel, a file off by tens
    of percent turns the sign of that joint's file torque, and a signal of the file's sign then fits its torque at a
    negative scale.

    Per joint j, the signal times s = ±1 is fitted as c·(Σ_L f_L·τ_j^(L) + τ_j^(loads)) + the joint's own columns
    (rotor inertia, friction, offsets: :func:`_nuisance`): c > 0 the signal's unit, each link's factor f_L within
    ``tolerance`` (bounded least squares for each c, the least over c; the declared loads' torque as declared; τ^(L)
    as in :func:`explain`). The statistic is the two fits' difference in residual sum of squares (the −1 fit's minus
    the +1 fit's) in the better fit's residual variance, divided by its correlation inflation
    (:func:`dynid.diagnosis.effort._inflation`); the sign is ±1 where |statistic| ≥ χ²_p(1 − ``false_alarm``), p the
    links acting on the joint, else 0 (the argument of :func:`dynid.diagnosis.effort.motion_sign`: with the true
    factors inside the box, the difference is at most the noise's projection on the columns). ``com_off_m`` [m]: each
    link that acts on the joint may also have its centre of mass off by up to this much along each axis (its first
    moment m_L·c_L moved by c·m_L·δ, |δ_i| ≤ ``com_off_m``, three more bounded columns per link, counted in p): a
    file's centre of mass is off by a few cm, and on a joint whose gravity torque comes from a small offset of the
    centre of mass from its axis (a wrist roll) that turns the sign of its file torque. Returns {joint index: (sign,
    statistic)}."""
    import scipy.optimize  # here: only where a sign is judged

    pick, y_arm, all_links = _sampled_links(rows, robot)
    masses = robot.standard_parameters[0::10]
    dq, ddq = rows['dq'][pick], rows['ddq'][pick]
    low, high = tolerance
    out = {}
    for j in joints:
        file = rows['file'][pick, j]
        links = all_links[:, j, :]
        loads = file - links.sum(axis=1)  # the declared loads' torque, as declared
        size = np.sqrt(np.mean(links**2, axis=0))
        acting = size >= LINK_SHARE * max(float(np.sqrt(np.mean(file**2))), 1e-300)
        own = _nuisance(dq[:, j], ddq[:, j], rows['recording'][pick])
        fixed = loads + links[:, ~acting].sum(axis=1)  # at the signal's unit c, as filed
        shifts, reach = _moment_shifts(y_arm[:, j, :], masses, com_off_m)
        a = np.column_stack([links[:, acting], shifts, own])
        norm = np.linalg.norm(a, axis=0)
        norm[norm == 0] = 1.0
        basis, r = np.linalg.qr(a / norm)
        measured = rows['measured'][pick, j]
        free = np.full(own.shape[1], np.inf)
        held = np.r_[np.zeros(3), -free[3:]]  # B, Fc, Fv ≥ 0 in the file's sign convention; offsets free
        width, bounded = int(acting.sum()), int(acting.sum()) + reach.size

        def fit(sign: float, c: float, basis=basis, r=r, norm=norm, width=width, bounded=bounded, free=free,
                measured=measured, fixed=fixed, held=held, reach=reach):
            target = sign * measured - c * fixed
            projected = basis.T @ target
            lower = np.r_[np.full(width, c * low), -c * reach] * norm[:bounded]
            upper = np.r_[np.full(width, c * high), c * reach] * norm[:bounded]
            lower, upper = np.r_[lower, held], np.r_[upper, free]
            if c == 0.0:
                upper[:bounded] = 1e-300
            x = scipy.optimize.lsq_linear(r, projected, bounds=(lower, upper), method='bvls').x
            left = r @ x - projected
            return float(left @ left) + max(float(target @ target - projected @ projected), 0.0), x

        cost = {}
        for sign in (1.0, -1.0):
            best = scipy.optimize.minimize_scalar(lambda u, sign=sign: fit(sign, float(np.exp(u)))[0],
                                                  bounds=(np.log(1e-3), np.log(1e3)), method='bounded',
                                                  options={'xatol': 1e-3})
            cost[sign] = min(float(best.fun), fit(sign, 0.0)[0])
        winner = 1.0 if cost[1.0] <= cost[-1.0] else -1.0
        variance = cost[winner] / max(1, len(measured) - a.shape[1])
        if not variance > 0:
            out[j] = (0, 0.0)
            continue
        c = float(np.exp(scipy.optimize.minimize_scalar(
            lambda u, sign=winner: fit(sign, float(np.exp(u)))[0], bounds=(np.log(1e-3), np.log(1e3)),
            method='bounded', options={'xatol': 1e-3}).x))
        x = fit(winner, c)[1]
        residual = winner * measured - c * fixed - a @ (x / norm)
        statistic = (cost[-1.0] - cost[1.0]) / (variance * _inflation(residual))
        threshold = chi2_quantile(bounded + 3, false_alarm)
        out[j] = (1 if statistic >= threshold else -1 if statistic <= -threshold else 0, float(statistic))
    return out
