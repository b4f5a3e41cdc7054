"""Builders several test files share (not fixtures: plain functions)."""

import dataclasses
import textwrap

import numpy as np

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: tomllib's original (requirements-libraries.txt)
    import tomli as tomllib

from dynid.excite.fourier import FourierDesign, default_limits, random_design
from dynid.excite.home import default_home, home_configuration
from dynid.fleet.prior import FleetMember
from dynid.fleet.synthetic import wear_sessions
from dynid.friction.load import LoadDependentCoulomb
from dynid.friction.static import CoulombViscous, PowerLawViscous
from dynid.health.record import Event, HealthRecord, JointSession, Session
from dynid.health.trend import temperature_features
from dynid.identify.equations.request import friction_symbols
from dynid.identify.result.result import IdentificationResult
from dynid.io.dataset import Dataset
from dynid.sim.recording import record_to_dataset
from dynid.sim.twin import DigitalTwin
from dynid.sim.wear import SessionSchedule, WearChange

DAY_S = 86400.0
START_UTC = 1.7e9


def truth_result(truth: dict) -> IdentificationResult:
    """A load_squared result holding a twin's true base parameters and friction levels (from its truth.yaml)."""
    inertial, joints, names = truth['inertial'], truth['plant']['joints'], truth['plant']['joint_names']
    friction = [(f'{symbol}_{j + 1}', value) for j in range(len(names)) for symbol, value in
                (('Fc', joints['coulomb'][j]), ('Fv', joints['viscous1'][j]), ('tau0', 0.0),
                 ('Fl', joints['load_coefficient'][j]))]
    parameter_names = list(inertial['base_names']) + [n for n, _ in friction]
    return IdentificationResult(
        robot=truth['plant']['robot'], joint_names=tuple(names), method='truth',
        model={'friction': 'load_squared', 'friction_symbols': ['Fc', 'Fv', 'tau0', 'Fl'],
               'torque_source': 'current'},
        parameter_names=parameter_names, values=np.array(inertial['base_values'] + [v for _, v in friction]),
        std=np.zeros(len(parameter_names)),
        base_expressions=dict(zip(inertial['base_names'], inertial['base_expressions'], strict=True)))


def health_record(path, sessions: int = 40, robot: str = 'cell-1', seed: int = 0) -> list[str]:
    """A synthetic health record of a 3-joint arm, a session a day at 25 ± 15 °C: joint a healthy, b's stiffness
    −20 % from day 25 (past the −15 % limit), c's friction rising 1 %/day from day 15; a gearbox swap event on a
    at day 5. Returns the joint names."""
    rng = np.random.default_rng(seed)
    names = ['a', 'b', 'c']
    temperature = 25.0 + rng.uniform(-15.0, 15.0, sessions)
    law = temperature_features('friction', temperature, 20.0) @ np.array([-0.07, 0.03])
    with HealthRecord(path) as record:
        for k in range(sessions):
            noise = 0.003 * rng.standard_normal((2, 3))
            stiffness = 4e4 * (1.0 + noise[0] - np.array([0.0, 0.2 * (k >= 25), 0.0]))
            friction = 1.0 + law[k] + noise[1] + np.array([0.0, 0.0, 0.01 * max(k - 15, 0)])
            record.append(Session(robot, 'test-arm', tuple(names), START_UTC + k * DAY_S, tuple(
                JointSession(name, temperature_c=temperature[k], stiffness=stiffness[j], friction_scale=friction[j],
                             coulomb_nm=2.0, samples=30000) for j, name in enumerate(names)), source='test'))
        record.add_event(robot, Event('gearbox_swap', START_UTC + 5 * DAY_S, 'a', 'new gear'))
    return names


#: Payload tests: the twin's rate [Hz] and the length of the wrist-and-elbow motion [s].
PAYLOAD_RATE_HZ = 250.0
MOTION_S = 8.0


def wrist_motion(robot, period_s=MOTION_S, scale=1.0):
    """A rest-to-rest motion of the elbow and the wrists (3 harmonics) about the UR home."""
    home, _ = default_home(robot)
    design = FourierDesign(robot.joint_names, 3, period_s)
    sine, cosine = np.zeros((robot.n, 3)), np.zeros((robot.n, 3))
    amplitudes = scale * np.array([0.0, 0.0, 0.25, 0.5, 0.5, 0.6])
    sine[:, 1], sine[:, 2] = amplitudes * 0.6, amplitudes * 0.3
    cosine[:, 1], cosine[:, 2] = amplitudes * 0.4, -amplitudes * 0.2
    return design.trajectory(design.variables(home, sine, cosine))


def random_motion(robot, seed, **limits):
    """A random feasible 10 s Fourier motion of 5 harmonics about the robot's home (``limits``: of
    :func:`dynid.excite.fourier.default_limits`, e.g. ``position_range``)."""
    home = home_configuration(robot)
    design = FourierDesign(robot.joint_names, 5, 10.0)
    return design.trajectory(random_design(design, home, default_limits(robot, home, **limits),
                                           np.random.default_rng(seed), np.linspace(0, 10, 4000, endpoint=False)))


def twin_run(params, trajectory, seconds, seed, payload=None, rate_hz=PAYLOAD_RATE_HZ):
    trajectory = dataclasses.replace(trajectory, duration_s=seconds)
    twin = DigitalTwin(params.with_payload(payload), rate_hz=rate_hz, seed=seed,
                       initial_q=trajectory.evaluate(np.array([0.0]))[0][0])
    twin.follow(trajectory)
    return record_to_dataset(twin.run(seconds), payload, {'simulation': f'seed {seed}'})


def coupled_wrist_twin(robot, coupling, seed: int, seconds: float = 8.0, rate_hz: float = 500.0):
    """The twin of ``robot`` whose drives are coupled by ``coupling`` (θ = C·q), Coulomb + viscous friction on each
    motor's θ̇, following a random 5-harmonic Fourier motion (``seed``, 0.8 of its amplitude): its SimulationRecord."""
    from dynid.sim.parameters import PlantParameters

    params = PlantParameters.defaults(robot)
    params.drives = dataclasses.replace(params.drives, coupling=coupling)
    params.nominal_drives = dataclasses.replace(params.nominal_drives, coupling=coupling)
    params.joints.friction_model = 'coulomb_viscous'
    home = home_configuration(robot)
    design = FourierDesign(robot.joint_names, 5, 8.0)
    trajectory = design.trajectory(random_design(design, home, default_limits(robot, home),
                                                 np.random.default_rng(seed),
                                                 np.linspace(0.0, 8.0, 2000, endpoint=False)))
    trajectory = dataclasses.replace(trajectory, sine=trajectory.sine * 0.8, cosine=trajectory.cosine * 0.8,
                                     duration_s=seconds)
    twin = DigitalTwin(params, rate_hz=rate_hz, seed=seed, initial_q=trajectory.evaluate(np.array([0.0]))[0][0])
    twin.follow(trajectory)
    return twin.run(seconds)


def ur_style(dataset):
    """What the UR driver gives: motor current, no motor encoders, no joint torque."""
    return Dataset(dataset.joint_names, dataset.t, dataset.q, dataset.dq, current=dataset.current,
                   source=dict(dataset.source))


# ------------------------------------------------ feedforward: a sinusoid per joint, a result, the landed friction
RATE = 1000.0  # Hz, of trajectory()


def motion(robot, t, amplitude=0.5, frequency=0.5):
    """q, q̇, q̈ (N, n) of one sinusoid per joint at times t [s], and the closed form q(t) itself."""
    phase, w = np.arange(robot.n), 2 * np.pi * frequency

    def q_of(time):
        return amplitude * np.sin(w * np.asarray(time)[:, None] + phase) + 0.3

    t = np.asarray(t)[:, None]
    return (amplitude * np.sin(w * t + phase) + 0.3, amplitude * w * np.cos(w * t + phase),
            -amplitude * w**2 * np.sin(w * t + phase), q_of)


def trajectory(robot, seconds=2.0, **kwargs):
    q, dq, ddq, _ = motion(robot, np.arange(int(seconds * RATE)) / RATE, **kwargs)
    return q, dq, ddq


def identified(robot, friction='load_squared', values=None, *, standard=None, temperature=False, model=None,
               exponents=None, provenance=None, drive_gains=None, extra=()):
    """An identification result of ``robot``: base parameters of ``standard`` (default the model's own)
    and friction parameters {symbol: value or per-joint values} (missing symbols 0); ``extra`` adds
    (name, value) parameters (e.g. Ia_j)."""
    base, n = robot.base, robot.n
    rigid = base.from_standard(robot.standard_parameters if standard is None else standard)
    symbols = friction_symbols(friction, temperature)
    table = {s: np.broadcast_to(np.asarray((values or {}).get(s, 0.0), dtype=float), (n,)) for s in symbols}
    names = list(base.names) + [f'{s}_{j + 1}' for s in symbols for j in range(n)] + [name for name, _ in extra]
    numbers = np.concatenate([rigid, *[table[s] for s in symbols], [value for _, value in extra]])
    return IdentificationResult(
        robot=robot.name, joint_names=robot.joint_names, method='wls',
        model={'friction': friction, 'friction_symbols': list(symbols), 'temperature': temperature,
               'hamon_velocity': 0.03, **(model or {})},
        parameter_names=names, values=numbers, std=np.zeros(len(names)),
        base_expressions=dict(zip(base.names, base.expressions, strict=True)), exponents=exponents,
        provenance=provenance or {}, drive_gains=drive_gains)


def landed_static(kind, p, w, tau, exponents):
    """The identified friction from the landed models (sgn(ω), no smoothing)."""
    if kind == 'hamon':  # Hamon et al. 2010 eq. (30) less τ_out, written out here as the test's own reference
        plus = (1 + np.sign(tau * w)) / 2
        minus, decay, s = 1 - plus, np.exp(-np.abs(w) / 0.03), np.sign(w)
        return (plus * (p['am1'] + p['bm'] * decay) * tau + minus * (p['ag1'] - p['bg'] * decay) * tau
                + plus * (p['cm'] + p['dm'] * decay) * s + minus * (p['cg'] + p['dg'] * decay) * s
                + p['Fv'] * w + p['tau0'])
    if kind == 'comprehensive':
        return (PowerLawViscous(p['fc'], p['fv'], p['fo'], exponents).evaluate(w)
                + LoadDependentCoulomb(0.0, p['fL']).evaluate(w, tau))
    f = CoulombViscous(np.asarray(p['Fc']), p['Fv'], p['tau0']).evaluate(w)
    if kind.startswith('load'):
        f = f + LoadDependentCoulomb(0.0, p['Fl'], kind.split('_')[1]).evaluate(w, tau)
    return f


#: Coulomb [N·m] and viscous [N·m·s/rad] friction of synthetic_recording
SYNTHETIC_FC, SYNTHETIC_FV = 1.5, 0.8


def synthetic_recording(robot, seconds=8.0, rate_hz=500.0, seed=0, coulomb_width=0.01):
    """Joint torques of the robot's own model plus friction on a sum of sines, with 1 % noise; the Coulomb friction
    smoothed as SYNTHETIC_FC·tanh(q̇/coulomb_width) [rad/s]."""
    rng = np.random.default_rng(seed)
    t = np.arange(0.0, seconds, 1.0 / rate_hz)
    low = np.where(np.isfinite(robot.lower_limits), robot.lower_limits, -np.pi)
    high = np.where(np.isfinite(robot.upper_limits), robot.upper_limits, np.pi)
    centre = 0.5 * (low + high)
    q, dq, ddq = (np.tile(centre, (t.size, 1)), np.zeros((t.size, robot.n)), np.zeros((t.size, robot.n)))
    for harmonic in (1, 2, 3):
        w = 2 * np.pi * 0.25 * harmonic
        a = rng.uniform(0.1, 0.35, robot.n) / harmonic * np.minimum(1.0, 0.5 * (high - low))
        phase = rng.uniform(0, 2 * np.pi, robot.n)
        q += a * np.sin(w * t[:, None] + phase)
        dq += a * w * np.cos(w * t[:, None] + phase)
        ddq -= a * w**2 * np.sin(w * t[:, None] + phase)
    tau = robot.inverse_dynamics(q, dq, ddq) + SYNTHETIC_FC * np.tanh(dq / coulomb_width) + SYNTHETIC_FV * dq
    tau += 0.01 * np.abs(tau).max(axis=0) * rng.normal(size=tau.shape)
    return Dataset(robot.joint_names, t, q, dq, tau=tau)


#: the torque offset [N·m] of one_way_recording's joints, beside SYNTHETIC_FC and SYNTHETIC_FV
SYNTHETIC_OFFSET = 0.7


def one_way_recording(robot, one_way, seconds=8.0, rate_hz=500.0, seed=0, speed=0.15, ripple=0.6):
    """synthetic_recording's torques (its friction plus SYNTHETIC_OFFSET on every joint) on a motion where the joints
    ``one_way`` (indices) never reverse: a ramp at ``speed`` [rad/s] (forward on even indices, backward on odd) with a
    ripple whose velocity stays within ``ripple`` (< 1) of the ramp's (0: a steady speed); the others swing both ways
    as there."""
    base = synthetic_recording(robot, seconds, rate_hz, seed)
    t, q, dq = base.t, base.q.copy(), base.dq.copy()
    ddq = np.gradient(dq, t, axis=0)
    for j in one_way:
        ripple_dq = dq[:, j] - dq[:, j].mean()
        scale = ripple * speed / np.abs(ripple_dq).max()
        ramp = speed * (1.0 if j % 2 == 0 else -1.0)
        q[:, j] = base.q[:, j].mean() + ramp * (t - seconds / 2) + scale * (base.q[:, j] - base.q[:, j].mean())
        dq[:, j] = ramp + scale * ripple_dq
        ddq[:, j] = scale * ddq[:, j]
    rng = np.random.default_rng([seed, 1])
    tau = robot.inverse_dynamics(q, dq, ddq) + SYNTHETIC_FC * np.tanh(dq / 0.01) + SYNTHETIC_FV * dq + SYNTHETIC_OFFSET
    tau += 0.01 * np.abs(tau).max(axis=0) * rng.normal(size=tau.shape)
    return Dataset(robot.joint_names, t, q, dq, tau=tau)


#: the robots of fleet_record whose joint wears, and which joint
FLEET_WORN = {'cell-02': 'elbow_joint', 'cell-05': 'wrist_1_joint'}


def fleet_record(target, robots: int = 6, sessions: int = 40) -> None:
    """A health record of ``robots`` twin robots with ``sessions`` sessions each, FLEET_WORN's joints wearing."""
    with HealthRecord(target) as record:
        for r in range(robots):
            name = f'cell-{r:02d}'
            changes = [WearChange(15.0, (FLEET_WORN[name],), coulomb_per_week=0.08)] if name in FLEET_WORN else []
            for session in wear_sessions(name, SessionSchedule.regular(sessions, changes=changes, seed=r), seed=r):
                record.append(session)


def own_model_result(robot, coulomb=0.0, viscous=0.0, torque_source='current') -> IdentificationResult:
    """A viscous_coulomb result holding ``robot``'s own base parameters (its model file as the identified model) and
    the given Coulomb [N·m] and viscous [N·m·s/rad] friction on every joint; currents read through its drives."""
    base = robot.base
    names = list(base.names) + [f'{s}_{j + 1}' for j in range(robot.n) for s in ('Fc', 'Fv', 'tau0')]
    values = list(base.from_standard(robot.standard_parameters)) + [v for _ in range(robot.n)
                                                                    for v in (coulomb, viscous, 0.0)]
    return IdentificationResult(
        robot=robot.name, joint_names=tuple(robot.joint_names), method='truth',
        model={'friction': 'viscous_coulomb', 'friction_symbols': ['Fc', 'Fv', 'tau0'], 'temperature': False,
               'torque_source': torque_source, 'rotor_compensation': torque_source == 'current',
               'rotor_inertia_identified': False, 'friction_velocity': 'rotor'},
        parameter_names=names, values=np.array(values), std=np.zeros(len(names)),
        base_expressions=dict(zip(base.names, base.expressions, strict=True)))


def install_user_package(root, name: str, module_source: str, entry_points: dict[str, str], group: str):
    """A package as its pyproject.toml declares it, made discoverable without pip: the module ``name`` and a
    .dist-info (METADATA, entry_points.txt written from the pyproject's entry points of ``group``) under
    ``root/src``, which is returned for sys.path."""
    source = root / 'src'
    source.mkdir(parents=True)
    table = '\n'.join(f'{key} = "{value}"' for key, value in entry_points.items())
    (root / 'pyproject.toml').write_text(textwrap.dedent(f"""\
        [project]
        name = "{name}"
        version = "0.1"

        [project.entry-points."{group}"]
        """) + table + '\n')
    (source / f'{name}.py').write_text(textwrap.dedent(module_source))
    project = tomllib.loads((root / 'pyproject.toml').read_text())['project']
    info = source / f'{name}-{project["version"]}.dist-info'
    info.mkdir()
    (info / 'METADATA').write_text(f'Metadata-Version: 2.1\nName: {project["name"]}\nVersion: {project["version"]}\n')
    lines = [f'{key} = {value}' for key, value in project['entry-points'][group].items()]
    (info / 'entry_points.txt').write_text(f'[{group}]\n' + '\n'.join(lines) + '\n')
    return source


#: the synthetic fleet's relative spread of each kind of parameter, and the robots' own σ as a share of it
SPREAD = {'base': 0.03, 'friction': 0.05, 'drive_gain': 0.01}
OWN_SIGMA = 0.3
FRICTION = {'Fc': 3.0, 'Fv': 1.5, 'tau0': 0.2}  # N·m, N·m·s/rad, N·m
GAIN = 10.0  # N·m/A


#: Changes that make a result of fleet_results one the fleet prior cannot pool, each with what the refusal names
#: (a result of another robot, joint order, torque source, friction law or base grouping): {id: (change, named)}.
UNPOOLABLE = {
    'robot': (lambda r: dataclasses.replace(r, robot='ur10e'), "is a result of robot 'ur10e', not 'ur5e'"),
    'joint order': (lambda r: dataclasses.replace(r, joint_names=tuple(reversed(r.joint_names))), 'has the joints'),
    'torque source': (lambda r: dataclasses.replace(r, model={**r.model, 'torque_source': 'joint_torque'}),
                      "model.torque_source is 'joint_torque', not 'current'"),
    'friction law': (lambda r: dataclasses.replace(r, model={**r.model, 'friction': 'load_squared'}),
                     "model.friction is 'load_squared', not 'viscous_coulomb'"),
    'base grouping': (lambda r: dataclasses.replace(r, base_expressions={**r.base_expressions,
                                                                          'Izz_1R': 'Izz_1 + Ia_1'}),
                      r"groups the base parameters \['Izz_1R'\] otherwise")}


def fleet_results(robot, count: int, seed: int, faults=()) -> list[IdentificationResult]:
    """Results of ``count`` robots of ``robot``'s model: every parameter drawn normal around its centre (the model's
    base parameters, :data:`FRICTION`, :data:`GAIN`) with the relative spread :data:`SPREAD` (of |centre| + 0.01 for
    the base parameters, some of which are 0), each robot's own σ :data:`OWN_SIGMA` of that spread; ``faults``
    multiply one parameter of one robot."""
    rng = np.random.default_rng(seed)
    base = robot.base
    centre_base = np.asarray(base.from_standard(robot.standard_parameters))
    friction_names = [f'{s}_{j + 1}' for j in range(robot.n) for s in FRICTION]
    centre_friction = np.array([FRICTION[name.split('_')[0]] for name in friction_names])
    spread = np.concatenate([SPREAD['base'] * (np.abs(centre_base) + 0.01), SPREAD['friction'] * centre_friction])
    names = list(base.names) + friction_names
    results = []
    for r in range(count):
        values = np.concatenate([centre_base, centre_friction]) + spread * rng.standard_normal(len(spread))
        gains = GAIN * (1.0 + SPREAD['drive_gain'] * rng.standard_normal(robot.n))
        for index, name, factor in faults:
            if index == r and name.startswith('drive_gain_'):
                gains[int(name.rsplit('_', 1)[1]) - 1] *= factor
            elif index == r:
                values[names.index(name)] *= factor
        results.append(IdentificationResult(
            robot=robot.name, joint_names=tuple(robot.joint_names), method='wls',
            model={'friction': 'viscous_coulomb', 'friction_symbols': list(FRICTION), 'temperature': False,
                   'torque_source': 'current', 'rotor_compensation': True, 'rotor_inertia_identified': False},
            parameter_names=names, values=values, std=OWN_SIGMA * spread,
            base_expressions=dict(zip(base.names, base.expressions, strict=True)), drive_gains=gains,
            drive_gains_std=np.full(robot.n, OWN_SIGMA * SPREAD['drive_gain'] * GAIN), drive_gains_identified=True))
    return results


def members_of(results) -> list[FleetMember]:
    return [FleetMember(f'cell-{r:02d}', f'cell-{r:02d}.yaml', f'{r:064x}', result) for r, result in enumerate(results)]


def saved(folder, results) -> list[str]:
    paths = []
    for r, result in enumerate(results):
        paths.append(str(result.save(folder / f'cell-{r:02d}.yaml')))
    return paths


def closed_loop_twin(robot, seconds: float, rate_hz: float, seed: int = 0, link_resolution: float | None = None,
                     controller: str = 'pd'):
    """:func:`testing.closed_loop.closed_loop_recording` of the twin following the robot's shipped excitation."""
    from dynid.excite.trajectory import builtin_excitation_path, load_trajectory
    from testing.closed_loop import closed_loop_recording

    return closed_loop_recording(robot, load_trajectory(builtin_excitation_path(robot.name)), seconds, rate_hz,
                                 link_resolution, seed, controller=controller)
